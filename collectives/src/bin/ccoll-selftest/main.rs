//! `ccoll-selftest`: the mpirun-driven test matrix of the collectives, run by
//! `collectives/tests/mpirun.rs` on 1 to 8 ranks (one launch per rank count).
//!
//! Usage: `ccoll-selftest [--codecs SPEC,...] [--large N]`, SPEC as `ccoll-bench
//! --codec` takes it, or `raw` (the same schedules with every message uncompressed).
//! `ccoll-selftest --env-case ring|bad` instead checks the algorithm override that the
//! launcher put in `CCOLL_ALGORITHM` (`bcast=mpi,allreduce=ring`, or an unusable
//! value), and `ccoll-selftest --absent-rank` that the watchdog (`CCOLL_TIMEOUT`) ends a
//! job whose rank 1 never joins; `--panic-after-finalize` panics after `MPI_Finalize`
//! (the panic hook must leave MPI alone then). `ccoll-selftest --device --codecs ...`
//! (feature `cuda`, run by `collectives/tests/device_mpirun.rs`) runs the smaller device
//! matrix: every case also on device buffers with the CUDA backend, which must match the
//! host run bit for bit; `--device-oom` that a device running out of memory inside a call
//! fails it on every rank with a typed error. Every rank prints `ccoll-selftest: rank R of P: C
//! cases, F failures` last and exits non-zero if it saw a failure.

mod cases;
mod hier;
#[cfg(feature = "cuda")]
mod device;
mod misuse;
mod suite;

use codec_host::{Codec, ErrorBound, ZfpMode};
use collectives::{config, value_allowance, Algorithm, CollConfig, CollOp, CollStats, CompressedCollectives, NodeGroups, ReduceOp};

use cases::{Case, Inputs};
use suite::Suite;

/// One codec configuration of the matrix.
struct Setting {
    label: String,
    cfg: CollConfig,
    compresses: bool,
}

fn settings(specs: &str) -> Vec<Setting> {
    specs
        .split(',')
        .map(|spec| {
            if spec == "raw" {
                let mut cfg = CollConfig::new(Codec::zfp_accuracy(1e-3));
                cfg.min_bytes_to_compress = usize::MAX;
                return Setting { label: "raw".into(), cfg, compresses: false };
            }
            let codec = config::parse_codec(spec).unwrap_or_else(|e| panic!("--codecs: {e}"));
            let mut cfg = CollConfig::new(codec);
            // Compress every message, and cut them into many chunks even when small.
            cfg.min_bytes_to_compress = 0;
            cfg.pipeline_chunk_bytes = 4000;
            cfg.node_groups = NodeGroups::Blocks(2);
            // The hierarchical allreduce compresses at every size too (its host path
            // has cases of its own, `hier`).
            cfg.hier_host_max_bytes = 0;
            // Every call's codec passes tallied (`check_codec_tally`).
            cfg.time_codec = true;
            Setting { label: spec.into(), cfg, compresses: true }
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let universe = mpi::initialize().expect("MPI initialises");
    collectives::abort_job_on_panic();
    if args.iter().any(|a| a == "--panic-after-finalize") {
        // The panic hook must not call MPI_Abort once MPI is finalised: this panics
        // as any program does (exit 101).
        drop(universe);
        panic!("a panic after MPI_Finalize");
    }
    collectives::fatal_mpi_errors();
    let mut s = Suite::new(universe.world());
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    if let Some(case) = arg("--env-case") {
        environment_override(&mut s, &case);
    } else if args.iter().any(|a| a == "--absent-rank") {
        absent_rank(&mut s);
    } else if args.iter().any(|a| a == "--device-oom") {
        #[cfg(feature = "cuda")]
        device::out_of_memory(&mut s);
        #[cfg(not(feature = "cuda"))]
        s.expect(false, || "--device-oom needs ccoll-selftest built with the `cuda` feature".into());
    } else if args.iter().any(|a| a == "--device") {
        s.device = cfg!(feature = "cuda");
        s.expect(s.device, || "--device needs ccoll-selftest built with the `cuda` feature".into());
        if s.device {
            device_matrix(&mut s, &arg("--codecs").unwrap_or_else(|| "raw".into()));
            let launches = s.device_launches;
            s.expect(launches > 0, || "the device matrix launched no kernel".into());
        }
    } else {
        matrix(&mut s, &arg("--codecs").unwrap_or_else(|| "raw".into()), arg("--large"));
    }
    println!("ccoll-selftest: rank {} of {}: {} cases, {} failures", s.rank, s.p, s.cases, s.failures.len());
    if !s.failures.is_empty() {
        std::process::exit(1);
    }
}

/// The whole matrix for the codec settings `specs`.
fn matrix(s: &mut Suite, specs: &str, large: Option<String>) {
    let s = &mut *s;
    let settings = settings(specs);
    let large: usize = large.map_or(1 << 20, |v| v.parse().expect("--large takes a count"));
    let inputs = Inputs::new(large.max(70_000), s.rank);

    for (si, setting) in settings.iter().enumerate() {
        let mut salt = si * 100;
        for n in [0, 1, 1001, 65_537, large] {
            for op in CollOp::ALL {
                for &algorithm in op.algorithms() {
                    // The large size only where the bandwidth-bound algorithms matter.
                    let heavy = matches!(op, CollOp::Scatter | CollOp::Gather | CollOp::Alltoall | CollOp::P2p)
                        || matches!(algorithm, Algorithm::CprP2p | Algorithm::Hierarchical);
                    if n == large && heavy {
                        continue;
                    }
                    salt += 1;
                    let case = Case { op, reduce: ReduceOp::Sum, algorithm, n, cfg: &setting.cfg, label: &setting.label, in_place: false };
                    let st = cases::run::<f32>(s, &inputs, &case, salt);
                    if let Some(st) = &st {
                        check_message_log(s, op, st);
                        check_codec_tally(s, op, st);
                    }
                    if setting.compresses && n == 65_537 {
                        check_compressed_once(s, op, algorithm, n, st.as_ref().map_or(0, |st| st.values_compressed));
                        check_pipelined(s, op, algorithm, n, &setting.cfg, st.map_or(0, |st| st.messages_sent));
                    }
                }
            }
        }
        // f64, the other operators, in place.
        for n in [1, 1001] {
            for op in CollOp::ALL {
                for &algorithm in op.algorithms() {
                    salt += 1;
                    let case = Case { op, reduce: ReduceOp::Sum, algorithm, n, cfg: &setting.cfg, label: &setting.label, in_place: false };
                    cases::run::<f64>(s, &inputs, &case, salt);
                }
            }
        }
        for reduce in [ReduceOp::Min, ReduceOp::Max, ReduceOp::Prod] {
            for op in [CollOp::Allreduce, CollOp::Reduce, CollOp::ReduceScatter] {
                for &algorithm in op.algorithms() {
                    salt += 1;
                    let case = Case { op, reduce, algorithm, n: 5003, cfg: &setting.cfg, label: &setting.label, in_place: false };
                    cases::run::<f32>(s, &inputs, &case, salt);
                }
            }
        }
        for op in [CollOp::Allreduce, CollOp::Allgather] {
            for &algorithm in op.algorithms() {
                salt += 1;
                let case = Case { op, reduce: ReduceOp::Sum, algorithm, n: 4099, cfg: &setting.cfg, label: &setting.label, in_place: true };
                cases::run::<f32>(s, &inputs, &case, salt);
            }
        }
        if setting.compresses {
            misuse::run(s, &setting.cfg);
            hier::run(s, &setting.cfg, &setting.label);
            nonfinite(s, &setting.cfg, &setting.label);
            direct_reduce_scatter(s, &setting.cfg, &setting.label);
        }
    }
}

/// The device matrix (`--device`): every operation and algorithm for every codec
/// setting on sizes 0, 1, odd and several pipeline chunks (small: the emulated device
/// interprets the kernels), f32 and f64, one other operator and the in-place forms. Each
/// case checks the host run as [`matrix`] does, then the device run against it.
fn device_matrix(s: &mut Suite, specs: &str) {
    let inputs = Inputs::new(70_000, s.rank);
    for (si, setting) in settings(specs).iter().enumerate() {
        let mut salt = si * 100;
        let mut case = |s: &mut Suite, op: CollOp, reduce: ReduceOp, algorithm: Algorithm, n: usize, in_place: bool, wide: bool| {
            salt += 1;
            let case = Case { op, reduce, algorithm, n, cfg: &setting.cfg, label: &setting.label, in_place };
            if wide {
                cases::run::<f64>(s, &inputs, &case, salt);
            } else {
                cases::run::<f32>(s, &inputs, &case, salt);
            }
        };
        for op in CollOp::ALL {
            for &algorithm in op.algorithms() {
                // 0 and 1 value, odd, and (4000-byte chunks) several pipeline chunks.
                for n in [0, 1, 1001, 9001] {
                    case(s, op, ReduceOp::Sum, algorithm, n, false, false);
                }
                case(s, op, ReduceOp::Sum, algorithm, 1001, false, true);
            }
        }
        for algorithm in CollOp::Allreduce.algorithms() {
            case(s, CollOp::Allreduce, ReduceOp::Max, *algorithm, 1001, false, false);
            case(s, CollOp::Allreduce, ReduceOp::Sum, *algorithm, 1001, true, false);
        }
        for algorithm in CollOp::Allgather.algorithms() {
            case(s, CollOp::Allgather, ReduceOp::Sum, *algorithm, 1001, true, false);
        }
    }
}

/// C-Coll's data-movement promise: every value is compressed exactly once, at its
/// origin (sum of compressed values over all ranks), and the computation framework
/// compresses each block once per ring step.
fn check_compressed_once(s: &mut Suite, op: CollOp, algorithm: Algorithm, n: usize, mine: u64) {
    let total = s.sum(mine) as usize;
    let (p, block) = (s.p, n.div_ceil(s.p));
    let expected = match (op, algorithm) {
        _ if p == 1 || !algorithm.compresses() => 0,
        (CollOp::Bcast, Algorithm::CColl) => n,
        (CollOp::Bcast, Algorithm::CprP2p) => n * (p - 1),
        (CollOp::Scatter | CollOp::Gather, Algorithm::CColl) => block * (p - 1),
        (CollOp::Allgather, Algorithm::CColl) => block * p,
        (CollOp::Alltoall, _) => block * p * (p - 1),
        (CollOp::Allreduce, Algorithm::CColl | Algorithm::Ring) => n * p,
        (CollOp::ReduceScatter, _) => n * (p - 1),
        _ => return,
    };
    s.cases += 1;
    s.expect(total == expected, || format!("{op} {algorithm} n={n}: {total} values compressed over all ranks, expected {expected}"));
}

/// C-Coll's data movement is pipelined: every chunk crosses every hop as a message of
/// its own (sum of messages over all ranks), so a rank can forward or decode a chunk
/// while the next is compressed or in flight. A schedule that bundled a block, or a
/// subtree's blocks, into one message sends far fewer.
fn check_pipelined(s: &mut Suite, op: CollOp, algorithm: Algorithm, n: usize, cfg: &CollConfig, mine: u64) {
    let total = s.sum(mine) as usize;
    let (p, block) = (s.p, n.div_ceil(s.p));
    // The cases at this size are f32.
    let chunks = |len: usize| len.div_ceil(config::pipeline_chunk_values(len, 4, cfg.pipeline_chunk_bytes));
    // A binomial tree's hops from the root to virtual rank v: the one bits of v.
    let hops: usize = (1..p).map(|v| v.count_ones() as usize).sum();
    let expected = match (op, algorithm) {
        (CollOp::Bcast, Algorithm::CColl) => chunks(n) * (p - 1),
        (CollOp::Scatter | CollOp::Gather, Algorithm::CColl) => chunks(block) * hops,
        // Every block crosses p - 1 hops of the ring.
        (CollOp::Allgather, Algorithm::CColl) => chunks(block) * p * (p - 1),
        _ => return,
    };
    s.cases += 1;
    s.expect(chunks(block) > 1, || format!("{op} n={n}: the pipeline check needs several chunks per block"));
    s.expect(total == expected, || format!("{op} {algorithm} n={n}: {total} messages over all ranks, expected {expected} (one per chunk and hop)"));
}

/// The stats' log of messages adds up to their totals. The library's own collectives
/// (plain `mpi`, and `hier`'s uncompressed path) count their input as sent without a
/// message: only for the algorithms that send every message themselves are the sums equal.
fn check_message_log(s: &mut Suite, op: CollOp, st: &CollStats) {
    let (bytes, raw) = st.message_sizes.iter().fold((0, 0), |(b, r), &(sb, sr)| (b + sb, r + sr));
    let own = matches!(st.algorithm, Algorithm::CprP2p | Algorithm::CColl);
    s.cases += 1;
    s.expect(
        st.message_sizes.len() as u64 == st.messages_sent && bytes <= st.bytes_sent && raw <= st.raw_bytes_sent && (!own || (bytes, raw) == (st.bytes_sent, st.raw_bytes_sent)),
        || format!("{op} {}: {} messages logged ({bytes} B, {raw} B raw), stats {} messages ({} B, {} B raw)", st.algorithm, st.message_sizes.len(), st.messages_sent, st.bytes_sent, st.raw_bytes_sent),
    );
}

/// The codec tally of an f32 call on the CPU backend counts what its passes took and
/// made: every value compressed into a stream unless a piece was refused, every value
/// decoded, the bytes reduced as decoded among them, CPU time wherever a pass ran, and
/// a value-range scan of whole values that codes nothing.
fn check_codec_tally(s: &mut Suite, op: CollOp, st: &CollStats) {
    let (c, d, r) = (&st.codec_cpu.compress, &st.codec_cpu.decompress, &st.codec_cpu.scan);
    let compressed = c.raw_bytes == 4 * st.values_compressed || (st.raw_fallbacks > 0 && c.raw_bytes < 4 * st.values_compressed);
    let timed = |raw: u64, cpu_s: f64| (raw > 0) == (cpu_s > 0.0) && cpu_s >= 0.0;
    s.cases += 1;
    s.expect(
        compressed && d.raw_bytes == 4 * st.values_decompressed && d.reduced_bytes <= d.raw_bytes && c.reduced_bytes == 0 && timed(c.raw_bytes, c.cpu_s)
            && timed(d.raw_bytes, d.cpu_s)
            && r.raw_bytes % 4 == 0
            && (r.coded_bytes, r.reduced_bytes) == (0, 0),
        || format!("{op} {}: codec tally {:?} against {} values compressed, {} decompressed, {} refused", st.algorithm, st.codec_cpu, st.values_compressed, st.values_decompressed, st.raw_fallbacks),
    );
}

/// The SUM of `x` over the ranks by the MPI library, and the sum of the magnitudes that
/// scales each value's allowance ([`value_allowance`]).
fn library_sums(s: &mut Suite, x: &[f32], cfg: &CollConfig) -> (Vec<f32>, Vec<f32>) {
    let mpi = cfg.with_algorithm(Algorithm::Mpi);
    let (mut want, mut mag) = (vec![0f32; x.len()], vec![0f32; x.len()]);
    let _ = s.world.c_allreduce(x, &mut want, ReduceOp::Sum, &mpi);
    let abs_x: Vec<f32> = x.iter().map(|v| v.abs()).collect();
    let _ = s.world.c_allreduce(&abs_x, &mut mag, ReduceOp::Sum, &mpi);
    (want, mag)
}

/// Holds the SUM `got` to `want` within what the call's stats allow, value by value
/// ([`library_sums`] gives `want` and the magnitudes; every reduction has the
/// Allreduce's allowance).
fn compare_sum(s: &mut Suite, name: &str, st: &CollStats, got: &[f32], (want, mag): (&[f32], &[f32])) {
    let (k, bound, p) = (st.compressions_per_value, st.error_bound.unwrap_or(f64::INFINITY), s.p);
    let allowed = |i: usize| value_allowance(CollOp::Allreduce, true, p, k, f32::EPSILON.into(), bound, f64::from(mag[i]));
    s.compare(name, got, want, allowed);
}

/// NaN and infinities: where MPI's SUM is non-finite, so is ours, exactly; ZFP sends the
/// pieces that hold them uncompressed.
fn nonfinite(s: &mut Suite, cfg: &CollConfig, label: &str) {
    let n = 4096;
    let mut x: Vec<f32> = (0..n).map(|i| ((i + s.rank) as f32 * 0.01).sin()).collect();
    match s.rank % 3 {
        0 => {
            x[3] = f32::NAN;
            x[7] = f32::INFINITY;
        }
        1 => x[5] = f32::INFINITY,
        _ => x[5] = f32::NEG_INFINITY,
    }
    let mpi = cfg.with_algorithm(Algorithm::Mpi);
    let (want, mag) = library_sums(s, &x, cfg);
    let p = s.p;
    for &algorithm in CollOp::Allreduce.algorithms() {
        let mut got = vec![0f32; n];
        let name = format!("{label} nonfinite allreduce {algorithm}");
        match s.world.c_allreduce(&x, &mut got, ReduceOp::Sum, &cfg.with_algorithm(algorithm)) {
            Ok(st) => {
                compare_sum(s, &name, &st, &got, (&want, &mag));
                let zfp = matches!(cfg.codec, Codec::Zfp { .. });
                if zfp && algorithm.compresses() && algorithm != Algorithm::Hierarchical && s.p > 1 {
                    s.expect(st.raw_fallbacks > 0, || format!("{name}: ZFP met NaN/Inf but sent nothing raw"));
                }
            }
            Err(e) => s.expect(false, || format!("{name}: {e}")),
        }
    }
    let mut want = if s.rank == 0 { x.clone() } else { vec![0.0; n] };
    let _ = s.world.c_bcast(&mut want, 0, &mpi);
    let mut got = if s.rank == 0 { x } else { vec![0.0; n] };
    let name = format!("{label} nonfinite bcast");
    match s.world.c_bcast(&mut got, 0, &cfg.with_algorithm(Algorithm::CColl)) {
        Ok(st) => {
            let bound = st.error_bound.unwrap_or(f64::INFINITY);
            let allowed = |i: usize| value_allowance(CollOp::Bcast, false, p, 1, f32::EPSILON.into(), bound, want[i].abs().into());
            s.compare(&name, &got, &want, allowed)
        }
        Err(e) => s.expect(false, || format!("{name}: {e}")),
    }
}

/// C-Coll's Allreduce and Reduce-scatter of inputs that are noise in the previous rank's
/// block (zeros elsewhere): within their bound, and reduce-scattered directly (the
/// collectives' `alg::direct`). There each rank's noisy block crosses one link, to its
/// owner; a ring (the collective-level `ring` Allreduce, CPR-P2P's Reduce-scatter)
/// passes the partial sum that rank starts through every other rank. So where zeros code
/// small (not ZFP's fixed rate), on three ranks or more, C-Coll sends under 0.9x the
/// ring's compressed bytes (Allreduce: about `p` noisy blocks a rank against `2p - 2`;
/// Reduce-scatter: 1 against `p - 1`).
fn direct_reduce_scatter(s: &mut Suite, cfg: &CollConfig, label: &str) {
    let (n, p) = (1 << 19, s.p);
    // The collectives' even blocks.
    let start = |b: usize| b * (n / p) + b.min(n % p);
    let prev = (s.rank + p - 1) % p;
    let noise = |i: usize| ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
    let x: Vec<f32> = (0..n).map(|i| if (start(prev)..start(prev + 1)).contains(&i) { noise(i * (s.rank + 1)) } else { 0.0 }).collect();
    let (want, mag) = library_sums(s, &x, cfg);
    let name = format!("{label} direct reduce-scatter allreduce c-coll");
    let mut got = vec![0f32; n];
    let (direct, ring) = (s.world.c_allreduce(&x, &mut got, ReduceOp::Sum, &cfg.with_algorithm(Algorithm::CColl)), s.world.c_allreduce(&x, &mut vec![0f32; n], ReduceOp::Sum, &cfg.with_algorithm(Algorithm::Ring)));
    fewer_bytes(s, &name, cfg, (direct, ring), &got, (&want, &mag));
    // Reduce-scatter on the same blocks: this rank's block of the sums.
    let counts: Vec<usize> = (0..p).map(|b| start(b + 1) - start(b)).collect();
    let own = start(s.rank)..start(s.rank + 1);
    let name = format!("{label} direct reduce-scatter reduce-scatter c-coll");
    let mut got = vec![0f32; own.len()];
    let direct = s.world.c_reduce_scatter(&x, &mut got, &counts, ReduceOp::Sum, &cfg.with_algorithm(Algorithm::CColl));
    let ring = s.world.c_reduce_scatter(&x, &mut vec![0f32; own.len()], &counts, ReduceOp::Sum, &cfg.with_algorithm(Algorithm::CprP2p));
    fewer_bytes(s, &name, cfg, (direct, ring), &got, (&want[own.clone()], &mag[own]));
}

/// The check of [`direct_reduce_scatter`]: the direct call's result `got` within its
/// bound of the sums, and its bytes under 0.9x the ring's where that applies.
fn fewer_bytes(s: &mut Suite, name: &str, cfg: &CollConfig, calls: (collectives::Result<CollStats>, collectives::Result<CollStats>), got: &[f32], sums: (&[f32], &[f32])) {
    match calls {
        (Ok(st), Ok(ring)) => {
            compare_sum(s, name, &st, got, sums);
            let k = st.compressions_per_value;
            let fixed_rate = matches!(cfg.codec, Codec::Zfp { mode: ZfpMode::FixedRate { .. } });
            if s.p >= 3 && k > 0 && !fixed_rate {
                let rank = s.rank;
                s.expect(st.bytes_sent * 10 < ring.bytes_sent * 9, || format!("{name}: rank {rank} sent {} bytes, the ring {}", st.bytes_sent, ring.bytes_sent));
            }
        }
        (Err(e), _) | (_, Err(e)) => s.expect(false, || format!("{name}: {e}")),
    }
}

/// `CCOLL_ALGORITHM`, as the launcher set it for every rank (the variable is read, never
/// set, here: setting it would race with the codec's threads): `ring` expects
/// `bcast=mpi,allreduce=ring` to steer `Algorithm::Auto`, `bad` an unusable value of a
/// `CCOLL_*` setting (`CCOLL_ALGORITHM`, `CCOLL_WAIT`) to fail the call on every rank.
fn environment_override(s: &mut Suite, case: &str) {
    let mut cfg = CollConfig::new(Codec::szx(ErrorBound::Abs(1e-3)));
    cfg.min_bytes_to_compress = 0;
    let x = vec![1.0f32; 100_000];
    let mut out = vec![0f32; 100_000];
    let r = s.world.c_allreduce(&x, &mut out, ReduceOp::Sum, &cfg);
    let var = collectives::ENV_ALGORITHM;
    s.cases += 1;
    match case {
        "ring" => {
            s.expect(matches!(&r, Ok(st) if st.algorithm == Algorithm::Ring), || format!("{var}=allreduce=ring: allreduce gave {r:?}"));
            let mut buf = x.clone();
            let r = s.world.c_bcast(&mut buf, 0, &cfg);
            s.cases += 1;
            s.expect(matches!(&r, Ok(st) if st.algorithm == Algorithm::Mpi), || format!("{var}=bcast=mpi: bcast gave {r:?}"));
        }
        _ => s.expect(matches!(r, Err(collectives::CollError::Config(_))), || format!("an unusable {var} or {}: {r:?}", collectives::ENV_WAIT)),
    }
}

/// Rank 1 never joins: it sleeps for a minute while the others broadcast. With
/// `CCOLL_TIMEOUT` set, the watchdog must end the job long before (the test harness
/// checks its message and the time taken); reaching the verdict is a failure.
fn absent_rank(s: &mut Suite) {
    s.cases += 1;
    if s.rank == 1 {
        std::thread::sleep(std::time::Duration::from_secs(60));
    } else {
        let mut buf = vec![1.0f32; 1000];
        let r = s.world.c_bcast(&mut buf, 0, &CollConfig::new(Codec::szx(ErrorBound::Abs(1e-3))).with_algorithm(Algorithm::CColl));
        s.expect(false, || format!("the broadcast without rank 1 returned {r:?}"));
    }
    s.expect(false, || "the job outlived the watchdog".into());
}
