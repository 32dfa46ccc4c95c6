//! Shared by the benchmark binaries: the zfp C library (Debian's libzfp, serial, linked
//! only into the benches) and a per-thread CPU clock.
#![allow(dead_code)] // each bench uses a subset

use std::time::Duration;

/// The zfp C library's serial path (libzfp from Debian; linked only into this bench).
pub mod c_zfp {
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

    pub const ZFP_TYPE_FLOAT: c_int = 3;
    const ZFP_HEADER_FULL: c_uint = 7;

    #[link(name = "zfp")]
    extern "C" {
        pub fn zfp_stream_open(bs: *mut BitStream) -> *mut ZfpStream;
        pub fn zfp_stream_close(zfp: *mut ZfpStream);
        pub fn zfp_stream_set_rate(zfp: *mut ZfpStream, rate: f64, ty: c_int, dims: c_uint, align: c_int) -> f64;
        pub fn zfp_stream_set_accuracy(zfp: *mut ZfpStream, tol: f64) -> f64;
        pub fn zfp_stream_maximum_size(zfp: *const ZfpStream, field: *const ZfpField) -> usize;
        pub fn zfp_stream_set_bit_stream(zfp: *mut ZfpStream, bs: *mut BitStream);
        pub fn zfp_field_1d(ptr: *mut c_void, ty: c_int, nx: usize) -> *mut ZfpField;
        pub fn zfp_field_3d(ptr: *mut c_void, ty: c_int, nx: usize, ny: usize, nz: usize) -> *mut ZfpField;
        pub fn zfp_field_free(field: *mut ZfpField);
        pub fn zfp_write_header(zfp: *mut ZfpStream, field: *const ZfpField, mask: c_uint) -> usize;
        pub fn zfp_read_header(zfp: *mut ZfpStream, field: *mut ZfpField, mask: c_uint) -> usize;
        pub fn zfp_compress(zfp: *mut ZfpStream, field: *const ZfpField) -> usize;
        pub fn zfp_decompress(zfp: *mut ZfpStream, field: *mut ZfpField) -> usize;
        pub fn stream_open(buffer: *mut c_void, bytes: usize) -> *mut BitStream;
        pub fn stream_close(bs: *mut BitStream);
        pub fn zfp_stream_rewind(zfp: *mut ZfpStream);
    }

    pub fn field(ptr: *mut c_void, dims: &[usize]) -> *mut ZfpField {
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

/// CPU time of the calling thread (Linux `CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_time() -> Duration {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    Duration::new(ts.sec as u64, ts.nsec as u32)
}

