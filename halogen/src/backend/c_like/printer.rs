//! The walk every C dialect shares: statements (block, if, serial loop, let, assert,
//! evaluate) and scalar expressions, printed here in plain C; vectors, memory, parallel
//! loops, storage and the error exit go to the [`Dialect`].
//!
//! Every IR binding gets its own C identifier (the writer's
//! [`Namer`](super::names::Namer)), so C scoping never changes which binding a name means.
//!
//! Scalar operations whose C form could overflow or is undefined (`+ - *` of signed and
//! narrow unsigned integers, division, remainder, shifts, float→int casts) call the
//! helpers `h_add_i32`, `h_div_i32`, `h_f2i_i32`, … that implement `ir/semantics.rs`
//! exactly; `h_loop_end` bounds a loop and `h_msg_*` builds an assertion's message. They
//! are plain C, which a dialect's prelude defines (the host's:
//! [`crate::backend::c::prelude`]).

use super::dialect::Dialect;
use super::names::c_string;
use super::syntax::{
    arith_symbol, bit_symbol, cmp_symbol, float_literal, index_symbol, int_literal, paren, strip_parens,
};
use super::types::{check, mnemonic, scalar_c};
use crate::analysis::simplify::info::type_range;
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{
    without_counters, BinOp, CallKind, Expr, ExprKind, ForKind, Intrinsic, MsgPart, Name, Stmt, Type, TypeCode,
};

const PASS: &str = "C back end";

fn internal(message: impl Into<String>) -> Error {
    Error::internal(PASS, message)
}

/// Prints the statement `s`.
pub(crate) fn stmt(d: &mut impl Dialect, s: &Stmt) -> Result<()> {
    stack::guard(|| {
        match s {
            Stmt::LetStmt { name, value, body } => {
                d.bind_let(name, value)?;
                let r = stmt(d, body);
                d.end_let();
                r
            }
            Stmt::Assert { condition, message } => assert(d, condition, message),
            Stmt::ProducerConsumer { name, is_producer, body } => {
                d.writer().line(format!("/* {} {name} */", if *is_producer { "produce" } else { "consume" }));
                stmt(d, body)
            }
            Stmt::For { name, min, extent, kind, body, .. } => match kind {
                ForKind::Parallel => d.parallel_for(name, min, extent, body),
                ForKind::GpuBlock | ForKind::GpuThread => d.gpu_loop(name, *kind, min, extent, body),
                // A loop for ranks is never run as a serial loop in disguise: lowering and
                // `backend::select` keep it from here, and this says so if not.
                ForKind::Distributed => Err(Error::Target(format!(
                    "C back end: loop '{name}' is a {kind:?} loop, which C on the host does not run"
                ))),
                // Vectorized and unrolled loops the passes left (their fallback) compute the
                // same values serially.
                ForKind::Serial | ForKind::Vectorized | ForKind::Unrolled => serial_for(d, name, min, extent, body),
            },
            Stmt::Store { buffer, value, index, predicate } => d.store(buffer, value, index, predicate.as_ref()),
            Stmt::Allocate { name, ty, extents, body } => d.allocate(name, *ty, extents, body),
            Stmt::Free { name } => d.free(name),
            Stmt::Block(v) => v.iter().try_for_each(|s| stmt(d, s)),
            Stmt::IfThenElse { condition, then_case, else_case } => {
                if condition.ty().is_vector() {
                    return Err(internal(format!("if condition is a vector: {condition}")));
                }
                let c = expr(d, condition)?;
                d.writer().open(format!("if ({}) {{", strip_parens(&c)));
                stmt(d, then_case)?;
                if let Some(e) = else_case {
                    let w = d.writer();
                    w.close("} else {");
                    w.indent += 1;
                    w.namer.open();
                    stmt(d, e)?;
                }
                d.writer().close("}");
                Ok(())
            }
            Stmt::Evaluate(e) => {
                let v = expr(d, e)?;
                d.writer().line(format!("(void){v};"));
                Ok(())
            }
            Stmt::Transfer { .. } | Stmt::TransferWait => d.transfer(s),
            Stmt::Provide { name, .. } => Err(internal(format!("Provide to '{name}' reached the C back end"))),
            Stmt::Realize { name, .. } => Err(internal(format!("Realize of '{name}' reached the C back end"))),
        }
    })
}

/// A failed assertion reports through the dialect ([`Dialect::check_failed`]).
fn assert(d: &mut impl Dialect, condition: &Expr, message: &[MsgPart]) -> Result<()> {
    let c = expr(d, condition)?;
    let c = if condition.ty().is_vector() { d.all_true(condition.ty().lanes, c) } else { c };
    d.writer().open(format!("if (!{}) {{", paren(&c)));
    d.check_failed(message)?;
    d.writer().close("}");
    Ok(())
}

/// Builds the interpreter's message of a failed check in `h_m` and leaves through the
/// dialect's error exit.
pub(crate) fn message_and_exit(d: &mut impl Dialect, message: &[MsgPart]) -> Result<()> {
    d.writer().line("struct h_msg h_m = {{0}, 0};");
    for part in message {
        match part {
            // Without the counters of generated names (`input_repeat_edge$3`): the same
            // pipeline built twice in one process must print the same C, or the JIT cache
            // misses it.
            MsgPart::Text(t) => d.writer().line(format!("h_msg_str(&h_m, {});", c_string(&without_counters(t)))),
            MsgPart::Value(e) => {
                let v = expr(d, e)?;
                let t = e.ty();
                if t.is_vector() {
                    let tmp = d.writer().namer.fresh("msg.value");
                    let ct = d.value_type(t);
                    let w = d.writer();
                    w.line(format!("const {ct} {tmp} = {v};"));
                    w.line("h_msg_str(&h_m, \"<\");");
                    for i in 0..t.lanes {
                        if i > 0 {
                            w.line("h_msg_str(&h_m, \", \");");
                        }
                        w.line(msg_value(t.element(), &format!("{tmp}[{i}]")));
                    }
                    w.line("h_msg_str(&h_m, \">\");");
                } else {
                    d.writer().line(msg_value(t, &v));
                }
            }
        }
    }
    d.error_exit("h_m.text");
    Ok(())
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

fn serial_for(d: &mut impl Dialect, name: &Name, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
    let (mn, ex) = (expr(d, min)?, expr(d, extent)?);
    let ty = min.ty();
    if ty.is_vector() || !ty.is_int_or_uint() {
        return Err(internal(format!("loop '{name}' has bounds of type {ty}")));
    }
    let w = d.writer();
    w.namer.open();
    let v = w.namer.fresh(name);
    if ty == Type::i32() {
        let end = w.namer.fresh(&format!("{name}.end"));
        w.line(format!("for (int32_t {v} = {mn}, {end} = h_loop_end({v}, {ex}); {v} < {end}; {v}++) {{"));
    } else {
        // Loops over other integer types count in 64 bits.
        let i = w.namer.fresh(&format!("{name}.i"));
        let lo = w.namer.fresh(&format!("{name}.min"));
        w.line(format!("const int64_t {lo} = (int64_t){mn};"));
        w.line(format!("for (int64_t {i} = 0; {i} < (int64_t){ex}; {i}++) {{"));
        w.line(format!("    const {} {v} = ({})({lo} + {i});", scalar_c(ty), scalar_c(ty)));
    }
    w.indent += 1;
    d.enter_serial_loop(name, v, ty, extent, body);
    let r = stmt(d, body);
    d.exit_serial_loop();
    let w = d.writer();
    w.indent -= 1;
    w.namer.close();
    w.line("}");
    r
}

/// Levels of IR printed as one piece of C text at most: a deeper expression is cut into
/// constants declared before the statement that uses it. Each level adds a few brackets
/// at most, and C compilers limit their nesting (Clang to 256; C11 promises 63 levels of
/// parentheses).
const MAX_NESTING: usize = 48;

/// The C text of one IR node that `print` gives (printing the node's operands with
/// [`expr`], [`index_c`] or this), where the node tops at most [`MAX_NESTING`] levels of
/// text: a node that would top more is declared as a constant of the C type `c_type`
/// gives, and its text is the constant's name. The levels of the text being printed are
/// counted in the writer. Printing recurses once per level, growing the stack as needed.
pub(crate) fn nested<D: Dialect>(
    d: &mut D,
    c_type: impl FnOnce(&mut D) -> String,
    print: impl FnOnce(&mut D) -> Result<String>,
) -> Result<String> {
    stack::guard(|| {
        let outer = std::mem::replace(&mut d.writer().levels, 0);
        let text = print(d);
        let mut levels = d.writer().levels + 1;
        let text = match text {
            Ok(t) if levels >= MAX_NESTING => {
                // Evaluated where the statement is, as the whole expression is: every
                // operand of the IR is evaluated (see `ir::semantics`), so this is the same.
                let t_c = c_type(d);
                let w = d.writer();
                let name = w.namer.fresh("deep");
                w.line(format!("const {t_c} {name} = {};", strip_parens(&t)));
                levels = 0;
                Ok(name)
            }
            other => other,
        };
        let w = d.writer();
        w.levels = outer.max(levels);
        text
    })
}

/// The C text of `e`: an identifier, a literal, a call or parenthesized, so it can be used
/// as an operand as it is.
pub(crate) fn expr<D: Dialect>(d: &mut D, e: &Expr) -> Result<String> {
    nested(
        d,
        |d| d.value_type(e.ty()),
        |d| {
            let t = e.ty();
            match e.kind() {
                ExprKind::IntImm(v) => {
                    check(t)?;
                    Ok(int_literal(t, *v))
                }
                ExprKind::FloatImm(b) => Ok(float_literal(t, b.get())),
                ExprKind::Var { name, .. } => d.var(name),
                ExprKind::Cast(a) => {
                    let x = expr(d, a)?;
                    match in_range_float_to_int(a, t) {
                        Some(f) => Ok(format!("{f}({})", strip_parens(&x))),
                        None => cast(d, a.ty(), t, x),
                    }
                }
                ExprKind::Binary(op, a, b) => {
                    if let Some((value, lo, hi)) = clamped_float_to_int(e) {
                        let from = value.ty();
                        let helper = if t.is_scalar() {
                            float_suffix(from).map(|source| format!("h_f2ic_{}_{source}", mnemonic(t)))
                        } else {
                            d.clamped_float_to_int(from, t)
                        };
                        if let Some(f) = helper {
                            let x = expr(d, value)?;
                            let (lo, hi) = (float_literal(from.element(), lo), float_literal(from.element(), hi));
                            return Ok(format!("{f}({}, {lo}, {hi})", strip_parens(&x)));
                        }
                    }
                    let (x, y) = (operand(d, a, t.lanes)?, operand(d, b, t.lanes)?);
                    let ot = a.ty().element().with_lanes(t.lanes);
                    check(ot)?;
                    if ot.is_vector() {
                        d.vector_binary(*op, ot, x, y, b)
                    } else {
                        binary(*op, ot, x, y)
                    }
                }
                ExprKind::Cmp(op, a, b) => {
                    let lanes = a.ty().lanes.max(b.ty().lanes);
                    let (x, y) = (operand(d, a, lanes)?, operand(d, b, lanes)?);
                    let ot = a.ty().element().with_lanes(lanes);
                    check(ot)?;
                    let c = format!("({x} {} {y})", cmp_symbol(*op));
                    Ok(if lanes == 1 { c } else { d.compare_to_bool(ot, c) })
                }
                ExprKind::Not(a) => {
                    let x = expr(d, a)?;
                    Ok(if a.ty().is_vector() { d.bool_vector_not(x) } else { format!("!{x}") })
                }
                ExprKind::Select(c, a, b) => {
                    let (x, y) = (operand(d, a, t.lanes)?, operand(d, b, t.lanes)?);
                    if c.ty().is_scalar() {
                        // A scalar condition picks one side: C's `?:` evaluates only that one.
                        let cc = expr(d, c)?;
                        Ok(format!("({} ? {x} : {y})", paren(&cc)))
                    } else {
                        d.vector_select(t, c, x, y)
                    }
                }
                ExprKind::Load { buffer, index, predicate } => d.load(t, buffer, index, predicate.as_ref()),
                ExprKind::Ramp { base, stride, .. } => {
                    check(t)?;
                    let (b, s) = (expr(d, base)?, expr(d, stride)?);
                    Ok(d.ramp(t, b, s))
                }
                ExprKind::Broadcast { value, .. } => {
                    check(t)?;
                    let v = expr(d, value)?;
                    Ok(if value.ty().is_scalar() { d.broadcast(t, v) } else { d.repeat(t, value.ty(), v) })
                }
                ExprKind::Let { name, value, body } => {
                    d.bind_let(name, value)?;
                    let r = expr(d, body);
                    d.end_let();
                    r
                }
                ExprKind::Call { name, args, kind } => match kind {
                    CallKind::Intrinsic(which) => intrinsic(d, *which, t, args),
                    CallKind::Func { .. } | CallKind::Image => Err(internal(format!(
                        "call to '{name}' reached the C back end; storage flattening should have made it a Load"
                    ))),
                },
            }
        },
    )
}

/// `e` with `lanes` lanes: broadcast if it is a scalar.
pub(crate) fn operand(d: &mut impl Dialect, e: &Expr, lanes: u16) -> Result<String> {
    let s = expr(d, e)?;
    let t = e.ty();
    if t.lanes == lanes {
        Ok(s)
    } else if t.is_scalar() {
        Ok(d.broadcast(t.with_lanes(lanes), s))
    } else {
        Err(internal(format!("an operand of {} lanes is used where {lanes} are expected: {e}", t.lanes)))
    }
}

/// The C text of a scalar `i32` index, with its `+`, `-` and `*` done in 64 bits.
///
/// Index arithmetic never wraps in a program that passes bounds inference: every index
/// lies in a buffer, and the regions that bounds inference computes (without wrapping)
/// bound every term. Computing it in 64 bits without the wrap-around helpers gives the
/// same addresses and lets the C compiler strength-reduce them into pointer increments.
pub(crate) fn index_c(d: &mut impl Dialect, e: &Expr) -> Result<String> {
    nested(
        d,
        |_| "int64_t".to_string(),
        |d| {
            if e.ty() != Type::i32() {
                return Ok(format!("(int64_t){}", expr(d, e)?));
            }
            match e.kind() {
                ExprKind::IntImm(v) => Ok(format!("(int64_t){v}")),
                ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                    Ok(format!("({} {} {})", index_c(d, a)?, index_symbol(*op), index_c(d, b)?))
                }
                _ => Ok(format!("(int64_t){}", expr(d, e)?)),
            }
        },
    )
}

/// `a op b` for scalar operands of type `t`.
fn binary(op: BinOp, t: Type, a: String, b: String) -> Result<String> {
    let m = mnemonic(t);
    let helper = |name: &str| format!("h_{name}_{m}({}, {})", strip_parens(&a), strip_parens(&b));
    let min_max = if op == BinOp::Min { "min" } else { "max" };
    if t.is_bool() {
        // Bool arithmetic as the interpreter does it: the result is `!= 0` of the integer
        // result, which for 0/1 operands is one of these.
        let sym = match op {
            BinOp::And | BinOp::BitAnd | BinOp::Mul | BinOp::Div | BinOp::Min => "&&",
            BinOp::Or | BinOp::BitOr | BinOp::Add | BinOp::Max => "||",
            BinOp::BitXor | BinOp::Sub => "!=",
            BinOp::Shl | BinOp::Shr => return Ok(a),
            BinOp::Mod => return Ok("false".to_string()),
        };
        return Ok(format!("({a} {sym} {b})"));
    }
    if t.is_float() {
        return Ok(match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => format!("({a} {} {b})", arith_symbol(op)),
            BinOp::Mod => helper("mod"),
            BinOp::Min | BinOp::Max => helper(min_max),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                format!("h_from_bits_{m}(h_bits_{m}({a}) {} h_bits_{m}({b}))", bit_symbol(op))
            }
            BinOp::Shl | BinOp::Shr => a,
            BinOp::And | BinOp::Or => return Err(internal(format!("{op:?} of floats reached the C back end"))),
        });
    }
    // Integers.
    Ok(match op {
        // Unsigned arithmetic of at least `int`'s width wraps in C; narrower types are
        // promoted to `int` and signed overflow is undefined, so the helpers wrap.
        BinOp::Add | BinOp::Sub | BinOp::Mul if t.is_uint() && t.bits >= 32 => {
            format!("({a} {} {b})", arith_symbol(op))
        }
        BinOp::Add => helper("add"),
        BinOp::Sub => helper("sub"),
        BinOp::Mul => helper("mul"),
        BinOp::Div => helper("div"),
        BinOp::Mod => helper("mod"),
        BinOp::Min | BinOp::Max => helper(min_max),
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => format!("({a} {} {b})", bit_symbol(op)),
        BinOp::Shl => helper("shl"),
        BinOp::Shr => helper("shr"),
        BinOp::And | BinOp::Or => {
            let sym = if op == BinOp::And { "&&" } else { "||" };
            format!("(({})({a} != 0 {sym} {b} != 0))", scalar_c(t))
        }
    })
}

/// The helper for a scalar float-to-integer cast of `value` whose every value, by interval
/// analysis of the expression alone, lies within `to` (a clamped or scaled value: bilateral
/// grid's `int(clamp(v, 0, 1) * 10 + 0.5)`): it needs neither the saturation nor the
/// detour through `double` of the general conversion. NaN is not excluded by the bounds,
/// and the helper still maps it to 0 as `semantics::cast` does.
fn in_range_float_to_int(value: &Expr, to: Type) -> Option<String> {
    let from = value.ty();
    if !to.is_scalar() || !matches!(to.code, TypeCode::Int | TypeCode::UInt) || from.code != TypeCode::Float {
        return None;
    }
    let source = float_suffix(from)?;
    let iv = crate::analysis::bounds_of_expr_in_scope(value, &crate::analysis::Scope::new());
    let (lo, hi) = (iv.min?.as_float()?, iv.max?.as_float()?);
    // Truncation maps (MIN - 1, MAX + 1) into the type; the margin covers the rounding of
    // the interval arithmetic itself.
    let range = type_range(to)?;
    let (min, max) = (range.min as f64, range.max as f64);
    let margin = |v: f64| 1e-4 * v.abs().max(1.0);
    let inside = lo.is_finite() && hi.is_finite() && lo - margin(lo) > min - 1.0 && hi + margin(hi) < max + 1.0;
    inside.then(|| format!("h_f2ir_{}_{source}", mnemonic(to)))
}

/// `max(min(int(x), hi), lo)` or `min(max(int(x), lo), hi)`: a float `x` converted to an
/// integer type and clamped to constants `lo <= hi` inside that type which the float type
/// holds exactly (camera and pyramid pipelines' look-up indices, `clamp(int(v * 768), 0,
/// 768)`). Returns `(x, lo, hi)`. Taking NaN to 0, clamping the float to `[lo, hi]` and
/// then converting gives the same value in every case without the conversion's
/// saturation: NaN converts to 0 either way before the clamp; a value beyond the integer
/// type saturates to its end, which the clamp then takes to the bound the float clamp
/// gives; and within the type, truncation commutes with a clamp to integers.
fn clamped_float_to_int(e: &Expr) -> Option<(&Expr, f64, f64)> {
    let ExprKind::Binary(outer @ (BinOp::Min | BinOp::Max), inner, b) = e.kind() else { return None };
    let ExprKind::Binary(op, cast, a) = inner.kind() else { return None };
    let expected = if *outer == BinOp::Max { BinOp::Min } else { BinOp::Max };
    let ExprKind::Cast(value) = cast.kind() else { return None };
    let (to, from) = (e.ty(), value.ty());
    if *op != expected || !matches!(to.code, TypeCode::Int | TypeCode::UInt) || from.code != TypeCode::Float {
        return None;
    }
    let (a, b) = (a.as_int()?, b.as_int()?);
    let (lo, hi) = if *outer == BinOp::Max { (b, a) } else { (a, b) };
    let exact = |v: i64| match from.bits {
        32 => v.unsigned_abs() <= 1 << 24,
        64 => v.unsigned_abs() <= 1 << 53,
        _ => false,
    };
    let range = type_range(to.element())?;
    let inside = |v: i64| range.min <= i128::from(v) && i128::from(v) <= range.max;
    (lo <= hi && exact(lo) && exact(hi) && inside(lo) && inside(hi)).then_some((value, lo as f64, hi as f64))
}

/// The suffix the float-to-integer helpers carry for their source type `t`.
fn float_suffix(t: Type) -> Option<&'static str> {
    match (t.code, t.bits) {
        (TypeCode::Float, 32) => Some("f32"),
        (TypeCode::Float, 64) => Some("f64"),
        _ => None,
    }
}

/// Converts the C value `x` of type `from` to type `to` (same lanes), as
/// `semantics::cast` does.
pub(crate) fn cast(d: &mut impl Dialect, from: Type, to: Type, x: String) -> Result<String> {
    check(from)?;
    check(to)?;
    if from == to {
        return Ok(x);
    }
    if from.lanes != to.lanes {
        return Err(internal(format!("cast from {from} to {to} changes the lane count")));
    }
    if from.is_vector() {
        return d.vector_cast(from, to, x);
    }
    Ok(match (to.code, from.code) {
        (TypeCode::Bool, _) => format!("({x} != 0)"),
        (TypeCode::Int | TypeCode::UInt, TypeCode::Float) => format!("h_f2i_{}({})", mnemonic(to), strip_parens(&x)),
        _ => format!("(({}){x})", scalar_c(to)),
    })
}

/// A lane-wise call of the scalar C function (or helper) `f` on vectors, or a plain call
/// on scalars.
fn call_lanewise(d: &mut impl Dialect, f: &str, out: Type, args: &[(String, Type)]) -> String {
    if out.is_scalar() {
        let a: Vec<&str> = args.iter().map(|(s, _)| strip_parens(s)).collect();
        return format!("{f}({})", a.join(", "));
    }
    let tys: Vec<Type> = args.iter().map(|(_, t)| *t).collect();
    let helper = d.map(&format!("h_map_{f}"), out, &tys, &|x| format!("{f}({})", x.join(", ")));
    let a: Vec<&str> = args.iter().map(|(s, _)| s.as_str()).collect();
    format!("{helper}({})", a.join(", "))
}

fn intrinsic(d: &mut impl Dialect, which: Intrinsic, result: Type, args: &[Expr]) -> Result<String> {
    check(result)?;
    let lanes = result.lanes;
    let mut vals = Vec::new();
    for a in args {
        vals.push((operand(d, a, lanes)?, a.ty().element().with_lanes(lanes)));
    }
    let Some((x, t)) = vals.first().cloned() else {
        return Err(internal(format!("intrinsic {which:?} without arguments")));
    };
    check(t)?;
    let m = mnemonic(t.element());
    match which {
        Intrinsic::Abs => match t.code {
            TypeCode::Float => {
                let f = d.math_function(Intrinsic::Abs, t.bits == 32);
                let v = call_lanewise(d, f, t, &[(x, t)]);
                cast(d, t, result, v)
            }
            TypeCode::Int => {
                // |i32::MIN| only fits the unsigned type of the same width.
                let u = Type::uint(t.bits).with_lanes(t.lanes);
                let v = call_lanewise(d, &format!("h_abs_{m}"), u, &[(x, t)]);
                cast(d, u, result, v)
            }
            _ => cast(d, t, result, x),
        },
        Intrinsic::BitNot => {
            let v = match (t.code, t.is_vector()) {
                (TypeCode::Bool, true) => d.bool_vector_not(x),
                (TypeCode::Bool, false) => format!("!{x}"),
                (_, true) => d.vector_bit_not(t, x),
                (TypeCode::Float, false) => format!("h_from_bits_{m}(~h_bits_{m}({x}))"),
                (_, false) => format!("(({})~{x})", scalar_c(t)),
            };
            cast(d, t, result, v)
        }
        Intrinsic::Reinterpret => {
            let rm = mnemonic(result.element());
            if t.is_vector() {
                let f = d.map("h_reinterpret", result, &[t], &|a| format!("h_from_bits_{rm}(h_bits_{m}({}))", a[0]));
                Ok(format!("{f}({x})"))
            } else {
                Ok(format!("h_from_bits_{rm}(h_bits_{m}({}))", strip_parens(&x)))
            }
        }
        Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round | Intrinsic::Trunc if !t.is_float() => {
            // Already an integer: rounding is the identity.
            cast(d, t, result, x)
        }
        _ => {
            // Float math in the result's precision (or the argument's if the result is not
            // a float), as semantics::intrinsic does.
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
                fargs.push((cast(d, *vt, ft, v.clone())?, ft));
            }
            let whole = if ft.is_vector() { d.vector_math(which, ft) } else { None };
            let v = match whole {
                Some(f) => {
                    let a: Vec<&str> = fargs.iter().map(|(s, _)| s.as_str()).collect();
                    format!("{f}({})", a.join(", "))
                }
                None => {
                    let name = d.math_function(which, ft.bits == 32);
                    call_lanewise(d, name, ft, &fargs)
                }
            };
            cast(d, ft, result, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::c_like::writer::Writer;

    /// A dialect that spells everything it is asked for as a call naming the hook, so a
    /// test sees what the walk printed itself and what it asked the dialect for.
    #[derive(Default)]
    struct Probe {
        w: Writer,
        vars: Vec<(Name, String)>,
    }

    fn spell(t: Type) -> String {
        if t.is_vector() {
            mnemonic(t)
        } else {
            scalar_c(t).to_string()
        }
    }

    impl Dialect for Probe {
        fn writer(&mut self) -> &mut Writer {
            &mut self.w
        }
        fn var(&self, name: &Name) -> Result<String> {
            let found = self.vars.iter().rev().find(|(n, _)| n == name);
            found.map(|(_, c)| c.clone()).ok_or_else(|| internal(format!("'{name}' is not bound")))
        }
        fn bind_let(&mut self, name: &Name, value: &Expr) -> Result<()> {
            let v = expr(self, value)?;
            let c = self.w.namer.fresh(name);
            self.w.line(format!("const {} {c} = {};", spell(value.ty()), strip_parens(&v)));
            self.vars.push((name.clone(), c));
            Ok(())
        }
        fn end_let(&mut self) {
            self.vars.pop();
        }
        fn enter_serial_loop(&mut self, name: &Name, cname: String, _: Type, _: &Expr, _: &Stmt) {
            self.vars.push((name.clone(), cname));
        }
        fn exit_serial_loop(&mut self) {
            self.vars.pop();
        }
        fn parallel_for(&mut self, name: &Name, min: &Expr, extent: &Expr, body: &Stmt) -> Result<()> {
            let (m, e) = (expr(self, min)?, expr(self, extent)?);
            let c = self.w.namer.fresh(name);
            self.w.open(format!("parallel_for({c}, {m}, {e}) {{"));
            self.vars.push((name.clone(), c));
            stmt(self, body)?;
            self.vars.pop();
            self.w.close("}");
            Ok(())
        }
        fn store(&mut self, buffer: &Name, value: &Expr, index: &Expr, _: Option<&Expr>) -> Result<()> {
            let lanes = index.ty().lanes;
            let (i, v) = if lanes == 1 {
                (index_c(self, index)?, expr(self, value)?)
            } else {
                (operand(self, index, lanes)?, operand(self, value, lanes)?)
            };
            self.w.line(format!("store({buffer}, {i}, {v});"));
            Ok(())
        }
        fn allocate(&mut self, name: &Name, _: Type, _: &[Expr], body: &Stmt) -> Result<()> {
            self.w.line(format!("allocate({name});"));
            stmt(self, body)
        }
        fn free(&mut self, name: &Name) -> Result<()> {
            self.w.line(format!("free({name});"));
            Ok(())
        }
        fn error_exit(&mut self, message: &str) {
            self.w.line(format!("error_exit({message});"));
        }
        fn value_type(&mut self, t: Type) -> String {
            spell(t)
        }
        fn broadcast(&mut self, t: Type, x: String) -> String {
            format!("broadcast_{}({x})", mnemonic(t))
        }
        fn repeat(&mut self, t: Type, _: Type, x: String) -> String {
            format!("repeat_{}({x})", mnemonic(t))
        }
        fn ramp(&mut self, t: Type, base: String, stride: String) -> String {
            format!("ramp_{}({base}, {stride})", mnemonic(t))
        }
        fn all_true(&mut self, lanes: u16, x: String) -> String {
            format!("all_true{lanes}({x})")
        }
        fn vector_select(&mut self, t: Type, cond: &Expr, x: String, y: String) -> Result<String> {
            let c = operand(self, cond, t.lanes)?;
            Ok(format!("select({c}, {x}, {y})"))
        }
        fn vector_binary(&mut self, op: BinOp, t: Type, a: String, b: String, _: &Expr) -> Result<String> {
            Ok(format!("{op:?}_{}({a}, {b})", mnemonic(t)))
        }
        fn compare_to_bool(&mut self, _: Type, compare: String) -> String {
            format!("to_bool{compare}")
        }
        fn bool_vector_not(&mut self, x: String) -> String {
            format!("not({x})")
        }
        fn vector_bit_not(&mut self, _: Type, x: String) -> String {
            format!("bit_not({x})")
        }
        fn vector_cast(&mut self, _: Type, to: Type, x: String) -> Result<String> {
            Ok(format!("cast_{}({x})", mnemonic(to)))
        }
        fn map(&mut self, prefix: &str, out: Type, ins: &[Type], lane: &dyn Fn(&[String]) -> String) -> String {
            let args: Vec<String> = (0..ins.len()).map(|i| format!("a{i}")).collect();
            format!("{prefix}_{}<{}>", mnemonic(out), lane(&args))
        }
        fn load(&mut self, t: Type, buffer: &Name, index: &Expr, _: Option<&Expr>) -> Result<String> {
            let i = if t.is_vector() { operand(self, index, t.lanes)? } else { index_c(self, index)? };
            Ok(format!("load({buffer}, {i})"))
        }
    }

    fn print(s: &Stmt) -> Result<String> {
        let mut p = Probe::default();
        stmt(&mut p, s)?;
        Ok(p.w.out)
    }

    fn store(buffer: &str, index: Expr, value: Expr) -> Stmt {
        Stmt::Store { buffer: buffer.into(), value, index, predicate: None }
    }

    #[test]
    fn the_walk_prints_scalar_c_and_asks_the_dialect_for_vectors() {
        let x = Expr::var(Type::i32(), "x");
        let t = Expr::var(Type::i32(), "t");
        let body = Stmt::block(vec![
            Stmt::let_stmt(
                "t",
                Expr::mul(x.clone(), Expr::i32(3)),
                store("out", x.clone(), Expr::cast(Type::u8(), Expr::add(t.clone(), Expr::i32(1)))),
            ),
            store(
                "v",
                Expr::ramp(Expr::mul(x.clone(), Expr::i32(4)), Expr::i32(1), 4),
                // A scalar operand of a vector operation is broadcast.
                Expr::make(
                    Type::i32().with_lanes(4),
                    ExprKind::Binary(BinOp::Add, Expr::ramp(x.clone(), Expr::i32(1), 4), x.clone()),
                ),
            ),
        ]);
        let s = Stmt::for_loop("x", Expr::i32(0), Expr::i32(8), ForKind::Serial, body);
        assert_eq!(
            print(&s).unwrap(),
            "for (int32_t x = 0, x_end = h_loop_end(x, 8); x < x_end; x++) {
    const int32_t t = h_mul_i32(x, 3);
    store(out, (int64_t)x, ((uint8_t)h_add_i32(t, 1)));
    store(v, ramp_i32x4(h_mul_i32(x, 4), 1), Add_i32x4(ramp_i32x4(x, 1), broadcast_i32x4(x)));
}
"
        );
    }

    #[test]
    fn vector_expressions_go_to_the_dialect() {
        let v = Expr::ramp(Expr::var(Type::f32(), "a"), Expr::float_imm(Type::f32(), 1.0), 4);
        let s = Stmt::let_stmt(
            "a",
            Expr::float_imm(Type::f32(), 0.5),
            Stmt::Evaluate(Expr::select(
                Expr::lt(v.clone(), Expr::broadcast(Expr::float_imm(Type::f32(), 2.0), 4)),
                Expr::intrinsic(v.ty(), Intrinsic::Sqrt, vec![v.clone()]),
                Expr::cast(Type::f32().with_lanes(4), Expr::ramp(Expr::i32(0), Expr::i32(1), 4)),
            )),
        );
        let text = print(&s).unwrap();
        assert!(text.starts_with("const float a = 0.5f;\n"), "{text}");
        let second = text.lines().nth(1).unwrap();
        assert!(second.starts_with("(void)select(to_bool(ramp_f32x4(a, 1.0f) < broadcast_f32x4(2.0f)), "), "{text}");
        assert!(second.contains("h_map_sqrtf_f32x4<sqrtf(a0)>(ramp_f32x4(a, 1.0f))"), "{text}");
        assert!(second.ends_with("cast_f32x4(ramp_i32x4(0, 1)));"), "{text}");
    }

    #[test]
    fn control_flow_asserts_and_errors() {
        let p = Expr::var(Type::i32(), "p");
        let s = Stmt::let_stmt(
            "p",
            Expr::i32(5),
            Stmt::block(vec![
                Stmt::Assert {
                    condition: Expr::lt(p.clone(), Expr::i32(10)),
                    message: vec![MsgPart::Text("p is ".into()), MsgPart::Value(p.clone())],
                },
                Stmt::IfThenElse {
                    condition: Expr::eq_(p.clone(), Expr::i32(5)),
                    then_case: Box::new(Stmt::Free { name: "f".into() }),
                    else_case: Some(Box::new(Stmt::Evaluate(Expr::max(p.clone(), Expr::i32(2))))),
                },
            ]),
        );
        assert_eq!(
            print(&s).unwrap(),
            "const int32_t p = 5;
if (!(p < 10)) {
    struct h_msg h_m = {{0}, 0};
    h_msg_str(&h_m, \"p is \");
    h_msg_i64(&h_m, (int64_t)p);
    error_exit(h_m.text);
}
if (p == 5) {
    free(f);
} else {
    (void)h_max_i32(p, 2);
}
"
        );
        // Names the walk cannot resolve, and IR no back end should see, are errors.
        assert!(print(&Stmt::Evaluate(p.clone())).is_err());
        let provide = Stmt::Provide { name: "g".into(), values: vec![Expr::i32(1)], args: vec![Expr::i32(0)] };
        assert!(print(&provide).is_err());
    }
}
