//! Pass 6a: unrolling. A loop marked unrolled (constant extent) becomes copies of its
//! body, one per value of the loop variable.

use crate::analysis::simplify;
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{mutate_stmt_children, Expr, ForKind, Mutator, Stmt};
use crate::schedule::MAX_UNROLL;

struct Unroll {
    error: Option<Error>,
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
