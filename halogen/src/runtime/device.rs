//! The host side of buffers that may also live on a device: which copy is newer, and what a
//! run on the host does about it. Every back end that runs code on the host calls these
//! through [`super::ffi::call_on_host`], so a device back end finds the same rules in
//! place (Halide's `halide_copy_to_host` before host code, host-dirty outputs after it).
//!
//! - Before the run, every buffer is checked first: one that is both host- and
//!   device-dirty, or device-dirty without a device interface to copy it back with, is an
//!   `Err` naming it, and nothing is copied or run. Then each device-dirty buffer is copied
//!   to the host with its interface's `copy_to_host` and its `DEVICE_DIRTY` cleared.
//! - After a successful run, every output is marked `HOST_DIRTY`: its host copy is the
//!   newest, and a device copy, if any, is stale.

use super::ffi::{HalogenBuffer, NamedBuffer};
use crate::error::{Error, Result};
use std::ffi::c_void;

/// Why `b` cannot be used by a run on the host as it is, if it cannot.
fn refusal(b: &HalogenBuffer) -> Option<&'static str> {
    if b.host_dirty() && b.device_dirty() {
        Some("is marked both host-dirty and device-dirty: both copies were written, and neither is the newest")
    } else if b.device_dirty() && b.device_interface.is_null() {
        Some(
            "is marked device-dirty (its newest data is on a device) but has no device interface to copy it to the \
             host with",
        )
    } else {
        None
    }
}

/// Readies `buffers` for a run on the host: refuses the first buffer that cannot be used
/// (before touching any), then copies every device-dirty buffer to the host and clears its
/// `DEVICE_DIRTY`. `ctx` is passed to the device interfaces' functions.
///
/// ```
/// use halogen::runtime::device::prepare_host_run;
/// use halogen::runtime::ffi::{HalogenBuffer, NamedBuffer};
/// let mut stale = HalogenBuffer::new(std::ptr::null_mut(), halogen::Type::u8(), &[]);
/// stale.set_device_dirty(true);
/// let mut args = [NamedBuffer { name: "input", is_output: false, descriptor: stale }];
/// // SAFETY: no buffer has a device interface.
/// let e = unsafe { prepare_host_run(std::ptr::null_mut(), &mut args) }.unwrap_err();
/// assert!(e.to_string().contains("buffer 'input' is marked device-dirty"), "{e}");
/// ```
///
/// # Safety
/// Every non-null `device_interface` must point to a valid table whose `copy_to_host`
/// accepts `ctx` and the buffer.
pub unsafe fn prepare_host_run(ctx: *mut c_void, buffers: &mut [NamedBuffer<'_>]) -> Result<()> {
    if let Some((b, why)) = buffers.iter().find_map(|b| refusal(&b.descriptor).map(|why| (b, why))) {
        return Err(Error::Buffer(format!("buffer '{}' {why}", b.name)));
    }
    for b in buffers.iter_mut().filter(|b| b.descriptor.device_dirty()) {
        // SAFETY: the interface is not null (refusal checked) and valid (the caller's promise).
        let rc = unsafe { ((*b.descriptor.device_interface).copy_to_host)(ctx, &mut b.descriptor) };
        if rc != 0 {
            return Err(Error::Runtime(format!(
                "buffer '{}': copying its device data to the host failed with code {rc}",
                b.name
            )));
        }
        b.descriptor.set_device_dirty(false);
    }
    Ok(())
}

/// Marks every output of a run on the host that succeeded `HOST_DIRTY`.
///
/// ```
/// use halogen::runtime::device::mark_host_written;
/// use halogen::runtime::ffi::{HalogenBuffer, NamedBuffer};
/// let b = || HalogenBuffer::new(std::ptr::null_mut(), halogen::Type::u8(), &[]);
/// let mut args = [
///     NamedBuffer { name: "input", is_output: false, descriptor: b() },
///     NamedBuffer { name: "out", is_output: true, descriptor: b() },
/// ];
/// mark_host_written(&mut args);
/// assert!(!args[0].descriptor.host_dirty() && args[1].descriptor.host_dirty());
/// ```
pub fn mark_host_written(buffers: &mut [NamedBuffer<'_>]) {
    for b in buffers.iter_mut().filter(|b| b.is_output) {
        b.descriptor.set_host_dirty(true);
    }
}

#[cfg(test)]
mod tests {
    use crate::runtime::ffi::{
        call_checked, call_on_host, BufferBinding, HalogenBuffer, HalogenDeviceInterface, HalogenDim, HalogenRuntime,
        HalogenScalar, NamedBuffer, DEVICE_DIRTY, HOST_DIRTY,
    };
    use crate::Type;
    use std::ffi::{c_int, c_void};

    // The test "device" keeps its copy of a one-byte buffer in the byte `device` points to.
    unsafe extern "C" fn to_host(_: *mut c_void, b: *mut HalogenBuffer) -> c_int {
        // SAFETY: the tests' buffers hold one byte, and `device` is the address of a byte.
        unsafe { *(*b).host = *((*b).device as *const u8) };
        0
    }
    unsafe extern "C" fn broken(_: *mut c_void, _: *mut HalogenBuffer) -> c_int {
        -3
    }
    unsafe extern "C" fn unused(_: *mut c_void, _: *mut HalogenBuffer) -> c_int {
        unreachable!("a host run only copies to the host")
    }
    static DEVICE: HalogenDeviceInterface = HalogenDeviceInterface {
        device_malloc: unused,
        device_free: unused,
        copy_to_host: to_host,
        copy_to_device: unused,
    };
    static BROKEN: HalogenDeviceInterface = HalogenDeviceInterface {
        device_malloc: unused,
        device_free: unused,
        copy_to_host: broken,
        copy_to_device: unused,
    };

    /// out[0] = in[0] + 1, failing (with code 9) when the input is 0.
    unsafe extern "C" fn increment(
        _: *const HalogenRuntime,
        _: *mut c_void,
        buffers: *const *mut HalogenBuffer,
        _: *const HalogenScalar,
    ) -> c_int {
        // SAFETY: the tests pass an input and an output of one byte each.
        unsafe {
            let (input, output) = (*buffers.add(0), *buffers.add(1));
            if *(*input).host == 0 {
                return 9;
            }
            *(*output).host = *(*input).host + 1;
        }
        0
    }

    unsafe extern "C" fn never(
        _: *const HalogenRuntime,
        _: *mut c_void,
        _: *const *mut HalogenBuffer,
        _: *const HalogenScalar,
    ) -> c_int {
        unreachable!("a refused buffer must stop the run before the entry point")
    }

    const DIM: [HalogenDim; 1] = [HalogenDim { min: 0, extent: 1, stride: 1, flags: 0 }];

    fn named<'a>(name: &'a str, is_output: bool, host: &mut u8) -> NamedBuffer<'a> {
        NamedBuffer { name, is_output, descriptor: HalogenBuffer::new(host, Type::u8(), &DIM) }
    }

    #[test]
    fn device_dirty_inputs_are_copied_back_and_outputs_marked_host_dirty() {
        let (mut input, mut output, mut on_device) = (0u8, 0u8, 41u8);
        let mut args = [named("input", false, &mut input), named("out", true, &mut output)];
        args[0].descriptor.device = &mut on_device as *mut u8 as u64;
        args[0].descriptor.device_interface = &DEVICE;
        args[0].descriptor.flags = DEVICE_DIRTY;
        // SAFETY: `increment` takes these two one-byte buffers; DEVICE copies one byte.
        unsafe { call_on_host(increment, &mut args, &[]) }.unwrap();
        // The run saw the device's 41, not the host's stale 0.
        assert_eq!((input, output), (41, 42));
        assert_eq!(args[0].descriptor.flags, 0, "the input's host copy is current and unwritten");
        assert_eq!(args[1].descriptor.flags, HOST_DIRTY);
    }

    #[test]
    fn a_failed_run_marks_nothing() {
        let (mut input, mut output) = (0u8, 0u8);
        let mut args = [named("input", false, &mut input), named("out", true, &mut output)];
        // SAFETY: as above; no device interfaces.
        let e = unsafe { call_on_host(increment, &mut args, &[]) }.unwrap_err();
        assert!(e.to_string().contains("code 9"), "{e}");
        assert_eq!(args[1].descriptor.flags, 0);
    }

    #[test]
    fn buffers_that_cannot_be_used_are_refused_by_name_before_the_run() {
        let (mut input, mut output, mut on_device) = (5u8, 0u8, 7u8);
        let device = &mut on_device as *mut u8 as u64;
        // The output's device copy is newer and nothing can copy it back.
        let mut args = [named("input", false, &mut input), named("out", true, &mut output)];
        args[0].descriptor.device = device;
        args[0].descriptor.device_interface = &DEVICE;
        args[0].descriptor.flags = DEVICE_DIRTY;
        args[1].descriptor.flags = DEVICE_DIRTY;
        // SAFETY: the refusal comes before `never` or any copy.
        let e = unsafe { call_on_host(never, &mut args, &[]) }.unwrap_err();
        assert!(matches!(e, crate::Error::Buffer(_)), "{e:?}");
        assert!(e.to_string().contains("buffer 'out' is marked device-dirty"), "{e}");
        assert!(e.to_string().contains("no device interface"), "{e}");
        assert_eq!(input, 5, "nothing is copied when a buffer is refused");
        assert_eq!(args[0].descriptor.flags, DEVICE_DIRTY);

        let mut args = [named("input", false, &mut input), named("out", true, &mut output)];
        args[0].descriptor.flags = HOST_DIRTY | DEVICE_DIRTY;
        args[0].descriptor.device_interface = &DEVICE;
        // SAFETY: as above.
        let e = unsafe { call_on_host(never, &mut args, &[]) }.unwrap_err();
        assert!(e.to_string().contains("buffer 'input' is marked both host-dirty and device-dirty"), "{e}");

        let mut args = [named("input", false, &mut input), named("out", true, &mut output)];
        args[0].descriptor.flags = DEVICE_DIRTY;
        args[0].descriptor.device_interface = &BROKEN;
        // SAFETY: BROKEN copies nothing and fails, before `never`.
        let e = unsafe { call_on_host(never, &mut args, &[]) }.unwrap_err();
        assert!(
            e.to_string().contains("buffer 'input': copying its device data to the host failed with code -3"),
            "{e}"
        );
        assert_eq!(args[0].descriptor.flags, DEVICE_DIRTY, "a failed copy leaves the device copy the newest");
    }

    /// Returns 0 only if every buffer arrives host-only and clean.
    unsafe extern "C" fn expect_clean(
        _: *const HalogenRuntime,
        _: *mut c_void,
        buffers: *const *mut HalogenBuffer,
        _: *const HalogenScalar,
    ) -> c_int {
        for i in 0..2 {
            // SAFETY: the test passes two buffers.
            let b = unsafe { &**buffers.add(i) };
            if b.device != 0 || !b.device_interface.is_null() || b.flags != 0 {
                return 1;
            }
        }
        0
    }

    #[test]
    fn buffers_start_clean_with_no_device() {
        let input = crate::runtime::Buffer::<u8>::new(&[3]);
        let mut out = crate::runtime::Buffer::<u8>::new(&[3]);
        let bindings = [
            BufferBinding::input("input", Type::u8(), 1, input.raw()),
            BufferBinding::output("out", Type::u8(), 1, out.raw_mut()),
        ];
        // SAFETY: expect_clean reads only the descriptors.
        unsafe { call_checked(expect_clean, &bindings, &[]) }.unwrap();
    }
}
