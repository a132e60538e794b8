//! GPU kernels: the loop nests a schedule puts on `gpu_blocks` / `gpu_threads` loops,
//! outlined from the host code and printed in a kernel dialect of C.
//!
//! The host C printer ([`crate::backend::c`]) meets a kernel as an outermost GPU block loop
//! and outlines it, as Halide's `CodeGen_GPU_Host` does: every variable and buffer the loop
//! nest uses from outside becomes a kernel argument (closure conversion, the same
//! [`captures`](crate::backend::c::captures) as for parallel loop bodies), the nest is
//! printed as a kernel function in OpenCL C or CUDA C ([`device_c`]), and the host prints a
//! launch with the block and thread counts ([`kernel::launch_shape`]) through the runtime
//! table's `gpu_launch` ([`crate::runtime::gpu`]). The kernels of one file are one source
//! string in the generated C, so the JIT cache, a cached compile and an ahead-of-time
//! library all carry them.
//!
//! Buffers cross between host and device where the data does: the launch passes each
//! buffer with the bits of [`crate::runtime::ffi::access`], which say whether host code of
//! the pipeline also writes it (the host copy may be newer before a launch) or reads it
//! (the kernel's writes are copied back at once). Those are read from the loop nest here
//! ([`HostAccess`]); a buffer only kernels touch stays on the device for the whole run.
//!
//! ```
//! use halogen::prelude::*;
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let f = Func::new("f");
//! f.def((x, y), x + y);
//! f.gpu_tile(x, y, Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"), 8, 8);
//! let target: Target = "host-opencl".parse().unwrap();
//! let lowered = halogen::lower::lower(&[f.func_ref().clone()], &target).unwrap();
//! let c = halogen::backend::c::generate(&lowered, "f_gpu", &target).unwrap();
//! let kernels = c.kernel_source.unwrap();
//! assert!(kernels.contains("__kernel void f_kernel_0("), "{kernels}");
//! assert!(c.source.contains("rt->gpu_launch(ctx, &h_kernels, \"f_kernel_0\""));
//! ```

pub mod device_c;
pub mod kernel;

use crate::ir::{walk_expr, walk_stmt, Expr, ExprKind, ForKind, Name, Stmt, Visitor};
use crate::runtime::gpu::Api;
use crate::target::{Feature, Target};
use device_c::Flavor;
use std::collections::HashSet;

/// The kernel dialect and device API of `target`, if it runs GPU loops.
pub fn flavor_of(target: &Target) -> Option<(Flavor, Api)> {
    if target.has_feature(Feature::Cuda) {
        Some((Flavor::Cuda, Api::Cuda))
    } else if target.has_feature(Feature::OpenCL) {
        Some((Flavor::OpenCL, Api::OpenCL))
    } else {
        None
    }
}

/// The buffers host code (everything outside GPU block loops) reads and writes.
#[derive(Debug, Default)]
pub struct HostAccess {
    /// Buffers host code loads from.
    pub reads: HashSet<Name>,
    /// Buffers host code stores to.
    pub writes: HashSet<Name>,
    /// Buffers kernels use.
    pub kernels: HashSet<Name>,
}

impl HostAccess {
    /// What host code and kernels of `s` access.
    ///
    /// ```
    /// use halogen::backend::gpu::HostAccess;
    /// use halogen::ir::{ForKind, Stmt};
    /// use halogen::{Expr, Type};
    /// let x = Expr::var(Type::i32(), "x");
    /// let copy = |to: &str, from: &str| Stmt::Store {
    ///     buffer: to.into(),
    ///     value: Expr::load(Type::i32(), from, x.clone(), None),
    ///     index: x.clone(),
    ///     predicate: None,
    /// };
    /// let kernel = Stmt::for_loop("g.s0.x", Expr::i32(0), Expr::i32(8), ForKind::GpuBlock, copy("g", "in"));
    /// let host = Stmt::for_loop("h.s0.x", Expr::i32(0), Expr::i32(8), ForKind::Serial, copy("h", "g"));
    /// let a = HostAccess::of(&Stmt::block(vec![kernel, host]));
    /// assert!(a.kernels.contains("g") && a.host_touches(&"g".into()) && !a.host_touches(&"in".into()));
    /// ```
    pub fn of(s: &Stmt) -> HostAccess {
        struct Walk {
            access: HostAccess,
            in_kernel: bool,
        }
        impl Visitor for Walk {
            fn visit_expr(&mut self, e: &Expr) {
                if let ExprKind::Load { buffer, .. } = e.kind() {
                    let set = if self.in_kernel { &mut self.access.kernels } else { &mut self.access.reads };
                    set.insert(buffer.clone());
                }
                walk_expr(self, e)
            }
            fn visit_stmt(&mut self, s: &Stmt) {
                match s {
                    Stmt::For { kind: ForKind::GpuBlock, .. } if !self.in_kernel => {
                        self.in_kernel = true;
                        walk_stmt(self, s);
                        self.in_kernel = false;
                    }
                    Stmt::Store { buffer, .. } => {
                        let set = if self.in_kernel { &mut self.access.kernels } else { &mut self.access.writes };
                        set.insert(buffer.clone());
                        walk_stmt(self, s)
                    }
                    _ => walk_stmt(self, s),
                }
            }
        }
        let mut w = Walk { access: HostAccess::default(), in_kernel: false };
        w.visit_stmt(s);
        w.access
    }

    /// Whether host code touches `buffer`.
    pub fn host_touches(&self, buffer: &Name) -> bool {
        self.reads.contains(buffer) || self.writes.contains(buffer)
    }
}

/// The whole text of a file's kernels as a C string literal, one literal per line.
pub fn source_literal(source: &str) -> String {
    let lines: Vec<String> =
        source.split_inclusive('\n').map(|l| format!("    {}", crate::backend::c_like::names::c_string(l))).collect();
    if lines.is_empty() {
        "\"\"".to_string()
    } else {
        lines.join("\n")
    }
}
