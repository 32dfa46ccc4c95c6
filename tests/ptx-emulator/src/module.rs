//! A loaded module: its functions, entry points and module-scope variables.

use std::collections::HashMap;

use crate::decode::{decl_layout, decode_body, layout_params, type_bytes, ModuleNames};
use crate::ir::{Function, ParamSlot};
use crate::parse::{Imm, InitItem};
use crate::{lexer, parse, LoadError, Memory};

/// An `.entry` of a loaded module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId(pub(crate) usize);

/// One `.param` of an `.entry`: its byte offset in the packed parameter buffer (each
/// parameter aligned to its own alignment, as the CUDA driver packs them), size, align.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    pub align: usize,
}

/// A parsed, pre-decoded module. Immutable after load.
pub struct Module {
    target: String,
    pub(crate) funcs: Vec<Function>,
    /// Indices into `funcs` of the `.entry` functions, in module order.
    entries: Vec<usize>,
    entry_params: Vec<Vec<Param>>,
    /// Module variables: name -> (address, size).
    vars: HashMap<String, (u64, usize)>,
}

impl Module {
    /// Parses and checks `ptx`; allocates and initialises its module-scope `.global`
    /// (and `.const`) variables in `mem`. Refuses, naming the line, anything the
    /// interpreter cannot execute faithfully.
    pub fn load(ptx: &str, mem: &mut Memory) -> Result<Module, LoadError> {
        let toks = lexer::tokenize(ptx)?;
        let ast = parse::parse(&toks)?;
        let mut allocated = Vec::new();
        let result = Self::build(&ast, mem, &mut allocated);
        if result.is_err() {
            for a in allocated {
                let _ = mem.free(a);
            }
        }
        result
    }

    fn build(ast: &parse::Ast<'_>, mem: &mut Memory, allocated: &mut Vec<u64>) -> Result<Module, LoadError> {
        // Module variables first: function bodies refer to their addresses.
        let mut vars = HashMap::new();
        let mut addrs = HashMap::new();
        let mut pending = Vec::new();
        for d in &ast.vars {
            match d.space {
                ".global" | ".const" => {}
                ".shared" => {
                    return Err(LoadError::Unsupported { line: d.line, message: ".shared memory (cross-thread state)".into() })
                }
                s => return Err(LoadError::Unsupported { line: d.line, message: format!("module-scope {s} variable") }),
            }
            let elem = type_bytes(d.ty, d.line)?;
            let init_len = d.init.as_ref().map(|i| i.len() as u64 / d.vec.max(1));
            let (size, _) = decl_layout(d, init_len)?;
            if vars.contains_key(d.name) {
                return Err(LoadError::Syntax { line: d.line, message: format!("{} defined twice", d.name) });
            }
            let size = usize::try_from(size).map_err(|_| LoadError::Unsupported { line: d.line, message: "variable too large".into() })?;
            let addr = mem.alloc(size.max(1))?;
            allocated.push(addr);
            vars.insert(d.name.to_string(), (addr, size));
            addrs.insert(d.name.to_string(), addr);
            if let Some(init) = &d.init {
                pending.push((d, elem, init, addr, size));
            }
        }
        for (d, elem, init, addr, size) in pending {
            let mut bytes = Vec::with_capacity(size);
            for item in init {
                let v = match item {
                    InitItem::Imm(Imm::Int(v)) => *v,
                    InitItem::Imm(Imm::F32(b)) => *b as u64,
                    InitItem::Imm(Imm::F64(b)) => *b,
                    InitItem::Imm(Imm::Float(f)) if elem == 4 => (*f as f32).to_bits() as u64,
                    InitItem::Imm(Imm::Float(f)) => f.to_bits(),
                    InitItem::Addr(n) => *addrs.get(*n).ok_or(LoadError::Syntax {
                        line: d.line,
                        message: format!("initialiser refers to unknown variable {n}"),
                    })?,
                };
                bytes.extend_from_slice(&v.to_le_bytes()[..elem as usize]);
            }
            if bytes.len() > size {
                return Err(LoadError::Syntax { line: d.line, message: format!("initialiser of {} is too long", d.name) });
            }
            mem.write(addr, &bytes)?;
        }

        // Signatures, then bodies (calls may refer to functions defined later).
        let mut func_idx: HashMap<String, usize> = HashMap::new();
        let mut sigs: Vec<(Vec<ParamSlot>, Vec<ParamSlot>)> = Vec::new();
        let mut defs: Vec<Option<usize>> = Vec::new(); // AST index of the definition
        let mut entry_flags = Vec::new();
        for (k, f) in ast.funcs.iter().enumerate() {
            let (params, pend) = layout_params(&f.params, 0)?;
            let (rets, _) = layout_params(&f.rets, pend)?;
            match func_idx.get(f.name) {
                Some(&i) => {
                    // A prototype and its definition must agree.
                    let same = sigs[i].0.iter().map(|p| p.size).eq(params.iter().map(|p| p.size))
                        && sigs[i].1.iter().map(|p| p.size).eq(rets.iter().map(|p| p.size));
                    if !same {
                        return Err(LoadError::Syntax { line: f.line, message: format!("{} redeclared differently", f.name) });
                    }
                    if f.body.is_some() {
                        if defs[i].is_some() {
                            return Err(LoadError::Syntax { line: f.line, message: format!("{} defined twice", f.name) });
                        }
                        defs[i] = Some(k);
                        sigs[i] = (params, rets);
                    }
                }
                None => {
                    func_idx.insert(f.name.to_string(), sigs.len());
                    sigs.push((params, rets));
                    defs.push(f.body.is_some().then_some(k));
                    entry_flags.push(f.entry);
                }
            }
        }
        let names = ModuleNames { vars: &addrs, funcs: &func_idx, sigs: &sigs };
        let mut funcs = Vec::with_capacity(sigs.len());
        let mut by_index: Vec<(&str, usize)> = func_idx.iter().map(|(n, &i)| (n.as_str(), i)).collect();
        by_index.sort_by_key(|p| p.1);
        for (name, i) in by_index {
            let (params, rets) = &sigs[i];
            let in_size = rets.last().or(params.last()).map_or(0, |p| p.off + p.size);
            let body = match defs[i] {
                Some(k) => {
                    let f = &ast.funcs[k];
                    let stmts = f.body.as_deref().unwrap_or(&[]);
                    Some(decode_body(&names, f, params, rets, stmts)?)
                }
                None => None,
            };
            funcs.push(Function {
                name: name.to_string(),
                entry: entry_flags[i],
                params: params.clone(),
                in_size,
                body,
            });
        }
        let entries: Vec<usize> = (0..funcs.len()).filter(|&i| funcs[i].entry).collect();
        for &e in &entries {
            if funcs[e].body.is_none() {
                let line = ast.funcs.iter().find(|f| f.name == funcs[e].name).map_or(0, |f| f.line);
                return Err(LoadError::Syntax { line, message: format!("entry {} has no body", funcs[e].name) });
            }
        }
        let entry_params = entries
            .iter()
            .map(|&e| {
                funcs[e]
                    .params
                    .iter()
                    .map(|p| Param { name: p.name.clone(), offset: p.off as usize, size: p.size as usize, align: p.align as usize })
                    .collect()
            })
            .collect();
        Ok(Module { target: ast.target.clone(), funcs, entries, entry_params, vars })
    }

    /// Frees the module's variables.
    pub fn unload(self, mem: &mut Memory) {
        for (addr, _) in self.vars.values() {
            let _ = mem.free(*addr);
        }
    }

    /// The `.target` architecture, e.g. "sm_80".
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The `.entry` named `name`.
    pub fn entry(&self, name: &str) -> Option<EntryId> {
        self.entries.iter().position(|&i| self.funcs[i].name == name).map(EntryId)
    }

    /// Names of all `.entry` functions, in module order.
    pub fn entry_names(&self) -> Vec<&str> {
        self.entries.iter().map(|&i| self.funcs[i].name.as_str()).collect()
    }

    /// The entry's parameters in declaration order.
    pub fn params(&self, e: EntryId) -> &[Param] {
        &self.entry_params[e.0]
    }

    /// Size of the packed parameter buffer of the entry: the end of its last parameter.
    pub fn param_buffer_size(&self, e: EntryId) -> usize {
        self.entry_params[e.0].last().map_or(0, |p| p.offset + p.size)
    }

    /// (address, size) of a module-scope variable (cuModuleGetGlobal).
    pub fn global(&self, name: &str) -> Option<(u64, usize)> {
        self.vars.get(name).copied()
    }

    pub(crate) fn entry_function(&self, e: EntryId) -> usize {
        self.entries[e.0]
    }
}
