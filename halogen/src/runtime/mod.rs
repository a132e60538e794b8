//! Run-time support: buffers and element types.
//!
//! [`Buffer`] is the dense, owned pixel storage users pass in and out of pipelines;
//! [`RawBuffer`] and [`RawBufferMut`] are its type-erased views for the back ends.

pub mod buffer;
pub mod config;
pub mod device;
pub mod element;
pub mod ffi;
pub mod huge_pages;
pub mod layout;
pub mod pool;
pub mod thread_pool;

pub use buffer::{Buffer, BufferDim, Coords, RawBuffer, RawBufferMut, MAX_DIMENSIONS};
pub use element::Element;
