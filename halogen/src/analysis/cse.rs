//! Common-subexpression elimination: repeated non-trivial sub-expressions are computed
//! once, in `let t0 = ... in` bindings.
//!
//! The expression's own lets are inlined first (sharing nodes, so nothing is copied),
//! then every node gets a value number: structurally equal nodes get the same number,
//! found by hashing each node's operator and its children's numbers, never whole
//! trees, so DAGs are handled in time proportional to their distinct nodes. A node used
//! by two or more (distinct) parents is lifted, unless it is trivial (a constant, a
//! variable, or a ramp or broadcast of those) or it reads memory and is only ever
//! evaluated under a guard (inside a predicated load or a select branch): lifting it
//! would read where the program does not.

use super::substitute::free_vars;
use crate::ir::stack;
use crate::ir::{BinOp, CallKind, CmpOp, Expr, ExprKind, Name, Stmt, Type, VarBinding};
use std::collections::{HashMap, HashSet};

/// Lifts repeated sub-expressions of `e` into lets named `t0`, `t1`, ... (names that do
/// not occur in `e`).
///
/// ```
/// use halogen::analysis::cse;
/// use halogen::ir::{Expr, Type};
/// let (x, y) = (Expr::var(Type::i32(), "x"), Expr::var(Type::i32(), "y"));
/// let s = Expr::add(x.clone(), y.clone());
/// let e = Expr::mul(s.clone(), s.clone());
/// assert_eq!(cse(&e).to_string(), "(let t0 = (x + y) in (t0 * t0))");
/// ```
pub fn cse(e: &Expr) -> Expr {
    let e = inline_lets(e);
    let mut g = Gvn::default();
    let root = g.number(&e);
    let n = g.nodes.len();

    let mut uses = vec![0usize; n];
    uses[root] += 1;
    for node in &g.nodes {
        for &c in &node.children {
            uses[c] += 1;
        }
    }
    let unguarded = g.unguarded_from(root);
    let lift: Vec<bool> =
        (0..n).map(|i| uses[i] > 1 && !g.trivial(i) && (unguarded[i] || !g.nodes[i].has_load)).collect();
    if !lift.iter().any(|&l| l) {
        return e;
    }

    let taken: HashSet<Name> = free_vars(&e).into_iter().collect();
    let mut names: Vec<Option<Name>> = vec![None; n];
    let mut k = 0;
    for i in 0..n {
        if lift[i] {
            let name = loop {
                let cand: Name = format!("t{k}").into();
                k += 1;
                if !taken.contains(&cand) {
                    break cand;
                }
            };
            names[i] = Some(name);
        }
    }

    let mut b = Builder { g: &g, lift: &lift, names: &names, built: vec![None; n] };
    let mut body = b.build(root);
    for i in (0..n).rev() {
        if let Some(name) = &names[i] {
            let value = b.build(i);
            body = Expr::let_in(name.clone(), value, body);
        }
    }
    body
}

/// [`cse`] applied to every expression of `s` (stored values and indices, provided
/// values and arguments, let values, loop bounds, conditions).
pub fn cse_stmt(s: &Stmt) -> Stmt {
    s.map_children(cse_stmt, cse)
}

/// Replaces every let-bound variable by its value (shared, not copied).
fn inline_lets(e: &Expr) -> Expr {
    let mut i = Inliner { env: HashMap::new(), memo: HashMap::new(), id: 0, next_id: 1 };
    i.go(e)
}

struct Inliner {
    env: HashMap<Name, Expr>,
    memo: HashMap<(usize, u32), (Expr, Expr)>,
    id: u32,
    next_id: u32,
}

impl Inliner {
    fn go(&mut self, e: &Expr) -> Expr {
        stack::guard(|| {
            let key = (e.ptr() as usize, self.id);
            if let Some((_, r)) = self.memo.get(&key) {
                return r.clone();
            }
            let r = match e.kind() {
                ExprKind::Var { name, .. } => self.env.get(name).cloned().unwrap_or_else(|| e.clone()),
                ExprKind::Let { name, value, body } => {
                    let v = self.go(value);
                    let saved = (self.env.insert(name.clone(), v), self.id);
                    self.id = self.next_id;
                    self.next_id += 1;
                    let r = self.go(body);
                    match saved.0 {
                        Some(old) => self.env.insert(name.clone(), old),
                        None => self.env.remove(name),
                    };
                    self.id = saved.1;
                    r
                }
                _ => e.map_children(|c| self.go(c)),
            };
            self.memo.insert(key, (e.clone(), r.clone()));
            r
        })
    }
}

/// A node's operator and immediate data, without its children.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Tag {
    IntImm(i64),
    FloatImm(u64),
    Var(Name, VarBinding),
    Cast,
    Binary(BinOp),
    Cmp(CmpOp),
    Not,
    Select,
    Load(Name, bool),
    Ramp(u16),
    Broadcast(u16),
    Let(Name),
    Call(Name, CallKind),
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    ty: Type,
    tag: Tag,
    children: Vec<usize>,
}

struct Node {
    /// A representative expression (any of the equal ones).
    expr: Expr,
    children: Vec<usize>,
    has_load: bool,
}

#[derive(Default)]
struct Gvn {
    by_ptr: HashMap<usize, (Expr, usize)>,
    table: HashMap<Key, usize>,
    nodes: Vec<Node>,
}

fn tag_of(e: &Expr) -> Tag {
    match e.kind() {
        ExprKind::IntImm(v) => Tag::IntImm(*v),
        ExprKind::FloatImm(b) => Tag::FloatImm(b.0),
        ExprKind::Var { name, binding } => Tag::Var(name.clone(), binding.clone()),
        ExprKind::Cast(_) => Tag::Cast,
        ExprKind::Binary(op, ..) => Tag::Binary(*op),
        ExprKind::Cmp(op, ..) => Tag::Cmp(*op),
        ExprKind::Not(_) => Tag::Not,
        ExprKind::Select(..) => Tag::Select,
        ExprKind::Load { buffer, predicate, .. } => Tag::Load(buffer.clone(), predicate.is_some()),
        ExprKind::Ramp { lanes, .. } => Tag::Ramp(*lanes),
        ExprKind::Broadcast { lanes, .. } => Tag::Broadcast(*lanes),
        ExprKind::Let { name, .. } => Tag::Let(name.clone()),
        ExprKind::Call { name, kind, .. } => Tag::Call(name.clone(), kind.clone()),
    }
}

impl Gvn {
    /// The value number of `e`.
    fn number(&mut self, e: &Expr) -> usize {
        stack::guard(|| {
            if let Some((_, n)) = self.by_ptr.get(&(e.ptr() as usize)) {
                return *n;
            }
            let mut kids = Vec::new();
            e.for_each_child(|c| kids.push(c.clone()));
            let children: Vec<usize> = kids.iter().map(|c| self.number(c)).collect();
            let key = Key { ty: e.ty(), tag: tag_of(e), children };
            let n = match self.table.get(&key) {
                Some(&n) => n,
                None => {
                    let n = self.nodes.len();
                    let has_load = matches!(e.kind(), ExprKind::Load { .. })
                        || key.children.iter().any(|&c| self.nodes[c].has_load);
                    self.nodes.push(Node { expr: e.clone(), children: key.children.clone(), has_load });
                    self.table.insert(key, n);
                    n
                }
            };
            self.by_ptr.insert(e.ptr() as usize, (e.clone(), n));
            n
        })
    }

    /// Constants, variables, and ramps or broadcasts of those.
    fn trivial(&self, i: usize) -> bool {
        let leaf = |j: usize| {
            matches!(self.nodes[j].expr.kind(), ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. })
        };
        match self.nodes[i].expr.kind() {
            ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. } => true,
            ExprKind::Ramp { .. } | ExprKind::Broadcast { .. } => self.nodes[i].children.iter().all(|&c| leaf(c)),
            _ => false,
        }
    }

    /// Which nodes are evaluated unconditionally: reachable from the root without
    /// entering a select's branches or a predicated load's operands.
    fn unguarded_from(&self, root: usize) -> Vec<bool> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            let node = &self.nodes[i];
            for (pos, &c) in node.children.iter().enumerate() {
                // A select's branches, and the index of a predicated load (read only in
                // the lanes the predicate enables), are evaluated under a guard.
                let guarded = match node.expr.kind() {
                    ExprKind::Select(..) => pos > 0,
                    ExprKind::Load { predicate: Some(_), .. } => pos == 0,
                    _ => false,
                };
                if !guarded {
                    stack.push(c);
                }
            }
        }
        seen
    }
}

struct Builder<'a> {
    g: &'a Gvn,
    lift: &'a [bool],
    names: &'a [Option<Name>],
    built: Vec<Option<Expr>>,
}

impl Builder<'_> {
    /// The expression of node `i`, with lifted children replaced by their names.
    fn build(&mut self, i: usize) -> Expr {
        stack::guard(|| {
            if let Some(e) = &self.built[i] {
                return e.clone();
            }
            let node = &self.g.nodes[i];
            let kids: Vec<Expr> = node
                .children
                .iter()
                .map(|&c| match (&self.names[c], self.lift[c]) {
                    (Some(name), true) => Expr::var(self.g.nodes[c].expr.ty(), name.clone()),
                    _ => self.build(c),
                })
                .collect();
            let mut it = kids.into_iter();
            let e = node.expr.map_children(|_| it.next().expect("one rebuilt child per child"));
            self.built[i] = Some(e.clone());
            e
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    fn v(n: &str) -> Expr {
        Expr::var(Type::i32(), n)
    }

    #[test]
    fn lifts_repeats_once_innermost_first() {
        let s = Expr::add(v("x"), v("y"));
        let m = Expr::mul(s.clone(), Expr::i32(3));
        let e = Expr::add(Expr::sub(m.clone(), s.clone()), m.clone());
        assert_eq!(cse(&e).to_string(), "(let t0 = (x + y) in (let t1 = (t0 * 3) in ((t1 - t0) + t1)))");
    }

    #[test]
    fn structurally_equal_trees_are_merged() {
        // Two separately built copies of x + y.
        let e = Expr::mul(Expr::add(v("x"), v("y")), Expr::add(v("x"), v("y")));
        assert_eq!(cse(&e).to_string(), "(let t0 = (x + y) in (t0 * t0))");
    }

    #[test]
    fn leaves_trivial_things_and_single_uses() {
        let e = Expr::add(Expr::mul(v("x"), v("x")), Expr::i32(1));
        assert_eq!(cse(&e), e);
        let r = Expr::ramp(v("x"), Expr::i32(1), 4);
        let e = Expr::add(r.clone(), r.clone());
        assert_eq!(cse(&e), e);
    }

    #[test]
    fn names_avoid_existing_variables() {
        let s = Expr::add(v("t0"), v("y"));
        let e = Expr::mul(s.clone(), s.clone());
        assert_eq!(cse(&e).to_string(), "(let t1 = (t0 + y) in (t1 * t1))");
    }

    #[test]
    fn existing_lets_are_rewritten() {
        let e = Expr::let_in("a", Expr::add(v("x"), v("y")), Expr::mul(v("a"), Expr::add(v("x"), v("y"))));
        assert_eq!(cse(&e).to_string(), "(let t0 = (x + y) in (t0 * t0))");
    }

    #[test]
    fn guarded_loads_stay() {
        let ld = Expr::load(Type::i32(), "buf", Expr::add(v("x"), v("y")), None);
        let twice = Expr::add(ld.clone(), ld.clone());
        // Both uses inside select branches: not lifted (the index x + y is, it reads nothing).
        let e = Expr::select(Expr::lt(v("x"), v("n")), twice.clone(), ld.clone());
        let r = cse(&e);
        assert!(!r.to_string().contains("= buf["), "{r}");
        // An unconditional use makes lifting safe.
        let e2 = Expr::add(e.clone(), ld.clone());
        assert!(cse(&e2).to_string().contains("= buf["), "{}", cse(&e2));
    }

    #[test]
    fn dag_input_is_fine() {
        let mut e = v("x");
        for _ in 0..100 {
            e = Expr::add(e.clone(), e.clone());
        }
        let r = cse(&e);
        let s = r.to_string();
        assert!(s.contains("t98"), "{}", &s[..200]);
    }

    #[test]
    fn cse_stmt_reaches_stores() {
        let s = Expr::add(v("x"), Expr::param(Type::i32(), "y"));
        let st =
            Stmt::Store { buffer: "b".into(), value: Expr::mul(s.clone(), s.clone()), index: v("x"), predicate: None };
        let r = cse_stmt(&Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), crate::ir::ForKind::Serial, st));
        assert!(r.to_string().contains("let t0 = (x + y) in (t0 * t0)"), "{r}");
    }
}
