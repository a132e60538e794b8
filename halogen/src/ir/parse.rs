//! A parser for the printed loop nest (see [`crate::ir::printer`]): `parse_stmt(&s.to_string())`
//! gives back `s`. It makes pass tests short: `halogen/tests/lower/*.hal` hold a nest as text.
//!
//! The printed form fully parenthesizes operators, so expressions need no precedence rules.
//! Statement headers each have their own method ([`Parser::for_loop`], [`Parser::realize`]…),
//! so that a new field is read where its node is.
//!
//! Calls to Funcs cannot be rebuilt from their name alone (a call holds the Func's
//! [`FuncId`]): [`parse_stmt_with_funcs`] takes the ids of the Funcs a text may call, by the
//! name the calls use. A call's type is written in the text (`f:uint8(x)`), and whether the
//! Func has several values too (`f.1(x)` is value 1 of a tuple). A typed call to a name
//! not given is an image's (`input:uint8(x, y)`).

use super::expr::{BinOp, CallKind, CmpOp, Expr, ExprKind, FloatBits, FuncId, Intrinsic, Name, VarBinding};
use super::printer::intrinsic_default_type;
use super::stack;
use super::stmt::{CombineOp, Fold, ForKind, MsgPart, Range, Stmt, TailPlace, TransferOp, VectorTail};
use super::types::{Type, TypeCode};
use crate::error::{Error, Result};
use std::collections::HashMap;

/// Parses a statement printed by `Stmt`'s `Display`. The text may not call Funcs.
///
/// ```
/// use halogen::ir::parse::parse_stmt;
/// use halogen::ir::{Expr, ForKind, Stmt};
/// use halogen::Type;
/// let x = Expr::var(Type::i32(), "x");
/// let load = Expr::load(Type::u8(), "input", x.clone(), None);
/// let s = Stmt::for_loop("x", Expr::i32(0), Expr::param(Type::i32(), "n"), ForKind::Serial,
///     Stmt::Store { buffer: "out".into(), value: load, index: x, predicate: None });
/// let text = s.to_string();
/// assert_eq!(text, "for (x, 0, n) {\n  out[x] = input:uint8[x]\n}\n");
/// assert_eq!(parse_stmt(&text).unwrap(), s);
/// ```
pub fn parse_stmt(text: &str) -> Result<Stmt> {
    parse_stmt_with_funcs(text, &HashMap::new())
}

/// Parses a statement that may call the Funcs in `funcs`, keyed by the name their calls
/// carry (a tuple's value `k` is called as `name.k`).
///
/// ```
/// use halogen::ir::parse::parse_stmt_with_funcs;
/// use halogen::ir::{CallKind, ExprKind, FuncId, Stmt};
/// use std::collections::HashMap;
/// let funcs = HashMap::from([("f".into(), FuncId(7))]);
/// let text = "let y = 3\nout[y] = f.1:int32(y)\n";
/// let s = parse_stmt_with_funcs(text, &funcs).unwrap();
/// assert_eq!(s.to_string(), text);
/// let Stmt::LetStmt { body, .. } = &s else { unreachable!() };
/// let Stmt::Store { value, .. } = &**body else { unreachable!() };
/// let ExprKind::Call { kind, .. } = value.kind() else { unreachable!() };
/// assert_eq!(*kind, CallKind::Func { func: FuncId(7), value_index: 1, tuple: true });
/// ```
pub fn parse_stmt_with_funcs(text: &str, funcs: &HashMap<Name, FuncId>) -> Result<Stmt> {
    let mut p = Parser::new(text, funcs)?;
    let s = p.block()?;
    if p.pos < p.toks.len() {
        return Err(p.error("expected a statement"));
    }
    Ok(s)
}

/// Parses an expression printed by `Expr`'s `Display` inside a statement, with every free
/// variable an `int32` parameter unless annotated.
///
/// ```
/// use halogen::ir::parse::parse_expr;
/// let e = parse_expr("(a:float32 * 2.0f)").unwrap();
/// assert_eq!(e.ty(), halogen::Type::f32());
/// ```
pub fn parse_expr(text: &str) -> Result<Expr> {
    let mut p = Parser::new(text, &HashMap::new())?;
    let e = p.expr()?;
    if p.pos < p.toks.len() {
        return Err(p.error("unexpected text after the expression"));
    }
    Ok(e)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Number(String),
    Str(String),
    Punct(&'static str),
}

const PUNCTS: [&str; 28] = [
    "<<", ">>", "&&", "||", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", "=", ":", "!", "+", "-", "*",
    "/", "%", "&", "|", "^", "<", ">",
];

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$' || c == '.'
}

/// Splits text into tokens, each with its byte offset.
fn tokenize(text: &str) -> std::result::Result<Vec<(Tok, usize)>, (String, usize)> {
    let mut toks = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let c = text[i..].chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            i += c.len_utf8();
        } else if c == ';' {
            // A comment runs to the end of the line.
            i = text[i..].find('\n').map_or(text.len(), |n| i + n);
        } else if is_ident_start(c) {
            let end = text[i..].find(|c: char| !is_ident_char(c)).map_or(text.len(), |n| i + n);
            toks.push((Tok::Ident(text[i..end].to_string()), i));
            i = end;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                // An exponent's sign belongs to the number.
                let exp_sign = (b[i] == b'e') && i + 1 < b.len() && (b[i + 1] == b'-' || b[i + 1] == b'+');
                i += if exp_sign { 2 } else { 1 };
            }
            toks.push((Tok::Number(text[start..i].to_string()), start));
        } else if c == '"' {
            let start = i;
            let mut s = String::new();
            let mut chars = text[i + 1..].char_indices();
            loop {
                let Some((k, ch)) = chars.next() else { return Err(("unterminated string".into(), start)) };
                match ch {
                    '"' => {
                        i = i + 1 + k + 1;
                        break;
                    }
                    '\\' => match chars.next() {
                        Some((_, 'n')) => s.push('\n'),
                        Some((_, 't')) => s.push('\t'),
                        Some((_, 'r')) => s.push('\r'),
                        Some((_, '0')) => s.push('\0'),
                        Some((_, 'u')) => {
                            let rest: String = chars.by_ref().map(|(_, c)| c).take_while(|c| *c != '}').collect();
                            let code =
                                u32::from_str_radix(rest.trim_start_matches('{'), 16).ok().and_then(char::from_u32);
                            s.push(code.ok_or(("bad \\u escape".to_string(), start))?);
                        }
                        Some((_, other)) => s.push(other),
                        None => return Err(("unterminated string".into(), start)),
                    },
                    other => s.push(other),
                }
            }
            toks.push((Tok::Str(s), start));
        } else {
            let p = PUNCTS.iter().find(|p| text[i..].starts_with(**p)).ok_or((format!("unexpected '{c}'"), i))?;
            toks.push((Tok::Punct(p), i));
            i += p.len();
        }
    }
    Ok(toks)
}

/// Parses a type name as the printer writes it: `int32`, `uint8x16`, `float32`, `bool`.
fn parse_type(s: &str) -> Option<Type> {
    let (code, rest) = if let Some(r) = s.strip_prefix("uint") {
        (TypeCode::UInt, r)
    } else if let Some(r) = s.strip_prefix("int") {
        (TypeCode::Int, r)
    } else if let Some(r) = s.strip_prefix("float") {
        (TypeCode::Float, r)
    } else if let Some(r) = s.strip_prefix("handle") {
        (TypeCode::Handle, r)
    } else if let Some(r) = s.strip_prefix("bool") {
        (TypeCode::Bool, r)
    } else {
        return None;
    };
    let (bits, lanes) = match rest.split_once('x') {
        Some((b, l)) => (b, Some(l)),
        None => (rest, None),
    };
    let bits: u8 = match code {
        TypeCode::Bool if bits.is_empty() => 1,
        TypeCode::Bool => return None,
        _ => bits.parse().ok()?,
    };
    let lanes: u16 = match lanes {
        Some(l) => l.parse().ok().filter(|l| *l > 1)?,
        None => 1,
    };
    Some(Type::new(code, bits).with_lanes(lanes))
}

fn intrinsic_named(name: &str) -> Option<Intrinsic> {
    Intrinsic::ALL.into_iter().find(|i| i.name() == name)
}

fn binop_named(p: &str) -> Option<BinOp> {
    Some(match p {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Mod,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        "<<" => BinOp::Shl,
        ">>" => BinOp::Shr,
        "&&" => BinOp::And,
        "||" => BinOp::Or,
        _ => return None,
    })
}

fn cmpop_named(p: &str) -> Option<CmpOp> {
    Some(match p {
        "==" => CmpOp::Eq,
        "!=" => CmpOp::Ne,
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        _ => return None,
    })
}

fn for_kind_named(w: &str) -> Option<ForKind> {
    Some(match w {
        "for" => ForKind::Serial,
        "parallel" => ForKind::Parallel,
        "vectorized" => ForKind::Vectorized,
        "unrolled" => ForKind::Unrolled,
        "gpu_block" => ForKind::GpuBlock,
        "gpu_thread" => ForKind::GpuThread,
        "distributed" => ForKind::Distributed,
        _ => return None,
    })
}

/// A recursive-descent parser over the tokens of one text, tracking the names in scope as
/// the printer does.
struct Parser<'a> {
    text: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    funcs: HashMap<Name, FuncId>,
    vars: Vec<(Name, Type)>,
    buffers: Vec<(Name, Type)>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, funcs: &HashMap<Name, FuncId>) -> Result<Parser<'a>> {
        let toks = tokenize(text).map_err(|(m, at)| Self::error_at(text, at, &m))?;
        Ok(Parser { text, toks, pos: 0, funcs: funcs.clone(), vars: Vec::new(), buffers: Vec::new() })
    }

    fn error_at(text: &str, at: usize, msg: &str) -> Error {
        let line_no = text[..at].matches('\n').count() + 1;
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let line = text[line_start..].lines().next().unwrap_or("");
        let col = text[line_start..at].chars().count() + 1;
        Error::internal("loop-nest parser", format!("line {line_no}, column {col}: {msg}\n{line}"))
    }

    fn error(&self, msg: &str) -> Error {
        let at = self.toks.get(self.pos).map_or(self.text.len(), |t| t.1);
        let found = match self.toks.get(self.pos) {
            Some((Tok::Ident(s) | Tok::Number(s), _)) => format!("'{s}'"),
            Some((Tok::Str(s), _)) => format!("{s:?}"),
            Some((Tok::Punct(p), _)) => format!("'{p}'"),
            None => "the end of the text".into(),
        };
        Self::error_at(self.text, at, &format!("{msg}, found {found}"))
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.toks.get(self.pos + k).map(|t| &t.0)
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == w)
    }

    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is_punct(p);
        if yes {
            self.pos += 1;
        }
        yes
    }

    fn expect(&mut self, p: &str) -> Result<()> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{p}'")))
        }
    }

    fn expect_word(&mut self, w: &str) -> Result<()> {
        if self.is_word(w) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{w}'")))
        }
    }

    fn ident(&mut self) -> Result<Name> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let n: Name = s.as_str().into();
                self.pos += 1;
                Ok(n)
            }
            _ => Err(self.error("expected a name")),
        }
    }

    fn ty(&mut self) -> Result<Type> {
        match self.peek() {
            Some(Tok::Ident(s)) => match parse_type(s) {
                Some(t) => {
                    self.pos += 1;
                    Ok(t)
                }
                None => Err(self.error("expected a type")),
            },
            _ => Err(self.error("expected a type")),
        }
    }

    fn var_type(&self, name: &str) -> Option<Type> {
        self.vars.iter().rev().find(|(n, _)| &**n == name).map(|(_, t)| *t)
    }

    fn buffer_type(&self, name: &str) -> Option<Type> {
        self.buffers.iter().rev().find(|(n, _)| &**n == name).map(|(_, t)| *t)
    }

    /// Runs `f` with `name` bound to a variable of type `ty`.
    fn with_var<T>(&mut self, name: &Name, ty: Type, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.vars.push((name.clone(), ty));
        let r = f(self);
        self.vars.pop();
        r
    }

    // ----- statements -----

    /// Statements up to a `}` or the end of the text: one is itself (unless it is a block
    /// in braces, which the printer writes only inside a block), others a block.
    fn block(&mut self) -> Result<Stmt> {
        let mut stmts = self.block_items()?;
        Ok(match stmts.as_slice() {
            [one] if !matches!(one, Stmt::Block(_)) => stmts.pop().unwrap_or_else(Stmt::no_op),
            _ => Stmt::Block(stmts),
        })
    }

    /// The statements up to a `}` or the end of the text; a `let` or `allocate` takes the
    /// rest of them as its body.
    fn block_items(&mut self) -> Result<Vec<Stmt>> {
        stack::guard(|| {
            let mut stmts = Vec::new();
            while self.peek().is_some() && !self.is_punct("}") {
                if self.is_word("let") {
                    stmts.push(self.let_stmt()?);
                    break;
                }
                if self.is_word("allocate") {
                    stmts.push(self.allocate()?);
                    break;
                }
                stmts.push(self.stmt()?);
            }
            Ok(stmts)
        })
    }

    /// `{ ... }` around statements.
    fn braced_block(&mut self) -> Result<Stmt> {
        self.expect("{")?;
        let s = self.block()?;
        self.expect("}")?;
        Ok(s)
    }

    fn let_stmt(&mut self) -> Result<Stmt> {
        self.expect_word("let")?;
        let name = self.ident()?;
        self.expect("=")?;
        let value = self.expr()?;
        let body = self.with_var(&name, value.ty(), |p| p.block())?;
        Ok(Stmt::LetStmt { name, value, body: Box::new(body) })
    }

    fn allocate(&mut self) -> Result<Stmt> {
        self.expect_word("allocate")?;
        let name = self.ident()?;
        self.expect("[")?;
        let ty = self.ty()?;
        self.expect("*")?;
        let mut extents = Vec::new();
        while !self.eat("]") {
            if !extents.is_empty() {
                self.expect("*")?;
            }
            extents.push(self.expr()?);
        }
        self.buffers.push((name.clone(), ty));
        let body = self.block();
        self.buffers.pop();
        Ok(Stmt::Allocate { name, ty, extents, body: Box::new(body?) })
    }

    fn stmt(&mut self) -> Result<Stmt> {
        stack::guard(|| {
            let word = match self.peek() {
                Some(Tok::Ident(w)) => w.clone(),
                Some(Tok::Punct("{")) => {
                    // In braces: a let or allocation that ends before its block does, or else
                    // a nested block (of any length).
                    self.pos += 1;
                    let mut items = self.block_items()?;
                    self.expect("}")?;
                    return Ok(match items.as_slice() {
                        [Stmt::LetStmt { .. } | Stmt::Allocate { .. }] => items.pop().unwrap_or_else(Stmt::no_op),
                        _ => Stmt::Block(items),
                    });
                }
                _ => String::new(),
            };
            let next_is = |p: &Parser, q: &str| matches!(p.peek_at(1), Some(Tok::Punct(x)) if *x == q);
            let next2_is = |p: &Parser, q: &str| matches!(p.peek_at(2), Some(Tok::Punct(x)) if *x == q);
            match word.as_str() {
                "assert" if next_is(self, "(") => self.assert(),
                "produce" | "consume" if matches!(self.peek_at(1), Some(Tok::Ident(_))) => self.producer_consumer(),
                "realize" if matches!(self.peek_at(1), Some(Tok::Ident(_))) => self.realize(),
                "free" if matches!(self.peek_at(1), Some(Tok::Ident(_))) => {
                    self.pos += 1;
                    Ok(Stmt::Free { name: self.ident()? })
                }
                "if" if next_is(self, "(") => self.if_then_else(),
                "wait" if matches!(self.peek_at(1), Some(Tok::Ident(w)) if w == "transfers") => {
                    self.pos += 2;
                    Ok(Stmt::TransferWait)
                }
                "send" | "receive" if matches!(self.peek_at(1), Some(Tok::Ident(_))) && next2_is(self, ":") => {
                    self.transfer()
                }
                "combine"
                    if matches!(self.peek_at(2), Some(Tok::Ident(_)))
                        && matches!(self.peek_at(3), Some(Tok::Punct(x)) if *x == ":") =>
                {
                    self.transfer()
                }
                w if for_kind_named(w).is_some() && next_is(self, "(") => self.for_loop(),
                _ if !word.is_empty() && next_is(self, "[") => self.store(),
                _ if !word.is_empty() && next_is(self, "(") => {
                    // `f(args) = value` is a Provide; otherwise the call is evaluated.
                    let start = self.pos;
                    if let Some(s) = self.provide()? {
                        return Ok(s);
                    }
                    self.pos = start;
                    Ok(Stmt::Evaluate(self.expr()?))
                }
                _ => Ok(Stmt::Evaluate(self.expr()?)),
            }
        })
    }

    /// `send f:type([min, extent], ...) to rank peer` (before storage flattening) or
    /// `send f:type[index] extents [...] strides [...] to rank peer`; `receive ... from`
    /// and `combine OP ... from`.
    fn transfer(&mut self) -> Result<Stmt> {
        let op = if self.is_word("send") {
            TransferOp::Send
        } else if self.is_word("receive") {
            TransferOp::Receive
        } else {
            self.pos += 1;
            let word = self.ident()?;
            let op = CombineOp::from_word(&word).ok_or_else(|| {
                self.error(&format!("'combine {word}': the operation is one of add, mul, min, max, and, or, xor"))
            })?;
            // Leave the position on the operation's word, as on `send` or `receive`.
            self.pos -= 1;
            TransferOp::Combine(op)
        };
        self.pos += 1;
        let buffer = self.ident()?;
        self.expect(":")?;
        let ty = self.ty()?;
        let (mut mins, mut extents, mut strides) = (Vec::new(), Vec::new(), Vec::new());
        let list = |p: &mut Self, out: &mut Vec<Expr>| -> Result<()> {
            p.expect("[")?;
            while !p.eat("]") {
                if !out.is_empty() {
                    p.expect(",")?;
                }
                out.push(p.expr()?);
            }
            Ok(())
        };
        if self.eat("(") {
            while !self.eat(")") {
                if !mins.is_empty() {
                    self.expect(",")?;
                }
                self.expect("[")?;
                mins.push(self.expr()?);
                self.expect(",")?;
                extents.push(self.expr()?);
                self.expect("]")?;
            }
        } else {
            self.expect("[")?;
            mins.push(self.expr()?);
            self.expect("]")?;
            self.expect_word("extents")?;
            list(self, &mut extents)?;
            self.expect_word("strides")?;
            list(self, &mut strides)?;
        }
        self.expect_word(if op == TransferOp::Send { "to" } else { "from" })?;
        self.expect_word("rank")?;
        let peer = self.expr()?;
        Ok(Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides })
    }

    fn assert(&mut self) -> Result<Stmt> {
        self.expect_word("assert")?;
        self.expect("(")?;
        let condition = self.expr()?;
        self.expect(",")?;
        let (text, at) = match self.toks.get(self.pos) {
            Some((Tok::Str(s), at)) => (s.clone(), *at),
            _ => return Err(self.error("expected the message string")),
        };
        self.pos += 1;
        self.expect(")")?;
        let message = self.message(&text, at)?;
        Ok(Stmt::Assert { condition, message })
    }

    /// An assertion's message: text with `{expr}` values; `{{` and `}}` are braces.
    fn message(&mut self, text: &str, at: usize) -> Result<Vec<MsgPart>> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|x| x.1) == Some('{') => {
                    chars.next();
                    lit.push('{');
                }
                '}' if chars.peek().map(|x| x.1) == Some('}') => {
                    chars.next();
                    lit.push('}');
                }
                '{' => {
                    // The value runs to the matching brace (values print no braces).
                    let mut depth = 1;
                    let mut end = None;
                    for (j, d) in chars.by_ref() {
                        depth += match d {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        if depth == 0 {
                            end = Some(j);
                            break;
                        }
                    }
                    let end = end.ok_or_else(|| Self::error_at(self.text, at, "unclosed '{' in the message"))?;
                    if !lit.is_empty() {
                        parts.push(MsgPart::Text(std::mem::take(&mut lit)));
                    }
                    let mut sub = Parser::new(&text[i + 1..end], &self.funcs)?;
                    sub.vars = self.vars.clone();
                    sub.buffers = self.buffers.clone();
                    let e = sub.expr()?;
                    if sub.pos < sub.toks.len() {
                        return Err(sub.error("unexpected text after a message value"));
                    }
                    parts.push(MsgPart::Value(e));
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            parts.push(MsgPart::Text(lit));
        }
        Ok(parts)
    }

    fn producer_consumer(&mut self) -> Result<Stmt> {
        let is_producer = self.is_word("produce");
        self.pos += 1;
        let name = self.ident()?;
        let body = self.braced_block()?;
        Ok(Stmt::ProducerConsumer { name, is_producer, body: Box::new(body) })
    }

    /// `kind (name, min, extent) tail(...)... { body }`
    fn for_loop(&mut self) -> Result<Stmt> {
        let kind = match self.peek() {
            Some(Tok::Ident(w)) => for_kind_named(w).ok_or_else(|| self.error("expected a loop kind"))?,
            _ => return Err(self.error("expected a loop kind")),
        };
        self.pos += 1;
        self.expect("(")?;
        let name = self.ident()?;
        self.expect(",")?;
        let min = self.expr()?;
        self.expect(",")?;
        let extent = self.expr()?;
        self.expect(")")?;
        let (tails, body) = self.with_var(&name, min.ty(), |p| {
            let mut tails = Vec::new();
            while let Some(tail) = p.vector_tail()? {
                tails.push(tail);
            }
            Ok((tails, p.braced_block()?))
        })?;
        Ok(Stmt::For { name, min, extent, kind, tails, body: Box::new(body) })
    }

    /// `tail(condition, guard_term, var = unclamped)`, or `tail_each(...)`/`tail_nest(...)`
    /// for the other places; `None` where the loop header has no more tails.
    fn vector_tail(&mut self) -> Result<Option<VectorTail>> {
        let place =
            [("tail", TailPlace::Loop), ("tail_each", TailPlace::EachIteration), ("tail_nest", TailPlace::Nest)]
                .into_iter()
                .find(|(word, _)| self.is_word(word))
                .map(|(_, place)| place);
        let Some(place) = place.filter(|_| matches!(self.peek_at(1), Some(Tok::Punct("(")))) else { return Ok(None) };
        self.pos += 2;
        let condition = self.expr()?;
        self.expect(",")?;
        let guard_term = self.expr()?;
        self.expect(",")?;
        let var = self.ident()?;
        self.expect("=")?;
        let unclamped = self.expr()?;
        self.expect(")")?;
        Ok(Some(VectorTail { condition, guard_term, place, var, unclamped }))
    }

    /// `realize name([min, extent], ...) : types { body }`
    fn realize(&mut self) -> Result<Stmt> {
        self.expect_word("realize")?;
        let name = self.ident()?;
        self.expect("(")?;
        let mut bounds = Vec::new();
        while !self.eat(")") {
            if !bounds.is_empty() {
                self.expect(",")?;
            }
            self.expect("[")?;
            let min = self.expr()?;
            self.expect(",")?;
            let extent = self.expr()?;
            self.expect("]")?;
            bounds.push(Range::new(min, extent));
        }
        self.expect(":")?;
        let mut types = vec![self.ty()?];
        while self.eat(",") {
            types.push(self.ty()?);
        }
        let fold = if self.is_word("fold") {
            self.pos += 1;
            self.expect("(")?;
            let dim = self.count("a dimension")?;
            self.expect(",")?;
            let factor = self.count("a fold factor")? as i64;
            self.expect(")")?;
            Some(Fold { dim, factor })
        } else {
            None
        };
        let body = self.braced_block()?;
        Ok(Stmt::Realize { name, types, bounds, fold, body: Box::new(body) })
    }

    /// A non-negative integer written as such (a dimension, a factor), `what` for errors.
    fn count(&mut self, what: &str) -> Result<usize> {
        let n = match self.peek() {
            Some(Tok::Number(n)) => n.parse::<usize>().ok(),
            _ => None,
        };
        let n = n.ok_or_else(|| self.error(&format!("expected {what}")))?;
        self.pos += 1;
        Ok(n)
    }

    /// `buffer[index] = value` with an optional `if predicate`.
    fn store(&mut self) -> Result<Stmt> {
        let buffer = self.ident()?;
        self.expect("[")?;
        let index = self.expr()?;
        self.expect("]")?;
        self.expect("=")?;
        let value = self.expr()?;
        let predicate = if self.is_word("if") {
            self.pos += 1;
            Some(self.expr()?)
        } else {
            None
        };
        Ok(Stmt::Store { buffer, value, index, predicate })
    }

    /// `name(args) = value` or `name(args) = {v0, v1}`; `None` if the text is not a Provide.
    fn provide(&mut self) -> Result<Option<Stmt>> {
        let name = self.ident()?;
        self.expect("(")?;
        let mut args = Vec::new();
        while !self.eat(")") {
            if !args.is_empty() {
                self.expect(",")?;
            }
            args.push(self.expr()?);
        }
        if !self.eat("=") {
            return Ok(None);
        }
        let values = if self.eat("{") {
            let mut v = vec![self.expr()?];
            while self.eat(",") {
                v.push(self.expr()?);
            }
            self.expect("}")?;
            v
        } else {
            vec![self.expr()?]
        };
        Ok(Some(Stmt::Provide { name, values, args }))
    }

    fn if_then_else(&mut self) -> Result<Stmt> {
        self.expect_word("if")?;
        self.expect("(")?;
        let condition = self.expr()?;
        self.expect(")")?;
        let then_case = Box::new(self.braced_block()?);
        let else_case = if self.is_word("else") {
            self.pos += 1;
            Some(Box::new(self.braced_block()?))
        } else {
            None
        };
        Ok(Stmt::IfThenElse { condition, then_case, else_case })
    }

    // ----- expressions -----

    fn expr(&mut self) -> Result<Expr> {
        stack::guard(|| match self.peek().cloned() {
            Some(Tok::Punct("(")) => self.paren(),
            Some(Tok::Punct("!")) => {
                self.pos += 1;
                let a = self.expr()?;
                Ok(Expr::make(a.ty(), ExprKind::Not(a)))
            }
            Some(Tok::Punct("-")) => {
                self.pos += 1;
                self.number(None, true)
            }
            Some(Tok::Number(_)) => self.number(None, false),
            Some(Tok::Ident(w)) => self.ident_expr(&w),
            _ => Err(self.error("expected an expression")),
        })
    }

    /// `(a op b)`, `(let n = v in b)` or a typed constant `(uint8)3`.
    fn paren(&mut self) -> Result<Expr> {
        self.expect("(")?;
        if self.is_word("let") {
            self.pos += 1;
            let name = self.ident()?;
            self.expect("=")?;
            let value = self.expr()?;
            self.expect_word("in")?;
            let body = self.with_var(&name, value.ty(), |p| p.expr())?;
            self.expect(")")?;
            return Ok(Expr::make(body.ty(), ExprKind::Let { name, value, body }));
        }
        let typed_const = matches!(self.peek(), Some(Tok::Ident(s)) if parse_type(s).is_some())
            && matches!(self.peek_at(1), Some(Tok::Punct(")")));
        if typed_const {
            let t = self.ty()?;
            self.expect(")")?;
            let neg = self.eat("-");
            return self.number(Some(t), neg);
        }
        let a = self.expr()?;
        let op = match self.peek() {
            Some(Tok::Punct(p)) => *p,
            _ => return Err(self.error("expected an operator")),
        };
        self.pos += 1;
        let b = self.expr()?;
        self.expect(")")?;
        if let Some(op) = binop_named(op) {
            Ok(Expr::make(a.ty(), ExprKind::Binary(op, a, b)))
        } else if let Some(op) = cmpop_named(op) {
            Ok(Expr::make(Type::bool().with_lanes(a.ty().lanes), ExprKind::Cmp(op, a, b)))
        } else {
            self.pos -= 1;
            Err(self.error(&format!("'{op}' is not an operator")))
        }
    }

    /// A constant: an integer, or a float with a `.`, an exponent, `inf` or `NaN` (`f`
    /// suffix for float32); `ty` is the type written before it, if any.
    fn number(&mut self, ty: Option<Type>, negative: bool) -> Result<Expr> {
        let text = match self.peek() {
            Some(Tok::Number(s) | Tok::Ident(s)) => s.clone(),
            _ => return Err(self.error("expected a number")),
        };
        let is_f32 = (text.ends_with('f') && !text.ends_with("inf")) || text == "inff";
        let body = if is_f32 { &text[..text.len() - 1] } else { text.as_str() };
        let looks_float = body.contains(['.', 'e']) || body == "inf" || body == "NaN";
        let float_ty = if is_f32 { Type::f32() } else { Type::f64() };
        let ty = ty.unwrap_or(if looks_float { float_ty } else { Type::i32() });
        if ty.is_float() {
            let v: f64 = body.parse().map_err(|_| self.error("expected a float"))?;
            let v = if negative { -v } else { v };
            let v = if ty.bits == 32 { v as f32 as f64 } else { v };
            self.pos += 1;
            return Ok(Expr::make(ty, ExprKind::FloatImm(FloatBits(v.to_bits()))));
        }
        let v = match body {
            "true" if ty.is_bool() => 1,
            "false" if ty.is_bool() => 0,
            _ => {
                let m: u64 = body.parse().map_err(|_| self.error("expected an integer"))?;
                if negative {
                    (m as i64).wrapping_neg()
                } else {
                    m as i64
                }
            }
        };
        self.pos += 1;
        Ok(Expr::make(ty, ExprKind::IntImm(ty.wrap_int(v))))
    }

    /// Comma-separated expressions up to `)` (the `(` already read).
    fn args(&mut self) -> Result<Vec<Expr>> {
        let mut args = Vec::new();
        while !self.eat(")") {
            if !args.is_empty() {
                self.expect(",")?;
            }
            args.push(self.expr()?);
        }
        Ok(args)
    }

    /// The optional `:TYPE` (or `:var:TYPE`, `:param:TYPE`) after a name.
    fn annotation(&mut self) -> Result<(Option<VarBinding>, Option<Type>)> {
        if !self.eat(":") {
            return Ok((None, None));
        }
        let binding = match self.peek() {
            Some(Tok::Ident(w)) if w == "var" => Some(VarBinding::Plain),
            Some(Tok::Ident(w)) if w == "param" => Some(VarBinding::Param),
            Some(Tok::Ident(w)) if w == "rvar" => {
                return Err(self.error("reduction variables cannot be parsed (they belong to a Func's definition)"))
            }
            _ => None,
        };
        if binding.is_some() {
            self.pos += 1;
            self.expect(":")?;
        }
        Ok((binding, Some(self.ty()?)))
    }

    /// What a call name refers to: the Func `f` (value 0, not a tuple), or value `k` of the
    /// tuple Func `f` for `f.k`; a name given whole wins over its split.
    fn func_named(&self, name: &str) -> Option<(Name, CallKind)> {
        if let Some(&func) = self.funcs.get(name) {
            return Some((name.into(), CallKind::Func { func, value_index: 0, tuple: false }));
        }
        let (base, k) = name.rsplit_once('.')?;
        let (&func, value_index) = (self.funcs.get(base)?, k.parse::<usize>().ok()?);
        Some((base.into(), CallKind::Func { func, value_index, tuple: true }))
    }

    fn ident_expr(&mut self, word: &str) -> Result<Expr> {
        match word {
            "true" | "false" => return self.number(Some(Type::bool()), false),
            "inf" | "inff" | "NaN" | "NaNf" => return self.number(None, false),
            _ => {}
        }
        let call = matches!(self.peek_at(1), Some(Tok::Punct("(")));
        if call {
            if let Some(e) = self.builtin(word)? {
                return Ok(e);
            }
        }
        let name = self.ident()?;
        let (binding, ann) = self.annotation()?;
        if self.eat("(") {
            return self.call(name, ann);
        }
        if self.eat("[") {
            let index = self.expr()?;
            let predicate = if self.is_word("if") {
                self.pos += 1;
                Some(self.expr()?)
            } else {
                None
            };
            self.expect("]")?;
            let elem = match ann.or_else(|| self.buffer_type(&name)) {
                Some(t) => t,
                None => {
                    return Err(self.error(&format!("the load from '{name}' needs its element type ({name}:TYPE[...])")))
                }
            };
            let ty = elem.with_lanes(index.ty().lanes);
            return Ok(Expr::make(ty, ExprKind::Load { buffer: name, index, predicate }));
        }
        let bound = self.var_type(&name);
        let binding = binding.unwrap_or(if bound.is_some() { VarBinding::Plain } else { VarBinding::Param });
        let ty = ann.or(bound).unwrap_or(Type::i32());
        Ok(Expr::make(ty, ExprKind::Var { name, binding }))
    }

    /// `select`, `min`, `max`, `ramp`, broadcasts `xN(v)` and casts `TYPE(v)`; `None` for
    /// any other name.
    fn builtin(&mut self, word: &str) -> Result<Option<Expr>> {
        let broadcast_lanes = word.strip_prefix('x').and_then(|l| l.parse::<u16>().ok());
        let cast = parse_type(word);
        if !matches!(word, "select" | "min" | "max" | "ramp") && broadcast_lanes.is_none() && cast.is_none() {
            return Ok(None);
        }
        self.pos += 2;
        let e = match word {
            "select" => {
                let c = self.expr()?;
                self.expect(",")?;
                let a = self.expr()?;
                self.expect(",")?;
                let b = self.expr()?;
                Expr::make(a.ty(), ExprKind::Select(c, a, b))
            }
            "min" | "max" => {
                let a = self.expr()?;
                self.expect(",")?;
                let b = self.expr()?;
                let op = if word == "min" { BinOp::Min } else { BinOp::Max };
                Expr::make(a.ty(), ExprKind::Binary(op, a, b))
            }
            "ramp" => {
                let base = self.expr()?;
                self.expect(",")?;
                let stride = self.expr()?;
                self.expect(",")?;
                let lanes = match self.peek() {
                    Some(Tok::Number(n)) => n.parse::<u16>().map_err(|_| self.error("expected a lane count"))?,
                    _ => return Err(self.error("expected a lane count")),
                };
                self.pos += 1;
                Expr::make(base.ty().with_lanes(lanes), ExprKind::Ramp { base, stride, lanes })
            }
            _ => {
                let a = self.expr()?;
                match (broadcast_lanes, cast) {
                    (Some(lanes), _) => Expr::make(a.ty().with_lanes(lanes), ExprKind::Broadcast { value: a, lanes }),
                    (None, Some(t)) => Expr::make(t, ExprKind::Cast(a)),
                    (None, None) => unreachable!("checked above"),
                }
            }
        };
        self.expect(")")?;
        Ok(Some(e))
    }

    /// A call (the `(` already read): a Func given to the parser, an intrinsic, or else an
    /// image, whose element type the text must give.
    fn call(&mut self, name: Name, ann: Option<Type>) -> Result<Expr> {
        let args = self.args()?;
        if let Some((base, kind)) = self.func_named(&name) {
            let ty =
                ann.ok_or_else(|| self.error(&format!("the call to Func '{name}' needs its type ({name}:TYPE(...))")))?;
            return Ok(Expr::make(ty, ExprKind::Call { name: base, args, kind }));
        }
        if let Some(which) = intrinsic_named(&name) {
            let ty = ann.or_else(|| intrinsic_default_type(&args));
            let ty = ty.ok_or_else(|| self.error(&format!("the call to {name} needs its type ({name}:TYPE(...))")))?;
            return Ok(Expr::make(ty, ExprKind::Call { name, args, kind: CallKind::Intrinsic(which) }));
        }
        match ann {
            Some(ty) => Ok(Expr::make(ty, ExprKind::Call { name, args, kind: CallKind::Image })),
            None => Err(self.error(&format!(
                "'{name}' is neither a Func given to the parser nor an intrinsic; an image call is written {name}:TYPE(...)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
