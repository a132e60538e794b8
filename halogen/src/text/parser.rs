//! The parser of `.halogen` files: statements build the Funcs as they are read, so a
//! name must be declared (or defined) before it is used, as in the Rust API.

use super::lexer::{lex, Tok};
use super::pipeline::{fits, AnyParam, SizeExpr, TextInput, TextParam, TextPipeline};
use super::schedule::{Arg, Directive};
use super::{Pos, TextError};
use crate::lang::boundary;
use crate::lang::expr_ops::cast;
use crate::lang::func::Func;
use crate::lang::param::ImageParam;
use crate::lang::var::{RDom, RVar, Var};
use crate::lang::{math, reductions};
use crate::{Expr, Type};
use std::collections::HashMap;

type PResult<T> = Result<T, TextError>;

/// What a name in the file stands for.
#[derive(Clone)]
enum Named {
    Var(Var),
    RDom(RDom),
    Input(usize),
    Param(usize),
    Func(Func),
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    at: usize,
    names: HashMap<String, Named>,
    inputs: Vec<TextInput>,
    params: Vec<TextParam>,
    funcs: Vec<(String, Func)>,
    output: Option<(Func, Option<Vec<SizeExpr>>)>,
    schedules: Vec<(String, Vec<Directive>)>,
}

/// Parses `source`.
pub(super) fn parse(source: &str, file: &str) -> PResult<TextPipeline> {
    let toks = lex(source)?;
    let mut p = Parser {
        toks,
        at: 0,
        names: HashMap::new(),
        inputs: Vec::new(),
        params: Vec::new(),
        funcs: Vec::new(),
        output: None,
        schedules: Vec::new(),
    };
    while p.peek() != &Tok::Eof {
        if p.eat_newline() {
            continue;
        }
        crate::ir::stack::guard(|| p.statement())?;
    }
    let end = p.pos();
    let Some((output, output_size)) = p.output else {
        return Err(TextError::at(end, "the file names no output (write 'output NAME')"));
    };
    Ok(TextPipeline {
        file: file.to_string(),
        inputs: p.inputs,
        params: p.params,
        funcs: p.funcs,
        output,
        output_size,
        schedules: p.schedules,
    })
}

const TYPES: &[(&str, Type)] = &[
    ("bool", Type::bool()),
    ("u8", Type::u8()),
    ("u16", Type::u16()),
    ("u32", Type::u32()),
    ("u64", Type::u64()),
    ("i8", Type::i8()),
    ("i16", Type::i16()),
    ("i32", Type::i32()),
    ("i64", Type::i64()),
    ("f32", Type::f32()),
    ("f64", Type::f64()),
];

fn type_named(name: &str) -> Option<Type> {
    TYPES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

impl Parser {
    // ----- tokens -----

    fn peek(&self) -> &Tok {
        &self.toks[self.at].0
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.at + k).min(self.toks.len() - 1)].0
    }
    fn pos(&self) -> Pos {
        self.toks[self.at].1
    }
    fn next(&mut self) -> (Tok, Pos) {
        let t = self.toks[self.at].clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn eat(&mut self, p: &str) -> bool {
        let yes = self.is(p);
        if yes {
            self.next();
        }
        yes
    }
    fn eat_newline(&mut self) -> bool {
        let yes = *self.peek() == Tok::Newline;
        if yes {
            self.next();
        }
        yes
    }
    fn expect(&mut self, p: &str) -> PResult<Pos> {
        let pos = self.pos();
        if self.eat(p) {
            Ok(pos)
        } else {
            Err(TextError::at(pos, format!("expected '{p}', found {}", self.peek())))
        }
    }
    fn ident(&mut self, what: &str) -> PResult<(String, Pos)> {
        match self.next() {
            (Tok::Ident(s), pos) => Ok((s, pos)),
            (t, pos) => Err(TextError::at(pos, format!("expected {what}, found {t}"))),
        }
    }
    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == word)
    }
    fn end_of_statement(&mut self) -> PResult<()> {
        if self.eat_newline() || *self.peek() == Tok::Eof || self.is("}") {
            return Ok(());
        }
        Err(TextError::at(self.pos(), format!("expected the end of the statement, found {}", self.peek())))
    }
    fn integer(&mut self) -> PResult<(i64, Pos)> {
        let neg = self.eat("-");
        match self.next() {
            (Tok::Int(v), pos) => Ok((if neg { -v } else { v }, pos)),
            (t, pos) => Err(TextError::at(pos, format!("expected an integer, found {t}"))),
        }
    }
    fn number(&mut self) -> PResult<(f64, Pos)> {
        let neg = self.eat("-");
        let s = if neg { -1.0 } else { 1.0 };
        match self.next() {
            (Tok::Int(v), pos) => Ok((s * v as f64, pos)),
            (Tok::Float(v), pos) => Ok((s * v, pos)),
            (t, pos) => Err(TextError::at(pos, format!("expected a number, found {t}"))),
        }
    }
    fn i32_value(&mut self, what: &str) -> PResult<i32> {
        let (v, pos) = self.integer()?;
        i32::try_from(v).map_err(|_| TextError::at(pos, format!("{what} {v} does not fit in 32 bits")))
    }

    /// A new name: not a keyword, a type or a name already declared.
    fn fresh_name(&mut self, what: &str) -> PResult<(String, Pos)> {
        let (name, pos) = self.ident(what)?;
        self.check_fresh(&name, pos)?;
        Ok((name, pos))
    }
    fn check_fresh(&self, name: &str, pos: Pos) -> PResult<()> {
        if type_named(name).is_some() || FUNCTIONS.contains(&name) || name == "true" || name == "false" {
            return Err(TextError::at(pos, format!("'{name}' is a reserved word")));
        }
        if self.names.contains_key(name) {
            return Err(TextError::at(pos, format!("'{name}' is already declared")));
        }
        Ok(())
    }

    // ----- statements -----

    fn statement(&mut self) -> PResult<()> {
        let (Tok::Ident(word), pos) = self.toks[self.at].clone() else {
            return Err(TextError::at(self.pos(), format!("expected a statement, found {}", self.peek())));
        };
        // A statement's first word is a keyword only before a name: `input(x) = ...`
        // defines a Func called `input`.
        let declares = matches!(self.peek_at(1), Tok::Ident(_));
        match word.as_str() {
            "input" if declares => self.input(),
            "param" if declares => self.param(),
            "var" if declares => self.vars(),
            "rdom" if declares => self.rdom(),
            "output" if declares => self.output_stmt(),
            "schedule" if declares => self.schedule(),
            _ if matches!(self.peek_at(1), Tok::Punct("=")) => self.boundary(),
            _ if matches!(self.peek_at(1), Tok::Punct("(")) => self.definition(),
            _ => Err(TextError::at(pos, format!("expected a statement, found '{word}'"))),
        }
    }

    fn type_spec(&mut self) -> PResult<Type> {
        let (t, pos) = self.ident("a type")?;
        type_named(&t).ok_or_else(|| {
            let all: Vec<&str> = TYPES.iter().map(|(n, _)| *n).collect();
            TextError::at(pos, format!("unknown type '{t}'; the types are {}", all.join(", ")))
        })
    }

    /// `[a, b] [c, d] ...` as `(min, extent)` pairs.
    fn pairs(&mut self, what: &str) -> PResult<Vec<(i32, i32)>> {
        let mut out = Vec::new();
        while self.is("[") {
            self.next();
            let a = self.i32_value(what)?;
            self.expect(",")?;
            let b = self.i32_value(what)?;
            self.expect("]")?;
            out.push((a, b));
        }
        Ok(out)
    }

    fn range_pair(&mut self) -> PResult<(f64, f64)> {
        let open = self.expect("[")?;
        let (lo, _) = self.number()?;
        self.expect(",")?;
        let (hi, _) = self.number()?;
        self.expect("]")?;
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(TextError::at(open, format!("the range [{lo}, {hi}] is empty")));
        }
        Ok((lo, hi))
    }

    fn input(&mut self) -> PResult<()> {
        self.next();
        let (name, _) = self.fresh_name("the input's name")?;
        self.expect(":")?;
        let ty = self.type_spec()?;
        self.expect("[")?;
        let (dims, dpos) = self.integer()?;
        self.expect("]")?;
        if !(1..=8).contains(&dims) {
            return Err(TextError::at(dpos, format!("an input has 1 to 8 dimensions, not {dims}")));
        }
        let dims = dims as usize;
        let param = ImageParam::new(ty, dims, &name);
        let (mut estimates, mut values) = (None, None);
        loop {
            if self.is_ident("estimate") {
                let pos = self.pos();
                self.next();
                let e = self.pairs("an estimate")?;
                if e.len() != dims {
                    return Err(TextError::at(
                        pos,
                        format!("input '{name}' has {dims} dimensions but {} estimates", e.len()),
                    ));
                }
                param.set_estimates(&e);
                estimates = Some(e);
            } else if self.is_ident("values") {
                self.next();
                values = Some(self.range_pair()?);
            } else {
                break;
            }
        }
        self.end_of_statement()?;
        self.names.insert(name.clone(), Named::Input(self.inputs.len()));
        self.inputs.push(TextInput { name, param, ty, dims, estimates, values });
        Ok(())
    }

    fn param(&mut self) -> PResult<()> {
        self.next();
        let (name, _) = self.fresh_name("the parameter's name")?;
        self.expect(":")?;
        let tpos = self.pos();
        let ty = self.type_spec()?;
        self.expect("=")?;
        let (default, vpos) = self.number()?;
        if !fits(ty, default) {
            return Err(TextError::at(vpos, format!("{default} is not a value of type {ty}")));
        }
        let range = if self.is_ident("range") {
            self.next();
            let (lo, hi) = self.range_pair()?;
            if !(default >= lo && default <= hi) {
                return Err(TextError::at(vpos, format!("the default {default} lies outside the range [{lo}, {hi}]")));
            }
            Some((lo, hi))
        } else {
            None
        };
        self.end_of_statement()?;
        let param = AnyParam::new(&name, ty, default)
            .ok_or_else(|| TextError::at(tpos, format!("a parameter cannot be of type {ty}")))?;
        self.names.insert(name.clone(), Named::Param(self.params.len()));
        self.params.push(TextParam { name, ty, default, range, param });
        Ok(())
    }

    fn vars(&mut self) -> PResult<()> {
        self.next();
        loop {
            let (name, _) = self.fresh_name("a variable's name")?;
            self.names.insert(name.clone(), Named::Var(Var::new(&name)));
            if !self.eat(",") {
                break;
            }
        }
        self.end_of_statement()
    }

    fn rdom(&mut self) -> PResult<()> {
        self.next();
        let (name, _) = self.fresh_name("the domain's name")?;
        self.expect("=")?;
        let mut bounds = Vec::new();
        while self.is("[") {
            self.next();
            let min = self.expr()?;
            self.expect(",")?;
            let extent = self.expr()?;
            self.expect("]")?;
            bounds.push((min, extent));
        }
        if bounds.is_empty() || bounds.len() > 4 {
            return Err(TextError::at(self.pos(), "a domain has 1 to 4 dimensions, each written [min, extent]"));
        }
        self.end_of_statement()?;
        self.names.insert(name, Named::RDom(RDom::new(&bounds)));
        Ok(())
    }

    /// `NAME = BOUNDARY(INPUT[, value])`.
    fn boundary(&mut self) -> PResult<()> {
        let (name, _) = self.fresh_name("a Func's name")?;
        self.expect("=")?;
        let (kind, kpos) = self.ident("a boundary condition")?;
        self.expect("(")?;
        let (src, spos) = self.ident("an input's name")?;
        let input = match self.names.get(&src) {
            Some(Named::Input(i)) => self.inputs[*i].param.clone(),
            _ => return Err(TextError::at(spos, format!("'{src}' is not an input"))),
        };
        let bounds = input.bounds();
        let f = match kind.as_str() {
            "repeat_edge" => boundary::repeat_edge(&input, &bounds),
            "repeat_image" => boundary::repeat_image(&input, &bounds),
            "mirror_image" => boundary::mirror_image(&input, &bounds),
            "mirror_interior" => boundary::mirror_interior(&input, &bounds),
            "constant_exterior" => {
                self.expect(",")?;
                let v = self.expr()?;
                boundary::constant_exterior(&input, v, &bounds)
            }
            _ => {
                return Err(TextError::at(
                    kpos,
                    format!(
                        "unknown boundary condition '{kind}'; they are repeat_edge, repeat_image, \
                         mirror_image, mirror_interior, constant_exterior"
                    ),
                ))
            }
        };
        self.expect(")")?;
        self.end_of_statement()?;
        self.names.insert(name.clone(), Named::Func(f.clone()));
        self.funcs.push((name, f));
        Ok(())
    }

    /// A pure definition (the first of a Func) or an update.
    fn definition(&mut self) -> PResult<()> {
        let (name, npos) = self.ident("a Func's name")?;
        match self.names.get(&name).cloned() {
            Some(Named::Func(f)) => self.update(&name, &f, npos),
            Some(_) => Err(TextError::at(npos, format!("'{name}' is not a Func"))),
            None => {
                self.check_fresh(&name, npos)?;
                self.expect("(")?;
                let params = self.paren_list(Parser::pure_var)?;
                let mut args: Vec<Var> = Vec::new();
                for (var, vpos) in params {
                    if args.contains(&var) {
                        return Err(TextError::at(vpos, format!("variable '{}' appears twice", var.name())));
                    }
                    args.push(var);
                }
                let eq = self.pos();
                if !self.eat("=") {
                    return Err(TextError::at(
                        eq,
                        format!("expected '=' (Func '{name}' has no pure definition to update), found {}", self.peek()),
                    ));
                }
                let f = Func::new(&name);
                // Declared before the value is read, so that a use of itself is caught
                // as such by the library.
                let value = self.expr()?;
                self.end_of_statement()?;
                f.def(args, value);
                self.take_func_errors(&f, npos)?;
                self.names.insert(name.clone(), Named::Func(f.clone()));
                self.funcs.push((name, f));
                Ok(())
            }
        }
    }

    /// A pure variable of a first definition: declared, or declared by this use.
    fn pure_var(&mut self) -> PResult<(Var, Pos)> {
        let (v, vpos) = self.ident("a variable")?;
        let var = match self.names.get(&v) {
            Some(Named::Var(var)) => *var,
            Some(_) => return Err(TextError::at(vpos, format!("'{v}' is not a variable"))),
            None => {
                self.check_fresh(&v, vpos)?;
                let var = Var::new(&v);
                self.names.insert(v, Named::Var(var));
                var
            }
        };
        Ok((var, vpos))
    }

    fn update(&mut self, name: &str, f: &Func, npos: Pos) -> PResult<()> {
        self.expect("(")?;
        let args = self.call_args()?;
        let op_pos = self.pos();
        let op = match self.next().0 {
            Tok::Punct(p @ ("=" | "+=" | "-=" | "*=" | "/=")) => p,
            t => return Err(TextError::at(op_pos, format!("expected '=' or '+=' (an update of '{name}'), found {t}"))),
        };
        let rhs = self.expr()?;
        self.end_of_statement()?;
        let value = if op == "=" {
            rhs
        } else {
            let old = f.at(args.clone());
            match op {
                "+=" => old + rhs,
                "-=" => old - rhs,
                "*=" => old * rhs,
                _ => old / rhs,
            }
        };
        f.update(args, value);
        self.take_func_errors(f, npos)
    }

    /// Turns a definition mistake the library recorded on `f` into an error at `pos`.
    fn take_func_errors(&self, f: &Func, pos: Pos) -> PResult<()> {
        let mut d = f.func_ref().lock();
        if let Some(e) = d.errors.pop() {
            d.errors.clear();
            return Err(TextError::from_library(pos, &e));
        }
        Ok(())
    }

    fn output_stmt(&mut self) -> PResult<()> {
        let kw = self.pos();
        self.next();
        if self.output.is_some() {
            return Err(TextError::at(kw, "the output is named twice"));
        }
        let (name, npos) = self.ident("the output Func's name")?;
        let f = match self.names.get(&name) {
            Some(Named::Func(f)) => f.clone(),
            _ => return Err(TextError::at(npos, format!("'{name}' is not a Func"))),
        };
        let mut size = None;
        loop {
            if self.is_ident("size") {
                let pos = self.pos();
                self.next();
                self.expect("[")?;
                let mut s = Vec::new();
                loop {
                    s.push(self.size_expr()?);
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect("]")?;
                if s.len() != f.dimensions() {
                    return Err(TextError::at(
                        pos,
                        format!("'{name}' has {} dimensions but the size gives {}", f.dimensions(), s.len()),
                    ));
                }
                size = Some(s);
            } else if self.is_ident("estimate") {
                let pos = self.pos();
                self.next();
                let e = self.pairs("an estimate")?;
                if e.len() != f.dimensions() {
                    return Err(TextError::at(
                        pos,
                        format!("'{name}' has {} dimensions but {} estimates", f.dimensions(), e.len()),
                    ));
                }
                f.set_estimates(&e);
            } else {
                break;
            }
        }
        self.end_of_statement()?;
        self.output = Some((f, size));
        Ok(())
    }

    fn schedule(&mut self) -> PResult<()> {
        self.next();
        let (name, npos) = self.ident("the schedule's name")?;
        if self.schedules.iter().any(|(n, _)| *n == name) {
            return Err(TextError::at(npos, format!("schedule '{name}' is defined twice")));
        }
        self.expect("{")?;
        let mut directives = Vec::new();
        loop {
            if self.eat_newline() {
                continue;
            }
            if self.eat("}") {
                break;
            }
            if *self.peek() == Tok::Eof {
                return Err(TextError::at(npos, format!("schedule '{name}' has no closing '}}'")));
            }
            directives.extend(self.directive_chain()?);
            if !self.is("}") {
                self.end_of_statement()?;
            }
        }
        self.end_of_statement()?;
        self.schedules.push((name, directives));
        Ok(())
    }

    /// `FUNC(.update(n))?.directive(args)...`
    fn directive_chain(&mut self) -> PResult<Vec<Directive>> {
        let (func, fpos) = self.ident("a Func's name")?;
        if !matches!(self.names.get(&func), Some(Named::Func(_))) {
            return Err(TextError::at(fpos, format!("'{func}' is not a Func")));
        }
        let mut stage = None;
        let mut out = Vec::new();
        while self.eat(".") {
            let (method, mpos) = self.ident("a directive")?;
            self.expect("(")?;
            let args = self.paren_list(Parser::directive_arg)?;
            if method == "update" {
                match args.as_slice() {
                    [] => stage = Some(0),
                    [Arg::Int(n, _)] if *n >= 0 => stage = Some(*n as usize),
                    _ => return Err(TextError::at(mpos, "update(n) takes the number of an update, from 0")),
                }
                continue;
            }
            out.push(Directive::new(&func, stage, &method, args, mpos)?);
        }
        if out.is_empty() {
            return Err(TextError::at(
                fpos,
                format!("expected a directive after '{func}' (like '{func}.compute_root()')"),
            ));
        }
        Ok(out)
    }

    fn directive_arg(&mut self) -> PResult<Arg> {
        let pos = self.pos();
        if matches!(self.peek(), Tok::Int(_)) || (self.is("-") && matches!(self.peek_at(1), Tok::Int(_))) {
            let (v, _) = self.integer()?;
            return Ok(Arg::Int(v, pos));
        }
        let (name, pos) = self.ident("a loop variable, a Func or a number")?;
        if self.eat(".") {
            let (field, fpos) = self.ident("a domain's variable")?;
            return match self.names.get(&name) {
                Some(Named::RDom(r)) => Ok(Arg::RVar(rvar(r, &field, fpos)?, pos)),
                _ => Err(TextError::at(pos, format!("'{name}' is not a reduction domain"))),
            };
        }
        Ok(match self.names.get(&name) {
            Some(Named::RDom(r)) if r.dimensions() == 1 => Arg::RVar(r.x(), pos),
            Some(Named::Func(f)) => Arg::Func(f.clone(), pos),
            _ => Arg::Name(name, pos),
        })
    }

    // ----- the output's size -----

    fn size_expr(&mut self) -> PResult<SizeExpr> {
        let mut a = self.size_term()?;
        while self.is("+") || self.is("-") {
            let op = if self.eat("+") { '+' } else { self.expect("-").map(|_| '-')? };
            let b = self.size_term()?;
            a = SizeExpr::Bin(op, Box::new(a), Box::new(b));
        }
        Ok(a)
    }
    fn size_term(&mut self) -> PResult<SizeExpr> {
        let mut a = self.size_atom()?;
        while self.is("*") || self.is("/") {
            let op = if self.eat("*") { '*' } else { self.expect("/").map(|_| '/')? };
            let b = self.size_atom()?;
            a = SizeExpr::Bin(op, Box::new(a), Box::new(b));
        }
        Ok(a)
    }
    fn size_atom(&mut self) -> PResult<SizeExpr> {
        let pos = self.pos();
        match self.next() {
            (Tok::Int(v), _) => Ok(SizeExpr::Int(v)),
            (Tok::Punct("-"), _) => Ok(SizeExpr::Neg(Box::new(self.size_atom()?))),
            (Tok::Punct("("), _) => {
                let e = self.size_expr()?;
                self.expect(")")?;
                Ok(e)
            }
            (Tok::Ident(name), _) => {
                match self.names.get(&name).cloned() {
                    Some(Named::Param(p)) if !self.params[p].ty.is_float() => Ok(SizeExpr::Param(p)),
                    Some(Named::Input(i)) => {
                        self.expect(".")?;
                        let (field, fpos) = self.ident("width, height, channels or extent(d)")?;
                        let dims = self.inputs[i].dims;
                        let dim = match field.as_str() {
                        "width" => 0,
                        "height" => 1,
                        "channels" => 2,
                        "extent" => {
                            self.expect("(")?;
                            let (d, _) = self.integer()?;
                            self.expect(")")?;
                            d.max(0) as usize
                        }
                        _ => return Err(TextError::at(fpos, format!("an output's size can use {name}.width, .height, .channels or .extent(d), not .{field}"))),
                    };
                        if dim >= dims {
                            return Err(TextError::at(
                                fpos,
                                format!("input '{name}' has {dims} dimensions, not {}", dim + 1),
                            ));
                        }
                        Ok(SizeExpr::Extent { input: i, dim })
                    }
                    _ => Err(TextError::at(pos, format!("'{name}' is not an input or an integer parameter"))),
                }
            }
            (t, _) => Err(TextError::at(pos, format!("expected a size, found {t}"))),
        }
    }

    // ----- expressions -----

    fn expr(&mut self) -> PResult<Expr> {
        crate::ir::stack::guard(|| self.binary(0))
    }

    /// Binary operators by precedence, loosest first.
    fn binary(&mut self, level: usize) -> PResult<Expr> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["==", "!=", "<", "<=", ">", ">="],
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut a = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Tok::Punct(p) if LEVELS[level].contains(p) => *p,
                _ => return Ok(a),
            };
            let pos = self.pos();
            self.next();
            let b = self.binary(level + 1)?;
            a = apply_binary(op, a, b, pos)?;
            if level == 2 {
                // Comparisons do not chain: `a < b < c` is a mistake.
                if let Tok::Punct(p) = self.peek() {
                    if LEVELS[2].contains(p) {
                        return Err(TextError::at(self.pos(), "comparisons do not chain; write (a < b) && (b < c)"));
                    }
                }
                return Ok(a);
            }
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        let pos = self.pos();
        if self.eat("-") {
            // A negative literal is one constant (so `-2147483648` fits).
            if let Tok::Int(v) = *self.peek() {
                self.next();
                return int_literal(-v, pos);
            }
            return Ok(-self.unary()?);
        }
        if self.eat("!") || self.eat("~") {
            let a = self.unary()?;
            if a.ty().is_float() {
                return Err(TextError::at(pos, format!("'!' and '~' do not apply to {}", a.ty())));
            }
            return Ok(!a);
        }
        self.primary()
    }

    fn primary(&mut self) -> PResult<Expr> {
        let (tok, pos) = self.next();
        match tok {
            Tok::Int(v) => int_literal(v, pos),
            Tok::Float(v) => Ok(Expr::from(v as f32)),
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Ident(name) => self.named(name, pos),
            t => Err(TextError::at(pos, format!("expected an expression, found {t}"))),
        }
    }

    fn call_args(&mut self) -> PResult<Vec<Expr>> {
        self.paren_list(Parser::expr)
    }

    /// Items separated by commas up to a closing `)` (consumed); the list may be empty.
    fn paren_list<T>(&mut self, mut item: impl FnMut(&mut Parser) -> PResult<T>) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        if !self.is(")") {
            loop {
                out.push(item(self)?);
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        Ok(out)
    }

    fn named(&mut self, name: String, pos: Pos) -> PResult<Expr> {
        if name == "true" || name == "false" {
            return Ok(Expr::from(name == "true"));
        }
        if let Some(ty) = type_named(&name) {
            self.expect("(")?;
            let args = self.call_args()?;
            let [a] = <[Expr; 1]>::try_from(args)
                .map_err(|_| TextError::at(pos, format!("the conversion {name}(e) takes one value")))?;
            return Ok(cast(ty, a));
        }
        if FUNCTIONS.contains(&name.as_str()) {
            self.expect("(")?;
            let args = self.call_args()?;
            return call_function(&name, args, pos);
        }
        match self.names.get(&name).cloned() {
            Some(Named::Var(v)) => Ok(v.into()),
            Some(Named::Param(p)) => Ok(self.params[p].param.expr()),
            Some(Named::RDom(r)) => {
                if self.eat(".") {
                    let (field, fpos) = self.ident("x, y, z or w")?;
                    Ok(rvar(&r, &field, fpos)?.into())
                } else if r.dimensions() == 1 {
                    Ok(r.x().into())
                } else {
                    Err(TextError::at(
                        pos,
                        format!("'{name}' has {} dimensions: write {name}.x, {name}.y, ...", r.dimensions()),
                    ))
                }
            }
            Some(Named::Input(i)) => {
                let input = self.inputs[i].param.clone();
                let dims = self.inputs[i].dims;
                if self.eat(".") {
                    let (field, fpos) = self.ident("width, height, channels, min(d) or extent(d)")?;
                    let dim = |d: usize| -> PResult<usize> {
                        if d >= dims {
                            return Err(TextError::at(
                                fpos,
                                format!("input '{name}' has {dims} dimensions, not {}", d + 1),
                            ));
                        }
                        Ok(d)
                    };
                    return match field.as_str() {
                        "width" => Ok(input.dim(dim(0)?).extent()),
                        "height" => Ok(input.dim(dim(1)?).extent()),
                        "channels" => Ok(input.dim(dim(2)?).extent()),
                        "min" | "extent" => {
                            self.expect("(")?;
                            let (d, _) = self.integer()?;
                            self.expect(")")?;
                            let d = dim(d.max(0) as usize)?;
                            Ok(if field == "min" { input.dim(d).min() } else { input.dim(d).extent() })
                        }
                        _ => Err(TextError::at(
                            fpos,
                            format!("an input has .width, .height, .channels, .min(d) and .extent(d), not .{field}"),
                        )),
                    };
                }
                self.expect("(")?;
                let args = self.call_args()?;
                if args.len() != dims {
                    return Err(TextError::at(
                        pos,
                        format!("input '{name}' has {dims} dimensions but is called with {} arguments", args.len()),
                    ));
                }
                Ok(input.at(args))
            }
            Some(Named::Func(f)) => {
                self.expect("(")?;
                let args = self.call_args()?;
                if f.func_ref().lock().pure.is_some() && args.len() != f.dimensions() {
                    return Err(TextError::at(
                        pos,
                        format!(
                            "Func '{name}' has {} dimensions but is called with {} arguments",
                            f.dimensions(),
                            args.len()
                        ),
                    ));
                }
                Ok(f.at(args))
            }
            None => Err(TextError::at(pos, format!("unknown name '{name}'"))),
        }
    }
}

/// The built-in functions, by name.
const FUNCTIONS: &[&str] = &[
    "min", "max", "clamp", "select", "abs", "absd", "sqrt", "exp", "log", "pow", "floor", "ceil", "round", "trunc",
    "sin", "cos", "tan", "atan2", "atan", "tanh", "fast_exp", "fast_log", "fast_pow", "lerp", "sum", "product",
    "maximum", "minimum",
];

fn call_function(name: &str, args: Vec<Expr>, pos: Pos) -> PResult<Expr> {
    let arity = match name {
        "clamp" | "select" | "lerp" => 3,
        "min" | "max" | "absd" | "pow" | "atan2" | "fast_pow" => 2,
        _ => 1,
    };
    if args.len() != arity {
        return Err(TextError::at(pos, format!("{name} takes {arity} arguments, not {}", args.len())));
    }
    let mut a = args.into_iter();
    let mut next = || a.next().expect("arity checked");
    let e = match name {
        "min" => math::min(next(), next()),
        "max" => math::max(next(), next()),
        "clamp" => math::clamp(next(), next(), next()),
        "select" => math::select(next(), next(), next()),
        "abs" => math::abs(next()),
        "absd" => math::absd(next(), next()),
        "pow" => math::pow(next(), next()),
        "atan2" => math::atan2(next(), next()),
        "fast_pow" => math::fast_pow(next(), next()),
        "atan" => math::atan(next()),
        "tanh" => math::tanh(next()),
        "fast_exp" => math::fast_exp(next()),
        "fast_log" => math::fast_log(next()),
        "lerp" => math::lerp(next(), next(), next()),
        "sqrt" => math::sqrt(next()),
        "exp" => math::exp(next()),
        "log" => math::log(next()),
        "floor" => math::floor(next()),
        "ceil" => math::ceil(next()),
        "round" => math::round(next()),
        "trunc" => math::trunc(next()),
        "sin" => math::sin(next()),
        "cos" => math::cos(next()),
        "tan" => math::tan(next()),
        "sum" => reductions::sum(next()),
        "product" => reductions::product(next()),
        "maximum" => reductions::maximum(next()),
        _ => reductions::minimum(next()),
    };
    Ok(e)
}

fn rvar(r: &RDom, field: &str, pos: Pos) -> PResult<RVar> {
    let i = match field {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        "w" => 3,
        _ => return Err(TextError::at(pos, format!("a domain's variables are x, y, z and w, not '{field}'"))),
    };
    if i >= r.dimensions() {
        return Err(TextError::at(pos, format!("the domain has {} dimensions, so no '{field}'", r.dimensions())));
    }
    Ok(r.var(i))
}

fn int_literal(v: i64, pos: Pos) -> PResult<Expr> {
    i32::try_from(v)
        .map(Expr::from)
        .map_err(|_| TextError::at(pos, format!("the integer {v} does not fit in 32 bits (write i64({}) for more)", v)))
}

fn apply_binary(op: &str, a: Expr, b: Expr, pos: Pos) -> PResult<Expr> {
    use crate::lang::expr_ops::ExprMethods;
    let bits = matches!(op, "<<" | ">>" | "&" | "|" | "^");
    if bits && (a.ty().is_float() || b.ty().is_float()) {
        return Err(TextError::at(pos, format!("'{op}' does not apply to floats ({} and {})", a.ty(), b.ty())));
    }
    let logic = matches!(op, "&&" | "||");
    if logic && !(a.ty().element().is_bool() && b.ty().element().is_bool()) {
        return Err(TextError::at(pos, format!("'{op}' takes two bools, not {} and {}", a.ty(), b.ty())));
    }
    Ok(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => a / b,
        "%" => a % b,
        "<<" => a << b,
        ">>" => a >> b,
        "&" | "&&" => a & b,
        "|" | "||" => a | b,
        "^" => a ^ b,
        "==" => ExprMethods::eq(&a, b),
        "!=" => ExprMethods::ne(&a, b),
        "<" => ExprMethods::lt(&a, b),
        "<=" => ExprMethods::le(&a, b),
        ">" => ExprMethods::gt(&a, b),
        _ => ExprMethods::ge(&a, b),
    })
}
