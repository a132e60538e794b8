//! Buffers that live in device memory between runs ([`DeviceBuffer`]): a chain of GPU
//! pipelines hands its images from one to the next without copying them to the host and
//! back, and the copies a user does want are explicit and named.
//!
//! A run given a device buffer uses its memory directly where the pipeline allows: when
//! the buffer's API is the target's and only kernels touch it. Anything else (host code of
//! the pipeline that reads an input or writes the output, a target without that GPU, the
//! interpreter) gets a host copy made for the run: the input is copied down before it and
//! the output up after it, so every target and schedule gives the same pixels.

use super::{device, Api};
use crate::error::{Error, Result};
use crate::runtime::buffer::{dense_dims, BufferDim, DeviceRef, RawBuffer, RawBufferMut};
use crate::runtime::{Buffer, Element};
use crate::target::{Feature, Target};
use std::marker::PhantomData;

/// A dense buffer of `T` in a GPU's memory, over a box of the integer grid (the layout of
/// [`Buffer`]: dimension 0 innermost, mins 0 unless given). Bind it as an input with
/// [`Args::device_image`](crate::Args::device_image) and realize into it with
/// [`Compiled::realize_to_device`](crate::Compiled::realize_to_device); read it back with
/// [`DeviceBuffer::to_host`]. Its memory is freed when it is dropped.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::DeviceBuffer;
/// let target: Target = "host-opencl".parse().unwrap();
/// let input = Buffer::<u8>::from_fn(&[64, 8], |c| (c[0] + c[1]) as u8);
/// // No OpenCL device here is an `Err` that names what is missing.
/// if let Ok(on_device) = DeviceBuffer::from_host(&input, &target) {
///     assert_eq!(on_device.extents(), vec![64, 8]);
///     assert_eq!(on_device.to_host().unwrap(), input);
/// }
/// ```
pub struct DeviceBuffer<T: Element> {
    memory: DeviceMemory,
    dims: Vec<BufferDim>,
    len: usize,
    _elements: PhantomData<T>,
}

/// Memory on a device, freed when dropped.
#[derive(Debug)]
pub(crate) struct DeviceMemory {
    api: Api,
    mem: u64,
}

impl DeviceMemory {
    /// Memory on the device of `api` holding a copy of `host` (at least one byte).
    fn new(api: Api, host: &[u8]) -> Result<DeviceMemory> {
        let memory = DeviceMemory { api, mem: device(api)?.malloc(host.len().max(1))? };
        write_from(DeviceRef { api, mem: memory.mem, len: host.len() }, 1, host)?;
        Ok(memory)
    }

    /// A copy of `raw`'s bytes on the GPU of `target`, and the view that binds it.
    pub(crate) fn upload(raw: &RawBuffer<'_>, target: &Target) -> Result<(DeviceMemory, RawBuffer<'static>)> {
        let api = target_api(target).ok_or_else(|| no_gpu(target))?;
        let memory = DeviceMemory::new(api, raw.bytes)?;
        let view = RawBuffer {
            ty: raw.ty,
            dims: raw.dims.clone(),
            bytes: &[],
            device: Some(DeviceRef { api, mem: memory.mem, len: raw.len() }),
        };
        Ok((memory, view))
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if let Ok(dev) = device(self.api) {
            // SAFETY: made by this device's malloc and owned by this value alone.
            unsafe { dev.free(self.mem) };
        }
    }
}

fn no_gpu(target: &Target) -> Error {
    Error::Target(format!("target '{target}' has no GPU (add opencl or cuda) to keep a buffer on"))
}

/// The device API of a GPU target (`None` for a target without `opencl` or `cuda`).
///
/// ```
/// use halogen::prelude::*;
/// use halogen::runtime::gpu::{target_api, Api};
/// assert_eq!(target_api(&"host-opencl".parse::<Target>().unwrap()), Some(Api::OpenCL));
/// assert_eq!(target_api(&Target::host()), None);
/// ```
pub fn target_api(target: &Target) -> Option<Api> {
    if target.has_feature(Feature::Cuda) {
        Some(Api::Cuda)
    } else if target.has_feature(Feature::OpenCL) {
        Some(Api::OpenCL)
    } else {
        None
    }
}

impl<T: Element> DeviceBuffer<T> {
    /// A zero-filled buffer with the given mins and extents on the GPU of `target` (one with
    /// `opencl` or `cuda`). `Err` for a target without a GPU, a device that cannot be
    /// opened, a shape [`Buffer::try_with_min`] refuses, or memory the device cannot give.
    pub fn with_min(target: &Target, mins: &[i32], extents: &[i32]) -> Result<DeviceBuffer<T>> {
        let zeros = Buffer::<T>::try_with_min(mins, extents)?;
        DeviceBuffer::from_host(&zeros, target)
    }

    /// A zero-filled buffer with the given extents (mins 0) on the GPU of `target`.
    pub fn new(target: &Target, extents: &[i32]) -> Result<DeviceBuffer<T>> {
        DeviceBuffer::with_min(target, &vec![0; extents.len()], extents)
    }

    /// A copy of `host` (its shape and elements) on the GPU of `target`.
    pub fn from_host(host: &Buffer<T>, target: &Target) -> Result<DeviceBuffer<T>> {
        let (memory, _) = DeviceMemory::upload(&host.raw(), target)?;
        Ok(DeviceBuffer { memory, dims: host.dims().to_vec(), len: host.len(), _elements: PhantomData })
    }

    /// A copy of the elements on the host.
    pub fn to_host(&self) -> Result<Buffer<T>> {
        let mut host = Buffer::<T>::try_with_min(&self.mins(), &self.extents())?;
        self.copy_to_host(&mut host)?;
        Ok(host)
    }

    /// Copies the elements into `host`, which must have this buffer's mins and extents.
    pub fn copy_to_host(&self, host: &mut Buffer<T>) -> Result<()> {
        self.same_shape(host.dims(), "copy_to_host")?;
        read_into(self.device_ref(), T::TYPE.bytes(), host.raw_mut().bytes)
    }

    /// Replaces the elements with those of `host`, which must have this buffer's mins and
    /// extents.
    pub fn copy_from_host(&mut self, host: &Buffer<T>) -> Result<()> {
        self.same_shape(host.dims(), "copy_from_host")?;
        write_from(self.device_ref(), T::TYPE.bytes(), host.raw().bytes)
    }

    /// The device API its memory belongs to.
    pub fn api(&self) -> Api {
        self.memory.api
    }

    /// The shape, innermost dimension first.
    pub fn dims(&self) -> &[BufferDim] {
        &self.dims
    }

    /// Every dimension's extent.
    pub fn extents(&self) -> Vec<i32> {
        self.dims.iter().map(|d| d.extent).collect()
    }

    /// Every dimension's min.
    pub fn mins(&self) -> Vec<i32> {
        self.dims.iter().map(|d| d.min).collect()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Gives the buffer new mins (the elements stay where they are), as
    /// [`Buffer::set_min`] does for a host buffer.
    pub fn set_min(&mut self, mins: &[i32]) -> Result<&mut Self> {
        let extents = self.extents();
        let (dims, _) = dense_dims(mins, &extents)?;
        self.dims = dims;
        Ok(self)
    }

    /// The type-erased view a run binds.
    pub fn raw(&self) -> RawBuffer<'_> {
        RawBuffer { ty: T::TYPE, dims: self.dims.clone(), bytes: &[], device: Some(self.device_ref()) }
    }

    /// The type-erased, writable view a run binds.
    pub fn raw_mut(&mut self) -> RawBufferMut<'_> {
        RawBufferMut { ty: T::TYPE, dims: self.dims.clone(), bytes: &mut [], device: Some(self.device_ref()) }
    }

    fn device_ref(&self) -> DeviceRef {
        DeviceRef { api: self.memory.api, mem: self.memory.mem, len: self.len }
    }

    fn same_shape(&self, dims: &[BufferDim], what: &str) -> Result<()> {
        let shape = |d: &[BufferDim]| d.iter().map(|d| (d.min, d.extent)).collect::<Vec<_>>();
        if shape(dims) != shape(&self.dims) {
            return Err(Error::Buffer(format!(
                "{what}: the host buffer covers {:?} (min, extent per dimension) but the device buffer covers {:?}",
                shape(dims),
                shape(&self.dims)
            )));
        }
        Ok(())
    }
}

impl<T: Element> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("api", &self.memory.api)
            .field("type", &T::TYPE)
            .field("mins", &self.mins())
            .field("extents", &self.extents())
            .finish()
    }
}

/// Copies device memory `d` (of `len` elements of `elem_bytes` bytes) into new host bytes.
pub(crate) fn download(d: DeviceRef, elem_bytes: usize) -> Result<Vec<u8>> {
    let mut host = vec![0u8; d.len * elem_bytes];
    read_into(d, elem_bytes, &mut host)?;
    Ok(host)
}

/// Copies the first `dst.len()` bytes of device memory `d` (`len` elements of `elem_bytes`
/// bytes) into `dst`; more bytes than `d` holds is an `Err`.
pub(crate) fn read_into(d: DeviceRef, elem_bytes: usize, dst: &mut [u8]) -> Result<()> {
    fits(d, elem_bytes, dst.len())?;
    if !dst.is_empty() {
        // SAFETY: `dst` spans its length, and the device memory holds at least as many bytes.
        unsafe { device(d.api)?.read(d.mem, dst.as_mut_ptr(), dst.len())? };
    }
    Ok(())
}

/// Copies `src` into the start of device memory `d` (`len` elements of `elem_bytes`
/// bytes); more bytes than `d` holds is an `Err`.
pub(crate) fn write_from(d: DeviceRef, elem_bytes: usize, src: &[u8]) -> Result<()> {
    fits(d, elem_bytes, src.len())?;
    if !src.is_empty() {
        // SAFETY: `src` spans its length, and the device memory holds at least as many bytes.
        unsafe { device(d.api)?.write(d.mem, src.as_ptr(), src.len())? };
    }
    Ok(())
}

/// An `Err` unless device memory `d` holds `bytes` bytes.
fn fits(d: DeviceRef, elem_bytes: usize, bytes: usize) -> Result<()> {
    if bytes > d.len * elem_bytes {
        return Err(Error::internal(
            "GPU runtime",
            format!("a copy of {bytes} bytes to or from device memory of {} bytes", d.len * elem_bytes),
        ));
    }
    Ok(())
}
