//! The emulated network: one namespace per node plus a switch namespace holding a
//! bridge, joined by veth pairs created directly inside the namespaces (the host's own
//! namespace never sees them). Every veth end gets a token-bucket rate limit on egress,
//! so each link is full duplex at the given rate; the node side also gets a netem
//! delay when the kernel has netem.

use std::process::Command;
use std::time::Duration;

/// The nodes' subnet. Nothing outside it is configured or routed: the namespaces have
/// no default route and the bridge has no address.
pub const SUBNET: &str = "10.77.0.0/24";
/// Largest node count the /24 subnet allows (addresses .1 to .250).
pub const MAX_NODES: usize = 250;

/// Names and addresses of one cluster.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Prefix of every namespace this cluster creates (`PREFIX-sw`, `PREFIX-n0`, ...).
    pub prefix: String,
    pub nodes: usize,
}

impl Topology {
    pub fn switch_ns(&self) -> String {
        format!("{}-sw", self.prefix)
    }

    pub fn node_ns(&self, i: usize) -> String {
        format!("{}-n{i}", self.prefix)
    }

    /// Address of node `i`: 10.77.0.(i + 1).
    pub fn addr(i: usize) -> String {
        format!("10.77.0.{}", i + 1)
    }
}

/// Per-link limits.
#[derive(Clone, Copy, Debug)]
pub struct LinkSpec {
    pub rate_bps: u64,
    /// One-way node-to-node latency added on top of the veth's own.
    pub latency: Duration,
}

/// Runs a command, returning its stdout, or its stderr as the error.
pub fn sh(prog: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(prog).args(args).output().map_err(|e| format!("{prog}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("`{prog} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Creates the namespaces, bridge, links and limits. Returns whether the latency could
/// be emulated (false when the kernel lacks netem and a non-zero latency was asked).
pub fn create(topo: &Topology, link: LinkSpec) -> Result<bool, String> {
    if topo.nodes == 0 || topo.nodes > MAX_NODES {
        return Err(format!("--nodes must be 1 to {MAX_NODES}"));
    }
    let sw = topo.switch_ns();
    sh("ip", &["netns", "add", &sw])?;
    sh("ip", &["-n", &sw, "link", "set", "lo", "up"])?;
    sh("ip", &["-n", &sw, "link", "add", "br0", "type", "bridge"])?;
    sh("ip", &["-n", &sw, "link", "set", "br0", "up"])?;
    let mut latency_ok = true;
    for i in 0..topo.nodes {
        let ns = topo.node_ns(i);
        let port = format!("p{i}");
        sh("ip", &["netns", "add", &ns])?;
        sh("ip", &["-n", &ns, "link", "set", "lo", "up"])?;
        sh("ip", &["link", "add", "eth0", "netns", &ns, "type", "veth", "peer", "name", &port, "netns", &sw])?;
        sh("ip", &["-n", &sw, "link", "set", &port, "master", "br0", "up"])?;
        sh("ip", &["-n", &ns, "addr", "add", &format!("{}/24", Topology::addr(i)), "dev", "eth0"])?;
        sh("ip", &["-n", &ns, "link", "set", "eth0", "up"])?;
        // Every connection starts from the kernel's defaults: by default TCP keeps the
        // congestion state (ssthresh, cwnd) of a closed connection per destination and
        // starts the next one from it, so a run would inherit what the runs before it
        // (the probes, another algorithm's bulk transfers) left.
        sh("ip", &["netns", "exec", &ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"])?;
        shape(&ns, "eth0", link.rate_bps)?;
        shape(&sw, &port, link.rate_bps)?;
        if !link.latency.is_zero() {
            latency_ok &= add_delay(&ns, "eth0", link.latency)?;
        }
    }
    Ok(latency_ok)
}

/// Bytes the token bucket of a link of `rate_bps` holds: at least one 64 KiB GSO
/// segment and 4 ms at the rate. A link idle that long passes them at once (the cost
/// model prices it: `Params::link_burst_bytes`).
pub fn burst_bytes(rate_bps: u64) -> u64 {
    (rate_bps / 8 / 250).max(64 * 1024)
}

/// Token bucket on egress ([`burst_bytes`]); the queue holds 20 ms at the rate before
/// dropping.
fn shape(ns: &str, dev: &str, rate_bps: u64) -> Result<(), String> {
    let burst = burst_bytes(rate_bps);
    sh(
        "tc",
        &["-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf", "rate", &format!("{rate_bps}bit"), "burst", &burst.to_string(), "latency", "20ms"],
    )
    .map(drop)
}

/// A netem delay under the token bucket. Ok(false) if this kernel has no netem.
fn add_delay(ns: &str, dev: &str, latency: Duration) -> Result<bool, String> {
    let delay = format!("{}us", latency.as_micros());
    match sh("tc", &["-n", ns, "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "netem", "delay", &delay, "limit", "100000"]) {
        Ok(_) => Ok(true),
        Err(e) if e.contains("unknown") => Ok(false),
        Err(e) => Err(e),
    }
}

/// Namespaces whose name starts with `PREFIX-`.
pub fn list(prefix: &str) -> Result<Vec<String>, String> {
    let out = sh("ip", &["netns", "list"])?;
    let want = format!("{prefix}-");
    Ok(out.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| n.starts_with(&want)).map(str::to_string).collect())
}

/// Ends every process still inside the cluster's namespaces (they were all started by
/// the cluster's launcher), then deletes the namespaces, which removes their links and
/// the bridge with them. Returns the namespaces removed.
pub fn destroy(prefix: &str) -> Result<Vec<String>, String> {
    let names = list(prefix)?;
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let pids = names.iter().flat_map(|ns| pids_in(ns)).collect::<Vec<_>>();
        if pids.is_empty() {
            break;
        }
        for pid in pids {
            // SAFETY: kill(2) with a pid read from `ip netns pids` for our namespace.
            unsafe { libc::kill(pid, signal) };
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    for ns in &names {
        sh("ip", &["netns", "del", ns])?;
    }
    Ok(names)
}

fn pids_in(ns: &str) -> Vec<i32> {
    sh("ip", &["netns", "pids", ns]).map(|o| o.lines().filter_map(|l| l.trim().parse().ok()).collect()).unwrap_or_default()
}
