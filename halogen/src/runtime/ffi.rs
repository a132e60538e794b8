//! The C ABI between Rust and generated code: the buffer descriptor, the scalar parameter
//! union, the runtime function table, and the entry point's signature. The layouts match
//! `RUNTIME_TYPES` in `backend/c/prelude.rs` field for field.

use super::thread_pool;
use crate::error::{Error, Result};
use crate::ir::semantics::Scalar;
use crate::ir::{Expr, Type, TypeCode};
use crate::runtime::BufferDim;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

/// One dimension of a buffer (`struct halogen_dim`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HalogenDim {
    /// First coordinate.
    pub min: i32,
    /// Number of coordinates.
    pub extent: i32,
    /// Elements between neighbours along this dimension.
    pub stride: i32,
    /// Reserved (zero).
    pub flags: i32,
}

impl From<&BufferDim> for HalogenDim {
    fn from(d: &BufferDim) -> HalogenDim {
        HalogenDim { min: d.min, extent: d.extent, stride: d.stride, flags: 0 }
    }
}

/// A buffer descriptor (`struct halogen_buffer`): the address of the element at the mins,
/// the element type and the dimensions.
#[repr(C)]
#[derive(Debug)]
pub struct HalogenBuffer {
    /// The first element.
    pub host: *mut u8,
    /// 0 int, 1 uint (bool is uint of 1 bit), 2 float.
    pub type_code: u8,
    /// Bits per element (1 for bool).
    pub type_bits: u8,
    /// Lanes per element (1).
    pub type_lanes: u16,
    /// Number of dimensions.
    pub dimensions: i32,
    /// `dimensions` dimensions.
    pub dim: *const HalogenDim,
}

/// The type code of a [`HalogenBuffer`] holding elements of type `t`.
///
/// ```
/// use halogen::runtime::ffi::type_code;
/// use halogen::Type;
/// assert_eq!(type_code(Type::i16()), 0);
/// assert_eq!(type_code(Type::bool()), 1);
/// assert_eq!(type_code(Type::f32()), 2);
/// ```
pub fn type_code(t: Type) -> u8 {
    match t.code {
        TypeCode::Int => 0,
        TypeCode::UInt | TypeCode::Bool => 1,
        TypeCode::Float => 2,
        TypeCode::Handle => 3,
    }
}

impl HalogenBuffer {
    /// A descriptor of `dims.len()` dimensions over the memory at `host`. `dims` must outlive
    /// every use of the descriptor.
    pub fn new(host: *mut u8, elem: Type, dims: &[HalogenDim]) -> HalogenBuffer {
        HalogenBuffer {
            host,
            type_code: type_code(elem),
            type_bits: elem.bits,
            type_lanes: 1,
            dimensions: dims.len() as i32,
            dim: dims.as_ptr(),
        }
    }
}

/// A scalar parameter's value (`union halogen_scalar`).
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(missing_docs)]
pub union HalogenScalar {
    pub b: bool,
    pub i8: i8,
    pub i16: i16,
    pub i32: i32,
    pub i64: i64,
    pub u8: u8,
    pub u16: u16,
    pub u32: u32,
    pub u64: u64,
    pub f32: f32,
    pub f64: f64,
}

impl std::fmt::Debug for HalogenScalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: every bit pattern of 8 bytes is a valid u64, and the union is 8 bytes.
        write!(f, "HalogenScalar({:#x})", unsafe { self.u64 })
    }
}

impl HalogenScalar {
    /// The value of the constant `e` (an `IntImm` or `FloatImm`) as a scalar of type `ty`.
    ///
    /// ```
    /// use halogen::runtime::ffi::HalogenScalar;
    /// use halogen::{Expr, Type};
    /// let s = HalogenScalar::from_expr(&Expr::float_imm(Type::f32(), 1.5), Type::f32()).unwrap();
    /// assert_eq!(unsafe { s.f32 }, 1.5);
    /// let s = HalogenScalar::from_expr(&Expr::int_imm(Type::i16(), -2), Type::i16()).unwrap();
    /// assert_eq!(unsafe { s.i16 }, -2);
    /// ```
    pub fn from_expr(e: &Expr, ty: Type) -> Option<HalogenScalar> {
        let v = Scalar::from_expr(e)?;
        let mut s = HalogenScalar { u64: 0 };
        let i = v.as_i64();
        match (ty.code, ty.bits) {
            (TypeCode::Bool, _) => s.b = v.is_true(),
            (TypeCode::Int, 8) => s.i8 = i as i8,
            (TypeCode::Int, 16) => s.i16 = i as i16,
            (TypeCode::Int, 32) => s.i32 = i as i32,
            (TypeCode::Int, 64) => s.i64 = i,
            (TypeCode::UInt, 8) => s.u8 = i as u8,
            (TypeCode::UInt, 16) => s.u16 = i as u16,
            (TypeCode::UInt, 32) => s.u32 = i as u32,
            (TypeCode::UInt, 64) => s.u64 = i as u64,
            (TypeCode::Float, 32) => s.f32 = v.as_f64() as f32,
            (TypeCode::Float, 64) => s.f64 = v.as_f64(),
            _ => return None,
        }
        Some(s)
    }
}

/// A parallel loop body: runs iteration `index`; nonzero means it failed.
pub type HalogenTask = unsafe extern "C" fn(ctx: *mut c_void, index: i32, closure: *mut c_void) -> c_int;

/// The functions generated code calls back into (`struct halogen_runtime`).
#[repr(C)]
#[derive(Debug)]
pub struct HalogenRuntime {
    /// Runs `body(ctx, i, closure)` for `i` in `[min, min + extent)` on the thread pool;
    /// nonzero if an iteration failed.
    pub par_for:
        unsafe extern "C" fn(ctx: *mut c_void, body: HalogenTask, min: i32, extent: i32, closure: *mut c_void) -> c_int,
    /// Records a failure's message (the first one wins).
    pub error: unsafe extern "C" fn(ctx: *mut c_void, message: *const c_char),
}

/// A generated pipeline's entry point.
pub type EntryPoint = unsafe extern "C" fn(
    rt: *const HalogenRuntime,
    ctx: *mut c_void,
    buffers: *const *mut HalogenBuffer,
    params: *const HalogenScalar,
) -> c_int;

/// What one call of generated code reports through its `ctx`: the first error.
#[derive(Debug, Default)]
pub struct RunContext {
    error: Mutex<Option<String>>,
}

impl RunContext {
    /// A context with no error.
    pub fn new() -> RunContext {
        RunContext::default()
    }

    /// The first error reported, if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    fn report(&self, message: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if e.is_none() {
            *e = Some(message);
        }
    }
}

/// `error` of the runtime table: stores the message in the [`RunContext`] `ctx` points to.
///
/// # Safety
/// `ctx` must point to a live `RunContext` and `message` to a NUL-terminated string.
unsafe extern "C" fn report_error(ctx: *mut c_void, message: *const c_char) {
    if ctx.is_null() || message.is_null() {
        return;
    }
    // SAFETY: the caller passes the ctx pointer `call` made from a live RunContext, and a
    // NUL-terminated message.
    let (ctx, text) = unsafe { (&*(ctx as *const RunContext), CStr::from_ptr(message)) };
    ctx.report(text.to_string_lossy().into_owned());
}

/// The runtime table handed to generated code: `par_for` on the Halogen thread pool.
pub static RUNTIME: HalogenRuntime = HalogenRuntime { par_for: thread_pool::halogen_par_for, error: report_error };

/// Calls the entry point `entry` with these buffers and parameters; a nonzero return
/// becomes `Error::Runtime` with the message the generated code reported.
///
/// # Safety
/// `entry` must be a generated entry point whose buffers and parameters are described by
/// `buffers` and `params` (types, dimension counts, and memory large enough for every
/// access the pipeline's bounds checks allow), and that memory must stay valid and, for
/// outputs, unaliased for the call.
pub unsafe fn call(entry: EntryPoint, buffers: &mut [HalogenBuffer], params: &[HalogenScalar]) -> Result<()> {
    let ctx = RunContext::new();
    let ptrs: Vec<*mut HalogenBuffer> = buffers.iter_mut().map(|b| b as *mut HalogenBuffer).collect();
    // SAFETY: the caller guarantees the descriptors match the entry point; ctx outlives the call.
    let rc = unsafe { entry(&RUNTIME, &ctx as *const RunContext as *mut c_void, ptrs.as_ptr(), params.as_ptr()) };
    if rc == 0 {
        return Ok(());
    }
    Err(Error::Runtime(ctx.take_error().unwrap_or_else(|| format!("generated code failed with code {rc}"))))
}
