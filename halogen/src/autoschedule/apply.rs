//! Section 4.4 of Sioutas et al. and the last step: the plan becomes directives of the
//! public scheduling API (vectorize the innermost tile loop by the stage's vector lanes,
//! parallelize the outermost tile loop, producers' sliding dimension outermost, update
//! stages parallel over a pure variable where that is legal), and the same directives are
//! written as Rust source a user can paste.

use super::footprint::{eval_range, NumBox};
use super::fusion::{LoopKind, Nest};
use super::graph::{Graph, Node, StageDesc};
use super::grouping::Planned;
use super::MachineParams;
use crate::analysis::Scope;
use crate::ir::Name;
use crate::lang::func::{Func, FuncData, FuncRef};
use crate::lang::var::{Var, VarOrRVar};
use crate::schedule::{FuncSchedule, StageSchedule};
use std::collections::BTreeMap;
use std::sync::{Mutex, Weak};

use super::tiling::PARALLEL_MIN_WORK;

/// Iterations per core that let a parallel loop balance its work (see `apply_untiled`).
const BALANCED_TASKS_PER_CORE: f64 = 4.0;

/// A pure loop of an update this short (colour channels, a histogram's value and weight)
/// goes innermost among the update's pure loops.
const SHORT_LOOP: f64 = 4.0;

/// A Rust identifier for a name (`sum$3` → `sum_3`).
pub(crate) fn ident(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    const KEYWORDS: &[&str] = &[
        "as", "box", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn", "for",
        "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "static",
        "struct", "super", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "yield",
    ];
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// The schedule source being written, and the Vars it declares.
#[derive(Default)]
pub(crate) struct Source {
    lines: Vec<String>,
    vars: Vec<Name>,
}

impl Source {
    /// The identifier of a loop variable, declared at the top of the source.
    pub(crate) fn var(&mut self, name: &Name) -> String {
        if !self.vars.contains(name) {
            self.vars.push(name.clone());
        }
        ident(name)
    }

    /// Appends a statement.
    pub(crate) fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// The finished text: a header, the Var declarations, one statement per line.
    pub fn finish(self, header: &str) -> String {
        let mut out = String::new();
        for l in header.lines() {
            out.push_str("// ");
            out.push_str(l);
            out.push('\n');
        }
        match self.vars.len() {
            0 => {}
            1 => out.push_str(&format!("let {} = Var::new({:?});\n", ident(&self.vars[0]), &*self.vars[0])),
            _ => {
                let ids: Vec<String> = self.vars.iter().map(|v| ident(v)).collect();
                let news: Vec<String> = self.vars.iter().map(|v| format!("Var::new({:?})", &**v)).collect();
                out.push_str(&format!("let ({}) = ({});\n", ids.join(", "), news.join(", ")));
            }
        }
        for l in self.lines {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}

/// Builds one statement `f.a(..).b(..);` while applying each directive.
struct Chain<'a> {
    func: Func,
    text: String,
    any: bool,
    src: &'a mut Source,
}

impl<'a> Chain<'a> {
    fn new(node: &Node, src: &'a mut Source) -> Chain<'a> {
        let mut text = ident(&node.name);
        if *ident(&node.name) != *node.name {
            text = format!("/* Func '{}' */ {text}", node.name);
        }
        Chain { func: Func(node.fref.clone()), text, any: false, src }
    }
    fn push(&mut self, call: String) {
        self.text.push('.');
        self.text.push_str(&call);
        self.any = true;
    }
    fn var(&mut self, name: &Name) -> (Var, String) {
        (Var::new(name), self.src.var(name))
    }
    fn done(self) {
        if self.any {
            self.src.lines.push(format!("{};", self.text));
        }
    }
}

/// Loop variables for `reorder`, and their source text (`x, y`).
fn var_list(chain: &mut Chain<'_>, names: &[Name]) -> (Vec<VarOrRVar>, String) {
    let mut vars = Vec::new();
    let mut ids = Vec::new();
    for n in names {
        let (v, s) = chain.var(n);
        vars.push(VarOrRVar::from(v));
        ids.push(s);
    }
    (vars, ids.join(", "))
}

/// A loop name not yet used by the stage.
fn fresh_name(base: &str, taken: &mut Vec<Name>) -> Name {
    let mut s = base.to_string();
    while taken.iter().any(|t| **t == *s) {
        s.push('_');
    }
    let n: Name = s.into();
    taken.push(n.clone());
    n
}

/// Names of the nest's loops: inner loops `<var>i`, outer and whole loops keep the name.
fn loop_names(node: &Node, nest: &Nest, taken: &mut Vec<Name>) -> Vec<Name> {
    let inner: Vec<Option<Name>> = (0..node.dims())
        .map(|d| {
            nest.loops
                .iter()
                .any(|l| l.dim == d && l.kind == LoopKind::Inner)
                .then(|| fresh_name(&format!("{}i", node.args[d]), taken))
        })
        .collect();
    nest.loops
        .iter()
        .map(|l| match l.kind {
            LoopKind::Inner => inner[l.dim].clone().unwrap(),
            LoopKind::Outer | LoopKind::Whole => node.args[l.dim].clone(),
        })
        .collect()
}

/// Applies a tiled group: the output's nest, then every member's levels.
pub(crate) fn apply_tiled(g: &Graph, p: &Planned, src: &mut Source) {
    let Some(tiling) = &p.tiling else { return };
    let nest = &tiling.nest;
    let node = &g.nodes[p.out];
    let mut taken: Vec<Name> = node.args.clone();
    let names = loop_names(node, nest, &mut taken);
    let mut chain = Chain::new(node, src);
    if !node.is_output {
        chain.func.compute_root();
        chain.push("compute_root()".into());
    }
    let split = |d: usize| nest.loops.iter().position(|l| l.dim == d && l.kind == LoopKind::Inner);
    let (sx, sy) = (split(0), if node.dims() >= 2 { split(1) } else { None });
    let mut current: Vec<Name> = node.args.clone();
    match (sx, sy) {
        (Some(ix), Some(iy)) => {
            let (x, xs) = chain.var(&node.args[0]);
            let (y, ys) = chain.var(&node.args[1]);
            let (xi, xis) = chain.var(&names[ix]);
            let (yi, yis) = chain.var(&names[iy]);
            let (tx, ty) = (nest.tile[0] as i32, nest.tile[1] as i32);
            chain.func.tile(x, y, xi, yi, tx, ty);
            chain.push(format!("tile({xs}, {ys}, {xis}, {yis}, {tx}, {ty})"));
            current.splice(0..2, [names[ix].clone(), names[iy].clone(), node.args[0].clone(), node.args[1].clone()]);
        }
        (Some(i), None) | (None, Some(i)) => {
            let d = nest.loops[i].dim;
            let (v, vs) = chain.var(&node.args[d]);
            let (inner, is) = chain.var(&names[i]);
            let t = nest.tile[d] as i32;
            chain.func.split(v, v, inner, t);
            chain.push(format!("split({vs}, {vs}, {is}, {t})"));
            current.insert(d, names[i].clone());
        }
        (None, None) => {}
    }
    if current != names {
        let (vars, list) = var_list(&mut chain, &names);
        chain.func.reorder(&vars);
        chain.push(format!("reorder(&[{list}])"));
    }
    let lanes = nest.vector_lanes(p.lanes);
    if lanes > 1 && nest.trips(0) >= lanes as f64 {
        let (v, vs) = chain.var(&names[0]);
        chain.func.vectorize(v, lanes as i32);
        chain.push(format!("vectorize({vs}, {lanes})"));
    }
    // The tiling analysis left `parallel` empty where the group is too small for threads.
    if let Some(l) = nest.parallel {
        if nest.trips(l) >= 2.0 {
            let (v, vs) = chain.var(&names[l]);
            chain.func.parallel(v);
            chain.push(format!("parallel({vs})"));
        }
    }
    let out_ident = ident(&node.name);
    chain.done();
    for (f, pl, vectorize) in &p.members {
        let fnode = &g.nodes[*f];
        let mut chain = Chain::new(fnode, src);
        let out_func = Func(node.fref.clone());
        let (cv, cs) = chain.var(&names[pl.compute]);
        chain.func.compute_at(&out_func, cv);
        chain.push(format!("compute_at(&{out_ident}, {cs})"));
        if pl.store != pl.compute {
            if pl.store >= names.len() {
                chain.func.store_root();
                chain.push("store_root()".into());
            } else {
                let (sv, ss) = chain.var(&names[pl.store]);
                chain.func.store_at(&out_func, sv);
                chain.push(format!("store_at(&{out_ident}, {ss})"));
            }
        }
        // The sliding dimension outermost: its loop runs once or a few times (sec. 4.4).
        if let Some(d) = pl.slide_dim {
            if d + 1 != fnode.dims() {
                let mut order: Vec<Name> = fnode.args.clone();
                let s = order.remove(d);
                order.push(s);
                let (vars, list) = var_list(&mut chain, &order);
                chain.func.reorder(&vars);
                chain.push(format!("reorder(&[{list}])"));
            }
        }
        if let Some(lanes) = *vectorize {
            let (v, vs) = chain.var(&fnode.args[0]);
            chain.func.vectorize(v, lanes as i32);
            chain.push(format!("vectorize({vs}, {lanes})"));
        }
        chain.done();
        // A pointwise reduction's updates: vectors along the same dimension, outside the
        // reduction's loops, so each vector accumulates in a register (the lowering keeps
        // it there), as many side by side as the row fills.
        if let Some(&width) = p.update_widths.get(f) {
            let name = ident(&fnode.name);
            let v = &fnode.args[0];
            let vs = src.var(v);
            for k in 1..fnode.stages.len() {
                Func(fnode.fref.clone()).update_stage(k - 1).vectorize(Var::new(v), width as i32);
                src.push(format!("{name}.update_stage({}).vectorize({vs}, {width});", k - 1));
            }
        }
    }
}

/// Whether every stage of the group maps onto GPU threads: each update's points along the
/// dimensions the tiles cover are independent of each other (a histogram's scatter or a
/// scan's recurrence is not; such a group keeps its CPU schedule).
pub(crate) fn group_maps_to_gpu(g: &Graph, p: &Planned) -> bool {
    std::iter::once(p.out).chain(p.members.iter().map(|(f, _, _)| *f)).all(|f| {
        let node = &g.nodes[f];
        (1..node.stages.len()).all(|k| gpu_update_is_legal(node, k))
    })
}

/// Update `k` of `node` can run over GPU tiles of its first two (or one) dimensions.
fn gpu_update_is_legal(node: &Node, k: usize) -> bool {
    let stage = &node.stages[k];
    let legal = |d: usize| stage.pure.iter().any(|(p, _)| *p == d) && node.update_var_is_independent(k, d);
    node.dims() > 0 && legal(0) && (node.dims() < 2 || legal(1))
}

/// Applies a group for a GPU (a first mapping, the same for every group that
/// [`group_maps_to_gpu`]): each of its Funcs at root as tiles of `gpu.tile` threads over its
/// two innermost dimensions (one dimension: rows of as many threads), one kernel per stage,
/// its updates likewise. The members are not fused into the output's tiles yet: every
/// intermediate goes through device memory, which stays on the device.
pub(crate) fn apply_gpu(g: &Graph, p: &Planned, gpu: &crate::target::GpuParams, src: &mut Source) {
    let mut funcs = vec![p.out];
    funcs.extend(p.members.iter().map(|(f, _, _)| *f));
    for f in funcs {
        let node = &g.nodes[f];
        let mut chain = Chain::new(node, src);
        if !node.is_output {
            chain.func.compute_root();
            chain.push("compute_root()".into());
        }
        let name = ident(&node.name);
        gpu_tile_stage(&mut chain, node, 0, gpu);
        chain.done();
        for k in 1..node.stages.len() {
            if !gpu_update_is_legal(node, k) {
                continue;
            }
            let mut chain = Chain::new(node, src);
            chain.text = format!("{name}.update_stage({})", k - 1);
            gpu_tile_stage(&mut chain, node, k, gpu);
            chain.done();
        }
    }
}

/// `gpu_tile` of stage `k` of `node` over its first two dimensions (`gpu_tile_1d` over
/// one), and its further dimensions, fused, as the third block dimension.
fn gpu_tile_stage(chain: &mut Chain<'_>, node: &Node, k: usize, gpu: &crate::target::GpuParams) {
    if node.dims() == 0 {
        return;
    }
    let mut taken: Vec<Name> = node.args.clone();
    let st = if k == 0 { chain.func.pure_stage() } else { chain.func.update_stage(k - 1) };
    let (x, xs) = chain.var(&node.args[0]);
    let xo_n = fresh_name(&format!("{}o", node.args[0]), &mut taken);
    let xi_n = fresh_name(&format!("{}i", node.args[0]), &mut taken);
    let (xo, xos) = chain.var(&xo_n);
    let (xi, xis) = chain.var(&xi_n);
    if node.dims() == 1 {
        let w = (gpu.tile[0] * gpu.tile[1]).min(gpu.threads_per_block) as i32;
        st.gpu_tile_1d(x, xo, xi, w);
        chain.push(format!("gpu_tile_1d({xs}, {xos}, {xis}, {w})"));
        return;
    }
    let (y, ys) = chain.var(&node.args[1]);
    let yo_n = fresh_name(&format!("{}o", node.args[1]), &mut taken);
    let yi_n = fresh_name(&format!("{}i", node.args[1]), &mut taken);
    let (yo, yos) = chain.var(&yo_n);
    let (yi, yis) = chain.var(&yi_n);
    let (w, h) = (gpu.tile[0] as i32, gpu.tile[1] as i32);
    st.gpu_tile(x, y, xo, yo, xi, yi, w, h);
    chain.push(format!("gpu_tile({xs}, {ys}, {xos}, {yos}, {xis}, {yis}, {w}, {h})"));
    // Dimensions beyond the tile's two become the third block dimension (fused into one
    // where there are several), so that one launch covers the whole stage instead of the
    // host launching a kernel per point of the outer loops.
    let outer: Vec<usize> = (2..node.dims()).collect();
    let legal = |d: usize| k == 0 || node.update_var_is_independent(k, d);
    let pure_in_stage = |d: usize| k == 0 || node.stages[k].pure.iter().any(|(p, _)| *p == d);
    if outer.is_empty() || !outer.iter().all(|&d| legal(d) && pure_in_stage(d)) {
        return;
    }
    let (mut blocks, mut blocks_s) = chain.var(&node.args[outer[0]]);
    let mut blocks_n = node.args[outer[0]].clone();
    for &d in &outer[1..] {
        let (next, next_s) = chain.var(&node.args[d]);
        let fused_n = fresh_name(&format!("{blocks_n}_{}", node.args[d]), &mut taken);
        let (fused, fused_s) = chain.var(&fused_n);
        st.fuse(blocks, next, fused);
        chain.push(format!("fuse({blocks_s}, {next_s}, {fused_s})"));
        (blocks, blocks_s, blocks_n) = (fused, fused_s, fused_n);
    }
    st.gpu_blocks(blocks);
    chain.push(format!("gpu_blocks({blocks_s})"));
}

/// Points of a stage's reduction domain, from the estimates; a variable of unknown extent
/// counts as `unknown`.
pub(crate) fn reduction_iterations(stage: &StageDesc, scope: &Scope, unknown: f64) -> f64 {
    stage.rvars.iter().map(|(_, _, e)| eval_range(e, scope).map_or(unknown, |(_, hi)| hi.max(1) as f64)).product()
}

/// Applies a group output that is not tiled: a Func with update definitions (a reduction,
/// a scan, a histogram) or without dimensions. The pure stage gets vectors along its
/// innermost dimension and threads along its outermost one; each update, vectors along
/// its innermost and threads along its outermost pure variable where that is legal.
pub(crate) fn apply_untiled(
    g: &Graph,
    p: &Planned,
    region: Option<&NumBox>,
    scope: &Scope,
    m: &MachineParams,
    src: &mut Source,
) {
    let node = &g.nodes[p.out];
    let extent: Vec<f64> = match region {
        Some(r) => r.iter().map(|(lo, hi)| (hi - lo + 1).max(1) as f64).collect(),
        None => vec![1.0; node.dims()],
    };
    let lanes = p.lanes;
    let mut chain = Chain::new(node, src);
    if !node.is_output {
        chain.func.compute_root();
        chain.push("compute_root()".into());
    }
    let total: f64 = extent.iter().product();
    // The outermost dimension with enough iterations to balance the cores (a few tasks
    // each), else the outermost with one per core, else the longest.
    let pick_parallel = |cands: &[usize]| -> Option<usize> {
        let enough = |tasks: f64| cands.iter().rev().copied().find(|&d| extent[d] >= tasks);
        enough(BALANCED_TASKS_PER_CORE * m.cores as f64).or_else(|| enough(m.cores as f64)).or_else(|| {
            cands.iter().copied().filter(|&d| extent[d] >= 2.0).max_by(|&a, &b| extent[a].total_cmp(&extent[b]))
        })
    };
    // The pure stage.
    if node.dims() > 0 {
        if lanes > 1 && extent[0] >= lanes as f64 {
            let (v, vs) = chain.var(&node.args[0]);
            chain.func.vectorize(v, lanes as i32);
            chain.push(format!("vectorize({vs}, {lanes})"));
        }
        let dims: Vec<usize> = (0..node.dims()).collect();
        if total * node.ops >= PARALLEL_MIN_WORK {
            if let Some(d) = pick_parallel(&dims) {
                let (v, vs) = chain.var(&node.args[d]);
                chain.func.parallel(v);
                chain.push(format!("parallel({vs})"));
            }
        }
    }
    let name = ident(&node.name);
    chain.done();
    // The updates.
    for k in 1..node.stages.len() {
        let stage = &node.stages[k];
        let legal: Vec<usize> =
            stage.pure.iter().map(|(d, _)| *d).filter(|&d| node.update_var_is_independent(k, d)).collect();
        if legal.is_empty() {
            continue;
        }
        let st = Func(node.fref.clone()).update_stage(k - 1);
        let mut text = format!("{name}.update_stage({})", k - 1);
        let mut any = false;
        // A reduction's short pure loops (channels) go innermost among the pure loops, so
        // that each point of the domain is visited once for all of them rather than once
        // per pass of an outer loop over them. Where the reduction accumulates in place
        // (every left-hand side index a pure variable), the reduction's own loops stay
        // innermost, so the accumulator stays in a register.
        let short: Vec<usize> = legal.iter().copied().filter(|&d| extent[d] <= SHORT_LOOP).collect();
        // Some left-hand side index is computed (a histogram's bin): lanes could collide.
        // A reduction variable standing alone as an index (a scan's `f(x, r.y)`) is the
        // same for every lane, so lanes along a pure dimension write distinct points: a
        // recurrence vectorizes across its independent dimension.
        let scatter = stage.args.iter().any(|a| match a.as_var() {
            Some(v) => !stage.pure.iter().any(|(_, p)| p == v) && !stage.rvars.iter().any(|(r, _, _)| r == v),
            None => true,
        });
        if !stage.rvars.is_empty() && !short.is_empty() && short.len() < stage.pure.len() {
            let mut names: Vec<&Name> = short.iter().map(|&d| &node.args[d]).collect();
            // A scatter keeps no accumulator in a register anyway; there the short loops
            // go inside the reduction too, so the values it reads are loaded once for all
            // of them.
            if scatter {
                names.extend(stage.rvars.iter().map(|(r, _, _)| r));
            }
            names.extend(stage.pure.iter().map(|(d, _)| *d).filter(|d| !short.contains(d)).map(|d| &node.args[d]));
            let vars: Vec<VarOrRVar> = names.iter().map(|n| VarOrRVar::from(Var::new(n))).collect();
            // The printed source declares every loop, reduction ones too, as a `Var`.
            let ids: Vec<String> = names.iter().map(|n| src.var(n)).collect();
            st.reorder(&vars);
            text.push_str(&format!(".reorder(&[{}])", ids.join(", ")));
            any = true;
        }
        let iters: f64 =
            stage.pure.iter().map(|(d, _)| extent[*d]).product::<f64>() * reduction_iterations(stage, scope, 16.0);
        // Vectors along the innermost dimension where its points are independent and the
        // update accumulates in place (a scatter's lanes could collide). The split's
        // tail is guarded (an update cannot shift inwards and compute points twice); the
        // loop partitioning keeps the guard out of the steady state.
        if lanes > 1 && !scatter && legal.contains(&0) && extent[0] >= lanes as f64 {
            // A reduction's vector is an accumulator, and one accumulator makes every step
            // wait for the latency of the last multiply-add; up to ACCUMULATOR_VECTORS
            // registers side by side give the core independent chains to overlap.
            let width = if stage.rvars.is_empty() { lanes } else { accumulator_width(lanes, extent[0]) };
            let v = &node.args[0];
            let vs = src.var(v);
            st.vectorize(Var::new(v), width as i32);
            text.push_str(&format!(".vectorize({vs}, {width})"));
            any = true;
        }
        if iters * node.stage_ops[k] >= PARALLEL_MIN_WORK {
            let long: Vec<usize> = legal.iter().copied().filter(|d| !short.contains(d)).collect();
            if let Some(d) = pick_parallel(&long).or_else(|| pick_parallel(&legal)) {
                let v = &node.args[d];
                let vs = src.var(v);
                st.parallel(Var::new(v));
                text.push_str(&format!(".parallel({vs})"));
                any = true;
            }
        }
        if any {
            src.lines.push(format!("{text};"));
        }
    }
}

/// The most native vectors a reduction's update is vectorized over at once (a power of
/// two): independent accumulators that hide the latency of a multiply-add.
const ACCUMULATOR_VECTORS: usize = 2;

/// The vector width of a reduction's update over a row of `extent` points: up to
/// [`ACCUMULATOR_VECTORS`] vectors of `lanes`, as many as the row fills.
pub(crate) fn accumulator_width(lanes: usize, extent: f64) -> usize {
    (0..=ACCUMULATOR_VECTORS.ilog2()).rev().map(|s| lanes << s).find(|&l| extent >= l as f64).unwrap_or(lanes)
}

// ----- the auto-scheduler's own earlier schedules -----

/// A Func's whole schedule.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Snapshot {
    schedule: FuncSchedule,
    stages: Vec<StageSchedule>,
    errors: usize,
}

pub(crate) fn snapshot(f: &FuncRef) -> Snapshot {
    let d = f.lock();
    Snapshot {
        schedule: d.schedule.clone(),
        stages: d.pure.iter().chain(d.updates.iter()).map(|s| s.schedule.clone()).collect(),
        errors: d.errors.len(),
    }
}

/// The first error recorded in `f` since `before` was taken.
pub(crate) fn new_error(f: &FuncRef, before: &Snapshot) -> Option<crate::error::Error> {
    f.lock().errors.get(before.errors).cloned()
}

pub(crate) fn restore(f: &FuncRef, s: &Snapshot) {
    let mut guard = f.lock();
    let d = &mut *guard;
    d.schedule = s.schedule.clone();
    for (def, st) in d.pure.iter_mut().chain(d.updates.iter_mut()).zip(&s.stages) {
        def.schedule = st.clone();
    }
    d.errors.truncate(s.errors);
}

type Entry = (Weak<Mutex<FuncData>>, Snapshot, Snapshot);

fn registry() -> &'static Mutex<Vec<Entry>> {
    static R: std::sync::OnceLock<Mutex<Vec<Entry>>> = std::sync::OnceLock::new();
    R.get_or_init(|| Mutex::new(Vec::new()))
}

/// Remembers that the auto-scheduler changed `f` from `before` to its current schedule.
pub(crate) fn remember(f: &FuncRef, before: Snapshot) {
    let after = snapshot(f);
    let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
    r.retain(|(w, _, _)| w.strong_count() > 0 && !std::ptr::eq(w.as_ptr(), std::sync::Arc::as_ptr(&f.0)));
    r.push((std::sync::Arc::downgrade(&f.0), before, after));
}

/// Undoes an earlier auto-schedule of `f` if the user has not changed it since; true if it did.
pub(crate) fn forget_own_schedule(f: &FuncRef) -> bool {
    let mut r = registry().lock().unwrap_or_else(|p| p.into_inner());
    let Some(i) = r.iter().position(|(w, _, _)| std::ptr::eq(w.as_ptr(), std::sync::Arc::as_ptr(&f.0))) else {
        return false;
    };
    let (_, before, after) = r.remove(i);
    drop(r);
    if snapshot(f) == after {
        restore(f, &before);
        true
    } else {
        false
    }
}

/// Estimated region of every group output, for the untiled ones.
pub(crate) fn regions_of(
    planned: &[Planned],
    regions: &BTreeMap<usize, NumBox>,
    root: &[Option<NumBox>],
) -> Vec<Option<NumBox>> {
    planned.iter().map(|p| regions.get(&p.out).cloned().or_else(|| root[p.out].clone())).collect()
}
