//! The pipeline as the auto-scheduler sees it: every Func reachable from the outputs (the
//! DAG `P = {K_0 … K_m}` of Sioutas et al. sec. 4.1), its calls, its consumers, what
//! evaluating one point costs, and whether the user scheduled it by hand.

use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{BinOp, CallKind, Expr, ExprKind, Name, Type, VarBinding, Visitor};
use crate::lang::func::FuncRef;
use crate::schedule::LoopLevel;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a call reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Callee {
    /// A Func, by node index.
    Func(usize),
    /// An input image, by name.
    Image(Name),
}

/// One call made by a definition.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    /// The stage of the caller that makes it (0 = the pure definition).
    pub stage: usize,
    pub callee: Callee,
    pub args: Vec<Expr>,
}

/// One definition of a Func.
#[derive(Clone, Debug)]
pub(crate) struct StageDesc {
    pub args: Vec<Expr>,
    pub values: Vec<Expr>,
    /// Reduction variables: name, min, extent.
    pub rvars: Vec<(Name, Expr, Expr)>,
    /// Pure variables of this stage: (dimension, name).
    pub pure: Vec<(usize, Name)>,
}

/// One Func of the pipeline.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub fref: FuncRef,
    pub name: Name,
    /// Pure variable names, innermost dimension first.
    pub args: Vec<Name>,
    pub types: Vec<Type>,
    pub stages: Vec<StageDesc>,
    pub calls: Vec<Call>,
    pub is_output: bool,
    /// The Func's own estimates (outputs must have them).
    pub estimates: Vec<(i32, i32)>,
    /// Scheduled by hand, or named by a hand-scheduled Func's compute/store level: the
    /// auto-scheduler leaves it exactly as it is.
    pub fixed: bool,
    /// Fixed and computed inline: transparent, its callers read its callees.
    pub fixed_inline: bool,
    /// Direct callers (other Funcs; no self-references), in node order.
    pub consumers: Vec<usize>,
    /// Arithmetic per point of the pure definition, calls counted as one each.
    pub ops: f64,
    /// The same for every stage (0 = the pure definition).
    pub stage_ops: Vec<f64>,
    /// Computing a point costs about as much as loading one (Algorithm 2's `trivial`).
    pub trivial: bool,
    /// At most two operations on two Funcs read at the point itself (`Ix(x, y) * Iy(x,
    /// y)`): trivial too where its consumers read those Funcs anyway (see
    /// `inline::producers_read_anyway`).
    pub pointwise_pair: bool,
    /// The widest type its definitions compute with (a `u8` colour curve of `f32` values).
    pub arith_type: Option<Type>,
}

impl Node {
    pub fn has_updates(&self) -> bool {
        self.stages.len() > 1
    }
    /// A reduction computed point by point (`f(x, y) = 0; f(x, y) += g(x + r.x, y + r.y)`,
    /// what an inline `sum` or `maximum` makes): every update writes the point of its own
    /// pure variables and reads itself only there. Each point is then independent of the
    /// others, so the Func can be computed over any box, inside a consumer's tiles like a
    /// pure Func (it just does not slide: its updates would have to slide too).
    pub fn is_pointwise_reduction(&self) -> bool {
        self.has_updates()
            && self.dims() > 0
            && (1..self.stages.len()).all(|k| {
                let stage = &self.stages[k];
                stage.args.len() == self.dims()
                    && stage.args.iter().zip(&self.args).all(|(a, v)| a.as_var() == Some(v))
                    && (0..self.dims()).all(|d| self.update_var_is_independent(k, d))
            })
    }
    /// Pure variable `d` of update stage `k` may run in parallel (or as vector lanes):
    /// every self-reference reads exactly that variable in that position (what lowering
    /// checks).
    pub fn update_var_is_independent(&self, k: usize, d: usize) -> bool {
        let stage = &self.stages[k];
        let Some((_, v)) = stage.pure.iter().find(|(p, _)| *p == d) else { return false };
        crate::lower::schedule_functions::self_calls(&self.name, &stage.values)
            .iter()
            .all(|args| args.get(d).and_then(|a| a.as_var()) == Some(v))
    }
    pub fn dims(&self) -> usize {
        self.args.len()
    }
    /// Bytes per point (the widest value decides the vector width, as in Halide).
    pub fn elem_bytes(&self) -> usize {
        self.types.iter().map(|t| t.element().bytes()).sum::<usize>().max(1)
    }
    /// The type that sets the vector width: the widest value, or the widest arithmetic
    /// that computes it (vectors of it fill the registers; wider ones would spill).
    pub fn vector_type(&self) -> Type {
        self.types.iter().chain(&self.arith_type).copied().max_by_key(|t| t.element().bytes()).unwrap_or(Type::i32())
    }
}

/// The whole DAG.
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
    /// Producers before consumers.
    pub order: Vec<usize>,
    /// Images read, with their number of dimensions and element type.
    pub images: BTreeMap<Name, (usize, Type)>,
    /// Scalar parameters that decide regions (in indices, reduction bounds), excluding image shapes.
    pub shape_params: BTreeSet<Name>,
}

/// Finds calls, and the parameters that appear where they decide regions.
struct CallFinder {
    calls: Vec<(Option<FuncRef>, Name, Vec<Expr>)>,
    params: BTreeSet<Name>,
    /// Above 0 inside an index (or an update's left-hand side, or reduction bounds).
    index_depth: usize,
}

impl Visitor for CallFinder {
    fn visit_expr(&mut self, e: &Expr) {
        stack::guard(|| match e.kind() {
            ExprKind::Call { name, args, kind: CallKind::Func { func, .. } } => {
                self.calls.push((Some(FuncRef::from_id(*func)), name.clone(), args.clone()));
                self.index_depth += 1;
                args.iter().for_each(|a| self.visit_expr(a));
                self.index_depth -= 1;
            }
            ExprKind::Call { name, args, kind: CallKind::Image } => {
                self.calls.push((None, name.clone(), args.clone()));
                self.index_depth += 1;
                args.iter().for_each(|a| self.visit_expr(a));
                self.index_depth -= 1;
            }
            ExprKind::Var { name, binding: VarBinding::Param } => {
                if self.index_depth > 0 {
                    self.params.insert(name.clone());
                }
            }
            _ => crate::ir::walk_expr(self, e),
        })
    }
}

/// What an integer division or modulo by a value that is not a constant costs per point,
/// in operations: x86 has no vector integer division, so each lane divides on its own
/// (a scalar `idiv` and the moves around it) where other operations cost one vector
/// instruction for all lanes. On the development corpus a window sum over
/// `scan(x) / (x + 1)` inlined that division into every tap (three times the divisions:
/// 40% of the pipeline's time) because the definition looked trivial.
pub(crate) const VARIABLE_INTEGER_DIVISION: f64 = 16.0;

/// What a signed integer division or modulo by a constant that is not a power of two
/// costs per point, in vector operations: a multiply-high emulated on even and odd lanes,
/// shifts and a sign fix for the truncating quotient, then a multiply, a subtraction, a
/// compare and an add to round it down (about eleven instructions for `i32x8 / 5`;
/// unsigned lanes need only the first part, about half). A power of two is one shift or
/// mask. On the development corpus a box filter's normalization `sum / 5`, counted as one
/// operation, looked trivial and was inlined into every tap of the 5-tap stencil reading
/// it. With this weight, 9 of the development seeds 1000-1019 got other schedules: in
/// paired runs six took 0.71-0.92x their time, three the same within noise (0.90x in
/// geometric mean); no schedule of the 18 apps changed.
pub(crate) const CONSTANT_INTEGER_DIVISION: f64 = 8.0;

/// Operations one point of value arithmetic `e` costs (see [`VARIABLE_INTEGER_DIVISION`]
/// and [`CONSTANT_INTEGER_DIVISION`]).
fn value_op_weight(e: &Expr) -> f64 {
    match e.kind() {
        ExprKind::Binary(BinOp::Div | BinOp::Mod, _, b) if !e.ty().is_float() => match b.as_int() {
            None => VARIABLE_INTEGER_DIVISION,
            Some(k) if k > 0 && k & (k - 1) == 0 => 1.0,
            Some(_) if e.ty().is_uint() => CONSTANT_INTEGER_DIVISION / 2.0,
            Some(_) => CONSTANT_INTEGER_DIVISION,
        },
        _ => 1.0,
    }
}

/// Counts arithmetic outside call indices, and calls.
fn cost_of(values: &[Expr]) -> Cost {
    let mut c = Cost { seen: Default::default(), ops: 0.0, loads: 0, value_ops: 0, widest: None };
    values.iter().for_each(|v| c.walk(v, false));
    c.ops = c.ops.max(1.0);
    c
}

/// What computing one point of a definition takes. Each distinct subexpression counts
/// once (structurally, as CSE will find them).
struct Cost {
    seen: std::collections::HashSet<Expr>,
    ops: f64,
    loads: usize,
    value_ops: usize,
    /// The widest type of the values loaded, of the arithmetic outside indices and of
    /// non-affine index arithmetic.
    widest: Option<Type>,
}
impl Cost {
    fn widen(&mut self, t: Type) {
        if self.widest.is_none_or(|w| t.element().bytes() > w.element().bytes()) {
            self.widest = Some(t);
        }
    }
    fn walk(&mut self, e: &Expr, in_index: bool) {
        stack::guard(|| {
            if !self.seen.insert(e.clone()) {
                return;
            }
            match e.kind() {
                ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. } => {}
                ExprKind::Call { args, kind: CallKind::Func { .. } | CallKind::Image, .. } => {
                    self.ops += 1.0;
                    self.loads += 1;
                    // A loaded value is a value even where it indexes (a look-up table).
                    self.widen(e.ty());
                    args.iter().for_each(|a| self.walk(a, true));
                }
                ExprKind::Let { value, body, .. } => {
                    self.walk(value, in_index);
                    self.walk(body, in_index);
                }
                _ => {
                    // Index arithmetic is cheaper than value arithmetic (scalar, often hoisted).
                    let weight = if in_index { 0.25 } else { value_op_weight(e) };
                    self.ops += weight;
                    if !in_index && !matches!(e.kind(), ExprKind::Cast(_)) {
                        self.value_ops += weight as usize;
                    }
                    // Indices are computed in vectors too where they are not affine (a mirrored
                    // boundary's `%`, an up-sampling's `/`): then gathers follow.
                    let non_affine = matches!(e.kind(), ExprKind::Binary(BinOp::Mod | BinOp::Div, _, _));
                    if !in_index || non_affine {
                        self.widen(e.ty());
                    }
                    e.for_each_child(|c| self.walk(c, in_index));
                }
            }
        })
    }
}

fn touched(fref: &FuncRef) -> bool {
    let d = fref.lock();
    d.schedule.touched || d.pure.iter().chain(d.updates.iter()).any(|s| s.schedule.touched)
}

/// Builds the graph of the pipeline with these outputs.
pub(crate) fn build_graph(outputs: &[FuncRef]) -> Result<Graph> {
    // Breadth-first over the definitions, in call order (deterministic).
    let mut refs: Vec<FuncRef> = Vec::new();
    // Keyed by identity (the address of the shared contents), like FuncRef's Eq.
    let key = |f: &FuncRef| std::sync::Arc::as_ptr(&f.0) as usize;
    let mut seen: HashMap<usize, usize> = HashMap::new();
    for o in outputs {
        if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(key(o)) {
            e.insert(refs.len());
            refs.push(o.clone());
        }
    }
    type RawCall = (usize, Option<FuncRef>, Name, Vec<Expr>);
    let mut raw: Vec<(Vec<StageDesc>, Vec<RawCall>)> = Vec::new();
    let mut shape_params = BTreeSet::new();
    let mut i = 0;
    while i < refs.len() {
        let d = refs[i].lock();
        if let Some(e) = d.errors.first() {
            return Err(e.clone());
        }
        let pure =
            d.pure.as_ref().ok_or_else(|| Error::Definition(format!("Func '{}' is used but never defined", d.name)))?;
        let mut stages = Vec::new();
        let mut calls = Vec::new();
        for (k, def) in std::iter::once(pure).chain(d.updates.iter()).enumerate() {
            let rvars: Vec<(Name, Expr, Expr)> = def
                .rdom
                .as_ref()
                .map(|r| r.0.vars.iter().map(|v| (v.name.clone(), v.min.clone(), v.extent.clone())).collect())
                .unwrap_or_default();
            let pure_vars: Vec<(usize, Name)> = d
                .args
                .iter()
                .enumerate()
                .filter(|(p, a)| k == 0 || def.args.get(*p).and_then(|e| e.as_var()) == Some(a))
                .map(|(p, a)| (p, a.clone()))
                .collect();
            let mut finder = CallFinder { calls: Vec::new(), params: BTreeSet::new(), index_depth: 0 };
            // Update left-hand sides and reduction bounds decide regions like indices do.
            finder.index_depth = usize::from(k > 0);
            def.args.iter().for_each(|a| finder.visit_expr(a));
            finder.index_depth = 1;
            for (_, min, ext) in &rvars {
                finder.visit_expr(min);
                finder.visit_expr(ext);
            }
            finder.index_depth = 0;
            def.values.iter().for_each(|v| finder.visit_expr(v));
            shape_params.extend(finder.params);
            for (f, name, args) in finder.calls {
                calls.push((k, f, name, args));
            }
            stages.push(StageDesc { args: def.args.clone(), values: def.values.clone(), rvars, pure: pure_vars });
        }
        drop(d);
        for (_, f, _, _) in &calls {
            if let Some(f) = f {
                if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(key(f)) {
                    e.insert(refs.len());
                    refs.push(f.clone());
                }
            }
        }
        raw.push((stages, calls));
        i += 1;
    }

    let mut index: HashMap<Name, usize> = HashMap::new();
    for (i, f) in refs.iter().enumerate() {
        let n = f.name();
        if let Some(&j) = index.get(&n) {
            if refs[j] != *f {
                return Err(Error::Definition(format!(
                    "two different Funcs are named '{n}'; give each Func its own name"
                )));
            }
        }
        index.insert(n, i);
    }
    let output_set: BTreeSet<usize> = outputs.iter().map(|o| seen[&key(o)]).collect();

    let mut images = BTreeMap::new();
    let mut nodes = Vec::new();
    for (i, (stages, calls)) in raw.into_iter().enumerate() {
        let fref = refs[i].clone();
        let (name, args, estimates) = {
            let d = fref.lock();
            (d.name.clone(), d.args.clone(), d.estimates.clone())
        };
        let types: Vec<Type> = stages[0].values.iter().map(|v| v.ty()).collect();
        let mut node_calls = Vec::new();
        for (k, f, cname, cargs) in calls {
            let callee = match f {
                Some(f) => {
                    let j = seen[&key(&f)];
                    if j == i {
                        continue;
                    }
                    Callee::Func(j)
                }
                None => {
                    images.insert(cname.clone(), (cargs.len(), Type::i32()));
                    Callee::Image(cname)
                }
            };
            // The same call written twice (a shared subexpression) reads once once the
            // code is CSE'd, so it counts once.
            let call = Call { stage: k, callee, args: cargs };
            if !node_calls.contains(&call) {
                node_calls.push(call);
            }
        }
        let costs: Vec<Cost> = stages.iter().map(|s| cost_of(&s.values)).collect();
        let pure_cost = &costs[0];
        let (ops, trivial) = (pure_cost.ops, pure_cost.loads <= 1 && pure_cost.value_ops <= 2 && stages.len() == 1);
        let at_the_point = |c: &Call| {
            matches!(c.callee, Callee::Func(_))
                && c.args.len() == args.len()
                && c.args.iter().zip(&args).all(|(a, v)| a.as_var() == Some(v))
        };
        let pointwise_pair = stages.len() == 1
            && pure_cost.loads == 2
            && pure_cost.value_ops <= 2
            && node_calls.iter().all(|c| c.stage == 0 && at_the_point(c));
        let stage_ops = costs.iter().map(|c| c.ops).collect();
        let arith_type = costs.iter().filter_map(|c| c.widest).max_by_key(|t| t.element().bytes());
        nodes.push(Node {
            fref,
            name,
            args,
            types,
            stages,
            calls: node_calls,
            is_output: output_set.contains(&i),
            estimates,
            fixed: false,
            fixed_inline: false,
            consumers: Vec::new(),
            ops,
            stage_ops,
            trivial,
            pointwise_pair,
            arith_type,
        });
    }
    // Image element types, from the calls.
    for n in &nodes {
        for s in &n.stages {
            struct Ty<'a>(&'a mut BTreeMap<Name, (usize, Type)>);
            impl Visitor for Ty<'_> {
                fn visit_expr(&mut self, e: &Expr) {
                    if let ExprKind::Call { name, kind: CallKind::Image, .. } = e.kind() {
                        if let Some(v) = self.0.get_mut(name) {
                            v.1 = e.ty().element();
                        }
                    }
                    crate::ir::walk_expr(self, e)
                }
            }
            let mut t = Ty(&mut images);
            s.values.iter().chain(s.args.iter()).for_each(|e| t.visit_expr(e));
        }
    }

    // Consumers.
    for i in 0..nodes.len() {
        let callees: BTreeSet<usize> = nodes[i]
            .calls
            .iter()
            .filter_map(|c| match c.callee {
                Callee::Func(j) => Some(j),
                Callee::Image(_) => None,
            })
            .collect();
        for j in callees {
            nodes[j].consumers.push(i);
        }
    }

    // Hand-scheduled Funcs, and the Funcs their levels name, stay as they are.
    let mut fixed: BTreeSet<usize> = BTreeSet::new();
    for (i, n) in nodes.iter().enumerate() {
        if touched(&n.fref) {
            fixed.insert(i);
            let d = n.fref.lock();
            for l in [&d.schedule.compute_level, &d.schedule.store_level].into_iter().flatten() {
                if let LoopLevel::At { func, .. } = l {
                    if let Some(&j) = index.get(func) {
                        fixed.insert(j);
                    }
                }
            }
        }
    }
    for &i in &fixed {
        let n = &mut nodes[i];
        n.fixed = true;
        let d = n.fref.lock();
        let inline = match &d.schedule.compute_level {
            Some(LoopLevel::Inlined) => true,
            None => d.updates.is_empty() && !n.is_output,
            _ => false,
        };
        drop(d);
        n.fixed_inline = inline && !n.is_output;
    }

    let order = topological_order(&nodes, outputs.iter().map(|o| seen[&key(o)]).collect())?;
    Ok(Graph { nodes, order, images, shape_params })
}

fn topological_order(nodes: &[Node], outputs: Vec<usize>) -> Result<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Visiting,
        Done,
    }
    fn visit(
        i: usize,
        nodes: &[Node],
        marks: &mut [Mark],
        order: &mut Vec<usize>,
        path: &mut Vec<usize>,
    ) -> Result<()> {
        stack::guard(|| {
            match marks[i] {
                Mark::Done => return Ok(()),
                Mark::Visiting => {
                    path.push(i);
                    let names: Vec<&str> = path.iter().map(|&p| &*nodes[p].name).collect();
                    return Err(Error::Definition(format!(
                        "the Funcs call each other in a cycle: {}",
                        names.join(" -> ")
                    )));
                }
                Mark::New => {}
            }
            marks[i] = Mark::Visiting;
            path.push(i);
            for c in &nodes[i].calls {
                if let Callee::Func(j) = c.callee {
                    visit(j, nodes, marks, order, path)?;
                }
            }
            path.pop();
            marks[i] = Mark::Done;
            order.push(i);
            Ok(())
        })
    }
    let mut marks = vec![Mark::New; nodes.len()];
    let mut order = Vec::new();
    for o in outputs {
        visit(o, nodes, &mut marks, &mut order, &mut Vec::new())?;
    }
    Ok(order)
}
