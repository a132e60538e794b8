//! Pass 1: the environment. Finds every Func the outputs depend on, reports the user's
//! definition and schedule mistakes, inlines the Funcs computed inline, resolves each
//! Func's compute and store levels and orders the realizations (producers first).

use crate::analysis::substitute_map;
use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{
    BinOp, CallKind, Expr, ExprKind, ForKind, FuncId, Intrinsic, Mutator, Name, ReductionRef, Type, VarBinding, Visitor,
};
use crate::lang::func::FuncRef;
use crate::schedule::{FuncSchedule, LoopLevel, StageSchedule};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// One definition of a Func after inlining, with its loop schedule.
#[derive(Clone, Debug)]
pub struct StageDef {
    /// Left-hand side arguments (pure variables for the pure stage).
    pub args: Vec<Expr>,
    /// Values (tuple elements).
    pub values: Vec<Expr>,
    /// Reduction domain of an update.
    pub rdom: Option<ReductionRef>,
    /// Loops of the stage.
    pub schedule: StageSchedule,
    /// The calls to Funcs computed inline that the stage made before inlining, with their
    /// arguments inlined too: coordinates like those of any call, which bounds inference
    /// checks against the coordinate limit although no buffer is realized for them.
    pub inlined_calls: Vec<Expr>,
}

/// What lowering knows of one Func.
#[derive(Clone, Debug)]
pub struct FuncInfo {
    /// Unique name.
    pub name: Name,
    /// Pure variable names, innermost dimension first.
    pub args: Vec<Name>,
    /// Value types (one per tuple element).
    pub types: Vec<Type>,
    /// Stage 0 is the pure definition, then the updates.
    pub stages: Vec<StageDef>,
    /// Where it is computed and stored, as the user wrote it.
    pub schedule: FuncSchedule,
    /// True for a pipeline output.
    pub is_output: bool,
    /// Where it is computed (resolved; `Inlined` for inlined Funcs).
    pub compute: LoopLevel,
    /// Where its storage lives (resolved).
    pub store: LoopLevel,
}

impl FuncInfo {
    /// The storage names of its values: `f`, or `f.0`, `f.1`... for tuples.
    pub fn buffer_names(&self) -> Vec<Name> {
        buffer_names(&self.name, self.types.len())
    }
}

/// Storage names of a Func with `n` values.
pub fn buffer_names(name: &str, n: usize) -> Vec<Name> {
    (0..n).map(|i| buffer_name(name, i, n > 1)).collect()
}

/// Storage name of value `index` of a Func: `f`, or `f.index` for a tuple.
pub fn buffer_name(name: &str, index: usize, tuple: bool) -> Name {
    if tuple {
        format!("{name}.{index}").into()
    } else {
        name.into()
    }
}

/// An input image used by the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageUse {
    /// Element type.
    pub ty: Type,
    /// Number of dimensions it is called with.
    pub dims: usize,
}

/// Everything the later passes need about the algorithm.
#[derive(Clone, Debug)]
pub struct Environment {
    /// Every non-inlined Func, by name.
    pub funcs: BTreeMap<Name, FuncInfo>,
    /// Non-inlined Funcs, producers before consumers.
    pub order: Vec<Name>,
    /// The outputs, in the order given.
    pub outputs: Vec<Name>,
    /// Input images called by the pipeline.
    pub images: BTreeMap<Name, ImageUse>,
    /// Scalars bound at run time (`Param`s and image shapes), with their types.
    pub params: BTreeMap<Name, Type>,
}

/// Every Func the outputs depend on (outputs first, then in order of first call), found by
/// walking their definitions; two Funcs with one name are an error, so that the rest of
/// lowering can refer to Funcs by name.
fn collect_funcs(outputs: &[FuncRef]) -> Result<Vec<FuncRef>> {
    struct Finder {
        found: Vec<FuncRef>,
        seen: HashSet<FuncRef>,
        seen_ids: HashSet<FuncId>,
    }
    impl Visitor for Finder {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { kind: CallKind::Func { func, .. }, .. } = e.kind() {
                if self.seen_ids.insert(*func) {
                    let f = FuncRef::from_id(*func);
                    if self.seen.insert(f.clone()) {
                        self.found.push(f);
                    }
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut finder =
        Finder { found: outputs.to_vec(), seen: outputs.iter().cloned().collect(), seen_ids: HashSet::new() };
    let mut i = 0;
    while i < finder.found.len() {
        let f = finder.found[i].clone();
        let exprs: Vec<Expr> = {
            let d = f.lock();
            let mut v = Vec::new();
            for def in d.pure.iter().chain(d.updates.iter()) {
                v.extend(def.args.iter().cloned());
                v.extend(def.values.iter().cloned());
                if let Some(r) = &def.rdom {
                    for rv in &r.0.vars {
                        v.push(rv.min.clone());
                        v.push(rv.extent.clone());
                    }
                }
            }
            v
        };
        exprs.iter().for_each(|e| finder.visit_expr(e));
        i += 1;
    }
    let mut names: HashMap<Name, FuncRef> = HashMap::new();
    for f in &finder.found {
        let n = f.name();
        if let Some(other) = names.insert(n.clone(), f.clone()) {
            if other != *f {
                return Err(Error::Definition(format!(
                    "two different Funcs are named '{n}'; give each Func its own name"
                )));
            }
        }
    }
    Ok(finder.found)
}

/// Replaces calls to inlined Funcs by their definitions, and keeps the calls it replaced
/// (see [`StageDef::inlined_calls`]).
struct Inliner<'a> {
    inlined: &'a HashMap<Name, (Vec<Name>, Vec<Expr>)>,
    /// Keyed by node identity; the key node is kept alive beside its result so its
    /// address cannot be reused by a later temporary. With the result, the inlined calls
    /// made inside the node (each once).
    memo: HashMap<*const crate::ir::ExprNode, (Expr, Expr, Rc<Vec<Expr>>)>,
    /// The inlined calls met since the last `take_calls`.
    calls: Vec<Expr>,
    /// Nodes inlining has made since the last `take_calls`.
    made: u64,
    /// The inlined Funcs being expanded, innermost last.
    expanding: Vec<Name>,
    /// The Func being expanded when `made` passed [`MAX_INLINED_TERMS`].
    too_big: Option<Name>,
}

/// The most new terms inlining may make for one definition. Inlining copies a Func's body
/// into every call with the call's arguments (calls with equal arguments share one copy),
/// so a chain of Funcs that each call the last at two places (`f(x) = g(x) + g(x + 1)`)
/// doubles at every link: 30 links would need 2^30 terms, and memory runs out long before.
/// Past this many the pipeline is refused, with a message saying which Func to compute
/// at root.
pub const MAX_INLINED_TERMS: u64 = 1 << 20;

impl Inliner<'_> {
    /// The inlined calls met since the last call, each once.
    fn take_calls(&mut self) -> Vec<Expr> {
        self.made = 0;
        let mut seen = HashSet::new();
        std::mem::take(&mut self.calls).into_iter().filter(|c| seen.insert(c.clone())).collect()
    }
}

impl Mutator for Inliner<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        stack::guard(|| {
            if let Some((_, r, calls)) = self.memo.get(&e.ptr()) {
                let r = r.clone();
                let calls = calls.clone();
                self.calls.extend(calls.iter().cloned());
                return r;
            }
            // Past the limit the result is refused: stop copying.
            if self.too_big.is_some() {
                return e.clone();
            }
            let start = self.calls.len();
            let out = match e.kind() {
                ExprKind::Call { name, args, kind: kind @ CallKind::Func { value_index, .. } }
                    if self.inlined.contains_key(name) =>
                {
                    let (params, values) = &self.inlined[name];
                    let args: Vec<Expr> = args.iter().map(|a| self.mutate_expr(a)).collect();
                    self.calls.push(Expr::make(
                        e.ty(),
                        ExprKind::Call { name: name.clone(), args: args.clone(), kind: kind.clone() },
                    ));
                    let map: HashMap<Name, Expr> = params.iter().cloned().zip(args).collect();
                    let body = substitute_map(&map, &values[*value_index]);
                    // The body may call other inlined Funcs.
                    self.expanding.push(name.clone());
                    let out = self.mutate_expr(&body);
                    self.expanding.pop();
                    out
                }
                _ => crate::ir::mutate_expr_children(self, e),
            };
            self.made += 1;
            if self.made > MAX_INLINED_TERMS && self.too_big.is_none() {
                self.too_big = self.expanding.last().cloned();
            }
            // Each call once: a chain of doubling Funcs makes the same calls many times.
            let mut seen = HashSet::new();
            let inside: Vec<Expr> = self.calls[start..].iter().filter(|c| seen.insert((*c).clone())).cloned().collect();
            self.calls.truncate(start);
            self.calls.extend(inside.iter().cloned());
            self.memo.insert(e.ptr(), (e.clone(), out.clone(), Rc::new(inside)));
            out
        })
    }
}

fn check_free_vars(
    f: &FuncInfo,
    stage_index: usize,
    stage: &StageDef,
    params: &mut BTreeMap<Name, Type>,
) -> Result<()> {
    struct Free<'a> {
        allowed: &'a HashSet<Name>,
        bad: Option<Name>,
        params: &'a mut BTreeMap<Name, Type>,
        conflict: Option<(Name, Type, Type)>,
        /// An operator applied to operands of a type it has no meaning for.
        mistyped: Option<String>,
    }
    impl Visitor for Free<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match e.kind() {
                ExprKind::Binary(op, a, _) if a.ty().is_float() => {
                    let word = match op {
                        BinOp::BitAnd => Some("&"),
                        BinOp::BitOr => Some("|"),
                        BinOp::BitXor => Some("^"),
                        BinOp::Shl => Some("<<"),
                        BinOp::Shr => Some(">>"),
                        _ => None,
                    };
                    if let Some(word) = word {
                        self.mistyped.get_or_insert(format!(
                            "'{word}' works on the bits of integers (and on bools), but '{e}' applies it to {}; \
                             reinterpret or convert the value explicitly",
                            a.ty()
                        ));
                    }
                }
                ExprKind::Call { kind: CallKind::Intrinsic(Intrinsic::BitNot), args, .. }
                    if args.first().is_some_and(|a| a.ty().is_float()) =>
                {
                    self.mistyped.get_or_insert(format!(
                        "'!' is a bitwise not for integers (and a logical not for bools), but '{e}' applies it to {}",
                        args[0].ty()
                    ));
                }
                ExprKind::Var { name, binding: VarBinding::Plain } if !self.allowed.contains(name) => {
                    self.bad.get_or_insert(name.clone());
                }
                ExprKind::Var { name, binding: VarBinding::Param } => {
                    if let Some(t) = self.params.insert(name.clone(), e.ty()) {
                        if t != e.ty() {
                            self.conflict = Some((name.clone(), t, e.ty()));
                        }
                    }
                }
                _ => {}
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let allowed: HashSet<Name> = if stage_index == 0 {
        f.args.iter().cloned().collect()
    } else {
        stage
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a.as_var() {
                Some(n) if *n == f.args[i] => Some(n.clone()),
                _ => None,
            })
            .collect()
    };
    let mut v = Free { allowed: &allowed, bad: None, params, conflict: None, mistyped: None };
    stage.args.iter().chain(stage.values.iter()).for_each(|e| v.visit_expr(e));
    if let Some(r) = &stage.rdom {
        for rv in &r.0.vars {
            v.visit_expr(&rv.min);
            v.visit_expr(&rv.extent);
        }
    }
    let which = if stage_index == 0 { "pure definition".to_string() } else { format!("update {}", stage_index - 1) };
    if let Some(name) = v.bad {
        return Err(Error::Definition(format!(
            "Func '{}' {which}: uses Var '{name}', which is not one of its pure arguments {:?} at its own position",
            f.name, f.args
        )));
    }
    if let Some(r) = &stage.rdom {
        if let Some(e) = crate::lang::var::rdom_errors(r).into_iter().next() {
            return Err(Error::Definition(format!("Func '{}' {which}: {e}", f.name)));
        }
    }
    if let Some(m) = v.mistyped {
        return Err(Error::Definition(format!("Func '{}' {which}: {m}", f.name)));
    }
    if let Some((name, a, b)) = v.conflict {
        return Err(Error::Definition(format!("Param '{name}' is used with two types, {a} and {b}")));
    }
    Ok(())
}

fn collect_images(exprs: &[Expr], images: &mut BTreeMap<Name, ImageUse>) -> Result<()> {
    struct Images<'a> {
        images: &'a mut BTreeMap<Name, ImageUse>,
        error: Option<Error>,
    }
    impl Visitor for Images<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { name, args, kind: CallKind::Image } = e.kind() {
                let u = ImageUse { ty: e.ty(), dims: args.len() };
                if let Some(old) = self.images.insert(name.clone(), u.clone()) {
                    if old != u {
                        self.error.get_or_insert(Error::Definition(format!(
                            "ImageParam '{name}' is called with {} arguments of type {} and with {} arguments of type {}",
                            old.dims, old.ty, u.dims, u.ty
                        )));
                    }
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut v = Images { images, error: None };
    exprs.iter().for_each(|e| v.visit_expr(e));
    v.error.map_or(Ok(()), Err)
}

/// The name of the Func through which a distributed input is read.
pub fn placement_name(image: &str) -> Name {
    format!("{image}$placed").into()
}

/// For each input image the pipeline reads that is distributed
/// ([`crate::ImageParam::distribute`]), a Func `image$placed(x, ...) = image(x, ...)`
/// bounded to the whole image (its run-time `image.global.*` region), computed at root
/// and distributed along the image's distributed dimensions: each rank copies its block of
/// the image, which is all its buffer holds.
fn place_distributed_inputs(all: &[FuncRef]) -> Result<Vec<(Name, crate::lang::func::Func)>> {
    struct Calls(BTreeMap<Name, usize>);
    impl Visitor for Calls {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { name, args, kind: CallKind::Image } = e.kind() {
                self.0.insert(name.clone(), args.len());
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut calls = Calls(BTreeMap::new());
    for f in all {
        let d = f.lock();
        let defs = d.pure.iter().map(|p| (&p.args, &p.values)).chain(d.updates.iter().map(|u| (&u.args, &u.values)));
        for (args, values) in defs {
            args.iter().chain(values).for_each(|e| calls.visit_expr(e));
        }
    }
    let mut placed = Vec::new();
    for (image, arity) in calls.0 {
        let dims = crate::lang::param::image_param_distribution(&image);
        if dims.is_empty() {
            continue;
        }
        let Some(param) = crate::lang::param::ImageParam::lookup(&image) else { continue };
        if let Some(&d) = dims.iter().find(|&&d| d >= arity) {
            return Err(Error::Schedule(format!(
                "ImageParam '{image}': distribute(&[{d}]), but the image has {arity} dimensions"
            )));
        }
        let vars: Vec<crate::lang::var::Var> =
            (0..arity).map(|d| crate::lang::var::Var::new(&format!("v{d}"))).collect();
        let args: Vec<Expr> = vars.iter().map(|v| Expr::from(*v)).collect();
        let w = crate::lang::func::Func::new(&placement_name(&image));
        w.def(args.clone(), param.at(args));
        w.compute_root();
        for (d, v) in vars.iter().enumerate() {
            let global = |what: &str| Expr::param(Type::i32(), super::distribute::global_region_param(&image, what, d));
            w.bound(*v, global("min"), global("extent"));
        }
        for &d in &dims {
            w.distribute(vars[d]);
        }
        placed.push((image, w));
    }
    Ok(placed)
}

/// Makes every Func but the placements read each distributed input through its placement.
fn read_through_placements(infos: &mut [FuncInfo], placed: &[(Name, crate::lang::func::Func)]) {
    struct Redirect<'a>(&'a [(Name, crate::lang::func::Func)]);
    impl Mutator for Redirect<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = crate::ir::mutate_expr_children(self, e);
            if let ExprKind::Call { name, args, kind: CallKind::Image } = e.kind() {
                if let Some((_, w)) = self.0.iter().find(|(i, _)| *i == *name) {
                    let kind = CallKind::Func { func: w.func_ref().id(), value_index: 0, tuple: false };
                    return Expr::make(e.ty(), ExprKind::Call { name: w.name(), args: args.clone(), kind });
                }
            }
            e
        }
    }
    // The algorithm's view of a distributed image's shape (`input.width()`, ...) is the
    // whole image's on every rank, as the seed's DistributedImage has it: the rank's buffer
    // holds only its block, whose own shape only the placement's loads and checks use.
    struct GlobalShape<'a>(&'a [(Name, crate::lang::func::Func)]);
    impl Mutator for GlobalShape<'_> {
        fn mutate_expr(&mut self, e: &Expr) -> Expr {
            let e = crate::ir::mutate_expr_children(self, e);
            if let ExprKind::Var { name, binding: crate::ir::VarBinding::Param } = e.kind() {
                for (image, _) in self.0 {
                    let Some(rest) = name.strip_prefix(&**image).and_then(|r| r.strip_prefix('.')) else {
                        continue;
                    };
                    for what in ["min", "extent"] {
                        if let Some(d) = rest.strip_prefix(what).and_then(|r| r.strip_prefix('.')) {
                            if let Ok(d) = d.parse::<usize>() {
                                let global = super::distribute::global_region_param(image, what, d);
                                return Expr::param(e.ty(), global);
                            }
                        }
                    }
                }
            }
            e
        }
    }
    let wrappers: Vec<Name> = placed.iter().map(|(_, w)| w.name()).collect();
    // Reduction domains are shared between stages by identity: each is rewritten once.
    let mut domains: Vec<(ReductionRef, ReductionRef)> = Vec::new();
    for f in infos.iter_mut().filter(|f| !wrappers.contains(&f.name)) {
        let global = |e: &Expr| GlobalShape(placed).mutate_expr(e);
        for s in f.stages.iter_mut() {
            s.args = s.args.iter().map(|a| Redirect(placed).mutate_expr(&global(a))).collect();
            s.values = s.values.iter().map(|v| Redirect(placed).mutate_expr(&global(v))).collect();
            if let Some(r) = &s.rdom {
                let rewritten = match domains.iter().find(|(old, _)| old == r) {
                    Some((_, new)) => new.clone(),
                    None => {
                        let vars =
                            r.0.vars
                                .iter()
                                .map(|v| crate::ir::ReductionVariable {
                                    name: v.name.clone(),
                                    min: global(&v.min),
                                    extent: global(&v.extent),
                                })
                                .collect();
                        let new = ReductionRef(std::sync::Arc::new(crate::ir::ReductionDomain { vars }));
                        domains.push((r.clone(), new.clone()));
                        new
                    }
                };
                s.rdom = Some(rewritten);
            }
        }
        for b in &mut f.schedule.bounds {
            b.min = global(&b.min);
            b.extent = global(&b.extent);
        }
    }
}

/// Builds the environment for the pipeline with these outputs.
pub fn build_environment(outputs: &[FuncRef]) -> Result<Environment> {
    let mut all = collect_funcs(outputs)?;
    let output_names: Vec<Name> = outputs.iter().map(|f| f.name()).collect();
    // A distributed input is read through a distributed Func that copies each rank's block
    // of it (the border exchange then moves what other ranks read across blocks).
    let placed = place_distributed_inputs(&all)?;
    all.extend(placed.iter().map(|(_, w)| w.func_ref().clone()));

    // Snapshot every Func, reporting recorded mistakes first.
    let mut infos: Vec<FuncInfo> = Vec::new();
    for f in &all {
        let d = f.lock();
        if let Some(e) = d.errors.first() {
            return Err(e.clone());
        }
        let pure =
            d.pure.as_ref().ok_or_else(|| Error::Definition(format!("Func '{}' is used but never defined", d.name)))?;
        let mut stages = vec![StageDef {
            args: pure.args.clone(),
            values: pure.values.clone(),
            rdom: None,
            schedule: pure.schedule.clone(),
            inlined_calls: Vec::new(),
        }];
        for u in &d.updates {
            stages.push(StageDef {
                args: u.args.clone(),
                values: u.values.clone(),
                rdom: u.rdom.clone(),
                schedule: u.schedule.clone(),
                inlined_calls: Vec::new(),
            });
        }
        let is_output = output_names.contains(&d.name);
        let has_updates = !d.updates.is_empty();
        let compute = match (&d.schedule.compute_level, is_output) {
            (Some(LoopLevel::Root) | None, true) => LoopLevel::Root,
            (Some(other), true) => {
                return Err(Error::Schedule(format!(
                "Func '{}' is an output of the pipeline, so it is computed at root; it cannot be scheduled {other:?}",
                d.name
            )))
            }
            (Some(l), false) => l.clone(),
            (None, false) if has_updates => LoopLevel::Root,
            (None, false) => LoopLevel::Inlined,
        };
        if compute == LoopLevel::Inlined && has_updates {
            return Err(Error::Schedule(format!(
                "Func '{}': compute_inline: a Func with update definitions cannot be inlined",
                d.name
            )));
        }
        let store = match &d.schedule.store_level {
            Some(l) if compute == LoopLevel::Inlined => {
                return Err(Error::Schedule(format!(
                    "Func '{}' is computed inline, so it has no storage to place with store level {l:?}",
                    d.name
                )))
            }
            Some(l) => l.clone(),
            None => compute.clone(),
        };
        if let (LoopLevel::Root, LoopLevel::At { func, var }) = (&compute, &store) {
            return Err(Error::Schedule(format!(
                "Func '{}': store_at({func}, {var}) is inside its compute level, root; a Func is stored at or \
                 outside the level where it is computed",
                d.name
            )));
        }
        if is_output && store != LoopLevel::Root {
            return Err(Error::Schedule(format!(
                "Func '{}' is an output; its storage is the output buffer and cannot be placed elsewhere",
                d.name
            )));
        }
        infos.push(FuncInfo {
            name: d.name.clone(),
            args: d.args.clone(),
            types: pure.values.iter().map(|v| v.ty()).collect(),
            stages,
            schedule: d.schedule.clone(),
            is_output,
            compute,
            store,
        });
    }

    if !placed.is_empty() {
        read_through_placements(&mut infos, &placed);
    }

    // Inline.
    let inlined: HashMap<Name, (Vec<Name>, Vec<Expr>)> = infos
        .iter()
        .filter(|f| f.compute == LoopLevel::Inlined)
        .map(|f| (f.name.clone(), (f.args.clone(), f.stages[0].values.clone())))
        .collect();
    let mut inliner = Inliner {
        inlined: &inlined,
        memo: HashMap::new(),
        calls: Vec::new(),
        made: 0,
        expanding: Vec::new(),
        too_big: None,
    };
    let func_names: Vec<Name> = infos.iter().map(|f| f.name.clone()).collect();
    // Cycles are found before inlining: once `g` is inlined into `f`'s update, a call of
    // `f` through `g` looks like the update reading `f`'s earlier value.
    let before_inlining: BTreeMap<Name, FuncInfo> = infos.iter().map(|f| (f.name.clone(), f.clone())).collect();
    realization_order(&before_inlining, &output_names, &[])?;
    let mut funcs: BTreeMap<Name, FuncInfo> = BTreeMap::new();
    let mut params = BTreeMap::new();
    let mut images = BTreeMap::new();
    for mut f in infos.into_iter().filter(|f| f.compute != LoopLevel::Inlined) {
        for s in f.stages.iter_mut() {
            s.args = s.args.iter().map(|a| inliner.mutate_expr(a)).collect();
            s.values = s.values.iter().map(|a| inliner.mutate_expr(a)).collect();
            s.inlined_calls = inliner.take_calls();
            if let Some(callee) = inliner.too_big.take() {
                return Err(Error::Definition(format!(
                    "Func '{}': inlining Func '{callee}' into it makes more than {MAX_INLINED_TERMS} new terms: \
                     the Funcs inlined here call each other at several places, so each copy multiplies; \
                     compute '{callee}' (or a Func between them) at root or at a loop of its consumer",
                    f.name
                )));
            }
        }
        for (i, s) in f.stages.iter().enumerate() {
            check_free_vars(&f, i, s, &mut params)?;
            let mut exprs: Vec<Expr> = s.args.iter().chain(s.values.iter()).cloned().collect();
            if let Some(r) = &s.rdom {
                for rv in &r.0.vars {
                    exprs.push(rv.min.clone());
                    exprs.push(rv.extent.clone());
                }
            }
            collect_images(&exprs, &mut images)?;
        }
        funcs.insert(f.name.clone(), f);
    }
    // Inlined Funcs may also carry parameters and images (already substituted above);
    // check the levels that name other Funcs.
    for f in funcs.values() {
        for (what, level) in [("compute_at", &f.compute), ("store_at", &f.store)] {
            if let LoopLevel::At { func, var } = level {
                if !funcs.contains_key(func) {
                    let why = if inlined.contains_key(func) {
                        "which is computed inline and so has no loops"
                    } else {
                        "which is not part of this pipeline"
                    };
                    return Err(Error::Schedule(format!(
                        "Func '{}': {what}({func}, {var}) names Func '{func}', {why}",
                        f.name
                    )));
                }
                if *func == f.name {
                    return Err(Error::Schedule(format!("Func '{}': {what} names its own loop '{var}'", f.name)));
                }
            }
        }
    }

    // Mistakes made while calling an image (wrong arity, float coordinates) were recorded
    // on the ImageParam, since a call cannot fail.
    for name in images.keys() {
        if let Some(e) = crate::lang::param::image_param_errors(name).into_iter().next() {
            return Err(e);
        }
    }
    check_one_namespace(&func_names, &images, &params)?;
    let fused = check_compute_with(&funcs, &before_inlining)?;
    let order = realization_order(&funcs, &output_names, &fused)?;
    // A distributed pipeline also reads its rank, the number of ranks, the grids of ranks,
    // and the global shape of each distributed output.
    if funcs.values().any(super::distribute::uses_ranks) {
        params.extend(super::distribute::params());
        for (image, _) in &placed {
            for d in 0..images.get(image).map_or(0, |u: &ImageUse| u.dims) {
                for what in ["min", "extent"] {
                    params.insert(super::distribute::global_region_param(image, what, d), Type::i32());
                }
            }
        }
        for o in &output_names {
            let f = &funcs[o];
            if super::distribute::is_distributed(f) {
                for d in 0..f.args.len() {
                    for what in ["min", "extent"] {
                        params.insert(super::distribute::global_region_param(o, what, d), Type::i32());
                    }
                }
            }
        }
    }
    Ok(Environment { funcs, order, outputs: output_names, images, params })
}

/// Funcs, ImageParams and Params share one namespace: a buffer, its shape symbols
/// (`name.min.0`, ...) and a scalar are all found by name when a pipeline runs, so a Func
/// named like an image would read the image's buffer, or an output named like its input
/// its own output.
fn check_one_namespace(funcs: &[Name], images: &BTreeMap<Name, ImageUse>, params: &BTreeMap<Name, Type>) -> Result<()> {
    let mut kinds: BTreeMap<&str, &str> = BTreeMap::new();
    let named = funcs
        .iter()
        .map(|n| (n, "Func"))
        .chain(images.keys().map(|n| (n, "ImageParam")))
        .chain(params.keys().map(|n| (n, "Param")));
    for (name, kind) in named {
        if let Some(other) = kinds.insert(name, kind) {
            return Err(Error::Definition(format!(
                "{other} '{name}' and {kind} '{name}' have one name; Funcs, ImageParams and Params of a \
                 pipeline share one namespace, so rename one of them"
            )));
        }
    }
    Ok(())
}

/// The loops of `f`'s pure stage, outermost first, that `compute_with(parent, var)` fuses
/// with `parent`'s: as many as `parent` has from its outermost down to `var`.
///
/// Checks Halide's rules for `compute_with` and returns the pairs `(f, parent)`: both
/// computed at one level and stored at one level, neither an output nor with update definitions,
/// neither depending on the other, one Func computed with each parent, and fused loops of
/// one kind each (serial, parallel or unrolled).
pub fn fused_loop_count(f: &FuncInfo, funcs: &BTreeMap<Name, FuncInfo>) -> Result<Option<(Name, usize)>> {
    let Some((parent, var)) = &f.schedule.compute_with else { return Ok(None) };
    let name = &f.name;
    let fail = |why: String| Err(Error::Schedule(format!("Func '{name}': compute_with({parent}, {var}): {why}")));
    let Some(p) = funcs.get(parent) else {
        return fail(format!("'{parent}' is not computed by this pipeline (it is inlined or not used)"));
    };
    if p.compute == LoopLevel::Inlined {
        return fail(format!("'{parent}' is computed inline; schedule it compute_root() or compute_at(..) first"));
    }
    if f.compute != p.compute || f.store != p.store {
        return fail(format!(
            "both must be computed at one level and stored at one level, but '{name}' is computed at {} and \
             stored at {}, '{parent}' computed at {} and stored at {}",
            level_name(&f.compute),
            level_name(&f.store),
            level_name(&p.compute),
            level_name(&p.store)
        ));
    }
    for g in [f, p] {
        if g.is_output {
            return fail(format!("'{}' is a pipeline output; only Funcs inside the pipeline can share loops", g.name));
        }
        if g.stages.len() > 1 {
            return fail(format!("'{}' has update definitions; only pure definitions share loops", g.name));
        }
    }
    let parent_dims = &p.stages[0].schedule.dims;
    let Some(at) = parent_dims.iter().position(|d| d.var == *var) else {
        let loops: Vec<&str> = parent_dims.iter().rev().map(|d| &*d.var).collect();
        return fail(format!("'{parent}' has no loop '{var}' (its loops, outermost first: {})", loops.join(", ")));
    };
    let count = parent_dims.len() - at;
    let dims = &f.stages[0].schedule.dims;
    if dims.len() < count {
        return fail(format!(
            "'{parent}' has {count} loops down to '{var}' but '{name}' has only {} loops to fuse them with",
            dims.len()
        ));
    }
    for i in 0..count {
        let (a, b) = (&parent_dims[parent_dims.len() - 1 - i], &dims[dims.len() - 1 - i]);
        let fusable = |k: ForKind| matches!(k, ForKind::Serial | ForKind::Parallel | ForKind::Unrolled);
        if a.kind != b.kind || !fusable(a.kind) {
            return fail(format!(
                "loop {i} from the outside is '{}' ({:?}) in '{parent}' and '{}' ({:?}) in '{name}'; fused loops \
                 must both be serial, both parallel or both unrolled",
                a.var, a.kind, b.var, b.kind
            ));
        }
    }
    Ok(Some((parent.clone(), count)))
}

fn level_name(l: &LoopLevel) -> String {
    match l {
        LoopLevel::Inlined => "inline".into(),
        LoopLevel::Root => "root".into(),
        LoopLevel::At { func, var } => format!("{func}.{var}"),
    }
}

/// Checks every `compute_with` (see [`fused_loop_count`]) and returns the pairs
/// `(f, parent)`.
fn check_compute_with(
    funcs: &BTreeMap<Name, FuncInfo>,
    before_inlining: &BTreeMap<Name, FuncInfo>,
) -> Result<Vec<(Name, Name)>> {
    // Inlined Funcs are gone from `funcs`.
    for f in before_inlining.values() {
        if let (Some((parent, var)), LoopLevel::Inlined) = (&f.schedule.compute_with, &f.compute) {
            return Err(Error::Schedule(format!(
                "Func '{}': compute_with({parent}, {var}): '{}' is computed inline; schedule it as '{parent}' is \
                 (compute_root() or compute_at(..)) first",
                f.name, f.name
            )));
        }
    }
    let mut pairs: Vec<(Name, Name)> = Vec::new();
    for f in funcs.values() {
        let Some((parent, _)) = fused_loop_count(f, funcs)? else { continue };
        let var = &f.schedule.compute_with.as_ref().expect("has one").1;
        let name = &f.name;
        if let Some((other, _)) = pairs.iter().find(|(_, p)| *p == parent) {
            return Err(Error::Schedule(format!(
                "Func '{name}': compute_with({parent}, {var}): '{other}' is already computed with '{parent}'; \
                 one Func shares the loops of each"
            )));
        }
        if funcs[&parent].schedule.compute_with.is_some() || pairs.iter().any(|(c, _)| *c == *name) {
            return Err(Error::Schedule(format!(
                "Func '{name}': compute_with({parent}, {var}): '{parent}' is itself computed with another Func; \
                 chains of compute_with are not supported"
            )));
        }
        for (from, to) in [(name, &parent), (&parent, name)] {
            if let Some(path) = call_path(funcs, from, to) {
                return Err(Error::Schedule(format!(
                    "Func '{name}': compute_with({parent}, {var}): '{from}' reads '{to}' ({}); Funcs that share \
                     loops must not depend on each other",
                    path.join(" -> ")
                )));
            }
        }
        pairs.push((name.clone(), parent));
    }
    Ok(pairs)
}

/// A chain of calls from `from` to `to`, if `from` depends on `to`.
fn call_path(funcs: &BTreeMap<Name, FuncInfo>, from: &Name, to: &Name) -> Option<Vec<String>> {
    let mut stack = vec![vec![from.clone()]];
    let mut seen: HashSet<Name> = HashSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().expect("never empty").clone();
        if last == *to {
            return Some(path.iter().map(|n| n.to_string()).collect());
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        if let Some(f) = funcs.get(&last) {
            for c in callees(f) {
                let mut p = path.clone();
                p.push(c);
                stack.push(p);
            }
        }
    }
    None
}

/// Names of the Funcs called (directly) by `f`'s definitions.
pub fn callees(f: &FuncInfo) -> Vec<Name> {
    struct Calls(Vec<Name>);
    impl Visitor for Calls {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { name, kind: CallKind::Func { .. }, .. } = e.kind() {
                if !self.0.contains(name) {
                    self.0.push(name.clone());
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut c = Calls(Vec::new());
    for s in &f.stages {
        s.args.iter().chain(s.values.iter()).for_each(|e| c.visit_expr(e));
    }
    c.0.retain(|n| *n != f.name);
    c.0
}

/// Producers first; a Func computed with another (`fused`: pairs `(f, parent)`) comes
/// right after its parent, the two visited as one.
fn realization_order(funcs: &BTreeMap<Name, FuncInfo>, outputs: &[Name], fused: &[(Name, Name)]) -> Result<Vec<Name>> {
    #[derive(PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    fn visit(
        n: &Name,
        funcs: &BTreeMap<Name, FuncInfo>,
        marks: &mut HashMap<Name, Mark>,
        order: &mut Vec<Name>,
        path: &mut Vec<Name>,
        fused: &[(Name, Name)],
    ) -> Result<()> {
        stack::guard(|| {
            match marks.get(n) {
                Some(Mark::Done) => return Ok(()),
                Some(Mark::Visiting) => {
                    path.push(n.clone());
                    let names: Vec<&str> = path.iter().map(|p| &**p).collect();
                    return Err(Error::Definition(format!(
                        "the Funcs call each other in a cycle: {}",
                        names.join(" -> ")
                    )));
                }
                None => {}
            }
            let group: Vec<Name> = match fused.iter().find(|(c, p)| c == n || p == n) {
                Some((child, parent)) => vec![parent.clone(), child.clone()],
                None => vec![n.clone()],
            };
            for g in &group {
                marks.insert(g.clone(), Mark::Visiting);
            }
            path.push(n.clone());
            for g in &group {
                for c in callees(&funcs[g]).into_iter().filter(|c| !group.contains(c)) {
                    visit(&c, funcs, marks, order, path, fused)?;
                }
            }
            path.pop();
            for g in group {
                marks.insert(g.clone(), Mark::Done);
                order.push(g);
            }
            Ok(())
        })
    }
    let mut marks = HashMap::new();
    let mut order = Vec::new();
    for o in outputs {
        visit(o, funcs, &mut marks, &mut order, &mut Vec::new(), fused)?;
    }
    Ok(order)
}
