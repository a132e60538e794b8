//! Pass 5: specialize vector tails. A split with the ShiftInwards tail clamps its variable
//! (`min(v, last)`) and guards its body for regions smaller than the factor. In a vector
//! loop both are per lane: the clamp turns dense loads and stores into gathers and
//! scatters, the guard into masks. Whenever the region is at least the factor (nearly
//! always) neither can fire, so the loop outside the vector loop is specialized:
//! `if (factor <= extent) { loop without clamp or guard } else { loop as it was }`.
//! Bounds inference ran on the guarded form, so the regions it found stay exact. Schedule
//! functions records each such split on the loop where it is specialized (`For::tails`);
//! this pass applies them and clears them.

use crate::analysis::{free_vars, simplify, simplify_stmt, stmt_free_vars};
use crate::error::Result;
use crate::ir::stack;
use crate::ir::{
    mutate_expr_children, mutate_stmt_children, walk_stmt, Expr, ForKind, Mutator, Name, Stmt, TailPlace, Visitor,
};
use std::collections::HashSet;

pub use crate::ir::VectorTail;

/// The body of the fast version: the clamps dropped, the conditions known true.
struct Assume<'a> {
    tails: Vec<&'a VectorTail>,
}

impl Mutator for Assume<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if self.tails.iter().any(|t| t.guard_term == *e) {
            return Expr::bool_imm(true);
        }
        mutate_expr_children(self, e)
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| match s {
            Stmt::LetStmt { name, body, .. } => match self.tails.iter().find(|t| t.var == *name) {
                Some(t) => Stmt::let_stmt(name.clone(), t.unclamped.clone(), self.mutate_stmt(body)),
                None => mutate_stmt_children(self, s),
            },
            _ => mutate_stmt_children(self, s),
        })
    }
}

/// Applies the tails, innermost first.
struct Specialize {
    /// The lets enclosing the statement being visited, outermost first: a nest's versions
    /// are simplified knowing them (the bounds of the Funcs outside it).
    lets: Vec<(Name, Expr)>,
}

impl Mutator for Specialize {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let Stmt::LetStmt { name, value, body } = s {
            self.lets.push((name.clone(), value.clone()));
            let body = self.mutate_stmt(body);
            self.lets.pop();
            return Stmt::LetStmt { name: name.clone(), value: value.clone(), body: Box::new(body) };
        }
        // A nest that may get a tile-wide version keeps its general form for the other one.
        let general = match s {
            Stmt::For { tails, .. } if tails.iter().any(|t| t.place == TailPlace::Nest) => Some(without_tails(s)),
            _ => None,
        };
        let s = mutate_stmt_children(self, s);
        let Stmt::For { name, min, extent, kind, tails, body } = s else { return s };
        let here = |place: TailPlace| -> Vec<&VectorTail> { tails.iter().filter(|t| t.place == place).collect() };
        let body = specialize(here(TailPlace::EachIteration), *body);
        let s = Stmt::For { name, min, extent, kind, tails: Vec::new(), body: Box::new(body) };
        let s = specialize(here(TailPlace::Loop), s);
        match general {
            Some(general) => specialize_nest(here(TailPlace::Nest), s, general, &self.lets),
            None => s,
        }
    }
}

/// `s` with every vector tail dropped unapplied: the general form, clamped and guarded,
/// right for regions of any size.
fn without_tails(s: &Stmt) -> Stmt {
    struct Drop;
    impl Mutator for Drop {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            stack::guard(|| match mutate_stmt_children(self, s) {
                Stmt::For { name, min, extent, kind, body, .. } => {
                    Stmt::For { name, min, extent, kind, tails: Vec::new(), body }
                }
                other => other,
            })
        }
    }
    Drop.mutate_stmt(s)
}

/// The lets among `lets` (outermost first) that the names in `used` refer to, directly or
/// through the values of other such lets, in their order. A nest or a condition is
/// simplified inside these alone: wrapped in every enclosing let, each nest at the root
/// would cost as much as the bounds of all the Funcs there, and a pipeline of N Funcs
/// O(N²) (a 100-stage chain spent 2.6 s of its 4.5 s lowering here).
fn lets_used(lets: &[(Name, Expr)], mut used: HashSet<Name>) -> Vec<(Name, Expr)> {
    let mut kept: Vec<(Name, Expr)> = Vec::new();
    for (name, value) in lets.iter().rev() {
        if used.contains(name) {
            used.extend(free_vars(value));
            kept.push((name.clone(), value.clone()));
        }
    }
    kept.reverse();
    kept
}

/// The conjunction of the tails' conditions: where it holds, none of their clamps fires.
fn all_fit(tails: &[&VectorTail]) -> Option<Expr> {
    tails.iter().map(|t| t.condition.clone()).reduce(Expr::and)
}

/// `if (conditions) { s without the tails } else { s }`, or `s` without tails.
fn specialize(tails: Vec<&VectorTail>, s: Stmt) -> Stmt {
    let Some(condition) = all_fit(&tails) else { return s };
    let fast = simplify_guards(Assume { tails }.mutate_stmt(&s));
    Stmt::IfThenElse { condition, then_case: Box::new(fast), else_case: Some(Box::new(s)) }
}

/// [`specialize`] for the tails of a whole nest, where the version has fewer allocations
/// and loops of a size only known at run time than the nest (a second copy of the nest costs compile
/// time, and a clamp of the stage's own loops alone costs nearly nothing at run time).
/// The two versions come back simplified, each under what its branch knows.
///
/// `s` is the nest with its inner tails applied, which the tile-wide version starts
/// from; the version for narrower regions is `general`, the nest with no tail applied.
/// It runs only where a region is narrower than a tile (small images, thin strips);
/// without the steady-state copies of its vector loops, first compiles of the corpus'
/// development pipelines took 0.75-0.9x their time with them, at the same run times.
fn specialize_nest(tails: Vec<&VectorTail>, s: Stmt, general: Stmt, lets: &[(Name, Expr)]) -> Stmt {
    // A split that never fits (a channel count below the split's factor) has no version
    // to make: its clamp stays in both, and the other splits are versioned alone.
    let within_lets = |e: &Expr| {
        let lets = lets_used(lets, free_vars(e).into_iter().collect());
        lets.into_iter().rev().fold(e.clone(), |body, (name, value)| Expr::let_in(name, value, body))
    };
    let tails: Vec<&VectorTail> =
        tails.into_iter().filter(|t| simplify(&within_lets(&t.condition)).as_int() != Some(0)).collect();
    let Some(condition) = all_fit(&tails) else { return s };
    // A GPU kernel gets its tile-wide version even without storage: a clamp per row of a
    // thread's rows keeps them from sharing loads, and the guard is a branch per point.
    let kernel = has_gpu_threads(&s);
    if !(kernel || has_allocation(&s)) {
        return s;
    }
    // Simplified inside the enclosing lets, then taken out of them again.
    let tile_wide = simplify_guards(Assume { tails: tails.clone() }.mutate_stmt(&s));
    let both = Stmt::IfThenElse { condition, then_case: Box::new(tile_wide), else_case: Some(Box::new(general)) };
    let lets_here = lets_used(lets, stmt_free_vars(&both));
    let wrapped = lets_here.into_iter().rev().fold(both, |body, (name, value)| Stmt::let_stmt(name, value, body));
    let mut versions = simplify_stmt(&wrapped);
    // Only the enclosing lets: a loop of one iteration may have become a let of its own.
    let versions = loop {
        versions = match versions {
            Stmt::LetStmt { name, body, .. } if lets.iter().any(|(n, _)| *n == name) => *body,
            other => break other,
        };
    };
    let Stmt::IfThenElse { condition, then_case: fast, else_case: Some(slow) } = versions else {
        // The condition was decided: where every split always fits, the version without
        // clamps is the nest.
        let fits = all_fit(&tails).map(|c| simplify(&within_lets(&c)));
        return if fits.and_then(|c| c.as_int()) == Some(1) { versions } else { s };
    };
    if kernel || symbolic_sizes(&fast) < symbolic_sizes(&slow) {
        let mut constant_in_fast = ConstantUnrolled::default();
        constant_in_fast.visit_stmt(&fast);
        let slow = Box::new(RollUp { constant_in_fast: constant_in_fast.0 }.mutate_stmt(&slow));
        Stmt::IfThenElse { condition, then_case: fast, else_case: Some(slow) }
    } else {
        s
    }
}

/// The unrolled loops of a statement whose extent is a constant.
#[derive(Default)]
struct ConstantUnrolled(HashSet<Name>);

impl Visitor for ConstantUnrolled {
    fn visit_expr(&mut self, _: &Expr) {}
    fn visit_stmt(&mut self, s: &Stmt) {
        if let Stmt::For { name, extent, kind: ForKind::Unrolled, .. } = s {
            if extent.as_int().is_some() {
                self.0.insert(name.clone());
            }
        }
        walk_stmt(self, s)
    }
}

/// Makes plain loops of the unrolled loops that the tile-wide version has with a
/// constant extent and this one (the version for regions narrower than a tile) without:
/// a loop the schedule unrolls (Halide's `unroll(x)` of a tile's producer) covers the
/// region there, whose width is known only at run time. Elsewhere an unrolled loop
/// without a constant extent stays a schedule error.
struct RollUp {
    constant_in_fast: HashSet<Name>,
}

impl Mutator for RollUp {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| match mutate_stmt_children(self, s) {
            Stmt::For { name, min, extent, kind: ForKind::Unrolled, tails, body }
                if self.constant_in_fast.contains(&name) && extent.as_int().is_none() =>
            {
                Stmt::For { name, min, extent, kind: ForKind::Serial, tails, body }
            }
            other => other,
        })
    }
}

/// Allocations in a statement, and allocations and loops of a size known only at run time.
#[derive(Default)]
struct Sizes {
    allocations: usize,
    symbolic: usize,
}

impl Visitor for Sizes {
    fn visit_expr(&mut self, _: &Expr) {}
    fn visit_stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Allocate { extents, .. } => {
                self.allocations += 1;
                self.symbolic += extents.iter().any(|e| e.as_int().is_none()) as usize;
            }
            Stmt::For { extent, .. } => self.symbolic += extent.as_int().is_none() as usize,
            _ => {}
        }
        walk_stmt(self, s)
    }
}

/// True if `s` has a GPU thread loop (it is, or holds, a kernel).
fn has_gpu_threads(s: &Stmt) -> bool {
    let mut found = matches!(s, Stmt::For { kind: ForKind::GpuThread, .. });
    s.for_each_child(|c| found = found || has_gpu_threads(c), |_| {});
    found
}

/// True if `s` allocates storage (a producer is computed inside it).
fn has_allocation(s: &Stmt) -> bool {
    let mut sizes = Sizes::default();
    sizes.visit_stmt(s);
    sizes.allocations > 0
}

/// How many allocations and loops in `s` have a size known only at run time.
fn symbolic_sizes(s: &Stmt) -> usize {
    let mut sizes = Sizes::default();
    sizes.visit_stmt(s);
    sizes.symbolic
}

/// Folds the guards that became `true || ...` (the later simplification does the rest).
fn simplify_guards(s: Stmt) -> Stmt {
    struct Guards;
    impl Mutator for Guards {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match mutate_stmt_children(self, s) {
                Stmt::IfThenElse { condition, then_case, else_case } => {
                    let condition = simplify(&condition);
                    match (condition.ty().is_bool(), condition.as_int()) {
                        (true, Some(1)) => *then_case,
                        _ => Stmt::IfThenElse { condition, then_case, else_case },
                    }
                }
                other => other,
            }
        }
    }
    Guards.mutate_stmt(&s)
}

/// Runs the pass: specializes every loop that carries vector tails, and clears them.
pub fn specialize_tails(s: Stmt) -> Result<Stmt> {
    fn has_tails(s: &Stmt) -> bool {
        let mut found = matches!(s, Stmt::For { tails, .. } if !tails.is_empty());
        s.for_each_child(|c| found = found || has_tails(c), |_| {});
        found
    }
    // Rebuilding would also regroup blocks; a nest without tails is left as it is.
    if !has_tails(&s) {
        return Ok(s);
    }
    Ok(Specialize { lets: Vec::new() }.mutate_stmt(&s))
}

#[cfg(test)]
mod tests {
    use crate::ir::{Expr, ForKind, Stmt, TailPlace, Type, VectorTail};

    fn v(n: &str) -> Expr {
        Expr::var(Type::i32(), n)
    }

    /// The extent, a run-time parameter.
    fn n() -> Expr {
        Expr::param(Type::i32(), "n")
    }

    /// `for (xo, 0, n) { let x = min(xo * 8, n - 8) ... store if guard }`, carrying a
    /// ShiftInwards tail whose condition is `8 <= n`.
    fn nest(tails: Vec<VectorTail>) -> Stmt {
        let fits = Expr::le(Expr::i32(8), n());
        let guard = Expr::or(fits, Expr::lt(v("x"), n()));
        let store = Stmt::Store { buffer: "out".into(), value: Expr::i32(1), index: v("x"), predicate: None };
        let clamped = Expr::min(Expr::mul(v("xo"), Expr::i32(8)), Expr::sub(n(), Expr::i32(8)));
        let body = Stmt::let_stmt("x", clamped, Stmt::if_then(guard, store));
        let mut s = Stmt::for_loop("xo", Expr::i32(0), n(), ForKind::Serial, body);
        if let Stmt::For { tails: t, .. } = &mut s {
            *t = tails;
        }
        s
    }

    #[test]
    fn a_loop_with_a_tail_gets_a_fast_version_and_loses_the_tail() {
        let fits = Expr::le(Expr::i32(8), n());
        let tail = VectorTail {
            condition: fits.clone(),
            guard_term: fits,
            place: TailPlace::Loop,
            var: "x".into(),
            unclamped: Expr::mul(v("xo"), Expr::i32(8)),
        };
        let s = nest(vec![tail]);
        assert!(s.to_string().starts_with("for (xo, 0, n) tail((8 <= n), (8 <= n), x = (xo * 8)) {\n"), "{s}");
        let out = super::specialize_tails(s).unwrap();
        let Stmt::IfThenElse { condition, then_case, else_case: Some(slow) } = &out else { panic!("{out}") };
        assert_eq!(condition.to_string(), "(8 <= n)");
        // The fast version has no clamp and no guard; the other is the loop as it was.
        assert_eq!(then_case.to_string(), "for (xo, 0, n) {\n  let x = (xo * 8)\n  out[x] = 1\n}\n");
        assert_eq!(**slow, nest(Vec::new()));
    }

    #[test]
    fn a_nest_without_tails_is_unchanged() {
        let s = nest(Vec::new());
        assert_eq!(super::specialize_tails(s.clone()).unwrap(), s);
    }
}
