//! Schedule invariance: random pipelines of 3–8 stages under random legal schedules give
//! exactly the pixels of the unscheduled pipeline. `PROPTEST_CASES` sets the number of
//! cases (CI runs 256).

use halogen::boundary;
use halogen::prelude::*;
use proptest::prelude::*;

/// One stage of a random pipeline; `src`/`src2` index earlier stages (0 = the input).
#[derive(Clone, Debug)]
enum StageKind {
    /// `a * f(x, y) + f2(x, y) + c`
    Pointwise { src: usize, src2: usize, a: i32, c: i32 },
    /// A 3-tap stencil with the given offsets along x or y.
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
}

#[derive(Clone, Debug)]
struct StageSchedule {
    /// 0 inline (or default), 1 root, 2 compute_at consumer, 3 store_root + compute_at, 4 store one loop out.
    level: u8,
    /// Which loop of the consumer to use (modulo the number of loops).
    loop_pick: u8,
    /// Loop transformation: 0 none, 1 split x, 2 tile, 3 vectorize x, 4 unroll y, 5 fuse, 6 reorder, 7 parallel y.
    transform: u8,
    factor: i32,
    factor2: i32,
    tail: u8,
    parallel_update: bool,
}

fn stage_kind(i: usize) -> impl Strategy<Value = StageKind> {
    let src = 0..i;
    prop_oneof![
        3 => (src.clone(), 0..i, -2..3i32, -5..5i32).prop_map(|(src, src2, a, c)| StageKind::Pointwise { src, src2, a, c }),
        3 => (src.clone(), any::<bool>(), prop::array::uniform3(-2..3i32)).prop_map(|(src, along_y, weights)| StageKind::Stencil { src, along_y, weights }),
        1 => (src.clone(), any::<bool>()).prop_map(|(src, along_y)| StageKind::Down { src, along_y }),
        1 => (src.clone(), any::<bool>()).prop_map(|(src, along_y)| StageKind::Up { src, along_y }),
        1 => src.clone().prop_map(|src| StageKind::Histogram { src }),
        1 => src.clone().prop_map(|src| StageKind::Scan { src }),
        1 => src.prop_map(|src| StageKind::Sum { src }),
    ]
}

fn schedule() -> impl Strategy<Value = StageSchedule> {
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

#[derive(Clone, Debug)]
struct Case {
    stages: Vec<StageKind>,
    schedules: Vec<StageSchedule>,
    out_min: (i32, i32),
    out_extent: (i32, i32),
}

fn case() -> impl Strategy<Value = Case> {
    (3usize..=8)
        .prop_flat_map(|n| {
            let kinds: Vec<_> = (1..n).map(stage_kind).collect();
            (kinds, prop::collection::vec(schedule(), n), (-4..4i32, -4..4i32), (1..14i32, 1..10i32))
        })
        .prop_map(|(mut stages, mut schedules, out_min, out_extent)| {
            // Updates write where they like; an output must only write its own region, so
            // the last stage is always a pure one.
            let last = stages.len();
            if has_update(&stages[last - 1]) {
                stages.push(StageKind::Pointwise { src: last, src2: last, a: 1, c: 1 });
                schedules.push(schedules[0].clone());
            }
            Case { stages, schedules, out_min, out_extent }
        })
}

struct Built {
    input: ImageParam,
    funcs: Vec<Func>,
}

fn build(c: &Case) -> Built {
    let input = ImageParam::new(Type::i32(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = boundary::repeat_edge(&input, &input.bounds());
    let mut funcs = vec![clamped];
    for (i, k) in c.stages.iter().enumerate() {
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
        }
        funcs.push(f);
    }
    Built { input, funcs }
}

/// Which stages call stage `s` directly.
fn consumers(c: &Case, s: usize) -> Vec<usize> {
    c.stages
        .iter()
        .enumerate()
        .filter(|(_, k)| match k {
            StageKind::Pointwise { src, src2, .. } => *src == s || *src2 == s,
            StageKind::Stencil { src, .. }
            | StageKind::Down { src, .. }
            | StageKind::Up { src, .. }
            | StageKind::Histogram { src }
            | StageKind::Scan { src }
            | StageKind::Sum { src } => *src == s,
        })
        .map(|(i, _)| i + 1)
        .collect()
}

fn has_update(k: &StageKind) -> bool {
    matches!(k, StageKind::Histogram { .. } | StageKind::Scan { .. })
}

/// Applies a random but legal schedule; returns a description for failure messages.
fn apply_schedule(c: &Case, b: &Built) -> String {
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
        let sch = &c.schedules[s];
        let updates = has_update(&c.stages[s - 1]);
        let is_output = s == n - 1;
        let cons = consumers(c, s);
        // Effective consumer: the single realized Func that ends up calling this one.
        // (A Sum stage calls its producer from an anonymous reduction Func, and a
        // histogram from its update, so neither has a loop of its own to compute in.)
        let single = if cons.len() == 1
            && realized[cons[0]]
            && !matches!(c.stages[cons[0] - 1], StageKind::Sum { .. } | StageKind::Histogram { .. })
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
                    f.reorder(&[y.into(), x.into()]);
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
            if updates && sch.parallel_update && matches!(c.stages[s - 1], StageKind::Scan { .. }) {
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

fn input_image() -> Buffer<i32> {
    Buffer::<i32>::from_fn(&[12, 9], |c| (c[0] * 37 + c[1] * 11 + c[0] * c[1]) % 23 - 7)
}

fn realize(c: &Case, b: &Built, target: &Target) -> Result<Vec<i32>, String> {
    let out_f = b.funcs.last().unwrap();
    let compiled = Pipeline::new(&[out_f]).compile(target).map_err(|e| format!("compile: {e}"))?;
    let img = input_image();
    let mut out = Buffer::<i32>::with_min(&[c.out_min.0, c.out_min.1], &[c.out_extent.0, c.out_extent.1]);
    let mut args = Args::new();
    args.image(&b.input, &img);
    compiled.realize(&args, &mut out).map_err(|e| format!("realize: {e}\n{}", compiled.lowered_stmt()))?;
    Ok(out.as_slice().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_schedule_gives_the_unscheduled_pixels(c in case()) {
        if std::env::var("HALOGEN_TRACE_CASES").is_ok() { eprintln!("CASE {c:?}"); }
        let reference = realize(&c, &build(&c), &Target::interp());
        prop_assert!(reference.is_ok(), "unscheduled pipeline failed: {:?}\n{:?}", reference, c.stages);
        let reference = reference.unwrap();
        for target in [Target::interp(), Target::host()] {
            let b = build(&c);
            let log = apply_schedule(&c, &b);
            let got = realize(&c, &b, &target);
            prop_assert!(got.is_ok(), "schedule {log} failed: {}\nstages {:?}", got.unwrap_err(), c.stages);
            prop_assert_eq!(got.unwrap(), reference.clone(), "schedule {} changed the pixels; stages {:?}", log, c.stages);
        }
    }
}
