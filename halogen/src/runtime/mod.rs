//! Run-time support: buffers and element types, the C ABI of generated code ([`ffi`], its
//! layout in [`layout`]), the host side of device buffers ([`device`]), the thread pool,
//! the pooled heap and the switches both the runtime and the back ends read ([`config`]),
//! and the communication of distributed runs ([`distributed`]).
//! The runtime depends on no back end.
//!
//! [`Buffer`] is the dense, owned pixel storage users pass in and out of pipelines;
//! [`RawBuffer`] and [`RawBufferMut`] are its type-erased views for the back ends.

pub mod block_cache;
pub mod buffer;
pub mod config;
pub mod device;
pub mod distributed;
pub mod element;
pub mod ffi;
pub mod gather;
pub mod gpu;
pub mod huge_pages;
pub mod layout;
pub mod pool;
pub mod thread_pool;

pub use buffer::{Buffer, BufferDim, Coords, DeviceRef, RawBuffer, RawBufferMut, MAX_DIMENSIONS};
pub use element::Element;
