//! Math helpers: `select`, `min`, `max`, `clamp`, `abs`, the float functions, `lerp`.
//!
//! They take `impl Into<Expr>`, so literals pass directly, and follow the same type rules
//! as the operators ([`match_types`]). Float functions given integers convert them to
//! `f32` first, as Halide does.
//!
//! ```
//! use halogen::prelude::*;
//! let x = Var::new("x");
//! let e = select(x.lt(0), 0, min(x, 255));
//! assert_eq!(e.to_string(), "select((x < 0), 0, min(x, 255))");
//! assert_eq!(sqrt(x).ty(), Type::f32());
//! ```

pub use super::expr_ops::cast;
use super::expr_ops::{arith, compare, match_types};
use crate::ir::{BinOp, CmpOp, Expr, Intrinsic, Type};

/// `c ? t : f`, lane-wise. `t` and `f` are brought to a common type; a non-bool condition
/// means `c != 0`.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let e = select(x.gt(10), x * 2, 0.5);
/// assert_eq!(e.ty(), Type::f32());
/// assert_eq!(select(x % 2, 1, 0).to_string(), "select(((x % 2) != 0), 1, 0)");
/// ```
pub fn select(c: impl Into<Expr>, t: impl Into<Expr>, f: impl Into<Expr>) -> Expr {
    let mut c = c.into();
    if !c.ty().element().is_bool() {
        c = compare(CmpOp::Ne, c, Expr::from(0));
    }
    let (mut t, mut f) = match_types(t, f);
    let lanes = c.ty().lanes;
    if lanes > 1 && t.ty().is_scalar() {
        t = Expr::broadcast(t, lanes);
        f = Expr::broadcast(f, lanes);
    }
    Expr::select(c, t, f)
}

/// The smaller of `a` and `b` (after the usual type rules).
///
/// ```
/// use halogen::prelude::*;
/// let e = min(cast(Type::u8(), Var::new("x")), 200);
/// assert_eq!(e.ty(), Type::u8());
/// ```
pub fn min(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    let (a, b) = match_types(a, b);
    Expr::binary(BinOp::Min, a, b)
}

/// The larger of `a` and `b` (after the usual type rules).
///
/// ```
/// use halogen::prelude::*;
/// assert_eq!(max(Var::new("x"), 0).to_string(), "max(x, 0)");
/// ```
pub fn max(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    let (a, b) = match_types(a, b);
    Expr::binary(BinOp::Max, a, b)
}

/// Converts a bound of `clamp` to `t`; a constant out of `t`'s range saturates (clamping
/// to a bound the type cannot hold changes nothing) instead of wrapping.
fn clamp_bound(t: Type, b: Expr) -> Expr {
    let et = t.element();
    if et.is_int_or_uint() {
        if let Some(v) = b.as_int().filter(|_| b.ty().element().is_int_or_uint()) {
            let v = match (et.min_int(), et.max_int()) {
                (Some(lo), _) if v < lo => lo,
                (_, Some(hi)) if v > hi => hi,
                _ => v,
            };
            return Expr::const_of(t, v);
        }
        if let Some(v) = b.as_float() {
            let lo = et.min_int().unwrap_or(i64::MIN) as f64;
            let hi = et.max_int().unwrap_or(i64::MAX) as f64;
            return Expr::const_of(t, v.clamp(lo, hi) as i64);
        }
    }
    let b = cast(et, b);
    if t.is_vector() && b.ty().is_scalar() {
        Expr::broadcast(b, t.lanes)
    } else {
        b
    }
}

/// `e` limited to `[lo, hi]`: `max(min(e, hi), lo)`. The bounds are converted to `e`'s
/// type (constants outside its range saturate).
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// assert_eq!(clamp(x, 0, 99).to_string(), "max(min(x, 99), 0)");
/// let p = cast(Type::u8(), x);
/// assert_eq!(clamp(p, 10, 300).ty(), Type::u8());
/// ```
pub fn clamp(e: impl Into<Expr>, lo: impl Into<Expr>, hi: impl Into<Expr>) -> Expr {
    let (e, lo, hi) = (e.into(), lo.into(), hi.into());
    // A literal value takes the type of the bounds, as it would in `min`/`max`.
    let e = if e.is_const() && !lo.is_const() { match_types(e, lo.clone()).0 } else { e };
    let t = e.ty();
    let (lo, hi) = (clamp_bound(t, lo), clamp_bound(t, hi));
    Expr::binary(BinOp::Max, Expr::binary(BinOp::Min, e, hi), lo)
}

/// Absolute value. Signed integers give the unsigned type of the same width (so
/// `abs(i8::MIN)` is 128, as in Halide); floats stay floats; unsigned values are returned
/// unchanged.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// assert_eq!(abs(x).ty(), Type::u32());
/// assert_eq!(abs(x * 0.5).ty(), Type::f32());
/// ```
pub fn abs(e: impl Into<Expr>) -> Expr {
    let e = e.into();
    let t = e.ty();
    if t.is_int() {
        Expr::intrinsic(t.with_code(crate::ir::TypeCode::UInt), Intrinsic::Abs, vec![e])
    } else if t.is_float() {
        Expr::intrinsic(t, Intrinsic::Abs, vec![e])
    } else {
        e
    }
}

/// `|a - b|` without overflow: integers give the unsigned type of their width.
///
/// ```
/// use halogen::prelude::*;
/// let a = cast(Type::i16(), Var::new("a"));
/// assert_eq!(absd(a, 3).ty(), Type::u16());
/// ```
pub fn absd(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    let (a, b) = match_types(a, b);
    let t = a.ty();
    if t.is_float() {
        return abs(Expr::sub(a, b));
    }
    // The difference taken in the larger-minus-smaller order wraps to the right
    // unsigned value even where the signed subtraction overflows.
    let less = Expr::cmp(CmpOp::Lt, a.clone(), b.clone());
    let d = Expr::select(less, Expr::sub(b.clone(), a.clone()), Expr::sub(a, b));
    if t.is_int() {
        cast(t.element().with_code(crate::ir::TypeCode::UInt), d)
    } else {
        d
    }
}

/// Integers become `f32`; floats stay as they are.
fn to_float(e: Expr) -> Expr {
    if e.ty().is_float() {
        e
    } else {
        cast(Type::f32(), e)
    }
}

fn float_fn(which: Intrinsic, e: impl Into<Expr>) -> Expr {
    let e = to_float(e.into());
    Expr::intrinsic(e.ty(), which, vec![e])
}

fn float_fn2(which: Intrinsic, a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    let (a, b) = (a.into(), b.into());
    // The first float operand decides the type; integers become f32.
    let (a, b) = match_types(to_float(a), to_float(b));
    Expr::intrinsic(a.ty(), which, vec![a, b])
}

macro_rules! unary_float_fns {
    ($($(#[$doc:meta])* $name:ident => $which:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(e: impl Into<Expr>) -> Expr {
            float_fn(Intrinsic::$which, e)
        }
    )*};
}

unary_float_fns! {
    /// Square root (integers are converted to `f32` first).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(sqrt(Var::new("x")).to_string(), "sqrt(float32(x))");
    /// ```
    sqrt => Sqrt;
    /// `e^x` (integers are converted to `f32` first).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(exp(1.0f64).ty(), Type::f64());
    /// ```
    exp => Exp;
    /// Natural logarithm (integers are converted to `f32` first).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(log(Var::new("x")).ty(), Type::f32());
    /// ```
    log => Log;
    /// Largest integer value not above `e`, as a float (integers become `f32` first).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(floor(Var::new("x") * 0.5).ty(), Type::f32());
    /// ```
    floor => Floor;
    /// Smallest integer value not below `e`, as a float.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(ceil(Var::new("x") * 0.5).ty(), Type::f32());
    /// ```
    ceil => Ceil;
    /// Nearest integer value, ties to even, as a float.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(round(Var::new("x") * 0.5).to_string(), "round((float32(x) * 0.5f))");
    /// ```
    round => Round;
    /// Integer part (toward zero), as a float.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(trunc(Var::new("x") * 0.5).ty(), Type::f32());
    /// ```
    trunc => Trunc;
    /// Sine (radians).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(sin(Var::new("x")).ty(), Type::f32());
    /// ```
    sin => Sin;
    /// Cosine (radians).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(cos(Var::new("x")).ty(), Type::f32());
    /// ```
    cos => Cos;
    /// Tangent (radians).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(tan(Var::new("x")).ty(), Type::f32());
    /// ```
    tan => Tan;
    /// Arctangent, in `[-π/2, π/2]`.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(atan(Var::new("x")).to_string(), "atan(float32(x))");
    /// ```
    atan => Atan;
    /// Hyperbolic tangent, in `[-1, 1]`.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(tanh(Var::new("x") * 0.5).ty(), Type::f32());
    /// ```
    tanh => Tanh;
    /// A cheaper `e^x` for users who trade accuracy for speed: in `f32` within tens of ulps
    /// where the result is normal, and NaN gives 0 (the table in
    /// [`crate::ir::float_math`]); in `f64` the same as [`exp`].
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(fast_exp(Var::new("x")).to_string(), "fast_exp(float32(x))");
    /// ```
    fast_exp => FastExp;
    /// A cheaper natural logarithm for users who trade accuracy for speed: in `f32` within a
    /// few ulps for positive normal arguments, and unspecified (but the same on every CPU
    /// target) for others (see [`crate::ir::float_math`]); in `f64` the same as [`log`].
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert_eq!(fast_log(Var::new("x")).ty(), Type::f32());
    /// ```
    fast_log => FastLog;
}

/// `a` to the power `b`, in the float type of the operands (integers become `f32`).
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// assert_eq!(pow(x, 2).to_string(), "pow(float32(x), 2.0f)");
/// ```
pub fn pow(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    float_fn2(Intrinsic::Pow, a, b)
}

/// A cheaper `a^b`, `fast_exp(b * fast_log(a))`, for users who trade accuracy for speed:
/// for positive `a` (its error grows with `|b log a|`, see [`crate::ir::float_math`]),
/// `a == 0` gives 0 and `b == 0` gives 1; negative `a` gives an unspecified value. In
/// `f64` the same as [`pow`].
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// assert_eq!(fast_pow(x, 0.5).to_string(), "fast_pow(float32(x), 0.5f)");
/// ```
pub fn fast_pow(a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    float_fn2(Intrinsic::FastPow, a, b)
}

/// The angle of the point `(x, y)`: `atan(y / x)` in the right quadrant.
///
/// ```
/// use halogen::prelude::*;
/// assert_eq!(atan2(Var::new("y"), Var::new("x")).ty(), Type::f32());
/// ```
pub fn atan2(y: impl Into<Expr>, x: impl Into<Expr>) -> Expr {
    float_fn2(Intrinsic::Atan2, y, x)
}

/// Linear interpolation `a + (b - a) * w`.
///
/// For float `a, b` the weight is converted to their type. For integer `a, b` the
/// interpolation is done in floats and rounded to the nearest value of `a`'s type; an
/// unsigned integer weight means `w / max(w's type)` (so a `u8` weight of 255 is 1.0),
/// as in Halide.
///
/// ```
/// use halogen::prelude::*;
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// assert_eq!(lerp(x * 1.0, y * 1.0, 0.25).ty(), Type::f32());
/// let (a, b) = (cast(Type::u8(), x), cast(Type::u8(), y));
/// assert_eq!(lerp(a, b, 0.5).ty(), Type::u8());
/// ```
pub fn lerp(a: impl Into<Expr>, b: impl Into<Expr>, w: impl Into<Expr>) -> Expr {
    let (a, b) = match_types(a, b);
    let w = w.into();
    let t = a.ty();
    if t.is_float() {
        let w = cast(t.element(), w);
        return arith(BinOp::Add, a.clone(), arith(BinOp::Mul, arith(BinOp::Sub, b, a), w));
    }
    // Integer endpoints: interpolate in floats, round back to the endpoints' type.
    let w = if w.ty().is_uint() {
        let full = w.ty().element().max_int().unwrap_or(i64::MAX) as f64;
        arith(BinOp::Div, cast(Type::f32(), w), Expr::from(full))
    } else {
        to_float(w)
    };
    let ft = w.ty().element();
    let (af, bf) = (cast(ft, a), cast(ft, b));
    let v = arith(BinOp::Add, af.clone(), arith(BinOp::Mul, arith(BinOp::Sub, bf, af), w));
    let r = Expr::intrinsic(v.ty(), Intrinsic::Round, vec![v]);
    cast(t.element(), r)
}
