//! The machine's pace: how fast one thread codes and reduces over one second, and how
//! fast each thread compresses with every core busy, probed by the demo around each of
//! its runs and by the calibration around its codec passes and its memory figures, so
//! that the validation prices the demo's points at the speed the machine had while
//! they ran rather than at the calibration's moment.
//!
//! Why: this shared virtual machine changes speed. One thread compressing the same
//! field, best of five every two seconds, switched between about 5000 and 3800 MB/s
//! from one probe to the next and stayed in either for seconds to half a minute
//! (2026-11-30); a main job's calibration (c2a6cef, 2026-11-29) compressed at 2906 MB/s
//! where the jobs before gave 6119-6507, while the points it priced had run at their
//! usual times, and the model put 45 of 75 points within 15% against 62-64. So the
//! probe takes the mean over a second of calls, not the best: the share of the slow
//! state is what a run feels.
//!
//! The figure with every core busy is recorded beside the one-thread ones because the
//! one-thread pace did not follow four ranks on two cores: over half an hour beside a
//! C-Coll Allreduce (2026-11-30) it rose 22% while the ranks ran 4.5% faster, and a
//! probe with a thread on each core rose 7% (docs/cost-model.md, Validation).

use super::calibrate;
use codec_host::elementwise::ReduceOp;
use codec_host::{Backend, Codec, CpuExecutor, Shape};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Bytes per CPU second of one thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pace {
    /// Compressing the probe's field.
    pub comp: f64,
    /// Decoding it.
    pub decomp: f64,
    /// The element-wise reduction (a memory-bound pass).
    pub reduce: f64,
    /// Compressing the field on every core at once, a thread on each: per thread.
    pub shared: f64,
}

impl Pace {
    /// Halfway between two probes: a run's pace from the probes before and after it.
    pub fn mean(&self, other: &Pace) -> Pace {
        let mid = |a: f64, b: f64| (a + b) / 2.0;
        Pace { comp: mid(self.comp, other.comp), decomp: mid(self.decomp, other.decomp), reduce: mid(self.reduce, other.reduce), shared: mid(self.shared, other.shared) }
    }

    /// This pace over `base`'s, each figure: compression, decoding, reduction, and
    /// compression with every core busy.
    pub fn over(&self, base: &Pace) -> [f64; 4] {
        [self.comp / base.comp, self.decomp / base.decomp, self.reduce / base.reduce, self.shared / base.shared]
    }
}

/// The median of the runs' paces, each figure (`None`: no run): the machine's typical
/// speed during a demo.
pub fn typical(runs: &[RunPace]) -> Option<Pace> {
    let median = |f: fn(&Pace) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(|r| f(&r.pace)).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    };
    (!runs.is_empty()).then(|| Pace { comp: median(|p| p.comp), decomp: median(|p| p.decomp), reduce: median(|p| p.reduce), shared: median(|p| p.shared) })
}

/// The probe's workload, whatever the run codes: it measures the machine, and the
/// demo and the calibration must time the same work.
const FIELD: &str = "rtm";
const CODEC: &str = "szx-rel=1e-3";
/// How long one probe keeps calling (wall time; about 30 rounds of the three passes).
const SPAN: Duration = Duration::from_secs(1);
/// Fresh copies of the field that one probe compresses in turn. On this virtual
/// machine the speed belongs to the allocation: one thread compressing the same values
/// ran at 5817-6899 MB/s from one fresh copy to the next, each copy steady within 3%
/// while it lived (2026-11-30), and a demo whose probe compressed the one field it had
/// loaded at the start saw 0.77 of the calibration's speed all through while its ranks
/// ran as fast as the job before (d1ff160's main job). Every probe copies afresh, as
/// every ccoll-bench run allocates afresh; several copies a probe average the luck.
const COPIES: usize = 4;

/// The probe: its field and the field's codec with the bound made absolute, made once.
pub struct Probe {
    data: Vec<f32>,
    codec: Codec,
    backend: Backend,
}

impl Probe {
    pub fn new() -> Result<Probe, String> {
        let data = calibrate::field(FIELD)?;
        let codec = calibrate::absolute(&calibrate::parse_codec(CODEC)?, &data)?;
        let backend = Backend::with_executor(CpuExecutor::new(1).map_err(|e| e.to_string())?);
        Ok(Probe { data, codec, backend })
    }

    /// The pace now: rounds of compressing the 64 MiB field (fresh copies in turn,
    /// [`COPIES`]), decoding it and reducing two such vectors on one thread for
    /// [`SPAN`], each pass's bytes over its CPU seconds in all; then [`Probe::shared`].
    pub fn measure(&self) -> Result<Pace, String> {
        let Probe { data, codec, backend } = self;
        let err = |e: codec_host::Error| e.to_string();
        let shape = Shape::from_dims(&[data.len()]).map_err(|e| e.to_string())?;
        // Every buffer written now, so that no pass pays for faulting its pages in.
        let copies = vec![data.clone(); COPIES];
        let (mut out, mut acc, src) = (vec![1.0f32; data.len()], vec![1.0f32; data.len()], vec![0.5f32; data.len()]);
        let one = backend.executor().ok_or("the probe's backend has no CPU executor")?;
        let mut secs = [0.0; 3];
        let end = Instant::now() + SPAN;
        let mut rounds = 0;
        while rounds == 0 || Instant::now() < end {
            let mut stream = Vec::new();
            secs[0] += calibrate::cpu_s(|| {
                stream = codec.compress(&copies[rounds % COPIES], shape, backend).map_err(err)?;
                Ok(())
            })?;
            secs[1] += calibrate::cpu_s(|| codec_host::decompress_into(&stream, &mut out, backend).map(drop).map_err(err))?;
            secs[2] += calibrate::cpu_s(|| codec_host::elementwise::reduce(one, ReduceOp::Sum, &mut acc, &src).map_err(|e| e.to_string()))?;
            rounds += 1;
        }
        let bytes = (rounds * data.len() * 4) as f64;
        let [comp, decomp, reduce] = secs.map(|t| bytes / t.max(1e-9));
        Ok(Pace { comp, decomp, reduce, shared: self.shared()? })
    }

    /// A thread on each core compressing the field (a fresh copy of its own) in rounds
    /// for [`SPAN`]: the bytes of all over the CPU seconds of all, a thread's speed
    /// while the cores are shared with each other's work (caches, memory, the host's
    /// other guests).
    fn shared(&self) -> Result<f64, String> {
        let Probe { data, codec, .. } = self;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let shape = Shape::from_dims(&[data.len()]).map_err(|e| e.to_string())?;
        let copies = vec![data.clone(); cores];
        let end = Instant::now() + SPAN;
        let compress = |field: &[f32]| -> Result<usize, String> {
            let backend = Backend::with_executor(CpuExecutor::new(1).map_err(|e| e.to_string())?);
            let mut rounds = 0;
            while rounds == 0 || Instant::now() < end {
                std::hint::black_box(codec.compress(field, shape, &backend).map_err(|e| e.to_string())?);
                rounds += 1;
            }
            Ok(rounds * data.len() * 4)
        };
        let mut bytes = 0;
        let secs = calibrate::cpu_s(|| {
            std::thread::scope(|s| {
                let threads: Vec<_> = copies.iter().map(|field| s.spawn(|| compress(field))).collect();
                threads.into_iter().try_for_each(|t| {
                    bytes += t.join().map_err(|_| "pace probe thread panicked".to_string())??;
                    Ok(())
                })
            })
        })?;
        Ok(bytes as f64 / secs.max(1e-9))
    }
}

/// The header of the demo's `pace.csv`: one row per ccoll-bench run (an operation at
/// one size, every algorithm), MB per CPU second.
pub const HEADER: &str = "op,bytes,comp_mbps,decomp_mbps,reduce_mbps,shared_comp_mbps";

/// The pace of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPace {
    pub op: String,
    pub bytes: u64,
    pub pace: Pace,
}

/// `pace.csv` of runs whose probes came before each and after the last: run `i` ran
/// between probes `i` and `i + 1`.
pub fn to_csv(runs: &[(String, u64)], probes: &[Pace]) -> String {
    let mut s = format!("{HEADER}\n");
    for ((op, bytes), pair) in runs.iter().zip(probes.windows(2)) {
        let p = pair[0].mean(&pair[1]);
        let _ = writeln!(s, "{op},{bytes},{:.0},{:.0},{:.0},{:.0}", p.comp / 1e6, p.decomp / 1e6, p.reduce / 1e6, p.shared / 1e6);
    }
    s
}

/// The rows of a `pace.csv`; an error names the line that does not parse.
pub fn parse_all(text: &str) -> Result<Vec<RunPace>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && l.trim() != HEADER)
        .map(|(i, line)| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let mbps = |s: &str| s.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).map(|x| x * 1e6);
            match f[..] {
                [op, bytes, c, d, r, sh] => match (bytes.parse(), mbps(c), mbps(d), mbps(r), mbps(sh)) {
                    (Ok(bytes), Some(comp), Some(decomp), Some(reduce), Some(shared)) => Ok(RunPace { op: op.to_string(), bytes, pace: Pace { comp, decomp, reduce, shared } }),
                    _ => Err(format!("line {}: {line:?}: want {HEADER}, positive figures", i + 1)),
                },
                _ => Err(format!("line {}: {line:?}: want {HEADER}", i + 1)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_takes_the_mean_of_the_probes_around_it() {
        let p = |x: f64| Pace { comp: x * 1e6, decomp: 2.0 * x * 1e6, reduce: 3.0 * x * 1e6, shared: 0.5 * x * 1e6 };
        let runs = [("bcast".to_string(), 16u64 << 20), ("bcast".to_string(), 32 << 20)];
        let csv = to_csv(&runs, &[p(1000.0), p(3000.0), p(2000.0)]);
        assert_eq!(csv, format!("{HEADER}\nbcast,16777216,2000,4000,6000,1000\nbcast,33554432,2500,5000,7500,1250\n"));
        let back = parse_all(&csv).unwrap();
        assert_eq!(back, vec![RunPace { op: "bcast".into(), bytes: 16 << 20, pace: p(2000.0) }, RunPace { op: "bcast".into(), bytes: 32 << 20, pace: p(2500.0) }]);
        assert_eq!(p(2000.0).over(&p(1000.0)), [2.0, 2.0, 2.0, 2.0]);
        // A run without the probe after it (an interrupted demo) has no row.
        assert_eq!(to_csv(&runs, &[p(1000.0), p(3000.0)]).lines().count(), 2);
    }

    #[test]
    fn the_typical_pace_is_each_figures_median_over_the_runs() {
        let run = |comp: f64, decomp: f64, reduce: f64, shared: f64| RunPace { op: "bcast".into(), bytes: 1, pace: Pace { comp, decomp, reduce, shared } };
        // One slow run among three moves no median; each figure's own.
        let odd = [run(5.0, 9.0, 1.0, 6.0), run(1.0, 8.0, 3.0, 4.0), run(4.0, 1.0, 2.0, 7.0)];
        assert_eq!(typical(&odd), Some(Pace { comp: 4.0, decomp: 8.0, reduce: 2.0, shared: 6.0 }));
        assert_eq!(typical(&odd[..2]), Some(Pace { comp: 3.0, decomp: 8.5, reduce: 2.0, shared: 5.0 }));
        assert_eq!(typical(&[]), None);
    }

    #[test]
    fn a_bad_pace_line_is_refused_by_number() {
        // The last, a pace.csv from before the shared column (c73b04f and earlier).
        for bad in ["bcast,16777216,2000,4000,6000,0", "bcast,16M,2000,4000,6000,1000", "bcast,16777216,0,4000,6000,1000", "bcast,16777216,NaN,4000,6000,1000", "bcast,16777216,-1,4000,6000,1000", "bcast,16777216,2000,4000,6000"] {
            let err = parse_all(&format!("{HEADER}\n{bad}\n")).unwrap_err();
            assert!(err.starts_with("line 2:"), "{bad}: {err}");
        }
    }
}
