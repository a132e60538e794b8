//! The simplifier: a directed rewrite system in the style of Halide's `Simplify_*.cpp`.
//!
//! Expressions are rewritten bottom-up: each node's children are simplified first, then
//! the rules of the node's operator (one file per operator family: `add.rs`, `sub.rs`,
//! `mul.rs`, `div_mod.rs`, `min_max.rs`, `cmp.rs`, `logic.rs`, `bits.rs`, `select.rs`,
//! `cast.rs`, `let_.rs`, `call.rs`, `vector.rs`) try to rewrite it; a rewritten node is
//! simplified again (a rule that gives back an expression still being rewritten is a
//! cycle, and stops). Alongside each simplified expression the simplifier carries
//! constant bounds (`info.rs`) that rules use to drop `min`s, `%`s and comparisons, and
//! sums are compared through their linear form (`linear.rs`), which cancels terms.
//! Constants are folded with [`crate::ir::semantics`], the interpreter's own arithmetic.
//!
//! Exactness: every rewrite keeps the value of the expression bit for bit, under the
//! IR's pinned semantics (wrapping integers, Euclidean `/` and `%`, f32 rounding). Rules
//! that only hold when nothing overflows (`x + 1 < x + 2`, `min(x, x + 3)`, `(x * 8) / 4`)
//! are used for `Int(32)` and `Int(64)` only, the types of coordinate arithmetic, as
//! Halide does: the simplifier reasons about their values as integers, so the result
//! equals the original wherever neither overflows (near the limits a rewrite may overflow
//! where the original did not: `max(x, 256) - 256` becomes `max(x - 256, 0)`, which wraps
//! for x near -2^31). To keep that reasoning sound, these types never get a
//! rewrite that folds a constant which wraps (`(x + 2147483647) + 1` stays as written: as
//! `x + -2147483648` a later rule would take it for a negative offset), and their constant
//! bounds (`info.rs`) are those of the exact result. Float expressions get constant folding
//! and exact identities only (`x * 1.0`, `x - 0.0`, `x + -0.0`), never reassociation. Fuzz
//! tests check `eval(e) == eval(simplify(e))`.
//!
//! [`simplify_stmt`] also carries the intervals of enclosing `For` loops and `LetStmt`s
//! and the conditions of enclosing `if`s (`stmt.rs`), and proves comparisons and
//! `min`/`max` with them through the interval analysis
//! ([`bounds_of_expr_in_scope`](crate::analysis::bounds_of_expr_in_scope), in the variant
//! that assumes no overflow).

mod add;
mod bits;
mod call;
mod cast;
mod cmp;
mod div_mod;
mod facts;
pub(crate) mod fold;
pub(crate) mod info;
mod let_;
pub(crate) mod linear;
mod logic;
mod min_max;
mod mul;
mod select;
mod stmt;
mod sub;
mod unchecked;
mod vector;

#[cfg(test)]
mod fuzz;
#[cfg(test)]
mod tests;

use self::fold::Scalar;
use self::info::{Bnd, Info};
use super::interval::{bounds_assuming_no_overflow, Interval, Scope};
use super::substitute::expr_uses_var;
use crate::ir::stack;
use crate::ir::{BinOp, Expr, ExprKind, Name, Stmt, Type};
use std::collections::{HashMap, HashSet};

/// Simplifies an expression. The result has the same value as `e` for every value of
/// its free variables.
///
/// ```
/// use halogen::analysis::simplify;
/// use halogen::ir::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let e = Expr::sub(Expr::add(x.clone(), Expr::i32(3)), Expr::add(x.clone(), Expr::i32(1)));
/// assert_eq!(simplify(&e), Expr::i32(2));
/// ```
pub fn simplify(e: &Expr) -> Expr {
    Simplifier::new().mutate(e).0
}

/// Simplifies an expression knowing that each variable of `scope` lies in its interval
/// (comparisons that the intervals decide become constants).
pub fn simplify_in_scope(e: &Expr, scope: &Scope) -> Expr {
    let mut s = Simplifier::new();
    s.scope = scope.clone();
    s.mutate(e).0
}

/// Simplifies a statement: its expressions, and the statement structure (dead loops,
/// guards the enclosing loops' bounds prove, unused lets, empty blocks).
pub fn simplify_stmt(s: &Stmt) -> Stmt {
    Simplifier::new().mutate_stmt(s)
}

/// True if `e` (a bool) simplifies to the constant `true`: proven for every value of its
/// free variables. `false` means "not proven", not "false".
pub fn can_prove(e: &Expr) -> bool {
    simplify(e).is_true()
}

/// [`can_prove`] knowing the intervals of `scope`.
pub fn can_prove_in_scope(e: &Expr, scope: &Scope) -> bool {
    simplify_in_scope(e, scope).is_true()
}

/// A simplified expression with its constant bounds.
pub(crate) type S = (Expr, Bnd);

/// How many times a rewritten expression may be re-simplified inside one node before the
/// simplifier stops rewriting (a guard against rule cycles).
const MAX_DEPTH: usize = 64;

/// What a name stands for inside a binder.
pub(crate) enum Binding {
    /// Uses are replaced by this simplified expression (let-inlining).
    Replace(Expr, Bnd),
    /// An unknown value with these constant bounds and (optionally) symbolic interval.
    Bounded(Bnd, Option<Interval>),
}

/// The simplifier's state: what it knows about the variables in scope.
pub(crate) struct Simplifier {
    /// Symbolic intervals of enclosing loop variables and lets.
    pub(crate) scope: Scope,
    /// Constant bounds of let-bound names.
    var_info: HashMap<Name, Info>,
    /// Names whose uses are replaced (inlined lets).
    replacements: HashMap<Name, S>,
    /// Conditions known to be true (or false) here: enclosing `if`s.
    facts: Vec<(Expr, bool)>,
    /// The same conditions, where they order two integers, as linear inequalities
    /// (see [`facts::LinearFact`]).
    linear_facts: Vec<facts::LinearFact>,
    /// Lets in scope whose values are small linear combinations of variables
    /// (`w.max = base + 7`), substituted into differences so that lets of one base cancel.
    linear_lets: HashMap<Name, Expr>,
    /// Let-bound names whose values may be anything (see `unchecked.rs`). Only grows: a
    /// name left here after its scope ends makes the rules that consult it more careful,
    /// never wrong.
    unchecked_lets: HashSet<Name>,
    unchecked_memo: std::cell::RefCell<unchecked::UncheckedMemo>,
    /// Results by (node identity, environment), so shared sub-expressions are simplified
    /// once; the original is kept alive so its address is not reused.
    memo: crate::ir::expr::PtrMap<(usize, u32), (Expr, S)>,
    /// Identity of the current environment (bumped at every binder).
    env: u32,
    next_env: u32,
    /// The rewrite results being simplified (innermost last), to stop rule cycles.
    rewriting: Vec<Expr>,
}

pub(crate) struct Saved {
    scope: Scope,
    var_info: HashMap<Name, Info>,
    replacements: HashMap<Name, S>,
    facts: Vec<(Expr, bool)>,
    linear_facts: Vec<facts::LinearFact>,
    linear_lets: HashMap<Name, Expr>,
    env: u32,
}

impl Simplifier {
    pub(crate) fn new() -> Simplifier {
        Simplifier {
            scope: Scope::new(),
            var_info: HashMap::new(),
            replacements: HashMap::new(),
            facts: Vec::new(),
            linear_facts: Vec::new(),
            linear_lets: HashMap::new(),
            unchecked_lets: HashSet::new(),
            unchecked_memo: Default::default(),
            memo: Default::default(),
            env: 0,
            next_env: 1,
            rewriting: Vec::new(),
        }
    }

    fn save(&mut self) -> Saved {
        let saved = Saved {
            scope: self.scope.clone(),
            var_info: self.var_info.clone(),
            replacements: self.replacements.clone(),
            facts: self.facts.clone(),
            linear_facts: self.linear_facts.clone(),
            linear_lets: self.linear_lets.clone(),
            env: self.env,
        };
        self.env = self.next_env;
        self.next_env += 1;
        saved
    }

    pub(crate) fn restore(&mut self, s: Saved) {
        self.scope = s.scope;
        self.var_info = s.var_info;
        self.replacements = s.replacements;
        self.facts = s.facts;
        self.linear_facts = s.linear_facts;
        self.linear_lets = s.linear_lets;
        self.env = s.env;
    }

    /// Runs `f` with the context changed by `change` (facts learned, intervals narrowed);
    /// everything is restored afterwards.
    pub(crate) fn with_context<R>(&mut self, change: impl FnOnce(&mut Self), f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.save();
        change(self);
        let r = f(self);
        self.restore(saved);
        r
    }

    /// Runs `f` inside a binder of `name`. What the context knows about an outer
    /// variable of the same name (and anything that mentions it) is hidden.
    pub(crate) fn with_binder<R>(&mut self, name: &Name, binding: Binding, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = self.enter_binder(name, binding);
        let r = f(self);
        self.restore(saved);
        r
    }

    /// Enters a binder of `name` (see [`Simplifier::with_binder`]); `restore` the result
    /// to leave it.
    pub(crate) fn enter_binder(&mut self, name: &Name, binding: Binding) -> Saved {
        // An interval that mentions the name itself (`for p in [0, p)`) means the outer
        // variable: restate it through the outer variable's bounds before hiding them.
        let binding = match binding {
            Binding::Bounded(b, Some(iv)) if interval_uses(&iv, name) => {
                let outer = |e: &Option<Expr>, lower: bool| -> Option<Expr> {
                    let e = e.as_ref()?;
                    if !expr_uses_var(e, name) {
                        return Some(e.clone());
                    }
                    let r = bounds_assuming_no_overflow(e, &self.scope);
                    let side = if lower { r.min } else { r.max }?;
                    (!expr_uses_var(&side, name)).then_some(side)
                };
                Binding::Bounded(b, Some(Interval::new(outer(&iv.min, true), outer(&iv.max, false))))
            }
            other => other,
        };
        let saved = self.save();
        self.scope.remove(name);
        self.scope.retain(|_, iv| !interval_uses(iv, name));
        self.var_info.remove(name);
        self.replacements.remove(name);
        self.replacements.retain(|_, (v, _)| !expr_uses_var(v, name));
        self.facts.retain(|(f, _)| !expr_uses_var(f, name));
        self.linear_facts.retain(|f| !f.uses_var(name));
        self.linear_lets.remove(name);
        self.linear_lets.retain(|_, v| !expr_uses_var(v, name));
        match binding {
            Binding::Replace(e, b) => {
                self.replacements.insert(name.clone(), (e, b));
            }
            Binding::Bounded(b, iv) => {
                if let Some(b) = b {
                    self.var_info.insert(name.clone(), b);
                }
                if let Some(iv) = iv {
                    if iv.min.is_some() || iv.max.is_some() {
                        self.scope.insert(name.clone(), iv);
                    }
                }
            }
        }
        saved
    }

    /// Simplifies `e`, returning it with its constant bounds.
    pub(crate) fn mutate(&mut self, e: &Expr) -> S {
        let key = (e.ptr() as usize, self.env);
        if let Some((_, r)) = self.memo.get(&key) {
            return r.clone();
        }
        // Once per level of the expression: deep ones grow the stack (see `stack`).
        let r = stack::guard(|| self.visit(e));
        self.memo.insert(key, (e.clone(), r.clone()));
        if !r.0.same_as(e) {
            // The result is (nearly always) a fixed point: re-simplifying it, as rules
            // that rebuild around it do, costs nothing.
            let k2 = (r.0.ptr() as usize, self.env);
            self.memo.entry(k2).or_insert_with(|| (r.0.clone(), r.clone()));
        }
        r
    }

    /// Simplifies the result of a rewrite rule.
    pub(crate) fn remutate(&mut self, e: Expr) -> S {
        // A rule that gives back an expression being rewritten already is a cycle.
        let cycle = self.rewriting.contains(&e);
        debug_assert!(!cycle || !cfg!(test), "rewrite cycle at {e}");
        if cycle || self.rewriting.len() >= MAX_DEPTH {
            let b = info::shallow(&e);
            return (e, b);
        }
        self.rewriting.push(e.clone());
        let r = self.mutate(&e);
        self.rewriting.pop();
        r
    }

    fn visit(&mut self, e: &Expr) -> S {
        match e.kind() {
            ExprKind::IntImm(_) | ExprKind::FloatImm(_) => (e.clone(), info::of_leaf(e)),
            ExprKind::Var { name, .. } => self.visit_var(e, name),
            ExprKind::Cast(a) => cast::visit(self, e, a),
            ExprKind::Binary(op, a, b) => {
                let a = self.mutate(a);
                let b = self.mutate(b);
                self.visit_binary(e, *op, a, b)
            }
            ExprKind::Cmp(op, a, b) => {
                let a = self.mutate(a);
                let b = self.mutate(b);
                cmp::visit(self, e, *op, a, b)
            }
            ExprKind::Not(a) => logic::visit_not(self, e, a),
            ExprKind::Select(c, t, f) => select::visit(self, e, c, t, f),
            ExprKind::Load { buffer, index, predicate } => call::visit_load(self, e, buffer, index, predicate.as_ref()),
            ExprKind::Ramp { base, stride, lanes } => vector::visit_ramp(self, e, base, stride, *lanes),
            ExprKind::Broadcast { value, lanes } => vector::visit_broadcast(self, e, value, *lanes),
            ExprKind::Let { .. } => let_::visit(self, e),
            ExprKind::Call { args, .. } => call::visit_call(self, e, args),
        }
    }

    fn visit_var(&mut self, e: &Expr, name: &Name) -> S {
        if let Some(r) = self.replacements.get(name) {
            return r.clone();
        }
        let ty = e.ty().element();
        let mut b = info::type_range(ty);
        if let (Some(bb), Some(vi)) = (b, self.var_info.get(name)) {
            b = Some(bb.intersect(*vi));
        }
        if let (Some(bb), Some(iv), true) = (b, self.scope.get(name), e.ty().is_scalar()) {
            let lo = iv.min.as_ref().and_then(info::const_int).unwrap_or(bb.min);
            let hi = iv.max.as_ref().and_then(info::const_int).unwrap_or(bb.max);
            b = Some(bb.intersect(Info::new(lo, hi)));
        }
        if let Some(v) = b.and_then(|b| b.as_const()) {
            // A variable pinned to one value is that value.
            return (make_int(e.ty(), v), b);
        }
        (e.clone(), b)
    }

    fn visit_binary(&mut self, e: &Expr, op: BinOp, a: S, b: S) -> S {
        let rewritten = match op {
            BinOp::Add => add::rules(self, &a, &b),
            BinOp::Sub => sub::rules(self, &a, &b),
            BinOp::Mul => mul::rules(self, &a, &b),
            BinOp::Div => div_mod::div(self, &a, &b),
            BinOp::Mod => div_mod::rem(self, &a, &b),
            BinOp::Min | BinOp::Max => min_max::rules(self, op, &a, &b),
            BinOp::And | BinOp::Or => logic::rules(self, op, &a, &b),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => bits::rules(self, op, &a, &b),
        };
        if let Some(r) = rewritten {
            return self.remutate(r);
        }
        let node = rebuild_binary(e, op, a.0, b.0);
        let b = info::binary(op, node.ty(), a.1, b.1);
        if let Some(v) = b.and_then(|b| b.as_const()) {
            return (make_int(node.ty(), v), b);
        }
        if matches!(op, BinOp::And | BinOp::Or) {
            if let Some(v) = self.known(&node) {
                return (Expr::const_of(node.ty(), v as i64), Some(Info::point(v as i128)));
            }
        }
        (node, b)
    }

    /// Constant bounds of `diff` (a simplified scalar expression) from the intervals of
    /// the enclosing loops and lets, when there are any.
    pub(crate) fn bounds_in_scope(&mut self, diff: &Expr) -> Option<Info> {
        if self.scope.is_empty() || !diff.ty().is_scalar() || !is_int(diff.ty()) {
            return None;
        }
        // Without a variable of the scope, the interval is the expression itself, whose
        // constant bounds the caller has already (and a long expression is costly to walk
        // with a scope).
        if !crate::analysis::substitute::expr_mentions_any(diff, &|n| self.scope.contains_key(n)) {
            return None;
        }
        // The bounds may be symbolic (min(99 - n, -6)); their own constant bounds decide.
        // They mention no variable of the scope any more, so a simplifier without one
        // finds those (and cannot come back here).
        let iv = bounds_assuming_no_overflow(diff, &self.scope);
        let mut plain = Simplifier::new();
        let lo = iv.min.as_ref().and_then(|e| plain.mutate(e).1).map(|i| i.min).unwrap_or(i128::MIN);
        let hi = iv.max.as_ref().and_then(|e| plain.mutate(e).1).map(|i| i.max).unwrap_or(i128::MAX);
        Some(Info::new(lo, hi))
    }

    /// The truth of a condition that an enclosing `if` decided, if any.
    pub(crate) fn known(&self, e: &Expr) -> Option<bool> {
        self.facts.iter().rev().find(|(f, _)| f == e).map(|(_, v)| *v)
    }
}

/// True if either bound of `iv` mentions `name`.
fn interval_uses(iv: &Interval, name: &str) -> bool {
    iv.min.as_ref().is_some_and(|e| expr_uses_var(e, name)) || iv.max.as_ref().is_some_and(|e| expr_uses_var(e, name))
}

/// `a op b`, reusing `e` when the operands did not change.
pub(crate) fn rebuild_binary(e: &Expr, op: BinOp, a: Expr, b: Expr) -> Expr {
    if let ExprKind::Binary(_, ea, eb) = e.kind() {
        if ea.same_as(&a) && eb.same_as(&b) {
            return e.clone();
        }
    }
    Expr::binary(op, a, b)
}

/// True for the types whose arithmetic is assumed never to overflow (coordinate math,
/// as in Halide): `Int(32)` and `Int(64)`.
pub(crate) fn no_overflow(ty: Type) -> bool {
    ty.element().is_int() && ty.bits >= 32
}

/// True for integer (signed or unsigned) types.
pub(crate) fn is_int(ty: Type) -> bool {
    ty.element().is_int_or_uint()
}

/// True unless `a op b` (`+`, `-` or `*`) are both constants whose exact result does not
/// fit the type: a rewrite that would compute such a constant, where the original
/// expression did not, must not apply (it would wrap).
pub(crate) fn folds_exactly(op: BinOp, a: &Expr, b: &Expr) -> bool {
    match (info::const_int(a), info::const_int(b), info::type_range(a.ty().element())) {
        (Some(x), Some(y), Some(r)) => {
            let v = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                _ => Some(0),
            };
            v.is_some_and(|v| v >= r.min && v <= r.max)
        }
        _ => true,
    }
}

/// An integer constant of type `ty` (broadcast for vectors) from a mathematical value,
/// wrapped to the type.
pub(crate) fn make_int(ty: Type, v: i128) -> Expr {
    Expr::const_of(ty, v as i64)
}

/// The lane value of a scalar or broadcast constant.
pub(crate) fn scalar_of(e: &Expr) -> Option<Scalar> {
    match e.kind() {
        ExprKind::IntImm(v) => Some(Scalar::Int(*v)),
        ExprKind::FloatImm(b) => Some(Scalar::Float(b.get())),
        ExprKind::Broadcast { value, .. } => scalar_of(value),
        _ => None,
    }
}

/// A constant of type `ty` (broadcast for vectors).
pub(crate) fn make_scalar(ty: Type, v: Scalar) -> Expr {
    let el = ty.element();
    let s = match v {
        Scalar::Int(x) => Expr::int_imm(el, x),
        Scalar::Float(f) => Expr::float_imm(el, f),
    };
    if ty.is_vector() {
        Expr::broadcast(s, ty.lanes)
    } else {
        s
    }
}

/// `a op b` folded, if both are constants.
pub(crate) fn fold_binary(op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
    let ty = a.ty();
    let is_bitwise =
        matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr | BinOp::And | BinOp::Or);
    if ty.element().is_float() && is_bitwise {
        return None;
    }
    let (x, y) = (scalar_of(a)?, scalar_of(b)?);
    Some(make_scalar(ty, fold::binary(op, ty.element(), x, y)))
}

/// True for the constant -0.0 (the one float `x + c == x` holds for every x).
pub(crate) fn is_neg_zero(e: &Expr) -> bool {
    e.as_float().is_some_and(|f| f == 0.0 && f.is_sign_negative())
}

/// True for the constant +0.0 (the one float `x - c == x` holds for every x).
pub(crate) fn is_pos_zero(e: &Expr) -> bool {
    e.as_float().is_some_and(|f| f == 0.0 && f.is_sign_positive())
}
