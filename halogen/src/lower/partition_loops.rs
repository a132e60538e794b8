//! Pass 8: partition vector loops at their boundary conditions.
//!
//! A clamped access such as `input[min(x + 1, last)]` (what `repeat_edge` and the
//! ShiftInwards tail of a split leave) costs a `min`, and in a vector loop it turns a dense
//! load into a gather, on every iteration. Yet the clamp only changes anything in the few
//! iterations at either end of the loop. So each innermost serial loop is cut in three, as
//! Halide's loop partitioning does: a prologue and an epilogue that run the body as it is,
//! and a steady state in between where every such `min`/`max` is replaced by the operand it
//! then equals.
//!
//! "Innermost" looks through loops with constant bounds (a reduction's window, `r` in
//! `[0, 3)`): their variables count as offsets in their range, like a vector's lanes, so
//! the loop outside them is partitioned once for every value of `r`, instead of the short
//! loop being cut in three at every iteration of the outer one (whose bounds then cost
//! more than the window, and which the C compiler can no longer unroll). At the ends of the
//! outer loop the inner loops are partitioned as they would be alone.
//!
//! Boundary conditions that wrap the coordinate (`mirror_interior`, `repeat_image`, ...)
//! are written `select(inside, clamp(x), wrapped(x))`, as Halide writes them: a `select`
//! whose condition is an `&&` of two or more comparisons of an affine index with an
//! invariant is taken to be true in the steady state (an `||` of them, false), so the
//! steady state keeps only the clamp, which it then drops too. Only where the likely side
//! clamps the tested index to the same interval, so that the select adds no bound of its
//! own: a test of a band inside the loop is left alone rather than shrink the steady state
//! to the band.
//!
//! Which `min`/`max` qualify: one operand affine in the loop variable (`c·v + base` plus a
//! constant offset per lane), the other invariant in the loop. The affine operand is taken to
//! be the likely one, and the iterations where it wins for every lane form an interval whose
//! ends are computed from the bases. Operands are analysed through the lets of the body, and
//! a qualifying `min`/`max` counts as its likely operand when it appears inside another
//! one, so `max(min(x + 1, last), first)` gives two bounds. The steady state is the
//! intersection of all the intervals; where it is empty the prologue and epilogue do all the
//! work, so the result is always correct.
//!
//! Short loops of constant length (a vector loop across a tile, three vectors for a
//! 22-pixel tile) are treated as Halide treats its tiles: the ShiftInwards shift of their
//! last vector, `min(8·v, extent - 8)`, is a scalar `min` that never makes a gather, so it
//! is kept in the steady state rather than ending it (a "soft cap", see
//! `Analysis::soft_caps`), and the loop gets a version with its constant bounds that runs
//! the steady state over every iteration, taken wherever the steady state covers it (in
//! every tile away from the input's edges). The C compiler unrolls that version and folds
//! each iteration's position; the three pieces' run-time bounds, computed again for every
//! row, cost more than the few iterations. nl_means' squared differences, three vectors
//! per row of a tile, ran their last vector in the epilogue before this.
//!
//! A loop cut in three for its clamps also ends its steady state where an `if` comparing
//! its position with an invariant starts to fail: the per-vector choice a GuardWithIf
//! split leaves in an update stage (`if (x + 7 <= x.max) { whole vector } else { guarded
//! lanes }`). The steady state then runs the `then` branch alone, without the branch.

use crate::analysis::{free_vars, simplify, substitute_map};
use crate::ir::stack;
use crate::ir::{mutate_stmt_children, BinOp, CmpOp, Expr, ExprKind, ExprNode, ForKind, Mutator, Name, Stmt, Type};
use std::collections::{HashMap, HashSet};

/// `coef·v + base + o` for each lane, where the lane offsets `o` lie in `[lo, hi]`.
#[derive(Clone, Debug)]
struct Affine {
    coef: i64,
    /// Scalar `i32` over variables bound outside the loop only.
    base: Expr,
    lo: i64,
    hi: i64,
}

impl Affine {
    fn invariant(base: Expr) -> Affine {
        Affine { coef: 0, base, lo: 0, hi: 0 }
    }
}

/// Where the likely operand of a qualifying `min`/`max` wins: `v >= bound` or `v <= bound`.
#[derive(Clone, Debug)]
enum Bound {
    AtLeast(Expr),
    AtMost(Expr),
}

/// A qualifying `min`/`max` or `select`: the operand it equals in the steady state, and
/// the bounds of the iterations where it does.
#[derive(Clone, Debug)]
struct Candidate {
    likely: Expr,
    bounds: Vec<Limit>,
    /// A scalar `min(c·v + base, cap)` with `c > 0`, kept in the steady state (see
    /// `Analysis::soft_caps`).
    soft: bool,
}

/// A bound with the relation it comes from: `coef·v <= threshold` (an `AtMost` for a
/// positive `coef`...) or `>=`, the threshold an `i32` expression kept to compare two
/// limits (a boundary condition's inside test against its clamp).
#[derive(Clone, Debug)]
struct Limit {
    bound: Bound,
    coef: i64,
    at_most: bool,
    threshold: Expr,
}

impl Limit {
    /// Whether `other` is the same relation: the same coefficient and direction and a
    /// threshold that simplifies to the same value.
    fn same_as(&self, other: &Limit) -> bool {
        self.coef == other.coef
            && self.at_most == other.at_most
            && simplify(&Expr::sub(self.threshold.clone(), other.threshold.clone())).as_int() == Some(0)
    }
}

/// The analysis of one loop's body: the loop variable and the lets of the body in scope.
struct Analysis {
    var: Name,
    /// Lets bound inside the loop, innermost last: name, value, whether it varies, and an
    /// id naming the scope it opens (memo keys use it: one node may sit in two scopes).
    lets: Vec<(Name, Expr, bool, u64)>,
    next_scope: u64,
    affine_memo: HashMap<(*const ExprNode, u64), (Expr, Option<Affine>)>,
    candidate_memo: HashMap<(*const ExprNode, u64), (Expr, Option<Candidate>)>,
    varies_memo: HashMap<(*const ExprNode, u64), (Expr, bool)>,
    /// Bounds found, each once.
    bounds: Vec<Bound>,
    seen: HashSet<String>,
    /// Loops inside the body with constant bounds (a reduction's short loops): their
    /// variables count as offsets in `[first, last]`, like the lanes of a vector.
    inner: HashMap<Name, (i64, i64)>,
    /// Some bound comes from a clamp that depends on those variables too (a window
    /// moving with the loop): only then is the loop around them partitioned.
    window_bounds: bool,
    /// Whether scalar caps of the loop's position count as soft (see `soft_caps`).
    allow_soft: bool,
    /// The soft caps found: scalar `min(c·v + base, cap)`, `c > 0`, such as the
    /// ShiftInwards tail of a vector split, `min(8·v, extent - 8)`. The steady state keeps
    /// them instead of stopping where they start to bite: `m(v) = min(c·v + base, cap)` is
    /// at most `c·v + base`, which the analysis of the other clamps assumes, so every bound
    /// `v <= U` it finds still holds for `m`; a bound `v >= L` holds too as long as `cap`
    /// reaches it, `(cap - base) / c >= L`. The steady state then runs to the loop's end
    /// when every soft cap's own bound is at least `steady_min`, and is empty otherwise,
    /// which is what the cap as an ordinary bound would give there. Sound only when the
    /// loop variable appears nowhere but inside one such cap (checked by `only_in_soft`):
    /// then every expression analysed is `s·m(v) + invariant`.
    soft_caps: Vec<Expr>,
    /// Each soft cap with the body's lets substituted: they must all be the same.
    soft_meanings: Vec<Expr>,
    /// The bounds `c·v <= U` of the soft caps.
    soft_limits: Vec<Limit>,
    /// The bounds of the other clamps, with their relations.
    limits: Vec<Limit>,
    /// Where the conditions of `if` statements comparing the loop's position with an
    /// invariant hold: a vector split's GuardWithIf, `if (x + 7 <= x.max) { whole vector }
    /// else { guarded lanes }`, chosen per iteration.
    guards: Vec<Limit>,
    /// Whether the steady state takes the `then` branch of those `if`s (`adopt_guards`).
    guards_adopted: bool,
}

fn is_i32(e: &Expr) -> bool {
    e.ty().element() == Type::i32()
}

impl Analysis {
    fn new(var: Name, inner: HashMap<Name, (i64, i64)>) -> Analysis {
        Analysis {
            var,
            inner,
            window_bounds: false,
            lets: Vec::new(),
            next_scope: 1,
            affine_memo: HashMap::new(),
            candidate_memo: HashMap::new(),
            varies_memo: HashMap::new(),
            bounds: Vec::new(),
            seen: HashSet::new(),
            allow_soft: true,
            soft_caps: Vec::new(),
            soft_meanings: Vec::new(),
            soft_limits: Vec::new(),
            limits: Vec::new(),
            guards: Vec::new(),
            guards_adopted: false,
        }
    }

    /// Binds a let of the body for what follows, until `pop_let`.
    fn push_let(&mut self, name: &Name, value: &Expr) {
        let varies = self.varies(value, self.lets.len());
        self.lets.push((name.clone(), value.clone(), varies, self.next_scope));
        self.next_scope += 1;
    }

    fn pop_let(&mut self) {
        self.lets.pop();
    }

    /// The id of the scope with the first `depth` lets.
    fn scope(&self, depth: usize) -> u64 {
        depth.checked_sub(1).map_or(0, |i| self.lets[i].3)
    }

    /// The innermost binding of `name` among the first `depth` lets.
    fn lookup(&self, name: &Name, depth: usize) -> Option<usize> {
        self.lets[..depth].iter().rposition(|(n, ..)| n == name)
    }

    /// Whether `e` (seen with the first `depth` lets in scope) depends on the loop variable.
    fn varies(&mut self, e: &Expr, depth: usize) -> bool {
        let key = (e.ptr(), self.scope(depth));
        if let Some((_, r)) = self.varies_memo.get(&key) {
            return *r;
        }
        let r = match e.kind() {
            ExprKind::Var { name, .. } => match self.lookup(name, depth) {
                Some(i) => self.lets[i].2,
                None => *name == self.var || self.inner.contains_key(name),
            },
            // Rare inside a loop body's expressions: look at the free variables.
            ExprKind::Let { .. } => free_vars(e).iter().any(|n| match self.lookup(n, depth) {
                Some(i) => self.lets[i].2,
                None => *n == self.var || self.inner.contains_key(n),
            }),
            _ => {
                let mut any = false;
                e.for_each_child(|c| any = any || self.varies(c, depth));
                any
            }
        };
        self.varies_memo.insert(key, (e.clone(), r));
        r
    }

    /// Whether `e` depends on a variable of the constant loops inside.
    fn mentions_inner(&self, e: &Expr, depth: usize) -> bool {
        stack::guard(|| {
            free_vars(e).iter().any(|v| match self.lookup(v, depth) {
                Some(i) => self.mentions_inner(&self.lets[i].1, i),
                None => self.inner.contains_key(v),
            })
        })
    }

    /// `e` with the loop's lets substituted, so that it means the same outside the loop.
    fn expand(&self, e: &Expr, depth: usize) -> Expr {
        stack::guard(|| {
            let mut map = HashMap::new();
            for v in free_vars(e) {
                if let Some(i) = self.lookup(&v, depth) {
                    map.insert(v, self.expand(&self.lets[i].1.clone(), i));
                }
            }
            substitute_map(&map, e)
        })
    }

    fn affine(&mut self, e: &Expr, depth: usize) -> Option<Affine> {
        stack::guard(|| {
            let key = (e.ptr(), self.scope(depth));
            if let Some((_, r)) = self.affine_memo.get(&key) {
                return r.clone();
            }
            let r = self.affine_uncached(e, depth);
            self.affine_memo.insert(key, (e.clone(), r.clone()));
            r
        })
    }

    fn affine_uncached(&mut self, e: &Expr, depth: usize) -> Option<Affine> {
        if !is_i32(e) {
            return None;
        }
        if e.ty().is_scalar() && !self.varies(e, depth) {
            return Some(Affine::invariant(self.expand(e, depth)));
        }
        match e.kind() {
            ExprKind::Var { name, .. } if *name == self.var && self.lookup(name, depth).is_none() => {
                Some(Affine { coef: 1, base: Expr::i32(0), lo: 0, hi: 0 })
            }
            ExprKind::Var { name, .. } if self.lookup(name, depth).is_none() => {
                let &(lo, hi) = self.inner.get(name)?;
                Some(Affine { coef: 0, base: Expr::i32(0), lo, hi })
            }
            ExprKind::Var { name, .. } => {
                let i = self.lookup(name, depth)?;
                let value = self.lets[i].1.clone();
                self.affine(&value, i)
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let (a, b) = (self.affine(a, depth)?, self.affine(b, depth)?);
                Some(if *op == BinOp::Add {
                    Affine { coef: a.coef + b.coef, base: Expr::add(a.base, b.base), lo: a.lo + b.lo, hi: a.hi + b.hi }
                } else {
                    Affine { coef: a.coef - b.coef, base: Expr::sub(a.base, b.base), lo: a.lo - b.hi, hi: a.hi - b.lo }
                })
            }
            ExprKind::Binary(BinOp::Mul, a, b) => {
                let (x, k) = match (constant(a), constant(b)) {
                    (_, Some(k)) => (a, k),
                    (Some(k), _) => (b, k),
                    _ => return None,
                };
                let x = self.affine(x, depth)?;
                let (lo, hi) = if k >= 0 { (x.lo * k, x.hi * k) } else { (x.hi * k, x.lo * k) };
                Some(Affine { coef: x.coef * k, base: Expr::mul(x.base, Expr::i32(k)), lo, hi })
            }
            ExprKind::Binary(BinOp::Min | BinOp::Max, ..) | ExprKind::Select(..) => {
                let c = self.candidate(e, depth)?;
                self.affine(&c.likely, depth)
            }
            ExprKind::Broadcast { value, .. } => self.affine(value, depth),
            ExprKind::Ramp { base, stride, lanes } => {
                let s = constant(stride)?;
                let b = self.affine(base, depth)?;
                let last = s * (i64::from(*lanes) - 1);
                Some(Affine { lo: b.lo + last.min(0), hi: b.hi + last.max(0), ..b })
            }
            _ => None,
        }
    }

    /// Whether the `min`/`max` `e` qualifies, and where its likely operand wins.
    fn candidate(&mut self, e: &Expr, depth: usize) -> Option<Candidate> {
        let key = (e.ptr(), self.scope(depth));
        if let Some((_, r)) = self.candidate_memo.get(&key) {
            return r.clone();
        }
        let r = self.candidate_uncached(e, depth);
        self.candidate_memo.insert(key, (e.clone(), r.clone()));
        r
    }

    fn candidate_uncached(&mut self, e: &Expr, depth: usize) -> Option<Candidate> {
        if let ExprKind::Select(cond, t, f) = e.kind() {
            return self.select_candidate(cond, t, f, depth);
        }
        let ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) = e.kind() else { return None };
        if !is_i32(e) {
            return None;
        }
        let (fa, fb) = (self.affine(a, depth)?, self.affine(b, depth)?);
        let (likely, var_side, inv_side) = match (fa.coef, fb.coef) {
            (0, 0) => return None,
            (_, 0) => (a, fa, fb),
            (0, _) => (b, fb, fa),
            _ => return None,
        };
        let bound = if *op == BinOp::Min {
            // Every lane of the likely side at most every lane of the other:
            // c·v <= inv.base + inv.lo - var.base - var.hi.
            linear_bound(var_side.coef, inv_side.lo - var_side.hi, inv_side.base, var_side.base, true)
        } else {
            // Every lane of the likely side at least every lane of the other:
            // c·v >= inv.base + inv.hi - var.base - var.lo.
            linear_bound(var_side.coef, inv_side.hi - var_side.lo, inv_side.base, var_side.base, false)
        };
        // A scalar cap on the loop's own position (a ShiftInwards tail's last vector,
        // `min(8·v, extent - 8)`): one scalar `min` per iteration, never a gather. Kept, it
        // lets the last iteration run the steady-state body too.
        let soft = self.allow_soft
            && *op == BinOp::Min
            && e.ty().is_scalar()
            && var_side.coef > 0
            && !self.mentions_inner(e, depth);
        Some(Candidate { likely: likely.clone(), bounds: vec![bound], soft })
    }

    /// A `select` whose condition is an `&&` of two or more comparisons of an affine index
    /// with an invariant (an inside test: likely true) or an `||` of them (an outside
    /// test: likely false), and the iterations where every comparison has that value in
    /// every lane.
    fn select_candidate(&mut self, cond: &Expr, t: &Expr, f: &Expr, depth: usize) -> Option<Candidate> {
        let ExprKind::Binary(op @ (BinOp::And | BinOp::Or), ..) = cond.kind() else { return None };
        let want = *op == BinOp::And;
        let mut terms = Vec::new();
        let mut stack = vec![cond];
        while let Some(c) = stack.pop() {
            match c.kind() {
                ExprKind::Binary(o, a, b) if o == op => stack.extend([a, b]),
                _ => terms.push(c),
            }
        }
        if terms.len() < 2 {
            return None;
        }
        let mut bounds = Vec::new();
        for term in terms {
            bounds.push(self.comparison_bound(term, want, depth)?);
        }
        let likely = if want { t } else { f };
        // Only a boundary condition's select: its likely side clamps the index it tests to
        // the same interval, so the select adds no bound of its own. A band test,
        // `select(10 <= x && x < 20, a, b)`, would otherwise shrink the steady state of
        // every clamp in the loop to the band.
        let mut clamps = Vec::new();
        self.clamp_limits(likely, depth, &mut HashSet::new(), &mut clamps);
        if !bounds.iter().all(|b| clamps.iter().any(|c| b.same_as(c))) {
            return None;
        }
        Some(Candidate { likely: likely.clone(), bounds, soft: false })
    }

    /// The limits of the qualifying `min`/`max`es in `e`, looking through the lets of the
    /// body.
    fn clamp_limits(
        &mut self,
        e: &Expr,
        depth: usize,
        seen: &mut HashSet<(*const ExprNode, usize)>,
        out: &mut Vec<Limit>,
    ) {
        stack::guard(|| {
            if !seen.insert((e.ptr(), depth)) {
                return;
            }
            if let ExprKind::Binary(BinOp::Min | BinOp::Max, ..) = e.kind() {
                if let Some(c) = self.candidate(e, depth) {
                    out.extend(c.bounds);
                }
            }
            match e.kind() {
                ExprKind::Var { name, .. } => {
                    if let Some(i) = self.lookup(name, depth) {
                        let value = self.lets[i].1.clone();
                        self.clamp_limits(&value, i, seen, out);
                    }
                }
                _ => e.for_each_child(|c| self.clamp_limits(c, depth, seen, out)),
            }
        })
    }

    /// Where the comparison `e` (of two `i32` operands whose difference is affine in the
    /// loop variable) is `want` in every lane.
    fn comparison_bound(&mut self, e: &Expr, want: bool, depth: usize) -> Option<Limit> {
        let ExprKind::Cmp(op, a, b) = e.kind() else { return None };
        if !is_i32(a) {
            return None;
        }
        let (fa, fb) = (self.affine(a, depth)?, self.affine(b, depth)?);
        // d = a - b, lane by lane in [d.base + lo, d.base + hi] + c·v.
        let (c, lo, hi) = (fa.coef - fb.coef, fa.lo - fb.hi, fa.hi - fb.lo);
        if c == 0 {
            return None;
        }
        let op = if want {
            *op
        } else {
            match op {
                CmpOp::Lt => CmpOp::Ge,
                CmpOp::Le => CmpOp::Gt,
                CmpOp::Gt => CmpOp::Le,
                CmpOp::Ge => CmpOp::Lt,
                CmpOp::Eq | CmpOp::Ne => return None,
            }
        };
        // c·v + b_a - b_b + [lo, hi] compared with 0, in every lane.
        Some(match op {
            CmpOp::Lt => linear_bound(c, -1 - hi, fb.base, fa.base, true),
            CmpOp::Le => linear_bound(c, -hi, fb.base, fa.base, true),
            CmpOp::Gt => linear_bound(c, 1 - lo, fb.base, fa.base, false),
            CmpOp::Ge => linear_bound(c, -lo, fb.base, fa.base, false),
            CmpOp::Eq | CmpOp::Ne => return None,
        })
    }

    /// Records the bounds of every qualifying `min`/`max` in `e`.
    fn collect_expr(&mut self, e: &Expr, depth: usize) {
        stack::guard(|| match e.kind() {
            ExprKind::Let { name, value, body } => {
                self.collect_expr(value, depth);
                self.push_let(name, value);
                self.collect_expr(body, depth + 1);
                self.pop_let();
            }
            ExprKind::Binary(BinOp::Min | BinOp::Max, _, _) | ExprKind::Select(..) => {
                if let Some(c) = self.candidate(e, depth) {
                    self.window_bounds |= !self.inner.is_empty() && self.mentions_inner(e, depth);
                    if c.soft {
                        if !self.soft_caps.contains(e) {
                            self.soft_caps.push(e.clone());
                        }
                        let meaning = self.expand(e, depth);
                        if !self.soft_meanings.contains(&meaning) {
                            self.soft_meanings.push(meaning);
                        }
                        for l in c.bounds {
                            if !self.soft_limits.iter().any(|k| k.same_as(&l)) {
                                self.soft_limits.push(l);
                            }
                        }
                        e.for_each_child(|c| self.collect_expr(c, depth));
                        return;
                    }
                    self.limits.extend(c.bounds.iter().cloned());
                    for bound in c.bounds.into_iter().map(|l| l.bound) {
                        self.push_bound(bound);
                    }
                }
                e.for_each_child(|c| self.collect_expr(c, depth));
            }
            _ => e.for_each_child(|c| self.collect_expr(c, depth)),
        })
    }

    /// The iterations where `condition`, a comparison of the loop's position with an
    /// invariant, holds.
    fn guard_limit(&mut self, condition: &Expr, depth: usize) -> Option<Limit> {
        match condition.kind() {
            ExprKind::Cmp(CmpOp::Le | CmpOp::Lt | CmpOp::Ge | CmpOp::Gt, a, _) if a.ty() == Type::i32() => {
                self.comparison_bound(condition, true, depth)
            }
            _ => None,
        }
    }

    /// Records a bound of the steady state, once.
    fn push_bound(&mut self, bound: Bound) {
        let key = match &bound {
            Bound::AtLeast(b) => format!(">={b}"),
            Bound::AtMost(b) => format!("<={b}"),
        };
        if self.seen.insert(key) {
            self.bounds.push(bound);
        }
    }

    /// Takes the guards' bounds as bounds of the steady state, whose body then runs the
    /// `then` branch of each guard.
    fn adopt_guards(&mut self) {
        for limit in std::mem::take(&mut self.guards) {
            self.push_bound(limit.bound.clone());
            self.limits.push(limit);
        }
        self.guards_adopted = true;
    }

    fn collect_stmt(&mut self, s: &Stmt) {
        stack::guard(|| {
            let depth = self.lets.len();
            if let Stmt::IfThenElse { condition, .. } = s {
                if let Some(limit) = self.guard_limit(condition, depth) {
                    if !self.guards.iter().any(|g| g.same_as(&limit)) {
                        self.guards.push(limit);
                    }
                }
            }
            match s {
                Stmt::LetStmt { name, value, body } => {
                    self.collect_expr(value, depth);
                    self.push_let(name, value);
                    self.collect_stmt(body);
                    self.pop_let();
                }
                _ => {
                    let (mut stmts, mut exprs) = (Vec::new(), Vec::new());
                    s.for_each_child(|c| stmts.push(c.clone()), |e| exprs.push(e.clone()));
                    exprs.iter().for_each(|e| self.collect_expr(e, depth));
                    stmts.iter().for_each(|c| self.collect_stmt(c));
                }
            }
        })
    }
}

/// The iterations where `c·v <= r` (`at_most`) or `c·v >= r`, for
/// `r = offset + plus - minus` worked out in 64 bits, so that it cannot wrap (a clamp
/// against a constant near the limits of i32), then clamped back into i32.
fn linear_bound(c: i64, offset: i64, plus: Expr, minus: Expr, at_most: bool) -> Limit {
    let wide = |e: Expr| Expr::cast(Type::i64(), e);
    let k = |v: i64| Expr::int_imm(Type::i64(), v);
    let threshold = Expr::sub(Expr::add(plus.clone(), Expr::i32(offset)), minus.clone());
    let r = Expr::sub(Expr::add(wide(plus), k(offset)), wide(minus));
    let bound = match (at_most, c > 0) {
        (true, true) => Bound::AtMost(narrow(Expr::div(r, k(c)))),
        (true, false) => Bound::AtLeast(narrow(Expr::sub(k(0), Expr::div(r, k(-c))))),
        (false, true) => Bound::AtLeast(narrow(Expr::div(Expr::add(r, k(c - 1)), k(c)))),
        (false, false) => Bound::AtMost(narrow(Expr::div(Expr::sub(k(0), r), k(-c)))),
    };
    Limit { bound, coef: c, at_most, threshold }
}

/// A 64-bit bound as an `i32`, clamped so that `bound + 1` still fits.
fn narrow(e: Expr) -> Expr {
    let k = |v: i64| Expr::int_imm(Type::i64(), v);
    let clamped = Expr::min(Expr::max(e, k(i64::from(i32::MIN) + 1)), k(i64::from(i32::MAX) - 1));
    Expr::cast(Type::i32(), clamped)
}

fn constant(e: &Expr) -> Option<i64> {
    match e.kind() {
        ExprKind::Broadcast { value, .. } => constant(value),
        _ => e.as_int(),
    }
}

/// The steady-state body: each qualifying `min`/`max` replaced by its likely operand.
struct Steady<'a> {
    analysis: &'a mut Analysis,
    memo: HashMap<(*const ExprNode, u64), (Expr, Expr)>,
}

impl Steady<'_> {
    fn expr(&mut self, e: &Expr) -> Expr {
        stack::guard(|| {
            let depth = self.analysis.lets.len();
            let key = (e.ptr(), self.analysis.scope(depth));
            if let Some((_, r)) = self.memo.get(&key) {
                return r.clone();
            }
            let r = match e.kind() {
                ExprKind::Let { name, value, body } => {
                    let new_value = self.expr(value);
                    self.analysis.push_let(name, value);
                    let new_body = self.expr(body);
                    self.analysis.pop_let();
                    Expr::let_in(name.clone(), new_value, new_body)
                }
                ExprKind::Binary(BinOp::Min | BinOp::Max, ..) | ExprKind::Select(..) => {
                    match self.analysis.candidate(e, depth) {
                        Some(c) if !c.soft => self.expr(&c.likely),
                        _ => e.map_children(|c| self.expr(c)),
                    }
                }
                _ => e.map_children(|c| self.expr(c)),
            };
            self.memo.insert(key, (e.clone(), r.clone()));
            r
        })
    }
}

impl Mutator for Steady<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        self.expr(e)
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| match s {
            Stmt::LetStmt { name, value, body } => {
                let new_value = self.expr(value);
                self.analysis.push_let(name, value);
                let new_body = self.mutate_stmt(body);
                self.analysis.pop_let();
                Stmt::let_stmt(name.clone(), new_value, new_body)
            }
            Stmt::IfThenElse { condition, then_case, .. }
                if self.analysis.guards_adopted
                    && self.analysis.guard_limit(condition, self.analysis.lets.len()).is_some() =>
            {
                self.mutate_stmt(then_case)
            }
            _ => mutate_stmt_children(self, s),
        })
    }
}

/// Whether another clamp already ends the steady state where the soft caps start to bite
/// (a vector clamped to the end of its row as well as shifted inwards): keeping the caps
/// would then only cost their `min` in every iteration.
fn caps_never_bite(analysis: &Analysis) -> bool {
    analysis.soft_limits.iter().all(|cap| {
        analysis.limits.iter().any(|l| {
            l.coef == cap.coef
                && l.at_most == cap.at_most
                && simplify(&Expr::sub(l.threshold.clone(), cap.threshold.clone())).as_int().is_some_and(|d| d <= 0)
        })
    })
}

/// Whether the loop variable `var` appears in `body` only inside the soft caps `caps`.
fn only_in_soft(body: &Stmt, var: &Name, caps: &[Expr]) -> bool {
    fn expr_ok(e: &Expr, var: &Name, caps: &[Expr]) -> bool {
        stack::guard(|| match e.kind() {
            ExprKind::Var { name, .. } => name != var,
            ExprKind::Binary(BinOp::Min, ..) if caps.contains(e) => true,
            _ => {
                let mut ok = true;
                e.for_each_child(|c| ok = ok && expr_ok(c, var, caps));
                ok
            }
        })
    }
    fn stmt_ok(s: &Stmt, var: &Name, caps: &[Expr]) -> bool {
        stack::guard(|| {
            let ok = std::cell::Cell::new(true);
            s.for_each_child(
                |c| ok.set(ok.get() && stmt_ok(c, var, caps)),
                |e| ok.set(ok.get() && expr_ok(e, var, caps)),
            );
            ok.get()
        })
    }
    stmt_ok(body, var, caps)
}

/// Whether `s` or a statement inside it satisfies `pred`.
fn any_stmt(s: &Stmt, pred: &dyn Fn(&Stmt) -> bool) -> bool {
    let mut found = pred(s);
    s.for_each_child(|c| found = found || any_stmt(c, pred), |_| {});
    found
}

/// Partitions one loop whose inner loops (`inner`) all have constant bounds, or gives
/// `None` when nothing qualifies. Where there are inner loops, each of the three bodies
/// then has them partitioned where something is left to partition.
fn partition(name: &Name, min: &Expr, extent: &Expr, body: &Stmt, inner: HashMap<Name, (i64, i64)>) -> Option<Stmt> {
    if min.ty() != Type::i32() {
        return None;
    }
    let has_inner = !inner.is_empty();
    let nested = |b: &Stmt| if has_inner { Partition.mutate_stmt(b) } else { b.clone() };
    // Soft caps only in short loops of constant length, which then get a version that runs
    // the steady state over all of it (below); in a long loop (a row of the image) the
    // shifted vector is one iteration of many, and the steady state is better affine.
    let short = extent.as_int().is_some_and(|n| n <= MAX_WHOLE_STEADY_TRIPS);
    let mut analysis = Analysis::new(name.clone(), inner.clone());
    analysis.allow_soft = short;
    analysis.collect_stmt(body);
    if !analysis.soft_caps.is_empty()
        && (analysis.soft_meanings.len() > 1
            || !only_in_soft(body, name, &analysis.soft_caps)
            || caps_never_bite(&analysis))
    {
        // The caps are ordinary bounds after all.
        analysis = Analysis::new(name.clone(), inner);
        analysis.allow_soft = false;
        analysis.collect_stmt(body);
    }
    // Around constant loops, only for a clamp of a window that moves with this loop; a
    // tile's row loop whose only bound is its own tail guard is left to its inner loops.
    if analysis.bounds.is_empty() || (!analysis.inner.is_empty() && !analysis.window_bounds) {
        return None;
    }
    // A loop cut in three for its clamps anyway also ends its steady state where a guard
    // chosen per iteration starts to fail (the last, partial vector of an update stage),
    // so the steady state has no branch. A guard alone is left as it is: the branch costs
    // less than three more copies of the body would to compile.
    if !analysis.guards.is_empty() {
        analysis.adopt_guards();
    }
    let lower: Vec<Expr> =
        analysis.bounds.iter().filter_map(|b| if let Bound::AtLeast(x) = b { Some(x.clone()) } else { None }).collect();
    let upper: Vec<Expr> =
        analysis.bounds.iter().filter_map(|b| if let Bound::AtMost(x) = b { Some(x.clone()) } else { None }).collect();
    let steady_body = nested(&Steady { analysis: &mut analysis, memo: HashMap::new() }.mutate_stmt(body));

    let names =
        ["loop_min", "loop_end", "steady_min", "steady_end"].map(|suffix| Name::from(format!("{name}.{suffix}")));
    let [loop_min, loop_end, steady_min, steady_end] = names.clone().map(|n| Expr::var(Type::i32(), n));
    // steady_min = min(max(loop_min, lower bounds...), loop_end)
    let start = Expr::min(lower.iter().cloned().fold(loop_min.clone(), Expr::max), loop_end.clone());
    // steady_end = max(min(loop_end, upper bounds + 1...), steady_min)
    let end = upper.iter().fold(loop_end.clone(), |acc, x| Expr::min(acc, Expr::add(x.clone(), Expr::i32(1))));
    // Soft caps: the steady state runs on past them while they reach its start.
    let soft_bounds = analysis.soft_limits.iter().filter_map(|l| match &l.bound {
        Bound::AtMost(u) => Some(u.clone()),
        Bound::AtLeast(_) => None,
    });
    let end = match soft_bounds.map(|u| Expr::le(steady_min.clone(), u)).reduce(Expr::and) {
        Some(reaches) => Expr::select(reaches, end, steady_min.clone()),
        None => end,
    };
    let end = Expr::max(end, steady_min.clone());
    let piece = |from: &Expr, to: &Expr, body: &Stmt| {
        Stmt::for_loop(name.clone(), from.clone(), Expr::sub(to.clone(), from.clone()), ForKind::Serial, body.clone())
    };
    // Some bound exists, so the prologue or the epilogue (or both) runs the body as it is.
    let edge = nested(body);
    let mut pieces = Vec::new();
    if !lower.is_empty() {
        pieces.push(piece(&loop_min, &steady_min, &edge));
    }
    pieces.push(piece(&steady_min, &steady_end, &steady_body));
    if !upper.is_empty() {
        pieces.push(piece(&steady_end, &loop_end, &edge));
    }
    let mut pieces = Stmt::block(pieces);
    if !analysis.soft_caps.is_empty() {
        // A short loop of constant length (a vector loop across a tile): where the steady
        // state covers all of it, as in every tile away from the edges, run it so, with its
        // constant bounds. The C compiler unrolls it and folds each iteration's position,
        // where the three pieces' run-time bounds would cost more than the few iterations.
        let whole =
            Expr::and(Expr::le(steady_min.clone(), loop_min.clone()), Expr::le(loop_end.clone(), steady_end.clone()));
        let at_once = Stmt::for_loop(name.clone(), min.clone(), extent.clone(), ForKind::Serial, steady_body.clone());
        pieces = Stmt::IfThenElse { condition: whole, then_case: Box::new(at_once), else_case: Some(Box::new(pieces)) };
    }
    let [n_loop_min, n_loop_end, n_steady_min, n_steady_end] = names;
    let s = Stmt::let_stmt(n_steady_end, end, pieces);
    let s = Stmt::let_stmt(n_steady_min, start, s);
    let s = Stmt::let_stmt(n_loop_end, Expr::add(min.clone(), extent.clone()), s);
    Some(Stmt::let_stmt(n_loop_min, min.clone(), s))
}

/// The longest constant loop that gets a version running the steady state over all of it
/// (see `partition`).
const MAX_WHOLE_STEADY_TRIPS: i64 = 8;

/// Whether `s` stores a vector: the loop was vectorized. Only such loops are partitioned:
/// there a clamp turns dense loads into gathers, while in a scalar loop it costs one
/// `min` and the C compiler would get three copies of the body to compile for little gain.
fn stores_vectors(s: &Stmt) -> bool {
    any_stmt(s, &|s| matches!(s, Stmt::Store { value, .. } if value.ty().is_vector()))
}

/// The variables and ranges of the loops in `s` (a loop's body), if every one is a serial
/// loop with constant bounds (a reduction's short loops); `None` if some loop is not.
fn constant_inner_loops(s: &Stmt) -> Option<HashMap<Name, (i64, i64)>> {
    let mut found = HashMap::new();
    let mut ok = true;
    fn walk(s: &Stmt, found: &mut HashMap<Name, (i64, i64)>, ok: &mut bool) {
        if let Stmt::For { name, min, extent, kind, .. } = s {
            match (kind, min.as_int(), extent.as_int()) {
                (ForKind::Serial, Some(m), Some(e)) if e > 0 => {
                    found.insert(name.clone(), (m, m + e - 1));
                }
                _ => *ok = false,
            }
        }
        s.for_each_child(|c| walk(c, found, ok), |_| {});
    }
    walk(s, &mut found, &mut ok);
    ok.then_some(found)
}

struct Partition;

impl Mutator for Partition {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s {
            Stmt::For { name, min, extent, kind: ForKind::Serial, body, .. } if stores_vectors(body) => {
                match constant_inner_loops(body) {
                    // The innermost loop with a run-time extent: its steady state holds for
                    // every iteration of the constant loops inside it, whose own clamps
                    // then need no partitioning; at its ends they are partitioned as before.
                    Some(inner) => {
                        let has_inner = !inner.is_empty();
                        match partition(name, min, extent, body, inner) {
                            Some(p) => p,
                            None if has_inner => mutate_stmt_children(self, s),
                            None => s.clone(),
                        }
                    }
                    None => mutate_stmt_children(self, s),
                }
            }
            _ => mutate_stmt_children(self, s),
        }
    }
}

/// Runs the pass.
pub fn partition_loops(s: Stmt) -> Stmt {
    Partition.mutate_stmt(&s)
}
