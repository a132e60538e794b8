//! Substitution of expressions for variables, and queries about variable use.
//!
//! Substitution respects shadowing (a `Let`, `LetStmt` or `For` that binds the same
//! name hides it from its body) and avoids capture (a binder whose name occurs in a
//! replacement is renamed to a fresh `name$k` in the part it governs). Results are
//! memoised on node identity, so a DAG is rewritten in time proportional to its number
//! of distinct nodes and stays a DAG.

use crate::ir::stack;
use crate::ir::{mutate_stmt_children, walk_stmt, Expr, ExprKind, ExprNode, Mutator, Name, Stmt, Visitor};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

static FRESH: AtomicUsize = AtomicUsize::new(0);

/// A name no program uses: `base$k` with a process-wide counter.
fn fresh_name(base: &str) -> Name {
    let k = FRESH.fetch_add(1, Ordering::Relaxed);
    format!("{base}${k}").into()
}

/// Replaces the free occurrences of the variable `name` in `e` by `replacement`.
///
/// ```
/// use halogen::analysis::substitute;
/// use halogen::ir::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let e = Expr::add(x.clone(), Expr::i32(1));
/// assert_eq!(substitute("x", &Expr::i32(4), &e), Expr::add(Expr::i32(4), Expr::i32(1)));
/// ```
pub fn substitute(name: &str, replacement: &Expr, e: &Expr) -> Expr {
    let mut map = HashMap::new();
    map.insert(Name::from(name), replacement.clone());
    substitute_map(&map, e)
}

/// Replaces the free occurrences of each variable of `map` in `e` by its expression (all
/// at once: replacements are not themselves substituted into).
pub fn substitute_map(map: &HashMap<Name, Expr>, e: &Expr) -> Expr {
    if map.is_empty() {
        return e.clone();
    }
    Substituter::new(map.clone()).expr(e)
}

/// Replaces the free occurrences of `name` in the expressions of `s` by `replacement`.
pub fn substitute_in_stmt(name: &str, replacement: &Expr, s: &Stmt) -> Stmt {
    let mut map = HashMap::new();
    map.insert(Name::from(name), replacement.clone());
    substitute_map_in_stmt(&map, s)
}

/// [`substitute_map`] for the expressions of a statement.
pub fn substitute_map_in_stmt(map: &HashMap<Name, Expr>, s: &Stmt) -> Stmt {
    if map.is_empty() {
        return s.clone();
    }
    Substituter::new(map.clone()).stmt(s)
}

/// Renames the free variable `old` to `new` in `e` (keeping each use's type).
fn rename_in_expr(old: &Name, new: &Name, e: &Expr) -> Expr {
    let mut r = Substituter::new(HashMap::new());
    r.renames.insert(old.clone(), new.clone());
    r.expr(e)
}

fn rename_in_stmt(old: &Name, new: &Name, s: &Stmt) -> Stmt {
    let mut r = Substituter::new(HashMap::new());
    r.renames.insert(old.clone(), new.clone());
    r.stmt(s)
}

struct Substituter {
    map: HashMap<Name, Expr>,
    /// Variables renamed (kept apart from `map` so each use keeps its own type).
    renames: HashMap<Name, Name>,
    /// Names free in some replacement (binders with these names would capture).
    captured: HashSet<Name>,
    memo: HashMap<usize, (Expr, Expr)>,
}

impl Substituter {
    fn new(map: HashMap<Name, Expr>) -> Substituter {
        let mut captured = HashSet::new();
        for v in map.values() {
            captured.extend(free_vars(v));
        }
        Substituter { map, renames: HashMap::new(), captured, memo: HashMap::new() }
    }

    fn is_empty(&self) -> bool {
        self.map.is_empty() && self.renames.is_empty()
    }

    fn keys(&self) -> Vec<Name> {
        self.map.keys().chain(self.renames.keys()).cloned().collect()
    }

    /// A substituter for the body of a binder of `name`: `name` is shadowed.
    fn inner(&self, name: &Name) -> Substituter {
        let mut map = self.map.clone();
        map.remove(name);
        let mut renames = self.renames.clone();
        renames.remove(name);
        let mut s = Substituter::new(map);
        s.renames = renames;
        s.captured.extend(s.renames.values().cloned());
        s
    }

    /// Whether a binder of `name` over `body` needs renaming to avoid capture.
    fn captures(&self, name: &Name, uses: impl FnOnce(&[Name]) -> bool) -> bool {
        let captured = self.captured.contains(name) || self.renames.values().any(|v| v == name);
        captured && uses(&self.keys())
    }

    fn expr(&mut self, e: &Expr) -> Expr {
        stack::guard(|| {
            if self.is_empty() {
                return e.clone();
            }
            let key = e.ptr() as usize;
            if let Some((_, r)) = self.memo.get(&key) {
                return r.clone();
            }
            let r = match e.kind() {
                ExprKind::Var { name, binding } => {
                    if let Some(r) = self.map.get(name) {
                        r.clone()
                    } else if let Some(n) = self.renames.get(name) {
                        Expr::make(e.ty(), ExprKind::Var { name: n.clone(), binding: binding.clone() })
                    } else {
                        e.clone()
                    }
                }
                ExprKind::Let { name, value, body } => {
                    let v = self.expr(value);
                    let (name2, body2) = if self.captures(name, |keys| keys.iter().any(|k| expr_uses_var(body, k))) {
                        let fresh = fresh_name(name);
                        let b = rename_in_expr(name, &fresh, body);
                        (fresh, b)
                    } else {
                        (name.clone(), body.clone())
                    };
                    let b = self.inner(&name2).expr(&body2);
                    if v.same_as(value) && b.same_as(body) && name2 == *name {
                        e.clone()
                    } else {
                        Expr::let_in(name2, v, b)
                    }
                }
                _ => e.map_children(|c| self.expr(c)),
            };
            self.memo.insert(key, (e.clone(), r.clone()));
            r
        })
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| {
            if self.is_empty() {
                return s.clone();
            }
            match s {
                Stmt::LetStmt { name, value, body } => {
                    let v = self.expr(value);
                    let (n, b) = self.binder(name, body);
                    Stmt::LetStmt { name: n, value: v, body: Box::new(b) }
                }
                Stmt::For { name, min, extent, kind, tails, body } => {
                    let (mn, ex) = (self.expr(min), self.expr(extent));
                    let (n, b) = self.binder(name, body);
                    Stmt::For { name: n, min: mn, extent: ex, kind: *kind, tails: tails.clone(), body: Box::new(b) }
                }
                _ => mutate_stmt_children(self, s),
            }
        })
    }

    /// The body of a statement binder of `name`, renamed if it would capture.
    fn binder(&mut self, name: &Name, body: &Stmt) -> (Name, Stmt) {
        if self.captures(name, |keys| keys.iter().any(|k| stmt_uses_var(body, k))) {
            let fresh = fresh_name(name);
            let b = rename_in_stmt(name, &fresh, body);
            let b = self.inner(&fresh).stmt(&b);
            (fresh, b)
        } else {
            (name.clone(), self.inner(name).stmt(body))
        }
    }
}

impl Mutator for Substituter {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        self.expr(e)
    }
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        self.stmt(s)
    }
}

/// True if the variable `name` occurs free in `e`.
pub fn expr_uses_var(e: &Expr, name: &str) -> bool {
    expr_mentions_any(e, &|n| &**n == name)
}

/// True if a variable for which `named` holds occurs free in `e`.
pub fn expr_mentions_any(e: &Expr, named: &dyn Fn(&Name) -> bool) -> bool {
    let mut seen = HashSet::new();
    uses(e, named, &mut seen)
}

fn uses(e: &Expr, named: &dyn Fn(&Name) -> bool, seen: &mut HashSet<*const ExprNode>) -> bool {
    stack::guard(|| {
        if !seen.insert(e.ptr()) {
            return false;
        }
        match e.kind() {
            ExprKind::Var { name: n, .. } => named(n),
            ExprKind::Let { name: n, value, body } => {
                uses(value, named, seen) || uses(body, &|v: &Name| v != n && named(v), seen)
            }
            _ => {
                let mut found = false;
                e.for_each_child(|c| found = found || uses(c, named, seen));
                found
            }
        }
    })
}

/// True if `e` loads from the buffer `buffer`.
///
/// ```
/// use halogen::analysis::substitute::expr_loads_from;
/// use halogen::{Expr, Type};
/// let e = Expr::load(Type::i32(), "hist", Expr::i32(3), None) + Expr::i32(1);
/// assert!(expr_loads_from(&e, "hist") && !expr_loads_from(&e, "other"));
/// ```
pub fn expr_loads_from(e: &Expr, buffer: &str) -> bool {
    fn walk(e: &Expr, buffer: &str, seen: &mut HashSet<*const ExprNode>) -> bool {
        stack::guard(|| {
            if !seen.insert(e.ptr()) {
                return false;
            }
            if let ExprKind::Load { buffer: b, .. } = e.kind() {
                if &**b == buffer {
                    return true;
                }
            }
            let mut found = false;
            e.for_each_child(|c| found = found || walk(c, buffer, seen));
            found
        })
    }
    walk(e, buffer, &mut HashSet::new())
}

/// True if the variable `name` occurs free in (an expression of) `s`.
pub fn stmt_uses_var(s: &Stmt, name: &str) -> bool {
    let mut seen = HashSet::new();
    stmt_uses(s, name, &mut seen)
}

fn stmt_uses(s: &Stmt, name: &str, seen: &mut HashSet<*const ExprNode>) -> bool {
    struct V<'a, 'b> {
        name: &'a str,
        seen: &'b mut HashSet<*const ExprNode>,
        found: bool,
    }
    impl Visitor for V<'_, '_> {
        fn visit_expr(&mut self, e: &Expr) {
            self.found = self.found || uses(e, &|n| &**n == self.name, self.seen);
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            stack::guard(|| {
                if self.found {
                    return;
                }
                match s {
                    Stmt::LetStmt { name, value, body } => {
                        self.visit_expr(value);
                        if &**name != self.name {
                            self.visit_stmt(body);
                        }
                    }
                    Stmt::For { name, min, extent, body, .. } => {
                        self.visit_expr(min);
                        self.visit_expr(extent);
                        if &**name != self.name {
                            self.visit_stmt(body);
                        }
                    }
                    _ => walk_stmt(self, s),
                }
            })
        }
    }
    let mut v = V { name, seen, found: false };
    v.visit_stmt(s);
    v.found
}

/// The variables a statement uses, a superset of those it uses before binding them (the
/// names it binds itself may be among them): enough to decide which enclosing lets it
/// may depend on.
///
/// ```
/// use halogen::analysis::stmt_free_vars;
/// use halogen::ir::{Expr, Stmt, Type};
/// let s = Stmt::Evaluate(Expr::add(Expr::var(Type::i32(), "x"), Expr::i32(1)));
/// assert!(stmt_free_vars(&s).contains("x"));
/// ```
pub fn stmt_free_vars(s: &Stmt) -> HashSet<Name> {
    struct V(HashSet<Name>);
    impl Visitor for V {
        fn visit_expr(&mut self, e: &Expr) {
            self.0.extend(free_vars(e));
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            walk_stmt(self, s)
        }
    }
    let mut v = V(HashSet::new());
    v.visit_stmt(s);
    v.0
}

/// The variables occurring free in `e`, each once, in order of first occurrence
/// (parameters included: they are variables too).
pub fn free_vars(e: &Expr) -> Vec<Name> {
    let mut memo: HashMap<*const ExprNode, (Expr, std::rc::Rc<Vec<Name>>)> = HashMap::new();
    free(e, &mut memo).to_vec()
}

type FreeMemo = HashMap<*const ExprNode, (Expr, std::rc::Rc<Vec<Name>>)>;

fn free(e: &Expr, memo: &mut FreeMemo) -> std::rc::Rc<Vec<Name>> {
    stack::guard(|| {
        if let Some((_, r)) = memo.get(&e.ptr()) {
            return r.clone();
        }
        let mut out: Vec<Name> = Vec::new();
        let push_all = |out: &mut Vec<Name>, vs: &[Name], except: Option<&Name>| {
            for v in vs {
                if Some(v) != except && !out.contains(v) {
                    out.push(v.clone());
                }
            }
        };
        match e.kind() {
            ExprKind::Var { name, .. } => out.push(name.clone()),
            ExprKind::Let { name, value, body } => {
                let v = free(value, memo);
                push_all(&mut out, &v, None);
                let b = free(body, memo);
                push_all(&mut out, &b, Some(name));
            }
            _ => {
                let mut children = Vec::new();
                e.for_each_child(|c| children.push(c.clone()));
                for c in &children {
                    let f = free(c, memo);
                    push_all(&mut out, &f, None);
                }
            }
        }
        let r = std::rc::Rc::new(out);
        memo.insert(e.ptr(), (e.clone(), r.clone()));
        r
    })
}

/// True if some `Let` in `e` binds one of `names` (inlining an expression that mentions
/// them there would capture).
pub(crate) fn expr_binds_any(e: &Expr, names: &[Name]) -> bool {
    if names.is_empty() {
        return false;
    }
    let mut seen = HashSet::new();
    binds(e, names, &mut seen)
}

fn binds(e: &Expr, names: &[Name], seen: &mut HashSet<*const ExprNode>) -> bool {
    if !seen.insert(e.ptr()) {
        return false;
    }
    if let ExprKind::Let { name, .. } = e.kind() {
        if names.contains(name) {
            return true;
        }
    }
    let mut found = false;
    e.for_each_child(|c| found = found || binds(c, names, seen));
    found
}

/// True if some binder (`LetStmt`, `For`, or `Let` inside an expression) of `s` binds
/// one of `names`.
pub(crate) fn stmt_binds_any(s: &Stmt, names: &[Name]) -> bool {
    if names.is_empty() {
        return false;
    }
    let mut seen = HashSet::new();
    stmt_binds(s, names, &mut seen)
}

fn stmt_binds(s: &Stmt, names: &[Name], seen: &mut HashSet<*const ExprNode>) -> bool {
    struct V<'a, 'b> {
        names: &'a [Name],
        seen: &'b mut HashSet<*const ExprNode>,
        found: bool,
    }
    impl Visitor for V<'_, '_> {
        fn visit_expr(&mut self, e: &Expr) {
            self.found = self.found || binds(e, self.names, self.seen);
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if self.found {
                return;
            }
            if let Stmt::LetStmt { name, .. } | Stmt::For { name, .. } = s {
                if self.names.contains(name) {
                    self.found = true;
                    return;
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut v = V { names, seen, found: false };
    v.visit_stmt(s);
    v.found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ForKind, Type};

    fn v(n: &str) -> Expr {
        Expr::var(Type::i32(), n)
    }

    #[test]
    fn replaces_free_uses() {
        let e = Expr::add(v("x"), Expr::mul(v("x"), v("y")));
        let r = substitute("x", &Expr::i32(3), &e);
        assert_eq!(r, Expr::add(Expr::i32(3), Expr::mul(Expr::i32(3), v("y"))));
        assert!(!expr_uses_var(&r, "x"));
        assert!(expr_uses_var(&r, "y"));
    }

    #[test]
    fn respects_shadowing() {
        // let x = x + 1 in x * 2: only the value's x is free.
        let e = Expr::let_in("x", Expr::add(v("x"), Expr::i32(1)), Expr::mul(v("x"), Expr::i32(2)));
        let r = substitute("x", &v("z"), &e);
        assert_eq!(r, Expr::let_in("x", Expr::add(v("z"), Expr::i32(1)), Expr::mul(v("x"), Expr::i32(2))));
        assert_eq!(free_vars(&e), vec![Name::from("x")]);
        assert_eq!(free_vars(&Expr::let_in("x", Expr::i32(1), v("x"))), Vec::<Name>::new());
    }

    #[test]
    fn avoids_capture() {
        // let y = 2 in x + y, with x := y: the binder is renamed.
        let e = Expr::let_in("y", Expr::i32(2), Expr::add(v("x"), v("y")));
        let r = substitute("x", &v("y"), &e);
        let ExprKind::Let { name, body, .. } = r.kind() else { panic!("{r}") };
        assert_ne!(&**name, "y");
        assert_eq!(*body, Expr::add(v("y"), Expr::var(Type::i32(), name.clone())));
    }

    #[test]
    fn stmt_shadowing_and_capture() {
        let store = |e: Expr| Stmt::Store { buffer: "b".into(), value: e, index: v("i"), predicate: None };
        let s = Stmt::block(vec![
            store(v("x")),
            Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), ForKind::Serial, store(v("x"))),
            Stmt::for_loop("i", Expr::i32(0), Expr::i32(4), ForKind::Serial, store(v("x"))),
        ]);
        let r = substitute_in_stmt("x", &v("i"), &s);
        let Stmt::Block(v3) = &r else { panic!() };
        assert_eq!(v3[0], store(v("i")));
        // Shadowed by the loop over x.
        assert_eq!(v3[1], s_block_item(&s, 1));
        // The loop over i would capture the replacement: renamed.
        let Stmt::For { name, body, .. } = &v3[2] else { panic!() };
        assert_ne!(&**name, "i");
        assert!(stmt_uses_var(body, "i") && stmt_uses_var(body, name));
        assert!(stmt_uses_var(&s, "x"));
        assert!(!stmt_uses_var(&Stmt::for_loop("x", Expr::i32(0), Expr::i32(4), ForKind::Serial, store(v("x"))), "x"));
    }

    fn s_block_item(s: &Stmt, i: usize) -> Stmt {
        match s {
            Stmt::Block(v) => v[i].clone(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn dags_stay_small() {
        // e_{k+1} = e_k + e_k: 2^60 nodes as a tree, 61 as a DAG.
        let mut e = v("x");
        for _ in 0..60 {
            e = Expr::add(e.clone(), e.clone());
        }
        let r = substitute("x", &v("y"), &e);
        assert!(expr_uses_var(&r, "y") && !expr_uses_var(&r, "x"));
        assert_eq!(free_vars(&r), vec![Name::from("y")]);
    }
}
