//! Calls that must fail on every rank without hanging: mismatched settings across
//! ranks, bad arguments on one rank, rejected point-to-point transfers, and a message
//! that is not a frame at all.

use codec_host::{Codec, ErrorBound};
use collectives::{Algorithm, CollConfig, CollError, CompressedCollectives, NodeGroups, ReduceOp};
use mpi::traits::*;

use crate::suite::Suite;

/// Checks that `result` failed as a mismatch of `field`.
fn mismatch<T>(s: &mut Suite, case: &str, result: collectives::Result<T>, field: &str) {
    s.cases += 1;
    match result {
        Err(CollError::Mismatch { field: f, .. }) if f == field => {}
        Err(e) => s.expect(false, || format!("{case}: expected a {field} mismatch, got {e}")),
        Ok(_) => s.expect(false, || format!("{case}: expected a {field} mismatch, the call succeeded")),
    }
}

/// Every misuse case, on `cfg` (a compressing configuration). Needs two ranks or more.
pub fn run(s: &mut Suite, cfg: &CollConfig) {
    let (p, rank) = (s.p, s.rank);
    if p < 2 {
        return;
    }
    let last = rank == p - 1;
    let cfg = cfg.with_algorithm(Algorithm::CColl);
    let x = vec![0.5f32; 3000];

    // Count: the last rank passes one value more.
    let n = if last { 3001 } else { 3000 };
    let mut out = vec![0f32; n];
    let r = s.world.c_allreduce(&vec![0.5f32; n], &mut out, ReduceOp::Sum, &cfg);
    mismatch(s, "allreduce count", r, "count");

    // Root: rank 0 names another root.
    let mut buf = x.clone();
    let r = s.world.c_bcast(&mut buf, if rank == 0 { 1 } else { 0 }, &cfg);
    mismatch(s, "bcast root", r, "root");

    // Element type: the last rank reduces f64.
    let r = if last {
        let mut out = vec![0f64; 3000];
        s.world.c_allreduce(&vec![0.5f64; 3000], &mut out, ReduceOp::Sum, &cfg)
    } else {
        let mut out = vec![0f32; 3000];
        s.world.c_allreduce(&x, &mut out, ReduceOp::Sum, &cfg)
    };
    mismatch(s, "allreduce element type", r, "element type");

    // Codec settings: rank 0 uses another bound.
    let other = CollConfig { codec: Codec::zfp_rate(13.0), ..cfg };
    let mut out = vec![0f32; 3000 * p];
    let r = s.world.c_allgather(&x, &mut out, if rank == 0 { &other } else { &cfg });
    mismatch(s, "allgather codec", r, "codec");

    // Algorithm: rank 0 asks for the ring.
    let mut out = vec![0f32; 3000];
    let ring = cfg.with_algorithm(Algorithm::Ring);
    let r = s.world.c_allreduce(&x, &mut out, ReduceOp::Max, if rank == 0 { &ring } else { &cfg });
    mismatch(s, "allreduce algorithm", r, "algorithm");

    // Algorithm, the plain MPI baseline on one side: it agrees too (it used to hang).
    let mut buf = x.clone();
    let r = s.world.c_bcast(&mut buf, 0, &if rank == 0 { cfg.with_algorithm(Algorithm::Mpi) } else { cfg });
    mismatch(s, "bcast mpi against c-coll", r, "algorithm");

    // Operation: rank 0 broadcasts while the others reduce.
    let mut buf = x.clone();
    let r = if rank == 0 { s.world.c_bcast(&mut buf, 0, &cfg) } else { s.world.c_allreduce(&x, &mut buf, ReduceOp::Sum, &cfg) };
    mismatch(s, "bcast against allreduce", r, "operation");

    // Node groups that no rank number can hold: refused by every rank.
    let hier = CollConfig { node_groups: NodeGroups::Blocks(1 << 31), ..cfg.with_algorithm(Algorithm::Hierarchical) };
    let r = s.world.c_allreduce(&x, &mut out, ReduceOp::Sum, &hier);
    s.cases += 1;
    s.expect(matches!(r, Err(CollError::InvalidArgument(_))), || format!("node groups of 2^31 ranks: got {r:?}"));

    // Codec parameters no codec can keep (a negative relative bound, as `szx-rel=-1`
    // parses): refused by every rank, not resolved into sending raw.
    let negative = CollConfig { codec: Codec::szx(ErrorBound::Rel(-1.0)), ..cfg };
    let r = s.world.c_allreduce(&x, &mut out, ReduceOp::Sum, &negative);
    s.cases += 1;
    s.expect(matches!(r, Err(CollError::Codec(codec_host::Error::ParamOutOfRange(_)))), || format!("a negative relative bound: got {r:?}"));

    // Reduction operator.
    let r = s.world.c_allreduce(&x, &mut out, if last { ReduceOp::Min } else { ReduceOp::Max }, &cfg);
    mismatch(s, "allreduce operator", r, "reduction operator");

    // A bad argument on the last rank: it reports it, everyone else that it did.
    let mut short = vec![0f32; if last { 3000 * p - 1 } else { 3000 * p }];
    let r = s.world.c_alltoall(&vec![1f32; 3000 * p], &mut short, &cfg);
    s.cases += 1;
    match (&r, last) {
        (Err(CollError::InvalidArgument(_)), true) => {}
        (Err(CollError::PeerRejected { rank: bad }), false) if *bad == p - 1 => {}
        _ => s.expect(false, || format!("alltoall bad argument: got {r:?}")),
    }

    // Point-to-point count mismatch (ranks 0 and 1): both sides report it.
    match rank {
        0 => {
            let r = s.world.c_send(1, &x, 3, &cfg);
            mismatch(s, "p2p count (sender)", r, "count");
        }
        1 => {
            let mut buf = vec![0f32; 2999];
            let r = s.world.c_recv(0, &mut buf, 3, &cfg);
            mismatch(s, "p2p count (receiver)", r, "count");
        }
        _ => {}
    }
    // Point-to-point under automatic selection with different sizes: 10000 values pick
    // c-coll, 5000 the plain MPI send (below the 32 KiB threshold). The handshake sees
    // the counts differ before either side moves data.
    let auto = CollConfig::new(cfg.codec);
    match rank {
        0 => mismatch(s, "p2p auto 10000 (sender)", s.world.c_send(1, &vec![0.5f32; 10_000], 3, &auto), "count"),
        1 => {
            let mut buf = vec![0f32; 5000];
            mismatch(s, "p2p auto 5000 (receiver)", s.world.c_recv(0, &mut buf, 3, &auto), "count");
        }
        _ => {}
    }
    // Point-to-point algorithm mismatch: the plain MPI send against a c-coll receive.
    match rank {
        0 => mismatch(s, "p2p mpi (sender)", s.world.c_send(1, &x, 3, &cfg.with_algorithm(Algorithm::Mpi)), "algorithm"),
        1 => {
            let mut buf = vec![0f32; 3000];
            mismatch(s, "p2p c-coll against mpi (receiver)", s.world.c_recv(0, &mut buf, 3, &cfg), "algorithm");
        }
        _ => {}
    }
    // Point-to-point codec mismatch, found from the frame header of the announcement.
    match rank {
        0 => mismatch(s, "p2p codec (sender)", s.world.c_send(1, &x, 3, &other.with_algorithm(Algorithm::CColl)), "codec"),
        1 => {
            let mut buf = vec![0f32; 3000];
            mismatch(s, "p2p codec (receiver)", s.world.c_recv(0, &mut buf, 3, &cfg), "codec");
        }
        _ => {}
    }
    // Point-to-point with one side's codec refused (a negative bound): that side
    // returns the codec's error, its peer `PeerRejected` instead of waiting for a
    // transfer that never comes; each way, then a correct transfer on the same tag.
    for refused in [0, 1] {
        let own = if rank == refused { &negative } else { &cfg };
        let r = match rank {
            0 => s.world.c_send(1, &x, 3, own),
            1 => s.world.c_recv(0, &mut vec![0f32; 3000], 3, own),
            _ => continue,
        };
        s.cases += 1;
        let ok = match &r {
            Err(CollError::Codec(codec_host::Error::ParamOutOfRange(_))) => rank == refused,
            Err(CollError::PeerRejected { rank: peer }) => rank != refused && *peer == refused,
            _ => false,
        };
        s.expect(ok, || format!("p2p with rank {refused}'s codec refused: got {r:?}"));
    }
    match rank {
        0 => {
            let r = s.world.c_send(1, &x, 3, &cfg);
            s.cases += 1;
            s.expect(r.is_ok(), || format!("p2p after the refused ones (sender): {r:?}"));
        }
        1 => {
            let mut buf = vec![0f32; 3000];
            let r = s.world.c_recv(0, &mut buf, 3, &cfg);
            s.cases += 1;
            s.expect(r.is_ok() && buf.iter().all(|&v| (v - 0.5).abs() < 0.01), || format!("p2p after the refused ones (receiver): {r:?}"));
        }
        _ => {}
    }
    // Not a frame at all: rank 0 sends plain values where rank 1 expects a transfer.
    match rank {
        0 => s.world.process_at_rank(1).send_with_tag(&x[..10], 4),
        1 => {
            let mut buf = vec![0f32; 10];
            let r = s.world.c_recv(0, &mut buf, 4, &cfg);
            s.cases += 1;
            s.expect(matches!(r, Err(CollError::BadMessage { peer: 0, .. })), || format!("p2p garbage: got {r:?}"));
        }
        _ => {}
    }

    // Nothing stray is left: a correct call still works.
    let mut out = vec![0f32; 3000];
    let r = s.world.c_allreduce(&x, &mut out, ReduceOp::Sum, &cfg);
    s.cases += 1;
    s.expect(r.is_ok() && out.iter().all(|&v| (v - 0.5 * p as f32).abs() < 0.01 * p as f32), || {
        format!("allreduce after the misuse cases: {r:?}")
    });
}
