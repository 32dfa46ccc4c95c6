//! The pre-decoded form the interpreter executes: every operand a register-file slot
//! (immediates and symbol addresses live in constant slots), labels resolved to
//! instruction indices, call sites to callee indices and parameter offsets.

use crate::alu::{Cmp, CmpTy, FOp, FUnOp, IntOp, TestOp, UnOp};
use crate::cvt::{Rnd, Ty};

/// Index of a slot in a frame's register file.
pub(crate) type Reg = u32;

/// Slots every frame has: the special registers %tid/%ntid/%ctaid/%nctaid (.x/.y/.z),
/// the local-space address of the frame's local area, and a sink for `_`.
pub(crate) const SPECIAL_REGS: [&str; 12] = [
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x",
    "%nctaid.y", "%nctaid.z",
];
pub(crate) const SLOT_LOCAL_BASE: Reg = 12;
pub(crate) const SLOT_SINK: Reg = 13;
pub(crate) const FIRST_FREE_SLOT: Reg = 14;

/// Memory space of a load or store after decoding (`.param` has its own ops).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemSpace {
    Global,
    Local,
    Generic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AtomOp {
    And,
    Or,
    Xor,
    Exch,
    Add,
    AddF32,
    AddF64,
    MinU,
    MinS,
    MaxU,
    MaxS,
    Inc,
    Dec,
    Cas,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MadOp {
    Lo,
    HiU,
    HiS,
    WideU,
    WideS,
}

/// Work classes counted per launch (indices into the counter array).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Class {
    IntAlu,
    Fp32,
    Fp64,
    Conversion,
    Control,
    Predicate,
    GlobalLoad,
    GlobalStore,
    GlobalAtomic,
    LocalLoad,
    LocalStore,
    ParamOther,
    /// Memory operations whose class depends on the address (generic space): the
    /// executor counts them itself.
    Dynamic,
}
pub(crate) const CLASSES: usize = 13;

#[derive(Clone, Debug)]
pub(crate) enum Op {
    Int { op: IntOp, bits: u8, d: Reg, a: Reg, b: Reg },
    Un { op: UnOp, bits: u8, d: Reg, a: Reg },
    MulWide { signed: bool, bits: u8, d: Reg, a: Reg, b: Reg },
    Mad { op: MadOp, bits: u8, d: Reg, a: Reg, b: Reg, c: Reg },
    Bfe { signed: bool, bits: u8, d: Reg, a: Reg, b: Reg, c: Reg },
    Bfi { bits: u8, d: Reg, a: Reg, b: Reg, c: Reg, e: Reg },
    Prmt { mode: u8, d: Reg, a: Reg, b: Reg, c: Reg },
    Mov { d: Reg, a: Reg, mask: u64 },
    /// mov d, {a0, a1, ..}: `n` elements of `bits` each, element 0 in the low bits.
    Pack { d: Reg, a: [Reg; 4], n: u8, bits: u8 },
    /// mov {d0, d1, ..}, a: the inverse of Pack.
    Unpack { d: [Reg; 4], a: Reg, n: u8, bits: u8 },
    Selp { d: Reg, a: Reg, b: Reg, p: Reg },
    Setp { cmp: Cmp, ty: CmpTy, p: Reg, q: Reg, a: Reg, b: Reg, comb: Option<(BoolOp, Reg, bool)> },
    F32 { op: FOp, ftz: bool, sat: bool, d: Reg, a: Reg, b: Reg },
    F64 { op: FOp, sat: bool, d: Reg, a: Reg, b: Reg },
    Fma { f64: bool, ftz: bool, sat: bool, d: Reg, a: Reg, b: Reg, c: Reg },
    FUn { op: FUnOp, f64: bool, ftz: bool, d: Reg, a: Reg },
    Testp { op: TestOp, f64: bool, d: Reg, a: Reg },
    Copysign { f64: bool, d: Reg, a: Reg, b: Reg },
    Cvt { from: Ty, to: Ty, rnd: Rnd, sat: bool, ftz: bool, d: Reg, a: Reg },
    /// Local-space address of the frame's local area plus `off`.
    LocalAddr { d: Reg, off: u32 },
    /// cvta.local: local-space address to generic.
    LocalToGeneric { d: Reg, a: Reg },
    /// cvta.to.local: generic address to local space.
    GenericToLocal { d: Reg, a: Reg },
    /// `n` elements of `size` bytes from `[addr + off]`, each extended to `dbits`.
    Ld { space: MemSpace, size: u8, n: u8, sext: bool, dbits: u8, d: [Reg; 4], addr: Reg, off: i64 },
    St { space: MemSpace, size: u8, n: u8, v: [Reg; 4], addr: Reg, off: i64 },
    /// Parameter space: the frame's incoming buffer, or (`out`) its outgoing call area.
    LdParam { out: bool, off: u32, size: u8, n: u8, sext: bool, dbits: u8, d: [Reg; 4] },
    StParam { out: bool, off: u32, size: u8, n: u8, v: [Reg; 4] },
    Atom { space: MemSpace, op: AtomOp, bits: u8, d: Reg, addr: Reg, off: i64, b: Reg, c: Reg },
    Bra { target: u32 },
    Brx { idx: Reg, table: u32 },
    Call { site: u32 },
    Ret,
    Exit,
    Trap,
    /// Fences and other instructions with no effect under sequential execution.
    Nop,
}

#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub op: Op,
    /// Guard predicate slot, or u32::MAX for none.
    pub guard: Reg,
    pub guard_neg: bool,
    pub class: Class,
}

/// A parameter (or return value) of a function in its incoming parameter buffer.
#[derive(Clone, Debug)]
pub(crate) struct ParamSlot {
    pub name: String,
    pub off: u32,
    pub size: u32,
    pub align: u32,
}

/// How a call site moves bytes: caller's outgoing area <-> callee's incoming buffer.
#[derive(Clone, Debug)]
pub(crate) struct CallSite {
    pub callee: usize,
    /// (caller out offset, callee in offset, size) per argument.
    pub args: Vec<(u32, u32, u32)>,
    /// (callee in offset, caller out offset, size) per return value.
    pub rets: Vec<(u32, u32, u32)>,
}

#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub name: String,
    pub entry: bool,
    pub params: Vec<ParamSlot>,
    /// Size of the incoming parameter buffer (params, then return values).
    pub in_size: u32,
    /// None for a declared but undefined function.
    pub body: Option<Body>,
}

#[derive(Clone, Debug)]
pub(crate) struct Body {
    pub code: Vec<Inst>,
    /// PTX line of each instruction.
    pub lines: Vec<u32>,
    /// Initial register file: zeros, constants in their slots.
    pub init_regs: Vec<u64>,
    pub local_size: u32,
    pub local_align: u32,
    pub out_size: u32,
    pub tables: Vec<Vec<u32>>,
    pub calls: Vec<CallSite>,
}
