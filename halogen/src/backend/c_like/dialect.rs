//! What a C dialect prints its own way: the [`Dialect`] trait the shared walk
//! ([`super::printer`]) calls for everything that is not plain scalar C.
//!
//! Host C, OpenCL C and CUDA C print the same statements and scalar expressions; they
//! differ in how vectors are typed and computed, how memory is loaded and stored, how a
//! parallel loop runs, where storage comes from and how an error leaves the function. A
//! dialect also keeps the scope: which C identifier each IR variable and buffer has, and
//! what it knows about them (for instance the access facts of
//! [`crate::analysis::access`]).

use super::writer::Writer;
use crate::error::Result;
use crate::ir::{BinOp, Expr, ForKind, Intrinsic, MsgPart, Name, Stmt, Type};

/// The printing a C dialect does itself. Strings in and out are C expressions that are an
/// identifier, a literal, a call or parenthesized, so they can be used as operands as
/// they are; vector operands already have the lanes of the result.
pub(crate) trait Dialect {
    /// The function being printed.
    fn writer(&mut self) -> &mut Writer;

    // Scope.

    /// The C identifier of the variable `name` in scope.
    fn var(&self, name: &Name) -> Result<String>;
    /// Declares `name` bound to `value` (a `Let`) for the statement or expression that
    /// follows, until [`Dialect::end_let`].
    fn bind_let(&mut self, name: &Name, value: &Expr) -> Result<()>;
    /// Ends the innermost [`Dialect::bind_let`].
    fn end_let(&mut self);
    /// Puts the loop variable `name` (C identifier `cname`, type `ty`) of a serial loop of
    /// `extent` iterations over `body` in scope, until [`Dialect::exit_serial_loop`].
    fn enter_serial_loop(&mut self, name: &Name, cname: String, ty: Type, extent: &Expr, body: &Stmt);
    /// Ends the innermost [`Dialect::enter_serial_loop`].
    fn exit_serial_loop(&mut self);

    // Statements.

    /// A loop whose iterations may run at once.
    fn parallel_for(&mut self, name: &Name, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()>;
    /// A GPU block or thread loop (`kind`): the host outlines a kernel and launches it, a
    /// kernel dialect binds the loop variable to its block or thread index. A dialect that
    /// does neither refuses it.
    fn gpu_loop(&mut self, name: &Name, kind: ForKind, _min: &Expr, _extent: &Expr, _body: &Stmt) -> Result<()> {
        Err(crate::error::Error::Target(format!(
            "C back end: loop '{name}' is a {kind:?} loop, which this C dialect does not run"
        )))
    }
    /// A store of `value` (scalar or vector) at `index`, in the lanes where `predicate` holds.
    fn store(&mut self, buffer: &Name, value: &Expr, index: &Expr, predicate: Option<&Expr>) -> Result<()>;
    /// Storage `name` of `ty` elements with `extents`, in scope over `body`.
    fn allocate(&mut self, name: &Name, ty: Type, extents: &[Expr], body: &Stmt) -> Result<()>;
    /// Ends the use of storage `name` where the IR frees it early.
    fn free(&mut self, name: &Name) -> Result<()>;
    /// A [`Stmt::Transfer`] or [`Stmt::TransferWait`] of a border exchange: the host calls
    /// the runtime's `exchange`; a dialect without one (a GPU kernel) refuses it.
    fn transfer(&mut self, s: &Stmt) -> Result<()> {
        let what = match s {
            Stmt::Transfer { op, buffer, .. } => format!("a {} of '{buffer}'", op.word()),
            _ => "the end of a border exchange".into(),
        };
        Err(crate::error::Error::Target(format!(
            "C back end: {what} between ranks, which this C dialect does not run (a distributed Func's border \
             exchange runs on the host)"
        )))
    }
    /// Reports the C string `message` (a `char *` expression) and leaves the function with
    /// a failure, releasing what it holds.
    fn error_exit(&mut self, message: &str);

    /// Prints what a failed check does (inside the `if` that tests it): by default builds
    /// the interpreter's message and leaves through [`Dialect::error_exit`].
    fn check_failed(&mut self, message: &[MsgPart]) -> Result<()>
    where
        Self: Sized,
    {
        super::printer::message_and_exit(self, message)
    }

    // Vector values.

    /// The C type of a value of type `t` (scalar or vector).
    fn value_type(&mut self, t: Type) -> String;
    /// A vector of type `t` with the scalar `x` in every lane.
    fn broadcast(&mut self, t: Type, x: String) -> String;
    /// A vector of type `t` repeating the vector `x` of type `of`.
    fn repeat(&mut self, t: Type, of: Type, x: String) -> String;
    /// The vector of type `t` whose lane `i` is `base + i * stride`.
    fn ramp(&mut self, t: Type, base: String, stride: String) -> String;
    /// Whether every lane of the bool vector `x` of `lanes` lanes is true, as a scalar.
    fn all_true(&mut self, lanes: u16, x: String) -> String;
    /// Picks lanes of `x` or `y` (vectors of type `t`) by the vector condition `cond`.
    fn vector_select(&mut self, t: Type, cond: &Expr, x: String, y: String) -> Result<String>;
    /// `a op b` on vectors of type `t`, as `ir::semantics` computes it; `b_expr` is the
    /// right operand's IR (a constant divisor allows cheaper division).
    fn vector_binary(&mut self, op: BinOp, t: Type, a: String, b: String, b_expr: &Expr) -> Result<String>;
    /// The bool vector of a lane-wise C comparison `compare` of vectors of type `operands`.
    fn compare_to_bool(&mut self, operands: Type, compare: String) -> String;
    /// Logical not of a bool vector.
    fn bool_vector_not(&mut self, x: String) -> String;
    /// Bitwise not of an integer or float vector of type `t`.
    fn vector_bit_not(&mut self, t: Type, x: String) -> String;
    /// Converts vector `x` of type `from` to `to` (same lanes), as `ir::semantics::cast`.
    fn vector_cast(&mut self, from: Type, to: Type, x: String) -> Result<String>;
    /// A function `f(x, lo, hi)` converting float vectors of type `from` to the integer
    /// vectors `to` clamped to `[lo, hi]` (two integers a float holds exactly), NaN lanes
    /// to 0 first, without the saturation [`Dialect::vector_cast`] pays; `None` where the
    /// dialect has none (the clamp of the saturating conversion is printed instead).
    fn clamped_float_to_int(&mut self, from: Type, to: Type) -> Option<String> {
        let _ = (from, to);
        None
    }
    /// The name of a function that computes a vector of type `out` from arguments of types
    /// `ins` lane by lane, lane `i` being the scalar C expression `lane` gives for the
    /// arguments' lanes `i` (a scalar argument is the same in every lane). `prefix` starts
    /// its name.
    fn map(&mut self, prefix: &str, out: Type, ins: &[Type], lane: &dyn Fn(&[String]) -> String) -> String;
    /// A load of type `t` (scalar or vector) from `buffer` at `index`, zero in the lanes
    /// where `predicate` does not hold.
    fn load(&mut self, t: Type, buffer: &Name, index: &Expr, predicate: Option<&Expr>) -> Result<String>;

    /// The math library function computing the float intrinsic `which` in single (`f32`)
    /// or double precision: by default C99's `<math.h>` names (`sqrtf`, `sqrt`), which
    /// CUDA C also has. A dialect whose library spells them otherwise (OpenCL C overloads
    /// `sqrt` for both precisions) or has faster equivalents names them here.
    fn math_function(&self, which: Intrinsic, f32: bool) -> &'static str {
        c99_math_function(which, f32)
    }

    /// A function computing the float intrinsic `which` on a whole vector of type `t` at
    /// once, bit for bit what the scalar function does lane by lane, where the dialect has
    /// one; `None` maps the scalar function over the lanes (see [`Dialect::map`]).
    fn vector_math(&mut self, which: Intrinsic, t: Type) -> Option<String> {
        let _ = (which, t);
        None
    }
}

/// C99's `<math.h>` name of the float intrinsic `which` in single (`f32`) or double
/// precision (`sqrtf`, `sqrt`), except single-precision `exp` and `log`, which are the
/// scalar helpers `h_expf` and `h_logf` (see [`crate::ir::float_math`]).
pub(crate) fn c99_math_function(which: Intrinsic, f32: bool) -> &'static str {
    let (single, double) = match which {
        Intrinsic::Sqrt => ("sqrtf", "sqrt"),
        // Halogen's own in single precision (see `ir::float_math`): the interpreter's bits,
        // and vector code where lanes are mapped.
        Intrinsic::Exp => ("h_expf", "exp"),
        Intrinsic::Log => ("h_logf", "log"),
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
        Intrinsic::Atan => ("atanf", "atan"),
        Intrinsic::Tanh => ("tanhf", "tanh"),
        // Halogen's own on every target in single precision; the accurate ones in double.
        Intrinsic::FastExp => ("h_fast_expf", "exp"),
        Intrinsic::FastLog => ("h_fast_logf", "log"),
        Intrinsic::FastPow => ("h_fast_powf", "pow"),
        Intrinsic::Abs => ("fabsf", "fabs"),
        Intrinsic::Reinterpret | Intrinsic::BitNot => ("", ""),
    };
    if f32 {
        single
    } else {
        double
    }
}
