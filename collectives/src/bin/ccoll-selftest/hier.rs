//! The hierarchical allreduce's uncompressed small-message path (NV-Group's): below
//! `hier_host_max_bytes` exact and identical on every rank with k = 0 and bound 0,
//! above it compressed among the groups; the automatic selection picks it where node
//! groups make it pay; ranks whose thresholds put them on different paths all fail.

use collectives::{compressions_per_value, value_allowance, Algorithm, CollConfig, CollError, CollOp, CompressedCollectives, NodeGroups, ReduceOp};

use crate::suite::Suite;

/// Threshold of these cases, in bytes: 1000 f32 lie below, 5000 above.
const THRESHOLD: usize = 8192;

/// Small integers: every order of summation gives the same, exact, sum.
fn integers(n: usize, rank: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7 + rank * 13) % 17) as f32 - 8.0).collect()
}

pub fn run(s: &mut Suite, base: &CollConfig, label: &str) {
    let cfg = CollConfig { node_groups: NodeGroups::Blocks(2), hier_host_max_bytes: THRESHOLD, ..base.with_algorithm(Algorithm::Hierarchical) };
    let p = s.p;
    let groups = p.div_ceil(2);

    // Below: exact, k = 0, bound 0, nothing compressed.
    let n = 1000;
    let x = integers(n, s.rank);
    let want: Vec<f32> = (0..n).map(|i| (0..p).map(|r| integers(n, r)[i]).sum()).collect();
    let mut got = vec![0f32; n];
    let name = format!("{label} hier host path n={n}");
    match s.world.c_allreduce(&x, &mut got, ReduceOp::Sum, &cfg) {
        Ok(st) => {
            s.check_stats(&name, &st, Algorithm::Hierarchical, 0);
            s.expect(st.error_bound == Some(0.0) && st.values_compressed == 0, || format!("{name}: {st:?}"));
            s.compare(&name, &got, &want, |_| 0.0);
        }
        Err(e) => s.expect(false, || format!("{name}: {e}")),
    }

    // Below, with values whose sum depends on the order: the same bits on every rank.
    let x: Vec<f32> = (0..n).map(|i| ((i + 3 * s.rank) as f32 * 0.37).sin() * 1e3).collect();
    let name = format!("{label} hier host path identical on every rank");
    s.cases += 1;
    match s.world.c_allreduce(&x, &mut got, ReduceOp::Sum, &cfg) {
        Ok(_) => {
            // 52 bits of a hash of the result: exact in an f64, compared by max and min.
            let h = got.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| (h ^ u64::from(v.to_bits())).wrapping_mul(0x0100_0000_01b3)) >> 12;
            let (hi, lo) = (s.max(h as f64), -s.max(-(h as f64)));
            s.expect(hi == lo, || format!("{name}: the ranks' results differ"));
        }
        Err(e) => s.expect(false, || format!("{name}: {e}")),
    }

    // Above: compressed among the groups, within its bound.
    let n = 5000;
    let x: Vec<f32> = (0..n).map(|i| ((i + 5 * s.rank) as f32 * 0.01).cos()).collect();
    let mpi = cfg.with_algorithm(Algorithm::Mpi);
    let (mut want, mut got) = (vec![0f32; n], vec![0f32; n]);
    let name = format!("{label} hier compressed n={n}");
    let k = if groups > 1 { compressions_per_value(CollOp::Allreduce, Algorithm::Hierarchical, groups) } else { 0 };
    match s.world.c_allreduce(&x, &mut want, ReduceOp::Sum, &mpi).and_then(|_| s.world.c_allreduce(&x, &mut got, ReduceOp::Sum, &cfg)) {
        Ok(st) => {
            s.check_stats(&name, &st, Algorithm::Hierarchical, k);
            let compressed = s.sum(st.values_compressed);
            s.expect((compressed > 0) == (groups > 1), || format!("{name}: {compressed} values compressed over {groups} groups"));
            let bound = st.error_bound.unwrap_or(f64::INFINITY);
            s.compare(&name, &got, &want, |i| value_allowance(CollOp::Allreduce, true, p, k, f32::EPSILON.into(), bound, p as f64 * f64::from(want[i].abs().max(1.0))));
        }
        Err(e) => s.expect(false, || format!("{name}: {e}")),
    }

    // Automatic: with groups of 2 and at least two groups the model picks `hier` for a
    // small call (default model and thresholds), which then runs its host path.
    let auto = CollConfig { node_groups: NodeGroups::Blocks(2), ..CollConfig::new(base.codec) };
    let x = integers(1000, s.rank);
    let want: Vec<f32> = (0..1000).map(|i| (0..p).map(|r| integers(1000, r)[i]).sum()).collect();
    let mut got = vec![0f32; 1000];
    let name = format!("{label} auto small allreduce in groups of 2");
    let expected = if groups > 1 { Algorithm::Hierarchical } else { Algorithm::Mpi };
    match s.world.c_allreduce(&x, &mut got, ReduceOp::Sum, &auto) {
        Ok(st) => {
            s.check_stats(&name, &st, expected, 0);
            s.compare(&name, &got, &want, |_| 0.0);
        }
        Err(e) => s.expect(false, || format!("{name}: {e}")),
    }

    // Rank 0 alone would compress 1000 values: every rank fails, none hangs.
    if p > 1 {
        let mine = if s.rank == 0 { CollConfig { hier_host_max_bytes: 0, min_bytes_to_compress: 0, ..cfg } } else { cfg };
        let r = s.world.c_allreduce(&integers(1000, s.rank), &mut got, ReduceOp::Sum, &mine);
        s.cases += 1;
        s.expect(matches!(r, Err(CollError::Mismatch { .. })), || format!("{label} hier thresholds that differ: {r:?}"));
    }
}
