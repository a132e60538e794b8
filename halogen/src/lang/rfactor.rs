//! `Stage::rfactor`: splitting an associative reduction into independent partial
//! reductions (Halide's `rfactor`, Suriana et al. 2017).
//!
//! An update `f(args) = f(args) ⊕ e` over a domain `r` is serial in `r`: every point may
//! write any element of `f`. Factoring out some of `r`'s variables, each paired with a new
//! pure variable `u`, gives an intermediate Func
//!
//! ```text
//! intm(x.., u) = identity
//! intm(args[r_k -> u], u) = intm(args[r_k -> u], u) ⊕ e[r_k -> u]     over r without r_k
//! ```
//!
//! whose partial reductions are independent along `u` (so `u` may run in parallel), and
//! replaces the update by a merge over the factored variables,
//! `f(x..) = f(x..) ⊕ intm(x.., r_k)`. Points of `f` a partial reduction never touched
//! hold the identity there, so merging every `x` is exact.
//!
//! A factored variable may also be the outer loop of a split of a reduction variable
//! (`split(r.y, ryo, ryi, 64)` then `rfactor(&[(ryo, u)])`): the intermediate then
//! iterates `ryi` over the factor and reads `r.y` as `u * 64 + ryi`, clamped to the domain,
//! with the points past its end contributing the identity.
//!
//! `⊕` is one of `+ * min max & | ^` and the logical `&&`/`||` on integers or bools, with
//! the call of `f` on either side: these are associative and commutative in Halogen's
//! wrapping integer semantics, so the factored reduction gives exactly the same values.
//! Float reductions are refused, because regrouping floating-point operations changes
//! their rounding, and every schedule must compute the unscheduled pipeline's values.

use super::func::{Definition, Func, Stage};
use super::var::{unique_name, Var, VarOrRVar};
use crate::analysis::substitute::substitute_map;
use crate::error::Error;
use crate::ir::{
    BinOp, CallKind, CmpOp, Expr, ExprKind, FuncId, Name, ReductionDomain, ReductionRef, ReductionVariable, Type,
};
use crate::ir::{VarBinding, Visitor};
use crate::schedule::{Dim, Split, StageSchedule};
use std::collections::HashMap;
use std::panic::Location;
use std::sync::Arc;

/// How one factored variable relates to the update's reduction domain.
enum Factored {
    /// Reduction variable `index` of the domain itself.
    Whole { index: usize, var: Var },
    /// The outer loop of `split(index, outer, inner, factor)`.
    SplitOuter { index: usize, outer: Name, inner: Name, factor: i32, var: Var },
}

impl Factored {
    fn index(&self) -> usize {
        match self {
            Factored::Whole { index, .. } | Factored::SplitOuter { index, .. } => *index,
        }
    }
    fn var(&self) -> Var {
        match self {
            Factored::Whole { var, .. } | Factored::SplitOuter { var, .. } => *var,
        }
    }
}

/// The associative operator of an update `f(args) = f(args) ⊕ e` (or `e ⊕ f(args)`).
struct Reduction {
    op: BinOp,
    /// Whether the call of `f` is the left operand.
    call_on_left: bool,
    /// `e`.
    other: Expr,
}

/// The identity of `op` on `ty` (`None` if `op` is not one rfactor accepts).
pub(crate) fn identity(op: BinOp, ty: Type) -> Option<Expr> {
    let t = ty.element();
    if t.is_bool() {
        return match op {
            BinOp::And | BinOp::BitAnd | BinOp::Min | BinOp::Mul => Some(Expr::bool_imm(true)),
            BinOp::Or | BinOp::BitOr | BinOp::Max | BinOp::Add | BinOp::BitXor => Some(Expr::bool_imm(false)),
            _ => None,
        };
    }
    if !t.is_int_or_uint() {
        return None;
    }
    // u64's maximum is all ones, stored as -1.
    let (lo, hi) = (t.min_int().unwrap_or(0), t.max_int().unwrap_or(-1));
    Some(match op {
        BinOp::Add | BinOp::BitOr | BinOp::BitXor => Expr::int_imm(t, 0),
        BinOp::Mul => Expr::int_imm(t, 1),
        BinOp::BitAnd => Expr::int_imm(t, -1),
        BinOp::Min => Expr::int_imm(t, hi),
        BinOp::Max => Expr::int_imm(t, lo),
        _ => return None,
    })
}

/// Whether `e` calls the Func with id `f` anywhere (`None`: a Func never called).
fn calls(e: &Expr, f: Option<FuncId>) -> bool {
    struct Finder(Option<FuncId>, bool);
    impl Visitor for Finder {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { kind: CallKind::Func { func, .. }, .. } = e.kind() {
                if Some(*func) == self.0 {
                    self.1 = true;
                }
            }
            crate::ir::walk_expr(self, e)
        }
    }
    let mut finder = Finder(f, false);
    finder.visit_expr(e);
    finder.1
}

/// Recognises `value` as `f(args) ⊕ e` or `e ⊕ f(args)` with `e` not calling `f`.
fn recognise(f: &Func, args: &[Expr], value: &Expr) -> Result<Reduction, String> {
    let shape = || {
        format!(
            "the update must have the form f(args) = f(args) ⊕ e with ⊕ one of + * min max & | ^ && || and e not calling f; it is {value}"
        )
    };
    let ExprKind::Binary(op, a, b) = value.kind() else { return Err(shape()) };
    let id = f.func_ref().called_id();
    let is_self = |e: &Expr| match e.kind() {
        ExprKind::Call { kind: CallKind::Func { func, value_index: 0, .. }, args: call_args, .. } => {
            Some(*func) == id && call_args == args
        }
        _ => false,
    };
    let (call_on_left, other) = if is_self(a) && !calls(b, id) {
        (true, b.clone())
    } else if is_self(b) && !calls(a, id) {
        (false, a.clone())
    } else {
        return Err(shape());
    };
    if identity(*op, value.ty()).is_none() {
        return Err(shape());
    }
    Ok(Reduction { op: *op, call_on_left, other })
}

fn combine(r: &Reduction, call: Expr, other: Expr) -> Expr {
    if r.call_on_left {
        Expr::binary(r.op, call, other)
    } else {
        Expr::binary(r.op, other, call)
    }
}

fn rvar_expr(name: &Name, domain: &ReductionRef) -> Expr {
    Expr::make(Type::i32(), ExprKind::Var { name: name.clone(), binding: VarBinding::Reduction(domain.clone()) })
}

/// Finds what each `(loop, var)` pair factors out of the update's schedule `s` over
/// `domain`, checking that the schedule holds nothing else rfactor would have to carry.
fn resolve(pairs: &[(Name, Var)], s: &StageSchedule, domain: &ReductionDomain) -> Result<Vec<Factored>, String> {
    let mut out: Vec<Factored> = Vec::new();
    let mut consumed = Vec::new();
    for (name, var) in pairs {
        let split = s.splits.iter().enumerate().rev().find_map(|(i, sp)| match sp {
            Split::Split { old, outer, inner, factor, .. } if outer == name => {
                Some((i, old.clone(), inner.clone(), *factor))
            }
            _ => None,
        });
        let f = if let Some((i, old, inner, factor)) = split {
            let index = domain.vars.iter().position(|v| v.name == old).ok_or_else(|| {
                format!("'{name}' splits '{old}', which is not a variable of the update's reduction domain")
            })?;
            consumed.push(i);
            Factored::SplitOuter { index, outer: name.clone(), inner, factor, var: *var }
        } else if let Some(index) = domain.vars.iter().position(|v| v.name == *name) {
            Factored::Whole { index, var: *var }
        } else {
            let names: Vec<&str> = domain.vars.iter().map(|v| &*v.name).collect();
            return Err(format!(
                "'{name}' is neither a variable of the update's reduction domain ({names:?}) nor the outer loop of a split of one"
            ));
        };
        if out.iter().any(|o| o.index() == f.index()) {
            return Err(format!("'{}' is factored twice", domain.vars[f.index()].name));
        }
        out.push(f);
    }
    // Anything else in the stage's schedule belongs to the intermediate Func, which the
    // caller schedules.
    for (i, sp) in s.splits.iter().enumerate() {
        if !consumed.contains(&i) {
            return Err(format!(
                "the stage has a split or fuse rfactor does not consume ({sp:?}); schedule the Func rfactor returns instead"
            ));
        }
    }
    if let Some(d) = s.dims.iter().find(|d| d.kind != crate::ir::ForKind::Serial) {
        return Err(format!("loop '{}' is already {:?}; schedule the Func rfactor returns instead", d.var, d.kind));
    }
    Ok(out)
}

impl Stage {
    /// Splits this update, an associative reduction `f(args) = f(args) ⊕ e`, into partial
    /// reductions that are independent along new pure variables, and returns the
    /// intermediate Func holding them (Halide's `rfactor`).
    ///
    /// Each pair names a loop of the reduction — one of its domain's variables, or the
    /// outer variable of a split of one — and the pure variable that replaces it in the
    /// intermediate Func, whose dimensions are `f`'s followed by the new variables. This
    /// update becomes the merge `f(x..) = f(x..) ⊕ intm(x.., r)` over the factored loops,
    /// with `f`'s pure variables innermost. Only integer and bool reductions with `⊕` one of
    /// `+ * min max & | ^ && ||` can be factored (see the module documentation); anything
    /// else, or a stage already scheduled beyond the splits named here, is an error that
    /// `compile` reports.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "input");
    /// let (i, u) = (Var::new("i"), Var::new("u"));
    /// let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
    /// let hist = Func::new("hist");
    /// hist.def(i, 0);
    /// hist.update(input.at((r.x(), r.y())).cast::<i32>(), hist.at(input.at((r.x(), r.y())).cast::<i32>()) + 1);
    /// // One partial histogram per strip of 16 rows, computed in parallel.
    /// let (ryo, ryi) = (Var::new("ryo"), Var::new("ryi"));
    /// let partial = hist.update_stage(0).split(r.y(), ryo, ryi, 16).rfactor(&[(ryo, u)]);
    /// partial.compute_root().update_stage(0).parallel(u);
    /// hist.compute_root();
    ///
    /// let out = Pipeline::new(&[&hist]).compile(&Target::interp()).unwrap();
    /// let img = Buffer::<u8>::from_fn(&[20, 37], |c| (c[0] * c[1] % 4) as u8);
    /// let mut counts = Buffer::<i32>::new(&[4]);
    /// let mut args = Args::new();
    /// args.image(&input, &img);
    /// out.realize(&args, &mut counts).unwrap();
    /// let expected = (0..4).map(|v| img.as_slice().iter().filter(|&&p| p == v).count() as i32);
    /// assert!(counts.as_slice().iter().copied().eq(expected));
    /// ```
    #[track_caller]
    pub fn rfactor<V: Into<VarOrRVar> + Copy>(&self, pairs: &[(V, Var)]) -> Func {
        let loc = Location::caller();
        let f = Func(self.func_ref().clone());
        let pairs: Vec<(Name, Var)> = pairs.iter().map(|(l, v)| ((*l).into().name(), *v)).collect();
        match self.try_rfactor(&f, &pairs) {
            Ok(intm) => intm,
            Err(msg) => {
                let (name, stage) = (f.name(), self.index().saturating_sub(1));
                let e = Error::Schedule(format!("Func '{name}' update {stage}: rfactor: {msg} (at {loc})"));
                f.func_ref().lock().errors.push(e);
                Func::new(&unique_name(&format!("{name}_intm")))
            }
        }
    }

    /// Whether [`Stage::rfactor`] accepts this update's definition (an integer or bool
    /// reduction of a form it recognises), asked without changing anything.
    pub(crate) fn factorable(&self) -> bool {
        self.reduction().is_ok()
    }

    /// This update's pure variables, definition and reduction, or why rfactor refuses it.
    fn reduction(&self) -> Result<(Vec<Name>, Definition, Reduction), String> {
        if self.index() == 0 {
            return Err("rfactor applies to update definitions, not the pure one".to_string());
        }
        let f = Func(self.func_ref().clone());
        let (pure_names, def) = {
            let d = f.func_ref().lock();
            let def = d.updates.get(self.index() - 1).cloned().ok_or("the update does not exist")?;
            (d.args.clone(), def)
        };
        if def.values.len() != 1 {
            return Err(format!("the update has {} values; rfactor takes single-valued Funcs", def.values.len()));
        }
        let value = &def.values[0];
        let ty = value.ty();
        if ty.is_float() {
            return Err(format!(
                "the reduction is over {ty}; regrouping float operations would change their rounding, so only integer and bool reductions can be factored"
            ));
        }
        let reduction = recognise(&f, &def.args, value)?;
        if def.rdom.is_none() {
            return Err("the update has no reduction domain".to_string());
        }
        Ok((pure_names, def, reduction))
    }

    fn try_rfactor(&self, f: &Func, pairs: &[(Name, Var)]) -> Result<Func, String> {
        let (pure_names, def, reduction) = self.reduction()?;
        if pairs.is_empty() {
            return Err("no loops to factor out".to_string());
        }
        let ty = def.values[0].ty();
        let domain = def.rdom.clone().ok_or("the update has no reduction domain")?;
        let factored = resolve(pairs, &def.schedule, &domain.0)?;
        for (name, var) in pairs {
            if pure_names.contains(&var.name()) || pairs.iter().filter(|(_, v)| v == var).count() > 1 {
                return Err(format!(
                    "the new variable '{}' (for '{name}') must differ from f's variables {pure_names:?} and the other new ones",
                    var.name()
                ));
            }
        }

        // The intermediate's reduction domain: the variables not factored out, and the
        // inner loop of each factored split.
        let mut kept = Vec::new();
        for (j, v) in domain.0.vars.iter().enumerate() {
            match factored.iter().find(|fa| fa.index() == j) {
                None => kept.push(v.clone()),
                Some(Factored::SplitOuter { inner, factor, .. }) => kept.push(ReductionVariable {
                    name: inner.clone(),
                    min: Expr::i32(0),
                    extent: Expr::i32(*factor as i64),
                }),
                Some(Factored::Whole { .. }) => {}
            }
        }
        let intm_domain =
            if kept.is_empty() { None } else { Some(ReductionRef(Arc::new(ReductionDomain { vars: kept.clone() }))) };
        let mut map: HashMap<Name, Expr> = HashMap::new();
        let mut in_domain: Vec<Expr> = Vec::new();
        for (j, v) in domain.0.vars.iter().enumerate() {
            match factored.iter().find(|fa| fa.index() == j) {
                None => {
                    let d = intm_domain.as_ref().expect("a kept variable makes a domain");
                    map.insert(v.name.clone(), rvar_expr(&v.name, d));
                }
                Some(Factored::Whole { var, .. }) => {
                    map.insert(v.name.clone(), var.expr());
                }
                Some(Factored::SplitOuter { inner, factor, var, .. }) => {
                    let d = intm_domain.as_ref().expect("a split's inner variable makes a domain");
                    let offset = var.expr() * *factor + rvar_expr(inner, d);
                    let last = v.min.clone() + v.extent.clone() - 1;
                    map.insert(v.name.clone(), Expr::min(v.min.clone() + offset.clone(), last));
                    in_domain.push(Expr::cmp(CmpOp::Lt, offset, v.extent.clone()));
                }
            }
        }

        let intm = Func::new(&unique_name(&format!("{}_intm", f.name())));
        let pure: Vec<Expr> = pure_names.iter().map(|n| Var::new(n).expr()).collect();
        let new_vars: Vec<Expr> = factored.iter().map(|fa| fa.var().expr()).collect();
        let mut intm_pure = pure.clone();
        intm_pure.extend(new_vars.iter().cloned());
        let id = identity(reduction.op, ty).expect("recognise checked the operator");
        intm.def(intm_pure.clone(), id.clone());
        let mut intm_args: Vec<Expr> = def.args.iter().map(|a| substitute_map(&map, a)).collect();
        intm_args.extend(new_vars);
        let mut other = substitute_map(&map, &reduction.other);
        if let Some(cond) = in_domain.into_iter().reduce(|a, b| Expr::binary(BinOp::And, a, b)) {
            // Points past the end of a split domain contribute nothing.
            other = Expr::select(cond, other, id);
        }
        intm.update(intm_args.clone(), combine(&reduction, intm.at(intm_args), other));

        // The merge: f(x..) = f(x..) ⊕ intm(x.., r_k..) over the factored loops.
        let merge_vars: Vec<ReductionVariable> = factored
            .iter()
            .map(|fa| {
                let v = &domain.0.vars[fa.index()];
                match fa {
                    Factored::Whole { .. } => v.clone(),
                    Factored::SplitOuter { outer, factor, .. } => ReductionVariable {
                        name: outer.clone(),
                        min: Expr::i32(0),
                        extent: (v.extent.clone() + (*factor - 1)) / *factor,
                    },
                }
            })
            .collect();
        let merge_domain = ReductionRef(Arc::new(ReductionDomain { vars: merge_vars.clone() }));
        let mut intm_call_args = pure.clone();
        intm_call_args.extend(merge_vars.iter().map(|v| rvar_expr(&v.name, &merge_domain)));
        let merged = combine(&reduction, f.at(pure.clone()), intm.at(intm_call_args));
        // f's variables innermost: each point of f merges its partial results in order.
        let mut dims: Vec<Dim> = pure_names
            .iter()
            .map(|n| Dim { var: n.clone(), kind: crate::ir::ForKind::Serial, is_rvar: false })
            .collect();
        dims.extend(merge_vars.iter().map(|v| Dim {
            var: v.name.clone(),
            kind: crate::ir::ForKind::Serial,
            is_rvar: true,
        }));
        let mut d = f.func_ref().lock();
        let update = &mut d.updates[self.index() - 1];
        update.args = pure;
        update.values = vec![merged];
        update.rdom = Some(merge_domain);
        update.schedule = StageSchedule { splits: Vec::new(), dims, touched: true, ..StageSchedule::default() };
        Ok(intm)
    }
}
