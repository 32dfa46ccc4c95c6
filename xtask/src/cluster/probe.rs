//! Measuring what a link really delivers: TCP round-trip time with 1-byte messages, the
//! throughput of one bulk transfer, and each direction's throughput while both
//! directions carry a bulk transfer at once (one flow each way, as a ring step or a
//! pairwise exchange does), between node 0 (client) and node 1 (server). Both ends are
//! this same binary, started inside the namespaces.

use super::net::Topology;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const PROBE_PORT: u16 = 5201;
const PINGS: usize = 200;

/// What the probe measured.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    /// Median round trip of a 1-byte message and its 1-byte reply.
    pub rtt: Duration,
    /// Payload bytes per second of one bulk transfer (time to the receiver's ack).
    pub bytes_per_s: f64,
    pub bytes: u64,
    /// Payload bytes per second of each direction while both carry `bytes` at once
    /// (time until the client has the server's bytes and its ack of the client's).
    pub two_way_bytes_per_s: f64,
}

impl Probe {
    /// The link's duplex efficiency, [`super::duplex::efficiency`].
    pub fn duplex_efficiency(&self) -> f64 {
        super::duplex::efficiency(self.bytes_per_s, self.two_way_bytes_per_s)
    }
}

/// Writes `bytes` bytes of filler to `s`.
fn send_bulk(s: &mut impl Write, bytes: u64) -> std::io::Result<()> {
    let buf = vec![0x5au8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        s.write_all(&buf[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Reads and drops exactly `bytes` bytes from `s`.
fn recv_bulk(s: &mut impl Read, bytes: u64) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = s.read(&mut buf[..left.min(1 << 20) as usize])?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        left -= n as u64;
    }
    Ok(())
}

/// Sends `bytes` on a clone of `s` from a second thread while reading as many from `s`.
fn both_ways(s: &mut TcpStream, bytes: u64) -> std::io::Result<()> {
    let mut tx = s.try_clone()?;
    let sender = std::thread::spawn(move || send_bulk(&mut tx, bytes));
    let got = recv_bulk(s, bytes);
    sender.join().map_err(|_| std::io::Error::other("probe sender panicked"))??;
    got
}

/// Server side: accepts one connection, echoes `PINGS` single bytes, then reads an
/// 8-byte length and that many bytes, and acknowledges with one byte; then sends as many
/// bytes while it receives as many again, and acknowledges those with one byte.
pub fn serve(port: u16) -> std::io::Result<()> {
    let listener = TcpListener::bind(("0.0.0.0", port))?;
    println!("ready");
    std::io::stdout().flush()?;
    let (mut s, _) = listener.accept()?;
    s.set_nodelay(true)?;
    let mut b = [0u8; 1];
    for _ in 0..PINGS {
        s.read_exact(&mut b)?;
        s.write_all(&b)?;
    }
    let mut len = [0u8; 8];
    s.read_exact(&mut len)?;
    let bytes = u64::from_le_bytes(len);
    recv_bulk(&mut s, bytes)?;
    s.write_all(&[1])?;
    both_ways(&mut s, bytes)?;
    s.write_all(&[2])
}

/// Client side: measures against `addr` and prints one line `rtt_us=.. bytes=.. MBps=..`.
pub fn client(addr: &str, port: u16, bytes: u64) -> std::io::Result<Probe> {
    let mut s = TcpStream::connect((addr, port))?;
    s.set_nodelay(true)?;
    let mut b = [7u8; 1];
    let mut rtts = Vec::with_capacity(PINGS);
    for _ in 0..PINGS {
        let t = Instant::now();
        s.write_all(&b)?;
        s.read_exact(&mut b)?;
        rtts.push(t.elapsed());
    }
    rtts.sort();
    let t = Instant::now();
    s.write_all(&bytes.to_le_bytes())?;
    send_bulk(&mut s, bytes)?;
    s.read_exact(&mut b)?;
    let one_way = t.elapsed().as_secs_f64();
    let t = Instant::now();
    both_ways(&mut s, bytes)?;
    s.read_exact(&mut b)?;
    let two_way = t.elapsed().as_secs_f64();
    let p = Probe { rtt: rtts[PINGS / 2], bytes_per_s: bytes as f64 / one_way, bytes, two_way_bytes_per_s: bytes as f64 / two_way };
    println!("rtt_us={:.1} bytes={} MBps={:.2} two_way_MBps={:.2}", p.rtt.as_secs_f64() * 1e6, p.bytes, p.bytes_per_s / 1e6, p.two_way_bytes_per_s / 1e6);
    Ok(p)
}

/// Runs the server in node 1 and the client in node 0 of an up cluster.
pub fn measure(topo: &Topology, bytes: u64) -> Result<Probe, String> {
    if topo.nodes < 2 {
        return Err("the probe needs at least 2 nodes".into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut server = Command::new("timeout")
        .args(["60", "ip", "netns", "exec", &topo.node_ns(1)])
        .arg(&exe)
        .args(["cluster", "probe-serve", "--port", &PROBE_PORT.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("probe server: {e}"))?;
    let mut ready = String::new();
    BufReader::new(server.stdout.take().expect("piped")).read_line(&mut ready).map_err(|e| e.to_string())?;
    if ready.trim() != "ready" {
        let _ = server.wait();
        return Err("probe server did not start".into());
    }
    let out = Command::new("timeout")
        .args(["60", "ip", "netns", "exec", &topo.node_ns(0)])
        .arg(&exe)
        .args(["cluster", "probe-client", "--to", &Topology::addr(1), "--port", &PROBE_PORT.to_string(), "--bytes", &bytes.to_string()])
        .output()
        .map_err(|e| format!("probe client: {e}"))?;
    let _ = server.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("probe client failed: {}{}", text, String::from_utf8_lossy(&out.stderr)));
    }
    parse_line(&text).ok_or_else(|| format!("unreadable probe output {text:?}"))
}

fn parse_line(text: &str) -> Option<Probe> {
    let field = |k: &str| text.split_whitespace().find_map(|w| w.strip_prefix(k)).and_then(|v| v.parse::<f64>().ok());
    Some(Probe {
        rtt: Duration::from_secs_f64(field("rtt_us=")? * 1e-6),
        bytes: field("bytes=")? as u64,
        bytes_per_s: field("MBps=")? * 1e6,
        two_way_bytes_per_s: field("two_way_MBps=")? * 1e6,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_runs_over_loopback_and_its_line_parses() {
        let port = 20000 + (std::process::id() % 20000) as u16;
        let server = std::thread::spawn(move || serve(port));
        // Wait for the listener.
        let p = (0..100)
            .find_map(|_| {
                std::thread::sleep(Duration::from_millis(20));
                client("127.0.0.1", port, 8 << 20).ok()
            })
            .expect("client connects");
        server.join().unwrap().unwrap();
        assert_eq!(p.bytes, 8 << 20);
        assert!(p.bytes_per_s > 1e6 && p.two_way_bytes_per_s > 1e6 && p.rtt < Duration::from_millis(50), "{p:?}");
        assert!(p.duplex_efficiency() > 0.0 && p.duplex_efficiency() <= 1.0, "{p:?}");
        let q = parse_line("rtt_us=52.5 bytes=1000 MBps=118.8 two_way_MBps=71.28\n").unwrap();
        assert_eq!((q.bytes, q.rtt.as_micros()), (1000, 52));
        assert!((q.bytes_per_s - 118.8e6).abs() < 1.0);
        assert!((q.duplex_efficiency() - 0.6).abs() < 1e-9, "{q:?}");
        assert!(parse_line("garbage").is_none());
    }
}
