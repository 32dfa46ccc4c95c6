//! Control flow, calls, special registers, module variables, refused constructs and the
//! work counters.

use ptx_emulator::{launch, Fault, LaunchDims, LoadError, Memory, Module};

const HEAD: &str = ".version 7.0\n.target sm_80\n.address_size 64\n";

fn load(text: &str, mem: &mut Memory) -> Module {
    Module::load(text, mem).unwrap_or_else(|e| panic!("{e}"))
}

fn read_u64s(mem: &Memory, addr: u64, n: usize) -> Vec<u64> {
    let mut b = vec![0u8; n * 8];
    mem.read(addr, &mut b).unwrap();
    b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn special_registers_cover_the_grid() {
    let text = format!(
        "{HEAD}.visible .entry ids(.param .u64 out)\n{{\n.reg .b32 %r<12>;\n.reg .b64 %rd<8>;\n\
ld.param.u64 %rd1, [out];\n\
mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %ntid.x; mov.u32 %r4, %ntid.y;\n\
mov.u32 %r5, %ctaid.x; mov.u32 %r6, %ctaid.y; mov.u32 %r7, %nctaid.x;\n\
mad.lo.s32 %r8, %r2, %r3, %r1;\n\
mad.lo.s32 %r9, %r6, %r7, %r5;\n\
mul.lo.s32 %r10, %r3, %r4;\n\
mad.lo.s32 %r11, %r9, %r10, %r8;\n\
mul.wide.u32 %rd2, %r11, 8;\nadd.s64 %rd3, %rd1, %rd2;\n\
mov.u32 %r1, %nctaid.y; cvt.u64.u32 %rd4, %r1; shl.b64 %rd4, %rd4, 32; cvt.u64.u32 %rd5, %r11; or.b64 %rd5, %rd5, %rd4;\n\
st.global.u64 [%rd3], %rd5;\nret;\n}}\n"
    );
    let mut mem = Memory::new();
    let m = load(&text, &mut mem);
    let (grid, block) = ([3u32, 2, 1], [4u32, 2, 1]);
    let n = 48;
    let out = mem.alloc(n * 8).unwrap();
    let stats = launch(&m, m.entry("ids").unwrap(), LaunchDims { grid, block }, &out.to_le_bytes(), &mut mem).unwrap();
    // Every thread wrote its linear id (and nctaid.y = 2 in the high word) to its own slot.
    let want: Vec<u64> = (0..n as u64).map(|i| i | 2 << 32).collect();
    assert_eq!(read_u64s(&mem, out, n), want);
    assert_eq!(stats.threads, n as u64);
}

#[test]
fn calls_pass_parameters_and_return_values() {
    let text = format!(
        "{HEAD}.func (.param .b64 func_retval0) add3(\n.param .b64 add3_param_0,\n.param .b32 add3_param_1\n)\n{{\n\
.reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
ld.param.b64 %rd1, [add3_param_0];\nld.param.b32 %r1, [add3_param_1];\ncvt.u64.u32 %rd2, %r1;\n\
add.s64 %rd3, %rd1, %rd2;\nadd.s64 %rd3, %rd3, 3;\nst.param.b64 [func_retval0], %rd3;\nret;\n}}\n\
.visible .entry k(.param .u64 out)\n{{\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\n\
{{ // callseq 0, 0\n.param .b64 param0;\n.param .b32 param1;\n.param .b64 retval0;\n\
st.param.b64 [param0], 100;\nst.param.b32 [param1], 20;\n\
call.uni (retval0), add3, (param0, param1);\nld.param.b64 %rd2, [retval0];\n}} // callseq 0\n\
st.global.u64 [%rd1], %rd2;\nret;\n}}\n"
    );
    let mut mem = Memory::new();
    let m = load(&text, &mut mem);
    assert_eq!(m.entry_names(), vec!["k"]);
    assert!(m.entry("add3").is_none(), ".func is not an entry");
    let out = mem.alloc(8).unwrap();
    launch(&m, m.entry("k").unwrap(), LaunchDims { grid: [1; 3], block: [1; 3] }, &out.to_le_bytes(), &mut mem).unwrap();
    assert_eq!(read_u64s(&mem, out, 1), vec![123]);
}

#[test]
fn indexed_branches_and_module_globals() {
    let text = format!(
        "{HEAD}.global .align 4 .b8 table[8] = {{5, 0, 0, 0, 9, 0, 0, 0}};\n\
.visible .entry k(.param .u64 out, .param .u32 idx)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [out];\nld.param.u32 %r1, [idx];\n\
$L_brx_0: .branchtargets\n\t$L0,\n\t$L1;\n\
brx.idx %r1, $L_brx_0;\n\
$L0:\nld.global.u32 %r2, [table];\nbra.uni $L2;\n\
$L1:\nmov.u64 %rd2, table;\nld.global.u32 %r2, [%rd2+4];\n\
$L2:\nst.global.u32 [%rd1], %r2;\nret;\n}}\n"
    );
    let mut mem = Memory::new();
    let m = load(&text, &mut mem);
    let (g, size) = m.global("table").unwrap();
    assert_eq!(size, 8);
    assert_eq!(mem.allocation_of(g), Some((g, 8)));
    let out = mem.alloc(4).unwrap();
    let e = m.entry("k").unwrap();
    let one = LaunchDims { grid: [1; 3], block: [1; 3] };
    let params = |i: u32| [out.to_le_bytes().as_slice(), &i.to_le_bytes()].concat();
    for (i, want) in [(0u32, 5u32), (1, 9)] {
        launch(&m, e, one, &params(i), &mut mem).unwrap();
        let mut b = [0u8; 4];
        mem.read(out, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), want);
    }
    // An index past the target list is undefined behaviour: the launch fails.
    let f = launch(&m, e, one, &params(2), &mut mem).unwrap_err();
    assert!(matches!(f, Fault::Undefined { .. }), "{f}");
    let before = mem.live_bytes();
    m.unload(&mut mem);
    assert_eq!(mem.live_bytes(), before - 8);
}

/// Constructs the interpreter refuses at load time, with the line named.
#[test]
fn unsupported_constructs_are_refused_with_their_line() {
    let cases = [
        ("bar.sync 0;", "cross-thread"),
        ("shfl.sync.idx.b32 %r1, %r1, 0, 31, -1;", "cross-thread"),
        ("vote.sync.any.pred %p1, %p1, -1;", "cross-thread"),
        ("redux.sync.add.u32 %r1, %r1, -1;", "cross-thread"),
        ("match.any.sync.b32 %r1, %r1, -1;", "cross-thread"),
        ("div.approx.f32 %f1, %f1, %f1;", "div.approx"),
        ("add.rz.f32 %f1, %f1, %f1;", "round-to-nearest"),
        ("sin.approx.f32 %f1, %f1;", "sin.approx"),
        ("ld.shared.b32 %r1, [%rd1];", "shared"),
        ("addc.cc.u32 %r1, %r1, %r1;", "addc"),
    ];
    let mut mem = Memory::new();
    for (inst, what) in cases {
        let text = format!(
            "{HEAD}.visible .entry k()\n{{\n.reg .pred %p<2>;\n.reg .b32 %r<2>;\n.reg .f32 %f<2>;\n.reg .b64 %rd<2>;\n{inst}\nret;\n}}\n"
        );
        match Module::load(&text, &mut mem) {
            Err(e @ LoadError::Unsupported { line: 10, .. }) => assert!(e.to_string().contains(what), "{inst}: {e}"),
            Err(e) => panic!("{inst}: wrong error {e}"),
            Ok(_) => panic!("{inst} was accepted"),
        }
    }
    let shared = format!("{HEAD}.shared .align 4 .b8 buf[64];\n");
    assert!(matches!(Module::load(&shared, &mut mem), Err(LoadError::Unsupported { line: 4, .. })));
    let undeclared = format!("{HEAD}.visible .entry k()\n{{\nmov.u32 %r1, 1;\nret;\n}}\n");
    assert!(matches!(Module::load(&undeclared, &mut mem), Err(LoadError::Syntax { line: 6, .. })));
    // Nothing leaked from the failed loads.
    assert_eq!(mem.live_bytes(), 0);
}

#[test]
fn work_counters_count_each_class() {
    // Per thread: 1 param load, 2 int ALU (mov, add), 1 fp32, 1 fp64, 1 conversion,
    // 1 predicate (setp), 1 local store + 1 local load, 1 global store + 1 global load,
    // 1 global atomic, 1 branch (not taken, still counted), 1 ret; a predicated-off
    // instruction is not counted.
    let text = format!(
        "{HEAD}.visible .entry k(.param .u64 p)\n{{\n.local .align 8 .b8 __local_depot0[8];\n\
.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .f32 %f<2>;\n.reg .f64 %fd<2>;\n.reg .b64 %rd<6>;\n\
ld.param.u64 %rd1, [p];\nmov.u64 %rd2, __local_depot0;\nadd.s64 %rd3, %rd1, 8;\n\
add.f32 %f1, 0f3F800000, 0f3F800000;\nadd.f64 %fd1, 0d3FF0000000000000, 0d3FF0000000000000;\n\
cvt.rzi.s32.f32 %r1, %f1;\nsetp.eq.s32 %p1, %r1, 7;\n\
st.local.b64 [%rd2], %rd1;\nld.local.b64 %rd4, [%rd2];\n\
st.global.b32 [%rd1], %r1;\nld.global.b32 %r2, [%rd1];\natom.global.or.b64 %rd5, [%rd3], 1;\n\
@%p1 mov.u32 %r3, 1;\n@%p1 bra $L;\n$L:\nret;\n}}\n"
    );
    let mut mem = Memory::new();
    let m = load(&text, &mut mem);
    let buf = mem.alloc(16).unwrap();
    let dims = LaunchDims { grid: [2, 1, 1], block: [3, 1, 1] };
    let s = launch(&m, m.entry("k").unwrap(), dims, &buf.to_le_bytes(), &mut mem).unwrap();
    assert_eq!(s.threads, 6);
    let per = |x: u64| x * 6;
    assert_eq!((s.param_other, s.int_alu, s.fp32, s.fp64, s.conversion, s.predicate), (per(1), per(2), per(1), per(1), per(1), per(1)));
    assert_eq!((s.local_store, s.local_load, s.global_store, s.global_load, s.global_atomic), (per(1), per(1), per(1), per(1), per(1)));
    assert_eq!(s.control, per(1));
    assert_eq!((s.local_store_bytes, s.local_load_bytes, s.global_store_bytes, s.global_load_bytes), (per(8), per(8), per(4), per(4)));
    assert_eq!(s.instructions(), per(13));
    let mut total = s.clone();
    total.add(&s);
    assert_eq!(total.instructions(), 2 * s.instructions());
}

#[test]
fn a_launch_that_does_not_terminate_times_out() {
    let text = format!("{HEAD}.visible .entry spin()\n{{\n$L:\nbra.uni $L;\n}}\n");
    let mut mem = Memory::new();
    let m = load(&text, &mut mem);
    let one = LaunchDims { grid: [1; 3], block: [1; 3] };
    let limits = ptx_emulator::Limits { max_instructions: 1_000_000 };
    let f = ptx_emulator::launch_with(&m, m.entry("spin").unwrap(), one, &[], &mut mem, limits).unwrap_err();
    assert!(matches!(f, Fault::Timeout { limit: 1_000_000, .. }), "{f}");
    assert_eq!(f.cuda_error(), 702);
}

#[test]
fn parser_accepts_the_forms_llvm_writes() {
    // Block comments, .pragma, .loc/.file lines, negative address offsets written `+-8`,
    // vector loads/stores in local memory, and a .func prototype before its definition.
    let text = format!(
        "{HEAD}.file 1 \"k.rs\"\n.func noop\n()\n;\n\
.visible .entry k(\n\t.param .u64 .ptr .global .align 8 k_param_0\n)\n.maxntid 64, 1, 1\n{{\n\
\t.local .align 8 .b8 \t__local_depot0[16];\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<6>;\n\
\t/* a block\n comment */\n\t.pragma \"nounroll\";\n\t.loc 1 2 3\n\
\tld.param.b64 %rd1, [k_param_0];\n\tmov.b64 %rd2, __local_depot0;\n\tadd.s64 %rd3, %rd2, 8;\n\
\tst.local.v2.b32 [%rd3+-8], {{%r1, %r2}};\n\tmov.b32 %r1, 7;\n\tmov.b32 %r2, 9;\n\
\tst.local.v2.b32 [%rd3+-8], {{%r1, %r2}};\n\tld.local.v2.b32 {{%r3, %r1}}, [%rd2];\n\
\t{{ // callseq 0, 0\n\tcall.uni noop, ();\n\t}} // callseq 0\n\
\tst.global.b32 [%rd1], %r3;\n\tst.global.b32 [%rd1+4], %r1;\n\tret;\n}}\n\
.func noop()\n{{\n\tret;\n}}\n"
    );
    let mut mem = Memory::new();
    let m = load(&text, &mut mem);
    let out = mem.alloc(8).unwrap();
    launch(&m, m.entry("k").unwrap(), LaunchDims { grid: [1; 3], block: [1; 3] }, &out.to_le_bytes(), &mut mem).unwrap();
    assert_eq!(read_u64s(&mem, out, 1), vec![7 | 9 << 32]);
}

#[test]
fn modules_and_memory_can_move_between_threads() {
    // The driver runs launches on stream worker threads and shares loaded modules.
    fn shareable<T: Send + Sync>() {}
    shareable::<Module>();
    shareable::<Memory>();
    shareable::<Fault>();
}
