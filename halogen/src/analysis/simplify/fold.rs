//! Constant folding: the exact meaning of every operator on constants.
//!
//! All folding goes through [`crate::ir::semantics`], the functions the interpreter
//! evaluates with, so that the simplifier and the interpreter can never disagree.

pub(crate) use crate::ir::semantics::{binary, cast, compare, Scalar};
use crate::ir::{semantics, Intrinsic, Type};

/// Calls an intrinsic on constants (the scalar types of the arguments and result).
pub(crate) fn intrinsic(which: Intrinsic, arg_types: &[Type], result: Type, args: &[Scalar]) -> Option<Scalar> {
    if args.is_empty() {
        return None;
    }
    Some(semantics::intrinsic(which, arg_types, result, args))
}

/// The shift amount for a value of `bits` bits: the amount modulo the width.
pub(crate) fn shift_amount(bits: u32, amount: i64) -> u32 {
    ((amount as u64) & (bits.max(1) as u64 - 1)) as u32
}
