//! Symbolic interval arithmetic: the range of values an expression takes when each
//! variable lies in a given interval (Halide's `Bounds.cpp`; seed paper sec. 5.2).
//!
//! Bounds are expressions (of the bounded expression's element type), so they may
//! mention variables the scope leaves free: `x + y` with `x` in `[0, 9]` is
//! `[y, y + 9]`. For narrower and unsigned types, where wrap-around is the norm, an
//! operation that may wrap gives the type's whole range. `Int(32)`/`Int(64)` arithmetic
//! (coordinate math) wraps in the generated code too, and lowering sizes its buffer checks
//! with these bounds, so an operation that may overflow for the constant sides of its
//! operands (an unbounded side standing for the type's limit) gives no bound at all: a
//! wrapped value can be anywhere. Symbolic sides are assumed not to overflow, as in
//! Halide: such bounds hold wherever neither the expression nor the bounds overflow.
//! (The simplifier, which assumes that nothing overflows anyway, uses a variant that
//! skips the check.) Floats are bounded through monotonicity, for finite values (NaN is
//! outside every interval).

use super::simplify::info::{const_int, type_range};
use super::simplify::{can_prove, no_overflow, simplify};
use crate::ir::stack;
use crate::ir::{BinOp, CallKind, CmpOp, Expr, ExprKind, Intrinsic, Name, Type};
use std::collections::HashMap;

/// An inclusive range `[min, max]`; `None` is unbounded on that side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Smallest value, if bounded below.
    pub min: Option<Expr>,
    /// Largest value, if bounded above.
    pub max: Option<Expr>,
}

/// The intervals of the variables in scope, by name.
pub type Scope = HashMap<Name, Interval>;

/// `min(a, b)` (`a && b` for bools).
fn emin(a: &Expr, b: &Expr) -> Expr {
    if a == b {
        return a.clone();
    }
    let op = if a.ty().element().is_bool() { BinOp::And } else { BinOp::Min };
    simplify(&Expr::binary(op, a.clone(), b.clone()))
}

/// `max(a, b)` (`a || b` for bools).
fn emax(a: &Expr, b: &Expr) -> Expr {
    if a == b {
        return a.clone();
    }
    let op = if a.ty().element().is_bool() { BinOp::Or } else { BinOp::Max };
    simplify(&Expr::binary(op, a.clone(), b.clone()))
}

impl Interval {
    /// An interval from its (optional) bounds.
    pub fn new(min: Option<Expr>, max: Option<Expr>) -> Interval {
        Interval { min, max }
    }
    /// `[min, max]`.
    pub fn bounded(min: Expr, max: Expr) -> Interval {
        Interval { min: Some(min), max: Some(max) }
    }
    /// The single value `e`.
    pub fn point(e: Expr) -> Interval {
        Interval { min: Some(e.clone()), max: Some(e) }
    }
    /// Unbounded on both sides.
    pub fn everything() -> Interval {
        Interval { min: None, max: None }
    }
    /// True if bounded on both sides.
    pub fn is_bounded(&self) -> bool {
        self.min.is_some() && self.max.is_some()
    }
    /// True if unbounded on both sides.
    pub fn is_everything(&self) -> bool {
        self.min.is_none() && self.max.is_none()
    }
    /// True if both bounds are the same expression.
    pub fn is_single_point(&self) -> bool {
        matches!((&self.min, &self.max), (Some(a), Some(b)) if a == b)
    }
    /// The smallest interval containing both (unbounded where either is).
    pub fn union(&self, o: &Interval) -> Interval {
        let min = match (&self.min, &o.min) {
            (Some(a), Some(b)) => Some(emin(a, b)),
            _ => None,
        };
        let max = match (&self.max, &o.max) {
            (Some(a), Some(b)) => Some(emax(a, b)),
            _ => None,
        };
        Interval { min, max }
    }
    /// The values in both (bounded where either is).
    pub fn intersect(&self, o: &Interval) -> Interval {
        let min = match (&self.min, &o.min) {
            (Some(a), Some(b)) => Some(emax(a, b)),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let max = match (&self.max, &o.max) {
            (Some(a), Some(b)) => Some(emin(a, b)),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Interval { min, max }
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = |e: &Option<Expr>, inf: &str| e.as_ref().map(|e| e.to_string()).unwrap_or_else(|| inf.to_string());
        write!(f, "[{}, {}]", side(&self.min, "-inf"), side(&self.max, "+inf"))
    }
}

/// The range of `e` when each variable of `scope` lies in its interval; a variable not in
/// `scope` stands for itself. The bounds are simplified and have `e`'s element type.
///
/// ```
/// use halogen::analysis::{bounds_of_expr_in_scope, Interval, Scope};
/// use halogen::ir::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let mut scope = Scope::new();
/// scope.insert("x".into(), Interval::bounded(Expr::i32(0), Expr::i32(9)));
/// let b = bounds_of_expr_in_scope(&Expr::add(Expr::mul(x, Expr::i32(2)), Expr::i32(1)), &scope);
/// assert_eq!(b, Interval::bounded(Expr::i32(1), Expr::i32(19)));
/// ```
pub fn bounds_of_expr_in_scope(e: &Expr, scope: &Scope) -> Interval {
    Bounder { scope, strict: true, lets: Vec::new(), memo: HashMap::new(), env: 0, next_env: 1 }.bounds(e)
}

/// [`bounds_of_expr_in_scope`] for the simplifier, which assumes that `Int(32)` and
/// `Int(64)` arithmetic does not overflow: the bounds hold where nothing overflows, and an
/// unbounded side is unbounded, not the type's limit (`x <= 62` gives `x - 63 <= -1`).
pub(crate) fn bounds_assuming_no_overflow(e: &Expr, scope: &Scope) -> Interval {
    Bounder { scope, strict: false, lets: Vec::new(), memo: HashMap::new(), env: 0, next_env: 1 }.bounds(e)
}

/// The range of every value of `ty`, as far as it is worth stating: the whole range for
/// types narrower than 32 bits (and bools), `[0, +inf)` for wider unsigned types, and
/// unbounded otherwise.
pub fn type_interval(ty: Type) -> Interval {
    let ty = ty.element();
    match type_range(ty) {
        Some(r) if ty.bits < 32 => Interval::bounded(mk(ty, r.min), mk(ty, r.max)),
        Some(_) if ty.is_uint() => Interval::new(Some(mk(ty, 0)), None),
        _ => Interval::everything(),
    }
}

fn mk(ty: Type, v: i128) -> Expr {
    Expr::const_of(ty.element(), v as i64)
}

fn bool_imm(v: bool) -> Expr {
    Expr::bool_imm(v)
}

/// True for integer types whose arithmetic wraps in practice (narrow or unsigned).
fn wraps(ty: Type) -> bool {
    ty.element().is_int_or_uint() && !no_overflow(ty)
}

/// The float value of a float constant.
fn cfloat(e: &Expr) -> Option<f64> {
    if e.ty().element().is_float() {
        e.as_float()
    } else {
        None
    }
}

/// `x op y` simplified; `None` if both are integer constants and the exact result does
/// not fit the type (the bound would be wrong after wrapping).
fn arith(op: BinOp, x: &Expr, y: &Expr) -> Option<Expr> {
    let ty = x.ty().element();
    if let (Some(a), Some(b)) = (const_int(x), const_int(y)) {
        let exact = match op {
            BinOp::Add => a.checked_add(b),
            BinOp::Sub => a.checked_sub(b),
            BinOp::Mul => a.checked_mul(b),
            BinOp::Div if b == 0 => Some(0),
            BinOp::Div => Some(a.div_euclid(b)),
            _ => None,
        };
        if let Some(v) = exact {
            let r = type_range(ty)?;
            return (v >= r.min && v <= r.max).then(|| mk(ty, v));
        }
    }
    Some(simplify(&Expr::binary(op, x.clone(), y.clone())))
}

/// `0 - x`, `None` if it overflows.
fn neg(x: &Expr) -> Option<Expr> {
    arith(BinOp::Sub, &Expr::const_of(x.ty(), 0), x)
}

/// Both bounds as integer constants.
fn const_bounds(i: &Interval) -> Option<(i128, i128)> {
    Some((const_int(i.min.as_ref()?)?, const_int(i.max.as_ref()?)?))
}

/// The constant value of a single-point interval.
fn const_point(i: &Interval) -> Option<&Expr> {
    if i.is_single_point() {
        let e = i.min.as_ref()?;
        if e.is_const() {
            return Some(e);
        }
    }
    None
}

/// Provably non-negative lower bound.
fn nonneg(i: &Interval) -> bool {
    i.min.as_ref().is_some_and(|m| const_int(m).is_some_and(|v| v >= 0) || cfloat(m).is_some_and(|v| v >= 0.0))
}

struct Bounder<'a> {
    scope: &'a Scope,
    /// Whether the bounds must hold for the wrapped values of `Int(32)`/`Int(64)`
    /// arithmetic at every point (what lowering checks buffers with), or only where
    /// nothing overflows (what the simplifier assumes anyway).
    strict: bool,
    lets: Vec<(Name, Interval)>,
    memo: HashMap<(usize, u32), (Expr, Interval)>,
    env: u32,
    next_env: u32,
}

impl Bounder<'_> {
    fn bounds(&mut self, e: &Expr) -> Interval {
        let key = (e.ptr() as usize, self.env);
        if let Some((_, r)) = self.memo.get(&key) {
            return r.clone();
        }
        let r = stack::guard(|| self.visit(e));
        self.memo.insert(key, (e.clone(), r.clone()));
        r
    }

    fn visit(&mut self, e: &Expr) -> Interval {
        let ty = e.ty().element();
        match e.kind() {
            ExprKind::IntImm(_) | ExprKind::FloatImm(_) => Interval::point(e.clone()),
            ExprKind::Var { name, .. } => {
                if let Some((_, iv)) = self.lets.iter().rev().find(|(n, _)| n == name) {
                    return iv.clone();
                }
                if let Some(iv) = self.scope.get(name) {
                    return iv.clone();
                }
                if e.ty().is_scalar() {
                    Interval::point(e.clone())
                } else {
                    type_interval(ty)
                }
            }
            ExprKind::Cast(a) => {
                let ai = self.bounds(a);
                cast_bounds(a.ty().element(), ty, &ai)
            }
            ExprKind::Binary(op, a, b) => {
                let (ai, bi) = (self.bounds(a), self.bounds(b));
                binary_bounds(*op, ty, &ai, &bi, self.strict)
            }
            ExprKind::Cmp(op, a, b) => {
                let (ai, bi) = (self.bounds(a), self.bounds(b));
                cmp_bounds(*op, &ai, &bi)
            }
            ExprKind::Not(a) => {
                let ai = self.bounds(a);
                let (lo, hi) = bool_sides(&ai);
                Interval::bounded(simplify(&Expr::not(hi)), simplify(&Expr::not(lo)))
            }
            ExprKind::Select(c, t, f) => {
                let ci = self.bounds(c);
                let (lo, hi) = bool_sides(&ci);
                if lo.is_true() {
                    return self.bounds(t);
                }
                if hi.is_false() {
                    return self.bounds(f);
                }
                let (ti, fi) = (self.bounds(t), self.bounds(f));
                ti.union(&fi)
            }
            ExprKind::Load { .. } => type_interval(ty),
            ExprKind::Ramp { base, stride, lanes } => {
                let (bi, si) = (self.bounds(base), self.bounds(stride));
                let n = Interval::point(Expr::const_of(base.ty(), *lanes as i64 - 1));
                let step = binary_bounds(BinOp::Mul, ty, &si, &n, self.strict);
                let last = binary_bounds(BinOp::Add, ty, &bi, &step, self.strict);
                bi.union(&last)
            }
            ExprKind::Broadcast { value, .. } => self.bounds(value),
            ExprKind::Let { name, value, body } => {
                let vi = self.bounds(value);
                let saved = self.env;
                self.env = self.next_env;
                self.next_env += 1;
                self.lets.push((name.clone(), vi));
                let r = self.bounds(body);
                self.lets.pop();
                self.env = saved;
                r
            }
            ExprKind::Call { args, kind, .. } => match kind {
                CallKind::Intrinsic(which) => {
                    let ais: Vec<Interval> = args.iter().map(|a| self.bounds(a)).collect();
                    let r = intrinsic_bounds(*which, ty, args, &ais);
                    if r.is_everything() {
                        type_interval(ty)
                    } else {
                        r
                    }
                }
                _ => type_interval(ty),
            },
        }
    }
}

/// The two sides of a bool interval, with missing sides as false / true.
fn bool_sides(i: &Interval) -> (Expr, Expr) {
    (i.min.clone().unwrap_or_else(|| bool_imm(false)), i.max.clone().unwrap_or_else(|| bool_imm(true)))
}

/// Bounds of `a op b` from the operands' intervals (`ty`: the element type).
/// `strict`: see [`Bounder::strict`].
fn binary_bounds(op: BinOp, ty: Type, a: &Interval, b: &Interval, strict: bool) -> Interval {
    // Two single values: the result is the single value of the operation (exact for
    // every type, wrap-around included).
    if a.is_single_point() && b.is_single_point() {
        if let (Some(x), Some(y)) = (&a.min, &b.min) {
            return Interval::point(simplify(&Expr::binary(op, x.clone(), y.clone())));
        }
    }
    if ty.is_float() {
        return float_bounds(op, a, b);
    }
    if wraps(ty) && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) {
        return wrapping_bounds(op, ty, a, b);
    }
    if strict && no_overflow(ty) && may_overflow(op, ty, a, b) {
        // The code wraps: an overflowing value lands anywhere in the type, so no bound
        // holds (a wrapped bound would let a too-small buffer pass its check).
        return Interval::everything();
    }
    let side = |x: &Option<Expr>, y: &Option<Expr>, op: BinOp| -> Option<Expr> { arith(op, x.as_ref()?, y.as_ref()?) };
    match op {
        BinOp::Add => Interval::new(side(&a.min, &b.min, op), side(&a.max, &b.max, op)),
        BinOp::Sub => Interval::new(side(&a.min, &b.max, op), side(&a.max, &b.min, op)),
        BinOp::Mul => mul_bounds(a, b),
        BinOp::Div => div_bounds(ty, a, b),
        BinOp::Mod => mod_bounds(ty, a, b),
        BinOp::Min | BinOp::Max => min_max_bounds(op, a, b),
        BinOp::And | BinOp::Or => {
            let (al, ah) = bool_sides(a);
            let (bl, bh) = bool_sides(b);
            let f = |x: Expr, y: Expr| simplify(&Expr::binary(op, x, y));
            Interval::bounded(f(al, bl), f(ah, bh))
        }
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => bit_bounds(op, ty, a, b),
    }
}

/// The constant sides of an integer interval, a missing side standing for the type's
/// limit; `None` for a side that is symbolic (its value is known only at run time).
fn envelope(ty: Type, i: &Interval) -> (Option<i128>, Option<i128>) {
    let Some(r) = type_range(ty) else { return (None, None) };
    let side = |e: &Option<Expr>, limit: i128| match e {
        None => Some(limit),
        Some(e) => const_int(e),
    };
    (side(&i.min, r.min), side(&i.max, r.max))
}

/// True if `a op b` in the no-overflow type `ty` leaves the type for some values that the
/// constant sides of `a` and `b` allow. Symbolic sides are assumed not to overflow (they
/// are coordinate expressions, as everywhere in the analysis).
fn may_overflow(op: BinOp, ty: Type, a: &Interval, b: &Interval) -> bool {
    let Some(r) = type_range(ty) else { return false };
    let (a0, a1) = envelope(ty, a);
    let (b0, b1) = envelope(ty, b);
    let out = |x: Option<i128>, y: Option<i128>, f: fn(i128, i128) -> i128| match (x, y) {
        (Some(x), Some(y)) => {
            let v = f(x, y);
            v < r.min || v > r.max
        }
        _ => false,
    };
    match op {
        BinOp::Add => out(a0, b0, |x, y| x + y) || out(a1, b1, |x, y| x + y),
        BinOp::Sub => out(a0, b1, |x, y| x - y) || out(a1, b0, |x, y| x - y),
        BinOp::Mul => {
            let m = |x, y| x * y;
            out(a0, b0, m) || out(a0, b1, m) || out(a1, b0, m) || out(a1, b1, m)
        }
        // MIN / -1
        BinOp::Div => a0 == Some(r.min) && b0.is_some_and(|v| v <= -1) && b1.is_some_and(|v| v >= -1),
        BinOp::Shl => match const_point(b).and_then(const_int) {
            Some(k) => {
                let amt = (k as u64 & (ty.bits as u64 - 1)) as u32;
                let f = Interval::point(mk(ty, 1i128 << amt.min(ty.bits as u32 - 2)));
                amt + 1 < ty.bits as u32 && may_overflow(BinOp::Mul, ty, a, &f)
            }
            None => false,
        },
        _ => false,
    }
}

fn min_max_bounds(op: BinOp, a: &Interval, b: &Interval) -> Interval {
    let f = |x: &Expr, y: &Expr| simplify(&Expr::binary(op, x.clone(), y.clone()));
    let both = |x: &Option<Expr>, y: &Option<Expr>| Some(f(x.as_ref()?, y.as_ref()?));
    let either = |x: &Option<Expr>, y: &Option<Expr>| match (x, y) {
        (Some(x), Some(y)) => Some(f(x, y)),
        (x, y) => x.clone().or_else(|| y.clone()),
    };
    if op == BinOp::Min {
        // min(a, b) <= a.max even if b is unbounded above.
        Interval::new(both(&a.min, &b.min), either(&a.max, &b.max))
    } else {
        Interval::new(either(&a.min, &b.min), both(&a.max, &b.max))
    }
}

/// `+ - *` in a type that wraps: exact only when every corner fits the type.
fn wrapping_bounds(op: BinOp, ty: Type, a: &Interval, b: &Interval) -> Interval {
    let (Some((a0, a1)), Some((b0, b1))) = (const_bounds(a), const_bounds(b)) else {
        return type_interval(ty);
    };
    let range = match type_range(ty) {
        Some(r) => r,
        None => return type_interval(ty),
    };
    let f = |x: i128, y: i128| match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        _ => x.checked_mul(y),
    };
    let corners = [f(a0, b0), f(a0, b1), f(a1, b0), f(a1, b1)];
    if corners.iter().any(|c| c.is_none()) {
        return type_interval(ty);
    }
    let lo = corners.iter().flatten().min().copied().unwrap_or(0);
    let hi = corners.iter().flatten().max().copied().unwrap_or(0);
    if lo < range.min || hi > range.max {
        return type_interval(ty);
    }
    Interval::bounded(mk(ty, lo), mk(ty, hi))
}

fn mul_bounds(a: &Interval, b: &Interval) -> Interval {
    let scale = |i: &Interval, c: &Expr| -> Interval {
        let sign = const_int(c).map(|v| v.signum() as i32).or_else(|| {
            cfloat(c).map(|v| {
                if v > 0.0 {
                    1
                } else if v < 0.0 {
                    -1
                } else {
                    0
                }
            })
        });
        let f = |x: &Option<Expr>| arith(BinOp::Mul, x.as_ref()?, c);
        match sign {
            // x * 0.0 is -0.0 or +0.0 (an interval, not the single value 0.0: the sign
            // matters to a division).
            Some(0) if c.ty().is_float() => {
                Interval::bounded(Expr::float_imm(c.ty(), -0.0), Expr::float_imm(c.ty(), 0.0))
            }
            Some(0) => Interval::point(Expr::const_of(c.ty(), 0)),
            Some(s) if s > 0 => Interval::new(f(&i.min), f(&i.max)),
            Some(_) => Interval::new(f(&i.max), f(&i.min)),
            None => Interval::everything(),
        }
    };
    if let Some(c) = const_point(b) {
        return scale(a, c);
    }
    if let Some(c) = const_point(a) {
        return scale(b, c);
    }
    if let (Some(a0), Some(a1), Some(b0), Some(b1)) = (&a.min, &a.max, &b.min, &b.max) {
        let ps = [
            arith(BinOp::Mul, a0, b0),
            arith(BinOp::Mul, a0, b1),
            arith(BinOp::Mul, a1, b0),
            arith(BinOp::Mul, a1, b1),
        ];
        let ps: Option<Vec<Expr>> = ps.into_iter().collect();
        let Some(ps) = ps else { return Interval::everything() };
        let lo = emin(&emin(&ps[0], &ps[1]), &emin(&ps[2], &ps[3]));
        let hi = emax(&emax(&ps[0], &ps[1]), &emax(&ps[2], &ps[3]));
        return Interval::bounded(lo, hi);
    }
    if nonneg(a) && nonneg(b) {
        let lo = arith(BinOp::Mul, a.min.as_ref().expect("nonneg"), b.min.as_ref().expect("nonneg"));
        let hi = match (&a.max, &b.max) {
            (Some(x), Some(y)) => arith(BinOp::Mul, x, y),
            _ => None,
        };
        return Interval::new(lo, hi);
    }
    Interval::everything()
}

fn div_bounds(ty: Type, a: &Interval, b: &Interval) -> Interval {
    let div = |x: &Expr, y: &Expr| arith(BinOp::Div, x, y);
    let fallback = || {
        if ty.is_uint() {
            // q <= a for unsigned values.
            Interval::new(Some(mk(ty, 0)), a.max.clone())
        } else {
            type_interval(ty)
        }
    };
    if let Some(c) = const_point(b) {
        let v = const_int(c).unwrap_or(0);
        if v == 0 {
            return Interval::point(mk(ty, 0));
        }
        if v > 0 {
            // Floor division by a positive constant: monotone, never overflows.
            let f = |x: &Option<Expr>| div(x.as_ref()?, c);
            let r = Interval::new(f(&a.min), f(&a.max));
            return if wraps(ty) { fill(ty, r) } else { r };
        }
        if !wraps(ty) || v < -1 {
            // Decreasing in the dividend (MIN / -1 would wrap in narrow types).
            let f = |x: &Option<Expr>| div(x.as_ref()?, c);
            let r = Interval::new(f(&a.max), f(&a.min));
            return if wraps(ty) { fill(ty, r) } else { r };
        }
        return fallback();
    }
    if wraps(ty) {
        if let (Some((a0, a1)), Some((b0, b1))) = (const_bounds(a), const_bounds(b)) {
            if b0 > 0 || b1 < 0 {
                let qs = [a0.div_euclid(b0), a0.div_euclid(b1), a1.div_euclid(b0), a1.div_euclid(b1)];
                let (lo, hi) = (*qs.iter().min().unwrap_or(&0), *qs.iter().max().unwrap_or(&0));
                if let Some(r) = type_range(ty) {
                    if lo >= r.min && hi <= r.max {
                        return Interval::bounded(mk(ty, lo), mk(ty, hi));
                    }
                }
            }
        }
        return fallback();
    }
    if let (Some(a0), Some(a1)) = (&a.min, &a.max) {
        let b_pos = b.min.as_ref().is_some_and(|m| can_prove(&Expr::cmp(CmpOp::Gt, m.clone(), mk(ty, 0))));
        let b_neg = b.max.as_ref().is_some_and(|m| can_prove(&Expr::cmp(CmpOp::Lt, m.clone(), mk(ty, 0))));
        if let (Some(b0), Some(b1), true) = (&b.min, &b.max, b_pos || b_neg) {
            // The quotient is monotone in each operand when the divisor keeps its sign.
            let qs: Option<Vec<Expr>> = [div(a0, b0), div(a0, b1), div(a1, b0), div(a1, b1)].into_iter().collect();
            let Some(qs) = qs else { return Interval::everything() };
            return Interval::bounded(
                emin(&emin(&qs[0], &qs[1]), &emin(&qs[2], &qs[3])),
                emax(&emax(&qs[0], &qs[1]), &emax(&qs[2], &qs[3])),
            );
        }
        if b.is_single_point() {
            // A fixed divisor: monotone in the dividend (either direction).
            let d = b.min.as_ref().expect("point");
            if let (Some(q0), Some(q1)) = (div(a0, d), div(a1, d)) {
                return Interval::bounded(emin(&q0, &q1), emax(&q0, &q1));
            }
            return Interval::everything();
        }
        // |a / b| <= |a|, and x / 0 == 0.
        return match (neg(a1), neg(a0)) {
            (Some(n1), Some(n0)) => Interval::bounded(emin(a0, &n1), emax(a1, &n0)),
            _ => Interval::everything(),
        };
    }
    fallback()
}

fn mod_bounds(ty: Type, a: &Interval, b: &Interval) -> Interval {
    let zero = mk(ty, 0);
    if let Some(c) = const_point(b) {
        let v = const_int(c).unwrap_or(0);
        if v == 0 {
            return Interval::point(zero);
        }
        let m = v.abs();
        if let (Some(a0), Some(a1)) = (&a.min, &a.max) {
            let ge0 = can_prove(&Expr::cmp(CmpOp::Ge, a0.clone(), zero.clone()));
            if ge0 && can_prove(&Expr::cmp(CmpOp::Lt, a1.clone(), mk(ty, m))) {
                return a.clone();
            }
        }
        return Interval::bounded(zero, mk(ty, m - 1));
    }
    let tmax = type_interval(ty).max;
    if !wraps(ty) {
        if let (Some(b0), Some(b1)) = (&b.min, &b.max) {
            // |b| - 1 bounds the remainder (and b == 0 gives 0).
            if let Some(nb0) = neg(b0) {
                let abs_max = emax(&nb0, b1);
                if let Some(m1) = arith(BinOp::Sub, &abs_max, &mk(ty, 1)) {
                    return Interval::bounded(zero.clone(), emax(&m1, &zero));
                }
            }
        }
    } else if let Some((b0, b1)) = const_bounds(b) {
        let m = b0.abs().max(b1.abs());
        return Interval::bounded(zero, mk(ty, (m - 1).max(0)));
    }
    Interval::new(Some(zero), tmax)
}

fn bit_bounds(op: BinOp, ty: Type, a: &Interval, b: &Interval) -> Interval {
    let zero = mk(ty, 0);
    let nn = |i: &Interval| ty.is_uint() || nonneg(i);
    match op {
        BinOp::BitAnd => match (nn(a), nn(b)) {
            // x & y is between 0 and the smaller non-negative operand.
            (true, true) => {
                let hi = match (&a.max, &b.max) {
                    (Some(x), Some(y)) => Some(emin(x, y)),
                    (x, y) => x.clone().or_else(|| y.clone()),
                };
                Interval::new(Some(zero), hi.or(type_interval(ty).max))
            }
            (true, false) => Interval::new(Some(zero), a.max.clone()),
            (false, true) => Interval::new(Some(zero), b.max.clone()),
            _ => type_interval(ty),
        },
        BinOp::BitOr | BinOp::BitXor => {
            if let (true, true, Some((_, a1)), Some((_, b1))) = (nn(a), nn(b), const_bounds(a), const_bounds(b)) {
                let mut m: i128 = 0;
                while m < a1.max(b1) {
                    m = m * 2 + 1;
                }
                return Interval::bounded(zero, mk(ty, m));
            }
            if nn(a) && nn(b) {
                return Interval::new(Some(zero), type_interval(ty).max);
            }
            type_interval(ty)
        }
        BinOp::Shl => match const_point(b).and_then(const_int) {
            Some(k) => {
                let amt = (k as u64 & (ty.bits as u64 - 1)) as u32;
                if amt + 1 >= ty.bits as u32 && ty.is_int() {
                    return type_interval(ty);
                }
                let f = Interval::point(mk(ty, 1i128 << amt));
                if wraps(ty) {
                    wrapping_bounds(BinOp::Mul, ty, a, &f)
                } else {
                    mul_bounds(a, &f)
                }
            }
            None => type_interval(ty),
        },
        BinOp::Shr => match const_point(b) {
            // Shifting right is monotone (floor division by a power of two).
            Some(c) => {
                let f =
                    |x: &Option<Expr>| x.as_ref().map(|x| simplify(&Expr::binary(BinOp::Shr, x.clone(), c.clone())));
                fill(ty, Interval::new(f(&a.min), f(&a.max)))
            }
            None if nn(a) => fill(ty, Interval::new(Some(zero), a.max.clone())),
            None => type_interval(ty),
        },
        _ => type_interval(ty),
    }
}

/// Fills missing sides with the type's range (where it is worth stating).
fn fill(ty: Type, i: Interval) -> Interval {
    let t = type_interval(ty);
    Interval::new(i.min.or(t.min), i.max.or(t.max))
}

fn float_bounds(op: BinOp, a: &Interval, b: &Interval) -> Interval {
    let f = |x: &Option<Expr>, y: &Option<Expr>| Some(simplify(&Expr::binary(op, x.clone()?, y.clone()?)));
    match op {
        // Rounding is monotone, so the corners bound the result.
        BinOp::Add => Interval::new(f(&a.min, &b.min), f(&a.max, &b.max)),
        BinOp::Sub => Interval::new(f(&a.min, &b.max), f(&a.max, &b.min)),
        BinOp::Mul => mul_bounds(a, b),
        BinOp::Min | BinOp::Max => min_max_bounds(op, a, b),
        BinOp::Div => match const_point(b).and_then(cfloat) {
            Some(c) if c > 0.0 => Interval::new(f(&a.min, &b.min), f(&a.max, &b.min)),
            Some(c) if c < 0.0 => Interval::new(f(&a.max, &b.min), f(&a.min, &b.min)),
            _ => Interval::everything(),
        },
        _ => Interval::everything(),
    }
}

/// Bounds of a comparison: certainly true where the intervals never overlap the wrong
/// way, certainly false where they never overlap the right way.
fn cmp_bounds(op: CmpOp, a: &Interval, b: &Interval) -> Interval {
    if a.is_single_point() && b.is_single_point() {
        if let (Some(x), Some(y)) = (&a.min, &b.min) {
            return Interval::point(simplify(&Expr::cmp(op, x.clone(), y.clone())));
        }
    }
    let c = |op: CmpOp, x: &Option<Expr>, y: &Option<Expr>, default: bool| -> Expr {
        match (x, y) {
            (Some(x), Some(y)) => simplify(&Expr::cmp(op, x.clone(), y.clone())),
            _ => bool_imm(default),
        }
    };
    let and = |x: Expr, y: Expr| simplify(&Expr::and(x, y));
    let or = |x: Expr, y: Expr| simplify(&Expr::or(x, y));
    let (lo, hi) = match op {
        CmpOp::Lt => (c(CmpOp::Lt, &a.max, &b.min, false), c(CmpOp::Lt, &a.min, &b.max, true)),
        CmpOp::Le => (c(CmpOp::Le, &a.max, &b.min, false), c(CmpOp::Le, &a.min, &b.max, true)),
        CmpOp::Gt => (c(CmpOp::Gt, &a.min, &b.max, false), c(CmpOp::Gt, &a.max, &b.min, true)),
        CmpOp::Ge => (c(CmpOp::Ge, &a.min, &b.max, false), c(CmpOp::Ge, &a.max, &b.min, true)),
        CmpOp::Eq => (bool_imm(false), and(c(CmpOp::Le, &a.min, &b.max, true), c(CmpOp::Le, &b.min, &a.max, true))),
        CmpOp::Ne => (or(c(CmpOp::Lt, &a.max, &b.min, false), c(CmpOp::Lt, &b.max, &a.min, false)), bool_imm(true)),
    };
    Interval::bounded(lo, hi)
}

/// Bounds of a conversion from `from` to `to`.
fn cast_bounds(from: Type, to: Type, a: &Interval) -> Interval {
    let cast = |x: &Expr| simplify(&Expr::cast(to, x.clone()));
    if a.is_single_point() {
        return Interval::point(cast(a.min.as_ref().expect("point")));
    }
    if to.is_bool() {
        let zero = Expr::const_of(from, 0);
        let lo = match (&a.min, &a.max) {
            (Some(x), Some(y)) => simplify(&Expr::or(
                Expr::cmp(CmpOp::Gt, x.clone(), zero.clone()),
                Expr::cmp(CmpOp::Lt, y.clone(), zero.clone()),
            )),
            _ => bool_imm(false),
        };
        return Interval::bounded(lo, bool_imm(true));
    }
    let monotone = |i: &Interval| Interval::new(i.min.as_ref().map(cast), i.max.as_ref().map(cast));
    // Conversions from bools and floats, to floats, and widening integer conversions are
    // monotone (float to int saturates).
    let lossless = match (type_range(from), type_range(to)) {
        (Some(f), Some(t)) => f.min >= t.min && f.max <= t.max,
        _ => false,
    };
    if from.is_bool() || to.is_float() || lossless {
        return if to.is_float() { monotone(a) } else { fill(to, monotone(a)) };
    }
    if from.is_float() {
        return fill(to, monotone(a));
    }
    // A narrowing or sign-changing integer conversion keeps constant bounds that fit.
    if let (Some((lo, hi)), Some(r)) = (const_bounds(a), type_range(to)) {
        if lo >= r.min && hi <= r.max {
            return Interval::bounded(mk(to, lo), mk(to, hi));
        }
    }
    type_interval(to)
}

fn intrinsic_bounds(which: Intrinsic, ty: Type, args: &[Expr], ais: &[Interval]) -> Interval {
    let Some(a) = ais.first() else { return Interval::everything() };
    let call = |w: Intrinsic, x: &Expr| simplify(&Expr::intrinsic(ty, w, vec![x.clone()]));
    let map = |w: Intrinsic| Interval::new(a.min.as_ref().map(|x| call(w, x)), a.max.as_ref().map(|x| call(w, x)));
    let arg_ty = args.first().map(|e| e.ty().element()).unwrap_or(ty);
    match which {
        Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round | Intrinsic::Trunc if arg_ty == ty => map(which),
        Intrinsic::Sqrt if ty.is_float() && arg_ty == ty => {
            // Increasing on [0, inf); below 0 there is only NaN.
            let zero = Expr::const_of(ty, 0);
            let lo = a.min.as_ref().map(|x| call(which, &emax(x, &zero))).unwrap_or(zero);
            Interval::new(Some(lo), a.max.as_ref().map(|x| call(which, x)))
        }
        Intrinsic::Abs => {
            if arg_ty.is_uint() {
                return a.clone();
            }
            if arg_ty.is_float() {
                let zero = Expr::const_of(ty, 0);
                return match (&a.min, &a.max) {
                    (Some(x), Some(y)) => {
                        let negx = simplify(&Expr::sub(zero.clone(), x.clone()));
                        Interval::bounded(zero, emax(&negx, y))
                    }
                    _ => Interval::new(Some(zero), None),
                };
            }
            // Signed integer: the result is the unsigned type of the same width.
            if let Some((lo, hi)) = const_bounds(a) {
                let (l, h) = if lo >= 0 {
                    (lo, hi)
                } else if hi <= 0 {
                    (-hi, -lo)
                } else {
                    (0, hi.max(-lo))
                };
                return Interval::bounded(mk(ty, l), mk(ty, h));
            }
            if !no_overflow(arg_ty) {
                return type_interval(ty);
            }
            match (&a.min, &a.max) {
                (Some(x), Some(y)) => match neg(x) {
                    Some(nx) => Interval::bounded(Expr::const_of(ty, 0), simplify(&Expr::cast(ty, emax(&nx, y)))),
                    None => Interval::new(Some(Expr::const_of(ty, 0)), None),
                },
                _ => Interval::new(Some(Expr::const_of(ty, 0)), None),
            }
        }
        Intrinsic::BitNot if ty.is_int_or_uint() => {
            // Decreasing: !x is -1 - x (signed) or MAX - x (unsigned).
            let f = |x: &Option<Expr>| x.as_ref().map(|x| call(Intrinsic::BitNot, x));
            Interval::new(f(&a.max), f(&a.min))
        }
        Intrinsic::Sin | Intrinsic::Cos | Intrinsic::Tanh if ty.is_float() => {
            Interval::bounded(Expr::const_of(ty, -1), Expr::const_of(ty, 1))
        }
        Intrinsic::Exp if ty.is_float() => Interval::new(Some(Expr::const_of(ty, 0)), None),
        _ => Interval::everything(),
    }
}

#[cfg(test)]
mod tests;
