//! PTX text to a light syntax tree: module directives, variable declarations, functions
//! and their statements. Instruction semantics are checked later, by `decode`.

use crate::lexer::{Tok, Token};
use crate::LoadError;

/// A numeric literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Imm {
    /// An integer literal, two's complement in 64 bits (negation already applied).
    Int(u64),
    /// `0fXXXXXXXX`: the bits of an f32.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: the bits of an f64.
    F64(u64),
    /// A decimal floating-point literal (an f64 value).
    Float(f64),
}

/// An item of a variable initialiser.
#[derive(Clone, Debug)]
pub(crate) enum InitItem<'a> {
    Imm(Imm),
    /// The address of a module variable (`name` or `generic(name)`).
    Addr(&'a str),
}

/// A variable declaration: `.reg`, `.local`, `.param`, `.global`, `.const`, `.shared`.
#[derive(Clone, Debug)]
pub(crate) struct VarDecl<'a> {
    pub line: u32,
    pub space: &'a str,
    pub align: Option<u64>,
    /// Element type, e.g. ".b8"; vector declarations multiply the element count.
    pub ty: &'a str,
    pub vec: u64,
    pub name: &'a str,
    /// `name<N>`: N registers name0..name{N-1}.
    pub range: Option<u32>,
    /// `name[N]` (N = None for `name[]` with an initialiser).
    pub array: Option<Option<u64>>,
    pub init: Option<Vec<InitItem<'a>>>,
}

/// An operand as written.
#[derive(Clone, Debug)]
pub(crate) enum Operand<'a> {
    /// A register, special register, variable, function or label name.
    Name(&'a str),
    /// `!%p`: a negated predicate.
    NotName(&'a str),
    /// `p|q`: the two destinations of `setp`.
    Pair(&'a str, &'a str),
    Imm(Imm),
    /// `[base+off]`; base None for an absolute address.
    Addr { base: Option<&'a str>, off: i64 },
    /// `{a, b, ...}`.
    Vector(Vec<&'a str>),
    /// `(a, b, ...)`: call arguments or return values.
    List(Vec<&'a str>),
    /// `_`.
    Sink,
}

#[derive(Clone, Debug)]
pub(crate) struct InstAst<'a> {
    pub line: u32,
    /// Guard predicate and whether it is negated (`@!%p`).
    pub guard: Option<(&'a str, bool)>,
    pub opcode: &'a str,
    pub operands: Vec<Operand<'a>>,
}

#[derive(Clone, Debug)]
pub(crate) enum Stmt<'a> {
    Decl(VarDecl<'a>),
    Open,
    Close,
    Label(&'a str, u32),
    /// `label: .branchtargets a, b, ...;`
    Targets(&'a str, Vec<&'a str>),
    Inst(InstAst<'a>),
}

#[derive(Clone, Debug)]
pub(crate) struct FuncAst<'a> {
    pub line: u32,
    pub name: &'a str,
    pub entry: bool,
    pub rets: Vec<VarDecl<'a>>,
    pub params: Vec<VarDecl<'a>>,
    /// None for a prototype.
    pub body: Option<Vec<Stmt<'a>>>,
}

#[derive(Debug, Default)]
pub(crate) struct Ast<'a> {
    pub target: String,
    pub vars: Vec<VarDecl<'a>>,
    pub funcs: Vec<FuncAst<'a>>,
}

struct Parser<'t, 'a> {
    toks: &'t [Token<'a>],
    pos: usize,
}

fn syntax<T>(line: u32, message: impl Into<String>) -> Result<T, LoadError> {
    Err(LoadError::Syntax { line, message: message.into() })
}

/// Parses an integer or float literal (without a leading minus).
pub(crate) fn parse_num(s: &str, line: u32) -> Result<Imm, LoadError> {
    let bad = || LoadError::Syntax { line, message: format!("bad numeric literal {s:?}") };
    let lower = s.to_ascii_lowercase();
    if let Some(h) = lower.strip_prefix("0f") {
        return if h.len() == 8 { u32::from_str_radix(h, 16).map(Imm::F32).map_err(|_| bad()) } else { Err(bad()) };
    }
    if let Some(h) = lower.strip_prefix("0d") {
        return if h.len() == 16 { u64::from_str_radix(h, 16).map(Imm::F64).map_err(|_| bad()) } else { Err(bad()) };
    }
    let t = lower.strip_suffix('u').unwrap_or(&lower);
    let v = if let Some(h) = t.strip_prefix("0x") {
        u64::from_str_radix(h, 16)
    } else if let Some(h) = t.strip_prefix("0b") {
        u64::from_str_radix(h, 2)
    } else if t.contains(['.', 'e']) {
        return t.parse::<f64>().map(Imm::Float).map_err(|_| bad());
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8)
    } else {
        t.parse::<u64>()
    };
    v.map(Imm::Int).map_err(|_| bad())
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).map(|t| t.tok)
    }
    fn line(&self) -> u32 {
        self.toks.get(self.pos).or(self.toks.last()).map_or(0, |t| t.line)
    }
    fn next(&mut self) -> Result<Tok<'a>, LoadError> {
        let t = self.peek().ok_or_else(|| LoadError::Syntax { line: self.line(), message: "unexpected end of text".into() })?;
        self.pos += 1;
        Ok(t)
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: char) -> Result<(), LoadError> {
        let line = self.line();
        match self.next()? {
            Tok::Punct(p) if p == c => Ok(()),
            t => syntax(line, format!("expected {c:?}, found {t:?}")),
        }
    }
    fn word(&mut self) -> Result<&'a str, LoadError> {
        let line = self.line();
        match self.next()? {
            Tok::Word(w) => Ok(w),
            t => syntax(line, format!("expected a name, found {t:?}")),
        }
    }
    fn number(&mut self) -> Result<u64, LoadError> {
        let line = self.line();
        match self.next()? {
            Tok::Num(n) => match parse_num(n, line)? {
                Imm::Int(v) => Ok(v),
                _ => syntax(line, format!("expected an integer, found {n}")),
            },
            t => syntax(line, format!("expected a number, found {t:?}")),
        }
    }
    /// Skips the rest of the current source line (line-oriented directives).
    fn skip_line(&mut self, line: u32) {
        while self.toks.get(self.pos).is_some_and(|t| t.line == line) {
            self.pos += 1;
        }
    }
    fn skip_statement(&mut self) -> Result<(), LoadError> {
        while self.next()? != Tok::Punct(';') {}
        Ok(())
    }

    fn module(&mut self) -> Result<Ast<'a>, LoadError> {
        let mut ast = Ast::default();
        while let Some(t) = self.peek() {
            let line = self.line();
            match t {
                Tok::Word(".version" | ".address_size" | ".file") => self.skip_line(line),
                Tok::Word(".target") => {
                    self.pos += 1;
                    ast.target = self.word()?.to_string();
                    self.skip_line(line);
                }
                Tok::Word(".pragma") => self.skip_statement()?,
                Tok::Word(".section") => {
                    return Err(LoadError::Unsupported { line, message: "debug sections (.section)".into() })
                }
                Tok::Word(_) => self.module_item(&mut ast)?,
                t => return syntax(line, format!("unexpected {t:?} at module scope")),
            }
        }
        Ok(ast)
    }

    fn module_item(&mut self, ast: &mut Ast<'a>) -> Result<(), LoadError> {
        let line = self.line();
        while let Some(Tok::Word(".visible" | ".extern" | ".weak" | ".common")) = self.peek() {
            self.pos += 1;
        }
        match self.peek() {
            Some(Tok::Word(".entry")) | Some(Tok::Word(".func")) => {
                let entry = self.word()? == ".entry";
                let f = self.function(line, entry)?;
                ast.funcs.push(f);
            }
            _ => {
                let d = self.var_decl()?;
                ast.vars.push(d);
            }
        }
        Ok(())
    }

    fn param_list(&mut self) -> Result<Vec<VarDecl<'a>>, LoadError> {
        let mut v = Vec::new();
        self.expect('(')?;
        if self.eat(')') {
            return Ok(v);
        }
        loop {
            v.push(self.var_body()?);
            if self.eat(')') {
                return Ok(v);
            }
            self.expect(',')?;
        }
    }

    fn function(&mut self, line: u32, entry: bool) -> Result<FuncAst<'a>, LoadError> {
        let rets = if self.peek() == Some(Tok::Punct('(')) { self.param_list()? } else { Vec::new() };
        let name = self.word()?;
        let params = if self.peek() == Some(Tok::Punct('(')) { self.param_list()? } else { Vec::new() };
        // Attributes and performance tuning directives: .noreturn, .maxntid 256, 1, 1, ...
        loop {
            match self.peek() {
                Some(Tok::Word(w)) if w.starts_with('.') => {
                    self.pos += 1;
                    while matches!(self.peek(), Some(Tok::Num(_)) | Some(Tok::Punct(','))) {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
        if self.eat(';') {
            return Ok(FuncAst { line, name, entry, rets, params, body: None });
        }
        self.expect('{')?;
        let body = self.body()?;
        Ok(FuncAst { line, name, entry, rets, params, body: Some(body) })
    }

    /// Statements up to the `}` closing the function.
    fn body(&mut self) -> Result<Vec<Stmt<'a>>, LoadError> {
        let mut out = Vec::new();
        let mut depth = 0u32;
        loop {
            let line = self.line();
            match self.next()? {
                Tok::Punct('{') => {
                    depth += 1;
                    out.push(Stmt::Open);
                }
                Tok::Punct('}') => {
                    if depth == 0 {
                        return Ok(out);
                    }
                    depth -= 1;
                    out.push(Stmt::Close);
                }
                Tok::Punct(';') => {}
                Tok::Word(".loc" | ".file") => self.skip_line(line),
                Tok::Word(".pragma") => self.skip_statement()?,
                Tok::Word(w @ (".reg" | ".local" | ".param" | ".shared" | ".const" | ".global")) => {
                    self.pos -= 1;
                    let _ = w;
                    out.push(Stmt::Decl(self.var_decl()?));
                }
                Tok::Word(w) if self.peek() == Some(Tok::Punct(':')) => {
                    self.pos += 1;
                    if self.peek() == Some(Tok::Word(".branchtargets")) {
                        self.pos += 1;
                        let mut targets = vec![self.word()?];
                        while self.eat(',') {
                            targets.push(self.word()?);
                        }
                        self.expect(';')?;
                        out.push(Stmt::Targets(w, targets));
                    } else {
                        out.push(Stmt::Label(w, line));
                    }
                }
                Tok::Punct('@') => {
                    let neg = self.eat('!');
                    let p = self.word()?;
                    let opcode = self.word()?;
                    out.push(Stmt::Inst(self.instruction(line, Some((p, neg)), opcode)?));
                }
                Tok::Word(opcode) => out.push(Stmt::Inst(self.instruction(line, None, opcode)?)),
                t => return syntax(line, format!("unexpected {t:?} in function body")),
            }
        }
    }

    fn instruction(&mut self, line: u32, guard: Option<(&'a str, bool)>, opcode: &'a str) -> Result<InstAst<'a>, LoadError> {
        let mut operands = Vec::new();
        if !self.eat(';') {
            loop {
                operands.push(self.operand()?);
                if self.eat(';') {
                    break;
                }
                self.expect(',')?;
            }
        }
        Ok(InstAst { line, guard, opcode, operands })
    }

    fn name_list(&mut self, close: char) -> Result<Vec<&'a str>, LoadError> {
        let mut v = Vec::new();
        if self.eat(close) {
            return Ok(v);
        }
        loop {
            v.push(self.word()?);
            if self.eat(close) {
                return Ok(v);
            }
            self.expect(',')?;
        }
    }

    fn signed_number(&mut self) -> Result<Imm, LoadError> {
        let line = self.line();
        let neg = self.eat('-');
        let imm = match self.next()? {
            Tok::Num(n) => parse_num(n, line)?,
            t => return syntax(line, format!("expected a number, found {t:?}")),
        };
        Ok(match (neg, imm) {
            (false, i) => i,
            (true, Imm::Int(v)) => Imm::Int(v.wrapping_neg()),
            (true, Imm::F32(b)) => Imm::F32(b ^ 0x8000_0000),
            (true, Imm::F64(b)) => Imm::F64(b ^ (1 << 63)),
            (true, Imm::Float(f)) => Imm::Float(-f),
        })
    }

    fn operand(&mut self) -> Result<Operand<'a>, LoadError> {
        let line = self.line();
        match self.peek() {
            Some(Tok::Punct('[')) => {
                self.pos += 1;
                let base = match self.peek() {
                    Some(Tok::Word(w)) => {
                        self.pos += 1;
                        Some(w)
                    }
                    _ => None,
                };
                let off = if base.is_none() {
                    match self.signed_number()? {
                        Imm::Int(v) => v as i64,
                        _ => return syntax(line, "address must be an integer"),
                    }
                } else if self.eat('+') || self.peek() == Some(Tok::Punct('-')) {
                    match self.signed_number()? {
                        Imm::Int(v) => v as i64,
                        _ => return syntax(line, "address offset must be an integer"),
                    }
                } else {
                    0
                };
                self.expect(']')?;
                Ok(Operand::Addr { base, off })
            }
            Some(Tok::Punct('{')) => {
                self.pos += 1;
                Ok(Operand::Vector(self.name_list('}')?))
            }
            Some(Tok::Punct('(')) => {
                self.pos += 1;
                Ok(Operand::List(self.name_list(')')?))
            }
            Some(Tok::Punct('!')) => {
                self.pos += 1;
                Ok(Operand::NotName(self.word()?))
            }
            Some(Tok::Punct('-')) | Some(Tok::Num(_)) => Ok(Operand::Imm(self.signed_number()?)),
            Some(Tok::Word("_")) => {
                self.pos += 1;
                Ok(Operand::Sink)
            }
            Some(Tok::Word(w)) => {
                self.pos += 1;
                if self.eat('|') {
                    return Ok(Operand::Pair(w, self.word()?));
                }
                if self.peek() == Some(Tok::Punct('+')) {
                    return Err(LoadError::Unsupported { line, message: format!("address expression {w}+... outside []") });
                }
                Ok(Operand::Name(w))
            }
            t => syntax(line, format!("unexpected {t:?} in operand")),
        }
    }

    /// `.space [.align N] [.vN] .type name[<N>|[N]] [= init];`
    fn var_decl(&mut self) -> Result<VarDecl<'a>, LoadError> {
        let d = self.var_body()?;
        self.expect(';')?;
        Ok(d)
    }

    fn var_body(&mut self) -> Result<VarDecl<'a>, LoadError> {
        let line = self.line();
        let space = self.word()?;
        let mut d =
            VarDecl { line, space, align: None, ty: "", vec: 1, name: "", range: None, array: None, init: None };
        loop {
            let w = self.word()?;
            match w {
                ".align" => d.align = Some(self.number()?),
                ".v2" => d.vec = 2,
                ".v4" => d.vec = 4,
                ".ptr" => {
                    // `.ptr [.space] .align N` describes the pointee, not the parameter.
                    while let Some(Tok::Word(".global" | ".local" | ".shared" | ".const")) = self.peek() {
                        self.pos += 1;
                    }
                    if self.peek() == Some(Tok::Word(".align")) {
                        self.pos += 1;
                        self.number()?;
                    }
                }
                w if w.starts_with('.') && d.ty.is_empty() => d.ty = w,
                w if w.starts_with('.') => return syntax(line, format!("unexpected {w} in declaration")),
                w => {
                    d.name = w;
                    break;
                }
            }
        }
        if d.ty.is_empty() {
            return syntax(line, format!("declaration of {} has no type", d.name));
        }
        if self.eat('<') {
            d.range = Some(u32::try_from(self.number()?).or(syntax(line, "register count too large"))?);
            self.expect('>')?;
        } else if self.eat('[') {
            d.array = Some(if self.eat(']') {
                None
            } else {
                let n = self.number()?;
                self.expect(']')?;
                Some(n)
            });
            if self.peek() == Some(Tok::Punct('[')) {
                return Err(LoadError::Unsupported { line, message: "multi-dimensional arrays".into() });
            }
        }
        if self.eat('=') {
            let mut items = Vec::new();
            let braced = self.eat('{');
            loop {
                match self.peek() {
                    Some(Tok::Word("generic")) => {
                        self.pos += 1;
                        self.expect('(')?;
                        items.push(InitItem::Addr(self.word()?));
                        self.expect(')')?;
                    }
                    Some(Tok::Word(w)) => {
                        self.pos += 1;
                        items.push(InitItem::Addr(w));
                    }
                    Some(Tok::Punct('{')) => {
                        return Err(LoadError::Unsupported { line, message: "nested initialisers".into() })
                    }
                    _ => items.push(InitItem::Imm(self.signed_number()?)),
                }
                if !braced || !self.eat(',') {
                    break;
                }
            }
            if braced {
                self.expect('}')?;
            }
            d.init = Some(items);
        }
        Ok(d)
    }
}

pub(crate) fn parse<'a>(toks: &[Token<'a>]) -> Result<Ast<'a>, LoadError> {
    Parser { toks, pos: 0 }.module()
}
