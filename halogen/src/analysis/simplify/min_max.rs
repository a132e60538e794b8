//! Rules for `min(a, b)` and `max(a, b)`.
//!
//! The pinned meanings are `min(a, b) = if b < a { b } else { a }` and
//! `max(a, b) = if a < b { b } else { a }`; for floats these are not commutative when a
//! NaN is involved, so float operands are never reordered.

use super::info::const_int;
use super::linear::{self, Linear};
use super::{fold_binary, is_int, no_overflow, vector, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// Rewrites `min(a, b)` / `max(a, b)` (operands simplified), or `None` to keep the node.
pub(super) fn rules(s: &mut Simplifier, op: BinOp, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    let is_min = op == BinOp::Min;
    if let Some(r) = fold_binary(op, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(op, x, y) {
        return Some(r);
    }
    if x == y {
        return Some(x.clone());
    }
    if !is_int(ty) {
        return None;
    }
    if x.is_const() && !y.is_const() {
        return Some(Expr::binary(op, y.clone(), x.clone()));
    }
    if let Some(r) = merge_chain(s, op, x, y) {
        return Some(r);
    }
    // Decided by the operands' bounds.
    if let (Some(ai), Some(bi)) = (a.1, b.1) {
        if ai.max <= bi.min {
            return Some(if is_min { x.clone() } else { y.clone() });
        }
        if bi.max <= ai.min {
            return Some(if is_min { y.clone() } else { x.clone() });
        }
    }
    // Decided by the difference: a constant (min(x, x + 3)), or bounded by the
    // enclosing loops (min(x, n - 1) in a loop over x < n).
    if no_overflow(ty) {
        if let Some(lin) = linear::collect(&Expr::sub(x.clone(), y.clone())).filter(|l| l.exact) {
            if let Some(d) = lin.as_const() {
                return Some(if (d <= 0) == is_min { x.clone() } else { y.clone() });
            }
            // Or by what enclosing ifs and lets say about the difference.
            match s.difference_range(&lin) {
                (_, Some(hi)) if hi <= 0 => return Some(if is_min { x.clone() } else { y.clone() }),
                (Some(lo), _) if lo >= 0 => return Some(if is_min { y.clone() } else { x.clone() }),
                _ => {}
            }
            // Its constant bounds, else its bounds over the enclosing loops.
            let (diff, known) = s.mutate(&linear::emit_linear(ty, &lin));
            let pick = |b: super::info::Info| {
                if b.max <= 0 {
                    Some(if is_min { x.clone() } else { y.clone() })
                } else if b.min >= 0 {
                    Some(if is_min { y.clone() } else { x.clone() })
                } else {
                    None
                }
            };
            if let Some(r) = known.and_then(pick) {
                return Some(r);
            }
            if let Some(r) = s.bounds_in_scope(&diff).and_then(pick) {
                return Some(r);
            }
            // Or by the difference with a `min`/`max` term replaced by one operand.
            match relaxed_sign(s, &lin) {
                Some(true) => return Some(if is_min { x.clone() } else { y.clone() }),
                Some(false) => return Some(if is_min { y.clone() } else { x.clone() }),
                None => {}
            }
        }
    }
    let other = if is_min { BinOp::Max } else { BinOp::Min };
    if let ExprKind::Binary(xop, p, q) = x.kind() {
        if *xop == op {
            // min(min(p, c1), c2) -> min(p, min(c1, c2))
            if q.is_const() && y.is_const() {
                return Some(Expr::binary(op, p.clone(), fold_binary(op, q, y)?));
            }
            // min(min(p, q), p) -> min(p, q)
            if p == y || q == y {
                return Some(x.clone());
            }
        }
        if *xop == other {
            // min(max(p, q), p) -> p
            if p == y || q == y {
                return Some(y.clone());
            }
            // min(max(p, c1), c2) -> c2 when c1 >= c2 (and the max version).
            if let (Some(c1), Some(c2)) = (const_int(q), const_int(y)) {
                if (is_min && c1 >= c2) || (!is_min && c1 <= c2) {
                    return Some(y.clone());
                }
            }
        }
    }
    // A shared operand comes out (ints form a distributive lattice):
    // min(min(a, k), min(c, k)) -> min(min(a, c), k), min(max(a, k), max(c, k)) -> max(min(a, c), k).
    if let (ExprKind::Binary(xop, a, b), ExprKind::Binary(yop, c, d)) = (x.kind(), y.kind()) {
        if xop == yop && matches!(xop, BinOp::Min | BinOp::Max) {
            let shared = if b == d {
                Some((a, c, b))
            } else if a == c {
                Some((b, d, a))
            } else if a == d {
                Some((b, c, a))
            } else if b == c {
                Some((a, d, b))
            } else {
                None
            };
            if let Some((p, q, k)) = shared {
                return Some(Expr::binary(*xop, Expr::binary(op, p.clone(), q.clone()), k.clone()));
            }
        }
    }
    // min(p / k, q / k) -> min(p, q) / k for a constant k > 0: floor division by a
    // positive constant never decreases, so it commutes with min and max exactly, for
    // every value (bounds of up- and down-sampled stages: min(t / 2, (t + 1) / 2) is t / 2).
    if let (ExprKind::Binary(BinOp::Div, p, k1), ExprKind::Binary(BinOp::Div, q, k2)) = (x.kind(), y.kind()) {
        if k1 == k2 && const_int(k1).is_some_and(|k| k > 0) {
            return Some(Expr::div(Expr::binary(op, p.clone(), q.clone()), k1.clone()));
        }
    }
    if let ExprKind::Binary(yop, p, q) = y.kind() {
        // min(p, min(p, q)) -> min(p, q); min(p, max(p, q)) -> p
        if (*yop == op || *yop == other) && (p == x || q == x) {
            return Some(if *yop == op { y.clone() } else { x.clone() });
        }
    }
    None
}

/// Most `min`/`max` terms [`relaxed_sign`] replaces (each doubles its work).
const MAX_RELAXED_TERMS: usize = 2;

/// `Some(true)` if the exact difference `lin` is at most 0, `Some(false)` if it is at
/// least 0, proven after replacing its `min`/`max` terms by one of their operands.
///
/// `min(p, q) <= q`, so a term `k * min(p, q)` with `k > 0` is at most `k * q` (and
/// `k * max(p, q)` with `k < 0` at most `k * q`): any such replacement bounds the
/// difference from above, and the mirrored ones from below. A clamped tile gives the
/// case this is for: `min(n + min(16 * t, w - 15) + 7, n + w)` is its first operand,
/// since `min(16 * t, w - 15) <= w - 15`, once an enclosing `if` says the region is
/// at least a tile (without it, its guard keeps the clamp).
fn relaxed_sign(s: &mut Simplifier, lin: &Linear) -> Option<bool> {
    // The clamp may be the value of a let (a tile's shifted start, named once).
    let expanded;
    let lin = match s.expand_lets(lin) {
        Some(e) => {
            expanded = e;
            &expanded
        }
        None => lin,
    };
    let is_clamp = |t: &Expr| matches!(t.kind(), ExprKind::Binary(BinOp::Min | BinOp::Max, ..));
    let clamps: Vec<usize> =
        (0..lin.terms.len()).filter(|&i| lin.terms[i].1 != 0 && is_clamp(&lin.terms[i].0)).collect();
    // Without enclosing loops, lets or ifs, the operands' own bounds decided already.
    if clamps.is_empty() || clamps.len() > MAX_RELAXED_TERMS || (s.scope.is_empty() && s.linear_facts.is_empty()) {
        return None;
    }
    // For the upper bound (`upper`), min terms with positive and max terms with negative
    // coefficients are replaced; the others stay, so only those choices are tried.
    let bound = |s: &mut Simplifier, upper: bool| -> Option<bool> {
        let replaceable: Vec<usize> = clamps
            .iter()
            .copied()
            .filter(|&i| {
                let ExprKind::Binary(op, ..) = lin.terms[i].0.kind() else { return false };
                (*op == BinOp::Min) == ((lin.terms[i].1 > 0) == upper)
            })
            .collect();
        if replaceable.is_empty() {
            return None;
        }
        for choice in 0..(1usize << replaceable.len()) {
            let mut terms = lin.terms.clone();
            for (bit, &i) in replaceable.iter().enumerate() {
                let ExprKind::Binary(_, p, q) = lin.terms[i].0.kind() else { return None };
                terms[i].0 = if choice >> bit & 1 == 0 { p.clone() } else { q.clone() };
            }
            let relaxed = linear::emit(lin.ty, &terms, lin.constant);
            let Some(r) = linear::collect(&relaxed).filter(|l| l.exact) else { continue };
            let proven = match r.as_const() {
                Some(c) => (c <= 0) == upper,
                None => {
                    let (lo, hi) = s.difference_range(&r);
                    let by_facts = if upper { hi.is_some_and(|h| h <= 0) } else { lo.is_some_and(|l| l >= 0) };
                    // Not simplified again: that would relax its own clamps, and theirs.
                    let holds = |b: super::info::Info| if upper { b.max <= 0 } else { b.min >= 0 };
                    by_facts || s.bounds_in_scope(&linear::emit_linear(lin.ty, &r)).is_some_and(holds)
                }
            };
            if proven {
                return Some(upper);
            }
        }
        None
    };
    bound(s, true).or_else(|| bound(s, false))
}

/// Rewrites a chain of one operator (`min(min(a, b), c)`, nested any way) whose terms
/// can be combined, or `None`:
/// - a term that repeats another or differs from it by a constant goes
///   (`min(min(a, b + 2), b - 1)` -> `min(a, b - 1)`: the general form of Halide's
///   `min(min(a, b + c1), b + c2)` rules);
/// - terms of the other operator that share their second operand are taken together
///   (`max(max(min(p, k), a), min(q, k))` -> `max(min(max(p, q), k), a)`: the lattice's
///   distributive law, which the pairwise rule applies only to neighbours).
///
/// Unions of the regions that many call sites read build such chains, with each site's
/// bound (often clamped) repeated for every tap of a stencil: kept whole, they grow with
/// the product of the stencils' sizes and every later rule walks them. Terms are compared
/// by their stored hashes, so the rule costs a few word comparisons per pair of terms.
/// Offsets are merged only where the type does not overflow and the base may not hold an
/// unchecked value (see `unchecked.rs`).
fn merge_chain(s: &Simplifier, op: BinOp, x: &Expr, y: &Expr) -> Option<Expr> {
    let ty = x.ty();
    let is_chain = |e: &Expr| matches!(e.kind(), ExprKind::Binary(o, ..) if *o == op);
    if !no_overflow(ty) || !ty.is_scalar() || !(is_chain(x) || is_chain(y)) {
        return None;
    }
    let other = if op == BinOp::Min { BinOp::Max } else { BinOp::Min };
    let terms = chain_terms(op, &[x, y]);
    // Each term as `base + offset`, kept by base in order of first appearance. A term
    // `min(m1, m2) + c` also bounds `m1 + c` and `m2 + c`: those are implied entries,
    // which remove the terms they beat and are not printed themselves.
    let better = |o: i128, than: i128| if op == BinOp::Min { o < than } else { o > than };
    let mut kept: Vec<(&Expr, i128, Option<&Expr>)> = Vec::with_capacity(terms.len());
    let mut merged = false;
    for t in terms {
        let (base, offset) = split_offset(t);
        let mut bounds = vec![(base, offset, Some(t))];
        if is_chain(base) && !s.may_hold_any(base) {
            for e in chain_terms(op, &[base]) {
                let (b, o) = split_offset(e);
                bounds.push((b, o + offset, None));
            }
        }
        for (base, offset, term) in bounds {
            let Some(k) = kept.iter_mut().find(|k| k.0 == base) else {
                kept.push((base, offset, term));
                continue;
            };
            if k.1 != offset && s.may_hold_any(base) {
                if term.is_some() {
                    kept.push((base, offset, term));
                }
                continue;
            }
            if better(offset, k.1) {
                merged |= k.2.is_some();
                *k = (base, offset, term);
            } else {
                merged |= term.is_some();
            }
        }
    }
    // Terms `other(p, k)` with a shared `k`, gathered at the first one's place.
    let mut out: Vec<Expr> = Vec::with_capacity(kept.len());
    let mut shared: Vec<(&Expr, usize, Vec<Expr>)> = Vec::new();
    for t in kept.into_iter().filter_map(|k| k.2) {
        if let ExprKind::Binary(o, p, k) = t.kind() {
            if *o == other {
                if let Some(g) = shared.iter_mut().find(|g| g.0 == k) {
                    g.2.push(p.clone());
                    merged = true;
                    continue;
                }
                shared.push((k, out.len(), vec![p.clone()]));
            }
        }
        out.push(t.clone());
    }
    if !merged {
        return None;
    }
    for (k, at, ps) in shared {
        if ps.len() > 1 {
            let inner = ps.into_iter().reduce(|a, b| Expr::binary(op, a, b))?;
            out[at] = Expr::binary(other, inner, k.clone());
        }
    }
    out.into_iter().reduce(|a, b| Expr::binary(op, a, b))
}

/// The operands of the chains of `op` at the top of `roots`, left to right (iteratively:
/// a union of many call sites makes long chains).
fn chain_terms<'e>(op: BinOp, roots: &[&'e Expr]) -> Vec<&'e Expr> {
    let mut terms = Vec::new();
    let mut todo: Vec<&Expr> = roots.iter().rev().copied().collect();
    while let Some(e) = todo.pop() {
        match e.kind() {
            ExprKind::Binary(o, a, b) if *o == op => todo.extend([b, a]),
            _ => terms.push(e),
        }
    }
    terms
}

/// `e` as `base + offset` for a constant offset (`x - 3` is `x + -3`; anything else is
/// itself plus 0).
fn split_offset(e: &Expr) -> (&Expr, i128) {
    match e.kind() {
        ExprKind::Binary(BinOp::Add, a, c) => const_int(c).map_or((e, 0), |c| (a, c)),
        ExprKind::Binary(BinOp::Sub, a, c) => const_int(c).and_then(i128::checked_neg).map_or((e, 0), |c| (a, c)),
        _ => (e, 0),
    }
}
