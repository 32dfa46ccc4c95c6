//! Shared test helpers: seeded data generators, typed value buffers, and drivers for the
//! reference zfp library (Debian's `zfpy` through `/usr/bin/python3`, and the `zfp` tool).
// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use codec_host::{Backend, Codec, ElemType, Result, Shape, ZfpMode};

/// The Python that sees Debian's zfpy and numpy (not a pyenv one first on PATH).
pub const PYTHON: &str = "/usr/bin/python3";

#[path = "../rng/mod.rs"]
mod rng;
pub use rng::Rng;

/// Kinds of test data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Smooth,
    Noisy,
    Constant,
    Zero,
    /// Smooth data around 1e30.
    Huge,
    /// Noise around 1e-35 (f32) or 1e-300 (f64): blocks hit zfp's scale-overflow case.
    Tiny,
    /// Subnormal values only.
    Denormal,
    /// Random signs and exponents over many decades, some zeros.
    Mixed,
}

pub const KINDS: [Kind; 8] =
    [Kind::Smooth, Kind::Noisy, Kind::Constant, Kind::Zero, Kind::Huge, Kind::Tiny, Kind::Denormal, Kind::Mixed];

/// Values of one element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Values {
    /// `n` values of `kind` for an array of `shape` (x fastest).
    pub fn generate(kind: Kind, elem: ElemType, shape: Shape, rng: &mut Rng) -> Values {
        let n = shape.len();
        let d = shape.dims();
        let (nx, ny) = (d[0], d.get(1).copied().unwrap_or(1));
        let f64s = elem == ElemType::F64;
        let v: Vec<f64> = (0..n)
            .map(|i| {
                let (x, y, z) = ((i % nx) as f64, ((i / nx) % ny) as f64, (i / (nx * ny)) as f64);
                let smooth = (0.3 * x).sin() * (0.2 * y).cos() + 0.1 * z - 0.4;
                match kind {
                    Kind::Smooth => smooth,
                    Kind::Noisy => rng.gauss(),
                    Kind::Constant => 3.25,
                    Kind::Zero => 0.0,
                    Kind::Huge => smooth * 1e30,
                    Kind::Tiny => rng.gauss() * if f64s { 1e-300 } else { 1e-35 },
                    Kind::Denormal => rng.gauss() * if f64s { 1e-310 } else { 1e-40 },
                    Kind::Mixed => {
                        let decades = if f64s { 200.0 } else { 20.0 };
                        let sign = if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 };
                        if rng.next_u64().is_multiple_of(8) {
                            0.0
                        } else {
                            sign * 10f64.powf(decades * (2.0 * rng.unit() - 1.0))
                        }
                    }
                }
            })
            .collect();
        match elem {
            ElemType::F32 => Values::F32(v.iter().map(|&x| x as f32).collect()),
            ElemType::F64 => Values::F64(v),
        }
    }

    pub fn elem(&self) -> ElemType {
        match self {
            Values::F32(_) => ElemType::F32,
            Values::F64(_) => ElemType::F64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Values::F32(v) => v.len(),
            Values::F64(v) => v.len(),
        }
    }

    /// Raw little-endian bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Values::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Values::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// From raw little-endian bytes.
    pub fn from_bytes(elem: ElemType, bytes: &[u8]) -> Values {
        match elem {
            ElemType::F32 => Values::F32(bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()),
            ElemType::F64 => Values::F64(bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()),
        }
    }

    pub fn compress(&self, codec: &Codec, shape: Shape, backend: &Backend) -> Result<Vec<u8>> {
        match self {
            Values::F32(v) => codec.compress(v, shape, backend),
            Values::F64(v) => codec.compress(v, shape, backend),
        }
    }

    /// Decodes `stream` as `n` values of `elem`.
    pub fn decompress(stream: &[u8], elem: ElemType, n: usize, backend: &Backend) -> Result<Values> {
        Ok(match elem {
            ElemType::F32 => {
                let mut v = vec![0f32; n];
                codec_host::decompress_into(stream, &mut v, backend)?;
                Values::F32(v)
            }
            ElemType::F64 => {
                let mut v = vec![0f64; n];
                codec_host::decompress_into(stream, &mut v, backend)?;
                Values::F64(v)
            }
        })
    }

    /// Largest absolute difference.
    pub fn max_abs_diff(&self, other: &Values) -> f64 {
        match (self, other) {
            (Values::F32(a), Values::F32(b)) => a.iter().zip(b).map(|(x, y)| (x - y).abs() as f64).fold(0.0, f64::max),
            (Values::F64(a), Values::F64(b)) => a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max),
            _ => f64::INFINITY,
        }
    }
}

/// numpy's dtype name for an element type.
pub fn dtype(elem: ElemType) -> &'static str {
    match elem {
        ElemType::F32 => "float32",
        ElemType::F64 => "float64",
    }
}

/// `stream` zero-padded to a multiple of 8 bytes: what a 64-bit-word zfp build writes
/// where Debian's 8-bit-word build stops.
pub fn pad8(stream: &[u8]) -> Vec<u8> {
    let mut v = stream.to_vec();
    v.resize(stream.len().div_ceil(8) * 8, 0);
    v
}

/// Runs a Python script with `dir` as its argument; panics with its stderr on failure.
pub fn run_python(script: &str, dir: &Path) {
    let out = Command::new(PYTHON)
        .arg("-c")
        .arg(script)
        .arg(dir)
        .output()
        .expect("run /usr/bin/python3 (install python3-zfpy and python3-numpy: .ci/install-deps.sh)");
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// Runs the `zfp` tool; panics with its stderr on failure.
pub fn run_zfp(args: &[&str]) {
    let out = Command::new("zfp").args(args).output().expect("run zfp (install the zfp package: .ci/install-deps.sh)");
    assert!(out.status.success(), "zfp {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// The `zfp` tool's arguments for a type and shape: `-f|-d -N nx [ny [nz]]`.
pub fn zfp_array_args(elem: ElemType, shape: Shape) -> Vec<String> {
    let mut args = vec![if elem == ElemType::F32 { "-f" } else { "-d" }.to_string(), format!("-{}", shape.ndims())];
    args.extend(shape.dims().iter().map(|d| d.to_string()));
    args
}

/// The `zfp` tool's mode arguments for a codec.
pub fn zfp_mode_args(codec: &Codec) -> Vec<String> {
    match *codec {
        Codec::Zfp { mode: ZfpMode::FixedRate { rate } } => vec!["-r".into(), rate.to_string()],
        Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => vec!["-a".into(), tolerance.to_string()],
        other => panic!("{other:?} is not a zfp mode"),
    }
}

/// zfpy's keyword argument and value for a codec: `rate` or `tolerance`.
pub fn zfpy_mode(codec: &Codec) -> (&'static str, f64) {
    match *codec {
        Codec::Zfp { mode: ZfpMode::FixedRate { rate } } => ("rate", rate),
        Codec::Zfp { mode: ZfpMode::FixedAccuracy { tolerance } } => ("tolerance", tolerance),
        other => panic!("{other:?} is not a zfp mode"),
    }
}
