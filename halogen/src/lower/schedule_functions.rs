//! Pass 2: schedule functions. Builds the loop nest of every stage from its splits,
//! fuses, loop order and loop kinds, then injects each Func's production at its compute
//! level and its storage (`Realize`) at its store level, consumers first.

use super::environment::FuncInfo;
use super::LowerCtx;
use crate::analysis::{expr_uses_var, substitute_map};
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{CallKind, Expr, ExprKind, ForKind, MsgPart, Name, Stmt, TailPlace, Type, VectorTail, Visitor};
use crate::schedule::{LoopLevel, Split, TailStrategy};
use std::collections::{HashMap, HashSet};

/// What a generated loop belongs to.
#[derive(Clone, Debug)]
pub struct LoopInfo {
    /// The Func.
    pub func: Name,
    /// The stage index (0 = pure definition).
    pub stage: usize,
    /// The user's name for the loop variable.
    pub short: Name,
}

/// The loops generated so far, by name (what `compute_at` levels are found by).
pub type Loops = HashMap<Name, LoopInfo>;

/// Name prefix of the variables of stage `k` of `f`: `f.s{k}.`.
pub fn stage_prefix(f: &str, k: usize) -> String {
    format!("{f}.s{k}.")
}

/// The loop range of a (possibly split) variable: its first value and count.
#[derive(Clone)]
struct VarRange {
    min: Expr,
    extent: Expr,
}

fn i32_var(name: impl Into<Name>) -> Expr {
    Expr::var(Type::i32(), name)
}

fn c(v: i64) -> Expr {
    Expr::i32(v)
}

/// Which pure variable names of `f` are pure (loop) variables in stage `k`.
pub fn stage_pure_vars(f: &FuncInfo, k: usize) -> Vec<(usize, Name)> {
    let stage = &f.stages[k];
    f.args
        .iter()
        .enumerate()
        .filter(|(i, a)| k == 0 || stage.args[*i].as_var() == Some(a))
        .map(|(i, a)| (i, a.clone()))
        .collect()
}

fn describe_stage(f: &FuncInfo, k: usize) -> String {
    if k == 0 {
        format!("Func '{}'", f.name)
    } else {
        format!("Func '{}' update {}", f.name, k - 1)
    }
}

/// Self-references of `f` inside a stage's values (the arguments of each call to `f`).
pub(crate) fn self_calls(f: &str, values: &[Expr]) -> Vec<Vec<Expr>> {
    struct Calls<'a>(&'a str, Vec<Vec<Expr>>);
    impl Visitor for Calls<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { name, args, kind: CallKind::Func { .. } } = e.kind() {
                if &**name == self.0 {
                    self.1.push(args.clone());
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut v = Calls(f, Vec::new());
    values.iter().for_each(|e| v.visit_expr(e));
    v.1
}

/// Builds the loop nest of stage `k` of `f`, and adds to `checks` the assertions that must
/// hold before it runs.
pub fn build_stage(f: &FuncInfo, k: usize, loops: &mut Loops, checks: &mut Vec<Stmt>) -> Result<Stmt> {
    let stage = &f.stages[k];
    let prefix = stage_prefix(&f.name, k);
    let sched = &stage.schedule;
    let what = describe_stage(f, k);

    // Original variables: pure ones with symbolic bounds, reduction ones with their domain.
    let mut ranges: HashMap<Name, VarRange> = HashMap::new();
    let mut origin: HashMap<Name, HashSet<Name>> = HashMap::new();
    let mut is_rvar: HashMap<Name, bool> = HashMap::new();
    let mut rename: HashMap<Name, Expr> = HashMap::new();
    let pure = stage_pure_vars(f, k);
    for (_, v) in &pure {
        let min = i32_var(format!("{prefix}{v}.min"));
        let max = i32_var(format!("{prefix}{v}.max"));
        let extent = Expr::add(Expr::sub(max, min.clone()), c(1));
        ranges.insert(v.clone(), VarRange { min, extent });
        origin.insert(v.clone(), [v.clone()].into());
        is_rvar.insert(v.clone(), false);
        rename.insert(v.clone(), i32_var(format!("{prefix}{v}")));
    }
    if let Some(r) = &stage.rdom {
        for rv in &r.0.vars {
            ranges.insert(rv.name.clone(), VarRange { min: rv.min.clone(), extent: rv.extent.clone() });
            origin.insert(rv.name.clone(), [rv.name.clone()].into());
            is_rvar.insert(rv.name.clone(), true);
            rename.insert(rv.name.clone(), i32_var(format!("{prefix}{}", rv.name)));
        }
    }

    // Short (user) names map to internal names that stay unique across splits.
    let mut internal: HashMap<Name, Name> = ranges.keys().map(|n| (n.clone(), n.clone())).collect();
    let mut lets: Vec<(Name, Expr)> = Vec::new();
    let mut guards: Vec<Expr> = Vec::new();
    // ShiftInwards splits: (inner, condition, variable, unclamped value).
    let mut shifted_splits: Vec<(Name, Expr, Name, Expr)> = Vec::new();
    // GuardWithIf splits: (inner, outer, whole-vector condition, guard, variable, unclamped value).
    #[allow(clippy::type_complexity)]
    let mut guarded_splits: Vec<(Name, Name, Expr, Expr, Name, Expr)> = Vec::new();
    // Inner loops of guarded splits: the number of their iterations that can pass the guard.
    let mut useful_extents: HashMap<Name, Expr> = HashMap::new();
    for split in &sched.splits {
        match split {
            Split::Split { old, outer, inner, factor, tail } => {
                let old_i = internal.remove(old).ok_or_else(|| {
                    Error::internal("schedule_functions", format!("{what}: split of unknown loop '{old}'"))
                })?;
                let r = ranges[&old_i].clone();
                let rvar = is_rvar[&old_i];
                // Halide's Auto, except that nothing is computed outside the region a
                // stage must cover, so a legal split never reads or writes past a buffer.
                let tail = match tail {
                    TailStrategy::Auto if k == 0 && !rvar => TailStrategy::ShiftInwards,
                    TailStrategy::Auto => TailStrategy::GuardWithIf,
                    TailStrategy::RoundUp if f.is_output || rvar => TailStrategy::GuardWithIf,
                    TailStrategy::ShiftInwards if k > 0 => {
                        return Err(Error::Schedule(format!(
                            "{what}: split({old}) with ShiftInwards would apply the update twice to some values; use GuardWithIf or RoundUp"
                        )))
                    }
                    t => *t,
                };
                let outer_i: Name = format!("{old_i}.{outer}").into();
                let inner_i: Name = format!("{old_i}.{inner}").into();
                let f_e = c(*factor as i64);
                let outer_ext = Expr::div(Expr::add(r.extent.clone(), c(*factor as i64 - 1)), f_e.clone());
                ranges.insert(outer_i.clone(), VarRange { min: c(0), extent: outer_ext });
                ranges.insert(inner_i.clone(), VarRange { min: c(0), extent: f_e.clone() });
                let o = origin[&old_i].clone();
                origin.insert(outer_i.clone(), o.clone());
                origin.insert(inner_i.clone(), o);
                is_rvar.insert(outer_i.clone(), rvar);
                is_rvar.insert(inner_i.clone(), rvar);
                let outer_v = i32_var(format!("{prefix}{outer_i}"));
                let inner_v = i32_var(format!("{prefix}{inner_i}"));
                let last = Expr::sub(Expr::add(r.min.clone(), r.extent.clone()), c(1));
                let step = Expr::mul(outer_v, f_e.clone());
                let value = match tail {
                    TailStrategy::ShiftInwards => {
                        // The last iteration moves back so it ends at the end; a region
                        // smaller than the factor starts at its start and guards the rest.
                        let shifted = Expr::max(Expr::min(step, Expr::sub(r.extent.clone(), f_e.clone())), c(0));
                        let base = Expr::add(Expr::add(r.min.clone(), shifted), inner_v);
                        let fits = Expr::le(f_e.clone(), r.extent.clone());
                        guards.push(Expr::or(fits.clone(), Expr::le(base.clone(), last.clone())));
                        useful_extents.insert(inner_i.clone(), Expr::min(f_e.clone(), r.extent.clone()));
                        shifted_splits.push((inner_i.clone(), fits, format!("{prefix}{old_i}").into(), base.clone()));
                        base
                    }
                    TailStrategy::GuardWithIf => {
                        let base = Expr::add(Expr::add(r.min.clone(), step.clone()), inner_v);
                        let guard = Expr::le(base.clone(), last.clone());
                        guards.push(guard.clone());
                        let left = Expr::sub(r.extent.clone(), step.clone());
                        useful_extents.insert(inner_i.clone(), Expr::max(Expr::min(f_e.clone(), left), c(0)));
                        // The whole vector is in range when its last lane is.
                        let last_lane = Expr::add(Expr::add(r.min.clone(), step), c(*factor as i64 - 1));
                        guarded_splits.push((
                            inner_i.clone(),
                            outer_i.clone(),
                            Expr::le(last_lane, last.clone()),
                            guard,
                            format!("{prefix}{old_i}").into(),
                            base.clone(),
                        ));
                        base
                    }
                    _ => Expr::add(Expr::add(r.min.clone(), step), inner_v),
                };
                if tail != TailStrategy::RoundUp {
                    // The clamp changes nothing where the guard holds, and lets bounds
                    // inference see that the variable never passes the end.
                    lets.push((old_i.clone(), Expr::min(value, last)));
                } else {
                    lets.push((old_i.clone(), value));
                    // Rounded up, this loop passes the factor of the split that made it,
                    // so that split's clamp is needed even where its region fits.
                    shifted_splits.retain(|(inner, ..)| *inner != old_i);
                }
                internal.insert(outer.clone(), outer_i);
                internal.insert(inner.clone(), inner_i);
            }
            Split::Fuse { inner, outer, fused } => {
                let inner_i = internal.remove(inner).ok_or_else(|| {
                    Error::internal("schedule_functions", format!("{what}: fuse of unknown loop '{inner}'"))
                })?;
                let outer_i = internal.remove(outer).ok_or_else(|| {
                    Error::internal("schedule_functions", format!("{what}: fuse of unknown loop '{outer}'"))
                })?;
                let ri = ranges[&inner_i].clone();
                let ro = ranges[&outer_i].clone();
                // A fused loop counts in 32 bits: a wrapped count made the fused variables,
                // and the regions inferred from them, wrong (reads and writes past buffers).
                let wide = |e: &Expr| Expr::cast(Type::i64(), e.clone());
                let count = Expr::mul(wide(&ri.extent), wide(&ro.extent));
                checks.push(Stmt::Assert {
                    condition: Expr::le(count, Expr::int_imm(Type::i64(), i32::MAX as i64)),
                    message: vec![
                        MsgPart::Text(format!("{what}: fuse({inner}, {outer}, {fused}): the fused loop would run ")),
                        MsgPart::Value(ri.extent.clone()),
                        MsgPart::Text(" x ".into()),
                        MsgPart::Value(ro.extent.clone()),
                        MsgPart::Text(" iterations, more than a 32-bit loop counts".into()),
                    ],
                });
                let fused_i: Name = format!("{outer_i}.{inner_i}.{fused}").into();
                ranges.insert(
                    fused_i.clone(),
                    VarRange { min: c(0), extent: Expr::mul(ri.extent.clone(), ro.extent.clone()) },
                );
                let mut o = origin[&inner_i].clone();
                o.extend(origin[&outer_i].iter().cloned());
                origin.insert(fused_i.clone(), o);
                is_rvar.insert(fused_i.clone(), is_rvar[&inner_i] || is_rvar[&outer_i]);
                let fv = i32_var(format!("{prefix}{fused_i}"));
                lets.push((inner_i.clone(), Expr::add(ri.min.clone(), Expr::rem(fv.clone(), ri.extent.clone()))));
                lets.push((outer_i.clone(), Expr::add(ro.min.clone(), Expr::div(fv, ri.extent.clone()))));
                internal.insert(fused.clone(), fused_i);
            }
        }
    }

    check_update_loops(f, k, &internal, &origin, &is_rvar)?;

    // A vector loop inside a ShiftInwards split gets a version without that split's clamp
    // and guard, chosen at the loop just outside the vector loop.
    let mut tails: Vec<VectorTail> = Vec::new();
    let mut tails_at: Option<Name> = None;
    let vector_at = sched.dims.iter().position(|d| d.kind == ForKind::Vectorized);
    if let Some((vector, enclosing)) = vector_at.and_then(|i| Some((&sched.dims[i], sched.dims.get(i + 1)?))) {
        let (Some(vector), Some(enclosing)) = (internal.get(&vector.var), internal.get(&enclosing.var)) else {
            return Err(Error::internal("schedule_functions", format!("{what}: a loop has no range")));
        };
        tails_at = Some(format!("{prefix}{enclosing}").into());
        for (inner_i, condition, var, unclamped) in &shifted_splits {
            if vector == inner_i || vector.starts_with(&format!("{inner_i}.")) {
                let (condition, guard_term) = (condition.clone(), condition.clone());
                let (var, unclamped) = (var.clone(), unclamped.clone());
                tails.push(VectorTail { condition, guard_term, place: TailPlace::Loop, var, unclamped });
            }
        }
        // A GuardWithIf split of the vector loop itself: decided per vector, inside the
        // loop of its outer variable (when that loop encloses the vector loop directly).
        for (inner_i, outer_i, condition, guard_term, var, unclamped) in guarded_splits {
            if *vector == inner_i && *enclosing == outer_i {
                tails.push(VectorTail { condition, guard_term, place: TailPlace::EachIteration, var, unclamped });
            }
        }
    }

    // Every ShiftInwards split: a version of the whole nest, chosen around its outermost
    // loop, where the producers computed inside get constant regions (inside it, the
    // vector loop's version above is chosen once and for all).
    let mut nest_tails: Vec<VectorTail> = shifted_splits
        .into_iter()
        .filter(|(_, condition, ..)| crate::analysis::simplify(condition).as_int().is_none())
        .map(|(_, condition, var, unclamped)| VectorTail {
            guard_term: condition.clone(),
            condition,
            place: TailPlace::Nest,
            var,
            unclamped,
        })
        .collect();

    // The innermost statement.
    let args: Vec<Expr> = stage.args.iter().map(|a| substitute_map(&rename, a)).collect();
    let values: Vec<Expr> = stage.values.iter().map(|v| substitute_map(&rename, v)).collect();
    let mut body = Stmt::Provide { name: f.name.clone(), values, args };
    // The coordinates of the calls inlined into the stage, for bounds inference to check
    // (it removes these statements).
    if !stage.inlined_calls.is_empty() {
        let mut stmts: Vec<Stmt> =
            stage.inlined_calls.iter().map(|c| Stmt::Evaluate(substitute_map(&rename, c))).collect();
        stmts.push(body);
        body = Stmt::Block(stmts);
    }
    if !guards.is_empty() {
        let cond = guards.into_iter().reduce(Expr::and).unwrap();
        body = Stmt::if_then(cond, body);
    }
    for (name, value) in lets {
        body = Stmt::let_stmt(format!("{prefix}{name}"), value, body);
    }
    let grid = super::distribute::stage_grid(f, k)?;
    for dim in &sched.dims {
        let name = internal
            .get(&dim.var)
            .ok_or_else(|| Error::internal("schedule_functions", format!("{what}: loop '{}' has no range", dim.var)))?;
        let r = &ranges[name];
        let loop_name: Name = format!("{prefix}{name}").into();
        loops.insert(loop_name.clone(), LoopInfo { func: f.name.clone(), stage: k, short: dim.var.clone() });
        let mut here = if tails_at.as_ref() == Some(&loop_name) { std::mem::take(&mut tails) } else { Vec::new() };
        if std::ptr::eq(dim, sched.dims.last().unwrap_or(dim)) {
            here.append(&mut nest_tails);
        }
        // A serial loop far longer than any useful constant trip count runs only the
        // iterations its guard can pass: a split factor far beyond the region (up to 2^30)
        // would otherwise iterate over every guarded-off point.
        let extent = match (dim.kind, r.extent.as_int(), useful_extents.get(name)) {
            (ForKind::Serial, Some(n), Some(useful)) if n > LONG_GUARDED_LOOP => useful.clone(),
            _ => r.extent.clone(),
        };
        // A distributed loop runs this rank's slice of its iterations.
        let (min, extent) = match grid.iter().find(|g| g.var == dim.var) {
            Some(g) => super::distribute::slice(&r.min, &extent, &g.coordinate, &g.count),
            None => (r.min.clone(), extent),
        };
        body = Stmt::For { name: loop_name, min, extent, kind: dim.kind, tails: here, body: Box::new(body) };
    }
    if sched.single_gpu_thread {
        if let Some(d) = sched.dims.iter().find(|d| matches!(d.kind, ForKind::GpuBlock | ForKind::GpuThread)) {
            let word = if d.kind == ForKind::GpuBlock { "gpu_blocks" } else { "gpu_threads" };
            return Err(Error::Schedule(format!(
                "{what}: gpu_single_thread() runs the stage in one GPU thread, but it also has {word}({})",
                d.var
            )));
        }
        // Halide's names for the two loops of one iteration.
        for (var, kind) in [("__thread_id_x", ForKind::GpuThread), ("__block_id_x", ForKind::GpuBlock)] {
            let loop_name: Name = format!("{prefix}{var}").into();
            loops.insert(loop_name.clone(), LoopInfo { func: f.name.clone(), stage: k, short: var.into() });
            body = Stmt::for_loop(loop_name, c(0), c(1), kind, body);
        }
    }
    Ok(body)
}

/// The constant trip count above which a guarded serial loop is bounded by its region.
const LONG_GUARDED_LOOP: i64 = 4096;

/// Parallel and vector loops of an update must not change the order in which values
/// that depend on each other are computed.
fn check_update_loops(
    f: &FuncInfo,
    k: usize,
    internal: &HashMap<Name, Name>,
    origin: &HashMap<Name, HashSet<Name>>,
    is_rvar: &HashMap<Name, bool>,
) -> Result<()> {
    if k == 0 {
        return Ok(());
    }
    let stage = &f.stages[k];
    let calls = self_calls(&f.name, &stage.values);
    let atomic = stage.schedule.atomic;
    if atomic {
        check_atomic_form(f, k, &calls)?;
    }
    for dim in &stage.schedule.dims {
        // An atomic update's GPU loops may write the same point at once.
        if atomic && matches!(dim.kind, ForKind::GpuBlock | ForKind::GpuThread) {
            continue;
        }
        // Every kind whose iterations may run at once (or out of order); the ranks' slices
        // of a distributed loop run at once.
        let kind = if stage.schedule.distributed.contains(&dim.var) { ForKind::Distributed } else { dim.kind };
        let word = match kind {
            ForKind::Parallel => "parallel",
            ForKind::Vectorized => "vectorize",
            ForKind::GpuBlock => "gpu_blocks",
            ForKind::GpuThread => "gpu_threads",
            ForKind::Distributed => "distribute",
            ForKind::Serial | ForKind::Unrolled => continue,
        };
        let name = &internal[&dim.var];
        // The ranks' slices of a reduction domain are combined by an all-reduce, which
        // `reduction` checks is possible.
        if kind == ForKind::Distributed && is_rvar[name] && super::distribute::reduction(f, k)?.is_some() {
            continue;
        }
        if is_rvar[name] {
            return Err(Error::Schedule(format!(
                "{}: {word}({}): the loop runs over a reduction variable, whose iterations depend on each other",
                describe_stage(f, k),
                dim.var
            )));
        }
        for v in &origin[name] {
            let pos = f.args.iter().position(|a| a == v).unwrap_or(0);
            for args in &calls {
                if args[pos].as_var() != Some(v) {
                    return Err(Error::Schedule(format!(
                        "{}: {word}({}): the update reads {}({}) at another value of '{v}', so its iterations over '{v}' depend on each other",
                        describe_stage(f, k),
                        dim.var,
                        f.name,
                        args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// An atomic update adds to the point it writes: `f(args) = f(args) + e` with `e` not
/// reading `f`, of a 32-bit integer (what every GPU's atomic add takes).
fn check_atomic_form(f: &FuncInfo, k: usize, calls: &[Vec<Expr>]) -> Result<()> {
    let stage = &f.stages[k];
    let fail = |why: &str| Err(Error::Schedule(format!("{}: atomic(): {why}", describe_stage(f, k))));
    let ty = f.types.first().copied().unwrap_or(Type::i32());
    if stage.values.len() != 1 || !(ty == Type::i32() || ty == Type::u32()) {
        return fail(&format!(
            "an atomic update adds to one 32-bit integer (int32 or uint32); this one computes {} values of {ty}",
            stage.values.len()
        ));
    }
    let reads_self_at_lhs = |e: &Expr| matches!(e.kind(), ExprKind::Call { name, args, kind: CallKind::Func { .. } } if name == &f.name && args == &stage.args);
    let ok = match stage.values[0].kind() {
        ExprKind::Binary(crate::ir::BinOp::Add, a, b) => {
            calls.len() == 1 && (reads_self_at_lhs(a) || reads_self_at_lhs(b))
        }
        _ => false,
    };
    if !ok {
        return fail(&format!(
            "the update must add to the point it writes, {0}(args) = {0}(args) + e, with e not reading {0}",
            f.name
        ));
    }
    Ok(())
}

/// All stages of `f`, one after another, and the assertions that must hold before they
/// run (placed before the Func's realization, where its bounds are known).
pub fn build_produce(f: &FuncInfo, loops: &mut Loops) -> Result<(Stmt, Vec<Stmt>)> {
    let mut stages = Vec::new();
    let mut checks = Vec::new();
    for k in 0..f.stages.len() {
        stages.push(build_stage(f, k, loops, &mut checks)?);
    }
    Ok((Stmt::block(stages), checks))
}

/// `s` after `checks`.
fn checked(checks: &[Stmt], s: Stmt) -> Stmt {
    Stmt::block(checks.iter().cloned().chain(std::iter::once(s)).collect())
}

fn calls_func(s: &Stmt, f: &str) -> bool {
    struct Finder<'a>(&'a str, bool);
    impl Visitor for Finder<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.1 {
                return;
            }
            if let ExprKind::Call { name, kind: CallKind::Func { .. }, .. } = e.kind() {
                if &**name == self.0 {
                    self.1 = true;
                    return;
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut v = Finder(f, false);
    v.visit_stmt(s);
    v.1
}

fn pair(f: &Name, produce: Stmt, consume: Stmt) -> Stmt {
    Stmt::Block(vec![
        Stmt::ProducerConsumer { name: f.clone(), is_producer: true, body: Box::new(produce) },
        Stmt::ProducerConsumer { name: f.clone(), is_producer: false, body: Box::new(consume) },
    ])
}

fn realize(f: &FuncInfo, body: Stmt) -> Stmt {
    Stmt::Realize { name: f.name.clone(), types: f.types.clone(), bounds: Vec::new(), fold: None, body: Box::new(body) }
}

/// Wraps the body of the first loop `(func, var)` for which `pick(body)` holds with
/// `wrap(body)`. Returns whether it found one.
fn inject_in_loop(
    s: &mut Stmt,
    loops: &Loops,
    func: &Name,
    var: &Name,
    pick: &dyn Fn(&Stmt) -> bool,
    wrap: &mut dyn FnMut(Stmt) -> Stmt,
) -> bool {
    stack::guard(|| match s {
        Stmt::For { name, body, .. } => {
            if let Some(info) = loops.get(name) {
                if info.func == *func && info.short == *var && pick(body) {
                    let old = std::mem::replace(&mut **body, Stmt::no_op());
                    **body = wrap(old);
                    return true;
                }
            }
            inject_in_loop(body, loops, func, var, pick, wrap)
        }
        Stmt::LetStmt { body, .. }
        | Stmt::ProducerConsumer { body, .. }
        | Stmt::Realize { body, .. }
        | Stmt::Allocate { body, .. } => inject_in_loop(body, loops, func, var, pick, wrap),
        Stmt::Block(v) => v.iter_mut().any(|c| inject_in_loop(c, loops, func, var, pick, wrap)),
        Stmt::IfThenElse { then_case, else_case, .. } => {
            inject_in_loop(then_case, loops, func, var, pick, wrap)
                || else_case.as_mut().is_some_and(|e| inject_in_loop(e, loops, func, var, pick, wrap))
        }
        _ => false,
    })
}

fn contains_producer(s: &Stmt, f: &Name) -> bool {
    stack::guard(|| match s {
        Stmt::ProducerConsumer { name, is_producer: true, .. } if name == f => true,
        Stmt::For { body, .. }
        | Stmt::LetStmt { body, .. }
        | Stmt::ProducerConsumer { body, .. }
        | Stmt::Realize { body, .. }
        | Stmt::Allocate { body, .. } => contains_producer(body, f),
        Stmt::Block(v) => v.iter().any(|c| contains_producer(c, f)),
        Stmt::IfThenElse { then_case, else_case, .. } => {
            contains_producer(then_case, f) || else_case.as_ref().is_some_and(|e| contains_producer(e, f))
        }
        _ => false,
    })
}

fn level_text(l: &LoopLevel) -> String {
    match l {
        LoopLevel::Inlined => "inline".into(),
        LoopLevel::Root => "root".into(),
        LoopLevel::At { func, var } => format!("{func}.{var}"),
    }
}

/// Builds the whole loop nest: outputs at root, every other Func at its levels. Funcs at
/// root, outputs among them, are realized in order, producers first, so an output may be
/// read by a later one (its buffer then has to cover what that one needs: bounds
/// inference checks it).
pub fn schedule_functions(ctx: &LowerCtx) -> Result<Stmt> {
    let env = &ctx.env;
    let loops = &mut Loops::new();
    let mut s = Stmt::block(Vec::new());
    for name in env.order.iter().rev() {
        let f = &env.funcs[name];
        if f.is_output {
            let (produce, checks) = build_produce(f, loops)?;
            s = if calls_func(&s, name) {
                checked(&checks, pair(name, produce, s))
            } else {
                let produce = Stmt::ProducerConsumer { name: name.clone(), is_producer: true, body: Box::new(produce) };
                Stmt::block(vec![checked(&checks, produce), s])
            };
            continue;
        }
        let (produce, checks) = build_produce(f, loops)?;
        match &f.compute {
            LoopLevel::Root => {
                let body = pair(name, produce, s);
                s = checked(&checks, realize(f, body));
            }
            LoopLevel::At { func, var } => {
                let target = name.clone();
                let pick = move |body: &Stmt| calls_func(body, &target);
                let mut produce = Some(produce);
                let same_level = f.store == f.compute;
                let mut wrap = |body: Stmt| {
                    let p = pair(name, produce.take().unwrap_or_else(Stmt::no_op), body);
                    checked(&checks, if same_level { realize(f, p) } else { p })
                };
                if !inject_in_loop(&mut s, loops, func, var, &pick, &mut wrap) {
                    return Err(Error::Schedule(format!(
                        "Func '{name}': compute_at({func}, {var}): Func '{func}' has no loop '{var}' that uses '{name}' (it must consume '{name}', directly or through other Funcs, inside that loop)"
                    )));
                }
                if !same_level {
                    match &f.store {
                        LoopLevel::Root => s = realize(f, s),
                        LoopLevel::At { func: sf, var: sv } => {
                            let target = name.clone();
                            let pick = move |body: &Stmt| contains_producer(body, &target);
                            let mut wrap = |body: Stmt| realize(f, body);
                            if !inject_in_loop(&mut s, loops, sf, sv, &pick, &mut wrap) {
                                return Err(Error::Schedule(format!(
                                    "Func '{name}': store_at({sf}, {sv}) must be at or outside its compute level {}",
                                    level_text(&f.compute)
                                )));
                            }
                        }
                        LoopLevel::Inlined => unreachable!("checked by the environment pass"),
                    }
                }
            }
            LoopLevel::Inlined => {}
        }
    }
    check_uses_inside(&s, env)?;
    Ok(s)
}

/// Every call to a Func must lie in the consumer part of its realization (or in its own
/// producer, for updates that read earlier values).
fn check_uses_inside(s: &Stmt, env: &super::environment::Environment) -> Result<()> {
    struct Check<'a> {
        available: Vec<Name>,
        current: Vec<Name>,
        env: &'a super::environment::Environment,
        error: Option<Error>,
    }
    impl Visitor for Check<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            stack::guard(|| {
                if let Stmt::ProducerConsumer { name, is_producer, body } = s {
                    if *is_producer {
                        self.current.push(name.clone());
                        self.available.push(name.clone());
                        self.visit_stmt(body);
                        self.available.pop();
                        self.current.pop();
                    } else {
                        self.available.push(name.clone());
                        self.visit_stmt(body);
                        self.available.pop();
                    }
                    return;
                }
                crate::ir::walk_stmt(self, s)
            })
        }
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { name, kind: CallKind::Func { .. }, .. } = e.kind() {
                // (Calls of Funcs computed inline name their coordinates only.)
                let realized = self.env.funcs.get(name);
                if let Some(f) = realized.filter(|_| !self.available.contains(name) && self.error.is_none()) {
                    let user = self.current.last().cloned().unwrap_or_else(|| "?".into());
                    self.error = Some(Error::Schedule(format!(
                        "Func '{name}' is computed at {} but Func '{user}' uses it outside that loop; compute it at a loop that encloses every use",
                        level_text(&f.compute)
                    )));
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut c = Check { available: Vec::new(), current: Vec::new(), env, error: None };
    c.visit_stmt(s);
    c.error.map_or(Ok(()), Err)
}

/// True if `e` mentions the variable `name` (re-exported for the later passes).
pub fn uses(e: &Expr, name: &str) -> bool {
    expr_uses_var(e, name)
}

#[cfg(test)]
mod tests {
    use crate::ir::{ForKind, Stmt, TailPlace};
    use crate::lower::{environment, LowerCtx};
    use crate::prelude::*;

    /// The loops that carry vector tails (`TailPlace::Loop`), with the kind of the loop
    /// each one's body starts (through its lets).
    fn loops_with_tails(s: &Stmt, out: &mut Vec<(String, usize, Option<ForKind>)>) {
        if let Stmt::For { name, tails, body, .. } = s {
            let tails = tails.iter().filter(|t| t.place == TailPlace::Loop).count();
            if tails > 0 {
                let mut inner = &**body;
                while let Stmt::LetStmt { body, .. } = inner {
                    inner = body;
                }
                let kind = match inner {
                    Stmt::For { kind, .. } => Some(*kind),
                    _ => None,
                };
                out.push((name.to_string(), tails, kind));
            }
        }
        s.for_each_child(|c| loops_with_tails(c, out), |_| {});
    }

    #[test]
    fn shift_inwards_vector_splits_put_their_tails_on_the_loop_enclosing_the_vector_loop() {
        let input = ImageParam::new(Type::u16(), 2, "vt_input");
        let (x, y, xo, xi) = (Var::new("x"), Var::new("y"), Var::new("xo"), Var::new("xi"));
        let f = Func::new("vt_out");
        f.def((x, y), input.at((x, y)) + 1);
        f.split(x, xo, xi, 8).vectorize(xi, 8);
        let ctx = LowerCtx::new(environment::build_environment(&[f.func_ref().clone()]).unwrap());
        let s = super::schedule_functions(&ctx).unwrap();
        let mut found = Vec::new();
        loops_with_tails(&s, &mut found);
        // vectorize(xi, 8) splits xi again (xi.xi outside the vector loop xi.xi_vi): both
        // ShiftInwards splits enclose the vector loop, and both tails go on xi.xi.
        assert_eq!(found, vec![("vt_out.s0.x.xi.xi".to_string(), 2, Some(ForKind::Vectorized))], "{s}");
        assert!(s.to_string().contains("for (vt_out.s0.x.xi.xi, 0, ((8 + 7) / 8)) tail((8 <= "), "{s}");
        // The split of x also gets a version of the whole nest, on its outermost loop
        // (the split of xi by 8 fits always: it gets none).
        let outer = s.to_string().lines().find(|l| l.trim_start().starts_with("for (vt_out.s0.y")).unwrap().to_string();
        assert_eq!(outer.matches("tail_nest(").count(), 1, "{outer}");
        assert!(outer.contains("tail_nest((8 <= "), "{outer}");
    }
}
