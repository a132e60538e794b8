//! Fuse the loops of Funcs computed with each other (`f.compute_with(&g, v)`, Halide's
//! `compute_with`): `g`'s loops from the outermost down to `v` and as many of `f`'s become
//! one loop nest whose every iteration runs `g`'s part and then `f`'s.
//!
//! Runs after storage flattening, when each Func's loops have their final bounds and
//! storage. The environment (see [`fused_loop_count`]) has checked Halide's rules and put
//! `f` right after `g` in the realization order, so the statement holds
//!
//! ```text
//! produce g { G-loops }
//! consume g { [lets and allocation of f, checks] produce f { F-loops } consume f { rest } }
//! ```
//!
//! which becomes
//!
//! ```text
//! [lets and allocation of f, checks]
//! produce g { fused loops { if (inside g's loops) { g's body } produce f { if (inside f's loops) { f's body } } } }
//! consume g { consume f { rest } }
//! ```
//!
//! A fused loop covers both loops' ranges (an empty one adds nothing) and takes `g`'s
//! loop name; `f`'s loop name is a `let` of it, so `f`'s body and bounds read as before,
//! and each body runs only inside its own loops' ranges (where the two loops provably
//! have one range, the fused loop is that loop and needs no check). Nothing else moves:
//! `f`'s lets, checks and allocation depend on neither Func's values (the environment
//! checked that neither reads the other). A fused loop carries both loops' vector tails,
//! so specialize tails makes its clamp-free version where both Funcs' splits fit.

use crate::analysis::{free_vars, simplify, substitute_map};
use crate::error::{Error, Result};
use crate::ir::{mutate_stmt_children, stack, Expr, ExprKind, ForKind, Mutator, Name, Stmt, Type, VectorTail, Visitor};
use crate::lower::environment::{fused_loop_count, Environment};
use std::collections::HashMap;

/// How many times the lets a fused loop's bounds name are expanded to compare them.
const EXPAND_ROUNDS: usize = 6;

/// Runs the pass: every Func with a `compute_with` has its loops fused with its parent's.
pub fn fuse_compute_with(mut s: Stmt, env: &Environment) -> Result<Stmt> {
    for f in env.funcs.values() {
        let Some((parent, count)) = fused_loop_count(f, &env.funcs)? else { continue };
        let mut fuser = Fuser { parent: &parent, child: &f.name, count, done: false, error: None, lets: Vec::new() };
        s = fuser.mutate_stmt(&s);
        if let Some(e) = fuser.error {
            return Err(e);
        }
        if !fuser.done {
            return Err(Error::internal(
                "compute with",
                format!("found no producer of '{parent}' followed by one of '{}'", f.name),
            ));
        }
    }
    Ok(s)
}

/// Finds the block where `parent` is produced and fuses `child`'s loops into it.
struct Fuser<'a> {
    parent: &'a Name,
    child: &'a Name,
    count: usize,
    done: bool,
    error: Option<Error>,
    /// The lets around the statement being visited, outermost first.
    lets: Vec<(Name, Expr)>,
}

impl Mutator for Fuser<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        e.clone()
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| {
            if self.done || self.error.is_some() {
                return s.clone();
            }
            let parent = self.parent;
            if let Stmt::LetStmt { name, value, body } = s {
                self.lets.push((name.clone(), value.clone()));
                let body = self.mutate_stmt(body);
                self.lets.pop();
                return Stmt::LetStmt { name: name.clone(), value: value.clone(), body: Box::new(body) };
            }
            if let Stmt::Block(v) = s {
                let at = v.iter().position(
                    |c| matches!(c, Stmt::ProducerConsumer { name, is_producer: true, .. } if name == parent),
                );
                if let Some(i) = at {
                    if let Some(Stmt::ProducerConsumer { name, is_producer: false, .. }) = v.get(i + 1) {
                        if name == parent {
                            let mut v = v.clone();
                            let consume = v.remove(i + 1);
                            let produce = v.remove(i);
                            match fuse_pair(produce, consume, parent, self.child, self.count, &self.lets) {
                                Ok(fused) => v.insert(i, fused),
                                Err(e) => {
                                    self.error = Some(e);
                                    return s.clone();
                                }
                            }
                            self.done = true;
                            return Stmt::block(v);
                        }
                    }
                }
            }
            mutate_stmt_children(self, s)
        })
    }
}

/// A statement around `child`'s producer, with its body taken out.
enum Frame {
    /// A `let`, `allocate` (or other single-body statement) with an empty body.
    Wrap(Stmt),
    /// A block: the statements before and after the one that leads on.
    Block(Vec<Stmt>, Vec<Stmt>),
}

fn fuse_pair(
    produce: Stmt,
    consume: Stmt,
    parent: &Name,
    child: &Name,
    count: usize,
    lets: &[(Name, Expr)],
) -> Result<Stmt> {
    let (Stmt::ProducerConsumer { body: parent_loops, .. }, Stmt::ProducerConsumer { body: consumed, .. }) =
        (produce, consume)
    else {
        unreachable!("matched by the caller");
    };
    // Down from `consume parent` to `produce child`.
    let mut frames = Vec::new();
    let mut at = *consumed;
    let child_loops = loop {
        at = match at {
            Stmt::LetStmt { name, value, body } => {
                frames.push(Frame::Wrap(Stmt::LetStmt { name, value, body: Box::new(Stmt::no_op()) }));
                *body
            }
            Stmt::Allocate { name, ty, extents, body } => {
                frames.push(Frame::Wrap(Stmt::Allocate { name, ty, extents, body: Box::new(Stmt::no_op()) }));
                *body
            }
            Stmt::Block(mut v) => {
                let Some(i) = v
                    .iter()
                    .position(|c| matches!(c, Stmt::ProducerConsumer { name, is_producer: true, .. } if name == child))
                else {
                    // The statement that leads on is the last one (the lets and checks
                    // before it are the child's).
                    let Some(last) = v.pop() else { break None };
                    frames.push(Frame::Block(v, Vec::new()));
                    at = last;
                    continue;
                };
                let after = v.split_off(i + 1);
                let Some(Stmt::ProducerConsumer { body, .. }) = v.pop() else { unreachable!("found above") };
                frames.push(Frame::Block(v, after));
                break Some(*body);
            }
            _ => break None,
        };
    };
    let Some(child_loops) = child_loops else {
        return Err(Error::internal("compute with", format!("no producer of '{child}' where '{parent}' is consumed")));
    };
    for f in &frames {
        let reads = match f {
            Frame::Wrap(s) => reads_buffer(s, parent),
            Frame::Block(before, _) => before.iter().any(|s| reads_buffer(s, parent)),
        };
        if reads {
            return Err(Error::internal("compute with", format!("'{child}' is set up with values of '{parent}'")));
        }
    }
    let (p_spine, p_body) = spine(*parent_loops, count, parent)?;
    let (c_spine, c_body) = spine(child_loops, count, child)?;
    // The child's lets before its producer are in scope of its loops too.
    let mut scope = lets.to_vec();
    for f in &frames {
        if let Frame::Wrap(Stmt::LetStmt { name, value, .. }) = f {
            scope.push((name.clone(), value.clone()));
        }
    }
    let fused = fuse_loops(&p_spine, &c_spine, p_body, c_body, child, scope);
    let fused = Stmt::ProducerConsumer { name: parent.clone(), is_producer: true, body: Box::new(fused) };
    // Back up: the innermost block holds the fused producer and then `consume parent`
    // around what followed the child's producer; the frames outside wrap it as before.
    let Some(Frame::Block(before, after)) = frames.pop() else {
        unreachable!("the child's producer is found in a block");
    };
    let consumer =
        Stmt::ProducerConsumer { name: parent.clone(), is_producer: false, body: Box::new(Stmt::block(after)) };
    let mut s = Stmt::block(before.into_iter().chain([fused, consumer]).collect());
    for f in frames.into_iter().rev() {
        s = match f {
            Frame::Wrap(w) => set_body(w, s),
            Frame::Block(before, after) => Stmt::block(before.into_iter().chain([s]).chain(after).collect()),
        };
    }
    Ok(s)
}

/// `s` (a `let` or `allocate` with an empty body) around `body`.
fn set_body(s: Stmt, body: Stmt) -> Stmt {
    match s {
        Stmt::LetStmt { name, value, .. } => Stmt::LetStmt { name, value, body: Box::new(body) },
        Stmt::Allocate { name, ty, extents, .. } => Stmt::Allocate { name, ty, extents, body: Box::new(body) },
        other => other,
    }
}

/// One step down a Func's loop nest: a loop or a `let` between loops.
enum Step {
    Loop { name: Name, min: Expr, extent: Expr, kind: ForKind, tails: Vec<VectorTail> },
    Let { name: Name, value: Expr },
}

/// The outermost `count` loops of `s` (and the lets between them), and the body of the
/// last of them.
fn spine(mut s: Stmt, count: usize, func: &Name) -> Result<(Vec<Step>, Stmt)> {
    let mut steps = Vec::new();
    let mut loops = 0;
    while loops < count {
        s = match s {
            Stmt::For { name, min, extent, kind, tails, body } => {
                steps.push(Step::Loop { name, min, extent, kind, tails });
                loops += 1;
                *body
            }
            Stmt::LetStmt { name, value, body } => {
                steps.push(Step::Let { name, value });
                *body
            }
            _ => {
                return Err(Error::internal(
                    "compute with",
                    format!("'{func}' has {loops} loops where {count} were to be fused"),
                ))
            }
        };
    }
    Ok((steps, s))
}

/// The fused loop nest of `parent`'s steps and `child`'s, with each body inside its own
/// loops' ranges. `scope` holds the lets around the two nests: where two loops provably
/// have one range (the same bounds once the lets are expanded), the fused loop is that
/// loop and neither body needs a check for it.
fn fuse_loops(p: &[Step], c: &[Step], p_body: Stmt, c_body: Stmt, child: &Name, mut scope: Vec<(Name, Expr)>) -> Stmt {
    // The steps of each level: the lets before loop i, then loop i.
    type Level = (Vec<(Name, Expr)>, (Name, Expr, Expr, ForKind, Vec<VectorTail>));
    let levels = |steps: &[Step]| -> Vec<Level> {
        let mut out = Vec::new();
        let mut lets = Vec::new();
        for s in steps {
            match s {
                Step::Let { name, value } => lets.push((name.clone(), value.clone())),
                Step::Loop { name, min, extent, kind, tails } => out.push((
                    std::mem::take(&mut lets),
                    (name.clone(), min.clone(), extent.clone(), *kind, tails.clone()),
                )),
            }
        }
        out
    };
    let (pl, cl) = (levels(p), levels(c));
    let expand = |scope: &[(Name, Expr)], e: &Expr| {
        // Only the lets `e` names, a few rounds deep: enough for bounds that are lets of
        // the same values, without expanding a whole pipeline's lets.
        let values: HashMap<&Name, &Expr> = scope.iter().map(|(n, v)| (n, v)).collect();
        let mut e = e.clone();
        for _ in 0..EXPAND_ROUNDS {
            let named: HashMap<Name, Expr> =
                free_vars(&e).into_iter().filter_map(|n| values.get(&n).map(|v| (n.clone(), (*v).clone()))).collect();
            if named.is_empty() {
                break;
            }
            e = substitute_map(&named, &e);
        }
        simplify(&e)
    };
    let within = |min: &Expr, extent: &Expr, v: &Name| {
        let v = Expr::var(Type::i32(), v.clone());
        Expr::and(Expr::le(min.clone(), v.clone()), Expr::lt(v, Expr::add(min.clone(), extent.clone())))
    };
    let mut p_guard: Vec<Expr> = Vec::new();
    let mut c_guard: Vec<Expr> = Vec::new();
    // (lets, fused loop name, min, extent, kind, alias of the child's loop) per level.
    let mut fused = Vec::new();
    for ((p_lets, (pn, pm, pe, kind, p_tails)), (c_lets, (cn, cm, ce, _, c_tails))) in pl.into_iter().zip(cl) {
        scope.extend(p_lets.iter().cloned());
        scope.extend(c_lets.iter().cloned());
        let same = expand(&scope, &pm) == expand(&scope, &cm) && expand(&scope, &pe) == expand(&scope, &ce);
        let (min, extent) = if same {
            (pm.clone(), pe.clone())
        } else {
            p_guard.push(within(&pm, &pe, &pn));
            c_guard.push(within(&cm, &ce, &pn));
            // An empty loop adds nothing to the range.
            let zero = Expr::i32(0);
            let (p_empty, c_empty) = (Expr::le(pe.clone(), zero.clone()), Expr::le(ce.clone(), zero));
            let (p_end, c_end) = (Expr::add(pm.clone(), pe.clone()), Expr::add(cm.clone(), ce.clone()));
            let min = Expr::select(
                p_empty.clone(),
                cm.clone(),
                Expr::select(c_empty.clone(), pm.clone(), Expr::min(pm.clone(), cm.clone())),
            );
            let end =
                Expr::select(p_empty, c_end.clone(), Expr::select(c_empty, p_end.clone(), Expr::max(p_end, c_end)));
            (min.clone(), Expr::sub(end, min))
        };
        scope.push((cn.clone(), Expr::var(Type::i32(), pn.clone())));
        let lets: Vec<(Name, Expr)> = p_lets.into_iter().chain(c_lets).collect();
        // Both Funcs' vector tails: where all of them fit, neither needs its clamps.
        let tails: Vec<VectorTail> = p_tails.into_iter().chain(c_tails).collect();
        fused.push((lets, pn, min, extent, kind, tails, cn));
    }
    let guarded = |guard: Vec<Expr>, body: Stmt| match guard.into_iter().reduce(Expr::and) {
        Some(g) => Stmt::if_then(g, body),
        None => body,
    };
    let mut s = Stmt::block(vec![
        guarded(p_guard, p_body),
        Stmt::ProducerConsumer { name: child.clone(), is_producer: true, body: Box::new(guarded(c_guard, c_body)) },
    ]);
    // From the inside out: the child's loop variable is the fused one.
    for (lets, name, min, extent, kind, tails, alias) in fused.into_iter().rev() {
        s = Stmt::let_stmt(alias, Expr::var(Type::i32(), name.clone()), s);
        s = Stmt::For { name, min, extent, kind, tails, body: Box::new(s) };
        for (n, v) in lets.into_iter().rev() {
            s = Stmt::let_stmt(n, v, s);
        }
    }
    s
}

/// Whether `s` loads from `buffer`.
fn reads_buffer(s: &Stmt, buffer: &Name) -> bool {
    struct Reads<'a>(&'a Name, bool);
    impl Visitor for Reads<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Load { buffer, .. } = e.kind() {
                if buffer == self.0 {
                    self.1 = true;
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut r = Reads(buffer, false);
    r.visit_stmt(s);
    r.1
}
