//! The reference interpreter: executes a lowered statement directly.
//!
//! It is the oracle every other back end is checked against, so it favours being obviously
//! right: every scalar operation goes through [`crate::ir::semantics`] (the same functions
//! the simplifier folds constants with), every load and store is bounds-checked (an
//! out-of-bounds access is an `Err`, never a panic or a stray write), and `Select`, `&&` and
//! `||` evaluate all their operands, as vector code does, so an unsafe load hidden in an
//! unselected branch is still reported.
//!
//! To stay fast enough for property tests that run hundreds of small pipelines, the
//! statement is first compiled into a slot-indexed tree: every variable and buffer name is
//! resolved once to an index into a vector, so running does no name lookups or hashing.
//!
//! Input: the statement after storage flattening (`Store`/`Load` on flat named buffers,
//! `Allocate`, `Free`, `For` of every kind, `LetStmt`, `Assert`, `IfThenElse`, `Block`,
//! `ProducerConsumer`, `Evaluate`). `Provide`, `Realize` and calls to Funcs or images never
//! reach a back end; meeting one is an internal error.

use crate::error::{Error, Result};
use crate::ir::semantics::{self, Scalar};
use crate::ir::stack;
use crate::ir::{BinOp, CallKind, CmpOp, Expr, ExprKind, Intrinsic, MsgPart, Name, Stmt, TransferOp, Type, TypeCode};
use crate::runtime::distributed::{Combiner, Communicator, Exchange, StridedRegion};
use std::collections::HashMap;
use std::sync::Arc;

mod backend;

pub use backend::{InterpBackend, Interpreted};

const PASS: &str = "interpreter";

pub use crate::ir::semantics::MAX_ALLOCATION_ELEMENTS;

/// Executes lowered statements over buffers bound by name.
///
/// ```
/// use halogen::backend::interp::Interpreter;
/// use halogen::ir::{ForKind, Stmt};
/// use halogen::{Expr, Type};
///
/// // for x in [0, 4): out[x] = x * 2
/// let x = Expr::var(Type::i32(), "x");
/// let store = Stmt::Store { buffer: "out".into(), value: Expr::mul(x.clone(), Expr::i32(2)), index: x, predicate: None };
/// let s = Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), ForKind::Serial, store);
///
/// let mut out = [0u8; 16]; // four i32s
/// let mut interp = Interpreter::new();
/// interp.bind_buffer_mut("out", Type::i32(), &mut out);
/// interp.run(&s).unwrap();
/// assert_eq!(interp.store_count("out"), 4);
/// drop(interp);
/// assert_eq!(i32::from_ne_bytes(out[12..16].try_into().unwrap()), 6);
/// ```
pub struct Interpreter<'a> {
    communicator: Option<Arc<dyn Communicator>>,
    scalars: Vec<(Name, Scalar)>,
    buffers: Vec<Bound<'a>>,
    pending: Option<Error>,
    store_counts: HashMap<Name, u64>,
    allocation_sizes: Vec<(Name, u64)>,
}

enum BoundData<'a> {
    Ro(&'a [u8]),
    Rw(&'a mut [u8]),
}

struct Bound<'a> {
    name: Name,
    elem: Type,
    data: BoundData<'a>,
}

impl Default for Interpreter<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> Interpreter<'a> {
    /// An interpreter with nothing bound.
    pub fn new() -> Interpreter<'a> {
        Interpreter {
            communicator: None,
            scalars: Vec::new(),
            buffers: Vec::new(),
            pending: None,
            store_counts: HashMap::new(),
            allocation_sizes: Vec::new(),
        }
    }

    /// Binds the scalar variable `name` (a `Param`, a buffer's min/extent/stride, ...) to a
    /// constant: an `IntImm` or `FloatImm` of the variable's type. Anything else makes the
    /// next [`run`](Self::run) fail with an internal error. Binding a name again replaces it.
    ///
    /// ```
    /// use halogen::backend::interp::Interpreter;
    /// use halogen::ir::{MsgPart, Stmt};
    /// use halogen::{Expr, Type};
    /// let n = Expr::var(Type::i32(), "n");
    /// let s = Stmt::Assert { condition: Expr::lt(n, Expr::i32(3)), message: vec![MsgPart::Text("n too big".into())] };
    /// let mut i = Interpreter::new();
    /// i.bind_scalar("n", Expr::i32(5));
    /// assert!(i.run(&s).unwrap_err().to_string().contains("n too big"));
    /// ```
    pub fn bind_scalar(&mut self, name: &str, value: Expr) {
        match Scalar::from_expr(&value) {
            Some(v) => match self.scalars.iter_mut().find(|(n, _)| &**n == name) {
                Some(slot) => slot.1 = v,
                None => self.scalars.push((name.into(), v)),
            },
            None => {
                self.pending = Some(Error::internal(
                    PASS,
                    format!("bind_scalar: the value bound to '{name}' is not a constant: {value}"),
                ));
            }
        }
    }

    /// The ranks a distributed pipeline's border exchanges go between.
    pub fn set_communicator(&mut self, communicator: Arc<dyn Communicator>) {
        self.communicator = Some(communicator);
    }

    /// Binds a read-only buffer of element type `elem` (bools take one byte each), stored as
    /// native-endian bytes. Binding a name again replaces it.
    pub fn bind_buffer(&mut self, name: &str, elem: Type, data: &'a [u8]) {
        self.bind(name, elem, BoundData::Ro(data))
    }

    /// Binds a writable buffer of element type `elem` (bools take one byte each), stored as
    /// native-endian bytes. Binding a name again replaces it.
    pub fn bind_buffer_mut(&mut self, name: &str, elem: Type, data: &'a mut [u8]) {
        self.bind(name, elem, BoundData::Rw(data))
    }

    fn bind(&mut self, name: &str, elem: Type, data: BoundData<'a>) {
        if !supported_elem(elem) {
            self.pending =
                Some(Error::internal(PASS, format!("buffer '{name}': element type {elem} is not supported")));
            return;
        }
        self.buffers.retain(|b| &*b.name != name);
        self.buffers.push(Bound { name: name.into(), elem: elem.element(), data });
    }

    /// Executes `s`. Statistics ([`store_count`](Self::store_count),
    /// [`allocation_sizes`](Self::allocation_sizes)) are reset first and describe this run,
    /// including a run that fails part way.
    ///
    /// Errors: `Error::Runtime` for an out-of-bounds load or store (naming the buffer, the
    /// index and the buffer's size), a failed `Assert` (its message) or a bad allocation
    /// size; `Error::Internal` for IR that should not reach a back end, an unbound variable
    /// or an unknown buffer.
    pub fn run(&mut self, s: &Stmt) -> Result<()> {
        self.store_counts.clear();
        self.allocation_sizes.clear();
        if let Some(e) = &self.pending {
            return Err(e.clone());
        }
        let mut c = Compiler::new(&self.scalars, &self.buffers);
        let prog = c.stmt(s)?;
        let mut m = self.machine(&c);
        let r = m.exec(&prog).map_err(|e| *e);
        let (stores, allocs) = (m.stores, m.allocs);
        self.collect_stats(&c, &stores, &allocs);
        r
    }

    /// Evaluates the expression `e` with the bound scalars and buffers, giving one value per
    /// lane (useful to test the simplifier: `eval(e) == eval(simplify(e))`).
    ///
    /// ```
    /// use halogen::backend::interp::Interpreter;
    /// use halogen::ir::semantics::Scalar;
    /// use halogen::{Expr, Type};
    /// let x = Expr::var(Type::i32(), "x");
    /// let mut i = Interpreter::new();
    /// i.bind_scalar("x", Expr::i32(-7));
    /// assert_eq!(i.eval(&Expr::div(x, Expr::i32(2))).unwrap(), vec![Scalar::Int(-4)]);
    /// ```
    pub fn eval(&mut self, e: &Expr) -> Result<Vec<Scalar>> {
        if let Some(err) = &self.pending {
            return Err(err.clone());
        }
        let mut c = Compiler::new(&self.scalars, &self.buffers);
        let root = c.root(e)?;
        let mut m = self.machine(&c);
        let v = m.root(&root).map_err(|e| *e)?;
        let lanes = (e.ty().lanes as usize).max(v.lanes());
        Ok((0..lanes).map(|i| v.lane(i)).collect())
    }

    fn machine(&mut self, c: &Compiler) -> Machine<'_> {
        let mut vars = vec![Val::S(Scalar::Int(0)); c.nslots];
        for (i, (_, v)) in self.scalars.iter().enumerate() {
            vars[i] = Val::S(*v);
        }
        let mut bufs: Vec<RtBuf<'_>> = self
            .buffers
            .iter_mut()
            .map(|b| RtBuf {
                name: b.name.clone(),
                elem: b.elem,
                data: match &mut b.data {
                    BoundData::Ro(r) => Storage::Ro(r),
                    BoundData::Rw(w) => Storage::Rw(w),
                },
            })
            .collect();
        for (name, elem) in &c.alloc_slots {
            bufs.push(RtBuf { name: name.clone(), elem: *elem, data: Storage::Unallocated });
        }
        let n = bufs.len();
        Machine {
            vars,
            bufs,
            communicator: self.communicator.clone(),
            exchange: Exchange::default(),
            stores: vec![0; n],
            allocs: vec![None; n],
        }
    }

    fn collect_stats(&mut self, c: &Compiler, stores: &[u64], allocs: &[Option<u64>]) {
        let names = self.buffers.iter().map(|b| b.name.clone()).chain(c.alloc_slots.iter().map(|(n, _)| n.clone()));
        for ((name, &count), &alloc) in names.zip(stores).zip(allocs) {
            if count > 0 {
                *self.store_counts.entry(name.clone()).or_insert(0) += count;
            }
            if let Some(size) = alloc {
                match self.allocation_sizes.iter_mut().find(|(n, _)| *n == name) {
                    Some(e) => e.1 = e.1.max(size),
                    None => self.allocation_sizes.push((name, size)),
                }
            }
        }
        self.allocation_sizes.sort();
    }

    /// Number of lanes written to `buffer` during the last run (masked-off lanes are not
    /// counted). Tests use it to prove that a sliding window computes each value once.
    pub fn store_count(&self, buffer: &str) -> u64 {
        self.store_counts.get(buffer).copied().unwrap_or(0)
    }

    /// For each buffer allocated during the last run, the number of elements of its largest
    /// allocation, sorted by name.
    pub fn allocation_sizes(&self) -> Vec<(Name, u64)> {
        self.allocation_sizes.clone()
    }
}

fn supported_elem(t: Type) -> bool {
    match t.code {
        TypeCode::Bool => true,
        TypeCode::Int | TypeCode::UInt => matches!(t.bits, 8 | 16 | 32 | 64),
        TypeCode::Float => matches!(t.bits, 32 | 64),
        TypeCode::Handle => false,
    }
}

// ---------------------------------------------------------------------------------------
// Compiled form: names resolved to slots.

/// A buffer reference: a slot, or a name nothing binds (an error only when used).
#[derive(Debug)]
enum BufRef {
    Slot(usize),
    Unknown(Name),
}

#[derive(Debug)]
enum CE {
    Const(Scalar),
    Var(usize),
    Unbound(Name),
    Cast {
        from: Type,
        to: Type,
        a: Box<CE>,
    },
    Bin {
        op: BinOp,
        ty: Type,
        a: Box<CE>,
        b: Box<CE>,
    },
    Cmp {
        op: CmpOp,
        ty: Type,
        a: Box<CE>,
        b: Box<CE>,
    },
    Not(Box<CE>),
    Select(Box<CE>, Box<CE>, Box<CE>),
    Load {
        buf: BufRef,
        elem: Type,
        index: Box<CE>,
        pred: Option<Box<CE>>,
    },
    Ramp {
        ty: Type,
        base: Box<CE>,
        stride: Box<CE>,
        lanes: usize,
    },
    Broadcast {
        value: Box<CE>,
        lanes: usize,
    },
    Let {
        slot: usize,
        value: Box<CE>,
        value_scalar: bool,
        body: Box<CE>,
    },
    Intrinsic {
        which: Intrinsic,
        arg_types: Vec<Type>,
        result: Type,
        args: Vec<CE>,
    },
    /// Every [`GROW_EVERY`] levels of a deep expression: the rest runs with the stack grown
    /// as needed (evaluation recurses once per level).
    Deep(Box<CE>),
}

/// How many levels of a compiled tree run between two checks of the stack left
/// ([`CE::Deep`], [`CS::Deep`]): few enough that their frames fit the guard's red zone,
/// many enough that the check costs nothing in a shallow tree (it has none).
const GROW_EVERY: usize = 32;

// Dropping a deep compiled tree recurses once per level too.
impl Drop for CE {
    fn drop(&mut self) {
        if let CE::Deep(inner) = self {
            let inner = std::mem::replace(&mut **inner, CE::Const(Scalar::Int(0)));
            stack::guard(|| drop(inner));
        }
    }
}

/// An expression in a statement, with whether it is a scalar (then it and all its operands
/// run on the scalar fast path, [`Machine::eval_s`]).
#[derive(Debug)]
struct Root {
    e: CE,
    scalar: bool,
}

#[derive(Debug)]
enum CMsg {
    Text(String),
    Value(Root, Type),
}

#[derive(Debug)]
enum CS {
    Let {
        slot: usize,
        value: Root,
        body: Box<CS>,
    },
    Assert {
        cond: Root,
        msg: Vec<CMsg>,
    },
    For {
        slot: usize,
        name: Name,
        min: Root,
        extent: Root,
        body: Box<CS>,
    },
    Store {
        buf: BufRef,
        vty: Type,
        value: Root,
        index: Root,
        pred: Option<Root>,
    },
    Allocate {
        buf: usize,
        extents: Vec<Root>,
        body: Box<CS>,
    },
    Free(BufRef),
    Block(Vec<CS>),
    If {
        cond: Root,
        then_case: Box<CS>,
        else_case: Option<Box<CS>>,
    },
    Eval(Root),
    /// One side of a border exchange (see [`Stmt::Transfer`], after storage flattening).
    Transfer {
        op: TransferOp,
        peer: Root,
        buf: BufRef,
        index: Root,
        extents: Vec<Root>,
        strides: Vec<Root>,
    },
    /// Completes the border exchange.
    TransferWait,
    /// As [`CE::Deep`], for statements.
    Deep(Box<CS>),
}

impl Drop for CS {
    fn drop(&mut self) {
        if let CS::Deep(inner) = self {
            let inner = std::mem::replace(&mut **inner, CS::Block(Vec::new()));
            stack::guard(|| drop(inner));
        }
    }
}

struct Compiler {
    /// Variables in scope, innermost last.
    vars: Vec<(Name, usize)>,
    nslots: usize,
    /// Buffers in scope, innermost last.
    bufs: Vec<(Name, usize)>,
    nbound: usize,
    /// Name and element type of each `Allocate` site's slot (after the bound buffers).
    alloc_slots: Vec<(Name, Type)>,
    /// Levels of expression and of statement above the node being compiled.
    expr_depth: usize,
    stmt_depth: usize,
}

impl Compiler {
    fn new(scalars: &[(Name, Scalar)], buffers: &[Bound<'_>]) -> Compiler {
        Compiler {
            vars: scalars.iter().enumerate().map(|(i, (n, _))| (n.clone(), i)).collect(),
            nslots: scalars.len(),
            bufs: buffers.iter().enumerate().map(|(i, b)| (b.name.clone(), i)).collect(),
            nbound: buffers.len(),
            alloc_slots: Vec::new(),
            expr_depth: 0,
            stmt_depth: 0,
        }
    }

    fn new_slot(&mut self) -> usize {
        self.nslots += 1;
        self.nslots - 1
    }

    fn buf(&self, name: &Name) -> BufRef {
        match self.bufs.iter().rev().find(|(n, _)| n == name) {
            Some((_, s)) => BufRef::Slot(*s),
            None => BufRef::Unknown(name.clone()),
        }
    }

    /// Compiles `body` with `name` bound to a fresh slot.
    fn scoped<T>(&mut self, name: &Name, body: impl FnOnce(&mut Self, usize) -> Result<T>) -> Result<T> {
        let slot = self.new_slot();
        self.vars.push((name.clone(), slot));
        let r = body(self, slot);
        self.vars.pop();
        r
    }

    fn root(&mut self, e: &Expr) -> Result<Root> {
        Ok(Root { e: self.expr(e)?, scalar: e.ty().is_scalar() })
    }

    fn boxed(&mut self, e: &Expr) -> Result<Box<CE>> {
        Ok(Box::new(self.expr(e)?))
    }

    fn expr(&mut self, e: &Expr) -> Result<CE> {
        let depth = self.expr_depth;
        self.expr_depth += 1;
        let r = stack::guard(|| self.expr_here(e));
        self.expr_depth = depth;
        Ok(if depth > 0 && depth.is_multiple_of(GROW_EVERY) { CE::Deep(Box::new(r?)) } else { r? })
    }

    fn expr_here(&mut self, e: &Expr) -> Result<CE> {
        let ty = e.ty();
        Ok(match e.kind() {
            ExprKind::IntImm(v) => CE::Const(Scalar::Int(*v)),
            ExprKind::FloatImm(b) => CE::Const(Scalar::Float(b.get())),
            ExprKind::Var { name, .. } => match self.vars.iter().rev().find(|(n, _)| n == name) {
                Some((_, s)) => CE::Var(*s),
                None => CE::Unbound(name.clone()),
            },
            ExprKind::Cast(a) => CE::Cast { from: a.ty().element(), to: ty.element(), a: self.boxed(a)? },
            ExprKind::Binary(op, a, b) => {
                CE::Bin { op: *op, ty: a.ty().element(), a: self.boxed(a)?, b: self.boxed(b)? }
            }
            ExprKind::Cmp(op, a, b) => CE::Cmp { op: *op, ty: a.ty().element(), a: self.boxed(a)?, b: self.boxed(b)? },
            ExprKind::Not(a) => CE::Not(self.boxed(a)?),
            ExprKind::Select(c, t, f) => CE::Select(self.boxed(c)?, self.boxed(t)?, self.boxed(f)?),
            ExprKind::Load { buffer, index, predicate } => CE::Load {
                buf: self.buf(buffer),
                elem: ty.element(),
                index: self.boxed(index)?,
                pred: predicate.as_ref().map(|p| self.boxed(p)).transpose()?,
            },
            ExprKind::Ramp { base, stride, lanes } => CE::Ramp {
                ty: base.ty().element(),
                base: self.boxed(base)?,
                stride: self.boxed(stride)?,
                lanes: *lanes as usize,
            },
            ExprKind::Broadcast { value, lanes } => CE::Broadcast { value: self.boxed(value)?, lanes: *lanes as usize },
            ExprKind::Let { name, value, body } => {
                let value_scalar = value.ty().is_scalar();
                let value = self.boxed(value)?;
                self.scoped(name, |c, slot| Ok(CE::Let { slot, value, value_scalar, body: c.boxed(body)? }))?
            }
            ExprKind::Call { name, args, kind } => match kind {
                CallKind::Intrinsic(which) => CE::Intrinsic {
                    which: *which,
                    arg_types: args.iter().map(|a| a.ty().element()).collect(),
                    result: ty.element(),
                    args: args.iter().map(|a| self.expr(a)).collect::<Result<_>>()?,
                },
                CallKind::Func { .. } | CallKind::Image => {
                    return Err(Error::internal(
                        PASS,
                        format!(
                        "call to '{name}' reached the interpreter; storage flattening should have made it a Load: {e}"
                    ),
                    ))
                }
            },
        })
    }

    fn stmt(&mut self, s: &Stmt) -> Result<CS> {
        let depth = self.stmt_depth;
        self.stmt_depth += 1;
        let r = stack::guard(|| self.stmt_here(s));
        self.stmt_depth = depth;
        Ok(if depth > 0 && depth.is_multiple_of(GROW_EVERY) { CS::Deep(Box::new(r?)) } else { r? })
    }

    fn stmt_here(&mut self, s: &Stmt) -> Result<CS> {
        Ok(match s {
            Stmt::LetStmt { name, value, body } => {
                let value = self.root(value)?;
                self.scoped(name, |c, slot| Ok(CS::Let { slot, value, body: Box::new(c.stmt(body)?) }))?
            }
            Stmt::Assert { condition, message } => CS::Assert {
                cond: self.root(condition)?,
                msg: message
                    .iter()
                    .map(|m| {
                        Ok(match m {
                            MsgPart::Text(t) => CMsg::Text(t.clone()),
                            MsgPart::Value(e) => CMsg::Value(self.root(e)?, e.ty().element()),
                        })
                    })
                    .collect::<Result<_>>()?,
            },
            Stmt::ProducerConsumer { body, .. } => self.stmt(body)?,
            // Every loop kind runs serially. Iterations of a parallel (or GPU, or distributed)
            // loop are independent by construction, so any order gives the same result; the
            // serial order makes the oracle deterministic.
            Stmt::For { name, min, extent, body, .. } => {
                let (min, extent) = (self.root(min)?, self.root(extent)?);
                self.scoped(name, |c, slot| {
                    Ok(CS::For { slot, name: name.clone(), min, extent, body: Box::new(c.stmt(body)?) })
                })?
            }
            Stmt::Provide { name, .. } => {
                return Err(Error::internal(
                    PASS,
                    format!("Provide to '{name}' reached the interpreter; storage flattening should have removed it"),
                ))
            }
            Stmt::Realize { name, .. } => {
                return Err(Error::internal(
                    PASS,
                    format!("Realize of '{name}' reached the interpreter; storage flattening should have removed it"),
                ))
            }
            Stmt::Store { buffer, value, index, predicate } => CS::Store {
                buf: self.buf(buffer),
                vty: value.ty().element(),
                value: self.root(value)?,
                index: self.root(index)?,
                pred: predicate.as_ref().map(|p| self.root(p)).transpose()?,
            },
            Stmt::Allocate { name, ty, extents, body } => {
                if !supported_elem(ty.element()) {
                    return Err(Error::internal(
                        PASS,
                        format!("Allocate '{name}': element type {ty} is not supported"),
                    ));
                }
                let extents = extents.iter().map(|e| self.root(e)).collect::<Result<_>>()?;
                let buf = self.nbound + self.alloc_slots.len();
                self.alloc_slots.push((name.clone(), ty.element()));
                self.bufs.push((name.clone(), buf));
                let body = self.stmt(body);
                self.bufs.pop();
                CS::Allocate { buf, extents, body: Box::new(body?) }
            }
            Stmt::Free { name } => CS::Free(self.buf(name)),
            Stmt::Block(v) => CS::Block(v.iter().map(|s| self.stmt(s)).collect::<Result<_>>()?),
            Stmt::IfThenElse { condition, then_case, else_case } => CS::If {
                cond: self.root(condition)?,
                then_case: Box::new(self.stmt(then_case)?),
                else_case: else_case.as_ref().map(|e| self.stmt(e).map(Box::new)).transpose()?,
            },
            Stmt::Evaluate(e) => CS::Eval(self.root(e)?),
            Stmt::Transfer { op, peer, buffer, mins, extents, strides, .. } => {
                let [index] = &mins[..] else {
                    return Err(Error::internal(
                        PASS,
                        format!("the {} of '{buffer}' reached the interpreter before storage flattening", op.word()),
                    ));
                };
                let roots = |c: &mut Self, v: &[Expr]| v.iter().map(|e| c.root(e)).collect::<Result<Vec<_>>>();
                CS::Transfer {
                    op: *op,
                    peer: self.root(peer)?,
                    buf: self.buf(buffer),
                    index: self.root(index)?,
                    extents: roots(self, extents)?,
                    strides: roots(self, strides)?,
                }
            }
            Stmt::TransferWait => CS::TransferWait,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Running.

/// A value: one scalar, or one per lane.
#[derive(Clone, Debug)]
enum Val {
    S(Scalar),
    V(Vec<Scalar>),
}

impl Val {
    fn lanes(&self) -> usize {
        match self {
            Val::S(_) => 1,
            Val::V(v) => v.len(),
        }
    }
    /// Lane `i` (a scalar is the same in every lane).
    fn lane(&self, i: usize) -> Scalar {
        match self {
            Val::S(s) => *s,
            Val::V(v) => v[i],
        }
    }
}

/// Errors inside the running machine are boxed: it keeps `Result<Val>` small, and the hot
/// path returns it from every node.
type RR<T> = std::result::Result<T, Box<Error>>;

fn internal(message: impl Into<String>) -> Box<Error> {
    Box::new(Error::internal(PASS, message))
}

fn runtime(message: String) -> Box<Error> {
    Box::new(Error::Runtime(message))
}

/// The lane count of an operation on values with `a` and `b` lanes (1 broadcasts).
fn common_lanes(a: usize, b: usize) -> RR<usize> {
    if a == b || b == 1 {
        Ok(a)
    } else if a == 1 {
        Ok(b)
    } else {
        Err(internal(format!("operands have {a} and {b} lanes")))
    }
}

fn map1(a: Val, f: impl Fn(Scalar) -> Scalar) -> Val {
    match a {
        Val::S(x) => Val::S(f(x)),
        Val::V(mut v) => {
            v.iter_mut().for_each(|x| *x = f(*x));
            Val::V(v)
        }
    }
}

fn map2(a: Val, b: Val, f: impl Fn(Scalar, Scalar) -> Scalar) -> RR<Val> {
    Ok(match (a, b) {
        (Val::S(x), Val::S(y)) => Val::S(f(x, y)),
        (a, b) => {
            let n = common_lanes(a.lanes(), b.lanes())?;
            Val::V((0..n).map(|i| f(a.lane(i), b.lane(i))).collect())
        }
    })
}

enum Storage<'b> {
    Ro(&'b [u8]),
    Rw(&'b mut [u8]),
    Owned(Vec<u8>),
    Unallocated,
    Freed,
}

struct RtBuf<'b> {
    name: Name,
    elem: Type,
    data: Storage<'b>,
}

impl RtBuf<'_> {
    fn bytes(&self) -> RR<&[u8]> {
        match &self.data {
            Storage::Ro(b) => Ok(b),
            Storage::Rw(b) => Ok(b),
            Storage::Owned(v) => Ok(v),
            Storage::Unallocated => Err(internal(format!("buffer '{}' used outside its Allocate", self.name))),
            Storage::Freed => Err(internal(format!("buffer '{}' used after Free", self.name))),
        }
    }
    fn bytes_mut(&mut self) -> RR<&mut [u8]> {
        match &mut self.data {
            Storage::Ro(_) => Err(internal(format!("store to buffer '{}', which is bound read-only", self.name))),
            Storage::Rw(b) => Ok(b),
            Storage::Owned(v) => Ok(v),
            Storage::Unallocated => Err(internal(format!("buffer '{}' used outside its Allocate", self.name))),
            Storage::Freed => Err(internal(format!("buffer '{}' used after Free", self.name))),
        }
    }
}

/// The element at index `i` (in range) of storage of `elem`s.
fn read_elem(bytes: &[u8], elem: Type, i: usize) -> Scalar {
    macro_rules! rd {
        ($t:ty) => {{
            const N: usize = std::mem::size_of::<$t>();
            <$t>::from_ne_bytes(bytes[i * N..i * N + N].try_into().unwrap())
        }};
    }
    match (elem.code, elem.bits) {
        (TypeCode::Bool, _) => Scalar::Int((bytes[i] != 0) as i64),
        (TypeCode::UInt, 8) => Scalar::Int(bytes[i] as i64),
        (TypeCode::Int, 8) => Scalar::Int(bytes[i] as i8 as i64),
        (TypeCode::UInt, 16) => Scalar::Int(rd!(u16) as i64),
        (TypeCode::Int, 16) => Scalar::Int(rd!(i16) as i64),
        (TypeCode::UInt, 32) => Scalar::Int(rd!(u32) as i64),
        (TypeCode::Int, 32) => Scalar::Int(rd!(i32) as i64),
        (TypeCode::UInt | TypeCode::Int, _) => Scalar::Int(rd!(i64)),
        (TypeCode::Float, 32) => Scalar::Float(rd!(f32) as f64),
        _ => Scalar::Float(rd!(f64)),
    }
}

/// Writes `v` (a value of type `elem`) at index `i` (in range).
fn write_elem(bytes: &mut [u8], elem: Type, i: usize, v: Scalar) {
    macro_rules! wr {
        ($x:expr) => {{
            let b = $x.to_ne_bytes();
            bytes[i * b.len()..(i + 1) * b.len()].copy_from_slice(&b)
        }};
    }
    let int = || v.as_i64();
    match (elem.code, elem.bits) {
        (TypeCode::Bool, _) => bytes[i] = v.is_true() as u8,
        (TypeCode::UInt | TypeCode::Int, 8) => bytes[i] = int() as u8,
        (TypeCode::UInt | TypeCode::Int, 16) => wr!(int() as u16),
        (TypeCode::UInt | TypeCode::Int, 32) => wr!(int() as u32),
        (TypeCode::UInt | TypeCode::Int, _) => wr!(int()),
        (TypeCode::Float, 32) => wr!(v.as_f64() as f32),
        _ => wr!(v.as_f64()),
    }
}

fn zero_of(elem: Type) -> Scalar {
    if elem.is_float() {
        Scalar::Float(0.0)
    } else {
        Scalar::Int(0)
    }
}

fn unknown_buffer(name: &Name) -> Box<Error> {
    internal(format!("unknown buffer '{name}': nothing binds or allocates it"))
}

fn format_value(v: Scalar, ty: Type) -> String {
    match v {
        Scalar::Int(i) if ty.is_uint() && ty.bits >= 64 => (i as u64).to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => f.to_string(),
    }
}

struct Machine<'b> {
    vars: Vec<Val>,
    bufs: Vec<RtBuf<'b>>,
    /// The ranks of a distributed run, and the border exchange under way (the runtime's,
    /// as generated code posts it).
    communicator: Option<Arc<dyn Communicator>>,
    exchange: Exchange,
    /// Lanes stored, per buffer slot.
    stores: Vec<u64>,
    /// Largest allocation in elements, per buffer slot.
    allocs: Vec<Option<u64>>,
}

impl Machine<'_> {
    fn eval(&mut self, e: &CE) -> RR<Val> {
        Ok(match e {
            CE::Const(c) => Val::S(*c),
            CE::Deep(a) => return stack::guard(|| self.eval(a)),
            CE::Var(s) => self.vars[*s].clone(),
            CE::Unbound(n) => return Err(internal(format!("read of unbound variable '{n}'"))),
            CE::Cast { from, to, a } => {
                let (from, to) = (*from, *to);
                map1(self.eval(a)?, |x| semantics::cast(from, to, x))
            }
            CE::Bin { op, ty, a, b } => {
                let (op, ty) = (*op, *ty);
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                if let (Val::S(x), Val::S(y)) = (&a, &b) {
                    Val::S(semantics::binary(op, ty, *x, *y))
                } else {
                    map2(a, b, |x, y| semantics::binary(op, ty, x, y))?
                }
            }
            CE::Cmp { op, ty, a, b } => {
                let (op, ty) = (*op, *ty);
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                if let (Val::S(x), Val::S(y)) = (&a, &b) {
                    Val::S(Scalar::Int(semantics::compare(op, ty, *x, *y) as i64))
                } else {
                    map2(a, b, |x, y| Scalar::Int(semantics::compare(op, ty, x, y) as i64))?
                }
            }
            CE::Not(a) => map1(self.eval(a)?, semantics::not),
            CE::Select(c, t, f) => {
                // Both values are evaluated, as vector code does (see the module docs).
                let (c, t, f) = (self.eval(c)?, self.eval(t)?, self.eval(f)?);
                match c {
                    Val::S(c) => {
                        if c.is_true() {
                            t
                        } else {
                            f
                        }
                    }
                    c => {
                        let n = common_lanes(common_lanes(c.lanes(), t.lanes())?, f.lanes())?;
                        Val::V((0..n).map(|i| if c.lane(i).is_true() { t.lane(i) } else { f.lane(i) }).collect())
                    }
                }
            }
            CE::Load { buf, elem, index, pred } => {
                let index = self.eval(index)?;
                let pred = match pred {
                    Some(p) => Some(self.eval(p)?),
                    None => None,
                };
                self.load(buf, *elem, index, pred)?
            }
            CE::Ramp { ty, base, stride, lanes } => {
                let (base, stride) = (self.eval_s(base)?, self.eval_s(stride)?);
                let ty = *ty;
                let mut lane = base;
                let mut out = Vec::with_capacity(*lanes);
                for _ in 0..*lanes {
                    out.push(lane);
                    lane = semantics::binary(BinOp::Add, ty, lane, stride);
                }
                Val::V(out)
            }
            CE::Broadcast { value, lanes } => match self.eval(value)? {
                Val::S(s) => Val::V(vec![s; *lanes]),
                // a broadcast of a vector repeats it
                Val::V(v) => Val::V(v.iter().copied().cycle().take(v.len() * *lanes).collect()),
            },
            CE::Let { slot, value, body, .. } => {
                let v = self.eval(value)?;
                self.vars[*slot] = v;
                self.eval(body)?
            }
            CE::Intrinsic { which, arg_types, result, args } => {
                let vals = args.iter().map(|a| self.eval(a)).collect::<RR<Vec<_>>>()?;
                let mut n = 1;
                for v in &vals {
                    n = common_lanes(n, v.lanes())?;
                }
                let lane = |i: usize| {
                    let a: Vec<Scalar> = vals.iter().map(|v| v.lane(i)).collect();
                    semantics::intrinsic(*which, arg_types, *result, &a)
                };
                if vals.iter().all(|v| matches!(v, Val::S(_))) {
                    Val::S(lane(0))
                } else {
                    Val::V((0..n).map(lane).collect())
                }
            }
        })
    }

    fn slot(buf: &BufRef) -> RR<usize> {
        match buf {
            BufRef::Slot(s) => Ok(*s),
            BufRef::Unknown(n) => Err(unknown_buffer(n)),
        }
    }

    fn load(&self, buf: &BufRef, elem: Type, index: Val, pred: Option<Val>) -> RR<Val> {
        let b = &self.bufs[Self::slot(buf)?];
        if b.elem != elem {
            return Err(internal(format!("load of {elem} from buffer '{}' of {}", b.name, b.elem)));
        }
        let bytes = b.bytes()?;
        let len = bytes.len() / elem.bytes();
        let get = |i: usize| -> RR<Scalar> {
            if let Some(p) = &pred {
                if !p.lane(i).is_true() {
                    return Ok(zero_of(elem));
                }
            }
            let at = index.lane(i).as_i64();
            if at < 0 || at as u64 >= len as u64 {
                return Err(runtime(format!(
                    "load from buffer '{}' at index {at} is out of bounds: the buffer has {len} elements",
                    b.name
                )));
            }
            Ok(read_elem(bytes, elem, at as usize))
        };
        let n = common_lanes(index.lanes(), pred.as_ref().map_or(1, Val::lanes))?;
        if matches!(index, Val::S(_)) && n == 1 {
            return Ok(Val::S(get(0)?));
        }
        Ok(Val::V((0..n).map(get).collect::<RR<_>>()?))
    }

    fn store(&mut self, buf: &BufRef, vty: Type, value: Val, index: Val, pred: Option<Val>) -> RR<()> {
        let s = Self::slot(buf)?;
        let b = &mut self.bufs[s];
        if b.elem != vty {
            return Err(internal(format!("store of {vty} to buffer '{}' of {}", b.name, b.elem)));
        }
        let name = b.name.clone();
        let elem = b.elem;
        let bytes = b.bytes_mut()?;
        let len = bytes.len() / elem.bytes();
        let n = common_lanes(common_lanes(index.lanes(), value.lanes())?, pred.as_ref().map_or(1, Val::lanes))?;
        let mut written = 0;
        for i in 0..n {
            if let Some(p) = &pred {
                if !p.lane(i).is_true() {
                    continue;
                }
            }
            let at = index.lane(i).as_i64();
            if at < 0 || at as u64 >= len as u64 {
                self.stores[s] += written;
                return Err(runtime(format!(
                    "store to buffer '{name}' at index {at} is out of bounds: the buffer has {len} elements"
                )));
            }
            write_elem(bytes, elem, at as usize, value.lane(i));
            written += 1;
        }
        self.stores[s] += written;
        Ok(())
    }

    /// Evaluates a statement's expression, on the scalar fast path where it is a scalar.
    fn root(&mut self, r: &Root) -> RR<Val> {
        if r.scalar {
            Ok(Val::S(self.eval_s(&r.e)?))
        } else {
            self.eval(&r.e)
        }
    }

    /// Evaluates a statement's expression that must be a scalar (`what` names it for the
    /// error message).
    fn root_s(&mut self, r: &Root, what: impl FnOnce() -> String) -> RR<Scalar> {
        if r.scalar {
            return self.eval_s(&r.e);
        }
        match self.eval(&r.e)? {
            Val::S(s) => Ok(s),
            Val::V(v) => Err(internal(format!("{} is a vector of {} lanes, expected a scalar", what(), v.len()))),
        }
    }

    /// The scalar fast path: evaluates an expression of scalar type (so every operand is a
    /// scalar too) without building `Val`s. Same semantics as [`Machine::eval`].
    fn eval_s(&mut self, e: &CE) -> RR<Scalar> {
        Ok(match e {
            CE::Const(c) => *c,
            CE::Deep(a) => return stack::guard(|| self.eval_s(a)),
            CE::Var(s) => match &self.vars[*s] {
                Val::S(x) => *x,
                Val::V(v) => {
                    return Err(internal(format!("a vector of {} lanes is used where a scalar is expected", v.len())))
                }
            },
            CE::Unbound(n) => return Err(internal(format!("read of unbound variable '{n}'"))),
            CE::Cast { from, to, a } => semantics::cast(*from, *to, self.eval_s(a)?),
            CE::Bin { op, ty, a, b } => {
                let x = self.eval_s(a)?;
                let y = self.eval_s(b)?;
                semantics::binary(*op, *ty, x, y)
            }
            CE::Cmp { op, ty, a, b } => {
                let x = self.eval_s(a)?;
                let y = self.eval_s(b)?;
                Scalar::Int(semantics::compare(*op, *ty, x, y) as i64)
            }
            CE::Not(a) => semantics::not(self.eval_s(a)?),
            CE::Select(c, t, f) => {
                // Both values are evaluated, as in `eval`.
                let c = self.eval_s(c)?;
                let t = self.eval_s(t)?;
                let f = self.eval_s(f)?;
                if c.is_true() {
                    t
                } else {
                    f
                }
            }
            CE::Load { buf, elem, index, pred } => {
                let at = self.eval_s(index)?.as_i64();
                if let Some(p) = pred {
                    if !self.eval_s(p)?.is_true() {
                        return Ok(zero_of(*elem));
                    }
                }
                self.load_s(buf, *elem, at)?
            }
            CE::Ramp { .. } | CE::Broadcast { .. } => {
                return Err(internal("a vector is used where a scalar is expected"))
            }
            CE::Let { slot, value, value_scalar, body } => {
                let v = if *value_scalar { Val::S(self.eval_s(value)?) } else { self.eval(value)? };
                self.vars[*slot] = v;
                self.eval_s(body)?
            }
            CE::Intrinsic { which, arg_types, result, args } => {
                let mut a = Vec::with_capacity(args.len());
                for x in args {
                    a.push(self.eval_s(x)?);
                }
                semantics::intrinsic(*which, arg_types, *result, &a)
            }
        })
    }

    fn load_s(&self, buf: &BufRef, elem: Type, at: i64) -> RR<Scalar> {
        let b = &self.bufs[Self::slot(buf)?];
        if b.elem != elem {
            return Err(internal(format!("load of {elem} from buffer '{}' of {}", b.name, b.elem)));
        }
        let bytes = b.bytes()?;
        let len = bytes.len() / elem.bytes();
        if at < 0 || at as u64 >= len as u64 {
            return Err(runtime(format!(
                "load from buffer '{}' at index {at} is out of bounds: the buffer has {len} elements",
                b.name
            )));
        }
        Ok(read_elem(bytes, elem, at as usize))
    }

    fn store_s(&mut self, buf: &BufRef, vty: Type, value: Scalar, at: i64) -> RR<()> {
        let s = Self::slot(buf)?;
        let b = &mut self.bufs[s];
        if b.elem != vty {
            return Err(internal(format!("store of {vty} to buffer '{}' of {}", b.name, b.elem)));
        }
        let elem = b.elem;
        let bytes = b.bytes_mut()?;
        let len = bytes.len() / elem.bytes();
        if at < 0 || at as u64 >= len as u64 {
            return Err(runtime(format!(
                "store to buffer '{}' at index {at} is out of bounds: the buffer has {len} elements",
                b.name
            )));
        }
        write_elem(bytes, elem, at as usize, value);
        self.stores[s] += 1;
        Ok(())
    }

    /// That the box of `extents` × `strides` from `index` lies within buffer `slot`.
    fn check_box(&self, slot: usize, index: i64, extents: &[i64], strides: &[i64]) -> RR<()> {
        let b = &self.bufs[slot];
        let len = (b.bytes()?.len() / b.elem.bytes()) as i64;
        if extents.iter().any(|&e| e <= 0) {
            return Ok(());
        }
        let (mut lo, mut hi) = (index, index);
        for (&e, &s) in extents.iter().zip(strides) {
            let reach = (e - 1).saturating_mul(s);
            if reach < 0 {
                lo = lo.saturating_add(reach);
            } else {
                hi = hi.saturating_add(reach);
            }
        }
        if lo < 0 || hi >= len {
            return Err(runtime(format!(
                "border exchange of buffer '{}' reaches elements [{lo}, {hi}], outside its {len} elements",
                b.name
            )));
        }
        Ok(())
    }

    /// Sends and receives the boxes of the border exchange under way.
    fn finish_exchange(&mut self) -> RR<()> {
        // Every rank completes every exchange, with messages or without (the transports
        // number them); without a communicator there are no other ranks.
        let Some(comm) = self.communicator.clone() else {
            if self.exchange.is_empty() {
                return Ok(());
            }
            return Err(runtime(
                "the pipeline exchanges borders between ranks, but it runs without a communicator \
                 (Args::communicator)"
                    .into(),
            ));
        };
        self.exchange.finish(&*comm).map_err(Box::new)?;
        Ok(())
    }

    fn exec(&mut self, s: &CS) -> RR<()> {
        match s {
            CS::Let { slot, value, body } => {
                let v = self.root(value)?;
                self.vars[*slot] = v;
                self.exec(body)
            }
            CS::Assert { cond, msg } => {
                let ok = match self.root(cond)? {
                    Val::S(c) => c.is_true(),
                    Val::V(v) => v.iter().all(|c| c.is_true()),
                };
                if ok {
                    return Ok(());
                }
                let mut text = String::new();
                for m in msg {
                    match m {
                        CMsg::Text(t) => text.push_str(t),
                        CMsg::Value(e, ty) => match self.root(e)? {
                            Val::S(v) => text.push_str(&format_value(v, *ty)),
                            Val::V(v) => {
                                let parts: Vec<String> = v.iter().map(|x| format_value(*x, *ty)).collect();
                                text.push_str(&format!("<{}>", parts.join(", ")))
                            }
                        },
                    }
                }
                Err(runtime(text))
            }
            CS::For { slot, name, min, extent, body } => {
                let min = self.root_s(min, || format!("the min of loop '{name}'"))?;
                let extent = self.root_s(extent, || format!("the extent of loop '{name}'"))?;
                let (Scalar::Int(min), Scalar::Int(extent)) = (min, extent) else {
                    return Err(internal(format!("loop '{name}' has float bounds")));
                };
                for i in min..min.saturating_add(extent.max(0)) {
                    self.vars[*slot] = Val::S(Scalar::Int(i));
                    self.exec(body)?;
                }
                Ok(())
            }
            CS::Store { buf, vty, value, index, pred } => {
                if value.scalar && index.scalar && pred.as_ref().is_none_or(|p| p.scalar) {
                    let v = self.eval_s(&value.e)?;
                    let at = self.eval_s(&index.e)?.as_i64();
                    if let Some(p) = pred {
                        if !self.eval_s(&p.e)?.is_true() {
                            return Ok(());
                        }
                    }
                    return self.store_s(buf, *vty, v, at);
                }
                let value = self.root(value)?;
                let index = self.root(index)?;
                let pred = match pred {
                    Some(p) => Some(self.root(p)?),
                    None => None,
                };
                self.store(buf, *vty, value, index, pred)
            }
            CS::Allocate { buf, extents, body } => {
                let name = self.bufs[*buf].name.clone();
                let elem = self.bufs[*buf].elem;
                let mut size: u64 = 1;
                for (d, e) in extents.iter().enumerate() {
                    let x = self.root_s(e, || format!("extent {d} of allocation '{name}'"))?.as_i64();
                    if x < 0 {
                        return Err(runtime(format!("allocation of '{name}': extent {d} is negative ({x})")));
                    }
                    size = size.saturating_mul(x as u64);
                }
                if size > MAX_ALLOCATION_ELEMENTS {
                    return Err(runtime(format!(
                        "allocation of '{name}' asks for {size} elements, more than the limit of {MAX_ALLOCATION_ELEMENTS}"
                    )));
                }
                let nbytes = size as usize * elem.bytes();
                let mut data = Vec::new();
                data.try_reserve_exact(nbytes).map_err(|_| {
                    runtime(format!("allocation of '{name}': out of memory for {size} elements of {elem}"))
                })?;
                data.resize(nbytes, 0u8);
                self.bufs[*buf].data = Storage::Owned(data);
                let prev = self.allocs[*buf].unwrap_or(0);
                self.allocs[*buf] = Some(prev.max(size));
                let r = self.exec(body);
                self.bufs[*buf].data = Storage::Unallocated;
                r
            }
            CS::Free(buf) => {
                let s = Self::slot(buf)?;
                match self.bufs[s].data {
                    Storage::Owned(_) => {
                        self.bufs[s].data = Storage::Freed;
                        Ok(())
                    }
                    Storage::Freed => Err(internal(format!("buffer '{}' freed twice", self.bufs[s].name))),
                    _ => Err(internal(format!("Free of buffer '{}', which no Allocate owns here", self.bufs[s].name))),
                }
            }
            CS::Block(v) => {
                for s in v {
                    self.exec(s)?;
                }
                Ok(())
            }
            CS::If { cond, then_case, else_case } => {
                if self.root_s(cond, || "an if condition".to_string())?.is_true() {
                    self.exec(then_case)
                } else if let Some(e) = else_case {
                    self.exec(e)
                } else {
                    Ok(())
                }
            }
            CS::Transfer { op, peer, buf, index, extents, strides } => {
                let peer = self.root_s(peer, || "the peer of a border exchange".into())?.as_i64() as i32;
                let index = self.root_s(index, || "the box of a border exchange".into())?.as_i64();
                let mut ext = Vec::with_capacity(extents.len());
                for e in extents {
                    ext.push(self.root_s(e, || "the box of a border exchange".into())?.as_i64());
                }
                let mut str = Vec::with_capacity(strides.len());
                for e in strides {
                    str.push(self.root_s(e, || "the box of a border exchange".into())?.as_i64());
                }
                let slot = Self::slot(buf)?;
                self.check_box(slot, index, &ext, &str)?;
                let elem = self.bufs[slot].elem;
                let region = |base: *mut u8| StridedRegion {
                    base: base.wrapping_add(index as usize * elem.bytes()),
                    elem_bytes: elem.bytes(),
                    extents: ext.clone(),
                    strides: str.clone(),
                };
                // SAFETY (all three): check_box proved every element of the box lies in the
                // buffer, and storage does not move or shrink while it is live, so the
                // receives' regions stay valid until the wait that completes them.
                match op {
                    TransferOp::Send => {
                        // Only read through: the send is packed now.
                        let base = self.bufs[slot].bytes()?.as_ptr() as *mut u8;
                        unsafe { self.exchange.post_send(peer, &region(base)) };
                    }
                    TransferOp::Receive | TransferOp::Combine(_) => {
                        let r = region(self.bufs[slot].bytes_mut()?.as_mut_ptr());
                        self.stores[slot] += (r.bytes() / elem.bytes()) as u64;
                        match op {
                            TransferOp::Combine(op) => {
                                let combiner = Combiner { op: *op, signed: elem.is_int() };
                                unsafe { self.exchange.post_combine(peer, r, combiner) };
                            }
                            _ => unsafe { self.exchange.post_receive(peer, r) },
                        }
                    }
                }
                Ok(())
            }
            CS::TransferWait => self.finish_exchange(),
            CS::Eval(e) => self.root(e).map(|_| ()),
            CS::Deep(s) => stack::guard(|| self.exec(s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ForKind;

    fn i32s(bytes: &[u8]) -> Vec<i32> {
        bytes.chunks(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect()
    }
    fn bytes_of(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }
    fn var(n: &str) -> Expr {
        Expr::var(Type::i32(), n)
    }
    fn store(buf: &str, value: Expr, index: Expr) -> Stmt {
        Stmt::Store { buffer: buf.into(), value, index, predicate: None }
    }
    fn for_(n: &str, min: i64, extent: i64, kind: ForKind, body: Stmt) -> Stmt {
        Stmt::for_loop(n, Expr::i32(min), Expr::i32(extent), kind, body)
    }

    #[test]
    fn loop_stores_x_times_two() {
        let s = for_("x", 0, 8, ForKind::Parallel, store("out", Expr::mul(var("x"), Expr::i32(2)), var("x")));
        let mut out = vec![0u8; 32];
        let mut it = Interpreter::new();
        it.bind_buffer_mut("out", Type::i32(), &mut out);
        it.run(&s).unwrap();
        assert_eq!(it.store_count("out"), 8);
        assert_eq!(it.store_count("other"), 0);
        drop(it);
        assert_eq!(i32s(&out), vec![0, 2, 4, 6, 8, 10, 12, 14]);
    }

    #[test]
    fn vector_loop_with_ramp_loads() {
        // for xo in [0, 2): out[ramp(xo*4, 1, 4)] = in[ramp(xo*4, 1, 4)] + in[ramp(xo*4+1, 1, 4)]
        let base = Expr::mul(var("xo"), Expr::i32(4));
        let ramp = |b: Expr| Expr::ramp(b, Expr::i32(1), 4);
        let load = |idx: Expr| Expr::load(Type::i32(), "in", idx, None);
        let value = Expr::add(load(ramp(base.clone())), load(ramp(Expr::add(base.clone(), Expr::i32(1)))));
        let s = for_("xo", 0, 2, ForKind::Serial, store("out", value, ramp(base)));
        let input = bytes_of(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let mut out = vec![0u8; 32];
        let mut it = Interpreter::new();
        it.bind_buffer("in", Type::i32(), &input);
        it.bind_buffer_mut("out", Type::i32(), &mut out);
        it.run(&s).unwrap();
        assert_eq!(it.store_count("out"), 8);
        drop(it);
        assert_eq!(i32s(&out), vec![3, 5, 7, 9, 11, 13, 15, 17]);
    }

    #[test]
    fn out_of_bounds_store_is_an_error() {
        let s = for_("x", 0, 5, ForKind::Serial, store("out", var("x"), var("x")));
        let mut out = vec![0u8; 16];
        let mut it = Interpreter::new();
        it.bind_buffer_mut("out", Type::i32(), &mut out);
        let e = it.run(&s).unwrap_err();
        assert!(matches!(e, Error::Runtime(_)), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("'out'") && msg.contains("index 4") && msg.contains("4 elements"), "{msg}");
        assert_eq!(it.store_count("out"), 4);
        // negative index on a load
        let s = store("out", Expr::load(Type::i32(), "out", Expr::i32(-1), None), Expr::i32(0));
        let msg = it.run(&s).unwrap_err().to_string();
        assert!(msg.contains("index -1"), "{msg}");
    }

    #[test]
    fn failed_assert_message() {
        let n = var("n");
        let s = Stmt::Assert {
            condition: Expr::le(n.clone(), Expr::i32(10)),
            message: vec![
                MsgPart::Text("input is too small: needs ".into()),
                MsgPart::Value(n.clone()),
                MsgPart::Text(" rows, has ".into()),
                MsgPart::Value(Expr::i32(10)),
            ],
        };
        let mut it = Interpreter::new();
        it.bind_scalar("n", Expr::i32(12));
        assert_eq!(it.run(&s).unwrap_err(), Error::Runtime("input is too small: needs 12 rows, has 10".into()));
        it.bind_scalar("n", Expr::i32(3));
        it.run(&s).unwrap();
    }

    #[test]
    fn allocation_is_scoped_and_measured() {
        // allocate tmp[w]; for x: tmp[x] = x + 1; for x: out[x] = tmp[x] * tmp[x]
        let w = var("w");
        let fill = for_("x", 0, 4, ForKind::Serial, store("tmp", Expr::add(var("x"), Expr::i32(1)), var("x")));
        let t = Expr::load(Type::i32(), "tmp", var("x"), None);
        let use_ = for_("x", 0, 4, ForKind::Serial, store("out", Expr::mul(t.clone(), t), var("x")));
        let alloc = Stmt::Allocate {
            name: "tmp".into(),
            ty: Type::i32(),
            extents: vec![w, Expr::i32(1)],
            body: Box::new(Stmt::block(vec![fill, use_, Stmt::Free { name: "tmp".into() }])),
        };
        let s = for_("rep", 0, 3, ForKind::Serial, alloc);
        let mut out = vec![0u8; 16];
        let mut it = Interpreter::new();
        it.bind_scalar("w", Expr::i32(4));
        it.bind_buffer_mut("out", Type::i32(), &mut out);
        it.run(&s).unwrap();
        assert_eq!(it.allocation_sizes(), vec![("tmp".into(), 4)]);
        assert_eq!(it.store_count("tmp"), 12);
        // a negative size is an error naming the buffer
        it.bind_scalar("w", Expr::i32(-2));
        let msg = it.run(&s).unwrap_err().to_string();
        assert!(msg.contains("'tmp'") && msg.contains("-2"), "{msg}");
        // an absurd one too
        it.bind_scalar("w", Expr::i32(1 << 30));
        let alloc = Stmt::Allocate {
            name: "big".into(),
            ty: Type::u8(),
            extents: vec![var("w"), Expr::i32(8)],
            body: Box::new(Stmt::no_op()),
        };
        let msg = it.run(&alloc).unwrap_err().to_string();
        assert!(msg.contains("'big'") && msg.contains("8589934592"), "{msg}");
        drop(it);
        assert_eq!(i32s(&out), vec![1, 4, 9, 16]);
    }

    #[test]
    fn use_outside_allocation_or_after_free_is_internal() {
        let body = Stmt::block(vec![Stmt::Free { name: "t".into() }, store("t", Expr::i32(1), Expr::i32(0))]);
        let s = Stmt::Allocate { name: "t".into(), ty: Type::i32(), extents: vec![Expr::i32(2)], body: Box::new(body) };
        let e = Interpreter::new().run(&s).unwrap_err();
        assert!(matches!(e, Error::Internal { .. }) && e.to_string().contains("after Free"), "{e}");
        let e = Interpreter::new().run(&store("nowhere", Expr::i32(1), Expr::i32(0))).unwrap_err();
        assert!(matches!(e, Error::Internal { .. }) && e.to_string().contains("'nowhere'"), "{e}");
    }

    #[test]
    fn predicated_store_and_load() {
        // out[ramp(0,1,4)] = in[ramp(0,1,4)] if ramp < 2, with in only 2 long: masked lanes
        // neither read nor write.
        let idx = Expr::ramp(Expr::i32(0), Expr::i32(1), 4);
        let pred = Expr::lt(idx.clone(), Expr::broadcast(Expr::i32(2), 4));
        let value = Expr::add(
            Expr::load(Type::i32(), "in", idx.clone(), Some(pred.clone())),
            Expr::broadcast(Expr::i32(100), 4),
        );
        let s = Stmt::Store { buffer: "out".into(), value, index: idx, predicate: Some(pred) };
        let input = bytes_of(&[5, 6]);
        let mut out = bytes_of(&[-1, -1, -1, -1]);
        let mut it = Interpreter::new();
        it.bind_buffer("in", Type::i32(), &input);
        it.bind_buffer_mut("out", Type::i32(), &mut out);
        it.run(&s).unwrap();
        assert_eq!(it.store_count("out"), 2);
        drop(it);
        assert_eq!(i32s(&out), vec![105, 106, -1, -1]);
    }

    #[test]
    fn unbound_and_unlowered_are_internal_errors() {
        let s = store("out", var("nope"), Expr::i32(0));
        let mut out = vec![0u8; 4];
        let mut it = Interpreter::new();
        it.bind_buffer_mut("out", Type::i32(), &mut out);
        let e = it.run(&s).unwrap_err();
        assert!(matches!(e, Error::Internal { .. }) && e.to_string().contains("'nope'"), "{e}");
        // an unbound name in a branch that does not run is fine
        let dead = Stmt::if_then(Expr::bool_imm(false), s);
        it.run(&dead).unwrap();
        let p = Stmt::Provide { name: "f".into(), values: vec![Expr::i32(1)], args: vec![Expr::i32(0)] };
        let e = it.run(&p).unwrap_err();
        assert!(matches!(e, Error::Internal { .. }) && e.to_string().contains("Provide"), "{e}");
        // storing to a read-only buffer
        let input = vec![0u8; 4];
        let mut it = Interpreter::new();
        it.bind_buffer("in", Type::i32(), &input);
        assert!(it.run(&store("in", Expr::i32(1), Expr::i32(0))).is_err());
    }

    #[test]
    fn types_in_buffers() {
        // out_u8[x] = u8(in_f32[x] * 2); flags[x] = in_f32[x] > 1; lets, selects, casts.
        let x = var("x");
        let v = Expr::load(Type::f32(), "in", x.clone(), None);
        let two = Expr::float_imm(Type::f32(), 2.0);
        let s = for_(
            "x",
            0,
            3,
            ForKind::Unrolled,
            Stmt::block(vec![
                Stmt::let_stmt(
                    "t",
                    Expr::mul(v.clone(), two),
                    store("o", Expr::cast(Type::u8(), Expr::var(Type::f32(), "t")), x.clone()),
                ),
                store("flags", Expr::cmp(CmpOp::Gt, v.clone(), Expr::float_imm(Type::f32(), 1.0)), x.clone()),
                store(
                    "neg",
                    Expr::select(
                        Expr::lt(x.clone(), Expr::i32(1)),
                        Expr::int_imm(Type::i16(), -5),
                        Expr::int_imm(Type::i16(), 7),
                    ),
                    x.clone(),
                ),
            ]),
        );
        let input: Vec<u8> = [0.75f32, 200.0, -3.0].iter().flat_map(|f| f.to_ne_bytes()).collect();
        let (mut o, mut flags, mut neg) = (vec![0u8; 3], vec![9u8; 3], vec![0u8; 6]);
        let mut it = Interpreter::new();
        it.bind_buffer("in", Type::f32(), &input);
        it.bind_buffer_mut("o", Type::u8(), &mut o);
        it.bind_buffer_mut("flags", Type::bool(), &mut flags);
        it.bind_buffer_mut("neg", Type::i16(), &mut neg);
        it.run(&s).unwrap();
        drop(it);
        assert_eq!(o, vec![1, 255, 0]); // saturating float -> u8
        assert_eq!(flags, vec![0, 1, 0]);
        assert_eq!(
            neg.chunks(2).map(|c| i16::from_ne_bytes(c.try_into().unwrap())).collect::<Vec<_>>(),
            vec![-5, 7, 7]
        );
    }

    #[test]
    fn eval_vectors_and_intrinsics() {
        let mut it = Interpreter::new();
        let r = Expr::ramp(Expr::i32(-3), Expr::i32(2), 4); // -3 -1 1 3
        let d = Expr::div(r.clone(), Expr::broadcast(Expr::i32(2), 4));
        assert_eq!(it.eval(&d).unwrap(), [-2, -1, 0, 1].map(Scalar::Int).to_vec());
        let a = Expr::intrinsic(Type::u32().with_lanes(4), Intrinsic::Abs, vec![r.clone()]);
        assert_eq!(it.eval(&a).unwrap(), [3, 1, 1, 3].map(Scalar::Int).to_vec());
        let l = Expr::let_in("v", r.clone(), Expr::mul(Expr::var(r.ty(), "v"), Expr::var(r.ty(), "v")));
        assert_eq!(it.eval(&l).unwrap(), [9, 1, 1, 9].map(Scalar::Int).to_vec());
        // mismatched lane counts (ill-typed IR) are an internal error, not a panic
        let (r4, r8) = (Expr::ramp(Expr::i32(0), Expr::i32(1), 4), Expr::ramp(Expr::i32(0), Expr::i32(1), 8));
        let bad = Expr::make(r4.ty(), ExprKind::Binary(BinOp::Add, r4, r8));
        assert!(matches!(it.eval(&bad), Err(Error::Internal { .. })));
    }
}
