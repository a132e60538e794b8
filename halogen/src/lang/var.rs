//! Pure variables, reduction variables and reduction domains.

use crate::ir::{Expr, ExprKind, Name, ReductionDomain, ReductionRef, ReductionVariable, Type, VarBinding};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Interned names, so that `Var` and `RVar` can be `Copy`.
struct Interner {
    ids: HashMap<Name, u32>,
    names: Vec<Name>,
}

fn interner() -> &'static Mutex<Interner> {
    static I: OnceLock<Mutex<Interner>> = OnceLock::new();
    I.get_or_init(|| Mutex::new(Interner { ids: HashMap::new(), names: Vec::new() }))
}

fn intern(name: &str) -> u32 {
    let mut i = interner().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&id) = i.ids.get(name) {
        return id;
    }
    let id = i.names.len() as u32;
    let n: Name = name.into();
    i.names.push(n.clone());
    i.ids.insert(n, id);
    id
}

fn name_of(id: u32) -> Name {
    interner().lock().unwrap_or_else(|p| p.into_inner()).names[id as usize].clone()
}

/// Makes a name unique in this process by appending a counter (`blur$3`).
pub(crate) fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("{prefix}${}", N.fetch_add(1, Ordering::Relaxed))
}

/// A pure variable of the infinite integer grid (`i32`). Two `Var`s with the same name are
/// the same variable.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// assert_eq!(&*x.name(), "x");
/// assert_eq!(x, Var::new("x"));
/// let e: Expr = x + 1;
/// assert_eq!(e.to_string(), "(x + 1)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Var(u32);

impl Var {
    /// The variable called `name`.
    pub fn new(name: &str) -> Var {
        Var(intern(name))
    }
    /// A variable with a fresh, unique name.
    pub fn fresh() -> Var {
        Var::new(&unique_name("v"))
    }
    /// Its name.
    pub fn name(&self) -> Name {
        name_of(self.0)
    }
    /// The variable as an expression.
    pub fn expr(&self) -> Expr {
        Expr::var(Type::i32(), self.name())
    }
}

/// A domain made by [`RDom::new`], with the mistakes made creating and using it.
struct RDomEntry {
    domain: ReductionRef,
    errors: Vec<String>,
}

fn rdom_registry() -> &'static Mutex<Vec<RDomEntry>> {
    static R: OnceLock<Mutex<Vec<RDomEntry>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Vec::new()))
}

/// The mistakes recorded for the reduction domain `r` (a float bound, no dimensions, a
/// dimension asked for that it does not have), each a sentence.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::lang::var::rdom_errors;
/// let r = RDom::new(&[(Expr::from(0), Expr::from(4))]);
/// let _ = r.y();
/// assert!(rdom_errors(&r.domain())[0].contains("dimension 1 of reduction domain"));
/// ```
pub fn rdom_errors(r: &ReductionRef) -> Vec<String> {
    let reg = rdom_registry().lock().unwrap_or_else(|p| p.into_inner());
    reg.iter().find(|e| e.domain == *r).map(|e| e.errors.clone()).unwrap_or_default()
}

/// One dimension of an [`RDom`]; `Copy`, like [`Var`].
///
/// ```
/// use halogen::prelude::*;
/// let r = RDom::new(&[(Expr::from(0), Expr::from(10))]);
/// let e: Expr = r.x() * 2;
/// assert!(e.to_string().contains(".x"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RVar {
    rdom: u32,
    index: u8,
}

impl RVar {
    /// The domain this variable belongs to.
    pub fn domain(&self) -> ReductionRef {
        rdom_registry().lock().unwrap_or_else(|p| p.into_inner())[self.rdom as usize].domain.clone()
    }
    /// Its unique name.
    pub fn name(&self) -> Name {
        self.domain().0.vars[self.index as usize].name.clone()
    }
    /// Its first value.
    pub fn min(&self) -> Expr {
        self.domain().0.vars[self.index as usize].min.clone()
    }
    /// Its number of values.
    pub fn extent(&self) -> Expr {
        self.domain().0.vars[self.index as usize].extent.clone()
    }
    /// The variable as an expression (carrying its domain).
    pub fn expr(&self) -> Expr {
        let d = self.domain();
        let name = d.0.vars[self.index as usize].name.clone();
        Expr::make(Type::i32(), ExprKind::Var { name, binding: VarBinding::Reduction(d) })
    }
}

/// A reduction domain: a box of 1–4 dimensions that an update definition iterates over,
/// the first dimension innermost.
///
/// ```
/// use halogen::prelude::*;
/// let img = ImageParam::new(Type::u8(), 2, "img");
/// let r = RDom::new(&[(Expr::from(0), img.width()), (Expr::from(0), img.height())]);
/// assert_eq!(r.dimensions(), 2);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RDom {
    id: u32,
    dims: u8,
}

impl RDom {
    /// A domain from `(min, extent)` pairs, innermost first. Bounds must be integer
    /// expressions that do not depend on pure variables (checked when compiling). Mistakes
    /// (no dimensions, a float bound, asking for a dimension it does not have) are
    /// recorded and reported by the compiler when a definition uses the domain.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let r = RDom::new(&[(Expr::from(0), Expr::from(f32::NAN))]);
    /// let x = Var::new("x");
    /// let f = Func::new("nan_extent");
    /// f.def(x, 0);
    /// f.update(x, f.at(x) + r.x());
    /// let e = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap_err();
    /// assert!(e.to_string().contains("the extent of dimension 0 is float32"), "{e}");
    /// ```
    #[track_caller]
    pub fn new(bounds: &[(Expr, Expr)]) -> RDom {
        let loc = std::panic::Location::caller();
        let base = unique_name("r");
        let mut errors = Vec::new();
        for (i, (min, extent)) in bounds.iter().enumerate() {
            for (what, e) in [("minimum", min), ("extent", extent)] {
                if !e.ty().is_int_or_uint() || e.ty().is_vector() {
                    errors.push(format!(
                        "the {what} of dimension {i} is {} ('{e}'); the bounds of a reduction domain are integers, convert it explicitly (at {loc})",
                        e.ty()
                    ));
                }
            }
        }
        // An empty domain still gets one (empty) dimension, so that `x()` has a variable
        // to return; the error above stops any definition that uses it.
        let empty = [(Expr::from(0), Expr::from(0))];
        if bounds.is_empty() {
            errors.push(format!("a reduction domain needs at least one dimension, got none (at {loc})"));
        }
        let dims = if bounds.is_empty() { &empty[..] } else { bounds };
        let suffix = ["x", "y", "z", "w"];
        let vars = dims
            .iter()
            .enumerate()
            .map(|(i, (min, extent))| ReductionVariable {
                name: match suffix.get(i) {
                    Some(s) => format!("{base}.{s}"),
                    None => format!("{base}.v{i}"),
                }
                .into(),
                min: crate::lang::expr_ops::to_i32(min.clone()),
                extent: crate::lang::expr_ops::to_i32(extent.clone()),
            })
            .collect();
        let r = ReductionRef(Arc::new(ReductionDomain { vars }));
        let mut reg = rdom_registry().lock().unwrap_or_else(|p| p.into_inner());
        reg.push(RDomEntry { domain: r, errors });
        RDom { id: (reg.len() - 1) as u32, dims: bounds.len() as u8 }
    }
    /// Number of dimensions.
    pub fn dimensions(&self) -> usize {
        self.dims as usize
    }
    /// Dimension `i` (0 = innermost). A dimension the domain does not have is recorded as
    /// an error (reported when a definition uses the domain) and gives its last dimension.
    #[track_caller]
    pub fn var(&self, i: usize) -> RVar {
        let dims = self.dims as usize;
        if i >= dims {
            let loc = std::panic::Location::caller();
            let mut reg = rdom_registry().lock().unwrap_or_else(|p| p.into_inner());
            let name = reg[self.id as usize].domain.0.vars[0].name.clone();
            let base = name.rsplit_once('.').map_or(&*name, |(b, _)| b).to_string();
            reg[self.id as usize].errors.push(format!(
                "dimension {i} of reduction domain '{base}' is asked for, but it has {dims} dimension{} (at {loc})",
                if dims == 1 { "" } else { "s" }
            ));
        }
        RVar { rdom: self.id, index: i.min(dims.saturating_sub(1)) as u8 }
    }
    /// Dimension 0.
    #[track_caller]
    pub fn x(&self) -> RVar {
        self.var(0)
    }
    /// Dimension 1.
    #[track_caller]
    pub fn y(&self) -> RVar {
        self.var(1)
    }
    /// Dimension 2.
    #[track_caller]
    pub fn z(&self) -> RVar {
        self.var(2)
    }
    /// Dimension 3.
    #[track_caller]
    pub fn w(&self) -> RVar {
        self.var(3)
    }
    /// The shared domain.
    pub fn domain(&self) -> ReductionRef {
        rdom_registry().lock().unwrap_or_else(|p| p.into_inner())[self.id as usize].domain.clone()
    }
    /// A 1-D domain used as an expression is its `x` variable.
    pub fn expr(&self) -> Expr {
        self.x().expr()
    }
}

impl From<Var> for Expr {
    fn from(v: Var) -> Expr {
        v.expr()
    }
}
impl From<&Var> for Expr {
    fn from(v: &Var) -> Expr {
        v.expr()
    }
}
impl From<RVar> for Expr {
    fn from(v: RVar) -> Expr {
        v.expr()
    }
}
impl From<&RVar> for Expr {
    fn from(v: &RVar) -> Expr {
        v.expr()
    }
}
impl From<RDom> for Expr {
    fn from(r: RDom) -> Expr {
        r.expr()
    }
}

/// A loop variable given to a schedule directive: a [`Var`] or an [`RVar`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum VarOrRVar {
    /// A pure (or split) variable.
    Var(Var),
    /// A reduction variable.
    RVar(RVar),
}

impl VarOrRVar {
    /// The loop's name.
    pub fn name(&self) -> Name {
        match self {
            VarOrRVar::Var(v) => v.name(),
            VarOrRVar::RVar(r) => r.name(),
        }
    }
    /// True for a reduction variable.
    pub fn is_rvar(&self) -> bool {
        matches!(self, VarOrRVar::RVar(_))
    }
}

impl From<Var> for VarOrRVar {
    fn from(v: Var) -> Self {
        VarOrRVar::Var(v)
    }
}
impl From<&Var> for VarOrRVar {
    fn from(v: &Var) -> Self {
        VarOrRVar::Var(*v)
    }
}
impl From<RVar> for VarOrRVar {
    fn from(v: RVar) -> Self {
        VarOrRVar::RVar(v)
    }
}
impl From<&RVar> for VarOrRVar {
    fn from(v: &RVar) -> Self {
        VarOrRVar::RVar(*v)
    }
}
