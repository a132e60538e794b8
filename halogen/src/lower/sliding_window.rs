//! Pass 4a: sliding window. When a Func's storage lives outside the loop it is computed
//! in, and the region each iteration needs moves forward monotonically along one
//! dimension, each iteration computes only the part the previous iterations have not
//! (Halide 2012 sec. 4.1, "reuse"; Halide's SlidingWindow.cpp).

use super::LowerCtx;
use crate::analysis::{can_prove, expr_uses_var, simplify, substitute};
use crate::error::Result;
use crate::ir::{Expr, ForKind, Name, Stmt, Type};
use crate::schedule::Split;

/// A dimension along which a Func slides, for storage folding.
#[derive(Clone, Debug)]
pub struct Slide {
    /// The dimension.
    pub dim: usize,
    /// The extent each iteration needs (before sliding), simplified.
    pub extent: Expr,
}

struct EnclosingLoop {
    name: Name,
    min: Expr,
    kind: ForKind,
}

/// Rewrites the `min` let of the sliding dimension inside the chain of lets that wraps
/// the producer of `f`, which sits directly inside `loop_`.
fn slide_lets(s: &mut Stmt, f: &str, loop_: &EnclosingLoop, ctx: &mut LowerCtx) -> bool {
    // Gather the chain of lets.
    let mut lets: Vec<(Name, Expr)> = Vec::new();
    {
        let mut cur = &*s;
        while let Stmt::LetStmt { name, value, body } = cur {
            lets.push((name.clone(), value.clone()));
            cur = body;
        }
    }
    let info = ctx.env.funcs[f].clone();
    if info.stages.len() != 1 {
        return false;
    }
    let lv = Expr::var(Type::i32(), loop_.name.clone());
    let prefix = super::schedule_functions::stage_prefix(f, 0);
    let mut moving = Vec::new();
    for (d, v) in info.args.iter().enumerate() {
        let find =
            |suffix: &str| lets.iter().find(|(n, _)| **n == *format!("{prefix}{v}.{suffix}")).map(|(_, e)| e.clone());
        let (Some(lo), Some(hi)) = (find("min"), find("max")) else { return false };
        let dep = expr_uses_var(&lo, &loop_.name) || expr_uses_var(&hi, &loop_.name);
        if dep {
            moving.push((d, v.clone(), lo, hi));
        }
    }
    if moving.len() != 1 {
        return false;
    }
    let (d, v, lo, hi) = moving.pop().unwrap();
    // A split of the sliding dimension would compute past the new rows.
    let split_here = info.stages[0].schedule.splits.iter().any(|s| match s {
        Split::Split { old, .. } => *old == v,
        Split::Fuse { inner, outer, .. } => *inner == v || *outer == v,
    });
    if split_here {
        return false;
    }
    let next = |e: &Expr| substitute(&loop_.name, &Expr::add(lv.clone(), Expr::i32(1)), e);
    let monotonic = can_prove(&Expr::le(lo.clone(), next(&lo))) && can_prove(&Expr::le(hi.clone(), next(&hi)));
    if !monotonic {
        return false;
    }
    let prev_hi = substitute(&loop_.name, &Expr::sub(lv.clone(), Expr::i32(1)), &hi);
    let new_lo = Expr::select(
        Expr::lt(loop_.min.clone(), lv.clone()),
        Expr::max(lo.clone(), Expr::add(prev_hi, Expr::i32(1))),
        lo.clone(),
    );
    let extent = simplify(&Expr::add(Expr::sub(hi, lo), Expr::i32(1)));
    ctx.slides.insert(f.into(), Slide { dim: d, extent });
    let target: Name = format!("{prefix}{v}.min").into();
    let mut cur = s;
    while let Stmt::LetStmt { name, value, body } = cur {
        if *name == target {
            *value = simplify(&new_lo);
            return true;
        }
        cur = body;
    }
    false
}

/// Finds the producer of `f` below a Realize and slides it if it can.
fn visit(s: &mut Stmt, f: &Name, loops: &mut Vec<EnclosingLoop>, ctx: &mut LowerCtx) -> bool {
    match s {
        Stmt::For { name, min, kind, body, .. } => {
            loops.push(EnclosingLoop { name: name.clone(), min: min.clone(), kind: *kind });
            let r = visit(body, f, loops, ctx);
            loops.pop();
            r
        }
        Stmt::LetStmt { body, .. } => {
            // The chain of lets right around the producer holds the stage bounds.
            if starts_producer(body, f) || lets_then_producer(body, f) {
                let Some(l) = loops.last() else { return true };
                let ok_kinds = loops.iter().all(|l| l.kind == ForKind::Serial || l.kind == ForKind::Unrolled);
                if l.kind == ForKind::Serial && ok_kinds {
                    let l = EnclosingLoop { name: l.name.clone(), min: l.min.clone(), kind: l.kind };
                    slide_lets(s, f, &l, ctx);
                }
                return true;
            }
            visit(body, f, loops, ctx)
        }
        Stmt::Block(v) => v.iter_mut().any(|c| visit(c, f, loops, ctx)),
        Stmt::ProducerConsumer { name, is_producer: true, .. } if name == f => true,
        Stmt::ProducerConsumer { body, .. } | Stmt::Realize { body, .. } => visit(body, f, loops, ctx),
        Stmt::IfThenElse { then_case, else_case, .. } => {
            visit(then_case, f, loops, ctx) || else_case.as_mut().is_some_and(|e| visit(e, f, loops, ctx))
        }
        _ => false,
    }
}

fn starts_producer(s: &Stmt, f: &Name) -> bool {
    match s {
        Stmt::Block(v) => {
            v.iter().any(|c| matches!(c, Stmt::ProducerConsumer { name, is_producer: true, .. } if name == f))
        }
        Stmt::ProducerConsumer { name, is_producer: true, .. } => name == f,
        _ => false,
    }
}

fn lets_then_producer(s: &Stmt, f: &Name) -> bool {
    let mut cur = s;
    while let Stmt::LetStmt { body, .. } = cur {
        cur = body;
    }
    starts_producer(cur, f) && !std::ptr::eq(cur, s)
}

fn walk(s: &mut Stmt, ctx: &mut LowerCtx) {
    match s {
        Stmt::Realize { name, body, .. } => {
            let f = name.clone();
            // Storage at the compute level leaves nothing to slide over.
            let mut loops = Vec::new();
            visit(body, &f, &mut loops, ctx);
            walk(body, ctx)
        }
        Stmt::For { body, .. }
        | Stmt::LetStmt { body, .. }
        | Stmt::ProducerConsumer { body, .. }
        | Stmt::Allocate { body, .. } => walk(body, ctx),
        Stmt::Block(v) => v.iter_mut().for_each(|c| walk(c, ctx)),
        Stmt::IfThenElse { then_case, else_case, .. } => {
            walk(then_case, ctx);
            if let Some(e) = else_case {
                walk(e, ctx)
            }
        }
        _ => {}
    }
}

/// Runs the sliding-window pass.
pub fn sliding_window(mut s: Stmt, ctx: &mut LowerCtx) -> Result<Stmt> {
    walk(&mut s, ctx);
    Ok(s)
}
