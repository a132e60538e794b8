//! Expressions: an immutable, reference-counted DAG of typed nodes.
//!
//! The same [`Expr`] serves the user (through operator overloading in `lang`) and the
//! compiler. Nodes are shared through `Arc`, so substitution and rewriting rebuild only the
//! spine they change and a DAG never blows up into a tree; equality is structural with a
//! pointer-equality fast path, and hashing is structural. Each node keeps the structural
//! hash of its subtree, computed once when it is built from its children's: hashing is
//! then constant time, and two different trees nearly always differ at the first compared
//! node, so equality tests cost little on a large shared DAG (where a plain recursive
//! comparison revisits every shared subtree along every path). This keeps the properties the
//! design asks of a hash-consed arena (cheap sharing, no exponential blow-up) with one
//! representation instead of two; `analysis::cse` recovers sharing explicitly where the
//! generated code needs it.

use super::stack;
use super::types::Type;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A name in the IR: variables, buffers, Funcs, loops.
pub type Name = Arc<str>;

/// A typed expression node handle. Cheap to clone.
#[derive(Clone)]
pub struct Expr(pub(crate) Arc<ExprNode>);

/// One expression node: its type and its kind.
#[derive(Clone, Debug)]
pub struct ExprNode {
    /// The type of the value (with lanes for vectors).
    pub ty: Type,
    /// What the node computes.
    pub kind: ExprKind,
    /// Structural hash of the subtree (see the module docs).
    hash: u64,
}

impl PartialEq for ExprNode {
    fn eq(&self, o: &Self) -> bool {
        self.hash == o.hash && self.ty == o.ty && self.kind == o.kind
    }
}
impl Eq for ExprNode {}

/// The hasher of node hashes: a multiply-rotate mix in the style of rustc's FxHasher. It
/// sees a node's type, tag, names and constants, and its children's hashes (one word each).
/// Also the hasher of the compiler's tables keyed by node identity ([`PtrMap`]).
#[derive(Default, Clone, Copy)]
pub struct NodeHasher(u64);

/// A hash map keyed by small integers or node addresses, with the fast [`NodeHasher`].
pub type PtrMap<K, V> = std::collections::HashMap<K, V, std::hash::BuildHasherDefault<NodeHasher>>;

impl Hasher for NodeHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64)
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64)
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64)
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64)
    }
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits depending only on low input bits (all zero in an
        // aligned address); the rotation brings mixed high bits down to where tables look.
        self.0.rotate_left(26)
    }
}

/// A float constant stored by its bits, so that expressions can be hashed and compared.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct FloatBits(pub u64);

impl FloatBits {
    /// The value.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

/// Two-operand arithmetic, bitwise and logical operators (operands of equal type).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Floor division for integers (Euclidean; x / 0 == 0), IEEE division for floats.
    Div,
    /// Euclidean remainder for integers (never negative; x % 0 == 0), floor-based for floats.
    Mod,
    Min,
    Max,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    /// Logical and of bools.
    And,
    /// Logical or of bools.
    Or,
}

/// Comparisons; the result is bool with the operands' lanes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Math functions and other built-ins called by name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Intrinsic {
    Abs,
    Sqrt,
    Exp,
    Log,
    Pow,
    Floor,
    Ceil,
    /// Round half to even.
    Round,
    Trunc,
    Sin,
    Cos,
    Tan,
    Atan2,
    /// Arctangent.
    Atan,
    /// Hyperbolic tangent.
    Tanh,
    /// A cheaper, less accurate `exp` (see [`crate::ir::float_math`]).
    FastExp,
    /// A cheaper, less accurate `log` for positive arguments.
    FastLog,
    /// A cheaper, less accurate `pow` for positive bases.
    FastPow,
    /// Reinterpret bits as another type of the same width.
    Reinterpret,
    /// Bitwise not of an integer.
    BitNot,
}

impl Intrinsic {
    /// Every intrinsic.
    pub const ALL: [Intrinsic; 20] = [
        Intrinsic::Abs,
        Intrinsic::Sqrt,
        Intrinsic::Exp,
        Intrinsic::Log,
        Intrinsic::Pow,
        Intrinsic::Floor,
        Intrinsic::Ceil,
        Intrinsic::Round,
        Intrinsic::Trunc,
        Intrinsic::Sin,
        Intrinsic::Cos,
        Intrinsic::Tan,
        Intrinsic::Atan2,
        Intrinsic::Atan,
        Intrinsic::Tanh,
        Intrinsic::FastExp,
        Intrinsic::FastLog,
        Intrinsic::FastPow,
        Intrinsic::Reinterpret,
        Intrinsic::BitNot,
    ];

    /// The name a call of it has in the IR and its text (`sqrt`, `fast_exp`).
    ///
    /// ```
    /// use halogen::ir::Intrinsic;
    /// assert_eq!(Intrinsic::Atan2.name(), "atan2");
    /// assert_eq!(Intrinsic::FastExp.name(), "fast_exp");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Intrinsic::Abs => "abs",
            Intrinsic::Sqrt => "sqrt",
            Intrinsic::Exp => "exp",
            Intrinsic::Log => "log",
            Intrinsic::Pow => "pow",
            Intrinsic::Floor => "floor",
            Intrinsic::Ceil => "ceil",
            Intrinsic::Round => "round",
            Intrinsic::Trunc => "trunc",
            Intrinsic::Sin => "sin",
            Intrinsic::Cos => "cos",
            Intrinsic::Tan => "tan",
            Intrinsic::Atan2 => "atan2",
            Intrinsic::Atan => "atan",
            Intrinsic::Tanh => "tanh",
            Intrinsic::FastExp => "fast_exp",
            Intrinsic::FastLog => "fast_log",
            Intrinsic::FastPow => "fast_pow",
            Intrinsic::Reinterpret => "reinterpret",
            Intrinsic::BitNot => "bitnot",
        }
    }
}

/// Identifies a Func in the calls of the user's definitions, so that the front end can go
/// from a call to the Func's definitions without the IR holding the Func itself. Lowering
/// refers to Funcs by name (the call's `name`), unique in a pipeline.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::ir::{CallKind, ExprKind};
/// let (f, g) = (Func::new("f"), Func::new("g"));
/// let x = Var::new("x");
/// f.def(x, x + 1);
/// g.def(x, x * 2);
/// let id = |e: &Expr| match e.kind() {
///     ExprKind::Call { kind: CallKind::Func { func, .. }, .. } => *func,
///     _ => unreachable!(),
/// };
/// assert_eq!(id(&f.at(x)), id(&f.at(x + 1)));
/// assert_ne!(id(&f.at(x)), id(&g.at(x)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct FuncId(pub u32);

/// What a call refers to.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum CallKind {
    /// A value of a Func (before lowering turns it into a load): `value_index` picks the
    /// value of a Func with several (`tuple`), which prints as `f.1(x)`.
    Func { func: FuncId, value_index: usize, tuple: bool },
    /// A pixel of an input image (an `ImageParam`), by the image's name.
    Image,
    /// A built-in function.
    Intrinsic(Intrinsic),
}

/// One dimension of a reduction domain.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ReductionVariable {
    /// The variable's unique name.
    pub name: Name,
    /// First value.
    pub min: Expr,
    /// Number of values.
    pub extent: Expr,
}

/// A reduction domain: the dimensions an update definition iterates over, innermost first.
#[derive(PartialEq, Eq, Hash, Debug)]
pub struct ReductionDomain {
    /// Dimensions, innermost first.
    pub vars: Vec<ReductionVariable>,
}

/// Shared handle to a reduction domain (compared by identity).
#[derive(Clone, Debug)]
pub struct ReductionRef(pub Arc<ReductionDomain>);

impl PartialEq for ReductionRef {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}
impl Eq for ReductionRef {}
impl Hash for ReductionRef {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(h)
    }
}

/// What a variable refers to.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum VarBinding {
    /// A pure variable, loop variable or let-bound name.
    Plain,
    /// A variable of this reduction domain.
    Reduction(ReductionRef),
    /// A scalar given when the pipeline runs: a `Param`, or a buffer's min, extent or stride.
    Param,
}

/// The kinds of expression nodes.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum ExprKind {
    /// Integer or bool constant (the node's type says which; unsigned values are stored
    /// by their bits).
    IntImm(i64),
    /// Float constant.
    FloatImm(FloatBits),
    /// A named scalar: a pure or loop variable, a let-bound name, a reduction variable or
    /// a parameter bound when the pipeline runs.
    Var { name: Name, binding: VarBinding },
    /// Conversion to the node's type.
    Cast(Expr),
    /// Arithmetic, bitwise or logical operator.
    Binary(BinOp, Expr, Expr),
    /// Comparison.
    Cmp(CmpOp, Expr, Expr),
    /// Logical not.
    Not(Expr),
    /// `condition ? true_value : false_value`, lane-wise for vectors.
    Select(Expr, Expr, Expr),
    /// Load of `buffer[index]` from flat storage, lanes of `index` wide; masked lanes of
    /// `predicate` read nothing and give zero.
    Load { buffer: Name, index: Expr, predicate: Option<Expr> },
    /// `base, base + stride, ...` (`lanes` values).
    Ramp { base: Expr, stride: Expr, lanes: u16 },
    /// A scalar repeated over `lanes` lanes.
    Broadcast { value: Expr, lanes: u16 },
    /// `let name = value in body`.
    Let { name: Name, value: Expr, body: Expr },
    /// A call to a Func, an image or an intrinsic.
    Call { name: Name, args: Vec<Expr>, kind: CallKind },
}

// Comparing equal trees recurses once per level: the guard keeps a deep one from
// overflowing the stack. Hashing reads the stored hash.
impl PartialEq for Expr {
    fn eq(&self, o: &Self) -> bool {
        Arc::ptr_eq(&self.0, &o.0) || (self.0.hash == o.0.hash && stack::guard(|| *self.0 == *o.0))
    }
}
impl Eq for Expr {}
impl Hash for Expr {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.0.hash)
    }
}

/// Dropping the last handle to a deep tree would recurse once per level (each node's drop
/// drops its children). The nodes that this drop frees are taken apart with a list instead.
impl Drop for ExprNode {
    fn drop(&mut self) {
        // The common case, freeing no child that has children of its own, stays shallow.
        let mut deep = false;
        self.kind.for_each_child_expr(|c| deep |= Arc::strong_count(&c.0) == 1 && c.0.kind.has_children());
        if !deep {
            return;
        }
        let mut pending = Vec::new();
        std::mem::replace(&mut self.kind, ExprKind::IntImm(0)).into_children(&mut pending);
        while let Some(mut e) = pending.pop() {
            if let Some(node) = Arc::get_mut(&mut e.0) {
                std::mem::replace(&mut node.kind, ExprKind::IntImm(0)).into_children(&mut pending);
            }
            // `e` now frees at most a leaf, or only drops a reference.
        }
    }
}

impl ExprKind {
    /// Calls `f` on each direct child.
    fn for_each_child_expr(&self, mut f: impl FnMut(&Expr)) {
        match self {
            ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. } => {}
            ExprKind::Cast(a) | ExprKind::Not(a) | ExprKind::Broadcast { value: a, .. } => f(a),
            ExprKind::Binary(_, a, b)
            | ExprKind::Cmp(_, a, b)
            | ExprKind::Ramp { base: a, stride: b, .. }
            | ExprKind::Let { value: a, body: b, .. } => {
                f(a);
                f(b)
            }
            ExprKind::Select(c, t, e) => {
                f(c);
                f(t);
                f(e)
            }
            ExprKind::Load { index, predicate, .. } => {
                f(index);
                if let Some(p) = predicate {
                    f(p)
                }
            }
            ExprKind::Call { args, .. } => args.iter().for_each(f),
        }
    }

    /// True unless a leaf.
    fn has_children(&self) -> bool {
        !matches!(self, ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. })
    }

    /// Moves the direct children onto `out`.
    fn into_children(self, out: &mut Vec<Expr>) {
        match self {
            ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. } => {}
            ExprKind::Cast(a) | ExprKind::Not(a) | ExprKind::Broadcast { value: a, .. } => out.push(a),
            ExprKind::Binary(_, a, b)
            | ExprKind::Cmp(_, a, b)
            | ExprKind::Ramp { base: a, stride: b, .. }
            | ExprKind::Let { value: a, body: b, .. } => out.extend([a, b]),
            ExprKind::Select(c, t, e) => out.extend([c, t, e]),
            ExprKind::Load { index, predicate, .. } => out.extend(std::iter::once(index).chain(predicate)),
            ExprKind::Call { args, .. } => out.extend(args),
        }
    }
}

impl std::fmt::Debug for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self)
    }
}

// The constructors named `add`, `sub`, `not`... take two operands of one type and do no
// coercion: they are the compiler's own. Users get `+`, `-`, `!` with Halide's coercion
// rules from the operator traits in `lang::expr_ops`.
#[allow(clippy::should_implement_trait)]
impl Expr {
    /// Build a node from its type and kind.
    pub fn make(ty: Type, kind: ExprKind) -> Expr {
        let mut h = NodeHasher::default();
        ty.hash(&mut h);
        kind.hash(&mut h);
        Expr(Arc::new(ExprNode { ty, kind, hash: h.finish() }))
    }
    /// The node's type.
    pub fn ty(&self) -> Type {
        self.0.ty
    }
    /// The node's kind.
    pub fn kind(&self) -> &ExprKind {
        &self.0.kind
    }
    /// Identity of the node (for memo tables).
    pub fn ptr(&self) -> *const ExprNode {
        Arc::as_ptr(&self.0)
    }
    /// True if both handles point to the same node.
    pub fn same_as(&self, o: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }

    // ----- constructors that do no type coercion (the compiler's own) -----

    /// Integer (or bool) constant of type `ty`, wrapped to its width.
    pub fn int_imm(ty: Type, v: i64) -> Expr {
        debug_assert!(ty.is_int_or_uint() || ty.is_bool());
        Expr::make(ty.element(), ExprKind::IntImm(ty.wrap_int(v)))
    }
    /// 32-bit signed constant.
    pub fn i32(v: i64) -> Expr {
        Expr::int_imm(Type::i32(), v)
    }
    /// Bool constant.
    pub fn bool_imm(v: bool) -> Expr {
        Expr::int_imm(Type::bool(), v as i64)
    }
    /// Float constant of type `ty` (rounded to f32 where `ty` is f32).
    pub fn float_imm(ty: Type, v: f64) -> Expr {
        debug_assert!(ty.is_float());
        let v = if ty.bits == 32 { v as f32 as f64 } else { v };
        Expr::make(ty.element(), ExprKind::FloatImm(FloatBits(v.to_bits())))
    }
    /// A constant of any scalar type with the value `v` (converted as a cast would).
    pub fn const_of(ty: Type, v: i64) -> Expr {
        let e = if ty.element().is_float() {
            Expr::float_imm(ty.element(), v as f64)
        } else {
            Expr::int_imm(ty.element(), v)
        };
        if ty.is_vector() {
            Expr::broadcast(e, ty.lanes)
        } else {
            e
        }
    }
    /// A plain variable of type `ty`.
    pub fn var(ty: Type, name: impl Into<Name>) -> Expr {
        Expr::make(ty, ExprKind::Var { name: name.into(), binding: VarBinding::Plain })
    }
    /// Conversion to `ty` (no node if the type already matches).
    pub fn cast(ty: Type, e: Expr) -> Expr {
        if e.ty() == ty {
            return e;
        }
        Expr::make(ty, ExprKind::Cast(e))
    }
    /// Binary operator on operands of equal type.
    pub fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        debug_assert_eq!(a.ty(), b.ty(), "operand types of {op:?} differ: {a} vs {b}");
        Expr::make(a.ty(), ExprKind::Binary(op, a, b))
    }
    /// Comparison of operands of equal type.
    pub fn cmp(op: CmpOp, a: Expr, b: Expr) -> Expr {
        debug_assert_eq!(a.ty(), b.ty(), "operand types of {op:?} differ: {a} vs {b}");
        let t = Type::bool().with_lanes(a.ty().lanes);
        Expr::make(t, ExprKind::Cmp(op, a, b))
    }
    /// Logical not.
    pub fn not(a: Expr) -> Expr {
        Expr::make(a.ty(), ExprKind::Not(a))
    }
    /// Select.
    pub fn select(c: Expr, t: Expr, f: Expr) -> Expr {
        debug_assert_eq!(t.ty(), f.ty());
        Expr::make(t.ty(), ExprKind::Select(c, t, f))
    }
    /// Ramp of `lanes` values.
    pub fn ramp(base: Expr, stride: Expr, lanes: u16) -> Expr {
        Expr::make(base.ty().with_lanes(lanes), ExprKind::Ramp { base, stride, lanes })
    }
    /// Broadcast of a scalar.
    pub fn broadcast(value: Expr, lanes: u16) -> Expr {
        Expr::make(value.ty().with_lanes(lanes), ExprKind::Broadcast { value, lanes })
    }
    /// Let expression.
    pub fn let_in(name: impl Into<Name>, value: Expr, body: Expr) -> Expr {
        Expr::make(body.ty(), ExprKind::Let { name: name.into(), value, body })
    }
    /// Load of element type `elem` (lanes taken from the index).
    pub fn load(elem: Type, buffer: impl Into<Name>, index: Expr, predicate: Option<Expr>) -> Expr {
        let t = elem.with_lanes(index.ty().lanes);
        Expr::make(t, ExprKind::Load { buffer: buffer.into(), index, predicate })
    }
    /// Intrinsic call of result type `ty`.
    pub fn intrinsic(ty: Type, which: Intrinsic, args: Vec<Expr>) -> Expr {
        Expr::make(ty, ExprKind::Call { name: which.name().into(), args, kind: CallKind::Intrinsic(which) })
    }

    // ----- shorthands for the compiler -----

    /// `a + b`
    pub fn add(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Add, a, b)
    }
    /// `a - b`
    pub fn sub(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Sub, a, b)
    }
    /// `a * b`
    pub fn mul(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Mul, a, b)
    }
    /// `a / b` (floor for ints)
    pub fn div(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Div, a, b)
    }
    /// `a % b` (Euclidean for ints)
    pub fn rem(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Mod, a, b)
    }
    /// `min(a, b)`
    pub fn min(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Min, a, b)
    }
    /// `max(a, b)`
    pub fn max(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Max, a, b)
    }
    /// `a && b`
    pub fn and(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::And, a, b)
    }
    /// `a || b`
    pub fn or(a: Expr, b: Expr) -> Expr {
        Expr::binary(BinOp::Or, a, b)
    }
    /// `a < b`
    pub fn lt(a: Expr, b: Expr) -> Expr {
        Expr::cmp(CmpOp::Lt, a, b)
    }
    /// `a <= b`
    pub fn le(a: Expr, b: Expr) -> Expr {
        Expr::cmp(CmpOp::Le, a, b)
    }
    /// `a == b`
    pub fn eq_(a: Expr, b: Expr) -> Expr {
        Expr::cmp(CmpOp::Eq, a, b)
    }

    // ----- inspection -----

    /// The integer value if this is an integer/bool constant (or a broadcast of one).
    pub fn as_int(&self) -> Option<i64> {
        match self.kind() {
            ExprKind::IntImm(v) => Some(*v),
            ExprKind::Broadcast { value, .. } => value.as_int(),
            _ => None,
        }
    }
    /// The float value if this is a float constant (or a broadcast of one).
    pub fn as_float(&self) -> Option<f64> {
        match self.kind() {
            ExprKind::FloatImm(b) => Some(b.get()),
            ExprKind::Broadcast { value, .. } => value.as_float(),
            _ => None,
        }
    }
    /// True if a constant (int or float, scalar or broadcast).
    pub fn is_const(&self) -> bool {
        self.as_int().is_some() || self.as_float().is_some()
    }
    /// True if the constant zero.
    pub fn is_zero(&self) -> bool {
        self.as_int() == Some(0) || self.as_float() == Some(0.0)
    }
    /// True if the constant one.
    pub fn is_one(&self) -> bool {
        self.as_int() == Some(1) || self.as_float() == Some(1.0)
    }
    /// The variable's name if this is a variable.
    pub fn as_var(&self) -> Option<&Name> {
        match self.kind() {
            ExprKind::Var { name, .. } => Some(name),
            _ => None,
        }
    }
    /// True if the constant `true`.
    pub fn is_true(&self) -> bool {
        self.ty().element().is_bool() && self.as_int() == Some(1)
    }
    /// True if the constant `false`.
    pub fn is_false(&self) -> bool {
        self.ty().element().is_bool() && self.as_int() == Some(0)
    }

    /// A run-time parameter of type `ty` (a `Param` or a buffer's shape).
    pub fn param(ty: Type, name: impl Into<Name>) -> Expr {
        Expr::make(ty, ExprKind::Var { name: name.into(), binding: VarBinding::Param })
    }

    /// Calls `f` on each direct child (in the order value, then body for a `Let`). A
    /// recursion through it may go as deep as the tree: it grows the stack as needed
    /// ([`stack::guard`]).
    pub fn for_each_child(&self, f: impl FnMut(&Expr)) {
        if self.0.kind.has_children() {
            stack::guard(|| self.0.kind.for_each_child_expr(f))
        }
    }

    /// Rebuilds the node with each child replaced by `f(child)`; returns `self` (shared)
    /// if nothing changed. Types are recomputed only by the node constructors above, so
    /// `f` must keep each child's type unless the caller fixes the node up. A recursion
    /// through it may go as deep as the tree: it grows the stack as needed
    /// ([`stack::guard`]).
    pub fn map_children(&self, f: impl FnMut(&Expr) -> Expr) -> Expr {
        if self.0.kind.has_children() {
            stack::guard(|| self.map_children_here(f))
        } else {
            self.clone()
        }
    }

    fn map_children_here(&self, mut f: impl FnMut(&Expr) -> Expr) -> Expr {
        let ty = self.ty();
        let same = |a: &Expr, b: &Expr| a.same_as(b);
        match self.kind() {
            ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. } => self.clone(),
            ExprKind::Cast(a) => {
                let na = f(a);
                if same(a, &na) {
                    self.clone()
                } else {
                    Expr::make(ty.with_lanes(na.ty().lanes), ExprKind::Cast(na))
                }
            }
            ExprKind::Not(a) => {
                let na = f(a);
                if same(a, &na) {
                    self.clone()
                } else {
                    Expr::not(na)
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (na, nb) = (f(a), f(b));
                if same(a, &na) && same(b, &nb) {
                    self.clone()
                } else {
                    Expr::binary(*op, na, nb)
                }
            }
            ExprKind::Cmp(op, a, b) => {
                let (na, nb) = (f(a), f(b));
                if same(a, &na) && same(b, &nb) {
                    self.clone()
                } else {
                    Expr::cmp(*op, na, nb)
                }
            }
            ExprKind::Select(c, t, e) => {
                let (nc, nt, ne) = (f(c), f(t), f(e));
                if same(c, &nc) && same(t, &nt) && same(e, &ne) {
                    self.clone()
                } else {
                    Expr::select(nc, nt, ne)
                }
            }
            ExprKind::Load { buffer, index, predicate } => {
                let ni = f(index);
                let np = predicate.as_ref().map(&mut f);
                let unchanged = same(index, &ni)
                    && match (predicate, &np) {
                        (Some(p), Some(q)) => same(p, q),
                        _ => true,
                    };
                if unchanged {
                    self.clone()
                } else {
                    Expr::load(ty.element(), buffer.clone(), ni, np)
                }
            }
            ExprKind::Ramp { base, stride, lanes } => {
                let (nb, ns) = (f(base), f(stride));
                if same(base, &nb) && same(stride, &ns) {
                    self.clone()
                } else {
                    Expr::ramp(nb, ns, *lanes)
                }
            }
            ExprKind::Broadcast { value, lanes } => {
                let nv = f(value);
                if same(value, &nv) {
                    self.clone()
                } else {
                    Expr::broadcast(nv, *lanes)
                }
            }
            ExprKind::Let { name, value, body } => {
                let (nv, nb) = (f(value), f(body));
                if same(value, &nv) && same(body, &nb) {
                    self.clone()
                } else {
                    Expr::let_in(name.clone(), nv, nb)
                }
            }
            ExprKind::Call { name, args, kind } => {
                let nargs: Vec<Expr> = args.iter().map(&mut f).collect();
                if nargs.iter().zip(args).all(|(a, b)| same(a, b)) {
                    self.clone()
                } else {
                    let lanes = nargs.iter().map(|a| a.ty().lanes).max().unwrap_or(1).max(1);
                    let nty = if matches!(kind, CallKind::Intrinsic(_)) { ty.with_lanes(lanes) } else { ty };
                    Expr::make(nty, ExprKind::Call { name: name.clone(), args: nargs, kind: kind.clone() })
                }
            }
        }
    }
}
