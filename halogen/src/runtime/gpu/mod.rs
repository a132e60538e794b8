//! The GPU runtime: what generated host code calls to run its kernels
//! ([`HalogenRuntime::gpu_launch`](super::ffi::HalogenRuntime) and `gpu_release`), over one
//! device per API, found on first use and kept for the process ([`device`]).
//!
//! A launch readies each buffer argument's device copy, runs the kernel and keeps the
//! buffer's dirty flags (Halide's model, `HALOGEN_HOST_DIRTY` / `HALOGEN_DEVICE_DIRTY` on the
//! descriptor):
//! - a buffer without a device copy gets one; it is filled from the host when its host
//!   memory holds the run's data (an input, [`access::HOST_DATA`]) or host code of the
//!   pipeline writes it ([`access::HOST_WRITES`]), and the same whenever its host copy is
//!   marked newer;
//! - after the kernel, a buffer it wrote is device-dirty, and is copied back at once when host
//!   code of the pipeline reads it ([`access::HOST_READS`]), so host code never reads a stale
//!   copy and a chain of GPU stages never goes through the host;
//! - at the end of the run ([`finish_run`]), device-dirty entry buffers (the outputs) are
//!   copied back, every device copy made during the run goes back to a pool of device
//!   memory that later runs take from ([`release_cached_memory`] empties it), and a check
//!   that failed inside a kernel becomes the run's error.
//!
//! Each generated file's kernels are compiled once, on first launch, and the compiled module
//! is kept in the file's `struct halogen_kernels` for every later run. The device APIs are
//! loaded at run time: a machine without OpenCL (or CUDA) fails a GPU pipeline's run with an
//! `Err` naming what is missing, and nothing else.
//!
//! ```
//! use halogen::runtime::gpu::{device, Api};
//! // Either a device, or an error that says which API is missing and why.
//! match device(Api::OpenCL) {
//!     Ok(d) => assert!(!d.describe().is_empty()),
//!     Err(e) => assert!(e.to_string().contains("OpenCL"), "{e}"),
//! }
//! ```

#[cfg(feature = "cuda")]
mod cuda;
pub mod device_buffer;
mod opencl;

pub use device_buffer::{target_api, DeviceBuffer};

use super::block_cache::BlockCache;
use super::ffi::{access, HalogenBuffer, HalogenKernelArg, HalogenKernels, RunContext, DEVICE_DIRTY, HOST_DIRTY};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The device API a generated file's kernels are written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenCL C 1.2, through the ICD loader `libOpenCL.so.1`.
    OpenCL,
    /// CUDA C, compiled with NVRTC and run through the driver `libcuda.so.1`.
    Cuda,
}

impl Api {
    /// The number `struct halogen_kernels` stores for this API.
    pub fn code(self) -> i32 {
        match self {
            Api::OpenCL => 1,
            Api::Cuda => 2,
        }
    }

    fn from_code(code: i32) -> Option<Api> {
        match code {
            1 => Some(Api::OpenCL),
            2 => Some(Api::Cuda),
            _ => None,
        }
    }

    /// The API's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Api::OpenCL => "OpenCL",
            Api::Cuda => "CUDA",
        }
    }
}

/// One argument of a kernel as the device receives it.
#[derive(Clone, Copy, Debug)]
pub enum KernelArg<'a> {
    /// A scalar's bytes.
    Bytes(&'a [u8]),
    /// A device memory handle.
    Memory(u64),
}

/// A device: memory and compiled code.
pub trait Device: Send + Sync {
    /// The device's name and driver, for messages.
    fn describe(&self) -> String;
    /// The most threads one block may have.
    fn max_threads_per_block(&self) -> usize;
    /// `bytes` bytes of device memory (at least one), as a handle.
    fn malloc(&self, bytes: usize) -> Result<u64>;
    /// Releases memory from [`Device::malloc`].
    ///
    /// # Safety
    /// `mem` came from this device's `malloc` and is not used again.
    unsafe fn free(&self, mem: u64);
    /// Copies `bytes` bytes from the host at `src` to the start of `mem`.
    ///
    /// # Safety
    /// `src` is readable for `bytes` bytes, and `mem` holds at least as many.
    unsafe fn write(&self, mem: u64, src: *const u8, bytes: usize) -> Result<()>;
    /// Copies `bytes` bytes from the start of `mem` to the host at `dst`.
    ///
    /// # Safety
    /// `dst` is writable for `bytes` bytes, and `mem` holds at least as many.
    unsafe fn read(&self, mem: u64, dst: *mut u8, bytes: usize) -> Result<()>;
    /// Queues a copy of `bytes` bytes from the start of `src` to the start of `dst`, both
    /// device memory ([`Device::synchronize`] waits for it).
    ///
    /// # Safety
    /// Both handles came from this device's `malloc` and hold at least `bytes` bytes.
    unsafe fn copy(&self, dst: u64, src: u64, bytes: usize) -> Result<()>;
    /// Compiles a file's kernels.
    fn build(&self, source: &str) -> Result<Box<dyn Module>>;
    /// Waits until everything queued on the device has finished.
    fn synchronize(&self) -> Result<()>;
}

/// Whether `HALOGEN_GPU_PROFILE=1`: every launch waits for its kernel, and each kernel,
/// copy and allocation prints its time to stderr (`halogen gpu: kernel NAME 0.123 ms`).
fn profiling() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("HALOGEN_GPU_PROFILE").is_ok_and(|v| v == "1"))
}

/// Runs `f`, printing its time as `what` when profiling.
fn timed<T>(what: impl FnOnce() -> String, f: impl FnOnce() -> Result<T>) -> Result<T> {
    if !profiling() {
        return f();
    }
    let start = std::time::Instant::now();
    let r = f();
    eprintln!("halogen gpu: {} {:.3} ms", what(), start.elapsed().as_secs_f64() * 1e3);
    r
}

/// Whether [`time_kernels`] is timing launches, and the nanoseconds its kernels took.
static KERNEL_TIMING: AtomicBool = AtomicBool::new(false);
static KERNEL_NANOS: AtomicU64 = AtomicU64::new(0);

/// Runs `f` with every kernel launch waiting for its kernel, and returns what `f` returned
/// with the seconds the kernels took together (each from its launch to the end of its
/// wait): a run's time on the device without its host work, launch gaps and final copies,
/// comparable with [`copy_bandwidth`]'s copies. For benchmarks: the count is the process's,
/// so runs on other threads at the same time add theirs.
///
/// ```
/// use halogen::runtime::gpu::time_kernels;
/// // Nothing launched, nothing counted.
/// let (v, seconds) = time_kernels(|| Ok(7)).unwrap();
/// assert_eq!((v, seconds), (7, 0.0));
/// ```
pub fn time_kernels<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, f64)> {
    KERNEL_NANOS.store(0, Ordering::SeqCst);
    KERNEL_TIMING.store(true, Ordering::SeqCst);
    let r = f();
    KERNEL_TIMING.store(false, Ordering::SeqCst);
    Ok((r?, KERNEL_NANOS.load(Ordering::SeqCst) as f64 * 1e-9))
}

/// The bytes per second (read plus written) of the fastest of `runs` device-to-device
/// copies of `bytes` bytes on the device of `api`, each timed from its start to the end of
/// a wait for it: the yardstick a memory-bound pipeline's kernels are measured against
/// (`halogen bench --device-buffers`). `Err` where the device cannot be opened or the memory
/// cannot be had.
///
/// ```
/// use halogen::runtime::gpu::{copy_bandwidth, Api};
/// match copy_bandwidth(Api::OpenCL, 1 << 20, 3) {
///     Ok(bytes_per_second) => assert!(bytes_per_second > 0.0),
///     Err(e) => assert!(e.to_string().contains("OpenCL"), "{e}"),
/// }
/// ```
pub fn copy_bandwidth(api: Api, bytes: usize, runs: usize) -> Result<f64> {
    let dev = device(api)?;
    let bytes = bytes.max(1);
    let src = dev.malloc(bytes)?;
    let dst = match dev.malloc(bytes) {
        Ok(m) => m,
        Err(e) => {
            // SAFETY: just allocated, not used.
            unsafe { dev.free(src) };
            return Err(e);
        }
    };
    let timed_copy = || -> Result<f64> {
        let start = std::time::Instant::now();
        // SAFETY: both hold `bytes` bytes.
        unsafe { dev.copy(dst, src, bytes)? };
        dev.synchronize()?;
        Ok(start.elapsed().as_secs_f64())
    };
    // Two copies to warm up (first touches of the memory), then the timed ones.
    let best = (0..runs.max(1) + 2)
        .map(|_| timed_copy())
        .collect::<Result<Vec<f64>>>()
        .map(|t| t.into_iter().skip(2).fold(f64::INFINITY, f64::min));
    // SAFETY: allocated above; the copies have finished (or failed).
    unsafe {
        dev.free(src);
        dev.free(dst);
    }
    Ok(2.0 * bytes as f64 / best?.max(1e-9))
}

/// A file's compiled kernels on one device.
pub trait Module: Send + Sync {
    /// Runs kernel `name` over `blocks` blocks of `threads` threads.
    ///
    /// # Safety
    /// `args` match the kernel's parameters, and every buffer it reaches holds every
    /// element the kernel accesses.
    unsafe fn launch(&self, name: &str, blocks: [usize; 3], threads: [usize; 3], args: &[KernelArg<'_>]) -> Result<()>;
}

/// The device of `api`, opened on first use and kept for the process; an `Err` (the same
/// one each time) names what is missing where the API has no device here.
pub fn device(api: Api) -> Result<&'static dyn Device> {
    static OPENCL: OnceLock<std::result::Result<Box<dyn Device>, String>> = OnceLock::new();
    static CUDA: OnceLock<std::result::Result<Box<dyn Device>, String>> = OnceLock::new();
    let slot = match api {
        Api::OpenCL => OPENCL.get_or_init(|| opencl::open().map(|d| Box::new(d) as Box<dyn Device>)),
        Api::Cuda => CUDA.get_or_init(open_cuda),
    };
    match slot {
        Ok(d) => Ok(d.as_ref()),
        Err(why) => Err(Error::Target(format!("no {} device: {why}", api.name()))),
    }
}

#[cfg(feature = "cuda")]
fn open_cuda() -> std::result::Result<Box<dyn Device>, String> {
    cuda::open().map(|d| Box::new(d) as Box<dyn Device>)
}

#[cfg(not(feature = "cuda"))]
fn open_cuda() -> std::result::Result<Box<dyn Device>, String> {
    Err("this build of halogen has no CUDA runtime (build it with the cargo feature 'cuda')".to_string())
}

/// Compiles a file's CUDA C kernels (a [`crate::backend::c::CModule`]'s `kernel_source`)
/// to a cubin for compute capability `capability` (90 for an H100), without a GPU: NVRTC
/// alone. The cubin is cached where a CUDA run looks for it, so a machine without NVRTC
/// runs kernels compiled here. An `Err` carries NVRTC's log, or says NVRTC could not be
/// loaded.
#[cfg(feature = "cuda")]
pub fn compile_cuda(source: &str, capability: u32) -> Result<Vec<u8>> {
    cuda::cached_cubin(source, capability)
}

/// What one run did on devices: the device memory it made (released when it ends), and
/// the error word its kernels report failed checks in.
#[derive(Debug, Default)]
pub struct RunState {
    /// Device memory the run took from [`pooled_malloc`], with its size.
    allocations: Vec<(Api, u64, usize)>,
    error_word: Option<(Api, u64, usize)>,
}

/// Device memory that runs released, kept for later runs: allocating and freeing device
/// memory costs tens of microseconds each and waits for the device, more than a small
/// kernel takes, and a pipeline's intermediates are the same sizes run after run. One
/// [`BlockCache`] per device API, of at most [`POOL_LIMIT`] bytes; all of it is freed when
/// an allocation fails or [`release_cached_memory`] is called. A block taken from the pool
/// is only touched by work queued after the work that used it before (one in-order queue
/// per device), so reuse needs no wait.
fn pool() -> std::sync::MutexGuard<'static, HashMap<Api, BlockCache>> {
    static POOL: OnceLock<Mutex<HashMap<Api, BlockCache>>> = OnceLock::new();
    POOL.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// The most bytes of device memory the pool keeps idle, per device API.
const POOL_LIMIT: usize = 1 << 30;

/// Device memory of at least `bytes` bytes, from the pool or new; returns the handle and
/// its size (what [`recycle`] takes back).
fn pooled_malloc(api: Api, dev: &dyn Device, bytes: usize) -> Result<(u64, usize)> {
    let bytes = bytes.max(1);
    if let Some((size, mem)) = pool().get_mut(&api).and_then(|c| c.take(bytes)) {
        return Ok((mem, size));
    }
    match dev.malloc(bytes) {
        Ok(mem) => Ok((mem, bytes)),
        Err(_) => {
            // Idle blocks may be what the device lacks.
            release_cached_memory();
            Ok((dev.malloc(bytes)?, bytes))
        }
    }
}

/// Gives memory from [`pooled_malloc`] back to the pool, which frees what it cannot keep.
///
/// # Safety
/// `mem` came from `pooled_malloc(api, ..)` with size `size` and is not used again by the
/// caller; work already queued on it may still run.
unsafe fn recycle(api: Api, mem: u64, size: usize) {
    let evicted = pool().entry(api).or_insert_with(|| BlockCache::new(POOL_LIMIT)).put(size, mem);
    if let Ok(dev) = device(api) {
        for mem in evicted {
            // SAFETY: the caller's promise; the pool no longer holds it.
            unsafe { dev.free(mem) };
        }
    }
}

/// Bytes of device memory that finished runs left idle for later ones (see
/// [`release_cached_memory`]).
///
/// ```
/// halogen::runtime::gpu::release_cached_memory();
/// assert_eq!(halogen::runtime::gpu::cached_memory_bytes(), 0);
/// ```
pub fn cached_memory_bytes() -> usize {
    pool().values().map(BlockCache::bytes).sum()
}

/// Frees the device memory that finished runs left for later ones (see how `realize` keeps
/// it: intermediates and their like, at most 1 GiB). For a process that is done with the
/// GPU, or that needs the memory for something else.
///
/// ```
/// // Nothing to free where nothing ran: a no-op.
/// halogen::runtime::gpu::release_cached_memory();
/// ```
pub fn release_cached_memory() {
    let idle: Vec<(Api, Vec<u64>)> = pool().iter_mut().map(|(&api, c)| (api, c.take_all())).collect();
    for (api, blocks) in idle {
        if let Ok(dev) = device(api) {
            for mem in blocks {
                // SAFETY: idle blocks belong to the pool alone.
                unsafe { dev.free(mem) };
            }
        }
    }
}

/// Bytes of one element of `b` (a bool takes a byte).
fn element_bytes(b: &HalogenBuffer) -> usize {
    (b.type_bits as usize).div_ceil(8).max(1)
}

/// The bytes a buffer's elements span from its first element (every stride must be
/// positive, as the pipeline's own storage and [`crate::Buffer`] have them).
fn span_bytes(b: &HalogenBuffer) -> Result<usize> {
    let elem = element_bytes(b);
    let dims = if b.dimensions > 0 && !b.dim.is_null() {
        // SAFETY: a descriptor's `dim` points to `dimensions` entries.
        unsafe { std::slice::from_raw_parts(b.dim, b.dimensions as usize) }
    } else {
        &[]
    };
    let mut last: usize = 0;
    for d in dims {
        if d.extent <= 0 {
            return Ok(0);
        }
        if d.stride < 0 {
            return Err(Error::Buffer(format!(
                "a buffer with a negative stride ({}) cannot be copied to a device",
                d.stride
            )));
        }
        last += (d.extent as usize - 1) * d.stride as usize;
    }
    Ok((last + 1) * elem)
}

/// The compiled module of `kernels`, built on first use.
fn module(kernels: &mut HalogenKernels, dev: &dyn Device) -> Result<&'static dyn Module> {
    // SAFETY: `state` is a pointer-sized field that only this function writes, atomically.
    let slot = unsafe { AtomicPtr::<Box<dyn Module>>::from_ptr(&mut kernels.state as *mut *mut c_void as *mut _) };
    let mut current = slot.load(Ordering::Acquire);
    if current.is_null() {
        // SAFETY: the generated file's source is a NUL-terminated string.
        let source = unsafe { CStr::from_ptr(kernels.source) }.to_string_lossy();
        let built = Box::into_raw(Box::new(dev.build(&source)?));
        current = match slot.compare_exchange(std::ptr::null_mut(), built, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => built,
            Err(winner) => {
                // SAFETY: `built` was never shared.
                drop(unsafe { Box::from_raw(built) });
                winner
            }
        };
    }
    // SAFETY: a module, once stored, lives as long as the generated file (it is never freed).
    Ok(unsafe { &**current })
}

/// `gpu_launch` of the runtime table.
///
/// # Safety
/// Called by generated code with its ctx, its `struct halogen_kernels`, a NUL-terminated
/// kernel name, three block and three thread counts, and `nargs` valid arguments.
pub unsafe extern "C" fn halogen_gpu_launch(
    ctx: *mut c_void,
    kernels: *mut HalogenKernels,
    name: *const c_char,
    blocks: *const i32,
    threads: *const i32,
    args: *const HalogenKernelArg,
    nargs: i32,
) -> c_int {
    // SAFETY: generated code passes back the ctx pointer the run made.
    let Some(run) = (unsafe { RunContext::from_raw(ctx) }) else { return -1 };
    // SAFETY: the caller's promise.
    let r = unsafe { launch(run, &mut *kernels, name, blocks, threads, args, nargs) };
    match r {
        Ok(()) => 0,
        Err(e) => {
            run.report(e.to_string());
            -1
        }
    }
}

unsafe fn launch(
    run: &RunContext,
    kernels: &mut HalogenKernels,
    name: *const c_char,
    blocks: *const i32,
    threads: *const i32,
    args: *const HalogenKernelArg,
    nargs: i32,
) -> Result<()> {
    // SAFETY: the caller's promise (see halogen_gpu_launch).
    let (name, blocks, threads) = unsafe {
        (
            CStr::from_ptr(name).to_string_lossy().into_owned(),
            std::slice::from_raw_parts(blocks, 3),
            std::slice::from_raw_parts(threads, 3),
        )
    };
    let args = if nargs > 0 {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(args, nargs as usize) }
    } else {
        &[]
    };
    let api = Api::from_code(kernels.api)
        .ok_or_else(|| Error::Runtime(format!("kernel '{name}': unknown device API {}", kernels.api)))?;
    if blocks.iter().any(|&b| b <= 0) {
        // An empty loop: nothing to run.
        return Ok(());
    }
    let dev = device(api)?;
    let total: i64 = threads.iter().map(|&t| t as i64).product();
    if threads.iter().any(|&t| t <= 0) || total > dev.max_threads_per_block() as i64 {
        return Err(Error::Schedule(format!(
            "kernel '{name}': a block of {}x{}x{} threads; the {} device allows 1 to {} threads per block",
            threads[0],
            threads[1],
            threads[2],
            api.name(),
            dev.max_threads_per_block()
        )));
    }
    let module = module(kernels, dev)?;
    let mut state = run.gpu_state();
    let error_word = match state.error_word {
        Some((a, mem, _)) if a == api => mem,
        _ => {
            let (mem, size) = pooled_malloc(api, dev, 4)?;
            state.allocations.push((api, mem, size));
            // SAFETY: `mem` holds 4 bytes.
            unsafe { dev.write(mem, [0u8; 4].as_ptr(), 4)? };
            state.error_word = Some((api, mem, kernels as *mut HalogenKernels as usize));
            mem
        }
    };
    let mut values = Vec::with_capacity(args.len() + 1);
    for a in args {
        if a.buffer.is_null() {
            // SAFETY: a scalar argument's `value` holds `size` bytes.
            values.push(KernelArg::Bytes(unsafe { std::slice::from_raw_parts(a.value as *const u8, a.size as usize) }));
            continue;
        }
        // SAFETY: generated code passes live descriptors.
        let b = unsafe { &mut *a.buffer };
        let bytes = span_bytes(b)?;
        let elems = bytes / element_bytes(b);
        if elems > i32::MAX as usize {
            return Err(Error::Buffer(format!(
                "kernel '{name}': a buffer of {elems} elements; kernels index buffers of at most {} elements",
                i32::MAX
            )));
        }
        let fresh = b.device == 0;
        if fresh {
            let (mem, size) = timed(|| format!("malloc {bytes} B"), || pooled_malloc(api, dev, bytes))?;
            b.device = mem;
            state.allocations.push((api, mem, size));
        }
        let host_newer =
            b.host_dirty() || a.access & access::HOST_WRITES != 0 || (fresh && a.access & access::HOST_DATA != 0);
        if host_newer && bytes > 0 && !b.host.is_null() {
            // SAFETY: the host memory spans `bytes` bytes (the descriptor's promise).
            timed(|| format!("to device {bytes} B"), || unsafe { dev.write(b.device, b.host, bytes) })?;
        }
        b.set_host_dirty(false);
        values.push(KernelArg::Memory(b.device));
    }
    values.push(KernelArg::Memory(error_word));
    let blocks = [blocks[0] as usize, blocks[1] as usize, blocks[2] as usize];
    let threads = [threads[0] as usize, threads[1] as usize, threads[2] as usize];
    let timing = KERNEL_TIMING.load(Ordering::Relaxed);
    if timing {
        // The kernel's own time, not the work queued before it.
        dev.synchronize()?;
    }
    let start = std::time::Instant::now();
    timed(
        || format!("kernel {name}"),
        || {
            // SAFETY: the arguments follow the kernel's parameters (both printed from one
            // IR), and the pipeline's bounds checks keep every access inside the buffers.
            unsafe { module.launch(&name, blocks, threads, &values)? };
            if profiling() || timing {
                dev.synchronize()?;
            }
            Ok(())
        },
    )?;
    if timing {
        KERNEL_NANOS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::SeqCst);
    }
    for a in args.iter().filter(|a| !a.buffer.is_null() && a.access & access::WRITE != 0) {
        // SAFETY: as above.
        let b = unsafe { &mut *a.buffer };
        if a.access & access::HOST_READS != 0 {
            let bytes = span_bytes(b)?;
            if bytes > 0 && !b.host.is_null() {
                // SAFETY: as above.
                timed(|| format!("to host {bytes} B"), || unsafe { dev.read(b.device, b.host, bytes) })?;
            }
            b.flags &= !(DEVICE_DIRTY | HOST_DIRTY);
        } else {
            b.set_device_dirty(true);
        }
    }
    Ok(())
}

/// `gpu_release` of the runtime table: frees the device copy of a buffer whose storage
/// ends.
///
/// # Safety
/// `ctx` and `buf` as generated code passes them.
pub unsafe extern "C" fn halogen_gpu_release(ctx: *mut c_void, buf: *mut HalogenBuffer) {
    // SAFETY: generated code passes back the ctx pointer the run made.
    let Some(run) = (unsafe { RunContext::from_raw(ctx) }) else { return };
    if buf.is_null() {
        return;
    }
    // SAFETY: a live descriptor (the caller's promise).
    let b = unsafe { &mut *buf };
    if b.device == 0 {
        return;
    }
    let mut state = run.gpu_state();
    if let Some(i) = state.allocations.iter().position(|&(_, m, _)| m == b.device) {
        let (api, mem, size) = state.allocations.swap_remove(i);
        // SAFETY: made by this run, and the buffer's storage ends here.
        unsafe { recycle(api, mem, size) };
    }
    b.device = 0;
    b.flags &= !DEVICE_DIRTY;
}

/// Ends a run's device work: copies each of `buffers` (the entry point's) whose device copy
/// is newer back to the host, releases every device copy the run made, and reports a check
/// that failed inside a kernel. Does nothing for a run that launched no kernel.
///
/// # Safety
/// `buffers` point to the live descriptors the run was given.
pub(crate) unsafe fn finish_run(run: &RunContext, buffers: &[*mut HalogenBuffer]) -> Result<()> {
    let mut state = run.gpu_state();
    if state.allocations.is_empty() {
        return Ok(());
    }
    let mut first_error = None;
    for &p in buffers {
        // SAFETY: the caller's promise.
        let b = unsafe { &mut *p };
        let Some(&(api, ..)) = state.allocations.iter().find(|&&(_, m, _)| m == b.device && b.device != 0) else {
            continue;
        };
        if b.device_dirty() {
            let copied = device(api).and_then(|dev| {
                let bytes = span_bytes(b)?;
                if bytes > 0 && !b.host.is_null() {
                    // SAFETY: the descriptor spans `bytes` bytes of host memory.
                    timed(|| format!("to host {bytes} B"), || unsafe { dev.read(b.device, b.host, bytes) })?;
                }
                Ok(())
            });
            if let Err(e) = copied {
                first_error.get_or_insert(e);
            }
        }
        b.device = 0;
        b.flags &= !(DEVICE_DIRTY | HOST_DIRTY);
    }
    if let Some((api, mem, kernels)) = state.error_word.take() {
        let mut word = [0u8; 4];
        let read = device(api).and_then(|dev| {
            // SAFETY: the error word holds 4 bytes.
            unsafe { dev.read(mem, word.as_mut_ptr(), 4) }
        });
        let code = i32::from_ne_bytes(word);
        if let Err(e) = read {
            first_error.get_or_insert(e);
        } else if code != 0 {
            // SAFETY: the generated file's kernels outlive the run.
            let k = unsafe { &*(kernels as *const HalogenKernels) };
            let message = if code >= 1 && code <= k.checks {
                // SAFETY: `check_messages` holds `checks` NUL-terminated strings.
                unsafe { CStr::from_ptr(*k.check_messages.add(code as usize - 1)) }.to_string_lossy().into_owned()
            } else {
                format!("a check inside a GPU kernel failed (code {code})")
            };
            first_error.get_or_insert(Error::Runtime(message));
        }
    }
    for (api, mem, size) in state.allocations.drain(..) {
        // SAFETY: made by this run, which has ended.
        unsafe { recycle(api, mem, size) };
    }
    first_error.map_or(Ok(()), Err)
}

/// Writes a device compiler's input and log where a user can read them: a directory
/// under the system's temporary directory, named by the source's digest. Returns its path.
pub(crate) fn keep_failed_source(extension: &str, source: &str, log: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(source.as_bytes());
    let stem: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = std::env::temp_dir().join("halogen-kernels");
    let src = dir.join(format!("{stem}.{extension}"));
    let _ = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&src, source))
        .and_then(|_| std::fs::write(dir.join(format!("{stem}.log")), log));
    src.display().to_string()
}
