//! C spellings of IR types: scalar types, and vector types as GCC/Clang vector extensions.
//!
//! A vector of `n` lanes is a `typedef` named by its element and lane count (`u16x8`,
//! `f32x5`, `boolx4`). GCC only has vectors of a power-of-two size, so a vector of `n`
//! lanes is stored in one of `n.next_power_of_two()` lanes; the extra lanes are always
//! initialized (broadcasts and ramps fill them, loads zero them) and never reach memory,
//! because loads and stores touch the first `n` lanes only. Bool vectors hold one byte per
//! lane with the value 0 or 1, like bool buffers, so they load and store with `memcpy`.
//!
//! The scalar spellings every C dialect shares live in [`crate::backend::c_like::types`];
//! they are re-exported here under their old paths.

pub use crate::backend::c_like::types::{check, mnemonic, scalar_c, storage_c};
use crate::ir::Type;

/// The C type of a value of type `t`: a scalar type, or the vector typedef's name.
pub fn value_c(t: Type) -> String {
    if t.is_vector() {
        mnemonic(t)
    } else {
        scalar_c(t).to_string()
    }
}

/// Lanes the vector of `lanes` lanes occupies (a power of two, at least 2).
pub fn physical_lanes(lanes: u16) -> u16 {
    lanes.next_power_of_two().max(2)
}

/// The `typedef` of the vector type `t`.
///
/// ```
/// use halogen::backend::c::types::typedef;
/// use halogen::Type;
/// assert_eq!(typedef(Type::u16().with_lanes(8)), "typedef uint16_t u16x8 __attribute__((vector_size(16)));");
/// // five lanes live in a vector of eight
/// assert_eq!(typedef(Type::f32().with_lanes(5)), "typedef float f32x5 __attribute__((vector_size(32)));");
/// assert_eq!(typedef(Type::bool().with_lanes(4)), "typedef uint8_t boolx4 __attribute__((vector_size(4)));");
/// ```
pub fn typedef(t: Type) -> String {
    let bytes = physical_lanes(t.lanes) as usize * t.bytes();
    format!("typedef {} {} __attribute__((vector_size({bytes})));", storage_c(t), mnemonic(t))
}

/// The type of a comparison's result in GCC's vector extension: signed integers of the
/// operands' width (bools: 8 bits), -1 for true and 0 for false.
pub fn mask_of(t: Type) -> Type {
    Type::int(if t.is_bool() { 8 } else { t.bits }).with_lanes(t.lanes)
}

/// The unsigned integer type of the same width (the type wrapping arithmetic is done in).
pub fn unsigned_of(t: Type) -> Type {
    Type::uint(if t.is_bool() { 8 } else { t.bits }).with_lanes(t.lanes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(scalar_c(Type::bool()), "bool");
        assert_eq!(storage_c(Type::bool()), "uint8_t");
        assert_eq!(value_c(Type::i64()), "int64_t");
        assert_eq!(value_c(Type::i64().with_lanes(2)), "i64x2");
        assert_eq!(physical_lanes(3), 4);
        assert_eq!(physical_lanes(16), 16);
        assert_eq!(mask_of(Type::f64().with_lanes(4)), Type::i64().with_lanes(4));
        assert_eq!(mask_of(Type::bool().with_lanes(4)), Type::i8().with_lanes(4));
        assert_eq!(unsigned_of(Type::i16().with_lanes(8)), Type::u16().with_lanes(8));
        assert!(check(Type::handle()).is_err());
        assert!(check(Type::int(7)).is_err());
        assert!(check(Type::u64()).is_ok());
    }
}
