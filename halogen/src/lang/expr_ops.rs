//! Operators on [`Expr`] with Halide's implicit type rules.
//!
//! Every operator and every helper in `lang` goes through [`match_types`], so the rules
//! live in one place:
//!
//! - equal types: nothing changes;
//! - a float and a non-float: the non-float is converted to the float type;
//! - two floats, or two integers of the same signedness: the narrower one widens;
//! - a signed and an unsigned integer: both become signed with the greater width;
//! - a bool and an integer: the bool is converted to the integer type;
//! - a *literal* (a scalar `i32` constant, as Rust's `3` becomes, or a scalar float
//!   constant) takes the other operand's type when its value fits there; a float literal
//!   next to an integer becomes `f32`. A literal that does not fit keeps `i32` and the
//!   rules above apply: nothing ever wraps silently.
//! - a scalar next to a vector is broadcast to the vector's lanes.
//!
//! ```
//! use halogen::prelude::*;
//! let p = ImageParam::new(Type::u8(), 1, "p");
//! let x = Var::new("x");
//! assert_eq!((p.at(x) + 1).ty(), Type::u8()); // 1 fits in u8
//! assert_eq!((p.at(x) + 300).ty(), Type::i32()); // 300 does not
//! assert_eq!((p.at(x) * 0.5).ty(), Type::f32()); // float literal next to an integer
//! assert_eq!(x.lt(3).ty(), Type::bool());
//! ```

use super::var::{RDom, RVar, Var};
use crate::ir::{BinOp, CmpOp, Expr, ExprKind, Intrinsic, Type, TypeCode};
use crate::runtime::Element;

/// Converts an integer expression to `i32` (coordinates are `i32`).
///
/// ```
/// use halogen::{Expr, Type};
/// use halogen::lang::expr_ops::to_i32;
/// assert_eq!(to_i32(Expr::from(3u8)).ty(), Type::i32());
/// ```
pub fn to_i32(e: Expr) -> Expr {
    cast(Type::i32(), e)
}

/// Conversion to `ty` (lanes are kept from `e`). Float to integer truncates toward zero;
/// integer to a narrower integer wraps. Scalar constants are converted right away.
///
/// ```
/// use halogen::prelude::*;
/// let e = cast(Type::u8(), Var::new("x"));
/// assert_eq!(e.ty(), Type::u8());
/// assert_eq!(e.to_string(), "uint8(x)");
/// assert_eq!(cast(Type::u8(), 300).to_string(), "(uint8)44");
/// ```
pub fn cast(ty: Type, e: impl Into<Expr>) -> Expr {
    let e = e.into();
    let t = ty.with_lanes(e.ty().lanes);
    if t == e.ty() {
        return e;
    }
    fold_cast(t, &e).unwrap_or_else(|| Expr::cast(t, e))
}

/// The constant `e` converted to `t`, where `e` is a scalar constant and the conversion
/// is well defined (a float out of the target's range is left to the run-time cast).
fn fold_cast(t: Type, e: &Expr) -> Option<Expr> {
    let from = e.ty();
    if !from.is_scalar() || !(t.is_int_or_uint() || t.is_bool() || t.is_float()) {
        return None;
    }
    match e.kind() {
        ExprKind::IntImm(v) => {
            // Unsigned 64-bit values are stored by their bits.
            let as_f64 = if from.is_uint() && from.bits == 64 { *v as u64 as f64 } else { *v as f64 };
            Some(if t.is_float() { Expr::float_imm(t, as_f64) } else { Expr::int_imm(t, *v) })
        }
        ExprKind::FloatImm(b) => {
            let v = b.get();
            if t.is_float() {
                Some(Expr::float_imm(t, v))
            } else if t.is_bool() {
                Some(Expr::bool_imm(v != 0.0))
            } else {
                let tv = v.trunc();
                let fits =
                    tv.is_finite() && tv >= i64::MIN as f64 && tv < i64::MAX as f64 && t.can_represent_int(tv as i64);
                fits.then(|| Expr::int_imm(t, tv as i64))
            }
        }
        _ => None,
    }
}

// ----- literals -----

/// What kind of literal an operand is, for the literal rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LitKind {
    Int,
    Float,
}

/// A scalar `i32` constant (what a Rust integer literal becomes) or a scalar float
/// constant adapts to the other operand's type.
fn literal_kind(e: &Expr) -> Option<LitKind> {
    match e.kind() {
        ExprKind::IntImm(_) if e.ty() == Type::i32() => Some(LitKind::Int),
        ExprKind::FloatImm(_) if e.ty().is_scalar() => Some(LitKind::Float),
        _ => None,
    }
}

/// The literal `lit` retyped to suit `other`, or `None` where the rule does not apply
/// (the value does not fit, or `other` is not a number).
fn adapt_literal(lit: &Expr, other: &Expr) -> Option<Expr> {
    let ot = other.ty().element();
    match literal_kind(lit)? {
        LitKind::Float => {
            let v = lit.as_float()?;
            if ot.is_float() {
                Some(Expr::float_imm(ot, v))
            } else if ot.is_int_or_uint() || ot.is_bool() {
                Some(Expr::float_imm(Type::f32(), v))
            } else {
                None
            }
        }
        LitKind::Int => {
            let v = lit.as_int()?;
            if ot.is_float() {
                Some(Expr::float_imm(ot, v as f64))
            } else if ot.is_int_or_uint() && ot.can_represent_int(v) {
                Some(Expr::int_imm(ot, v))
            } else {
                None
            }
        }
    }
}

/// Applies the literal rule to a pair of operands.
fn adapt_literals(a: Expr, b: Expr) -> (Expr, Expr) {
    match (literal_kind(&a), literal_kind(&b)) {
        (Some(_), None) | (Some(LitKind::Float), Some(LitKind::Int)) => {
            let a2 = adapt_literal(&a, &b).unwrap_or(a);
            (a2, b)
        }
        (None, Some(_)) | (Some(LitKind::Int), Some(LitKind::Float)) => {
            let b2 = adapt_literal(&b, &a).unwrap_or(b);
            (a, b2)
        }
        _ => (a, b),
    }
}

/// Broadcasts a scalar to the lane count of a vector partner.
fn match_lanes(a: Expr, b: Expr) -> (Expr, Expr) {
    let (la, lb) = (a.ty().lanes, b.ty().lanes);
    if la == lb {
        (a, b)
    } else if la == 1 {
        (Expr::broadcast(a, lb), b)
    } else if lb == 1 {
        (a, Expr::broadcast(b, la))
    } else {
        // Two vectors of different widths: left for the type checker to report.
        (a, b)
    }
}

/// The common type of two scalar types under Halide's rules (bool counts as `uint1`).
pub fn common_type(ta: Type, tb: Type) -> Type {
    let (ta, tb) = (ta.element(), tb.element());
    if ta == tb {
        return ta;
    }
    let uintish = |t: Type| t.is_uint() || t.is_bool();
    if ta.is_float() && !tb.is_float() {
        ta
    } else if tb.is_float() && !ta.is_float() {
        tb
    } else if (ta.is_float() && tb.is_float()) || (ta.is_int() && tb.is_int()) || (uintish(ta) && uintish(tb)) {
        // Same kind of number: the wider one.
        if ta.bits >= tb.bits {
            ta
        } else {
            tb
        }
    } else if ta.is_int_or_uint() || ta.is_bool() {
        // One signed, one unsigned (or bool): signed, of the greater width.
        Type::new(TypeCode::Int, ta.bits.max(tb.bits))
    } else {
        // Handles and other oddities: keep the left type; the type checker reports it.
        ta
    }
}

/// Brings two operands to one type (and lane count) with Halide's rules, literals first.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::lang::expr_ops::match_types;
/// let a = cast(Type::u8(), Var::new("x"));
/// let b = cast(Type::i16(), Var::new("y"));
/// let (a, b) = match_types(a, b);
/// assert_eq!((a.ty(), b.ty()), (Type::i16(), Type::i16()));
/// ```
pub fn match_types(a: impl Into<Expr>, b: impl Into<Expr>) -> (Expr, Expr) {
    let (a, b) = adapt_literals(a.into(), b.into());
    let t = common_type(a.ty(), b.ty());
    let a = cast(t, a);
    let b = cast(t, b);
    match_lanes(a, b)
}

// ----- the operations behind the operators -----

/// `a op b` for an arithmetic operator, after [`match_types`].
pub(crate) fn arith(op: BinOp, a: Expr, b: Expr) -> Expr {
    let (a, b) = match_types(a, b);
    Expr::binary(op, a, b)
}

/// `&`, `|`, `^`: logical on bools, bitwise on integers.
fn bitwise(op: BinOp, a: Expr, b: Expr) -> Expr {
    let (a, b) = match_types(a, b);
    if a.ty().element().is_bool() {
        match op {
            BinOp::BitAnd => Expr::binary(BinOp::And, a, b),
            BinOp::BitOr => Expr::binary(BinOp::Or, a, b),
            // Exclusive or of bools is inequality.
            _ => Expr::cmp(CmpOp::Ne, a, b),
        }
    } else {
        Expr::binary(op, a, b)
    }
}

/// Shifts keep the left operand's type; the amount is converted to it.
fn shift(op: BinOp, a: Expr, b: Expr) -> Expr {
    let b = adapt_literal(&b, &a).unwrap_or(b);
    let b = cast(a.ty().element(), b);
    let (a, b) = match_lanes(a, b);
    Expr::binary(op, a, b)
}

/// A comparison after [`match_types`]; the result is bool.
pub(crate) fn compare(op: CmpOp, a: Expr, b: Expr) -> Expr {
    let (a, b) = match_types(a, b);
    Expr::cmp(op, a, b)
}

/// `-a`: constants fold (so `-Expr::from(3)` stays a literal), others are `0 - a`.
fn negate(a: Expr) -> Expr {
    if a.ty().is_scalar() {
        match a.kind() {
            ExprKind::IntImm(v) if !a.ty().is_bool() => return Expr::int_imm(a.ty(), v.wrapping_neg()),
            ExprKind::FloatImm(b) => return Expr::float_imm(a.ty(), -b.get()),
            _ => {}
        }
    }
    Expr::sub(Expr::const_of(a.ty(), 0), a)
}

/// `!a`: logical not of bools, bitwise not of integers.
fn not(a: Expr) -> Expr {
    if a.ty().element().is_bool() {
        Expr::not(a)
    } else {
        Expr::intrinsic(a.ty(), Intrinsic::BitNot, vec![a])
    }
}

fn add(a: Expr, b: Expr) -> Expr {
    arith(BinOp::Add, a, b)
}
fn sub(a: Expr, b: Expr) -> Expr {
    arith(BinOp::Sub, a, b)
}
fn mul(a: Expr, b: Expr) -> Expr {
    arith(BinOp::Mul, a, b)
}
fn div(a: Expr, b: Expr) -> Expr {
    arith(BinOp::Div, a, b)
}
fn rem(a: Expr, b: Expr) -> Expr {
    arith(BinOp::Mod, a, b)
}
fn bitand(a: Expr, b: Expr) -> Expr {
    bitwise(BinOp::BitAnd, a, b)
}
fn bitor(a: Expr, b: Expr) -> Expr {
    bitwise(BinOp::BitOr, a, b)
}
fn bitxor(a: Expr, b: Expr) -> Expr {
    bitwise(BinOp::BitXor, a, b)
}
fn shl(a: Expr, b: Expr) -> Expr {
    shift(BinOp::Shl, a, b)
}
fn shr(a: Expr, b: Expr) -> Expr {
    shift(BinOp::Shr, a, b)
}

// ----- operator impls for every combination of operands -----

/// Rust scalar values usable directly as operands: `x + 1`, `e * 0.5f32`, `b & true`.
/// An `i32` or float value follows the literal rule; the others keep their own type.
///
/// The right operand is generic over this trait (rather than one impl per type) so that
/// `(x * 1.5).ty()` needs no annotation: the operator's output is known before the
/// literal's type is. Sealed: implemented for the primitive numbers and `bool`.
///
/// On the left, Rust values are `i32`, `f32` and `f64` (one impl each); there an
/// unsuffixed float needs the result named before a method call: write
/// `let e: Expr = 0.5 * x;` or `(x * 0.5).ty()`, not `(0.5 * x).ty()`.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// assert_eq!((x * 1.5).ty(), Type::f32());
/// assert_eq!((x.cast::<u8>() + 3u8).ty(), Type::u8());
/// assert_eq!((x * -1).to_string(), "(x * -1)");
/// ```
pub trait Literal: Into<Expr> + Copy + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! literal {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Literal for $t {}
    )*};
}
literal!(i32, f32, f64, u8, u16, u32, u64, i8, i16, i64, bool);

macro_rules! binop_rhs {
    ($Trait:ident, $method:ident, $f:path, $L:ty, [$($R:ty),*]) => {
        $(
            impl std::ops::$Trait<$R> for $L {
                type Output = Expr;
                fn $method(self, rhs: $R) -> Expr {
                    $f(Expr::from(self), Expr::from(rhs))
                }
            }
        )*
        impl<T: Literal> std::ops::$Trait<T> for $L {
            type Output = Expr;
            fn $method(self, rhs: T) -> Expr {
                $f(Expr::from(self), rhs.into())
            }
        }
    };
}

macro_rules! binop_lhs {
    ($Trait:ident, $method:ident, $f:path, [$($L:ty),*], $rs:tt) => {$(
        binop_rhs!($Trait, $method, $f, $L, $rs);
    )*};
}

macro_rules! binop_literal_rhs {
    ($Trait:ident, $method:ident, $f:path, $L:ty, [$($R:ty),*]) => {$(
        impl std::ops::$Trait<$R> for $L {
            type Output = Expr;
            fn $method(self, rhs: $R) -> Expr {
                $f(Expr::from(self), Expr::from(rhs))
            }
        }
    )*};
}

macro_rules! binop_literal_lhs {
    ($Trait:ident, $method:ident, $f:path, [$($L:ty),*], $rs:tt) => {$(
        binop_literal_rhs!($Trait, $method, $f, $L, $rs);
    )*};
}

// A Rust value on the left cannot be generic (orphan rules), so the left side takes the
// three literal types of the design: `2 * x`, `0.5 * x`, `0.5f32 * x`.
macro_rules! binop {
    ($($Trait:ident, $method:ident, $f:path);* $(;)?) => {$(
        binop_lhs!($Trait, $method, $f, [Expr, &Expr, Var, RVar, RDom], [Expr, &Expr, Var, RVar, RDom]);
        binop_literal_lhs!($Trait, $method, $f, [i32, f32, f64], [Expr, &Expr, Var, RVar, RDom]);
    )*};
}

binop!(
    Add, add, add;
    Sub, sub, sub;
    Mul, mul, mul;
    Div, div, div;
    Rem, rem, rem;
    BitAnd, bitand, bitand;
    BitOr, bitor, bitor;
    BitXor, bitxor, bitxor;
    Shl, shl, shl;
    Shr, shr, shr;
);

macro_rules! unop {
    ($($T:ty),*) => {$(
        impl std::ops::Neg for $T {
            type Output = Expr;
            fn neg(self) -> Expr {
                negate(Expr::from(self))
            }
        }
        impl std::ops::Not for $T {
            type Output = Expr;
            fn not(self) -> Expr {
                not(Expr::from(self))
            }
        }
    )*};
}
unop!(Expr, &Expr, Var, RVar, RDom);

// ----- comparison and cast methods -----

/// Comparison and cast methods for everything that converts to an [`Expr`]: `a.lt(b)`,
/// `le`, `gt`, `ge`, `eq`, `ne` (bool results, with the usual type rules) and
/// `a.cast::<T>()`. In the prelude.
///
/// (`==` stays structural equality of expressions; the methods build IR.)
///
/// ```
/// use halogen::prelude::*;
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// assert_eq!(x.lt(y).to_string(), "(x < y)");
/// let e = x + 1;
/// assert_eq!(e.ge(0).to_string(), "((x + 1) >= 0)");
/// assert_eq!(e.cast::<f32>().ty(), Type::f32());
/// ```
pub trait ExprMethods: Sized {
    /// The operand as an expression.
    fn to_expr(self) -> Expr;
    /// `self < o`
    fn lt(self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Lt, self.to_expr(), o.into())
    }
    /// `self <= o`
    fn le(self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Le, self.to_expr(), o.into())
    }
    /// `self > o`
    fn gt(self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Gt, self.to_expr(), o.into())
    }
    /// `self >= o`
    fn ge(self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Ge, self.to_expr(), o.into())
    }
    /// `self == o` as an expression.
    fn eq(self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Eq, self.to_expr(), o.into())
    }
    /// `self != o` as an expression.
    fn ne(self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Ne, self.to_expr(), o.into())
    }
    /// Conversion to the element type `T` (lanes kept).
    fn cast<T: Element>(self) -> Expr {
        cast(T::TYPE, self.to_expr())
    }
}

// `&Expr` (not `Expr`) so that `a.lt(b)` borrows `a`; `Var`, `RVar`, `RDom` are `Copy`
// and take `self` by value, which also makes these methods win over `PartialEq::eq`.
impl ExprMethods for &Expr {
    fn to_expr(self) -> Expr {
        self.clone()
    }
}
impl ExprMethods for Var {
    fn to_expr(self) -> Expr {
        self.expr()
    }
}
impl ExprMethods for RVar {
    fn to_expr(self) -> Expr {
        self.expr()
    }
}
impl ExprMethods for RDom {
    fn to_expr(self) -> Expr {
        self.expr()
    }
}

impl Expr {
    /// `self == o` as a bool expression (structural equality is `==`).
    ///
    /// Inherent so that it wins over `PartialEq::eq`.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let e = Var::new("x") * 2;
    /// assert_eq!(e.eq(4).to_string(), "((x * 2) == 4)");
    /// ```
    pub fn eq(&self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Eq, self.clone(), o.into())
    }
    /// `self != o` as a bool expression (structural inequality is `!=`).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let e = Var::new("x") % 2;
    /// assert_eq!(e.ne(0).ty(), Type::bool());
    /// ```
    pub fn ne(&self, o: impl Into<Expr>) -> Expr {
        compare(CmpOp::Ne, self.clone(), o.into())
    }
}

// ----- conversions from Rust values -----

impl From<i32> for Expr {
    fn from(v: i32) -> Expr {
        Expr::i32(v as i64)
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

/// An `i64` that fits in `i32` is an ordinary (`i32`) literal; a larger one is an `int64`
/// constant.
impl From<i64> for Expr {
    fn from(v: i64) -> Expr {
        if Type::i32().can_represent_int(v) {
            Expr::i32(v)
        } else {
            Expr::int_imm(Type::i64(), v)
        }
    }
}

impl From<f32> for Expr {
    fn from(v: f32) -> Expr {
        Expr::float_imm(Type::f32(), v as f64)
    }
}

impl From<f64> for Expr {
    fn from(v: f64) -> Expr {
        Expr::float_imm(Type::f64(), v)
    }
}

impl From<bool> for Expr {
    fn from(v: bool) -> Expr {
        Expr::bool_imm(v)
    }
}

impl From<u64> for Expr {
    fn from(v: u64) -> Expr {
        // Stored by its bits, as unsigned constants are.
        Expr::int_imm(Type::u64(), v as i64)
    }
}

macro_rules! from_typed_int {
    ($($t:ty => $ty:expr),*) => {$(
        /// A constant of exactly this type (it does not adapt like an `i32` literal).
        impl From<$t> for Expr {
            fn from(v: $t) -> Expr {
                Expr::int_imm($ty, v as i64)
            }
        }
    )*};
}
from_typed_int!(u8 => Type::u8(), u16 => Type::u16(), u32 => Type::u32(), i8 => Type::i8(), i16 => Type::i16());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::param::ImageParam;

    fn typed(t: Type, name: &str) -> Expr {
        Expr::var(t, name)
    }

    #[test]
    fn coercion_table() {
        let u8e = typed(Type::u8(), "a");
        let u16e = typed(Type::u16(), "b");
        let i8e = typed(Type::i8(), "c");
        let i16e = typed(Type::i16(), "d");
        let i32e = typed(Type::i32(), "e");
        let u32e = typed(Type::u32(), "g");
        let f32e = typed(Type::f32(), "h");
        let f64e = typed(Type::f64(), "i");
        let be = typed(Type::bool(), "j");
        assert_eq!((&u8e + 1).ty(), Type::u8());
        assert_eq!((1 + &u8e).ty(), Type::u8());
        assert_eq!((&u8e + &i16e).ty(), Type::i16());
        assert_eq!((&u8e + &i8e).ty(), Type::i8());
        assert_eq!((&u16e + &i8e).ty(), Type::i16());
        assert_eq!((&u32e + &i16e).ty(), Type::i32());
        assert_eq!((&u8e + &u16e).ty(), Type::u16());
        assert_eq!((&i8e * &i32e).ty(), Type::i32());
        assert_eq!((&u16e + 1.5).ty(), Type::f32());
        assert_eq!((1.5f32 + &u16e).ty(), Type::f32());
        assert_eq!((&i32e + &f64e).ty(), Type::f64());
        assert_eq!((&f32e + &f64e).ty(), Type::f64());
        assert_eq!((&f64e * 0.5f32).ty(), Type::f64());
        assert_eq!((&f32e * 0.5).ty(), Type::f32());
        assert_eq!((&f32e + 2).ty(), Type::f32());
        assert_eq!((&u8e + 300).ty(), Type::i32());
        assert_eq!((&u8e - -1).ty(), Type::i32());
        assert_eq!((&be + &i16e).ty(), Type::i16());
        assert_eq!((&be + &u8e).ty(), Type::u8());
        assert_eq!((&be + 1).ty(), Type::i32());
        assert_eq!((&u32e + Expr::from(5_000_000_000i64)).ty(), Type::i64());
        assert_eq!((Expr::from(2) * 1.5).ty(), Type::f32());
        assert_eq!((Expr::from(2) + 3).ty(), Type::i32());
        assert_eq!((&u8e + 3u8).ty(), Type::u8());
        assert_eq!((&i32e + 3u8).ty(), Type::i32());
    }

    #[test]
    fn literal_values_are_kept() {
        let u8e = typed(Type::u8(), "a");
        let e = &u8e + 300;
        assert_eq!(e.to_string(), "(int32(a) + 300)");
        let e = &u8e + 255;
        assert_eq!(e.to_string(), "(a + (uint8)255)");
        let e = typed(Type::f32(), "f") * 3;
        assert_eq!(e.to_string(), "(f * 3.0f)");
        let e = typed(Type::i16(), "s") * 0.25;
        assert_eq!(e.to_string(), "(float32(s) * 0.25f)");
    }

    #[test]
    fn vectors_broadcast_scalars() {
        let v = typed(Type::u16().with_lanes(8), "v");
        let e = &v + 1;
        assert_eq!(e.ty(), Type::u16().with_lanes(8));
        let s = typed(Type::i32(), "s");
        let e = &s * &v;
        assert_eq!(e.ty(), Type::i32().with_lanes(8));
        assert_eq!(v.lt(3).ty(), Type::bool().with_lanes(8));
    }

    #[test]
    fn operators_on_all_operand_kinds() {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let r = RDom::new(&[(Expr::from(0), Expr::from(4))]);
        assert_eq!((x + y).to_string(), "(x + y)");
        assert_eq!((x - 1).to_string(), "(x - 1)");
        assert_eq!((2 * x).to_string(), "(2 * x)");
        assert_eq!((x / 2).to_string(), "(x / 2)");
        assert_eq!((x % 3).to_string(), "(x % 3)");
        assert_eq!((-x).to_string(), "(0 - x)");
        assert_eq!((-Expr::from(3)).to_string(), "-3");
        assert_eq!((-Expr::from(1.5f32)).to_string(), "-1.5f");
        let e = x + r;
        assert!(e.to_string().starts_with("(x + r$"));
        let e = r.x() * y + &(x + 1);
        assert_eq!(e.ty(), Type::i32());
        assert_eq!((x * 1.5).ty(), Type::f32());
        // An unsuffixed float on the left needs its result's type named (f32 and f64 both
        // qualify until inference falls back to f64).
        let e: Expr = 1.5 * x;
        assert_eq!(e.ty(), Type::f32());
        assert_eq!((1.5f32 * x).ty(), Type::f32());
        assert_eq!((2 * x).ty(), Type::i32());
        assert_eq!((x << 2).to_string(), "(x << 2)");
        assert_eq!((x >> 1).to_string(), "(x >> 1)");
        assert_eq!((x ^ y).to_string(), "(x ^ y)");
        assert_eq!((x & 7).to_string(), "(x & 7)");
        assert_eq!((!x).to_string(), "bitnot(x)");
    }

    #[test]
    fn bool_operators_are_logical() {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let c = x.lt(y) & x.gt(0);
        assert_eq!(c.to_string(), "((x < y) && (x > 0))");
        let c = x.le(y) | !x.ge(0);
        assert_eq!(c.to_string(), "((x <= y) || !(x >= 0))");
        let c = x.eq(1) ^ y.ne(2);
        assert_eq!(c.ty(), Type::bool());
        assert!(matches!(c.kind(), ExprKind::Cmp(CmpOp::Ne, _, _)));
    }

    #[test]
    fn comparisons_coerce() {
        let u8e = typed(Type::u8(), "a");
        let c = u8e.lt(10);
        assert_eq!(c.to_string(), "(a < (uint8)10)");
        let c = u8e.ge(1.5);
        assert_eq!(c.to_string(), "(float32(a) >= 1.5f)");
        let e = Var::new("x") + 0;
        assert_eq!(e.eq(0).ty(), Type::bool());
        // `==` is still structural equality.
        assert!(e == Var::new("x") + 0);
    }

    #[test]
    fn shifts_keep_left_type() {
        let u16e = typed(Type::u16(), "a");
        let e = &u16e << 3;
        assert_eq!(e.ty(), Type::u16());
        let e = &u16e >> Var::new("k");
        assert_eq!(e.to_string(), "(a >> uint16(k))");
    }

    #[test]
    fn conversions() {
        assert_eq!(Expr::from(1.5f32).ty(), Type::f32());
        assert_eq!(Expr::from(1.5f64).ty(), Type::f64());
        assert_eq!(Expr::from(true).to_string(), "true");
        assert_eq!(Expr::from(7u8).ty(), Type::u8());
        assert_eq!(Expr::from(7u16).ty(), Type::u16());
        assert_eq!(Expr::from(7u32).ty(), Type::u32());
        assert_eq!(Expr::from(u64::MAX).to_string(), "(uint64)18446744073709551615");
        assert_eq!(Expr::from(-7i8).ty(), Type::i8());
        assert_eq!(Expr::from(-7i16).ty(), Type::i16());
        assert_eq!(Expr::from(7i64).ty(), Type::i32());
        assert_eq!(Expr::from(1i64 << 40).ty(), Type::i64());
        assert_eq!(Expr::from(1i64 << 40).as_int(), Some(1 << 40));
    }

    #[test]
    fn cast_methods() {
        let x = Var::new("x");
        assert_eq!(x.cast::<u8>().to_string(), "uint8(x)");
        let e = x + 1;
        assert_eq!(e.cast::<f64>().ty(), Type::f64());
        assert_eq!(e.cast::<i32>(), e);
        assert_eq!(cast(Type::u8(), 3).to_string(), "(uint8)3");
        assert_eq!(cast(Type::u8(), 256 + 7).as_int(), Some(7));
        assert_eq!(cast(Type::i32(), 2.9f32).as_int(), Some(2));
        assert_eq!(cast(Type::i32(), -2.9f32).as_int(), Some(-2));
        assert_eq!(cast(Type::u8(), 1000.0f32).to_string(), "uint8(1000.0f)");
        assert_eq!(cast(Type::f32(), Expr::from(u64::MAX)).as_float(), Some(u64::MAX as f32 as f64));
        assert_eq!(cast(Type::bool(), 0.5f32).to_string(), "true");
        let v = typed(Type::i32().with_lanes(4), "v");
        assert_eq!(v.cast::<f32>().ty(), Type::f32().with_lanes(4));
    }

    #[test]
    fn image_call_arithmetic_prints() {
        let input = ImageParam::new(Type::u16(), 2, "in_ops");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let e = (input.at((x - 1, y)) + input.at((x, y))) / 3;
        assert_eq!(e.ty(), Type::u16());
        assert_eq!(e.to_string(), "((in_ops((x - 1), y) + in_ops(x, y)) / (uint16)3)");
    }
}
