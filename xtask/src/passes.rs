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
//!
//! A pass measured while the hypervisor stole the host's CPU for other guests is left
//! out of the middle where its point has passes that were not: steal comes in bursts of
//! 10-40 s at about a tenth of the host's time (a monitor beside 67c441a's main job,
//! 2026-12-04, saw none for minutes, then such bursts), and plain MPI's 16 MiB
//! Allreduce measured under one took 250 ms against 230 ms in the pass before it.

use collectives::bench_csv::{self, Row};
use crate::units::fmt_size;
use std::fmt::Write as _;

/// How far a pass may lie from its point's middle pass and still agree with it: the
/// cost model's own tolerance.
const AGREE: f64 = 0.15;

/// The share of the host's CPU time stolen during a pass's timed calls above which the
/// pass is disturbed (ccoll-bench's `host_steal`; a quiet host showed 0.0005).
const STEAL_LIMIT: f64 = 0.01;

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
    /// faster of the middle two) among its undisturbed passes ([`STEAL_LIMIT`]; all of
    /// them where none is), a whole row as measured.
    pub fn middle(&self) -> Vec<Row> {
        self.points().into_iter().map(|p| middle(p).clone()).collect()
    }

    /// The operations and sizes (one ccoll-bench run each) with a point whose every
    /// pass met host steal ([`disturbed`]), in the order measured.
    pub fn stolen_runs(&self) -> Vec<(String, u64)> {
        let mut runs: Vec<(String, u64)> = Vec::new();
        for p in self.points().into_iter().filter(|p| p.iter().all(|r| disturbed(r))) {
            let run = (p[0].op.clone(), p[0].bytes);
            if !runs.contains(&run) {
                runs.push(run);
            }
        }
        runs
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
        let steal = self.steal_report();
        let repeated: Vec<Vec<&Row>> = self.points().into_iter().filter(|p| p.len() > 1).collect();
        if repeated.is_empty() {
            return steal;
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
            "Repeatability (the slowest rank's time, each pass over the point's middle pass): {agree} of {} points measured more than once agree within {:.0}% in every pass{}\n{off}{}",
            repeated.len(),
            AGREE * 100.0,
            if off.is_empty() { "." } else { "; the others:" },
            if steal.is_empty() { String::new() } else { format!("\n{steal}") }
        )
    }

    /// The measurements above [`STEAL_LIMIT`], each with its steal (empty: none).
    fn steal_report(&self) -> String {
        let stolen: Vec<String> = self
            .measured
            .iter()
            .filter(|(_, r)| disturbed(r))
            .map(|(pass, r)| format!("{} {} {} pass {pass} ({:.1}%)", r.op, fmt_size(r.bytes), r.algo, r.host_steal.unwrap_or(0.0) * 100.0))
            .collect();
        if stolen.is_empty() {
            return String::new();
        }
        format!(
            "Host steal: {} of {} measurements ran while the hypervisor took more than {:.0}% of the host's CPU time for other guests, and count as their point's middle pass only where it has no other: {}.\n",
            stolen.len(),
            self.measured.len(),
            STEAL_LIMIT * 100.0,
            stolen.join(", ")
        )
    }
}

fn same_point(a: &Row, b: &Row) -> bool {
    a.op == b.op && a.algo == b.algo && a.bytes == b.bytes
}

fn middle(rows: Vec<&Row>) -> &Row {
    let clean: Vec<&Row> = rows.iter().copied().filter(|r| !disturbed(r)).collect();
    let mut rows = if clean.is_empty() { rows } else { clean };
    rows.sort_by(|a, b| a.lat_max_us.total_cmp(&b.lat_max_us));
    rows[(rows.len() - 1) / 2]
}

/// Whether `r` was measured with more than [`STEAL_LIMIT`] of its host's CPU stolen.
pub fn disturbed(r: &Row) -> bool {
    r.host_steal.is_some_and(|s| s > STEAL_LIMIT)
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
    fn a_pass_under_host_steal_is_the_middle_only_where_no_other_is() {
        let stolen = |t: f64, steal: f64| Row { host_steal: Some(steal), ..row("allreduce", "mpi", t, 1.0) };
        let mut p = Passes::default();
        // The middle of three would be the 250 ms pass, measured under 5% steal.
        for (pass, r) in [(1, stolen(230.0, 0.0)), (2, stolen(250.0, 0.05)), (3, stolen(270.0, 0.002))] {
            p.push(pass, r);
        }
        assert_eq!(p.middle()[0].lat_max_us, 230.0);
        let r = p.report();
        assert!(r.contains("Host steal: 1 of 3 measurements") && r.contains("allreduce 16M mpi pass 2 (5.0%)"), "{r}");
        // Every pass disturbed: the middle of them all.
        let mut all = Passes::default();
        for (pass, t) in [(1, 230.0), (2, 250.0), (3, 270.0)] {
            all.push(pass, stolen(t, 0.02));
        }
        assert_eq!(all.middle()[0].lat_max_us, 250.0);
        // Its run is the one to measure again; the first point's is not.
        all.push(1, row("bcast", "mpi", 400.0, 1.0));
        p.push(1, Row { bytes: 32 << 20, ..stolen(460.0, 0.03) });
        assert_eq!(all.stolen_runs(), vec![("allreduce".to_string(), 16 << 20)]);
        assert_eq!(p.stolen_runs(), vec![("allreduce".to_string(), 32 << 20)]);
        // Up to the limit, and unmeasured, a pass counts.
        let mut quiet = Passes::default();
        for (pass, r) in [(1, stolen(230.0, 0.01)), (2, row("allreduce", "mpi", 250.0, 1.0)), (3, stolen(270.0, 0.0))] {
            quiet.push(pass, r);
        }
        assert_eq!(quiet.middle()[0].lat_max_us, 250.0);
        assert!(!quiet.report().contains("Host steal"), "{}", quiet.report());
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
