//! The C source printer: lowered `Stmt`/`Expr` to C11 with GCC/Clang vector extensions.
//!
//! Shape of the output:
//! - `Let` expressions are hoisted into `const` declarations just before the statement
//!   that uses them (expressions are pure and, in valid lowered code, every operand may be
//!   evaluated, as the interpreter does), so no GNU statement expressions are needed and
//!   the common subexpressions CSE found read as named locals;
//! - every IR binding gets its own C identifier
//!   ([`Namer`](crate::backend::c_like::names::Namer)), so C scoping never changes which
//!   binding a name means;
//! - each parallel loop body becomes `static int body_N(void *ctx, int32_t index, void
//!   *closure)` with a `struct closure_N` holding what the body uses, run through the
//!   runtime's `par_for`;
//! - integer operations whose C form could overflow are done in unsigned types, and
//!   division, remainder, shifts, min/max and float→int casts go through the prelude's
//!   helpers, which implement `ir/semantics.rs` exactly.

use super::captures::captures;
use super::prelude::Helpers;
use super::streaming::{work, write_only, Work};
use super::types::{check, mask_of, mnemonic, scalar_c, storage_c, unsigned_of};
use crate::analysis::access::{
    self, classify_access, widened_narrow, AccessPattern, Bindings, FirstLane, InRange, Narrow, Shape, Uniform,
    VarFacts,
};
use crate::backend::c_like::names::c_string;
use crate::backend::c_like::syntax::{
    arith_symbol, bit_symbol, cmp_symbol, float_literal, index_symbol, int_literal, paren, strip_parens,
};
use crate::backend::c_like::writer::Writer;
use crate::error::{Error, Result};
use crate::ir::{BinOp, CallKind, Expr, ExprKind, ForKind, Intrinsic, MsgPart, Name, Stmt, Type, TypeCode};
use crate::target::MachineParams;

const PASS: &str = "C back end";

/// Allocations of at most this many bytes and a constant size live on the stack.
pub const STACK_ALLOCATION_BYTES: usize = 16 * 1024;

fn internal(message: impl Into<String>) -> Error {
    Error::internal(PASS, message)
}

/// A variable in scope: its C identifier and type, what its binding is known to hold (see
/// [`crate::analysis::access`]), and the C names declared for those facts.
#[derive(Clone, Debug)]
struct Var {
    name: Name,
    cname: String,
    ty: Type,
    facts: VarFacts,
    spelled: Spelled,
}

impl Var {
    /// A variable bound to nothing known (a loop variable, a parameter).
    fn opaque(name: &Name, cname: String, ty: Type) -> Var {
        Var { name: name.clone(), cname, ty, facts: VarFacts::opaque(), spelled: Spelled::None }
    }
}

/// The C names declared alongside a `Let`'s variable for its access facts.
#[derive(Clone, Debug)]
enum Spelled {
    None,
    /// For evenly spaced `i32` lanes: the 64-bit scalar holding the first lane (accesses
    /// indexed by the vector address memory from there).
    Base(String),
    /// For a broadcast: the scalar's C variable (so `ramp + broadcast` stays dense after CSE
    /// names the broadcast).
    Scalar(String),
    /// For `i32` lanes widened from 8- or 16-bit integers: the narrow vector (gathers index
    /// with that).
    Narrow(String),
    /// For a clamped dense vector: the conditions under which no lane is clamped and the
    /// first lane then.
    Clamped(Vec<String>, String),
}

/// A buffer in scope: its C identifier (a pointer to its elements), element type, and
/// whether it is a heap allocation of this function.
#[derive(Clone, Debug)]
struct Buf {
    name: Name,
    cname: String,
    elem: Type,
    /// Storage the pipeline allocated itself (not a caller's buffer): nothing else points
    /// into it, so every pointer to it may be `restrict`.
    owned: bool,
    /// For an output the pipeline never reads: the C name of the `int` that says whether
    /// its dense vector stores may go around the caches (see [`Printer::stream_flags`]).
    stream: Option<String>,
}

/// A serial loop around the statement being printed.
#[derive(Debug)]
struct Loop {
    name: Name,
    /// Its extent, where that is a constant.
    extent: Option<i64>,
    /// What one iteration does.
    work: Work,
}

/// The state of the C function being printed.
#[derive(Debug, Default)]
struct Function {
    w: Writer,
    vars: Vec<Var>,
    bufs: Vec<Buf>,
    /// Heap allocations live at this point, innermost last: freed before an error return.
    heap: Vec<String>,
    /// The serial loops around the statement being printed, in this function, innermost
    /// last.
    loops: Vec<Loop>,
    /// Whether the function made streaming stores, which it must fence before it returns.
    streams: bool,
    /// Reuse slots of allocations inside loops (see [`Printer::allocate`]): declared at
    /// `slots_at` in `out`, freed wherever the function returns.
    slots: Vec<String>,
    slots_at: usize,
    /// Whether heap storage comes from the runtime's pooled allocator (the entry point's
    /// buffers, reused from one run to the next) rather than `malloc` (a parallel loop
    /// body's, which the thread that frees it reuses through `malloc`'s own caches).
    pooled: bool,
}

impl Function {
    fn new(indent: usize) -> Function {
        Function { w: Writer::new(indent), ..Function::default() }
    }
}

impl Bindings for Function {
    fn facts(&self, name: &Name) -> Option<&VarFacts> {
        self.vars.iter().rev().find(|v| &v.name == name).map(|v| &v.facts)
    }
}

/// A scalar the entry point binds: from a buffer descriptor or from the parameter array.
#[derive(Clone, Debug)]
pub enum Binding {
    /// `buffers[buffer]->dim[dim].<field>` (`field` is `min`, `extent` or `stride`).
    Shape { buffer: usize, dim: usize, field: &'static str },
    /// `params[index]`.
    Param { index: usize },
}

/// Prints one pipeline: the entry point and the parallel loop bodies it needs.
#[derive(Debug)]
pub struct Printer {
    /// The machine the code is for (its last-level cache decides streaming stores).
    machine: MachineParams,
    f: Function,
    helpers: Helpers,
    bodies: Vec<String>,
    next_body: usize,
}

/// A buffer the entry point receives: name, element type and dimensions.
#[derive(Clone, Debug)]
pub struct EntryBuffer {
    /// The IR name.
    pub name: Name,
    /// Element type.
    pub elem: Type,
    /// Number of dimensions.
    pub dims: usize,
}

impl Printer {
    /// A printer with nothing printed, for code that runs on `machine`.
    pub fn new(machine: &MachineParams) -> Printer {
        Printer {
            machine: machine.clone(),
            f: Function::default(),
            helpers: Helpers::default(),
            bodies: Vec::new(),
            next_body: 0,
        }
    }

    fn line(&mut self, text: impl AsRef<str>) {
        self.f.w.line(text);
    }

    fn open(&mut self, text: impl AsRef<str>) {
        self.f.w.open(text);
    }

    fn close(&mut self, text: impl AsRef<str>) {
        self.f.w.close(text);
    }

    /// The statement freeing heap storage `c` of this function.
    fn heap_free(&self, c: &str) -> String {
        if self.f.pooled {
            format!("rt->free(ctx, {c});")
        } else {
            format!("free({c});")
        }
    }

    /// Frees this function's live heap allocations and returns the error code.
    fn fail(&mut self) {
        let frees: Vec<String> = self.f.heap.iter().rev().map(|c| self.heap_free(c)).collect();
        for f in frees {
            self.line(f);
        }
        self.free_slots();
        self.line("return -1;");
    }

    /// Marks where the function's reuse slots are declared: after its preamble.
    fn start_slots(&mut self) {
        self.f.slots_at = self.f.w.out.len();
    }

    fn free_slots(&mut self) {
        let frees: Vec<String> = self.f.slots.iter().map(|c| format!("free({c});")).collect();
        for f in frees {
            self.line(f);
        }
    }

    /// Returns success from the function, freeing its reuse slots, and declares them.
    fn finish_function(&mut self) {
        self.free_slots();
        if self.f.streams {
            // Streaming stores are weakly ordered: they must reach memory before the caller
            // (or the thread joining this loop body) reads the output.
            self.line("h_stream_fence();");
        }
        self.line("return 0;");
        let decls: String =
            self.f.slots.iter().map(|c| format!("    void *{c} = NULL;\n    size_t {c}_bytes = 0;\n")).collect();
        self.f.w.out.insert_str(self.f.slots_at, &decls);
    }

    fn lookup_var(&self, name: &Name) -> Result<&Var> {
        self.f
            .vars
            .iter()
            .rev()
            .find(|v| &v.name == name)
            .ok_or_else(|| internal(format!("variable '{name}' is used but nothing binds it")))
    }

    fn lookup_buf(&self, name: &Name) -> Result<&Buf> {
        self.f
            .bufs
            .iter()
            .rev()
            .find(|b| &b.name == name)
            .ok_or_else(|| internal(format!("unknown buffer '{name}': nothing binds or allocates it")))
    }

    /// Declares `name` as a `const` local bound to nothing known.
    fn declare(&mut self, name: &Name, ty: Type, value: String) -> String {
        let cname = self.f.w.namer.fresh(name);
        let t = self.helpers.ty(ty);
        self.line(format!("const {t} {cname} = {};", strip_parens(&value)));
        self.f.vars.push(Var::opaque(name, cname.clone(), ty));
        cname
    }

    /// Binds `name` to `value` with a `Let`, and records what it holds. A broadcast keeps
    /// its scalar, a widened narrow vector its narrow vector, and a vector of evenly spaced
    /// indices its first lane as a 64-bit scalar (loads and stores indexed by it address
    /// memory from that, and the C compiler can see it as an induction variable): accesses
    /// may use only those.
    fn bind_let(&mut self, name: &Name, value: &Expr) -> Result<()> {
        let facts = VarFacts::of_let(value, &self.f);
        let spelled = match (facts.shape, value.kind()) {
            (Shape::Uniform, ExprKind::Broadcast { value: scalar, .. }) => {
                let s = self.expr(scalar)?;
                let scalar_name = self.declare(&format!("{name}.scalar").into(), scalar.ty(), s);
                self.f.vars.pop();
                let bc = self.helpers.broadcast(value.ty());
                let cname = self.declare(name, value.ty(), format!("{bc}({scalar_name})"));
                self.line(format!("(void){cname};"));
                Spelled::Scalar(scalar_name)
            }
            (Shape::Widened(_), _) => {
                let a = widened_narrow(value).ok_or_else(|| internal(format!("{value} is not a widened vector")))?;
                let n = self.expr(a)?;
                let narrow_name = self.declare(&format!("{name}.narrow").into(), a.ty(), n);
                self.f.vars.pop();
                let wide = self.cast(a.ty(), value.ty(), narrow_name.clone())?;
                self.declare(name, value.ty(), wide);
                Spelled::Narrow(narrow_name)
            }
            _ => {
                let spelled = match classify_access(value, value.ty().lanes, &self.f) {
                    AccessPattern::Affine { first, .. } if facts.shape != Shape::Opaque => {
                        let base = self.first_lane_c(&first)?;
                        let base_name = self.f.w.namer.fresh(&format!("{name}.base"));
                        self.line(format!("const int64_t {base_name} = {};", strip_parens(&base)));
                        self.line(format!("(void){base_name};"));
                        Spelled::Base(base_name)
                    }
                    AccessPattern::ClampedDense { first, in_range } if facts.shape == Shape::ClampedDense => {
                        let conds = self.in_range_c(&in_range)?;
                        Spelled::Clamped(conds, self.first_lane_c(&first)?)
                    }
                    _ => Spelled::None,
                };
                let v = self.expr(value)?;
                let cname = self.declare(name, value.ty(), v);
                if matches!(spelled, Spelled::Base(_)) {
                    self.line(format!("(void){cname};"));
                }
                spelled
            }
        };
        if let Some(var) = self.f.vars.last_mut() {
            var.facts = facts;
            var.spelled = spelled;
        }
        Ok(())
    }

    // ------------------------------------------------------------------------------
    // The entry point.

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
        self.stmt(s)?;
        self.finish_function();
        let body = std::mem::take(&mut self.f.w.out);

        let mut out = String::new();
        out.push_str(header_comment);
        out.push_str(&super::prelude::fixed_prelude(&self.machine));
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

    // ------------------------------------------------------------------------------
    // Statements.

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::LetStmt { name, value, body } => {
                self.bind_let(name, value)?;
                let r = self.stmt(body);
                self.f.vars.pop();
                r
            }
            Stmt::Assert { condition, message } => self.assert(condition, message),
            Stmt::ProducerConsumer { name, is_producer, body } => {
                self.line(format!("/* {} {name} */", if *is_producer { "produce" } else { "consume" }));
                self.stmt(body)
            }
            Stmt::For { name, min, extent, kind, body, .. } => match kind {
                ForKind::Parallel => self.parallel_for(name, min, extent, body),
                // Vectorized and unrolled loops the passes left (their fallback) and the
                // kinds of other back ends compute the same values serially.
                _ => self.serial_for(name, min, extent, body),
            },
            Stmt::Store { buffer, value, index, predicate } => self.store(buffer, value, index, predicate.as_ref()),
            Stmt::Allocate { name, ty, extents, body } => self.allocate(name, *ty, extents, body),
            Stmt::Free { name } => {
                let b = self.lookup_buf(name)?.clone();
                if self.f.heap.contains(&b.cname) {
                    self.line(self.heap_free(&b.cname));
                    self.line(format!("{} = NULL;", b.cname));
                }
                Ok(())
            }
            Stmt::Block(v) => v.iter().try_for_each(|s| self.stmt(s)),
            Stmt::IfThenElse { condition, then_case, else_case } => {
                if condition.ty().is_vector() {
                    return Err(internal(format!("if condition is a vector: {condition}")));
                }
                let c = self.expr(condition)?;
                self.open(format!("if ({}) {{", strip_parens(&c)));
                self.stmt(then_case)?;
                if let Some(e) = else_case {
                    self.close("} else {");
                    self.f.w.indent += 1;
                    self.f.w.namer.open();
                    self.stmt(e)?;
                }
                self.close("}");
                Ok(())
            }
            Stmt::Evaluate(e) => {
                let v = self.expr(e)?;
                self.line(format!("(void){v};"));
                Ok(())
            }
            Stmt::Provide { name, .. } => Err(internal(format!("Provide to '{name}' reached the C back end"))),
            Stmt::Realize { name, .. } => Err(internal(format!("Realize of '{name}' reached the C back end"))),
        }
    }

    fn assert(&mut self, condition: &Expr, message: &[MsgPart]) -> Result<()> {
        let c = self.expr(condition)?;
        let c = if condition.ty().is_vector() {
            format!("{}({c})", self.helpers.all_true(condition.ty().lanes))
        } else {
            c
        };
        self.open(format!("if (!{}) {{", paren(&c)));
        self.line("struct h_msg h_m = {{0}, 0};");
        for part in message {
            match part {
                MsgPart::Text(t) => self.line(format!("h_msg_str(&h_m, {});", c_string(t))),
                MsgPart::Value(e) => {
                    let v = self.expr(e)?;
                    let t = e.ty();
                    if t.is_vector() {
                        let tmp = self.f.w.namer.fresh("msg.value");
                        let ct = self.helpers.ty(t);
                        self.line(format!("const {ct} {tmp} = {v};"));
                        self.line("h_msg_str(&h_m, \"<\");");
                        for i in 0..t.lanes {
                            if i > 0 {
                                self.line("h_msg_str(&h_m, \", \");");
                            }
                            self.line(msg_value(t.element(), &format!("{tmp}[{i}]")));
                        }
                        self.line("h_msg_str(&h_m, \">\");");
                    } else {
                        self.line(msg_value(t, &v));
                    }
                }
            }
        }
        self.line("rt->error(ctx, h_m.text);");
        self.fail();
        self.close("}");
        Ok(())
    }

    fn serial_for(&mut self, name: &Name, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
        let (mn, ex) = (self.expr(min)?, self.expr(extent)?);
        let ty = min.ty();
        if ty.is_vector() || !ty.is_int_or_uint() {
            return Err(internal(format!("loop '{name}' has bounds of type {ty}")));
        }
        self.f.w.namer.open();
        let v = self.f.w.namer.fresh(name);
        if ty == Type::i32() {
            let end = self.f.w.namer.fresh(&format!("{name}.end"));
            self.line(format!("for (int32_t {v} = {mn}, {end} = h_loop_end({v}, {ex}); {v} < {end}; {v}++) {{"));
        } else {
            // Loops over other integer types count in 64 bits.
            let i = self.f.w.namer.fresh(&format!("{name}.i"));
            let lo = self.f.w.namer.fresh(&format!("{name}.min"));
            self.line(format!("const int64_t {lo} = (int64_t){mn};"));
            self.line(format!("for (int64_t {i} = 0; {i} < (int64_t){ex}; {i}++) {{"));
            self.line(format!("    const {} {v} = ({})({lo} + {i});", scalar_c(ty), scalar_c(ty)));
        }
        self.f.w.indent += 1;
        self.f.vars.push(Var::opaque(name, v, ty));
        self.f.loops.push(Loop { name: name.clone(), extent: extent.as_int(), work: work(body) });
        let r = self.stmt(body);
        self.f.loops.pop();
        self.f.vars.pop();
        self.f.w.indent -= 1;
        self.f.w.namer.close();
        self.line("}");
        r
    }

    /// A parallel loop: its body becomes a function the runtime's `par_for` calls once per
    /// iteration, with a closure holding the variables and buffer pointers it uses.
    fn parallel_for(&mut self, name: &Name, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
        if min.ty() != Type::i32() || extent.ty() != Type::i32() {
            return Err(internal(format!("parallel loop '{name}' has bounds of type {}", min.ty())));
        }
        let (mn, ex) = (self.expr(min)?, self.expr(extent)?);
        let used = captures(body, std::slice::from_ref(name));
        let vars: Vec<Var> = used.vars.iter().map(|n| self.lookup_var(n).cloned()).collect::<Result<_>>()?;
        let bufs: Vec<Buf> = used.buffers.iter().map(|n| self.lookup_buf(n).cloned()).collect::<Result<_>>()?;
        let id = self.next_body;
        self.next_body += 1;

        // The body function, printed with a fresh function state.
        let outer = std::mem::replace(&mut self.f, Function::new(1));
        for r in ["rt", "ctx", "index", "closure", "cl"] {
            self.f.w.namer.reserve(r);
        }
        self.line(format!("const struct closure_{id} *cl = (const struct closure_{id} *)closure;"));
        self.line("const struct halogen_runtime *rt = cl->rt;");
        let mut fields = vec!["    const struct halogen_runtime *rt;".to_string()];
        for v in &vars {
            let t = self.helpers.ty(v.ty);
            fields.push(format!("    {t} {};", v.cname));
            self.f.w.namer.reserve(&v.cname);
            self.line(format!("const {t} {c} = cl->{c};", c = v.cname));
            self.f.vars.push(v.clone());
        }
        for b in &bufs {
            let e = storage_c(b.elem);
            fields.push(format!("    {e} *{};", b.cname));
            self.f.w.namer.reserve(&b.cname);
            // The pipeline's own storage stays `restrict` inside the body: the C compiler
            // may then keep an update's accumulator in a register across a reduction.
            let q = if b.owned { "restrict " } else { "" };
            self.line(format!("{e} *{q}{c} = cl->{c};", c = b.cname));
            self.f.bufs.push(b.clone());
        }
        for flag in bufs.iter().filter_map(|b| b.stream.as_ref()) {
            fields.push(format!("    int {flag};"));
            self.f.w.namer.reserve(flag);
            self.line(format!("const int {flag} = cl->{flag};"));
            self.line(format!("(void){flag};"));
        }
        // Not every body reports errors or starts loops of its own.
        self.line("(void)ctx;");
        self.line("(void)rt;");
        let v = self.f.w.namer.fresh(name);
        self.line(format!("const int32_t {v} = index;"));
        self.f.vars.push(Var::opaque(name, v, Type::i32()));
        self.start_slots();
        let r = self.stmt(body);
        self.finish_function();
        let text = std::mem::replace(&mut self.f, outer).w.out;
        r?;
        self.bodies.push(format!(
            "/* The body of parallel loop {name}. */\nstruct closure_{id} {{\n{}\n}};\n\nstatic int body_{id}(void *ctx, int32_t index, void *closure) {{\n{text}}}\n",
            fields.join("\n")
        ));

        // The call.
        let mut init = vec!["rt".to_string()];
        init.extend(vars.iter().map(|v| v.cname.clone()));
        init.extend(bufs.iter().map(|b| b.cname.clone()));
        init.extend(bufs.iter().filter_map(|b| b.stream.clone()));
        self.open("{");
        self.line(format!("struct closure_{id} h_cl = {{{}}};", init.join(", ")));
        self.open(format!("if (rt->par_for(ctx, body_{id}, {mn}, {ex}, &h_cl) != 0) {{"));
        self.fail();
        self.close("}");
        self.close("}");
        Ok(())
    }

    fn store(&mut self, buffer: &Name, value: &Expr, index: &Expr, predicate: Option<&Expr>) -> Result<()> {
        let b = self.lookup_buf(buffer)?.clone();
        let vt = value.ty();
        if vt.element() != b.elem {
            return Err(internal(format!("store of {vt} to buffer '{buffer}' of {}", b.elem)));
        }
        let lanes = vt.lanes.max(index.ty().lanes).max(predicate.map_or(1, |p| p.ty().lanes));
        if lanes == 1 {
            let i = self.index_c(index)?;
            let v = self.expr(value)?;
            let v = if b.elem.is_bool() { format!("(uint8_t){v}") } else { strip_parens(&v).to_string() };
            let target = format!("{}[{}]", b.cname, strip_parens(&i));
            match predicate {
                Some(p) => {
                    let p = self.expr(p)?;
                    self.line(format!("if {} {target} = {v};", paren(&p)));
                }
                None => self.line(format!("{target} = {v};")),
            }
            return Ok(());
        }
        let t = b.elem.with_lanes(lanes);
        let v = self.operand(value, lanes)?;
        match predicate {
            None => match classify_access(index, lanes, &self.f) {
                AccessPattern::Affine { first, stride: 1 } => {
                    let base = self.first_lane_c(&first)?;
                    match b.stream.as_ref().filter(|_| self.streams(index, t)) {
                        Some(flag) => {
                            let st = self.helpers.store_stream(t);
                            self.line(format!("{st}({} + {base}, {v}, {flag});", b.cname));
                            self.f.streams = true;
                        }
                        None => {
                            let st = self.helpers.store_dense(t);
                            self.line(format!("{st}({} + {base}, {v});", b.cname));
                        }
                    }
                }
                AccessPattern::Affine { first, stride: s } if s != 0 && !b.elem.is_bool() => {
                    let base = self.first_lane_c(&first)?;
                    let st = self.helpers.store_strided(t);
                    self.line(format!("{st}({} + {base}, {s}, {v});", b.cname));
                }
                _ => {
                    let i = self.operand(index, lanes)?;
                    let st = self.helpers.store(t);
                    self.line(format!("{st}({}, {i}, {v});", b.cname));
                }
            },
            Some(p) => {
                let i = self.operand(index, lanes)?;
                let p = self.operand(p, lanes)?;
                let st = self.helpers.store_pred(t);
                self.line(format!("{st}({}, {i}, {v}, {p});", b.cname));
            }
        }
        Ok(())
    }

    fn allocate(&mut self, name: &Name, ty: Type, extents: &[Expr], body: &Stmt) -> Result<()> {
        let elem = ty.element();
        check(elem)?;
        let e = storage_c(elem);
        let constant: Option<i64> =
            extents.iter().try_fold(1i64, |acc, x| x.as_int().filter(|v| *v >= 0).and_then(|v| acc.checked_mul(v)));
        let on_stack =
            constant.filter(|n| (*n as u64).saturating_mul(elem.bytes() as u64) <= STACK_ALLOCATION_BYTES as u64);
        let cname;
        // Heap storage is declared `restrict`: nothing else points into it, which the C
        // compiler cannot see through a reused block and needs to reorder loads and stores.
        // Inside a loop, heap storage is reused from one iteration to the next (a slot of
        // the function, grown when an iteration needs more) instead of being allocated and
        // freed each time.
        let reuse = on_stack.is_none() && !self.f.loops.is_empty();
        if let Some(n) = on_stack {
            cname = self.f.w.namer.fresh(name);
            // Not initialized: bounds inference makes every read follow a write.
            self.line(format!("{e} {cname}[{}] __attribute__((aligned(H_ALIGN)));", n.max(1)));
        } else {
            let exts = extents
                .iter()
                .map(|x| self.expr(x).map(|s| strip_parens(&s).to_string()))
                .collect::<Result<Vec<_>>>()?;
            let exts = if exts.is_empty() { "0".to_string() } else { exts.join(", ") };
            let (helper, slot_args) = if reuse {
                let slot = self.f.w.namer.fresh_in_function(&format!("{name}.slot{}", self.f.slots.len()));
                self.f.slots.push(slot.clone());
                ("h_alloc_reuse", format!(", &{slot}, &{slot}_bytes"))
            } else {
                ("h_alloc", format!(", {}", self.f.pooled as i32))
            };
            cname = self.f.w.namer.fresh(name);
            self.line(format!(
                "{e} *restrict {cname} = ({e} *){helper}(rt, ctx, {}, \"{elem}\", sizeof({e}), {}, (const int64_t[]){{{exts}}}{slot_args});",
                c_string(name),
                extents.len(),
            ));
            self.open(format!("if (!{cname}) {{"));
            self.fail();
            self.close("}");
            if !reuse {
                self.f.heap.push(cname.clone());
            }
        }
        self.f.bufs.push(Buf { name: name.clone(), cname: cname.clone(), elem, owned: true, stream: None });
        let r = self.stmt(body);
        self.f.bufs.pop();
        if on_stack.is_none() && !reuse {
            self.f.heap.pop();
            self.line(self.heap_free(&cname));
        }
        r
    }

    // ------------------------------------------------------------------------------
    // Expressions. Each returns C text that is an identifier, a literal, a call or is
    // parenthesized, so it can be used as an operand as it is.

    /// `e` with `lanes` lanes: broadcast if it is a scalar.
    fn operand(&mut self, e: &Expr, lanes: u16) -> Result<String> {
        let s = self.expr(e)?;
        let t = e.ty();
        if t.lanes == lanes {
            Ok(s)
        } else if t.is_scalar() {
            let bc = self.helpers.broadcast(t.with_lanes(lanes));
            Ok(format!("{bc}({})", strip_parens(&s)))
        } else {
            Err(internal(format!("an operand of {} lanes is used where {lanes} are expected: {e}", t.lanes)))
        }
    }

    /// The C text, in 64 bits, of the first lane of an index vector (see
    /// [`Printer::index_c`] for why 64 bits).
    fn first_lane_c(&mut self, first: &FirstLane) -> Result<String> {
        match first {
            FirstLane::Expr(e) => self.index_c(e),
            FirstLane::Let(name) => match &self.lookup_var(name)?.spelled {
                Spelled::Base(base) | Spelled::Clamped(_, base) => Ok(base.clone()),
                Spelled::Scalar(u) => Ok(format!("(int64_t){u}")),
                _ => Err(internal(format!("'{name}' is not a vector of evenly spaced indices"))),
            },
            FirstLane::Binary(op, a, b) => {
                Ok(format!("({} {} {})", self.first_lane_c(a)?, index_symbol(*op), self.first_lane_c(b)?))
            }
        }
    }

    /// The C text of the scalar a uniform vector repeats.
    fn uniform_c(&mut self, u: &Uniform) -> Result<String> {
        match u {
            Uniform::Expr(e) => self.expr(e),
            Uniform::Let(name) => match &self.lookup_var(name)?.spelled {
                Spelled::Scalar(u) => Ok(u.clone()),
                _ => Err(internal(format!("'{name}' is not a broadcast"))),
            },
        }
    }

    /// The C conditions under which no lane of a clamped index is clamped.
    fn in_range_c(&mut self, in_range: &[InRange]) -> Result<Vec<String>> {
        let mut conds = Vec::new();
        for c in in_range {
            match c {
                InRange::Below { first, last, bound } => {
                    let bound = self.uniform_c(bound)?;
                    let base = self.first_lane_c(first)?;
                    conds.push(format!("(int64_t)({base}) + {last} <= (int64_t)({bound})"));
                }
                InRange::Above { first, bound } => {
                    let bound = self.uniform_c(bound)?;
                    let base = self.first_lane_c(first)?;
                    conds.push(format!("({base}) >= ({bound})"));
                }
                InRange::Let(name) => match &self.lookup_var(name)?.spelled {
                    Spelled::Clamped(c, _) => conds.extend(c.iter().cloned()),
                    _ => return Err(internal(format!("'{name}' is not a clamped index"))),
                },
            }
        }
        Ok(conds)
    }

    /// Whether a dense store of `t` at `index` to an output that may stream does (see
    /// [`super::streaming`]): the vector is a whole number of 16-byte blocks, the innermost
    /// serial loop around it steps the index by exactly one vector over at least a cache
    /// line's worth of iterations, so that successive iterations fill each cache line whole
    /// and in order (a streamed line written in parts, with other stores in between, costs
    /// a partial write to memory for each part), and that loop does little work per byte
    /// it stores.
    fn streams(&self, index: &Expr, t: Type) -> bool {
        let bytes = t.lanes as usize * t.element().bytes();
        if t.element().is_bool() || !bytes.is_multiple_of(16) {
            return false;
        }
        let Some(innermost) = self.f.loops.last() else { return false };
        let run = innermost.extent.map_or(i64::MAX, |e| e.saturating_mul(bytes as i64));
        innermost.work.streams()
            && run >= super::streaming::CACHE_LINE_BYTES
            && self.lookup_var(&innermost.name).ok().and_then(|v| access::step_along(index, &v.name, v.ty, &self.f))
                == Some(t.lanes as i64)
    }

    /// The C text of a scalar `i32` index, with its `+`, `-` and `*` done in 64 bits.
    ///
    /// Index arithmetic never wraps in a program that passes bounds inference: every index
    /// lies in a buffer, and the regions that bounds inference computes (without wrapping)
    /// bound every term. Computing it in 64 bits without the wrap-around helpers gives the
    /// same addresses and lets the C compiler strength-reduce them into pointer increments.
    fn index_c(&mut self, e: &Expr) -> Result<String> {
        if e.ty() != Type::i32() {
            return Ok(format!("(int64_t){}", self.expr(e)?));
        }
        match e.kind() {
            ExprKind::IntImm(v) => Ok(format!("(int64_t){v}")),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                Ok(format!("({} {} {})", self.index_c(a)?, index_symbol(*op), self.index_c(b)?))
            }
            _ => Ok(format!("(int64_t){}", self.expr(e)?)),
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<String> {
        let t = e.ty();
        match e.kind() {
            ExprKind::IntImm(v) => {
                check(t)?;
                Ok(int_literal(t, *v))
            }
            ExprKind::FloatImm(b) => Ok(float_literal(t, b.get())),
            ExprKind::Var { name, .. } => Ok(self.lookup_var(name)?.cname.clone()),
            ExprKind::Cast(a) => {
                let x = self.expr(a)?;
                self.cast(a.ty(), t, x)
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.operand(a, t.lanes)?, self.operand(b, t.lanes)?);
                let ot = a.ty().element().with_lanes(t.lanes);
                self.binary(*op, ot, x, y, b)
            }
            ExprKind::Cmp(op, a, b) => {
                let lanes = a.ty().lanes.max(b.ty().lanes);
                let (x, y) = (self.operand(a, lanes)?, self.operand(b, lanes)?);
                let ot = a.ty().element().with_lanes(lanes);
                check(ot)?;
                let c = format!("({x} {} {y})", cmp_symbol(*op));
                if lanes == 1 {
                    Ok(c)
                } else {
                    let m2b = self.helpers.mask_to_bool(mask_of(ot));
                    Ok(format!("{m2b}{c}"))
                }
            }
            ExprKind::Not(a) => {
                let x = self.expr(a)?;
                Ok(if a.ty().is_vector() { format!("({x} ^ 1)") } else { format!("!{x}") })
            }
            ExprKind::Select(c, a, b) => {
                let lanes = t.lanes;
                let (x, y) = (self.operand(a, lanes)?, self.operand(b, lanes)?);
                // A condition the same in every lane (a scalar, or a broadcast of one, as a
                // band or channel test in a vectorized loop) picks one side: C's `?:`
                // evaluates only that one, and the compiler can hoist the test out of the
                // loop, where a blend computes both.
                let uniform = if c.ty().is_scalar() {
                    Some(self.expr(c)?)
                } else if let Some(u) = access::uniform(c, &self.f) {
                    Some(self.uniform_c(&u)?)
                } else {
                    None
                };
                if let Some(cc) = uniform {
                    Ok(format!("({} ? {x} : {y})", paren(&cc)))
                } else {
                    let cc = self.operand(c, lanes)?;
                    let sel = self.helpers.select(t);
                    Ok(format!("{sel}({cc}, {x}, {y})"))
                }
            }
            ExprKind::Load { buffer, index, predicate } => self.load(t, buffer, index, predicate.as_ref()),
            ExprKind::Ramp { base, stride, .. } => {
                check(t)?;
                let (b, s) = (self.expr(base)?, self.expr(stride)?);
                let ramp = self.helpers.ramp(t);
                Ok(format!("{ramp}({}, {})", strip_parens(&b), strip_parens(&s)))
            }
            ExprKind::Broadcast { value, .. } => {
                check(t)?;
                let v = self.expr(value)?;
                if value.ty().is_scalar() {
                    let bc = self.helpers.broadcast(t);
                    Ok(format!("{bc}({})", strip_parens(&v)))
                } else {
                    // A broadcast of a vector repeats it.
                    let vt = value.ty();
                    let m = vt.lanes;
                    let name = self.helpers.map("h_repeat", t, &[vt], |_| format!("a0[i % {m}]"));
                    Ok(format!("{name}({v})"))
                }
            }
            ExprKind::Let { name, value, body } => {
                self.bind_let(name, value)?;
                let r = self.expr(body);
                self.f.vars.pop();
                r
            }
            ExprKind::Call { name, args, kind } => match kind {
                CallKind::Intrinsic(which) => self.intrinsic(*which, t, args),
                CallKind::Func { .. } | CallKind::Image => Err(internal(format!(
                    "call to '{name}' reached the C back end; storage flattening should have made it a Load"
                ))),
            },
        }
    }

    fn load(&mut self, t: Type, buffer: &Name, index: &Expr, predicate: Option<&Expr>) -> Result<String> {
        let b = self.lookup_buf(buffer)?.clone();
        if t.element() != b.elem {
            return Err(internal(format!("load of {} from buffer '{buffer}' of {}", t.element(), b.elem)));
        }
        let lanes = t.lanes.max(index.ty().lanes);
        if lanes == 1 {
            let i = self.index_c(index)?;
            let ld = format!("{}[{}]", b.cname, strip_parens(&i));
            let ld = if b.elem.is_bool() { format!("({ld} != 0)") } else { ld };
            return Ok(match predicate {
                Some(p) => {
                    let p = self.expr(p)?;
                    format!("({p} ? {ld} : 0)")
                }
                None => ld,
            });
        }
        let vt = b.elem.with_lanes(lanes);
        match predicate {
            None => match classify_access(index, lanes, &self.f) {
                AccessPattern::Affine { first, stride: 1 } => {
                    let base = self.first_lane_c(&first)?;
                    let ld = self.helpers.load_dense(vt);
                    Ok(format!("{ld}({} + {base})", b.cname))
                }
                AccessPattern::Affine { first, stride } if !b.elem.is_bool() => {
                    // Evenly spaced lanes: one scalar load for a broadcast, dense loads and
                    // a shuffle for every other element, one load per lane otherwise; never
                    // an index vector.
                    let base = self.first_lane_c(&first)?;
                    Ok(match stride {
                        0 => {
                            let bc = self.helpers.broadcast(vt);
                            format!("{bc}({}[{}])", b.cname, strip_parens(&base))
                        }
                        2 if lanes.is_power_of_two() => {
                            let ld = self.helpers.load_stride_two(vt);
                            format!("{ld}({} + {base})", b.cname)
                        }
                        s => {
                            let ld = self.helpers.load_strided(vt);
                            format!("{ld}({} + {base}, {s})", b.cname)
                        }
                    })
                }
                AccessPattern::ClampedDense { first, in_range } => {
                    // A clamped ramp (a boundary condition) is dense away from the edges:
                    // test that with scalars and load densely there.
                    let conds = self.in_range_c(&in_range)?;
                    let base = self.first_lane_c(&first)?;
                    let ldd = self.helpers.load_dense(vt);
                    let i = self.operand(index, lanes)?;
                    let ld = self.helpers.load(vt);
                    Ok(format!("(({}) ? {ldd}({} + {base}) : {ld}({}, {i}))", conds.join(" && "), b.cname, b.cname))
                }
                AccessPattern::NarrowIndex { narrow, narrow_ty, offset } => {
                    // A lookup table indexed by narrow pixels: gather with those directly.
                    let mut o = "0".to_string();
                    for (op, term) in &offset {
                        let sym = if *op == BinOp::Add { "+" } else { "-" };
                        o = format!("({o} {sym} {})", self.first_lane_c(term)?);
                    }
                    let i = match narrow {
                        Narrow::Expr(a) => self.operand(&a, lanes)?,
                        Narrow::Let(name) => match &self.lookup_var(&name)?.spelled {
                            Spelled::Narrow(n) => n.clone(),
                            _ => return Err(internal(format!("'{name}' is not a widened vector"))),
                        },
                    };
                    let ld = self.helpers.load_narrow_index(vt, narrow_ty);
                    Ok(format!("{ld}({} + {o}, {i})", b.cname))
                }
                _ => {
                    let i = self.operand(index, lanes)?;
                    let ld = self.helpers.load(vt);
                    Ok(format!("{ld}({}, {i})", b.cname))
                }
            },
            Some(p) => {
                let i = self.operand(index, lanes)?;
                let p = self.operand(p, lanes)?;
                let ld = self.helpers.load_pred(vt);
                Ok(format!("{ld}({}, {i}, {p})", b.cname))
            }
        }
    }

    /// `a op b` for operands of type `t` (both already `t.lanes` wide). `b_expr` is the
    /// right operand, to recognise division by a positive constant.
    fn binary(&mut self, op: BinOp, t: Type, a: String, b: String, b_expr: &Expr) -> Result<String> {
        check(t)?;
        let m = mnemonic(t.element());
        let vector = t.is_vector();
        if t.is_bool() {
            // Bool arithmetic as the interpreter does it: the result is `!= 0` of the
            // integer result, which for 0/1 operands is one of these.
            let (s_op, v_op) = match op {
                BinOp::And | BinOp::BitAnd | BinOp::Mul | BinOp::Div | BinOp::Min => ("&&", "&"),
                BinOp::Or | BinOp::BitOr | BinOp::Add | BinOp::Max => ("||", "|"),
                BinOp::BitXor | BinOp::Sub => ("!=", "^"),
                BinOp::Shl | BinOp::Shr => return Ok(a),
                BinOp::Mod => {
                    return Ok(if vector {
                        format!("{}(false)", self.helpers.broadcast(t))
                    } else {
                        "false".to_string()
                    })
                }
            };
            return Ok(format!("({a} {} {b})", if vector { v_op } else { s_op }));
        }
        if t.is_float() {
            return Ok(match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => format!("({a} {} {b})", arith_symbol(op)),
                BinOp::Mod => {
                    if vector {
                        let f = self.helpers.map("h_mod", t, &[t, t], |x| format!("h_mod_{m}({}, {})", x[0], x[1]));
                        format!("{f}({a}, {b})")
                    } else {
                        format!("h_mod_{m}({}, {})", strip_parens(&a), strip_parens(&b))
                    }
                }
                BinOp::Min | BinOp::Max => {
                    if vector {
                        let f = self.helpers.min_max(t, op == BinOp::Min);
                        format!("{f}({a}, {b})")
                    } else {
                        let w = if op == BinOp::Min { "min" } else { "max" };
                        format!("h_{w}_{m}({}, {})", strip_parens(&a), strip_parens(&b))
                    }
                }
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    let sym = bit_symbol(op);
                    if vector {
                        let (v, k) = (self.helpers.ty(t), self.helpers.ty(mask_of(t)));
                        format!("(({v})(({k}){a} {sym} ({k}){b}))")
                    } else {
                        format!("h_from_bits_{m}(h_bits_{m}({a}) {sym} h_bits_{m}({b}))")
                    }
                }
                BinOp::Shl | BinOp::Shr => a,
                BinOp::And | BinOp::Or => return Err(internal(format!("{op:?} of floats reached the C back end"))),
            });
        }
        // Integers.
        let c = scalar_c(t);
        Ok(match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let sym = arith_symbol(op);
                let name = match op {
                    BinOp::Add => "add",
                    BinOp::Sub => "sub",
                    _ => "mul",
                };
                if t.is_uint() && (vector || t.bits >= 32) {
                    // Unsigned arithmetic wraps in C (u8/u16 vectors are not promoted).
                    format!("({a} {sym} {b})")
                } else if vector {
                    let f = self.helpers.wrapping(t, name, sym);
                    format!("{f}({a}, {b})")
                } else {
                    format!("h_{name}_{m}({}, {})", strip_parens(&a), strip_parens(&b))
                }
            }
            BinOp::Div | BinOp::Mod => {
                let is_div = op == BinOp::Div;
                let w = if is_div { "div" } else { "mod" };
                if !vector {
                    format!("h_{w}_{m}({}, {})", strip_parens(&a), strip_parens(&b))
                } else if positive_constant(b_expr) {
                    if t.is_uint() {
                        format!("({a} {} {b})", if is_div { "/" } else { "%" })
                    } else {
                        let f = self.helpers.div_mod_positive(t, is_div);
                        format!("{f}({a}, {b})")
                    }
                } else {
                    let f =
                        self.helpers.map(&format!("h_{w}"), t, &[t, t], |x| format!("h_{w}_{m}({}, {})", x[0], x[1]));
                    format!("{f}({a}, {b})")
                }
            }
            BinOp::Min | BinOp::Max => {
                if vector {
                    let f = self.helpers.min_max(t, op == BinOp::Min);
                    format!("{f}({a}, {b})")
                } else {
                    let w = if op == BinOp::Min { "min" } else { "max" };
                    format!("h_{w}_{m}({}, {})", strip_parens(&a), strip_parens(&b))
                }
            }
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => format!("({a} {} {b})", bit_symbol(op)),
            BinOp::Shl | BinOp::Shr => {
                let left = op == BinOp::Shl;
                if vector {
                    let f = self.helpers.shift(t, left);
                    format!("{f}({a}, {b})")
                } else {
                    format!("h_{}_{m}({}, {})", if left { "shl" } else { "shr" }, strip_parens(&a), strip_parens(&b))
                }
            }
            BinOp::And | BinOp::Or => {
                if vector {
                    return Err(internal(format!("{op:?} of integer vectors reached the C back end")));
                }
                let sym = if op == BinOp::And { "&&" } else { "||" };
                format!("(({c})({a} != 0 {sym} {b} != 0))")
            }
        })
    }

    /// Converts the C value `x` of type `from` to type `to` (same lanes), as
    /// `semantics::cast` does.
    fn cast(&mut self, from: Type, to: Type, x: String) -> Result<String> {
        check(from)?;
        check(to)?;
        if from == to {
            return Ok(x);
        }
        if from.lanes != to.lanes {
            return Err(internal(format!("cast from {from} to {to} changes the lane count")));
        }
        let tm = mnemonic(to.element());
        if from.is_scalar() {
            let c = scalar_c(to);
            return Ok(match (to.code, from.code) {
                (TypeCode::Bool, _) => format!("({x} != 0)"),
                (TypeCode::Int | TypeCode::UInt, TypeCode::Float) => format!("h_f2i_{tm}({})", strip_parens(&x)),
                _ => format!("(({c}){x})"),
            });
        }
        Ok(match (to.code, from.code) {
            (TypeCode::Bool, _) => {
                let m2b = self.helpers.mask_to_bool(mask_of(from));
                format!("{m2b}({x} != 0)")
            }
            (TypeCode::Int | TypeCode::UInt, TypeCode::Float) => match self.helpers.float_to_int(from, to) {
                Some(f) => format!("{f}({x})"),
                None => {
                    let f = self.helpers.map("h_f2i", to, &[from], |a| format!("h_f2i_{tm}({})", a[0]));
                    format!("{f}({x})")
                }
            },
            _ => {
                let f = self.helpers.convert(from, to);
                format!("{f}({x})")
            }
        })
    }

    /// A lane-wise call of the scalar C function (or helper) `f` on vectors, or a plain
    /// call on scalars.
    fn call_lanewise(&mut self, f: &str, out: Type, args: &[(String, Type)]) -> String {
        if out.is_scalar() {
            let a: Vec<&str> = args.iter().map(|(s, _)| strip_parens(s)).collect();
            return format!("{f}({})", a.join(", "));
        }
        let tys: Vec<Type> = args.iter().map(|(_, t)| *t).collect();
        let helper = self.helpers.map(&format!("h_map_{f}"), out, &tys, |x| format!("{f}({})", x.join(", ")));
        let a: Vec<&str> = args.iter().map(|(s, _)| s.as_str()).collect();
        format!("{helper}({})", a.join(", "))
    }

    fn intrinsic(&mut self, which: Intrinsic, result: Type, args: &[Expr]) -> Result<String> {
        check(result)?;
        let lanes = result.lanes;
        let mut vals = Vec::new();
        for a in args {
            vals.push((self.operand(a, lanes)?, a.ty().element().with_lanes(lanes)));
        }
        let Some((x, t)) = vals.first().cloned() else {
            return Err(internal(format!("intrinsic {which:?} without arguments")));
        };
        check(t)?;
        let m = mnemonic(t.element());
        match which {
            Intrinsic::Abs => match t.code {
                TypeCode::Float => {
                    let f = if t.bits == 32 { "fabsf" } else { "fabs" };
                    let v = self.call_lanewise(f, t, &[(x, t)]);
                    self.cast(t, result, v)
                }
                TypeCode::Int => {
                    let u = unsigned_of(t);
                    let v = self.call_lanewise(&format!("h_abs_{m}"), u, &[(x, t)]);
                    self.cast(u, result, v)
                }
                _ => self.cast(t, result, x),
            },
            Intrinsic::BitNot => {
                let v = match t.code {
                    TypeCode::Bool => {
                        if t.is_vector() {
                            format!("({x} ^ 1)")
                        } else {
                            format!("!{x}")
                        }
                    }
                    TypeCode::Float => {
                        if t.is_vector() {
                            let (v, k) = (self.helpers.ty(t), self.helpers.ty(mask_of(t)));
                            format!("(({v})~({k}){x})")
                        } else {
                            format!("h_from_bits_{m}(~h_bits_{m}({x}))")
                        }
                    }
                    _ => {
                        if t.is_vector() {
                            format!("(~{x})")
                        } else {
                            format!("(({})~{x})", scalar_c(t))
                        }
                    }
                };
                self.cast(t, result, v)
            }
            Intrinsic::Reinterpret => {
                let rm = mnemonic(result.element());
                if t.is_vector() {
                    let f = self
                        .helpers
                        .map("h_reinterpret", result, &[t], |a| format!("h_from_bits_{rm}(h_bits_{m}({}))", a[0]));
                    Ok(format!("{f}({x})"))
                } else {
                    Ok(format!("h_from_bits_{rm}(h_bits_{m}({}))", strip_parens(&x)))
                }
            }
            Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round | Intrinsic::Trunc if !t.is_float() => {
                // Already an integer: rounding is the identity.
                self.cast(t, result, x)
            }
            _ => {
                // Float math in the result's precision (or the argument's if the result is
                // not a float), as semantics::intrinsic does.
                let ft = if result.is_float() {
                    result.element()
                } else if t.is_float() {
                    t.element()
                } else {
                    Type::f64()
                }
                .with_lanes(lanes);
                let mut fargs = Vec::new();
                for (v, vt) in vals.iter().take(2) {
                    fargs.push((self.cast(*vt, ft, v.clone())?, ft));
                }
                let name = math_function(which, ft.bits == 32);
                let v = self.call_lanewise(name, ft, &fargs);
                self.cast(ft, result, v)
            }
        }
    }
}

/// The C library function of a float intrinsic.
fn math_function(which: Intrinsic, f32: bool) -> &'static str {
    let (single, double) = match which {
        Intrinsic::Sqrt => ("sqrtf", "sqrt"),
        Intrinsic::Exp => ("expf", "exp"),
        Intrinsic::Log => ("logf", "log"),
        Intrinsic::Pow => ("powf", "pow"),
        Intrinsic::Floor => ("floorf", "floor"),
        Intrinsic::Ceil => ("ceilf", "ceil"),
        // nearbyint rounds half to even in the default rounding mode.
        Intrinsic::Round => ("nearbyintf", "nearbyint"),
        Intrinsic::Trunc => ("truncf", "trunc"),
        Intrinsic::Sin => ("sinf", "sin"),
        Intrinsic::Cos => ("cosf", "cos"),
        Intrinsic::Tan => ("tanf", "tan"),
        Intrinsic::Atan2 => ("atan2f", "atan2"),
        Intrinsic::Abs => ("fabsf", "fabs"),
        Intrinsic::Reinterpret | Intrinsic::BitNot => ("", ""),
    };
    if f32 {
        single
    } else {
        double
    }
}

/// True for a constant, or a broadcast of one, that is positive in every lane.
fn positive_constant(e: &Expr) -> bool {
    let v = match e.kind() {
        ExprKind::Broadcast { value, .. } => value.as_int(),
        _ => e.as_int(),
    };
    match v {
        Some(v) if e.ty().is_uint() && e.ty().bits >= 64 => v != 0,
        Some(v) => v > 0,
        None => false,
    }
}

/// The statement appending a scalar value to the error message `h_m`, printed as the
/// interpreter prints it (integers in decimal).
fn msg_value(t: Type, v: &str) -> String {
    match t.code {
        TypeCode::UInt if t.bits >= 64 => format!("h_msg_u64(&h_m, {});", strip_parens(v)),
        TypeCode::Float => format!("h_msg_f64(&h_m, {}, {});", strip_parens(v), if t.bits == 32 { 9 } else { 17 }),
        _ => format!("h_msg_i64(&h_m, (int64_t){v});"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_that_are_positive() {
        assert!(positive_constant(&Expr::broadcast(Expr::int_imm(Type::u16(), 3), 8)));
        assert!(positive_constant(&Expr::i32(2)));
        assert!(!positive_constant(&Expr::i32(0)));
        assert!(!positive_constant(&Expr::broadcast(Expr::i32(-2), 4)));
        assert!(positive_constant(&Expr::int_imm(Type::u64(), -1)));
        assert!(!positive_constant(&Expr::var(Type::i32(), "x")));
    }
}
