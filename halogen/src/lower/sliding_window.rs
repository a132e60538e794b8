//! Pass 4a: sliding window. When a Func's storage lives outside the loop it is computed
//! in, and the region each iteration needs moves forward monotonically along one
//! dimension, each iteration computes only the part the previous iterations have not
//! (Halide 2012 sec. 4.1, "reuse"; Halide's SlidingWindow.cpp). A Func that slides is
//! then folded where that pays (see `storage_folding`), which its `Realize` records.

use super::environment::Environment;
use super::storage_folding::fold_for;
use crate::analysis::{expr_uses_var, simplify, substitute};
use crate::error::Result;
use crate::ir::stack;
use crate::ir::{BinOp, Expr, ExprKind, ForKind, Name, Stmt, Type};
use crate::schedule::Split;
use std::collections::HashMap;

/// A dimension along which a Func slides, for storage folding.
///
/// ```
/// use halogen::ir::Expr;
/// use halogen::lower::sliding_window::Slide;
/// let s = Slide { dim: 1, extent: Expr::i32(3) };
/// assert_eq!(s.extent.as_int(), Some(3));
/// ```
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

/// How an expression moves as one variable grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Constant,
    Increasing,
    Decreasing,
    Unknown,
}

impl Direction {
    fn flip(self) -> Direction {
        match self {
            Direction::Increasing => Direction::Decreasing,
            Direction::Decreasing => Direction::Increasing,
            d => d,
        }
    }

    /// The direction of a sum, or of `min`/`max`, of two terms moving in these directions.
    fn join(self, o: Direction) -> Direction {
        use Direction::*;
        match (self, o) {
            (Constant, d) | (d, Constant) => d,
            (a, b) if a == b => a,
            _ => Unknown,
        }
    }
}

/// Which way `e` moves as `var` grows (Halide's `is_monotonic`): enough to prove that a
/// window like `min(base + yi, last) + 2` only moves forwards, which the simplifier's
/// prover cannot do through the clamp a split puts on its loop variable.
fn direction(e: &Expr, var: &str) -> Direction {
    stack::guard(|| {
        use Direction::*;
        if !expr_uses_var(e, var) {
            return Constant;
        }
        let signed = |c: &Expr, d: Direction| match c.as_int() {
            Some(0) => Constant,
            Some(k) if k > 0 => d,
            Some(_) => d.flip(),
            None => Unknown,
        };
        match e.kind() {
            ExprKind::Var { name, .. } if **name == *var => Increasing,
            ExprKind::Binary(op, a, b) => match op {
                BinOp::Add => direction(a, var).join(direction(b, var)),
                BinOp::Sub => direction(a, var).join(direction(b, var).flip()),
                BinOp::Min | BinOp::Max => direction(a, var).join(direction(b, var)),
                BinOp::Mul if !expr_uses_var(b, var) => signed(b, direction(a, var)),
                BinOp::Mul if !expr_uses_var(a, var) => signed(a, direction(b, var)),
                // Floor division by a positive constant keeps the order.
                BinOp::Div if e.ty().is_int_or_uint() && !expr_uses_var(b, var) => signed(b, direction(a, var)),
                _ => Unknown,
            },
            ExprKind::Cast(a) if e.ty().is_int_or_uint() && a.ty().is_int_or_uint() && e.ty().bits >= a.ty().bits => {
                direction(a, var)
            }
            ExprKind::Select(c, a, b) if !expr_uses_var(c, var) => direction(a, var).join(direction(b, var)),
            _ => Unknown,
        }
    })
}

/// The leading chain of lets of a loop body.
fn let_chain(s: &Stmt) -> Vec<(Name, Expr)> {
    let mut lets = Vec::new();
    let mut cur = s;
    while let Stmt::LetStmt { name, value, body } = cur {
        lets.push((name.clone(), value.clone()));
        cur = body;
    }
    lets
}

struct Slider<'a> {
    env: &'a Environment,
    /// The Funcs that slide, and along which dimension.
    slides: HashMap<Name, Slide>,
    /// The values the pass replaced, so later Funcs of the same loop body see the window
    /// they were inferred with, not their consumers' slid one.
    unslid: HashMap<Name, Expr>,
}

impl Slider<'_> {
    /// The value of let `i` of `chain` with the lets before it substituted in (bounds
    /// name their consumers' bounds, defined earlier in the same chain).
    fn expanded(&self, chain: &[(Name, Expr)], i: usize) -> Expr {
        let mut e = chain[i].1.clone();
        for (n, v) in chain[..i].iter().rev() {
            if expr_uses_var(&e, n) {
                e = substitute(n, self.unslid.get(n).unwrap_or(v), &e);
            }
        }
        e
    }

    /// Slides `f`, whose bound lets are in the chain that starts `body`, the body of
    /// `loop_`. Returns whether it did.
    fn slide_lets(&mut self, body: &mut Stmt, f: &str, loop_: &EnclosingLoop) -> bool {
        let chain = let_chain(body);
        let info = self.env.funcs[f].clone();
        if info.stages.len() != 1 {
            return false;
        }
        let lv = Expr::var(Type::i32(), loop_.name.clone());
        let prefix = super::schedule_functions::stage_prefix(f, 0);
        let mut moving = Vec::new();
        for (d, v) in info.args.iter().enumerate() {
            let find = |suffix: &str| chain.iter().position(|(n, _)| **n == *format!("{prefix}{v}.{suffix}"));
            let (Some(lo_at), Some(hi_at)) = (find("min"), find("max")) else { return false };
            let (lo, hi) = (self.expanded(&chain, lo_at), self.expanded(&chain, hi_at));
            if expr_uses_var(&lo, &loop_.name) || expr_uses_var(&hi, &loop_.name) {
                moving.push((d, v.clone(), lo_at, lo, hi));
            }
        }
        if moving.len() != 1 {
            return false;
        }
        let (d, v, lo_at, lo, hi) = moving.pop().unwrap();
        // A split of the sliding dimension would compute past the new rows.
        let split_here = info.stages[0].schedule.splits.iter().any(|s| match s {
            Split::Split { old, .. } => *old == v,
            Split::Fuse { inner, outer, .. } => *inner == v || *outer == v,
        });
        if split_here {
            return false;
        }
        let forwards = |e: &Expr| matches!(direction(&simplify(e), &loop_.name), Direction::Increasing);
        if !forwards(&lo) || !forwards(&hi) {
            return false;
        }
        let prev_hi = substitute(&loop_.name, &Expr::sub(lv.clone(), Expr::i32(1)), &hi);
        // The let itself may name consumers' bounds that slide too; starting after the
        // rows already computed is right either way.
        let lo_here = chain[lo_at].1.clone();
        let new_lo = Expr::select(
            Expr::lt(loop_.min.clone(), lv.clone()),
            Expr::max(lo_here.clone(), Expr::add(prev_hi, Expr::i32(1))),
            lo_here.clone(),
        );
        let extent = simplify(&Expr::add(Expr::sub(hi, lo), Expr::i32(1)));
        self.slides.insert(f.into(), Slide { dim: d, extent });
        let target = chain[lo_at].0.clone();
        let mut cur = body;
        while let Stmt::LetStmt { name, value, body } = cur {
            if *name == target {
                self.unslid.insert(target, lo_here);
                *value = simplify(&new_lo);
                return true;
            }
            cur = body;
        }
        false
    }

    /// Finds the loop that computes `f` below its Realize and slides `f` there if it can.
    /// Returns whether the producer was found.
    fn visit(&mut self, s: &mut Stmt, f: &Name, loops: &mut Vec<EnclosingLoop>) -> bool {
        stack::guard(|| {
            match s {
                Stmt::For { name, min, kind, body, .. } => {
                    loops.push(EnclosingLoop { name: name.clone(), min: min.clone(), kind: *kind });
                    // Bounds inference put the bounds of the Funcs computed here at the top of
                    // the loop's body.
                    let prefix = super::schedule_functions::stage_prefix(f, 0);
                    let here = let_chain(body).iter().any(|(n, _)| n.starts_with(&prefix));
                    let found = if here {
                        let serial = loops.iter().all(|l| matches!(l.kind, ForKind::Serial | ForKind::Unrolled));
                        let l = loops.last().unwrap();
                        if l.kind == ForKind::Serial && serial {
                            let l = EnclosingLoop { name: l.name.clone(), min: l.min.clone(), kind: l.kind };
                            self.slide_lets(body, f, &l);
                        }
                        true
                    } else {
                        self.visit(body, f, loops)
                    };
                    loops.pop();
                    found
                }
                Stmt::Block(v) => v.iter_mut().any(|c| self.visit(c, f, loops)),
                Stmt::ProducerConsumer { name, is_producer: true, .. } if name == f => true,
                Stmt::ProducerConsumer { body, .. } | Stmt::Realize { body, .. } | Stmt::LetStmt { body, .. } => {
                    self.visit(body, f, loops)
                }
                Stmt::IfThenElse { then_case, else_case, .. } => {
                    self.visit(then_case, f, loops) || else_case.as_mut().is_some_and(|e| self.visit(e, f, loops))
                }
                _ => false,
            }
        })
    }

    fn walk(&mut self, s: &mut Stmt) {
        stack::guard(|| match s {
            Stmt::Realize { name, bounds, fold, body, .. } => {
                let f = name.clone();
                let mut loops = Vec::new();
                self.visit(body, &f, &mut loops);
                if let Some(slide) = self.slides.get(&f) {
                    *fold = fold_for(slide, bounds);
                }
                self.walk(body)
            }
            Stmt::For { body, .. }
            | Stmt::LetStmt { body, .. }
            | Stmt::ProducerConsumer { body, .. }
            | Stmt::Allocate { body, .. } => self.walk(body),
            Stmt::Block(v) => v.iter_mut().for_each(|c| self.walk(c)),
            Stmt::IfThenElse { then_case, else_case, .. } => {
                self.walk(then_case);
                if let Some(e) = else_case {
                    self.walk(e)
                }
            }
            _ => {}
        })
    }
}

/// Runs the sliding-window pass, with storage folding: the `Realize` of each Func that
/// slides records its fold.
pub fn sliding_window(mut s: Stmt, env: &Environment) -> Result<Stmt> {
    Slider { env, slides: HashMap::new(), unslid: HashMap::new() }.walk(&mut s);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use crate::lower::{bounds_inference, environment, schedule_functions, storage_folding, LowerCtx};
    use crate::prelude::*;

    /// The blur of Halide 2012 with `blur_x` stored at root and computed per row of `blur_y`,
    /// lowered up to this pass.
    fn slid_blur() -> crate::ir::Stmt {
        let input = ImageParam::new(Type::u16(), 2, "sw_input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let (bx, by) = (Func::new("sw_blur_x"), Func::new("sw_blur_y"));
        bx.def((x, y), input.at((x, y - 1)) + input.at((x, y)));
        by.def((x, y), bx.at((x, y - 1)) + bx.at((x, y)) + bx.at((x, y + 1)));
        bx.store_root().compute_at(&by, y);
        let ctx = LowerCtx::new(environment::build_environment(&[by.func_ref().clone()]).unwrap());
        let s = schedule_functions::schedule_functions(&ctx).unwrap();
        let s = bounds_inference::bounds_inference(s, &ctx).unwrap();
        super::sliding_window(s, &ctx.env).unwrap()
    }

    #[test]
    fn the_realize_of_a_sliding_func_records_its_fold() {
        let s = slid_blur();
        assert_eq!(storage_folding::folds(&s), vec![("sw_blur_x".into(), crate::ir::Fold { dim: 1, factor: 3 })]);
        let text = s.to_string();
        assert!(text.contains("realize sw_blur_x(") && text.contains(": uint16 fold(1, 3) {"), "{text}");
        // The output is not stored above its compute level, so it neither slides nor folds.
        assert!(!text.contains("realize sw_blur_y"), "{text}");
    }
}
