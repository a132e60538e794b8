//! Algorithm 1 of Sioutas et al. (stage fusion analysis): the compute and store level of
//! every stage of a group, as loops of the group output's tiled loop nest `D_m`.
//!
//! A stage whose footprint overlaps between consecutive iterations of an intra-tile loop
//! (a stencil's halo along `y`) is computed inside the intra-tile loop of the outermost
//! such dimension and stored one level higher, so the lowering's sliding window computes
//! only the new rows and storage folding keeps only the rows still needed (eq. 9: a
//! `3·Tx` buffer for blur). If that loop is the innermost (vector) one, it moves one level
//! out (better spatial locality, eq. 13). A footprint that does not move at all along a
//! loop is computed outside that loop. Every producer is computed at or outside its
//! consumer's level, so each use lies inside its computation.
//!
//! Two rules beyond the paper, each from a regression on the development corpus:
//! - a stage whose box at its level is narrower than its vector in its innermost
//!   dimension (the column a transposed read needs per row of the output) is computed
//!   one loop further out, a block of whole vectors (dev seed 1027: 13.8 → 2.9 ms);
//! - a stage with a footprint dimension that moves with two output dimensions (read both
//!   as it is and transposed) is not fused: its box is the hull of both reads (dev seed
//!   1010, which the first rule alone made 1.5× slower).

use super::footprint::GroupModels;

/// How a loop of the group output's nest comes from its dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LoopKind {
    /// The intra-tile loop of a split dimension.
    Inner,
    /// The inter-tile loop of a split dimension.
    Outer,
    /// An unsplit dimension.
    Whole,
}

/// One loop of the nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoopDesc {
    pub dim: usize,
    pub kind: LoopKind,
}

/// The tiled loop nest `D_m` of a group output, innermost loop first.
#[derive(Clone, Debug)]
pub(crate) struct Nest {
    pub loops: Vec<LoopDesc>,
    /// Tile extent per dimension (the whole extent where not split).
    pub tile: Vec<f64>,
    /// The estimated extent per dimension.
    pub extent: Vec<f64>,
    /// The loop that runs in parallel.
    pub parallel: Option<usize>,
}

impl Nest {
    /// Lanes of the vectors along the innermost loop for a Func of `lanes`: a tile narrower
    /// than that (one read transposed) is computed in vectors of its width.
    pub fn vector_lanes(&self, lanes: usize) -> usize {
        match self.loops.first() {
            Some(l) if l.kind == LoopKind::Inner && self.tile[l.dim] < lanes as f64 => self.tile[l.dim] as usize,
            _ => lanes,
        }
    }
    /// Iterations of loop `l`.
    pub fn trips(&self, l: usize) -> f64 {
        let LoopDesc { dim, kind } = self.loops[l];
        match kind {
            LoopKind::Inner => self.tile[dim],
            LoopKind::Outer => (self.extent[dim] / self.tile[dim]).ceil(),
            LoopKind::Whole => self.extent[dim],
        }
    }
    /// The extents of the output box that one iteration of loop `c` covers (the loops
    /// inside it); `c == loops.len()` is the whole output.
    pub fn box_inside(&self, c: usize) -> Vec<f64> {
        let mut b: Vec<f64> = vec![1.0; self.extent.len()];
        for l in &self.loops[..c.min(self.loops.len())] {
            b[l.dim] = match l.kind {
                LoopKind::Inner => b[l.dim].max(self.tile[l.dim]),
                LoopKind::Outer | LoopKind::Whole => self.extent[l.dim],
            };
        }
        b
    }
    /// How many times the body of loop `c` runs (1 for `c == loops.len()`, root).
    pub fn instances(&self, c: usize) -> f64 {
        (c..self.loops.len()).map(|l| self.trips(l)).product()
    }
}

/// Where one stage of the group is computed and stored (loop indices; `loops.len()` is root).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    pub compute: usize,
    pub store: usize,
    /// The stage's dimension that slides (and is folded), if it slides.
    pub slide_dim: Option<usize>,
}

/// Runs Algorithm 1 over the group's stages, given as `(stage, its consumers)` pairs,
/// consumers first (the group output is `out`); a stage read by several members is
/// computed at or outside the levels of all of them. `split_slides` says whether the
/// lowering slides over the inner loop of a split; `lanes_of` gives a stage's vector
/// lanes. `None` if some stage cannot be computed inside the nest (its footprint stands
/// still along the outermost loop, or spans the hull of two output dimensions).
pub(crate) fn fuse(
    nest: &Nest,
    stages: &[(usize, Vec<usize>)],
    out: usize,
    models: &GroupModels,
    single_stage: &dyn Fn(usize) -> bool,
    split_slides: bool,
    lanes_of: &dyn Fn(usize) -> usize,
) -> Option<Vec<(usize, Placement)>> {
    let n = nest.loops.len();
    let p = &models.p;
    let mut placed: Vec<(usize, Placement)> = Vec::new();
    for (f, consumers) in stages {
        let f = *f;
        let model = models.funcs.get(&f)?;
        // A dimension of the footprint that moves with two dimensions of the output (a
        // Func read both as it is and transposed) spans their hull in every tile:
        // computed inside the tiles it would be recomputed over that hull. It belongs in
        // a group of its own.
        if (0..model.dims()).any(|d| (0..nest.extent.len()).filter(|&j| model.depends(d, j)).count() > 1) {
            return None;
        }
        let mut consumer_level = 0;
        for &consumer in consumers {
            if consumer != out {
                consumer_level = consumer_level.max(placed.iter().find(|(s, _)| *s == consumer)?.1.compute);
            }
        }
        // Whether the lowering's sliding window can reuse values along loop `l`: an unsplit
        // loop (or a split one, where the lowering proves it), not the parallel one, one
        // dimension of the stage moving with it by a whole number of points per iteration
        // forwards (the window `a·y + b`, a ≥ 1, whose monotonicity the lowering proves; a
        // down-sampled `y / 8` or a window moving backwards it cannot).
        let can_slide = |l: usize| {
            let LoopDesc { dim: j, kind } = nest.loops[l];
            let moving: Vec<usize> = (0..model.dims()).filter(|&d| model.depends(d, j)).collect();
            let whole_steps = moving.len() == 1 && {
                let a = model.advance[moving[0]][j];
                a >= 0.99 && (a - a.round()).abs() < 1e-6
            };
            (kind == LoopKind::Whole || (kind == LoopKind::Inner && split_slides))
                && nest.parallel != Some(l)
                && whole_steps
                && single_stage(f)
        };
        // Never the innermost loop: it is the vector loop.
        let mut c = 1.max(consumer_level);
        for (l, desc) in nest.loops.iter().enumerate() {
            if nest.trips(l) <= 1.0 {
                continue;
            }
            let j = desc.dim;
            if model.full_reuse(j) {
                c = c.max(l + 1);
            } else if desc.kind != LoopKind::Outer && model.partial_overlap(j, p) {
                // Inside the loop, sliding along it; where the lowering cannot slide, one
                // loop out (overlapping tiles) rather than recompute the window every time.
                c = c.max(if can_slide(l) { l } else { l + 1 });
            }
        }
        // A stage computed in vectors needs rows of a vector at least: where its box at `c`
        // is narrower (the column a transposed read needs per row) and one loop out it is
        // wider, it is computed there, a block of whole vectors, not lane by lane.
        if model.dims() > 0 {
            let row = |c: usize| model.extent(0, &nest.box_inside(c), p);
            while c + 1 < n && row(c) < lanes_of(f) as f64 && row(c + 1) > row(c) {
                c += 1;
            }
        }
        if c >= n {
            return None;
        }
        let at = nest.loops[c];
        let placement = if model.partial_overlap(at.dim, p) && can_slide(c) {
            let d = (0..model.dims()).find(|&d| model.depends(d, at.dim)).unwrap_or(0);
            Placement { compute: c, store: c + 1, slide_dim: Some(d) }
        } else {
            Placement { compute: c, store: c, slide_dim: None }
        };
        placed.push((f, placement));
    }
    Some(placed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autoschedule::footprint::Model;
    use std::collections::BTreeMap;

    /// The paper's blur: `blur_x` reads one row more above and below (overlap `v_y = 2`).
    fn blur_models() -> GroupModels {
        let p = vec![32.0, 32.0];
        let blur_x = Model {
            base: vec![32.0, 34.0],
            slope: vec![vec![1.0, 0.0], vec![0.0, 1.0]],
            advance: vec![vec![1.0, 0.0], vec![0.0, 1.0]],
            full: vec![6400.0, 4802.0],
            bytes: 2,
        };
        let mut funcs = BTreeMap::new();
        funcs.insert(1, blur_x);
        GroupModels { p, funcs, images: BTreeMap::new() }
    }

    fn tiled(parallel: usize) -> Nest {
        let l = |dim, kind| LoopDesc { dim, kind };
        Nest {
            loops: vec![l(0, LoopKind::Inner), l(1, LoopKind::Inner), l(0, LoopKind::Outer), l(1, LoopKind::Outer)],
            tile: vec![256.0, 32.0],
            extent: vec![6400.0, 4800.0],
            parallel: Some(parallel),
        }
    }

    #[test]
    fn blur_x_is_computed_at_yi_and_stored_at_xo() {
        let m = blur_models();
        let placed = fuse(&tiled(3), &[(1, vec![0])], 0, &m, &|_| true, true, &|_| 8).unwrap();
        // (yi, xo): compute inside the row loop, store one level out, slide along y.
        assert_eq!(placed, vec![(1, Placement { compute: 1, store: 2, slide_dim: Some(1) })]);
        // The folded buffer: one row of the tile plus the overlap, 3·Tx values.
        let n = tiled(3);
        let b = n.box_inside(1);
        let f = &m.funcs[&1];
        assert_eq!(f.volume(&b, &m.p), 3.0 * 256.0);
        // Without sliding over split loops, blur_x is computed per tile (at xo) instead of
        // recomputing its rows for every row of the tile.
        let placed = fuse(&tiled(3), &[(1, vec![0])], 0, &m, &|_| true, false, &|_| 8).unwrap();
        assert_eq!(placed, vec![(1, Placement { compute: 2, store: 2, slide_dim: None })]);
    }

    #[test]
    fn a_down_sampled_window_is_computed_per_tile() {
        // A grid read at y / 8 (a bilateral grid): the window moves by 1/8 row per row,
        // which the lowering cannot slide; computing it per row would recompute it 8
        // times, so it is computed once per strip (the tile loop x).
        let mut m = blur_models();
        let grid = m.funcs.get_mut(&1).unwrap();
        grid.slope = vec![vec![0.125, 0.0], vec![0.0, 0.125]];
        grid.advance = grid.slope.clone();
        grid.base = vec![5.0, 6.0];
        let l = |dim, kind| LoopDesc { dim, kind };
        let strips = Nest {
            loops: vec![l(0, LoopKind::Inner), l(1, LoopKind::Whole), l(0, LoopKind::Outer)],
            tile: vec![128.0, 4800.0],
            extent: vec![6400.0, 4800.0],
            parallel: Some(2),
        };
        let placed = fuse(&strips, &[(1, vec![0])], 0, &m, &|_| true, false, &|_| 8).unwrap();
        assert_eq!(placed, vec![(1, Placement { compute: 2, store: 2, slide_dim: None })]);
        // A unit-step window (the blur) slides in the same nest.
        let placed = fuse(&strips, &[(1, vec![0])], 0, &blur_models(), &|_| true, false, &|_| 8).unwrap();
        assert_eq!(placed, vec![(1, Placement { compute: 1, store: 2, slide_dim: Some(1) })]);
    }

    #[test]
    fn a_footprint_that_stands_still_moves_out_of_the_loop() {
        // A producer that does not depend on y: computed outside both y loops, which
        // the outermost yo forbids (it belongs at root).
        let mut m = blur_models();
        m.funcs.get_mut(&1).unwrap().slope = vec![vec![1.0, 0.0], vec![0.0, 0.0]];
        assert_eq!(fuse(&tiled(3), &[(1, vec![0])], 0, &m, &|_| true, true, &|_| 8), None);
    }
}
