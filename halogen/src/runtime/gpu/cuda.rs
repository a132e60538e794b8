//! The CUDA device: device 0 of the driver (`libcuda.so.1`), through `cudarc`'s dynamic
//! loading, in its primary context. Kernels are compiled with NVRTC to a cubin for the
//! device's own compute capability (a cubin, not PTX: a driver runs cubins of any CUDA
//! 12 toolkit, while it refuses PTX newer than itself), and cached on disk under the cache
//! folder ([`crate::runtime::config::cache_dir`]) by the source's digest and the capability, so
//! a machine without NVRTC runs kernels compiled elsewhere.
//!
//! `cudarc` panics when it cannot load a library; both libraries are looked for first, and
//! their absence is an `Err` naming them.

use super::{Device, KernelArg, Module};
use crate::error::{Error, Result};
use cudarc::driver::result as drv;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::Mutex;

pub(super) struct CudaDevice {
    context: sys::CUcontext,
    name: String,
    capability: u32,
    max_threads: usize,
}

// SAFETY: a CUDA context may be made current on any thread (every call does so first).
unsafe impl Send for CudaDevice {}
// SAFETY: as above; the driver API is thread-safe.
unsafe impl Sync for CudaDevice {}

fn driver_error(what: &str, e: drv::DriverError) -> Error {
    Error::Runtime(format!("CUDA: {what} failed: {e:?}"))
}

/// Opens device 0, or says why there is none.
pub(super) fn open() -> std::result::Result<CudaDevice, String> {
    // SAFETY: only looks for the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("the CUDA driver library libcuda.so.1 could not be loaded (no NVIDIA driver here)".to_string());
    }
    let fail = |what: &str, e: drv::DriverError| format!("{what} failed ({e:?})");
    drv::init().map_err(|e| fail("cuInit", e))?;
    let count = drv::device::get_count().map_err(|e| fail("counting CUDA devices", e))?;
    if count < 1 {
        return Err("the CUDA driver sees no device".to_string());
    }
    let dev = drv::device::get(0).map_err(|e| fail("opening CUDA device 0", e))?;
    // SAFETY: `dev` is a valid device.
    let (context, major, minor, max_threads) = unsafe {
        let context = drv::primary_ctx::retain(dev).map_err(|e| fail("creating a CUDA context", e))?;
        drv::ctx::set_current(context).map_err(|e| fail("making the CUDA context current", e))?;
        let attr = |a| drv::device::get_attribute(dev, a).map_err(|e| fail("querying the device", e));
        (
            context,
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        )
    };
    let name = drv::device::get_name(dev).unwrap_or_default();
    Ok(CudaDevice { context, name, capability: (major * 10 + minor) as u32, max_threads: max_threads as usize })
}

impl CudaDevice {
    fn current(&self) -> Result<()> {
        // SAFETY: the context lives for the process.
        unsafe { drv::ctx::set_current(self.context) }.map_err(|e| driver_error("making the context current", e))
    }
}

impl Device for CudaDevice {
    fn describe(&self) -> String {
        format!("CUDA device '{}' (compute capability {}.{})", self.name, self.capability / 10, self.capability % 10)
    }

    fn max_threads_per_block(&self) -> usize {
        self.max_threads
    }

    fn malloc(&self, bytes: usize) -> Result<u64> {
        self.current()?;
        // SAFETY: a plain allocation.
        unsafe { drv::malloc_sync(bytes.max(1)) }
            .map_err(|e| driver_error(&format!("allocating {bytes} bytes of device memory"), e))
    }

    unsafe fn free(&self, mem: u64) {
        if self.current().is_ok() {
            // SAFETY: the caller's promise.
            let _ = unsafe { drv::free_sync(mem) };
        }
    }

    unsafe fn write(&self, mem: u64, src: *const u8, bytes: usize) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's promise.
        unsafe { drv::memcpy_htod_sync(mem, std::slice::from_raw_parts(src, bytes)) }
            .map_err(|e| driver_error("copying to the device", e))
    }

    unsafe fn read(&self, mem: u64, dst: *mut u8, bytes: usize) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's promise.
        unsafe { drv::memcpy_dtoh_sync(std::slice::from_raw_parts_mut(dst, bytes), mem) }
            .map_err(|e| driver_error("copying to the host", e))
    }

    unsafe fn copy(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        self.current()?;
        // SAFETY: the caller's promise.
        unsafe { drv::memcpy_dtod_async(dst, src, bytes, std::ptr::null_mut()) }
            .map_err(|e| driver_error("copying on the device", e))
    }

    fn synchronize(&self) -> Result<()> {
        self.current()?;
        drv::ctx::synchronize().map_err(|e| driver_error("waiting for the device", e))
    }

    fn build(&self, source: &str) -> Result<Box<dyn Module>> {
        let cubin = cached_cubin(source, self.capability)?;
        self.current()?;
        // SAFETY: a cubin image that NVRTC produced.
        let module = unsafe { drv::module::load_data(cubin.as_ptr() as *const c_void) }
            .map_err(|e| driver_error("loading the kernels", e))?;
        Ok(Box::new(CudaModule { module, functions: Mutex::new(HashMap::new()), device: self as *const CudaDevice }))
    }
}

struct CudaModule {
    module: sys::CUmodule,
    functions: Mutex<HashMap<String, usize>>,
    device: *const CudaDevice,
}

// SAFETY: module and function handles may be used from any thread with the context current.
unsafe impl Send for CudaModule {}
// SAFETY: as above.
unsafe impl Sync for CudaModule {}

impl Module for CudaModule {
    unsafe fn launch(&self, name: &str, blocks: [usize; 3], threads: [usize; 3], args: &[KernelArg<'_>]) -> Result<()> {
        // SAFETY: the device is the process's, which is never dropped.
        let device = unsafe { &*self.device };
        device.current()?;
        let f = {
            let mut functions = self.functions.lock().unwrap_or_else(|p| p.into_inner());
            match functions.get(name) {
                Some(&f) => f as sys::CUfunction,
                None => {
                    let c = CString::new(name).map_err(|_| Error::Runtime(format!("kernel name '{name}'")))?;
                    // SAFETY: the module is loaded.
                    let f = unsafe { drv::module::get_function(self.module, c) }
                        .map_err(|e| driver_error(&format!("finding kernel '{name}'"), e))?;
                    functions.insert(name.to_string(), f as usize);
                    f
                }
            }
        };
        let handles: Vec<u64> = args.iter().map(|a| if let KernelArg::Memory(m) = a { *m } else { 0 }).collect();
        let mut params: Vec<*mut c_void> = args
            .iter()
            .zip(&handles)
            .map(|(a, h)| match a {
                KernelArg::Bytes(b) => b.as_ptr() as *mut c_void,
                KernelArg::Memory(_) => h as *const u64 as *mut c_void,
            })
            .collect();
        let dims = |d: [usize; 3]| (d[0] as u32, d[1] as u32, d[2] as u32);
        // SAFETY: the caller's promise covers the arguments and memory.
        unsafe { drv::launch_kernel(f, dims(blocks), dims(threads), 0, std::ptr::null_mut(), &mut params) }
            .map_err(|e| driver_error(&format!("launching kernel '{name}'"), e))
    }
}

/// Where the cubin of `source` for `capability` is cached.
fn cubin_path(source: &str, capability: u32) -> PathBuf {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(source.as_bytes());
    let stem: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    crate::runtime::config::cache_dir().join("cuda").join(format!("{stem}-sm_{capability}.cubin"))
}

/// The cubin of `source` for `capability`: from the disk cache, else compiled with NVRTC
/// and cached.
pub(super) fn cached_cubin(source: &str, capability: u32) -> Result<Vec<u8>> {
    let path = cubin_path(source, capability);
    if let Ok(bytes) = std::fs::read(&path) {
        return Ok(bytes);
    }
    let cubin = compile(source, capability)?;
    if let Some(dir) = path.parent() {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let _ = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&tmp, &cubin))
            .and_then(|_| std::fs::rename(&tmp, &path));
    }
    Ok(cubin)
}

/// Compiles `source` with NVRTC to a cubin for compute capability `capability`.
pub(super) fn compile(source: &str, capability: u32) -> Result<Vec<u8>> {
    use cudarc::nvrtc::{result as rtc, sys as rtc_sys};
    // SAFETY: only looks for the library.
    if !unsafe { rtc_sys::is_culib_present() } {
        return Err(Error::Target(
            "NVRTC (libnvrtc.so.12) could not be loaded: install it (e.g. pip install nvidia-cuda-nvrtc-cu12) and \
             put its lib folder on LD_LIBRARY_PATH"
                .to_string(),
        ));
    }
    let src = CString::new(source).map_err(|_| Error::internal("CUDA back end", "kernel source holds a NUL"))?;
    let prog = rtc::create_program(&src, None).map_err(|e| Error::Runtime(format!("NVRTC: {e:?}")))?;
    // Options the source asks for in `// nvrtc-option: ...` lines (`--fmad=false`).
    let mut options = vec![format!("--gpu-architecture=sm_{capability}")];
    options.extend(source.lines().filter_map(|l| l.strip_prefix("// nvrtc-option: ")).map(|o| o.trim().to_string()));
    // SAFETY: `prog` was just created and is destroyed below.
    let compiled = unsafe { rtc::compile_program(prog, &options) };
    let result = match compiled {
        Ok(()) => {
            let mut size = 0usize;
            // SAFETY: a compiled program; the buffer has the size NVRTC reports.
            unsafe {
                rtc_sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| Error::Runtime(format!("NVRTC: {e:?}")))?;
                let mut cubin = vec![0u8; size];
                rtc_sys::nvrtcGetCUBIN(prog, cubin.as_mut_ptr() as *mut std::ffi::c_char)
                    .result()
                    .map_err(|e| Error::Runtime(format!("NVRTC: {e:?}")))?;
                Ok(cubin)
            }
        }
        Err(e) => {
            // SAFETY: the program exists.
            let log = unsafe { rtc::get_program_log(prog) }
                .map(|l| l.iter().map(|&c| c as u8 as char).collect::<String>())
                .unwrap_or_default();
            let path = super::keep_failed_source("cu", source, &log);
            Err(Error::Runtime(format!(
                "NVRTC: the kernels did not compile ({e:?}); the source and log are in {path}:\n{log}"
            )))
        }
    };
    // SAFETY: created above, not used again.
    let _ = unsafe { rtc::destroy_program(prog) };
    result
}
