//! Element types a `Buffer` can hold.

use crate::ir::Type;

/// A pixel type: `u8, u16, u32, u64, i8, i16, i32, i64, f32, f64`.
///
/// ```
/// use halogen::{Element, Type};
/// assert_eq!(<u16 as Element>::TYPE, Type::u16());
/// assert_eq!(<i64 as Element>::TYPE, Type::i64());
/// ```
pub trait Element: bytemuck::Pod + Default + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The IR type of this element.
    const TYPE: Type;
}

macro_rules! element {
    ($($t:ty => $ty:expr),*) => {$(
        impl Element for $t {
            const TYPE: Type = $ty;
        }
    )*};
}
element!(
    u8 => Type::u8(), u16 => Type::u16(), u32 => Type::u32(), u64 => Type::u64(),
    i8 => Type::i8(), i16 => Type::i16(), i32 => Type::i32(), i64 => Type::i64(),
    f32 => Type::f32(), f64 => Type::f64()
);
