//! The demo's repeated passes: each point reports its middle pass, and the report says
//! how far the passes of a point lie apart.
//!
//! Why: this shared machine changes speed for seconds to half a minute at a time, so
//! one measurement of a CPU-bound point can land in a slow stretch. Three main jobs of
//! the same code (b12befb, 80d4980 and e05ca29, 2026-11-29/30) agreed within 15% at
//! only 60, 68 and 70 of 75 points pairwise. Plain MPI's points, bound by the link,
//! agreed within 11% then, but 8b444fc's job measured its 16 MiB Allreduce 1.16x the
//! 220 ms it took in the two runs after it, so every algorithm runs in every pass.
//! Passes spread over the run meet different stretches, and the middle one ignores a
//! pass that met a slow one.

use collectives::bench_csv::{self, Row};
use crate::units::fmt_size;
use std::fmt::Write as _;

/// How far a pass may lie from its point's middle pass and still agree with it: the
/// cost model's own tolerance.
const AGREE: f64 = 0.15;

/// Rows measured in passes, in the order measured.
#[derive(Default)]
pub struct Passes {
    measured: Vec<(u32, Row)>,
}

impl Passes {
    pub fn push(&mut self, pass: u32, row: Row) {
        self.measured.push((pass, row));
    }

    pub fn len(&self) -> usize {
        self.measured.len()
    }

    /// Each point's passes, in the order of its first measurement.
    fn points(&self) -> Vec<Vec<&Row>> {
        let mut points: Vec<Vec<&Row>> = Vec::new();
        for (_, r) in &self.measured {
            match points.iter_mut().find(|p| same_point(p[0], r)) {
                Some(p) => p.push(r),
                None => points.push(vec![r]),
            }
        }
        points
    }

    /// Each point's middle pass by the slowest rank's time (of an even count, the
    /// faster of the middle two), a whole row as measured.
    pub fn middle(&self) -> Vec<Row> {
        self.points().into_iter().map(|p| middle(p).clone()).collect()
    }

    /// [`Passes::middle`] as ccoll-bench's CSV.
    pub fn middle_csv(&self) -> String {
        let mut s = format!("{}\n", bench_csv::HEADER);
        for r in self.middle() {
            let _ = writeln!(s, "{}", r.to_csv());
        }
        s
    }

    /// Every pass's rows: `pass,` (from 1) and ccoll-bench's CSV columns.
    pub fn to_csv(&self) -> String {
        let mut s = format!("pass,{}\n", bench_csv::HEADER);
        for (pass, r) in &self.measured {
            let _ = writeln!(s, "{pass},{}", r.to_csv());
        }
        s
    }

    /// How many points measured more than once have every pass within [`AGREE`] of
    /// their middle pass, and those that do not, with each pass over the middle one.
    pub fn report(&self) -> String {
        let repeated: Vec<Vec<&Row>> = self.points().into_iter().filter(|p| p.len() > 1).collect();
        if repeated.is_empty() {
            return String::new();
        }
        let mut off = String::new();
        let mut agree = 0;
        for p in &repeated {
            let mid = middle(p.clone()).lat_max_us;
            let over: Vec<f64> = p.iter().map(|r| r.lat_max_us / mid).collect();
            if over.iter().all(|x| (x - 1.0).abs() <= AGREE) {
                agree += 1;
            } else {
                let list: Vec<String> = over.iter().map(|x| format!("{x:.2}")).collect();
                let _ = writeln!(off, "- {} {} {}: {}", p[0].op, fmt_size(p[0].bytes), p[0].algo, list.join(", "));
            }
        }
        format!(
            "Repeatability (the slowest rank's time, each pass over the point's middle pass): {agree} of {} points measured more than once agree within {:.0}% in every pass{}\n{off}",
            repeated.len(),
            AGREE * 100.0,
            if off.is_empty() { "." } else { "; the others:" }
        )
    }
}

fn same_point(a: &Row, b: &Row) -> bool {
    a.op == b.op && a.algo == b.algo && a.bytes == b.bytes
}

fn middle(mut rows: Vec<&Row>) -> &Row {
    rows.sort_by(|a, b| a.lat_max_us.total_cmp(&b.lat_max_us));
    rows[(rows.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, algo: &str, lat_max_us: f64, cpu_us: f64) -> Row {
        let line = format!("{op},{algo},szx-rel=1e-3,4,16777216,{lat_max_us},1,{lat_max_us},10,1e-3,1e-2,true,9,8,{cpu_us}");
        Row::parse(&line).expect("a data line")
    }

    #[test]
    fn each_point_reports_its_middle_pass_whole() {
        let mut p = Passes::default();
        p.push(1, row("bcast", "mpi", 400.0, 1.0));
        p.push(1, row("bcast", "c-coll", 10.0, 1.0));
        p.push(2, row("bcast", "c-coll", 14.4, 2.0));
        p.push(3, row("bcast", "c-coll", 11.0, 3.0));
        let mid = p.middle();
        assert_eq!(mid.len(), 2);
        assert_eq!((mid[0].algo.as_str(), mid[0].lat_max_us), ("mpi", 400.0));
        // The middle pass's time and its own CPU figure: one row, not a blend.
        assert_eq!((mid[1].lat_max_us, mid[1].cpu_us), (11.0, Some(3.0)));
        // Two passes: the faster.
        let mut two = Passes::default();
        two.push(1, row("bcast", "c-coll", 12.0, 1.0));
        two.push(2, row("bcast", "c-coll", 10.0, 2.0));
        assert_eq!(two.middle()[0].lat_max_us, 10.0);
    }

    #[test]
    fn the_report_names_the_points_whose_passes_disagree() {
        let mut p = Passes::default();
        p.push(1, row("bcast", "mpi", 400.0, 1.0));
        for (pass, t) in [(1, 10.0), (2, 14.4), (3, 11.0)] {
            p.push(pass, row("bcast", "c-coll", t, 1.0));
        }
        for (pass, t) in [(1, 20.0), (2, 22.0), (3, 19.0)] {
            p.push(pass, row("scatter", "c-coll", t, 1.0));
        }
        let r = p.report();
        assert!(r.contains("1 of 2 points"), "{r}");
        assert!(r.contains("- bcast 16M c-coll: 0.91, 1.31, 1.00"), "{r}");
        assert!(!r.contains("scatter 16M"), "{r}");
        let mut once = Passes::default();
        once.push(1, row("bcast", "c-coll", 10.0, 1.0));
        assert_eq!(once.report(), "");
    }

    #[test]
    fn the_csv_keeps_every_pass() {
        let mut p = Passes::default();
        p.push(1, row("bcast", "c-coll", 10.0, 1.0));
        p.push(2, row("bcast", "c-coll", 12.0, 1.0));
        let csv = p.to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], format!("pass,{}", bench_csv::HEADER));
        assert_eq!(lines.len(), 3);
        assert!(lines[2].starts_with("2,bcast,c-coll,"), "{}", lines[2]);
        assert_eq!(Row::parse(lines[2].split_once(',').unwrap().1).unwrap().lat_max_us, 12.0);
    }
}
