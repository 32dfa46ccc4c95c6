//! `ccoll-bench` under mpirun: the CSV it prints (exact header, one row per algorithm and
//! size, every value within its bound) and its refusal of bad command lines.

mod common;

use std::time::Duration;

const HEADER: &str = "op,algo,codec,ranks,bytes,lat_avg_us,lat_min_us,lat_max_us,comp_ratio,max_abs_err,bound,bound_ok";

fn bench(ranks: usize, args: &[&str]) -> common::Launch {
    common::mpirun(ranks, env!("CARGO_BIN_EXE_ccoll-bench"), args, &[], Duration::from_secs(300))
}

/// Runs `op` with `algos` on 0 bytes, 4 bytes and 300 KB and checks every row.
fn check_op(op: &str, algos: &str, codec: &str) {
    let ranks = 4;
    let sizes = ["0", "4", "300K"];
    let args = [
        "--op", op, "--algo", algos, "--codec", codec, "--sizes", &sizes.join(","), "--iters", "2", "--warmup", "1", "--check",
        "--format", "csv", "--min-bytes", MIN_BYTES, "--chunk", "65536", "--node-size", "2",
    ];
    let launch = bench(ranks, &args);
    assert!(launch.success, "ccoll-bench {args:?} failed\n{}\n{}", launch.stdout, launch.stderr);
    let mut lines = launch.stdout.lines();
    assert_eq!(lines.next(), Some(HEADER), "{}", launch.stdout);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let algos: Vec<&str> = algos.split(',').collect();
    assert_eq!(rows.len(), algos.len() * sizes.len(), "{}", launch.stdout);
    for row in &rows {
        assert_eq!(row.len(), 12, "{row:?}");
        assert_eq!((row[0], row[2], row[3]), (op, codec, "4"), "{row:?}");
        assert!(algos.contains(&row[1]), "{row:?}");
        let num = |i: usize| row[i].parse::<f64>().unwrap_or_else(|_| panic!("column {i} of {row:?}"));
        assert!(num(5) > 0.0 && num(6) <= num(5) && num(5) <= num(7), "latencies {row:?}");
        let (err, bound) = (num(9), num(10));
        assert!(err <= bound || row[11] == "true", "{row:?}");
        assert_eq!(row[11], "true", "{row:?}");
        if row[1] == "mpi" {
            assert_eq!((err, bound), (0.0, 0.0), "{row:?}");
        }
    }
}

const CODEC: &str = "szx:1e-3";
const MIN_BYTES: &str = "0";

#[test]
fn allreduce_rows_are_within_their_bounds() {
    check_op("allreduce", "mpi,cpr-p2p,c-coll,ring,rd,hier", CODEC);
}

#[test]
fn data_movement_rows_are_within_their_bounds() {
    for op in ["bcast", "scatter", "gather", "allgather", "alltoall"] {
        check_op(op, "mpi,cpr-p2p,c-coll", CODEC);
    }
}

#[test]
fn computation_and_p2p_rows_are_within_their_bounds() {
    for op in ["reduce-scatter", "reduce", "p2p"] {
        check_op(op, "mpi,cpr-p2p,c-coll", CODEC);
    }
}

#[test]
fn zfp_rows_are_within_their_bounds() {
    check_op("allreduce", "mpi,c-coll,ring,rd", "zfp-acc:1e-3");
    // Fixed rate states no bound: the column says inf.
    check_op("bcast", "c-coll", "zfp-rate:16");
}

#[test]
fn bad_command_lines_fail_on_every_rank() {
    for args in [
        &["--op", "allreduce", "--algo", "ring", "--codec", CODEC, "--sizes", "1K,2X"][..],
        &["--op", "bcast", "--algo", "rd", "--codec", CODEC, "--sizes", "1K"][..],
        &["--op", "bcast", "--codec", "lz4:1", "--sizes", "1K"][..],
        &["--op", "bcast", "--codec", CODEC, "--sizes", "1K", "--dataset", "nope"][..],
    ] {
        let launch = bench(2, args);
        assert!(!launch.success, "{args:?} succeeded:\n{}", launch.stdout);
        assert!(launch.stderr.contains("ccoll-bench:"), "{args:?}: {}", launch.stderr);
    }
}
