//! Starting one MPI rank per emulated node.
//!
//! `mpirun` itself runs inside node 0's namespace, so it and its daemons talk over the
//! emulated links only. For every other node Open MPI's rsh launcher calls our agent
//! script as `agent HOST COMMAND...` (as it would call ssh); the agent maps the node's
//! address to its namespace and runs the command there with `ip netns exec`, in a
//! fresh UTS namespace carrying the node's host name. Ranks are not bound to cores
//! (each daemon would otherwise pin its one rank to core 0 of the shared machine), the
//! shared-memory transports are left out (`pml ob1`, `btl tcp,self`), and TCP is
//! restricted to the cluster subnet, for both MPI traffic and the runtime's own.

use super::net::{Topology, SUBNET};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Files the launcher needs: the agent script and the hostfile.
pub struct LaunchFiles {
    pub agent: PathBuf,
    pub hostfile: PathBuf,
}

/// Directory for a cluster's launcher files.
pub fn state_dir(prefix: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{prefix}-cluster"))
}

/// Writes the agent script and hostfile for `topo`.
pub fn write_files(topo: &Topology) -> std::io::Result<LaunchFiles> {
    let dir = state_dir(&topo.prefix);
    std::fs::create_dir_all(&dir)?;
    let agent = dir.join("rsh-agent.sh");
    let hostfile = dir.join("hostfile");
    std::fs::write(&agent, agent_script(topo))?;
    set_executable(&agent)?;
    let hosts: String = (0..topo.nodes).map(|i| format!("{} slots=1\n", Topology::addr(i))).collect();
    std::fs::write(&hostfile, hosts)?;
    Ok(LaunchFiles { agent, hostfile })
}

fn set_executable(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755))
}

/// The rsh agent: refuses any host that is not one of the cluster's addresses.
fn agent_script(topo: &Topology) -> String {
    let cases: String = (0..topo.nodes).map(|i| format!("  {}) ns={} ;;\n", Topology::addr(i), topo.node_ns(i))).collect();
    format!(
        "#!/bin/sh\n\
         # Open MPI rsh agent for the emulated cluster: `agent HOST COMMAND...` runs\n\
         # COMMAND in the network namespace of HOST, under that node's host name.\n\
         host=$1; shift\n\
         case \"$host\" in\n{cases}  *) echo \"cluster agent: $host is not a cluster node\" >&2; exit 1 ;;\n\
         esac\n\
         exec ip netns exec \"$ns\" unshare --uts sh -c 'hostname \"$0\" && exec sh -c \"$1\"' \"$ns\" \"$*\"\n"
    )
}

/// Open MPI's TCP eager limit on the cluster, bytes (its default is 64 KiB); the model
/// prices the emulated run's messages with it.
pub const EAGER_LIMIT: usize = 4 << 20;

/// Open MPI's TCP fragment size for the part of a message beyond the eager limit
/// (`btl_tcp_rdma_pipeline_frag_size`; its default, 2 GiB, sends the whole remainder as
/// one fragment). 128 KiB is the TCP transport's own largest send fragment
/// (`btl_tcp_max_send_size`).
const RDMA_FRAG_BYTES: usize = 128 << 10;

/// Codec threads of each rank on a cluster of `nodes` nodes sharing `cores` cores: the
/// node's share of them, at least one. The CPU backend would take every core it sees
/// (one rank per node), which only adds threads waiting for the same cores.
pub fn codec_threads(cores: usize, nodes: usize) -> usize {
    (cores / nodes.max(1)).max(1)
}

/// `timeout ... ip netns exec NODE0 ... mpirun ... PROGRAM ARGS`: one rank per node,
/// killed after `limit` (then SIGKILL 10 s later).
pub fn mpirun_command(topo: &Topology, files: &LaunchFiles, program: &Path, args: &[String], limit: Duration) -> Command {
    let n0 = topo.node_ns(0);
    let mut c = Command::new("timeout");
    c.args(["-k", "10", &format!("{}s", limit.as_secs().max(1))]);
    c.args(["ip", "netns", "exec", &n0, "unshare", "--uts", "sh", "-c", "hostname \"$0\" && exec \"$@\"", &n0]);
    c.arg("mpirun");
    c.args(["--hostfile"]).arg(&files.hostfile);
    c.args(["-np", &topo.nodes.to_string(), "--map-by", "node", "--bind-to", "none"]);
    for (k, v) in [
        ("plm_rsh_agent", files.agent.to_string_lossy().as_ref()),
        ("plm_rsh_no_tree_spawn", "1"),
        ("pml", "ob1"),
        ("btl", "tcp,self"),
        ("btl_tcp_if_include", SUBNET),
        ("oob_tcp_if_include", SUBNET),
        // The nodes share this machine's cores, so the ranks are oversubscribed, which
        // Open MPI cannot see (each node offers one slot). Yielding while idle is what
        // it does itself on an oversubscribed node: a rank that waits for a message
        // gives its core to the ranks that compute instead of polling through its
        // time slice.
        ("mpi_yield_when_idle", "1"),
        // A message up to what one socket's send buffer holds (net.ipv4.tcp_wmem's
        // 4 MiB maximum) goes out whole when it is posted, instead of waiting for a
        // rendezvous reply that its sender sees only at its next MPI call. Sharing two
        // cores, a rank is often off its core for milliseconds; an RDMA network, which
        // moves a posted message without the host's CPU, would not stall there.
        ("btl_tcp_eager_limit", &EAGER_LIMIT.to_string()),
        // The rest of a larger message goes in fragments of this size instead of Open
        // MPI's default of one fragment for the whole remainder. With one fragment,
        // the two-way transfers of Allgather, Alltoall and Allreduce settled per run
        // at one of two rates on the shared cores (about 120 or 75 MB/s each way, half
        // the runs slow); with 128 KiB fragments they kept 0.98 of the link's rate both
        // ways in the MPI probe of every run since, the 16 MiB Alltoall within 20% of it
        // (2026-11-27, docs/cluster.md).
        ("btl_tcp_rdma_pipeline_frag_size", &RDMA_FRAG_BYTES.to_string()),
    ] {
        c.args(["--mca", k, v]);
    }
    // The caller's own setting wins.
    let threads = std::env::var("CCOLL_CODEC_THREADS").unwrap_or_else(|_| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        codec_threads(cores, topo.nodes).to_string()
    });
    c.args(["-x", &format!("CCOLL_CODEC_THREADS={threads}")]);
    c.arg(program).args(args);
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_maps_every_node_and_nothing_else() {
        let topo = Topology { prefix: "t".into(), nodes: 3 };
        let s = agent_script(&topo);
        for (i, addr) in ["10.77.0.1", "10.77.0.2", "10.77.0.3"].iter().enumerate() {
            assert!(s.contains(&format!("{addr}) ns=t-n{i} ;;")), "{s}");
        }
        assert!(!s.contains("10.77.0.4"));
        assert!(s.contains("*) echo"));
    }

    #[test]
    fn large_messages_go_in_128_kib_fragments() {
        // Open MPI's default, one fragment for a message's whole rest, let plain MPI's
        // two-way transfers settle at about 60% of the link's rate in most runs.
        let topo = Topology { prefix: "t".into(), nodes: 2 };
        let files = LaunchFiles { agent: "agent".into(), hostfile: "hosts".into() };
        let cmd = mpirun_command(&topo, &files, Path::new("prog"), &[], Duration::from_secs(1));
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let at = args.iter().position(|a| a == "btl_tcp_rdma_pipeline_frag_size").expect("the fragment size is set");
        assert_eq!((args[at - 1].as_str(), args[at + 1].as_str()), ("--mca", "131072"));
    }

    #[test]
    fn each_node_gets_its_share_of_the_cores() {
        assert_eq!(codec_threads(2, 4), 1);
        assert_eq!(codec_threads(16, 4), 4);
        assert_eq!(codec_threads(7, 2), 3);
        assert_eq!(codec_threads(1, 0), 1);
    }
}
