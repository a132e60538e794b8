//! What a statement uses from outside itself: the variables and buffers a parallel loop's
//! body function must receive in its closure, and those the entry point must bind.

use crate::ir::stack;
use crate::ir::{walk_expr, Expr, ExprKind, Name, Stmt, Visitor};
use std::collections::HashSet;

/// The free variables and buffers of a statement, in order of first use.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Captures {
    /// Variables read but not bound inside.
    pub vars: Vec<Name>,
    /// Buffers loaded from, stored to or freed but not allocated inside.
    pub buffers: Vec<Name>,
}

struct Finder {
    bound: Vec<Name>,
    allocated: Vec<Name>,
    out: Captures,
    seen_vars: HashSet<Name>,
    seen_bufs: HashSet<Name>,
}

impl Finder {
    fn use_var(&mut self, n: &Name) {
        if !self.bound.contains(n) && self.seen_vars.insert(n.clone()) {
            self.out.vars.push(n.clone());
        }
    }
    fn use_buffer(&mut self, n: &Name) {
        if !self.allocated.contains(n) && self.seen_bufs.insert(n.clone()) {
            self.out.buffers.push(n.clone());
        }
    }
    fn scoped(&mut self, n: &Name, f: impl FnOnce(&mut Self)) {
        self.bound.push(n.clone());
        f(self);
        self.bound.pop();
    }
}

impl Visitor for Finder {
    fn visit_expr(&mut self, e: &Expr) {
        stack::guard(|| match e.kind() {
            ExprKind::Var { name, .. } => self.use_var(name),
            ExprKind::Let { name, value, body } => {
                self.visit_expr(value);
                self.scoped(name, |s| s.visit_expr(body));
            }
            ExprKind::Load { buffer, .. } => {
                self.use_buffer(buffer);
                walk_expr(self, e)
            }
            _ => walk_expr(self, e),
        })
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        stack::guard(|| match s {
            Stmt::LetStmt { name, value, body } => {
                self.visit_expr(value);
                self.scoped(name, |f| f.visit_stmt(body));
            }
            Stmt::For { name, min, extent, body, .. } => {
                self.visit_expr(min);
                self.visit_expr(extent);
                self.scoped(name, |f| f.visit_stmt(body));
            }
            Stmt::Allocate { name, extents, body, .. } => {
                extents.iter().for_each(|e| self.visit_expr(e));
                self.allocated.push(name.clone());
                self.visit_stmt(body);
                self.allocated.pop();
            }
            Stmt::Store { buffer, .. } => {
                self.use_buffer(buffer);
                crate::ir::walk_stmt(self, s)
            }
            Stmt::Free { name } => self.use_buffer(name),
            _ => crate::ir::walk_stmt(self, s),
        })
    }
}

/// The variables and buffers `s` uses without binding them, with `bound` treated as bound
/// (a parallel loop's own variable).
///
/// ```
/// use halogen::backend::c::captures::captures;
/// use halogen::ir::{ForKind, Stmt};
/// use halogen::{Expr, Type};
/// let (x, n) = (Expr::var(Type::i32(), "x"), Expr::var(Type::i32(), "n"));
/// let load = Expr::load(Type::i32(), "in", x.clone(), None);
/// let store = Stmt::Store { buffer: "out".into(), value: Expr::add(load, n.clone()), index: x, predicate: None };
/// let s = Stmt::for_loop("x", Expr::i32(0), Expr::var(Type::i32(), "w"), ForKind::Serial, store);
/// let c = captures(&s, &[]);
/// assert_eq!(c.vars, vec!["w".into(), "n".into()]);
/// assert_eq!(c.buffers, vec!["out".into(), "in".into()]);
/// ```
pub fn captures(s: &Stmt, bound: &[Name]) -> Captures {
    let mut f = Finder {
        bound: bound.to_vec(),
        allocated: Vec::new(),
        out: Captures::default(),
        seen_vars: HashSet::new(),
        seen_bufs: HashSet::new(),
    };
    f.visit_stmt(s);
    f.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ForKind, Type};

    #[test]
    fn lets_loops_and_allocations_bind() {
        let v = |n: &str| Expr::var(Type::i32(), n);
        // let a = b in allocate t { for x: t[x] = a + (let c = x in c) + y; out[0] = t[0] }
        let inner = Expr::let_in("c", v("x"), v("c"));
        let fill = Stmt::for_loop(
            "x",
            Expr::i32(0),
            Expr::i32(4),
            ForKind::Serial,
            Stmt::Store {
                buffer: "t".into(),
                value: Expr::add(Expr::add(v("a"), inner), v("y")),
                index: v("x"),
                predicate: None,
            },
        );
        let read = Stmt::Store {
            buffer: "out".into(),
            value: Expr::load(Type::i32(), "t", Expr::i32(0), None),
            index: Expr::i32(0),
            predicate: None,
        };
        let alloc = Stmt::Allocate {
            name: "t".into(),
            ty: Type::i32(),
            extents: vec![v("n")],
            body: Box::new(Stmt::block(vec![fill, read, Stmt::Free { name: "t".into() }])),
        };
        let s = Stmt::let_stmt("a", v("b"), alloc);
        let c = captures(&s, &[]);
        assert_eq!(c.vars, vec![Name::from("b"), "n".into(), "y".into()]);
        assert_eq!(c.buffers, vec![Name::from("out")]);
        // a name bound by the caller is not captured
        assert_eq!(captures(&s, &["y".into()]).vars, vec![Name::from("b"), "n".into()]);
    }
}
