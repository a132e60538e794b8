//! Statements: an owned tree of loop-nest nodes whose leaves hold [`Expr`]s.

use super::expr::{Expr, Name};
use super::stack;
use super::types::Type;

/// How a `For` loop runs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ForKind {
    /// One iteration after another.
    Serial,
    /// Iterations run on the thread pool, in any order.
    Parallel,
    /// Becomes vector code (constant extent).
    Vectorized,
    /// Becomes copies of the body (constant extent).
    Unrolled,
    /// GPU block index.
    GpuBlock,
    /// GPU thread index.
    GpuThread,
    /// Split across MPI ranks.
    Distributed,
}

/// A half-open range given by its first value and its length.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Range {
    /// First value.
    pub min: Expr,
    /// Number of values.
    pub extent: Expr,
}

impl Range {
    /// A range from its min and extent.
    pub fn new(min: Expr, extent: Expr) -> Range {
        Range { min, extent }
    }
}

/// A piece of an assertion's message: literal text or a value printed at failure.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum MsgPart {
    /// Literal text.
    Text(String),
    /// An integer value, evaluated when the assertion fails.
    Value(Expr),
}

/// How a Func's storage is folded into a circular buffer: along dimension `dim`, the
/// coordinate modulo `factor` (the rows one iteration of a sliding window needs).
/// Printed after a `realize`'s types as `fold(dim, factor)`.
///
/// ```
/// use halogen::ir::{Expr, Fold, Range, Stmt, Type};
/// let r = Stmt::Realize {
///     name: "f".into(),
///     types: vec![Type::u8()],
///     bounds: vec![Range::new(Expr::i32(0), Expr::i32(64)), Range::new(Expr::i32(0), Expr::i32(64))],
///     fold: Some(Fold { dim: 1, factor: 3 }),
///     body: Box::new(Stmt::no_op()),
/// };
/// assert!(r.to_string().starts_with("realize f([0, 64], [0, 64]) : uint8 fold(1, 3) {"));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Fold {
    /// The folded dimension.
    pub dim: usize,
    /// Rows kept.
    pub factor: i64,
}

/// Where a loop carrying a [`VectorTail`] puts the version without the tail.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TailPlace {
    /// Around the loop (`tail`): a ShiftInwards split of the vector loop, carried by the
    /// loop just outside the vector loop.
    Loop,
    /// Inside the loop, around its body (`tail_each`): a GuardWithIf split of the vector
    /// loop, whose condition depends on the loop's variable.
    EachIteration,
    /// Around the loop, and kept only where the version makes storage or a loop's extent
    /// constant (`tail_nest`): a ShiftInwards split outside the vector loop, carried by
    /// the stage's outermost loop. Producers computed inside the split's loops get
    /// regions clamped to the stage's, which are a constant size where it holds.
    Nest,
}

/// A split tail that a loop can specialize away (see `lower::specialize_tails`): where
/// `condition` holds, the split's clamp and guard change nothing, so the loop gets a
/// version with let `var` bound to `unclamped` and `guard_term` replaced by `true`.
/// Printed on its loop as `tail(condition, guard_term, var = unclamped)` (`tail_each` and
/// `tail_nest` for the other [`TailPlace`]s). Its expressions
/// are not children of the loop: they name the loop's own lets, and the passes between
/// the one that makes it and the one that uses it leave them as they are.
///
/// ```
/// use halogen::ir::{Expr, ForKind, Stmt, TailPlace, Type, VectorTail};
/// let extent = Expr::param(Type::i32(), "n");
/// let fits = Expr::le(Expr::i32(8), extent.clone());
/// let x = Expr::var(Type::i32(), "x");
/// let tail = VectorTail {
///     condition: fits.clone(),
///     guard_term: fits,
///     place: TailPlace::Loop,
///     var: "v".into(),
///     unclamped: x.clone(),
/// };
/// let mut s = Stmt::for_loop("x", Expr::i32(0), extent, ForKind::Serial, Stmt::no_op());
/// if let Stmt::For { tails, .. } = &mut s {
///     tails.push(tail);
/// }
/// assert!(s.to_string().starts_with("for (x, 0, n) tail((8 <= n), (8 <= n), v = x) {"));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct VectorTail {
    /// When it holds, the clamp and the guard change nothing: `factor <= extent` for
    /// ShiftInwards; for GuardWithIf, that the last lane of this vector is in range.
    pub condition: Expr,
    /// The guard's term that `condition` makes true.
    pub guard_term: Expr,
    /// Where the loop puts the two versions.
    pub place: TailPlace,
    /// The let defining the split variable, `min(value, last)` in the general case.
    pub var: Name,
    /// Its value without the clamp.
    pub unclamped: Expr,
}

/// Statement nodes. Cloning, comparing, hashing and debug-printing grow the stack as
/// needed, so a tree of any depth is safe to handle.
pub enum Stmt {
    /// `let name = value` for the body.
    LetStmt { name: Name, value: Expr, body: Box<Stmt> },
    /// Fails the pipeline with `message` when `condition` is false.
    Assert { condition: Expr, message: Vec<MsgPart> },
    /// Marks the producing (`is_producer`) or consuming part of a Func's realization.
    ProducerConsumer { name: Name, is_producer: bool, body: Box<Stmt> },
    /// `for name in [min, min + extent)`; `tails` are the vector tails to specialize at
    /// this loop (empty but between schedule functions and specialize tails).
    For { name: Name, min: Expr, extent: Expr, kind: ForKind, tails: Vec<VectorTail>, body: Box<Stmt> },
    /// Multi-dimensional store of a Func's values (before storage flattening).
    Provide { name: Name, values: Vec<Expr>, args: Vec<Expr> },
    /// Multi-dimensional storage for a Func over `bounds` (before storage flattening),
    /// folded into a circular buffer where `fold` says so.
    Realize { name: Name, types: Vec<Type>, bounds: Vec<Range>, fold: Option<Fold>, body: Box<Stmt> },
    /// `buffer[index] = value`, lanes of `index` wide; lanes where `predicate` is false are
    /// not written.
    Store { buffer: Name, value: Expr, index: Expr, predicate: Option<Expr> },
    /// Flat storage of `extents` (multiplied) elements of `ty`, live in `body`.
    Allocate { name: Name, ty: Type, extents: Vec<Expr>, body: Box<Stmt> },
    /// Ends the life of an allocation before its scope does.
    Free { name: Name },
    /// Statements in order.
    Block(Vec<Stmt>),
    /// Conditional.
    IfThenElse { condition: Expr, then_case: Box<Stmt>, else_case: Option<Box<Stmt>> },
    /// Evaluates an expression for its effects.
    Evaluate(Expr),
    /// Starts sending (or receiving) a box of `buffer`'s elements of type `ty` to (from)
    /// rank `peer` of a distributed run: one side of a border exchange. The box is
    /// `extents` elements along each dimension. Before storage flattening, `mins` are its
    /// first coordinates in the Func's coordinates and `strides` is empty; after it, `mins`
    /// holds one flat index (of the box's first element) and `strides` the elements
    /// between neighbours along each dimension. Its buffer must not change until the
    /// [`Stmt::TransferWait`] that completes it.
    Transfer {
        op: TransferOp,
        peer: Expr,
        buffer: Name,
        ty: Type,
        mins: Vec<Expr>,
        extents: Vec<Expr>,
        strides: Vec<Expr>,
    },
    /// Completes every transfer started before it: the received boxes are in place.
    TransferWait,
}

/// What a [`Stmt::Transfer`] does with its box.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TransferOp {
    /// This rank's elements go to the peer.
    Send,
    /// The peer's elements arrive here.
    Receive,
    /// The peer's elements arrive and are combined into this rank's, element by element
    /// (`mine = mine ⊕ theirs`): one side of the all-reduce that ends a reduction
    /// distributed over its reduction domain.
    Combine(CombineOp),
}

impl TransferOp {
    /// The word the printer shows (`send`, `receive`, `combine`).
    pub fn word(self) -> &'static str {
        match self {
            TransferOp::Send => "send",
            TransferOp::Receive => "receive",
            TransferOp::Combine(_) => "combine",
        }
    }
}

/// How a [`TransferOp::Combine`] merges a peer's elements into this rank's. Each is
/// associative and commutative on the integer types it is used for (sums and products
/// wrap), so the order in which the peers' boxes arrive cannot change the result.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CombineOp {
    /// Wrapping sum.
    Add,
    /// Wrapping product.
    Mul,
    /// Minimum (signed or unsigned as the element type is).
    Min,
    /// Maximum.
    Max,
    /// Bitwise and.
    BitAnd,
    /// Bitwise or.
    BitOr,
    /// Bitwise exclusive or.
    BitXor,
}

impl CombineOp {
    /// Every operation, in the order of their codes.
    pub const ALL: [CombineOp; 7] = [
        CombineOp::Add,
        CombineOp::Mul,
        CombineOp::Min,
        CombineOp::Max,
        CombineOp::BitAnd,
        CombineOp::BitOr,
        CombineOp::BitXor,
    ];

    /// The word the printer shows (`add`, `mul`, `min`, `max`, `and`, `or`, `xor`).
    ///
    /// ```
    /// use halogen::ir::CombineOp;
    /// assert_eq!(CombineOp::Add.word(), "add");
    /// assert_eq!(CombineOp::from_word("xor"), Some(CombineOp::BitXor));
    /// ```
    pub fn word(self) -> &'static str {
        match self {
            CombineOp::Add => "add",
            CombineOp::Mul => "mul",
            CombineOp::Min => "min",
            CombineOp::Max => "max",
            CombineOp::BitAnd => "and",
            CombineOp::BitOr => "or",
            CombineOp::BitXor => "xor",
        }
    }

    /// The operation [`CombineOp::word`] names.
    pub fn from_word(word: &str) -> Option<CombineOp> {
        CombineOp::ALL.into_iter().find(|op| op.word() == word)
    }
}

// The derived impls recurse once per level of the tree with no way to grow the stack; these
// do what they would, with a guard per level.
impl Clone for Stmt {
    fn clone(&self) -> Stmt {
        stack::guard(|| match self {
            Stmt::LetStmt { name, value, body } => {
                Stmt::LetStmt { name: name.clone(), value: value.clone(), body: body.clone() }
            }
            Stmt::Assert { condition, message } => {
                Stmt::Assert { condition: condition.clone(), message: message.clone() }
            }
            Stmt::ProducerConsumer { name, is_producer, body } => {
                Stmt::ProducerConsumer { name: name.clone(), is_producer: *is_producer, body: body.clone() }
            }
            Stmt::For { name, min, extent, kind, tails, body } => Stmt::For {
                name: name.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: *kind,
                tails: tails.clone(),
                body: body.clone(),
            },
            Stmt::Provide { name, values, args } => {
                Stmt::Provide { name: name.clone(), values: values.clone(), args: args.clone() }
            }
            Stmt::Realize { name, types, bounds, fold, body } => Stmt::Realize {
                name: name.clone(),
                types: types.clone(),
                bounds: bounds.clone(),
                fold: *fold,
                body: body.clone(),
            },
            Stmt::Store { buffer, value, index, predicate } => Stmt::Store {
                buffer: buffer.clone(),
                value: value.clone(),
                index: index.clone(),
                predicate: predicate.clone(),
            },
            Stmt::Allocate { name, ty, extents, body } => {
                Stmt::Allocate { name: name.clone(), ty: *ty, extents: extents.clone(), body: body.clone() }
            }
            Stmt::Free { name } => Stmt::Free { name: name.clone() },
            Stmt::Block(v) => Stmt::Block(v.clone()),
            Stmt::IfThenElse { condition, then_case, else_case } => Stmt::IfThenElse {
                condition: condition.clone(),
                then_case: then_case.clone(),
                else_case: else_case.clone(),
            },
            Stmt::Evaluate(e) => Stmt::Evaluate(e.clone()),
            Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => Stmt::Transfer {
                op: *op,
                peer: peer.clone(),
                buffer: buffer.clone(),
                ty: *ty,
                mins: mins.clone(),
                extents: extents.clone(),
                strides: strides.clone(),
            },
            Stmt::TransferWait => Stmt::TransferWait,
        })
    }
}

/// A statement node by reference, with the derived comparison, hashing and debug format
/// that `Stmt` had (the same variant and field names), for `Stmt`'s guarded impls.
#[derive(PartialEq, Hash, Debug)]
enum Fields<'a> {
    LetStmt {
        name: &'a Name,
        value: &'a Expr,
        body: &'a Stmt,
    },
    Assert {
        condition: &'a Expr,
        message: &'a Vec<MsgPart>,
    },
    ProducerConsumer {
        name: &'a Name,
        is_producer: &'a bool,
        body: &'a Stmt,
    },
    For {
        name: &'a Name,
        min: &'a Expr,
        extent: &'a Expr,
        kind: &'a ForKind,
        tails: &'a Vec<VectorTail>,
        body: &'a Stmt,
    },
    Provide {
        name: &'a Name,
        values: &'a Vec<Expr>,
        args: &'a Vec<Expr>,
    },
    Realize {
        name: &'a Name,
        types: &'a Vec<Type>,
        bounds: &'a Vec<Range>,
        fold: &'a Option<Fold>,
        body: &'a Stmt,
    },
    Store {
        buffer: &'a Name,
        value: &'a Expr,
        index: &'a Expr,
        predicate: &'a Option<Expr>,
    },
    Allocate {
        name: &'a Name,
        ty: &'a Type,
        extents: &'a Vec<Expr>,
        body: &'a Stmt,
    },
    Free {
        name: &'a Name,
    },
    Block(&'a Vec<Stmt>),
    IfThenElse {
        condition: &'a Expr,
        then_case: &'a Stmt,
        else_case: &'a Option<Box<Stmt>>,
    },
    Evaluate(&'a Expr),
    Transfer {
        op: &'a TransferOp,
        peer: &'a Expr,
        buffer: &'a Name,
        ty: &'a Type,
        mins: &'a Vec<Expr>,
        extents: &'a Vec<Expr>,
        strides: &'a Vec<Expr>,
    },
    TransferWait,
}

impl Stmt {
    fn fields(&self) -> Fields<'_> {
        match self {
            Stmt::LetStmt { name, value, body } => Fields::LetStmt { name, value, body },
            Stmt::Assert { condition, message } => Fields::Assert { condition, message },
            Stmt::ProducerConsumer { name, is_producer, body } => Fields::ProducerConsumer { name, is_producer, body },
            Stmt::For { name, min, extent, kind, tails, body } => Fields::For { name, min, extent, kind, tails, body },
            Stmt::Provide { name, values, args } => Fields::Provide { name, values, args },
            Stmt::Realize { name, types, bounds, fold, body } => Fields::Realize { name, types, bounds, fold, body },
            Stmt::Store { buffer, value, index, predicate } => Fields::Store { buffer, value, index, predicate },
            Stmt::Allocate { name, ty, extents, body } => Fields::Allocate { name, ty, extents, body },
            Stmt::Free { name } => Fields::Free { name },
            Stmt::Block(v) => Fields::Block(v),
            Stmt::IfThenElse { condition, then_case, else_case } => {
                Fields::IfThenElse { condition, then_case, else_case }
            }
            Stmt::Evaluate(e) => Fields::Evaluate(e),
            Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => {
                Fields::Transfer { op, peer, buffer, ty, mins, extents, strides }
            }
            Stmt::TransferWait => Fields::TransferWait,
        }
    }
}

impl PartialEq for Stmt {
    fn eq(&self, o: &Stmt) -> bool {
        stack::guard(|| self.fields() == o.fields())
    }
}
impl Eq for Stmt {}
impl std::hash::Hash for Stmt {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        stack::guard(|| self.fields().hash(h))
    }
}
impl std::fmt::Debug for Stmt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        stack::guard(|| self.fields().fmt(f))
    }
}

impl Stmt {
    /// An empty statement.
    pub fn no_op() -> Stmt {
        Stmt::Block(Vec::new())
    }
    /// True for an empty block.
    pub fn is_no_op(&self) -> bool {
        matches!(self, Stmt::Block(v) if v.is_empty())
    }
    /// A block of statements, flattening nested blocks and dropping no-ops.
    pub fn block(stmts: Vec<Stmt>) -> Stmt {
        let mut out = Vec::new();
        for s in stmts {
            match s {
                Stmt::Block(inner) => out.extend(inner),
                s => out.push(s),
            }
        }
        if out.len() == 1 {
            out.pop().unwrap()
        } else {
            Stmt::Block(out)
        }
    }
    /// `let name = value in body`.
    pub fn let_stmt(name: impl Into<Name>, value: Expr, body: Stmt) -> Stmt {
        Stmt::LetStmt { name: name.into(), value, body: Box::new(body) }
    }
    /// A `For` loop.
    pub fn for_loop(name: impl Into<Name>, min: Expr, extent: Expr, kind: ForKind, body: Stmt) -> Stmt {
        Stmt::For { name: name.into(), min, extent, kind, tails: Vec::new(), body: Box::new(body) }
    }
    /// `if condition { then_case }`.
    pub fn if_then(condition: Expr, then_case: Stmt) -> Stmt {
        Stmt::IfThenElse { condition, then_case: Box::new(then_case), else_case: None }
    }

    /// Calls `fs` on each direct child statement and `fe` on each direct child expression.
    /// A recursion through it may go as deep as the tree: it grows the stack as needed.
    pub fn for_each_child(&self, fs: impl FnMut(&Stmt), fe: impl FnMut(&Expr)) {
        stack::guard(|| self.for_each_child_here(fs, fe))
    }

    fn for_each_child_here(&self, mut fs: impl FnMut(&Stmt), mut fe: impl FnMut(&Expr)) {
        match self {
            Stmt::LetStmt { value, body, .. } => {
                fe(value);
                fs(body)
            }
            Stmt::Assert { condition, message } => {
                fe(condition);
                for m in message {
                    if let MsgPart::Value(e) = m {
                        fe(e)
                    }
                }
            }
            Stmt::ProducerConsumer { body, .. } => fs(body),
            Stmt::For { min, extent, body, .. } => {
                fe(min);
                fe(extent);
                fs(body)
            }
            Stmt::Provide { values, args, .. } => {
                values.iter().for_each(&mut fe);
                args.iter().for_each(&mut fe);
            }
            Stmt::Realize { bounds, body, .. } => {
                for b in bounds {
                    fe(&b.min);
                    fe(&b.extent);
                }
                fs(body)
            }
            Stmt::Store { value, index, predicate, .. } => {
                fe(value);
                fe(index);
                if let Some(p) = predicate {
                    fe(p)
                }
            }
            Stmt::Allocate { extents, body, .. } => {
                extents.iter().for_each(&mut fe);
                fs(body)
            }
            Stmt::Free { .. } => {}
            Stmt::Block(v) => v.iter().for_each(fs),
            Stmt::IfThenElse { condition, then_case, else_case } => {
                fe(condition);
                fs(then_case);
                if let Some(e) = else_case {
                    fs(e)
                }
            }
            Stmt::Evaluate(e) => fe(e),
            Stmt::Transfer { peer, mins, extents, strides, .. } => {
                fe(peer);
                mins.iter().chain(extents).chain(strides).for_each(&mut fe);
            }
            Stmt::TransferWait => {}
        }
    }

    /// Rebuilds the statement with each child statement replaced by `fs(child)` and each
    /// child expression by `fe(child)`. A recursion through it may go as deep as the tree:
    /// it grows the stack as needed.
    pub fn map_children(&self, fs: impl FnMut(&Stmt) -> Stmt, fe: impl FnMut(&Expr) -> Expr) -> Stmt {
        stack::guard(|| self.map_children_here(fs, fe))
    }

    fn map_children_here(&self, mut fs: impl FnMut(&Stmt) -> Stmt, mut fe: impl FnMut(&Expr) -> Expr) -> Stmt {
        match self {
            Stmt::LetStmt { name, value, body } => {
                Stmt::LetStmt { name: name.clone(), value: fe(value), body: Box::new(fs(body)) }
            }
            Stmt::Assert { condition, message } => Stmt::Assert {
                condition: fe(condition),
                message: message
                    .iter()
                    .map(|m| match m {
                        MsgPart::Value(e) => MsgPart::Value(fe(e)),
                        t => t.clone(),
                    })
                    .collect(),
            },
            Stmt::ProducerConsumer { name, is_producer, body } => {
                Stmt::ProducerConsumer { name: name.clone(), is_producer: *is_producer, body: Box::new(fs(body)) }
            }
            Stmt::For { name, min, extent, kind, tails, body } => Stmt::For {
                name: name.clone(),
                min: fe(min),
                extent: fe(extent),
                kind: *kind,
                tails: tails.clone(),
                body: Box::new(fs(body)),
            },
            Stmt::Provide { name, values, args } => Stmt::Provide {
                name: name.clone(),
                values: values.iter().map(&mut fe).collect(),
                args: args.iter().map(&mut fe).collect(),
            },
            Stmt::Realize { name, types, bounds, fold, body } => Stmt::Realize {
                name: name.clone(),
                types: types.clone(),
                bounds: bounds.iter().map(|b| Range::new(fe(&b.min), fe(&b.extent))).collect(),
                fold: *fold,
                body: Box::new(fs(body)),
            },
            Stmt::Store { buffer, value, index, predicate } => Stmt::Store {
                buffer: buffer.clone(),
                value: fe(value),
                index: fe(index),
                predicate: predicate.as_ref().map(&mut fe),
            },
            Stmt::Allocate { name, ty, extents, body } => Stmt::Allocate {
                name: name.clone(),
                ty: *ty,
                extents: extents.iter().map(&mut fe).collect(),
                body: Box::new(fs(body)),
            },
            Stmt::Free { name } => Stmt::Free { name: name.clone() },
            Stmt::Block(v) => Stmt::block(v.iter().map(fs).collect()),
            Stmt::IfThenElse { condition, then_case, else_case } => Stmt::IfThenElse {
                condition: fe(condition),
                then_case: Box::new(fs(then_case)),
                else_case: else_case.as_ref().map(|e| Box::new(fs(e))),
            },
            Stmt::Evaluate(e) => Stmt::Evaluate(fe(e)),
            Stmt::Transfer { op, peer, buffer, ty, mins, extents, strides } => Stmt::Transfer {
                op: *op,
                peer: fe(peer),
                buffer: buffer.clone(),
                ty: *ty,
                mins: mins.iter().map(&mut fe).collect(),
                extents: extents.iter().map(&mut fe).collect(),
                strides: strides.iter().map(&mut fe).collect(),
            },
            Stmt::TransferWait => Stmt::TransferWait,
        }
    }
}
