//! The intermediate representation: types, expressions, statements, traversal and printing.

pub mod expr;
pub mod float_math;
pub mod parse;
pub mod printer;
pub mod semantics;
pub mod stack;
pub mod stmt;
pub mod types;
pub mod visit;

pub use expr::{
    BinOp, CallKind, CmpOp, Expr, ExprKind, ExprNode, FloatBits, FuncId, Intrinsic, Name, ReductionDomain,
    ReductionRef, ReductionVariable, VarBinding,
};
pub use stmt::{CombineOp, Fold, ForKind, MsgPart, Range, Stmt, TailPlace, TransferOp, VectorTail};
pub use types::{Type, TypeCode};
/// Every coordinate a pipeline computes with lies in `[-COORDINATE_LIMIT, COORDINATE_LIMIT)`,
/// that is ±2^30: buffers are checked against it when a pipeline runs, and the regions of
/// every Func and input against it (in 64 bits) before anything is computed. Within it, a
/// loop end, an extent `max - min + 1` or a vector tail computed in 32 bits cannot wrap.
pub const COORDINATE_LIMIT: i64 = 1 << 30;

/// True for a run-time parameter that is a buffer's shape (`input.min.0`, `f.extent.1`,
/// `f.stride.2`, the names lowering gives them): checked against [`COORDINATE_LIMIT`]
/// when the buffer is bound, unlike a user's `Param`.
pub(crate) fn is_buffer_shape(e: &Expr) -> bool {
    let ExprKind::Var { name, binding: VarBinding::Param } = e.kind() else { return false };
    let mut parts = name.rsplitn(3, '.');
    let (Some(dim), Some(field), Some(buffer)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    !buffer.is_empty() && matches!(field, "min" | "extent" | "stride") && dim.parse::<u32>().is_ok()
}

pub use visit::{mutate_expr_children, mutate_stmt_children, walk_expr, walk_stmt, Mutator, Visitor};

/// `s` without the `$N` counters that make generated names unique in a process
/// (`input_repeat_edge$3` is shown as `input_repeat_edge`).
///
/// ```
/// use halogen::ir::without_counters;
/// assert_eq!(without_counters("Func 'in_repeat_edge$12' at f$3.s0.x"), "Func 'in_repeat_edge' at f.s0.x");
/// assert_eq!(without_counters("costs $5"), "costs $5");
/// ```
pub fn without_counters(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('$') {
        return s.into();
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        // A counter follows a name character: `$` then digits, and no digit after them.
        let after_name = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i] == b'$' && after_name && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            continue;
        }
        let ch = s[i..].chars().next().expect("inside the string");
        out.push(ch);
        i += ch.len_utf8();
    }
    out.into()
}
