//! Auto-schedule invariance: random pipelines of 3–8 stages (stencils, up/down-sampling,
//! histograms, scans, inline reductions), with random estimates, random machines and a
//! few hand-scheduled Funcs, give exactly the pixels of the unscheduled pipeline when
//! auto-scheduled, at a size unrelated to the estimates. `PROPTEST_CASES` sets the number
//! of cases (64 by default). The generator is the one of `schedule_invariance.rs`.

use halogen::boundary;
use halogen::prelude::*;
use proptest::prelude::*;

/// One stage of a random pipeline; `src`/`src2` index earlier stages (0 = the input).
#[derive(Clone, Debug)]
enum StageKind {
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
}

#[derive(Clone, Debug)]
struct Case {
    stages: Vec<StageKind>,
    /// Stages computed at root by hand (the auto-scheduler must leave them alone).
    hand_root: Vec<bool>,
    estimates: (i32, i32),
    machine: (usize, usize, usize, usize),
    out_min: (i32, i32),
    out_extent: (i32, i32),
}

fn stage_kind(i: usize) -> impl Strategy<Value = StageKind> {
    let src = 0..i;
    prop_oneof![
        3 => (src.clone(), 0..i, -2..3i32, -5..5i32).prop_map(|(src, src2, a, c)| StageKind::Pointwise { src, src2, a, c }),
        4 => (src.clone(), any::<bool>(), prop::array::uniform3(-2..3i32)).prop_map(|(src, along_y, weights)| StageKind::Stencil { src, along_y, weights }),
        1 => (src.clone(), any::<bool>()).prop_map(|(src, along_y)| StageKind::Down { src, along_y }),
        1 => (src.clone(), any::<bool>()).prop_map(|(src, along_y)| StageKind::Up { src, along_y }),
        1 => src.clone().prop_map(|src| StageKind::Histogram { src }),
        1 => src.clone().prop_map(|src| StageKind::Scan { src }),
        1 => src.clone().prop_map(|src| StageKind::Sum { src }),
        1 => src.prop_map(|src| StageKind::Lut { src }),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (3usize..=8)
        .prop_flat_map(|n| {
            let kinds: Vec<_> = (1..n).map(stage_kind).collect();
            (
                kinds,
                prop::collection::vec(prop::bool::weighted(0.1), n),
                (1..3000i32, 1..3000i32),
                (1..33usize, prop::sample::select(vec![16usize, 32, 64]), 0..3usize, 0..3usize),
                (-4..4i32, -4..4i32),
                (1..14i32, 1..10i32),
            )
        })
        .prop_map(|(mut stages, mut hand_root, estimates, machine, out_min, out_extent)| {
            // Updates write where they like; an output must only write its own region, so
            // the last stage is always a pure one.
            let last = stages.len();
            if has_update(&stages[last - 1]) {
                stages.push(StageKind::Pointwise { src: last, src2: last, a: 1, c: 1 });
                hand_root.push(false);
            }
            Case { stages, hand_root, estimates, machine, out_min, out_extent }
        })
}

fn has_update(k: &StageKind) -> bool {
    matches!(k, StageKind::Histogram { .. } | StageKind::Scan { .. })
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
            StageKind::Lut { src } => {
                let table = Func::new(&format!("table{}", i + 1));
                let v = Var::new("v");
                table.def(v, v * v - 3 * v);
                f.def((x, y), table.at(clamp(at(*src, x.into(), y.into()), 0, 15)) + x);
            }
        }
        funcs.push(f);
    }
    Built { input, funcs }
}

fn input_image() -> Buffer<i32> {
    Buffer::<i32>::from_fn(&[12, 9], |c| (c[0] * 37 + c[1] * 11 + c[0] * c[1]) % 23 - 7)
}

fn realize(c: &Case, b: &Built) -> Result<Vec<i32>, String> {
    let out_f = b.funcs.last().unwrap();
    let compiled = Pipeline::new(&[out_f]).compile(&Target::interp()).map_err(|e| format!("compile: {e}"))?;
    let img = input_image();
    let mut out = Buffer::<i32>::with_min(&[c.out_min.0, c.out_min.1], &[c.out_extent.0, c.out_extent.1]);
    let mut args = Args::new();
    args.image(&b.input, &img);
    compiled.realize(&args, &mut out).map_err(|e| format!("realize: {e}\n{}", compiled.lowered_stmt()))?;
    Ok(out.as_slice().to_vec())
}

/// Small caches too, so that groups get split (Algorithm 5).
fn machine(c: &Case) -> MachineParams {
    let (cores, vector, l2, llc) = c.machine;
    let l2 = [4 << 10, 64 << 10, 1 << 20][l2];
    let llc = [32 << 10, 1 << 20, 32 << 20][llc].max(l2);
    MachineParams::new(cores, vector, 32 << 10, l2, llc)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn auto_scheduled_pipelines_give_the_unscheduled_pixels(c in case()) {
        let reference = realize(&c, &build(&c));
        prop_assert!(reference.is_ok(), "unscheduled pipeline failed: {:?}\n{:?}", reference, c.stages);
        let b = build(&c);
        let n = b.funcs.len();
        for (i, f) in b.funcs.iter().enumerate().skip(1) {
            if c.hand_root[i - 1] && i + 1 < n {
                f.compute_root();
            }
        }
        b.input.set_estimates(&[(0, c.estimates.0), (0, c.estimates.1)]);
        b.funcs[n - 1].set_estimates(&[(0, c.estimates.0), (0, c.estimates.1)]);
        let p = Pipeline::new(&[&b.funcs[n - 1]]);
        let source = p.auto_schedule_with_source(&machine(&c));
        prop_assert!(source.is_ok(), "auto_schedule failed: {:?}\nstages {:?}", source, c.stages);
        let source = source.unwrap();
        prop_assert!(!source.contains("could not apply"), "{}", source);
        let got = realize(&c, &b);
        prop_assert!(got.is_ok(), "schedule\n{source}failed: {}\nstages {:?}", got.unwrap_err(), c.stages);
        prop_assert_eq!(got.unwrap(), reference.unwrap(), "schedule\n{}changed the pixels; stages {:?}", source, c.stages);
    }
}
