//! Constant folding: the exact meaning of every operator on constants.
//!
//! These functions have the same signatures as `ir::semantics` (the interpreter's
//! arithmetic) so that the simplifier can switch to it without other changes; until then
//! they implement the pinned semantics themselves: integers wrap to their type, `/` and
//! `%` are Euclidean with `x / 0 == x % 0 == 0`, shift amounts are taken modulo the width,
//! f32 arithmetic rounds every result to f32, float `%` is `a - b * floor(a / b)`.

use crate::ir::{BinOp, CmpOp, Intrinsic, Type, TypeCode};

/// One lane of a constant: integers (and bools) by their bits as i64, floats as f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// An integer or bool; unsigned 64-bit values are stored by their bits.
    Int(i64),
    /// A float; f32 values are exactly representable f64s.
    Float(f64),
}

impl Scalar {
    fn int(self) -> i64 {
        match self {
            Scalar::Int(v) => v,
            Scalar::Float(f) => f as i64,
        }
    }
    fn float(self) -> f64 {
        match self {
            Scalar::Float(f) => f,
            Scalar::Int(v) => v as f64,
        }
    }
}

/// Rounds to f32 where the type is f32.
fn round_to(ty: Type, v: f64) -> f64 {
    if ty.bits == 32 {
        v as f32 as f64
    } else {
        v
    }
}

/// `a op b` for operands of (element) type `ty`.
pub fn binary(op: BinOp, ty: Type, a: Scalar, b: Scalar) -> Scalar {
    let ty = ty.element();
    if ty.is_float() {
        Scalar::Float(float_binary(op, ty, a.float(), b.float()))
    } else {
        Scalar::Int(int_binary(op, ty, ty.wrap_int(a.int()), ty.wrap_int(b.int())))
    }
}

fn float_binary(op: BinOp, ty: Type, a: f64, b: f64) -> f64 {
    if ty.bits == 32 {
        let (a, b) = (a as f32, b as f32);
        let r = match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Mod => a - b * (a / b).floor(),
            BinOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            BinOp::Max => {
                if a < b {
                    b
                } else {
                    a
                }
            }
            _ => f32::NAN,
        };
        r as f64
    } else {
        match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
            BinOp::Mod => a - b * (a / b).floor(),
            BinOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            BinOp::Max => {
                if a < b {
                    b
                } else {
                    a
                }
            }
            _ => f64::NAN,
        }
    }
}

fn int_binary(op: BinOp, ty: Type, a: i64, b: i64) -> i64 {
    let unsigned = ty.is_uint();
    let bits = ty.bits as u32;
    let (ua, ub) = (a as u64, b as u64);
    let r = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::Div => {
            if b == 0 {
                0
            } else if unsigned {
                (ua / ub) as i64
            } else {
                a.wrapping_div_euclid(b)
            }
        }
        BinOp::Mod => {
            if b == 0 {
                0
            } else if unsigned {
                (ua % ub) as i64
            } else {
                a.wrapping_rem_euclid(b)
            }
        }
        BinOp::Min => {
            let b_less = if unsigned { ub < ua } else { b < a };
            if b_less {
                b
            } else {
                a
            }
        }
        BinOp::Max => {
            let a_less = if unsigned { ua < ub } else { a < b };
            if a_less {
                b
            } else {
                a
            }
        }
        BinOp::BitAnd => a & b,
        BinOp::BitOr => a | b,
        BinOp::BitXor => a ^ b,
        BinOp::Shl => {
            let amt = shift_amount(bits, b);
            (ua << amt) as i64
        }
        BinOp::Shr => {
            let amt = shift_amount(bits, b);
            if unsigned {
                (ua >> amt) as i64
            } else {
                a >> amt
            }
        }
        BinOp::And => ((a != 0) && (b != 0)) as i64,
        BinOp::Or => ((a != 0) || (b != 0)) as i64,
    };
    ty.wrap_int(r)
}

/// The shift amount for a value of `bits` bits: the amount modulo the width.
pub(crate) fn shift_amount(bits: u32, amount: i64) -> u32 {
    ((amount as u64) & (bits.max(1) as u64 - 1)) as u32
}

/// `a op b` for operands of (element) type `ty`.
pub fn compare(op: CmpOp, ty: Type, a: Scalar, b: Scalar) -> bool {
    let ty = ty.element();
    if ty.is_float() {
        let (a, b) = (a.float(), b.float());
        match op {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    } else {
        let (a, b) = (ty.wrap_int(a.int()), ty.wrap_int(b.int()));
        let ord = if ty.is_uint() { (a as u64).cmp(&(b as u64)) } else { a.cmp(&b) };
        match op {
            CmpOp::Eq => ord.is_eq(),
            CmpOp::Ne => ord.is_ne(),
            CmpOp::Lt => ord.is_lt(),
            CmpOp::Le => ord.is_le(),
            CmpOp::Gt => ord.is_gt(),
            CmpOp::Ge => ord.is_ge(),
        }
    }
}

/// Converts `v` of type `from` to type `to` (element types).
pub fn cast(from: Type, to: Type, v: Scalar) -> Scalar {
    let (from, to) = (from.element(), to.element());
    match to.code {
        TypeCode::Bool => Scalar::Int(match v {
            Scalar::Int(x) => (from.wrap_int(x) != 0) as i64,
            Scalar::Float(f) => (f != 0.0) as i64,
        }),
        TypeCode::Float => Scalar::Float(match v {
            Scalar::Float(f) => round_to(to, f),
            Scalar::Int(x) => {
                let x = from.wrap_int(x);
                // Convert straight to the target width: going through f64 first would
                // round twice.
                match (from.is_uint(), to.bits == 32) {
                    (true, true) => (x as u64) as f32 as f64,
                    (true, false) => (x as u64) as f64,
                    (false, true) => x as f32 as f64,
                    (false, false) => x as f64,
                }
            }
        }),
        _ => Scalar::Int(match v {
            Scalar::Int(x) => to.wrap_int(from.wrap_int(x)),
            Scalar::Float(f) => float_to_int(to, f),
        }),
    }
}

/// Truncation toward zero, saturating at the type's range, NaN to zero (Rust's `as`).
fn float_to_int(to: Type, f: f64) -> i64 {
    match (to.code, to.bits) {
        (TypeCode::UInt, 64) => (f as u64) as i64,
        (TypeCode::Int, 64) => f as i64,
        _ => {
            if f.is_nan() {
                return 0;
            }
            let (lo, hi) = (to.min_int().unwrap_or(0), to.max_int().unwrap_or(0));
            let t = f.trunc();
            if t <= lo as f64 {
                lo
            } else if t >= hi as f64 {
                hi
            } else {
                t as i64
            }
        }
    }
}

/// Calls an intrinsic on constants. Returns `None` for the ones that are not folded
/// (transcendental functions, whose last bit depends on the math library).
pub fn intrinsic(which: Intrinsic, arg_types: &[Type], result: Type, args: &[Scalar]) -> Option<Scalar> {
    let result = result.element();
    let t0 = arg_types.first()?.element();
    let a = *args.first()?;
    Some(match which {
        Intrinsic::Abs => match a {
            Scalar::Float(f) => Scalar::Float(f.abs()),
            Scalar::Int(x) => {
                let x = t0.wrap_int(x);
                let v = if t0.is_int() { x.unsigned_abs() as i64 } else { x };
                Scalar::Int(result.wrap_int(v))
            }
        },
        Intrinsic::Sqrt => Scalar::Float(round_to(result, a.float().sqrt())),
        Intrinsic::Floor => Scalar::Float(a.float().floor()),
        Intrinsic::Ceil => Scalar::Float(a.float().ceil()),
        Intrinsic::Round => Scalar::Float(a.float().round_ties_even()),
        Intrinsic::Trunc => Scalar::Float(a.float().trunc()),
        Intrinsic::BitNot => Scalar::Int(result.wrap_int(!a.int())),
        Intrinsic::Reinterpret => {
            let bits: u64 = match a {
                Scalar::Float(f) if t0.bits == 32 => (f as f32).to_bits() as u64,
                Scalar::Float(f) => f.to_bits(),
                Scalar::Int(x) => x as u64,
            };
            if result.is_float() {
                if result.bits == 32 {
                    Scalar::Float(f32::from_bits(bits as u32) as f64)
                } else {
                    Scalar::Float(f64::from_bits(bits))
                }
            } else {
                Scalar::Int(result.wrap_int(bits as i64))
            }
        }
        _ => return None,
    })
}
