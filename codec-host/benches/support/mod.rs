//! Shared by the benchmark binaries: the zfp C library (Debian's libzfp, serial, linked
//! only into the benches), the C SZx (loaded at run time) and a per-thread CPU clock.
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

/// The C SZx (szcompressor/SZx), loaded at run time from a built `libSZx.so`, or built
/// first from its source directory.
pub mod c_szx {
    use std::ffi::{c_float, c_int, c_uchar, c_void};
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// `SZx_FLOAT`.
    const SZX_FLOAT: c_int = 0;
    /// The block size of the C SZx's own blocked mode (`SZx_fast_compress_args`).
    pub const BLOCK: c_int = 128;

    type CompressArgs = unsafe extern "C" fn(*mut c_void, c_int, *mut c_uchar, c_float, usize, c_int) -> usize;
    type DecompressBlocked = unsafe extern "C" fn(*mut c_void, c_int, usize, *mut c_uchar);

    extern "C" {
        fn free(p: *mut c_void);
    }

    /// The library and its blocked serial entry points.
    pub struct CSzx {
        lib_path: PathBuf,
        compress: CompressArgs,
        decompress: DecompressBlocked,
        _lib: libloading::Library,
    }

    /// Values the C decoder allocated (with `malloc`); freed on drop.
    pub struct CValues {
        ptr: *mut f32,
        len: usize,
    }

    impl std::ops::Deref for CValues {
        type Target = [f32];
        fn deref(&self) -> &[f32] {
            // SAFETY: the decoder filled `len` values at `ptr`, which we own until drop.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }

    impl Drop for CValues {
        fn drop(&mut self) {
            // SAFETY: allocated by the C library's malloc, freed once.
            unsafe { free(self.ptr as *mut c_void) }
        }
    }

    impl CSzx {
        /// Loads `path`: a `libSZx.so`, or an SZx source directory, which is built (once)
        /// into `target/szx-c-build` with `./configure CXXFLAGS=-O3 && make`.
        pub fn open(path: &Path) -> Result<Self, String> {
            let lib_path = if path.is_dir() { build(path)? } else { path.to_path_buf() };
            // SAFETY: loading runs the library's initialisers (plain C++ globals).
            let lib = unsafe { libloading::Library::new(&lib_path) }.map_err(|e| format!("{}: {e}", lib_path.display()))?;
            // SAFETY: the signatures are those of szx.h (v1.1.x).
            let (compress, decompress) = unsafe {
                let c = lib.get::<CompressArgs>(b"SZx_fast_compress_args_unpredictable_blocked_args\0").map_err(|e| e.to_string())?;
                let d = lib.get::<DecompressBlocked>(b"SZx_fast_decompress_args_unpredictable_blocked\0").map_err(|e| e.to_string())?;
                (*c, *d)
            };
            Ok(CSzx { lib_path, compress, decompress, _lib: lib })
        }

        /// Where the library was loaded from.
        pub fn describe(&self) -> String {
            self.lib_path.display().to_string()
        }

        /// Compresses `x` (f32, blocks of [`BLOCK`]) with absolute bound `e` into `out`;
        /// returns the stream's length.
        pub fn compress(&self, x: &[f32], e: f32, out: &mut [u8]) -> usize {
            assert!(out.len() >= max_compressed_len(x.len()), "C SZx output buffer too small");
            // SAFETY: the library reads `x.len()` floats and writes at most `out.len()` bytes.
            let n = unsafe { (self.compress)(x.as_ptr() as *mut c_void, SZX_FLOAT, out.as_mut_ptr(), e, x.len(), BLOCK) };
            assert!(n > 0 && n <= out.len(), "C SZx compress returned {n}");
            n
        }

        /// Decompresses a stream of `n` values into a buffer the library allocates.
        pub fn decompress(&self, stream: &[u8], n: usize) -> CValues {
            let mut ptr: *mut f32 = std::ptr::null_mut();
            // SAFETY: the library allocates `n` floats at `*ptr` and reads the stream,
            // which it wrote itself for `n` values.
            unsafe { (self.decompress)(&mut ptr as *mut *mut f32 as *mut c_void, SZX_FLOAT, n, stream.as_ptr() as *mut c_uchar) };
            assert!(!ptr.is_null(), "C SZx decompress allocated nothing");
            CValues { ptr, len: n }
        }
    }

    /// Room for any C SZx stream of `n` f32 values: it checks no output size, and a
    /// block that does not compress takes 5 bytes of header and `n / 4` of codes more
    /// than its values.
    pub fn max_compressed_len(n: usize) -> usize {
        n * 5 + 4096
    }

    /// Builds the C SZx from source directory `src` under `target/szx-c-build` (unless
    /// already built); returns the shared library's path.
    fn build(src: &Path) -> Result<PathBuf, String> {
        let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/szx-c-build");
        let lib = target.join("szx/.libs/libSZx.so");
        if lib.exists() {
            return Ok(lib);
        }
        let run = |cmd: &mut Command| -> Result<(), String> {
            let st = cmd.status().map_err(|e| format!("{cmd:?}: {e}"))?;
            st.success().then_some(()).ok_or_else(|| format!("{cmd:?} failed: {st}"))
        };
        // Its automake files expect an in-tree build: copy the sources first.
        std::fs::create_dir_all(&target).map_err(|e| e.to_string())?;
        run(Command::new("cp").arg("-r").arg(src.join(".")).arg(&target))?;
        run(Command::new("./configure").env("CXXFLAGS", "-O3").current_dir(&target))?;
        run(Command::new("make").arg("-j2").current_dir(&target))?;
        lib.exists().then_some(lib).ok_or_else(|| "built, but szx/.libs/libSZx.so is missing".into())
    }
}

/// glibc's allocator, set so that a large output is a fresh mapping (page faults on
/// first touch) or recycled, already touched memory, whichever the caller asks for: the
/// C SZx's decoder allocates its own output, and these settings put it in the same
/// situation as ours.
pub mod glibc_malloc {
    use std::ffi::c_int;

    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    const M_TRIM_THRESHOLD: c_int = -1;
    const M_MMAP_THRESHOLD: c_int = -3;
    const M_MMAP_MAX: c_int = -4;
    /// glibc's default `M_MMAP_MAX`.
    const DEFAULT_MMAP_MAX: c_int = 65536;

    fn set(param: c_int, value: c_int) {
        // SAFETY: mallopt only changes allocator parameters.
        assert_eq!(unsafe { mallopt(param, value) }, 1, "mallopt({param}, {value})");
    }

    /// Allocations of 1 MiB and more are fresh mappings (glibc's threshold otherwise
    /// moves with what was freed, so that a field of 26 MB gets recycled memory and one
    /// of 64 MiB does not), and freed heap memory is never given back to the system.
    pub fn fix_thresholds() {
        set(M_MMAP_THRESHOLD, 1 << 20);
        set(M_TRIM_THRESHOLD, c_int::MAX);
    }

    /// Lends recycled heap memory to the C SZx's decoder. glibc serves a request from
    /// the top of its heap whenever that is large enough, whatever the mapping
    /// threshold, so memory freed there would also reach the allocations meant to be
    /// fresh: between loans, this holds it.
    #[derive(Default)]
    pub struct Recycler {
        reserve: Vec<u8>,
    }

    impl Recycler {
        /// Runs `f`, which must free what it allocates before returning, with every
        /// allocation taken from the heap: after the first call, from the memory the
        /// previous call touched (the largest, `bytes`, is then held again).
        pub fn run<R>(&mut self, bytes: usize, f: impl FnOnce() -> R) -> R {
            let held = self.reserve.capacity().max(bytes);
            self.reserve = Vec::new();
            set(M_MMAP_MAX, 0);
            let r = f();
            set(M_MMAP_MAX, DEFAULT_MMAP_MAX);
            self.reserve = Vec::with_capacity(held);
            r
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

