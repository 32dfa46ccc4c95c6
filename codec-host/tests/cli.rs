//! The `ccoll` binary against zfp's own tool and zfpy, both ways, and its error
//! behaviour (non-zero status, one line on stderr).

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use codec_host::{Codec, ElemType, Shape};
use common::{dtype, pad8, run_python, run_zfp, zfp_array_args, zfp_mode_args, zfpy_mode, Kind, Rng, Values};

fn ccoll(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ccoll")).args(args).output().expect("run ccoll")
}

fn ccoll_ok(args: &[&str]) -> String {
    let out = ccoll(args);
    assert!(out.status.success(), "ccoll {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Paths for one case inside `dir`.
fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

const CASES: [(ElemType, &str, Kind, &str); 4] = [
    (ElemType::F32, "20x15x11", Kind::Smooth, "zfp-rate=6"),
    (ElemType::F32, "37x5", Kind::Noisy, "zfp-tol=1e-3"),
    (ElemType::F64, "1001", Kind::Mixed, "zfp-tol=1e-5"),
    (ElemType::F64, "9x9x9", Kind::Smooth, "zfp-rate=20"),
];

#[test]
fn ccoll_and_the_zfp_tool_read_each_others_streams() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(21);
    for (elem, dims, kind, codec) in CASES {
        let shape: Shape = dims.parse().unwrap();
        let values = Values::generate(kind, elem, shape, &mut rng);
        let [raw, ours, theirs, ours_dec, theirs_dec, cross_a, cross_b] =
            ["in.raw", "ours.zfp", "theirs.zfp", "ours.out", "theirs.out", "a.out", "b.out"].map(|n| path(d, n));
        fs::write(&raw, values.to_bytes()).unwrap();
        let ty = elem.to_string();
        ccoll_ok(&["compress", "--codec", codec, "--type", &ty, "--dims", dims, "--threads", "2", &raw, &ours]);
        let mut args = zfp_array_args(elem, shape);
        args.extend(zfp_mode_args(&codec.parse::<Codec>().unwrap()));
        args.extend(["-h", "-i", &raw, "-z", &theirs].map(String::from));
        run_zfp(&args.iter().map(String::as_str).collect::<Vec<_>>());
        // Same stream (the tool's ends at a byte, ours at a 64-bit word).
        assert_eq!(fs::read(&ours).unwrap(), pad8(&fs::read(&theirs).unwrap()), "{dims} {codec}");
        // Each decodes the other's stream to the values the other gets.
        ccoll_ok(&["decompress", &theirs, &cross_a]);
        run_zfp(&["-h", "-z", &theirs, "-o", &theirs_dec]);
        assert_eq!(fs::read(&cross_a).unwrap(), fs::read(&theirs_dec).unwrap(), "{dims} {codec}: ccoll on zfp's stream");
        run_zfp(&["-h", "-z", &ours, "-o", &cross_b]);
        ccoll_ok(&["decompress", "--threads", "1", &ours, &ours_dec]);
        assert_eq!(fs::read(&cross_b).unwrap(), fs::read(&ours_dec).unwrap(), "{dims} {codec}: zfp on ccoll's stream");
        assert_eq!(fs::read(&ours_dec).unwrap().len(), values.len() * elem.size());
    }
}

#[test]
fn ccoll_and_zfpy_read_each_others_streams() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng::new(22);
    let mut manifest = String::new();
    for (i, (elem, dims, kind, codec)) in CASES.into_iter().enumerate() {
        let shape: Shape = dims.parse().unwrap();
        let values = Values::generate(kind, elem, shape, &mut rng);
        let raw = path(d, &format!("{i}.raw"));
        fs::write(&raw, values.to_bytes()).unwrap();
        ccoll_ok(&["compress", "--codec", codec, "--type", &elem.to_string(), "--dims", dims, &raw, &path(d, &format!("{i}.ours"))]);
        let (mode, param) = zfpy_mode(&codec.parse::<Codec>().unwrap());
        manifest += &format!("{i} {} {} {mode} {param:e}\n", dtype(elem), dims);
    }
    fs::write(d.join("cases.txt"), manifest).unwrap();
    // zfpy compresses each input and decodes our stream.
    run_python(
        r#"
import sys, numpy as np, zfpy
d = sys.argv[1]
for line in open(d + '/cases.txt'):
    i, dtype, dims, mode, param = line.split()
    shape = [int(x) for x in dims.split('x')][::-1]
    arr = np.fromfile(f'{d}/{i}.raw', dtype=dtype).reshape(shape)
    open(f'{d}/{i}.zfpy', 'wb').write(zfpy.compress_numpy(arr, **{mode: float(param)}))
    zfpy.decompress_numpy(open(f'{d}/{i}.ours', 'rb').read()).tofile(f'{d}/{i}.zfpy_of_ours')
    zfpy.decompress_numpy(open(f'{d}/{i}.zfpy', 'rb').read()).tofile(f'{d}/{i}.zfpy_of_zfpy')
"#,
        d,
    );
    for i in 0..CASES.len() {
        let p = |ext: &str| path(d, &format!("{i}.{ext}"));
        ccoll_ok(&["decompress", &p("ours"), &p("ours_of_ours")]);
        ccoll_ok(&["decompress", &p("zfpy"), &p("ours_of_zfpy")]);
        assert_eq!(fs::read(p("ours_of_ours")).unwrap(), fs::read(p("zfpy_of_ours")).unwrap(), "case {i}: zfpy on ccoll's stream");
        assert_eq!(fs::read(p("ours_of_zfpy")).unwrap(), fs::read(p("zfpy_of_zfpy")).unwrap(), "case {i}: ccoll on zfpy's stream");
        assert_eq!(fs::read(p("ours")).unwrap(), pad8(&fs::read(p("zfpy")).unwrap()), "case {i}: streams differ");
    }
}

#[test]
fn info_describes_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let raw = path(dir.path(), "in.raw");
    let z = path(dir.path(), "out.zfp");
    fs::write(&raw, Values::F32(vec![0.25; 64 * 64]).to_bytes()).unwrap();
    ccoll_ok(&["compress", "--codec", "zfp-rate=8", "--type", "f32", "--dims", "64x64", &raw, &z]);
    let info = ccoll_ok(&["info", &z]);
    for line in [
        "codec: zfp-rate=8",
        "type: f32",
        "dims: 64x64",
        "mode: minbits 128 maxbits 128 maxprec 64 minexp -1074",
        "header: 96 bits",
        "uncompressed: 16384 bytes",
        // 256 blocks of 128 bits after 96 header bits, in whole 64-bit words.
        "compressed: 4112 bytes",
        "ratio: 3.984",
    ] {
        assert!(info.lines().any(|l| l == line), "missing {line:?} in\n{info}");
    }
}

#[test]
fn errors_exit_non_zero_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let raw = path(dir.path(), "in.raw");
    let out = path(dir.path(), "out");
    fs::write(&raw, [0u8; 40]).unwrap();
    for (args, needle) in [
        (vec!["compress", "--codec", "zfp-rate=8", "--type", "f32", "--dims", "3x3", &raw, &out], "40 bytes"),
        (vec!["compress", "--codec", "szz=1", "--type", "f32", "--dims", "10", &raw, &out], "unknown codec"),
        (vec!["compress", "--codec", "zfp-rate=0", "--type", "f32", "--dims", "10", &raw, &out], "out of range"),
        (vec!["compress", "--codec", "zfp-rate=8", "--type", "f16", "--dims", "10", &raw, &out], "f32 or f64"),
        (vec!["compress", "--codec", "zfp-rate=8", "--type", "f32", "--dims", "2x0x5", &raw, &out], "empty"),
        (vec!["compress", "--codec", "zfp-rate=8", "--type", "f32", "--dims", "10"], "required"),
        (vec!["decompress", &raw, &out], "not a zfp stream"),
        (vec!["info", "/nonexistent/stream.zfp"], "cannot read"),
        (vec!["frobnicate"], "unrecognized"),
    ] {
        let o = ccoll(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
        assert!(err.contains(needle), "{args:?}: {err:?}");
    }
}

#[test]
fn szx_streams_round_trip_within_the_bound_plain_and_pipelined() {
    let dir = tempfile::tempdir().unwrap();
    let raw = path(dir.path(), "in.raw");
    let back = path(dir.path(), "back.raw");
    let n = 12_000; // three pipelined chunks of 5120 values, the last one ragged
    let values: Vec<f64> = (0..n).map(|i| (i as f64 * 0.013).sin() * 3.0 + if i % 7 == 0 { 0.0 } else { 1e-4 }).collect();
    fs::write(&raw, Values::F64(values.clone()).to_bytes()).unwrap();
    for (extra, codec, chunks) in
        [(None, "codec: szx=0.001", "chunks: 1 of"), (Some("--pipelined"), "codec: szx-pipelined=0.001,5120", "chunks: 3 of 5120 values")]
    {
        let s = path(dir.path(), "out.szx");
        let mut args = vec!["compress", "--codec", "szx=1e-3", "--type", "f64", "--dims", "12000", &raw, &s];
        args.extend(extra);
        ccoll_ok(&args);
        let info = ccoll_ok(&["info", &s]);
        for line in [codec, "type: f64", "dims: 12000", "block size: 128 values", chunks] {
            assert!(info.lines().any(|l| l.starts_with(line)), "missing {line:?} in\n{info}");
        }
        assert!(info.contains(&format!("pipelined: {}", if extra.is_some() { "yes" } else { "no" })), "{info}");
        ccoll_ok(&["decompress", &s, &back]);
        let got = fs::read(&back).unwrap();
        assert_eq!(got.len(), n * 8);
        for (i, (c, &v)) in got.chunks_exact(8).zip(&values).enumerate() {
            let d = f64::from_le_bytes(c.try_into().unwrap());
            assert!((d - v).abs() <= 1e-3, "value {i}: {v} came back as {d}");
        }
    }
    let out = ccoll(&["compress", "--codec", "zfp-tol=1e-3", "--pipelined", "--type", "f64", "--dims", "12000", &raw, &back]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pipelined applies to szx"));
}
