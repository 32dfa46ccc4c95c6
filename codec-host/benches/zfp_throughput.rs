//! ZFP throughput: ours (one thread and all threads) side by side with the zfp C library
//! (Debian's libzfp, serial, through FFI declared here) and the `zfp-rs` crate, on the
//! smooth3d field (256^3 f32, 64 MiB) coded as 3D and as 1D.
//!
//! `cargo bench -p codec-host --bench zfp_throughput` prints the table; set
//! `ZFP_BENCH_QUICK=1` (or pass `--quick`) for a 64^3 smoke run. MB/s are 10^6 bytes of
//! uncompressed data per second, the best of several repetitions. Every stream is
//! checked against the C library's (padded to 64-bit words) before it is timed.

use std::time::{Duration, Instant};

use codec_host::{Codec, CpuExecutor, Shape};

/// The zfp C library's serial path (libzfp from Debian; linked only into this bench).
mod c_zfp {
    use std::ffi::{c_int, c_uint, c_void};

    #[repr(C)]
    pub struct ZfpStream {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct ZfpField {
        _opaque: [u8; 0],
    }
    #[repr(C)]
    pub struct BitStream {
        _opaque: [u8; 0],
    }

    const ZFP_TYPE_FLOAT: c_int = 3;
    const ZFP_HEADER_FULL: c_uint = 7;

    #[link(name = "zfp")]
    extern "C" {
        fn zfp_stream_open(bs: *mut BitStream) -> *mut ZfpStream;
        fn zfp_stream_close(zfp: *mut ZfpStream);
        fn zfp_stream_set_rate(zfp: *mut ZfpStream, rate: f64, ty: c_int, dims: c_uint, align: c_int) -> f64;
        fn zfp_stream_set_accuracy(zfp: *mut ZfpStream, tol: f64) -> f64;
        fn zfp_stream_maximum_size(zfp: *const ZfpStream, field: *const ZfpField) -> usize;
        fn zfp_stream_set_bit_stream(zfp: *mut ZfpStream, bs: *mut BitStream);
        fn zfp_field_1d(ptr: *mut c_void, ty: c_int, nx: usize) -> *mut ZfpField;
        fn zfp_field_3d(ptr: *mut c_void, ty: c_int, nx: usize, ny: usize, nz: usize) -> *mut ZfpField;
        fn zfp_field_free(field: *mut ZfpField);
        fn zfp_write_header(zfp: *mut ZfpStream, field: *const ZfpField, mask: c_uint) -> usize;
        fn zfp_read_header(zfp: *mut ZfpStream, field: *mut ZfpField, mask: c_uint) -> usize;
        fn zfp_compress(zfp: *mut ZfpStream, field: *const ZfpField) -> usize;
        fn zfp_decompress(zfp: *mut ZfpStream, field: *mut ZfpField) -> usize;
        fn stream_open(buffer: *mut c_void, bytes: usize) -> *mut BitStream;
        fn stream_close(bs: *mut BitStream);
    }

    fn field(ptr: *mut c_void, dims: &[usize]) -> *mut ZfpField {
        // SAFETY: plain constructors; the pointer is only stored.
        unsafe {
            match *dims {
                [nx] => zfp_field_1d(ptr, ZFP_TYPE_FLOAT, nx),
                [nx, ny, nz] => zfp_field_3d(ptr, ZFP_TYPE_FLOAT, nx, ny, nz),
                _ => unreachable!("1D and 3D only"),
            }
        }
    }

    /// `zfp -h` equivalent: full header, then the blocks.
    pub fn compress(data: &[f32], dims: &[usize], rate: Option<f64>, tol: Option<f64>) -> Vec<u8> {
        // SAFETY: the field points at `data` (only read), the bit stream at `buf`, sized
        // by the library's own bound; everything is freed before returning.
        unsafe {
            let f = field(data.as_ptr() as *mut c_void, dims);
            let zfp = zfp_stream_open(std::ptr::null_mut());
            match (rate, tol) {
                (Some(r), _) => zfp_stream_set_rate(zfp, r, ZFP_TYPE_FLOAT, dims.len() as c_uint, 0),
                (_, Some(t)) => zfp_stream_set_accuracy(zfp, t),
                _ => unreachable!(),
            };
            let mut buf = vec![0u8; zfp_stream_maximum_size(zfp, f)];
            let bs = stream_open(buf.as_mut_ptr() as *mut c_void, buf.len());
            zfp_stream_set_bit_stream(zfp, bs);
            zfp_write_header(zfp, f, ZFP_HEADER_FULL);
            let n = zfp_compress(zfp, f);
            assert!(n > 0, "zfp_compress failed");
            buf.truncate(n);
            zfp_field_free(f);
            zfp_stream_close(zfp);
            stream_close(bs);
            buf
        }
    }

    /// Reads the header and decodes into `out`.
    pub fn decompress(stream: &[u8], out: &mut [f32], dims: &[usize]) {
        // SAFETY: the library only reads `stream` and writes the field's values into
        // `out`, whose size matches the header (checked by the caller's dims).
        unsafe {
            let f = field(out.as_mut_ptr() as *mut c_void, dims);
            let bs = stream_open(stream.as_ptr() as *mut c_void, stream.len());
            let zfp = zfp_stream_open(bs);
            assert!(zfp_read_header(zfp, f, ZFP_HEADER_FULL) > 0, "zfp_read_header failed");
            assert!(zfp_decompress(zfp, f) > 0, "zfp_decompress failed");
            zfp_field_free(f);
            zfp_stream_close(zfp);
            stream_close(bs);
        }
    }
}

/// The `zfp-rs` crate, serial.
mod zfp_rs_ref {
    use zfp_rs::{ZfpBitStream, ZfpConfig, ZfpDimensionality, ZfpField, ZfpFieldMut, ZfpHeaderMask, ZfpScalarType, ZfpStreamAlignment};

    fn dimensionality(dims: &[usize]) -> ZfpDimensionality {
        if dims.len() == 1 {
            ZfpDimensionality::D1
        } else {
            ZfpDimensionality::D3
        }
    }

    pub fn config(dims: &[usize], rate: Option<f64>, tol: Option<f64>) -> ZfpConfig {
        match (rate, tol) {
            (Some(r), _) => ZfpConfig::fixed_rate(r, ZfpScalarType::F32, dimensionality(dims), ZfpStreamAlignment::Unaligned).unwrap(),
            (_, Some(t)) => ZfpConfig::fixed_accuracy(t),
            _ => unreachable!(),
        }
    }

    pub fn compress(data: &[f32], dims: &[usize], config: &ZfpConfig) -> Vec<u8> {
        let field = match *dims {
            [nx] => ZfpField::new(data, [nx]),
            [nx, ny, nz] => ZfpField::new(data, [nx, ny, nz]),
            _ => unreachable!(),
        }
        .unwrap();
        let cap = config.maximum_size(ZfpScalarType::F32, field.dims()).unwrap();
        let mut bs = ZfpBitStream::new(cap).unwrap();
        bs.write_header(config, &field.metadata(), ZfpHeaderMask::FULL).unwrap();
        bs.compress(config, &field).unwrap();
        bs.into_bytes().unwrap()
    }

    pub fn decompress(stream: &[u8], out: &mut [f32], dims: &[usize]) {
        let mut bs = ZfpBitStream::from_bytes(stream).unwrap();
        let header = bs.read_header(ZfpHeaderMask::FULL).unwrap();
        let config = header.config.unwrap();
        let mut field = match *dims {
            [nx] => ZfpFieldMut::new(out, [nx]),
            [nx, ny, nz] => ZfpFieldMut::new(out, [nx, ny, nz]),
            _ => unreachable!(),
        }
        .unwrap();
        bs.decompress(&config, &mut field).unwrap();
    }
}

/// splitmix64 and Box-Muller: the seeded Gaussian noise of smooth3d.
struct Noise(u64);

impl Noise {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn gauss(&mut self) -> f64 {
        let u = self.unit().max(1e-300);
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * self.unit()).cos()
    }
}

/// smooth3d (reference-figures.md): n^3 f32, x fastest, t = linspace(0, 1, n) per axis,
/// 0.45 sin(2π(x + 0.5y)) + 0.30 cos(2π(2y − z)) + 0.15 sin(6π(x + y + z))
/// + 0.05 sin(14πx) cos(10πz) in f32, plus N(0, 1e-3) noise (seed 42).
fn smooth3d(n: usize) -> Vec<f32> {
    let pi = std::f32::consts::PI;
    let t: Vec<f32> = (0..n).map(|i| i as f32 / (n - 1) as f32).collect();
    let mut noise = Noise(42);
    let mut v = Vec::with_capacity(n * n * n);
    for &z in &t {
        for &y in &t {
            for &x in &t {
                let s = 0.45 * (2.0 * pi * (x + 0.5 * y)).sin()
                    + 0.30 * (2.0 * pi * (2.0 * y - z)).cos()
                    + 0.15 * (6.0 * pi * (x + y + z)).sin()
                    + 0.05 * (14.0 * pi * x).sin() * (10.0 * pi * z).cos();
                v.push(s + (1e-3 * noise.gauss()) as f32);
            }
        }
    }
    v
}

/// Best time of `reps` runs of `f`.
fn best<R>(reps: usize, mut f: impl FnMut() -> R) -> Duration {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn mbs(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e6
}

fn main() {
    let quick = std::env::var_os("ZFP_BENCH_QUICK").is_some() || std::env::args().any(|a| a == "--quick");
    let (n, reps) = if quick { (64, 1) } else { (256, 3) };
    let data = smooth3d(n);
    let bytes = data.len() * 4;
    let one = CpuExecutor::new(1).unwrap();
    let all = CpuExecutor::new(0).unwrap();
    println!(
        "smooth3d {n}^3 f32 ({:.1} MiB); ours: 1 thread and {} threads; C: Debian libzfp 1.0 serial; zfp-rs 1.0.1 serial; best of {reps}; MB/s of uncompressed data",
        bytes as f64 / (1 << 20) as f64,
        all.threads()
    );
    println!(
        "| data | mode | op | ours 1T | ours {}T | C lib | zfp-rs | ours1T/C | ours1T/zfp-rs | allT/1T | ratio | max abs err |",
        all.threads()
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let modes: [(&str, Option<f64>, Option<f64>); 6] = [
        ("rate 4", Some(4.0), None),
        ("rate 8", Some(8.0), None),
        ("rate 16", Some(16.0), None),
        ("tol 1e-2", None, Some(1e-2)),
        ("tol 1e-3", None, Some(1e-3)),
        ("tol 1e-4", None, Some(1e-4)),
    ];
    for (label, dims) in [("3D", vec![n, n, n]), ("1D", vec![n * n * n])] {
        let shape = Shape::from_dims(&dims).unwrap();
        for &(mode, rate, tol) in &modes {
            let codec = match (rate, tol) {
                (Some(rate), _) => Codec::ZfpFixedRate { rate },
                (_, Some(tolerance)) => Codec::ZfpFixedAccuracy { tolerance },
                _ => unreachable!(),
            };
            let rs_config = zfp_rs_ref::config(&dims, rate, tol);
            // Correctness first: all three produce the same stream.
            let ours = codec.compress_with(&data, shape, &one).unwrap();
            let c = c_zfp::compress(&data, &dims, rate, tol);
            assert!(ours.len() == c.len().div_ceil(8) * 8 && ours[..c.len()] == c[..], "{label} {mode}: stream differs from libzfp");
            let rs = zfp_rs_ref::compress(&data, &dims, &rs_config);
            let rs_note = if rs[..] == ours[..] { "" } else { " (zfp-rs stream differs)" };
            let mut out = vec![0f32; data.len()];
            codec_host::decompress_into_with(&ours, &mut out, &one).unwrap();
            let err = data.iter().zip(&out).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);

            let c1 = best(reps, || codec.compress_with(&data, shape, &one).unwrap());
            let cn = best(reps, || codec.compress_with(&data, shape, &all).unwrap());
            let cc = best(reps, || c_zfp::compress(&data, &dims, rate, tol));
            let cr = best(reps, || zfp_rs_ref::compress(&data, &dims, &rs_config));
            let d1 = best(reps, || codec_host::decompress_into_with(&ours, &mut out, &one).unwrap());
            let dn = best(reps, || codec_host::decompress_into_with(&ours, &mut out, &all).unwrap());
            let dc = best(reps, || c_zfp::decompress(&c, &mut out, &dims));
            let dr = best(reps, || zfp_rs_ref::decompress(&rs, &mut out, &dims));
            let ratio = bytes as f64 / ours.len() as f64;
            for (op, t1, tn, tc, tr) in [("compress", c1, cn, cc, cr), ("decompress", d1, dn, dc, dr)] {
                let (o1, on, oc, or) = (mbs(bytes, t1), mbs(bytes, tn), mbs(bytes, tc), mbs(bytes, tr));
                println!(
                    "| {label} | {mode} | {op} | {o1:.0} | {on:.0} | {oc:.0} | {or:.0}{rs_note} | {:.2} | {:.2} | {:.2} | {ratio:.2} | {err:.2e} |",
                    o1 / oc,
                    o1 / or,
                    on / o1
                );
            }
        }
    }
}
