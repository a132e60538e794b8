//! Algorithm 3 of Sioutas et al. (group tiling): for every loop permutation and tile size
//! of a small candidate set, place the group's stages (Algorithm 1) and evaluate the cost
//! model; keep the cheapest.
//!
//! Candidates follow the constraints of sec. 4.2: the innermost tile is a multiple of the
//! vector width and of the cache line (or the whole row); tiles are at least the overlap
//! (eq. 15); the buffers that are not folded fit the L2 cache and all buffers of all
//! threads fit the last-level cache. The cost is the paper's `w · load + recomputation`
//! plus the work every schedule must do, divided by the threads the parallel loop keeps
//! busy: eq. 14 (enough outer tiles for every core) becomes part of the cost, so that a
//! small image still gets a schedule.
//!
//! Beyond the paper: members computed over rows narrower than their vectors pay for the
//! wasted lanes and the rows' loop overhead, and a transposed read (the output's rows
//! walking down a buffer's columns) pays an L1 miss per point once a tile row touches
//! more rows than L1 keeps; groups with one also try tiles narrower than a vector.

use super::footprint::GroupModels;
use super::fusion::{fuse, LoopDesc, LoopKind, Nest, Placement};
use super::MachineParams;

/// Relative cost of loading a cache line from outside the group, in arithmetic operations.
const W_LOAD: f64 = 2.0;
/// Extra cost of starting a new row (a new prefetch stream), in cache lines (eq. 6).
/// A row segment a few lines long costs far more than its lines: the hardware prefetcher
/// follows rows, not a column of short segments a row pitch apart. Calibrated on the
/// development corpus: at 4, a 5-tap vertical window was computed in column strips 64
/// points wide over all rows, 2–3× slower than in strips of whole rows (which this
/// weight picks); 12 of 100 development pipelines changed schedule, none measurably for
/// the worse.
const STREAM: f64 = 16.0;
/// Fixed cost of entering a producer's loop nest once, in operations.
const OVERHEAD: f64 = 300.0;
/// Fixed cost of one run of the output's innermost loop (a row of a tile: its bounds,
/// the partition into boundary and steady-state parts), in operations.
const ROW_OVERHEAD: f64 = 40.0;
/// Fixed cost of one tile (loop set-up, bounds), in operations.
const TILE_OVERHEAD: f64 = 64.0;
/// Fixed cost of handing one iteration of the parallel loop to a thread, in operations.
const TASK_OVERHEAD: f64 = 1000.0;
/// Expected share of the threads idle at the end of a parallel loop with one task per
/// core (it shrinks in proportion with more tasks per core).
const IMBALANCE: f64 = 0.25;
/// Rows of a buffer a transposed read may walk down per row of a tile and still find
/// their lines in L1 for the next row: rows a multiple of 4 KiB apart share L1 sets, and
/// 16 of them kept their lines where 32 did not (8- and 12-way L1 caches; a 4096² `u16`
/// transpose in 16-wide tiles takes half the time of 32-wide ones).
const TRANSPOSED_ROWS: f64 = 16.0;
/// What a transposed read's L1 miss costs, in lines loaded in order: each lane waits for
/// the L2 with few other loads to overlap it.
const TRANSPOSED_MISS: f64 = 4.0;
/// Work (points × operations) below which a loop is not worth running in parallel.
pub(crate) const PARALLEL_MIN_WORK: f64 = 65536.0;

/// What the tiling analysis needs to know about the group.
pub(crate) struct GroupInput<'a> {
    pub out: usize,
    /// Stages computed inside the output's nest, with their consumer, consumers first.
    pub stages: &'a [(usize, Vec<usize>)],
    /// Per node: cost of one point, inlined callees included.
    pub ops: &'a [f64],
    /// Lanes of the output's vectors, and bytes per point of the output.
    pub lanes: usize,
    pub out_bytes: usize,
    /// Lanes of each member's vectors.
    pub lanes_of: &'a dyn Fn(usize) -> usize,
    /// Nodes read from outside the group (roots of other groups), besides the images.
    pub external: &'a [usize],
    pub single_stage: &'a dyn Fn(usize) -> bool,
    pub split_slides: bool,
}

/// The chosen nest, placements and cost of a group.
#[derive(Clone, Debug)]
pub(crate) struct Tiling {
    pub nest: Nest,
    pub placements: Vec<(usize, Placement)>,
    pub cost: f64,
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The loop nests to try for an output of these extents. `narrow` adds tiles narrower
/// than a vector and a cache line (a half and a quarter of both, at least 8 points), for
/// groups that read transposed.
pub(crate) fn candidate_nests(extent: &[f64], lanes: usize, line_elems: usize, narrow: bool) -> Vec<Nest> {
    let n = extent.len();
    if n == 0 {
        return Vec::new();
    }
    let unit = lanes.max(1) / gcd(lanes.max(1), line_elems.max(1)) * line_elems.max(1);
    let unit = unit.clamp(1, 256) as f64;
    let narrow_tiles = [unit / 4.0, unit / 2.0].into_iter().filter(|&t| narrow && t >= 8.0 && t.fract() == 0.0);
    let mut tx: Vec<Option<f64>> =
        narrow_tiles.chain((0..8).map(|k| unit * (1u64 << k) as f64)).filter(|&t| t < extent[0]).map(Some).collect();
    tx.push(None);
    let mut ty: Vec<Option<f64>> = Vec::new();
    if n >= 2 {
        ty = (1..9).map(|k| (1u64 << k) as f64).filter(|&t| t < extent[1]).map(Some).collect();
    }
    ty.push(None);
    let small: Vec<usize> = (2..n).filter(|&d| extent[d] <= 16.0).collect();
    let extras_inside_options: &[bool] = if small.is_empty() { &[false] } else { &[false, true] };
    let mut out = Vec::new();
    for &x in &tx {
        for &y in &ty {
            for &inside in extras_inside_options {
                let both = x.is_some() && y.is_some() && n >= 2;
                for &x_outermost in if both { &[false, true][..] } else { &[false][..] } {
                    let mut tile = extent.to_vec();
                    let kind = |s: Option<f64>| if s.is_some() { LoopKind::Inner } else { LoopKind::Whole };
                    let mut loops = vec![LoopDesc { dim: 0, kind: kind(x) }];
                    if let Some(t) = x {
                        tile[0] = t;
                    }
                    if inside {
                        loops.extend(small.iter().map(|&d| LoopDesc { dim: d, kind: LoopKind::Whole }));
                    }
                    if n >= 2 {
                        loops.push(LoopDesc { dim: 1, kind: kind(y) });
                        if let Some(t) = y {
                            tile[1] = t;
                        }
                    }
                    let mut outer = Vec::new();
                    if x.is_some() {
                        outer.push(LoopDesc { dim: 0, kind: LoopKind::Outer });
                    }
                    if y.is_some() && n >= 2 {
                        outer.push(LoopDesc { dim: 1, kind: LoopKind::Outer });
                    }
                    if x_outermost {
                        outer.reverse();
                    }
                    loops.extend(outer);
                    for d in 2..n {
                        if !(inside && small.contains(&d)) {
                            loops.push(LoopDesc { dim: d, kind: LoopKind::Whole });
                        }
                    }
                    // The outermost tile loop runs in parallel (sec. 4.4); without tiles,
                    // the outermost loop.
                    let parallel = loops
                        .iter()
                        .rposition(|l| l.kind == LoopKind::Outer)
                        .or(Some(loops.len() - 1))
                        .filter(|&l| l > 0 || loops.len() == 1);
                    out.push(Nest { loops, tile, extent: extent.to_vec(), parallel });
                }
            }
        }
    }
    out
}

/// Work per point of a row `row` points long computed in vectors of `lanes`, relative to
/// a row filling its vectors: the last vector of a row is computed whole, and a row
/// shorter than one vector is computed a point at a time (which costs about a vector per
/// point).
fn lane_waste(row: f64, lanes: usize) -> f64 {
    let lanes = lanes.max(1) as f64;
    if row >= lanes {
        (row / lanes).ceil() * lanes / row
    } else {
        lanes
    }
}

/// Cost of a nest, or `None` if it breaks a constraint.
fn evaluate(nest: &Nest, input: &GroupInput<'_>, models: &GroupModels, m: &MachineParams) -> Option<Tiling> {
    let p = &models.p;
    let placements =
        fuse(nest, input.stages, input.out, models, input.single_stage, input.split_slides, input.lanes_of)?;
    let n = nest.loops.len();
    let mut work = nest.extent.iter().product::<f64>() * input.ops[input.out];
    let mut recompute = 0.0;
    let mut overhead = 0.0;
    let mut unfolded = 0.0;
    let mut all_buffers = 0.0;
    for (f, pl) in &placements {
        let model = &models.funcs[f];
        // Eq. 15: tiles at least as large as the overlap along split dimensions.
        for (l, desc) in nest.loops.iter().enumerate() {
            if desc.kind == LoopKind::Inner && l >= pl.compute && nest.tile[desc.dim] < model.max_halo(desc.dim, p) {
                return None;
            }
        }
        let root = model.full.iter().map(|e| e.min(1e12)).product::<f64>();
        let per_compute = model.volume(&nest.box_inside(pl.compute), p);
        let computed = if pl.slide_dim.is_some() {
            nest.instances(pl.store) * model.volume(&nest.box_inside(pl.store), p)
        } else {
            nest.instances(pl.compute) * per_compute
        };
        let ops = input.ops[*f];
        // A member computed over narrow rows wastes lanes (a row of 20 in vectors of 16
        // computes 32) and pays a row's loop overhead for few points; one narrower than a
        // vector is not vectorized at all.
        let row = if model.dims() > 0 { model.extent(0, &nest.box_inside(pl.compute), p) } else { 1.0 };
        work += root * ops;
        recompute += (computed * lane_waste(row, (input.lanes_of)(*f)) - root).max(0.0) * ops;
        overhead += nest.instances(pl.compute) * OVERHEAD + computed / row.max(1.0) * ROW_OVERHEAD;
        let bytes = per_compute * model.bytes as f64;
        if pl.slide_dim.is_none() {
            unfolded += bytes;
        }
        all_buffers += bytes;
    }
    // Small stages stay on one thread (apply.rs does not parallelize them either).
    let parallel = nest.parallel.filter(|_| work >= PARALLEL_MIN_WORK);
    // Threads kept busy: with few tasks per core, one late task (another process, a
    // slower core) leaves the others idle at the end, so a few tasks per core balance
    // better than one.
    let threads = parallel
        .map_or(1.0, |l| {
            let tasks = nest.trips(l);
            let per_core = tasks / m.cores as f64;
            tasks.min(m.cores as f64) * (1.0 - IMBALANCE / per_core.max(1.0))
        })
        .max(1.0);
    if unfolded > m.l2 as f64 || all_buffers * threads > m.llc as f64 {
        return None;
    }
    // Loads from outside the group, per tile (eqs. 5–6): rows start prefetch streams.
    let tile_level = nest.loops.iter().position(|l| l.kind == LoopKind::Outer).unwrap_or(n);
    let b = nest.box_inside(tile_level);
    let tiles = nest.instances(tile_level);
    let mut load = 0.0;
    let mut transposed_reads = 0;
    let line = m.cache_line.max(1) as f64;
    let ext_models = input.external.iter().filter_map(|e| models.funcs.get(e)).chain(models.images.values());
    for q in ext_models {
        let rows: f64 = (1..q.dims()).map(|d| q.extent(d, &b, p)).product();
        let width = if q.dims() > 0 { q.extent(0, &b, p) } else { 1.0 };
        // Rows as wide as the whole buffer follow each other in memory: one stream for
        // the tile. Narrower rows each start a stream of their own.
        let whole_rows = q.dims() > 0 && width >= q.full[0];
        let streams = if whole_rows { 1.0 } else { rows };
        let mut lines = rows * (width * q.bytes as f64 / line).ceil() + streams * STREAM;
        // A transposed read (the output's innermost loop walks down the buffer's rows)
        // touches a line per point of a row of the tile. The next rows of the tile reuse
        // those lines only while they stay in L1 (half of it: the output and the other
        // reads use the rest; and few rows: see `TRANSPOSED_ROWS`); beyond that, every
        // point loads one.
        if q.transposed() {
            transposed_reads += 1;
            let mut one_row = vec![1.0; b.len()];
            one_row[0] = b[0];
            let lines_per_row: f64 = (1..q.dims()).map(|d| q.extent(d, &one_row, p)).product();
            if lines_per_row > (m.l1 as f64 / 2.0 / line).min(TRANSPOSED_ROWS) {
                let tile_rows: f64 = b[1..].iter().product();
                lines = lines.max(tile_rows * lines_per_row * TRANSPOSED_MISS);
            }
        }
        load += tiles * lines;
    }
    overhead += tiles * TILE_OVERHEAD + parallel.map_or(0.0, |l| nest.instances(l) * TASK_OVERHEAD);
    overhead += nest.instances(1) * ROW_OVERHEAD;
    // Partial vectors waste lanes.
    let inner = nest.tile[0];
    let lanes = input.lanes as f64;
    let vector_waste = if inner >= lanes { lane_waste(inner, input.lanes) } else { 1.0 };
    // A tile narrower than a vector computes its arithmetic in narrower vectors; its
    // transposed reads load lane by lane at any width.
    let mut narrow = 0.0;
    let narrow_lanes = nest.vector_lanes(input.lanes);
    if narrow_lanes < input.lanes {
        let arithmetic = (input.ops[input.out] - transposed_reads as f64).max(0.0);
        narrow = nest.extent.iter().product::<f64>() * arithmetic * (lanes / narrow_lanes as f64 - 1.0);
    }
    let cost = ((work + recompute) * vector_waste + narrow + W_LOAD * load + overhead) / threads;
    let mut nest = nest.clone();
    nest.parallel = parallel;
    Some(Tiling { nest, placements, cost })
}

/// Algorithm 3: the cheapest valid nest, if any.
pub(crate) fn tile_group(input: &GroupInput<'_>, models: &GroupModels, m: &MachineParams) -> Option<Tiling> {
    let out_model = models.funcs.get(&input.out)?;
    let extent: Vec<f64> = out_model.full.clone();
    let line_elems = (m.cache_line / input.out_bytes.max(1)).max(1);
    let narrow =
        input.external.iter().filter_map(|e| models.funcs.get(e)).chain(models.images.values()).any(|q| q.transposed());
    let mut best: Option<Tiling> = None;
    for nest in candidate_nests(&extent, input.lanes, line_elems, narrow) {
        if let Some(t) = evaluate(&nest, input, models, m) {
            // Strictly cheaper only: the first of equal candidates wins (deterministic).
            if best.as_ref().is_none_or(|b| t.cost < b.cost * (1.0 - 1e-9)) {
                best = Some(t);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_rows_waste_lanes() {
        assert_eq!(lane_waste(64.0, 16), 1.0);
        // A strip of 16 grid cells and its halo of 2 on each side: two vectors for 20.
        assert_eq!(lane_waste(20.0, 16), 1.6);
        assert_eq!(lane_waste(8.0, 16), 16.0);
        assert_eq!(lane_waste(3.0, 1), 1.0);
    }

    #[test]
    fn candidates_respect_vectors_and_lines() {
        let nests = candidate_nests(&[1000.0, 600.0], 16, 32, false);
        assert!(!nests.is_empty());
        for n in &nests {
            let x = n.loops[0];
            assert_eq!(x.dim, 0);
            if x.kind == LoopKind::Inner {
                assert_eq!(n.tile[0] % 32.0, 0.0, "{n:?}");
                assert!(n.tile[0] < 1000.0);
            }
            assert!(n.parallel.is_some());
        }
        // A 1-D output and a 0-D one.
        assert!(candidate_nests(&[100.0], 8, 16, false).iter().all(|n| n.loops.len() <= 2));
        assert!(candidate_nests(&[], 8, 16, false).is_empty());
    }
}
