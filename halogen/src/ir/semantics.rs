//! The meaning of every scalar operation of the IR, in one place.
//!
//! The simplifier's constant folding, the reference interpreter and (by tests) every code
//! generator must agree bit for bit, so all of them evaluate scalar operations through the
//! functions here. The rules are Halide's:
//!
//! - integer arithmetic wraps to the type's width ([`Type::wrap_int`]);
//! - integer `/` and `%` are Euclidean: the remainder is never negative, so for a positive
//!   divisor `/` is floor division; `x / 0 == 0` and `x % 0 == 0`;
//! - float `%` is `a - b * floor(a / b)`;
//! - f32 arithmetic and math functions are done in f32 (each result rounded to f32), so
//!   they match C's `expf`, `logf`, `powf`, ... closely;
//! - `min(a, b) = if b < a { b } else { a }`, `max(a, b) = if a < b { b } else { a }`;
//! - shift amounts are taken modulo the bit width; `>>` is arithmetic for signed and logical
//!   for unsigned integers;
//! - casts: int→int wraps, float→int truncates toward zero and saturates (NaN → 0),
//!   int→float rounds to nearest, anything→bool is `!= 0`;
//! - `round` is half to even; `abs` of a signed integer gives the unsigned type of the same
//!   width (`abs(-128i8) == 128u8`).
//!
//! Values are [`Scalar`]s: integers (and bools, 0 or 1) as `i64` — `u64` by its bit
//! pattern — and floats as `f64` (an f32 value is held exactly). Operands are assumed to be
//! of the type given; integer operands are wrapped to it first, so a stray out-of-range value
//! cannot change the meaning of an operation.
//!
//! ```
//! use halogen::ir::semantics::{binary, Scalar};
//! use halogen::ir::{BinOp, Type};
//! // Euclidean division and remainder.
//! assert_eq!(binary(BinOp::Div, Type::i32(), Scalar::Int(-7), Scalar::Int(2)), Scalar::Int(-4));
//! assert_eq!(binary(BinOp::Mod, Type::i32(), Scalar::Int(-7), Scalar::Int(2)), Scalar::Int(1));
//! // Wrap-around.
//! assert_eq!(binary(BinOp::Add, Type::u8(), Scalar::Int(250), Scalar::Int(10)), Scalar::Int(4));
//! ```

use super::expr::{BinOp, CmpOp, Expr, ExprKind, Intrinsic};
use super::types::{Type, TypeCode};

/// The largest allocation, in elements, an `Allocate` may ask for: a larger one (or one with
/// a negative extent) is a run-time error with the same text on every back end.
///
/// ```
/// assert_eq!(halogen::ir::semantics::MAX_ALLOCATION_ELEMENTS, 1 << 31);
/// ```
pub const MAX_ALLOCATION_ELEMENTS: u64 = 1 << 31;

/// One lane's value: an integer or bool (as `i64`; `u64` by its bits) or a float (as `f64`).
///
/// ```
/// use halogen::ir::semantics::Scalar;
/// use halogen::{Expr, Type};
/// let e = Scalar::Int(300).to_expr(Type::u8());
/// assert_eq!(Scalar::from_expr(&e), Some(Scalar::Int(44)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// An integer or bool value.
    Int(i64),
    /// A float value.
    Float(f64),
}

impl Scalar {
    /// The value of an `IntImm` or `FloatImm` node; `None` for anything else.
    ///
    /// ```
    /// use halogen::ir::semantics::Scalar;
    /// use halogen::{Expr, Type};
    /// assert_eq!(Scalar::from_expr(&Expr::i32(5)), Some(Scalar::Int(5)));
    /// assert_eq!(Scalar::from_expr(&Expr::float_imm(Type::f32(), 0.5)), Some(Scalar::Float(0.5)));
    /// assert_eq!(Scalar::from_expr(&Expr::var(Type::i32(), "x")), None);
    /// ```
    pub fn from_expr(e: &Expr) -> Option<Scalar> {
        match e.kind() {
            ExprKind::IntImm(v) => Some(Scalar::Int(*v)),
            ExprKind::FloatImm(b) => Some(Scalar::Float(b.get())),
            _ => None,
        }
    }

    /// A constant expression of type `ty` holding this value (converted to `ty` as
    /// [`cast`] would if the kinds differ: a float given for an integer type is truncated
    /// and saturated). A vector `ty` gives a `Broadcast` of the scalar constant.
    ///
    /// ```
    /// use halogen::ir::semantics::Scalar;
    /// use halogen::Type;
    /// assert_eq!(Scalar::Int(-1).to_expr(Type::u16()).as_int(), Some(65535));
    /// assert_eq!(Scalar::Float(1.5).to_expr(Type::f64()).as_float(), Some(1.5));
    /// ```
    pub fn to_expr(self, ty: Type) -> Expr {
        let el = ty.element();
        let e = match (el.code, self) {
            (TypeCode::Float, Scalar::Float(f)) => Expr::float_imm(el, f),
            (TypeCode::Float, Scalar::Int(i)) => Expr::float_imm(el, i as f64),
            (TypeCode::Int | TypeCode::UInt | TypeCode::Bool, v) => {
                let i = match v {
                    Scalar::Int(i) => i,
                    Scalar::Float(_) => cast(Type::f64(), el, v).as_i64(),
                };
                Expr::int_imm(el, i)
            }
            (TypeCode::Handle, v) => Expr::make(el, ExprKind::IntImm(v.as_i64())),
        };
        if ty.is_vector() {
            Expr::broadcast(e, ty.lanes)
        } else {
            e
        }
    }

    /// The integer value (a float is truncated toward zero, saturating).
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::Int(i) => i,
            Scalar::Float(f) => f as i64,
        }
    }

    /// The float value (an integer is converted to the nearest f64).
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        }
    }

    /// True unless the value is zero (a bool's truth).
    pub fn is_true(self) -> bool {
        match self {
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }
    }
}

/// An integer operand wrapped to `ty` (a float operand is converted first).
fn int_of(ty: Type, v: Scalar) -> i64 {
    match v {
        Scalar::Int(i) => ty.wrap_int(i),
        Scalar::Float(_) => cast(Type::f64(), ty, v).as_i64(),
    }
}

fn is_u64(ty: Type) -> bool {
    ty.code == TypeCode::UInt && ty.bits >= 64
}

fn is_f32(ty: Type) -> bool {
    ty.bits == 32
}

/// Applies a float operation in the precision of `ty` (f32 or f64).
fn float_op(ty: Type, a: f64, b: f64, f32op: impl Fn(f32, f32) -> f32, f64op: impl Fn(f64, f64) -> f64) -> f64 {
    if is_f32(ty) {
        f32op(a as f32, b as f32) as f64
    } else {
        f64op(a, b)
    }
}

/// Integer division, Euclidean (`a - q*b` in `[0, |b|)`), `x / 0 == 0`, in `ty`'s width.
fn int_div(ty: Type, a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    if is_u64(ty) {
        return ((a as u64) / (b as u64)) as i64;
    }
    // wrapping: i64::MIN / -1 overflows; the wrapped result is what every back end gives.
    ty.wrap_int(a.wrapping_div_euclid(b))
}

/// Integer remainder, Euclidean (in `[0, |b|)`), `x % 0 == 0`.
fn int_mod(ty: Type, a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    if is_u64(ty) {
        return ((a as u64) % (b as u64)) as i64;
    }
    ty.wrap_int(a.wrapping_rem_euclid(b))
}

/// Ordering of two wrapped integers of type `ty` (unsigned for u64).
fn int_lt(ty: Type, a: i64, b: i64) -> bool {
    if is_u64(ty) {
        (a as u64) < (b as u64)
    } else {
        a < b
    }
}

/// Evaluates `a op b` for operands of the scalar type `ty`.
///
/// ```
/// use halogen::ir::semantics::{binary, Scalar};
/// use halogen::ir::{BinOp, Type};
/// assert_eq!(binary(BinOp::Div, Type::i32(), Scalar::Int(7), Scalar::Int(-2)), Scalar::Int(-3));
/// assert_eq!(binary(BinOp::Div, Type::i32(), Scalar::Int(7), Scalar::Int(0)), Scalar::Int(0));
/// assert_eq!(binary(BinOp::Shr, Type::u8(), Scalar::Int(0x80), Scalar::Int(9)), Scalar::Int(0x40));
/// assert_eq!(binary(BinOp::Mod, Type::f32(), Scalar::Float(-1.0), Scalar::Float(3.0)), Scalar::Float(2.0));
/// ```
pub fn binary(op: BinOp, ty: Type, a: Scalar, b: Scalar) -> Scalar {
    if ty.is_float() {
        return binary_float(op, ty, a, b);
    }
    let (x, y) = (int_of(ty, a), int_of(ty, b));
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => int_div(ty, x, y),
        BinOp::Mod => int_mod(ty, x, y),
        BinOp::Min => {
            if int_lt(ty, y, x) {
                y
            } else {
                x
            }
        }
        BinOp::Max => {
            if int_lt(ty, x, y) {
                y
            } else {
                x
            }
        }
        BinOp::BitAnd => x & y,
        BinOp::BitOr => x | y,
        BinOp::BitXor => x ^ y,
        BinOp::Shl => x.wrapping_shl(shift_amount(ty, y)),
        BinOp::Shr => {
            let s = shift_amount(ty, y);
            if ty.is_int() {
                // sign-extended in i64, so this is the arithmetic shift of the narrow type
                x.wrapping_shr(s)
            } else {
                // zero-extended (or u64 bits): logical shift
                ((x as u64).wrapping_shr(s)) as i64
            }
        }
        BinOp::And => (x != 0 && y != 0) as i64,
        BinOp::Or => (x != 0 || y != 0) as i64,
    };
    Scalar::Int(ty.wrap_int(r))
}

/// Shift amount modulo the bit width (`bits` is a power of two for every integer type).
fn shift_amount(ty: Type, y: i64) -> u32 {
    let bits = (ty.bits as i64).max(1);
    (y & (bits - 1)) as u32
}

fn binary_float(op: BinOp, ty: Type, a: Scalar, b: Scalar) -> Scalar {
    let (x, y) = (a.as_f64(), b.as_f64());
    let r = match op {
        BinOp::Add => float_op(ty, x, y, |p, q| p + q, |p, q| p + q),
        BinOp::Sub => float_op(ty, x, y, |p, q| p - q, |p, q| p - q),
        BinOp::Mul => float_op(ty, x, y, |p, q| p * q, |p, q| p * q),
        BinOp::Div => float_op(ty, x, y, |p, q| p / q, |p, q| p / q),
        BinOp::Mod => float_op(ty, x, y, |p, q| p - q * (p / q).floor(), |p, q| p - q * (p / q).floor()),
        BinOp::Min => {
            if y < x {
                y
            } else {
                x
            }
        }
        BinOp::Max => {
            if x < y {
                y
            } else {
                x
            }
        }
        // Bit operations on floats are not produced by the front end; act on the bits so
        // the result is at least deterministic.
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            let (p, q) = (float_bits(ty, x), float_bits(ty, y));
            let r = match op {
                BinOp::BitAnd => p & q,
                BinOp::BitOr => p | q,
                _ => p ^ q,
            };
            float_from_bits(ty, r)
        }
        BinOp::Shl | BinOp::Shr => x,
        BinOp::And => return Scalar::Int((x != 0.0 && y != 0.0) as i64),
        BinOp::Or => return Scalar::Int((x != 0.0 || y != 0.0) as i64),
    };
    Scalar::Float(r)
}

fn float_bits(ty: Type, v: f64) -> u64 {
    if is_f32(ty) {
        (v as f32).to_bits() as u64
    } else {
        v.to_bits()
    }
}

fn float_from_bits(ty: Type, bits: u64) -> f64 {
    if is_f32(ty) {
        f32::from_bits(bits as u32) as f64
    } else {
        f64::from_bits(bits)
    }
}

/// Evaluates the comparison `a op b` of operands of the scalar type `ty`.
///
/// ```
/// use halogen::ir::semantics::{compare, Scalar};
/// use halogen::ir::{CmpOp, Type};
/// assert!(compare(CmpOp::Lt, Type::i32(), Scalar::Int(-1), Scalar::Int(0)));
/// // u64 compares unsigned: the bit pattern of -1 is u64::MAX.
/// assert!(compare(CmpOp::Gt, Type::u64(), Scalar::Int(-1), Scalar::Int(0)));
/// assert!(!compare(CmpOp::Eq, Type::f32(), Scalar::Float(f64::NAN), Scalar::Float(f64::NAN)));
/// ```
pub fn compare(op: CmpOp, ty: Type, a: Scalar, b: Scalar) -> bool {
    if ty.is_float() {
        let (x, y) = (a.as_f64(), b.as_f64());
        return match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
        };
    }
    let (x, y) = (int_of(ty, a), int_of(ty, b));
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => x != y,
        CmpOp::Lt => int_lt(ty, x, y),
        CmpOp::Le => !int_lt(ty, y, x),
        CmpOp::Gt => int_lt(ty, y, x),
        CmpOp::Ge => !int_lt(ty, x, y),
    }
}

/// Converts `v` of the scalar type `from` to the scalar type `to`.
///
/// ```
/// use halogen::ir::semantics::{cast, Scalar};
/// use halogen::Type;
/// assert_eq!(cast(Type::i32(), Type::u8(), Scalar::Int(-1)), Scalar::Int(255));
/// assert_eq!(cast(Type::f32(), Type::u8(), Scalar::Float(300.7)), Scalar::Int(255));
/// assert_eq!(cast(Type::f32(), Type::i32(), Scalar::Float(-2.9)), Scalar::Int(-2));
/// assert_eq!(cast(Type::f64(), Type::i32(), Scalar::Float(f64::NAN)), Scalar::Int(0));
/// assert_eq!(cast(Type::i32(), Type::bool(), Scalar::Int(7)), Scalar::Int(1));
/// ```
pub fn cast(from: Type, to: Type, v: Scalar) -> Scalar {
    match to.code {
        TypeCode::Bool => Scalar::Int(v.is_true() as i64),
        TypeCode::Int | TypeCode::UInt => match v {
            Scalar::Int(i) => {
                // Re-wrap in the source type first so that u64 (bit pattern) and narrower
                // sources sign- or zero-extend correctly.
                let i = if from.is_int_or_uint() || from.is_bool() { from.wrap_int(i) } else { i };
                Scalar::Int(to.wrap_int(i))
            }
            Scalar::Float(f) => Scalar::Int(float_to_int(to, f)),
        },
        TypeCode::Float => {
            let f64_value = match v {
                Scalar::Float(f) => f,
                Scalar::Int(i) => {
                    // Convert straight to the target precision: i64 -> f64 -> f32 could
                    // round twice.
                    let i = if from.is_int_or_uint() || from.is_bool() { from.wrap_int(i) } else { i };
                    return Scalar::Float(int_to_float(from, to, i));
                }
            };
            if is_f32(to) {
                Scalar::Float(f64_value as f32 as f64)
            } else {
                Scalar::Float(f64_value)
            }
        }
        TypeCode::Handle => v,
    }
}

/// Float to integer: truncation toward zero, saturating to `to`'s range, NaN to zero.
fn float_to_int(to: Type, f: f64) -> i64 {
    match (to.code, to.bits) {
        (TypeCode::UInt, 64) => f as u64 as i64,
        (TypeCode::Int, 64) => f as i64,
        _ => {
            // Rust's `as` saturates and maps NaN to 0; clamp to the narrower range after.
            let i = f as i64;
            let lo = to.min_int().unwrap_or(i64::MIN);
            let hi = to.max_int().unwrap_or(i64::MAX);
            i.clamp(lo, hi)
        }
    }
}

fn int_to_float(from: Type, to: Type, i: i64) -> f64 {
    let unsigned = is_u64(from);
    match (is_f32(to), unsigned) {
        (true, true) => (i as u64) as f32 as f64,
        (true, false) => i as f32 as f64,
        (false, true) => (i as u64) as f64,
        (false, false) => i as f64,
    }
}

/// Logical not of a bool (any non-zero value is true).
///
/// ```
/// use halogen::ir::semantics::{not, Scalar};
/// assert_eq!(not(Scalar::Int(0)), Scalar::Int(1));
/// assert_eq!(not(Scalar::Int(1)), Scalar::Int(0));
/// ```
pub fn not(v: Scalar) -> Scalar {
    Scalar::Int(!v.is_true() as i64)
}

/// Evaluates an intrinsic with arguments of types `arg_types` (scalar) giving a value of
/// the scalar type `result`.
///
/// Math functions (`sqrt`, `exp`, `log`, `pow`, `sin`, `cos`, `tan`, `atan2`, `floor`,
/// `ceil`, `round`, `trunc`) compute in the float type of the result (f32 with f32
/// methods), converting integer arguments first; `floor`/`ceil`/`round`/`trunc` of an
/// integer are the integer itself. `abs` of a signed integer gives its magnitude in the
/// unsigned type of the same width. `reinterpret` copies bits; `bitnot` flips them.
///
/// ```
/// use halogen::ir::semantics::{intrinsic, Scalar};
/// use halogen::ir::Intrinsic;
/// use halogen::Type;
/// let r = intrinsic(Intrinsic::Round, &[Type::f32()], Type::f32(), &[Scalar::Float(2.5)]);
/// assert_eq!(r, Scalar::Float(2.0));
/// let a = intrinsic(Intrinsic::Abs, &[Type::i8()], Type::u8(), &[Scalar::Int(-128)]);
/// assert_eq!(a, Scalar::Int(128));
/// let bits = intrinsic(Intrinsic::Reinterpret, &[Type::f32()], Type::u32(), &[Scalar::Float(1.0)]);
/// assert_eq!(bits, Scalar::Int(0x3f80_0000));
/// ```
pub fn intrinsic(which: Intrinsic, arg_types: &[Type], result: Type, args: &[Scalar]) -> Scalar {
    let arg_ty = |i: usize| arg_types.get(i).copied().unwrap_or(result);
    let arg = |i: usize| args.get(i).copied().unwrap_or(Scalar::Int(0));
    match which {
        Intrinsic::Abs => {
            let t = arg_ty(0);
            match (t.code, arg(0)) {
                (TypeCode::Float, v) => {
                    let a = v.as_f64().abs();
                    cast(t, result, Scalar::Float(a))
                }
                (_, v) => {
                    let i = int_of(t, v);
                    // wrapping_abs(i64::MIN) is i64::MIN, whose bits are 2^63 as a u64.
                    let m = if t.is_int() { i.wrapping_abs() } else { i };
                    let out = if result.is_int_or_uint() { result } else { t.with_code(TypeCode::UInt) };
                    let r = Scalar::Int(out.wrap_int(m));
                    if out == result {
                        r
                    } else {
                        cast(out, result, r)
                    }
                }
            }
        }
        Intrinsic::BitNot => {
            let t = arg_ty(0);
            if t.is_bool() {
                return not(arg(0));
            }
            if t.is_float() {
                let b = float_bits(t, arg(0).as_f64());
                return Scalar::Float(float_from_bits(t, !b));
            }
            Scalar::Int(t.wrap_int(!int_of(t, arg(0))))
        }
        Intrinsic::Reinterpret => reinterpret(arg_ty(0), result, arg(0)),
        Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round | Intrinsic::Trunc if !arg_ty(0).is_float() => {
            // Already an integer: rounding is the identity.
            cast(arg_ty(0), result, arg(0))
        }
        _ => {
            // Float math in the result's precision (or the argument's if the result is
            // not a float).
            let ft = if result.is_float() {
                result
            } else if arg_ty(0).is_float() {
                arg_ty(0)
            } else {
                Type::f64()
            };
            let x = cast(arg_ty(0), ft, arg(0)).as_f64();
            let y = if args.len() > 1 { cast(arg_ty(1), ft, arg(1)).as_f64() } else { 0.0 };
            let r = if is_f32(ft) { math_f32(which, x as f32, y as f32) as f64 } else { math_f64(which, x, y) };
            cast(ft, result, Scalar::Float(r))
        }
    }
}

fn math_f32(which: Intrinsic, x: f32, y: f32) -> f32 {
    match which {
        Intrinsic::Sqrt => x.sqrt(),
        // Halogen's own, bit for bit what the C back ends compute (see `float_math`).
        Intrinsic::Exp => super::float_math::exp_f32(x),
        Intrinsic::Log => super::float_math::log_f32(x),
        Intrinsic::Pow => super::float_math::pow_f32(x, y),
        Intrinsic::Floor => x.floor(),
        Intrinsic::Ceil => x.ceil(),
        Intrinsic::Round => x.round_ties_even(),
        Intrinsic::Trunc => x.trunc(),
        Intrinsic::Sin => super::float_math::sin_f32(x),
        Intrinsic::Cos => super::float_math::cos_f32(x),
        Intrinsic::Tan => x.tan(),
        Intrinsic::Atan2 => super::float_math::atan2_f32(x, y),
        Intrinsic::Atan => super::float_math::atan_f32(x),
        Intrinsic::Tanh => super::float_math::tanh_f32(x),
        Intrinsic::FastExp => super::float_math::fast_exp_f32(x),
        Intrinsic::FastLog => super::float_math::fast_log_f32(x),
        Intrinsic::FastPow => super::float_math::fast_pow_f32(x, y),
        Intrinsic::Abs => x.abs(),
        // handled by the caller
        Intrinsic::Reinterpret | Intrinsic::BitNot => x,
    }
}

fn math_f64(which: Intrinsic, x: f64, y: f64) -> f64 {
    match which {
        Intrinsic::Sqrt => x.sqrt(),
        Intrinsic::Exp => x.exp(),
        Intrinsic::Log => x.ln(),
        Intrinsic::Pow => x.powf(y),
        Intrinsic::Floor => x.floor(),
        Intrinsic::Ceil => x.ceil(),
        Intrinsic::Round => x.round_ties_even(),
        Intrinsic::Trunc => x.trunc(),
        Intrinsic::Sin => x.sin(),
        Intrinsic::Cos => x.cos(),
        Intrinsic::Tan => x.tan(),
        Intrinsic::Atan2 => x.atan2(y),
        Intrinsic::Atan => x.atan(),
        Intrinsic::Tanh => x.tanh(),
        // In double precision the fast versions are the accurate ones.
        Intrinsic::FastExp => x.exp(),
        Intrinsic::FastLog => x.ln(),
        Intrinsic::FastPow => x.powf(y),
        Intrinsic::Abs => x.abs(),
        Intrinsic::Reinterpret | Intrinsic::BitNot => x,
    }
}

/// Bit cast between scalar types of the same width (a narrower source is zero-extended,
/// a wider one truncated, so mismatched widths are at least deterministic).
fn reinterpret(from: Type, to: Type, v: Scalar) -> Scalar {
    let bits: u64 = match from.code {
        TypeCode::Float => float_bits(from, v.as_f64()),
        _ => {
            let i = int_of(from, v) as u64;
            if from.bits >= 64 {
                i
            } else {
                i & ((1u64 << from.bits) - 1)
            }
        }
    };
    match to.code {
        TypeCode::Float => Scalar::Float(float_from_bits(to, bits)),
        _ => Scalar::Int(to.wrap_int(bits as i64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> Scalar {
        Scalar::Int(v)
    }
    fn f(v: f64) -> Scalar {
        Scalar::Float(v)
    }
    fn bin(op: BinOp, ty: Type, a: i64, b: i64) -> i64 {
        match binary(op, ty, i(a), i(b)) {
            Scalar::Int(v) => v,
            s => panic!("expected an integer, got {s:?}"),
        }
    }

    #[test]
    fn div_mod_every_sign() {
        let t = Type::i32();
        // (a, b, a / b, a % b)
        let cases = [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -3, 1),
            (-7, -2, 4, 1),
            (6, 3, 2, 0),
            (-6, 3, -2, 0),
            (6, -3, -2, 0),
            (-6, -3, 2, 0),
            (0, 5, 0, 0),
            (0, -5, 0, 0),
            (1, 5, 0, 1),
            (-1, 5, -1, 4),
            (1, -5, 0, 1),
            (-1, -5, 1, 4),
            (5, 0, 0, 0),
            (-5, 0, 0, 0),
            (0, 0, 0, 0),
        ];
        for (a, b, q, r) in cases {
            assert_eq!(bin(BinOp::Div, t, a, b), q, "{a} / {b}");
            assert_eq!(bin(BinOp::Mod, t, a, b), r, "{a} % {b}");
            if b != 0 {
                // the defining identity
                assert_eq!(q * b + r, a);
                assert!((0..b.abs()).contains(&r));
            }
        }
    }

    #[test]
    fn div_overflow_wraps() {
        assert_eq!(bin(BinOp::Div, Type::i32(), i32::MIN as i64, -1), i32::MIN as i64);
        assert_eq!(bin(BinOp::Mod, Type::i32(), i32::MIN as i64, -1), 0);
        assert_eq!(bin(BinOp::Div, Type::i64(), i64::MIN, -1), i64::MIN);
        assert_eq!(bin(BinOp::Mod, Type::i64(), i64::MIN, -1), 0);
        assert_eq!(bin(BinOp::Div, Type::i8(), -128, -1), -128);
    }

    #[test]
    fn unsigned_div_mod() {
        assert_eq!(bin(BinOp::Div, Type::u8(), 200, 7), 28);
        assert_eq!(bin(BinOp::Mod, Type::u8(), 200, 7), 4);
        // u64 values are bit patterns: -1 is u64::MAX.
        assert_eq!(bin(BinOp::Div, Type::u64(), -1, 2), (u64::MAX / 2) as i64);
        assert_eq!(bin(BinOp::Mod, Type::u64(), -1, 10), (u64::MAX % 10) as i64);
        assert_eq!(bin(BinOp::Div, Type::u32(), 5, 0), 0);
        assert_eq!(bin(BinOp::Mod, Type::u16(), 5, 0), 0);
    }

    #[test]
    fn wrap_around() {
        assert_eq!(bin(BinOp::Add, Type::u8(), 255, 1), 0);
        assert_eq!(bin(BinOp::Sub, Type::u8(), 0, 1), 255);
        assert_eq!(bin(BinOp::Add, Type::i8(), 127, 1), -128);
        assert_eq!(bin(BinOp::Mul, Type::i16(), 300, 300), (90000i64 as i16) as i64);
        assert_eq!(bin(BinOp::Add, Type::i32(), i32::MAX as i64, 1), i32::MIN as i64);
        assert_eq!(bin(BinOp::Mul, Type::u32(), 1 << 31, 2), 0);
        assert_eq!(bin(BinOp::Add, Type::i64(), i64::MAX, 1), i64::MIN);
        assert_eq!(bin(BinOp::Sub, Type::u16(), 3, 5), 65534);
        assert_eq!(bin(BinOp::Mul, Type::u64(), -1, -1), 1);
    }

    #[test]
    fn min_max_shifts_bits() {
        assert_eq!(bin(BinOp::Min, Type::i32(), -3, 2), -3);
        assert_eq!(bin(BinOp::Max, Type::i32(), -3, 2), 2);
        assert_eq!(bin(BinOp::Max, Type::u64(), -1, 2), -1);
        assert_eq!(bin(BinOp::Min, Type::u64(), -1, 2), 2);
        assert_eq!(bin(BinOp::Shl, Type::u8(), 1, 7), 128);
        assert_eq!(bin(BinOp::Shl, Type::u8(), 1, 8), 1); // 8 mod 8 = 0
        assert_eq!(bin(BinOp::Shl, Type::i32(), 1, 33), 2);
        assert_eq!(bin(BinOp::Shr, Type::i8(), -128, 1), -64);
        assert_eq!(bin(BinOp::Shr, Type::u8(), 128, 1), 64);
        assert_eq!(bin(BinOp::Shr, Type::u64(), -1, 63), 1);
        assert_eq!(bin(BinOp::Shr, Type::i64(), -1, 63), -1);
        assert_eq!(bin(BinOp::Shr, Type::i32(), -8, -1), -1); // -1 & 31 = 31
        assert_eq!(bin(BinOp::BitXor, Type::u8(), 0xff, 0x0f), 0xf0);
        assert_eq!(bin(BinOp::BitAnd, Type::i8(), -1, 0x7f), 0x7f);
        assert_eq!(bin(BinOp::And, Type::bool(), 1, 0), 0);
        assert_eq!(bin(BinOp::Or, Type::bool(), 1, 0), 1);
    }

    #[test]
    fn float_ops() {
        let t = Type::f32();
        assert_eq!(binary(BinOp::Mod, t, f(5.5), f(2.0)), f(1.5));
        assert_eq!(binary(BinOp::Mod, t, f(-5.5), f(2.0)), f(0.5));
        assert_eq!(binary(BinOp::Mod, Type::f64(), f(5.5), f(-2.0)), f(-0.5));
        // f32 rounding of each result: 0.1 + 0.2 in f32
        let r = binary(BinOp::Add, t, f(0.1f32 as f64), f(0.2f32 as f64));
        assert_eq!(r, f((0.1f32 + 0.2f32) as f64));
        assert_eq!(binary(BinOp::Div, t, f(1.0), f(3.0)), f((1.0f32 / 3.0) as f64));
        assert_eq!(binary(BinOp::Div, Type::f64(), f(1.0), f(0.0)), f(f64::INFINITY));
        // min/max with NaN follow the pinned definitions
        let nan = f64::NAN;
        assert_eq!(binary(BinOp::Min, t, f(1.0), f(2.0)), f(1.0));
        assert_eq!(binary(BinOp::Max, t, f(1.0), f(2.0)), f(2.0));
        assert_eq!(binary(BinOp::Min, t, f(1.0), f(nan)), f(1.0));
        assert!(binary(BinOp::Min, t, f(nan), f(1.0)).as_f64().is_nan());
    }

    #[test]
    fn comparisons() {
        assert!(compare(CmpOp::Le, Type::i32(), i(3), i(3)));
        assert!(!compare(CmpOp::Lt, Type::i32(), i(3), i(3)));
        assert!(compare(CmpOp::Ge, Type::u8(), i(255), i(0)));
        assert!(compare(CmpOp::Lt, Type::u64(), i(1), i(-1)));
        assert!(compare(CmpOp::Ne, Type::f32(), f(f64::NAN), f(1.0)));
        assert!(!compare(CmpOp::Ge, Type::f32(), f(f64::NAN), f(1.0)));
        // operands are wrapped to the type first
        assert!(compare(CmpOp::Eq, Type::u8(), i(256), i(0)));
    }

    #[test]
    fn saturating_casts() {
        let c = |from, to, v| cast(from, to, v);
        assert_eq!(c(Type::f32(), Type::u8(), f(-5.0)), i(0));
        assert_eq!(c(Type::f32(), Type::u8(), f(255.9)), i(255));
        assert_eq!(c(Type::f32(), Type::u8(), f(1e10)), i(255));
        assert_eq!(c(Type::f32(), Type::i8(), f(-1e10)), i(-128));
        assert_eq!(c(Type::f32(), Type::i16(), f(-3.7)), i(-3));
        assert_eq!(c(Type::f64(), Type::i32(), f(f64::INFINITY)), i(i32::MAX as i64));
        assert_eq!(c(Type::f64(), Type::i32(), f(f64::NEG_INFINITY)), i(i32::MIN as i64));
        assert_eq!(c(Type::f64(), Type::u32(), f(f64::NAN)), i(0));
        assert_eq!(c(Type::f64(), Type::u64(), f(1e30)), i(-1)); // u64::MAX bits
        assert_eq!(c(Type::f64(), Type::i64(), f(-1e30)), i(i64::MIN));
        // int -> int wraps, sign- or zero-extending by the source type
        assert_eq!(c(Type::i32(), Type::u8(), i(257)), i(1));
        assert_eq!(c(Type::i8(), Type::u16(), i(-1)), i(65535));
        assert_eq!(c(Type::u8(), Type::i8(), i(200)), i(-56));
        assert_eq!(c(Type::u64(), Type::i32(), i(-1)), i(-1));
        assert_eq!(c(Type::u32(), Type::i64(), i(0xffff_ffff)), i(0xffff_ffff));
        // int -> float rounds to nearest, directly to f32
        assert_eq!(c(Type::i32(), Type::f32(), i(16_777_217)), f(16_777_216.0));
        assert_eq!(c(Type::u64(), Type::f64(), i(-1)), f(u64::MAX as f64));
        let big = (1i64 << 53) + (1 << 29) + 1; // double rounding would differ here
        assert_eq!(c(Type::i64(), Type::f32(), i(big)), f(big as f32 as f64));
        // f64 -> f32 rounds
        assert_eq!(c(Type::f64(), Type::f32(), f(0.1)), f(0.1f32 as f64));
        // bools
        assert_eq!(c(Type::bool(), Type::i32(), i(1)), i(1));
        assert_eq!(c(Type::bool(), Type::f32(), i(1)), f(1.0));
        assert_eq!(c(Type::f32(), Type::bool(), f(0.5)), i(1));
        assert_eq!(c(Type::f32(), Type::bool(), f(0.0)), i(0));
        assert_eq!(c(Type::u8(), Type::bool(), i(2)), i(1));
    }

    #[test]
    fn round_half_to_even() {
        let r = |t: Type, v: f64| intrinsic(Intrinsic::Round, &[t], t, &[f(v)]).as_f64();
        for t in [Type::f32(), Type::f64()] {
            assert_eq!(r(t, 0.5), 0.0);
            assert_eq!(r(t, 1.5), 2.0);
            assert_eq!(r(t, 2.5), 2.0);
            assert_eq!(r(t, -0.5), 0.0);
            assert_eq!(r(t, -1.5), -2.0);
            assert_eq!(r(t, -2.5), -2.0);
            assert_eq!(r(t, 2.6), 3.0);
            assert_eq!(r(t, -2.4), -2.0);
        }
        // integers are already rounded
        assert_eq!(intrinsic(Intrinsic::Round, &[Type::i32()], Type::i32(), &[i(7)]), i(7));
    }

    #[test]
    fn abs() {
        let a = |t: Type, r: Type, v: i64| intrinsic(Intrinsic::Abs, &[t], r, &[i(v)]);
        assert_eq!(a(Type::i8(), Type::u8(), -128), i(128));
        assert_eq!(a(Type::i8(), Type::u8(), -5), i(5));
        assert_eq!(a(Type::i32(), Type::u32(), i32::MIN as i64), i(1 << 31));
        assert_eq!(a(Type::i64(), Type::u64(), i64::MIN), i(i64::MIN)); // 2^63 as u64 bits
        assert_eq!(a(Type::u8(), Type::u8(), 200), i(200));
        assert_eq!(intrinsic(Intrinsic::Abs, &[Type::f32()], Type::f32(), &[f(-2.5)]), f(2.5));
    }

    #[test]
    fn math_and_bits() {
        let x = 0.7f32;
        let r = intrinsic(Intrinsic::Exp, &[Type::f32()], Type::f32(), &[f(x as f64)]);
        assert_eq!(r, f(super::super::float_math::exp_f32(x) as f64));
        let p = intrinsic(Intrinsic::Pow, &[Type::f32(), Type::f32()], Type::f32(), &[f(2.0), f(10.0)]);
        assert_eq!(p, f(1024.0));
        let s = intrinsic(Intrinsic::Sqrt, &[Type::f64()], Type::f64(), &[f(2.0)]);
        assert_eq!(s, f(2f64.sqrt()));
        assert_eq!(intrinsic(Intrinsic::Floor, &[Type::f32()], Type::f32(), &[f(-1.5)]), f(-2.0));
        assert_eq!(intrinsic(Intrinsic::Ceil, &[Type::f32()], Type::f32(), &[f(-1.5)]), f(-1.0));
        assert_eq!(intrinsic(Intrinsic::Trunc, &[Type::f32()], Type::f32(), &[f(-1.5)]), f(-1.0));
        assert_eq!(intrinsic(Intrinsic::BitNot, &[Type::u8()], Type::u8(), &[i(0x0f)]), i(0xf0));
        assert_eq!(intrinsic(Intrinsic::BitNot, &[Type::i32()], Type::i32(), &[i(0)]), i(-1));
        let back = intrinsic(Intrinsic::Reinterpret, &[Type::u32()], Type::f32(), &[i(0x3f80_0000)]);
        assert_eq!(back, f(1.0));
        assert_eq!(intrinsic(Intrinsic::Reinterpret, &[Type::i8()], Type::u8(), &[i(-1)]), i(255));
        assert_eq!(intrinsic(Intrinsic::Reinterpret, &[Type::u16()], Type::i16(), &[i(0x8000)]), i(-32768));
        let d = intrinsic(Intrinsic::Reinterpret, &[Type::f64()], Type::i64(), &[f(-0.0)]);
        assert_eq!(d, i(i64::MIN));
    }

    #[test]
    fn exprs_round_trip() {
        assert_eq!(Scalar::from_expr(&Scalar::Int(-1).to_expr(Type::u64())), Some(i(-1)));
        assert_eq!(Scalar::from_expr(&Scalar::Float(0.1).to_expr(Type::f32())), Some(f(0.1f32 as f64)));
        assert_eq!(Scalar::from_expr(&Scalar::Int(1).to_expr(Type::bool())), Some(i(1)));
        let v = Scalar::Int(3).to_expr(Type::i32().with_lanes(4));
        assert_eq!(v.ty(), Type::i32().with_lanes(4));
        assert_eq!(v.as_int(), Some(3));
        assert_eq!(not(i(5)), i(0));
    }
}
