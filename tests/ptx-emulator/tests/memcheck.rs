//! Memcheck: every global, local and parameter access is checked, and a launch that
//! breaks a rule fails with a diagnostic naming kernel, line, block, thread and address.

use ptx_emulator::{launch, AccessKind, Fault, LaunchDims, MemError, Memory, Module, Space};

const STORE_INDEX: &str = include_str!("data/store_index.ptx");

fn dims(grid: u32, block: u32) -> LaunchDims {
    LaunchDims { grid: [grid, 1, 1], block: [block, 1, 1] }
}

fn args(ptr: u64, n: u64) -> Vec<u8> {
    [ptr.to_le_bytes(), n.to_le_bytes()].concat()
}

/// 1-based line of the first line containing `needle` after `from`.
fn line_of(text: &str, from: &str, needle: &str) -> u32 {
    let start = text.find(from).unwrap();
    let at = start + text[start..].find(needle).unwrap();
    text[..at].lines().count() as u32
}

#[test]
fn planted_off_by_one_store_is_caught_and_the_fixed_kernel_passes() {
    let mut mem = Memory::new();
    let m = Module::load(STORE_INDEX, &mut mem).unwrap();
    let n = 40u64;
    let out = mem.alloc(n as usize * 4).unwrap();
    let bad = m.entry("store_index_off_by_one").unwrap();
    let fault = launch(&m, bad, dims(2, 32), &args(out, n), &mut mem).unwrap_err();
    let store_line = line_of(STORE_INDEX, "store_index_off_by_one(", "st.global.b32");
    match &fault {
        Fault::IllegalAddress { site, addr, size, kind, space, detail } => {
            assert_eq!(site.kernel, "store_index_off_by_one");
            assert_eq!(site.line, store_line);
            // Thread n = 40 is block 1, thread 8 of 32-thread blocks.
            assert_eq!(site.block, [1, 0, 0]);
            assert_eq!(site.thread, [8, 0, 0]);
            assert_eq!(*addr, out + 4 * n);
            assert_eq!((*size, *kind, *space), (4, AccessKind::Store, Space::Global));
            assert!(detail.contains("offset 160 of the 160-byte allocation"), "{detail}");
        }
        f => panic!("expected IllegalAddress, got {f}"),
    }
    assert_eq!(fault.cuda_error(), 700);
    let text = fault.to_string();
    for part in [format!("PTX line {store_line}"), "block (1,0,0)".into(), "thread (8,0,0)".into(), format!("{:#x}", out + 160)] {
        assert!(text.contains(&part), "{text} lacks {part}");
    }

    let good = m.entry("store_index").unwrap();
    let stats = launch(&m, good, dims(2, 32), &args(out, n), &mut mem).unwrap();
    let mut bytes = vec![0u8; n as usize * 4];
    mem.read(out, &mut bytes).unwrap();
    let got: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(got, (0..n as u32).map(|i| 3 * i).collect::<Vec<_>>());
    assert_eq!(stats.threads, 64);
    assert_eq!(stats.global_store, n);
    assert_eq!(stats.global_store_bytes, 4 * n);
}

/// A one-thread kernel `k(.u64 p)` with `body` after `ld.param` of p into %rd1.
fn kernel(body: &str) -> String {
    format!(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
.local .align 8 .b8 __local_depot0[16];\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
ld.param.u64 %rd1, [p];\n{body}\nret;\n}}\n"
    )
}

fn run(body: &str, p: u64, mem: &mut Memory) -> Result<ptx_emulator::LaunchStats, Fault> {
    let m = Module::load(&kernel(body), mem).unwrap_or_else(|e| panic!("{e}"));
    launch(&m, m.entry("k").unwrap(), dims(1, 1), &p.to_le_bytes(), mem)
}

#[test]
fn global_accesses_are_checked() {
    let mut mem = Memory::new();
    let a = mem.alloc(12).unwrap();
    // In bounds, aligned: fine.
    run("ld.global.b32 %r1, [%rd1+8];", a, &mut mem).unwrap();
    // Straddling the end.
    match run("ld.global.b64 %rd2, [%rd1+8];", a, &mut mem).unwrap_err() {
        Fault::IllegalAddress { addr, size: 8, kind: AccessKind::Load, detail, .. } => {
            assert_eq!(addr, a + 8);
            assert!(detail.contains("straddles the end"), "{detail}");
        }
        f => panic!("{f}"),
    }
    // Misaligned to the access size.
    match run("st.global.b32 [%rd1+2], 7;", a, &mut mem).unwrap_err() {
        f @ Fault::Misaligned { .. } => assert_eq!(f.cuda_error(), 700),
        f => panic!("{f}"),
    }
    // Vector accesses must be aligned to the whole vector.
    assert!(matches!(run("ld.global.v2.b32 {%r1, %r2}, [%rd1+4];", a, &mut mem), Err(Fault::Misaligned { .. })));
    // Generic accesses to global memory are checked the same way.
    assert!(matches!(run("ld.b32 %r1, [%rd1+12];", a, &mut mem), Err(Fault::IllegalAddress { space: Space::Global, .. })));
    // Never allocated (null).
    assert!(matches!(run("ld.global.b8 %r1, [%rd1];", 0, &mut mem), Err(Fault::IllegalAddress { .. })));
    // Use after free.
    mem.free(a).unwrap();
    match run("st.global.b8 [%rd1+3], 1;", a, &mut mem).unwrap_err() {
        Fault::IllegalAddress { detail, .. } => assert!(detail.contains("use after free"), "{detail}"),
        f => panic!("{f}"),
    }
    // Atomics too.
    let b = mem.alloc(8).unwrap();
    run("atom.global.or.b64 %rd2, [%rd1], 6;", b, &mut mem).unwrap();
    assert!(matches!(run("atom.global.or.b64 %rd2, [%rd1+8], 6;", b, &mut mem), Err(Fault::IllegalAddress { kind: AccessKind::Atomic, .. })));
}

#[test]
fn local_accesses_are_checked_against_the_frame() {
    let mut mem = Memory::new();
    // Within the 16-byte depot, directly and through a generic address.
    let ok = "mov.u64 %rd2, __local_depot0; st.local.b64 [%rd2+8], 5; cvta.local.u64 %rd3, %rd2; ld.b64 %rd4, [%rd3+8]; \
              setp.ne.b64 %p1, %rd4, 5; @%p1 trap;";
    run(ok, 0, &mut mem).unwrap();
    match run("mov.u64 %rd2, __local_depot0; st.local.b32 [%rd2+16], 1;", 0, &mut mem).unwrap_err() {
        Fault::IllegalAddress { space: Space::Local, kind: AccessKind::Store, detail, .. } => {
            assert!(detail.contains("local frames"), "{detail}")
        }
        f => panic!("{f}"),
    }
    assert!(matches!(
        run("mov.u64 %rd2, __local_depot0; ld.local.b32 %r1, [%rd2+-4];", 0, &mut mem),
        Err(Fault::IllegalAddress { space: Space::Local, .. })
    ));
    assert!(matches!(run("mov.u64 %rd2, __local_depot0; ld.local.b32 %r1, [%rd2+2];", 0, &mut mem), Err(Fault::Misaligned { .. })));
}

#[test]
fn launches_are_checked() {
    let mut mem = Memory::new();
    let m = Module::load(STORE_INDEX, &mut mem).unwrap();
    let e = m.entry("store_index").unwrap();
    assert_eq!(m.param_buffer_size(e), 16);
    let out = mem.alloc(64).unwrap();
    match launch(&m, e, dims(1, 1), &out.to_le_bytes(), &mut mem).unwrap_err() {
        f @ Fault::ParamMismatch { expected: 16, got: 8, .. } => assert_eq!(f.cuda_error(), 1),
        f => panic!("{f}"),
    }
    for bad in [
        LaunchDims { grid: [1, 1, 1], block: [1025, 1, 1] },
        LaunchDims { grid: [1, 1, 1], block: [32, 32, 2] },
        LaunchDims { grid: [0, 1, 1], block: [1, 1, 1] },
        LaunchDims { grid: [1 << 31, 1, 1], block: [1, 1, 1] },
        LaunchDims { grid: [1, 65536, 1], block: [1, 1, 1] },
    ] {
        let f = launch(&m, e, bad, &args(out, 16), &mut mem).unwrap_err();
        assert!(matches!(f, Fault::InvalidLaunch(_)), "{bad:?}: {f}");
        assert_eq!(f.cuda_error(), 1);
    }
}

#[test]
fn trap_fails_the_launch() {
    let mut mem = Memory::new();
    let f = run("trap;", 0, &mut mem).unwrap_err();
    assert!(matches!(f, Fault::Trap { .. }), "{f}");
    assert_eq!(f.cuda_error(), 719);
    assert!(f.to_string().contains("PTX line 11"), "{f}");
}

#[test]
fn host_memory_operations_are_checked() {
    let mut mem = Memory::new();
    assert_eq!(mem.alloc(0), Err(MemError::ZeroSize));
    assert!(matches!(mem.alloc(usize::MAX), Err(MemError::OutOfMemory(_))));
    assert!(matches!(mem.alloc(ptx_emulator::DEFAULT_CAPACITY + 1), Err(MemError::OutOfMemory(_))));
    let mut small = Memory::with_capacity(1000);
    let x = small.alloc(600).unwrap();
    assert_eq!(small.alloc(600), Err(MemError::OutOfMemory(600)));
    small.free(x).unwrap();
    small.alloc(600).unwrap();
    let a = mem.alloc(10).unwrap();
    let b = mem.alloc(300).unwrap();
    assert_eq!(a % 256, 0);
    assert_eq!(b % 256, 0);
    assert_eq!(mem.live_bytes(), 310);
    assert_eq!(mem.allocation_of(a + 9), Some((a, 10)));
    assert_eq!(mem.allocation_of(a + 10), None);
    assert!(mem.write(a + 8, &[1, 2, 3]).is_err());
    mem.fill(b, &[1, 2], 150).unwrap();
    assert!(mem.fill(b, &[1, 2], 151).is_err());
    assert_eq!(mem.fill(b, &[1, 2, 3], 1), Err(MemError::BadPattern(3)));
    let mut x = [0u8; 4];
    mem.read(b + 296, &mut x).unwrap();
    assert_eq!(x, [1, 2, 1, 2]);
    assert_eq!(mem.free(a + 1), Err(MemError::NotABase(a + 1)));
    mem.free(a).unwrap();
    assert_eq!(mem.free(a), Err(MemError::NotABase(a)));
    // Freed ranges are never handed out again.
    let c = mem.alloc(10).unwrap();
    assert!(c > b);
    assert_eq!(mem.live_bytes(), 310);
}

/// Malformed text gets a LoadError, never a panic: every third truncation of the test
/// kernels, a kernel with a dangling label and register, and sizes no device could hold.
#[test]
fn truncated_or_garbled_modules_are_refused_cleanly() {
    let mut mem = Memory::new();
    for cut in (0..STORE_INDEX.len()).step_by(3) {
        let _ = Module::load(&STORE_INDEX[..cut], &mut mem);
    }
    let garbled = STORE_INDEX.replace("%rd5", "%rd9").replace("$L__BB1_2:", "");
    assert!(Module::load(&garbled, &mut mem).is_err());
    for bad in ["\u{1}", ".reg .b32 %r<99999999999>;", ".visible .entry k(.param .b8 x[18446744073709551615]) { ret; }",
                ".global .b8 big[1099511627776];", ".visible .entry k() { .local .b8 d[4294967296]; ret; }"] {
        let text = format!(".version 7.0\n.target sm_80\n.address_size 64\n{bad}\n");
        assert!(Module::load(&text, &mut mem).is_err(), "{bad}");
    }
    assert_eq!(mem.live_bytes(), 0);
}
