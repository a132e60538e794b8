//! Halide-like pseudo-code for expressions and statements.
//!
//! A statement prints as text that [`crate::ir::parse`] reads back into the same statement.
//! For that, the statement printer knows what is in scope and writes a type only where the
//! text would not otherwise say it:
//! - a variable bound by an enclosing `let` or loop has that binding's type, and a free one
//!   is an `int32` run-time parameter; any other variable is written `name:TYPE`, or
//!   `name:var:TYPE` / `name:param:TYPE` where its binding is not the one its place implies;
//! - a load from an `allocate`d buffer has the allocation's element type; other loads are
//!   written `name:TYPE[index]`, as are image calls (`name:TYPE(x, y)`);
//! - an intrinsic has its first argument's type unless written `name:TYPE(args)`; a Func
//!   call is always written `name:TYPE(args)` (the IR knows a Func only by its [`FuncId`](super::FuncId));
//! - a predicated load is `name[index if predicate]`;
//! - in a block, a `let` or `allocate` whose scope ends before the block does (and a nested
//!   block) is put in braces: `{ let x = 1 ... }`;
//! - a loop's vector tails follow its header, `tail(condition, guard, var = unclamped)` or
//!   `tail_each(...)`, in the loop's scope; a folded realize ends in `fold(dim, factor)`.
//!
//! An expression printed on its own (in error messages) has no annotations.

use super::expr::{BinOp, CallKind, CmpOp, Expr, ExprKind, Name, VarBinding};
use super::stack;
use super::stmt::{ForKind, MsgPart, Stmt, TailPlace};
use super::types::Type;
use std::fmt::{self, Display, Formatter, Write};

fn binop_symbol(op: BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Mod => "%",
        BinOp::BitAnd => "&",
        BinOp::BitOr => "|",
        BinOp::BitXor => "^",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::And => "&&",
        BinOp::Or => "||",
        BinOp::Min | BinOp::Max => return None,
    })
}

fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// Names in scope where a statement is printed: variables with their binding's type,
/// allocations with their element type, innermost last.
#[derive(Default)]
struct Scope {
    vars: Vec<(Name, Type)>,
    buffers: Vec<(Name, Type)>,
}

impl Scope {
    fn var(&self, name: &str) -> Option<Type> {
        self.vars.iter().rev().find(|(n, _)| &**n == name).map(|(_, t)| *t)
    }
    fn buffer(&self, name: &str) -> Option<Type> {
        self.buffers.iter().rev().find(|(n, _)| &**n == name).map(|(_, t)| *t)
    }
}

/// The type an intrinsic call has unless the text says otherwise.
pub(crate) fn intrinsic_default_type(args: &[Expr]) -> Option<Type> {
    args.first().map(|a| a.ty())
}

/// Writes `e`; with a scope, adds the annotations the parser needs.
fn write_expr(e: &Expr, out: &mut String, mut scope: Option<&mut Scope>) {
    stack::guard(|| {
        let t = e.ty();
        let annotate = scope.is_some();
        match e.kind() {
            ExprKind::IntImm(v) => {
                let _ = if t.is_bool() {
                    write!(out, "{}", *v != 0)
                } else if t == Type::i32() {
                    write!(out, "{v}")
                } else if t.is_uint() && t.bits == 64 {
                    write!(out, "({t}){}", *v as u64)
                } else {
                    write!(out, "({t}){v}")
                };
            }
            ExprKind::FloatImm(b) => {
                let v = b.get();
                let _ = if t.bits == 32 { write!(out, "{:?}f", v as f32) } else { write!(out, "{v:?}") };
            }
            ExprKind::Var { name, binding } => {
                out.push_str(name);
                if let Some(sc) = scope {
                    let (default_binding, default_ty) = match sc.var(name) {
                        Some(bt) => (VarBinding::Plain, bt),
                        None => (VarBinding::Param, Type::i32()),
                    };
                    let word = match binding {
                        b if *b == default_binding => "",
                        VarBinding::Plain => "var:",
                        VarBinding::Param => "param:",
                        VarBinding::Reduction(_) => "rvar:",
                    };
                    if !word.is_empty() || t != default_ty {
                        let _ = write!(out, ":{word}{t}");
                    }
                }
            }
            ExprKind::Cast(a) => {
                let _ = write!(out, "{t}(");
                write_expr(a, out, scope);
                out.push(')');
            }
            ExprKind::Binary(op, a, b) => match binop_symbol(*op) {
                Some(s) => {
                    out.push('(');
                    write_expr(a, out, scope.as_deref_mut());
                    let _ = write!(out, " {s} ");
                    write_expr(b, out, scope);
                    out.push(')');
                }
                None => {
                    out.push_str(if *op == BinOp::Min { "min(" } else { "max(" });
                    write_expr(a, out, scope.as_deref_mut());
                    out.push_str(", ");
                    write_expr(b, out, scope);
                    out.push(')');
                }
            },
            ExprKind::Cmp(op, a, b) => {
                out.push('(');
                write_expr(a, out, scope.as_deref_mut());
                let _ = write!(out, " {} ", cmp_symbol(*op));
                write_expr(b, out, scope);
                out.push(')');
            }
            ExprKind::Not(a) => {
                out.push('!');
                write_expr(a, out, scope);
            }
            ExprKind::Select(c, a, b) => {
                out.push_str("select(");
                write_expr(c, out, scope.as_deref_mut());
                out.push_str(", ");
                write_expr(a, out, scope.as_deref_mut());
                out.push_str(", ");
                write_expr(b, out, scope);
                out.push(')');
            }
            ExprKind::Load { buffer, index, predicate } => {
                out.push_str(buffer);
                if let Some(sc) = scope.as_deref() {
                    if sc.buffer(buffer) != Some(t.element()) {
                        let _ = write!(out, ":{}", t.element());
                    }
                }
                out.push('[');
                write_expr(index, out, scope.as_deref_mut());
                if let Some(p) = predicate {
                    out.push_str(" if ");
                    write_expr(p, out, scope);
                }
                out.push(']');
            }
            ExprKind::Ramp { base, stride, lanes } => {
                out.push_str("ramp(");
                write_expr(base, out, scope.as_deref_mut());
                out.push_str(", ");
                write_expr(stride, out, scope);
                let _ = write!(out, ", {lanes})");
            }
            ExprKind::Broadcast { value, lanes } => {
                let _ = write!(out, "x{lanes}(");
                write_expr(value, out, scope);
                out.push(')');
            }
            ExprKind::Let { name, value, body } => {
                let _ = write!(out, "(let {name} = ");
                write_expr(value, out, scope.as_deref_mut());
                out.push_str(" in ");
                match scope {
                    Some(sc) => {
                        sc.vars.push((name.clone(), value.ty()));
                        write_expr(body, out, Some(&mut *sc));
                        sc.vars.pop();
                    }
                    None => write_expr(body, out, None),
                }
                out.push(')');
            }
            ExprKind::Call { name, args, kind } => {
                out.push_str(name);
                if let CallKind::Func { value_index, tuple: true, .. } = kind {
                    let _ = write!(out, ".{value_index}");
                }
                if annotate {
                    // The IR knows a Func only by its id, not its value types: a Func call
                    // always says its type.
                    let default = match kind {
                        CallKind::Func { .. } => None,
                        CallKind::Image => None,
                        CallKind::Intrinsic(_) => intrinsic_default_type(args),
                    };
                    if default != Some(t) {
                        let _ = write!(out, ":{t}");
                    }
                }
                out.push('(');
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_expr(a, out, scope.as_deref_mut());
                }
                out.push(')');
            }
        }
    })
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_expr(self, &mut s, None);
        f.write_str(&s)
    }
}

fn kind_word(k: ForKind) -> &'static str {
    match k {
        ForKind::Serial => "for",
        ForKind::Parallel => "parallel",
        ForKind::Vectorized => "vectorized",
        ForKind::Unrolled => "unrolled",
        ForKind::GpuBlock => "gpu_block",
        ForKind::GpuThread => "gpu_thread",
        ForKind::Distributed => "distributed",
    }
}

/// Whether a statement's scope runs to the end of its block when printed (its body follows
/// it at the same indentation).
fn is_open(s: &Stmt) -> bool {
    matches!(s, Stmt::LetStmt { .. } | Stmt::Allocate { .. } | Stmt::Block(_))
}

struct StmtPrinter {
    out: String,
    scope: Scope,
}

impl StmtPrinter {
    fn expr(&mut self, e: &Expr) -> String {
        let mut s = String::new();
        write_expr(e, &mut s, Some(&mut self.scope));
        s
    }

    fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Prints `body` one level in, between `header {` and `}`.
    fn nested(&mut self, indent: usize, header: &str, body: &Stmt) {
        self.line(indent, &format!("{header} {{"));
        self.stmt(body, indent + 1);
        self.line(indent, "}");
    }

    fn stmt(&mut self, s: &Stmt, indent: usize) {
        stack::guard(|| {
            match s {
                Stmt::LetStmt { name, value, body } => {
                    let v = self.expr(value);
                    self.line(indent, &format!("let {name} = {v}"));
                    self.scope.vars.push((name.clone(), value.ty()));
                    self.stmt(body, indent);
                    self.scope.vars.pop();
                }
                Stmt::Assert { condition, message } => {
                    let c = self.expr(condition);
                    let mut msg = String::new();
                    for m in message {
                        match m {
                            MsgPart::Text(t) => msg.push_str(&t.replace('{', "{{").replace('}', "}}")),
                            MsgPart::Value(e) => {
                                let v = self.expr(e);
                                let _ = write!(msg, "{{{v}}}");
                            }
                        }
                    }
                    self.line(indent, &format!("assert({c}, {msg:?})"));
                }
                Stmt::ProducerConsumer { name, is_producer, body } => {
                    let word = if *is_producer { "produce" } else { "consume" };
                    self.nested(indent, &format!("{word} {name}"), body);
                }
                Stmt::For { name, min, extent, kind, tails, body } => {
                    let (m, e) = (self.expr(min), self.expr(extent));
                    let mut header = format!("{} ({name}, {m}, {e})", kind_word(*kind));
                    self.scope.vars.push((name.clone(), min.ty()));
                    // A tail's expressions may use the loop's variable (per-iteration tails).
                    for t in tails {
                        let word = match t.place {
                            TailPlace::Loop => "tail",
                            TailPlace::EachIteration => "tail_each",
                            TailPlace::Nest => "tail_nest",
                        };
                        let (c, g, u) = (self.expr(&t.condition), self.expr(&t.guard_term), self.expr(&t.unclamped));
                        let _ = write!(header, " {word}({c}, {g}, {} = {u})", t.var);
                    }
                    self.nested(indent, &header, body);
                    self.scope.vars.pop();
                }
                Stmt::Provide { name, values, args } => {
                    let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                    let vals: Vec<String> = values.iter().map(|a| self.expr(a)).collect();
                    let rhs = if vals.len() == 1 { vals[0].clone() } else { format!("{{{}}}", vals.join(", ")) };
                    self.line(indent, &format!("{name}({}) = {rhs}", args.join(", ")));
                }
                Stmt::Realize { name, types, bounds, fold, body } => {
                    let b: Vec<String> =
                        bounds.iter().map(|r| format!("[{}, {}]", self.expr(&r.min), self.expr(&r.extent))).collect();
                    let t: Vec<String> = types.iter().map(|t| t.to_string()).collect();
                    let mut header = format!("realize {name}({}) : {}", b.join(", "), t.join(", "));
                    if let Some(f) = fold {
                        let _ = write!(header, " fold({}, {})", f.dim, f.factor);
                    }
                    self.nested(indent, &header, body);
                }
                Stmt::Store { buffer, value, index, predicate } => {
                    let (i, v) = (self.expr(index), self.expr(value));
                    let mut text = format!("{buffer}[{i}] = {v}");
                    if let Some(p) = predicate {
                        let p = self.expr(p);
                        let _ = write!(text, " if {p}");
                    }
                    self.line(indent, &text);
                }
                Stmt::Allocate { name, ty, extents, body } => {
                    let e: Vec<String> = extents.iter().map(|e| self.expr(e)).collect();
                    self.line(indent, &format!("allocate {name}[{ty} * {}]", e.join(" * ")));
                    self.scope.buffers.push((name.clone(), *ty));
                    self.stmt(body, indent);
                    self.scope.buffers.pop();
                }
                Stmt::Free { name } => self.line(indent, &format!("free {name}")),
                Stmt::Block(ss) => {
                    for (i, s) in ss.iter().enumerate() {
                        // Braces keep the scope of a let or allocation (or an inner block) from
                        // running on over the statements after it.
                        if is_open(s) && i + 1 < ss.len() || matches!(s, Stmt::Block(_)) {
                            self.line(indent, "{");
                            self.stmt(s, indent + 1);
                            self.line(indent, "}");
                        } else {
                            self.stmt(s, indent);
                        }
                    }
                }
                Stmt::IfThenElse { condition, then_case, else_case } => {
                    let c = self.expr(condition);
                    self.line(indent, &format!("if ({c}) {{"));
                    self.stmt(then_case, indent + 1);
                    if let Some(e) = else_case {
                        self.line(indent, "} else {");
                        self.stmt(e, indent + 1);
                    }
                    self.line(indent, "}");
                }
                Stmt::Evaluate(e) => {
                    let e = self.expr(e);
                    self.line(indent, &e);
                }
                Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => {
                    let peer = self.expr(peer);
                    let list = |p: &mut Self, v: &[Expr]| v.iter().map(|e| p.expr(e)).collect::<Vec<_>>().join(", ");
                    let what = if strides.is_empty() {
                        let dims: Vec<String> = mins
                            .iter()
                            .zip(extents)
                            .map(|(m, e)| format!("[{}, {}]", self.expr(m), self.expr(e)))
                            .collect();
                        format!("{buffer}:{ty}({})", dims.join(", "))
                    } else {
                        let (index, extents, strides) = (list(self, mins), list(self, extents), list(self, strides));
                        format!("{buffer}:{ty}[{index}] extents [{extents}] strides [{strides}]")
                    };
                    let (word, dir) = match op {
                        crate::ir::TransferOp::Send => ("send".to_string(), "to"),
                        crate::ir::TransferOp::Receive => ("receive".to_string(), "from"),
                        crate::ir::TransferOp::Combine(c) => (format!("combine {}", c.word()), "from"),
                    };
                    self.line(indent, &format!("{word} {what} {dir} rank {peer}"));
                }
                Stmt::TransferWait => self.line(indent, "wait transfers"),
            }
        })
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut p = StmtPrinter { out: String::new(), scope: Scope::default() };
        p.stmt(self, 0);
        f.write_str(&p.out)
    }
}
