//! One operation on one size with one algorithm: run it, run the plain MPI reference on
//! the same inputs, compare within the stated bound, check the accounting.

use std::cell::Cell;

use codec_host::Codec;
use collectives::{
    compressions_per_value, prod_error_bound, value_allowance, Algorithm, CollConfig, CollOp, CollStats, CompressedCollectives, NodeGroups, ReduceOp,
    Value,
};

#[cfg(feature = "cuda")]
use crate::device::{down, up};
use crate::suite::Suite;
#[cfg(feature = "cuda")]
use collectives::DeviceCollectives;

/// Inputs: slices of smooth fields, one field per rank and one shared by all ranks.
pub struct Inputs {
    own: Vec<f32>,
    shared: Vec<f32>,
}

impl Inputs {
    pub fn new(max_len: usize, rank: usize) -> Self {
        let side = ((max_len * 2) as f64).cbrt().ceil() as usize + 1;
        let field = |seed: u64| datasets::smooth3d_field(side, 1e-3, seed);
        Inputs { own: field(0xc0ffee + rank as u64), shared: field(0xc0ffee - 1) }
    }

    /// `n` values of this rank's field (different on every rank and every salt).
    pub fn values<T: Value>(&self, n: usize, salt: usize) -> Vec<T> {
        slice(&self.own, n, salt)
    }

    /// `n` values that every rank sees the same for the same salt.
    pub fn shared<T: Value>(&self, n: usize, salt: usize) -> Vec<T> {
        slice(&self.shared, n, salt)
    }
}

fn slice<T: Value>(field: &[f32], n: usize, salt: usize) -> Vec<T> {
    let off = (salt * 7919) % (field.len() - n).max(1);
    field[off..off + n].iter().map(|&v| T::from_f64(f64::from(v))).collect()
}

/// One case of the matrix.
pub struct Case<'a> {
    pub op: CollOp,
    pub reduce: ReduceOp,
    pub algorithm: Algorithm,
    /// Length of the vector (allreduce, reduce, reduce-scatter, bcast, p2p) or of each
    /// rank's block, rounded up from `n / p` (scatter, gather, allgather, alltoall).
    pub n: usize,
    pub cfg: &'a CollConfig,
    pub label: &'a str,
    pub in_place: bool,
}

/// This rank's result, the reference, the magnitude of each reference value (see
/// `value_allowance`; empty: the reference's own), the stats.
type Outcome<T> = (Vec<T>, Vec<T>, Vec<T>, CollStats);

/// Runs `case` with element type `T`; returns the stats of this rank (if it ran).
pub fn run<T: Value>(s: &mut Suite, inputs: &Inputs, case: &Case, salt: usize) -> Option<CollStats> {
    let (p, rank) = (s.p, s.rank);
    let cfg = case.cfg.with_algorithm(case.algorithm);
    let mpi = case.cfg.with_algorithm(Algorithm::Mpi);
    let name = format!(
        "{} {} {} {} n={} {}{}",
        case.label,
        case.op,
        case.algorithm,
        std::any::type_name::<T>(),
        case.n,
        if case.op.reduces() { format!("{:?}", case.reduce) } else { String::new() },
        if case.in_place { " in-place" } else { "" }
    );
    let n = case.n;
    let block = n.div_ceil(p);
    let root = (salt + 1) % p;
    let x: Vec<T> = inputs.values(n, salt);
    let op = case.reduce;
    // SUM and PROD accumulate rounding: their values' magnitudes are the same reduction
    // of the inputs' absolute values (MIN, MAX and the rest: the reference's own).
    let accumulates = case.op.reduces() && matches!(op, ReduceOp::Sum | ReduceOp::Prod);
    let abs_x: Vec<T> = x.iter().map(|v| T::from_f64(v.to_f64().abs())).collect();
    // (result of this rank, reference, magnitudes, stats); empty vectors where a rank gets nothing.
    let scale = s.max(x.iter().map(|v| v.to_f64().abs()).fold(1.0, f64::max));
    // The value range of what the ranks contribute (a relative bound resolves with it).
    let span = Cell::new((f64::INFINITY, f64::NEG_INFINITY));
    let note = |v: &[T]| {
        let (lo, hi) = v.iter().map(|v| v.to_f64()).fold(span.get(), |(lo, hi), v| (lo.min(v), hi.max(v)));
        span.set((lo, hi));
    };
    let outcome: collectives::Result<Option<Outcome<T>>> = (|| {
        Ok(Some(match case.op {
            CollOp::Allreduce => {
                note(&x);
                let (mut want, mut mag) = (vec![T::default(); n], Vec::new());
                s.world.c_allreduce(&x, &mut want, op, &mpi)?;
                if accumulates {
                    mag = vec![T::default(); n];
                    s.world.c_allreduce(&abs_x, &mut mag, op, &mpi)?;
                }
                let mut got = x.clone();
                let st = if case.in_place {
                    s.world.c_allreduce_in_place(&mut got, op, &cfg)?
                } else {
                    s.world.c_allreduce(&x, &mut got, op, &cfg)?
                };
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dx, mut dgot) = (up(&x)?, up(&x)?);
                    let st = if case.in_place { w.d_allreduce_in_place(&mut dgot, op, d)? } else { w.d_allreduce(&dx, &mut dgot, op, d)? };
                    Ok((down(&dgot)?, st))
                });
                (got, want, mag, st)
            }
            CollOp::ReduceScatter => {
                // Ragged on purpose: rank r gets about 2r / p of an even share.
                let weights: Vec<usize> = (0..p).map(|r| r + 1).collect();
                let wsum: usize = weights.iter().sum();
                let mut counts: Vec<usize> = weights.iter().map(|w| n * w / wsum).collect();
                counts[p - 1] += n - counts.iter().sum::<usize>();
                note(&x);
                let (mut want, mut mag) = (vec![T::default(); counts[rank]], Vec::new());
                s.world.c_reduce_scatter(&x, &mut want, &counts, op, &mpi)?;
                if accumulates {
                    mag = vec![T::default(); counts[rank]];
                    s.world.c_reduce_scatter(&abs_x, &mut mag, &counts, op, &mpi)?;
                }
                let mut got = vec![T::default(); counts[rank]];
                let st = s.world.c_reduce_scatter(&x, &mut got, &counts, op, &cfg)?;
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dx, mut dgot) = (up(&x)?, up(&vec![T::default(); counts[rank]])?);
                    let st = w.d_reduce_scatter(&dx, &mut dgot, &counts, op, d)?;
                    Ok((down(&dgot)?, st))
                });
                (got, want, mag, st)
            }
            CollOp::Reduce => {
                let len = if rank == root { n } else { 0 };
                note(&x);
                let (mut want, mut got, mut mag) = (vec![T::default(); len], vec![T::default(); len], Vec::new());
                s.world.c_reduce(&x, &mut want, root, op, &mpi)?;
                if accumulates {
                    mag = vec![T::default(); len];
                    s.world.c_reduce(&abs_x, &mut mag, root, op, &mpi)?;
                }
                let st = s.world.c_reduce(&x, &mut got, root, op, &cfg)?;
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dx, mut dgot) = (up(&x)?, up(&vec![T::default(); len])?);
                    let st = w.d_reduce(&dx, &mut dgot, root, op, d)?;
                    Ok((down(&dgot)?, st))
                });
                (got, want, mag, st)
            }
            CollOp::Bcast => {
                let want = inputs.shared::<T>(n, salt);
                if rank == root {
                    note(&want);
                }
                let mut got = if rank == root { want.clone() } else { vec![T::default(); n] };
                #[cfg(feature = "cuda")]
                let initial = got.clone();
                let st = s.world.c_bcast(&mut got, root, &cfg)?;
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let mut dgot = up(&initial)?;
                    let st = w.d_bcast(&mut dgot, root, d)?;
                    Ok((down(&dgot)?, st))
                });
                (got, want, Vec::new(), st)
            }
            CollOp::Scatter => {
                let send: Vec<T> = if rank == root { inputs.values(block * p, salt) } else { Vec::new() };
                note(&send);
                let (mut want, mut got) = (vec![T::default(); block], vec![T::default(); block]);
                s.world.c_scatter(&send, &mut want, root, &mpi)?;
                let st = s.world.c_scatter(&send, &mut got, root, &cfg)?;
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dsend, mut dgot) = (up(&send)?, up(&vec![T::default(); block])?);
                    let st = w.d_scatter(&dsend, &mut dgot, root, d)?;
                    Ok((down(&dgot)?, st))
                });
                (got, want, Vec::new(), st)
            }
            CollOp::Gather => {
                let mine: Vec<T> = inputs.values(block, salt);
                note(&mine);
                let len = if rank == root { block * p } else { 0 };
                let (mut want, mut got) = (vec![T::default(); len], vec![T::default(); len]);
                s.world.c_gather(&mine, &mut want, root, &mpi)?;
                let st = s.world.c_gather(&mine, &mut got, root, &cfg)?;
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dmine, mut dgot) = (up(&mine)?, up(&vec![T::default(); len])?);
                    let st = w.d_gather(&dmine, &mut dgot, root, d)?;
                    Ok((down(&dgot)?, st))
                });
                (got, want, Vec::new(), st)
            }
            CollOp::Allgather => {
                let mine: Vec<T> = inputs.values(block, salt);
                note(&mine);
                let mut want = vec![T::default(); block * p];
                s.world.c_allgather(&mine, &mut want, &mpi)?;
                let mut got = vec![T::default(); block * p];
                let st = if case.in_place {
                    got[rank * block..(rank + 1) * block].copy_from_slice(&mine);
                    s.world.c_allgather_in_place(&mut got, &cfg)?
                } else {
                    s.world.c_allgather(&mine, &mut got, &cfg)?
                };
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let mut initial = vec![T::default(); block * p];
                    if case.in_place {
                        initial[rank * block..(rank + 1) * block].copy_from_slice(&mine);
                    }
                    let (dmine, mut dgot) = (up(&mine)?, up(&initial)?);
                    let st = if case.in_place { w.d_allgather_in_place(&mut dgot, d)? } else { w.d_allgather(&dmine, &mut dgot, d)? };
                    Ok((down(&dgot)?, st))
                });
                (got, want, Vec::new(), st)
            }
            CollOp::Alltoall => {
                let send: Vec<T> = inputs.values(block * p, salt);
                note(&send);
                let mut want = vec![T::default(); block * p];
                s.world.c_alltoall(&send, &mut want, &mpi)?;
                let mut got = vec![T::default(); block * p];
                let st = s.world.c_alltoall(&send, &mut got, &cfg)?;
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dsend, mut dgot) = (up(&send)?, up(&vec![T::default(); block * p])?);
                    let st = w.d_alltoall(&dsend, &mut dgot, d)?;
                    Ok((down(&dgot)?, st))
                });
                (got, want, Vec::new(), st)
            }
            CollOp::P2p => {
                // Pairs (2i, 2i + 1): there and back again; an odd rank out sits idle.
                let partner = rank ^ 1;
                let want = inputs.shared::<T>(n, salt + rank / 2);
                let mut got = vec![T::default(); n];
                if partner >= p {
                    return Ok(None);
                }
                // No early return between the two transfers: the partner relies on both.
                let st = if rank % 2 == 0 {
                    let sent = s.world.c_send(partner, &want, 5, &cfg);
                    let back = s.world.c_recv(partner, &mut got, 6, &cfg);
                    sent.and(back)?
                } else {
                    let st = s.world.c_recv(partner, &mut got, 5, &cfg);
                    let echo = s.world.c_send(partner, &got, 6, &cfg);
                    echo.and(st)?
                };
                #[cfg(feature = "cuda")]
                s.on_device(&name, &cfg, &got, &st, |w, d| {
                    let (dwant, mut dgot) = (up(&want)?, up(&vec![T::default(); n])?);
                    let st = if rank % 2 == 0 {
                        let sent = w.d_send(partner, &dwant, 5, d);
                        let back = w.d_recv(partner, &mut dgot, 6, d);
                        sent.and(back)?
                    } else {
                        let st = w.d_recv(partner, &mut dgot, 5, d);
                        let echo = w.d_send(partner, &dgot, 6, d);
                        echo.and(st)?
                    };
                    Ok((down(&dgot)?, st))
                });
                (got, want, Vec::new(), st)
            }
        }))
    })();
    // A relative bound over a range of zero (one value, constant or no data) compresses
    // nothing: every rank reaches this point, so the reduction is safe here.
    let relative = matches!(case.cfg.codec, Codec::Szx { bound: codec_host::ErrorBound::Rel(_), .. });
    let no_range = relative && case.op != CollOp::P2p && {
        let (lo, hi) = span.get();
        s.max(hi) <= -s.max(-lo)
    };
    let (got, want, mag, st) = match outcome {
        Ok(Some(o)) => o,
        Ok(None) => return None,
        Err(e) => {
            s.expect(false, || format!("{name}: {e}"));
            return None;
        }
    };
    let mut k = if no_range { 0 } else { expected_k::<T>(case, p) };
    if case.algorithm == Algorithm::CompressedDomain && k > 0 {
        // One more compression for every rank that coded blocks again (at most p - 1).
        let stated = st.compressions_per_value;
        s.expect((k..k + p as u32).contains(&stated), || format!("{name}: k = {stated}, expected {k} to {}", k + p as u32 - 1));
        k = stated;
    }
    s.check_stats(&name, &st, case.algorithm, k);
    // The even rank of a point-to-point pair compares what came back: two transfers.
    let path = if case.op == CollOp::P2p && rank % 2 == 0 { 2 * k } else { k };
    let bound = match st.abs_error {
        _ if path == 0 => 0.0,
        Some(e) if case.op.reduces() && op == ReduceOp::Prod => prod_error_bound(path, e, p, scale),
        Some(e) => e * f64::from(path),
        // No bound (ZFP fixed rate): only non-finite mismatches fail.
        None => f64::INFINITY,
    };
    let magnitude = |i: usize| mag.get(i).unwrap_or(&want[i]).to_f64().abs();
    s.compare(&name, &got, &want, |i| value_allowance(case.op, accumulates, p, path, T::EPSILON, bound, magnitude(i)));
    Some(st)
}

/// Compressions per value the case must report: the algorithm's k, except that a call
/// below the compression threshold compresses nothing (k = 0), and the hierarchical
/// allreduce compresses only among node groups, and only above its host threshold.
fn expected_k<T: Value>(case: &Case, p: usize) -> u32 {
    let blockwise = matches!(case.op, CollOp::Scatter | CollOp::Gather | CollOp::Allgather | CollOp::Alltoall);
    let call_values = if blockwise { case.n.div_ceil(p) } else { case.n };
    if call_values * T::SIZE < case.cfg.min_bytes_to_compress {
        return 0;
    }
    if case.algorithm != Algorithm::Hierarchical {
        return compressions_per_value(case.op, case.algorithm, p);
    }
    let groups = match case.cfg.node_groups {
        NodeGroups::Blocks(g) => p.div_ceil(g.max(1)),
        NodeGroups::SharedMemory => 1,
    };
    // (Below the compression threshold this returned 0 above.)
    let compress = !case.cfg.hier_on_host(case.n * T::SIZE) && groups > 1;
    if compress {
        compressions_per_value(CollOp::Allreduce, Algorithm::Hierarchical, groups)
    } else {
        0
    }
}
