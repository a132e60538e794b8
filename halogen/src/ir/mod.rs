//! The intermediate representation: types, expressions, statements, traversal and printing.

pub mod expr;
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
pub use stmt::{Fold, ForKind, MsgPart, Range, Stmt, VectorTail};
pub use types::{Type, TypeCode};
pub use visit::{mutate_expr_children, mutate_stmt_children, walk_expr, walk_stmt, Mutator, Visitor};
