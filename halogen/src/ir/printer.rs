//! Halide-like pseudo-code for expressions and statements.

use super::expr::{BinOp, CallKind, CmpOp, Expr, ExprKind};
use super::stmt::{ForKind, MsgPart, Stmt};
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

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let t = self.ty();
        match self.kind() {
            ExprKind::IntImm(v) => {
                if t.is_bool() {
                    write!(f, "{}", *v != 0)
                } else if t == crate::Type::i32() {
                    write!(f, "{v}")
                } else if t.is_uint() && t.bits == 64 {
                    write!(f, "({t}){}", *v as u64)
                } else {
                    write!(f, "({t}){v}")
                }
            }
            ExprKind::FloatImm(b) => {
                let v = b.get();
                if t.bits == 32 {
                    write!(f, "{:?}f", v as f32)
                } else {
                    write!(f, "{v:?}")
                }
            }
            ExprKind::Var { name, .. } => write!(f, "{name}"),
            ExprKind::Cast(a) => write!(f, "{t}({a})"),
            ExprKind::Binary(op, a, b) => match binop_symbol(*op) {
                Some(s) => write!(f, "({a} {s} {b})"),
                None => write!(f, "{}({a}, {b})", if *op == BinOp::Min { "min" } else { "max" }),
            },
            ExprKind::Cmp(op, a, b) => write!(f, "({a} {} {b})", cmp_symbol(*op)),
            ExprKind::Not(a) => write!(f, "!{a}"),
            ExprKind::Select(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            ExprKind::Load { buffer, index, predicate } => {
                write!(f, "{buffer}[{index}]")?;
                if let Some(p) = predicate {
                    write!(f, " if {p}")?;
                }
                Ok(())
            }
            ExprKind::Ramp { base, stride, lanes } => write!(f, "ramp({base}, {stride}, {lanes})"),
            ExprKind::Broadcast { value, lanes } => write!(f, "x{lanes}({value})"),
            ExprKind::Let { name, value, body } => write!(f, "(let {name} = {value} in {body})"),
            ExprKind::Call { name, args, kind } => {
                write!(f, "{name}")?;
                if let CallKind::Func { value_index, tuple: true, .. } = kind {
                    write!(f, ".{value_index}")?;
                }
                write!(f, "(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{a}")?;
                }
                write!(f, ")")
            }
        }
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

fn print_stmt(s: &Stmt, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match s {
        Stmt::LetStmt { name, value, body } => {
            let _ = writeln!(out, "{pad}let {name} = {value}");
            print_stmt(body, indent, out);
        }
        Stmt::Assert { condition, message } => {
            let mut msg = String::new();
            for m in message {
                match m {
                    MsgPart::Text(t) => msg.push_str(t),
                    MsgPart::Value(e) => {
                        let _ = write!(msg, "{{{e}}}");
                    }
                }
            }
            let _ = writeln!(out, "{pad}assert({condition}, {msg:?})");
        }
        Stmt::ProducerConsumer { name, is_producer, body } => {
            let _ = writeln!(out, "{pad}{} {name} {{", if *is_producer { "produce" } else { "consume" });
            print_stmt(body, indent + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::For { name, min, extent, kind, tails, body } => {
            let _ = write!(out, "{pad}{} ({name}, {min}, {extent})", kind_word(*kind));
            for t in tails {
                let word = if t.per_iteration { "tail_each" } else { "tail" };
                let _ = write!(out, " {word}({}, {}, {} = {})", t.condition, t.guard_term, t.var, t.unclamped);
            }
            out.push_str(" {\n");
            print_stmt(body, indent + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Provide { name, values, args } => {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let vals: Vec<String> = values.iter().map(|a| a.to_string()).collect();
            let rhs = if vals.len() == 1 { vals[0].clone() } else { format!("{{{}}}", vals.join(", ")) };
            let _ = writeln!(out, "{pad}{name}({}) = {rhs}", args.join(", "));
        }
        Stmt::Realize { name, types, bounds, fold, body } => {
            let b: Vec<String> = bounds.iter().map(|r| format!("[{}, {}]", r.min, r.extent)).collect();
            let t: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            let _ = write!(out, "{pad}realize {name}({}) : {}", b.join(", "), t.join(", "));
            if let Some(f) = fold {
                let _ = write!(out, " fold({}, {})", f.dim, f.factor);
            }
            out.push_str(" {\n");
            print_stmt(body, indent + 1, out);
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Store { buffer, value, index, predicate } => {
            let _ = write!(out, "{pad}{buffer}[{index}] = {value}");
            if let Some(p) = predicate {
                let _ = write!(out, " if {p}");
            }
            out.push('\n');
        }
        Stmt::Allocate { name, ty, extents, body } => {
            let e: Vec<String> = extents.iter().map(|e| e.to_string()).collect();
            let _ = writeln!(out, "{pad}allocate {name}[{ty} * {}]", e.join(" * "));
            print_stmt(body, indent, out);
        }
        Stmt::Free { name } => {
            let _ = writeln!(out, "{pad}free {name}");
        }
        Stmt::Block(ss) => ss.iter().for_each(|s| print_stmt(s, indent, out)),
        Stmt::IfThenElse { condition, then_case, else_case } => {
            let _ = writeln!(out, "{pad}if ({condition}) {{");
            print_stmt(then_case, indent + 1, out);
            if let Some(e) = else_case {
                let _ = writeln!(out, "{pad}}} else {{");
                print_stmt(e, indent + 1, out);
            }
            let _ = writeln!(out, "{pad}}}");
        }
        Stmt::Evaluate(e) => {
            let _ = writeln!(out, "{pad}{e}");
        }
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        print_stmt(self, 0, &mut s);
        f.write_str(&s)
    }
}
