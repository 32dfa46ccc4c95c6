//! The CSV of `ccoll-bench --format csv` ([`HEADER`]): the one definition of its columns,
//! which ccoll-bench writes and the benchmark drivers (`cargo xtask demo`, `model`,
//! `plot`) read back. The columns from `comp_ratio_min` on were added after the others,
//! so that readers by position keep working; CSVs written before them have twelve to
//! fifteen, and their rows read a missing ratio as the one before it (`comp_ratio`,
//! then `comp_ratio_min`), a missing `cpu_us` or codec columns as not measured, and
//! the nine codec columns without the two scan columns after them as a call whose scan
//! was not timed, and a missing `host_steal` as not measured. The codec columns are
//! docs/collectives.md's `codec_cpu`.

/// The header line.
pub const HEADER: &str = "op,algo,codec,ranks,bytes,lat_avg_us,lat_min_us,lat_max_us,comp_ratio,max_abs_err,bound,bound_ok,comp_ratio_min,comp_ratio_steps,cpu_us,comp_raw_bytes,comp_coded_bytes,comp_faulted_bytes,comp_cpu_us,decomp_raw_bytes,decomp_coded_bytes,decomp_reduced_bytes,decomp_faulted_bytes,decomp_cpu_us,scan_raw_bytes,scan_cpu_us,host_steal";

/// One kind of codec pass of all ranks together in a call: the ranks'
/// [`crate::CodecPass`] tallies of their median calls, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pass {
    /// Uncompressed bytes read (compression, scan) or written (decoding).
    pub raw_bytes: f64,
    /// Compressed bytes written or read.
    pub coded_bytes: f64,
    /// Of `raw_bytes`, those decoded and reduced in the same pass.
    pub reduced_bytes: f64,
    /// Memory written for the first time (minor page faults).
    pub faulted_bytes: f64,
    /// Process CPU seconds.
    pub cpu_s: f64,
}

/// The codec columns: what the ranks' codec passes took in their median calls
/// ([`crate::CollStats::codec_cpu`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CodecWork {
    pub compress: Pass,
    pub decompress: Pass,
    /// The value-range scan (bytes and CPU time only; zeros in a CSV from before the
    /// scan columns).
    pub scan: Pass,
}

/// One measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub op: String,
    pub algo: String,
    pub codec: String,
    pub ranks: usize,
    pub bytes: u64,
    pub lat_avg_us: f64,
    pub lat_min_us: f64,
    pub lat_max_us: f64,
    /// Uncompressed over sent bytes, summed over ranks.
    pub comp_ratio: f64,
    /// Largest |result - MPI result| over all ranks (`None`: not checked, `--check`).
    pub max_abs_err: Option<f64>,
    /// The stated bound (`inf` where the codec gives none).
    pub bound: f64,
    /// `max_abs_err <= bound` plus the rounding allowance (`None`: not checked).
    pub bound_ok: Option<bool>,
    /// The lowest of the ranks' own ratios (the heaviest sender).
    pub comp_ratio_min: f64,
    /// The ratio of a step-by-step schedule's heaviest messages (each step's largest).
    pub comp_ratio_steps: f64,
    /// Process CPU time (user and system) per call, the mean over the ranks.
    pub cpu_us: Option<f64>,
    /// The ranks' codec passes in their median calls (`None`: not timed, or a CSV from
    /// before these columns).
    pub codec_work: Option<CodecWork>,
    /// The largest share of a rank's host CPU time that the hypervisor took for other
    /// guests while the timed calls ran (/proc/stat's steal over all its times; `None`:
    /// not measured). A point measured under steal ran on less machine than it had.
    pub host_steal: Option<f64>,
}

impl Row {
    /// Parses one data line; `None` for the header, blank lines and anything else.
    pub fn parse(line: &str) -> Option<Row> {
        let f: Vec<&str> = line.trim().split(',').map(str::trim).collect();
        if !(12..=27).contains(&f.len()) || f.len() == 25 || f[0] == "op" {
            return None;
        }
        let num = |i: usize| f[i].parse::<f64>().ok();
        Some(Row {
            op: f[0].to_string(),
            algo: f[1].to_string(),
            codec: f[2].to_string(),
            ranks: f[3].parse().ok()?,
            bytes: f[4].parse().ok()?,
            lat_avg_us: num(5)?,
            lat_min_us: num(6)?,
            lat_max_us: num(7)?,
            // Uncompressed algorithms may leave ratio, error or bound empty or "-".
            comp_ratio: num(8).unwrap_or(1.0),
            max_abs_err: num(9).filter(|e| !e.is_nan()).or((f[9] == "-").then_some(0.0)),
            bound: num(10).unwrap_or(0.0),
            bound_ok: match f[11] {
                "1" | "true" | "yes" | "ok" => Some(true),
                "0" | "false" | "no" => Some(false),
                _ => None,
            },
            comp_ratio_min: f.get(12).and_then(|x| x.parse().ok()).or(num(8)).unwrap_or(1.0),
            comp_ratio_steps: f.get(13).or(f.get(12)).and_then(|x| x.parse().ok()).or(num(8)).unwrap_or(1.0),
            cpu_us: f.get(14).and_then(|x| x.parse().ok()),
            codec_work: match (f.get(15..24), f.get(24..26)) {
                // Not timed (ccoll-bench without --time-codec).
                (Some(c), scan) if c.iter().chain(scan.unwrap_or_default()).all(|x| x.is_empty()) => None,
                (Some(c), scan) => {
                    let v: Vec<f64> = c.iter().chain(scan.unwrap_or_default()).map(|x| x.parse().ok()).collect::<Option<_>>()?;
                    let pass = |raw_bytes, coded_bytes, reduced_bytes, faulted_bytes, cpu_us: f64| Pass { raw_bytes, coded_bytes, reduced_bytes, faulted_bytes, cpu_s: cpu_us * 1e-6 };
                    Some(CodecWork {
                        compress: pass(v[0], v[1], 0.0, v[2], v[3]),
                        decompress: pass(v[4], v[5], v[6], v[7], v[8]),
                        scan: v.get(9..11).map_or_else(Pass::default, |s| pass(s[0], 0.0, 0.0, 0.0, s[1])),
                    })
                }
                (None, _) if f.len() <= 15 => None,
                (None, _) => return None,
            },
            host_steal: f.get(26).and_then(|x| x.parse().ok()),
        })
    }

    /// The error as ccoll-bench writes it: `nan` where it was not checked.
    pub fn err_field(&self) -> String {
        self.max_abs_err.map_or("nan".to_string(), |e| format!("{e:.3e}"))
    }

    /// The verdict as ccoll-bench writes it: `n/a` where it was not checked.
    pub fn verdict_field(&self) -> &'static str {
        self.bound_ok.map_or("n/a", |ok| if ok { "true" } else { "false" })
    }

    /// The row as a CSV line in [`HEADER`] order: an unchecked error and verdict as
    /// `nan` and `n/a`, eleven empty codec fields where the codec was not timed, an empty
    /// steal where it was not measured.
    pub fn to_csv(&self) -> String {
        let (err, ok) = (self.err_field(), self.verdict_field());
        let codec = self.codec_work.map_or_else(|| ",".repeat(10), |CodecWork { compress: c, decompress: d, scan }| {
            format!(
                "{:.0},{:.0},{:.0},{:.1},{:.0},{:.0},{:.0},{:.0},{:.1},{:.0},{:.1}",
                c.raw_bytes,
                c.coded_bytes,
                c.faulted_bytes,
                c.cpu_s * 1e6,
                d.raw_bytes,
                d.coded_bytes,
                d.reduced_bytes,
                d.faulted_bytes,
                d.cpu_s * 1e6,
                scan.raw_bytes,
                scan.cpu_s * 1e6
            )
        });
        format!(
            "{},{},{},{},{},{:.2},{:.2},{:.2},{:.3},{err},{:.3e},{ok},{:.3},{:.3},{},{codec},{}",
            self.op,
            self.algo,
            self.codec,
            self.ranks,
            self.bytes,
            self.lat_avg_us,
            self.lat_min_us,
            self.lat_max_us,
            self.comp_ratio,
            self.bound,
            self.comp_ratio_min,
            self.comp_ratio_steps,
            self.cpu_us.map_or(String::new(), |c| format!("{c:.1}")),
            self.host_steal.map_or(String::new(), |x| format!("{x:.4}")),
        )
    }
}

/// Every data row in `text`.
pub fn parse_all(text: &str) -> Vec<Row> {
    text.lines().filter_map(Row::parse).collect()
}

/// The per-rank line ccoll-bench writes to stderr after each (algorithm, size):
/// `[ccoll-bench] OP ALGO BYTES B, CALLS calls: ms per call, wall/user/system by rank: 0: W/U/S, ...`
/// (its `Display`).
#[derive(Clone, Debug, PartialEq)]
pub struct RankTimes {
    pub op: String,
    pub algo: String,
    pub bytes: u64,
    /// Timed calls.
    pub calls: usize,
    /// Per rank, milliseconds per call: (wall, user CPU, system CPU).
    pub ranks: Vec<(f64, f64, f64)>,
}

const RANK_TIMES_PREFIX: &str = "[ccoll-bench] ";
const RANK_TIMES_SEP: &str = " calls: ms per call, wall/user/system by rank: ";

impl std::fmt::Display for RankTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{RANK_TIMES_PREFIX}{} {} {} B, {}{RANK_TIMES_SEP}", self.op, self.algo, self.bytes, self.calls)?;
        for (r, (wall, user, system)) in self.ranks.iter().enumerate() {
            write!(f, "{}{r}: {wall:.1}/{user:.1}/{system:.1}", if r > 0 { ", " } else { "" })?;
        }
        Ok(())
    }
}

impl RankTimes {
    /// Parses one such line; `None` for anything else.
    pub fn parse(line: &str) -> Option<RankTimes> {
        let rest = line.trim().strip_prefix(RANK_TIMES_PREFIX)?;
        let (what, times) = rest.split_once(RANK_TIMES_SEP)?;
        let mut w = what.split_whitespace();
        let (op, algo, bytes) = (w.next()?.to_string(), w.next()?.to_string(), w.next()?.parse().ok()?);
        let calls = match (w.next()?, w.next()?, w.next()) {
            ("B,", calls, None) => calls.parse().ok()?,
            _ => return None,
        };
        let ranks = times
            .split(", ")
            .map(|r| {
                let v: Vec<f64> = r.split_once(": ")?.1.split('/').map(|x| x.parse().ok()).collect::<Option<_>>()?;
                (v.len() == 3).then(|| (v[0], v[1], v[2]))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(RankTimes { op, algo, bytes, calls, ranks })
    }

    /// The slowest rank's wall time and the CPU time of all ranks together (user,
    /// system), milliseconds per call.
    pub fn totals(&self) -> (f64, f64, f64) {
        let wall = self.ranks.iter().map(|r| r.0).fold(0.0, f64::max);
        (wall, self.ranks.iter().map(|r| r.1).sum(), self.ranks.iter().map(|r| r.2).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_times_parse_and_total() {
        let line = "[ccoll-bench] allreduce c-coll 67108864 B, 12 calls: ms per call, wall/user/system by rank: 0: 282.8/80.0/10.0, 1: 256.5/70.2/8.0";
        let t = RankTimes::parse(line).unwrap();
        assert_eq!((t.op.as_str(), t.algo.as_str(), t.bytes, t.calls), ("allreduce", "c-coll", 64 << 20, 12));
        assert_eq!(t.ranks, vec![(282.8, 80.0, 10.0), (256.5, 70.2, 8.0)]);
        assert_eq!(t.to_string(), line);
        let (wall, user, system) = t.totals();
        assert!(wall == 282.8 && (user - 150.2).abs() < 1e-9 && (system - 18.0).abs() < 1e-9);
        assert!(RankTimes::parse("[ccoll-bench] allreduce c-coll 67108864 B: 1 + 3 iterations").is_none());
        assert!(RankTimes::parse(&line.replace("8.0", "x")).is_none());
    }

    #[test]
    fn rows_parse_and_round_trip() {
        let codec = "268435456,15656397,285810,55023.9,469762048,34430829,201326592,33678,75964.2";
        let text = format!("{HEADER}\nallreduce,c-coll,szx-rel=1e-3,4,67108864,250000.5,240000.0,260000.0,12.5,1.2e-3,1.3e-3,true,9.25,7.5,71250.5,{codec}\nnoise\n");
        let rows = parse_all(&text);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!((r.op.as_str(), r.algo.as_str(), r.ranks, r.bytes), ("allreduce", "c-coll", 4, 64 << 20));
        assert!(r.bound_ok == Some(true) && r.max_abs_err == Some(1.2e-3) && r.comp_ratio == 12.5 && r.comp_ratio_min == 9.25 && r.comp_ratio_steps == 7.5 && r.lat_avg_us == 250000.5);
        assert_eq!(r.cpu_us, Some(71250.5));
        let w = r.codec_work.unwrap();
        assert_eq!((w.compress.raw_bytes, w.compress.coded_bytes, w.compress.reduced_bytes, w.compress.faulted_bytes), (268435456.0, 15656397.0, 0.0, 285810.0));
        assert_eq!((w.decompress.raw_bytes, w.decompress.coded_bytes, w.decompress.reduced_bytes, w.decompress.faulted_bytes), (469762048.0, 34430829.0, 201326592.0, 33678.0));
        assert!((w.compress.cpu_s - 0.0550239).abs() < 1e-12 && (w.decompress.cpu_s - 0.0759642).abs() < 1e-12, "{w:?}");
        assert_eq!(w.scan, Pass::default(), "a row from before the scan columns");
        assert_eq!(Row::parse(&r.to_csv()).unwrap(), *r);
        // With the scan columns; one of them alone is not a row.
        let line = text.lines().nth(1).unwrap();
        let scanned = Row::parse(&format!("{line},268435456,16500.5")).unwrap();
        let scan = scanned.codec_work.unwrap().scan;
        assert!(scan.raw_bytes == 268435456.0 && (scan.cpu_s - 0.0165005).abs() < 1e-12 && scan.coded_bytes == 0.0, "{scan:?}");
        assert_eq!(Row::parse(&scanned.to_csv()).unwrap(), scanned);
        assert!(scanned.to_csv().ends_with(",75964.2,268435456,16500.5,"), "{}", scanned.to_csv());
        assert!(Row::parse(&format!("{line},268435456")).is_none());
        // Some of the codec columns, or one that does not parse: not a row.
        assert!(Row::parse(line.rsplit_once(',').unwrap().0).is_none());
        assert!(Row::parse(&line.replace(",75964.2", ",x")).is_none());
        // Nine empty ones: not timed.
        let untimed = Row::parse(&format!("{},,,,,,,,,", line.split(&format!(",{codec}")).next().unwrap())).unwrap();
        assert_eq!((untimed.cpu_us, untimed.codec_work), (Some(71250.5), None));
        // A row of the twelve columns before comp_ratio_min: the heaviest sender is taken
        // as the average.
        let old = Row::parse("allreduce,c-coll,szx-rel=1e-3,4,64,2.0,1.0,3.0,12.5,1e-3,2e-3,true").unwrap();
        assert_eq!((old.comp_ratio_min, old.comp_ratio_steps), (12.5, 12.5));
        // Thirteen, before comp_ratio_steps: the steps are taken as the heaviest sender.
        let min = Row::parse("allreduce,c-coll,szx-rel=1e-3,4,64,2.0,1.0,3.0,12.5,1e-3,2e-3,true,9.25").unwrap();
        assert_eq!((min.comp_ratio_min, min.comp_ratio_steps), (9.25, 9.25));
        // Fourteen, before cpu_us: not measured, and written back as such.
        let steps = Row::parse("allreduce,c-coll,szx-rel=1e-3,4,64,2.0,1.0,3.0,12.5,1e-3,2e-3,true,9.25,7.5").unwrap();
        assert_eq!(steps.cpu_us, None);
        assert_eq!(Row::parse(&steps.to_csv()).unwrap(), steps);
        // Fifteen, before the codec columns: not measured, and written back as such.
        let cpu = Row::parse("allreduce,c-coll,szx-rel=1e-3,4,64,2.0,1.0,3.0,12.5,1e-3,2e-3,true,9.25,7.5,80.5").unwrap();
        assert_eq!((cpu.cpu_us, cpu.codec_work), (Some(80.5), None));
        assert_eq!(Row::parse(&cpu.to_csv()).unwrap(), cpu);
        let plain = Row::parse("bcast,mpi,none,4,16,10.0,9.0,11.0,-,-,-,true").unwrap();
        assert_eq!((plain.comp_ratio, plain.max_abs_err, plain.bound), (1.0, Some(0.0), 0.0));
        // Not checked (ccoll-bench without --check): no error and no verdict, written
        // back as such, never as a pass.
        let unchecked = Row::parse("bcast,c-coll,szx-rel=1e-3,4,16,10.0,9.0,11.0,3.5,nan,1e-3,n/a,3.5,3.5,1.5,,,,,,,,,,,").unwrap();
        assert_eq!((unchecked.max_abs_err, unchecked.bound_ok), (None, None));
        assert_eq!(Row::parse(&unchecked.to_csv()).unwrap(), unchecked);
        assert!(unchecked.to_csv().contains(",nan,1.000e-3,n/a,"), "{}", unchecked.to_csv());
        assert_eq!(Row::parse(&cpu.to_csv().replace(",true,", ",false,")).unwrap().bound_ok, Some(false));
        assert!(Row::parse("bcast,mpi,none,x,16,10.0,9.0,11.0,1,0,0,true").is_none());
        // The host's steal after the scan columns, written back as read; a row without it
        // was not measured.
        assert_eq!(scanned.host_steal, None);
        let stolen = Row::parse(&format!("{line},268435456,16500.5,0.0125")).unwrap();
        assert_eq!((stolen.host_steal, stolen.codec_work), (Some(0.0125), scanned.codec_work));
        assert_eq!(Row::parse(&stolen.to_csv()).unwrap(), stolen);
        let untimed_stolen = Row { codec_work: None, ..stolen.clone() };
        assert_eq!(Row::parse(&untimed_stolen.to_csv()).unwrap(), untimed_stolen);
    }
}
