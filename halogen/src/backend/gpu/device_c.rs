//! The kernel dialects of C: OpenCL C 1.2 and CUDA C, printing a kernel's body with the
//! walk every C dialect shares ([`crate::backend::c_like::printer`]). The two differ only in
//! spellings ([`Flavor`]): qualifiers, block and thread indices, barriers, shared storage,
//! the bits of a float, and math function names.
//!
//! Kernels are scalar code: each GPU thread computes one point of its loops (vectorizing
//! inside a kernel is refused when the kernel is outlined, naming the Func). A block or
//! thread loop binds its variable to `min + index`; a thread loop also guards its own
//! extent, because the block's size is the largest of the thread loops' extents in that
//! dimension. A failed check stores its number in the kernel's error word and returns; the
//! runtime turns the number into the check's message after the run.

use super::kernel::LaunchShape;
use crate::backend::c_like::dialect::{c99_math_function, Dialect};
use crate::backend::c_like::names::c_string;
use crate::backend::c_like::printer as core;
use crate::backend::c_like::scalar_helpers::{fast_math_helpers, float_math_helpers, SCALAR_HELPERS};
use crate::backend::c_like::syntax::strip_parens;
use crate::backend::c_like::types::{scalar_c, storage_c};
use crate::backend::c_like::writer::Writer;
use crate::error::{Error, Result};
use crate::ir::{without_counters, BinOp, Expr, ExprKind, ForKind, Intrinsic, MsgPart, Name, Stmt, Type};

/// Which kernel language a kernel is printed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// OpenCL C 1.2.
    OpenCL,
    /// CUDA C (C++ compiled by NVRTC).
    Cuda,
}

impl Flavor {
    /// The definitions every kernel file starts with: fixed-width integer types and their
    /// limits, how helpers are declared, a float's bits, and the scalar helpers.
    /// Without `fast_math`, float multiplies and adds are not contracted into fused
    /// multiply-adds (both languages contract by default), so kernels compute what the
    /// interpreter computes: OpenCL C by its `FP_CONTRACT` pragma, CUDA C by NVRTC's
    /// `--fmad=false`, which the CUDA runtime reads from the source's `nvrtc-option` lines.
    ///
    /// ```
    /// use halogen::backend::gpu::device_c::Flavor;
    /// assert!(Flavor::OpenCL.prelude(false).contains("#pragma OPENCL FP_CONTRACT OFF"));
    /// assert!(Flavor::Cuda.prelude(false).contains("// nvrtc-option: --fmad=false"));
    /// assert!(Flavor::Cuda.prelude(true).contains("H_ARITH(i32, int32_t, uint32_t)"));
    /// ```
    pub fn prelude(self, fast_math: bool) -> String {
        let mut s = String::new();
        match self {
            Flavor::OpenCL => {
                s.push_str(OPENCL_PRELUDE);
                if !fast_math {
                    s.push_str("#pragma OPENCL FP_CONTRACT OFF\n");
                }
            }
            Flavor::Cuda => {
                if !fast_math {
                    s.push_str("// nvrtc-option: --fmad=false\n");
                }
                s.push_str(CUDA_PRELUDE);
            }
        }
        s.push_str(LIMITS);
        s.push_str(SCALAR_HELPERS);
        s.push_str(&float_math_helpers());
        s.push_str(&fast_math_helpers());
        s.push_str(KERNEL_MESSAGES);
        s
    }

    /// How a kernel function is declared.
    fn kernel_qualifier(self) -> &'static str {
        match self {
            Flavor::OpenCL => "__kernel void",
            Flavor::Cuda => "extern \"C\" __global__ void",
        }
    }

    /// How a pointer to device memory is declared.
    /// A pointer to device memory. Buffer arguments are `restrict`: each is its own
    /// device allocation, so no two arguments of a launch overlap; that lets the compiler
    /// keep a loaded value across stores to other buffers (an unrolled stencil loads each
    /// input once), and a buffer the kernel only reads is `const` as well, so its loads
    /// may take the read-only data path.
    fn global_pointer(self, elem: &str, access: PointerAccess) -> String {
        let (konst, restrict) = match access {
            PointerAccess::ReadOnly => ("const ", true),
            PointerAccess::ReadWrite => ("", true),
            PointerAccess::Shared => ("", false),
        };
        match (self, restrict) {
            (Flavor::OpenCL, true) => format!("__global {konst}{elem} *restrict "),
            (Flavor::OpenCL, false) => format!("__global {elem} *"),
            (Flavor::Cuda, true) => format!("{konst}{elem} *__restrict__ "),
            (Flavor::Cuda, false) => format!("{elem} *"),
        }
    }

    fn block_index(self, dim: usize) -> String {
        match self {
            Flavor::OpenCL => format!("(int32_t)get_group_id({dim})"),
            Flavor::Cuda => format!("(int32_t)blockIdx.{}", ["x", "y", "z"][dim]),
        }
    }

    fn thread_index(self, dim: usize) -> String {
        match self {
            Flavor::OpenCL => format!("(int32_t)get_local_id({dim})"),
            Flavor::Cuda => format!("(int32_t)threadIdx.{}", ["x", "y", "z"][dim]),
        }
    }

    fn barrier(self) -> &'static str {
        match self {
            Flavor::OpenCL => "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
            Flavor::Cuda => "__syncthreads();",
        }
    }

    fn shared(self) -> &'static str {
        match self {
            Flavor::OpenCL => "__local",
            Flavor::Cuda => "__shared__",
        }
    }
}

const OPENCL_PRELUDE: &str = r#"/* OpenCL C 1.2 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef uchar uint8_t;
typedef ushort uint16_t;
typedef uint uint32_t;
typedef ulong uint64_t;
#define H_INLINE static inline
#define floorf floor
H_INLINE uint32_t h_f32_to_u32(float x) { return as_uint(x); }
H_INLINE float h_u32_to_f32(uint32_t u) { return as_float(u); }
H_INLINE uint64_t h_f64_to_u64(double x) { return as_ulong(x); }
H_INLINE double h_u64_to_f64(uint64_t u) { return as_double(u); }
"#;

const CUDA_PRELUDE: &str = r#"/* CUDA C */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define H_INLINE static __device__ __forceinline__
H_INLINE uint32_t h_f32_to_u32(float x) { return __float_as_uint(x); }
H_INLINE float h_u32_to_f32(uint32_t u) { return __uint_as_float(u); }
H_INLINE uint64_t h_f64_to_u64(double x) { return (uint64_t)__double_as_longlong(x); }
H_INLINE double h_u64_to_f64(uint64_t u) { return __longlong_as_double((long long)u); }
"#;

const LIMITS: &str = r#"#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
"#;

/// Kernels report a failed check by number, not by text: a check's message parts compile
/// to nothing.
const KERNEL_MESSAGES: &str = r#"
/* A failed check's number goes to the kernel's error word; its message is the host's. */
struct h_msg { int unused; };
#define h_msg_str(m, s) ((void)0)
#define h_msg_i64(m, v) ((void)0)
#define h_msg_u64(m, v) ((void)0)
#define h_msg_f64(m, v, d) ((void)0)
"#;

/// Prints kernels into one file.
#[derive(Debug)]
pub struct KernelPrinter {
    flavor: Flavor,
    w: Writer,
    vars: Vec<(Name, String)>,
    bufs: Vec<(Name, String, Type)>,
    shape: LaunchShape,
    /// The messages of the file's checks, numbered from 1.
    pub checks: Vec<String>,
    /// Thread loops around the statement being printed.
    thread_depth: usize,
    /// A construct the dialect cannot print, met where the walk expects text.
    unsupported: Option<String>,
    /// Buffers whose updates add atomically (`Stage::atomic`).
    atomic: Vec<Name>,
    /// The values of the `let`s in scope, innermost last: an atomic add compares where it
    /// stores with where it reads through them.
    let_values: Vec<(Name, Expr)>,
}

/// A kernel parameter: a scalar of the host's type, or a buffer of an element type.
#[derive(Clone, Debug)]
pub enum Param {
    /// The variable `name` of type `ty`.
    Scalar(Name, Type),
    /// The buffer `name` with elements of type `elem`, and whether the kernel writes it.
    Buffer(Name, Type, bool),
}

/// How a kernel uses a pointer argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PointerAccess {
    /// A buffer the kernel only reads.
    ReadOnly,
    /// A buffer the kernel writes (and may read).
    ReadWrite,
    /// A word every launch of every kernel may share (the error word).
    Shared,
}

impl KernelPrinter {
    /// A printer of kernels in `flavor`; stores that add to the buffers `atomic` at the
    /// point they read are atomic adds.
    pub fn new(flavor: Flavor, atomic: &[Name]) -> KernelPrinter {
        KernelPrinter {
            flavor,
            w: Writer::new(1),
            vars: Vec::new(),
            bufs: Vec::new(),
            shape: LaunchShape::default(),
            checks: Vec::new(),
            thread_depth: 0,
            unsupported: None,
            atomic: atomic.to_vec(),
            let_values: Vec::new(),
        }
    }

    /// The language it prints.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Prints kernel `name` computing `kernel` (its outermost block loop) with the
    /// parameters `params` (then the error word), and returns its text.
    pub fn kernel(&mut self, name: &str, kernel: &Stmt, shape: LaunchShape, params: &[Param]) -> Result<String> {
        self.w = Writer::new(1);
        self.vars.clear();
        self.bufs.clear();
        self.shape = shape;
        self.unsupported = None;
        self.w.namer.reserve("h_error");
        let mut decls = Vec::new();
        let mut converts = Vec::new();
        for p in params {
            match p {
                Param::Scalar(n, t) => {
                    let c = self.w.namer.fresh(n);
                    if t.is_bool() {
                        // Kernels take no bool arguments: it comes as a byte.
                        let arg = self.w.namer.fresh(&format!("{n}.arg"));
                        decls.push(format!("const uint8_t {arg}"));
                        converts.push(format!("const bool {c} = {arg} != 0;"));
                    } else {
                        decls.push(format!("const {} {c}", scalar_c(*t)));
                    }
                    self.vars.push((n.clone(), c));
                }
                Param::Buffer(n, elem, writes) => {
                    let c = self.w.namer.fresh(n);
                    let access = if *writes { PointerAccess::ReadWrite } else { PointerAccess::ReadOnly };
                    decls.push(format!("{}{c}", self.flavor.global_pointer(storage_c(*elem), access)));
                    self.bufs.push((n.clone(), c, *elem));
                }
            }
        }
        decls.push(format!("{}h_error", self.flavor.global_pointer("int32_t", PointerAccess::Shared)));
        for line in converts {
            self.w.line(line);
        }
        for (n, elem, size) in self.shape.shared.clone() {
            let c = self.w.namer.fresh(&n);
            self.w.line(format!("{} {} {c}[{}];", self.flavor.shared(), storage_c(elem), size.max(1)));
            self.bufs.push((n, c, elem));
        }
        core::stmt(self, kernel)?;
        if let Some(why) = self.unsupported.take() {
            return Err(Error::Schedule(format!("kernel '{name}': {why}")));
        }
        let body = std::mem::take(&mut self.w.out);
        Ok(format!("{} {name}({}) {{\n{body}}}\n", self.flavor.kernel_qualifier(), decls.join(", ")))
    }

    fn refuse<T: Default>(&mut self, what: &str) -> T {
        self.unsupported.get_or_insert_with(|| {
            format!("{what} inside a GPU kernel, which kernels do not compute (vectorize outside the GPU loops)")
        });
        T::default()
    }

    /// The C text of a buffer index: in 32 bits, as the IR computes it (wrapping), where
    /// the host computes indices in 64 (see [`core::index_c`]). A GPU's 64-bit integer
    /// arithmetic costs several instructions; an index that fits in 32 bits comes out the
    /// same, and the runtime refuses buffers of 2^31 elements or more.
    fn index(&mut self, index: &Expr) -> Result<String> {
        if index.ty() != Type::i32() {
            return core::index_c(self, index);
        }
        core::expr(self, index)
    }

    /// The store `c[index] = c[index] + e` of an atomic update, as an atomic add of `e`
    /// (lowering checked the update's form; the pure definition's stores are plain).
    fn atomic_add(
        &mut self,
        buffer: &Name,
        c: &str,
        value: &Expr,
        index: &Expr,
        predicate: Option<&Expr>,
    ) -> Result<()> {
        // Where it stores and where it reads may be written through different `let`s (the
        // value's common subexpressions are named): compare them with every `let` in scope
        // and in the value replaced by its value.
        let value = self.without_lets(value);
        let here = self.without_lets(index);
        let reads_here = |e: &Expr| matches!(e.kind(), ExprKind::Load { buffer: b, index: i, predicate: None } if b == buffer && *i == here);
        let added = match value.kind() {
            ExprKind::Binary(BinOp::Add, a, b) if reads_here(a) => Some(b.clone()),
            ExprKind::Binary(BinOp::Add, a, b) if reads_here(b) => Some(a.clone()),
            _ => None,
        };
        let Some(added) = added else {
            if crate::analysis::substitute::expr_loads_from(&value, buffer) {
                // An update that reads the buffer but does not add to the point it writes:
                // a plain store would race with the other threads.
                return Err(Error::internal(
                    "GPU back end",
                    format!("the atomic update of '{buffer}' stores {value} at {here}, which is not an add to the point it reads"),
                ));
            }
            // The pure definition: it does not read what it writes.
            let i = self.index(index)?;
            let v = core::expr(self, &value)?;
            let line = format!("{c}[{}] = {};", strip_parens(&i), strip_parens(&v));
            return self.guarded(predicate, line);
        };
        let i = self.index(index)?;
        let v = core::expr(self, &added)?;
        let f = match self.flavor {
            Flavor::OpenCL => "atomic_add",
            Flavor::Cuda => "atomicAdd",
        };
        let line = format!("(void){f}(&{c}[{}], {});", strip_parens(&i), strip_parens(&v));
        self.guarded(predicate, line)
    }

    /// `e` with its own `let`s and those in scope replaced by their values.
    fn without_lets(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        while let ExprKind::Let { name, value, body } = e.kind() {
            e = crate::analysis::substitute::substitute(name, value, body);
        }
        for (name, value) in self.let_values.iter().rev() {
            e = crate::analysis::substitute::substitute(name, value, &e);
        }
        e
    }

    /// Prints `line`, under `if (predicate)` where there is one.
    fn guarded(&mut self, predicate: Option<&Expr>, line: String) -> Result<()> {
        match predicate {
            Some(p) => {
                let p = core::expr(self, p)?;
                self.w.open(format!("if ({}) {{", strip_parens(&p)));
                self.w.line(line);
                self.w.close("}");
            }
            None => self.w.line(line),
        }
        Ok(())
    }

    fn lookup_buf(&self, name: &Name) -> Result<(String, Type)> {
        self.bufs
            .iter()
            .rev()
            .find(|(n, _, _)| n == name)
            .map(|(_, c, t)| (c.clone(), *t))
            .ok_or_else(|| Error::internal("GPU back end", format!("buffer '{name}' is not a kernel argument")))
    }
}

impl Dialect for KernelPrinter {
    fn writer(&mut self) -> &mut Writer {
        &mut self.w
    }

    fn var(&self, name: &Name) -> Result<String> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.clone())
            .ok_or_else(|| Error::internal("GPU back end", format!("variable '{name}' is not in scope in the kernel")))
    }

    fn bind_let(&mut self, name: &Name, value: &Expr) -> Result<()> {
        self.let_values.push((name.clone(), value.clone()));
        let v = core::expr(self, value)?;
        let t = value.ty();
        if t.is_vector() {
            self.refuse::<()>("a vector value");
            return Ok(());
        }
        let c = self.w.namer.fresh(name);
        self.w.line(format!("const {} {c} = {};", scalar_c(t), strip_parens(&v)));
        self.vars.push((name.clone(), c));
        Ok(())
    }

    fn end_let(&mut self) {
        self.vars.pop();
        self.let_values.pop();
    }

    fn enter_serial_loop(&mut self, name: &Name, cname: String, _: Type, _: &Expr, _: &Stmt) {
        self.vars.push((name.clone(), cname));
    }

    fn exit_serial_loop(&mut self) {
        self.vars.pop();
    }

    fn gpu_loop(&mut self, name: &Name, kind: ForKind, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
        let Some(&dim) = self.shape.dims.get(name) else {
            return Err(Error::internal("GPU back end", format!("GPU loop '{name}' has no dimension")));
        };
        let m = core::expr(self, min)?;
        self.w.open("{");
        let c = self.w.namer.fresh(name);
        if kind == ForKind::GpuBlock {
            let index = self.flavor.block_index(dim);
            self.w.line(format!("const int32_t {c} = {} + {index};", strip_parens(&m)));
            self.vars.push((name.clone(), c));
            let r = core::stmt(self, body);
            self.vars.pop();
            r?;
        } else {
            let index = self.flavor.thread_index(dim);
            let e = core::expr(self, extent)?;
            self.w.open(format!("if ({index} < {}) {{", strip_parens(&e)));
            self.w.line(format!("const int32_t {c} = {} + {index};", strip_parens(&m)));
            self.vars.push((name.clone(), c));
            self.thread_depth += 1;
            let r = core::stmt(self, body);
            self.thread_depth -= 1;
            self.vars.pop();
            r?;
            self.w.close("}");
            if self.thread_depth == 0 && !self.shape.shared.is_empty() {
                // What this nest stored in shared storage is read by other threads next.
                self.w.line(self.flavor.barrier());
            }
        }
        self.w.close("}");
        Ok(())
    }

    fn parallel_for(&mut self, name: &Name, _: &Expr, _: &Expr, _: &Stmt) -> Result<()> {
        Err(Error::Schedule(format!("loop '{name}' is parallel inside a GPU kernel")))
    }

    fn store(&mut self, buffer: &Name, value: &Expr, index: &Expr, predicate: Option<&Expr>) -> Result<()> {
        if value.ty().is_vector() {
            self.refuse::<()>("a vector store");
            return Ok(());
        }
        let (c, elem) = self.lookup_buf(buffer)?;
        if self.atomic.contains(buffer) {
            return self.atomic_add(buffer, &c, value, index, predicate);
        }
        let i = self.index(index)?;
        let v = core::expr(self, value)?;
        let v = if elem.is_bool() { format!("(uint8_t){v}") } else { strip_parens(&v).to_string() };
        let line = format!("{c}[{}] = {v};", strip_parens(&i));
        self.guarded(predicate, line)
    }

    /// Storage in a kernel has the constant size [`super::kernel::launch_shape`] bounded its
    /// extents by (the extents themselves may change from block to block).
    fn allocate(&mut self, name: &Name, ty: Type, _extents: &[Expr], body: &Stmt) -> Result<()> {
        let pushed = if self.shape.shared.iter().any(|(n, _, _)| n == name) {
            // Declared at the top of the kernel (block-shared storage must be).
            false
        } else {
            let Some(&(_, size)) = self.shape.private.iter().find(|(n, _)| n == name) else {
                return Err(Error::internal("GPU back end", format!("storage '{name}' has no size in the kernel")));
            };
            let c = self.w.namer.fresh(name);
            self.w.line(format!("{} {c}[{}];", storage_c(ty.element()), size.max(1)));
            self.bufs.push((name.clone(), c, ty.element()));
            true
        };
        let r = core::stmt(self, body);
        if pushed {
            self.bufs.pop();
        }
        r
    }

    fn free(&mut self, _: &Name) -> Result<()> {
        Ok(())
    }

    fn check_failed(&mut self, message: &[MsgPart]) -> Result<()> {
        let text: String = message
            .iter()
            .map(|p| match p {
                MsgPart::Text(t) => without_counters(t).into_owned(),
                MsgPart::Value(_) => "…".to_string(),
            })
            .collect();
        self.checks.push(format!("inside a GPU kernel: {text}"));
        let id = self.checks.len();
        self.w.line(format!("*h_error = {id};"));
        self.w.line("return;");
        Ok(())
    }

    fn error_exit(&mut self, _: &str) {
        self.w.line("*h_error = -1;");
        self.w.line("return;");
    }

    fn value_type(&mut self, t: Type) -> String {
        if t.is_vector() {
            return self.refuse("a vector value");
        }
        scalar_c(t).to_string()
    }

    fn broadcast(&mut self, _: Type, _: String) -> String {
        self.refuse("a vector value")
    }

    fn repeat(&mut self, _: Type, _: Type, _: String) -> String {
        self.refuse("a vector value")
    }

    fn ramp(&mut self, _: Type, _: String, _: String) -> String {
        self.refuse("a vector value")
    }

    fn all_true(&mut self, _: u16, _: String) -> String {
        self.refuse("a vector condition")
    }

    fn vector_select(&mut self, _: Type, _: &Expr, _: String, _: String) -> Result<String> {
        Ok(self.refuse("a vector select"))
    }

    fn vector_binary(&mut self, _: BinOp, _: Type, _: String, _: String, _: &Expr) -> Result<String> {
        Ok(self.refuse("a vector operation"))
    }

    fn compare_to_bool(&mut self, _: Type, _: String) -> String {
        self.refuse("a vector comparison")
    }

    fn bool_vector_not(&mut self, _: String) -> String {
        self.refuse("a vector operation")
    }

    fn vector_bit_not(&mut self, _: Type, _: String) -> String {
        self.refuse("a vector operation")
    }

    fn vector_cast(&mut self, _: Type, _: Type, _: String) -> Result<String> {
        Ok(self.refuse("a vector cast"))
    }

    fn map(&mut self, _: &str, _: Type, _: &[Type], _: &dyn Fn(&[String]) -> String) -> String {
        self.refuse("a vector operation")
    }

    fn load(&mut self, t: Type, buffer: &Name, index: &Expr, predicate: Option<&Expr>) -> Result<String> {
        if t.is_vector() {
            return Ok(self.refuse("a vector load"));
        }
        let (c, elem) = self.lookup_buf(buffer)?;
        let i = self.index(index)?;
        let ld = format!("{c}[{}]", strip_parens(&i));
        let ld = if elem.is_bool() { format!("({ld} != 0)") } else { ld };
        Ok(match predicate {
            Some(p) => {
                let p = core::expr(self, p)?;
                let zero = if t.is_bool() { "false".to_string() } else { format!("({})0", scalar_c(t)) };
                format!("({} ? {ld} : {zero})", strip_parens(&p))
            }
            None => ld,
        })
    }

    fn math_function(&self, which: Intrinsic, f32: bool) -> &'static str {
        if self.flavor == Flavor::Cuda {
            return c99_math_function(which, f32);
        }
        // OpenCL C overloads its math functions for float and double.
        match which {
            Intrinsic::Sqrt => "sqrt",
            // Halogen's own in single precision, as on every target (see `ir::float_math`).
            Intrinsic::Exp if f32 => "h_expf",
            Intrinsic::Log if f32 => "h_logf",
            Intrinsic::Exp => "exp",
            Intrinsic::Log => "log",
            Intrinsic::Pow => "pow",
            Intrinsic::Floor => "floor",
            Intrinsic::Ceil => "ceil",
            // rint rounds half to even in the default rounding mode.
            Intrinsic::Round => "rint",
            Intrinsic::Trunc => "trunc",
            Intrinsic::Sin => "sin",
            Intrinsic::Cos => "cos",
            Intrinsic::Tan => "tan",
            Intrinsic::Atan2 => "atan2",
            Intrinsic::Atan => "atan",
            Intrinsic::Tanh => "tanh",
            Intrinsic::FastExp if f32 => "h_fast_expf",
            Intrinsic::FastLog if f32 => "h_fast_logf",
            Intrinsic::FastPow if f32 => "h_fast_powf",
            Intrinsic::FastExp => "exp",
            Intrinsic::FastLog => "log",
            Intrinsic::FastPow => "pow",
            Intrinsic::Abs => "fabs",
            Intrinsic::Reinterpret | Intrinsic::BitNot => "",
        }
    }
}

/// The C array of a file's check messages.
pub fn check_messages(checks: &[String]) -> String {
    let items: Vec<String> = checks.iter().map(|m| format!("    {},", c_string(m))).collect();
    items.join("\n")
}
