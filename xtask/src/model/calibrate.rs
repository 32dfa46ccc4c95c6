//! Calibration: the codec's single-core compression and decompression throughput and
//! ratio, its compression of data it decoded itself, the compressed-domain reduction
//! of two of its streams, the element-wise reduction throughput and the cost of
//! writing fresh memory, measured in this process as CPU time (robust to other work on
//! a shared machine).

use codec_host::elementwise::ReduceOp;
use codec_host::{Backend, Codec, CpuExecutor, ErrorBound, Shape, SzxLayout, ZfpMode};
use super::pace::{Pace, Probe};
use collectives::bench_csv::{self, CodecWork};
use collectives::model::{Params, Profile, PROFILE_PIECES};

/// A codec pass's cost per uncompressed byte against the compressed fraction `1/ratio`:
/// a scan of the input plus the work of each byte the compressed stream holds (SZx's
/// constant blocks are cheap, its coded blocks cost in proportion to their bits).
/// Piecewise linear through measurements at different ratios, the end pieces extended
/// past the end points (a piece that noise makes fall with the compressed fraction is
/// flat at its ends' mean).
#[derive(Clone, Debug, PartialEq)]
pub struct PassCost {
    /// (1 / ratio, seconds per uncompressed byte), by growing 1 / ratio.
    points: Vec<(f64, f64)>,
}

impl PassCost {
    /// The same cost at every ratio.
    pub fn flat(bytes_per_s: f64) -> PassCost {
        PassCost { points: vec![(0.0, 1.0 / bytes_per_s)] }
    }

    /// Through (ratio, seconds per byte) measurements; those at one ratio are averaged.
    pub fn through(measured: &[(f64, f64)]) -> PassCost {
        let mut by_x: Vec<(f64, f64)> = measured.iter().map(|&(ratio, s)| (1.0 / ratio.max(1.0), s)).collect();
        by_x.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut points: Vec<(f64, f64, f64)> = Vec::new();
        for (x, s) in by_x {
            match points.last_mut() {
                Some(last) if (x - last.0).abs() < 1e-9 => {
                    last.1 += s;
                    last.2 += 1.0;
                }
                _ => points.push((x, s, 1.0)),
            }
        }
        PassCost { points: points.into_iter().map(|(x, s, n)| (x, s / n)).collect() }
    }

    /// Uncompressed bytes per second at `ratio`.
    pub fn bytes_per_s(&self, ratio: f64) -> f64 {
        let x = 1.0 / ratio.max(1.0);
        let p = &self.points;
        if p.len() < 2 {
            return 1.0 / p[0].1;
        }
        // The piece whose span holds x, else the one at that end.
        let i = p.windows(2).position(|w| x <= w[1].0).unwrap_or(p.len() - 2);
        let ((x0, y0), (x1, y1)) = (p[i], p[i + 1]);
        if y1 < y0 {
            // Noise: flat at the two measurements' mean.
            return 2.0 / (y0 + y1);
        }
        let slope = (y1 - y0) / (x1 - x0);
        // Never below the cheapest measured cost's tenth: a piece extended far stays
        // positive.
        let floor = p.iter().map(|q| q.1).fold(f64::INFINITY, f64::min) / 10.0;
        1.0 / (y0 + slope * (x - x0)).max(floor)
    }

    /// The same pass on a machine `by` times as fast.
    fn faster(&self, by: f64) -> PassCost {
        PassCost { points: self.points.iter().map(|&(x, s)| (x, s / by)).collect() }
    }
}

/// Calibrated machine constants (one core).
#[derive(Clone, Debug)]
pub struct Calibration {
    pub compress: PassCost,
    pub decompress: PassCost,
    /// Compressing values the codec decoded itself (what CPR-P2P's inner ranks compress
    /// again), at the ratio the original values reached.
    pub recompress: PassCost,
    /// Reducing two compressed streams into one without decoding them
    /// (`codec_host::szx::reduce`, the `cdr` Allreduce), at the result's ratio; `None`
    /// where the codec figures were given instead of measured.
    pub domain_reduce: Option<PassCost>,
    /// The codec-independent figures.
    pub machine: Machine,
    pub ratio: f64,
    /// The ratios of the other codec measurements (the sum of fields, the mostly
    /// constant tail of a longer field), where there are any.
    pub other_ratios: Vec<f64>,
    /// How the field's bytes and codec work spread over its pieces (the Bcast's vector,
    /// [`collectives::model::Profile`]).
    pub profile: Profile,
    /// The same over a Scatter root's input at 64 MiB a block ([`Fields`]'s
    /// `scattered`, coded with the bound over all of it).
    pub scatter_input: Profile,
    /// The machine's pace when the codec was measured (`None` where its figures were
    /// given).
    pub pace: Option<Pace>,
    pub measured: bool,
}

/// The machine's codec-independent throughputs, one core (bytes per CPU second).
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// Reducing one operand into another, per operand byte.
    pub reduce_bytes_per_s: f64,
    /// Writing a freshly allocated buffer (the kernel maps and zeroes every page): the
    /// buffers a collective allocates inside a call.
    pub fresh_bytes_per_s: f64,
    /// Freeing such a buffer (the kernel unmaps its pages).
    pub unmap_bytes_per_s: f64,
    /// The same for a buffer below glibc's mmap threshold cap after one like it was freed
    /// (calloc clears heap memory the process mapped before).
    pub reused_bytes_per_s: f64,
    /// Copying values between mapped buffers (a rank's own block into its output).
    pub copy_bytes_per_s: f64,
    /// Finding the finite value range of the input (relative bounds).
    pub scan_bytes_per_s: f64,
    /// Memory traffic (bytes read plus written) per second of one core while every core
    /// of this machine streams at once: a node's memory bandwidth per core, which caps
    /// what a multi-core codec pass can move.
    pub core_mem_bytes_per_s: f64,
    /// The machine's reduction pace while these were measured (the probe's, before and
    /// after): what the memory-bound figures are scaled against at another pace.
    pub reduce_pace: f64,
}

impl Machine {
    pub fn measure(probe: &Probe) -> Result<Machine, String> {
        let before = probe.measure()?;
        let (fresh_bytes_per_s, unmap_bytes_per_s) = allocation_throughput(VALUES);
        Ok(Machine {
            reduce_bytes_per_s: reduce_throughput(),
            fresh_bytes_per_s,
            unmap_bytes_per_s,
            reused_bytes_per_s: allocation_throughput(REUSED_VALUES).0,
            copy_bytes_per_s: copy_throughput(),
            scan_bytes_per_s: scan_throughput(),
            core_mem_bytes_per_s: core_memory_bandwidth(),
            reduce_pace: before.mean(&probe.measure()?).reduce,
        })
    }
}

/// What [`Calibration::measure`] codes, in its order (for the progress line).
pub const INPUTS: &str = "a 64 MiB field, the sum of four, the last 192 MiB of one four times as long, the sum at a tenth of the bound";

/// Fields summed for the second codec measurement.
const SUMMED: u64 = 4;
/// The bound of the fourth codec measurement (the sum of fields again) over the codec's.
const LOW_RATIO_BOUND: f64 = 10.0;

/// Values of the calibration field: 64 MiB of f32.
const VALUES: usize = 16 << 20;
const REPEATS: usize = 5;
/// Runs of the contention probe, each way.
const CONTENTION_RUNS: usize = 5;
/// Probes of the contention, of which the median counts, and the pause between two.
const CONTENTION_PROBES: usize = 5;
const CONTENTION_PROBE_GAP: std::time::Duration = std::time::Duration::from_millis(500);

impl Calibration {
    /// Given codec figures (at every ratio), with the machine's measured ones.
    pub fn given(comp: f64, decomp: f64, ratio: f64, machine: Machine) -> Calibration {
        Calibration {
            compress: PassCost::flat(comp),
            decompress: PassCost::flat(decomp),
            recompress: PassCost::flat(comp),
            domain_reduce: None,
            machine,
            ratio,
            other_ratios: Vec::new(),
            profile: Profile::UNIFORM,
            scatter_input: Profile::UNIFORM,
            pace: None,
            measured: false,
        }
    }

    /// Measures `codec` on `fields` (best of five), with an executor of `threads` threads
    /// as a rank's codec runs (SZx takes a fused one-pass path on one thread and a
    /// two-pass parallel one on more): the figures are bytes per CPU second of the
    /// process, one thread's speed on the path the collectives take. `machine`: the
    /// codec-independent figures, measured once for every thread count. `probe` times
    /// the machine's pace before and after the codec passes, as the demo does around its
    /// runs; the pace of the memory-bound figures is `machine`'s own.
    pub fn measure(fields: &Fields, codec: &str, threads: usize, machine: Machine, probe: &Probe) -> Result<Calibration, String> {
        let Fields { data, summed, other, scattered } = fields;
        let before = probe.measure()?;
        let codec = parse_codec(codec)?;
        let exec = Backend::with_executor(CpuExecutor::new(threads.max(1)).map_err(|e| e.to_string())?);
        // The field, the sum of fields, a Scatter root's last three quarters, and the sum
        // again at a tenth of the bound: the heaviest partial sums of a ring reach ratios
        // below the sum's, where the line through the other points fell far below what
        // the compressor does (2200 against 3200 MB/s at ratio 4.7).
        let jobs = [(&data[..], &data[..], codec), (summed, summed, codec), (&scattered[VALUES..], scattered, codec), (summed, summed, finer(&codec, LOW_RATIO_BOUND))];
        let [at, sum, tail, low]: [Pass; 4] = measure_passes(&jobs, &exec)?.try_into().map_err(|_| "one pass per job")?;
        let (profile, scatter_input) = (profile_of(data, codec, &exec)?, profile_of(scattered, codec, &exec)?);
        let passes = [&at, &sum, &tail, &low];
        let cost = |f: fn(&Pass) -> f64| PassCost::through(&passes.map(|x| (x.ratio, 1.0 / f(x))));
        // The compressed-domain reduction: a field with another (two snapshots' sum), and
        // the sum of four with a field (a later ring step's partial sum), both coded with
        // one absolute bound as the collectives code them (a shared quantisation grid).
        let fixed = absolute(&codec, data)?;
        let pair = measure_domain_reduce(data, other, &fixed, &exec)?;
        let later = measure_domain_reduce(summed, other, &fixed, &exec)?;
        let pace = Pace { reduce: machine.reduce_pace, ..before.mean(&probe.measure()?) };
        Ok(Calibration {
            compress: cost(|x| x.comp),
            decompress: cost(|x| x.decomp),
            recompress: cost(|x| x.recomp),
            domain_reduce: Some(PassCost::through(&[(pair.1, 1.0 / pair.0), (later.1, 1.0 / later.0)])),
            machine,
            ratio: at.ratio,
            other_ratios: vec![sum.ratio, tail.ratio, low.ratio],
            profile,
            scatter_input,
            pace: Some(pace),
            measured: true,
        })
    }

    /// This calibration on the machine at pace `now`: the compressing passes (the
    /// codec's, its recompression and the compressed-domain reduction) faster by the
    /// probe's compression, decoding by its decoding, and the memory-bound passes (the
    /// reduction, copies, the range scan) by its reduction. Fresh memory and freeing it
    /// are the kernel's page work, which the probe does not time: they stay.
    pub fn at_pace(&self, now: &Pace) -> Calibration {
        let Some(then) = &self.pace else { return self.clone() };
        let [comp, decomp, mem, _] = now.over(then);
        let machine = Machine {
            reduce_bytes_per_s: self.machine.reduce_bytes_per_s * mem,
            copy_bytes_per_s: self.machine.copy_bytes_per_s * mem,
            scan_bytes_per_s: self.machine.scan_bytes_per_s * mem,
            ..self.machine.clone()
        };
        Calibration {
            compress: self.compress.faster(comp),
            decompress: self.decompress.faster(decomp),
            recompress: self.recompress.faster(comp),
            domain_reduce: self.domain_reduce.as_ref().map(|c| c.faster(comp)),
            machine,
            pace: Some(*now),
            ..self.clone()
        }
    }

    /// The codec lines at the speeds one measured point's ranks reached (its codec
    /// columns, `w`): each direction scaled by what this calibration prices that point's
    /// passes at over the CPU time they took. A pass is priced at its aggregate ratio,
    /// plus the memory it faulted in at the fresh-memory speed (the model prices those
    /// faults apart, as writing fresh memory); the fused decode-and-reduce passes as a
    /// decode plus a reduction, and the reduction takes the decoding's factor where
    /// there were any (else `memory`'s). The value-range scan is priced at the speed the
    /// ranks' scans reached (bytes over CPU time; `memory`'s where none was timed):
    /// alone over a fresh input it ran from 10 to 16 GB/s from one process to the next
    /// on one machine, as the input's pages landed, so no figure measured apart prices
    /// it. The other figures are `memory`'s. A direction without passes keeps its line.
    pub fn in_situ(&self, w: &CodecWork, memory: &Machine) -> Calibration {
        let factor = |expected: f64, cpu_s: f64| if expected > 0.0 && cpu_s > 0.0 { expected / cpu_s } else { 1.0 };
        let priced = |line: &PassCost, p: &bench_csv::Pass| {
            let codec = if p.raw_bytes > 0.0 { p.raw_bytes / line.bytes_per_s(p.raw_bytes / p.coded_bytes.max(1.0)) } else { 0.0 };
            codec + p.faulted_bytes / self.machine.fresh_bytes_per_s
        };
        let (c, d) = (&w.compress, &w.decompress);
        let comp = factor(priced(&self.compress, c), c.cpu_s);
        let decomp = factor(priced(&self.decompress, d) + d.reduced_bytes / self.machine.reduce_bytes_per_s, d.cpu_s);
        let reduce = if d.reduced_bytes > 0.0 { self.machine.reduce_bytes_per_s * decomp } else { memory.reduce_bytes_per_s };
        let scan = if w.scan.raw_bytes > 0.0 && w.scan.cpu_s > 0.0 { w.scan.raw_bytes / w.scan.cpu_s } else { memory.scan_bytes_per_s };
        Calibration {
            compress: self.compress.faster(comp),
            decompress: self.decompress.faster(decomp),
            recompress: self.recompress.faster(comp),
            domain_reduce: self.domain_reduce.as_ref().map(|c| c.faster(comp)),
            machine: Machine { reduce_bytes_per_s: reduce, scan_bytes_per_s: scan, ..memory.clone() },
            ..self.clone()
        }
    }

    /// This calibration's compression and decoding speeds at `ratio` over `base`'s.
    pub fn speed_over(&self, base: &Calibration, ratio: f64) -> [f64; 2] {
        [self.compress.bytes_per_s(ratio) / base.compress.bytes_per_s(ratio), self.decompress.bytes_per_s(ratio) / base.decompress.bytes_per_s(ratio)]
    }

    /// The codec and memory terms of the model at `ratio`, with `cores` cores per pass
    /// moving at most `mem` bytes per second through memory (`f64::INFINITY`: no cap);
    /// the rest is filled in by the caller. A pass moves its input and its output:
    /// compression reads n, decompression writes n (plus the small compressed side), a
    /// copy 2n, a reduction 3n.
    pub fn params(&self, ratio: f64, cores: f64, mem: f64) -> Params {
        let m = &self.machine;
        let codec = |c: &PassCost| (c.bytes_per_s(ratio) * cores).min(mem);
        Params {
            ranks: 1,
            link_bytes_per_s: 1.0,
            alpha_s: 0.0,
            comp_bytes_per_s: codec(&self.compress),
            decomp_bytes_per_s: codec(&self.decompress),
            recomp_bytes_per_s: Some(codec(&self.recompress)),
            domain_reduce_bytes_per_s: self.domain_reduce.as_ref().map(codec),
            // Measured over 64 MiB: a fixed cost per pass is inside the throughput.
            codec_call_s: 0.0,
            reduce_bytes_per_s: (m.reduce_bytes_per_s * cores).min(mem / 3.0),
            fresh_bytes_per_s: (m.fresh_bytes_per_s * cores).min(mem),
            unmap_bytes_per_s: m.unmap_bytes_per_s * cores,
            reused_bytes_per_s: (m.reused_bytes_per_s * cores).min(mem),
            heap_reuse_below_bytes: collectives::model::GLIBC_MMAP_THRESHOLD_MAX,
            kept_subtree_bytes: collectives::model::KEPT_VALUE_BYTES,
            copy_bytes_per_s: (m.copy_bytes_per_s * cores).min(mem / 2.0),
            scan_bytes_per_s: (m.scan_bytes_per_s * cores).min(mem),
            ratio,
            profile: self.profile,
            scatter_input: self.scatter_input,
            ..Params::IDEAL
        }
    }

    pub fn describe(&self) -> String {
        let mbps = |c: &PassCost, ratio: f64| c.bytes_per_s(ratio) / 1e6;
        let domain = |ratio: f64| self.domain_reduce.as_ref().map_or("-".to_string(), |c| format!("{:.0}", mbps(c, ratio)));
        let others: String = self
            .other_ratios
            .iter()
            .map(|&r| format!(" ({:.0} / {:.0} / {:.0} / {} MB/s at ratio {r:.2})", mbps(&self.compress, r), mbps(&self.decompress, r), mbps(&self.recompress, r), domain(r)))
            .collect();
        let percent = |shares: &[f64]| shares.iter().map(|s| format!("{:.0}", s * 100.0)).collect::<Vec<_>>().join("/");
        let spread = |what: &str, p: &Profile| {
            if *p == Profile::UNIFORM {
                return String::new();
            }
            format!("; {what}'s {PROFILE_PIECES} pieces hold {}% of its compressed bytes and take {}% of its decoding", percent(&p.bytes), percent(&p.decomp))
        };
        let profile = spread("the field", &self.profile) + &spread("a Scatter root's input", &self.scatter_input);
        let pace = self.pace.map_or(String::new(), |p| format!("; the machine's pace meanwhile (the probe, one thread): compress {:.0} MB/s, decode {:.0} MB/s (every core compressing: {:.0} MB/s a thread)", p.comp / 1e6, p.decomp / 1e6, p.shared / 1e6));
        format!(
            "calibration ({}, per thread, CPU time): compress {:.0} MB/s, decompress {:.0} MB/s, compress its decoded output {:.0} MB/s, compressed-domain reduction {} MB/s at ratio {:.2}{others}{profile}; reduce {:.0} MB/s; writing fresh memory {:.0} MB/s (reused heap {:.0} MB/s), freeing it {:.0} MB/s; copying {:.0} MB/s; value-range scan {:.0} MB/s; memory traffic per core with all cores streaming {:.0} MB/s{pace}",
            if self.measured { "measured" } else { "given" },
            mbps(&self.compress, self.ratio),
            mbps(&self.decompress, self.ratio),
            mbps(&self.recompress, self.ratio),
            domain(self.ratio),
            self.ratio,
            self.machine.reduce_bytes_per_s / 1e6,
            self.machine.fresh_bytes_per_s / 1e6,
            self.machine.reused_bytes_per_s / 1e6,
            self.machine.unmap_bytes_per_s / 1e6,
            self.machine.copy_bytes_per_s / 1e6,
            self.machine.scan_bytes_per_s / 1e6,
            self.machine.core_mem_bytes_per_s / 1e6
        )
    }
}

/// The inputs of the calibration, generated once for every measurement of a run.
pub struct Fields {
    /// 64 MiB of the data set's field.
    data: Vec<f32>,
    /// The sum of [`SUMMED`] such fields with different seeds (what an Allreduce's
    /// partial sums look like: fewer constant blocks, a lower ratio).
    summed: Vec<f32>,
    /// One more field, the other operand of the compressed-domain reduction.
    other: Vec<f32>,
    /// A field four times as long, a Scatter root's input at 64 MiB a block: the root
    /// sends its last three quarters (its own block is the first), coded with the bound
    /// over the whole field's range; on rtm mostly constant blocks, where the line
    /// through the other points fell 15-20% short of the compressor's speed.
    scattered: Vec<f32>,
}

impl Fields {
    pub fn load(dataset: &str) -> Result<Fields, String> {
        let data = field(dataset)?;
        let field = |len: usize, k: u64| field_of(dataset, len, k);
        let mut summed = data.clone();
        for k in 1..SUMMED {
            summed.iter_mut().zip(field(VALUES, k)?).for_each(|(a, b)| *a += b);
        }
        Ok(Fields { data, summed, other: field(VALUES, SUMMED)?, scattered: field(4 * VALUES, 0)? })
    }
}

/// The calibration's 64 MiB field of `dataset`.
pub fn field(dataset: &str) -> Result<Vec<f32>, String> {
    field_of(dataset, VALUES, 0)
}

/// `len` values of `dataset`, the `k`-th seed after the default.
fn field_of(dataset: &str, len: usize, k: u64) -> Result<Vec<f32>, String> {
    let spec = datasets::parse_spec(dataset).map_err(|e| e.to_string())?;
    spec.load_len(len, datasets::DEFAULT_SEED.wrapping_add(k)).map(|f| f.values.to_f32()).map_err(|e| e.to_string())
}

/// One codec's measured speeds (uncompressed bytes/s) and ratio.
struct Pass {
    comp: f64,
    decomp: f64,
    /// Compressing the decoded values again.
    recomp: f64,
    ratio: f64,
}

/// The passes of each `(data, input, codec)` job: compressing `data`, decompressing its
/// stream and compressing the decoded values again, each timed [`REPEATS`] times in
/// rounds over every job and pass, the best counting. Rounds, not each pass's repeats in
/// a row: a passing slowdown of the machine then costs one repeat of each pass, not all
/// of one pass (a main job's calibration, 2026-11-27, measured decompression at ratios
/// 8.9 and 6.8 at 6261 and 7734 MB/s, its other passes as on the quiet machine, which
/// gave 11613 and 10684 minutes later). A relative bound is made absolute first, over
/// the value range of `input` (the call's whole input, of which `data` is what is
/// compressed): a call finds its value range once, before any compression (the model's
/// scan term), and every pass then codes with the absolute bound, so a pass that
/// searched the range itself would be priced twice (on rtm the relative bound's passes
/// took 1.2x, 1.4x and 1.6x as long at ratios 9, 32 and 100). Each round codes a fresh
/// copy of `data` into a fresh output: on this machine an allocation keeps a speed of
/// its own while it lives (5817-6899 MB/s among twelve copies of one field, 2026-11-30,
/// `super::pace`), so the best of the rounds is the best of as many draws, not one
/// draw's luck.
fn measure_passes(jobs: &[(&[f32], &[f32], Codec)], backend: &Backend) -> Result<Vec<Pass>, String> {
    struct Job<'a> {
        data: &'a [f32],
        codec: Codec,
        shape: Shape,
        stream: Vec<u8>,
        best: [f64; 3],
    }
    let mut runs = jobs
        .iter()
        .map(|&(data, input, codec)| {
            let shape = Shape::from_dims(&[data.len()]).map_err(|e| e.to_string())?;
            Ok(Job { data, codec: absolute(&codec, input)?, shape, stream: Vec::new(), best: [f64::INFINITY; 3] })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let err = |e: codec_host::Error| e.to_string();
    for _ in 0..REPEATS {
        for j in &mut runs {
            // Both written before the clock starts, so that no pass faults pages in.
            let (data, mut out) = (j.data.to_vec(), vec![1.0f32; j.data.len()]);
            let comp = cpu_s(|| {
                j.stream = j.codec.compress(&data, j.shape, backend).map_err(err)?;
                Ok(())
            })?;
            let decomp = cpu_s(|| codec_host::decompress_into(&j.stream, &mut out, backend).map(drop).map_err(err))?;
            let recomp = cpu_s(|| j.codec.compress(&out, j.shape, backend).map(drop).map_err(err))?;
            for (best, t) in j.best.iter_mut().zip([comp, decomp, recomp]) {
                *best = best.min(t);
            }
        }
    }
    Ok(runs
        .iter()
        .map(|j| {
            let bytes = (j.data.len() * 4) as f64;
            let [comp, decomp, recomp] = j.best.map(|t| bytes / t.max(1e-9));
            Pass { comp, decomp, recomp, ratio: bytes / j.stream.len() as f64 }
        })
        .collect())
}

/// The shares of the compressed bytes, compression and decompression time of each of
/// [`PROFILE_PIECES`] equal pieces of `field`, each coded with the bound over the whole
/// field.
fn profile_of(field: &[f32], codec: Codec, backend: &Backend) -> Result<Profile, String> {
    let pieces: Vec<_> = field.chunks(field.len().div_ceil(PROFILE_PIECES)).map(|piece| (piece, field, codec)).collect();
    Ok(shares_of(&measure_passes(&pieces, backend)?))
}

/// The shares of each of `pieces`' passes in their compressed bytes, compression and
/// decompression time.
fn shares_of(pieces: &[Pass]) -> Profile {
    let shares = |f: fn(&Pass) -> f64| {
        let each: Vec<f64> = pieces.iter().map(|x| 1.0 / f(x)).collect();
        let all: f64 = each.iter().sum();
        core::array::from_fn(|i| each.get(i).map_or(0.0, |e| e / all))
    };
    Profile { bytes: shares(|x| x.ratio), comp: shares(|x| x.comp), decomp: shares(|x| x.decomp) }
}

/// Slowdown of codec work when `ranks` ranks, each with an executor of `threads`
/// threads, compress at once on this machine's `cores` cores, against the same work of
/// one rank alone with the cores shared perfectly (wall time: what time slicing costs
/// beyond the CPU it uses, caches refilled and threads waiting for their slices, which a
/// CPU-time calibration cannot see). Each rank compresses the 64 MiB field of `fields`
/// in pipeline chunks of 2 MiB with the absolute bound, as the collectives do (a
/// quarter of that, tried first, ran about as long as a time slice and measured mostly
/// the slicing). 1 where the ranks' threads fit the cores. The model charges it to a
/// rank time-sliced with polling ones too (`Params::contention`).
pub fn measure_contention(fields: &Fields, codec: &str, threads: usize, ranks: usize, cores: usize) -> Result<f64, String> {
    let data = &fields.data;
    let codec = absolute(&parse_codec(codec)?, data)?;
    let chunk = (2 << 20) / 4;
    let shape = Shape::from_dims(&[chunk]).map_err(|e| e.to_string())?;
    let backends = (0..ranks.max(1)).map(|_| CpuExecutor::new(threads.max(1)).map(Backend::with_executor)).collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?;
    let work = |backend: &Backend| -> Result<(), String> {
        for piece in data.chunks(chunk).filter(|p| p.len() == chunk) {
            let stream = codec.compress(piece, shape, backend).map_err(|e| e.to_string())?;
            let mut out = vec![0f32; chunk];
            codec_host::decompress_into(&stream, &mut out, backend).map_err(|e| e.to_string())?;
            std::hint::black_box(&out);
        }
        Ok(())
    };
    // Wall seconds of one run of `n` ranks at once.
    let wall = |n: usize| -> Result<f64, String> {
        let t = std::time::Instant::now();
        std::thread::scope(|s| backends[..n].iter().map(|b| s.spawn(move || work(b))).collect::<Vec<_>>().into_iter().try_for_each(|h| h.join().map_err(|_| "calibration thread panicked".to_string())?))?;
        Ok(t.elapsed().as_secs_f64())
    };
    // One rank alone: its fastest run (the work itself, as the other figures take the
    // best). Ranks together: the median run, since how the scheduler interleaves them
    // is what is measured, and it varies from run to run (best of three moved between
    // 1.00 and 1.85 on 16 MiB a rank). The runs alone and together alternate: this
    // machine's speed switches between two levels 30% apart every few seconds
    // (`super::pace`), and with the runs alone first and then together a switch between
    // them would count as contention; alternating, it falls on both alike. Whole
    // probes still come out slow now and then (1.46 and 1.44 among 1.17-1.29 on the
    // quiet machine, 2026-11-27; 1.59 once on 2026-11-30 among 1.03-1.24): the median
    // of several probes, apart in time.
    let probe = || -> Result<f64, String> {
        let (mut alone, mut together) = (Vec::with_capacity(CONTENTION_RUNS), Vec::with_capacity(CONTENTION_RUNS));
        for _ in 0..CONTENTION_RUNS {
            alone.push(wall(1)?);
            together.push(wall(ranks.max(1))?);
        }
        alone.sort_by(f64::total_cmp);
        together.sort_by(f64::total_cmp);
        Ok(contention_of(alone[0], together[CONTENTION_RUNS / 2], ranks, threads, cores))
    };
    let mut figures = Vec::with_capacity(CONTENTION_PROBES);
    for k in 0..CONTENTION_PROBES {
        if k > 0 {
            std::thread::sleep(CONTENTION_PROBE_GAP);
        }
        figures.push(probe()?);
    }
    figures.sort_by(f64::total_cmp);
    Ok(figures[CONTENTION_PROBES / 2])
}

/// How long the probe of [`measure_slice`] watches, and the pause in its clock that
/// counts as the core going to the other thread (a switch costs a slice of the other
/// thread; interrupts take microseconds).
const SLICE_PROBE: std::time::Duration = std::time::Duration::from_secs(1);
const SLICE_GAP: std::time::Duration = std::time::Duration::from_micros(250);

/// The scheduler's time slice between two runnable threads on one core
/// (`Params::slice_s`): two threads pinned to the core this one runs on spin, and one
/// of them reads the clock without pause; each gap of more than [`SLICE_GAP`] is the
/// other's turn, and the median stretch between two gaps is the slice (4.0 ms here:
/// the 250 Hz tick; the first and last stretches are cut and not counted).
pub fn measure_slice() -> Result<f64, String> {
    // SAFETY: sched_getcpu takes no arguments; a negative result is an error.
    let cpu = unsafe { libc::sched_getcpu() };
    let cpu = usize::try_from(cpu).map_err(|_| format!("sched_getcpu: {}", std::io::Error::last_os_error()))?;
    let pin = || -> Result<(), String> {
        // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it, and
        // sched_setaffinity reads size_of::<cpu_set_t>() bytes of it for this thread (0).
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc == 0 { Ok(()) } else { Err(format!("sched_setaffinity to cpu {cpu}: {}", std::io::Error::last_os_error())) }
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    let mut runs = std::thread::scope(|s| -> Result<Vec<f64>, String> {
        let other = s.spawn(|| -> Result<(), String> {
            pin()?;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            Ok(())
        });
        let watch = || -> Result<Vec<f64>, String> {
            pin()?;
            let end = std::time::Instant::now() + SLICE_PROBE;
            let mut start: Option<std::time::Instant> = None;
            let mut last = std::time::Instant::now();
            let mut runs = Vec::new();
            while last < end {
                let now = std::time::Instant::now();
                if now - last > SLICE_GAP {
                    // The first gap ends a stretch that began before the watch.
                    if let Some(s) = start {
                        runs.push((last - s).as_secs_f64());
                    }
                    start = Some(now);
                }
                last = now;
            }
            Ok(runs)
        };
        // On a thread of its own too: pinning the caller would leave every later
        // measurement of this process (and the threads it starts) on one core.
        let runs = s.spawn(watch).join().map_err(|_| "slice probe thread panicked".to_string());
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        other.join().map_err(|_| "slice probe thread panicked".to_string())??;
        runs?
    })?;
    if runs.len() < 3 {
        return Err(format!("slice probe: the core switched threads {} times in {:?} (is the other thread pinned elsewhere?)", runs.len(), SLICE_PROBE));
    }
    runs.sort_by(f64::total_cmp);
    Ok(runs[runs.len() / 2])
}

/// The slowdown of [`measure_contention`]: `ranks` ranks of `threads` threads took
/// `together` seconds where one alone took `alone`. Shared perfectly, the cores one rank
/// used alone (its threads, at most the cores) times the ranks would be spread over all
/// the cores the ranks' threads can fill. Never below 1 (noise).
fn contention_of(alone: f64, together: f64, ranks: usize, threads: usize, cores: usize) -> f64 {
    let (ranks, threads, cores) = (ranks.max(1) as f64, threads.max(1) as f64, cores.max(1) as f64);
    let ideal = alone * threads.min(cores) * ranks / (ranks * threads).min(cores);
    (together / ideal).max(1.0)
}

/// `codec` with its bound made absolute over `data`'s value range (a relative bound's
/// meaning for that field), as a collective fixes one absolute bound for all ranks.
pub fn absolute(codec: &Codec, data: &[f32]) -> Result<Codec, String> {
    match *codec {
        Codec::Szx { bound: ErrorBound::Rel(r), .. } => {
            let (lo, hi) = <f32 as codec_host::Element>::finite_range(data).ok_or("the calibration field has no finite value")?;
            Ok(Codec::szx(ErrorBound::Abs(r * (hi - lo))))
        }
        c => Ok(c),
    }
}

/// `codec` with its bound (its tolerance, or the bits of a fixed rate) `by` times
/// finer: a lower ratio on the same values.
fn finer(codec: &Codec, by: f64) -> Codec {
    match *codec {
        Codec::Szx { bound: ErrorBound::Abs(e), layout } => Codec::Szx { bound: ErrorBound::Abs(e / by), layout },
        Codec::Szx { bound: ErrorBound::Rel(r), layout } => Codec::Szx { bound: ErrorBound::Rel(r / by), layout },
        Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance: tolerance / by } },
        Codec::Zfp { mode: ZfpMode::FixedRate { rate } } => Codec::Zfp { mode: ZfpMode::FixedRate { rate: (rate * by).min(32.0) } },
    }
}

/// Uncompressed bytes per second of summing the streams of `a` and `b`
/// ([`codec_host::szx::reduce`] within the codec's bound, on the calling thread) and the
/// ratio of the result.
fn measure_domain_reduce(a: &[f32], b: &[f32], codec: &Codec, backend: &Backend) -> Result<(f64, f64), String> {
    let shape = Shape::from_dims(&[a.len()]).map_err(|e| e.to_string())?;
    let (sa, sb) = (codec.compress(a, shape, backend).map_err(|e| e.to_string())?, codec.compress(b, shape, backend).map_err(|e| e.to_string())?);
    let Codec::Szx { bound: ErrorBound::Abs(tolerance), .. } = *codec else { return Err("the compressed-domain reduction needs an absolute bound".into()) };
    let mut len = 0;
    let secs = best_of(|| {
        len = codec_host::szx::reduce::reduce::<f32>(ReduceOp::Sum, &sa, &sb, tolerance).map_err(|e| e.to_string())?.stream.len();
        Ok(())
    })?;
    let bytes = (a.len() * 4) as f64;
    Ok((bytes / secs, bytes / len.max(1) as f64))
}

/// An SZx codec as ccoll-bench writes it (`szx-rel=R`, `szx=E`).
pub fn parse_codec(s: &str) -> Result<Codec, String> {
    let codec = collectives::config::parse_codec(s).map_err(|e| e.to_string())?;
    // The bound as the user gave it, before the calibration makes it absolute.
    codec.check_params(codec_host::ElemType::F32, 1).map_err(|e| format!("codec {s:?}: {e}"))?;
    match codec {
        c @ Codec::Szx { layout: SzxLayout::Plain, .. } => Ok(c),
        _ => Err(format!("codec {s:?}: the model calibrates SZx only")),
    }
}

/// CPU seconds (this process, all threads, user and system) of the fastest of five
/// runs: on a machine shared with other work, wall time would measure the others too.
fn best_of(mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..REPEATS {
        best = best.min(cpu_s(&mut f)?);
    }
    Ok(best.max(1e-9))
}

/// CPU seconds of one run of `f` (this process, all threads, user and system).
pub fn cpu_s(f: impl FnOnce() -> Result<(), String>) -> Result<f64, String> {
    let t = process_cpu_s();
    f()?;
    Ok(process_cpu_s() - t)
}

fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we pass; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Bytes of one operand per second of `a[i] += b[i]` over 64 MiB of f32.
fn reduce_throughput() -> f64 {
    let mut a = vec![1.0f32; VALUES];
    let b = vec![0.5f32; VALUES];
    let one = CpuExecutor::new(1).expect("a one-thread executor starts");
    // The collectives' own reduction, on one thread.
    let secs = best_of(|| {
        codec_host::elementwise::reduce(&one, ReduceOp::Sum, &mut a, &b).map_err(|e| e.to_string())?;
        std::hint::black_box(&a);
        Ok(())
    })
    .expect("the lengths agree");
    (VALUES * 4) as f64 / secs
}

/// Values of the buffer whose allocation reuses freed heap memory: 16 MiB, below
/// glibc's 32 MiB mmap threshold cap (filling one took 7.3-7.5 ms twice, then 1.2-1.7
/// ms, 2026-11-27; 32 and 64 MiB buffers stayed at the fresh pages' speed).
const REUSED_VALUES: usize = 4 << 20;

/// Bytes per CPU second of filling a newly allocated buffer of `len` values, and of
/// freeing it after, the best of five of each, allocated and freed in turn: what a
/// buffer a collective allocates inside a call (a work buffer, a decode scratch, a
/// subtree's blocks) costs on top of the codec writing it, and what returning it costs
/// where the call ends. Timed apart, as they fall apart in a call: freeing 64 MiB of
/// fresh pages took 5 ms against 27 ms filling them (2026-11-27), so a fill priced with
/// its free made a Scatter's root look 10% slower than it ran. Fresh pages at 64 MiB;
/// heap memory freed by the runs before at 16 MiB.
fn allocation_throughput(len: usize) -> (f64, f64) {
    let (mut fill, mut free) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..REPEATS {
        let t0 = process_cpu_s();
        let mut v: Vec<f32> = vec![0.0; len];
        v.iter_mut().for_each(|x| *x = 1.0);
        std::hint::black_box(&v);
        let t1 = process_cpu_s();
        drop(v);
        let t2 = process_cpu_s();
        fill = fill.min(t1 - t0);
        free = free.min(t2 - t1);
    }
    let bytes = (len * 4) as f64;
    (bytes / fill.max(1e-9), bytes / free.max(1e-9))
}

/// Bytes per second of copying 64 MiB of f32 into a mapped buffer on one thread, as the
/// collectives copy a rank's own block.
fn copy_throughput() -> f64 {
    let src = vec![1.0f32; VALUES];
    let mut dst = vec![0.0f32; VALUES];
    let secs = best_of(|| {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&dst);
        Ok(())
    })
    .expect("infallible");
    (VALUES * 4) as f64 / secs
}

/// Values each thread of [`core_memory_bandwidth`] copies: 128 MiB, beyond any cache.
const STREAM_VALUES: usize = 32 << 20;

/// Bytes read plus written per second of CPU time while every core copies a buffer of
/// its own at once (one thread per core, best of five): the share of the machine's
/// memory bandwidth one core gets when all are busy.
fn core_memory_bandwidth() -> f64 {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut buffers: Vec<(Vec<f32>, Vec<f32>)> = (0..threads).map(|_| (vec![1.0f32; STREAM_VALUES], vec![0.0f32; STREAM_VALUES])).collect();
    let secs = best_of(|| {
        std::thread::scope(|s| {
            for (src, dst) in buffers.iter_mut() {
                s.spawn(move || {
                    dst.copy_from_slice(std::hint::black_box(src));
                    std::hint::black_box(&dst);
                });
            }
        });
        Ok(())
    })
    .expect("infallible");
    (threads * STREAM_VALUES * 4 * 2) as f64 / secs
}

/// Values the range pass is timed over: far more than any last-level cache.
const SCAN_VALUES: usize = 256 << 20;

/// Bytes per second of the pass the collectives use to find the smallest and largest
/// finite value (what a relative bound needs before compressing), over memory the
/// caches do not hold: a call's input is tens of MiB or more per rank and several
/// ranks share the caches, so it comes from memory (`perf` of a C-Coll Scatter root
/// at 64 MiB, 2026-11-29: 10.7 GB/s over its 256 MiB), where a pass repeated over one
/// 64 MiB buffer measured anything from 9.4 to 19.8 GB/s as the host's shared cache
/// kept more or less of it. One pass over 1 GiB, in 64 MiB calls.
fn scan_throughput() -> f64 {
    let data: Vec<f32> = (0..SCAN_VALUES).map(|i| (i % 1000) as f32).collect();
    let secs = best_of(|| {
        for part in data.chunks(VALUES) {
            std::hint::black_box(<f32 as codec_host::Element>::finite_range(std::hint::black_box(part)));
        }
        Ok(())
    })
    .expect("infallible");
    (SCAN_VALUES * 4) as f64 / secs
}

#[cfg(test)]
mod tests {
    use super::*;
    use codec_host::ErrorBound;

    #[test]
    fn pass_cost_is_piecewise_linear_in_the_compressed_fraction() {
        // 1 ns per byte at ratio 10, 0.5 ns at ratio 40: 1/3 ns + 6.67 ns / ratio.
        let c = PassCost::through(&[(10.0, 1e-9), (40.0, 0.5e-9)]);
        let near = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-6;
        assert!(near(c.bytes_per_s(10.0), 1e9) && near(c.bytes_per_s(40.0), 2e9), "{c:?}");
        assert!(near(c.bytes_per_s(1e9), 3e9), "{c:?}");
        // A third point at ratio 100 (0.2 ns) bends it there; between 10 and 40 it stays.
        let bent = PassCost::through(&[(100.0, 0.2e-9), (10.0, 1e-9), (40.0, 0.5e-9)]);
        assert!(near(bent.bytes_per_s(20.0), c.bytes_per_s(20.0)) && near(bent.bytes_per_s(100.0), 5e9), "{bent:?}");
        // Past ratio 100 the piece from 40 to 100 goes on (20 ns per unit of 1/ratio): 0.1
        // ns at ratio 200; far out it stops at a tenth of the cheapest point's cost.
        assert!(near(bent.bytes_per_s(200.0), 10e9), "{bent:?}");
        assert!(near(bent.bytes_per_s(1e9), 50e9), "{bent:?}");
        // Noise that makes the lower ratio faster gives a flat piece at the mean, never a
        // negative cost.
        let flat = PassCost::through(&[(10.0, 0.5e-9), (40.0, 1e-9)]);
        assert!(near(flat.bytes_per_s(10.0), 1.0 / 0.75e-9) && near(flat.bytes_per_s(1e9), 1.0 / 0.75e-9), "{flat:?}");
        assert!(near(PassCost::through(&[(5.0, 1e-9), (5.0, 3e-9)]).bytes_per_s(7.0), 0.5e9));
        assert!(near(PassCost::flat(4e9).bytes_per_s(3.0), 4e9));
    }

    #[test]
    fn the_slice_probe_sees_two_threads_take_turns_on_one_core() {
        // Linux slices CPU-bound threads at the tick (1-10 ms) or its base slice (0.75-3
        // ms); a probe that counted the clock's own jitter or interrupts as turns comes
        // out in microseconds (a gap of 100 ns: checked). Unpinned threads on a quiet
        // machine see no turns (an error), but on a busy one other work's turns pass.
        let allowed = || {
            // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes into
            // the zeroed set; CPU_COUNT reads it.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
                libc::CPU_COUNT(&set)
            }
        };
        let before = allowed();
        let s = measure_slice().unwrap();
        assert!((0.5e-3..=20e-3).contains(&s), "{s}");
        // The calibrations after it run where the collectives' ranks do, not on one core.
        assert_eq!(allowed(), before, "the probe left its caller pinned");
    }

    #[test]
    fn a_faster_machine_scales_the_codec_and_memory_passes_but_not_the_kernels_page_work() {
        let machine = Machine { reduce_bytes_per_s: 2e9, fresh_bytes_per_s: 3e9, unmap_bytes_per_s: 15e9, reused_bytes_per_s: 12e9, copy_bytes_per_s: 4e9, scan_bytes_per_s: 6e9, core_mem_bytes_per_s: 5e9, reduce_pace: 2e9 };
        let line = PassCost::through(&[(10.0, 2e-9), (40.0, 1e-9)]);
        let then = Pace { comp: 1e9, decomp: 2e9, reduce: 2e9, shared: 1e9 };
        let cal = Calibration { compress: line.clone(), recompress: line.clone(), decompress: line.clone(), domain_reduce: Some(line.clone()), pace: Some(then), ..Calibration::given(1.0, 1.0, 20.0, machine.clone()) };
        // Compression 1.5x as fast, decoding 0.5x, the reduction 1.25x.
        let now = Pace { comp: 1.5e9, decomp: 1e9, reduce: 2.5e9, shared: 1.2e9 };
        let at = cal.at_pace(&now);
        for ratio in [5.0, 20.0, 100.0] {
            let near = |c: &PassCost, by: f64| (c.bytes_per_s(ratio) / (line.bytes_per_s(ratio) * by) - 1.0).abs() < 1e-12;
            assert!(near(&at.compress, 1.5) && near(&at.recompress, 1.5) && near(at.domain_reduce.as_ref().unwrap(), 1.5) && near(&at.decompress, 0.5), "{at:?}");
        }
        let m = &at.machine;
        assert_eq!((m.reduce_bytes_per_s, m.copy_bytes_per_s, m.scan_bytes_per_s), (2.5e9, 5e9, 7.5e9));
        assert_eq!((m.fresh_bytes_per_s, m.unmap_bytes_per_s, m.reused_bytes_per_s, m.core_mem_bytes_per_s), (3e9, 15e9, 12e9, 5e9));
        assert_eq!(at.pace, Some(now));
        // At its own pace, unchanged; figures given without a pace are never scaled.
        assert_eq!(cal.at_pace(&then).compress, cal.compress);
        let given = Calibration::given(1e9, 2e9, 20.0, machine);
        assert_eq!(given.at_pace(&now).compress, given.compress);
    }

    #[test]
    fn a_point_is_priced_at_the_codec_speeds_its_ranks_reached() {
        let machine = Machine { reduce_bytes_per_s: 2e9, fresh_bytes_per_s: 3e9, unmap_bytes_per_s: 15e9, reused_bytes_per_s: 12e9, copy_bytes_per_s: 4e9, scan_bytes_per_s: 6e9, core_mem_bytes_per_s: 5e9, reduce_pace: 2e9 };
        // 2 ns a byte at ratio 10, 1 ns at ratio 40 (both directions).
        let line = PassCost::through(&[(10.0, 2e-9), (40.0, 1e-9)]);
        let cal = Calibration { compress: line.clone(), recompress: line.clone(), decompress: line.clone(), domain_reduce: Some(line.clone()), ..Calibration::given(1.0, 1.0, 20.0, machine.clone()) };
        let memory = Machine { copy_bytes_per_s: 8e9, reduce_bytes_per_s: 1.5e9, ..machine.clone() };
        let pass = |raw_bytes: f64, coded_bytes: f64, reduced_bytes: f64, faulted_bytes: f64, cpu_s: f64| bench_csv::Pass { raw_bytes, coded_bytes, reduced_bytes, faulted_bytes, cpu_s };
        // 1 GB compressed at ratio 10 (2 s priced) with 30 MB faulted in (10 ms at 3 GB/s)
        // in 1.608 s: 1.25 times as fast. 4 GB decoded at ratio 40 (4 s), 2
        // GB of them reduced as decoded (1 s at 2 GB/s), in 10 s: half as fast, and so is
        // the reduction.
        let w = CodecWork { compress: pass(1e9, 1e8, 0.0, 3e7, 1.608), decompress: pass(4e9, 1e8, 2e9, 0.0, 10.0), scan: bench_csv::Pass::default() };
        let own = cal.in_situ(&w, &memory);
        for ratio in [5.0, 20.0, 100.0] {
            let near = |c: &PassCost, by: f64| (c.bytes_per_s(ratio) / (line.bytes_per_s(ratio) * by) - 1.0).abs() < 1e-9;
            assert!(near(&own.compress, 1.25) && near(&own.recompress, 1.25) && near(own.domain_reduce.as_ref().unwrap(), 1.25) && near(&own.decompress, 0.5), "{own:?}");
        }
        assert_eq!(own.speed_over(&cal, 20.0).map(|x| (x * 1e6).round() / 1e6), [1.25, 0.5]);
        // The reduction at the decode's factor, the rest of the memory figures given.
        assert!((own.machine.reduce_bytes_per_s / 1e9 - 1.0).abs() < 1e-12, "{:?}", own.machine);
        assert_eq!((own.machine.copy_bytes_per_s, own.machine.fresh_bytes_per_s, own.machine.scan_bytes_per_s), (8e9, 3e9, 6e9));
        // A timed scan: 1 GB in 62.5 ms is 16 GB/s, whatever the memory figure says.
        let scanned = cal.in_situ(&CodecWork { scan: pass(1e9, 0.0, 0.0, 0.0, 0.0625), ..w }, &memory);
        assert_eq!((scanned.machine.scan_bytes_per_s, scanned.compress.bytes_per_s(20.0)), (16e9, own.compress.bytes_per_s(20.0)));
        // Faults are priced at the calibration's fresh memory and leave it as it is;
        // without any values reduced as decoded the reduction is the given one.
        let faulting = CodecWork { decompress: pass(1e9, 1e8, 0.0, 1e9, 0.5), ..w };
        let f = cal.in_situ(&faulting, &memory);
        // 2 s priced for the decode (ratio 10) + 1/3 s for the faults, in 0.5 s: 4.67x.
        assert!((f.decompress.bytes_per_s(10.0) / line.bytes_per_s(10.0) - 7.0 / 1.5).abs() < 1e-9, "{f:?}");
        assert_eq!((f.machine.fresh_bytes_per_s, f.machine.reduce_bytes_per_s), (3e9, 1.5e9));
        let idle = cal.in_situ(&CodecWork::default(), &memory);
        assert!(idle.compress == cal.compress && idle.decompress == cal.decompress && idle.machine == memory);
    }

    #[test]
    fn contention_is_the_slowdown_against_perfectly_shared_cores() {
        // 4 ranks of 2 threads on 2 cores: one alone fills both cores in 1 s, so all four
        // need 4 s shared perfectly; 5 s is a slowdown of 1.25.
        assert!((contention_of(1.0, 5.0, 4, 2, 2) - 1.25).abs() < 1e-12);
        // 4 one-thread ranks on 8 cores run side by side: 1 s ideal, 1.1 s is 1.1.
        assert!((contention_of(1.0, 1.1, 4, 1, 8) - 1.1).abs() < 1e-12);
        // Faster than perfect sharing (noise) reads as none.
        assert_eq!(contention_of(1.0, 3.5, 4, 2, 2), 1.0);
    }

    #[test]
    fn the_low_ratio_point_codes_the_same_values_finer() {
        assert_eq!(finer(&Codec::szx(ErrorBound::Rel(1e-3)), 10.0), Codec::szx(ErrorBound::Rel(1e-4)));
        assert_eq!(finer(&Codec::szx(ErrorBound::Abs(0.5)), 10.0), Codec::szx(ErrorBound::Abs(0.05)));
        assert_eq!(finer(&Codec::zfp_accuracy(1e-2), 10.0), Codec::zfp_accuracy(1e-3));
        assert_eq!(finer(&Codec::zfp_rate(8.0), 10.0), Codec::zfp_rate(32.0));
        // On a smooth field the finer bound lowers the ratio.
        let data: Vec<f32> = (0..1 << 16).map(|i| (i as f32 * 1e-3).sin()).collect();
        let exec = Backend::with_executor(CpuExecutor::new(1).unwrap());
        let codec = Codec::szx(ErrorBound::Rel(1e-3));
        let [at, low]: [Pass; 2] = measure_passes(&[(&data, &data, codec), (&data, &data, finer(&codec, 10.0))], &exec).unwrap().try_into().map_err(drop).unwrap();
        assert!(low.ratio < at.ratio / 1.2, "{} {}", at.ratio, low.ratio);
    }

    #[test]
    fn a_pass_codes_with_the_bound_over_the_whole_input() {
        // A Scatter root's input: a first block spanning 0..1000, then smooth values in
        // -1..1. Its bound over the whole input (1.0 at 1e-3) leaves the smooth blocks
        // nearly constant; over their own range (0.002) they code finely.
        let smooth: Vec<f32> = (0..1 << 16).map(|i| (i as f32 * 1e-3).sin()).collect();
        let whole: Vec<f32> = (0..1 << 16).map(|i| (i % 1001) as f32).chain(smooth.iter().copied()).collect();
        let exec = Backend::with_executor(CpuExecutor::new(1).unwrap());
        let codec = Codec::szx(ErrorBound::Rel(1e-3));
        let [own, input]: [Pass; 2] = measure_passes(&[(&smooth, &smooth, codec), (&whole[1 << 16..], &whole, codec)], &exec).unwrap().try_into().map_err(drop).unwrap();
        assert!(input.ratio > 4.0 * own.ratio, "{} {}", own.ratio, input.ratio);
    }

    #[test]
    fn the_profile_finds_where_a_fields_bytes_and_work_lie() {
        // A field that varies in its first quarter and is constant after: the pieces of
        // the first quarter hold nearly every compressed byte, while decoding the
        // constant ones still takes time (it writes every value).
        let len = PROFILE_PIECES << 14;
        let data: Vec<f32> = (0..len).map(|i| if i < len / 4 { (i as f32 * 0.37).sin() * 100.0 } else { 0.0 }).collect();
        let exec = Backend::with_executor(CpuExecutor::new(1).unwrap());
        let profile = profile_of(&data, Codec::szx(ErrorBound::Rel(1e-3)), &exec).unwrap();
        for shares in [profile.bytes, profile.comp, profile.decomp] {
            assert!((shares.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{shares:?}");
        }
        let first: f64 = profile.bytes[..PROFILE_PIECES / 4].iter().sum();
        assert!(first > 0.95, "{profile:?}");
        // A constant piece's share of the decoding is well above its share of the bytes
        // (0.0047-0.0063 against 0.0019 in debug builds: a share against a tenth of an
        // even one, 0.00625, failed once).
        let last = PROFILE_PIECES - 1;
        assert!(profile.decomp[last] > 1.5 * profile.bytes[last], "{profile:?}");
    }

    #[test]
    fn codec_strings_parse() {
        assert_eq!(parse_codec("szx-rel=1e-3"), Ok(Codec::szx(ErrorBound::Rel(1e-3))));
        assert_eq!(parse_codec("szx=0.5"), Ok(Codec::szx(ErrorBound::Abs(0.5))));
        for bad in ["szx", "szx-rel=x", "zfp-rate=8"] {
            assert!(parse_codec(bad).is_err(), "{bad}");
        }
        // A negative bound is named as given, before it is made absolute.
        let negative = parse_codec("szx-rel=-1").unwrap_err();
        assert!(negative.contains("szx-rel=-1") && negative.contains("Rel(-1"), "{negative}");
    }
}
