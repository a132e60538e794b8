//! Pass 3: bounds inference. For each Func, the region its consumers need at its compute
//! site (symbolic interval arithmetic over the consumer loops, Halide 2012 sec. 5.2)
//! becomes `let` bindings of each stage's loop bounds; the storage of each realization
//! covers every iteration between its store and compute levels; inputs and outputs get
//! checks so a too-small buffer is an error before any pixel is touched.
//!
//! The bound lets of every Func computed at one loop level go at the top of that loop's
//! body (or of the whole pipeline, for root), consumers first. A producer's bounds then
//! name its consumers' bound symbols (`f.s0.x.min = g.s0.x.min - 1`) instead of repeating
//! their expressions, so the lets stay small however deep the pipeline is: expanded, the
//! bounds of a pyramid's coarse levels grow exponentially with the number of levels.

use super::boxes::{touched_only, touched_with_products, union_region, Region, Unbounded};
use super::distribute;
use super::environment::{Environment, FuncInfo};
use super::schedule_functions::stage_pure_vars;
use super::LowerCtx;
use crate::analysis::widen::widen_to_i64_replacing;
use crate::analysis::{bounds_of_expr_in_scope, simplify, widen_to_i64, Interval, Scope};
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{
    mutate_stmt_children, BinOp, CallKind, Expr, ExprKind, MsgPart, Mutator, Name, Range, Stmt, Type, COORDINATE_LIMIT,
};
use std::collections::HashMap;

fn i32_param(name: String) -> Expr {
    Expr::param(Type::i32(), name)
}

fn i32_var(name: String) -> Expr {
    Expr::var(Type::i32(), name)
}

/// The region covered by a buffer's `name.min.d` / `name.extent.d` symbols.
pub fn buffer_region(name: &str, dims: usize) -> Region {
    (0..dims)
        .map(|d| {
            let min = i32_param(format!("{name}.min.{d}"));
            let max = Expr::sub(Expr::add(min.clone(), i32_param(format!("{name}.extent.{d}"))), Expr::i32(1));
            Interval { min: Some(min), max: Some(max) }
        })
        .collect()
}

fn text(s: impl Into<String>) -> MsgPart {
    MsgPart::Text(s.into())
}

fn value(e: &Expr) -> MsgPart {
    MsgPart::Value(e.clone())
}

/// `inner ⊆ outer` along one dimension, as an assertion with a message. Both sides are
/// computed in 64 bits, so that a region whose ends wrap around in 32 bits fails the
/// check instead of passing it (see [`widen_to_i64`]).
fn containment_assert(
    inner: (&Expr, &Expr),
    outer: (&Expr, &Expr),
    intro: String,
    inner_word: &str,
    outer_word: &str,
) -> Stmt {
    let (imin, imax) = (widen_to_i64(inner.0), widen_to_i64(inner.1));
    let (omin, omax) = (widen_to_i64(outer.0), widen_to_i64(outer.1));
    // An empty region (max < min) needs nothing.
    let inside = Expr::and(Expr::le(omin.clone(), imin.clone()), Expr::le(imax.clone(), omax.clone()));
    let cond = Expr::or(Expr::lt(imax.clone(), imin.clone()), inside);
    let lead = if inner_word.is_empty() { intro } else { format!("{intro}{inner_word} ") };
    Stmt::Assert {
        condition: simplify(&cond),
        message: vec![
            text(format!("{lead}[")),
            value(&simplify(&imin)),
            text(", "),
            value(&simplify(&imax)),
            text(format!("] but {outer_word} [")),
            value(&simplify(&omin)),
            text(", "),
            value(&simplify(&omax)),
            text("]"),
        ],
    }
}

/// The check that `region` lies within the coordinates Halogen computes with
/// ([`COORDINATE_LIMIT`]), in 64 bits; `what(d)` starts the message for dimension `d` and
/// `why` ends it. A consumer that reaches far (`f(x * 65536)`) gives its producer bounds
/// that wrap in 32 bits, and a buffer placed near `i32::MAX` gives loop ends that do: the
/// loops, allocations and input checks built from them would be wrong.
///
/// `values` gives names in the region their values in 64 bits, computed from the names
/// they use (the root's bound lets: see `input_checks`).
fn coordinate_limit_checks(
    what: impl Fn(usize) -> String,
    region: &Region,
    why: &str,
    values: &HashMap<Name, Expr>,
) -> Vec<Stmt> {
    let k = |v: i64| Expr::int_imm(Type::i64(), v);
    let mut checks = Vec::new();
    for (d, iv) in region.iter().enumerate() {
        let (Some(lo), Some(hi)) = (&iv.min, &iv.max) else { continue };
        let (lo, hi) = (widen_to_i64_replacing(lo, values), widen_to_i64_replacing(hi, values));
        let inside =
            Expr::and(Expr::le(k(-COORDINATE_LIMIT), lo.clone()), Expr::le(hi.clone(), k(COORDINATE_LIMIT - 1)));
        let cond = simplify(&Expr::or(Expr::lt(hi.clone(), lo.clone()), inside));
        if cond.is_true() {
            continue;
        }
        checks.push(Stmt::Assert {
            condition: cond,
            message: vec![
                text(format!("{} [", what(d))),
                value(&simplify(&lo)),
                text(", "),
                value(&simplify(&hi)),
                text(format!(
                    "], outside the coordinates Halogen computes with, [{}, {}]{why}",
                    -COORDINATE_LIMIT,
                    COORDINATE_LIMIT - 1
                )),
            ],
        });
    }
    checks
}

fn unbounded_error(u: &Unbounded, what: &str) -> Error {
    let by = u.caller.as_ref().map_or(String::new(), |c| format!(" (in Func '{c}')"));
    Error::Bounds(format!(
        "{what} '{}' is accessed in dimension {} at index '{}'{by}, which the compiler cannot bound; clamp the index (clamp(e, lo, hi)) or give it a narrower type",
        u.callee, u.dim, u.index
    ))
}

fn simplify_region(r: &Region) -> Region {
    r.iter().map(|iv| Interval { min: iv.min.as_ref().map(simplify), max: iv.max.as_ref().map(simplify) }).collect()
}

fn bounded(r: &Region) -> bool {
    r.iter().all(|iv| iv.min.is_some() && iv.max.is_some())
}

fn wrap_lets(lets: &[(Name, Expr)], body: Stmt) -> Stmt {
    lets.iter().rev().fold(body, |b, (n, v)| Stmt::let_stmt(n.clone(), v.clone(), b))
}

/// The top-level bound symbols in `frame` that depend on the rank (not the global
/// versions).
fn local_symbols(frame: &[(Name, Expr)]) -> Vec<Name> {
    frame.iter().map(|(n, _)| n.clone()).filter(|n| !n.ends_with(".global")).collect()
}

/// The global region of a distributed output, from the run-time parameters
/// `name.global.min.d` and `name.global.extent.d` (the shape of its distributed buffer).
pub fn global_output_region(name: &str, dims: usize) -> Region {
    (0..dims)
        .map(|d| {
            let param = |what: &str| i32_param(distribute::global_region_param(name, what, d).to_string());
            let min = param("min");
            let max = Expr::sub(Expr::add(min.clone(), param("extent")), Expr::i32(1));
            Interval { min: Some(min), max: Some(max) }
        })
        .collect()
}

/// Computes the stage bounds of `f` at its compute site: appends their lets to `frame`
/// (the lets of the compute level) and returns the pair with its checks.
fn process_pair(
    f: &FuncInfo,
    produce: Stmt,
    consume: Option<Stmt>,
    ctx: &mut Inference,
    frame: &mut Vec<(Name, Expr)>,
) -> Result<Stmt> {
    let name = &f.name;
    let dims = f.args.len();
    let mut asserts = Vec::new();

    // The region the consumers need.
    let mut required: Region = match &consume {
        None => buffer_region(name, dims),
        Some(c) => {
            let t = touched_only(c, &Scope::new(), name);
            if let Some(u) = t.unbounded.iter().find(|u| u.callee == *name) {
                return Err(unbounded_error(u, "Func"));
            }
            match t.calls.get(name) {
                Some(r) => simplify_region(r),
                None => {
                    return Err(Error::internal(
                        "bounds_inference",
                        format!("Func '{name}' is realized but never called"),
                    ))
                }
            }
        }
    };
    if f.is_output && consume.is_some() {
        // An output read by a later output is computed over its buffer, which must hold
        // what the reader needs.
        let buf = buffer_region(name, dims);
        for d in 0..dims {
            let (rmin, rmax) = (required[d].min.as_ref().unwrap(), required[d].max.as_ref().unwrap());
            asserts.push(containment_assert(
                (rmin, rmax),
                (buf[d].min.as_ref().unwrap(), buf[d].max.as_ref().unwrap()),
                format!("Output buffer '{name}' is too small: dimension {d} "),
                "needs",
                "the buffer covers",
            ));
        }
        required = buf;
    }
    // On the ranks of a distributed run, a root Func covers the region all ranks need
    // together (a distributed Func then computes its slice of it), unless it is
    // `compute_rank`; what this rank's consumers need is kept for its storage and its
    // border exchange.
    let at_root = ctx.distributed && ctx.depth == 0;
    let is_distributed = distribute::is_distributed(f);
    if is_distributed && !at_root {
        return Err(Error::Schedule(format!(
            "Func '{name}' is distributed but computed inside another Func's loops; a distributed Func is \
             computed at the root (compute_root)"
        )));
    }
    let symbols: Vec<Name> = if at_root { local_symbols(frame) } else { Vec::new() };
    let needed = required.clone();
    if at_root {
        if f.is_output {
            if is_distributed {
                required = global_output_region(name, dims);
            }
        } else if is_distributed || !f.schedule.compute_rank {
            required = required
                .iter()
                .map(|iv| Interval {
                    min: iv.min.as_ref().map(|e| distribute::globalize(e, &symbols)),
                    max: iv.max.as_ref().map(|e| distribute::globalize(e, &symbols)),
                })
                .collect();
        }
    }
    for b in &f.schedule.bounds {
        let Some(d) = f.args.iter().position(|a| *a == b.var) else {
            return Err(Error::Schedule(format!(
                "Func '{name}': bound({}): '{}' is not one of its pure variables {:?}",
                b.var, b.var, f.args
            )));
        };
        let lo = b.min.clone();
        let hi = simplify(&Expr::sub(Expr::add(b.min.clone(), b.extent.clone()), Expr::i32(1)));
        let (rmin, rmax) = (required[d].min.clone().unwrap(), required[d].max.clone().unwrap());
        let intro = format!("Func '{name}' is bounded by bound({}, ..) but ", b.var);
        if f.is_output {
            let cond = simplify(&Expr::and(Expr::eq_(rmin.clone(), lo.clone()), Expr::eq_(rmax.clone(), hi.clone())));
            asserts.push(Stmt::Assert {
                condition: cond,
                message: vec![
                    text(format!("Output buffer '{name}' dimension {d} covers [")),
                    value(&rmin),
                    text(", "),
                    value(&rmax),
                    text(format!("] but bound({}, ..) fixes it to [", b.var)),
                    value(&lo),
                    text(", "),
                    value(&hi),
                    text("]"),
                ],
            });
        } else {
            asserts.push(containment_assert((&rmin, &rmax), (&lo, &hi), intro, "its consumers need", "the bound is"));
        }
        required[d] = Interval { min: Some(lo), max: Some(hi) };
    }

    // Stage bounds, last stage first: a stage covers what the consumers need and
    // everything the later stages touch.
    let stages: Vec<Stmt> = match produce {
        Stmt::ProducerConsumer { ref body, .. } => match &**body {
            Stmt::Block(v) if f.stages.len() > 1 => v.clone(),
            s => vec![s.clone()],
        },
        _ => return Err(Error::internal("bounds_inference", format!("expected the producer of '{name}'"))),
    };
    if stages.len() != f.stages.len() {
        return Err(Error::internal(
            "bounds_inference",
            format!("Func '{name}' has {} stages but its producer has {}", f.stages.len(), stages.len()),
        ));
    }
    let mut lets: Vec<(Name, Expr)> = Vec::new();
    let mut later: Option<Region> = None;
    // The updates whose reduction domain is distributed, with the box their all-reduce
    // combines.
    let mut reductions: Vec<(usize, distribute::DistributedReduction, Region)> = Vec::new();
    // What the stages compute and touch, with each pure dimension named by the stage's
    // bound symbols rather than their values: the same region as `later`, but small
    // however deep the lets of the consumers go (for the coordinate checks).
    let mut computed_in_symbols: Option<Region> = None;
    for k in (0..f.stages.len()).rev() {
        let need = match &later {
            Some(l) => simplify_region(&union_region(&required, l)),
            None => required.clone(),
        };
        let prefix = super::schedule_functions::stage_prefix(name, k);
        let mut stage_lets = Vec::new();
        for (d, v) in stage_pure_vars(f, k) {
            let (Some(lo), Some(hi)) = (&need[d].min, &need[d].max) else {
                return Err(Error::Bounds(format!(
                    "Func '{name}': the region of dimension {d} ('{v}') cannot be bounded"
                )));
            };
            stage_lets.push((Name::from(format!("{prefix}{v}.min")), lo.clone()));
            stage_lets.push((Name::from(format!("{prefix}{v}.max")), hi.clone()));
        }
        let t = touched_only(&wrap_lets(&stage_lets, stages[k].clone()), &Scope::new(), name);
        if let Some(u) = t.unbounded.iter().find(|u| u.callee == *name) {
            let what = if k == 0 { format!("Func '{name}'") } else { format!("Func '{name}' update {}", k - 1) };
            return Err(Error::Bounds(format!(
                "{what} accesses itself in dimension {} at index '{}', which the compiler cannot bound; clamp the index or give it a narrower type",
                u.dim, u.index
            )));
        }
        let mut touched_k = t.provides.get(name).cloned();
        if let Some(c) = t.calls.get(name) {
            touched_k = Some(match touched_k {
                Some(p) => union_region(&p, c),
                None => c.clone(),
            });
        }
        if let Some(red) = distribute::reduction(f, k)? {
            if !at_root {
                return Err(Error::Schedule(format!(
                    "Func '{name}' update {}: its reduction domain is distributed but the Func is computed inside \
                     another Func's loops; a distributed reduction is computed at the root (compute_root)",
                    k - 1
                )));
            }
            // Every rank writes within what all the ranks' slices write together: the box
            // the all-reduce combines, which the earlier stages and the storage cover.
            let Some(tk) = touched_k.as_mut().filter(|tk| bounded(tk)) else {
                return Err(Error::Bounds(format!(
                    "Func '{name}' update {}: the region its distributed reduction writes cannot be bounded",
                    k - 1
                )));
            };
            *tk = simplify_region(
                &tk.iter()
                    .map(|iv| Interval {
                        min: iv.min.as_ref().map(|e| distribute::globalize(e, &symbols)),
                        max: iv.max.as_ref().map(|e| distribute::globalize(e, &symbols)),
                    })
                    .collect::<Vec<_>>(),
            );
            reductions.push((k, red, tk.clone()));
        }
        if let Some(tk) = touched_k {
            if !bounded(&tk) {
                return Err(Error::Bounds(format!("Func '{name}': the region written by stage {k} cannot be bounded")));
            }
            let mut in_symbols = tk.clone();
            for (d, v) in stage_pure_vars(f, k) {
                in_symbols[d] = Interval {
                    min: Some(i32_var(format!("{prefix}{v}.min"))),
                    max: Some(i32_var(format!("{prefix}{v}.max"))),
                };
            }
            computed_in_symbols = Some(match computed_in_symbols {
                Some(c) => union_region(&c, &in_symbols),
                None => in_symbols,
            });
            later = Some(match later {
                Some(l) => union_region(&l, &tk),
                None => tk,
            });
        }
        let mut all = stage_lets;
        all.append(&mut lets);
        lets = all;
    }
    let owned = match (&later, is_distributed && at_root && consume.is_some()) {
        (Some(computed), true) => {
            let pure = stage_pure_vars(f, 0);
            let region = |d: usize| {
                let v = &pure.iter().find(|(pd, _)| *pd == d).expect("every dimension has a pure variable").1;
                let prefix = super::schedule_functions::stage_prefix(name, 0);
                (i32_var(format!("{prefix}{v}.min")), i32_var(format!("{prefix}{v}.max")))
            };
            Some(distribute::owned_region(f, &simplify_region(computed), region)?)
        }
        _ => None,
    };
    let mut realized = simplify_region(&later.unwrap_or_else(|| required.clone()));
    if at_root && is_distributed && !f.is_output {
        // Storage for this rank's slice and for what it receives.
        realized = simplify_region(&union_region(&realized, &needed));
    }
    if f.is_output {
        let buf = buffer_region(name, dims);
        for d in 0..dims {
            let (tmin, tmax) = (realized[d].min.as_ref().unwrap(), realized[d].max.as_ref().unwrap());
            let (bmin, bmax) = (buf[d].min.as_ref().unwrap(), buf[d].max.as_ref().unwrap());
            asserts.push(containment_assert(
                (tmin, tmax),
                (bmin, bmax),
                format!("Output buffer '{name}' dimension {d}: the pipeline writes "),
                "",
                "the buffer covers",
            ));
        }
    }
    if ctx.depth == 0 {
        ctx.root_regions.push((name.clone(), computed_in_symbols.unwrap_or_else(|| required.clone())));
    }
    ctx.realized.insert(name.clone(), realized);

    if at_root {
        // The global version of each bound, for the Funcs computed before this one.
        let globals: Vec<(Name, Expr)> =
            lets.iter().map(|(n, v)| (distribute::global_name(n), distribute::globalize(v, &symbols))).collect();
        lets.extend(globals);
    }
    let produce = match owned {
        Some(owned) => {
            let mut in_scope: Vec<(Name, Expr)> = frame.clone();
            in_scope.extend(lets.iter().cloned());
            in_scope.retain(|(n, _)| !n.ends_with(".global"));
            let exchange = distribute::border_exchange(f, &simplify_region(&owned), &needed, &in_scope);
            match produce {
                Stmt::ProducerConsumer { name, is_producer, body } => {
                    Stmt::ProducerConsumer { name, is_producer, body: Box::new(Stmt::Block(vec![*body, exchange])) }
                }
                other => other,
            }
        }
        _ => produce,
    };
    let produce = if reductions.is_empty() { produce } else { with_all_reduces(f, produce, &reductions)? };
    let mut body = vec![produce];
    if let Some(c) = consume {
        body.push(c);
    }
    let pair = Stmt::Block(body);
    let mut inner = vec![];
    inner.extend(asserts);
    inner.push(pair);
    frame.extend(lets);
    Ok(if inner.len() == 1 { inner.pop().unwrap() } else { Stmt::Block(inner) })
}

/// Wraps `body` in `lets`, below the lets it already starts with (a loop body may begin by
/// defining names the bounds use).
fn insert_lets(lets: Vec<(Name, Expr)>, body: Stmt) -> Stmt {
    stack::guard(|| match body {
        Stmt::LetStmt { name, value, body } => Stmt::LetStmt { name, value, body: Box::new(insert_lets(lets, *body)) },
        body => wrap_lets(&lets, body),
    })
}

/// Infers the bounds of every pair in `s`; `frame` collects the lets of the Funcs computed
/// at the level `s` belongs to.
fn infer(s: Stmt, ctx: &mut Inference, frame: &mut Vec<(Name, Expr)>) -> Result<Stmt> {
    stack::guard(|| {
        match s {
            Stmt::Block(v) => {
                // An output's producer is paired with the consumer that may follow it (a
                // later output reading it) below, so here only its body is inferred.
                let v = v
                    .into_iter()
                    .map(|c| match c {
                        Stmt::ProducerConsumer { name, is_producer: true, body }
                            if ctx.env.funcs.get(&name).is_some_and(|f| f.is_output) =>
                        {
                            Ok(Stmt::ProducerConsumer {
                                name,
                                is_producer: true,
                                body: Box::new(infer(*body, ctx, frame)?),
                            })
                        }
                        c => infer(c, ctx, frame),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let mut out = Vec::with_capacity(v.len());
                let mut it = v.into_iter().peekable();
                while let Some(c) = it.next() {
                    if let Stmt::ProducerConsumer { name, is_producer: true, .. } = &c {
                        let name = name.clone();
                        let follows = matches!(it.peek(), Some(Stmt::ProducerConsumer { name: n, is_producer: false, .. }) if *n == name);
                        let f = ctx.env.funcs[&name].clone();
                        if follows {
                            let consume = it.next();
                            out.push(process_pair(&f, c, consume, ctx, frame)?);
                            continue;
                        }
                        if f.is_output {
                            out.push(process_pair(&f, c, None, ctx, frame)?);
                            continue;
                        }
                    }
                    out.push(c);
                }
                Ok(Stmt::Block(out))
            }
            Stmt::ProducerConsumer { ref name, is_producer: true, .. }
                if ctx.env.funcs.get(name).is_some_and(|f| f.is_output) =>
            {
                let f = ctx.env.funcs[name].clone();
                let produce = match s {
                    Stmt::ProducerConsumer { name, is_producer, body } => {
                        Stmt::ProducerConsumer { name, is_producer, body: Box::new(infer(*body, ctx, frame)?) }
                    }
                    _ => unreachable!(),
                };
                process_pair(&f, produce, None, ctx, frame)
            }
            Stmt::LetStmt { name, value, body } => {
                Ok(Stmt::LetStmt { name, value, body: Box::new(infer(*body, ctx, frame)?) })
            }
            Stmt::For { name, min, extent, kind, tails, body } => {
                // A new compute level: the Funcs computed here get their lets at its top.
                let mut inner = Vec::new();
                ctx.depth += 1;
                let body = infer(*body, ctx, &mut inner);
                ctx.depth -= 1;
                let body = body?;
                Ok(Stmt::For { name, min, extent, kind, tails, body: Box::new(insert_lets(inner, body)) })
            }
            Stmt::ProducerConsumer { name, is_producer, body } => {
                Ok(Stmt::ProducerConsumer { name, is_producer, body: Box::new(infer(*body, ctx, frame)?) })
            }
            Stmt::Realize { name, types, bounds, fold, body } => {
                Ok(Stmt::Realize { name, types, bounds, fold, body: Box::new(infer(*body, ctx, frame)?) })
            }
            Stmt::IfThenElse { condition, then_case, else_case } => Ok(Stmt::IfThenElse {
                condition,
                then_case: Box::new(infer(*then_case, ctx, frame)?),
                else_case: match else_case {
                    Some(e) => Some(Box::new(infer(*e, ctx, frame)?)),
                    None => None,
                },
            }),
            other => Ok(other),
        }
    })
}

/// The scope (ranges of loops and lets) from the top of `s` down to the block that
/// produces `f`.
pub fn scope_to_producer(s: &Stmt, f: &Name, scope: &Scope) -> Option<Scope> {
    stack::guard(|| match s {
        Stmt::LetStmt { name, value, body } => {
            let mut inner = scope.clone();
            inner.insert(name.clone(), bounds_of_expr_in_scope(value, scope));
            scope_to_producer(body, f, &inner)
        }
        Stmt::For { name, min, extent, body, .. } => {
            let lo = bounds_of_expr_in_scope(min, scope);
            let last = simplify(&Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::i32(1)));
            let hi = bounds_of_expr_in_scope(&last, scope);
            let mut inner = scope.clone();
            inner.insert(name.clone(), Interval { min: lo.min, max: hi.max });
            scope_to_producer(body, f, &inner)
        }
        Stmt::ProducerConsumer { name, is_producer: true, .. } if name == f => Some(scope.clone()),
        Stmt::Block(v) => v.iter().find_map(|c| scope_to_producer(c, f, scope)),
        Stmt::ProducerConsumer { body, .. } | Stmt::Realize { body, .. } | Stmt::Allocate { body, .. } => {
            scope_to_producer(body, f, scope)
        }
        Stmt::IfThenElse { then_case, else_case, .. } => scope_to_producer(then_case, f, scope)
            .or_else(|| else_case.as_ref().and_then(|e| scope_to_producer(e, f, scope))),
        _ => None,
    })
}

fn fill_realize_bounds(s: Stmt, ctx: &Inference) -> Result<Stmt> {
    stack::guard(|| match s {
        Stmt::Realize { name, types, fold, body, .. } => {
            let scope = scope_to_producer(&body, &name, &Scope::new()).ok_or_else(|| {
                Error::internal("bounds_inference", format!("no producer of '{name}' inside its realization"))
            })?;
            let region = &ctx.realized[&name];
            let mut bounds = Vec::new();
            for (d, iv) in region.iter().enumerate() {
                let lo = iv.min.as_ref().map(|m| bounds_of_expr_in_scope(m, &scope).min);
                let hi = iv.max.as_ref().map(|m| bounds_of_expr_in_scope(m, &scope).max);
                let (Some(Some(lo)), Some(Some(hi))) = (lo, hi) else {
                    return Err(Error::Bounds(format!("Func '{name}': the storage of dimension {d} cannot be bounded over the loops between its store and compute levels")));
                };
                let lo = simplify(&lo);
                let mut extent = Expr::add(Expr::sub(hi, lo.clone()), Expr::i32(1));
                if ctx.distributed {
                    // A rank may have nothing of a Func to compute or to receive.
                    extent = Expr::max(extent, Expr::i32(0));
                }
                let extent = simplify(&extent);
                bounds.push(Range::new(lo, extent));
            }
            let body = fill_realize_bounds(*body, ctx)?;
            Ok(Stmt::Realize { name, types, bounds, fold, body: Box::new(body) })
        }
        Stmt::LetStmt { name, value, body } => {
            Ok(Stmt::LetStmt { name, value, body: Box::new(fill_realize_bounds(*body, ctx)?) })
        }
        Stmt::For { name, min, extent, kind, tails, body } => {
            Ok(Stmt::For { name, min, extent, kind, tails, body: Box::new(fill_realize_bounds(*body, ctx)?) })
        }
        Stmt::ProducerConsumer { name, is_producer, body } => {
            Ok(Stmt::ProducerConsumer { name, is_producer, body: Box::new(fill_realize_bounds(*body, ctx)?) })
        }
        Stmt::Block(v) => Ok(Stmt::Block(v.into_iter().map(|c| fill_realize_bounds(c, ctx)).collect::<Result<_>>()?)),
        Stmt::IfThenElse { condition, then_case, else_case } => Ok(Stmt::IfThenElse {
            condition,
            then_case: Box::new(fill_realize_bounds(*then_case, ctx)?),
            else_case: match else_case {
                Some(e) => Some(Box::new(fill_realize_bounds(*e, ctx)?)),
                None => None,
            },
        }),
        other => Ok(other),
    })
}

/// Checks, before anything runs, that every input image covers what the pipeline reads.
fn input_checks(s: &Stmt, ctx: &Inference, root: &[(Name, Expr)]) -> Result<Vec<Stmt>> {
    let t = touched_with_products(s, &Scope::new());
    let mut checks = Vec::new();
    // In the order of the names as the generated code shows them (without the counters of
    // generated names): hash maps iterate in an order that changes from one run to the
    // next, and the same pipeline must give the same code, or the JIT cache misses it.
    let order = |n: &Name| (crate::ir::without_counters(n).into_owned(), n.clone());
    let mut funcs: Vec<_> = ctx.env.funcs.iter().collect();
    funcs.sort_by_cached_key(|(n, _)| order(n));
    let mut calls: Vec<_> = t.calls.iter().collect();
    calls.sort_by_cached_key(|(n, _)| order(n));
    let mut images: Vec<_> = ctx.env.images.iter().collect();
    images.sort_by_cached_key(|(n, _)| order(n));
    // Every region first: a region out of range is the cause of any input check that
    // would fail after it.
    // Buffers are checked against the limit when bound from Rust; these checks keep the
    // promise for code called from C.
    let none = HashMap::new();
    let needed_why = ": a coordinate expression of its consumers reaches too far";
    for &(f, info) in funcs.iter().filter(|(_, info)| info.is_output) {
        let what = |d| format!("Output buffer '{f}' dimension {d} covers");
        checks.extend(coordinate_limit_checks(what, &buffer_region(f, info.args.len()), "", &none));
    }
    // The Funcs computed at the root, consumers first (the order of their lets), each
    // over what its stages compute, in their bound symbols with the values of those
    // recomputed in 64 bits from the symbols they name. The lets before have passed
    // their checks, so those are exact, and one level of values is enough: expanding
    // every let instead grows with each level of consumers between a Func and the output.
    let values: HashMap<Name, Expr> =
        root.iter().filter(|(_, v)| v.ty() == Type::i32()).map(|(n, v)| (n.clone(), widen_to_i64(v))).collect();
    for (f, region) in &ctx.root_regions {
        if ctx.env.funcs[f].is_output {
            continue;
        }
        let what = |d| format!("Func '{f}' is needed in dimension {d} over");
        checks.extend(coordinate_limit_checks(what, region, needed_why, &values));
    }
    for &(f, info) in &funcs {
        if info.is_output || ctx.root_regions.iter().any(|(n, _)| n == f) {
            continue;
        }
        let region = match (t.calls.get(f), t.provides.get(f)) {
            (Some(c), Some(p)) => union_region(c, p),
            (Some(r), None) | (None, Some(r)) => r.clone(),
            (None, None) => continue,
        };
        let what = |d| format!("Func '{f}' is needed in dimension {d} over");
        checks.extend(coordinate_limit_checks(what, &region, needed_why, &none));
    }
    // Funcs computed inline have no buffer, but their coordinates are coordinates all the
    // same: past the limit, the index arithmetic they are inlined into may wrap.
    for &(f, region) in &calls {
        if ctx.env.funcs.contains_key(f) || ctx.env.images.contains_key(f) {
            continue;
        }
        let what = |d| format!("Func '{f}' (computed inline) is needed in dimension {d} over");
        checks.extend(coordinate_limit_checks(what, region, needed_why, &none));
    }
    for &(img, usage) in &images {
        let what = |d| format!("Input buffer '{img}' dimension {d} covers");
        checks.extend(coordinate_limit_checks(what, &buffer_region(img, usage.dims), "", &none));
    }
    for &(img, usage) in &images {
        if let Some(u) = t.unbounded.iter().find(|u| u.callee == *img) {
            return Err(unbounded_error(u, "ImageParam"));
        }
        let Some(region) = t.calls.get(img) else { continue };
        let buf = buffer_region(img, usage.dims);
        for d in 0..usage.dims {
            let (rmin, rmax) = (simplify(region[d].min.as_ref().unwrap()), simplify(region[d].max.as_ref().unwrap()));
            let (bmin, bmax) = (buf[d].min.clone().unwrap(), buf[d].max.clone().unwrap());
            checks.push(containment_assert(
                (&rmin, &rmax),
                (&bmin, &bmax),
                format!("Input buffer '{img}' is too small: dimension {d} "),
                "needs",
                "the buffer covers",
            ));
        }
    }
    // A product or long sum inside an index (`x * 65536` clamped back into range) is
    // held to the limit too: past it, the simplifier's rewrites, which assume that coordinate
    // arithmetic does not overflow, may move the clamped index out of range. (Last: the
    // checks above say more where the product is the whole index.)
    let mut products: Vec<(&Expr, &Interval)> = t.products.iter().collect();
    products.sort_by_cached_key(|(e, _)| e.to_string());
    for (e, iv) in products {
        let kind = if matches!(e.kind(), ExprKind::Binary(BinOp::Add | BinOp::Sub, ..)) { "sum" } else { "product" };
        let what = |_| format!("The {kind} '{e}' in an index takes values in");
        checks.extend(coordinate_limit_checks(
            what,
            &vec![iv.clone()],
            ": coordinate arithmetic must stay within them",
            &none,
        ));
    }
    Ok(checks)
}

/// What the pass knows while it runs.
struct Inference<'a> {
    env: &'a Environment,
    /// The region of each Func realized per iteration of its compute level, found at its
    /// compute site and used to size its storage at its store level.
    realized: HashMap<Name, Vec<Interval>>,
    /// The region each Func computed at the root computes and touches, in the symbols of
    /// its stage bounds (in scope where the input checks go), in the order of its lets.
    root_regions: Vec<(Name, Region)>,
    /// The pipeline runs on the ranks of a distributed run (some stage is distributed):
    /// root Funcs get global bounds too (see [`super::distribute`]).
    distributed: bool,
    /// How many loops enclose the pair being inferred (0: the root).
    depth: usize,
}

/// `s` without the statements that only name the calls of Funcs computed inline (see
/// [`crate::lower::environment::StageDef::inlined_calls`]), once their regions are checked.
fn remove_inlined_calls(s: &Stmt, env: &Environment) -> Stmt {
    struct Remover<'a>(&'a Environment);
    impl Mutator for Remover<'_> {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match s {
                Stmt::Evaluate(e) if is_inlined_call(e, self.0) => Stmt::no_op(),
                Stmt::Block(v) => {
                    Stmt::block(v.iter().map(|c| self.mutate_stmt(c)).filter(|c| !c.is_no_op()).collect())
                }
                _ => mutate_stmt_children(self, s),
            }
        }
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            e.clone()
        }
    }
    Remover(env).mutate_stmt(s)
}

/// True if `e` calls a Func that the environment does not realize (one computed inline).
fn is_inlined_call(e: &Expr, env: &Environment) -> bool {
    matches!(e.kind(), ExprKind::Call { name, kind: CallKind::Func { .. }, .. } if !env.funcs.contains_key(name))
}

/// `produce` (the producer of `f`) with each distributed reduction's stage between an
/// identity fill and an all-reduce over its box ([`distribute::identity_fill`],
/// [`distribute::all_reduce`]).
fn with_all_reduces(
    f: &FuncInfo,
    produce: Stmt,
    reductions: &[(usize, distribute::DistributedReduction, Region)],
) -> Result<Stmt> {
    let Stmt::ProducerConsumer { name, is_producer, body } = produce else {
        return Err(Error::internal("bounds_inference", format!("expected the producer of '{}'", f.name)));
    };
    let Stmt::Block(mut stages) = *body else {
        return Err(Error::internal("bounds_inference", format!("expected the stages of '{}'", f.name)));
    };
    for (k, red, region) in reductions {
        let mins: Vec<Expr> = region.iter().map(|iv| iv.min.clone().expect("bounded")).collect();
        let extents: Vec<Expr> = region
            .iter()
            .map(|iv| {
                let (lo, hi) = (iv.min.clone().expect("bounded"), iv.max.clone().expect("bounded"));
                simplify(&Expr::add(Expr::sub(hi, lo), Expr::i32(1)))
            })
            .collect();
        let stage = std::mem::replace(&mut stages[*k], Stmt::no_op());
        stages[*k] = Stmt::block(vec![
            distribute::identity_fill(f, red, &mins, &extents),
            stage,
            distribute::all_reduce(f, red, &mins, &extents),
        ]);
    }
    Ok(Stmt::ProducerConsumer { name, is_producer, body: Box::new(Stmt::Block(stages)) })
}

/// Runs bounds inference over the scheduled loop nest.
pub fn bounds_inference(s: Stmt, ctx: &LowerCtx) -> Result<Stmt> {
    let distributed = ctx.env.funcs.values().any(distribute::uses_ranks);
    let ctx =
        &mut Inference { env: &ctx.env, realized: HashMap::new(), root_regions: Vec::new(), distributed, depth: 0 };
    let mut root = Vec::new();
    let s = infer(s, ctx, &mut root)?;
    let s = fill_realize_bounds(s, ctx)?;
    // The checks name the root Funcs' bound symbols, so they go inside their lets.
    let mut all = input_checks(&s, ctx, &root)?;
    all.push(remove_inlined_calls(&s, ctx.env));
    // Outputs that are all empty need nothing computed, read or checked: the loops of a
    // split over an empty region would still claim a vector or a tile of it.
    let mut any_output_has_pixels: Option<Expr> = None;
    for o in &ctx.env.outputs {
        let dims = ctx.env.funcs[o].args.len();
        let has_pixels = (0..dims)
            .map(|d| Expr::lt(Expr::i32(0), i32_param(format!("{o}.extent.{d}"))))
            .reduce(Expr::and)
            .unwrap_or_else(|| Expr::bool_imm(true));
        any_output_has_pixels = Some(match any_output_has_pixels {
            Some(c) => Expr::or(c, has_pixels),
            None => has_pixels,
        });
    }
    let body = match any_output_has_pixels {
        // Every rank of a distributed run takes part in every border exchange, whether its
        // own slice of the outputs is empty or not.
        Some(c) if !c.is_true() && !ctx.distributed => Stmt::if_then(c, Stmt::block(all)),
        _ => Stmt::block(all),
    };
    Ok(wrap_lets(&root, body))
}
