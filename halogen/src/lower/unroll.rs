//! Pass 6a: unrolling. A loop marked unrolled (constant extent) becomes copies of its
//! body, one per value of the loop variable.

use crate::analysis::simplify;
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{mutate_stmt_children, walk_stmt, Expr, ForKind, Mutator, Stmt, Visitor};
use crate::schedule::MAX_UNROLL;

/// The most statements the copies of one unrolled loop may hold. Nested unrolled loops
/// multiply: without a bound, their copies could ask for more memory than there is, and
/// the allocation failure aborts the process.
pub const MAX_UNROLLED_STATEMENTS: i64 = 1 << 20;

struct Unroll {
    error: Option<Error>,
}

/// The number of statements in `s` (at least 1).
fn statements(s: &Stmt) -> i64 {
    struct Count(i64);
    impl Visitor for Count {
        fn visit_expr(&mut self, _: &Expr) {}
        fn visit_stmt(&mut self, s: &Stmt) {
            self.0 += 1;
            walk_stmt(self, s)
        }
    }
    let mut c = Count(0);
    c.visit_stmt(s);
    c.0.max(1)
}

impl Mutator for Unroll {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| {
            if let Stmt::For { name, min, extent, kind: ForKind::Unrolled, body, .. } = s {
                let body = self.mutate_stmt(body);
                let n = simplify(extent).as_int();
                let Some(n) = n else {
                    self.error.get_or_insert(Error::Schedule(format!(
                    "unroll: loop '{name}' has extent '{extent}', which is not a constant; split it by a constant factor first"
                )));
                    return s.clone();
                };
                if n > i64::from(MAX_UNROLL) {
                    self.error.get_or_insert(Error::Schedule(format!(
                        "unroll: loop '{name}' has {n} iterations, over {MAX_UNROLL}: an unrolled loop repeats its body once per iteration in the generated code; split it and unroll the inner loop"
                    )));
                    return s.clone();
                }
                let size = statements(&body);
                if n.saturating_mul(size) > MAX_UNROLLED_STATEMENTS {
                    self.error.get_or_insert(Error::Schedule(format!(
                        "unroll: loop '{name}' has {n} iterations of {size} statements, more than the \
                         {MAX_UNROLLED_STATEMENTS} an unrolled loop may hold; unroll a loop with fewer iterations"
                    )));
                    return s.clone();
                }
                let copies = (0..n.max(0))
                    .map(|i| {
                        Stmt::let_stmt(name.clone(), simplify(&Expr::add(min.clone(), Expr::i32(i))), body.clone())
                    })
                    .collect();
                return Stmt::block(copies);
            }
            mutate_stmt_children(self, s)
        })
    }
}

/// Runs the unrolling pass.
pub fn unroll(s: Stmt) -> Result<Stmt> {
    let mut u = Unroll { error: None };
    let out = u.mutate_stmt(&s);
    u.error.map_or(Ok(out), Err)
}
