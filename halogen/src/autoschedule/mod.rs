//! The auto-scheduler: schedule synthesis through reuse analysis (Sioutas et al. 2019,
//! "Schedule Synthesis for Halide Pipelines through Reuse Analysis", sections 3–4).
//!
//! [`Pipeline::auto_schedule`] writes a schedule for every Func the user did not schedule
//! by hand, from the sizes given as estimates and the machine's [`MachineParams`]:
//!
//! 0. **Factoring** (`factor.rs`): a large integer reduction that cannot run in parallel
//!    over its pure variables (a histogram) is split by `rfactor` into partial
//!    reductions over strips of its outermost reduction variable, which can.
//! 1. **Inlining** (`inline.rs`; Algorithm 2 and the zero-overlap rule of Algorithm 1):
//!    trivial stages, and stages whose single consumer reads each value once, are inlined.
//! 2. **Grouping** (`grouping.rs`; Algorithm 4): a stage with several consumers, a Func
//!    with update definitions, or a producer of one, starts its own group, computed at
//!    root; the other stages are computed inside their group output's loops. A pointwise
//!    reduction (each update writes and reads only the point of its pure variables: an
//!    inline `sum` or `maximum` over a window) counts as a pure stage here: it is computed
//!    per tile of its consumer, costed as its pure definition plus each update once per
//!    point of its domain, with its producers fused in turn. On the development corpus
//!    this replaced whole-image intermediates for every window reduction (`bench/corpus`
//!    draws them often); the lowering keeps such an accumulator in a register.
//! 3. **Tiling** (`tiling.rs`; Algorithm 3): for each loop permutation and tile size of a
//!    small candidate set (innermost tile a multiple of the vector width and cache line,
//!    tiles at least the overlap, buffers within L2 / LLC), the stages are placed by
//!    **stage fusion analysis** (`fusion.rs`; Algorithm 1: a stage that overlaps with its
//!    consumer along a row loop is computed in it and stored one loop out, so the
//!    lowering's sliding window and storage folding reuse the rows) and the cost
//!    `w · load + recomputation`, shared among the threads, is evaluated.
//! 4. **Segmenting** (`grouping.rs`; Algorithm 5): a group with no valid tiling is split.
//! 5. **Final optimizations** (`apply.rs`; sec. 4.4): vectorize the innermost loop by the
//!    stage type's vector lanes, run the outermost tile loop in parallel, put a producer's
//!    sliding dimension outermost, and run update stages in parallel over the outermost
//!    pure variable whose values depend only on themselves (what lowering accepts).
//!
//! Footprints and overlaps come from the compiler's own interval arithmetic evaluated at
//! the estimates (`footprint.rs`), so any access pattern bounds inference understands
//! (stencils, up/down-sampling, clamped look-ups, data-dependent histograms) is analysed.
//!
//! Where this differs from the paper:
//! - A point's cost counts each operation once, except an integer division or modulo by a
//!   value that is not a constant, which divides lane by lane (`graph.rs`,
//!   `VARIABLE_INTEGER_DIVISION`): such a definition is not "trivial", so it is computed
//!   once per point instead of inlined into every tap of a window (on the development
//!   corpus, 0.72× the run time of the 21 of 100 pipelines it changed, none slower beyond
//!   the noise). A signed division by a constant that is not a power of two costs 8
//!   (`CONSTANT_INTEGER_DIVISION`: a multiply-high emulated on even and odd lanes and
//!   the rounding down, about eleven instructions), an unsigned one 4, one by a power of
//!   two 1 (a shift): a box filter's `sum / 5` is then not trivial either (0.90× on the 9
//!   of the development seeds 1000–1019 it changed; no app's schedule changed).
//! - Inlining is decided once, before tiling (the paper re-runs Algorithm 2 for every loop
//!   permutation), from whether the consumer reads a value more than once over the
//!   estimated region; "trivial" means at most one load and two arithmetic operations.
//! - A stage slides only where the lowering can prove its window moves monotonically: an
//!   unsplit loop, and a window that moves a whole number of points per iteration (not a
//!   down-sampled `y / 8`). Whether it can over the inner loop of a split is asked of the
//!   lowering once (`split_loops_slide`); today it cannot (its clamp of the split is not
//!   proved monotonic), so the paper's `(yi, xo)` sliding takes the form of strips: the
//!   row loop `y` unsplit inside the tile loop `x`. Where a window cannot slide the stage
//!   is computed one loop further out (overlapping tiles) instead of every row.
//! - The cost is an analytical time: necessary work plus recomputation plus `w` times
//!   the cache lines (and row streams, eq. 6) loaded from outside the group, plus small
//!   loop and task overheads, divided by the threads the parallel loop feeds; eq. 14 is
//!   part of that rather than a hard constraint, so small images still get a schedule.
//! - Algorithm 5 splits a group at the member whose removal gives the cheapest valid
//!   schedules (recursively, with a bound on the evaluations) rather than enumerating
//!   segmentations in stage order.
//! - Update stages are vectorized along their innermost dimension where its points are
//!   independent, except scatters (histograms), whose lanes could collide; histograms and
//!   scans stay at root, pointwise reductions are fused (above). Float reductions are not
//!   factored: regrouping them changes rounding.
//!
//! ```
//! use halogen::prelude::*;
//! let input = ImageParam::new(Type::u16(), 2, "input");
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let blur_x = Func::new("blur_x");
//! let blur_y = Func::new("blur_y");
//! blur_x.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
//! blur_y.def((x, y), (blur_x.at((x, y - 1)) + blur_x.at((x, y)) + blur_x.at((x, y + 1))) / 3);
//! input.set_estimates(&[(0, 1536), (0, 2560)]);
//! blur_y.set_estimates(&[(1, 1534), (1, 2558)]);
//! let p = Pipeline::new(&[&blur_y]);
//! let source = p.auto_schedule_with_source(&MachineParams::new(8, 32, 32 << 10, 1 << 20, 8 << 20)).unwrap();
//! assert!(source.contains("blur_x.compute_at(&blur_y, "));
//! // Estimates guide, they never bound: any size runs.
//! let img = Buffer::<u16>::from_fn(&[40, 30], |c| (c[0] * 3 + c[1]) as u16);
//! let mut out = Buffer::<u16>::with_min(&[1, 1], &[37, 23]);
//! let mut args = Args::new();
//! args.image(&input, &img);
//! p.compile(&Target::interp()).unwrap().realize(&args, &mut out).unwrap();
//! ```

mod apply;
mod estimates;
mod factor;
mod footprint;
mod fusion;
mod graph;
mod grouping;
mod inline;
mod tiling;

pub use crate::target::MachineParams;

use crate::error::{Error, Result};
use crate::lang::func::FuncRef;
use crate::pipeline::Pipeline;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Group evaluations Algorithm 5 may spend on one pipeline (keeps scheduling fast).
const SPLIT_BUDGET: usize = 64;

impl Pipeline {
    /// Writes a schedule for every Func of the pipeline that was not scheduled by hand
    /// (see the [module documentation](crate::autoschedule) for the method). The outputs
    /// and the input images need size estimates ([`crate::lang::func::Func::set_estimates`],
    /// [`crate::lang::param::ImageParam::set_estimates`]), as do scalar parameters that
    /// decide regions ([`crate::lang::param::Param::set_estimate`]); without them it
    /// returns `Err(Error::Schedule(..))` naming each one missing. Estimates guide, they
    /// never bound: the scheduled pipeline is correct at any size. The result depends
    /// only on the pipeline, the estimates and `params`. Calling it again replaces its
    /// own earlier schedule (unless the user changed a Func since).
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::f32(), 2, "input");
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("f");
    /// f.def((x, y), input.at((x, y)) * 2.0f32);
    /// let p = Pipeline::new(&[&f]);
    /// let e = p.auto_schedule(&MachineParams::host()).unwrap_err().to_string();
    /// assert!(e.contains("output Func 'f'") && e.contains("ImageParam 'input'"));
    /// input.set_estimates(&[(0, 1024), (0, 768)]);
    /// f.set_estimates(&[(0, 1024), (0, 768)]);
    /// p.auto_schedule(&MachineParams::host()).unwrap();
    /// ```
    pub fn auto_schedule(&self, params: &MachineParams) -> Result<()> {
        self.auto_schedule_with_source(params).map(|_| ())
    }

    /// Like [`Pipeline::auto_schedule`], and returns the chosen schedule as Rust source
    /// a user can paste instead (`blur_x.compute_at(&blur_y, y).vectorize(x, 16);`),
    /// with the `Var`s it names declared first. Funcs whose names are not identifiers
    /// (the Funcs behind inline reductions and boundary conditions) are written with
    /// their name made into one and a comment with the real name.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u8(), 2, "input");
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let f = Func::new("f");
    /// f.def((x, y), input.at((x, y)) / 2);
    /// input.set_estimates(&[(0, 4000), (0, 3000)]);
    /// f.set_estimates(&[(0, 4000), (0, 3000)]);
    /// let src = Pipeline::new(&[&f]).auto_schedule_with_source(&MachineParams::new(4, 16, 32 << 10, 1 << 20, 8 << 20)).unwrap();
    /// assert!(src.contains("f.") && src.contains("vectorize("), "{src}");
    /// ```
    pub fn auto_schedule_with_source(&self, params: &MachineParams) -> Result<String> {
        let refs: Vec<FuncRef> = self.outputs().iter().map(|f| f.func_ref().clone()).collect();
        if refs.is_empty() {
            return Err(Error::Definition("a pipeline needs at least one output Func".into()));
        }
        let mut g = graph::build_graph(&refs)?;
        let mut est = estimates::gather(&g)?;
        // Our own earlier schedule is not the user's: start again from theirs.
        let mut reset = false;
        for n in &g.nodes {
            reset |= apply::forget_own_schedule(&n.fref);
        }
        if reset {
            g = graph::build_graph(&refs)?;
        }
        let mut src = apply::Source::default();
        let mut root = root_regions(&g, &est);
        if factor::factor_serial_reductions(&g, &est.scope, &root, params, &mut src) {
            // New intermediate Funcs: node indices move.
            g = graph::build_graph(&refs)?;
            est = estimates::gather(&g)?;
            root = root_regions(&g, &est);
        }
        let before: Vec<apply::Snapshot> = g.nodes.iter().map(|n| apply::snapshot(&n.fref)).collect();

        let (planned, regions, inlined) = plan_pipeline(&g, &est, &root, params);
        let outs = apply::regions_of(&planned, &regions, &root.funcs);
        for (p, region) in planned.iter().zip(&outs) {
            // A group whose updates cannot run on GPU threads keeps its CPU schedule.
            if let Some(gpu) = params.gpu.as_ref().filter(|_| apply::group_maps_to_gpu(&g, p)) {
                apply::apply_gpu(&g, p, gpu, &mut src);
            } else if p.tiling.is_some() {
                apply::apply_tiled(&g, p, &mut src);
            } else {
                apply::apply_untiled(&g, p, region.as_ref(), &est.scope, params, &mut src);
            }
        }
        let inlined_names: Vec<String> = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| inlined[*i] && !n.fixed)
            .map(|(_, n)| n.name.to_string())
            .collect();
        let fixed_names: Vec<String> = g.nodes.iter().filter(|n| n.fixed).map(|n| n.name.to_string()).collect();
        let mut header = format!(
            "Schedule chosen by auto_schedule for {} cores, {}-byte vectors, L2 {} KiB, LLC {} KiB.",
            params.cores,
            params.vector_bytes,
            params.l2 >> 10,
            params.llc >> 10
        );
        if let Some(gpu) = &params.gpu {
            header.push_str(&format!(
                "\nFor a GPU: every Func not inlined at root as tiles of {}x{} threads (blocks of at most {}), \
                 except groups with updates GPU threads cannot run, which keep their CPU schedule.",
                gpu.tile[0], gpu.tile[1], gpu.threads_per_block
            ));
        }
        if !inlined_names.is_empty() {
            header.push_str(&format!("\nInlined: {}.", inlined_names.join(", ")));
        }
        if !fixed_names.is_empty() {
            header.push_str(&format!("\nScheduled by hand, left alone: {}.", fixed_names.join(", ")));
        }

        let source = src.finish(&header);
        if debug_enabled() {
            eprintln!("=== auto_schedule ===\n{source}");
        }
        // A directive the API rejected (a gap between the plan and the loops it names)
        // would make compile fail: keep the user's schedule instead.
        if let Some(e) = g.nodes.iter().zip(&before).find_map(|(n, s)| apply::new_error(&n.fref, s)) {
            for (n, s) in g.nodes.iter().zip(&before) {
                apply::restore(&n.fref, s);
            }
            return Ok(format!("// auto_schedule could not apply its schedule ({e}); the default schedule is kept.\n"));
        }
        for (n, s) in g.nodes.iter().zip(before) {
            if !n.fixed && apply::snapshot(&n.fref) != s {
                apply::remember(&n.fref, s);
            }
        }
        Ok(source)
    }
}

/// `HALOGEN_DEBUG=autoschedule` prints each chosen schedule.
fn debug_enabled() -> bool {
    std::env::var("HALOGEN_DEBUG").is_ok_and(|v| v.split(',').any(|p| p.trim() == "autoschedule"))
}

fn root_regions(g: &graph::Graph, est: &estimates::Estimates) -> footprint::Regions {
    let seeds: Vec<(usize, footprint::NumBox)> = est.outputs.iter().map(|(i, b)| (*i, b.clone())).collect();
    let fallback = |c: &graph::Callee, d: usize| -> (i64, i64) {
        match c {
            graph::Callee::Func(j) => {
                g.nodes[*j].estimates.get(d).map_or((0, 1023), |&(m, e)| (m as i64, m as i64 + e.max(1) as i64 - 1))
            }
            graph::Callee::Image(name) => est.images.get(name).and_then(|b| b.get(d).copied()).unwrap_or((0, 1023)),
        }
    };
    footprint::propagate(g, &est.scope, &seeds, &|_| true, &fallback)
}

/// Runs the analysis, given the whole region of every Func (`root`); returns the planned
/// groups, the region of each group output and which Funcs are inlined.
fn plan_pipeline(
    g: &graph::Graph,
    est: &estimates::Estimates,
    root: &footprint::Regions,
    m: &MachineParams,
) -> (Vec<grouping::Planned>, BTreeMap<usize, footprint::NumBox>, Vec<bool>) {
    let reaches = inline::reachability(g);
    let inlined = inline::decide_inlining(g, &est.scope, root, &reaches);
    let ops = inline::effective_ops(g, &est.scope, &inlined);
    let vector_types = inline::effective_vector_types(g, &inlined);
    let grouping::Groups { outputs, consumer, consumers } = grouping::form_groups(g, &inlined);
    let mut regions: BTreeMap<usize, footprint::NumBox> = est.outputs.clone();
    for &o in &outputs {
        if let (false, Some(r)) = (regions.contains_key(&o), root.funcs[o].as_ref()) {
            regions.insert(o, r.clone());
        }
    }
    let ctx = grouping::Ctx {
        g,
        scope: &est.scope,
        root,
        inlined: &inlined,
        ops: &ops,
        m,
        split_slides: split_loops_slide(),
        regions: &regions,
        budget: Cell::new(SPLIT_BUDGET),
        consumers: &consumers,
        vector_types: &vector_types,
    };
    let mut planned = Vec::new();
    for &o in &outputs {
        // Members consumers first (the graph order reversed).
        let members: Vec<usize> = g
            .order
            .iter()
            .rev()
            .copied()
            .filter(|&i| consumer.contains_key(&i) && grouping::group_of(&consumer, i) == o)
            .collect();
        planned.extend(grouping::plan(&ctx, o, &members, &consumer));
    }
    (planned, regions, inlined)
}

/// Whether the lowering slides a producer over the inner loop of a split (it must prove
/// that the region needed moves monotonically along it, through the clamp that keeps the
/// split inside the output). Found once by lowering a small blur; the scheduler falls
/// back to strips (an unsplit row loop) where it does not.
fn split_loops_slide() -> bool {
    static CAP: OnceLock<bool> = OnceLock::new();
    *CAP.get_or_init(|| {
        use crate::lang::func::Func;
        use crate::lang::param::ImageParam;
        use crate::lang::var::Var;
        let input = ImageParam::new(crate::ir::Type::u16(), 2, "halogen$slide_probe_in");
        let (x, y, xi, yi) = (Var::new("x"), Var::new("y"), Var::new("xi"), Var::new("yi"));
        let bx = Func::new("halogen$slide_probe_bx");
        let by = Func::new("halogen$slide_probe_by");
        bx.def((x, y), input.at((x, y)) + input.at((x, y + 1)));
        by.def((x, y), bx.at((x, y - 1)) + bx.at((x, y + 1)));
        by.tile(x, y, xi, yi, 16, 16);
        bx.compute_at(&by, yi).store_at(&by, x);
        // Folding is decided with sliding, and recorded on the Realize that flattening
        // then replaces: look at the nest just after it.
        use crate::lower::{bounds_inference, environment, schedule_functions, sliding_window, storage_folding};
        let nest = environment::build_environment(&[by.func_ref().clone()]).and_then(|env| {
            let ctx = crate::lower::LowerCtx::new(env);
            let s = schedule_functions::schedule_functions(&ctx)?;
            let s = bounds_inference::bounds_inference(s, &ctx)?;
            sliding_window::sliding_window(s, &ctx.env)
        });
        nest.is_ok_and(|s| storage_folding::folds(&s).iter().any(|(n, _)| &**n == "halogen$slide_probe_bx"))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn probe_runs() {
        // Whatever the answer, asking twice gives the same one.
        assert_eq!(super::split_loops_slide(), super::split_loops_slide());
    }
}
