//! Operators on `Expr` with Halide's type-coercion rules. (Being completed.)

use crate::ir::{Expr, Type};

/// Converts an integer expression to `i32` (coordinates are `i32`).
pub fn to_i32(e: Expr) -> Expr {
    cast(Type::i32(), e)
}

/// Conversion to `ty` (lanes are kept from `e`).
pub fn cast(ty: Type, e: Expr) -> Expr {
    let t = ty.with_lanes(e.ty().lanes);
    Expr::cast(t, e)
}

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
