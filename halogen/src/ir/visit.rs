//! Visitor and mutator traits over the IR, with default recursion.
//!
//! Override `visit_expr`/`mutate_expr` (or the stmt versions) and call the `walk_*`
//! function for the nodes you do not handle. The `walk_*` and `mutate_*_children`
//! functions grow the stack as needed ([`super::stack`]), so a traversal that recurses
//! through them handles trees of any depth.

use super::expr::Expr;
use super::stack;
use super::stmt::{MsgPart, Range, Stmt};

/// Read-only traversal.
pub trait Visitor {
    /// Visit an expression; the default visits its children.
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e)
    }
    /// Visit a statement; the default visits its children.
    fn visit_stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s)
    }
}

/// Visits the children of `e`.
pub fn walk_expr<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    e.for_each_child(|c| v.visit_expr(c))
}

/// Visits the children of `s`.
pub fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    // One guard per level: a walk is as deep as the tree (see `stack`).
    stack::guard(|| walk_stmt_here(v, s))
}

fn walk_stmt_here<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    match s {
        Stmt::LetStmt { value, body, .. } => {
            v.visit_expr(value);
            v.visit_stmt(body)
        }
        Stmt::Assert { condition, message } => {
            v.visit_expr(condition);
            for m in message {
                if let MsgPart::Value(e) = m {
                    v.visit_expr(e)
                }
            }
        }
        Stmt::ProducerConsumer { body, .. } => v.visit_stmt(body),
        Stmt::For { min, extent, body, .. } => {
            v.visit_expr(min);
            v.visit_expr(extent);
            v.visit_stmt(body)
        }
        Stmt::Provide { values, args, .. } => {
            values.iter().for_each(|e| v.visit_expr(e));
            args.iter().for_each(|e| v.visit_expr(e));
        }
        Stmt::Realize { bounds, body, .. } => {
            for b in bounds {
                v.visit_expr(&b.min);
                v.visit_expr(&b.extent);
            }
            v.visit_stmt(body)
        }
        Stmt::Store { value, index, predicate, .. } => {
            v.visit_expr(value);
            v.visit_expr(index);
            if let Some(p) = predicate {
                v.visit_expr(p)
            }
        }
        Stmt::Allocate { extents, body, .. } => {
            extents.iter().for_each(|e| v.visit_expr(e));
            v.visit_stmt(body)
        }
        Stmt::Free { .. } => {}
        Stmt::Block(ss) => ss.iter().for_each(|s| v.visit_stmt(s)),
        Stmt::IfThenElse { condition, then_case, else_case } => {
            v.visit_expr(condition);
            v.visit_stmt(then_case);
            if let Some(e) = else_case {
                v.visit_stmt(e)
            }
        }
        Stmt::Evaluate(e) => v.visit_expr(e),
        Stmt::Transfer { peer, mins, extents, strides, .. } => {
            v.visit_expr(peer);
            mins.iter().chain(extents).chain(strides).for_each(|e| v.visit_expr(e));
        }
        Stmt::TransferWait => {}
    }
}

/// Rewriting traversal.
pub trait Mutator {
    /// Rewrite an expression; the default rewrites its children.
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        mutate_expr_children(self, e)
    }
    /// Rewrite a statement; the default rewrites its children.
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        mutate_stmt_children(self, s)
    }
}

/// Rewrites the children of `e` with `m`.
pub fn mutate_expr_children<M: Mutator + ?Sized>(m: &mut M, e: &Expr) -> Expr {
    e.map_children(|c| m.mutate_expr(c))
}

/// Rewrites the children of `s` with `m`.
pub fn mutate_stmt_children<M: Mutator + ?Sized>(m: &mut M, s: &Stmt) -> Stmt {
    stack::guard(|| mutate_stmt_children_here(m, s))
}

fn mutate_stmt_children_here<M: Mutator + ?Sized>(m: &mut M, s: &Stmt) -> Stmt {
    match s {
        Stmt::LetStmt { name, value, body } => {
            let value = m.mutate_expr(value);
            Stmt::LetStmt { name: name.clone(), value, body: Box::new(m.mutate_stmt(body)) }
        }
        Stmt::Assert { condition, message } => Stmt::Assert {
            condition: m.mutate_expr(condition),
            message: message
                .iter()
                .map(|p| match p {
                    MsgPart::Value(e) => MsgPart::Value(m.mutate_expr(e)),
                    t => t.clone(),
                })
                .collect(),
        },
        Stmt::ProducerConsumer { name, is_producer, body } => Stmt::ProducerConsumer {
            name: name.clone(),
            is_producer: *is_producer,
            body: Box::new(m.mutate_stmt(body)),
        },
        Stmt::For { name, min, extent, kind, tails, body } => {
            let min = m.mutate_expr(min);
            let extent = m.mutate_expr(extent);
            let body = Box::new(m.mutate_stmt(body));
            Stmt::For { name: name.clone(), min, extent, kind: *kind, tails: tails.clone(), body }
        }
        Stmt::Provide { name, values, args } => Stmt::Provide {
            name: name.clone(),
            values: values.iter().map(|e| m.mutate_expr(e)).collect(),
            args: args.iter().map(|e| m.mutate_expr(e)).collect(),
        },
        Stmt::Realize { name, types, bounds, fold, body } => {
            let bounds = bounds.iter().map(|b| Range::new(m.mutate_expr(&b.min), m.mutate_expr(&b.extent))).collect();
            let body = Box::new(m.mutate_stmt(body));
            Stmt::Realize { name: name.clone(), types: types.clone(), bounds, fold: *fold, body }
        }
        Stmt::Store { buffer, value, index, predicate } => Stmt::Store {
            buffer: buffer.clone(),
            value: m.mutate_expr(value),
            index: m.mutate_expr(index),
            predicate: predicate.as_ref().map(|p| m.mutate_expr(p)),
        },
        Stmt::Allocate { name, ty, extents, body } => {
            let extents = extents.iter().map(|e| m.mutate_expr(e)).collect();
            Stmt::Allocate { name: name.clone(), ty: *ty, extents, body: Box::new(m.mutate_stmt(body)) }
        }
        Stmt::Free { name } => Stmt::Free { name: name.clone() },
        Stmt::Block(ss) => Stmt::block(ss.iter().map(|s| m.mutate_stmt(s)).collect()),
        Stmt::IfThenElse { condition, then_case, else_case } => {
            let condition = m.mutate_expr(condition);
            Stmt::IfThenElse {
                condition,
                then_case: Box::new(m.mutate_stmt(then_case)),
                else_case: else_case.as_ref().map(|e| Box::new(m.mutate_stmt(e))),
            }
        }
        Stmt::Evaluate(e) => Stmt::Evaluate(m.mutate_expr(e)),
        Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => Stmt::Transfer {
            op: *op,
            peer: m.mutate_expr(peer),
            buffer: buffer.clone(),
            ty: *ty,
            mins: mins.iter().map(|e| m.mutate_expr(e)).collect(),
            extents: extents.iter().map(|e| m.mutate_expr(e)).collect(),
            strides: strides.iter().map(|e| m.mutate_expr(e)).collect(),
        },
        Stmt::TransferWait => Stmt::TransferWait,
    }
}
