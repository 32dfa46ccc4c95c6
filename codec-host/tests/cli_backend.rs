//! `ccoll --backend auto|cpu|cuda` and `-v`: the same stream whichever backend runs,
//! `cuda` never falling back (exit 1 with the reason when there is no device).

use std::fs;
use std::process::{Command, Output};

fn ccoll(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccoll")).args(args).output().expect("run ccoll")
}

fn ok(args: &[&str]) -> Output {
    let out = ccoll(args);
    assert!(out.status.success(), "ccoll {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Codec specs, with a ragged 3D shape, a 2D one and a 1D one.
const CASES: [(&str, &str, &[&str]); 6] = [
    ("f32", "13x7x5", &["--codec", "zfp-rate=9"]),
    ("f64", "31x9", &["--codec", "zfp-tol=1e-4"]),
    ("f32", "1001", &["--codec", "szx=1e-3"]),
    ("f64", "777", &["--codec", "szx-rel=1e-3"]),
    ("f32", "5000", &["--codec", "szx=1e-2", "--pipelined"]),
    ("f64", "17x3x2", &["--codec", "szx-rel=1e-4", "--pipelined"]),
];

fn raw(elem: &str, n: usize) -> Vec<u8> {
    let v = |i: usize| (i as f64 * 0.37).sin() * 10.0 + if i.is_multiple_of(97) { 0.0 } else { (i % 7) as f64 };
    match elem {
        "f32" => (0..n).flat_map(|i| (v(i) as f32).to_le_bytes()).collect(),
        _ => (0..n).flat_map(|i| v(i).to_le_bytes()).collect(),
    }
}

/// Whether `auto` picked a CUDA device here (the emulator, or a GPU), from `-v`.
fn auto_picks_cuda(input: &str, output: &str) -> bool {
    let out = ok(&["compress", "--codec", "szx=1", "--type", "f32", "--dims", "1001", "-v", input, output]);
    let line = String::from_utf8(out.stderr).unwrap();
    assert!(line.starts_with("ccoll: backend "), "{line}");
    line.starts_with("ccoll: backend cuda")
}

#[test]
fn every_backend_writes_the_cpu_stream_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fs::write(p("probe.raw"), raw("f32", 1001)).unwrap();
    let cuda = auto_picks_cuda(&p("probe.raw"), &p("probe.s"));
    for (elem, dims, codec) in CASES {
        let n: usize = dims.split('x').map(|d| d.parse::<usize>().unwrap()).product();
        fs::write(p("in.raw"), raw(elem, n)).unwrap();
        let compress = |backend: &str, out: &str| {
            let input = p("in.raw");
            let mut args = vec!["compress", "--type", elem, "--dims", dims, "--threads", "2", "--backend", backend];
            args.extend(codec);
            args.extend([input.as_str(), out]);
            ok(&args)
        };
        compress("cpu", &p("cpu.s"));
        compress("auto", &p("auto.s"));
        let want = fs::read(p("cpu.s")).unwrap();
        assert_eq!(fs::read(p("auto.s")).unwrap(), want, "{elem} {dims} {codec:?}: auto");
        ok(&["decompress", "--backend", "cpu", &p("cpu.s"), &p("cpu.out")]);
        ok(&["decompress", &p("cpu.s"), &p("auto.out")]);
        let values = fs::read(p("cpu.out")).unwrap();
        assert_eq!(values.len(), raw(elem, n).len());
        assert_eq!(fs::read(p("auto.out")).unwrap(), values, "{elem} {dims} {codec:?}: auto decode");
        if cuda {
            compress("cuda", &p("cuda.s"));
            assert_eq!(fs::read(p("cuda.s")).unwrap(), want, "{elem} {dims} {codec:?}: cuda");
            ok(&["decompress", "--backend", "cuda", &p("cpu.s"), &p("cuda.out")]);
            assert_eq!(fs::read(p("cuda.out")).unwrap(), values, "{elem} {dims} {codec:?}: cuda decode");
        }
    }
}

#[test]
fn verbose_names_the_backend_that_ran() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fs::write(p("in.raw"), raw("f64", 64)).unwrap();
    let out = ok(&["compress", "--codec", "zfp-rate=8", "--type", "f64", "--dims", "8x8", "--backend", "cpu", "--threads", "1", "-v", &p("in.raw"), &p("s")]);
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "ccoll: backend cpu (1 threads)\n");
    let out = ok(&["decompress", "--backend", "cpu", "--threads", "2", "--verbose", &p("s"), &p("out")]);
    assert_eq!(String::from_utf8(out.stderr).unwrap(), "ccoll: backend cpu (2 threads)\n");
    let out = ok(&["decompress", &p("s"), &p("out")]);
    assert!(out.stderr.is_empty(), "without -v nothing is printed");
}

#[test]
fn cuda_without_a_device_is_an_error_never_a_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fs::write(p("in.raw"), raw("f32", 1001)).unwrap();
    if auto_picks_cuda(&p("in.raw"), &p("probe.s")) {
        eprintln!("a CUDA device answers here; the no-device case is not reachable");
        return;
    }
    ok(&["compress", "--codec", "szx=1e-3", "--type", "f32", "--dims", "1001", "--backend", "cpu", &p("in.raw"), &p("s")]);
    let cases: [&[&str]; 2] = [
        &["compress", "--codec", "szx=1e-3", "--type", "f32", "--dims", "1001", "--backend", "cuda", &p("in.raw"), &p("cuda.s")],
        &["decompress", "--backend", "cuda", &p("s"), &p("cuda.out")],
    ];
    for args in cases {
        let out = ccoll(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with("ccoll: --backend cuda: no CUDA device: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dir.path().join("cuda.s").exists() && !dir.path().join("cuda.out").exists(), "nothing written");
    }
    let out = ccoll(&["decompress", "--backend", "gpu", &p("s"), &p("x")]);
    assert_eq!(out.status.code(), Some(2), "an unknown backend is a usage error");
}

/// The cuda-enabled `ccoll` loads libcuda.so.1 at run time (codec-host's cuda/driver.rs),
/// so it starts without one: run it with every libcuda directory dropped from the loader
/// path. `cpu` works, `cuda` is an error naming the library, `auto` falls back.
#[cfg(feature = "cuda")]
#[test]
fn starts_without_the_driver_library() {
    let installed = Command::new("ldconfig").arg("-p").output().map(|o| String::from_utf8_lossy(&o.stdout).contains("libcuda.so.1"));
    if installed.unwrap_or(true) {
        eprintln!("libcuda.so.1 is installed system-wide (or ldconfig is missing); the driver-less case is not reachable");
        return;
    }
    let path = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let kept = std::env::join_paths(std::env::split_paths(&path).filter(|d| !d.join("libcuda.so.1").exists())).unwrap();
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_ccoll")).args(args).env("LD_LIBRARY_PATH", &kept).output().expect("run ccoll");
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    fs::write(p("in.raw"), raw("f32", 1001)).unwrap();
    let input = p("in.raw");
    let compress = |backend: &str, out: &str| {
        run(&["compress", "--codec", "szx=1e-3", "--type", "f32", "--dims", "1001", "-v", "--backend", backend, &input, out])
    };

    let cpu = compress("cpu", &p("cpu.s"));
    assert!(cpu.status.success(), "{}", String::from_utf8_lossy(&cpu.stderr));

    let cuda = compress("cuda", &p("cuda.s"));
    assert_eq!(cuda.status.code(), Some(1));
    let err = String::from_utf8(cuda.stderr).unwrap();
    assert!(err.starts_with("ccoll: --backend cuda: no CUDA device: libcuda.so.1 could not be loaded: "), "{err}");
    assert!(!dir.path().join("cuda.s").exists());

    let auto = compress("auto", &p("auto.s"));
    assert!(auto.status.success());
    let note = String::from_utf8(auto.stderr).unwrap();
    assert!(note.starts_with("ccoll: backend cpu (") && note.contains("(cuda not used: no CUDA device: libcuda.so.1 could not be loaded: "), "{note}");
    assert_eq!(fs::read(p("auto.s")).unwrap(), fs::read(p("cpu.s")).unwrap());
}
