//! C spellings of scalar IR types, the same in every C dialect: the C type of a value and
//! of an element in memory, the short names helpers and typedefs are named by, and which
//! types have a spelling at all. How a dialect spells vectors is its own (see
//! [`crate::backend::c::types`] for GCC/Clang vector extensions).

use crate::error::{Error, Result};
use crate::ir::{Type, TypeCode};

const PASS: &str = "C back end";

/// Checks that the element type has a C spelling (ints of 8–64 bits, f32, f64, bool).
///
/// ```
/// use halogen::backend::c_like::types::check;
/// use halogen::Type;
/// assert!(check(Type::u64()).is_ok());
/// assert!(check(Type::handle()).is_err());
/// ```
pub fn check(t: Type) -> Result<()> {
    let ok = match t.code {
        TypeCode::Int | TypeCode::UInt => matches!(t.bits, 8 | 16 | 32 | 64),
        TypeCode::Float => matches!(t.bits, 32 | 64),
        TypeCode::Bool => true,
        TypeCode::Handle => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::internal(PASS, format!("type {t} has no C spelling")))
    }
}

/// The short name of an element type (`i32`, `u8`, `f64`, `bool`), used in helper and
/// typedef names.
///
/// ```
/// use halogen::backend::c_like::types::mnemonic;
/// use halogen::Type;
/// assert_eq!(mnemonic(Type::u16()), "u16");
/// assert_eq!(mnemonic(Type::f32().with_lanes(8)), "f32x8");
/// assert_eq!(mnemonic(Type::bool().with_lanes(5)), "boolx5");
/// ```
pub fn mnemonic(t: Type) -> String {
    let base = match t.code {
        TypeCode::Int => format!("i{}", t.bits),
        TypeCode::UInt => format!("u{}", t.bits),
        TypeCode::Float => format!("f{}", t.bits),
        TypeCode::Bool => "bool".to_string(),
        TypeCode::Handle => "handle".to_string(),
    };
    if t.is_vector() {
        format!("{base}x{}", t.lanes)
    } else {
        base
    }
}

/// The C type of a scalar value of the element type of `t`.
///
/// ```
/// use halogen::backend::c_like::types::scalar_c;
/// use halogen::Type;
/// assert_eq!(scalar_c(Type::u16()), "uint16_t");
/// assert_eq!(scalar_c(Type::f64().with_lanes(4)), "double");
/// ```
pub fn scalar_c(t: Type) -> &'static str {
    match (t.code, t.bits) {
        (TypeCode::Bool, _) => "bool",
        (TypeCode::Int, 8) => "int8_t",
        (TypeCode::Int, 16) => "int16_t",
        (TypeCode::Int, 32) => "int32_t",
        (TypeCode::Int, _) => "int64_t",
        (TypeCode::UInt, 8) => "uint8_t",
        (TypeCode::UInt, 16) => "uint16_t",
        (TypeCode::UInt, 32) => "uint32_t",
        (TypeCode::UInt, _) => "uint64_t",
        (TypeCode::Float, 32) => "float",
        (TypeCode::Float, _) => "double",
        (TypeCode::Handle, _) => "void *",
    }
}

/// The C type of one element in memory: bools are stored as one byte (0 or 1).
///
/// ```
/// use halogen::backend::c_like::types::storage_c;
/// use halogen::Type;
/// assert_eq!(storage_c(Type::bool()), "uint8_t");
/// assert_eq!(storage_c(Type::i32()), "int32_t");
/// ```
pub fn storage_c(t: Type) -> &'static str {
    if t.is_bool() {
        "uint8_t"
    } else {
        scalar_c(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_spellings() {
        assert_eq!(scalar_c(Type::bool()), "bool");
        assert_eq!(scalar_c(Type::i8()), "int8_t");
        assert_eq!(scalar_c(Type::f32()), "float");
        assert_eq!(storage_c(Type::bool()), "uint8_t");
        assert_eq!(storage_c(Type::u8()), "uint8_t");
        assert_eq!(mnemonic(Type::i64()), "i64");
        assert!(check(Type::handle()).is_err());
        assert!(check(Type::int(7)).is_err());
        assert!(check(Type::float(16)).is_err());
        assert!(check(Type::bool().with_lanes(3)).is_ok());
    }
}
