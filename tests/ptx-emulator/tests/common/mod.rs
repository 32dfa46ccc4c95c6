//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// target/ptx of the workspace, where `cargo xtask build-ptx` writes.
pub fn ptx_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/ptx"))
}

/// The three PTX modules as (sm version, text), or None (with a visible note) when they
/// have not been built. With CCOLL_REQUIRE_PTX=1 (as CI sets after building them) a
/// missing file fails the test instead.
pub fn ptx_files() -> Option<Vec<(u32, String)>> {
    let dir = ptx_dir();
    let files: Vec<_> = [70, 80, 90]
        .into_iter()
        .map(|a| (a, std::fs::read_to_string(dir.join(format!("codec_kernels.sm_{a}.ptx")))))
        .collect();
    if files.iter().any(|f| f.1.is_err()) {
        assert!(
            std::env::var_os("CCOLL_REQUIRE_PTX").is_none(),
            "CCOLL_REQUIRE_PTX is set but {} lacks the PTX: run `cargo xtask build-ptx`",
            dir.display()
        );
        eprintln!("SKIPPED: no PTX in {} (run `cargo xtask build-ptx`)", dir.display());
        return None;
    }
    Some(files.into_iter().map(|(a, t)| (a, t.unwrap())).collect())
}

/// One PTX module (sm_80), if built.
pub fn ptx_sm80() -> Option<String> {
    ptx_files().map(|mut v| v.swap_remove(1).1)
}

use ptx_emulator::{launch, LaunchDims, LaunchStats, Memory, Module};

/// Plain values that move between host and device as little-endian bytes.
pub trait Plain: Copy {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}
macro_rules! plain {
    ($($t:ty),*) => {$(
        impl Plain for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_le_bytes()) }
            fn get(b: &[u8]) -> Self { <$t>::from_le_bytes(b.try_into().unwrap()) }
        }
    )*};
}
plain!(u8, u16, u32, u64, i32, f32, f64);

/// An emulated device with one module loaded.
pub struct Dev {
    pub mem: Memory,
    pub module: Module,
}

impl Dev {
    pub fn new(ptx: &str) -> Dev {
        let mut mem = Memory::new();
        let module = Module::load(ptx, &mut mem).unwrap_or_else(|e| panic!("load: {e}"));
        Dev { mem, module }
    }

    /// A device copy of `v` (at least one byte, so empty inputs still get an address).
    pub fn upload<T: Plain>(&mut self, v: &[T]) -> u64 {
        let mut bytes = Vec::with_capacity(v.len() * T::SIZE);
        v.iter().for_each(|x| x.put(&mut bytes));
        let a = self.mem.alloc(bytes.len().max(1)).unwrap();
        self.mem.write(a, &bytes).unwrap();
        a
    }

    pub fn zeroed<T: Plain>(&mut self, n: usize) -> u64 {
        self.mem.alloc((n * T::SIZE).max(1)).unwrap()
    }

    pub fn download<T: Plain>(&self, addr: u64, n: usize) -> Vec<T> {
        let mut bytes = vec![0u8; n * T::SIZE];
        self.mem.read(addr, &mut bytes).unwrap();
        bytes.chunks_exact(T::SIZE).map(T::get).collect()
    }

    /// Packs `args` (each given as its bits, written in the parameter's size) into the
    /// entry's parameter buffer.
    pub fn params(&self, name: &str, args: &[u64]) -> Vec<u8> {
        let e = self.module.entry(name).unwrap_or_else(|| panic!("no entry {name}"));
        let params = self.module.params(e);
        assert_eq!(params.len(), args.len(), "{name} takes {} arguments", params.len());
        let mut buf = vec![0u8; self.module.param_buffer_size(e)];
        for (p, a) in params.iter().zip(args) {
            buf[p.offset..p.offset + p.size].copy_from_slice(&a.to_le_bytes()[..p.size]);
        }
        buf
    }

    pub fn launch(&mut self, name: &str, grid: u32, block: u32, args: &[u64]) -> LaunchStats {
        let buf = self.params(name, args);
        let e = self.module.entry(name).unwrap();
        let dims = LaunchDims { grid: [grid, 1, 1], block: [block, 1, 1] };
        launch(&self.module, e, dims, &buf, &mut self.mem).unwrap_or_else(|f| panic!("{name}: {f}"))
    }
}
