//! What enclosing `if`s say about integer orderings, kept as linear inequalities.
//!
//! A guard such as `base + 7 <= x.max` (a vector loop's full-vector test) is stored as
//! `base - x.max <= -7`. Any later difference with the same terms is then bounded by it:
//! inside the guard, `min(base + 7, x.max)` is `base + 7`, because `(base + 7) - x.max`
//! is `base - x.max + 7 <= 0`. Matching whole conditions alone (the `facts` of the
//! simplifier) misses these, as the guard and the `min` are different expressions; the
//! extents of producers computed per vector then stayed symbolic, which cost them stack
//! storage and constant loops.

use super::linear::{self, Linear};
use super::{no_overflow, Simplifier};
use crate::analysis::expr_uses_var;
use crate::analysis::substitute::substitute_map;
use crate::ir::{CmpOp, Expr, ExprKind, Name};
use std::collections::HashMap;

/// `sum(coefficient * term) <= bound`, the terms without zero coefficients.
#[derive(Clone, Debug)]
pub(crate) struct LinearFact {
    terms: Vec<(Expr, i64)>,
    bound: i128,
}

impl LinearFact {
    /// True if a term mentions `name` (the fact is forgotten when `name` is rebound).
    pub(crate) fn uses_var(&self, name: &str) -> bool {
        self.terms.iter().any(|(t, _)| expr_uses_var(t, name))
    }
}

/// The nonzero terms of `lin`, each coefficient multiplied by `sign`.
fn nonzero_terms(lin: &Linear, sign: i64) -> Option<Vec<(Expr, i64)>> {
    lin.terms.iter().filter(|(_, k)| *k != 0).map(|(t, k)| Some((t.clone(), k.checked_mul(sign)?))).collect()
}

/// True if the two combinations have the same terms with the same coefficients, in any
/// order.
fn same_terms(a: &[(Expr, i64)], b: &[(Expr, i64)]) -> bool {
    a.len() == b.len() && a.iter().all(|(t, k)| b.iter().any(|(u, j)| u == t && j == k))
}

impl Simplifier {
    /// Records `a op b` (already simplified) as linear inequalities, where it orders two
    /// integers of a type that does not overflow.
    pub(crate) fn learn_linear(&mut self, op: CmpOp, a: &Expr, b: &Expr) {
        if !no_overflow(a.ty()) || !a.ty().is_scalar() {
            return;
        }
        // `a - b` as terms + c: `a <= b` is `terms <= -c`; `a >= b` is `-terms <= c`.
        let Some(lin) = linear::collect(&Expr::sub(a.clone(), b.clone())).filter(|l| l.exact) else { return };
        if lin.as_const().is_some() {
            return;
        }
        let c = lin.constant as i128;
        let mut push = |sign: i64, bound: i128| {
            if let Some(terms) = nonzero_terms(&lin, sign) {
                self.linear_facts.push(LinearFact { terms, bound });
            }
        };
        match op {
            CmpOp::Le => push(1, -c),
            CmpOp::Lt => push(1, -c - 1),
            CmpOp::Ge => push(-1, c),
            CmpOp::Gt => push(-1, c - 1),
            CmpOp::Eq => {
                push(1, -c);
                push(-1, c);
            }
            CmpOp::Ne => {}
        }
    }

    /// The range the learned inequalities give the combination `lin` (an exact difference
    /// of two integers): `(lowest, highest)`, each `None` where no fact bounds that side.
    pub(crate) fn fact_range(&self, lin: &Linear) -> (Option<i128>, Option<i128>) {
        if self.linear_facts.is_empty() || !lin.exact {
            return (None, None);
        }
        let (Some(up), Some(down)) = (nonzero_terms(lin, 1), nonzero_terms(lin, -1)) else { return (None, None) };
        let c = lin.constant as i128;
        let (mut lo, mut hi): (Option<i128>, Option<i128>) = (None, None);
        for f in &self.linear_facts {
            // terms <= bound: lin = terms + c <= bound + c.
            if same_terms(&f.terms, &up) {
                let h = f.bound + c;
                hi = Some(hi.map_or(h, |o| o.min(h)));
            }
            // -terms <= bound: lin = terms + c >= c - bound.
            if same_terms(&f.terms, &down) {
                let l = c - f.bound;
                lo = Some(lo.map_or(l, |o| o.max(l)));
            }
        }
        (lo, hi)
    }
}

/// How many times [`Simplifier::expand_lets`] substitutes (lets of lets of lets).
const LET_EXPANSION_DEPTH: usize = 4;

impl Simplifier {
    /// `lin` with the small linear lets in scope written out, collected again; `None` if
    /// it names none. Bounds inference names each loop level's bounds with lets of one
    /// base (`w.min = base`, `w.max = base + 7`): their difference only cancels once they
    /// are written out.
    ///
    /// Only terms that are such a name are written out (the lets are linear, so the result
    /// is collected again in one step); a name inside another term (`min(w.max, n)`) stays.
    /// Walking every term for its free names, as an earlier version did, cost most of the
    /// simplifier's time on pipelines with long clamped bounds.
    pub(crate) fn expand_lets(&self, lin: &Linear) -> Option<Linear> {
        if self.linear_lets.is_empty() {
            return None;
        }
        let mut cur = lin.clone();
        let mut changed = false;
        for _ in 0..LET_EXPANSION_DEPTH {
            let map: HashMap<Name, Expr> = cur
                .terms
                .iter()
                .filter(|(_, c)| *c != 0)
                .filter_map(|(t, _)| match t.kind() {
                    ExprKind::Var { name, .. } => Some((name.clone(), self.linear_lets.get(name)?.clone())),
                    _ => None,
                })
                .collect();
            if map.is_empty() {
                break;
            }
            cur = linear::collect(&substitute_map(&map, &linear::emit_linear(cur.ty, &cur))).filter(|l| l.exact)?;
            changed = true;
        }
        changed.then_some(cur)
    }

    /// The range of the difference `lin` that its written-out lets and the learned
    /// inequalities prove, as `(lowest, highest)`.
    pub(crate) fn difference_range(&self, lin: &Linear) -> (Option<i128>, Option<i128>) {
        let (mut lo, mut hi) = self.fact_range(lin);
        if let Some(expanded) = self.expand_lets(lin) {
            let (l, h) = match expanded.as_const() {
                Some(c) => (Some(c as i128), Some(c as i128)),
                None => self.fact_range(&expanded),
            };
            lo = lo.max(l);
            hi = match (hi, h) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        (lo, hi)
    }
}
