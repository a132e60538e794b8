//! The entry point of the CPU runtime's ABI (see [`crate::backend::c`] for its C
//! signature): the buffer descriptors' checks and bindings, the scalar parameters, the
//! streaming-store flags of outputs, and the whole file around it.

use super::{internal, Binding, Buf, EntryBuffer, Function, Printer};
use crate::backend::c::captures::captures;
use crate::backend::c::prelude::fixed_prelude;
use crate::backend::c::streaming::write_only;
use crate::backend::c::types::{check, mnemonic, storage_c};
use crate::backend::c_like::names::c_string;
use crate::backend::c_like::printer as core;
use crate::error::Result;
use crate::ir::{Name, Stmt, Type, TypeCode};

impl Printer {
    /// Prints the whole file: prelude, typedefs and helpers, loop bodies, and `entry` taking
    /// `buffers` (in order) and binding each scalar of `scalars` as its [`Binding`] says.
    pub fn file(
        mut self,
        s: &Stmt,
        entry: &str,
        buffers: &[EntryBuffer],
        scalars: &[(Name, Type, Binding)],
        header_comment: &str,
    ) -> Result<String> {
        self.f = Function::new(1);
        self.f.pooled = true;
        let used = captures(s, &[]);
        for (i, b) in buffers.iter().enumerate() {
            check(b.elem)?;
            if !used.buffers.contains(&b.name) {
                continue;
            }
            let cname = self.f.w.namer.fresh(&b.name);
            let e = storage_c(b.elem);
            self.line(format!("{e} *{cname} = ({e} *)buffers[{i}]->host;"));
            self.f.bufs.push(Buf { name: b.name.clone(), cname, elem: b.elem, owned: false, stream: None });
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

        let mut out = String::new();
        out.push_str(header_comment);
        out.push_str(&fixed_prelude(&self.machine));
        out.push_str(&self.helpers.text());
        for b in &self.bodies {
            out.push('\n');
            out.push_str(b);
        }
        out.push('\n');
        out.push_str(&format!(
            "int {entry}(const struct halogen_runtime *rt, void *ctx, struct halogen_buffer *const *buffers,\n{}const union halogen_scalar *params) {{\n",
            " ".repeat(entry.len() + 5)
        ));
        out.push_str("    if (!rt) rt = &h_serial_runtime;\n");
        out.push_str("    (void)params;\n");
        for (i, b) in buffers.iter().enumerate() {
            out.push_str(&buffer_check(i, b));
        }
        out.push_str(&body);
        out.push_str("}\n");
        Ok(out)
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
