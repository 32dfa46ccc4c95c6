//! End-to-end checks of the emulated cluster: namespaces, rate limits, the MPI
//! launcher, teardown. They need root (network namespaces), `tc` and Open MPI's mpicc
//! and mpirun, so they are ignored by default (the runner counts them as ignored, never
//! as passed); `scripts/test` runs them with `--ignored`, and run that way a missing
//! prerequisite fails the test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    // The outer `timeout` bounds the test even if the command's own limits fail.
    Command::new("timeout").arg("180").arg(env!("CARGO_BIN_EXE_xtask")).args(args).output().expect("run xtask")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Why the cluster cannot run here, if it cannot.
fn missing_prerequisite(prefix: &str) -> Option<String> {
    let probe = format!("{prefix}-perm");
    match Command::new("ip").args(["netns", "add", &probe]).output() {
        Ok(o) if o.status.success() => {
            let _ = Command::new("ip").args(["netns", "del", &probe]).output();
        }
        Ok(o) => return Some(format!("ip netns not permitted: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => return Some(format!("no ip command: {e}")),
    }
    ["mpicc", "mpirun", "tc"].iter().find(|p| Command::new("sh").args(["-c", &format!("command -v {p}")]).output().map_or(true, |o| !o.status.success())).map(|p| format!("{p} not installed"))
}

fn namespaces(prefix: &str) -> Vec<String> {
    let o = Command::new("ip").args(["netns", "list"]).output().expect("ip netns list");
    String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.starts_with(&format!("{prefix}-"))).map(str::to_string).collect()
}

fn pingpong(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mpi/pingpong.c");
    let bin = dir.join("pingpong");
    let o = Command::new("mpicc").arg("-O2").arg(&src).arg("-o").arg(&bin).output().expect("mpicc");
    assert!(o.status.success(), "mpicc: {}", text(&o));
    bin
}

fn field(out: &str, key: &str) -> f64 {
    out.split_whitespace().find_map(|w| w.strip_prefix(key)).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no {key} in:\n{out}"))
}

#[test]
#[ignore = "needs root (ip netns), tc, mpicc and mpirun: scripts/test runs it with --ignored"]
fn mpi_runs_one_rank_per_node_at_the_link_rate_and_tears_down() {
    let prefix = "ccollt1";
    if let Some(why) = missing_prerequisite(prefix) {
        panic!("the cluster cannot run here: {why}");
    }
    let dir = std::env::temp_dir().join(format!("xtask-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = pingpong(&dir);
    // 200 Mbit/s = 25 MB/s: a 4 MiB ping-pong x 3 takes about a second.
    let o = xtask(&[
        "cluster", "run", "--prefix", prefix, "--nodes", "3", "--link", "200mbit", "--latency", "1ms",
        "--probe", "--timeout", "90", "--program", prog.to_str().unwrap(), "--", "4194304", "3",
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // Stdout is the program's own; the cluster's status lines are on stderr.
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    for r in 0..3 {
        assert!(stdout.contains(&format!("rank {r} of 3 on {prefix}-n{r}")), "{out}");
    }
    for status in ["cluster up:", "link probe", "cluster down"] {
        assert!(stderr.lines().any(|l| l.starts_with(status)), "{status} not on stderr:\n{out}");
        assert!(!stdout.contains(status), "{status} on stdout:\n{out}");
    }
    let line = stdout.lines().find(|l| l.starts_with("pingpong")).expect("pingpong line");
    let mpi_mbps = field(line, "MBps=");
    let probe = stderr.lines().find(|l| l.starts_with("link probe")).expect("probe line");
    let tcp_mbps: f64 = probe.split(" at ").nth(1).and_then(|r| r.split_whitespace().next()).and_then(|v| v.parse().ok()).expect("probe rate");
    // Payload rate: at most the link rate, and not far below it (TCP/IP headers).
    for (what, v) in [("mpi", mpi_mbps), ("tcp", tcp_mbps)] {
        assert!((0.8 * 25.0..=1.03 * 25.0).contains(&v), "{what} {v} MB/s on a 25 MB/s link:\n{out}");
    }
    if out.contains("1000 us one-way latency") {
        // netem present: a round trip crosses the added delay twice.
        assert!(field(line, "rtt_us=") >= 2000.0, "{out}");
    } else {
        assert!(out.contains("NOT emulated"), "{out}");
    }
    assert!(out.contains("cluster down"), "{out}");
    assert!(namespaces(prefix).is_empty(), "left behind: {:?}", namespaces(prefix));
    assert!(!std::env::temp_dir().join(format!("{prefix}-cluster")).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs root (ip netns), tc, mpicc and mpirun: scripts/test runs it with --ignored"]
fn up_status_down_and_failures_still_tear_down() {
    let prefix = "ccollt2";
    if let Some(why) = missing_prerequisite(prefix) {
        panic!("the cluster cannot run here: {why}");
    }
    let o = xtask(&["cluster", "up", "--prefix", prefix, "--nodes", "2", "--link", "1gbit", "--latency", "0"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(namespaces(prefix).len(), 3);
    let st = text(&xtask(&["cluster", "status", "--prefix", prefix]));
    assert!(st.contains(&format!("{prefix}-n1")) && st.contains(&format!("{prefix}-sw")), "{st}");
    // A namespace sees only the cluster subnet: no default route, no other address.
    let routes = Command::new("ip").args(["-n", &format!("{prefix}-n0"), "route"]).output().unwrap();
    let routes = String::from_utf8_lossy(&routes.stdout).to_string();
    assert!(routes.contains("10.77.0.0/24") && !routes.contains("default"), "{routes}");
    let o = xtask(&["cluster", "down", "--prefix", prefix]);
    assert!(o.status.success() && text(&o).contains("removed 3"), "{}", text(&o));
    assert!(namespaces(prefix).is_empty());

    // A program that exits non-zero: its code comes back, the cluster goes away.
    let o = xtask(&["cluster", "run", "--prefix", prefix, "--nodes", "2", "--program", "/bin/false"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(namespaces(prefix).is_empty(), "{}", text(&o));
    // A program that outlives its limit is killed (exit 124), and nothing is left.
    let t = std::time::Instant::now();
    let o = xtask(&["cluster", "run", "--prefix", prefix, "--nodes", "2", "--timeout", "2", "--program", "/bin/sleep", "--", "60"]);
    assert_eq!(o.status.code(), Some(124), "{}", text(&o));
    assert!(t.elapsed().as_secs() < 30, "took {:?}", t.elapsed());
    assert!(namespaces(prefix).is_empty(), "{}", text(&o));
}
