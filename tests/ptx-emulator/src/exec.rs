//! Runs the threads of a launch one after another over the pre-decoded functions, with
//! every memory access checked.

use crate::alu::{self, mask, sext};
use crate::cvt::cvt;
use crate::error::{AccessKind, Site, Space};
use crate::ir::*;
use crate::memory::{GLOBAL_LIMIT, LOCAL_WINDOW};
use crate::module::{EntryId, Module};
use crate::{Fault, LaunchStats, Memory};

/// Grid and block dimensions of a launch.
#[derive(Clone, Copy, Debug)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// Local-space address of the bottom of each thread's local stack: non-zero, so a local
/// address never compares equal to a null pointer.
const LOCAL_ORIGIN: u64 = 0x1000;
/// Most bytes of local memory one thread may use across its call frames.
const LOCAL_STACK_LIMIT: usize = 64 << 20;
/// Deepest call nesting.
const MAX_CALL_DEPTH: usize = 1024;

/// Bounds on a launch's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Dynamic instructions over all threads before the launch fails with
    /// [`Fault::Timeout`] (checked at branches and calls, so exceeded by at most a few
    /// hundred thousand).
    pub max_instructions: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_instructions: u64::MAX }
    }
}

/// Branches and calls between two checks of the instruction budget.
const BUDGET_CHECK_INTERVAL: u64 = 1 << 14;

/// Runs every thread of the launch, one after another (block by block, threads in x, y,
/// z order). `params` is the packed parameter buffer; its length must equal
/// `module.param_buffer_size(entry)`.
pub fn launch(module: &Module, entry: EntryId, dims: LaunchDims, params: &[u8], mem: &mut Memory) -> Result<LaunchStats, Fault> {
    launch_with(module, entry, dims, params, mem, Limits::default())
}

/// [`launch`] with bounds on its work.
pub fn launch_with(
    module: &Module,
    entry: EntryId,
    dims: LaunchDims,
    params: &[u8],
    mem: &mut Memory,
    limits: Limits,
) -> Result<LaunchStats, Fault> {
    check_dims(dims)?;
    let fi = module.entry_function(entry);
    let expected = module.param_buffer_size(entry);
    if params.len() != expected {
        return Err(Fault::ParamMismatch { kernel: module.funcs[fi].name.clone(), expected, got: params.len() });
    }
    let mut t = Thread::new(module, mem, fi, dims, limits.max_instructions);
    let [gx, gy, gz] = dims.grid;
    let [bx, by, bz] = dims.block;
    for cz in 0..gz {
        for cy in 0..gy {
            for cx in 0..gx {
                for tz in 0..bz {
                    for ty in 0..by {
                        for tx in 0..bx {
                            t.block = [cx, cy, cz];
                            t.thread = [tx, ty, tz];
                            t.specials[0..3].copy_from_slice(&[tx as u64, ty as u64, tz as u64]);
                            t.specials[6..9].copy_from_slice(&[cx as u64, cy as u64, cz as u64]);
                            t.local_top = 0;
                            t.frames.clear();
                            t.threads += 1;
                            t.run(fi, params.to_vec(), 0)?;
                        }
                    }
                }
            }
        }
    }
    Ok(t.stats())
}

fn check_dims(d: LaunchDims) -> Result<(), Fault> {
    let bad = |m: String| Err(Fault::InvalidLaunch(m));
    if d.grid.contains(&0) || d.block.contains(&0) {
        return bad(format!("zero dimension in grid {:?} / block {:?}", d.grid, d.block));
    }
    let threads = d.block.iter().map(|&v| v as u64).product::<u64>();
    if threads > 1024 || d.block[0] > 1024 || d.block[1] > 1024 || d.block[2] > 64 {
        return bad(format!("block {:?} exceeds 1024 threads (or 1024 x 1024 x 64)", d.block));
    }
    if d.grid[0] >= 1 << 31 || d.grid[1] > 65535 || d.grid[2] > 65535 {
        return bad(format!("grid {:?} exceeds 2^31-1 x 65535 x 65535", d.grid));
    }
    Ok(())
}

/// How a function's execution ended.
enum Flow {
    /// `ret`: the incoming parameter buffer, holding the return values.
    Ret(Vec<u8>),
    Exit,
}

/// A memory access that failed memcheck (details are worked out when reporting).
struct Miss {
    addr: u64,
    size: u32,
    kind: AccessKind,
    space: Space,
    misaligned: bool,
}

/// Where a checked access landed.
#[derive(Clone, Copy)]
enum Place {
    /// (allocation index, offset).
    Global(usize, usize),
    /// Offset in the thread's local stack.
    Local(usize),
}

struct Thread<'m> {
    module: &'m Module,
    mem: &'m mut Memory,
    kernel: usize,
    counts: [u64; CLASSES],
    /// Bytes: global loaded, global stored, local loaded, local stored.
    bytes: [u64; 4],
    threads: u64,
    /// Last global allocation hit: (index, base, end).
    cache: (usize, u64, u64),
    local: Vec<u8>,
    local_top: usize,
    /// Live local areas of the running thread's frames: (local address, size).
    frames: Vec<(u64, u64)>,
    reg_pool: Vec<Vec<u64>>,
    specials: [u64; 12],
    block: [u32; 3],
    thread: [u32; 3],
    /// Branches and calls left before the instruction budget is checked again.
    until_check: u64,
    max_instructions: u64,
}

#[inline(always)]
fn read_le(b: &[u8], size: usize) -> u64 {
    match size {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

#[inline(always)]
fn write_le(b: &mut [u8], size: usize, v: u64) {
    b[..size].copy_from_slice(&v.to_le_bytes()[..size]);
}

impl<'m> Thread<'m> {
    fn new(module: &'m Module, mem: &'m mut Memory, kernel: usize, dims: LaunchDims, max_instructions: u64) -> Self {
        let mut specials = [0u64; 12];
        for k in 0..3 {
            specials[3 + k] = dims.block[k] as u64;
            specials[9 + k] = dims.grid[k] as u64;
        }
        Thread {
            module,
            mem,
            kernel,
            counts: [0; CLASSES],
            bytes: [0; 4],
            threads: 0,
            cache: (0, 1, 0),
            local: Vec::new(),
            local_top: 0,
            frames: Vec::new(),
            reg_pool: Vec::new(),
            specials,
            block: [0; 3],
            thread: [0; 3],
            until_check: BUDGET_CHECK_INTERVAL,
            max_instructions,
        }
    }

    /// Counts a branch or call; every few thousand, checks the instruction budget.
    #[inline(always)]
    fn tick(&mut self) -> Result<(), Fault> {
        self.until_check -= 1;
        if self.until_check == 0 {
            self.until_check = BUDGET_CHECK_INTERVAL;
            if self.counts.iter().sum::<u64>() > self.max_instructions {
                let kernel = self.module.funcs[self.kernel].name.clone();
                return Err(Fault::Timeout { kernel, limit: self.max_instructions });
            }
        }
        Ok(())
    }

    fn stats(&self) -> LaunchStats {
        let c = &self.counts;
        LaunchStats {
            threads: self.threads,
            int_alu: c[Class::IntAlu as usize],
            fp32: c[Class::Fp32 as usize],
            fp64: c[Class::Fp64 as usize],
            conversion: c[Class::Conversion as usize],
            control: c[Class::Control as usize],
            predicate: c[Class::Predicate as usize],
            global_load: c[Class::GlobalLoad as usize],
            global_store: c[Class::GlobalStore as usize],
            global_atomic: c[Class::GlobalAtomic as usize],
            local_load: c[Class::LocalLoad as usize],
            local_store: c[Class::LocalStore as usize],
            param_other: c[Class::ParamOther as usize],
            global_load_bytes: self.bytes[0],
            global_store_bytes: self.bytes[1],
            local_load_bytes: self.bytes[2],
            local_store_bytes: self.bytes[3],
        }
    }

    fn site(&self, fi: usize, pc: usize) -> Site {
        let f = &self.module.funcs[fi];
        Site {
            kernel: self.module.funcs[self.kernel].name.clone(),
            function: f.name.clone(),
            line: f.body.as_ref().and_then(|b| b.lines.get(pc)).copied().unwrap_or(0),
            block: self.block,
            thread: self.thread,
        }
    }

    #[cold]
    fn fault(&self, fi: usize, pc: usize, m: Miss) -> Fault {
        let site = self.site(fi, pc);
        if m.misaligned {
            return Fault::Misaligned { site, addr: m.addr, size: m.size, kind: m.kind, space: m.space };
        }
        let detail = match m.space {
            Space::Global => self.mem.describe_miss(m.addr, m.size as u64),
            Space::Local => {
                let frames: Vec<String> = self.frames.iter().map(|(b, s)| format!("{b:#x}+{s}")).collect();
                format!("outside the thread's live local frames [{}]", frames.join(", "))
            }
            Space::Param => "outside the parameter buffer".to_string(),
            Space::Generic => "not in the global or local window".to_string(),
        };
        Fault::IllegalAddress { site, addr: m.addr, size: m.size, kind: m.kind, space: m.space, detail }
    }

    /// Checks an access of `len` bytes (aligned to `len`) and finds where it lands.
    #[inline(always)]
    fn place(&mut self, space: MemSpace, addr: u64, len: usize, kind: AccessKind) -> Result<Place, Miss> {
        let (space, a) = match space {
            MemSpace::Global => (Space::Global, addr),
            MemSpace::Local => (Space::Local, addr),
            MemSpace::Generic => {
                if addr.wrapping_sub(LOCAL_WINDOW) < 1 << 32 {
                    (Space::Local, addr - LOCAL_WINDOW)
                } else if addr < GLOBAL_LIMIT {
                    (Space::Global, addr)
                } else {
                    return Err(Miss { addr, size: len as u32, kind, space: Space::Generic, misaligned: addr & (len as u64 - 1) != 0 });
                }
            }
        };
        let miss = |misaligned| Miss { addr, size: len as u32, kind, space, misaligned };
        if a & (len as u64 - 1) != 0 {
            return Err(miss(true));
        }
        let end = a.wrapping_add(len as u64);
        match space {
            Space::Global => {
                let (idx, base, cend) = self.cache;
                if a >= base && end <= cend {
                    return Ok(Place::Global(idx, (a - base) as usize));
                }
                let idx = self.mem.index_of(a).ok_or(miss(false))?;
                let al = &self.mem.live[idx];
                if end > al.end() || end < a {
                    return Err(miss(false));
                }
                self.cache = (idx, al.base, al.end());
                Ok(Place::Global(idx, (a - al.base) as usize))
            }
            _ => {
                let inside = |&(b, s): &(u64, u64)| a >= b && end <= b + s && end >= a;
                if self.frames.last().is_some_and(inside) || self.frames.iter().any(inside) {
                    Ok(Place::Local((a - LOCAL_ORIGIN) as usize))
                } else {
                    Err(miss(false))
                }
            }
        }
    }

    #[inline(always)]
    fn bytes_at(&mut self, p: Place, len: usize) -> &mut [u8] {
        match p {
            Place::Global(i, off) => &mut self.mem.live[i].data[off..off + len],
            Place::Local(off) => &mut self.local[off..off + len],
        }
    }

    /// Counts a memory instruction whose class is only known from the address.
    #[inline(always)]
    fn count_mem(&mut self, class: Class, p: Place, store: bool, len: usize) {
        let local = matches!(p, Place::Local(_));
        if class == Class::Dynamic {
            let c = match (local, store) {
                (false, false) => Class::GlobalLoad,
                (false, true) => Class::GlobalStore,
                (true, false) => Class::LocalLoad,
                (true, true) => Class::LocalStore,
            };
            self.counts[c as usize] += 1;
        }
        self.bytes[(local as usize) * 2 + store as usize] += len as u64;
    }

    /// Pushes a frame's local area; returns its local-space address.
    fn push_frame(&mut self, body: &Body) -> Option<u64> {
        let align = body.local_align.max(1) as usize;
        let base = self.local_top.div_ceil(align) * align;
        let end = base + body.local_size as usize;
        if end > LOCAL_STACK_LIMIT {
            return None;
        }
        if self.local.len() < end {
            self.local.resize(end, 0);
        }
        // Local memory starts zeroed in every frame so that runs are reproducible.
        self.local[base..end].fill(0);
        self.local_top = end;
        let addr = LOCAL_ORIGIN + base as u64;
        self.frames.push((addr, body.local_size as u64));
        Some(addr)
    }

    fn run(&mut self, fi: usize, mut inbuf: Vec<u8>, depth: usize) -> Result<Flow, Fault> {
        let module = self.module;
        let f = &module.funcs[fi];
        let Some(body) = f.body.as_ref() else {
            return Err(Fault::Undefined { site: self.site(fi, 0), detail: format!("call to {}, which has no body", f.name) });
        };
        let saved_top = self.local_top;
        let Some(local_base) = self.push_frame(body) else {
            return Err(Fault::Undefined { site: self.site(fi, 0), detail: "local memory stack overflow".into() });
        };
        let mut regs = self.reg_pool.pop().unwrap_or_default();
        regs.clear();
        regs.extend_from_slice(&body.init_regs);
        regs[..12].copy_from_slice(&self.specials);
        regs[SLOT_LOCAL_BASE as usize] = local_base;
        let mut out = vec![0u8; body.out_size as usize];
        let code = &body.code[..];
        let mut pc = 0usize;
        let flow = loop {
            let inst = &code[pc];
            pc += 1;
            if inst.guard != u32::MAX && (regs[inst.guard as usize] != 0) == inst.guard_neg {
                continue;
            }
            self.counts[inst.class as usize] += 1;
            macro_rules! r {
                ($x:expr) => {
                    regs[*$x as usize]
                };
            }
            macro_rules! check {
                ($e:expr) => {
                    match $e {
                        Ok(v) => v,
                        Err(m) => return Err(self.fault(fi, pc - 1, m)),
                    }
                };
            }
            match &inst.op {
                Op::Int { op, bits, d, a, b } => r!(d) = alu::int_op(*op, *bits as u32, r!(a), r!(b)),
                Op::Mov { d, a, mask } => r!(d) = r!(a) & mask,
                Op::Pack { d, a, n, bits } => {
                    let b = *bits as u32;
                    r!(d) = a[..*n as usize].iter().enumerate().fold(0, |v, (k, x)| v | (regs[*x as usize] & mask(b)) << (k as u32 * b));
                }
                Op::Unpack { d, a, n, bits } => {
                    let (b, v) = (*bits as u32, r!(a));
                    for (k, x) in d[..*n as usize].iter().enumerate() {
                        regs[*x as usize] = (v >> (k as u32 * b)) & mask(b);
                    }
                }
                Op::Selp { d, a, b, p } => r!(d) = if r!(p) != 0 { r!(a) } else { r!(b) },
                Op::Setp { cmp, ty, p, q, a, b, comb } => {
                    let t = alu::compare(*cmp, *ty, r!(a), r!(b));
                    let (pv, qv) = match comb {
                        None => (t, !t),
                        Some((op, c, neg)) => {
                            let c = (r!(c) != 0) != *neg;
                            let f = |x: bool| match op {
                                BoolOp::And => x && c,
                                BoolOp::Or => x || c,
                                BoolOp::Xor => x != c,
                            };
                            (f(t), f(!t))
                        }
                    };
                    r!(p) = pv as u64;
                    r!(q) = qv as u64;
                }
                Op::Un { op, bits, d, a } => r!(d) = alu::un_op(*op, *bits as u32, r!(a)),
                Op::MulWide { signed, bits, d, a, b } => r!(d) = alu::mul_wide(*signed, *bits as u32, r!(a), r!(b)),
                Op::Mad { op, bits, d, a, b, c } => {
                    let bits = *bits as u32;
                    let (x, y, z) = (r!(a), r!(b), r!(c));
                    r!(d) = match op {
                        MadOp::Lo => x.wrapping_mul(y).wrapping_add(z) & mask(bits),
                        MadOp::HiU => alu::int_op(alu::IntOp::MulHiU, bits, x, y).wrapping_add(z) & mask(bits),
                        MadOp::HiS => alu::int_op(alu::IntOp::MulHiS, bits, x, y).wrapping_add(z) & mask(bits),
                        MadOp::WideU => alu::mul_wide(false, bits, x, y).wrapping_add(z) & mask(2 * bits),
                        MadOp::WideS => alu::mul_wide(true, bits, x, y).wrapping_add(z) & mask(2 * bits),
                    };
                }
                Op::Bfe { signed, bits, d, a, b, c } => r!(d) = alu::bfe(*signed, *bits as u32, r!(a), r!(b), r!(c)),
                Op::Bfi { bits, d, a, b, c, e } => r!(d) = alu::bfi(*bits as u32, r!(a), r!(b), r!(c), r!(e)),
                Op::Prmt { mode, d, a, b, c } => r!(d) = alu::prmt(*mode, r!(a), r!(b), r!(c)),
                Op::F32 { op, ftz, sat, d, a, b } => r!(d) = alu::f32_op(*op, *ftz, *sat, r!(a), r!(b)),
                Op::F64 { op, sat, d, a, b } => r!(d) = alu::f64_op(*op, *sat, r!(a), r!(b)),
                Op::Fma { f64, ftz, sat, d, a, b, c } => {
                    r!(d) = if *f64 {
                        alu::f64_fma(*sat, r!(a), r!(b), r!(c))
                    } else {
                        alu::f32_fma(*ftz, *sat, r!(a), r!(b), r!(c))
                    }
                }
                Op::FUn { op, f64, ftz, d, a } => {
                    r!(d) = if *f64 { alu::f64_un(*op, r!(a)) } else { alu::f32_un(*op, *ftz, r!(a)) }
                }
                Op::Testp { op, f64, d, a } => r!(d) = alu::testp(*op, *f64, r!(a)) as u64,
                Op::Copysign { f64, d, a, b } => {
                    // copysign: the magnitude of b with the sign of a.
                    let s = if *f64 { 1u64 << 63 } else { 1 << 31 };
                    r!(d) = (r!(b) & !s & mask(if *f64 { 64 } else { 32 })) | (r!(a) & s);
                }
                Op::Cvt { from, to, rnd, sat, ftz, d, a } => r!(d) = cvt(r!(a), *from, *to, *rnd, *sat, *ftz),
                Op::LocalAddr { d, off } => r!(d) = regs[SLOT_LOCAL_BASE as usize] + *off as u64,
                Op::LocalToGeneric { d, a } => r!(d) = r!(a).wrapping_add(LOCAL_WINDOW),
                Op::GenericToLocal { d, a } => r!(d) = r!(a).wrapping_sub(LOCAL_WINDOW),
                Op::Ld { space, size, n, sext: sx, dbits, d, addr, off } => {
                    let (size, n) = (*size as usize, *n as usize);
                    let a = r!(addr).wrapping_add(*off as u64);
                    let p = check!(self.place(*space, a, size * n, AccessKind::Load));
                    self.count_mem(inst.class, p, false, size * n);
                    let dm = mask(*dbits as u32);
                    for (k, dk) in d.iter().enumerate().take(n) {
                        let v = read_le(&self.bytes_at(p, size * n)[k * size..], size);
                        regs[*dk as usize] = if *sx { sext(v, size as u32 * 8) as u64 & dm } else { v };
                    }
                }
                Op::St { space, size, n, v, addr, off } => {
                    let (size, n) = (*size as usize, *n as usize);
                    let a = r!(addr).wrapping_add(*off as u64);
                    let p = check!(self.place(*space, a, size * n, AccessKind::Store));
                    self.count_mem(inst.class, p, true, size * n);
                    for (k, vk) in v.iter().enumerate().take(n) {
                        let val = regs[*vk as usize];
                        write_le(&mut self.bytes_at(p, size * n)[k * size..], size, val);
                    }
                }
                Op::LdParam { out: from_out, off, size, n, sext: sx, dbits, d } => {
                    let (size, n, off) = (*size as usize, *n as usize, *off as usize);
                    let buf = if *from_out { &out } else { &inbuf };
                    let dm = mask(*dbits as u32);
                    for (k, dk) in d.iter().enumerate().take(n) {
                        let Some(b) = buf.get(off + k * size..off + (k + 1) * size) else {
                            let m = Miss { addr: (off + k * size) as u64, size: size as u32, kind: AccessKind::Load, space: Space::Param, misaligned: false };
                            return Err(self.fault(fi, pc - 1, m));
                        };
                        let v = read_le(b, size);
                        regs[*dk as usize] = if *sx { sext(v, size as u32 * 8) as u64 & dm } else { v };
                    }
                }
                Op::StParam { out: to_out, off, size, n, v } => {
                    let (size, n, off) = (*size as usize, *n as usize, *off as usize);
                    for (k, vk) in v.iter().enumerate().take(n) {
                        let val = regs[*vk as usize];
                        let buf = if *to_out { &mut out } else { &mut inbuf };
                        let Some(b) = buf.get_mut(off + k * size..off + (k + 1) * size) else {
                            let m = Miss { addr: (off + k * size) as u64, size: size as u32, kind: AccessKind::Store, space: Space::Param, misaligned: false };
                            return Err(self.fault(fi, pc - 1, m));
                        };
                        write_le(b, size, val);
                    }
                }
                Op::Atom { space, op, bits, d, addr, off, b, c } => {
                    let size = *bits as usize / 8;
                    let a = r!(addr).wrapping_add(*off as u64);
                    let p = check!(self.place(*space, a, size, AccessKind::Atomic));
                    if inst.class == Class::Dynamic {
                        let c = if matches!(p, Place::Local(_)) { Class::LocalStore } else { Class::GlobalAtomic };
                        self.counts[c as usize] += 1;
                    }
                    let (bv, cv) = (r!(b), r!(c));
                    let bytes = self.bytes_at(p, size);
                    let old = read_le(bytes, size);
                    let new = atom_op(*op, *bits as u32, old, bv, cv);
                    write_le(bytes, size, new);
                    r!(d) = old;
                }
                Op::Bra { target } => {
                    self.tick()?;
                    pc = *target as usize
                }
                Op::Brx { idx, table } => {
                    self.tick()?;
                    let i = r!(idx) as u32 as usize;
                    let t = &body.tables[*table as usize];
                    match t.get(i) {
                        Some(&target) => pc = target as usize,
                        None => {
                            return Err(Fault::Undefined {
                                site: self.site(fi, pc - 1),
                                detail: format!("brx.idx index {i} outside its {}-entry target list", t.len()),
                            })
                        }
                    }
                }
                Op::Call { site } => {
                    self.tick()?;
                    let cs = &body.calls[*site as usize];
                    if depth + 1 >= MAX_CALL_DEPTH {
                        return Err(Fault::Undefined { site: self.site(fi, pc - 1), detail: "call depth over 1024".into() });
                    }
                    let mut cin = vec![0u8; module.funcs[cs.callee].in_size as usize];
                    for &(o, co, s) in &cs.args {
                        let (o, co, s) = (o as usize, co as usize, s as usize);
                        cin[co..co + s].copy_from_slice(&out[o..o + s]);
                    }
                    match self.run(cs.callee, cin, depth + 1)? {
                        Flow::Exit => break Flow::Exit,
                        Flow::Ret(cin) => {
                            for &(co, o, s) in &cs.rets {
                                let (o, co, s) = (o as usize, co as usize, s as usize);
                                out[o..o + s].copy_from_slice(&cin[co..co + s]);
                            }
                        }
                    }
                }
                Op::Ret => break Flow::Ret(inbuf),
                Op::Exit => break Flow::Exit,
                Op::Trap => return Err(Fault::Trap { site: self.site(fi, pc - 1) }),
                Op::Nop => {}
            }
        };
        self.frames.pop();
        self.local_top = saved_top;
        self.reg_pool.push(regs);
        Ok(flow)
    }
}

/// The new memory value of an atomic read-modify-write.
fn atom_op(op: AtomOp, bits: u32, old: u64, b: u64, c: u64) -> u64 {
    let m = mask(bits);
    match op {
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Add => old.wrapping_add(b) & m,
        AtomOp::AddF32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
        AtomOp::AddF64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
        AtomOp::MinU => old.min(b & m),
        AtomOp::MaxU => old.max(b & m),
        AtomOp::MinS => (sext(old, bits).min(sext(b, bits)) as u64) & m,
        AtomOp::MaxS => (sext(old, bits).max(sext(b, bits)) as u64) & m,
        // inc/dec wrap at b: inc gives (old >= b) ? 0 : old+1; dec gives
        // (old == 0 || old > b) ? b : old-1.
        AtomOp::Inc => {
            if old >= b & m {
                0
            } else {
                old + 1
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > b & m {
                b & m
            } else {
                old - 1
            }
        }
        AtomOp::Cas => {
            if old == b & m {
                c & m
            } else {
                old
            }
        }
    }
}
