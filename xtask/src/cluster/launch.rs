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
    ] {
        c.args(["--mca", k, v]);
    }
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
}
