//! Loop kinds a target cannot run: GPU block and thread loops need a GPU feature
//! (`opencl`, `cuda`), distributed loops need `mpi`. A loop of such a kind is a user error
//! naming the Func and the directive, never a serial loop in disguise.
//!
//! This runs right after the loop nest is built, so the error comes before any other work
//! (Halide checks its GPU schedules at the same point). Which back end then runs a loop of
//! an accepted kind is the back end registry's business ([`crate::backend::select`]).

use crate::error::{Error, Result};
use crate::ir::visit::{walk_stmt, Visitor};
use crate::ir::{ForKind, Stmt};
use crate::target::{Feature, Target};

/// A loop of a kind that needs a target feature, as the user scheduled it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledLoop {
    /// The Func whose loop it is.
    pub func: String,
    /// The loop variable as the user named it.
    pub var: String,
    /// The loop's kind.
    pub kind: ForKind,
}

impl ScheduledLoop {
    /// The schedule directive that makes a loop of this kind (Halide's names).
    ///
    /// ```
    /// use halogen::ir::ForKind;
    /// use halogen::lower::loop_kinds::ScheduledLoop;
    /// let l = ScheduledLoop { func: "f".into(), var: "x".into(), kind: ForKind::GpuBlock };
    /// assert_eq!(l.directive(), "gpu_blocks(x)");
    /// ```
    pub fn directive(&self) -> String {
        let word = match self.kind {
            ForKind::GpuBlock => "gpu_blocks",
            ForKind::GpuThread => "gpu_threads",
            ForKind::Distributed => "distribute",
            ForKind::Parallel => "parallel",
            ForKind::Vectorized => "vectorize",
            ForKind::Unrolled => "unroll",
            ForKind::Serial => "serial",
        };
        format!("{word}({})", self.var)
    }
}

/// Splits a loop name `f.s0.x.xi` into the Func `f` and the user's variable `xi` (a split
/// loop's name carries the names of the loops it was split from).
pub(crate) fn split_loop_name(name: &str) -> (String, String) {
    let bytes = name.as_bytes();
    // The last `.s<digits>.` separates the Func's name from the stage's variables.
    for start in (0..name.len()).rev() {
        if bytes[start] != b'.' || bytes.get(start + 1) != Some(&b's') {
            continue;
        }
        let digits = bytes[start + 2..].iter().take_while(|b| b.is_ascii_digit()).count();
        let end = start + 2 + digits;
        if digits > 0 && bytes.get(end) == Some(&b'.') {
            let var = name[end + 1..].rsplit('.').next().unwrap_or_default();
            return (name[..start].to_string(), var.to_string());
        }
    }
    (name.to_string(), name.to_string())
}

/// Every loop of `s` whose kind satisfies `pick`, outermost first.
///
/// ```
/// use halogen::ir::{ForKind, Stmt};
/// use halogen::lower::loop_kinds::loops_of_kind;
/// use halogen::Expr;
/// let body = Stmt::Evaluate(Expr::i32(0));
/// let s = Stmt::for_loop("f.s0.x", Expr::i32(0), Expr::i32(8), ForKind::GpuThread, body);
/// let found = loops_of_kind(&s, |k| k == ForKind::GpuThread);
/// assert_eq!((found[0].func.as_str(), found[0].var.as_str()), ("f", "x"));
/// ```
pub fn loops_of_kind(s: &Stmt, pick: impl Fn(ForKind) -> bool) -> Vec<ScheduledLoop> {
    struct Find<F> {
        pick: F,
        found: Vec<ScheduledLoop>,
    }
    impl<F: Fn(ForKind) -> bool> Visitor for Find<F> {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let Stmt::For { name, kind, .. } = s {
                if (self.pick)(*kind) {
                    let (func, var) = split_loop_name(name);
                    self.found.push(ScheduledLoop { func, var, kind: *kind });
                }
            }
            walk_stmt(self, s)
        }
    }
    let mut v = Find { pick, found: Vec::new() };
    v.visit_stmt(s);
    v.found
}

/// Every loop whose kind satisfies `pick` inside a GPU loop, with the innermost GPU loop
/// around it.
fn inside_gpu_loop(s: &Stmt, pick: &dyn Fn(ForKind) -> bool) -> Vec<(ScheduledLoop, ScheduledLoop)> {
    struct Find<'a> {
        pick: &'a dyn Fn(ForKind) -> bool,
        gpu: Vec<ScheduledLoop>,
        found: Vec<(ScheduledLoop, ScheduledLoop)>,
    }
    impl Visitor for Find<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            let Stmt::For { name, kind, .. } = s else { return walk_stmt(self, s) };
            let (func, var) = split_loop_name(name);
            let l = ScheduledLoop { func, var, kind: *kind };
            if (self.pick)(*kind) {
                if let Some(g) = self.gpu.last() {
                    self.found.push((l.clone(), g.clone()));
                }
            }
            let gpu = is_gpu_loop(*kind);
            if gpu {
                self.gpu.push(l);
            }
            walk_stmt(self, s);
            if gpu {
                self.gpu.pop();
            }
        }
    }
    let mut f = Find { pick, gpu: Vec::new(), found: Vec::new() };
    f.visit_stmt(s);
    f.found
}

/// Whether a loop of kind `k` runs on a GPU.
pub fn is_gpu_loop(k: ForKind) -> bool {
    matches!(k, ForKind::GpuBlock | ForKind::GpuThread)
}

/// Rejects loops whose kind `target` has no feature for.
pub fn check_loop_kinds(s: &Stmt, target: &Target) -> Result<()> {
    if !target.has_gpu_feature() {
        if let Some(l) = loops_of_kind(s, is_gpu_loop).first() {
            return Err(Error::Schedule(format!(
                "Func '{}': {} needs a GPU target, but target '{target}' has no GPU feature; \
                 compile for 'host-opencl' or 'host-cuda'",
                l.func,
                l.directive()
            )));
        }
    }
    if let Some((inner, outer)) = inside_gpu_loop(s, &|k| matches!(k, ForKind::Vectorized | ForKind::Parallel)).first()
    {
        return Err(Error::Schedule(format!(
            "Func '{}': {} is inside the GPU loop {} of Func '{}'; a GPU kernel runs its threads' loops serially \
             (vectorize or parallelize loops outside the GPU loops, or drop the directive)",
            inner.func,
            inner.directive(),
            outer.directive(),
            outer.func
        )));
    }
    if !target.has_feature(Feature::Mpi) {
        if let Some(l) = loops_of_kind(s, |k| k == ForKind::Distributed).first() {
            return Err(Error::Schedule(format!(
                "Func '{}': {} needs a distributed target, but target '{target}' has no 'mpi' feature; \
                 compile for '{target}-mpi'",
                l.func,
                l.directive()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Expr;

    #[test]
    fn loop_names_split_at_the_last_stage_marker() {
        assert_eq!(split_loop_name("f.s0.x"), ("f".into(), "x".into()));
        assert_eq!(split_loop_name("blur.s12.x.xi"), ("blur".into(), "xi".into()));
        assert_eq!(split_loop_name("a.sb.s1.y"), ("a.sb".into(), "y".into()));
        assert_eq!(split_loop_name("plain"), ("plain".into(), "plain".into()));
    }

    #[test]
    fn kinds_are_checked_against_features() {
        let body = Stmt::Evaluate(Expr::i32(0));
        let gpu = Stmt::for_loop("g.s0.x", Expr::i32(0), Expr::i32(4), ForKind::GpuBlock, body.clone());
        let e = check_loop_kinds(&gpu, &Target::host()).unwrap_err().to_string();
        assert!(e.contains("Func 'g': gpu_blocks(x) needs a GPU target") && e.contains("'host'"), "{e}");
        assert!(check_loop_kinds(&gpu, &"host-opencl".parse().unwrap()).is_ok());
        let dist = Stmt::for_loop("d.s1.y", Expr::i32(0), Expr::i32(4), ForKind::Distributed, body);
        let e = check_loop_kinds(&dist, &Target::interp()).unwrap_err().to_string();
        assert!(e.contains("Func 'd': distribute(y)") && e.contains("'interp-mpi'"), "{e}");
        assert!(check_loop_kinds(&dist, &"host-mpi".parse().unwrap()).is_ok());
    }
}
