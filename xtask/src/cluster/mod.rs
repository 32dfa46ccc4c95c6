//! The emulated multi-node cluster: network namespaces behind a rate-limited bridge,
//! and an MPI launcher that places one rank in each.

mod duplex;
pub mod launch;
mod net;
mod probe;

pub use duplex::MpiDuplex;
pub use net::{burst_bytes, LinkSpec, Topology, SUBNET};
pub use probe::Probe;

use crate::signals;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

/// A cluster that is up. Dropping it tears everything down.
pub struct Cluster {
    pub topo: Topology,
    pub link: LinkSpec,
    /// False when a latency was asked for but the kernel has no netem qdisc.
    pub latency_emulated: bool,
    files: launch::LaunchFiles,
    keep: bool,
}

impl Cluster {
    /// Removes any leftover cluster with the same prefix, then builds a new one. On
    /// failure, whatever was created is removed again.
    pub fn up(topo: Topology, link: LinkSpec) -> Result<Cluster, String> {
        down(&topo.prefix)?;
        let built = net::create(&topo, link).and_then(|latency_emulated| {
            let files = launch::write_files(&topo).map_err(|e| format!("launcher files: {e}"))?;
            Ok((latency_emulated, files))
        });
        match built {
            Ok((latency_emulated, files)) => Ok(Cluster { topo, link, latency_emulated, files, keep: false }),
            Err(e) => {
                let _ = down(&topo.prefix);
                Err(e)
            }
        }
    }

    /// Leaves the cluster up after this value is dropped (for `cluster up`).
    pub fn keep(mut self) {
        self.keep = true;
    }

    /// Runs `program args` with one rank per node, bounded by `limit`; each stdout line
    /// goes to `on_line` as it arrives, stderr passes through.
    pub fn run_mpi(&self, program: &Path, args: &[String], limit: Duration, on_line: impl FnMut(&str)) -> Result<ExitStatus, String> {
        self.run_mpi_both(program, args, limit, on_line, |l| eprintln!("{l}"))
    }

    /// [`Cluster::run_mpi`] with each stderr line going to `on_err` (read on a thread of
    /// its own, so that neither pipe can fill while the other is read).
    pub fn run_mpi_both(
        &self,
        program: &Path,
        args: &[String],
        limit: Duration,
        mut on_line: impl FnMut(&str),
        mut on_err: impl FnMut(&str) + Send,
    ) -> Result<ExitStatus, String> {
        let mut cmd = launch::mpirun_command(&self.topo, &self.files, program, args, limit);
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("mpirun: {e}"))?;
        signals::set_child(child.id());
        let out = BufReader::new(child.stdout.take().expect("piped"));
        let err = BufReader::new(child.stderr.take().expect("piped"));
        fn read(from: impl BufRead, each: &mut dyn FnMut(&str)) {
            for line in from.lines() {
                match line {
                    Ok(l) => each(&l),
                    Err(e) => eprintln!("cluster: reading output: {e}"),
                }
            }
        }
        std::thread::scope(|s| {
            s.spawn(|| read(err, &mut on_err));
            read(out, &mut on_line);
        });
        let status = child.wait().map_err(|e| e.to_string());
        signals::set_child(0);
        status
    }

    /// Measures the link between nodes 0 and 1 with a bulk transfer of `bytes`.
    pub fn probe(&self, bytes: u64) -> Result<Probe, String> {
        probe::measure(&self.topo, bytes)
    }

    /// Measures plain MPI's one-way and two-way rates with `program` (ccoll-bench).
    pub fn mpi_duplex(&self, program: &Path) -> Result<MpiDuplex, String> {
        duplex::measure(self, program)
    }

    /// One line describing the cluster, for logs.
    pub fn describe(&self) -> String {
        let lat = if self.link.latency.is_zero() {
            "no added latency".to_string()
        } else if self.latency_emulated {
            format!("{} us one-way latency", self.link.latency.as_micros())
        } else {
            format!("{} us latency NOT emulated (kernel has no netem)", self.link.latency.as_micros())
        };
        format!("{} nodes ({}-n0..), {} links, {lat}, subnet {SUBNET}", self.topo.nodes, self.topo.prefix, crate::units::fmt_rate(self.link.rate_bps))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.keep {
            if let Err(e) = down(&self.topo.prefix) {
                eprintln!("cluster: teardown failed: {e}; run `cargo xtask cluster down`");
            }
        }
    }
}

/// Removes every namespace, process and launcher file of the cluster with `prefix`.
pub fn down(prefix: &str) -> Result<Vec<String>, String> {
    let removed = net::destroy(prefix)?;
    let dir = launch::state_dir(prefix);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    Ok(removed)
}

/// Namespaces of the cluster with `prefix`, if any.
pub fn list(prefix: &str) -> Result<Vec<String>, String> {
    net::list(prefix)
}

pub use probe::{client as probe_client, measure as probe_measure, serve as probe_serve};
