//! Pass 6b: vectorization. A loop marked vectorized (constant extent) disappears: its
//! variable becomes a `Ramp`, and every operation that depends on it is widened to a
//! vector. Guards of split tails become predicates on loads and stores; inner loops with
//! lane-independent bounds stay scalar loops around the widened body. A body this pass
//! cannot widen (allocations, nested conditionals, inner loops whose bounds vary by lane)
//! keeps a serial loop, which computes the same values.

use crate::analysis::simplify;
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{mutate_stmt_children, CallKind, Expr, ExprKind, ForKind, Mutator, Name, Stmt};
use std::collections::HashMap;

struct Widen {
    lanes: u16,
    vars: HashMap<Name, Expr>,
    failed: bool,
}

fn widen_to(e: Expr, lanes: u16) -> Expr {
    if e.ty().lanes == lanes {
        e
    } else {
        Expr::broadcast(e, lanes)
    }
}

impl Widen {
    fn expr(&mut self, e: &Expr) -> Expr {
        stack::guard(|| {
            let n = self.lanes;
            match e.kind() {
                ExprKind::Var { name, .. } => self.vars.get(name).cloned().unwrap_or_else(|| e.clone()),
                ExprKind::IntImm(_) | ExprKind::FloatImm(_) => e.clone(),
                ExprKind::Let { name, value, body } => {
                    let v = self.expr(value);
                    if v.ty().is_vector() {
                        let old = self.vars.insert(name.clone(), Expr::var(v.ty(), name.clone()));
                        let b = self.expr(body);
                        match old {
                            Some(o) => self.vars.insert(name.clone(), o),
                            None => self.vars.remove(name),
                        };
                        Expr::let_in(name.clone(), v, b)
                    } else {
                        let b = self.expr(body);
                        Expr::let_in(name.clone(), v, b)
                    }
                }
                ExprKind::Ramp { .. } | ExprKind::Broadcast { .. } => {
                    self.failed = true;
                    e.clone()
                }
                _ => {
                    let mut any_vector = false;
                    let kids: Vec<Expr> = {
                        let mut v = Vec::new();
                        e.for_each_child(|c| v.push(c.clone()));
                        v.iter()
                            .map(|c| {
                                let w = self.expr(c);
                                any_vector |= w.ty().is_vector();
                                w
                            })
                            .collect()
                    };
                    if !any_vector {
                        let mut it = kids.into_iter();
                        return e.map_children(|_| it.next().unwrap());
                    }
                    let ty = e.ty().with_lanes(n);
                    match e.kind() {
                        ExprKind::Cast(_) => Expr::cast(ty, kids[0].clone()),
                        ExprKind::Not(_) => Expr::not(kids[0].clone()),
                        ExprKind::Binary(op, ..) => {
                            Expr::binary(*op, widen_to(kids[0].clone(), n), widen_to(kids[1].clone(), n))
                        }
                        ExprKind::Cmp(op, ..) => {
                            Expr::cmp(*op, widen_to(kids[0].clone(), n), widen_to(kids[1].clone(), n))
                        }
                        ExprKind::Select(..) => Expr::select(
                            widen_to(kids[0].clone(), n),
                            widen_to(kids[1].clone(), n),
                            widen_to(kids[2].clone(), n),
                        ),
                        ExprKind::Load { buffer, predicate, .. } => {
                            let index = widen_to(kids[0].clone(), n);
                            let pred = predicate.as_ref().map(|_| widen_to(kids[1].clone(), n));
                            Expr::load(e.ty().element(), buffer.clone(), index, pred)
                        }
                        ExprKind::Call { name, kind: kind @ CallKind::Intrinsic(_), .. } => Expr::make(
                            ty,
                            ExprKind::Call {
                                name: name.clone(),
                                args: kids.into_iter().map(|k| widen_to(k, n)).collect(),
                                kind: kind.clone(),
                            },
                        ),
                        _ => {
                            self.failed = true;
                            e.clone()
                        }
                    }
                }
            }
        })
    }

    fn stmt(&mut self, s: &Stmt, predicate: Option<&Expr>) -> Stmt {
        stack::guard(|| {
            let n = self.lanes;
            match s {
                Stmt::Store { buffer, value, index, predicate: p } => {
                    let v = self.expr(value);
                    let i = self.expr(index);
                    let mut pred = p.as_ref().map(|p| self.expr(p));
                    if let Some(g) = predicate {
                        pred = Some(match pred {
                            Some(q) => Expr::and(widen_to(q, n), g.clone()),
                            None => g.clone(),
                        });
                    }
                    if !v.ty().is_vector() && !i.ty().is_vector() && pred.is_none() {
                        return Stmt::Store { buffer: buffer.clone(), value: v, index: i, predicate: None };
                    }
                    let value = widen_to(v, n);
                    let value = match predicate {
                        Some(g) => predicate_loads(&value, g),
                        None => value,
                    };
                    Stmt::Store {
                        buffer: buffer.clone(),
                        value,
                        index: widen_to(i, n),
                        predicate: pred.map(|q| widen_to(q, n)),
                    }
                }
                Stmt::LetStmt { name, value, body } => {
                    let mut v = self.expr(value);
                    if let Some(g) = predicate {
                        v = predicate_loads(&v, g);
                    }
                    if v.ty().is_vector() {
                        let old = self.vars.insert(name.clone(), Expr::var(v.ty(), name.clone()));
                        let b = self.stmt(body, predicate);
                        match old {
                            Some(o) => self.vars.insert(name.clone(), o),
                            None => self.vars.remove(name),
                        };
                        Stmt::let_stmt(name.clone(), v, b)
                    } else {
                        Stmt::let_stmt(name.clone(), v, self.stmt(body, predicate))
                    }
                }
                Stmt::For { name, min, extent, kind: kind @ (ForKind::Serial | ForKind::Unrolled), body, .. } => {
                    // An inner loop with the same bounds in every lane (a reduction's taps,
                    // say) stays a scalar loop around the widened body: the lanes are
                    // independent, as for the statements of a block.
                    let (lo, ex) = (self.expr(min), self.expr(extent));
                    if lo.ty().is_vector() || ex.ty().is_vector() {
                        self.failed = true;
                        return s.clone();
                    }
                    let shadowed = self.vars.remove(name);
                    let b = self.stmt(body, predicate);
                    if let Some(o) = shadowed {
                        self.vars.insert(name.clone(), o);
                    }
                    Stmt::for_loop(name.clone(), lo, ex, *kind, b)
                }
                Stmt::Block(v) => Stmt::block(v.iter().map(|c| self.stmt(c, predicate)).collect()),
                Stmt::ProducerConsumer { name, is_producer, body } => Stmt::ProducerConsumer {
                    name: name.clone(),
                    is_producer: *is_producer,
                    body: Box::new(self.stmt(body, predicate)),
                },
                Stmt::IfThenElse { condition, then_case, else_case: None } => {
                    let c = self.expr(condition);
                    if c.ty().is_vector() {
                        if predicate.is_some() {
                            self.failed = true;
                            return s.clone();
                        }
                        self.stmt(then_case, Some(&c))
                    } else {
                        Stmt::if_then(c, self.stmt(then_case, predicate))
                    }
                }
                Stmt::Evaluate(e) => Stmt::Evaluate(self.expr(e)),
                _ => {
                    self.failed = true;
                    s.clone()
                }
            }
        })
    }
}

/// Adds `predicate` to every vector load in `e`, so masked lanes read nothing.
fn predicate_loads(e: &Expr, predicate: &Expr) -> Expr {
    stack::guard(|| match e.kind() {
        ExprKind::Load { buffer, index, predicate: p } if index.ty().is_vector() => {
            let index = predicate_loads(index, predicate);
            let pred = match p {
                Some(q) => Expr::and(q.clone(), predicate.clone()),
                None => predicate.clone(),
            };
            Expr::load(e.ty().element(), buffer.clone(), index, Some(pred))
        }
        _ => e.map_children(|c| predicate_loads(c, predicate)),
    })
}

struct Vectorize {
    error: Option<Error>,
}

impl Mutator for Vectorize {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        if let Stmt::For { name, min, extent, kind: ForKind::Vectorized, body, .. } = s {
            let body = self.mutate_stmt(body);
            let Some(n) = simplify(extent).as_int() else {
                self.error.get_or_insert(Error::Schedule(format!(
                    "vectorize: loop '{name}' has extent '{extent}', which is not a constant; vectorize with a constant factor"
                )));
                return s.clone();
            };
            if n > i64::from(crate::schedule::MAX_VECTOR_LANES) {
                self.error.get_or_insert(Error::Schedule(format!(
                    "vectorize: loop '{name}' has {n} iterations, over {}, the widest vector Halogen makes; split it by a smaller factor",
                    crate::schedule::MAX_VECTOR_LANES
                )));
                return s.clone();
            }
            if n <= 1 {
                return Stmt::for_loop(name.clone(), min.clone(), extent.clone(), ForKind::Serial, body);
            }
            let lanes = n as u16;
            let ramp = Expr::ramp(min.clone(), Expr::i32(1), lanes);
            let mut w = Widen { lanes, vars: HashMap::from([(name.clone(), ramp)]), failed: false };
            let out = w.stmt(&body, None);
            if w.failed {
                return Stmt::for_loop(name.clone(), min.clone(), extent.clone(), ForKind::Serial, body);
            }
            return out;
        }
        mutate_stmt_children(self, s)
    }
}

/// Runs the vectorization pass.
pub fn vectorize(s: Stmt) -> Result<Stmt> {
    let mut v = Vectorize { error: None };
    let out = v.mutate_stmt(&s);
    v.error.map_or(Ok(out), Err)
}
