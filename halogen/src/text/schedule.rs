//! The directives of a `schedule NAME { ... }` block: checked for their names and
//! arguments when the file is read, applied to the Funcs when the schedule is chosen.

use super::pipeline::TextPipeline;
use super::{Pos, TextError};
use crate::lang::func::Func;
use crate::lang::func::Stage;
use crate::lang::var::Var;
use crate::lang::var::{RVar, VarOrRVar};
use crate::schedule::TailStrategy;

/// One argument of a directive.
#[derive(Clone, Debug)]
pub(super) enum Arg {
    Int(i64, Pos),
    /// A loop variable by name (pure, or made by a split).
    Name(String, Pos),
    RVar(RVar, Pos),
    /// A Func, by its name in the file.
    Func(Func, Pos),
}

impl Arg {
    fn pos(&self) -> Pos {
        match self {
            Arg::Int(_, p) | Arg::Name(_, p) | Arg::RVar(_, p) | Arg::Func(_, p) => *p,
        }
    }
}

/// What each directive takes: `v` a loop variable, `f` a Func, `n` an integer, `t` a tail
/// strategy, `*` any number of loop variables (at least one).
const SIGNATURES: &[(&str, &[&str])] = &[
    ("compute_root", &[""]),
    ("compute_rank", &[""]),
    ("compute_inline", &[""]),
    ("store_root", &[""]),
    ("compute_at", &["fv"]),
    ("compute_with", &["fv"]),
    ("store_at", &["fv"]),
    ("split", &["vvvn", "vvvnt"]),
    ("tile", &["vvvvnn", "vvvvvvnn"]),
    ("fuse", &["vvv"]),
    ("reorder", &["*"]),
    ("reorder_storage", &["*"]),
    // With a task size, Halide's `parallel(v, task_size)` (the Rust API's `parallel_tasks`).
    ("parallel", &["v", "vn"]),
    ("parallel_tasks", &["vn"]),
    ("vectorize", &["vn"]),
    ("unroll", &["vn"]),
    ("unroll_full", &["v"]),
    ("bound", &["vnn"]),
    ("gpu_blocks", &["v"]),
    ("gpu_threads", &["v"]),
    // 1-D, 2-D and 3-D: the dimensions, the block loops, the thread loops, the tile sizes.
    ("gpu_tile", &["vvvn", "vvvvvvnn", "vvvvvvvvvnnn"]),
    // The Rust API's name of the 1-D form, as auto-schedules print it.
    ("gpu_tile_1d", &["vvvn"]),
    ("atomic", &[""]),
    ("gpu_single_thread", &[""]),
    // Over one, two or three loops (a grid of ranks).
    ("distribute", &["v", "vv", "vvv"]),
];

/// Only updates have these.
const UPDATE_ONLY: &[&str] = &["atomic"];

/// Only the pure stage has these.
const FUNC_ONLY: &[&str] = &[
    "compute_root",
    "compute_rank",
    "compute_inline",
    "store_root",
    "compute_at",
    "compute_with",
    "store_at",
    "reorder_storage",
    "bound",
];

/// One directive on one stage of a Func.
#[derive(Clone, Debug)]
pub(super) struct Directive {
    func: String,
    /// `None` for the pure stage, `Some(n)` for update `n`.
    stage: Option<usize>,
    method: String,
    args: Vec<Arg>,
    pos: Pos,
}

fn kind_matches(k: char, a: &Arg) -> bool {
    match k {
        'v' => matches!(a, Arg::Name(..) | Arg::RVar(..)),
        'f' => matches!(a, Arg::Func(..)),
        'n' => matches!(a, Arg::Int(..)),
        't' => matches!(a, Arg::Name(n, _) if tail(n).is_some()),
        _ => false,
    }
}

fn tail(name: &str) -> Option<TailStrategy> {
    Some(match name {
        "auto" => TailStrategy::Auto,
        "round_up" => TailStrategy::RoundUp,
        "guard_with_if" => TailStrategy::GuardWithIf,
        "shift_inwards" => TailStrategy::ShiftInwards,
        _ => return None,
    })
}

fn describe(sig: &str) -> String {
    if sig == "*" {
        return "loop variables".into();
    }
    if sig.is_empty() {
        return "nothing".into();
    }
    let words: Vec<&str> = sig
        .chars()
        .map(|k| match k {
            'v' => "a loop variable",
            'f' => "a Func",
            'n' => "an integer",
            _ => "a tail strategy (round_up, guard_with_if, shift_inwards)",
        })
        .collect();
    words.join(", ")
}

impl Directive {
    /// Checks the directive's name and arguments.
    pub(super) fn new(
        func: &str,
        stage: Option<usize>,
        method: &str,
        args: Vec<Arg>,
        pos: Pos,
    ) -> Result<Directive, TextError> {
        let Some((_, sigs)) = SIGNATURES.iter().find(|(m, _)| *m == method) else {
            let all: Vec<&str> = SIGNATURES.iter().map(|(m, _)| *m).collect();
            return Err(TextError::at(
                pos,
                format!("unknown directive '{method}'; the directives are {}", all.join(", ")),
            ));
        };
        if stage.is_some() && FUNC_ONLY.contains(&method) {
            return Err(TextError::at(pos, format!("{method} applies to a Func, not to one of its updates")));
        }
        if stage.is_none() && UPDATE_ONLY.contains(&method) {
            return Err(TextError::at(
                pos,
                format!("{method} applies to an update (f.update(n).{method}()), not to a Func"),
            ));
        }
        let fits = sigs.iter().any(|sig| {
            if *sig == "*" {
                !args.is_empty() && args.iter().all(|a| kind_matches('v', a))
            } else {
                sig.len() == args.len() && sig.chars().zip(&args).all(|(k, a)| kind_matches(k, a))
            }
        });
        if !fits {
            let forms: Vec<String> = sigs.iter().map(|s| describe(s)).collect();
            return Err(TextError::at(pos, format!("{method} takes {}", forms.join(", or "))));
        }
        Ok(Directive { func: func.to_string(), stage, method: method.to_string(), args, pos })
    }

    /// Applies the directive to the Funcs of `p`; a mistake the library finds is an error
    /// at the directive.
    pub(super) fn apply(&self, p: &TextPipeline) -> Result<(), TextError> {
        let f = p.func(&self.func).ok_or_else(|| TextError::at(self.pos, format!("no Func '{}'", self.func)))?;
        let before = f.func_ref().lock().errors.len();
        self.call(f)?;
        let mut d = f.func_ref().lock();
        if d.errors.len() > before {
            let e = d.errors.remove(before);
            d.errors.truncate(before);
            return Err(TextError::from_library(self.pos, &e));
        }
        Ok(())
    }

    fn call(&self, f: &Func) -> Result<(), TextError> {
        let a = &self.args;
        let v = |i: usize| -> VarOrRVar {
            match &a[i] {
                Arg::RVar(r, _) => (*r).into(),
                Arg::Name(n, _) => Var::new(n).into(),
                _ => unreachable!("checked by Directive::new"),
            }
        };
        let n = |i: usize| -> Result<i32, TextError> {
            match &a[i] {
                Arg::Int(v, p) => {
                    i32::try_from(*v).map_err(|_| TextError::at(*p, format!("{v} does not fit in 32 bits")))
                }
                _ => unreachable!("checked by Directive::new"),
            }
        };
        let pure_var = |i: usize| -> Result<Var, TextError> {
            match &a[i] {
                Arg::Name(n, _) => Ok(Var::new(n)),
                other => Err(TextError::at(other.pos(), "expected a pure variable")),
            }
        };
        let func = |i: usize| -> &Func {
            match &a[i] {
                Arg::Func(f, _) => f,
                _ => unreachable!("checked by Directive::new"),
            }
        };
        match self.method.as_str() {
            "compute_root" => {
                f.compute_root();
            }
            "compute_rank" => {
                f.compute_rank();
            }
            "compute_inline" => {
                f.compute_inline();
            }
            "store_root" => {
                f.store_root();
            }
            "compute_at" => {
                f.compute_at(func(0), v(1));
            }
            "compute_with" => {
                f.compute_with(func(0), v(1));
            }
            "store_at" => {
                f.store_at(func(0), v(1));
            }
            "bound" => {
                f.bound(pure_var(0)?, n(1)?, n(2)?);
            }
            "reorder_storage" => {
                let vars = (0..a.len()).map(pure_var).collect::<Result<Vec<_>, _>>()?;
                f.reorder_storage(&vars);
            }
            _ => self.call_stage(&self.stage(f), &v, &n)?,
        }
        Ok(())
    }

    fn stage(&self, f: &Func) -> Stage {
        match self.stage {
            None => f.pure_stage(),
            Some(k) => f.update_stage(k),
        }
    }

    fn call_stage(
        &self,
        s: &Stage,
        v: &dyn Fn(usize) -> VarOrRVar,
        n: &dyn Fn(usize) -> Result<i32, TextError>,
    ) -> Result<(), TextError> {
        let a = &self.args;
        match self.method.as_str() {
            "split" => match a.get(4) {
                Some(Arg::Name(t, _)) => {
                    s.split_with(v(0), v(1), v(2), n(3)?, tail(t).expect("checked by Directive::new"));
                }
                _ => {
                    s.split(v(0), v(1), v(2), n(3)?);
                }
            },
            "tile" if a.len() == 6 => {
                s.tile(v(0), v(1), v(2), v(3), n(4)?, n(5)?);
            }
            "tile" => {
                s.tile_named(v(0), v(1), v(2), v(3), v(4), v(5), n(6)?, n(7)?);
            }
            "fuse" => {
                s.fuse(v(0), v(1), v(2));
            }
            "reorder" => {
                let vars: Vec<VarOrRVar> = (0..a.len()).map(v).collect();
                s.reorder(&vars);
            }
            "parallel" if a.len() == 1 => {
                s.parallel(v(0));
            }
            "parallel" | "parallel_tasks" => {
                s.parallel_tasks(v(0), n(1)?);
            }
            "vectorize" => {
                s.vectorize(v(0), n(1)?);
            }
            "unroll" => {
                s.unroll(v(0), n(1)?);
            }
            "unroll_full" => {
                s.unroll_full(v(0));
            }
            "gpu_blocks" => {
                s.gpu_blocks(v(0));
            }
            "gpu_threads" => {
                s.gpu_threads(v(0));
            }
            "gpu_tile" | "gpu_tile_1d" if a.len() == 4 => {
                s.gpu_tile_1d(v(0), v(1), v(2), n(3)?);
            }
            "gpu_tile" if a.len() == 8 => {
                s.gpu_tile(v(0), v(1), v(2), v(3), v(4), v(5), n(6)?, n(7)?);
            }
            "gpu_tile" => {
                s.gpu_tile_3d([v(0), v(1), v(2)], [v(3), v(4), v(5)], [v(6), v(7), v(8)], [n(9)?, n(10)?, n(11)?]);
            }
            "gpu_single_thread" => {
                s.gpu_single_thread();
            }
            "distribute" => {
                for i in 0..a.len() {
                    s.distribute(v(i));
                }
            }
            "atomic" => {
                s.atomic();
            }
            other => unreachable!("directive '{other}' is checked by Directive::new"),
        }
        Ok(())
    }
}
