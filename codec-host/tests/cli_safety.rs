//! `ccoll` under hostile input and failing writes: headers declaring more than the
//! stream can hold fail fast in little memory, decoded sizes the machine cannot hold are
//! an error rather than an abort, and a failed write never destroys the old output.

mod crafted;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crafted::{zfp_header, zero_blocks_stream};

const CCOLL: &str = env!("CARGO_BIN_EXE_ccoll");

/// Virtual memory allowed to `ccoll` in the memory tests (KiB): the binary with one
/// thread starts in well under this, and any buffer sized from a lying header exceeds it.
const VMEM_KIB: u64 = 256 * 1024;

/// Runs `ccoll ARGS` through `bash -c` after `ulimit LIMIT`, timing it.
fn ccoll_limited(limit: &str, args: &[&str]) -> (Output, Duration) {
    let script = format!("ulimit {limit} && exec \"$0\" \"$@\"");
    let start = Instant::now();
    let out = Command::new("bash").arg("-c").arg(script).arg(CCOLL).args(args).output().expect("run bash");
    (out, start.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Asserts a one-line failure with exit status 1 mentioning `needle`, in well under a
/// second.
fn assert_fast_failure(o: &Output, took: Duration, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.contains(needle), "{err:?}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
}

#[test]
fn a_12_byte_zfp_header_claiming_65536_cubed_fails_fast_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (bomb, out) = (p(dir.path(), "bomb.zfp"), p(dir.path(), "out.raw"));
    // f32, 65536^3, fixed accuracy with tolerance 2^-10: 2^42 blocks of at least a bit.
    let h = zfp_header(2, &[65536, 65536, 65536], 2177 + 1074 - 10);
    assert_eq!(h.len(), 12);
    fs::write(&bomb, &h).unwrap();
    let vmem = format!("-v {VMEM_KIB}");
    let (o, took) = ccoll_limited(&vmem, &["decompress", "--threads", "1", &bomb, &out]);
    assert_fast_failure(&o, took, "truncated stream: need at least 549755813900 bytes, got 12");
    assert!(!Path::new(&out).exists());
    // `info` prints no size from such a header.
    let (o, took) = ccoll_limited(&vmem, &["info", &bomb]);
    assert_fast_failure(&o, took, "is inconsistent with its header");
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn an_szx_stream_of_zero_blocks_declaring_32_gib_is_refused_not_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let (bomb, cut, out) = (p(dir.path(), "zeros.szx"), p(dir.path(), "cut.szx"), p(dir.path(), "out.raw"));
    // 2^20 zero blocks of 4096 f64 values: a consistent 1 MiB stream whose values take
    // 32 GiB. Every chunk of 2^28 values holds its 2^16 state bytes.
    let s = zero_blocks_stream(4096, 1 << 28, 1 << 20);
    fs::write(&bomb, &s).unwrap();
    let vmem = format!("-v {VMEM_KIB}");
    let (o, took) = ccoll_limited(&vmem, &["info", &bomb]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("uncompressed: 34359738368 bytes"));
    assert!(took < Duration::from_secs(1), "info took {took:?}");
    let (o, took) = ccoll_limited(&vmem, &["decompress", "--threads", "1", &bomb, &out]);
    assert_fast_failure(&o, took, "cannot allocate 34359738368 bytes for the 4294967296 values");
    assert!(!Path::new(&out).exists());
    // One state byte short of what the chunk table promises: inconsistent before any
    // allocation (a zero block is the most a state byte can expand to).
    fs::write(&cut, &s[..s.len() - 1]).unwrap();
    let (o, took) = ccoll_limited(&vmem, &["decompress", "--threads", "1", &cut, &out]);
    assert_fast_failure(&o, took, "truncated stream");
    let (o, took) = ccoll_limited(&vmem, &["info", &cut]);
    assert_fast_failure(&o, took, "is inconsistent with its header");
}

/// A small SZx stream and its raw values, written in `dir`.
fn szx_stream(dir: &Path) -> (String, String) {
    let (raw, szx) = (p(dir, "in.raw"), p(dir, "x.szx"));
    let values: Vec<u8> = (0..50_000).flat_map(|i| ((i as f32 * 0.01).sin()).to_le_bytes()).collect();
    fs::write(&raw, values).unwrap();
    let o = Command::new(CCOLL).args(["compress", "--codec", "szx=1e-3", "--type", "f32", "--dims", "50000", &raw, &szx]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    (raw, szx)
}

/// Names in `dir` other than `keep`.
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    let names = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
    names.filter(|n| !keep.contains(&n.as_str())).collect()
}

#[test]
fn a_write_past_the_file_size_limit_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_, szx) = szx_stream(dir.path());
    let before = fs::read(&szx).unwrap();
    assert!(before.len() > 4096);
    // Decompressing a stream over itself, with files limited to 4 KiB: the write fails
    // (EFBIG, not SIGXFSZ) and the stream is as it was.
    let (o, _) = ccoll_limited("-f 4", &["decompress", &szx, &szx]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("File too large"), "{}", stderr(&o));
    assert_eq!(fs::read(&szx).unwrap(), before);
    assert_eq!(others(dir.path(), &["in.raw", "x.szx"]), Vec::<String>::new(), "temporary file left behind");
    // The same for compress over an existing output.
    let (o, _) = ccoll_limited("-f 4", &["compress", "--codec", "szx=0", "--type", "f32", "--dims", "50000", &p(dir.path(), "in.raw"), &szx]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(fs::read(&szx).unwrap(), before);
    assert_eq!(others(dir.path(), &["in.raw", "x.szx"]), Vec::<String>::new());
}

#[test]
fn the_output_may_be_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let (raw, szx) = szx_stream(dir.path());
    let copy = p(dir.path(), "copy.raw");
    let o = Command::new(CCOLL).args(["decompress", &szx, &copy]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = Command::new(CCOLL).args(["decompress", &szx, &szx]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(fs::read(&szx).unwrap(), fs::read(&copy).unwrap());
    assert_eq!(fs::read(&szx).unwrap().len(), fs::read(&raw).unwrap().len());
    assert_eq!(others(dir.path(), &["in.raw", "x.szx", "copy.raw"]), Vec::<String>::new());
}

#[test]
fn a_device_output_is_written_in_place_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let (_, szx) = szx_stream(dir.path());
    let o = Command::new(CCOLL).args(["decompress", &szx, "/dev/null"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let meta = fs::metadata("/dev/null").unwrap();
    assert!(!meta.is_file(), "/dev/null was replaced by a regular file");
}

#[test]
fn sigterm_while_writing_removes_the_temporary_file_and_keeps_the_old_output() {
    let dir = tempfile::tempdir().unwrap();
    let (stream, out) = (p(dir.path(), "big.szx"), p(dir.path(), "out.raw"));
    // 4 Mi values: the write of 16 MiB takes long enough to be caught in the act.
    let x: Vec<f32> = (0..1 << 22).map(|i| (i as f32 * 1e-3).sin()).collect();
    let bytes = codec_host::Codec::szx(codec_host::ErrorBound::Abs(1e-3)).compress(&x, codec_host::Shape::d1(x.len()), &codec_host::Backend::cpu()).unwrap();
    fs::write(&stream, bytes).unwrap();
    let temp_exists = || others(dir.path(), &["big.szx", "out.raw"]).iter().any(|n| n.contains(".ccoll-"));
    let mut caught = 0;
    for _ in 0..10 {
        fs::write(&out, b"old").unwrap();
        let mut child = Command::new(CCOLL).args(["decompress", "--threads", "1", &stream, &out]).spawn().unwrap();
        let start = Instant::now();
        while !temp_exists() && start.elapsed() < Duration::from_secs(20) && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(200));
        }
        if temp_exists() {
            // SAFETY: a plain kill(2) of our own child.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        }
        let status = child.wait().unwrap();
        assert!(!temp_exists(), "temporary file left behind");
        if std::os::unix::process::ExitStatusExt::signal(&status) == Some(libc::SIGTERM) {
            assert_eq!(fs::read(&out).unwrap(), b"old");
            caught += 1;
        } else {
            // It finished first: the output is complete.
            assert!(status.success());
            assert_eq!(fs::read(&out).unwrap().len(), x.len() * 4);
        }
    }
    assert!(caught > 0, "never caught ccoll while it was writing");
}
