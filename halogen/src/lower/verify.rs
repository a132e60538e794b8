//! The IR verifier, run after every pass when `HALOGEN_VERIFY=1` (and by default in debug
//! builds). It checks
//! - scoping: every variable a statement reads is bound by an enclosing `let` or loop (or is
//!   a run-time parameter), and every flat buffer access names an allocation or a pipeline
//!   buffer;
//! - types: every node's type follows from its operands (see [`Verifier::expr`]);
//! - phase rules: which nodes may exist at each [`Phase`] of lowering, and how loop kinds
//!   nest (GPU threads inside GPU blocks, distribution outside GPU loops);
//! - the lowering facts in the IR: a fold names a dimension of its realize, a vector tail
//!   is two conditions and an int32 value.
//!
//! A failure is an internal error naming the pass, with an excerpt of the IR.

use crate::error::{Error, Result};
use crate::ir::stack;
use crate::ir::{BinOp, CallKind, Expr, ExprKind, ForKind, MsgPart, Name, Stmt, Type, VarBinding};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// How far lowering has come; each phase allows fewer kinds of node than the one before.
///
/// ```
/// use halogen::lower::verify::Phase;
/// assert!(Phase::Scheduled < Phase::Flattened);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Phase {
    /// The loop nest as schedule functions builds it: loop bounds may still be free
    /// variables that bounds inference binds later.
    Scheduled,
    /// Every variable is bound (bounds inference has run); `Provide`, `Realize` and Func
    /// calls still stand for multi-dimensional storage.
    BoundsInferred,
    /// Storage flattening has run: only flat `Store`/`Load` on `Allocate`d or pipeline
    /// buffers; no `Provide`, `Realize`, Func or image calls.
    Flattened,
    /// Unrolling has run: no unrolled loop of non-constant extent.
    Unrolled,
    /// Vectorization has run: no vectorized loop of non-constant extent.
    Vectorized,
}

/// True when the verifier runs after each pass: `HALOGEN_VERIFY=1` (read once per process)
/// turns it on in any build, `HALOGEN_VERIFY=0` off; without the variable it runs in debug
/// builds only.
///
/// ```
/// let on = halogen::lower::verify::verify_enabled();
/// match std::env::var("HALOGEN_VERIFY").ok().as_deref().map(str::trim) {
///     Some("1") => assert!(on),
///     Some("0") => assert!(!on),
///     // Otherwise the library's build decides (this example may be built otherwise).
///     _ => {}
/// }
/// ```
pub fn verify_enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| match std::env::var("HALOGEN_VERIFY") {
        Ok(v) if v.trim() == "1" => true,
        Ok(v) if v.trim() == "0" => false,
        _ => cfg!(debug_assertions),
    })
}

struct Verifier<'a> {
    phase: Phase,
    /// Variables in scope, innermost last, with the type of their binding.
    bound: Vec<(Name, Type)>,
    /// Flat buffers in scope (allocations), with their element type; `None` for a
    /// `Realize`, whose types are per value.
    buffers: Vec<(Name, Option<Type>)>,
    external: &'a HashSet<Name>,
    /// The value types of the Funcs calls may name, by name.
    func_types: &'a HashMap<Name, Vec<Type>>,
    /// Kinds of the enclosing loops, outermost first.
    loops: Vec<ForKind>,
    error: Option<String>,
}

fn is_i32_scalar(t: Type) -> bool {
    t == Type::i32()
}

fn is_bool_scalar(t: Type) -> bool {
    t == Type::bool()
}

impl Verifier<'_> {
    fn fail(&mut self, msg: String) {
        self.error.get_or_insert(msg);
    }

    fn check(&mut self, ok: bool, msg: impl FnOnce() -> String) {
        if !ok {
            let m = msg();
            self.fail(m);
        }
    }

    fn lookup(&self, name: &str) -> Option<Type> {
        self.bound.iter().rev().find(|(n, _)| &**n == name).map(|(_, t)| *t)
    }

    fn buffer(&self, name: &str) -> Option<Option<Type>> {
        self.buffers.iter().rev().find(|(n, _)| &**n == name).map(|(_, t)| *t)
    }

    fn check_buffer(&mut self, what: &str, buffer: &Name, elem: Type) {
        match self.buffer(buffer) {
            Some(Some(t)) => self.check(t == elem, || {
                format!("{what} of {elem} elements on '{buffer}', which is allocated with {t} elements")
            }),
            Some(None) => {}
            None if self.external.contains(buffer) => {}
            None => self.fail(format!("{what} '{buffer}', which is neither allocated here nor a pipeline buffer")),
        }
    }

    /// Checks `e` and its children: the rules of each node kind are the type rules of the
    /// constructors in `ir::expr`.
    fn expr(&mut self, e: &Expr) {
        stack::guard(|| {
            if self.error.is_some() {
                return;
            }
            let t = e.ty();
            match e.kind() {
                ExprKind::IntImm(_) => {
                    self.check(t.is_scalar() && (t.is_int_or_uint() || t.is_bool()), || {
                        format!("integer constant '{e}' has type {t}")
                    });
                }
                ExprKind::FloatImm(_) => {
                    self.check(t.is_scalar() && t.is_float(), || format!("float constant '{e}' has type {t}"));
                }
                ExprKind::Var { name, binding: VarBinding::Plain } => match self.lookup(name) {
                    Some(bt) => self.check(bt == t, || {
                        format!("variable '{name}' is used as {t} but its let or loop binds a {bt}")
                    }),
                    None if self.phase >= Phase::BoundsInferred => {
                        self.fail(format!("variable '{name}' is used outside any let or loop that binds it"))
                    }
                    None => {}
                },
                ExprKind::Var { .. } => {}
                ExprKind::Cast(a) => {
                    self.check(a.ty().lanes == t.lanes, || {
                        format!("cast from {} to {t} changes the lanes in '{e}'", a.ty())
                    });
                    self.expr(a);
                }
                ExprKind::Binary(op, a, b) => {
                    if a.ty() != b.ty() {
                        self.fail(format!("operands of {op:?} differ in type: {} and {} in '{e}'", a.ty(), b.ty()));
                    } else if t != a.ty() {
                        self.fail(format!("{op:?} of {} operands has type {t} in '{e}'", a.ty()));
                    } else if matches!(op, BinOp::And | BinOp::Or) && !t.is_bool() {
                        self.fail(format!("operands of {op:?} are {t}, not bool, in '{e}'"));
                    }
                    self.expr(a);
                    self.expr(b);
                }
                ExprKind::Cmp(op, a, b) => {
                    if a.ty() != b.ty() {
                        self.fail(format!("operands of {op:?} differ in type: {} and {} in '{e}'", a.ty(), b.ty()));
                    } else if t != Type::bool().with_lanes(a.ty().lanes) {
                        self.fail(format!(
                            "comparison of {} operands has type {t}, not bool of their lanes, in '{e}'",
                            a.ty()
                        ));
                    }
                    self.expr(a);
                    self.expr(b);
                }
                ExprKind::Not(a) => {
                    self.check(a.ty().is_bool() && a.ty() == t, || format!("not of {} has type {t} in '{e}'", a.ty()));
                    self.expr(a);
                }
                ExprKind::Select(c, a, b) => {
                    let ct = c.ty();
                    if !ct.is_bool() || (ct.lanes != 1 && ct.lanes != t.lanes) {
                        self.fail(format!("select condition is {ct}, not bool of 1 or {} lanes, in '{e}'", t.lanes));
                    } else if a.ty() != b.ty() || a.ty() != t {
                        self.fail(format!("select sides are {} and {} for a {t} result in '{e}'", a.ty(), b.ty()));
                    }
                    self.expr(c);
                    self.expr(a);
                    self.expr(b);
                }
                ExprKind::Load { buffer, index, predicate } => {
                    let it = index.ty();
                    if it.element() != Type::i32() || it.lanes != t.lanes {
                        self.fail(format!("load index is {it}, not int32 of the value's {} lanes, in '{e}'", t.lanes));
                    } else if let Some(p) = predicate.as_ref().filter(|p| p.ty() != Type::bool().with_lanes(t.lanes)) {
                        self.fail(format!("load predicate is {}, not bool of {} lanes, in '{e}'", p.ty(), t.lanes));
                    } else {
                        self.check_buffer("load from", buffer, t.element());
                    }
                    self.expr(index);
                    if let Some(p) = predicate {
                        self.expr(p);
                    }
                }
                ExprKind::Ramp { base, stride, lanes } => {
                    if !base.ty().is_scalar() || stride.ty() != base.ty() {
                        self.fail(format!(
                            "ramp base {} and stride {} are not one scalar type in '{e}'",
                            base.ty(),
                            stride.ty()
                        ));
                    } else if *lanes < 2 || t != base.ty().with_lanes(*lanes) {
                        self.fail(format!("ramp of {lanes} lanes has type {t} in '{e}'"));
                    }
                    self.expr(base);
                    self.expr(stride);
                }
                ExprKind::Broadcast { value, lanes } => {
                    if !value.ty().is_scalar() || t != value.ty().with_lanes(*lanes) {
                        self.fail(format!("broadcast of {} to {lanes} lanes has type {t} in '{e}'", value.ty()));
                    }
                    self.expr(value);
                }
                ExprKind::Let { name, value, body } => {
                    self.check(body.ty() == t, || format!("let has type {t} but its body {} in '{e}'", body.ty()));
                    self.expr(value);
                    self.bound.push((name.clone(), value.ty()));
                    self.expr(body);
                    self.bound.pop();
                }
                ExprKind::Call { name, args, kind } => {
                    match kind {
                        CallKind::Func { .. } | CallKind::Image if self.phase >= Phase::Flattened => {
                            self.fail(format!("call to '{name}' remains after storage flattening in '{e}'"));
                        }
                        CallKind::Func { value_index, tuple, .. } => {
                            // The IR knows a Func by id only; its value types come from the pipeline.
                            if let Some(types) = self.func_types.get(name) {
                                match types.get(*value_index).copied() {
                                    None => self.fail(format!(
                                        "call to value {value_index} of '{name}', which has {} values",
                                        types.len()
                                    )),
                                    Some(vt) if vt != t => self
                                        .fail(format!("call to value {value_index} of '{name}', a {vt}, has type {t}")),
                                    Some(_) if *tuple != (types.len() > 1) => self.fail(format!(
                                        "call to '{name}' (of {} values) is marked tuple: {tuple}",
                                        types.len()
                                    )),
                                    Some(_) => {}
                                }
                            }
                        }
                        CallKind::Intrinsic(which) => {
                            if let Some(a) = args.iter().find(|a| a.ty().lanes != 1 && a.ty().lanes != t.lanes) {
                                self.fail(format!(
                                    "argument {a} of {which:?} has {} lanes for a {t} result",
                                    a.ty().lanes
                                ));
                            }
                        }
                        CallKind::Image => {}
                    }
                    if !matches!(kind, CallKind::Intrinsic(_)) {
                        if let Some(a) = args.iter().find(|a| !a.ty().is_scalar() || !a.ty().is_int_or_uint()) {
                            self.fail(format!(
                                "coordinate '{a}' of a call to '{name}' is {}, not a scalar integer",
                                a.ty()
                            ));
                        }
                    }
                    args.iter().for_each(|a| self.expr(a));
                }
            }
        })
    }

    fn scalar_i32(&mut self, what: &str, e: &Expr) {
        self.check(is_i32_scalar(e.ty()), || format!("{what} '{e}' is {}, not an int32 scalar", e.ty()));
        self.expr(e);
    }

    fn scalar_bool(&mut self, what: &str, e: &Expr) {
        self.check(is_bool_scalar(e.ty()), || format!("{what} '{e}' is {}, not a bool scalar", e.ty()));
        self.expr(e);
    }

    fn for_loop(&mut self, name: &Name, min: &Expr, extent: &Expr, kind: ForKind) {
        let inside = |k: ForKind| self.loops.contains(&k);
        let gpu = inside(ForKind::GpuBlock) || inside(ForKind::GpuThread);
        match kind {
            ForKind::GpuThread if !inside(ForKind::GpuBlock) => {
                self.fail(format!("GPU thread loop '{name}' is not inside a GPU block loop"))
            }
            ForKind::GpuBlock if inside(ForKind::GpuThread) => {
                self.fail(format!("GPU block loop '{name}' is inside a GPU thread loop"))
            }
            ForKind::Distributed if gpu => self.fail(format!("distributed loop '{name}' is inside a GPU loop")),
            ForKind::Unrolled if self.phase >= Phase::Unrolled && extent.as_int().is_none() => {
                self.fail(format!("unrolled loop '{name}' has non-constant extent '{extent}' after unrolling"))
            }
            ForKind::Vectorized if self.phase >= Phase::Vectorized && extent.as_int().is_none() => {
                self.fail(format!("vectorized loop '{name}' has non-constant extent '{extent}' after vectorization"))
            }
            _ => {}
        }
        self.scalar_i32(&format!("min of loop '{name}'"), min);
        self.scalar_i32(&format!("extent of loop '{name}'"), extent);
    }

    fn stmt(&mut self, s: &Stmt) {
        stack::guard(|| {
            if self.error.is_some() {
                return;
            }
            match s {
                Stmt::LetStmt { name, value, body } => {
                    self.expr(value);
                    self.bound.push((name.clone(), value.ty()));
                    self.stmt(body);
                    self.bound.pop();
                }
                Stmt::For { name, min, extent, kind, tails, body } => {
                    self.for_loop(name, min, extent, *kind);
                    // A tail's terms are copies of the body's, whose variables may be bound
                    // inside it: only their types are checked here.
                    for tail in tails {
                        let (c, g, u) = (tail.condition.ty(), tail.guard_term.ty(), tail.unclamped.ty());
                        self.check(is_bool_scalar(c) && is_bool_scalar(g) && is_i32_scalar(u), || {
                            format!(
                                "tail of loop '{name}' for '{}' has types {c}, {g}, {u}, not bool, bool, int32",
                                tail.var
                            )
                        });
                    }
                    self.bound.push((name.clone(), min.ty()));
                    self.loops.push(*kind);
                    self.stmt(body);
                    self.loops.pop();
                    self.bound.pop();
                }
                Stmt::Allocate { name, ty, extents, body } => {
                    extents.iter().for_each(|e| self.scalar_i32(&format!("extent of allocation '{name}'"), e));
                    self.buffers.push((name.clone(), Some(*ty)));
                    self.stmt(body);
                    self.buffers.pop();
                }
                Stmt::Store { buffer, value, index, predicate } => {
                    let (vt, it) = (value.ty(), index.ty());
                    if it.element() != Type::i32() || it.lanes != vt.lanes {
                        self.fail(format!(
                            "store index is {it}, not int32 of the value's {} lanes, in '{buffer}'",
                            vt.lanes
                        ));
                    } else if let Some(p) = predicate.as_ref().filter(|p| p.ty() != Type::bool().with_lanes(vt.lanes)) {
                        self.fail(format!(
                            "store predicate is {}, not bool of {} lanes, in '{buffer}'",
                            p.ty(),
                            vt.lanes
                        ));
                    } else {
                        self.check_buffer("store to", buffer, vt.element());
                    }
                    self.expr(value);
                    self.expr(index);
                    if let Some(p) = predicate {
                        self.expr(p);
                    }
                }
                Stmt::Realize { name, types, bounds, fold, body } => {
                    if self.phase >= Phase::Flattened {
                        self.fail(format!("realize of '{name}' remains after storage flattening"));
                    }
                    if let Some(f) = fold.filter(|f| f.dim >= bounds.len() || f.factor < 1) {
                        self.fail(format!("realize of '{name}' over {} dimensions is folded by {f:?}", bounds.len()));
                    }
                    self.check(!types.is_empty() && types.iter().all(|t| t.is_scalar()), || {
                        format!("realize of '{name}' has value types {types:?}, not one or more scalars")
                    });
                    for b in bounds {
                        self.scalar_i32(&format!("min of realize '{name}'"), &b.min);
                        self.scalar_i32(&format!("extent of realize '{name}'"), &b.extent);
                    }
                    self.buffers.push((name.clone(), None));
                    self.stmt(body);
                    self.buffers.pop();
                }
                Stmt::Provide { name, values, args } => {
                    if self.phase >= Phase::Flattened {
                        self.fail(format!("provide to '{name}' remains after storage flattening"));
                    }
                    if let Some(a) = args.iter().find(|a| !a.ty().is_scalar() || !a.ty().is_int_or_uint()) {
                        self.fail(format!(
                            "coordinate '{a}' of the provide to '{name}' is {}, not a scalar integer",
                            a.ty()
                        ));
                    }
                    values.iter().chain(args.iter()).for_each(|e| self.expr(e));
                }
                Stmt::ProducerConsumer { body, .. } => self.stmt(body),
                Stmt::Block(v) => v.iter().for_each(|c| self.stmt(c)),
                Stmt::IfThenElse { condition, then_case, else_case } => {
                    self.scalar_bool("if condition", condition);
                    self.stmt(then_case);
                    if let Some(e) = else_case {
                        self.stmt(e);
                    }
                }
                Stmt::Assert { condition, message } => {
                    self.scalar_bool("assert condition", condition);
                    for m in message {
                        if let MsgPart::Value(e) = m {
                            self.expr(e);
                        }
                    }
                }
                Stmt::Evaluate(e) => self.expr(e),
                Stmt::Free { .. } | Stmt::TransferWait => {}
                Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => {
                    let flat = self.phase >= Phase::Flattened;
                    let dims = extents.len();
                    let shape_ok = if flat {
                        mins.len() == 1 && strides.len() == dims
                    } else {
                        mins.len() == dims && strides.is_empty()
                    };
                    self.check(shape_ok, || {
                        format!(
                            "{} of '{buffer}' has {} mins, {dims} extents and {} strides",
                            op.word(),
                            mins.len(),
                            strides.len()
                        )
                    });
                    self.scalar_i32(&format!("peer of the {} of '{buffer}'", op.word()), peer);
                    for e in mins.iter().chain(extents).chain(strides) {
                        self.scalar_i32(&format!("box of the {} of '{buffer}'", op.word()), e);
                    }
                    if flat {
                        self.check_buffer(op.word(), buffer, *ty);
                    }
                }
            }
        })
    }
}

/// Checks the invariants of `s` after `pass`, which leaves lowering at `phase`. `external`
/// names the pipeline's buffers (inputs and outputs), which no statement allocates. Calls
/// to Funcs are checked against their value types by [`verify_with_funcs`].
///
/// ```
/// use halogen::ir::{Expr, ForKind, Stmt};
/// use halogen::lower::verify::{verify, Phase};
/// use halogen::Type;
/// use std::collections::HashSet;
/// let x = Expr::var(Type::i32(), "x");
/// let store = Stmt::Store { buffer: "out".into(), value: x.clone(), index: x, predicate: None };
/// let ok = Stmt::for_loop("x", Expr::i32(0), Expr::i32(8), ForKind::Serial, store.clone());
/// let external: HashSet<_> = ["out".into()].into_iter().collect();
/// assert!(verify(&ok, "example", &external, Phase::Vectorized).is_ok());
/// // Outside the loop, `x` is unbound.
/// let err = verify(&store, "example", &external, Phase::Vectorized).unwrap_err();
/// assert!(err.to_string().contains("variable 'x' is used outside"));
/// ```
pub fn verify(s: &Stmt, pass: &str, external: &HashSet<Name>, phase: Phase) -> Result<()> {
    verify_with_funcs(s, pass, external, &HashMap::new(), phase)
}

/// [`verify`], and every call to a Func named in `func_types` has the type of the value it
/// names (and says it is a tuple's exactly when the Func has several values).
///
/// ```
/// use halogen::ir::{CallKind, Expr, ExprKind, FuncId, Stmt};
/// use halogen::lower::verify::{verify_with_funcs, Phase};
/// use halogen::Type;
/// use std::collections::{HashMap, HashSet};
/// let call = |ty: Type| {
///     let kind = CallKind::Func { func: FuncId(0), value_index: 0, tuple: false };
///     Expr::make(ty, ExprKind::Call { name: "f".into(), args: vec![Expr::i32(0)], kind })
/// };
/// let types = HashMap::from([("f".into(), vec![Type::u8()])]);
/// let provide = |ty| Stmt::Provide { name: "g".into(), values: vec![call(ty)], args: vec![Expr::i32(0)] };
/// let none = HashSet::new();
/// assert!(verify_with_funcs(&provide(Type::u8()), "example", &none, &types, Phase::BoundsInferred).is_ok());
/// let err = verify_with_funcs(&provide(Type::f32()), "example", &none, &types, Phase::BoundsInferred).unwrap_err();
/// assert!(err.to_string().contains("call to value 0 of 'f', a uint8, has type float32"));
/// ```
pub fn verify_with_funcs(
    s: &Stmt,
    pass: &str,
    external: &HashSet<Name>,
    func_types: &HashMap<Name, Vec<Type>>,
    phase: Phase,
) -> Result<()> {
    let mut v = Verifier {
        phase,
        bound: Vec::new(),
        buffers: Vec::new(),
        external,
        func_types,
        loops: Vec::new(),
        error: None,
    };
    v.stmt(s);
    match v.error {
        None => Ok(()),
        Some(msg) => {
            let text = s.to_string();
            let excerpt: String = text.lines().take(40).collect::<Vec<_>>().join("\n");
            Err(Error::internal(pass, format!("{msg}\n{excerpt}")))
        }
    }
}

#[cfg(test)]
mod tests;
