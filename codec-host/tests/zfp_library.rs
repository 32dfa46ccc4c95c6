//! Byte identity with the zfp 1.0 library, both ways: our streams equal the library's
//! (padded to whole 64-bit words), our decoder reproduces the library's values from its
//! streams bit for bit, and the library decodes our streams to the values we decode.
//!
//! The library is Debian's build (8-bit stream words), driven through zfpy in one Python
//! process per batch of cases, and through the `zfp` tool for the rates zfpy cannot do.

mod common;

use std::fs;
use std::path::Path;

use codec_host::{Backend, Codec, CpuExecutor, ElemType, Shape};
use common::{dtype, pad8, run_python, run_zfp, zfp_array_args, zfp_mode_args, zfpy_mode, Kind, Rng, Values, KINDS};

/// One comparison.
struct Case {
    values: Values,
    shape: Shape,
    codec: Codec,
}

impl Case {
    fn label(&self, i: usize) -> String {
        format!("case {i}: {} {} {:?} {:?}", self.values.elem(), self.shape, self.codec, self.values.len())
    }
}

/// For every case in `dir/cases.txt`: compress the input with zfpy, decode that stream,
/// and decode our stream.
const ZFPY_BATCH: &str = r#"
import sys, numpy as np, zfpy
d = sys.argv[1]
for line in open(d + '/cases.txt'):
    cid, dtype, dims, mode, param = line.split()
    shape = [int(x) for x in dims.split('x')][::-1]
    arr = np.fromfile(f'{d}/{cid}.in', dtype=dtype).reshape(shape)
    kw = {'rate': float(param)} if mode == 'rate' else {'tolerance': float(param)}
    lib = zfpy.compress_numpy(arr, **kw)
    open(f'{d}/{cid}.lib', 'wb').write(lib)
    zfpy.decompress_numpy(lib).tofile(f'{d}/{cid}.libdec')
    ours = open(f'{d}/{cid}.ours', 'rb').read()
    zfpy.decompress_numpy(ours).tofile(f'{d}/{cid}.oursdec')
"#;

/// Checks one case whose library files are in `dir` under `prefix`; returns the problems.
fn compare(case: &Case, ours: &[u8], lib: &[u8], lib_of_lib: &[u8], lib_of_ours: &[u8], exec: &Backend) -> Vec<String> {
    let mut problems = Vec::new();
    let elem = case.values.elem();
    let n = case.values.len();
    if ours != pad8(lib) {
        let at = ours.iter().zip(lib).position(|(a, b)| a != b).unwrap_or(lib.len().min(ours.len()));
        problems.push(format!("stream differs at byte {at} (ours {} B, library {} B)", ours.len(), lib.len()));
    }
    match Values::decompress(lib, elem, n, exec) {
        Ok(v) if v.to_bytes() == lib_of_lib => {}
        Ok(_) => problems.push("our decode of the library stream differs from the library's".into()),
        Err(e) => problems.push(format!("our decoder refused the library stream: {e}")),
    }
    match Values::decompress(ours, elem, n, exec) {
        Ok(v) if v.to_bytes() == lib_of_ours => {}
        Ok(_) => problems.push("the library decodes our stream to other values than we do".into()),
        Err(e) => problems.push(format!("our decoder refused our stream: {e}")),
    }
    problems
}

/// Runs `cases` through zfpy in one batch and asserts identity for all of them.
fn check_with_zfpy(cases: &[Case]) {
    let exec = Backend::with_executor(CpuExecutor::new(2).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut manifest = String::new();
    let mut ours = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let stream = c.values.compress(&c.codec, c.shape, &exec).unwrap_or_else(|e| panic!("{}: {e}", c.label(i)));
        fs::write(d.join(format!("{i}.in")), c.values.to_bytes()).unwrap();
        fs::write(d.join(format!("{i}.ours")), &stream).unwrap();
        let (mode, param) = zfpy_mode(&c.codec);
        let dims: Vec<String> = c.shape.dims().iter().map(|n| n.to_string()).collect();
        manifest += &format!("{i} {} {} {mode} {param:e}\n", dtype(c.values.elem()), dims.join("x"));
        ours.push(stream);
    }
    fs::write(d.join("cases.txt"), manifest).unwrap();
    run_python(ZFPY_BATCH, d);
    let read = |i: usize, ext: &str| fs::read(d.join(format!("{i}.{ext}"))).unwrap();
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            compare(c, &ours[i], &read(i, "lib"), &read(i, "libdec"), &read(i, "oursdec"), &exec)
                .into_iter()
                .map(move |p| format!("{}: {p}", c.label(i)))
        })
        .collect();
    assert!(failures.is_empty(), "{} of {} cases fail, e.g.:\n{}", failures.len(), cases.len(), failures[..failures.len().min(12)].join("\n"));
}

const SHAPES: &[&[usize]] = &[
    &[1],
    &[3],
    &[4],
    &[5],
    &[17],
    &[100],
    &[1, 1],
    &[1, 7],
    &[7, 1],
    &[5, 6],
    &[8, 8],
    &[13, 3],
    &[1, 1, 1],
    &[1, 1, 9],
    &[9, 1, 1],
    &[4, 1, 5],
    &[5, 6, 7],
    &[8, 8, 8],
    &[3, 2, 17],
];

const TOLERANCES: [f64; 10] = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 0.5, 3.0, 1e-20];

/// Bits per block zfpy would use (it does not pass the type, so it never raises them).
fn block_bits(rate: f64, dims: usize) -> f64 {
    ((1u32 << (2 * dims)) as f64 * rate + 0.5).floor()
}

/// Rates zfpy handles for this type and dimensionality: at least 1 + EBITS bits per block.
fn zfpy_rates(elem: ElemType, dims: usize) -> Vec<f64> {
    let (max, ebits) = if elem == ElemType::F32 { (32, 8.0) } else { (64, 11.0) };
    (1..=max).map(f64::from).chain([2.5, 3.3, 7.75]).filter(|&r| block_bits(r, dims) >= 1.0 + ebits).collect()
}

#[test]
fn every_shape_kind_and_mode_matches_zfpy() {
    let mut rng = Rng::new(7);
    let mut cases = Vec::new();
    let mut turn = 0usize;
    for elem in [ElemType::F32, ElemType::F64] {
        for dims in SHAPES {
            let shape = Shape::from_dims(dims).unwrap();
            let rates = zfpy_rates(elem, dims.len());
            for kind in KINDS {
                let values = Values::generate(kind, elem, shape, &mut rng);
                for k in 0..2 {
                    turn += 1;
                    let rate = rates[(turn * 7 + k) % rates.len()];
                    let tolerance = TOLERANCES[(turn + 3 * k) % TOLERANCES.len()];
                    for codec in [Codec::zfp_rate(rate), Codec::zfp_accuracy(tolerance)] {
                        cases.push(Case { values: values.clone(), shape, codec });
                    }
                }
            }
        }
    }
    check_with_zfpy(&cases);
}

#[test]
fn every_rate_and_tolerance_matches_zfpy() {
    let mut rng = Rng::new(11);
    let mut cases = Vec::new();
    for elem in [ElemType::F32, ElemType::F64] {
        for (dims, kind) in [(&[23][..], Kind::Mixed), (&[13, 6][..], Kind::Smooth), (&[5, 6, 7][..], Kind::Noisy)] {
            let shape = Shape::from_dims(dims).unwrap();
            let values = Values::generate(kind, elem, shape, &mut rng);
            for rate in zfpy_rates(elem, dims.len()) {
                cases.push(Case { values: values.clone(), shape, codec: Codec::zfp_rate(rate) });
            }
            for tolerance in TOLERANCES {
                cases.push(Case { values: values.clone(), shape, codec: Codec::zfp_accuracy(tolerance) });
            }
        }
    }
    check_with_zfpy(&cases);
}

#[test]
fn larger_arrays_match_zfpy_across_tiles_and_slabs() {
    // Enough blocks for several fixed-accuracy tiles and fixed-rate slabs per thread.
    let mut rng = Rng::new(13);
    let mut cases = Vec::new();
    for elem in [ElemType::F32, ElemType::F64] {
        for dims in [&[70_001][..], &[301, 203][..], &[45, 38, 29][..]] {
            let shape = Shape::from_dims(dims).unwrap();
            let values = Values::generate(Kind::Smooth, elem, shape, &mut rng);
            for codec in [
                Codec::zfp_rate(8.0),
                Codec::zfp_rate(13.0),
                Codec::zfp_accuracy(1e-3),
                Codec::zfp_accuracy(1e-6),
            ] {
                cases.push(Case { values: values.clone(), shape, codec });
            }
        }
    }
    check_with_zfpy(&cases);
}

/// Compresses with the `zfp` tool (which passes the type, so tiny rates are raised to
/// 1 + EBITS bits per block) and checks identity both ways.
fn check_with_zfp_tool(case: &Case, dir: &Path) {
    let exec = Backend::with_executor(CpuExecutor::new(1).unwrap());
    let elem = case.values.elem();
    let [input, lib, ours_path, lib_dec, ours_dec] =
        ["in", "lib", "ours", "libdec", "oursdec"].map(|e| dir.join(format!("c.{e}")).to_str().unwrap().to_string());
    fs::write(&input, case.values.to_bytes()).unwrap();
    let ours = case.values.compress(&case.codec, case.shape, &exec).unwrap();
    fs::write(&ours_path, &ours).unwrap();
    let mut args = zfp_array_args(elem, case.shape);
    args.extend(zfp_mode_args(&case.codec));
    args.extend(["-h", "-i", &input, "-z", &lib].map(String::from));
    run_zfp(&args.iter().map(String::as_str).collect::<Vec<_>>());
    run_zfp(&["-h", "-z", &lib, "-o", &lib_dec]);
    run_zfp(&["-h", "-z", &ours_path, "-o", &ours_dec]);
    let problems = compare(case, &ours, &fs::read(&lib).unwrap(), &fs::read(&lib_dec).unwrap(), &fs::read(&ours_dec).unwrap(), &exec);
    assert!(problems.is_empty(), "{}: {}", case.label(0), problems.join("; "));
}

#[test]
fn small_rates_match_the_zfp_tool() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(17);
    for elem in [ElemType::F32, ElemType::F64] {
        for (dims, kind) in [(&[19][..], Kind::Smooth), (&[6, 5][..], Kind::Mixed), (&[5, 4, 3][..], Kind::Noisy)] {
            let shape = Shape::from_dims(dims).unwrap();
            let values = Values::generate(kind, elem, shape, &mut rng);
            for rate in [0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0] {
                check_with_zfp_tool(&Case { values: values.clone(), shape, codec: Codec::zfp_rate(rate) }, dir.path());
            }
            let codec = Codec::zfp_accuracy(1e-4);
            check_with_zfp_tool(&Case { values: values.clone(), shape, codec }, dir.path());
        }
    }
}
