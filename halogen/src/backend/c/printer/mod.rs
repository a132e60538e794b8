//! The host dialect of C: lowered `Stmt`/`Expr` to C11 with GCC/Clang vector extensions.
//!
//! The statement walk and scalar expressions are the C-like core's
//! ([`crate::backend::c_like`]); this printer is the dialect (`c_like::dialect::Dialect`)
//! it calls for the rest:
//! - `Let` expressions are hoisted into `const` declarations just before the statement
//!   that uses them (expressions are pure and, in valid lowered code, every operand may be
//!   evaluated, as the interpreter does), so no GNU statement expressions are needed and
//!   the common subexpressions CSE found read as named locals; a `Let` also records what
//!   its value is known to hold (see [`crate::analysis::access`]) for the loads and stores
//!   indexed by it;
//! - vectors are GCC/Clang vector-extension values, computed by the prelude's helpers
//!   ([`super::prelude`]), which implement `ir/semantics.rs` exactly (integer operations
//!   whose C form could overflow are done in unsigned types);
//! - each parallel loop body becomes `static int body_N(void *ctx, int32_t index, void
//!   *closure)` with a `struct closure_N` holding what the body uses, run through the
//!   runtime's `par_for` (in a large file, also split into translation units where the
//!   bodies are hidden external functions: see `entry`'s `CFile`);
//! - storage comes from the stack, the runtime's pooled allocator or `malloc`, and a
//!   failure frees it, reports through `rt->error` and returns -1.
//!
//! This file holds the state of the function being printed and the dialect's hooks; loads
//! and stores by access pattern are in `memory`, the CPU runtime's entry point and the
//! file around it in `entry`.

use super::captures::captures;
use super::prelude::Helpers;
use super::streaming::{work, Work};
use super::types::{check, mask_of, mnemonic, storage_c};
use crate::analysis::access::{self, classify_access, widened_narrow, AccessPattern, Bindings, Shape, VarFacts};
use crate::backend::c_like::dialect::{c99_math_function, Dialect};
use crate::backend::c_like::names::c_string;
use crate::backend::c_like::printer as core;
use crate::backend::c_like::syntax::{arith_symbol, bit_symbol, paren, strip_parens};
use crate::backend::c_like::writer::Writer;
use crate::error::{Error, Result};
use crate::ir::{BinOp, Expr, ExprKind, ForKind, Intrinsic, Name, Stmt, TransferOp, Type, TypeCode};
use crate::target::MachineParams;

mod entry;
mod gpu;
mod memory;

pub use entry::{union_field, CFile};

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
    /// Where GPU kernels use it: the C expression of its `struct halogen_buffer *`, and the
    /// `HALOGEN_ACCESS_*` bits of how host code uses it.
    descriptor: Option<(String, u64)>,
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
    bodies: Vec<Body>,
    next_body: usize,
    /// The kernels of a GPU target (see [`gpu`]).
    gpu: Option<gpu::Kernels>,
}

/// A parallel loop's body as printed: its closure's struct and its function (without a
/// storage class: `static` in one file, hidden and external when the file is split).
#[derive(Debug)]
struct Body {
    /// The comment naming the loop and the struct definition.
    closure: String,
    /// `int body_N(void *ctx, int32_t index, void *closure)`.
    signature: String,
    /// The braced function body.
    text: String,
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
    /// Whether the pipeline writes it.
    pub is_output: bool,
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
            gpu: None,
        }
    }

    /// This printer, outlining GPU loops as kernels in `flavor` for the device API `api`
    /// (float operations contracted where `fast_math`; the updates of the buffers `atomic`
    /// add atomically).
    pub fn with_gpu(
        mut self,
        flavor: crate::backend::gpu::device_c::Flavor,
        api: crate::runtime::gpu::Api,
        fast_math: bool,
        atomic: &[Name],
    ) -> Printer {
        self.gpu = Some(gpu::Kernels::new(flavor, api, fast_math, atomic));
        self
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
}

/// Host C: GCC/Clang vector extensions through the prelude's helpers, the CPU runtime's
/// `par_for` and allocator, and `rt->error` for failures.
impl Dialect for Printer {
    fn writer(&mut self) -> &mut Writer {
        &mut self.f.w
    }

    fn var(&self, name: &Name) -> Result<String> {
        Ok(self.lookup_var(name)?.cname.clone())
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
                let s = core::expr(self, scalar)?;
                let scalar_name = self.declare(&format!("{name}.scalar").into(), scalar.ty(), s);
                self.f.vars.pop();
                let bc = self.helpers.broadcast(value.ty());
                let cname = self.declare(name, value.ty(), format!("{bc}({scalar_name})"));
                self.line(format!("(void){cname};"));
                Spelled::Scalar(scalar_name)
            }
            (Shape::Widened(_), _) => {
                let a = widened_narrow(value).ok_or_else(|| internal(format!("{value} is not a widened vector")))?;
                let n = core::expr(self, a)?;
                let narrow_name = self.declare(&format!("{name}.narrow").into(), a.ty(), n);
                self.f.vars.pop();
                let wide = core::cast(self, a.ty(), value.ty(), narrow_name.clone())?;
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
                let v = core::expr(self, value)?;
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

    fn end_let(&mut self) {
        self.f.vars.pop();
    }

    fn enter_serial_loop(&mut self, name: &Name, cname: String, ty: Type, extent: &Expr, body: &Stmt) {
        self.f.vars.push(Var::opaque(name, cname, ty));
        self.f.loops.push(Loop { name: name.clone(), extent: extent.as_int(), work: work(body) });
    }

    fn exit_serial_loop(&mut self) {
        self.f.loops.pop();
        self.f.vars.pop();
    }

    /// A parallel loop: its body becomes a function the runtime's `par_for` calls once per
    /// iteration, with a closure holding the variables and buffer pointers it uses.
    fn gpu_loop(&mut self, name: &Name, kind: ForKind, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
        self.gpu_launch(name, kind, min, extent, body)
    }

    fn parallel_for(&mut self, name: &Name, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
        if min.ty() != Type::i32() || extent.ty() != Type::i32() {
            return Err(internal(format!("parallel loop '{name}' has bounds of type {}", min.ty())));
        }
        let (mn, ex) = (core::expr(self, min)?, core::expr(self, extent)?);
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
        let r = core::stmt(self, body);
        self.finish_function();
        let text = std::mem::replace(&mut self.f, outer).w.out;
        r?;
        self.bodies.push(Body {
            closure: format!(
                "/* The body of parallel loop {name}. */\nstruct closure_{id} {{\n{}\n}};\n",
                fields.join("\n")
            ),
            signature: format!("int body_{id}(void *ctx, int32_t index, void *closure)"),
            text: format!("{{\n{text}}}\n"),
        });

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
        self.store_c(buffer, value, index, predicate)
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
                .map(|x| core::expr(self, x).map(|s| strip_parens(&s).to_string()))
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
        let descriptor = self.device_descriptor(name, elem, extents, &cname)?;
        self.f.bufs.push(Buf { name: name.clone(), cname: cname.clone(), elem, owned: true, stream: None, descriptor });
        let r = core::stmt(self, body);
        if let Some((d, _)) = self.f.bufs.pop().and_then(|b| b.descriptor) {
            self.line(format!("rt->gpu_release(ctx, {d});"));
        }
        if on_stack.is_none() && !reuse {
            self.f.heap.pop();
            self.line(self.heap_free(&cname));
        }
        r
    }

    fn free(&mut self, name: &Name) -> Result<()> {
        let b = self.lookup_buf(name)?.clone();
        if let Some((d, _)) = &b.descriptor {
            self.line(format!("rt->gpu_release(ctx, {d});"));
        }
        if self.f.heap.contains(&b.cname) {
            self.line(self.heap_free(&b.cname));
            self.line(format!("{} = NULL;", b.cname));
        }
        Ok(())
    }

    fn transfer(&mut self, s: &Stmt) -> Result<()> {
        use crate::runtime::{distributed::Combiner, ffi::exchange_op};
        self.open("if (!rt->exchange) {");
        self.error_exit("\"the pipeline exchanges borders between ranks, but its runtime has no exchange\"");
        self.close("}");
        let call = match s {
            Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => {
                let b = self.lookup_buf(buffer)?.clone();
                let list = |p: &mut Self, v: &[Expr]| -> Result<String> {
                    Ok(v.iter()
                        .map(|x| core::expr(p, x).map(|s| strip_parens(&s).to_string()))
                        .collect::<Result<Vec<_>>>()?
                        .join(", "))
                };
                let index = core::expr(self, &mins[0])?;
                let peer = core::expr(self, peer)?;
                let (exts, strs) = (list(self, extents)?, list(self, strides)?);
                let op = match op {
                    TransferOp::Send => exchange_op::SEND,
                    TransferOp::Receive => exchange_op::RECEIVE,
                    TransferOp::Combine(op) => Combiner { op: *op, signed: ty.is_int() }.code(),
                };
                format!(
                    "rt->exchange(ctx, {op}, {}, (void *)({} + {index}), {}, {}, (const int64_t[]){{{exts}}}, (const int64_t[]){{{strs}}})",
                    strip_parens(&peer),
                    b.cname,
                    b.elem.bytes(),
                    extents.len()
                )
            }
            _ => format!("rt->exchange(ctx, {}, 0, NULL, 0, 0, NULL, NULL)", exchange_op::FINISH),
        };
        // The runtime has reported what failed.
        self.open(format!("if ({call}) {{"));
        self.fail();
        self.close("}");
        Ok(())
    }

    fn error_exit(&mut self, message: &str) {
        self.line(format!("rt->error(ctx, {message});"));
        self.fail();
    }

    fn value_type(&mut self, t: Type) -> String {
        self.helpers.ty(t)
    }

    fn broadcast(&mut self, t: Type, x: String) -> String {
        let bc = self.helpers.broadcast(t);
        format!("{bc}({})", strip_parens(&x))
    }

    fn repeat(&mut self, t: Type, of: Type, x: String) -> String {
        let m = of.lanes;
        let name = self.helpers.map("h_repeat", t, &[of], |_| format!("a0[i % {m}]"));
        format!("{name}({x})")
    }

    fn ramp(&mut self, t: Type, base: String, stride: String) -> String {
        let ramp = self.helpers.ramp(t);
        format!("{ramp}({}, {})", strip_parens(&base), strip_parens(&stride))
    }

    fn all_true(&mut self, lanes: u16, x: String) -> String {
        format!("{}({x})", self.helpers.all_true(lanes))
    }

    fn vector_select(&mut self, t: Type, cond: &Expr, x: String, y: String) -> Result<String> {
        // A condition the same in every lane (a broadcast, as a band or channel test in a
        // vectorized loop) picks one side: C's `?:` evaluates only that one, and the
        // compiler can hoist the test out of the loop, where a blend computes both.
        if let Some(u) = access::uniform(cond, &self.f) {
            let cc = self.uniform_c(&u)?;
            return Ok(format!("({} ? {x} : {y})", paren(&cc)));
        }
        let cc = core::operand(self, cond, t.lanes)?;
        let sel = self.helpers.select(t);
        Ok(format!("{sel}({cc}, {x}, {y})"))
    }

    fn vector_binary(&mut self, op: BinOp, t: Type, a: String, b: String, b_expr: &Expr) -> Result<String> {
        let m = mnemonic(t.element());
        if t.is_bool() {
            // Bool lanes hold 0 or 1: the interpreter's `!= 0` of the integer result is one
            // of these.
            let sym = match op {
                BinOp::And | BinOp::BitAnd | BinOp::Mul | BinOp::Div | BinOp::Min => "&",
                BinOp::Or | BinOp::BitOr | BinOp::Add | BinOp::Max => "|",
                BinOp::BitXor | BinOp::Sub => "^",
                BinOp::Shl | BinOp::Shr => return Ok(a),
                BinOp::Mod => return Ok(format!("{}(false)", self.helpers.broadcast(t))),
            };
            return Ok(format!("({a} {sym} {b})"));
        }
        if t.is_float() {
            return Ok(match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => format!("({a} {} {b})", arith_symbol(op)),
                BinOp::Mod => {
                    let f = self.helpers.map("h_mod", t, &[t, t], |x| format!("h_mod_{m}({}, {})", x[0], x[1]));
                    format!("{f}({a}, {b})")
                }
                BinOp::Min | BinOp::Max => {
                    let f = self.helpers.min_max(t, op == BinOp::Min);
                    format!("{f}({a}, {b})")
                }
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                    let (v, k) = (self.helpers.ty(t), self.helpers.ty(mask_of(t)));
                    format!("(({v})(({k}){a} {} ({k}){b}))", bit_symbol(op))
                }
                BinOp::Shl | BinOp::Shr => a,
                BinOp::And | BinOp::Or => return Err(internal(format!("{op:?} of floats reached the C back end"))),
            });
        }
        // Integers.
        Ok(match op {
            // Unsigned vectors wrap in C (u8/u16 vectors are not promoted).
            BinOp::Add | BinOp::Sub | BinOp::Mul if t.is_uint() => format!("({a} {} {b})", arith_symbol(op)),
            BinOp::Add | BinOp::Sub | BinOp::Mul => {
                let name = match op {
                    BinOp::Add => "add",
                    BinOp::Sub => "sub",
                    _ => "mul",
                };
                let f = self.helpers.wrapping(t, name, arith_symbol(op));
                format!("{f}({a}, {b})")
            }
            BinOp::Div | BinOp::Mod => {
                let is_div = op == BinOp::Div;
                if positive_constant(b_expr) {
                    if t.is_uint() {
                        format!("({a} {} {b})", if is_div { "/" } else { "%" })
                    } else if let Some(k) = power_of_two_exponent(b_expr).filter(|k| *k < u32::from(t.bits)) {
                        // Floor division by 2^k is an arithmetic shift, its remainder the low
                        // k bits: one instruction where `/` and its correction take several.
                        if is_div {
                            format!("({a} >> {k})")
                        } else {
                            format!("({a} & {})", (1i64 << k) - 1)
                        }
                    } else {
                        let f = self.helpers.div_mod_positive(t, is_div);
                        format!("{f}({a}, {b})")
                    }
                } else {
                    let w = if is_div { "div" } else { "mod" };
                    let f =
                        self.helpers.map(&format!("h_{w}"), t, &[t, t], |x| format!("h_{w}_{m}({}, {})", x[0], x[1]));
                    format!("{f}({a}, {b})")
                }
            }
            BinOp::Min | BinOp::Max => {
                let f = self.helpers.min_max(t, op == BinOp::Min);
                format!("{f}({a}, {b})")
            }
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => format!("({a} {} {b})", bit_symbol(op)),
            BinOp::Shl | BinOp::Shr => {
                let f = self.helpers.shift(t, op == BinOp::Shl);
                format!("{f}({a}, {b})")
            }
            BinOp::And | BinOp::Or => {
                return Err(internal(format!("{op:?} of integer vectors reached the C back end")));
            }
        })
    }

    fn compare_to_bool(&mut self, operands: Type, compare: String) -> String {
        let m2b = self.helpers.mask_to_bool(mask_of(operands));
        format!("{m2b}{compare}")
    }

    fn bool_vector_not(&mut self, x: String) -> String {
        format!("({x} ^ 1)")
    }

    fn vector_bit_not(&mut self, t: Type, x: String) -> String {
        if t.is_float() {
            let (v, k) = (self.helpers.ty(t), self.helpers.ty(mask_of(t)));
            format!("(({v})~({k}){x})")
        } else {
            format!("(~{x})")
        }
    }

    fn vector_cast(&mut self, from: Type, to: Type, x: String) -> Result<String> {
        let tm = mnemonic(to.element());
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

    fn clamped_float_to_int(&mut self, from: Type, to: Type) -> Option<String> {
        self.helpers.float_to_int_clamped(from, to)
    }

    fn map(&mut self, prefix: &str, out: Type, ins: &[Type], lane: &dyn Fn(&[String]) -> String) -> String {
        self.helpers.map(prefix, out, ins, |a| lane(a))
    }

    fn math_function(&self, which: Intrinsic, f32: bool) -> &'static str {
        // Halogen's own in single precision (see `ir::float_math`); the GPU dialects call
        // the device's.
        match which {
            Intrinsic::Sin if f32 => "h_sinf",
            Intrinsic::Cos if f32 => "h_cosf",
            Intrinsic::Atan if f32 => "h_atanf",
            Intrinsic::Atan2 if f32 => "h_atan2f",
            Intrinsic::Tanh if f32 => "h_tanhf",
            Intrinsic::Pow if f32 => "h_powf",
            _ => c99_math_function(which, f32),
        }
    }

    fn vector_math(&mut self, which: Intrinsic, t: Type) -> Option<String> {
        if t.element() != Type::f32() {
            return None;
        }
        match which {
            Intrinsic::Exp => Some(self.helpers.exp_f32(t)),
            Intrinsic::Log => Some(self.helpers.log_f32(t)),
            Intrinsic::Sin | Intrinsic::Cos => Some(self.helpers.sin_cos_f32(t, which == Intrinsic::Cos)),
            Intrinsic::Atan => Some(self.helpers.atan_f32(t)),
            Intrinsic::Atan2 => Some(self.helpers.atan2_f32(t)),
            Intrinsic::Tanh => Some(self.helpers.tanh_f32(t)),
            Intrinsic::FastExp => Some(self.helpers.fast_exp_f32(t)),
            Intrinsic::FastLog => Some(self.helpers.fast_log_f32(t)),
            Intrinsic::FastPow => Some(self.helpers.fast_pow_f32(t)),
            _ => None,
        }
    }

    fn load(&mut self, t: Type, buffer: &Name, index: &Expr, predicate: Option<&Expr>) -> Result<String> {
        self.load_c(t, buffer, index, predicate)
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

/// `k` where `e` (a scalar or a broadcast) is the constant `2^k` with `k >= 1`.
fn power_of_two_exponent(e: &Expr) -> Option<u32> {
    let v = match e.kind() {
        ExprKind::Broadcast { value, .. } => value.as_int(),
        _ => e.as_int(),
    }?;
    (v > 1 && v & (v - 1) == 0).then(|| v.trailing_zeros())
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
