//! The generator of the pipeline fuzzer (`tests/fuzz_pipelines.rs`).
//!
//! A [`Case`] is drawn from one 64-bit seed: a random pipeline of `random_pipeline`, read
//! through a random boundary condition (or none); a random schedule of directives on random
//! loops of random stages, legal or not (odd and huge factors, wrong loop names, compute_at
//! at levels that do not exist or are not legal, `bound`s that do not hold, ...); a random
//! output and input buffer (mins near the ±2^30 coordinate limit and near `i32::MIN`/`MAX`,
//! empty, odd and too small extents, wrong element types and dimension counts); and now and
//! then a mistake at the API level (a missing binding, a call with the wrong number of
//! arguments, a call of an undefined Func, no or two outputs).
//!
//! [`run`] builds and runs a case on one target, [`judge`] says whether the outcomes on the
//! targets disagree (or one of them is a bug whatever the others do), and [`shrink`] drops
//! what a finding does not need.

use super::random_pipeline::{self as rp, InputBoundary, StageKind, StageMix};
use halogen::prelude::*;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::fmt;

/// SplitMix64: small, fast and the same everywhere, so a seed names a case for good.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// A value in `lo..hi` (`lo < hi`).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo) as u64) as i64
    }

    /// True with probability `p` percent.
    pub fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    /// An index drawn with the given weights.
    pub fn weighted(&mut self, weights: &[usize]) -> usize {
        let mut r = self.below(weights.iter().sum());
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        unreachable!()
    }
}

/// The element type of a buffer (the pipelines compute `int32`; others are mistakes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    I32,
    U8,
    U16,
    F32,
}

/// A buffer to make: element type, mins and extents (as many as it has dimensions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufSpec {
    pub elem: Elem,
    pub mins: Vec<i32>,
    pub extents: Vec<i32>,
}

/// How the output is made from the last stage, and the mistakes made doing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// The last stage is the output.
    Plain,
    /// The output calls the last stage with one argument instead of two.
    CallWithOneArg,
    /// ... with three.
    CallWithThreeArgs,
    /// The output adds a Func that is never defined.
    CallUndefined,
    /// A pipeline of no outputs.
    NoOutputs,
    /// Two outputs, the last two stages (realize computes one).
    TwoOutputs,
    /// The output is the last stage times an `i32` Param, bound to the value or not bound.
    ScaledByParam(Option<i32>),
}

/// How a directive's stage is named: 0 is the pure definition, `k` is `update_stage(k - 1)`
/// (which may not exist).
pub type StageIndex = usize;

/// One scheduling directive; `f` and `at` index the Funcs of the pipeline (0 is the input's
/// boundary Func), loop names are as the user writes them (`r.x` names the x of the stage's
/// reduction domain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Directive {
    Split { f: usize, stage: StageIndex, var: String, outer: String, inner: String, factor: i32, tail: Tail },
    Tile { f: usize, stage: StageIndex, x: String, y: String, xi: String, yi: String, w: i32, h: i32 },
    Reorder { f: usize, stage: StageIndex, vars: Vec<String> },
    Vectorize { f: usize, stage: StageIndex, var: String, factor: i32 },
    Unroll { f: usize, stage: StageIndex, var: String, factor: i32 },
    UnrollFull { f: usize, stage: StageIndex, var: String },
    Parallel { f: usize, stage: StageIndex, var: String },
    Fuse { f: usize, stage: StageIndex, inner: String, outer: String, fused: String },
    ComputeRoot { f: usize },
    ComputeInline { f: usize },
    ComputeAt { f: usize, at: usize, var: String },
    StoreRoot { f: usize },
    StoreAt { f: usize, at: usize, var: String },
    Bound { f: usize, var: String, min: i32, extent: i32 },
    ReorderStorage { f: usize, vars: Vec<String> },
}

/// [`TailStrategy`], comparable and printable as code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tail {
    Auto,
    RoundUp,
    GuardWithIf,
    ShiftInwards,
}

impl From<Tail> for TailStrategy {
    fn from(t: Tail) -> TailStrategy {
        match t {
            Tail::Auto => TailStrategy::Auto,
            Tail::RoundUp => TailStrategy::RoundUp,
            Tail::GuardWithIf => TailStrategy::GuardWithIf,
            Tail::ShiftInwards => TailStrategy::ShiftInwards,
        }
    }
}

fn stage_prefix(f: usize, stage: StageIndex) -> String {
    if stage == 0 {
        format!("f{f}")
    } else {
        format!("f{f}.update_stage({})", stage - 1)
    }
}

/// As the call would be written (loop names stand for `Var`s / `RVar`s of those names).
impl fmt::Display for Directive {
    fn fmt(&self, o: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Directive::*;
        match self {
            Split { f, stage, var, outer, inner, factor, tail } => {
                write!(o, "{}.split_with({var}, {outer}, {inner}, {factor}, {tail:?})", stage_prefix(*f, *stage))
            }
            Tile { f, stage, x, y, xi, yi, w, h } => {
                write!(o, "{}.tile({x}, {y}, {xi}, {yi}, {w}, {h})", stage_prefix(*f, *stage))
            }
            Reorder { f, stage, vars } => write!(o, "{}.reorder(&[{}])", stage_prefix(*f, *stage), vars.join(", ")),
            Vectorize { f, stage, var, factor } => write!(o, "{}.vectorize({var}, {factor})", stage_prefix(*f, *stage)),
            Unroll { f, stage, var, factor } => write!(o, "{}.unroll({var}, {factor})", stage_prefix(*f, *stage)),
            UnrollFull { f, stage, var } => write!(o, "{}.unroll_full({var})", stage_prefix(*f, *stage)),
            Parallel { f, stage, var } => write!(o, "{}.parallel({var})", stage_prefix(*f, *stage)),
            Fuse { f, stage, inner, outer, fused } => {
                write!(o, "{}.fuse({inner}, {outer}, {fused})", stage_prefix(*f, *stage))
            }
            ComputeRoot { f } => write!(o, "f{f}.compute_root()"),
            ComputeInline { f } => write!(o, "f{f}.compute_inline()"),
            ComputeAt { f, at, var } => write!(o, "f{f}.compute_at(&f{at}, {var})"),
            StoreRoot { f } => write!(o, "f{f}.store_root()"),
            StoreAt { f, at, var } => write!(o, "f{f}.store_at(&f{at}, {var})"),
            Bound { f, var, min, extent } => write!(o, "f{f}.bound({var}, {min}, {extent})"),
            ReorderStorage { f, vars } => write!(o, "f{f}.reorder_storage(&[{}])", vars.join(", ")),
        }
    }
}

impl Directive {
    fn func(&self) -> usize {
        use Directive::*;
        match self {
            Split { f, .. }
            | Tile { f, .. }
            | Reorder { f, .. }
            | Vectorize { f, .. }
            | Unroll { f, .. }
            | UnrollFull { f, .. }
            | Parallel { f, .. }
            | Fuse { f, .. }
            | ComputeRoot { f }
            | ComputeInline { f }
            | ComputeAt { f, .. }
            | StoreRoot { f }
            | StoreAt { f, .. }
            | Bound { f, .. }
            | ReorderStorage { f, .. } => *f,
        }
    }
}

/// One fuzz case: everything needed to build and run it, drawn from `seed`.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub stages: Vec<StageKind>,
    pub boundary: InputBoundary,
    pub directives: Vec<Directive>,
    pub api: Api,
    pub output: BufSpec,
    /// `None`: the input is not bound.
    pub input: Option<BufSpec>,
    /// Input values spread over the whole `i32` range (so the arithmetic wraps).
    pub big_values: bool,
}

impl fmt::Display for Case {
    fn fmt(&self, o: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(o, "seed {:#x}", self.seed)?;
        writeln!(o, "stages (input boundary {:?}, f1.. in order): {:?}", self.boundary, self.stages)?;
        writeln!(o, "api {:?}; input values {}", self.api, if self.big_values { "big" } else { "small" })?;
        writeln!(o, "output {:?}", self.output)?;
        writeln!(o, "input {:?}", self.input)?;
        writeln!(o, "schedule ({} directives; f0 is the input's boundary Func):", self.directives.len())?;
        for d in &self.directives {
            writeln!(o, "    {d};")?;
        }
        Ok(())
    }
}

/// The loop names of stage `stage` of `f`, innermost first, as a case names them.
fn loops(f: &Func, stage: StageIndex) -> Vec<String> {
    let d = f.func_ref().lock();
    let def = if stage == 0 { d.pure.as_ref() } else { d.updates.get(stage - 1) };
    def.map(|def| def.schedule.dims.iter().map(|dim| canonical(&d.args, &dim.var)).collect()).unwrap_or_default()
}

/// The pure variables of `f`, as a case names them.
fn pure_args(f: &Func) -> Vec<String> {
    let d = f.func_ref().lock();
    d.args.iter().map(|a| canonical(&d.args, a)).collect()
}

fn update_count(f: &Func) -> usize {
    f.func_ref().lock().updates.len()
}

/// A loop name that prints the same in every process: in a unique name (one with a `$`),
/// the reduction variable `r$12.x` is `r.x`, the second pure variable `v$7` (of a boundary
/// condition) is `v.1`, and names made from them keep their suffix (`v.1_vi`).
fn canonical(args: &[halogen::ir::Name], name: &str) -> String {
    if !name.contains('$') {
        return name.to_string();
    }
    let arg = args.iter().enumerate().filter(|(_, a)| name.starts_with(&***a)).max_by_key(|(_, a)| a.len());
    if let Some((i, a)) = arg {
        return format!("v.{i}{}", &name[a.len()..]);
    }
    match (name.strip_prefix("r$"), name.find('.')) {
        (Some(_), Some(dot)) => format!("r{}", &name[dot..]),
        _ => name.to_string(),
    }
}

/// The loop variable of `f` a case names `name` (see [`canonical`]).
fn var_of(f: &Func, name: &str) -> Var {
    let d = f.func_ref().lock();
    if let Some(rest) = name.strip_prefix("v.") {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if let Some(a) = rest[..digits].parse::<usize>().ok().and_then(|i| d.args.get(i)) {
            return Var::new(&format!("{a}{}", &rest[digits..]));
        }
    }
    if let Some(rest) = name.strip_prefix("r.") {
        let suffix = format!(".{rest}");
        for def in &d.updates {
            if let Some(dim) = def.schedule.dims.iter().find(|dim| dim.is_rvar && dim.var.ends_with(&suffix)) {
                return Var::new(&dim.var);
            }
        }
        if let Some(r) = d.updates.iter().flat_map(|u| &u.schedule.dims).find(|dim| dim.var.starts_with("r$")) {
            let base = &r.var[..r.var.find('.').unwrap_or(r.var.len())];
            return Var::new(&format!("{base}{suffix}"));
        }
    }
    Var::new(name)
}

fn stage_of(f: &Func, stage: StageIndex) -> Stage {
    if stage == 0 {
        f.pure_stage()
    } else {
        f.update_stage(stage - 1)
    }
}

/// Gives directive `d` to the Funcs of `funcs`.
pub fn apply(funcs: &[Func], d: &Directive) {
    use Directive::*;
    let f = &funcs[d.func()];
    let v = |name: &str| var_of(f, name);
    let vs = |names: &[String]| names.iter().map(|n| v(n).into()).collect::<Vec<VarOrRVar>>();
    match d {
        Split { stage, var, outer, inner, factor, tail, .. } => {
            stage_of(f, *stage).split_with(v(var), v(outer), v(inner), *factor, (*tail).into());
        }
        Tile { stage, x, y, xi, yi, w, h, .. } => {
            stage_of(f, *stage).tile(v(x), v(y), v(xi), v(yi), *w, *h);
        }
        Reorder { stage, vars, .. } => {
            stage_of(f, *stage).reorder(&vs(vars));
        }
        Vectorize { stage, var, factor, .. } => {
            stage_of(f, *stage).vectorize(v(var), *factor);
        }
        Unroll { stage, var, factor, .. } => {
            stage_of(f, *stage).unroll(v(var), *factor);
        }
        UnrollFull { stage, var, .. } => {
            stage_of(f, *stage).unroll_full(v(var));
        }
        Parallel { stage, var, .. } => {
            stage_of(f, *stage).parallel(v(var));
        }
        Fuse { stage, inner, outer, fused, .. } => {
            stage_of(f, *stage).fuse(v(inner), v(outer), v(fused));
        }
        ComputeRoot { .. } => {
            f.compute_root();
        }
        ComputeInline { .. } => {
            f.compute_inline();
        }
        ComputeAt { at, var, .. } => {
            f.compute_at(&funcs[*at], var_of(&funcs[*at], var));
        }
        StoreRoot { .. } => {
            f.store_root();
        }
        StoreAt { at, var, .. } => {
            f.store_at(&funcs[*at], var_of(&funcs[*at], var));
        }
        Bound { var, min, extent, .. } => {
            f.bound(v(var), *min, *extent);
        }
        ReorderStorage { vars, .. } => {
            f.reorder_storage(&vars.iter().map(|n| v(n)).collect::<Vec<_>>());
        }
    }
}

/// Loop names that exist somewhere (or nowhere: `z`), for directives that name the wrong loop.
const ANY_NAMES: &[&str] = &["x", "y", "xo", "xi", "yo", "yi", "t", "x_vi", "y_ui", "z", "r.x", "r.y"];
/// Names for the loops a split or fuse makes.
const NEW_NAMES: &[&str] = &["xo", "xi", "yo", "yi", "t", "u", "w", "xio", "xii", "yio"];

fn split_factor(rng: &mut Rng) -> i32 {
    match rng.weighted(&[60, 25, 10, 3]) {
        0 => rng.range(1, 9) as i32,
        1 => rng.pick(&[1, 3, 5, 7, 9, 11, 13, 16, 17, 31, 32, 33]),
        2 => rng.pick(&[64, 100, 1000, 4096]),
        _ => rng.pick(&[0, -1, -7, i32::MIN]),
    }
}

/// A split's factor and tail strategy. A huge factor only comes for a stage not split yet
/// of a Func that is not an output (`first`), rounded up: the realization then needs the
/// whole factor, which is more than can be allocated, so the run errs. (Elsewhere a region
/// smaller than the factor is guarded, and a guarded loop of 2^30 iterations is correct
/// but runs for hours.)
fn split_with_tail(rng: &mut Rng, first: bool) -> (i32, Tail) {
    if first && rng.percent(5) {
        return (rng.pick(&[1 << 30, i32::MAX]), Tail::RoundUp);
    }
    let tail = rng.pick(&[Tail::Auto, Tail::Auto, Tail::RoundUp, Tail::GuardWithIf, Tail::ShiftInwards]);
    (split_factor(rng), tail)
}

/// The Funcs that call Func `f` directly (the output of mistakes aside).
fn consumers(stages: &[StageKind], f: usize) -> Vec<usize> {
    stages.iter().enumerate().filter(|(_, k)| k.sources().contains(&f)).map(|(i, _)| i + 1).collect()
}

/// Where each Func is computed and stored, legal (from the output backwards, as
/// `random_pipeline::apply_schedule` decides): inline, at root, or in a loop of its single
/// consumer when that one is realized and calls it from a loop of its own.
fn draw_levels(rng: &mut Rng, stages: &[StageKind], funcs: &[Func]) -> Vec<Directive> {
    use Directive::*;
    let n = funcs.len();
    let mut out = Vec::new();
    let mut realized = vec![false; n];
    realized[n - 1] = true;
    for f in (0..n - 1).rev() {
        let cons = consumers(stages, f);
        // A Sum calls its producer from an anonymous reduction, a Histogram from its update's
        // index: neither has a loop of its own to compute it in.
        let single = (cons.len() == 1
            && realized[cons[0]]
            && !matches!(stages[cons[0] - 1], StageKind::Sum { .. } | StageKind::Histogram { .. }))
        .then(|| cons[0]);
        match (rng.weighted(&[35, 25, 25, 7, 8]), single) {
            (0, _) => realized[f] = update_count(&funcs[f]) > 0,
            (1, _) | (_, None) => {
                out.push(ComputeRoot { f });
                realized[f] = true;
            }
            (choice, Some(at)) => {
                let stage = rng.below(update_count(&funcs[at]) + 1);
                let names = loops(&funcs[at], stage);
                let i = rng.below(names.len());
                out.push(ComputeAt { f, at, var: names[i].clone() });
                realized[f] = true;
                if choice == 3 {
                    out.push(StoreRoot { f });
                } else if choice == 4 && i + 1 < names.len() {
                    let var = names[rng.range(i as i64 + 1, names.len() as i64) as usize].clone();
                    out.push(StoreAt { f, at, var });
                }
            }
        }
    }
    out
}

/// Draws one directive for the Funcs of `funcs`, looking at their loops as they are now;
/// `mistakes` is the chance (percent) of naming a loop or a level at random. With
/// `loops_only`, a directive on loops (split, tile, vectorize, ...) only.
fn draw_directive(rng: &mut Rng, stages: &[StageKind], funcs: &[Func], mistakes: usize, loops_only: bool) -> Directive {
    let n = funcs.len();
    let f = rng.below(n);
    let updates = update_count(&funcs[f]);
    let stage = if updates > 0 && rng.percent(40) {
        rng.range(1, updates as i64 + 1) as usize
    } else if rng.percent(mistakes / 10) {
        updates + 1
    } else {
        0
    };
    let live = loops(&funcs[f], stage);
    let any_loop = |rng: &mut Rng| {
        if live.is_empty() || rng.percent(mistakes) {
            rng.pick(ANY_NAMES).to_string()
        } else {
            rng.pick(&live)
        }
    };
    let new_name = |rng: &mut Rng, live: &[String]| {
        if !live.is_empty() && rng.percent(mistakes / 2) {
            rng.pick(live)
        } else {
            // A fresh name most of the time: several splits on one stage need distinct ones.
            let fresh: Vec<&str> = NEW_NAMES.iter().copied().filter(|c| !live.iter().any(|l| l == c)).collect();
            rng.pick(if fresh.is_empty() { NEW_NAMES } else { &fresh }).to_string()
        }
    };
    // Where to compute: usually a loop of a Func that calls this one.
    let level = |rng: &mut Rng| {
        let cons = consumers(stages, f);
        let at = if cons.is_empty() || rng.percent(mistakes) { rng.below(n) } else { rng.pick(&cons) };
        let mut names: Vec<String> = (0..=update_count(&funcs[at])).flat_map(|s| loops(&funcs[at], s)).collect();
        names.dedup();
        let var =
            if names.is_empty() || rng.percent(mistakes) { rng.pick(ANY_NAMES).to_string() } else { rng.pick(&names) };
        (at, var)
    };
    use Directive::*;
    let weights: &[usize] = if loops_only {
        // unroll_full needs a constant extent, which only a mistake-prone case names at random.
        &[14, 8, 6, 10, 6, if mistakes > 0 { 2 } else { 0 }, 8, 5]
    } else {
        &[14, 8, 6, 10, 6, 2, 8, 5, 8, 3, 14, 4, 6, 4, 2]
    };
    match rng.weighted(weights) {
        0 => {
            let var = any_loop(rng);
            let outer = if rng.percent(50) { var.clone() } else { new_name(rng, &live) };
            let inner = new_name(rng, &live);
            let first = f + 1 < n && stage == 0 && live == pure_args(&funcs[f]);
            let (factor, tail) = split_with_tail(rng, first);
            Split { f, stage, var, outer, inner, factor, tail }
        }
        1 => {
            let (x, y) = if live.len() >= 2 && !rng.percent(mistakes) {
                let i = rng.below(live.len());
                let j = (i + 1 + rng.below(live.len() - 1)) % live.len();
                (live[i].clone(), live[j].clone())
            } else {
                (any_loop(rng), any_loop(rng))
            };
            let (xi, yi) = (new_name(rng, &live), new_name(rng, &live));
            // Tiles of at most 64 x 64: guarded tiles of 4096 x 1000 over a small region are
            // correct but take the interpreter minutes.
            let side = |rng: &mut Rng| if rng.percent(95) { split_factor(rng).min(64) } else { split_factor(rng) };
            let (w, h) = (side(rng), side(rng));
            Tile { f, stage, x, y, xi, yi, w, h }
        }
        2 => {
            let mut vars = live.clone();
            for i in (1..vars.len()).rev() {
                vars.swap(i, rng.below(i + 1));
            }
            vars.truncate(rng.range(1, vars.len().max(1) as i64 + 1) as usize);
            if vars.is_empty() || rng.percent(mistakes) {
                vars.push(any_loop(rng));
            }
            Reorder { f, stage, vars }
        }
        3 => {
            // Not wider than 64: C compilers take minutes over vectors of 1000 lanes.
            let factor = if rng.percent(3) { rng.pick(&[0, -4, 48, 64]) } else { rng.range(1, 33) as i32 };
            Vectorize { f, stage, var: any_loop(rng), factor }
        }
        4 => {
            let factor = if rng.percent(5) { rng.pick(&[0, 33, 100]) } else { rng.range(1, 9) as i32 };
            Unroll { f, stage, var: any_loop(rng), factor }
        }
        5 => UnrollFull { f, stage, var: any_loop(rng) },
        6 => Parallel { f, stage, var: any_loop(rng) },
        7 => {
            // Adjacent loops, inner first, unless a mistake is drawn.
            let (inner, outer) = if live.len() >= 2 && !rng.percent(mistakes) {
                let i = rng.below(live.len() - 1);
                (live[i].clone(), live[i + 1].clone())
            } else {
                (any_loop(rng), any_loop(rng))
            };
            let fused = new_name(rng, &live);
            Fuse { f, stage, inner, outer, fused }
        }
        8 => ComputeRoot { f },
        9 => ComputeInline { f },
        10 => {
            let (at, var) = level(rng);
            ComputeAt { f, at, var }
        }
        11 => StoreRoot { f },
        12 => {
            let (at, var) = level(rng);
            StoreAt { f, at, var }
        }
        13 => {
            let var = if rng.percent(90) { rng.pick(&pure_args(&funcs[f])) } else { any_loop(rng) };
            let min = if rng.percent(80) { rng.range(-8, 8) as i32 } else { coordinate(rng, true) };
            let extent = match rng.weighted(&[80, 10, 10]) {
                0 => rng.range(0, 40) as i32,
                1 => rng.pick(&[-1, -100, i32::MIN]),
                _ => rng.pick(&[1 << 16, 1 << 24, 1 << 30, i32::MAX]),
            };
            Bound { f, var, min, extent }
        }
        _ => {
            let mut vars = pure_args(&funcs[f]);
            vars.reverse();
            if rng.percent(mistakes) {
                vars[rng.below(2)] = any_loop(rng);
            }
            ReorderStorage { f, vars }
        }
    }
}

const LIMIT: i64 = 1 << 30;

/// A coordinate: mostly small; where `nasty`, often at or near the ±2^30 limit or the ends
/// of `i32`.
fn coordinate(rng: &mut Rng, nasty: bool) -> i32 {
    let weights: &[usize] = if nasty { &[40, 10, 15, 15, 5, 5, 10] } else { &[85, 15, 0, 0, 0, 0, 0] };
    let v = match rng.weighted(weights) {
        0 => rng.range(-8, 9),
        1 => rng.range(-100_000, 100_001),
        2 => LIMIT - rng.range(-2, 40),
        3 => -LIMIT + rng.range(-2, 40),
        4 => i32::MAX as i64 - rng.range(0, 40),
        5 => i32::MIN as i64 + rng.range(0, 40),
        _ => rng.pick(&[LIMIT, -LIMIT, LIMIT - 1, -LIMIT - 1, i32::MAX as i64, i32::MIN as i64]),
    };
    v as i32
}

fn extent(rng: &mut Rng) -> i32 {
    rng.pick(&[0, 1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 24, 31, 32, 33, 48, 64])
}

/// The output buffer: 2-D `int32` with at most 4096 elements, now and then one huge extent
/// beside an empty one; where `nasty`, sometimes a wrong element type or a wrong number of
/// dimensions.
fn output_spec(rng: &mut Rng, nasty: bool) -> BufSpec {
    let dims = if !nasty || rng.percent(90) { 2 } else { rng.pick(&[0, 1, 3]) };
    let elem = if !nasty || rng.percent(90) { Elem::I32 } else { rng.pick(&[Elem::U8, Elem::U16, Elem::F32]) };
    let mut extents: Vec<i32> = (0..dims).map(|_| extent(rng)).collect();
    while extents.iter().map(|&e| e as i64).product::<i64>() > 4096 {
        let d = rng.below(dims);
        extents[d] /= 2;
    }
    if dims >= 2 && rng.percent(3) {
        let d = rng.below(dims);
        // Not larger: producers of an empty region still compute a row or two of it.
        extents[d] = rng.range(1 << 13, 1 << 16) as i32;
        extents[(d + 1) % dims] = 0;
    }
    let mins = (0..dims).map(|d| placed(rng, extents[d], nasty)).collect();
    BufSpec { elem, mins, extents }
}

/// A min for a dimension of `extent`, moved (mostly) so that the buffer ends within `i32`: a
/// buffer that does not is an `Err` when it is made, the same on every target.
fn placed(rng: &mut Rng, extent: i32, nasty: bool) -> i32 {
    if rng.percent(if nasty { 20 } else { 3 }) {
        // Ending at the coordinate limit, give or take a few.
        return (LIMIT - extent as i64 + rng.range(-3, 2)) as i32;
    }
    let min = coordinate(rng, nasty);
    if min as i64 + extent as i64 - 1 > i32::MAX as i64 && rng.percent(90) {
        (i32::MAX as i64 - extent as i64 + 1) as i32
    } else {
        min
    }
}

/// The input: where the pipeline has a boundary condition, anywhere and of any (small)
/// size; without one, usually around the output (scaled for the down-sampling stages) and
/// sometimes too small or elsewhere; where `nasty`, sometimes not bound, empty, of the
/// wrong element type or number of dimensions.
fn input_spec(
    rng: &mut Rng,
    stages: &[StageKind],
    boundary: InputBoundary,
    out: &BufSpec,
    nasty: bool,
) -> Option<BufSpec> {
    if nasty && rng.percent(8) {
        return None;
    }
    let dims = if !nasty || rng.percent(90) { 2 } else { rng.pick(&[1, 3]) };
    let elem = if !nasty || rng.percent(90) { Elem::I32 } else { rng.pick(&[Elem::U8, Elem::U16, Elem::F32]) };
    let around = boundary == InputBoundary::Unbounded && out.extents.len() == dims && rng.percent(75);
    let (mins, extents) = if around {
        let downs = stages.iter().filter(|k| matches!(k, StageKind::Down { .. })).count().min(6) as u32;
        let scale = 1i64 << downs;
        let (mut mins, mut extents) = (Vec::new(), Vec::new());
        for d in 0..dims {
            let margin = rng.range(0, 3 * (downs as i64 + 1) + 3);
            let min = (out.mins[d] as i64 * scale - margin).clamp(i32::MIN as i64, i32::MAX as i64);
            let ext = (out.extents[d] as i64 * scale + 2 * margin + rng.range(0, 4)).min(512);
            mins.push(min as i32);
            extents.push(ext as i32);
        }
        (mins, extents)
    } else {
        let sizes: &[i32] = if nasty { &[0, 1, 2, 3, 5, 8, 12, 20, 33, 64] } else { &[1, 2, 3, 5, 8, 12, 20, 33, 64] };
        let extents: Vec<i32> = (0..dims).map(|_| rng.pick(sizes)).collect();
        (extents.iter().map(|&e| placed(rng, e, nasty)).collect(), extents)
    };
    Some(BufSpec { elem, mins, extents })
}

/// Draws the case of `seed`. Directives are drawn against a pipeline built on the way, so
/// most of them name loops that exist; the API calls this makes are part of the test (a
/// panic in them is a finding).
pub fn draw(seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let mut chacha = [0u8; 32];
    for c in chacha.chunks_mut(8) {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &chacha));
    let mix = StageMix { stencil_weight: rng.range(1, 5) as u32, lut: rng.percent(50), gather: rng.percent(50) };
    let n = rng.range(3, 9) as usize;
    let mut stages: Vec<StageKind> =
        rp::stage_kinds(n, mix).into_iter().map(|s| s.new_tree(&mut runner).expect("a stage kind").current()).collect();
    // An output whose update writes outside its region is a mistake, now and then.
    if !rng.percent(8) {
        rp::end_with_pure_stage(&mut stages);
    }
    let boundary = match rng.weighted(&[50, 8, 6, 6, 6, 24]) {
        0 => InputBoundary::RepeatEdge,
        1 => InputBoundary::ConstantExterior,
        2 => InputBoundary::MirrorImage,
        3 => InputBoundary::MirrorInterior,
        4 => InputBoundary::RepeatImage,
        _ => InputBoundary::Unbounded,
    };
    let b = rp::build_with(&stages, boundary);
    // Loop directives first, then where each Func goes (naming loops that now exist), then
    // anything at all where mistakes are drawn.
    let mistakes = rng.pick(&[0, 0, 0, 5, 15, 40]);
    let mut directives = Vec::new();
    for _ in 0..rng.pick(&[0, 1, 2, 3, 4, 6, 8]) {
        let d = draw_directive(&mut rng, &stages, &b.funcs, mistakes, true);
        apply(&b.funcs, &d);
        directives.push(d);
    }
    for d in draw_levels(&mut rng, &stages, &b.funcs) {
        apply(&b.funcs, &d);
        directives.push(d);
    }
    let extra = if mistakes == 0 { 0 } else { rng.pick(&[0, 1, 1, 2, 3]) };
    for _ in 0..extra {
        let d = draw_directive(&mut rng, &stages, &b.funcs, mistakes, false);
        apply(&b.funcs, &d);
        directives.push(d);
    }
    // Buffers and API calls with mistakes in them, in some cases.
    let nasty = rng.percent(30);
    let weights: &[usize] = if nasty { &[65, 5, 5, 5, 5, 5, 10] } else { &[95, 0, 0, 0, 0, 0, 5] };
    let api = match rng.weighted(weights) {
        0 => Api::Plain,
        1 => Api::CallWithOneArg,
        2 => Api::CallWithThreeArgs,
        3 => Api::CallUndefined,
        4 => Api::NoOutputs,
        5 => Api::TwoOutputs,
        _ => Api::ScaledByParam(if !nasty || rng.percent(50) { Some(rng.range(-3, 4) as i32) } else { None }),
    };
    let output = output_spec(&mut rng, nasty);
    let input = input_spec(&mut rng, &stages, boundary, &output, nasty);
    Case { seed, stages, boundary, directives, api, output, input, big_values: rng.percent(10) }
}

/// The value of the input at `rel`, its coordinates relative to the buffer's mins.
fn input_value(rel: &[i64], big: bool) -> i64 {
    let weights = [37, 11, 5];
    let h: i64 = rel.iter().zip(weights).map(|(r, w)| r * w).sum::<i64>() + rel.iter().take(2).product::<i64>();
    let v = h.rem_euclid(23) - 7;
    if big {
        v.wrapping_mul(97_000_003)
    } else {
        v
    }
}

fn make<T: Element>(spec: &BufSpec, big: bool, conv: impl Fn(i64) -> T) -> Result<Buffer<T>, Error> {
    let mut b = Buffer::<T>::try_with_min(&spec.mins, &spec.extents)?;
    let coords: Vec<Vec<i32>> = b.coords().collect();
    for (slot, c) in b.as_mut_slice().iter_mut().zip(coords) {
        let rel: Vec<i64> = c.iter().zip(&spec.mins).map(|(&c, &m)| c as i64 - m as i64).collect();
        *slot = conv(input_value(&rel, big));
    }
    Ok(b)
}

/// An input buffer of any of the element types.
enum AnyBuffer {
    I32(Buffer<i32>),
    U8(Buffer<u8>),
    U16(Buffer<u16>),
    F32(Buffer<f32>),
}

impl AnyBuffer {
    fn new(spec: &BufSpec, big: bool) -> Result<AnyBuffer, Error> {
        Ok(match spec.elem {
            Elem::I32 => AnyBuffer::I32(make(spec, big, |v| v as i32)?),
            Elem::U8 => AnyBuffer::U8(make(spec, big, |v| v as u8)?),
            Elem::U16 => AnyBuffer::U16(make(spec, big, |v| v as u16)?),
            Elem::F32 => AnyBuffer::F32(make(spec, big, |v| v as f32)?),
        })
    }

    fn bind<'a>(&'a self, args: &mut Args<'a>, p: &ImageParam) {
        match self {
            AnyBuffer::I32(b) => args.image(p, b),
            AnyBuffer::U8(b) => args.image(p, b),
            AnyBuffer::U16(b) => args.image(p, b),
            AnyBuffer::F32(b) => args.image(p, b),
        };
    }
}

fn realize_as<T: Element>(c: &Compiled, args: &Args<'_>, spec: &BufSpec) -> Result<Vec<u8>, Error> {
    let mut out = Buffer::<T>::try_with_min(&spec.mins, &spec.extents)?;
    c.realize(args, &mut out)?;
    Ok(bytemuck::cast_slice(out.as_slice()).to_vec())
}

/// Builds `case` (with its schedule when `scheduled`), compiles it for `target` and runs it:
/// the output's bytes, or the first `Err`.
pub fn run(case: &Case, target: &Target, scheduled: bool) -> Result<Vec<u8>, Error> {
    let b = rp::build_with(&case.stages, case.boundary);
    if scheduled {
        for d in &case.directives {
            apply(&b.funcs, d);
        }
    }
    let (x, y) = (Var::new("x"), Var::new("y"));
    let last = b.funcs.last().expect("at least one stage").clone();
    let gain = Param::<i32>::new("gain");
    let wrap = |name: &str, value: Expr| {
        let f = Func::new(name);
        f.def((x, y), value);
        vec![f]
    };
    let outputs: Vec<Func> = match case.api {
        Api::Plain => vec![last],
        Api::CallWithOneArg => wrap("one_arg", last.at(x)),
        Api::CallWithThreeArgs => wrap("three_args", last.at((x, y, x))),
        Api::CallUndefined => wrap("calls_undefined", last.at((x, y)) + Func::new("never_defined").at((x, y))),
        Api::NoOutputs => Vec::new(),
        Api::TwoOutputs => vec![last, b.funcs[b.funcs.len() - 2].clone()],
        Api::ScaledByParam(_) => wrap("scaled", last.at((x, y)) * gain.expr()),
    };
    let refs: Vec<&Func> = outputs.iter().collect();
    let compiled = Pipeline::new(&refs).compile(target)?;
    let input = case.input.as_ref().map(|s| AnyBuffer::new(s, case.big_values)).transpose()?;
    let mut args = Args::new();
    if let Some(i) = &input {
        i.bind(&mut args, &b.input);
    }
    if let Api::ScaledByParam(Some(v)) = case.api {
        args.param(&gain, v);
    }
    match case.output.elem {
        Elem::I32 => realize_as::<i32>(&compiled, &args, &case.output),
        Elem::U8 => realize_as::<u8>(&compiled, &args, &case.output),
        Elem::U16 => realize_as::<u16>(&compiled, &args, &case.output),
        Elem::F32 => realize_as::<f32>(&compiled, &args, &case.output),
    }
}

/// What one run came to: the output's bytes, an `Err`, or a panic's message.
pub type Outcome = Result<Result<Vec<u8>, Error>, String>;

/// [`run`], with a panic caught and returned as its message.
pub fn run_caught(case: &Case, target: &Target, scheduled: bool) -> Outcome {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(case, target, scheduled))).map_err(panic_message)
}

pub fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// A finding: a short kind (to count findings of one kind together) and what happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: String,
    pub detail: String,
}

fn finding(kind: &str, detail: String) -> Option<Finding> {
    Some(Finding { kind: kind.to_string(), detail })
}

fn describe(o: &Result<Vec<u8>, Error>) -> String {
    match o {
        Ok(bytes) => format!("Ok ({} bytes)", bytes.len()),
        Err(e) => format!("Err({e})"),
    }
}

fn variant(e: &Error) -> std::mem::Discriminant<Error> {
    std::mem::discriminant(e)
}

/// Whether the outcomes of one case break the property: `runs` holds each target's
/// outcome (the interpreter, the oracle, first), `reference` the interpreter's outcome of
/// the unscheduled pipeline (a legal schedule never changes the pixels).
///
/// - Nothing panics, and no target reports an internal error.
/// - The interpreter never meets an out-of-bounds load or store: the checks that come
///   before the loops must have turned that run into an `Err` already.
/// - Every target errs where the oracle errs (with an `Err` of the same kind), and computes
///   the oracle's bytes where it does not.
/// - Where the oracle computes, the unscheduled pipeline computes the same bytes (unless it
///   errs: without a schedule the footprint can be looser).
pub fn judge(runs: &[(Target, Outcome)], reference: &Outcome) -> Option<Finding> {
    for (t, o) in runs.iter().chain(std::iter::once(&(Target::interp(), reference.clone()))) {
        match o {
            Err(msg) => return finding("panic", format!("{t} panicked: {msg}")),
            Ok(Err(e @ Error::Internal { .. })) => return finding("internal error", format!("{t}: {e}")),
            _ => {}
        }
    }
    let oracle = runs[0].1.as_ref().expect("panics are reported above");
    for o in [oracle, reference.as_ref().expect("panics are reported above")] {
        if let Err(e @ Error::Runtime(m)) = o {
            if m.contains("is out of bounds") {
                return finding(
                    "interpreter out of bounds",
                    format!("the interpreter met an access no check caught: {e}"),
                );
            }
        }
    }
    for (t, o) in &runs[1..] {
        let o = o.as_ref().expect("panics are reported above");
        match (oracle, o) {
            (Ok(a), Ok(b)) if a != b => {
                let first = a.iter().zip(b).position(|(p, q)| p != q).unwrap_or(a.len().min(b.len()));
                return finding(
                    "pixels differ",
                    format!("{t} computes other bytes than the interpreter (first at byte {first} of {})", a.len()),
                );
            }
            (Ok(_), Ok(_)) => {}
            (Err(a), Err(b)) if variant(a) != variant(b) => {
                return finding("different errors", format!("interp: {a}\n{t}: {b}"));
            }
            (Err(_), Err(_)) => {}
            (a, b) => return finding("one target errs", format!("interp: {}\n{t}: {}", describe(a), describe(b))),
        }
    }
    if let (Ok(scheduled), Ok(Ok(unscheduled))) = (oracle, reference) {
        if scheduled != unscheduled {
            let first = scheduled.iter().zip(unscheduled).position(|(p, q)| p != q).unwrap_or(0);
            return finding(
                "schedule changes pixels",
                format!("the scheduled pipeline computes other bytes than the unscheduled one (first at byte {first})"),
            );
        }
    }
    None
}

/// What the oracle's outcome was, in a word or two: `ok`, the kind of `Err`, or `panic`.
pub fn outcome_class(o: &Outcome) -> String {
    match o {
        Ok(Ok(_)) => "ok".into(),
        Ok(Err(e)) => {
            format!("{e:?}").split('(').next().unwrap_or_default().split(' ').next().unwrap_or_default().to_lowercase()
                + " error"
        }
        Err(_) => "panic".into(),
    }
}

/// Runs `case` on `targets` (the interpreter first) and judges it; `before` is told about
/// each run before it starts (a watchdog can tell a slow run from a stuck one). Returns the
/// finding, if any, and the interpreter's outcome.
pub fn check(case: &Case, targets: &[Target], before: &dyn Fn(&str)) -> (Option<Finding>, Outcome) {
    let runs: Vec<(Target, Outcome)> = targets
        .iter()
        .map(|t| {
            before(&t.to_string());
            (t.clone(), run_caught(case, t, true))
        })
        .collect();
    before("unscheduled");
    let reference = run_caught(case, &Target::interp(), false);
    let finding = judge(&runs, &reference);
    (finding, runs.into_iter().next().expect("the interpreter runs").1)
}

/// A smaller case with a finding of the same kind: directives dropped one at a time, then
/// the API mistake, the big values and the buffers' oddities, each change kept only while
/// the finding stays. `check` runs a candidate; it runs at most `budget` times.
pub fn shrink(case: &Case, kind: &str, budget: usize, check: impl Fn(&Case) -> Option<Finding>) -> Case {
    let mut best = case.clone();
    let mut tries = 0;
    let mut try_keep = |best: &mut Case, c: Case| {
        if tries >= budget || format!("{c:?}") == format!("{best:?}") {
            return;
        }
        tries += 1;
        if check(&c).is_some_and(|f| f.kind == kind) {
            *best = c;
        }
    };
    for i in (0..best.directives.len()).rev() {
        let mut c = best.clone();
        c.directives.remove(i);
        try_keep(&mut best, c);
    }
    type Change = Box<dyn Fn(&mut Case)>;
    let mut changes: Vec<Change> = vec![
        Box::new(|c| c.api = Api::Plain),
        Box::new(|c| c.big_values = false),
        Box::new(|c| c.boundary = InputBoundary::RepeatEdge),
    ];
    for d in 0..best.output.extents.len() {
        for e in [1, 2, 3, 8] {
            changes.push(Box::new(move |c| c.output.extents[d] = c.output.extents[d].min(e)));
        }
        changes.push(Box::new(move |c| c.output.mins[d] = 0));
    }
    for d in 0..best.input.as_ref().map_or(0, |i| i.mins.len()) {
        changes.push(Box::new(move |c| c.input.as_mut().unwrap().mins[d] = 0));
    }
    for change in changes {
        let mut c = best.clone();
        change(&mut c);
        try_keep(&mut best, c);
    }
    best
}
