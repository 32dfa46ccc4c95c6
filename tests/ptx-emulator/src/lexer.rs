//! Splits PTX text into tokens, keeping each token's line for diagnostics.

use crate::LoadError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    /// Identifiers, opcodes with their modifiers (`ld.global.nc.b8`), directives
    /// (`.reg`), registers (`%rd1`, `%tid.x`) and labels (`$L__BB0_2`).
    Word(&'a str),
    /// A numeric literal as written (`-` is a separate token).
    Num(&'a str),
    /// A quoted string (contents only).
    Str(&'a str),
    Punct(char),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
}

fn is_word_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || matches!(c, b'_' | b'$' | b'%' | b'.')
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.')
}

pub(crate) fn tokenize(src: &str) -> Result<Vec<Token<'_>>, LoadError> {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 6);
    let (mut i, mut line) = (0usize, 1u32);
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    line += (b[i] == b'\n') as u32;
                    i += 1;
                }
                i += 2;
            }
            b'"' => {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += 1;
                }
                if i >= b.len() || b[i] != b'"' {
                    return Err(LoadError::Syntax { line, message: "unterminated string".into() });
                }
                out.push(Token { tok: Tok::Str(&src[start..i]), line });
                i += 1;
            }
            c if c.is_ascii_digit() => {
                let start = i;
                // Numbers: decimal, 0x.., 0d.., 0f.., floats like 1.5e-3, an optional U suffix.
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    let exp_sign = matches!(b[i], b'e' | b'E')
                        && matches!(b.get(i + 1), Some(b'+' | b'-'))
                        && !src[start..i].starts_with("0x");
                    i += if exp_sign { 2 } else { 1 };
                }
                out.push(Token { tok: Tok::Num(&src[start..i]), line });
            }
            c if is_word_start(c) => {
                let start = i;
                while i < b.len() {
                    if is_word_char(b[i]) {
                        i += 1;
                    } else if b[i] == b':' && b.get(i + 1) == Some(&b':') {
                        i += 2; // cache-policy qualifiers such as .L1::no_allocate
                    } else {
                        break;
                    }
                }
                out.push(Token { tok: Tok::Word(&src[start..i]), line });
            }
            b',' | b';' | b':' | b'[' | b']' | b'{' | b'}' | b'(' | b')' | b'+' | b'-' | b'!' | b'@' | b'=' | b'<'
            | b'>' | b'|' | b'*' => {
                out.push(Token { tok: Tok::Punct(c as char), line });
                i += 1;
            }
            _ => {
                return Err(LoadError::Syntax { line, message: format!("unexpected character {:?}", c as char) });
            }
        }
    }
    Ok(out)
}
