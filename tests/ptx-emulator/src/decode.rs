//! Syntax tree to the executable form: resolves names, checks every instruction against
//! what the interpreter implements, and refuses the rest with the PTX line.

use std::collections::HashMap;

use crate::alu::{mask, Cmp, CmpTy, FOp, FUnOp, IntOp, TestOp, UnOp};
use crate::cvt::{Kind, Rnd, Ty};
use crate::ir::*;
use crate::parse::{FuncAst, Imm, InstAst, Operand, Stmt, VarDecl};
use crate::LoadError;

fn unsupported<T>(line: u32, message: impl Into<String>) -> Result<T, LoadError> {
    Err(LoadError::Unsupported { line, message: message.into() })
}
fn syntax<T>(line: u32, message: impl Into<String>) -> Result<T, LoadError> {
    Err(LoadError::Syntax { line, message: message.into() })
}

/// Bytes of one element of a declared type (`.b8` .. `.f64`, `.pred` as 1).
pub(crate) fn type_bytes(ty: &str, line: u32) -> Result<u64, LoadError> {
    match Ty::parse(ty) {
        Some(t) if t.kind == Kind::Pred => Ok(1),
        Some(t) => Ok(t.bits as u64 / 8),
        None => unsupported(line, format!("type {ty}")),
    }
}

/// (size, align) of a parameter or variable declaration.
pub(crate) fn decl_layout(d: &VarDecl, init_len: Option<u64>) -> Result<(u64, u64), LoadError> {
    let elem = type_bytes(d.ty, d.line)? * d.vec;
    let count = match d.array {
        None => 1,
        Some(Some(n)) => n,
        Some(None) => init_len.ok_or(LoadError::Syntax { line: d.line, message: format!("{}[] without size", d.name) })?,
    };
    let size = elem.checked_mul(count).ok_or(LoadError::Syntax { line: d.line, message: "size overflows".into() })?;
    let align = d.align.unwrap_or(elem).max(1);
    if !align.is_power_of_two() {
        return syntax(d.line, format!("alignment {align} is not a power of two"));
    }
    Ok((size, align))
}

pub(crate) fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// Lays out parameter declarations as CUDA packs them: each at its own alignment.
pub(crate) fn layout_params(decls: &[VarDecl], start: u64) -> Result<(Vec<ParamSlot>, u64), LoadError> {
    let mut off = start;
    let mut out = Vec::new();
    for d in decls {
        if d.space != ".param" {
            return unsupported(d.line, format!("{} parameters (only .param)", d.space));
        }
        let (size, align) = decl_layout(d, None)?;
        off = align_up(off, align);
        let too_big = || LoadError::Unsupported { line: d.line, message: "parameter space over 4 GiB".into() };
        out.push(ParamSlot {
            name: d.name.to_string(),
            off: u32::try_from(off).map_err(|_| too_big())?,
            size: u32::try_from(size).map_err(|_| too_big())?,
            align: align as u32,
        });
        off += size;
    }
    Ok((out, off))
}

/// What the module provides to every function body.
pub(crate) struct ModuleNames<'m> {
    /// Module variables: name -> device address.
    pub vars: &'m HashMap<String, u64>,
    /// Functions: name -> index, and their signatures.
    pub funcs: &'m HashMap<String, usize>,
    pub sigs: &'m [(Vec<ParamSlot>, Vec<ParamSlot>)],
}

/// A name's meaning in a parameter-space address.
enum ParamRef {
    /// The frame's incoming buffer (own parameters and return values).
    In(u32, u32),
    /// The outgoing call area (parameters declared in a call block).
    Out(u32, u32),
}

struct FnDecoder<'a, 'm> {
    m: &'m ModuleNames<'m>,
    /// Register ranges `%r<N>`: prefix -> (first slot, count, type).
    ranges: HashMap<&'a str, (u32, u32, Ty)>,
    /// Individually declared registers.
    named: HashMap<&'a str, (u32, Ty)>,
    init: Vec<u64>,
    consts: HashMap<u64, u32>,
    locals: HashMap<&'a str, u32>,
    local_size: u64,
    local_align: u64,
    own_params: HashMap<&'a str, (u32, u32)>,
    scopes: Vec<Vec<(&'a str, u32, u32)>>,
    out_cur: u64,
    out_size: u64,
    labels: HashMap<&'a str, u32>,
    branch_fixups: Vec<(usize, &'a str, u32)>,
    tables: HashMap<&'a str, Vec<&'a str>>,
    table_fixups: Vec<(usize, &'a str, u32)>,
    code: Vec<Inst>,
    lines: Vec<u32>,
    calls: Vec<CallSite>,
}

/// The modifiers of an opcode, sorted by what they mean.
#[derive(Default)]
struct Mods<'a> {
    types: Vec<Ty>,
    rnd: Option<Rnd>,
    ftz: bool,
    sat: bool,
    rest: Vec<&'a str>,
}

impl<'a> Mods<'a> {
    fn split(opcode: &'a str) -> (&'a str, Mods<'a>) {
        let mut parts = opcode.split('.');
        let base = parts.next().unwrap_or("");
        let mut m = Mods::default();
        let mut off = base.len();
        for p in parts {
            let tok = &opcode[off..off + 1 + p.len()];
            off += 1 + p.len();
            if let Some(t) = Ty::parse(tok) {
                m.types.push(t);
            } else if let Some(r) = Rnd::parse(tok) {
                m.rnd = Some(r);
            } else if tok == ".ftz" {
                m.ftz = true;
            } else if tok == ".sat" {
                m.sat = true;
            } else {
                m.rest.push(tok);
            }
        }
        (base, m)
    }
    fn has(&self, s: &str) -> bool {
        self.rest.contains(&s)
    }
    /// Refuses modifiers outside `allowed`.
    fn only(&self, allowed: &[&str], line: u32, opcode: &str) -> Result<(), LoadError> {
        for r in &self.rest {
            let cache_policy = r.contains("::") && !r.contains("cache_hint");
            if !allowed.contains(r) && !cache_policy {
                return unsupported(line, format!("modifier {r} in {opcode}"));
            }
        }
        Ok(())
    }
    fn one_type(&self, line: u32, opcode: &str) -> Result<Ty, LoadError> {
        match self.types.as_slice() {
            [t] => Ok(*t),
            _ => syntax(line, format!("{opcode}: expected one type")),
        }
    }
}

/// Operand count check.
fn arity(i: &InstAst, n: usize) -> Result<(), LoadError> {
    if i.operands.len() != n {
        return syntax(i.line, format!("{} takes {n} operands, found {}", i.opcode, i.operands.len()));
    }
    Ok(())
}

/// Memory-ordering, scope and cache qualifiers that do not change single-threaded semantics.
const MEM_QUALIFIERS: &[&str] = &[
    ".weak", ".relaxed", ".acquire", ".release", ".acq_rel", ".volatile", ".sys", ".gpu", ".cta", ".nc", ".ca",
    ".cg", ".cs", ".lu", ".cv", ".wb", ".wt", ".unified", ".mmio",
];

/// Cross-thread operations: a sequential schedule of the threads is only valid without them.
const CROSS_THREAD: &[&str] = &[
    "bar", "barrier", "shfl", "vote", "match", "redux", "activemask", "elect", "mbarrier", "cp", "wmma", "mma",
    "ldmatrix", "stmatrix", "griddepcontrol", "cluster", "bar.warp",
];

impl<'a, 'm> FnDecoder<'a, 'm> {
    fn new(m: &'m ModuleNames<'m>) -> Self {
        FnDecoder {
            m,
            ranges: HashMap::new(),
            named: HashMap::new(),
            init: vec![0; FIRST_FREE_SLOT as usize],
            consts: HashMap::new(),
            locals: HashMap::new(),
            local_size: 0,
            local_align: 1,
            own_params: HashMap::new(),
            scopes: Vec::new(),
            out_cur: 0,
            out_size: 0,
            labels: HashMap::new(),
            branch_fixups: Vec::new(),
            tables: HashMap::new(),
            table_fixups: Vec::new(),
            code: Vec::new(),
            lines: Vec::new(),
            calls: Vec::new(),
        }
    }

    fn new_slots(&mut self, n: u32, line: u32) -> Result<u32, LoadError> {
        let first = self.init.len();
        if first + n as usize > (1 << 24) {
            return unsupported(line, "more than 16M registers in one function");
        }
        self.init.resize(first + n as usize, 0);
        Ok(first as u32)
    }

    fn declare(&mut self, d: &VarDecl<'a>, in_block: bool) -> Result<(), LoadError> {
        match d.space {
            ".reg" => {
                let ty = Ty::parse(d.ty).ok_or(LoadError::Unsupported { line: d.line, message: format!("register type {}", d.ty) })?;
                if d.vec != 1 || d.array.is_some() {
                    return unsupported(d.line, "vector or array registers");
                }
                match d.range {
                    Some(n) => {
                        let first = self.new_slots(n, d.line)?;
                        self.ranges.insert(d.name, (first, n, ty));
                    }
                    None => {
                        let s = self.new_slots(1, d.line)?;
                        self.named.insert(d.name, (s, ty));
                    }
                }
            }
            ".local" => {
                let (size, align) = decl_layout(d, None)?;
                let off = align_up(self.local_size, align);
                self.local_size = off + size;
                self.local_align = self.local_align.max(align);
                if self.local_size > (1 << 24) {
                    return unsupported(d.line, "more than 16 MiB of local memory per frame");
                }
                self.locals.insert(d.name, off as u32);
            }
            ".param" => {
                let (size, align) = decl_layout(d, None)?;
                let off = align_up(self.out_cur, align);
                self.out_cur = off + size;
                self.out_size = self.out_size.max(self.out_cur);
                if self.out_size > (1 << 20) {
                    return unsupported(d.line, "call parameters over 1 MiB");
                }
                if !in_block {
                    return unsupported(d.line, ".param declared outside a call block");
                }
                if let Some(s) = self.scopes.last_mut() {
                    s.push((d.name, off as u32, size as u32));
                }
            }
            ".shared" => return unsupported(d.line, ".shared memory (cross-thread state)"),
            s => return unsupported(d.line, format!("{s} variables inside a function")),
        }
        Ok(())
    }

    /// A register name's slot and declared type.
    fn reg(&self, name: &str) -> Option<(u32, Ty)> {
        if let Some(&r) = self.named.get(name) {
            return Some(r);
        }
        let digits = name.bytes().rev().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits == name.len() {
            return None;
        }
        let (prefix, idx) = name.split_at(name.len() - digits);
        let idx: u32 = idx.parse().ok()?;
        let &(first, n, ty) = self.ranges.get(prefix)?;
        (idx < n).then_some((first + idx, ty))
    }

    fn konst(&mut self, v: u64) -> u32 {
        if let Some(&s) = self.consts.get(&v) {
            return s;
        }
        let s = self.init.len() as u32;
        self.init.push(v);
        self.consts.insert(v, s);
        s
    }

    fn imm_bits(imm: Imm, ty: Ty, line: u32) -> Result<u64, LoadError> {
        let bits = ty.bits;
        if ty.kind == Kind::F && bits == 16 {
            return unsupported(line, "literal for a half-precision operand");
        }
        Ok(match (imm, ty.kind) {
            (Imm::Int(v), Kind::F) => match bits {
                32 => (v as i64 as f32).to_bits() as u64,
                _ => (v as i64 as f64).to_bits(),
            },
            (Imm::Int(v), _) => v & mask(bits),
            (Imm::F32(b), Kind::F) if bits == 64 => (f32::from_bits(b) as f64).to_bits(),
            (Imm::F32(b), _) => b as u64 & mask(bits),
            (Imm::F64(b), Kind::F) if bits == 32 => (f64::from_bits(b) as f32).to_bits() as u64,
            (Imm::F64(b), _) => b & mask(bits),
            (Imm::Float(f), Kind::F) if bits == 32 => (f as f32).to_bits() as u64,
            (Imm::Float(f), Kind::F) => f.to_bits(),
            (Imm::Float(_), _) => return syntax(line, "floating-point literal in an integer operand"),
        })
    }

    /// A source operand of type `ty`, as a slot.
    fn src(&mut self, op: &Operand<'a>, ty: Ty, line: u32) -> Result<u32, LoadError> {
        match op {
            Operand::Name(n) => {
                if let Some((s, _)) = self.reg(n) {
                    return Ok(s);
                }
                if let Some(i) = SPECIAL_REGS.iter().position(|s| s == n) {
                    return Ok(i as u32);
                }
                if let Some(&addr) = self.m.vars.get(*n) {
                    return Ok(self.konst(addr));
                }
                if n.starts_with('%') {
                    return unsupported(line, format!("register {n} (undeclared or an unsupported special register)"));
                }
                syntax(line, format!("unknown name {n} as an operand"))
            }
            Operand::Imm(i) => {
                let v = Self::imm_bits(*i, ty, line)?;
                Ok(self.konst(v))
            }
            Operand::NotName(_) => syntax(line, "negated predicate where a value is expected"),
            _ => unsupported(line, "operand form (vector, address or list) here"),
        }
    }

    /// A destination register (or the sink).
    fn dst(&self, op: &Operand<'a>, line: u32) -> Result<u32, LoadError> {
        match op {
            Operand::Name(n) => match self.reg(n) {
                Some((s, _)) => Ok(s),
                None => syntax(line, format!("destination {n} is not a declared register")),
            },
            Operand::Sink => Ok(SLOT_SINK),
            _ => syntax(line, "destination must be a register"),
        }
    }

    fn dst_bits(&self, op: &Operand<'a>) -> u32 {
        match op {
            Operand::Name(n) => self.reg(n).map_or(64, |(_, t)| t.bits),
            _ => 64,
        }
    }

    fn pred(&self, name: &str, line: u32) -> Result<u32, LoadError> {
        match self.reg(name) {
            Some((s, t)) if t.kind == Kind::Pred => Ok(s),
            _ => syntax(line, format!("{name} is not a declared predicate")),
        }
    }

    fn push(&mut self, op: Op, class: Class, i: &InstAst<'a>) -> Result<(), LoadError> {
        let (guard, guard_neg) = match i.guard {
            Some((p, neg)) => (self.pred(p, i.line)?, neg),
            None => (u32::MAX, false),
        };
        self.code.push(Inst { op, guard, guard_neg, class });
        self.lines.push(i.line);
        Ok(())
    }

    fn param_ref(&self, name: &str) -> Option<ParamRef> {
        for s in self.scopes.iter().rev() {
            if let Some(&(_, off, size)) = s.iter().rev().find(|p| p.0 == name) {
                return Some(ParamRef::Out(off, size));
            }
        }
        self.own_params.get(name).map(|&(o, s)| ParamRef::In(o, s))
    }

    /// (base slot, offset) of a global/local/generic address operand.
    fn address(&mut self, op: &Operand<'a>, line: u32) -> Result<(u32, i64), LoadError> {
        match op {
            Operand::Addr { base: None, off } => Ok((self.konst(*off as u64), 0)),
            Operand::Addr { base: Some(b), off } => {
                if let Some((s, _)) = self.reg(b) {
                    return Ok((s, *off));
                }
                if let Some(&o) = self.locals.get(b) {
                    return Ok((SLOT_LOCAL_BASE, *off + o as i64));
                }
                if let Some(&a) = self.m.vars.get(*b) {
                    let k = self.konst(a);
                    return Ok((k, *off));
                }
                syntax(line, format!("unknown address base {b}"))
            }
            _ => syntax(line, "expected an address [..]"),
        }
    }

    fn value_list(&self, op: &Operand<'a>, n: usize, line: u32) -> Result<Vec<&'a str>, LoadError> {
        match (op, n) {
            (Operand::Vector(v), n) if v.len() == n => Ok(v.clone()),
            (Operand::Name(x), 1) => Ok(vec![*x]),
            (Operand::Sink, 1) => Ok(vec!["_"]),
            _ => syntax(line, format!("expected {n} value(s)")),
        }
    }

    fn instruction(&mut self, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        let (base, m) = Mods::split(i.opcode);
        if CROSS_THREAD.contains(&base) {
            return unsupported(
                line,
                format!("{} is a cross-thread operation; the emulator runs threads one after another", i.opcode),
            );
        }
        let ops = &i.operands;
        match base {
            "mov" => {
                arity(i, 2)?;
                let ty = m.one_type(line, i.opcode)?;
                m.only(&[], line, i.opcode)?;
                if let (Operand::Name(n), false) = (&ops[1], matches!(ops[0], Operand::Vector(_))) {
                    let d = self.dst(&ops[0], line)?;
                    if let Some(&off) = self.locals.get(n) {
                        return self.push(Op::LocalAddr { d, off }, Class::IntAlu, i);
                    }
                    if self.m.funcs.contains_key(*n) {
                        return unsupported(line, format!("taking the address of function {n}"));
                    }
                    if self.param_ref(n).is_some() {
                        return unsupported(line, format!("taking the address of parameter {n}"));
                    }
                }
                if let Operand::Vector(parts) = &ops[0] {
                    // Unpack: {d0, d1, ..} gets equal slices of a, d0 from the low bits.
                    let (n, bits) = Self::split_width(parts.len(), ty, line)?;
                    let a = self.src(&ops[1], ty, line)?;
                    let mut d = [SLOT_SINK; 4];
                    for (k, p) in parts.iter().enumerate() {
                        let o = if *p == "_" { Operand::Sink } else { Operand::Name(p) };
                        d[k] = self.dst(&o, line)?;
                    }
                    return self.push(Op::Unpack { d, a, n, bits }, Class::IntAlu, i);
                }
                let d = self.dst(&ops[0], line)?;
                if let Operand::Vector(parts) = &ops[1] {
                    let (n, bits) = Self::split_width(parts.len(), ty, line)?;
                    let ety = Ty { kind: Kind::B, bits: bits as u32 };
                    let mut a = [SLOT_SINK; 4];
                    for (k, p) in parts.iter().enumerate() {
                        a[k] = self.src(&Operand::Name(p), ety, line)?;
                    }
                    return self.push(Op::Pack { d, a, n, bits }, Class::IntAlu, i);
                }
                let a = self.src(&ops[1], ty, line)?;
                let class = if ty.kind == Kind::Pred { Class::Predicate } else { Class::IntAlu };
                self.push(Op::Mov { d, a, mask: mask(ty.bits) }, class, i)
            }
            "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl" | "shr" => {
                self.binary(base, &m, i)
            }
            "not" | "cnot" | "neg" | "abs" | "popc" | "clz" | "brev" | "bfind" | "sqrt" | "rcp" => {
                self.unary(base, &m, i)
            }
            "mad" | "fma" => {
                arity(i, 4)?;
                let ty = m.one_type(line, i.opcode)?;
                let d = self.dst(&ops[0], line)?;
                if ty.is_float() {
                    if m.rnd.is_some_and(|r| r != Rnd::Rn) {
                        return unsupported(line, format!("{}: only round-to-nearest float arithmetic", i.opcode));
                    }
                    m.only(&[], line, i.opcode)?;
                    let f64 = ty.bits == 64;
                    let (a, b, c) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?, self.src(&ops[3], ty, line)?);
                    let class = if f64 { Class::Fp64 } else { Class::Fp32 };
                    return self.push(Op::Fma { f64, ftz: m.ftz, sat: m.sat, d, a, b, c }, class, i);
                }
                if base == "fma" || m.sat {
                    return unsupported(line, format!("{}: integer form", i.opcode));
                }
                m.only(&[".lo", ".hi", ".wide"], line, i.opcode)?;
                let signed = ty.kind == Kind::S;
                let op = if m.has(".hi") {
                    if signed { MadOp::HiS } else { MadOp::HiU }
                } else if m.has(".wide") {
                    if signed { MadOp::WideS } else { MadOp::WideU }
                } else {
                    MadOp::Lo
                };
                let cty = if matches!(op, MadOp::WideS | MadOp::WideU) { Ty { kind: ty.kind, bits: ty.bits * 2 } } else { ty };
                if cty.bits > 64 {
                    return unsupported(line, "mad.wide of 64-bit operands");
                }
                let (a, b, c) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?, self.src(&ops[3], cty, line)?);
                self.push(Op::Mad { op, bits: ty.bits as u8, d, a, b, c }, Class::IntAlu, i)
            }
            "bfe" | "bfi" => {
                let ty = m.one_type(line, i.opcode)?;
                m.only(&[], line, i.opcode)?;
                if !matches!(ty.bits, 32 | 64) {
                    return syntax(line, format!("{}: 32 or 64-bit types only", i.opcode));
                }
                let u32t = Ty { kind: Kind::U, bits: 32 };
                let d = self.dst(&ops[0], line)?;
                if base == "bfe" {
                    arity(i, 4)?;
                    let (a, b, c) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], u32t, line)?, self.src(&ops[3], u32t, line)?);
                    self.push(Op::Bfe { signed: ty.kind == Kind::S, bits: ty.bits as u8, d, a, b, c }, Class::IntAlu, i)
                } else {
                    arity(i, 5)?;
                    let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?);
                    let (c, e) = (self.src(&ops[3], u32t, line)?, self.src(&ops[4], u32t, line)?);
                    self.push(Op::Bfi { bits: ty.bits as u8, d, a, b, c, e }, Class::IntAlu, i)
                }
            }
            "prmt" => {
                arity(i, 4)?;
                let ty = m.one_type(line, i.opcode)?;
                let modes = [".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"];
                m.only(&modes, line, i.opcode)?;
                if ty.bits != 32 {
                    return syntax(line, "prmt is .b32 only");
                }
                let mode = m.rest.first().and_then(|r| modes.iter().position(|x| x == r)).map_or(0, |p| p as u8 + 1);
                let d = self.dst(&ops[0], line)?;
                let (a, b, c) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?, self.src(&ops[3], ty, line)?);
                self.push(Op::Prmt { mode, d, a, b, c }, Class::IntAlu, i)
            }
            "copysign" => {
                arity(i, 3)?;
                let ty = m.one_type(line, i.opcode)?;
                m.only(&[], line, i.opcode)?;
                let d = self.dst(&ops[0], line)?;
                let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?);
                let f64 = ty.bits == 64;
                self.push(Op::Copysign { f64, d, a, b }, if f64 { Class::Fp64 } else { Class::Fp32 }, i)
            }
            "testp" => {
                arity(i, 2)?;
                let ty = m.one_type(line, i.opcode)?;
                let op = match m.rest.as_slice() {
                    [".finite"] => TestOp::Finite,
                    [".infinite"] => TestOp::Infinite,
                    [".number"] => TestOp::Number,
                    [".notanumber"] => TestOp::NotANumber,
                    [".normal"] => TestOp::Normal,
                    [".subnormal"] => TestOp::Subnormal,
                    _ => return syntax(line, format!("{}: unknown test", i.opcode)),
                };
                let d = self.dst(&ops[0], line)?;
                let a = self.src(&ops[1], ty, line)?;
                self.push(Op::Testp { op, f64: ty.bits == 64, d, a }, Class::Predicate, i)
            }
            "setp" => self.setp(&m, i),
            "selp" => {
                arity(i, 4)?;
                let ty = m.one_type(line, i.opcode)?;
                m.only(&[], line, i.opcode)?;
                let d = self.dst(&ops[0], line)?;
                let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?);
                let p = match &ops[3] {
                    Operand::Name(n) => self.pred(n, line)?,
                    _ => return syntax(line, "selp: predicate operand expected"),
                };
                self.push(Op::Selp { d, a, b, p }, Class::Predicate, i)
            }
            "cvt" => {
                arity(i, 2)?;
                m.only(&[], line, i.opcode)?;
                let [to, from] = m.types.as_slice() else {
                    return syntax(line, format!("{}: expected two types", i.opcode));
                };
                if to.kind == Kind::Pred || from.kind == Kind::Pred {
                    return syntax(line, "cvt of predicates");
                }
                let rnd = m.rnd.unwrap_or(Rnd::None);
                let d = self.dst(&ops[0], line)?;
                let a = self.src(&ops[1], *from, line)?;
                self.push(Op::Cvt { from: *from, to: *to, rnd, sat: m.sat, ftz: m.ftz, d, a }, Class::Conversion, i)
            }
            "cvta" => {
                arity(i, 2)?;
                let to = m.has(".to");
                m.only(&[".to", ".global", ".local"], line, i.opcode)?;
                let d = self.dst(&ops[0], line)?;
                let ty = Ty { kind: Kind::U, bits: 64 };
                if m.has(".local") {
                    let a = match &ops[1] {
                        Operand::Name(n) if self.locals.contains_key(n) => {
                            let off = self.locals[n];
                            self.push(Op::LocalAddr { d, off }, Class::IntAlu, i)?;
                            d
                        }
                        o => self.src(o, ty, line)?,
                    };
                    let op = if to { Op::GenericToLocal { d, a } } else { Op::LocalToGeneric { d, a } };
                    self.push(op, Class::Conversion, i)
                } else if m.has(".global") {
                    // Global addresses are generic addresses here: the identity.
                    let a = self.src(&ops[1], ty, line)?;
                    self.push(Op::Mov { d, a, mask: u64::MAX }, Class::Conversion, i)
                } else {
                    unsupported(line, format!("{} (only global and local windows exist)", i.opcode))
                }
            }
            "ld" | "ldu" | "st" => self.load_store(base == "st", &m, i),
            "atom" | "red" => self.atomic(base == "red", &m, i),
            "bra" => {
                arity(i, 1)?;
                m.only(&[".uni"], line, i.opcode)?;
                let Operand::Name(l) = ops[0] else { return syntax(line, "bra: label expected") };
                self.branch_fixups.push((self.code.len(), l, line));
                self.push(Op::Bra { target: 0 }, Class::Control, i)
            }
            "brx" => {
                arity(i, 2)?;
                m.only(&[".idx", ".uni"], line, i.opcode)?;
                let idx = self.src(&ops[0], Ty { kind: Kind::U, bits: 32 }, line)?;
                let Operand::Name(t) = ops[1] else { return syntax(line, "brx.idx: target list label expected") };
                self.table_fixups.push((self.code.len(), t, line));
                self.push(Op::Brx { idx, table: 0 }, Class::Control, i)
            }
            "call" => self.call(&m, i),
            "ret" => {
                m.only(&[".uni"], line, i.opcode)?;
                self.push(Op::Ret, Class::Control, i)
            }
            "exit" => self.push(Op::Exit, Class::Control, i),
            "trap" => self.push(Op::Trap, Class::Control, i),
            "membar" | "fence" | "nanosleep" | "prefetch" | "prefetchu" | "pmevent" => {
                self.push(Op::Nop, Class::ParamOther, i)
            }
            _ => unsupported(line, format!("instruction {}", i.opcode)),
        }
    }

    /// (element count, element bits) of a vector mov of type `ty`.
    fn split_width(n: usize, ty: Ty, line: u32) -> Result<(u8, u8), LoadError> {
        let bits = ty.bits as usize / n.max(1);
        if !matches!(n, 2 | 4) || !matches!(bits, 8 | 16 | 32) {
            return syntax(line, format!("mov of {n} elements into {} bits", ty.bits));
        }
        Ok((n as u8, bits as u8))
    }

    fn binary(&mut self, base: &str, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        arity(i, 3)?;
        let ty = m.one_type(line, i.opcode)?;
        let ops = &i.operands;
        let d = self.dst(&ops[0], line)?;
        if ty.is_float() {
            m.only(&[], line, i.opcode)?;
            if m.rnd.is_some_and(|r| r != Rnd::Rn) {
                return unsupported(line, format!("{}: only round-to-nearest float arithmetic", i.opcode));
            }
            let op = match base {
                "add" => FOp::Add,
                "sub" => FOp::Sub,
                "mul" => FOp::Mul,
                "div" if m.rnd == Some(Rnd::Rn) => FOp::Div,
                "div" => return unsupported(line, format!("{} (approximate division; only div.rn)", i.opcode)),
                "min" => FOp::Min,
                "max" => FOp::Max,
                _ => return syntax(line, format!("{} has no float form", i.opcode)),
            };
            let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?);
            return match ty.bits {
                32 => self.push(Op::F32 { op, ftz: m.ftz, sat: m.sat, d, a, b }, Class::Fp32, i),
                64 => self.push(Op::F64 { op, sat: m.sat, d, a, b }, Class::Fp64, i),
                _ => unsupported(line, format!("{} (half precision arithmetic)", i.opcode)),
            };
        }
        if m.rnd.is_some() || m.ftz {
            return syntax(line, format!("{}: rounding/ftz on an integer operation", i.opcode));
        }
        let signed = ty.kind == Kind::S;
        if base == "mul" && m.has(".wide") {
            m.only(&[".wide"], line, i.opcode)?;
            if ty.bits > 32 {
                return syntax(line, "mul.wide of 64-bit operands");
            }
            let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?);
            return self.push(Op::MulWide { signed, bits: ty.bits as u8, d, a, b }, Class::IntAlu, i);
        }
        let op = match base {
            "add" if m.sat && signed && ty.bits == 32 => IntOp::AddSatS,
            "sub" if m.sat && signed && ty.bits == 32 => IntOp::SubSatS,
            _ if m.sat => return unsupported(line, format!("{}: .sat", i.opcode)),
            "add" => IntOp::Add,
            "sub" => IntOp::Sub,
            "mul" if m.has(".hi") => {
                if signed {
                    IntOp::MulHiS
                } else {
                    IntOp::MulHiU
                }
            }
            "mul" => IntOp::MulLo,
            "div" => {
                if signed {
                    IntOp::DivS
                } else {
                    IntOp::DivU
                }
            }
            "rem" => {
                if signed {
                    IntOp::RemS
                } else {
                    IntOp::RemU
                }
            }
            "min" => {
                if signed {
                    IntOp::MinS
                } else {
                    IntOp::MinU
                }
            }
            "max" => {
                if signed {
                    IntOp::MaxS
                } else {
                    IntOp::MaxU
                }
            }
            "and" => IntOp::And,
            "or" => IntOp::Or,
            "xor" => IntOp::Xor,
            "shl" => IntOp::Shl,
            "shr" => {
                if signed {
                    IntOp::ShrS
                } else {
                    IntOp::ShrU
                }
            }
            _ => return syntax(line, format!("unknown {}", i.opcode)),
        };
        m.only(if base == "mul" { &[".lo", ".hi"] } else { &[] }, line, i.opcode)?;
        if ty.bits == 8 {
            return syntax(line, format!("{}: 8-bit arithmetic types do not exist", i.opcode));
        }
        // Shift amounts are always .u32 operands.
        let bty = if matches!(op, IntOp::Shl | IntOp::ShrU | IntOp::ShrS) { Ty { kind: Kind::U, bits: 32 } } else { ty };
        let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], bty, line)?);
        let class = if ty.kind == Kind::Pred { Class::Predicate } else { Class::IntAlu };
        self.push(Op::Int { op, bits: ty.bits as u8, d, a, b }, class, i)
    }

    fn unary(&mut self, base: &str, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        arity(i, 2)?;
        let ty = m.one_type(line, i.opcode)?;
        let ops = &i.operands;
        let d = self.dst(&ops[0], line)?;
        if ty.is_float() {
            let op = match base {
                "neg" => FUnOp::Neg,
                "abs" => FUnOp::Abs,
                "sqrt" | "rcp" if m.rnd == Some(Rnd::Rn) => {
                    if base == "sqrt" {
                        FUnOp::Sqrt
                    } else {
                        FUnOp::Rcp
                    }
                }
                "sqrt" | "rcp" => {
                    return unsupported(line, format!("{} (approximate or directed rounding; only .rn)", i.opcode))
                }
                _ => return syntax(line, format!("{} has no float form", i.opcode)),
            };
            m.only(&[], line, i.opcode)?;
            let a = self.src(&ops[1], ty, line)?;
            let f64 = ty.bits == 64;
            if ty.bits == 16 {
                return unsupported(line, format!("{} (half precision)", i.opcode));
            }
            return self.push(Op::FUn { op, f64, ftz: m.ftz, d, a }, if f64 { Class::Fp64 } else { Class::Fp32 }, i);
        }
        let op = match base {
            "not" => UnOp::Not,
            "cnot" => UnOp::Cnot,
            "neg" => UnOp::Neg,
            "abs" => UnOp::Abs,
            "popc" => UnOp::Popc,
            "clz" => UnOp::Clz,
            "brev" => UnOp::Brev,
            "bfind" => match (ty.kind == Kind::S, m.has(".shiftamt")) {
                (false, false) => UnOp::BfindU,
                (true, false) => UnOp::BfindS,
                (false, true) => UnOp::BfindShiftU,
                (true, true) => UnOp::BfindShiftS,
            },
            _ => return syntax(line, format!("{} has no integer form", i.opcode)),
        };
        m.only(if base == "bfind" { &[".shiftamt"] } else { &[] }, line, i.opcode)?;
        if m.rnd.is_some() || m.ftz || m.sat {
            return syntax(line, format!("{}: float modifiers on an integer operation", i.opcode));
        }
        let a = self.src(&ops[1], ty, line)?;
        let class = if ty.kind == Kind::Pred { Class::Predicate } else { Class::IntAlu };
        self.push(Op::Un { op, bits: ty.bits as u8, d, a }, class, i)
    }

    fn setp(&mut self, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        let ty = m.one_type(line, i.opcode)?;
        let mut rest = m.rest.clone();
        let comb_op = match rest.last() {
            Some(&".and") => Some(BoolOp::And),
            Some(&".or") => Some(BoolOp::Or),
            Some(&".xor") => Some(BoolOp::Xor),
            _ => None,
        };
        if comb_op.is_some() {
            rest.pop();
        }
        let [cmp] = rest.as_slice() else { return syntax(line, format!("{}: one comparison expected", i.opcode)) };
        let float = ty.is_float();
        let (cmp, force_unsigned) = match *cmp {
            ".eq" => (Cmp::Eq, false),
            ".ne" => (Cmp::Ne, false),
            ".lt" => (Cmp::Lt, false),
            ".le" => (Cmp::Le, false),
            ".gt" => (Cmp::Gt, false),
            ".ge" => (Cmp::Ge, false),
            ".lo" if !float => (Cmp::Lt, true),
            ".ls" if !float => (Cmp::Le, true),
            ".hi" if !float => (Cmp::Gt, true),
            ".hs" if !float => (Cmp::Ge, true),
            ".equ" if float => (Cmp::Equ, false),
            ".neu" if float => (Cmp::Neu, false),
            ".ltu" if float => (Cmp::Ltu, false),
            ".leu" if float => (Cmp::Leu, false),
            ".gtu" if float => (Cmp::Gtu, false),
            ".geu" if float => (Cmp::Geu, false),
            ".num" if float => (Cmp::Num, false),
            ".nan" if float => (Cmp::Nan, false),
            c => return syntax(line, format!("{}: comparison {c} for this type", i.opcode)),
        };
        let cty = match (ty.kind, ty.bits) {
            (Kind::F, 32) => CmpTy::F32 { ftz: m.ftz },
            (Kind::F, 64) => CmpTy::F64,
            (Kind::F, _) => return unsupported(line, format!("{} (half precision)", i.opcode)),
            (Kind::S, b) if !force_unsigned => CmpTy::S(b),
            (Kind::Pred, _) => return syntax(line, "setp on predicates"),
            (_, b) => CmpTy::U(b),
        };
        let ops = &i.operands;
        let want = if comb_op.is_some() { 4 } else { 3 };
        arity(i, want)?;
        let (p, q) = match &ops[0] {
            Operand::Pair(p, q) => (self.pred_or_sink(p, line)?, self.pred_or_sink(q, line)?),
            Operand::Name(p) => (self.pred(p, line)?, SLOT_SINK),
            _ => return syntax(line, "setp: predicate destination expected"),
        };
        let (a, b) = (self.src(&ops[1], ty, line)?, self.src(&ops[2], ty, line)?);
        let comb = match comb_op {
            None => None,
            Some(op) => Some(match &ops[3] {
                Operand::Name(c) => (op, self.pred(c, line)?, false),
                Operand::NotName(c) => (op, self.pred(c, line)?, true),
                _ => return syntax(line, "setp: predicate operand expected"),
            }),
        };
        self.push(Op::Setp { cmp, ty: cty, p, q, a, b, comb }, Class::Predicate, i)
    }

    fn pred_or_sink(&self, n: &str, line: u32) -> Result<u32, LoadError> {
        if n == "_" {
            Ok(SLOT_SINK)
        } else {
            self.pred(n, line)
        }
    }

    fn load_store(&mut self, store: bool, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        arity(i, 2)?;
        let ty = m.one_type(line, i.opcode)?;
        let mut space = None;
        let mut n = 1usize;
        for r in &m.rest {
            match *r {
                ".global" => space = Some(MemSpace::Global),
                ".local" => space = Some(MemSpace::Local),
                ".const" => space = Some(MemSpace::Global), // module .const variables live in global memory
                ".param" => return self.param_access(store, ty, m, i),
                ".shared" => return unsupported(line, format!("{}: shared memory (cross-thread state)", i.opcode)),
                ".v2" => n = 2,
                ".v4" => n = 4,
                r if MEM_QUALIFIERS.contains(&r) => {}
                r if r.contains("::") && !r.contains("cache_hint") => {}
                r => return unsupported(line, format!("modifier {r} in {}", i.opcode)),
            }
        }
        let space = space.unwrap_or(MemSpace::Generic);
        if ty.kind == Kind::Pred {
            return syntax(line, "ld/st of predicates");
        }
        let size = (ty.bits / 8) as u8;
        let (val, addr) = if store { (&i.operands[1], &i.operands[0]) } else { (&i.operands[0], &i.operands[1]) };
        let (abase, off) = self.address(addr, line)?;
        let names = match val {
            Operand::Imm(_) if store && n == 1 => Vec::new(),
            v => self.value_list(v, n, line)?,
        };
        let mut regs = [SLOT_SINK; 4];
        if store {
            if names.is_empty() {
                regs[0] = self.src(val, ty, line)?;
            }
            for (k, nm) in names.iter().enumerate() {
                regs[k] = self.src(&Operand::Name(nm), ty, line)?;
            }
            let class = match space {
                MemSpace::Global => Class::GlobalStore,
                MemSpace::Local => Class::LocalStore,
                MemSpace::Generic => Class::Dynamic,
            };
            self.push(Op::St { space, size, n: n as u8, v: regs, addr: abase, off }, class, i)
        } else {
            let mut dbits = 64;
            for (k, nm) in names.iter().enumerate() {
                let o = if *nm == "_" { Operand::Sink } else { Operand::Name(nm) };
                regs[k] = self.dst(&o, line)?;
                dbits = self.dst_bits(&o).max(ty.bits);
            }
            let class = match space {
                MemSpace::Global => Class::GlobalLoad,
                MemSpace::Local => Class::LocalLoad,
                MemSpace::Generic => Class::Dynamic,
            };
            let sext = ty.kind == Kind::S;
            self.push(Op::Ld { space, size, n: n as u8, sext, dbits: dbits as u8, d: regs, addr: abase, off }, class, i)
        }
    }

    fn param_access(&mut self, store: bool, ty: Ty, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        let mut n = 1usize;
        for r in &m.rest {
            match *r {
                ".param" => {}
                ".v2" => n = 2,
                ".v4" => n = 4,
                r => return unsupported(line, format!("modifier {r} in {}", i.opcode)),
            }
        }
        let (val, addr) = if store { (&i.operands[1], &i.operands[0]) } else { (&i.operands[0], &i.operands[1]) };
        let Operand::Addr { base: Some(b), off } = addr else {
            return unsupported(line, "parameter space accessed through a register or absolute address");
        };
        let size = (ty.bits / 8) as u8;
        let (out, poff, psize) = match self.param_ref(b) {
            Some(ParamRef::In(o, s)) => (false, o, s),
            Some(ParamRef::Out(o, s)) => (true, o, s),
            None => return unsupported(line, format!("parameter access to {b}, which is not a parameter in scope")),
        };
        let end = *off + size as i64 * n as i64;
        if *off < 0 || end > psize as i64 {
            return syntax(line, format!("access [{b}+{off}] of {} bytes is outside the {psize}-byte parameter", size as usize * n));
        }
        let off = poff + *off as u32;
        let mut regs = [SLOT_SINK; 4];
        if store {
            match val {
                Operand::Imm(_) if n == 1 => regs[0] = self.src(val, ty, line)?,
                v => {
                    for (k, nm) in self.value_list(v, n, line)?.iter().enumerate() {
                        regs[k] = self.src(&Operand::Name(nm), ty, line)?;
                    }
                }
            }
            self.push(Op::StParam { out, off, size, n: n as u8, v: regs }, Class::ParamOther, i)
        } else {
            let mut dbits = 64;
            for (k, nm) in self.value_list(val, n, line)?.iter().enumerate() {
                let o = if *nm == "_" { Operand::Sink } else { Operand::Name(nm) };
                regs[k] = self.dst(&o, line)?;
                dbits = self.dst_bits(&o).max(ty.bits);
            }
            let sext = ty.kind == Kind::S;
            self.push(Op::LdParam { out, off, size, n: n as u8, sext, dbits: dbits as u8, d: regs }, Class::ParamOther, i)
        }
    }

    fn atomic(&mut self, red: bool, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        let ty = m.one_type(line, i.opcode)?;
        let mut space = MemSpace::Generic;
        let mut op = None;
        for r in &m.rest {
            match *r {
                ".global" => space = MemSpace::Global,
                ".shared" => return unsupported(line, format!("{}: shared memory (cross-thread state)", i.opcode)),
                ".and" => op = Some(AtomOp::And),
                ".or" => op = Some(AtomOp::Or),
                ".xor" => op = Some(AtomOp::Xor),
                ".exch" => op = Some(AtomOp::Exch),
                ".add" => op = Some(AtomOp::Add),
                ".inc" => op = Some(AtomOp::Inc),
                ".dec" => op = Some(AtomOp::Dec),
                ".min" => op = Some(AtomOp::MinU),
                ".max" => op = Some(AtomOp::MaxU),
                ".cas" => op = Some(AtomOp::Cas),
                r if MEM_QUALIFIERS.contains(&r) => {}
                r => return unsupported(line, format!("modifier {r} in {}", i.opcode)),
            }
        }
        let Some(mut op) = op else { return syntax(line, format!("{}: no operation", i.opcode)) };
        let signed = ty.kind == Kind::S;
        op = match (op, ty.kind, ty.bits) {
            (AtomOp::Add, Kind::F, 32) => AtomOp::AddF32,
            (AtomOp::Add, Kind::F, 64) => AtomOp::AddF64,
            (_, Kind::F, _) if op != AtomOp::Exch => return unsupported(line, format!("{} (float atomics other than add and exch)", i.opcode)),
            (AtomOp::MinU, _, _) if signed => AtomOp::MinS,
            (AtomOp::MaxU, _, _) if signed => AtomOp::MaxS,
            (o, _, 32 | 64) => o,
            _ => return unsupported(line, format!("{} (only 32 and 64-bit atomics)", i.opcode)),
        };
        let ops = &i.operands;
        let want = usize::from(!red) + 2 + usize::from(op == AtomOp::Cas);
        arity(i, want)?;
        let (d, rest) = if red { (SLOT_SINK, &ops[..]) } else { (self.dst(&ops[0], line)?, &ops[1..]) };
        let (addr, off) = self.address(&rest[0], line)?;
        let b = self.src(&rest[1], ty, line)?;
        let c = if op == AtomOp::Cas { self.src(&rest[2], ty, line)? } else { SLOT_SINK };
        let class = if space == MemSpace::Global { Class::GlobalAtomic } else { Class::Dynamic };
        self.push(Op::Atom { space, op, bits: ty.bits as u8, d, addr, off, b, c }, class, i)
    }

    fn call(&mut self, m: &Mods<'a>, i: &InstAst<'a>) -> Result<(), LoadError> {
        let line = i.line;
        m.only(&[".uni"], line, i.opcode)?;
        let ops = &i.operands;
        let (rets, rest): (&[&str], &[Operand]) = match ops.first() {
            Some(Operand::List(r)) => (r, &ops[1..]),
            _ => (&[], &ops[..]),
        };
        let (fname, args): (&str, &[&str]) = match rest {
            [Operand::Name(f)] => (f, &[]),
            [Operand::Name(f), Operand::List(a)] => (f, a),
            _ => return unsupported(line, "call form (indirect calls and prototypes are not supported)"),
        };
        let Some(&callee) = self.m.funcs.get(fname) else {
            return unsupported(line, format!("call to {fname}, which is not a function of this module"));
        };
        let (cparams, crets) = &self.m.sigs[callee];
        if args.len() != cparams.len() || rets.len() != crets.len() {
            return syntax(
                line,
                format!("call to {fname} passes {} arguments and {} results; it takes {} and {}", args.len(), rets.len(), cparams.len(), crets.len()),
            );
        }
        let mut site = CallSite { callee, args: Vec::new(), rets: Vec::new() };
        for (a, p) in args.iter().zip(cparams) {
            match self.param_ref(a) {
                Some(ParamRef::Out(o, s)) if s == p.size => site.args.push((o, p.off, s)),
                _ => return syntax(line, format!("argument {a} is not a {}-byte call parameter in scope", p.size)),
            }
        }
        for (r, p) in rets.iter().zip(crets) {
            match self.param_ref(r) {
                Some(ParamRef::Out(o, s)) if s == p.size => site.rets.push((p.off, o, s)),
                _ => return syntax(line, format!("result {r} is not a {}-byte call parameter in scope", p.size)),
            }
        }
        let idx = self.calls.len() as u32;
        self.calls.push(site);
        self.push(Op::Call { site: idx }, Class::Control, i)
    }

    fn body(mut self, f: &FuncAst<'a>, params: &[ParamSlot], rets: &[ParamSlot], stmts: &[Stmt<'a>]) -> Result<Body, LoadError> {
        for (d, p) in f.params.iter().zip(params).chain(f.rets.iter().zip(rets)) {
            self.own_params.insert(d.name, (p.off, p.size));
        }
        let mut last_line = f.line;
        for s in stmts {
            match s {
                Stmt::Decl(d) => {
                    let in_block = !self.scopes.is_empty();
                    self.declare(d, in_block)?
                }
                Stmt::Open => {
                    self.scopes.push(Vec::new());
                }
                Stmt::Close => {
                    self.scopes.pop();
                    if self.scopes.is_empty() {
                        self.out_cur = 0;
                    }
                }
                Stmt::Label(l, line) => {
                    if self.labels.insert(l, self.code.len() as u32).is_some() {
                        return syntax(*line, format!("label {l} defined twice"));
                    }
                }
                Stmt::Targets(name, labels) => {
                    self.tables.insert(name, labels.clone());
                }
                Stmt::Inst(i) => {
                    last_line = i.line;
                    self.instruction(i)?
                }
            }
        }
        // Falling off the end of a function returns (exits, for an entry).
        self.code.push(Inst { op: Op::Ret, guard: u32::MAX, guard_neg: false, class: Class::Control });
        self.lines.push(last_line);
        for (pc, l, line) in std::mem::take(&mut self.branch_fixups) {
            let Some(&t) = self.labels.get(l) else { return syntax(line, format!("unknown label {l}")) };
            self.code[pc].op = Op::Bra { target: t };
        }
        let mut tables = Vec::new();
        for (pc, name, line) in std::mem::take(&mut self.table_fixups) {
            let Some(labels) = self.tables.get(name) else { return syntax(line, format!("unknown .branchtargets {name}")) };
            let mut t = Vec::new();
            for l in labels {
                let Some(&x) = self.labels.get(l) else { return syntax(line, format!("unknown label {l}")) };
                t.push(x);
            }
            if let Op::Brx { idx, .. } = self.code[pc].op {
                self.code[pc].op = Op::Brx { idx, table: tables.len() as u32 };
            }
            tables.push(t);
        }
        Ok(Body {
            code: self.code,
            lines: self.lines,
            init_regs: self.init,
            local_size: self.local_size as u32,
            local_align: self.local_align as u32,
            out_size: self.out_size as u32,
            tables,
            calls: self.calls,
        })
    }
}

/// Decodes one function body.
pub(crate) fn decode_body<'a>(
    m: &ModuleNames<'_>,
    f: &FuncAst<'a>,
    params: &[ParamSlot],
    rets: &[ParamSlot],
    stmts: &[Stmt<'a>],
) -> Result<Body, LoadError> {
    FnDecoder::new(m).body(f, params, rets, stmts)
}
