//! The entry point of the CPU runtime's ABI (see [`crate::backend::c`] for its C
//! signature): the buffer descriptors' checks and bindings, the scalar parameters, the
//! streaming-store flags of outputs, and the whole file around it.

use super::{internal, Binding, Buf, EntryBuffer, Function, Printer};
use crate::backend::c::captures::captures;
use crate::backend::c::prelude::{fixed_prelude, VECTOR_WIDTH_END};
use crate::backend::c::streaming::write_only;
use crate::backend::c::types::{check, mnemonic, storage_c};
use crate::backend::c_like::names::c_string;
use crate::backend::c_like::printer as core;
use crate::error::Result;
use crate::ir::{Name, Stmt, Type, TypeCode};

impl Printer {
    /// Prints the whole file: prelude, typedefs and helpers, loop bodies, and `entry` taking
    /// `buffers` (in order) and binding each scalar of `scalars` as its [`Binding`] says.
    /// Also the same code split into translation units to compile in parallel
    /// ([`CFile::units`]).
    pub fn file(
        mut self,
        s: &Stmt,
        entry: &str,
        buffers: &[EntryBuffer],
        scalars: &[(Name, Type, Binding)],
        header_comment: &str,
    ) -> Result<CFile> {
        self.f = Function::new(1);
        self.f.pooled = true;
        if let Some(g) = self.gpu.as_mut() {
            g.read_host_access(s);
        }
        let used = captures(s, &[]);
        for (i, b) in buffers.iter().enumerate() {
            check(b.elem)?;
            if !used.buffers.contains(&b.name) {
                continue;
            }
            let cname = self.f.w.namer.fresh(&b.name);
            let e = storage_c(b.elem);
            self.line(format!("{e} *{cname} = ({e} *)buffers[{i}]->host;"));
            let descriptor = self.gpu.as_ref().map(|g| {
                // An input's host memory holds the run's data.
                let data = if b.is_output { 0 } else { crate::runtime::ffi::access::HOST_DATA };
                (format!("buffers[{i}]"), g.host_bits(&b.name) | data)
            });
            self.f.bufs.push(Buf { name: b.name.clone(), cname, elem: b.elem, owned: false, stream: None, descriptor });
        }
        self.stream_flags(s, buffers);
        for name in &used.vars {
            let Some((_, ty, binding)) = scalars.iter().find(|(n, _, _)| n == name) else {
                return Err(internal(format!("variable '{name}' is used but is neither a Param nor a buffer's shape")));
            };
            check(*ty)?;
            let value = match binding {
                Binding::Shape { buffer, dim, field } => format!("buffers[{buffer}]->dim[{dim}].{field}"),
                Binding::Param { index } => format!("params[{index}].{}", union_field(*ty)),
            };
            self.declare(name, *ty, value);
        }
        for b in &used.buffers {
            if !self.f.bufs.iter().any(|x| &x.name == b) {
                return Err(internal(format!("buffer '{b}' is used but is neither an input nor the output")));
            }
        }
        self.start_slots();
        core::stmt(&mut self, s)?;
        self.finish_function();
        let body = std::mem::take(&mut self.f.w.out);

        let mut head = String::new();
        head.push_str(header_comment);
        head.push_str(&fixed_prelude(&self.machine));
        head.push_str(&self.helpers.text());
        let mut main = String::new();
        let mut kernel_source = None;
        if let Some(g) = self.gpu.take() {
            let (c_text, source) = g.finish();
            main.push_str(&c_text);
            kernel_source = Some(source);
        }
        main.push_str(&format!(
            "int {entry}(const struct halogen_runtime *rt, void *ctx, struct halogen_buffer *const *buffers,\n{}const union halogen_scalar *params) {{\n",
            " ".repeat(entry.len() + 5)
        ));
        main.push_str("    if (!rt) rt = &h_serial_runtime;\n");
        main.push_str("    (void)params;\n");
        for (i, b) in buffers.iter().enumerate() {
            main.push_str(&buffer_check(i, b));
        }
        main.push_str(&body);
        main.push_str("}\n");

        let mut source = head.clone();
        for b in &self.bodies {
            source.push_str(&format!("\n{}\nstatic {} {}", b.closure, b.signature, b.text));
        }
        source.push('\n');
        source.push_str(&main);
        source.push_str(VECTOR_WIDTH_END);
        Ok(CFile { units: split_units(&head, &self.bodies, &main), source, kernel_source })
    }
    /// Declares, for each output that `s` stores to and never loads from, whether its
    /// stores may stream around the caches: whether the output is at least
    /// `H_STREAM_MIN_BYTES` (see the prelude's `STREAM_HELPERS`). An output read back (an
    /// update's accumulator, a scan) is stored as usual.
    fn stream_flags(&mut self, s: &Stmt, buffers: &[EntryBuffer]) {
        let outputs = write_only(s);
        for (i, b) in buffers.iter().enumerate() {
            let Some(pos) = self.f.bufs.iter().position(|x| x.name == b.name && outputs.contains(&x.name)) else {
                continue;
            };
            let flag = self.f.w.namer.fresh(&format!("{}.stream", b.name));
            self.line(format!("const int {flag} = h_stream_wanted(buffers[{i}]);"));
            self.line(format!("(void){flag};"));
            self.f.bufs[pos].stream = Some(flag);
        }
    }
}

/// A pipeline printed as C: one file, and the same code as translation units.
#[derive(Clone, Debug)]
pub struct CFile {
    /// The whole pipeline in one file.
    pub source: String,
    /// The same code in several files that compile separately and link into one library
    /// (each repeats the prelude, the helpers and every closure's struct; the bodies become
    /// hidden external functions), or empty where one file is small enough to compile
    /// whole. The C compiler's time grows with the size of a file and runs on one core;
    /// files compiled side by side use them all.
    pub units: Vec<String>,
    /// The GPU kernels' own source (OpenCL C or CUDA C), for a GPU target; the C file
    /// carries it as a string.
    pub kernel_source: Option<String>,
}

/// Below this many bytes of loop bodies and entry point, a file is compiled whole: the
/// repeated prelude would cost more than the parallel compile saves.
const SPLIT_MIN_BYTES: usize = 48 * 1024;

/// At most this many units (the entry point's and those of the bodies).
const MAX_UNITS: usize = 16;

/// `head` (prelude and helpers), then the bodies, balanced by size over up to
/// [`MAX_UNITS`] units, and the entry point (`main`) in a unit of its own; each unit also
/// gets every closure struct and a declaration of every body, which may call each other.
fn split_units(head: &str, bodies: &[super::Body], main: &str) -> Vec<String> {
    let code: usize = main.len() + bodies.iter().map(|b| b.text.len()).sum::<usize>();
    if bodies.is_empty() || code < SPLIT_MIN_BYTES {
        return Vec::new();
    }
    const HIDDEN: &str = "__attribute__((visibility(\"hidden\")))";
    let mut decls = head.to_string();
    for b in bodies {
        decls.push_str(&format!("\n{}{HIDDEN} {};\n", b.closure, b.signature));
    }
    // Units of about the entry point's size (at least one body each), largest bodies first.
    let target = main.len().max(SPLIT_MIN_BYTES / 2);
    let mut order: Vec<&super::Body> = bodies.iter().collect();
    order.sort_by_key(|b| std::cmp::Reverse(b.text.len()));
    let n = (code / target).clamp(1, MAX_UNITS - 1).min(bodies.len());
    let mut units: Vec<(usize, String)> = (0..n).map(|_| (0, String::new())).collect();
    for b in order {
        let u = units.iter_mut().min_by_key(|u| u.0).expect("at least one unit");
        u.0 += b.text.len();
        u.1.push_str(&format!("\n{HIDDEN} {} {}", b.signature, b.text));
    }
    let mut out = vec![format!("{decls}\n{main}{VECTOR_WIDTH_END}")];
    out.extend(units.into_iter().map(|(_, text)| format!("{decls}{text}{VECTOR_WIDTH_END}")));
    out
}

/// The member of `union halogen_scalar` holding a value of type `t`.
pub fn union_field(t: Type) -> String {
    if t.is_bool() {
        "b".to_string()
    } else {
        mnemonic(t.element())
    }
}

/// The check, at the top of the entry point, that a buffer descriptor has the element type
/// and dimension count the code was compiled for (callers of ahead-of-time code pass
/// descriptors by hand).
fn buffer_check(i: usize, b: &EntryBuffer) -> String {
    let code = match b.elem.code {
        TypeCode::Int => 0,
        TypeCode::UInt | TypeCode::Bool => 1,
        TypeCode::Float => 2,
        TypeCode::Handle => 3,
    };
    let msg = c_string(&format!(
        "buffer '{}' (argument {i}) must hold {} in {} dimension{}",
        b.name,
        b.elem,
        b.dims,
        if b.dims == 1 { "" } else { "s" }
    ));
    format!(
        "    if (!buffers[{i}] || buffers[{i}]->type_code != {code} || buffers[{i}]->type_bits != {} || buffers[{i}]->dimensions != {}) {{\n        rt->error(ctx, {msg});\n        return -1;\n    }}\n",
        b.elem.bits,
        b.dims
    )
}
