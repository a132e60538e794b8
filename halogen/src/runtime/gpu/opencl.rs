//! The OpenCL device: the first GPU of the first platform that has one, else the first
//! device of any kind (PoCL's CPU device, which CI runs the kernels on), through `opencl3`
//! (which loads `libOpenCL.so.1` when first called). One context and one in-order queue
//! for the process; a blocking copy or a `clFinish` after each launch keeps host code and
//! kernels in order.

use super::{Device, KernelArg, Module};
use crate::error::{Error, Result};
use opencl3::command_queue::{
    enqueue_copy_buffer, enqueue_nd_range_kernel, enqueue_read_buffer, enqueue_write_buffer, CommandQueue,
};
use opencl3::context::Context;
use opencl3::device::{Device as ClDevice, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::error_codes::ClError;
use opencl3::event::release_event;
use opencl3::kernel::{set_kernel_arg, Kernel};
use opencl3::memory::{create_buffer, release_mem_object, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_event, cl_mem, CL_BLOCKING};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// Releases the event an enqueue returns (nothing waits on it: the queue is in order).
fn release(event: cl_event) {
    // SAFETY: the event was just returned by an enqueue and is not used again.
    let _ = unsafe { release_event(event) };
}

pub(super) struct OpenClDevice {
    device: ClDevice,
    context: Context,
    queue: CommandQueue,
    max_threads: usize,
}

fn cl_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Runtime(format!("OpenCL: {what} failed: {e}"))
}

/// Opens the device, or says why there is none.
pub(super) fn open() -> std::result::Result<OpenClDevice, String> {
    let platforms = opencl3::platform::get_platforms().map_err(|e| {
        format!(
            "no OpenCL platform ({e}): install an OpenCL ICD loader (libOpenCL.so.1) and a driver, e.g. the Debian \
             packages ocl-icd-libopencl1 and pocl-opencl-icd"
        )
    })?;
    let pick = |kind| platforms.iter().find_map(|p| p.get_devices(kind).ok().and_then(|d| d.first().copied()));
    let id = pick(CL_DEVICE_TYPE_GPU)
        .or_else(|| pick(CL_DEVICE_TYPE_ALL))
        .ok_or_else(|| format!("none of the {} OpenCL platforms has a device", platforms.len()))?;
    let device = ClDevice::new(id);
    let context = Context::from_device(&device).map_err(|e| format!("creating an OpenCL context failed ({e})"))?;
    #[allow(deprecated)]
    let queue =
        CommandQueue::create_default(&context, 0).map_err(|e| format!("creating an OpenCL queue failed ({e})"))?;
    let max_threads = device.max_work_group_size().map_err(|e| format!("querying the device failed ({e})"))?;
    Ok(OpenClDevice { device, context, queue, max_threads })
}

impl Device for OpenClDevice {
    fn describe(&self) -> String {
        let name = self.device.name().unwrap_or_default();
        let version = self.device.version().unwrap_or_default();
        format!("OpenCL device '{name}' ({version})")
    }

    fn max_threads_per_block(&self) -> usize {
        self.max_threads
    }

    fn malloc(&self, bytes: usize) -> Result<u64> {
        // SAFETY: no host pointer is given.
        let mem = unsafe { create_buffer(self.context.get(), CL_MEM_READ_WRITE, bytes.max(1), std::ptr::null_mut()) }
            .map_err(|e| cl_error(&format!("allocating {bytes} bytes of device memory"), ClError(e)))?;
        Ok(mem as usize as u64)
    }

    unsafe fn free(&self, mem: u64) {
        // SAFETY: the caller's promise: `mem` is a buffer of this context.
        let _ = unsafe { release_mem_object(mem as usize as cl_mem) };
    }

    unsafe fn write(&self, mem: u64, src: *const u8, bytes: usize) -> Result<()> {
        // SAFETY: the caller's promise; the copy is blocking.
        unsafe {
            enqueue_write_buffer(
                self.queue.get(),
                mem as usize as cl_mem,
                CL_BLOCKING,
                0,
                bytes,
                src as *const c_void,
                0,
                std::ptr::null(),
            )
        }
        .map(release)
        .map_err(|e| cl_error("copying to the device", ClError(e)))
    }

    unsafe fn read(&self, mem: u64, dst: *mut u8, bytes: usize) -> Result<()> {
        // SAFETY: the caller's promise; the copy is blocking.
        unsafe {
            enqueue_read_buffer(
                self.queue.get(),
                mem as usize as cl_mem,
                CL_BLOCKING,
                0,
                bytes,
                dst as *mut c_void,
                0,
                std::ptr::null(),
            )
        }
        .map(release)
        .map_err(|e| cl_error("copying to the host", ClError(e)))
    }

    unsafe fn copy(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        // SAFETY: the caller's promise: both are buffers of this context holding `bytes`.
        unsafe {
            enqueue_copy_buffer(
                self.queue.get(),
                src as usize as cl_mem,
                dst as usize as cl_mem,
                0,
                0,
                bytes,
                0,
                std::ptr::null(),
            )
        }
        .map(release)
        .map_err(|e| cl_error("copying on the device", ClError(e)))
    }

    fn synchronize(&self) -> Result<()> {
        opencl3::command_queue::finish(self.queue.get()).map_err(|e| cl_error("waiting for the queue", ClError(e)))
    }

    fn build(&self, source: &str) -> Result<Box<dyn Module>> {
        let program = Program::create_and_build_from_source(&self.context, source, "-cl-std=CL1.2").map_err(|log| {
            let path = super::keep_failed_source("cl", source, &log);
            Error::Runtime(format!("OpenCL: the kernels did not compile; the source and log are in {path}:\n{log}"))
        })?;
        Ok(Box::new(OpenClModule { program, kernels: Mutex::new(HashMap::new()), queue: self.queue.get() as usize }))
    }
}

struct OpenClModule {
    program: Program,
    /// Kernel objects by name; setting arguments and enqueuing is one critical section.
    kernels: Mutex<HashMap<String, Kernel>>,
    queue: usize,
}

impl Module for OpenClModule {
    unsafe fn launch(&self, name: &str, blocks: [usize; 3], threads: [usize; 3], args: &[KernelArg<'_>]) -> Result<()> {
        let mut kernels = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if !kernels.contains_key(name) {
            let k =
                Kernel::create(&self.program, name).map_err(|e| cl_error(&format!("finding kernel '{name}'"), e))?;
            kernels.insert(name.to_string(), k);
        }
        let kernel = kernels[name].get();
        for (i, a) in args.iter().enumerate() {
            let handle;
            let (size, ptr) = match a {
                KernelArg::Bytes(b) => (b.len(), b.as_ptr() as *const c_void),
                KernelArg::Memory(m) => {
                    handle = *m as usize as cl_mem;
                    (std::mem::size_of::<cl_mem>(), &handle as *const cl_mem as *const c_void)
                }
            };
            // SAFETY: `ptr` holds `size` bytes of the argument.
            unsafe { set_kernel_arg(kernel, i as u32, size, ptr) }
                .map_err(|e| cl_error(&format!("argument {i} of kernel '{name}'"), ClError(e)))?;
        }
        let global = [blocks[0] * threads[0], blocks[1] * threads[1], blocks[2] * threads[2]];
        let queue = self.queue as opencl3::types::cl_command_queue;
        // SAFETY: the arguments are set; the caller's promise covers the memory.
        unsafe {
            enqueue_nd_range_kernel(
                queue,
                kernel,
                3,
                std::ptr::null(),
                global.as_ptr(),
                threads.as_ptr(),
                0,
                std::ptr::null(),
            )
        }
        .map(release)
        .map_err(|e| cl_error(&format!("launching kernel '{name}'"), ClError(e)))
    }
}

// SAFETY: OpenCL programs and queues may be used from any thread; the kernel objects, which
// may not be shared while their arguments are set, are behind a mutex.
unsafe impl Send for OpenClModule {}
// SAFETY: as above.
unsafe impl Sync for OpenClModule {}
