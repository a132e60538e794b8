//! Scalar and vector types of the IR.

use std::fmt;

/// The kind of number a [`Type`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCode {
    /// Two's-complement signed integer.
    Int,
    /// Unsigned integer.
    UInt,
    /// IEEE float (32 or 64 bits).
    Float,
    /// Boolean (1 bit).
    Bool,
    /// An opaque pointer.
    Handle,
}

/// A scalar or vector type: a code, a bit width and a lane count (`lanes > 1` is a vector).
///
/// ```
/// use halogen::Type;
/// let t = Type::u16().with_lanes(8);
/// assert_eq!(t.to_string(), "uint16x8");
/// assert_eq!(t.element(), Type::u16());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Type {
    /// The kind of number.
    pub code: TypeCode,
    /// Bits per lane.
    pub bits: u8,
    /// Number of lanes; 1 for scalars.
    pub lanes: u16,
}

impl Type {
    /// A scalar type from its parts.
    pub const fn new(code: TypeCode, bits: u8) -> Type {
        Type { code, bits, lanes: 1 }
    }
    /// Signed integer of `bits` bits.
    pub const fn int(bits: u8) -> Type {
        Type::new(TypeCode::Int, bits)
    }
    /// Unsigned integer of `bits` bits.
    pub const fn uint(bits: u8) -> Type {
        Type::new(TypeCode::UInt, bits)
    }
    /// Float of `bits` bits (32 or 64).
    pub const fn float(bits: u8) -> Type {
        Type::new(TypeCode::Float, bits)
    }
    /// `u8`
    pub const fn u8() -> Type {
        Type::uint(8)
    }
    /// `u16`
    pub const fn u16() -> Type {
        Type::uint(16)
    }
    /// `u32`
    pub const fn u32() -> Type {
        Type::uint(32)
    }
    /// `u64`
    pub const fn u64() -> Type {
        Type::uint(64)
    }
    /// `i8`
    pub const fn i8() -> Type {
        Type::int(8)
    }
    /// `i16`
    pub const fn i16() -> Type {
        Type::int(16)
    }
    /// `i32`
    pub const fn i32() -> Type {
        Type::int(32)
    }
    /// `i64`
    pub const fn i64() -> Type {
        Type::int(64)
    }
    /// `f32`
    pub const fn f32() -> Type {
        Type::float(32)
    }
    /// `f64`
    pub const fn f64() -> Type {
        Type::float(64)
    }
    /// `bool`
    pub const fn bool() -> Type {
        Type::new(TypeCode::Bool, 1)
    }
    /// An opaque pointer.
    pub const fn handle() -> Type {
        Type::new(TypeCode::Handle, 64)
    }
    /// The same type with `lanes` lanes.
    pub const fn with_lanes(self, lanes: u16) -> Type {
        Type { lanes, ..self }
    }
    /// The same code and lanes with another bit width.
    pub const fn with_bits(self, bits: u8) -> Type {
        Type { bits, ..self }
    }
    /// The same bits and lanes with another code.
    pub const fn with_code(self, code: TypeCode) -> Type {
        Type { code, ..self }
    }
    /// The scalar type of one lane.
    pub const fn element(self) -> Type {
        self.with_lanes(1)
    }
    /// True for one lane.
    pub const fn is_scalar(self) -> bool {
        self.lanes == 1
    }
    /// True for more than one lane.
    pub const fn is_vector(self) -> bool {
        self.lanes > 1
    }
    /// Signed integer?
    pub fn is_int(self) -> bool {
        self.code == TypeCode::Int
    }
    /// Unsigned integer?
    pub fn is_uint(self) -> bool {
        self.code == TypeCode::UInt
    }
    /// Signed or unsigned integer?
    pub fn is_int_or_uint(self) -> bool {
        matches!(self.code, TypeCode::Int | TypeCode::UInt)
    }
    /// Float?
    pub fn is_float(self) -> bool {
        self.code == TypeCode::Float
    }
    /// Bool?
    pub fn is_bool(self) -> bool {
        self.code == TypeCode::Bool
    }
    /// Bytes per lane (bools take one byte in memory).
    pub fn bytes(self) -> usize {
        (self.bits as usize).div_ceil(8)
    }
    /// Smallest value of an integer type, as i64 (None for floats, u64 max does not fit).
    pub fn min_int(self) -> Option<i64> {
        match self.code {
            TypeCode::Int => Some(if self.bits >= 64 { i64::MIN } else { -(1i64 << (self.bits - 1)) }),
            TypeCode::UInt | TypeCode::Bool => Some(0),
            _ => None,
        }
    }
    /// Largest value of an integer type, as i64 (None where it does not fit in i64).
    pub fn max_int(self) -> Option<i64> {
        match self.code {
            TypeCode::Int => Some(if self.bits >= 64 { i64::MAX } else { (1i64 << (self.bits - 1)) - 1 }),
            TypeCode::UInt if self.bits < 64 => Some((1i64 << self.bits) - 1),
            TypeCode::Bool => Some(1),
            _ => None,
        }
    }
    /// Whether the integer `v` is representable in this (integer) type.
    pub fn can_represent_int(self, v: i64) -> bool {
        match self.code {
            TypeCode::Float => true,
            TypeCode::UInt if self.bits >= 64 => v >= 0,
            TypeCode::Handle => false,
            _ => self.min_int().is_some_and(|lo| v >= lo) && self.max_int().is_some_and(|hi| v <= hi),
        }
    }
    /// Wrap an integer to this type's width and signedness (two's complement), as i64.
    pub fn wrap_int(self, v: i64) -> i64 {
        match self.code {
            TypeCode::Bool => (v != 0) as i64,
            TypeCode::Int if self.bits < 64 => {
                let sh = 64 - self.bits as u32;
                (v << sh) >> sh
            }
            TypeCode::UInt if self.bits < 64 => v & ((1i64 << self.bits) - 1),
            _ => v,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.code {
            TypeCode::Int => "int",
            TypeCode::UInt => "uint",
            TypeCode::Float => "float",
            TypeCode::Bool => "bool",
            TypeCode::Handle => "handle",
        };
        if self.code == TypeCode::Bool {
            write!(f, "bool")?;
        } else {
            write!(f, "{name}{}", self.bits)?;
        }
        if self.lanes > 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}
