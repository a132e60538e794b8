//! Access patterns: where in memory the lanes of a vector load's or store's index fall.
//!
//! A back end prints a vector access by what its index looks like: lanes evenly spaced
//! (`ramp(b, s)`, and sums and constant multiples of ramps and broadcasts) make a dense,
//! strided or one-element access; a dense vector clamped by scalars (what boundary
//! conditions make) is dense wherever no lane is clamped; `i32` lanes widened from 8- or
//! 16-bit integers (a lookup table indexed by pixel values) can index with the narrow
//! vector; anything else is a gather or a scatter. [`classify_access`] tells which, with the
//! facts a back end needs to print it, all as IR: the first lane as a sum of scalar terms
//! ([`FirstLane`]), and the scalar conditions under which a clamped index is dense
//! ([`InRange`]).
//!
//! Index expressions name `Let`-bound vectors; what each binding in scope is known to hold
//! comes from a [`Bindings`]: [`VarFacts::of_let`] works it out from the bound value, and a
//! back end keeps the facts with its own record of each variable (or uses [`LetScope`]).
//! The facts say what the binding holds, not how a back end spelled it: a term that refers
//! to a `Let` ([`FirstLane::Let`], [`InRange::Let`], ...) is printed from whatever the back
//! end declared for that binding.
//!
//! ```
//! use halogen::analysis::access::{classify_access, AccessPattern, FirstLane, LetScope};
//! use halogen::{Expr, Type};
//! let x = Expr::var(Type::i32(), "x");
//! let mut scope = LetScope::default();
//! scope.push_let("v", &Expr::ramp(x.clone(), Expr::i32(1), 8));
//! // v * 2 + broadcast(3): lanes two apart, the first at (v's first lane) * 2 + 3
//! let v = Expr::var(Type::i32().with_lanes(8), "v");
//! let index = Expr::add(Expr::mul(v, Expr::broadcast(Expr::i32(2), 8)), Expr::broadcast(Expr::i32(3), 8));
//! match classify_access(&index, 8, &scope) {
//!     AccessPattern::Affine { stride, first } => {
//!         assert_eq!(stride, 2);
//!         assert!(matches!(first, FirstLane::Binary(..)));
//!     }
//!     other => panic!("{other:?}"),
//! }
//! ```

use super::{simplify, substitute};
use crate::ir::stack;
use crate::ir::{BinOp, Expr, ExprKind, Name, Type};

/// What is known about the value a variable holds, as far as access patterns go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    /// Nothing useful (a scalar, a loop variable, a parameter, any other vector).
    #[default]
    Opaque,
    /// An `i32` vector whose lane `i` is `b + stride·i` for a scalar `b`.
    Affine(i64),
    /// A broadcast of a scalar `i32`: every lane the same.
    Uniform,
    /// An `i32` vector widened from the 8- or 16-bit integer vector of this type.
    Widened(Type),
    /// An `i32` vector that is dense wherever none of its lanes is clamped (see
    /// [`clamped_dense`]).
    ClampedDense,
    /// An `i32` vector whose lanes never decrease from one to the next, the last at most
    /// this much above the first (see [`lane_spread`]).
    Nondecreasing(i64),
}

/// What a binding in scope tells about its variable.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VarFacts {
    /// The value a `Let` binds (`None` for loop variables and parameters).
    pub value: Option<Expr>,
    /// What that value looks like.
    pub shape: Shape,
}

impl VarFacts {
    /// The facts of a variable bound to nothing known (a loop variable, a parameter).
    pub fn opaque() -> VarFacts {
        VarFacts::default()
    }

    /// The facts of a variable a `Let` binds to `value`, with `scope` the bindings around
    /// the `Let`.
    ///
    /// ```
    /// use halogen::analysis::access::{LetScope, Shape, VarFacts};
    /// use halogen::{Expr, Type};
    /// let x = Expr::var(Type::i32(), "x");
    /// let scope = LetScope::default();
    /// let ramp = Expr::ramp(x.clone(), Expr::i32(3), 4);
    /// assert_eq!(VarFacts::of_let(&ramp, &scope).shape, Shape::Affine(3));
    /// assert_eq!(VarFacts::of_let(&Expr::broadcast(x.clone(), 4), &scope).shape, Shape::Uniform);
    /// assert_eq!(VarFacts::of_let(&x, &scope).shape, Shape::Opaque);
    /// ```
    pub fn of_let(value: &Expr, scope: &impl Bindings) -> VarFacts {
        let t = value.ty();
        let shape = match value.kind() {
            ExprKind::Broadcast { value: s, .. } if s.ty().is_scalar() && t.element() == Type::i32() => Shape::Uniform,
            _ => {
                if let Some(a) = widened_narrow(value) {
                    Shape::Widened(a.ty())
                } else if let Some(s) = lane_stride(value, scope) {
                    Shape::Affine(s)
                } else if t.is_vector() && clamped_dense(value, t.lanes, scope).is_some() {
                    Shape::ClampedDense
                } else if let Some(spread) = lane_spread(value, scope) {
                    Shape::Nondecreasing(spread)
                } else {
                    Shape::Opaque
                }
            }
        };
        VarFacts { value: Some(value.clone()), shape }
    }
}

/// The variables in scope at a point of the IR, innermost binding first.
pub trait Bindings {
    /// The facts of the innermost binding of `name`, or `None` where nothing binds it.
    fn facts(&self, name: &Name) -> Option<&VarFacts>;
}

/// A stack of bindings: the plain [`Bindings`], for walks that keep no record of their own.
///
/// ```
/// use halogen::analysis::access::{Bindings, LetScope, Shape};
/// use halogen::{Expr, Type};
/// let mut scope = LetScope::default();
/// scope.push_let("v", &Expr::broadcast(Expr::var(Type::i32(), "n"), 8));
/// scope.push_opaque("v"); // a loop variable of the same name hides the Let
/// assert_eq!(scope.facts(&"v".into()).unwrap().shape, Shape::Opaque);
/// scope.pop();
/// assert_eq!(scope.facts(&"v".into()).unwrap().shape, Shape::Uniform);
/// ```
#[derive(Clone, Debug, Default)]
pub struct LetScope {
    vars: Vec<(Name, VarFacts)>,
}

impl LetScope {
    /// Binds `name` with a `Let` of `value`.
    pub fn push_let(&mut self, name: impl Into<Name>, value: &Expr) {
        let facts = VarFacts::of_let(value, self);
        self.vars.push((name.into(), facts));
    }

    /// Binds `name` to nothing known.
    pub fn push_opaque(&mut self, name: impl Into<Name>) {
        self.vars.push((name.into(), VarFacts::opaque()));
    }

    /// Ends the innermost binding.
    pub fn pop(&mut self) {
        self.vars.pop();
    }
}

impl Bindings for LetScope {
    fn facts(&self, name: &Name) -> Option<&VarFacts> {
        self.vars.iter().rev().find(|(n, _)| n == name).map(|(_, f)| f)
    }
}

/// The first lane of an index vector, as scalar terms added and multiplied in 64 bits
/// (index arithmetic that passes bounds inference never wraps).
#[derive(Clone, Debug, PartialEq)]
pub enum FirstLane {
    /// A scalar `i32` expression: a ramp's base, a broadcast's value.
    Expr(Expr),
    /// The first lane of the vector an enclosing `Let` binds to this name (one of shape
    /// [`Shape::Affine`], [`Shape::Uniform`] or [`Shape::ClampedDense`]).
    Let(Name),
    /// `a + b`, `a - b` or `a * b`.
    Binary(BinOp, Box<FirstLane>, Box<FirstLane>),
}

/// The scalar every lane of a vector holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Uniform {
    /// The scalar expression a broadcast repeats.
    Expr(Expr),
    /// The scalar of the broadcast an enclosing `Let` binds to this name.
    Let(Name),
}

/// A scalar condition under which no lane of a clamped index is clamped.
#[derive(Clone, Debug, PartialEq)]
pub enum InRange {
    /// `first + last <= bound` in 64 bits: no lane reaches above the bound of a `min`
    /// (`last` is the number of lanes less one).
    Below {
        /// The first lane of the vector the `min` clamps.
        first: FirstLane,
        /// The last lane's distance from the first.
        last: i64,
        /// The bound.
        bound: Uniform,
    },
    /// `first >= bound`: no lane falls below the bound of a `max`.
    Above {
        /// The first lane of the vector the `max` clamps.
        first: FirstLane,
        /// The bound.
        bound: Uniform,
    },
    /// The conditions of the clamped vector an enclosing `Let` binds to this name.
    Let(Name),
}

/// The narrow integer vector a widened index comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Narrow {
    /// The expression widened.
    Expr(Expr),
    /// The narrow vector of the widened index an enclosing `Let` binds to this name.
    Let(Name),
}

/// Scalars added (`BinOp::Add`) to or subtracted (`BinOp::Sub`) from zero, in order.
pub type Offset = Vec<(BinOp, FirstLane)>;

/// How the lanes of a load's or store's index lie in memory.
#[derive(Clone, Debug, PartialEq)]
pub enum AccessPattern {
    /// One lane.
    Scalar,
    /// Lane `i` at `first + stride·i`: dense for a stride of 1, every lane the same element
    /// for 0.
    Affine {
        /// The first lane.
        first: FirstLane,
        /// The distance between lanes.
        stride: i64,
    },
    /// Dense, from `first`, wherever all of `in_range` hold; clamped lanes elsewhere.
    ClampedDense {
        /// The first lane where no lane is clamped.
        first: FirstLane,
        /// The conditions under which no lane is clamped.
        in_range: Vec<InRange>,
    },
    /// `i32` lanes widened from the 8- or 16-bit integers `narrow` (of type `narrow_ty`),
    /// plus scalars: lane `i` at `offset + narrow[i]`.
    NarrowIndex {
        /// The narrow vector.
        narrow: Narrow,
        /// Its type.
        narrow_ty: Type,
        /// The scalars added to or subtracted from it.
        offset: Offset,
    },
    /// Lane `i` at `⌊(numerator + stride·i) / divisor⌋ + offset` (`f(x / 2)` with `x`
    /// vectorized, what up-sampling makes), spread over less than one vector: the first
    /// lane's element and each lane's distance from it follow from scalars, so the access
    /// is one dense load of the window and one shuffle whose pattern depends only on
    /// `numerator mod divisor` (invariant in a loop that steps the numerator by a multiple
    /// of the divisor), with no index vector at all.
    Quotient(Quotient),
    /// Lanes that never decrease and lie within one vector's width of the first
    /// (`f(x / 2)` with `x` vectorized, what up-sampling makes): one dense load of the
    /// window from the first lane, then a shuffle of it by each lane's offset.
    Window {
        /// An upper bound of the last lane less the first, below the number of lanes.
        spread: i64,
    },
    /// Anything else: one index per lane.
    Gather,
}

/// How the `lanes` lanes of an access at `index` (an `i32` scalar or vector, broadcast to
/// `lanes` where it is a scalar) lie in memory. The first pattern that fits wins, in the
/// order of [`AccessPattern`]'s variants.
///
/// ```
/// use halogen::analysis::access::{classify_access, AccessPattern, LetScope};
/// use halogen::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let scope = LetScope::default();
/// let ramp = Expr::ramp(x.clone(), Expr::i32(1), 8);
/// let hi = Expr::broadcast(Expr::var(Type::i32(), "hi"), 8);
/// let clamped = Expr::min(ramp.clone(), hi);
/// assert!(matches!(classify_access(&ramp, 8, &scope), AccessPattern::Affine { stride: 1, .. }));
/// assert!(matches!(classify_access(&clamped, 8, &scope), AccessPattern::ClampedDense { .. }));
/// assert_eq!(classify_access(&x, 1, &scope), AccessPattern::Scalar);
/// ```
pub fn classify_access(index: &Expr, lanes: u16, scope: &impl Bindings) -> AccessPattern {
    if lanes == 1 {
        return AccessPattern::Scalar;
    }
    if let Some((first, stride)) = affine(index, scope) {
        return AccessPattern::Affine { first, stride };
    }
    if let Some((first, in_range)) = clamped_dense(index, lanes, scope) {
        return AccessPattern::ClampedDense { first, in_range };
    }
    if let Some((narrow, narrow_ty, offset)) = narrow_index(index, scope) {
        return AccessPattern::NarrowIndex { narrow, narrow_ty, offset };
    }
    if let Some(q) = quotient(index, scope).filter(|q| q.spread(lanes) < lanes as i64) {
        return AccessPattern::Quotient(q);
    }
    match lane_spread(index, scope) {
        Some(spread) if spread < lanes as i64 => AccessPattern::Window { spread },
        _ => AccessPattern::Gather,
    }
}

/// If every lane `i` of the `i32` vector `e` is `b + s·i` for a scalar `b` and a constant
/// `s`: that `s`. Ramps with constant strides, broadcasts, variables bound to either, and
/// their sums, differences and products by constants are; the lanes of a `ramp(x, 1) * 2`
/// (a down-sampling's index) are two apart.
///
/// ```
/// use halogen::analysis::access::{lane_stride, LetScope};
/// use halogen::{Expr, Type};
/// let ramp = Expr::ramp(Expr::var(Type::i32(), "x"), Expr::i32(1), 4);
/// let twice = Expr::mul(ramp.clone(), Expr::broadcast(Expr::i32(2), 4));
/// assert_eq!(lane_stride(&twice, &LetScope::default()), Some(2));
/// assert_eq!(lane_stride(&Expr::mul(ramp.clone(), ramp), &LetScope::default()), None);
/// ```
pub fn lane_stride(e: &Expr, scope: &impl Bindings) -> Option<i64> {
    stack::guard(|| {
        if e.ty().element() != Type::i32() || e.ty().is_scalar() {
            return None;
        }
        let constant = |x: &Expr| match x.kind() {
            ExprKind::Broadcast { value, .. } => value.as_int(),
            _ => None,
        };
        match e.kind() {
            ExprKind::Ramp { stride, .. } => stride.as_int(),
            ExprKind::Broadcast { value, .. } => value.ty().is_scalar().then_some(0),
            ExprKind::Var { name, .. } => match scope.facts(name)?.shape {
                Shape::Affine(s) => Some(s),
                Shape::Uniform => Some(0),
                _ => None,
            },
            ExprKind::Binary(BinOp::Add, a, b) => lane_stride(a, scope)?.checked_add(lane_stride(b, scope)?),
            ExprKind::Binary(BinOp::Sub, a, b) => lane_stride(a, scope)?.checked_sub(lane_stride(b, scope)?),
            ExprKind::Binary(BinOp::Mul, a, b) => match (lane_stride(a, scope)?, lane_stride(b, scope)?) {
                (0, 0) => Some(0),
                (s, 0) => s.checked_mul(constant(b)?),
                (0, s) => s.checked_mul(constant(a)?),
                _ => None,
            },
            _ => None,
        }
    })
}

/// If the lanes of the `i32` vector `e` never decrease from one lane to the next: an
/// upper bound of its last lane less its first. Ramps with non-negative constant strides
/// and broadcasts are; so are their sums, a difference with a broadcast, products by
/// non-negative constants, floor divisions and right shifts by positive constants, and
/// `min`s and `max`es of two such vectors (a clamp). Up-sampling's index `ramp(x, 1) / 2`
/// spreads over at most `7 / 2 + 1 = 4` elements for eight lanes: a dense window.
///
/// Index arithmetic that passes bounds inference does not wrap, which this relies on; a
/// back end that loads the window from the first lane still checks the spread it finds at
/// run time, so that a wrong answer here could only cost pixels, never memory safety.
///
/// ```
/// use halogen::analysis::access::{lane_spread, LetScope};
/// use halogen::{Expr, Type};
/// let ramp = Expr::ramp(Expr::var(Type::i32(), "x"), Expr::i32(1), 8);
/// let half = Expr::div(ramp.clone(), Expr::broadcast(Expr::i32(2), 8));
/// assert_eq!(lane_spread(&half, &LetScope::default()), Some(4));
/// let back = Expr::sub(Expr::broadcast(Expr::i32(0), 8), ramp);
/// assert_eq!(lane_spread(&back, &LetScope::default()), None);
/// ```
pub fn lane_spread(e: &Expr, scope: &impl Bindings) -> Option<i64> {
    stack::guard(|| {
        let t = e.ty();
        if t.element() != Type::i32() || t.is_scalar() {
            return None;
        }
        let last = t.lanes as i64 - 1;
        let positive = |x: &Expr| match x.kind() {
            ExprKind::Broadcast { value, .. } => value.as_int().filter(|c| *c > 0),
            _ => None,
        };
        let spread = match e.kind() {
            ExprKind::Ramp { stride, .. } => stride.as_int().filter(|s| *s >= 0)?.checked_mul(last)?,
            ExprKind::Broadcast { value, .. } if value.ty().is_scalar() => 0,
            ExprKind::Var { name, .. } => match scope.facts(name)?.shape {
                Shape::Affine(s) if s >= 0 => s.checked_mul(last)?,
                Shape::Uniform => 0,
                Shape::ClampedDense => last,
                Shape::Nondecreasing(d) => d,
                _ => return None,
            },
            ExprKind::Binary(BinOp::Add, a, b) => lane_spread(a, scope)?.checked_add(lane_spread(b, scope)?)?,
            ExprKind::Binary(BinOp::Sub, a, b) if uniform(b, scope).is_some() => lane_spread(a, scope)?,
            ExprKind::Binary(BinOp::Mul, a, b) => match (positive(a), positive(b)) {
                (_, Some(c)) => lane_spread(a, scope)?.checked_mul(c)?,
                (Some(c), _) => lane_spread(b, scope)?.checked_mul(c)?,
                _ => return None,
            },
            // floor((v + d) / k) - floor(v / k) <= floor(d / k) + 1
            ExprKind::Binary(BinOp::Div, a, b) => match lane_spread(a, scope)? {
                0 => 0,
                d => d / positive(b)? + 1,
            },
            ExprKind::Binary(BinOp::Shr, a, b) => match (lane_spread(a, scope)?, positive(b).filter(|s| *s < 32)?) {
                (0, _) => 0,
                (d, s) => (d >> s) + 1,
            },
            // min(a_last, b_last) - min(a_first, b_first) <= max(a_last - a_first, b_last - b_first)
            ExprKind::Binary(BinOp::Min | BinOp::Max, a, b) => lane_spread(a, scope)?.max(lane_spread(b, scope)?),
            _ => return None,
        };
        Some(spread)
    })
}

/// An index whose lane `i` is `⌊(numerator + stride·i) / divisor⌋ + offset`: an evenly
/// spaced vector divided by a constant, plus scalars (see [`AccessPattern::Quotient`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Quotient {
    /// The first lane of the dividend.
    pub numerator: FirstLane,
    /// The distance between the dividend's lanes (not negative).
    pub stride: i64,
    /// The constant divisor (positive); the division rounds down.
    pub divisor: i64,
    /// The scalars added to or subtracted from the quotient, in order.
    pub offset: Offset,
}

impl Quotient {
    /// The most that lane `lanes - 1` can lie past lane 0, over every remainder of the
    /// numerator: `⌊(divisor - 1 + stride·(lanes - 1)) / divisor⌋`.
    pub fn spread(&self, lanes: u16) -> i64 {
        let last = self.stride.saturating_mul(lanes as i64 - 1);
        last.saturating_add(self.divisor - 1) / self.divisor
    }
}

/// If the `i32` vector `e` is an evenly spaced vector (not decreasing) divided by a
/// positive constant or shifted right by one, plus or minus scalars, directly or through
/// `Let`-bound variables of a [`Shape::Nondecreasing`] shape: its [`Quotient`] form.
/// Because `⌊(a + s·i) / k⌋ = ⌊a / k⌋ + ⌊(a mod k + s·i) / k⌋`, lane 0 of such an index
/// is `⌊a / k⌋ + offset` and the lanes' distances from it depend on `a mod k` alone.
///
/// ```
/// use halogen::analysis::access::{quotient, LetScope};
/// use halogen::{Expr, Type};
/// let ramp = Expr::ramp(Expr::var(Type::i32(), "x"), Expr::i32(1), 8);
/// let half = Expr::div(ramp, Expr::broadcast(Expr::i32(2), 8));
/// let q = quotient(&half, &LetScope::default()).unwrap();
/// assert_eq!((q.stride, q.divisor, q.spread(8)), (1, 2, 4));
/// ```
pub fn quotient(e: &Expr, scope: &impl Bindings) -> Option<Quotient> {
    stack::guard(|| {
        if e.ty().element() != Type::i32() || e.ty().is_scalar() {
            return None;
        }
        let divisor = |b: &Expr, shift: bool| match b.kind() {
            ExprKind::Broadcast { value, .. } => match value.as_int()? {
                s if shift && (1..31).contains(&s) => Some(1i64 << s),
                k if !shift && k > 0 => Some(k),
                _ => None,
            },
            _ => None,
        };
        match e.kind() {
            ExprKind::Var { name, .. } => {
                let facts = scope.facts(name)?;
                match (facts.shape, &facts.value) {
                    (Shape::Nondecreasing(_), Some(value)) => quotient(value, scope),
                    _ => None,
                }
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Shr), a, b) => {
                let divisor = divisor(b, *op == BinOp::Shr)?;
                let (numerator, stride) = affine(a, scope)?;
                (stride >= 0).then_some(Quotient { numerator, stride, divisor, offset: Vec::new() })
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                if let Some(u) = uniform_term(b, scope) {
                    let mut q = quotient(a, scope)?;
                    q.offset.push((*op, u));
                    Some(q)
                } else if let (BinOp::Add, Some(u)) = (op, uniform_term(a, scope)) {
                    let mut q = quotient(b, scope)?;
                    q.offset.push((BinOp::Add, u));
                    Some(q)
                } else {
                    None
                }
            }
            _ => None,
        }
    })
}

/// The first lane and the stride of an `e` that [`lane_stride`] accepts.
fn affine(e: &Expr, scope: &impl Bindings) -> Option<(FirstLane, i64)> {
    let stride = lane_stride(e, scope)?;
    Some((first_lane(e)?, stride))
}

/// The first lane of an `e` that [`lane_stride`] accepts.
fn first_lane(e: &Expr) -> Option<FirstLane> {
    stack::guard(|| match e.kind() {
        ExprKind::Ramp { base, .. } => Some(FirstLane::Expr(base.clone())),
        ExprKind::Broadcast { value, .. } => Some(FirstLane::Expr(value.clone())),
        ExprKind::Var { name, .. } => Some(FirstLane::Let(name.clone())),
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
            Some(FirstLane::Binary(*op, Box::new(first_lane(a)?), Box::new(first_lane(b)?)))
        }
        _ => None,
    })
}

/// The scalar that `e` repeats, if it is a broadcast of a scalar or a variable a `Let`
/// binds to a broadcast of an `i32`.
///
/// ```
/// use halogen::analysis::access::{uniform, LetScope, Uniform};
/// use halogen::{Expr, Type};
/// let c = Expr::var(Type::bool(), "c");
/// assert_eq!(uniform(&Expr::broadcast(c.clone(), 4), &LetScope::default()), Some(Uniform::Expr(c)));
/// ```
pub fn uniform(e: &Expr, scope: &impl Bindings) -> Option<Uniform> {
    match e.kind() {
        ExprKind::Broadcast { value, .. } if value.ty().is_scalar() => Some(Uniform::Expr(value.clone())),
        ExprKind::Var { name, .. } if scope.facts(name)?.shape == Shape::Uniform => Some(Uniform::Let(name.clone())),
        _ => None,
    }
}

/// [`uniform`] as a term of a first lane.
fn uniform_term(e: &Expr, scope: &impl Bindings) -> Option<FirstLane> {
    Some(match uniform(e, scope)? {
        Uniform::Expr(x) => FirstLane::Expr(x),
        Uniform::Let(n) => FirstLane::Let(n),
    })
}

/// For an index that is a dense vector clamped by scalars, plus or minus scalars
/// (`clamp(ramp(b, 1), lo, hi) + c`, what boundary conditions make): the first lane where
/// no lane is clamped, and the conditions under which none is (innermost clamp first).
/// A dense vector is one with no conditions.
///
/// ```
/// use halogen::analysis::access::{clamped_dense, InRange, LetScope};
/// use halogen::{Expr, Type};
/// let bc = |n: &str| Expr::broadcast(Expr::var(Type::i32(), n), 8);
/// let ramp = Expr::ramp(Expr::var(Type::i32(), "x"), Expr::i32(1), 8);
/// let e = Expr::add(Expr::max(Expr::min(ramp, bc("hi")), bc("lo")), bc("c"));
/// let (_, conds) = clamped_dense(&e, 8, &LetScope::default()).unwrap();
/// assert!(matches!(conds.as_slice(), [InRange::Below { last: 7, .. }, InRange::Above { .. }]));
/// ```
pub fn clamped_dense(e: &Expr, lanes: u16, scope: &impl Bindings) -> Option<(FirstLane, Vec<InRange>)> {
    stack::guard(|| {
        if e.ty().element() != Type::i32() || e.ty().is_scalar() {
            return None;
        }
        if let Some((first, 1)) = affine(e, scope) {
            return Some((first, Vec::new()));
        }
        match e.kind() {
            ExprKind::Var { name, .. } if scope.facts(name)?.shape == Shape::ClampedDense => {
                Some((FirstLane::Let(name.clone()), vec![InRange::Let(name.clone())]))
            }
            ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) => {
                let bound = uniform(b, scope)?;
                let (first, mut conds) = clamped_dense(a, lanes, scope)?;
                conds.push(if *op == BinOp::Min {
                    InRange::Below { first: first.clone(), last: lanes as i64 - 1, bound }
                } else {
                    InRange::Above { first: first.clone(), bound }
                });
                Some((first, conds))
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                if let Some(u) = uniform_term(b, scope) {
                    let (first, conds) = clamped_dense(a, lanes, scope)?;
                    Some((FirstLane::Binary(*op, Box::new(first), Box::new(u)), conds))
                } else if let (BinOp::Add, Some(u)) = (op, uniform_term(a, scope)) {
                    let (first, conds) = clamped_dense(b, lanes, scope)?;
                    Some((FirstLane::Binary(BinOp::Add, Box::new(u), Box::new(first)), conds))
                } else {
                    None
                }
            }
            _ => None,
        }
    })
}

/// If `e` is a vector of 8- or 16-bit integers widened to `i32` (what indexes a lookup
/// table by pixel values), the narrow vector.
///
/// ```
/// use halogen::analysis::access::widened_narrow;
/// use halogen::{Expr, Type};
/// let px = Expr::var(Type::u8().with_lanes(16), "px");
/// assert_eq!(widened_narrow(&Expr::cast(Type::i32().with_lanes(16), px.clone())), Some(&px));
/// assert_eq!(widened_narrow(&px), None);
/// ```
pub fn widened_narrow(e: &Expr) -> Option<&Expr> {
    match e.kind() {
        ExprKind::Cast(a)
            if e.ty().is_vector()
                && e.ty().element() == Type::i32()
                && a.ty().bits <= 16
                && a.ty().is_int_or_uint() =>
        {
            Some(a)
        }
        _ => None,
    }
}

/// If the index vector `e` is 8- or 16-bit integers widened to `i32` (directly or through
/// a variable), plus or minus scalars (a buffer's min): the narrow vector, its type, and the
/// scalars, to be added to or subtracted from zero in order.
///
/// ```
/// use halogen::analysis::access::{narrow_index, LetScope, Narrow};
/// use halogen::ir::BinOp;
/// use halogen::{Expr, Type};
/// let px = Expr::var(Type::u16().with_lanes(8), "px");
/// let wide = Expr::cast(Type::i32().with_lanes(8), px.clone());
/// let e = Expr::sub(wide, Expr::broadcast(Expr::var(Type::i32(), "lut.min.0"), 8));
/// let (narrow, ty, offset) = narrow_index(&e, &LetScope::default()).unwrap();
/// assert_eq!((narrow, ty), (Narrow::Expr(px), Type::u16().with_lanes(8)));
/// assert_eq!(offset.len(), 1);
/// assert_eq!(offset[0].0, BinOp::Sub);
/// ```
pub fn narrow_index(e: &Expr, scope: &impl Bindings) -> Option<(Narrow, Type, Offset)> {
    stack::guard(|| {
        if let Some(a) = widened_narrow(e) {
            return Some((Narrow::Expr(a.clone()), a.ty(), Vec::new()));
        }
        match e.kind() {
            ExprKind::Var { name, .. } => match scope.facts(name)?.shape {
                Shape::Widened(t) => Some((Narrow::Let(name.clone()), t, Vec::new())),
                _ => None,
            },
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let u = uniform_term(b, scope)?;
                let (n, t, mut offset) = narrow_index(a, scope)?;
                offset.push((*op, u));
                Some((n, t, offset))
            }
            _ => None,
        }
    })
}

/// How much the first lane of the `i32` vector `e` grows when the loop variable `var` (of
/// type `var_ty`) grows by one, if that is a constant; `Let`-bound variables are looked
/// through (eight deep).
///
/// ```
/// use halogen::analysis::access::{step_along, LetScope};
/// use halogen::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let mut scope = LetScope::default();
/// scope.push_opaque("x");
/// scope.push_let("b", &Expr::mul(x.clone(), Expr::i32(8)));
/// let e = Expr::ramp(Expr::var(Type::i32(), "b"), Expr::i32(1), 8);
/// assert_eq!(step_along(&e, &"x".into(), Type::i32(), &scope), Some(8));
/// ```
pub fn step_along(e: &Expr, var: &Name, var_ty: Type, scope: &impl Bindings) -> Option<i64> {
    let e = inline_lets(e, 8, scope);
    let next = substitute(var, &Expr::add(Expr::var(var_ty, var.clone()), Expr::const_of(var_ty, 1)), &e);
    let step = simplify(&Expr::sub(next, e));
    match step.kind() {
        ExprKind::Broadcast { value, .. } => value.as_int(),
        _ => step.as_int(),
    }
}

/// `e` with the variables bound by `Let`s replaced by their values, `depth` levels deep.
fn inline_lets(e: &Expr, depth: usize, scope: &impl Bindings) -> Expr {
    if let ExprKind::Var { name, .. } = e.kind() {
        return match scope.facts(name).and_then(|f| f.value.clone()) {
            Some(value) if depth > 0 => inline_lets(&value, depth - 1, scope),
            _ => e.clone(),
        };
    }
    e.map_children(|c| inline_lets(c, depth, scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: &str) -> Expr {
        Expr::var(Type::i32(), n)
    }

    fn vv(n: &str, lanes: u16) -> Expr {
        Expr::var(Type::i32().with_lanes(lanes), n)
    }

    fn bc(n: &str) -> Expr {
        Expr::broadcast(v(n), 8)
    }

    fn ramp(n: &str, stride: i64) -> Expr {
        Expr::ramp(v(n), Expr::i32(stride), 8)
    }

    #[test]
    fn strides_of_sums_and_constant_multiples() {
        let s = LetScope::default();
        assert_eq!(lane_stride(&Expr::add(ramp("x", 1), bc("y")), &s), Some(1));
        assert_eq!(lane_stride(&Expr::sub(ramp("x", 3), ramp("y", 1)), &s), Some(2));
        assert_eq!(lane_stride(&Expr::mul(Expr::broadcast(Expr::i32(4), 8), ramp("x", 1)), &s), Some(4));
        // a product of two ramps is not evenly spaced, nor one by a non-constant
        assert_eq!(lane_stride(&Expr::mul(ramp("x", 1), bc("y")), &s), None);
        assert_eq!(lane_stride(&Expr::min(ramp("x", 1), bc("y")), &s), None);
        // only i32 vectors
        assert_eq!(lane_stride(&v("x"), &s), None);
        let r16 = Expr::ramp(Expr::int_imm(Type::i16(), 0), Expr::int_imm(Type::i16(), 1), 8);
        assert_eq!(lane_stride(&r16, &s), None);
    }

    #[test]
    fn first_lane_of_an_affine_index() {
        let mut s = LetScope::default();
        s.push_let("r", &ramp("x", 2));
        let e = Expr::add(vv("r", 8), bc("y"));
        let expected =
            FirstLane::Binary(BinOp::Add, Box::new(FirstLane::Let("r".into())), Box::new(FirstLane::Expr(v("y"))));
        assert_eq!(classify_access(&e, 8, &s), AccessPattern::Affine { first: expected, stride: 2 });
    }

    #[test]
    fn lets_carry_their_shapes_and_inner_bindings_hide_them() {
        let mut s = LetScope::default();
        s.push_let("u", &bc("y"));
        s.push_let("w", &Expr::cast(Type::i32().with_lanes(8), Expr::var(Type::u8().with_lanes(8), "p")));
        s.push_let("c", &Expr::min(ramp("x", 1), bc("hi")));
        assert_eq!(s.facts(&"u".into()).unwrap().shape, Shape::Uniform);
        assert_eq!(s.facts(&"w".into()).unwrap().shape, Shape::Widened(Type::u8().with_lanes(8)));
        assert_eq!(s.facts(&"c".into()).unwrap().shape, Shape::ClampedDense);
        assert_eq!(
            classify_access(&vv("u", 8), 8, &s),
            AccessPattern::Affine { first: FirstLane::Let("u".into()), stride: 0 }
        );
        assert_eq!(
            classify_access(&Expr::sub(vv("c", 8), bc("m")), 8, &s),
            AccessPattern::ClampedDense {
                first: FirstLane::Binary(
                    BinOp::Sub,
                    Box::new(FirstLane::Let("c".into())),
                    Box::new(FirstLane::Expr(v("m")))
                ),
                in_range: vec![InRange::Let("c".into())],
            }
        );
        assert_eq!(
            classify_access(&Expr::add(vv("w", 8), vv("u", 8)), 8, &s),
            AccessPattern::NarrowIndex {
                narrow: Narrow::Let("w".into()),
                narrow_ty: Type::u8().with_lanes(8),
                offset: vec![(BinOp::Add, FirstLane::Let("u".into()))],
            }
        );
        // a loop variable named like a Let hides it
        s.push_opaque("c");
        assert_eq!(classify_access(&vv("c", 8), 8, &s), AccessPattern::Gather);
        s.pop();
        assert!(matches!(classify_access(&vv("c", 8), 8, &s), AccessPattern::ClampedDense { .. }));
        // an unbound name is nothing known
        assert_eq!(classify_access(&vv("nowhere", 8), 8, &s), AccessPattern::Gather);
    }

    #[test]
    fn clamps_record_their_conditions_in_order() {
        let s = LetScope::default();
        // broadcast(c) + max(min(ramp(x, 1), hi), lo)
        let e = Expr::add(bc("c"), Expr::max(Expr::min(ramp("x", 1), bc("hi")), bc("lo")));
        let x = FirstLane::Expr(v("x"));
        let Some((first, conds)) = clamped_dense(&e, 8, &s) else { panic!("not clamped dense: {e}") };
        assert_eq!(first, FirstLane::Binary(BinOp::Add, Box::new(FirstLane::Expr(v("c"))), Box::new(x.clone())));
        assert_eq!(
            conds,
            vec![
                InRange::Below { first: x.clone(), last: 7, bound: Uniform::Expr(v("hi")) },
                InRange::Above { first: x, bound: Uniform::Expr(v("lo")) },
            ]
        );
        // a clamp by a vector, or of a strided ramp, is not
        assert_eq!(clamped_dense(&Expr::min(ramp("x", 1), ramp("y", 1)), 8, &s), None);
        assert_eq!(clamped_dense(&Expr::min(ramp("x", 2), bc("hi")), 8, &s), None);
        // a scalar subtracted from the left is not an offset
        assert_eq!(clamped_dense(&Expr::sub(bc("c"), Expr::min(ramp("x", 1), bc("hi"))), 8, &s), None);
    }

    #[test]
    fn narrow_indices_and_gathers() {
        let s = LetScope::default();
        let wide = Expr::cast(Type::i32().with_lanes(8), Expr::var(Type::i16().with_lanes(8), "p"));
        assert!(matches!(classify_access(&wide, 8, &s), AccessPattern::NarrowIndex { .. }));
        // widened from 32 bits is not narrow; an offset on the left is not taken
        let from_u32 = Expr::cast(Type::i32().with_lanes(8), Expr::var(Type::u32().with_lanes(8), "p"));
        assert_eq!(classify_access(&from_u32, 8, &s), AccessPattern::Gather);
        assert_eq!(classify_access(&Expr::add(bc("c"), wide), 8, &s), AccessPattern::Gather);
    }

    #[test]
    fn up_sampled_indices_are_windows_and_wider_spreads_are_gathers() {
        let mut s = LetScope::default();
        let k = |c: i64| Expr::broadcast(Expr::i32(c), 8);
        let half = Expr::div(ramp("x", 1), k(2));
        // (x + 7) / 2 - x / 2 <= 4: at most 4 elements past the first
        assert_eq!(lane_spread(&half, &s), Some(4));
        assert!(matches!(
            classify_access(&half, 8, &s),
            AccessPattern::Quotient(Quotient { stride: 1, divisor: 2, .. })
        ));
        // through a Let, plus a broadcast, clamped, shifted
        s.push_let("h", &Expr::sub(half.clone(), bc("m")));
        assert_eq!(s.facts(&"h".into()).unwrap().shape, Shape::Nondecreasing(4));
        let clamped = Expr::max(Expr::min(Expr::add(vv("h", 8), bc("row")), bc("hi")), bc("lo"));
        assert_eq!(classify_access(&clamped, 8, &s), AccessPattern::Window { spread: 4 });
        let shifted = Expr::binary(BinOp::Shr, ramp("x", 1), k(2));
        assert_eq!(lane_spread(&shifted, &s), Some(2));
        // x / 2 + x / 3 grows by up to 4 + 3: still within eight lanes
        assert_eq!(lane_spread(&Expr::add(half.clone(), Expr::div(ramp("x", 1), k(3))), &s), Some(7));
        // (x / 2) * 3 may spread over 12: a gather
        let wide = Expr::mul(half.clone(), k(3));
        assert_eq!(lane_spread(&wide, &s), Some(12));
        assert_eq!(classify_access(&wide, 8, &s), AccessPattern::Gather);
        // lanes that may decrease are not windows: a reversal divided, a vector subtracted,
        // a negative factor, a division by a vector or a non-positive constant
        let reversed = Expr::div(ramp("x", -1), k(2));
        assert_eq!(lane_spread(&reversed, &s), None);
        assert_eq!(lane_spread(&Expr::sub(bc("c"), half.clone()), &s), None);
        assert_eq!(lane_spread(&Expr::sub(half.clone(), ramp("x", 1)), &s), None);
        assert_eq!(lane_spread(&Expr::mul(half.clone(), k(-1)), &s), None);
        assert_eq!(lane_spread(&Expr::div(ramp("x", 1), ramp("y", 1)), &s), None);
        assert_eq!(lane_spread(&Expr::div(ramp("x", 1), k(0)), &s), None);
        assert_eq!(classify_access(&reversed, 8, &s), AccessPattern::Gather);
    }

    #[test]
    fn quotients_of_evenly_spaced_vectors_know_their_first_lane_and_pattern() {
        let mut s = LetScope::default();
        let k = |c: i64| Expr::broadcast(Expr::i32(c), 8);
        // (x + 1) / 2 through a Let, plus scalars on either side
        s.push_let("up", &Expr::div(Expr::add(ramp("x", 1), k(1)), k(2)));
        let e = Expr::add(bc("c"), Expr::sub(vv("up", 8), bc("m")));
        let q = quotient(&e, &s).unwrap();
        assert_eq!((q.stride, q.divisor, q.offset.len()), (1, 2, 2));
        assert!(matches!(q.numerator, FirstLane::Binary(BinOp::Add, ..)));
        assert!(matches!(classify_access(&e, 8, &s), AccessPattern::Quotient(_)));
        // a right shift divides by a power of two; 2x / 3 spreads over (2 + 14) / 3 = 5
        let shifted = Expr::binary(BinOp::Shr, ramp("x", 1), k(2));
        assert_eq!(quotient(&shifted, &s).map(|q| q.divisor), Some(4));
        let two_thirds = Expr::div(ramp("x", 2), k(3));
        assert_eq!(quotient(&two_thirds, &s).map(|q| q.spread(8)), Some(5));
        // stride 3 over 2 spreads past eight lanes: not a window of this form
        let wide = Expr::div(ramp("x", 3), k(2));
        assert_eq!(quotient(&wide, &s).map(|q| q.spread(8)), Some(11));
        assert!(!matches!(classify_access(&wide, 8, &s), AccessPattern::Quotient(_)));
        // not quotients: a clamped dividend, a decreasing one, a vector or non-positive
        // divisor, a vector subtracted
        let clamped = Expr::div(Expr::min(ramp("x", 1), bc("hi")), k(2));
        assert_eq!(quotient(&clamped, &s), None);
        assert_eq!(quotient(&Expr::div(ramp("x", -1), k(2)), &s), None);
        assert_eq!(quotient(&Expr::div(ramp("x", 1), ramp("y", 1)), &s), None);
        assert_eq!(quotient(&Expr::div(ramp("x", 1), k(0)), &s), None);
        assert_eq!(quotient(&Expr::sub(Expr::div(ramp("x", 1), k(2)), ramp("y", 1)), &s), None);
    }

    #[test]
    fn steps_along_loops() {
        let mut s = LetScope::default();
        s.push_opaque("y");
        s.push_opaque("x");
        // ramp(x * 8 + y * 100, 1): 8 along x, 100 along y
        let base = Expr::add(Expr::mul(v("x"), Expr::i32(8)), Expr::mul(v("y"), Expr::i32(100)));
        s.push_let("b", &base);
        let e = Expr::ramp(v("b"), Expr::i32(1), 8);
        assert_eq!(step_along(&e, &"x".into(), Type::i32(), &s), Some(8));
        assert_eq!(step_along(&e, &"y".into(), Type::i32(), &s), Some(100));
        // not a constant step
        let sq = Expr::ramp(Expr::mul(v("x"), v("x")), Expr::i32(1), 8);
        assert_eq!(step_along(&sq, &"x".into(), Type::i32(), &s), None);
    }
}
