//! The C ABI between Rust and generated code: the buffer descriptor (with its device
//! handle, device interface and dirty flags), the scalar parameter union, the runtime
//! function table, the entry point's signature, and the context of one call (with the
//! communicator of a distributed run, see [`super::distributed`]). The layouts match
//! `RUNTIME_TYPES` in `backend/c/prelude.rs` field for field; generated C checks that with
//! the numbers of [`super::layout`].

use super::distributed::{Communicator, DistributedRun};
use super::thread_pool;
use crate::error::{Error, Result};
use crate::ir::semantics::Scalar;
use crate::ir::{Expr, Type, TypeCode};
use crate::runtime::{BufferDim, RawBuffer, RawBufferMut};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

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

/// Bit of [`HalogenBuffer::flags`]: the host copy was written and the device copy (if
/// any) is stale (`HALOGEN_HOST_DIRTY` in C).
pub const HOST_DIRTY: u64 = 1;

/// Bit of [`HalogenBuffer::flags`]: the device copy was written and the host copy is stale
/// (`HALOGEN_DEVICE_DIRTY` in C).
pub const DEVICE_DIRTY: u64 = 2;

/// A buffer descriptor (`struct halogen_buffer`, after Halide's `halide_buffer_t`): the
/// address of the element at the mins, the element type and the dimensions, and the
/// buffer's copy on a device, if it has one, with flags saying which copy is newer.
///
/// Host-only buffers have `device == 0`, a null `device_interface` and no flags; a run on
/// the host refuses a buffer whose newest data is on a device it cannot copy back from
/// (see [`super::device`]).
#[repr(C)]
#[derive(Debug)]
pub struct HalogenBuffer {
    /// The device's handle of the buffer's device copy; 0 when it has none.
    pub device: u64,
    /// The functions that manage the device copy; null for a host-only buffer.
    pub device_interface: *const HalogenDeviceInterface,
    /// The first element.
    pub host: *mut u8,
    /// [`HOST_DIRTY`] and [`DEVICE_DIRTY`].
    pub flags: u64,
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

/// How a device back end (a GPU's) manages the device copy of a buffer
/// (`struct halogen_device_interface`). Each function takes the caller's context pointer
/// and the buffer, and returns 0 on success or nonzero on failure. The functions move
/// memory; the caller keeps [`HalogenBuffer::flags`] (the runtime clears [`DEVICE_DIRTY`]
/// after a successful `copy_to_host`).
///
/// ```
/// use halogen::runtime::ffi::{HalogenBuffer, HalogenDeviceInterface, DEVICE_DIRTY};
/// use std::ffi::{c_int, c_void};
/// // A "device" whose copy is the host memory itself: nothing to move.
/// unsafe extern "C" fn same_memory(_: *mut c_void, _: *mut HalogenBuffer) -> c_int {
///     0
/// }
/// static SHARED: HalogenDeviceInterface = HalogenDeviceInterface {
///     device_malloc: same_memory,
///     device_free: same_memory,
///     copy_to_host: same_memory,
///     copy_to_device: same_memory,
/// };
/// let mut pixels = [0u8; 4];
/// let dims = [halogen::runtime::ffi::HalogenDim { min: 0, extent: 4, stride: 1, flags: 0 }];
/// let mut b = HalogenBuffer::new(pixels.as_mut_ptr(), halogen::Type::u8(), &dims);
/// b.device_interface = &SHARED;
/// b.flags = DEVICE_DIRTY;
/// assert!(b.device_dirty() && !b.host_dirty());
/// ```
#[repr(C)]
#[derive(Debug)]
pub struct HalogenDeviceInterface {
    /// Allocates the device copy for the buffer's shape and stores its handle in `device`.
    pub device_malloc: unsafe extern "C" fn(ctx: *mut c_void, buf: *mut HalogenBuffer) -> c_int,
    /// Releases the device copy and sets `device` to 0.
    pub device_free: unsafe extern "C" fn(ctx: *mut c_void, buf: *mut HalogenBuffer) -> c_int,
    /// Copies the device copy to the host memory at `host`.
    pub copy_to_host: unsafe extern "C" fn(ctx: *mut c_void, buf: *mut HalogenBuffer) -> c_int,
    /// Copies the host memory at `host` to the device copy (allocating it if `device` is 0).
    pub copy_to_device: unsafe extern "C" fn(ctx: *mut c_void, buf: *mut HalogenBuffer) -> c_int,
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
    /// A host-only descriptor of `dims.len()` dimensions over the memory at `host`: no
    /// device copy, no dirty flags. `dims` must outlive every use of the descriptor.
    ///
    /// ```
    /// use halogen::runtime::ffi::{HalogenBuffer, HalogenDim};
    /// let mut pixels = [0u16; 6];
    /// let dims = [HalogenDim { min: 0, extent: 3, stride: 1, flags: 0 }, HalogenDim { min: 0, extent: 2, stride: 3, flags: 0 }];
    /// let b = HalogenBuffer::new(pixels.as_mut_ptr().cast(), halogen::Type::u16(), &dims);
    /// assert_eq!((b.device, b.flags, b.dimensions, b.type_bits), (0, 0, 2, 16));
    /// assert!(b.device_interface.is_null());
    /// ```
    pub fn new(host: *mut u8, elem: Type, dims: &[HalogenDim]) -> HalogenBuffer {
        HalogenBuffer {
            device: 0,
            device_interface: std::ptr::null(),
            host,
            flags: 0,
            type_code: type_code(elem),
            type_bits: elem.bits,
            type_lanes: 1,
            dimensions: dims.len() as i32,
            dim: dims.as_ptr(),
        }
    }

    /// Whether the host copy is newer than the device copy ([`HOST_DIRTY`]).
    ///
    /// ```
    /// use halogen::runtime::ffi::{HalogenBuffer, HOST_DIRTY};
    /// let mut b = HalogenBuffer::new(std::ptr::null_mut(), halogen::Type::u8(), &[]);
    /// assert!(!b.host_dirty());
    /// b.set_host_dirty(true);
    /// assert!(b.host_dirty() && b.flags == HOST_DIRTY);
    /// b.set_host_dirty(false);
    /// assert_eq!(b.flags, 0);
    /// ```
    pub fn host_dirty(&self) -> bool {
        self.flags & HOST_DIRTY != 0
    }

    /// Sets or clears [`HOST_DIRTY`], leaving the other flags.
    pub fn set_host_dirty(&mut self, dirty: bool) {
        self.set_flag(HOST_DIRTY, dirty);
    }

    /// Whether the device copy is newer than the host copy ([`DEVICE_DIRTY`]).
    ///
    /// ```
    /// use halogen::runtime::ffi::{HalogenBuffer, DEVICE_DIRTY, HOST_DIRTY};
    /// let mut b = HalogenBuffer::new(std::ptr::null_mut(), halogen::Type::u8(), &[]);
    /// b.set_host_dirty(true);
    /// b.set_device_dirty(true);
    /// assert!(b.device_dirty() && b.flags == HOST_DIRTY | DEVICE_DIRTY);
    /// b.set_device_dirty(false);
    /// assert!(!b.device_dirty() && b.host_dirty());
    /// ```
    pub fn device_dirty(&self) -> bool {
        self.flags & DEVICE_DIRTY != 0
    }

    /// Sets or clears [`DEVICE_DIRTY`], leaving the other flags.
    pub fn set_device_dirty(&mut self, dirty: bool) {
        self.set_flag(DEVICE_DIRTY, dirty);
    }

    fn set_flag(&mut self, bit: u64, on: bool) {
        if on {
            self.flags |= bit;
        } else {
            self.flags &= !bit;
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

/// The runtime table's border-exchange entry ([`HalogenRuntime::exchange`]).
pub type HalogenExchange = unsafe extern "C" fn(
    ctx: *mut c_void,
    op: i32,
    peer: i32,
    base: *mut c_void,
    elem_bytes: i32,
    dims: i32,
    extents: *const i64,
    strides: *const i64,
) -> c_int;

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
    /// Storage for an intermediate buffer at the pipeline's top level: `bytes` bytes,
    /// uninitialized; null if out of memory.
    pub alloc: unsafe extern "C" fn(ctx: *mut c_void, bytes: usize) -> *mut c_void,
    /// Releases storage from `alloc` (null is ignored).
    pub free: unsafe extern "C" fn(ctx: *mut c_void, block: *mut c_void),
    /// Runs a GPU kernel (see [`super::gpu`]); `None` in a runtime without devices.
    pub gpu_launch: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            kernels: *mut HalogenKernels,
            name: *const c_char,
            blocks: *const i32,
            threads: *const i32,
            args: *const HalogenKernelArg,
            nargs: i32,
        ) -> c_int,
    >,
    /// Releases the device copy of a buffer the pipeline allocated.
    pub gpu_release: Option<unsafe extern "C" fn(ctx: *mut c_void, buf: *mut HalogenBuffer)>,
    /// A border exchange of a distributed run (see [`super::distributed::halogen_exchange`]):
    /// `op` [`exchange_op::SEND`] posts a send of the region (`dims` dimensions of
    /// `extents` and `strides`, in elements of `elem_bytes` bytes, from `base`) to rank
    /// `peer`, [`exchange_op::RECEIVE`] posts a receive from `peer` into it, a code from
    /// [`exchange_op::COMBINE`] on posts a receive combined into it, and
    /// [`exchange_op::FINISH`] completes the posted transfers (the other arguments
    /// ignored). Nonzero on failure (reported through `error`). `None` in a runtime
    /// without distribution.
    pub exchange: Option<HalogenExchange>,
}

/// The operations of [`HalogenRuntime::exchange`].
pub mod exchange_op {
    /// Post a send of the region to the peer.
    pub const SEND: i32 = 0;
    /// Post a receive from the peer into the region.
    pub const RECEIVE: i32 = 1;
    /// Complete the exchange: every posted send and receive.
    pub const FINISH: i32 = 2;
    /// The first code of a receive that combines the peer's elements into the region's
    /// (an all-reduce's): `COMBINE + 2 · k + s` for the `k`-th operation of
    /// [`crate::ir::CombineOp::ALL`], `s` 1 for signed elements (see
    /// [`crate::runtime::distributed::Combiner::code`]).
    pub const COMBINE: i32 = 16;
}

/// The GPU kernels of one generated file (`struct halogen_kernels`): their source, the
/// messages of their checks, and the runtime's handle of the compiled code.
#[repr(C)]
#[derive(Debug)]
pub struct HalogenKernels {
    /// 1: OpenCL C, 2: CUDA C.
    pub api: i32,
    /// Number of `check_messages`.
    pub checks: i32,
    /// The kernels' source, NUL-terminated.
    pub source: *const c_char,
    /// `checks` NUL-terminated messages: a kernel's failed check `i` (from 1) is message `i - 1`.
    pub check_messages: *const *const c_char,
    /// The runtime's compiled module; null until the first launch.
    pub state: *mut c_void,
}

/// One argument of a kernel launch (`struct halogen_kernel_arg`): a scalar's bytes, or a
/// buffer with the [`access`] bits of its use.
#[repr(C)]
#[derive(Debug)]
pub struct HalogenKernelArg {
    /// A scalar argument's bytes; null for a buffer.
    pub value: *const c_void,
    /// Bytes at `value`.
    pub size: u64,
    /// A buffer argument; null for a scalar.
    pub buffer: *mut HalogenBuffer,
    /// [`access`] bits.
    pub access: u64,
}

/// Bits of [`HalogenKernelArg::access`] (`HALOGEN_ACCESS_*` in C).
pub mod access {
    /// The kernel reads the buffer.
    pub const READ: u64 = 1;
    /// The kernel writes the buffer.
    pub const WRITE: u64 = 2;
    /// Host code of the pipeline writes it: its host copy may be newer before a launch.
    pub const HOST_WRITES: u64 = 4;
    /// Host code of the pipeline reads or writes it: copied back after a launch writes it.
    pub const HOST_READS: u64 = 8;
    /// Its host memory holds data from before the run (an input): copied to a new device copy.
    pub const HOST_DATA: u64 = 16;
}

/// A generated pipeline's entry point.
pub type EntryPoint = unsafe extern "C" fn(
    rt: *const HalogenRuntime,
    ctx: *mut c_void,
    buffers: *const *mut HalogenBuffer,
    params: *const HalogenScalar,
) -> c_int;

/// What one call of generated code reports through its `ctx`: the first error; and, for
/// a rank of a distributed run, its communicator.
///
/// ```
/// use halogen::runtime::distributed::{Communicator, SingleRank};
/// use halogen::runtime::ffi::RunContext;
/// use std::sync::Arc;
/// assert!(RunContext::new().communicator().is_none());
/// let ctx = RunContext::with_communicator(Arc::new(SingleRank));
/// assert_eq!(ctx.communicator().unwrap().ranks(), 1);
/// ```
#[derive(Debug, Default)]
pub struct RunContext {
    error: Mutex<Option<String>>,
    /// What the run did on devices (see [`super::gpu`]).
    gpu: Mutex<super::gpu::RunState>,
    /// The communicator of a distributed run and the border exchange being posted.
    distributed: Mutex<Option<DistributedRun>>,
}

impl RunContext {
    /// A context with no error.
    pub fn new() -> RunContext {
        RunContext::default()
    }

    /// A context for one rank of a distributed run, whose border exchanges go through
    /// `comm`.
    pub fn with_communicator(comm: Arc<dyn Communicator>) -> RunContext {
        RunContext { distributed: Mutex::new(Some(DistributedRun::new(comm))), ..RunContext::default() }
    }

    /// A context with `comm`'s communicator, if any.
    fn for_run(comm: Option<Arc<dyn Communicator>>) -> RunContext {
        comm.map_or_else(RunContext::new, RunContext::with_communicator)
    }

    /// The run's communicator; `None` outside a distributed run.
    pub fn communicator(&self) -> Option<Arc<dyn Communicator>> {
        self.distributed().as_ref().map(|d| d.comm.clone())
    }

    /// The run's communicator and pending border exchange.
    pub(crate) fn distributed(&self) -> MutexGuard<'_, Option<DistributedRun>> {
        self.distributed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The first error reported, if any.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// The context behind a `ctx` pointer that generated code passes back to the runtime
    /// table's functions; `None` for null.
    ///
    /// # Safety
    /// A non-null `ctx` is the pointer [`call`] or [`call_on_host`] (or their
    /// `_with_communicator` forms) made from a live
    /// `RunContext` for the call in progress.
    pub(crate) unsafe fn from_raw<'a>(ctx: *mut c_void) -> Option<&'a RunContext> {
        // SAFETY: the caller's promise.
        (!ctx.is_null()).then(|| unsafe { &*(ctx as *const RunContext) })
    }

    /// The run's device state.
    pub(crate) fn gpu_state(&self) -> std::sync::MutexGuard<'_, super::gpu::RunState> {
        self.gpu.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn report(&self, message: String) {
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
    // SAFETY: the caller passes the ctx pointer `call` made from a live RunContext.
    let Some(ctx) = (unsafe { RunContext::from_raw(ctx) }) else { return };
    if message.is_null() {
        return;
    }
    // SAFETY: a NUL-terminated message (the caller's promise).
    let text = unsafe { CStr::from_ptr(message) };
    ctx.report(text.to_string_lossy().into_owned());
}

/// The runtime table handed to generated code: `par_for` on the Halogen thread pool,
/// intermediate buffers from the pooled heap ([`super::pool`]), border exchanges through
/// the run's communicator ([`super::distributed`]).
pub static RUNTIME: HalogenRuntime = HalogenRuntime {
    par_for: thread_pool::halogen_par_for,
    error: report_error,
    alloc: super::pool::pool_alloc,
    free: super::pool::pool_free,
    gpu_launch: Some(super::gpu::halogen_gpu_launch),
    gpu_release: Some(super::gpu::halogen_gpu_release),
    exchange: Some(super::distributed::halogen_exchange),
};

/// Calls the entry point `entry` with these buffers and parameters; a nonzero return
/// becomes `Error::Runtime` with the message the generated code reported. The descriptors
/// go as they are: [`call_on_host`] also applies the rules of [`super::device`].
///
/// # Safety
/// `entry` must be a generated entry point whose buffers and parameters are described by
/// `buffers` and `params` (types, dimension counts, and memory large enough for every
/// access the pipeline's bounds checks allow), and that memory must stay valid and, for
/// outputs, unaliased for the call.
pub unsafe fn call(entry: EntryPoint, buffers: &mut [HalogenBuffer], params: &[HalogenScalar]) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe { call_with_communicator(entry, buffers, params, None) }
}

/// [`call`] for one rank of a distributed run: the entry point's border exchanges go
/// through `comm` (a run of a pipeline with distributed loops and no communicator fails).
///
/// # Safety
/// As for [`call`].
pub unsafe fn call_with_communicator(
    entry: EntryPoint,
    buffers: &mut [HalogenBuffer],
    params: &[HalogenScalar],
    comm: Option<Arc<dyn Communicator>>,
) -> Result<()> {
    let ctx = RunContext::for_run(comm);
    let ptrs: Vec<*mut HalogenBuffer> = buffers.iter_mut().map(|b| b as *mut HalogenBuffer).collect();
    // SAFETY: the caller's promise.
    unsafe { invoke(entry, &ctx, &ptrs, params) }
}

/// Calls `entry` with the runtime table and `ctx`.
///
/// # Safety
/// As for [`call`], with `ptrs` pointing at the descriptors.
unsafe fn invoke(
    entry: EntryPoint,
    ctx: &RunContext,
    ptrs: &[*mut HalogenBuffer],
    params: &[HalogenScalar],
) -> Result<()> {
    // SAFETY: the caller guarantees the descriptors match the entry point; ctx outlives the call.
    let rc = unsafe { entry(&RUNTIME, ctx as *const RunContext as *mut c_void, ptrs.as_ptr(), params.as_ptr()) };
    // Device copies back and released, whether the run succeeded or not.
    // SAFETY: the descriptors are live (the caller's promise).
    let finished = unsafe { super::gpu::finish_run(ctx, ptrs) };
    // Transfers posted and never completed are dropped (an error when the run succeeded).
    let exchanged = super::distributed::check_no_pending_exchange(ctx);
    if rc == 0 {
        return finished.and(exchanged);
    }
    Err(Error::Runtime(ctx.take_error().unwrap_or_else(|| format!("generated code failed with code {rc}"))))
}

/// A descriptor on its way to an entry point, with the name errors give it and whether the
/// pipeline writes it.
#[derive(Debug)]
pub struct NamedBuffer<'a> {
    /// The buffer's name in the pipeline.
    pub name: &'a str,
    /// Whether the pipeline writes it (an output).
    pub is_output: bool,
    /// The descriptor the entry point gets.
    pub descriptor: HalogenBuffer,
}

/// Runs `entry` on the host: readies the buffers ([`super::device::prepare_host_run`]: a
/// buffer whose newest data is on a device is copied back, or refused by name when it
/// cannot be, before anything runs), calls it as [`call`] does, and after a successful
/// run marks every output host-dirty ([`super::device::mark_host_written`]). The same
/// context pointer goes to the device interfaces and to the entry point.
///
/// # Safety
/// As for [`call`], for the descriptors in `buffers`; and every non-null
/// `device_interface` must point to a valid table whose functions accept the descriptor.
pub unsafe fn call_on_host(entry: EntryPoint, buffers: &mut [NamedBuffer<'_>], params: &[HalogenScalar]) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe { call_on_host_with_communicator(entry, buffers, params, None) }
}

/// [`call_on_host`] for one rank of a distributed run: the entry point's border exchanges
/// go through `comm`.
///
/// # Safety
/// As for [`call_on_host`].
pub unsafe fn call_on_host_with_communicator(
    entry: EntryPoint,
    buffers: &mut [NamedBuffer<'_>],
    params: &[HalogenScalar],
    comm: Option<Arc<dyn Communicator>>,
) -> Result<()> {
    let ctx = RunContext::for_run(comm);
    let ctx_ptr = &ctx as *const RunContext as *mut c_void;
    // SAFETY: the interfaces are valid (the caller's promise).
    unsafe { super::device::prepare_host_run(ctx_ptr, buffers)? };
    let ptrs: Vec<*mut HalogenBuffer> = buffers.iter_mut().map(|b| &mut b.descriptor as *mut HalogenBuffer).collect();
    // SAFETY: the caller's promise.
    unsafe { invoke(entry, &ctx, &ptrs, params)? };
    super::device::mark_host_written(buffers);
    Ok(())
}

/// A buffer passed to an entry point, with the element type and dimension count the
/// entry point was compiled for; [`call_checked`] compares the two before the call.
///
/// ```
/// use halogen::runtime::ffi::BufferBinding;
/// use halogen::{Buffer, Type};
/// let b = Buffer::<u16>::new(&[4, 3]);
/// let binding = BufferBinding::input("input", Type::u16(), 2, b.raw());
/// assert_eq!(binding.name(), "input");
/// ```
#[derive(Debug)]
pub struct BufferBinding<'a> {
    name: &'a str,
    is_output: bool,
    elem: Type,
    dims: usize,
    ty: Type,
    shape: Vec<BufferDim>,
    host: *mut u8,
    len: usize,
    /// The device memory holding the elements, for a buffer in device memory (its host
    /// pointer is then null: the pipeline's host code never touches it).
    device: u64,
    // The descriptor points into the borrowed storage for as long as the binding lives.
    _storage: PhantomData<&'a mut [u8]>,
}

impl<'a> BufferBinding<'a> {
    /// An input the entry point reads as `dims` dimensions of `elem` (generated code never
    /// stores to an input).
    pub fn input(name: &'a str, elem: Type, dims: usize, buffer: RawBuffer<'a>) -> BufferBinding<'a> {
        let len = buffer.len();
        BufferBinding {
            name,
            is_output: false,
            elem,
            dims,
            ty: buffer.ty,
            shape: buffer.dims,
            host: if buffer.device.is_some() { std::ptr::null_mut() } else { buffer.bytes.as_ptr() as *mut u8 },
            len,
            device: buffer.device.map_or(0, |d| d.mem),
            _storage: PhantomData,
        }
    }

    /// An output the entry point writes as `dims` dimensions of `elem`, over the region its
    /// shape covers.
    ///
    /// ```
    /// use halogen::runtime::ffi::BufferBinding;
    /// use halogen::{Buffer, Type};
    /// let mut b = Buffer::<f32>::new(&[8]);
    /// let binding = BufferBinding::output("out", Type::f32(), 1, b.raw_mut());
    /// assert_eq!(binding.name(), "out");
    /// ```
    pub fn output(name: &'a str, elem: Type, dims: usize, buffer: RawBufferMut<'a>) -> BufferBinding<'a> {
        let len = buffer.len();
        BufferBinding {
            name,
            is_output: true,
            elem,
            dims,
            ty: buffer.ty,
            shape: buffer.dims,
            host: if buffer.device.is_some() { std::ptr::null_mut() } else { buffer.bytes.as_mut_ptr() },
            len,
            device: buffer.device.map_or(0, |d| d.mem),
            _storage: PhantomData,
        }
    }

    /// The buffer's name, as error messages give it.
    pub fn name(&self) -> &str {
        self.name
    }
}

/// Checks that every coordinate of `dims` lands inside `len` elements, so that code whose
/// bounds checks passed cannot touch memory outside the buffer.
fn check_covers(name: &str, dims: &[BufferDim], len: usize) -> Result<()> {
    if dims.iter().any(|d| d.extent <= 0) {
        return Ok(());
    }
    let (mut lo, mut hi) = (0i64, 0i64);
    for d in dims {
        let span = (d.extent as i64 - 1) * d.stride as i64;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    if lo < 0 || hi >= len as i64 {
        return Err(Error::Buffer(format!(
            "buffer '{name}': its dimensions reach elements [{lo}, {hi}] but it holds {len} elements"
        )));
    }
    Ok(())
}

/// Checks each binding (element type and dimension count as compiled, a shape inside its
/// memory) and calls `entry` with them, in order, and `params`, through [`call_on_host`]
/// (a binding of a host buffer has no device copy; one of a buffer in device memory has no
/// host memory); a nonzero return becomes `Error::Runtime` with the message the generated
/// code reported. Both the JIT and the wrappers `halogen::build` writes call generated code
/// through here.
///
/// # Safety
/// `entry` must be a generated entry point that takes exactly these buffers, in this order,
/// with the element types and dimension counts the bindings name, and `params` in its
/// order with its types. A binding in device memory must belong to the device the entry
/// point's kernels run on, and only its kernels may touch it.
pub unsafe fn call_checked(entry: EntryPoint, buffers: &[BufferBinding<'_>], params: &[HalogenScalar]) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe { call_checked_with_communicator(entry, buffers, params, None) }
}

/// [`call_checked`] for one rank of a distributed run: the entry point's border exchanges
/// go through `comm` ([`call_on_host_with_communicator`]).
///
/// # Safety
/// As for [`call_checked`].
pub unsafe fn call_checked_with_communicator(
    entry: EntryPoint,
    buffers: &[BufferBinding<'_>],
    params: &[HalogenScalar],
    comm: Option<Arc<dyn Communicator>>,
) -> Result<()> {
    let mut dims: Vec<Vec<HalogenDim>> = Vec::with_capacity(buffers.len());
    for b in buffers {
        if b.ty.element() != b.elem || b.shape.len() != b.dims {
            return Err(Error::Buffer(format!(
                "buffer '{}' holds {} in {} dimensions but the pipeline needs {} in {}",
                b.name,
                b.ty,
                b.shape.len(),
                b.elem,
                b.dims
            )));
        }
        check_covers(b.name, &b.shape, b.len)?;
        dims.push(b.shape.iter().map(HalogenDim::from).collect());
    }
    let mut descriptors: Vec<NamedBuffer<'_>> = buffers
        .iter()
        .zip(&dims)
        .map(|(b, d)| {
            let mut descriptor = HalogenBuffer::new(b.host, b.elem, d);
            descriptor.device = b.device;
            NamedBuffer { name: b.name, is_output: b.is_output, descriptor }
        })
        .collect();
    // SAFETY: each descriptor has the type and dimension count the code was compiled for
    // (the caller's promise, checked above against the buffer), and covers memory of `len`
    // elements, on the host or on the device, that stays borrowed for the call
    // (check_covers); outputs are borrowed mutably, so nothing aliases them. No descriptor
    // has a device interface; one in device memory is only touched by kernels (the
    // caller's promise).
    unsafe { call_on_host_with_communicator(entry, &mut descriptors, params, comm) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covering_checks() {
        let d = |min, extent, stride| BufferDim { min, extent, stride };
        assert!(check_covers("b", &[d(0, 4, 1), d(0, 3, 4)], 12).is_ok());
        assert!(check_covers("b", &[d(0, 4, 1), d(0, 3, 4)], 11).is_err());
        assert!(check_covers("b", &[d(0, 0, 1)], 0).is_ok());
        assert!(check_covers("b", &[d(0, 2, -1)], 2).is_err());
    }

    #[test]
    fn bindings_are_checked_before_the_call() {
        unsafe extern "C" fn never(
            _: *const HalogenRuntime,
            _: *mut c_void,
            _: *const *mut HalogenBuffer,
            _: *const HalogenScalar,
        ) -> c_int {
            unreachable!("a mismatched binding must not reach the entry point")
        }
        let b = crate::runtime::Buffer::<u16>::new(&[4, 3]);
        let wrong_dims = [BufferBinding::input("img", Type::u16(), 3, b.raw())];
        // SAFETY: the check fails before `never` could be called.
        let e = unsafe { call_checked(never, &wrong_dims, &[]) }.unwrap_err();
        assert!(e.to_string().contains("buffer 'img' holds uint16 in 2 dimensions"), "{e}");
        let wrong_type = [BufferBinding::input("img", Type::f32(), 2, b.raw())];
        // SAFETY: as above.
        let e = unsafe { call_checked(never, &wrong_type, &[]) }.unwrap_err();
        assert!(e.to_string().contains("needs float32 in 2"), "{e}");
    }
}
