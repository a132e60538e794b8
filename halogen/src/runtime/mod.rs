//! Run-time support: buffers and element types.

pub mod element;

pub use element::Element;
