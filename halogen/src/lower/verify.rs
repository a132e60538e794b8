//! The IR verifier, run after every pass in debug builds: every variable a statement reads
//! is bound by an enclosing `let` or loop (or is a run-time parameter), every flat buffer
//! access names an allocation or a pipeline buffer, and operand types agree.

use crate::error::{Error, Result};
use crate::ir::{ExprKind, Name, Stmt, VarBinding};
use std::collections::HashSet;

struct Verifier<'a> {
    pass: &'a str,
    bound: Vec<Name>,
    buffers: Vec<Name>,
    external: &'a HashSet<Name>,
    check_scopes: bool,
    error: Option<String>,
}

impl Verifier<'_> {
    fn fail(&mut self, msg: String) {
        self.error.get_or_insert(msg);
    }

    fn expr(&mut self, e: &crate::ir::Expr) {
        if self.error.is_some() {
            return;
        }
        match e.kind() {
            ExprKind::Var { name, binding: VarBinding::Plain } if self.check_scopes && !self.bound.contains(name) => {
                self.fail(format!("variable '{name}' is used outside any let or loop that binds it"));
            }
            ExprKind::Let { name, value, body } => {
                self.expr(value);
                self.bound.push(name.clone());
                self.expr(body);
                self.bound.pop();
            }
            ExprKind::Load { buffer, .. } if !self.buffers.contains(buffer) && !self.external.contains(buffer) => {
                self.fail(format!("load from '{buffer}', which is neither allocated here nor a pipeline buffer"));
            }
            ExprKind::Binary(op, a, b) if a.ty() != b.ty() => {
                self.fail(format!("operands of {op:?} differ in type: {} and {} in '{e}'", a.ty(), b.ty()));
            }
            _ => e.for_each_child(|c| self.expr(c)),
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        if self.error.is_some() {
            return;
        }
        match s {
            Stmt::LetStmt { name, value, body } => {
                self.expr(value);
                self.bound.push(name.clone());
                self.stmt(body);
                self.bound.pop();
            }
            Stmt::For { name, min, extent, body, .. } => {
                self.expr(min);
                self.expr(extent);
                self.bound.push(name.clone());
                self.stmt(body);
                self.bound.pop();
            }
            Stmt::Allocate { name, extents, body, .. } => {
                extents.iter().for_each(|e| self.expr(e));
                self.buffers.push(name.clone());
                self.stmt(body);
                self.buffers.pop();
            }
            Stmt::Store { buffer, value, index, predicate } => {
                if !self.buffers.contains(buffer) && !self.external.contains(buffer) {
                    self.fail(format!("store to '{buffer}', which is neither allocated here nor a pipeline buffer"));
                }
                self.expr(value);
                self.expr(index);
                if let Some(p) = predicate {
                    self.expr(p);
                }
            }
            Stmt::Realize { name, bounds, body, .. } => {
                for b in bounds {
                    self.expr(&b.min);
                    self.expr(&b.extent);
                }
                self.buffers.push(name.clone());
                self.stmt(body);
                self.buffers.pop();
            }
            Stmt::ProducerConsumer { body, .. } => self.stmt(body),
            Stmt::Block(v) => v.iter().for_each(|c| self.stmt(c)),
            Stmt::IfThenElse { condition, then_case, else_case } => {
                self.expr(condition);
                self.stmt(then_case);
                if let Some(e) = else_case {
                    self.stmt(e);
                }
            }
            Stmt::Assert { condition, message } => {
                self.expr(condition);
                for m in message {
                    if let crate::ir::MsgPart::Value(e) = m {
                        self.expr(e);
                    }
                }
            }
            Stmt::Provide { values, args, .. } => {
                values.iter().chain(args.iter()).for_each(|e| self.expr(e));
            }
            Stmt::Evaluate(e) => self.expr(e),
            Stmt::Free { .. } => {}
        }
    }
}

/// Checks the invariants of `s` after `pass`. `check_scopes` is off before bounds
/// inference has bound the loop bounds of each stage.
pub fn verify(s: &Stmt, pass: &str, external: &HashSet<Name>, check_scopes: bool) -> Result<()> {
    let mut v = Verifier { pass, bound: Vec::new(), buffers: Vec::new(), external, check_scopes, error: None };
    v.stmt(s);
    match v.error {
        None => Ok(()),
        Some(msg) => {
            let text = s.to_string();
            let excerpt: String = text.lines().take(40).collect::<Vec<_>>().join("\n");
            Err(Error::internal(v.pass, format!("{msg}\n{excerpt}")))
        }
    }
}
