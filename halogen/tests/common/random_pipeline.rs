//! Random pipelines of 3–8 stages over a clamped 2-D input (point-wise, stencils, up- and
//! down-sampling, histograms, scans, inline reductions, look-up tables) and random legal
//! schedules for them: the generator of the schedule and auto-schedule invariance tests.

use halogen::boundary;
use halogen::prelude::*;
use proptest::prelude::*;
use proptest::strategy::Union;

/// One stage of a random pipeline; `src`/`src2` index earlier stages (0 = the input).
#[derive(Clone, Debug)]
pub enum StageKind {
    /// `a * f(x, y) + f2(x, y) + c`
    Pointwise { src: usize, src2: usize, a: i32, c: i32 },
    /// A 3-tap stencil with the given weights along x or y.
    Stencil { src: usize, along_y: bool, weights: [i32; 3] },
    /// `f(2x, y) + f(2x + 1, y)` (or along y).
    Down { src: usize, along_y: bool },
    /// `f(x / 2, y)` (or along y).
    Up { src: usize, along_y: bool },
    /// A histogram of `f` over a 4×4 window into 8 bins along x, at row 0.
    Histogram { src: usize },
    /// A running sum along x over [1, 8), then read everywhere.
    Scan { src: usize },
    /// An inline reduction: the sum of a 3-tap window.
    Sum { src: usize },
    /// A look-up table of 16 entries indexed by the (clamped) value of `f`.
    Lut { src: usize },
    /// The input read at a column computed from `f`'s value times `scale` (which wraps
    /// anywhere in 32 bits), clamped into the input by the bounds of `form` (see
    /// [`gather_bounds`]); the row is `y` clamped into the input.
    Gather { src: usize, scale: i32, form: u8 },
}

impl StageKind {
    /// The earlier stages this one calls.
    pub fn sources(&self) -> Vec<usize> {
        match *self {
            StageKind::Pointwise { src, src2, .. } => vec![src, src2],
            StageKind::Stencil { src, .. }
            | StageKind::Down { src, .. }
            | StageKind::Up { src, .. }
            | StageKind::Histogram { src }
            | StageKind::Scan { src }
            | StageKind::Sum { src }
            | StageKind::Lut { src }
            | StageKind::Gather { src, .. } => vec![src],
        }
    }

    /// Whether the stage has an update definition.
    pub fn has_update(&self) -> bool {
        matches!(self, StageKind::Histogram { .. } | StageKind::Scan { .. })
    }
}

/// How often each kind of stage is drawn: the weight of stencils (point-wise stages weigh 3,
/// the other kinds 1) and whether look-up tables and gathers from the input are drawn.
#[derive(Clone, Copy, Debug)]
pub struct StageMix {
    pub stencil_weight: u32,
    pub lut: bool,
    pub gather: bool,
}

/// The pipelines hand schedules are drawn for.
pub const SCHEDULE_MIX: StageMix = StageMix { stencil_weight: 3, lut: false, gather: false };

/// The pipelines the auto-scheduler is tested on: more stencils (what it plans for) and
/// data-dependent look-ups.
pub const AUTO_SCHEDULE_MIX: StageMix = StageMix { stencil_weight: 4, lut: true, gather: false };

/// Stage `i` (1-based), reading any of the stages before it.
pub fn stage_kind(i: usize, mix: StageMix) -> BoxedStrategy<StageKind> {
    let src = 0..i;
    let mut kinds = vec![
        (
            3,
            (src.clone(), 0..i, -2..3i32, -5..5i32)
                .prop_map(|(src, src2, a, c)| StageKind::Pointwise { src, src2, a, c })
                .boxed(),
        ),
        (
            mix.stencil_weight,
            (src.clone(), any::<bool>(), prop::array::uniform3(-2..3i32))
                .prop_map(|(src, along_y, weights)| StageKind::Stencil { src, along_y, weights })
                .boxed(),
        ),
        (1, (src.clone(), any::<bool>()).prop_map(|(src, along_y)| StageKind::Down { src, along_y }).boxed()),
        (1, (src.clone(), any::<bool>()).prop_map(|(src, along_y)| StageKind::Up { src, along_y }).boxed()),
        (1, src.clone().prop_map(|src| StageKind::Histogram { src }).boxed()),
        (1, src.clone().prop_map(|src| StageKind::Scan { src }).boxed()),
        (1, src.clone().prop_map(|src| StageKind::Sum { src }).boxed()),
    ];
    if mix.lut {
        kinds.push((1, src.clone().prop_map(|src| StageKind::Lut { src }).boxed()));
    }
    if mix.gather {
        let scales = prop::sample::select(vec![1, -1, 3, 65_537, 1 << 20, -(1 << 28), i32::MAX]);
        kinds.push((
            1,
            (src, scales, 0..GATHER_FORMS)
                .prop_map(|(src, scale, form)| StageKind::Gather { src, scale, form })
                .boxed(),
        ));
    }
    Union::new_weighted(kinds).boxed()
}

/// The kinds of stages 1..n.
pub fn stage_kinds(n: usize, mix: StageMix) -> Vec<BoxedStrategy<StageKind>> {
    (1..n).map(|i| stage_kind(i, mix)).collect()
}

/// The number of stages, the input included.
pub fn stage_count() -> impl Strategy<Value = usize> {
    3usize..=8
}

/// The output region: its mins and extents.
pub fn output_region() -> impl Strategy<Value = ((i32, i32), (i32, i32))> {
    ((-4..4i32, -4..4i32), (1..14i32, 1..10i32))
}

/// The number of cases to run: the environment variable `var`, or `default`.
pub fn case_count(var: &str, default: u32) -> u32 {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A random pipeline with one schedule choice per Func (of a test's own type `C`) and the
/// output region: the case of the invariance tests whose choices are their own.
#[derive(Clone, Debug)]
pub struct ChoiceCase<C> {
    pub stages: Vec<StageKind>,
    /// One per Func, the clamped input's unused; a pure last stage added after updates
    /// ([`end_with_pure_stage`]) takes the spare one.
    pub choices: Vec<C>,
    pub out_min: (i32, i32),
    pub out_extent: (i32, i32),
}

/// [`ChoiceCase`]s: 3–8 stages, a choice per Func drawn from `choice`, an output region.
pub fn choice_case<C: Clone + std::fmt::Debug>(
    choice: impl Strategy<Value = C> + Clone,
) -> impl Strategy<Value = ChoiceCase<C>> {
    stage_count()
        .prop_flat_map(move |n| {
            (stage_kinds(n, SCHEDULE_MIX), prop::collection::vec(choice.clone(), n + 1), output_region())
        })
        .prop_map(|(mut stages, choices, (out_min, out_extent))| {
            end_with_pure_stage(&mut stages);
            ChoiceCase { stages, choices, out_min, out_extent }
        })
}

/// Updates write where they like, and an output must only write its own region, so a last
/// stage with updates gets a point-wise stage after it. Returns whether one was added.
pub fn end_with_pure_stage(stages: &mut Vec<StageKind>) -> bool {
    let last = stages.len();
    let add = stages[last - 1].has_update();
    if add {
        stages.push(StageKind::Pointwise { src: last, src2: last, a: 1, c: 1 });
    }
    add
}

/// A pipeline built from its stages: the input and the Funcs, the (clamped) input first,
/// and each Func's reduction domain where its update has one that schedules may split or
/// distribute (the histograms').
pub struct Built {
    pub input: ImageParam,
    pub funcs: Vec<Func>,
    pub domains: Vec<Option<RDom>>,
}

/// How the first Func reads the input outside its bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputBoundary {
    RepeatEdge,
    ConstantExterior,
    MirrorImage,
    MirrorInterior,
    RepeatImage,
    /// No boundary condition: the input must cover whatever the pipeline reads.
    Unbounded,
}

/// The Funcs of `stages`, unscheduled, over the input clamped at its edges.
pub fn build(stages: &[StageKind]) -> Built {
    build_with(stages, InputBoundary::RepeatEdge)
}

/// The Funcs of `stages`, unscheduled, the first reading the input through `b`.
pub fn build_with(stages: &[StageKind], b: InputBoundary) -> Built {
    let input = ImageParam::new(Type::i32(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let bounds = input.bounds();
    let first = match b {
        InputBoundary::RepeatEdge => boundary::repeat_edge(&input, &bounds),
        InputBoundary::ConstantExterior => boundary::constant_exterior(&input, 3, &bounds),
        InputBoundary::MirrorImage => boundary::mirror_image(&input, &bounds),
        InputBoundary::MirrorInterior => boundary::mirror_interior(&input, &bounds),
        InputBoundary::RepeatImage => boundary::repeat_image(&input, &bounds),
        InputBoundary::Unbounded => {
            let f = Func::new("f0");
            f.def((x, y), input.at((x, y)));
            f
        }
    };
    let mut funcs = vec![first];
    let mut domains = vec![None];
    for (i, k) in stages.iter().enumerate() {
        let f = Func::new(&format!("f{}", i + 1));
        let at = |s: usize, a: Expr, b: Expr| funcs[s].at((a, b));
        match k {
            StageKind::Pointwise { src, src2, a, c } => {
                f.def((x, y), at(*src, x.into(), y.into()) * *a + at(*src2, x.into(), y.into()) + *c);
            }
            StageKind::Stencil { src, along_y, weights } => {
                let tap = |d: i32| if *along_y { at(*src, x.into(), y + d) } else { at(*src, x + d, y.into()) };
                f.def((x, y), tap(-1) * weights[0] + tap(0) * weights[1] + tap(1) * weights[2]);
            }
            StageKind::Down { src, along_y } => {
                if *along_y {
                    f.def((x, y), at(*src, x.into(), y * 2) + at(*src, x.into(), y * 2 + 1));
                } else {
                    f.def((x, y), at(*src, x * 2, y.into()) + at(*src, x * 2 + 1, y.into()));
                }
            }
            StageKind::Up { src, along_y } => {
                if *along_y {
                    f.def((x, y), at(*src, x.into(), y / 2));
                } else {
                    f.def((x, y), at(*src, x / 2, y.into()));
                }
            }
            StageKind::Histogram { src } => {
                let r = RDom::new(&[(Expr::from(0), Expr::from(4)), (Expr::from(0), Expr::from(4))]);
                f.def((x, y), 0);
                let bin = at(*src, r.x().into(), r.y().into()) % 8;
                f.update((bin.clone(), Expr::from(0)), f.at((bin, Expr::from(0))) + 1);
                domains.push(Some(r));
            }
            StageKind::Scan { src } => {
                let r = RDom::new(&[(Expr::from(1), Expr::from(7))]);
                f.def((x, y), at(*src, x.into(), y.into()));
                f.update((r.x(), y), f.at((r.x() - 1, y)) + f.at((r.x(), y)));
            }
            StageKind::Sum { src } => {
                let r = RDom::new(&[(Expr::from(-1), Expr::from(3))]);
                f.def((x, y), sum(at(*src, x + r.x(), y.into())));
            }
            StageKind::Lut { src } => {
                let table = Func::new(&format!("table{}", i + 1));
                let v = Var::new("v");
                table.def(v, v * v - 3 * v);
                f.def((x, y), table.at(clamp(at(*src, x.into(), y.into()), 0, 15)) + x);
            }
            StageKind::Gather { src, scale, form } => {
                let (lo, hi) = gather_bounds(*form, input.dim(0).min(), input.dim(0).extent());
                let column = clamp(at(*src, x.into(), y.into()) * *scale, lo, hi);
                let (m1, e1) = (input.dim(1).min(), input.dim(1).extent());
                let row = clamp(Expr::from(y), m1.clone(), m1 + e1 - 1);
                f.def((x, y), input.at((column, row)));
            }
        }
        funcs.push(f);
        domains.resize(funcs.len(), None);
    }
    Built { input, funcs, domains }
}

/// How many forms [`gather_bounds`] has.
pub const GATHER_FORMS: u8 = 4;

/// The bounds `(lo, hi)` a gather clamps its column into, from the input's first
/// dimension at `m` of extent `e`: the whole input written so that both ends cancel
/// against `m`, or only one of them (`max(e - 1, 0)` is opaque to the simplifier's linear
/// forms), or a window inside it.
pub fn gather_bounds(form: u8, m: Expr, e: Expr) -> (Expr, Expr) {
    match form {
        0 => (m.clone(), m + e - 1),
        1 => (m.clone(), m + max(e - 1, 0)),
        2 => (m.clone() + min(e.clone() - 1, 2), m + e - 1),
        _ => (m.clone() + min(e.clone() - 1, 1), m + max(e - 2, 0)),
    }
}

/// The input every random pipeline reads: 12 × 9 values in [-7, 15].
pub fn input_image() -> Buffer<i32> {
    Buffer::<i32>::from_fn(&[12, 9], |c| (c[0] * 37 + c[1] * 11 + c[0] * c[1]) % 23 - 7)
}

/// The last Func of `b` over the region at `out_min` of `out_extent`, on `target`; the
/// error names the step that failed and, for a failed run, shows the loop nest.
pub fn realize(b: &Built, out_min: (i32, i32), out_extent: (i32, i32), target: &Target) -> Result<Vec<i32>, String> {
    let out_f = b.funcs.last().unwrap();
    let compiled = Pipeline::new(&[out_f]).compile(target).map_err(|e| format!("compile on {target}: {e}"))?;
    let img = input_image();
    let mut out = Buffer::<i32>::with_min(&[out_min.0, out_min.1], &[out_extent.0, out_extent.1]);
    let mut args = Args::new();
    args.image(&b.input, &img);
    compiled.realize(&args, &mut out).map_err(|e| format!("realize on {target}: {e}\n{}", compiled.lowered_stmt()))?;
    Ok(out.as_slice().to_vec())
}

/// A random schedule for one stage, made legal by [`apply_schedule`].
#[derive(Clone, Debug)]
pub struct StageSchedule {
    /// 0 inline (or default), 1 root, 2 compute_at consumer, 3 store_root + compute_at, 4 store one loop out.
    pub level: u8,
    /// Which loop of the consumer to use (modulo the number of loops).
    pub loop_pick: u8,
    /// Loop transformation: 0 none, 1 split x, 2 tile, 3 vectorize x, 4 unroll y, 5 fuse, 6 reorder, 7 parallel y.
    pub transform: u8,
    pub factor: i32,
    pub factor2: i32,
    pub tail: u8,
    pub parallel_update: bool,
}

/// Any [`StageSchedule`].
pub fn schedule() -> impl Strategy<Value = StageSchedule> {
    (0..5u8, any::<u8>(), 0..8u8, 1..8i32, 1..6i32, 0..4u8, any::<bool>()).prop_map(
        |(level, loop_pick, transform, factor, factor2, tail, parallel_update)| StageSchedule {
            level,
            loop_pick,
            transform,
            factor,
            factor2,
            tail,
            parallel_update,
        },
    )
}

/// Which stages call stage `s` directly.
fn consumers(stages: &[StageKind], s: usize) -> Vec<usize> {
    stages.iter().enumerate().filter(|(_, k)| k.sources().contains(&s)).map(|(i, _)| i + 1).collect()
}

/// Applies `schedules` (one per Func of `b`, the clamped input's unused) to the pipeline
/// of `stages`, made legal; returns the directives applied, for failure messages.
pub fn apply_schedule(stages: &[StageKind], schedules: &[StageSchedule], b: &Built) -> String {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let n = b.funcs.len();
    let mut log = String::new();
    // Loop names of each stage's pure definition (outermost last), and whether the stage
    // is realized (not inlined), decided from the output backwards.
    let mut loops: Vec<Vec<Var>> = vec![Vec::new(); n];
    let mut realized = vec![false; n];
    realized[n - 1] = true;
    for s in (1..n).rev() {
        let f = &b.funcs[s];
        let sch = &schedules[s];
        let updates = stages[s - 1].has_update();
        let is_output = s == n - 1;
        let cons = consumers(stages, s);
        // Effective consumer: the single realized Func that ends up calling this one.
        // (A Sum stage calls its producer from an anonymous reduction Func, and a
        // histogram from its update, so neither has a loop of its own to compute in.)
        let single = if cons.len() == 1
            && realized[cons[0]]
            && !matches!(stages[cons[0] - 1], StageKind::Sum { .. } | StageKind::Histogram { .. })
        {
            Some(cons[0])
        } else {
            None
        };
        let mut level = if is_output { 1 } else { sch.level };
        if single.is_none() && level >= 2 {
            level = 1;
        }
        if level == 0 && updates {
            level = 1;
        }
        // A Func consumed by several others may only be inlined if they all are realized
        // or inlined in turn; inlining is always legal, so keep it.
        realized[s] = level != 0;
        if realized[s] {
            // Loop transformation of the pure stage.
            let (xo, xi, yo, yi, t) = (Var::new("xo"), Var::new("xi"), Var::new("yo"), Var::new("yi"), Var::new("t"));
            let tail = match sch.tail {
                0 => TailStrategy::Auto,
                1 => TailStrategy::GuardWithIf,
                2 => TailStrategy::ShiftInwards,
                _ => TailStrategy::RoundUp,
            };
            let mut names = vec![x, y];
            match sch.transform {
                1 => {
                    f.split_with(x, xo, xi, sch.factor, tail);
                    names = vec![xi, xo, y];
                    log += &format!("{}.split(x, xo, xi, {}, {tail:?}); ", f.name(), sch.factor);
                }
                2 => {
                    f.tile(x, y, xi, yi, sch.factor, sch.factor2);
                    names = vec![xi, yi, x, y];
                    log += &format!("{}.tile(x, y, xi, yi, {}, {}); ", f.name(), sch.factor, sch.factor2);
                }
                3 => {
                    f.vectorize(x, sch.factor.max(2));
                    names = vec![Var::new("x_vi"), x, y];
                    log += &format!("{}.vectorize(x, {}); ", f.name(), sch.factor.max(2));
                }
                4 => {
                    f.unroll(y, sch.factor2);
                    names = vec![x, Var::new("y_ui"), y];
                    log += &format!("{}.unroll(y, {}); ", f.name(), sch.factor2);
                }
                5 => {
                    f.fuse(x, y, t);
                    names = vec![t];
                    log += &format!("{}.fuse(x, y, t); ", f.name());
                }
                6 => {
                    f.reorder(&[y, x]);
                    names = vec![y, x];
                    log += &format!("{}.reorder(y, x); ", f.name());
                }
                7 => {
                    f.split(y, yo, yi, sch.factor).parallel(yo);
                    names = vec![x, yi, yo];
                    log += &format!("{}.split(y, yo, yi, {}).parallel(yo); ", f.name(), sch.factor);
                }
                _ => {}
            }
            loops[s] = names;
            if updates && sch.parallel_update && matches!(stages[s - 1], StageKind::Scan { .. }) {
                f.update_stage(0).parallel(y);
                log += &format!("{}.update(0).parallel(y); ", f.name());
            }
        }
        match level {
            0 => {}
            1 if !is_output => {
                f.compute_root();
                log += &format!("{}.compute_root(); ", f.name());
            }
            2..=4 => {
                let consumer = single.unwrap();
                let cl = &loops[consumer];
                let pick = sch.loop_pick as usize % cl.len();
                let at = cl[pick];
                f.compute_at(&b.funcs[consumer], at);
                log += &format!("{}.compute_at({}, {}); ", f.name(), b.funcs[consumer].name(), at.name());
                if level == 3 {
                    f.store_root();
                    log += &format!("{}.store_root(); ", f.name());
                } else if level == 4 && pick + 1 < cl.len() {
                    let st = cl[pick + 1];
                    f.store_at(&b.funcs[consumer], st);
                    log += &format!("{}.store_at({}, {}); ", f.name(), b.funcs[consumer].name(), st.name());
                }
            }
            _ => {}
        }
    }
    log
}
