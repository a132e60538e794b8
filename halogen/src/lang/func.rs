//! `Func`: a function over the integer grid, its definitions and its schedule.

use super::args::IntoArgs;
use super::var::{Var, VarOrRVar};
use crate::error::Error;
use crate::ir::{CallKind, Expr, ExprKind, ForKind, FuncId, Name, ReductionRef, Type, VarBinding, Visitor};
use crate::schedule::{
    Bound, Dim, FuncSchedule, LoopLevel, Split, StageSchedule, TailStrategy, MAX_UNROLL, MAX_VECTOR_LANES,
};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// One definition of a Func: the pure one (args are its pure variables) or an update.
#[derive(Clone, Debug)]
pub struct Definition {
    /// Left-hand side arguments.
    pub args: Vec<Expr>,
    /// Right-hand side values (more than one for tuples).
    pub values: Vec<Expr>,
    /// The reduction domain the update iterates over, if any.
    pub rdom: Option<ReductionRef>,
    /// The loop structure of this stage.
    pub schedule: StageSchedule,
}

/// The shared contents of a Func.
#[derive(Debug)]
pub struct FuncData {
    /// Unique name.
    pub name: Name,
    /// Names of the pure variables (set by the pure definition).
    pub args: Vec<Name>,
    /// The pure definition.
    pub pure: Option<Definition>,
    /// Update definitions in order.
    pub updates: Vec<Definition>,
    /// Where it is computed and stored.
    pub schedule: FuncSchedule,
    /// User mistakes found while defining or scheduling, reported by `compile`.
    pub errors: Vec<Error>,
    /// Size estimates for the auto-scheduler (`(min, extent)` per dimension).
    pub estimates: Vec<(i32, i32)>,
    /// The id its calls carry, given when it is first called.
    pub id: Option<FuncId>,
}

/// A shared, identity-compared reference to a Func's contents.
#[derive(Clone)]
pub struct FuncRef(pub Arc<Mutex<FuncData>>);

/// Every Func that has been called, indexed by its [`FuncId`]. A call carries only the id,
/// so the registry keeps the Func alive for as long as a call might be walked (like the
/// RDom registry, it is never pruned: the handle cannot know when its last call is gone).
fn called_funcs() -> &'static Mutex<Vec<FuncRef>> {
    static R: OnceLock<Mutex<Vec<FuncRef>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Vec::new()))
}

impl FuncRef {
    /// The id calls to this Func carry (given, and the Func registered, on first use).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// use halogen::lang::func::FuncRef;
    /// let f = Func::new("f");
    /// f.def(Var::new("x"), 1);
    /// let id = f.func_ref().id();
    /// assert_eq!(FuncRef::from_id(id), *f.func_ref());
    /// ```
    pub fn id(&self) -> FuncId {
        let mut d = self.lock();
        *d.id.get_or_insert_with(|| {
            let mut r = called_funcs().lock().unwrap_or_else(|p| p.into_inner());
            r.push(self.clone());
            FuncId(u32::try_from(r.len() - 1).expect("fewer than 2^32 Funcs are called"))
        })
    }
    /// The id of this Func if it has ever been called.
    pub fn called_id(&self) -> Option<FuncId> {
        self.lock().id
    }
    /// The Func a call's id refers to.
    pub fn from_id(id: FuncId) -> FuncRef {
        called_funcs().lock().unwrap_or_else(|p| p.into_inner())[id.0 as usize].clone()
    }

    /// Locks the contents.
    pub fn lock(&self) -> MutexGuard<'_, FuncData> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
    /// The Func's name.
    pub fn name(&self) -> Name {
        self.lock().name.clone()
    }
    /// Number of tuple values (0 if undefined).
    pub fn num_values(&self) -> usize {
        self.lock().pure.as_ref().map_or(0, |d| d.values.len())
    }
    /// Types of the values.
    pub fn value_types(&self) -> Vec<Type> {
        self.lock().pure.as_ref().map_or(Vec::new(), |d| d.values.iter().map(|v| v.ty()).collect())
    }
    /// Number of dimensions.
    pub fn dimensions(&self) -> usize {
        self.lock().args.len()
    }
}

impl PartialEq for FuncRef {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for FuncRef {}
impl Hash for FuncRef {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(h)
    }
}
impl std::fmt::Debug for FuncRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Func({})", self.name())
    }
}

/// A function over the infinite integer grid: one pure definition, any number of update
/// definitions, and a schedule. A cheap handle: clones refer to the same Func.
///
/// ```
/// use halogen::prelude::*;
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// let grad = Func::new("grad");
/// grad.def((x, y), x + y);
/// let (xi, yi) = (Var::new("xi"), Var::new("yi"));
/// grad.tile(x, y, xi, yi, 8, 8).vectorize(xi, 4).parallel(y);
/// let out = Pipeline::new(&[&grad]).compile(&Target::interp()).unwrap();
/// let mut buf = Buffer::<i32>::new(&[16, 16]);
/// out.realize(&Args::new(), &mut buf).unwrap();
/// assert_eq!(buf[[3, 4]], 7);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Func(pub(crate) FuncRef);

/// One stage (the pure definition or an update) of a Func, for scheduling its loops.
#[derive(Clone, Debug)]
pub struct Stage {
    func: FuncRef,
    index: usize,
}

fn collect_rdoms(exprs: &[Expr]) -> Vec<ReductionRef> {
    struct Finder(Vec<ReductionRef>);
    impl Visitor for Finder {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Var { binding: VarBinding::Reduction(r), .. } = e.kind() {
                if !self.0.contains(r) {
                    self.0.push(r.clone());
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut f = Finder(Vec::new());
    exprs.iter().for_each(|e| f.visit_expr(e));
    f.0
}

impl Func {
    /// A new, undefined Func. The Funcs of one pipeline need distinct names: compiling a
    /// pipeline in which two Funcs share one is an `Err`.
    pub fn new(name: &str) -> Func {
        Func(FuncRef(Arc::new(Mutex::new(FuncData {
            name: name.into(),
            args: Vec::new(),
            pure: None,
            updates: Vec::new(),
            schedule: FuncSchedule::default(),
            errors: Vec::new(),
            estimates: Vec::new(),
            id: None,
        }))))
    }

    /// A Func with a unique generated name starting with `prefix`.
    pub(crate) fn fresh(prefix: &str) -> Func {
        Func::new(&super::var::unique_name(prefix))
    }

    /// A Func the language makes for the user (an inline reduction's), with what the
    /// user wrote to make it: error messages that name the Func say so.
    pub(crate) fn made_for(prefix: &str, origin: String) -> Func {
        let f = Func::fresh(prefix);
        origins().lock().unwrap_or_else(|p| p.into_inner()).insert(f.name(), origin);
        f
    }

    /// The shared contents (for the compiler).
    pub fn func_ref(&self) -> &FuncRef {
        &self.0
    }

    /// Its name.
    pub fn name(&self) -> Name {
        self.0.name()
    }

    /// Number of dimensions (pure variables).
    pub fn dimensions(&self) -> usize {
        self.0.dimensions()
    }

    /// Number of values (1, or the tuple size).
    pub fn outputs(&self) -> usize {
        self.0.num_values()
    }

    /// Types of the values.
    pub fn output_types(&self) -> Vec<Type> {
        self.0.value_types()
    }

    /// True once the pure definition exists.
    pub fn defined(&self) -> bool {
        self.0.lock().pure.is_some()
    }

    #[track_caller]
    fn record(&self, e: Error) {
        self.0.lock().errors.push(e);
    }

    /// The pure definition `f(args) = value`. Arguments must be distinct `Var`s.
    #[track_caller]
    pub fn def(&self, args: impl IntoArgs, value: impl Into<Expr>) -> &Func {
        self.def_tuple(args, &[value.into()])
    }

    /// The pure definition of a tuple-valued Func.
    #[track_caller]
    pub fn def_tuple(&self, args: impl IntoArgs, values: &[Expr]) -> &Func {
        let loc = Location::caller();
        let args = args.into_args();
        let name = self.name();
        let mut names: Vec<Name> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            match a.kind() {
                ExprKind::Var { name: v, binding: VarBinding::Plain } if !names.contains(v) => names.push(v.clone()),
                _ => {
                    self.record(Error::Definition(format!(
                        "Func '{name}': argument {i} of the pure definition is '{a}', but pure definitions take distinct Vars (at {loc})"
                    )));
                    return self;
                }
            }
        }
        if values.is_empty() {
            self.record(Error::Definition(format!("Func '{name}': a definition needs at least one value (at {loc})")));
            return self;
        }
        let mut d = self.0.lock();
        if d.pure.is_some() {
            d.errors.push(Error::Definition(format!(
                "Func '{name}' already has a pure definition; use update() for more (at {loc})"
            )));
            return self;
        }
        let dims = names.iter().map(|n| Dim { var: n.clone(), kind: ForKind::Serial, is_rvar: false }).collect();
        d.args = names;
        d.pure = Some(Definition {
            args,
            values: values.to_vec(),
            rdom: None,
            schedule: StageSchedule { dims, ..Default::default() },
        });
        drop(d);
        self
    }

    /// An update definition `f(args) = value`; args may be any integer expressions
    /// (reduction variables, data-dependent indices).
    #[track_caller]
    pub fn update(&self, args: impl IntoArgs, value: impl Into<Expr>) -> &Func {
        self.update_tuple(args, &[value.into()])
    }

    /// An update definition of a tuple-valued Func.
    #[track_caller]
    pub fn update_tuple(&self, args: impl IntoArgs, values: &[Expr]) -> &Func {
        let loc = Location::caller();
        let name = self.name();
        let args: Vec<Expr> = args.into_args().into_iter().map(super::expr_ops::to_i32).collect();
        let (pure_args, types) = {
            let d = self.0.lock();
            match &d.pure {
                None => {
                    drop(d);
                    self.record(Error::Definition(format!(
                        "Func '{name}': update() before the pure definition (at {loc})"
                    )));
                    return self;
                }
                Some(p) => (d.args.clone(), p.values.iter().map(|v| v.ty()).collect::<Vec<_>>()),
            }
        };
        if args.len() != pure_args.len() {
            self.record(Error::Definition(format!(
                "Func '{name}': update has {} arguments but the Func has {} dimensions (at {loc})",
                args.len(),
                pure_args.len()
            )));
            return self;
        }
        if values.len() != types.len() {
            self.record(Error::Definition(format!(
                "Func '{name}': update gives {} values but the Func has {} (at {loc})",
                values.len(),
                types.len()
            )));
            return self;
        }
        let mut vals = Vec::new();
        for (i, (v, t)) in values.iter().zip(&types).enumerate() {
            if v.ty() != *t {
                // Constants adapt, as they do in expressions; anything else is a mistake.
                if v.is_const() {
                    vals.push(super::expr_ops::cast(*t, v.clone()));
                    continue;
                }
                self.record(Error::Definition(format!(
                    "Func '{name}': update value {i} has type {} but the Func's value {i} has type {t} (at {loc})",
                    v.ty()
                )));
                return self;
            }
            vals.push(v.clone());
        }
        let mut all: Vec<Expr> = args.clone();
        all.extend(vals.iter().cloned());
        let rdoms = collect_rdoms(&all);
        if rdoms.len() > 1 {
            self.record(Error::Definition(format!(
                "Func '{name}': an update may use only one RDom, this one uses {} (at {loc})",
                rdoms.len()
            )));
            return self;
        }
        let rdom = rdoms.into_iter().next();
        let mut dims: Vec<Dim> = Vec::new();
        if let Some(r) = &rdom {
            // Reduction variables that appear anywhere become loops, innermost first.
            for rv in &r.0.vars {
                dims.push(Dim { var: rv.name.clone(), kind: ForKind::Serial, is_rvar: true });
            }
        }
        for (i, a) in args.iter().enumerate() {
            if let ExprKind::Var { name: v, binding: VarBinding::Plain } = a.kind() {
                if *v == pure_args[i] {
                    dims.push(Dim { var: v.clone(), kind: ForKind::Serial, is_rvar: false });
                }
            }
        }
        self.0.lock().updates.push(Definition {
            args,
            values: vals,
            rdom,
            schedule: StageSchedule { dims, ..Default::default() },
        });
        self
    }

    /// A call `f(args)`, the Func's only value (use [`Func::at_tuple`] for tuples).
    #[track_caller]
    pub fn at(&self, args: impl IntoArgs) -> Expr {
        let n = self.0.num_values();
        if n > 1 {
            self.record(Error::Definition(format!(
                "Func '{}' has {n} values; call it with at_tuple(args, index) (at {})",
                self.name(),
                Location::caller()
            )));
        }
        self.at_tuple(args, 0)
    }

    /// A call to value `index` of a (tuple-valued) Func.
    #[track_caller]
    pub fn at_tuple(&self, args: impl IntoArgs, index: usize) -> Expr {
        let loc = Location::caller();
        let args = args.into_args();
        for (i, a) in args.iter().enumerate() {
            if a.ty().is_float() {
                self.record(Error::Definition(format!(
                    "Func '{}': argument {i} ('{a}') is {}; coordinates are integers, convert it explicitly (at {loc})",
                    self.name(),
                    a.ty()
                )));
            }
        }
        let args: Vec<Expr> = args.into_iter().map(super::expr_ops::to_i32).collect();
        let types = self.0.value_types();
        let ty = match types.get(index) {
            Some(t) => *t,
            None => {
                let msg = if types.is_empty() {
                    format!("Func '{}' is called before it has a definition (at {loc})", self.name())
                } else {
                    format!(
                        "Func '{}' has {} values; value {index} does not exist (at {loc})",
                        self.name(),
                        types.len()
                    )
                };
                self.record(Error::Definition(msg));
                Type::i32()
            }
        };
        let dims = self.dimensions();
        if !types.is_empty() && args.len() != dims {
            self.record(Error::Definition(format!(
                "Func '{}' has {dims} dimensions but is called with {} arguments (at {loc})",
                self.name(),
                args.len()
            )));
        }
        Expr::make(
            ty,
            ExprKind::Call {
                name: self.name(),
                args,
                kind: CallKind::Func { func: self.0.id(), value_index: index, tuple: types.len() > 1 },
            },
        )
    }

    /// Size estimates for the auto-scheduler, `(min, extent)` per dimension.
    pub fn set_estimates(&self, estimates: &[(i32, i32)]) -> &Func {
        self.0.lock().estimates = estimates.to_vec();
        self
    }

    // ----- where to compute and store -----

    fn set_levels(&self, compute: Option<LoopLevel>, store: Option<Option<LoopLevel>>) -> &Func {
        let mut d = self.0.lock();
        d.schedule.touched = true;
        if let Some(c) = compute {
            d.schedule.compute_level = Some(c);
            d.schedule.compute_rank = false;
        }
        if let Some(s) = store {
            d.schedule.store_level = s;
        }
        drop(d);
        self
    }

    /// Compute all of it before anything that uses it, outside every loop.
    pub fn compute_root(&self) -> &Func {
        self.set_levels(Some(LoopLevel::Root), None)
    }

    /// Compute it at the root of each rank of a distributed run over the region that
    /// rank's consumers need (Distributed Halide's `compute_rank`): no computation repeats
    /// on one rank, and no rank waits for another's, at the price of computing the borders
    /// between ranks on both sides. A root Func that is neither distributed nor
    /// `compute_rank` is computed by every rank over the region all ranks need. On a run
    /// of one process it is `compute_root`.
    pub fn compute_rank(&self) -> &Func {
        self.set_levels(Some(LoopLevel::Root), None);
        self.0.lock().schedule.compute_rank = true;
        self
    }

    /// Compute the part each iteration needs, inside loop `var` of `consumer`.
    pub fn compute_at(&self, consumer: &Func, var: impl Into<VarOrRVar>) -> &Func {
        let level = LoopLevel::At { func: consumer.name(), var: var.into().name() };
        self.set_levels(Some(level), None)
    }

    /// Compute it in the same loops as `parent` (Halide's `compute_with`): the loops of the
    /// two, from the outermost down to and including `parent`'s loop `var`, become one
    /// loop nest, in which each iteration computes `parent`'s part and then this Func's.
    /// Two Funcs that read the same input (the x and y gradients of an image) then read it
    /// once while it is in cache.
    ///
    /// Both must be computed at the same level (and stored there), have no update
    /// definitions, not be pipeline outputs, and not depend on each other; the fused
    /// loops pair up from the outermost, one of each, and must be of the same kind (serial,
    /// parallel or unrolled; not vectorized or GPU loops). Each keeps its own bounds: the
    /// fused loops cover both regions and each Func runs only over its own.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let input = ImageParam::new(Type::f32(), 2, "doc_cw_in");
    /// let c = halogen::boundary::repeat_edge(&input, &input.bounds());
    /// let ix = Func::new("doc_ix");
    /// ix.def((x, y), c.at((x + 1, y)) - c.at((x - 1, y)));
    /// let iy = Func::new("doc_iy");
    /// iy.def((x, y), c.at((x, y + 1)) - c.at((x, y - 1)));
    /// let out = Func::new("doc_cw_out");
    /// out.def((x, y), ix.at((x, y)) * iy.at((x, y)));
    /// ix.compute_root();
    /// iy.compute_root().compute_with(&ix, y);
    /// let c = Pipeline::new(&[&out]).compile(&Target::interp()).unwrap();
    /// // One loop over the rows computes a row of each.
    /// let nest = c.lowered_stmt().to_string();
    /// assert!(nest.contains("for (doc_ix.s0.y,") && !nest.contains("for (doc_iy.s0.y,"), "{nest}");
    /// ```
    pub fn compute_with(&self, parent: &Func, var: impl Into<VarOrRVar>) -> &Func {
        let mut d = self.0.lock();
        d.schedule.touched = true;
        d.schedule.compute_with = Some((parent.name(), var.into().name()));
        drop(d);
        self
    }

    /// Substitute the definition into every use (the default for Funcs without updates).
    #[track_caller]
    pub fn compute_inline(&self) -> &Func {
        if !self.0.lock().updates.is_empty() {
            self.record(Error::Schedule(format!(
                "Func '{}': compute_inline: a Func with update definitions cannot be inlined (at {})",
                self.name(),
                Location::caller()
            )));
        }
        self.set_levels(Some(LoopLevel::Inlined), Some(None))
    }

    /// Keep its storage outside every loop (with `compute_at`, a sliding window).
    pub fn store_root(&self) -> &Func {
        self.set_levels(None, Some(Some(LoopLevel::Root)))
    }

    /// Keep its storage inside loop `var` of `consumer`.
    pub fn store_at(&self, consumer: &Func, var: impl Into<VarOrRVar>) -> &Func {
        let level = LoopLevel::At { func: consumer.name(), var: var.into().name() };
        self.set_levels(None, Some(Some(level)))
    }

    /// Promise that pure variable `var` covers exactly `[min, min + extent)`.
    pub fn bound(&self, var: Var, min: impl Into<Expr>, extent: impl Into<Expr>) -> &Func {
        let b = Bound {
            var: var.name(),
            min: super::expr_ops::to_i32(min.into()),
            extent: super::expr_ops::to_i32(extent.into()),
        };
        let mut d = self.0.lock();
        d.schedule.touched = true;
        d.schedule.bounds.retain(|o| o.var != b.var);
        d.schedule.bounds.push(b);
        drop(d);
        self
    }

    /// Storage order of the pure variables, innermost first.
    #[track_caller]
    pub fn reorder_storage(&self, vars: &[Var]) -> &Func {
        let loc = Location::caller();
        let names: Vec<Name> = vars.iter().map(|v| v.name()).collect();
        let mut d = self.0.lock();
        d.schedule.touched = true;
        for n in &names {
            if !d.args.contains(n) {
                let e = Error::Schedule(format!(
                    "Func '{}': reorder_storage: '{n}' is not one of its pure variables {:?} (at {loc})",
                    d.name, d.args
                ));
                d.errors.push(e);
                return self;
            }
        }
        d.schedule.storage_order = names;
        drop(d);
        self
    }

    /// The schedule of update definition `n` (0 = the first update).
    #[track_caller]
    pub fn update_stage(&self, n: usize) -> Stage {
        let count = self.0.lock().updates.len();
        if n >= count {
            self.record(Error::Schedule(format!(
                "Func '{}': update_stage({n}): it has {count} update definitions (at {})",
                self.name(),
                Location::caller()
            )));
        }
        Stage { func: self.0.clone(), index: n + 1 }
    }

    /// The schedule of the pure definition.
    pub fn pure_stage(&self) -> Stage {
        Stage { func: self.0.clone(), index: 0 }
    }

    // ----- loop directives of the pure stage -----

    /// Split `var` into `outer * factor + inner` with the default tail strategy.
    #[track_caller]
    pub fn split(
        &self,
        var: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        inner: impl Into<VarOrRVar>,
        factor: i32,
    ) -> &Func {
        self.pure_stage().split(var, outer, inner, factor);
        self
    }
    /// Split with an explicit tail strategy.
    #[track_caller]
    pub fn split_with(
        &self,
        var: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        inner: impl Into<VarOrRVar>,
        factor: i32,
        tail: TailStrategy,
    ) -> &Func {
        self.pure_stage().split_with(var, outer, inner, factor, tail);
        self
    }
    /// Fuse loops `inner` and `outer` into one loop `fused`.
    #[track_caller]
    pub fn fuse(&self, inner: impl Into<VarOrRVar>, outer: impl Into<VarOrRVar>, fused: impl Into<VarOrRVar>) -> &Func {
        self.pure_stage().fuse(inner, outer, fused);
        self
    }
    /// Tile `x, y` by `w × h`; `x, y` then name the tile loops and `xi, yi` the loops inside.
    #[track_caller]
    pub fn tile(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        w: i32,
        h: i32,
    ) -> &Func {
        self.pure_stage().tile(x, y, xi, yi, w, h);
        self
    }
    /// Tile with names for the outer loops too.
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub fn tile_named(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        yo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        w: i32,
        h: i32,
    ) -> &Func {
        self.pure_stage().tile_named(x, y, xo, yo, xi, yi, w, h);
        self
    }
    /// Loop order, innermost first: plain `Var`s, or `VarOrRVar`s where a list mixes
    /// loops of a reduction with pure ones.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("doc_reorder");
    /// f.def((x, y), x + y);
    /// f.reorder(&[y, x]);
    /// let r = RDom::new(&[(Expr::from(0), Expr::from(4))]);
    /// f.update((x, y), f.at((x, y)) + r.x());
    /// f.update_stage(0).reorder(&[VarOrRVar::from(x), r.x().into(), y.into()]);
    /// let nest = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap().lowered_stmt().to_string();
    /// assert!(nest.find("for (doc_reorder.s0.x").unwrap() < nest.find("for (doc_reorder.s0.y").unwrap());
    /// ```
    #[track_caller]
    pub fn reorder<V: Clone + Into<VarOrRVar>>(&self, vars: &[V]) -> &Func {
        self.pure_stage().reorder(vars);
        self
    }
    /// Run loop `var` in parallel.
    #[track_caller]
    pub fn parallel(&self, var: impl Into<VarOrRVar>) -> &Func {
        self.pure_stage().parallel(var);
        self
    }
    /// Run loop `var` in parallel in tasks of `task_size` iterations each (Halide's
    /// `parallel(var, task_size)`): `var` names the parallel loop over the tasks and
    /// `{var}_ti` the loop inside each.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("doc_tasks");
    /// f.def((x, y), x + y);
    /// f.parallel_tasks(y, 8);
    /// let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    /// let nest = c.lowered_stmt().to_string();
    /// assert!(nest.contains("parallel (doc_tasks.s0.y.y, ") && nest.contains("for (doc_tasks.s0.y.y_ti, 0, 8)"));
    /// let mut out = Buffer::<i32>::new(&[4, 20]);
    /// c.realize(&Args::new(), &mut out).unwrap();
    /// assert_eq!(out[[3, 19]], 22);
    /// ```
    #[track_caller]
    pub fn parallel_tasks(&self, var: impl Into<VarOrRVar>, task_size: i32) -> &Func {
        self.pure_stage().parallel_tasks(var, task_size);
        self
    }
    /// Run loop `var` as the block index of a GPU kernel (the target needs a GPU feature:
    /// `host-opencl` or `host-cuda`).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let x = Var::new("x");
    /// let f = Func::new("f");
    /// f.def(x, x + 1);
    /// f.gpu_blocks(x);
    /// let e = Pipeline::new(&[&f]).compile(&Target::host()).unwrap_err().to_string();
    /// assert!(e.contains("Func 'f': gpu_blocks(x) needs a GPU target"), "{e}");
    /// ```
    #[track_caller]
    pub fn gpu_blocks(&self, var: impl Into<VarOrRVar>) -> &Func {
        self.pure_stage().gpu_blocks(var);
        self
    }
    /// Run loop `var` as the thread index within a GPU block (inside a `gpu_blocks` loop).
    #[track_caller]
    pub fn gpu_threads(&self, var: impl Into<VarOrRVar>) -> &Func {
        self.pure_stage().gpu_threads(var);
        self
    }
    /// Split `x` by `w` into GPU block loop `xo` and thread loop `xi` (Halide's 1-D
    /// `gpu_tile`; the target needs a GPU feature).
    #[track_caller]
    pub fn gpu_tile_1d(
        &self,
        x: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        w: i32,
    ) -> &Func {
        self.pure_stage().gpu_tile_1d(x, xo, xi, w);
        self
    }

    /// Tile `x, y` by `w × h`: the tiles are GPU blocks (`xo, yo`), the points in a tile
    /// its threads (`xi, yi`), as Halide's `gpu_tile`. The target needs a GPU feature.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    /// let f = Func::new("f");
    /// f.def((x, y), x * y);
    /// f.gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
    /// let lowered = halogen::lower::lower(&[f.func_ref().clone()], &"host-opencl".parse().unwrap()).unwrap();
    /// let text = lowered.stmt.to_string();
    /// assert!(text.contains("gpu_block (f.s0.y.yo") && text.contains("gpu_thread (f.s0.x.xi"), "{text}");
    /// ```
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub fn gpu_tile(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        yo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        w: i32,
        h: i32,
    ) -> &Func {
        self.pure_stage().gpu_tile(x, y, xo, yo, xi, yi, w, h);
        self
    }

    /// The 3-D form of [`Func::gpu_tile`]: `dims` tiled by `sizes` into block loops `outer`
    /// and thread loops `inner`, each in the order x, y, z.
    #[track_caller]
    pub fn gpu_tile_3d(
        &self,
        dims: [VarOrRVar; 3],
        outer: [VarOrRVar; 3],
        inner: [VarOrRVar; 3],
        sizes: [i32; 3],
    ) -> &Func {
        self.pure_stage().gpu_tile_3d(dims, outer, inner, sizes);
        self
    }

    /// Run the pure definition's loops one after another in a single GPU thread (Halide's
    /// `gpu_single_thread`): a kernel of one block of one thread. Slow for anything large,
    /// but a small stage between GPU stages (a histogram's running sum) then keeps its data
    /// on the device instead of sending it to the host and back. See
    /// [`Stage::gpu_single_thread`].
    #[track_caller]
    pub fn gpu_single_thread(&self) -> &Func {
        self.pure_stage().gpu_single_thread();
        self
    }

    /// Split loop `var` across the ranks of a distributed run (the target needs the `mpi`
    /// feature).
    #[track_caller]
    pub fn distribute(&self, var: impl Into<VarOrRVar>) -> &Func {
        self.pure_stage().distribute(var);
        self
    }
    /// Split `var` by `factor` and vectorize the inner loop; `var` names the outer loop.
    #[track_caller]
    pub fn vectorize(&self, var: impl Into<VarOrRVar>, factor: i32) -> &Func {
        self.pure_stage().vectorize(var, factor);
        self
    }
    /// Split `var` by `factor` and unroll the inner loop; `var` names the outer loop.
    #[track_caller]
    pub fn unroll(&self, var: impl Into<VarOrRVar>, factor: i32) -> &Func {
        self.pure_stage().unroll(var, factor);
        self
    }
    /// Unroll the whole loop `var` (its extent must be a constant).
    #[track_caller]
    pub fn unroll_full(&self, var: impl Into<VarOrRVar>) -> &Func {
        self.pure_stage().unroll_full(var);
        self
    }
}

impl Stage {
    /// The Func this stage belongs to.
    pub(crate) fn func_ref(&self) -> &FuncRef {
        &self.func
    }

    /// 0 for the pure definition, `n + 1` for update `n`.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    fn with_schedule(
        &self,
        directive: &str,
        loc: &Location<'_>,
        f: impl FnOnce(&mut StageSchedule) -> Result<(), String>,
    ) -> &Stage {
        let mut d = self.func.lock();
        let fname = d.name.clone();
        let index = self.index;
        let stage = if index == 0 { d.pure.as_mut() } else { d.updates.get_mut(index - 1) };
        let result = match stage {
            None if index == 0 => Err("the Func has no definition yet".to_string()),
            None => Err(format!("update {} does not exist", index - 1)),
            Some(def) => {
                def.schedule.touched = true;
                f(&mut def.schedule)
            }
        };
        d.schedule.touched = true;
        if let Err(msg) = result {
            let stage_name = if index == 0 { String::new() } else { format!(" update {}", index - 1) };
            d.errors.push(Error::Schedule(format!("Func '{fname}'{stage_name}: {directive}: {msg} (at {loc})")));
        }
        self
    }

    /// Split `var` into `outer * factor + inner` with the default tail strategy.
    #[track_caller]
    pub fn split(
        &self,
        var: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        inner: impl Into<VarOrRVar>,
        factor: i32,
    ) -> &Stage {
        self.split_with(var, outer, inner, factor, TailStrategy::Auto)
    }

    /// Split with an explicit tail strategy.
    #[track_caller]
    pub fn split_with(
        &self,
        var: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        inner: impl Into<VarOrRVar>,
        factor: i32,
        tail: TailStrategy,
    ) -> &Stage {
        let (old, outer, inner) = (var.into().name(), outer.into().name(), inner.into().name());
        self.with_schedule("split", Location::caller(), |s| split_dims(s, &old, &outer, &inner, factor, tail))
    }

    /// Fuse loops `inner` and `outer` (adjacent, `inner` inside) into one loop `fused`.
    #[track_caller]
    pub fn fuse(
        &self,
        inner: impl Into<VarOrRVar>,
        outer: impl Into<VarOrRVar>,
        fused: impl Into<VarOrRVar>,
    ) -> &Stage {
        let (inner, outer, fused) = (inner.into().name(), outer.into().name(), fused.into().name());
        self.with_schedule("fuse", Location::caller(), |s| {
            let i = position(s, &inner)?;
            let o = position(s, &outer)?;
            if o != i + 1 {
                return Err(format!("'{inner}' must be the loop directly inside '{outer}'"));
            }
            if fused != inner && fused != outer && s.dims.iter().any(|d| d.var == fused) {
                return Err(format!("a loop named '{fused}' already exists"));
            }
            let is_rvar = s.dims[i].is_rvar || s.dims[o].is_rvar;
            s.dims.remove(o);
            s.dims[i] = Dim { var: fused.clone(), kind: ForKind::Serial, is_rvar };
            s.splits.push(Split::Fuse { inner, outer, fused });
            Ok(())
        })
    }

    /// Tile `x, y` by `w × h`; `x, y` then name the tile loops and `xi, yi` the loops inside.
    #[track_caller]
    pub fn tile(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        w: i32,
        h: i32,
    ) -> &Stage {
        let (x, y) = (x.into(), y.into());
        self.tile_named(x, y, x, y, xi, yi, w, h)
    }

    /// Tile with names for the outer loops too.
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub fn tile_named(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        yo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        w: i32,
        h: i32,
    ) -> &Stage {
        let (x, y, xo, yo, xi, yi) =
            (x.into().name(), y.into().name(), xo.into().name(), yo.into().name(), xi.into().name(), yi.into().name());
        self.with_schedule("tile", Location::caller(), |s| {
            split_dims(s, &x, &xo, &xi, w, TailStrategy::Auto)?;
            split_dims(s, &y, &yo, &yi, h, TailStrategy::Auto)?;
            reorder_dims(s, &[xi.clone(), yi.clone(), xo.clone(), yo.clone()])
        })
    }

    /// Loop order of the named loops, innermost first (others keep their places).
    #[track_caller]
    pub fn reorder<V: Clone + Into<VarOrRVar>>(&self, vars: &[V]) -> &Stage {
        let names: Vec<Name> = vars.iter().map(|v| v.clone().into().name()).collect();
        self.with_schedule("reorder", Location::caller(), |s| reorder_dims(s, &names))
    }

    fn set_kind(&self, directive: &str, loc: &Location<'_>, var: Name, kind: ForKind) -> &Stage {
        self.with_schedule(directive, loc, |s| {
            let i = position(s, &var)?;
            s.dims[i].kind = kind;
            Ok(())
        })
    }

    /// Run loop `var` in parallel.
    #[track_caller]
    pub fn parallel(&self, var: impl Into<VarOrRVar>) -> &Stage {
        self.set_kind("parallel", Location::caller(), var.into().name(), ForKind::Parallel)
    }

    /// Run loop `var` in parallel in tasks of `task_size` iterations each (Halide's
    /// `parallel(var, task_size)`): `var` is split by `task_size`, `var` names the parallel
    /// outer loop, and each task runs the loop `{var}_ti` of up to `task_size` iterations
    /// inside it.
    #[track_caller]
    pub fn parallel_tasks(&self, var: impl Into<VarOrRVar>, task_size: i32) -> &Stage {
        let var = var.into().name();
        self.with_schedule("parallel_tasks", Location::caller(), |s| {
            check_factor(task_size)?;
            let inner: Name = format!("{var}_ti").into();
            split_dims(s, &var, &var, &inner, task_size, TailStrategy::Auto)?;
            let i = position(s, &var)?;
            s.dims[i].kind = ForKind::Parallel;
            Ok(())
        })
    }

    /// Run loop `var` as the block index of a GPU kernel.
    #[track_caller]
    pub fn gpu_blocks(&self, var: impl Into<VarOrRVar>) -> &Stage {
        self.set_kind("gpu_blocks", Location::caller(), var.into().name(), ForKind::GpuBlock)
    }

    /// Run loop `var` as the thread index within a GPU block.
    #[track_caller]
    pub fn gpu_threads(&self, var: impl Into<VarOrRVar>) -> &Stage {
        self.set_kind("gpu_threads", Location::caller(), var.into().name(), ForKind::GpuThread)
    }

    /// Split `x` by `w` into block loop `xo` and thread loop `xi` (Halide's 1-D `gpu_tile`).
    #[track_caller]
    pub fn gpu_tile_1d(
        &self,
        x: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        w: i32,
    ) -> &Stage {
        let (x, xo, xi) = (x.into().name(), xo.into().name(), xi.into().name());
        self.with_schedule("gpu_tile", Location::caller(), |s| {
            split_dims(s, &x, &xo, &xi, w, TailStrategy::Auto)?;
            mark_gpu(s, std::slice::from_ref(&xo), std::slice::from_ref(&xi))
        })
    }

    /// Tile `x, y` by `w × h` onto GPU blocks `xo, yo` of threads `xi, yi` (Halide's
    /// `gpu_tile`).
    #[allow(clippy::too_many_arguments)]
    #[track_caller]
    pub fn gpu_tile(
        &self,
        x: impl Into<VarOrRVar>,
        y: impl Into<VarOrRVar>,
        xo: impl Into<VarOrRVar>,
        yo: impl Into<VarOrRVar>,
        xi: impl Into<VarOrRVar>,
        yi: impl Into<VarOrRVar>,
        w: i32,
        h: i32,
    ) -> &Stage {
        let (x, y, xo, yo, xi, yi) =
            (x.into().name(), y.into().name(), xo.into().name(), yo.into().name(), xi.into().name(), yi.into().name());
        self.with_schedule("gpu_tile", Location::caller(), |s| {
            split_dims(s, &x, &xo, &xi, w, TailStrategy::Auto)?;
            split_dims(s, &y, &yo, &yi, h, TailStrategy::Auto)?;
            reorder_dims(s, &[xi.clone(), yi.clone(), xo.clone(), yo.clone()])?;
            mark_gpu(s, &[xo.clone(), yo.clone()], &[xi.clone(), yi.clone()])
        })
    }

    /// Tile `x, y, z` by `w × h × d` onto GPU blocks of threads (Halide's 3-D `gpu_tile`);
    /// `outer` names the block loops and `inner` the thread loops, in the order x, y, z.
    #[track_caller]
    pub fn gpu_tile_3d(
        &self,
        dims: [VarOrRVar; 3],
        outer: [VarOrRVar; 3],
        inner: [VarOrRVar; 3],
        sizes: [i32; 3],
    ) -> &Stage {
        let names = |v: [VarOrRVar; 3]| v.map(|v| v.name());
        let (dims, outer, inner) = (names(dims), names(outer), names(inner));
        self.with_schedule("gpu_tile", Location::caller(), |s| {
            for i in 0..3 {
                split_dims(s, &dims[i], &outer[i], &inner[i], sizes[i], TailStrategy::Auto)?;
            }
            let mut order: Vec<Name> = inner.to_vec();
            order.extend(outer.iter().cloned());
            reorder_dims(s, &order)?;
            mark_gpu(s, &outer, &inner)
        })
    }

    /// Makes this update's read-modify-write atomic (Halide's `atomic()`), so that its GPU
    /// loops may run over its reduction variables and points that write the same element
    /// at once: a histogram's `h(bin) = h(bin) + 1` on GPU threads. The update must add to
    /// the point it writes (`f(args) = f(args) + e`, `e` not reading `f`), of a 32-bit
    /// integer; its parallel and vector loops on the CPU are checked as without it.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 1, "bytes");
    /// let (i, r) = (Var::new("i"), RDom::new(&[(Expr::from(0), Expr::from(1024))]));
    /// let hist = Func::new("hist");
    /// hist.def(i, 0);
    /// let bin = input.at(r.x()).cast::<i32>();
    /// hist.update(bin.clone(), hist.at(bin) + 1);
    /// hist.update_stage(0).atomic().gpu_tile_1d(r.x(), Var::new("ro"), Var::new("ri"), 64);
    /// let c = Pipeline::new(&[&hist]).compile(&"host-opencl".parse().unwrap()).unwrap();
    /// assert!(c.kernel_source().unwrap().unwrap().contains("atomic_add(&hist["));
    /// ```
    #[track_caller]
    pub fn atomic(&self) -> &Stage {
        let pure = self.index == 0;
        self.with_schedule("atomic", Location::caller(), |s| {
            if pure {
                return Err("a pure definition writes each point once; atomic() applies to updates".into());
            }
            s.atomic = true;
            Ok(())
        })
    }

    /// Run this stage's loops one after another in a single GPU thread: a kernel of one
    /// block of one thread around the whole stage (Halide's `gpu_single_thread`). Its loops
    /// stay serial, so an update over reduction variables that depend on each other (a
    /// running sum) runs on the device in order. The stage must have no other GPU loops,
    /// and the target needs a GPU feature.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let (i, r) = (Var::new("i"), RDom::new(&[(Expr::from(1), Expr::from(255))]));
    /// let cdf = Func::new("cdf");
    /// cdf.def(i, i);
    /// cdf.update(r.x(), cdf.at(r.x() - 1) + cdf.at(r.x()));
    /// cdf.compute_root().gpu_single_thread();
    /// cdf.update_stage(0).gpu_single_thread();
    /// let c = Pipeline::new(&[&cdf]).compile(&"host-opencl".parse().unwrap()).unwrap();
    /// let text = c.lowered_stmt().to_string();
    /// assert!(text.contains("gpu_block (cdf.s1.__block_id_x") && text.contains("gpu_thread (cdf.s1.__thread_id_x"), "{text}");
    /// ```
    #[track_caller]
    pub fn gpu_single_thread(&self) -> &Stage {
        self.with_schedule("gpu_single_thread", Location::caller(), |s| {
            s.single_gpu_thread = true;
            Ok(())
        })
    }

    /// Split loop `var` across the ranks of a distributed run (Distributed Halide's
    /// `distribute`; the target needs the `mpi` feature): rank `r` of `R` runs the slice
    /// `[r·s, min(w, (r+1)·s))` of the loop's `w` iterations, `s = ⌈w / R⌉`. The loop keeps
    /// its kind within the slice (`parallel(y).distribute(y)`). Two or three distributed
    /// loops of one stage split it over a grid of ranks chosen at run time. A distributed
    /// Func is computed at the root; its consumers on other ranks receive what they need of
    /// it (the border exchange).
    ///
    /// On an update, `var` may instead be (a split of) a reduction variable: each rank then
    /// runs its slice of the reduction domain over a whole copy of the Func, and an
    /// all-reduce combines the copies, so every rank ends with the single-process values.
    /// The update must be `f(args) = f(args) ⊕ e` with `⊕` one of `+ * min max & | ^`, `e`
    /// not reading `f`, and `f` of one integer type computed at the root (a histogram,
    /// a count, an integer minimum).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("doc_distributed");
    /// f.def((x, y), x + y);
    /// f.parallel(y).distribute(y);
    /// let c = Pipeline::new(&[&f]).compile(&"host-mpi".parse().unwrap()).unwrap();
    /// // One rank of one computes everything.
    /// let mut out = Buffer::<i32>::new(&[4, 3]);
    /// let mut args = Args::new();
    /// args.communicator(std::sync::Arc::new(halogen::runtime::distributed::SingleRank));
    /// c.realize(&args, &mut out).unwrap();
    /// assert_eq!(out[[3, 2]], 5);
    /// ```
    #[track_caller]
    pub fn distribute(&self, var: impl Into<VarOrRVar>) -> &Stage {
        let var = var.into().name();
        self.with_schedule("distribute", Location::caller(), |s| {
            position(s, &var)?;
            if !s.distributed.contains(&var) {
                s.distributed.push(var.clone());
            }
            Ok(())
        })
    }

    /// Split `var` by `factor` and vectorize the inner loop; `var` names the outer loop.
    #[track_caller]
    pub fn vectorize(&self, var: impl Into<VarOrRVar>, factor: i32) -> &Stage {
        self.split_and_mark("vectorize", Location::caller(), var.into().name(), factor, ForKind::Vectorized, "vi")
    }

    /// Split `var` by `factor` and unroll the inner loop; `var` names the outer loop.
    #[track_caller]
    pub fn unroll(&self, var: impl Into<VarOrRVar>, factor: i32) -> &Stage {
        self.split_and_mark("unroll", Location::caller(), var.into().name(), factor, ForKind::Unrolled, "ui")
    }

    /// Unroll the whole loop `var` (its extent must be a constant).
    #[track_caller]
    pub fn unroll_full(&self, var: impl Into<VarOrRVar>) -> &Stage {
        self.set_kind("unroll_full", Location::caller(), var.into().name(), ForKind::Unrolled)
    }

    fn split_and_mark(
        &self,
        directive: &str,
        loc: &Location<'_>,
        var: Name,
        factor: i32,
        kind: ForKind,
        suffix: &str,
    ) -> &Stage {
        self.with_schedule(directive, loc, |s| {
            check_factor(factor)?;
            if kind == ForKind::Unrolled && factor > MAX_UNROLL {
                return Err(format!(
                    "the factor {factor} is over {MAX_UNROLL}: an unrolled loop repeats its body once per iteration in the generated code"
                ));
            }
            if kind == ForKind::Vectorized && factor > MAX_VECTOR_LANES {
                return Err(format!("the factor {factor} is over {MAX_VECTOR_LANES}, the widest vector Halogen makes"));
            }
            let inner: Name = format!("{var}_{suffix}").into();
            split_dims(s, &var, &var, &inner, factor, TailStrategy::Auto)?;
            let i = position(s, &inner)?;
            s.dims[i].kind = kind;
            Ok(())
        })
    }
}

fn origins() -> &'static Mutex<HashMap<Name, String>> {
    static O: OnceLock<Mutex<HashMap<Name, String>>> = OnceLock::new();
    O.get_or_init(|| Mutex::new(HashMap::new()))
}

/// `message` with each Func the language made for the user (`'sum$3'`) followed, the first
/// time it appears, by what the user wrote: `'sum$3' (the sum(...) at src/main.rs:12:9)`.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::lang::func::explain_internal_names;
/// let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
/// let s = sum(r.x());
/// let name = s.to_string().split('(').next().unwrap().to_string();
/// let text = explain_internal_names(format!("Func '{name}' is wrong"));
/// assert!(text.contains("(the sum(...) at "), "{text}");
/// ```
pub fn explain_internal_names(message: String) -> String {
    if !message.contains('$') {
        return message;
    }
    let origins = origins().lock().unwrap_or_else(|p| p.into_inner());
    let mut out = message;
    let mut seen = std::collections::HashSet::new();
    let mut from = 0;
    while let Some(at) = out[from..].find('$').map(|i| i + from) {
        let start = out[..at].rfind('\'').map_or(0, |i| i + 1);
        let end = out[at..].find('\'').map_or(out.len(), |i| i + at);
        from = end.min(out.len());
        if from <= at {
            break;
        }
        let name = &out[start..end];
        if let Some(origin) = origins.get(name) {
            if seen.insert(name.to_string()) && end < out.len() {
                let insert = format!(" ({origin})");
                out.insert_str(end + 1, &insert);
                from = end + 1 + insert.len();
            }
        }
    }
    out
}

/// A split factor is at least 1 and at most the coordinate range: no region is wider.
fn check_factor(factor: i32) -> Result<(), String> {
    if factor < 1 {
        return Err(format!("the factor must be at least 1, got {factor}"));
    }
    if i64::from(factor) > crate::ir::COORDINATE_LIMIT {
        return Err(format!(
            "the factor {factor} is over {}, the widest region Halogen computes",
            crate::ir::COORDINATE_LIMIT
        ));
    }
    Ok(())
}

fn position(s: &StageSchedule, var: &Name) -> Result<usize, String> {
    s.dims.iter().position(|d| d.var == *var).ok_or_else(|| {
        let names: Vec<&str> = s.dims.iter().map(|d| &*d.var).collect();
        format!("no loop variable '{var}' (loops, innermost first: {names:?})")
    })
}

/// Marks the loops `blocks` as GPU block loops and `threads` as GPU thread loops.
fn mark_gpu(s: &mut StageSchedule, blocks: &[Name], threads: &[Name]) -> Result<(), String> {
    for (names, kind) in [(blocks, ForKind::GpuBlock), (threads, ForKind::GpuThread)] {
        for n in names {
            let i = position(s, n)?;
            s.dims[i].kind = kind;
        }
    }
    Ok(())
}

fn split_dims(
    s: &mut StageSchedule,
    old: &Name,
    outer: &Name,
    inner: &Name,
    factor: i32,
    tail: TailStrategy,
) -> Result<(), String> {
    check_factor(factor)?;
    let i = position(s, old)?;
    if outer == inner {
        return Err(format!("outer and inner loops must have different names, both are '{outer}'"));
    }
    for n in [outer, inner] {
        if n != old && s.dims.iter().any(|d| d.var == *n) {
            return Err(format!("a loop named '{n}' already exists"));
        }
    }
    let is_rvar = s.dims[i].is_rvar;
    let kind = s.dims[i].kind;
    s.dims[i] = Dim { var: outer.clone(), kind, is_rvar };
    s.dims.insert(i, Dim { var: inner.clone(), kind: ForKind::Serial, is_rvar });
    s.splits.push(Split::Split { old: old.clone(), outer: outer.clone(), inner: inner.clone(), factor, tail });
    Ok(())
}

fn reorder_dims(s: &mut StageSchedule, order: &[Name]) -> Result<(), String> {
    let mut slots = Vec::new();
    for (k, n) in order.iter().enumerate() {
        if order[..k].contains(n) {
            return Err(format!("'{n}' is named twice"));
        }
        slots.push(position(s, n)?);
    }
    let mut sorted = slots.clone();
    sorted.sort_unstable();
    let moved: Vec<Dim> = slots.iter().map(|&i| s.dims[i].clone()).collect();
    for (slot, d) in sorted.into_iter().zip(moved) {
        s.dims[slot] = d;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn two_funcs_with_one_name_are_rejected() {
        let x = Var::new("x");
        let (a, b) = (Func::new("fid_dup"), Func::new("fid_dup"));
        a.def(x, x + 1);
        b.def(x, a.at(x) * 2);
        let out = Func::new("fid_out");
        out.def(x, b.at(x));
        let err = Pipeline::new(&[&out]).compile(&Target::interp()).unwrap_err();
        assert!(err.to_string().contains("two different Funcs are named 'fid_dup'"), "{err}");
    }

    #[test]
    fn a_call_keeps_its_func_after_the_last_handle_is_dropped() {
        let x = Var::new("x");
        let call = {
            let g = Func::new("fid_dropped");
            g.def(x, x * 3);
            g.at(x + 1)
        };
        let f = Func::new("fid_caller");
        f.def(x, call);
        let mut buf = Buffer::<i32>::new(&[4]);
        Pipeline::new(&[&f]).compile(&Target::interp()).unwrap().realize(&Args::new(), &mut buf).unwrap();
        assert_eq!(buf.as_slice(), &[3, 6, 9, 12]);
    }

    #[test]
    fn a_call_to_a_tuple_names_its_value() {
        let x = Var::new("x");
        let t = Func::new("fid_tuple");
        t.def_tuple(x, &[Expr::from(x), Expr::from(x) * 2]);
        let one = Func::new("fid_one");
        one.def(x, x);
        assert_eq!(t.at_tuple(x, 1).to_string(), "fid_tuple.1(x)");
        assert_eq!(one.at(x).to_string(), "fid_one(x)");
        assert_eq!(t.func_ref().id(), t.func_ref().called_id().unwrap());
        assert_ne!(t.func_ref().id(), one.func_ref().id());
    }
}
