//! The layout Rust gives each type of the C ABI ([`super::ffi`]): sizes, alignments and
//! field offsets from `std::mem::size_of`, `align_of` and `offset_of!`, and the values of
//! the ABI's constants. The C back end prints them as `_Static_assert`s after the C types
//! (so a C compiler that lays a type out differently refuses the file), and the
//! `abi_layout` test compares them with the C compiler's own view.

use super::ffi::{
    access, HalogenBuffer, HalogenDeviceInterface, HalogenDim, HalogenKernelArg, HalogenKernels, HalogenRuntime,
    HalogenScalar, DEVICE_DIRTY, HOST_DIRTY,
};

/// How Rust lays out one C type of the ABI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CLayout {
    /// The C type, e.g. `struct halogen_buffer`.
    pub c_type: &'static str,
    /// The Rust type in [`super::ffi`], e.g. `HalogenBuffer`.
    pub rust_type: &'static str,
    /// `sizeof` in bytes.
    pub size: usize,
    /// `_Alignof` in bytes.
    pub align: usize,
    /// Every field's name (the same in Rust and C) and `offsetof`, in declaration order.
    pub fields: Vec<(&'static str, usize)>,
}

macro_rules! layout {
    ($rust:ty, $c:literal, [$($field:ident),* $(,)?]) => {
        CLayout {
            c_type: $c,
            rust_type: stringify!($rust),
            size: std::mem::size_of::<$rust>(),
            align: std::mem::align_of::<$rust>(),
            fields: vec![$((stringify!($field), std::mem::offset_of!($rust, $field))),*],
        }
    };
}

/// The layout of every C type of the ABI, as this build of the runtime has it.
///
/// ```
/// use halogen::runtime::layout::layouts;
/// let l = layouts();
/// let buffer = l.iter().find(|l| l.c_type == "struct halogen_buffer").unwrap();
/// assert_eq!(buffer.size, std::mem::size_of::<halogen::runtime::ffi::HalogenBuffer>());
/// assert_eq!(buffer.fields[0], ("device", 0));
/// ```
pub fn layouts() -> Vec<CLayout> {
    vec![
        layout!(HalogenDim, "struct halogen_dim", [min, extent, stride, flags]),
        layout!(
            HalogenDeviceInterface,
            "struct halogen_device_interface",
            [device_malloc, device_free, copy_to_host, copy_to_device]
        ),
        layout!(
            HalogenBuffer,
            "struct halogen_buffer",
            [device, device_interface, host, flags, type_code, type_bits, type_lanes, dimensions, dim]
        ),
        layout!(HalogenScalar, "union halogen_scalar", [b, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64]),
        layout!(
            HalogenRuntime,
            "struct halogen_runtime",
            [par_for, error, alloc, free, gpu_launch, gpu_release, exchange]
        ),
        layout!(HalogenKernels, "struct halogen_kernels", [api, checks, source, check_messages, state]),
        layout!(HalogenKernelArg, "struct halogen_kernel_arg", [value, size, buffer, access]),
    ]
}

/// The C names and values of the ABI's constants.
///
/// ```
/// let c = halogen::runtime::layout::constants();
/// assert!(c.contains(&("HALOGEN_DEVICE_DIRTY", halogen::runtime::ffi::DEVICE_DIRTY)));
/// ```
pub fn constants() -> Vec<(&'static str, u64)> {
    vec![
        ("HALOGEN_HOST_DIRTY", HOST_DIRTY),
        ("HALOGEN_DEVICE_DIRTY", DEVICE_DIRTY),
        ("HALOGEN_ACCESS_READ", access::READ),
        ("HALOGEN_ACCESS_WRITE", access::WRITE),
        ("HALOGEN_ACCESS_HOST_WRITES", access::HOST_WRITES),
        ("HALOGEN_ACCESS_HOST_READS", access::HOST_READS),
        ("HALOGEN_ACCESS_HOST_DATA", access::HOST_DATA),
    ]
}
