//! The host side of GPU kernels (see [`crate::backend::gpu`]): a GPU block loop is
//! outlined as a kernel and replaced by its launch; storage that kernels use gets a buffer
//! descriptor, whose device copy the runtime manages and releases where the storage ends.

use super::{internal, Printer};
use crate::backend::c::types::check;
use crate::backend::c_like::names::c_string;
use crate::backend::c_like::printer as core;
use crate::backend::c_like::syntax::strip_parens;
use crate::backend::gpu::device_c::{check_messages, Flavor, KernelPrinter, Param};
use crate::backend::gpu::kernel::{launch_shape, MAX_GPU_DIMENSIONS};
use crate::backend::gpu::{source_literal, HostAccess};
use crate::error::{Error, Result};
use crate::ir::{Expr, ForKind, Name, Stmt, Type};
use crate::lower::loop_kinds::split_loop_name;
use crate::runtime::ffi::{access, type_code};
use crate::runtime::gpu::Api;

/// The kernels of the file being printed.
#[derive(Debug)]
pub(crate) struct Kernels {
    api: Api,
    /// Whether float operations may be contracted (the target's `fast_math`).
    fast_math: bool,
    printer: KernelPrinter,
    texts: Vec<String>,
    host: HostAccess,
}

impl Kernels {
    pub(crate) fn new(flavor: Flavor, api: Api, fast_math: bool, atomic: &[Name]) -> Kernels {
        Kernels {
            api,
            fast_math,
            printer: KernelPrinter::new(flavor, atomic),
            texts: Vec::new(),
            host: HostAccess::default(),
        }
    }

    /// Reads which buffers host code of the pipeline `s` uses.
    pub(crate) fn read_host_access(&mut self, s: &Stmt) {
        self.host = HostAccess::of(s);
    }

    /// The `HALOGEN_ACCESS_*` bits of how host code uses `buffer`.
    pub(crate) fn host_bits(&self, buffer: &Name) -> u64 {
        let mut bits = 0;
        if self.host.writes.contains(buffer) {
            bits |= access::HOST_WRITES;
        }
        if self.host.host_touches(buffer) {
            bits |= access::HOST_READS;
        }
        bits
    }

    /// The C text the entry point's file needs for the kernels (`h_kernels`, before the
    /// entry point), and the kernels' own source.
    pub(crate) fn finish(self) -> (String, String) {
        let mut source = self.printer.flavor().prelude(self.fast_math);
        for t in &self.texts {
            source.push('\n');
            source.push_str(t);
        }
        let checks = &self.printer.checks;
        let mut c = String::from("/* The GPU kernels of this file, and the messages of their checks. */\n");
        c.push_str(&format!("static const char h_kernel_source[] =\n{};\n", source_literal(&source)));
        c.push_str(&format!(
            "static const char *const h_kernel_checks[] = {{\n{}\n    NULL\n}};\n",
            check_messages(checks)
        ));
        c.push_str(&format!(
            "static struct halogen_kernels h_kernels = {{{}, {}, h_kernel_source, h_kernel_checks, NULL}};\n\n",
            self.api.code(),
            checks.len()
        ));
        (c, source)
    }
}

impl Printer {
    /// For storage `name` that GPU kernels use: declares its buffer descriptor
    /// (dense, with `extents`, over the host storage `cname`) and returns the descriptor's C
    /// expression and the host's access bits.
    pub(super) fn device_descriptor(
        &mut self,
        name: &Name,
        elem: Type,
        extents: &[Expr],
        cname: &str,
    ) -> Result<Option<(String, u64)>> {
        // Storage names are unique in a pipeline: the file's kernels use this one or not.
        let Some(bits) = self.gpu.as_ref().filter(|g| g.host.kernels.contains(name)).map(|g| g.host_bits(name)) else {
            return Ok(None);
        };
        let mut dims = Vec::new();
        let mut stride = "1".to_string();
        for e in extents {
            let x = core::expr(self, e)?;
            let x = strip_parens(&x).to_string();
            dims.push(format!("{{0, {x}, {stride}, 0}}"));
            stride = if stride == "1" { x } else { format!("{stride} * {x}") };
        }
        let d = self.f.w.namer.fresh(&format!("{name}.dims"));
        let b = self.f.w.namer.fresh(&format!("{name}.device"));
        if dims.is_empty() {
            dims.push("{0, 1, 1, 0}".to_string());
        }
        self.line(format!("const struct halogen_dim {d}[{}] = {{{}}};", dims.len(), dims.join(", ")));
        self.line(format!(
            "struct halogen_buffer {b} = {{0, NULL, (uint8_t *){cname}, 0, {}, {}, 1, {}, {d}}};",
            type_code(elem),
            elem.bits,
            dims.len()
        ));
        Ok(Some((format!("&{b}"), bits)))
    }

    /// Outlines the kernel whose outermost block loop is `name` and prints its launch.
    pub(super) fn gpu_launch(
        &mut self,
        name: &Name,
        kind: ForKind,
        min: &Expr,
        extent: &Expr,
        body: &Stmt,
    ) -> Result<()> {
        let (func, var) = split_loop_name(name);
        if self.gpu.is_none() {
            return Err(Error::Target(format!(
                "Func '{func}': gpu_blocks({var}) needs a GPU target ('host-opencl' or 'host-cuda')"
            )));
        }
        if kind != ForKind::GpuBlock {
            return Err(internal(format!("GPU thread loop '{name}' outside a GPU block loop")));
        }
        if !self.f.pooled {
            return Err(Error::Schedule(format!(
                "Func '{func}': gpu_blocks({var}) is inside a parallel loop; a kernel is launched from serial host \
                 code (make the enclosing loops serial)"
            )));
        }
        let kernel = Stmt::for_loop(name.clone(), min.clone(), extent.clone(), kind, body.clone());
        let shape = launch_shape(&kernel)?;
        let mut params = Vec::new();
        let mut args = Vec::new();
        for v in &shape.vars {
            let var = self.lookup_var(v)?.clone();
            check(var.ty)?;
            if var.ty.is_vector() {
                return Err(internal(format!("kernel argument '{v}' is a vector")));
            }
            params.push(Param::Scalar(v.clone(), var.ty));
            args.push((var.cname.clone(), var.ty));
        }
        let mut buffer_args = Vec::new();
        for (b, writes) in &shape.buffers {
            let buf = self.lookup_buf(b)?.clone();
            let Some((descriptor, bits)) = buf.descriptor.clone() else {
                return Err(internal(format!("buffer '{b}' is used by a kernel but has no descriptor")));
            };
            params.push(Param::Buffer(b.clone(), buf.elem, *writes));
            buffer_args.push((descriptor, bits | if *writes { access::WRITE } else { 0 }));
        }
        // The launch's counts, evaluated on the host.
        let mut blocks = vec!["1".to_string(); MAX_GPU_DIMENSIONS];
        let n = shape.blocks.len();
        for (i, (_, e)) in shape.blocks.iter().enumerate() {
            blocks[n - 1 - i] = strip_parens(&core::expr(self, e)?).to_string();
        }
        let mut threads = vec!["1".to_string(); MAX_GPU_DIMENSIONS];
        for (d, extents) in shape.threads.iter().enumerate() {
            let mut text: Option<String> = None;
            for e in extents {
                let x = strip_parens(&core::expr(self, e)?).to_string();
                text = Some(match text {
                    None => x,
                    Some(t) if t == x => t,
                    Some(t) => format!("h_max_i32({t}, {x})"),
                });
            }
            if let Some(t) = text {
                threads[d] = t;
            }
        }
        let g = self.gpu.as_mut().expect("checked above");
        let kname = crate::backend::c_like::names::sanitize(&format!("{func}.kernel.{}", g.texts.len()));
        let text = g.printer.kernel(&kname, &kernel, shape, &params)?;
        g.texts.push(text);

        self.open(format!("{{ /* kernel {kname}: Func '{func}' */"));
        self.line(format!("const int32_t h_blocks[3] = {{{}}};", blocks.join(", ")));
        self.line(format!("const int32_t h_threads[3] = {{{}}};", threads.join(", ")));
        let mut items = Vec::new();
        for (i, (c, t)) in args.iter().enumerate() {
            if t.is_bool() {
                let tmp = format!("h_arg{i}");
                self.line(format!("const uint8_t {tmp} = {c};"));
                items.push(format!("{{&{tmp}, 1, NULL, 0}}"));
            } else {
                items.push(format!("{{&{c}, sizeof({c}), NULL, 0}}"));
            }
        }
        for (d, bits) in &buffer_args {
            items.push(format!("{{NULL, 0, {d}, {bits}}}"));
        }
        let count = items.len();
        if items.is_empty() {
            items.push("{NULL, 0, NULL, 0}".to_string());
        }
        self.line(format!("const struct halogen_kernel_arg h_args[] = {{{}}};", items.join(", ")));
        self.open(format!(
            "if (!rt->gpu_launch || rt->gpu_launch(ctx, &h_kernels, {}, h_blocks, h_threads, h_args, {count}) != 0) {{",
            c_string(&kname)
        ));
        self.open("if (!rt->gpu_launch) {");
        self.line(format!(
            "rt->error(ctx, {});",
            c_string(&format!("kernel '{kname}': this runtime runs no GPU kernels"))
        ));
        self.close("}");
        self.fail();
        self.close("}");
        self.close("}");
        Ok(())
    }
}
