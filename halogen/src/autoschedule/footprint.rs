//! Footprints: the region of every Func and image that a box of a consumer needs,
//! evaluated numerically at the estimates with the compiler's own interval arithmetic
//! (the analysis bounds inference does, on concrete numbers). From a few probe boxes it
//! fits, per stage and dimension, `extent(T) = base + Σ_j slope_j · (T_j − p_j)`: the
//! reuse / overlap analysis of Sioutas et al. (the `v` of eq. 1 and the sets `W_i` of
//! sec. 4.1) comes out of the slopes and the constant parts.

use super::graph::{Callee, Graph};
use crate::analysis::{bounds_of_expr_in_scope, Interval, Scope};
use crate::ir::{Expr, Name};
use std::collections::BTreeMap;

/// A box of integer points: inclusive `(min, max)` per dimension.
pub(crate) type NumBox = Vec<(i64, i64)>;

/// Points in a box.
pub(crate) fn volume(b: &NumBox) -> f64 {
    b.iter().map(|(lo, hi)| (hi - lo + 1).max(0) as f64).product()
}

fn union(a: &mut NumBox, b: &NumBox) {
    for (x, y) in a.iter_mut().zip(b) {
        x.0 = x.0.min(y.0);
        x.1 = x.1.max(y.1);
    }
}

/// Regions found by one propagation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Regions {
    pub funcs: Vec<Option<NumBox>>,
    pub images: BTreeMap<Name, NumBox>,
}

fn const_interval(iv: &Interval) -> Option<(i64, i64)> {
    let lo = iv.min.as_ref()?.as_int()?;
    let hi = iv.max.as_ref()?.as_int()?;
    Some((lo, hi))
}

/// The numeric value range of `e` (None where it is not a constant range).
pub(crate) fn eval_range(e: &Expr, scope: &Scope) -> Option<(i64, i64)> {
    const_interval(&bounds_of_expr_in_scope(e, scope))
}

/// What a callee whose index cannot be bounded is assumed to cover.
pub(crate) type Fallback<'a> = &'a dyn Fn(&Callee, usize) -> (i64, i64);

/// Propagates regions from `seeds` to their producers, consumers first. Only the seeds
/// and the nodes `expand` accepts pass their needs on; the others just collect theirs.
pub(crate) fn propagate(
    g: &Graph,
    base: &Scope,
    seeds: &[(usize, NumBox)],
    expand: &dyn Fn(usize) -> bool,
    fallback: Fallback<'_>,
) -> Regions {
    let mut funcs: Vec<Option<NumBox>> = vec![None; g.nodes.len()];
    for (n, b) in seeds {
        match &mut funcs[*n] {
            Some(r) => union(r, b),
            r => *r = Some(b.clone()),
        }
    }
    let mut images: BTreeMap<Name, NumBox> = BTreeMap::new();
    for &n in g.order.iter().rev() {
        let Some(region) = funcs[n].clone() else { continue };
        if !seeds.iter().any(|(s, _)| *s == n) && !expand(n) {
            continue;
        }
        let node = &g.nodes[n];
        for (k, stage) in node.stages.iter().enumerate() {
            if !node.calls.iter().any(|c| c.stage == k) {
                continue;
            }
            let mut scope = base.clone();
            for (d, v) in &stage.pure {
                let (lo, hi) = region[*d];
                scope.insert(v.clone(), Interval::bounded(Expr::i32(lo), Expr::i32(hi)));
            }
            for (name, min, extent) in &stage.rvars {
                let m = eval_range(min, base);
                let e = eval_range(extent, base);
                let iv = match (m, e) {
                    (Some((mlo, mhi)), Some((_, ehi))) => {
                        Interval::bounded(Expr::i32(mlo), Expr::i32(mhi + ehi.max(1) - 1))
                    }
                    _ => Interval::everything(),
                };
                scope.insert(name.clone(), iv);
            }
            for call in node.calls.iter().filter(|c| c.stage == k) {
                let b: NumBox = call
                    .args
                    .iter()
                    .enumerate()
                    .map(|(d, a)| eval_range(a, &scope).unwrap_or_else(|| fallback(&call.callee, d)))
                    .collect();
                match &call.callee {
                    Callee::Func(j) => match &mut funcs[*j] {
                        Some(r) if r.len() == b.len() => union(r, &b),
                        Some(_) => {}
                        r => *r = Some(b),
                    },
                    Callee::Image(name) => match images.get_mut(name) {
                        Some(r) if r.len() == b.len() => union(r, &b),
                        Some(_) => {}
                        None => {
                            images.insert(name.clone(), b);
                        }
                    },
                }
            }
        }
    }
    Regions { funcs, images }
}

/// A linear model of one Func's (or image's) region as the tile of the group's output
/// changes: `extent_d(T) = base_d + Σ_j slope[d][j] · (T_j − p_j)`, clamped to
/// `[1, full_d]`.
#[derive(Clone, Debug)]
pub(crate) struct Model {
    pub base: Vec<f64>,
    pub slope: Vec<Vec<f64>>,
    /// How far the region's start moves per point the output box moves along `j`
    /// (`[d][j]`; negative where it moves backwards).
    pub advance: Vec<Vec<f64>>,
    /// The whole region of each dimension (what computing it at root covers).
    pub full: Vec<f64>,
    pub bytes: usize,
}

impl Model {
    pub fn dims(&self) -> usize {
        self.base.len()
    }
    /// Extent of dimension `d` for an output box of extents `t` (probe sizes `p`).
    pub fn extent(&self, d: usize, t: &[f64], p: &[f64]) -> f64 {
        let mut e = self.base[d];
        for (j, s) in self.slope[d].iter().enumerate() {
            e += s * (t[j] - p[j]);
        }
        e.clamp(1.0, self.full[d].max(1.0))
    }
    /// Points in the region for an output box of extents `t`.
    pub fn volume(&self, t: &[f64], p: &[f64]) -> f64 {
        (0..self.dims()).map(|d| self.extent(d, t, p)).product()
    }
    /// The constant part of dimension `d`: the halo a one-point box still needs beyond the
    /// points its slope accounts for (2 for a 3-tap stencil, 0 pointwise).
    pub fn halo(&self, d: usize, p: &[f64]) -> f64 {
        let mut h = self.base[d];
        for (j, s) in self.slope[d].iter().enumerate() {
            h -= s * p[j];
        }
        h
    }
    /// The output's innermost dimension moves this buffer's outer dimensions and not its
    /// innermost one: the output's rows read down the buffer's columns (a transpose).
    pub fn transposed(&self) -> bool {
        self.dims() > 1 && !self.depends(0, 0) && (1..self.dims()).any(|d| self.depends(d, 0))
    }
    /// True if dimension `d` moves with output dimension `j`.
    pub fn depends(&self, d: usize, j: usize) -> bool {
        self.slope[d][j] > 1e-9
    }
    /// Values are reused between consecutive iterations along output dimension `j`
    /// (a stencil's halo, or an upsampling) without the footprint standing still.
    pub fn partial_overlap(&self, j: usize, p: &[f64]) -> bool {
        (0..self.dims()).any(|d| self.depends(d, j) && (self.halo(d, p) > 0.5 || self.slope[d][j] < 0.99))
    }
    /// The footprint does not move at all along output dimension `j`: every iteration
    /// reuses all of it.
    pub fn full_reuse(&self, j: usize) -> bool {
        (0..self.dims()).all(|d| !self.depends(d, j))
    }
    /// The largest halo along output dimension `j` (constraint 15: tiles at least this).
    pub fn max_halo(&self, j: usize, p: &[f64]) -> f64 {
        (0..self.dims()).filter(|&d| self.depends(d, j)).map(|d| self.halo(d, p) / self.slope[d][j]).fold(0.0, f64::max)
    }
}

/// Models of everything one group reads, for probe sizes `p` of its output.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupModels {
    pub p: Vec<f64>,
    pub funcs: BTreeMap<usize, Model>,
    pub images: BTreeMap<Name, Model>,
}

/// Fits the models of a group whose output `out` covers `region`, propagating through the
/// nodes `expand` accepts. `root` gives the whole region of every Func and image.
pub(crate) fn group_models(
    g: &Graph,
    base: &Scope,
    out: usize,
    region: &NumBox,
    expand: &dyn Fn(usize) -> bool,
    root: &Regions,
) -> GroupModels {
    let n = region.len();
    let extents: Vec<i64> = region.iter().map(|(lo, hi)| (hi - lo + 1).max(1)).collect();
    let p: Vec<i64> = extents.iter().map(|&b| (b / 2).clamp(1, 32)).collect();
    let q: Vec<i64> = extents.iter().zip(&p).map(|(&b, &p)| (2 * p).min(b)).collect();
    // A box of extents `t` in the middle of the region, moved by `shift` along `dim`.
    let boxed = |t: &[i64], dim: usize, shift: i64| -> NumBox {
        region
            .iter()
            .zip(&extents)
            .zip(t)
            .enumerate()
            .map(|(d, (((lo, _), b), t))| {
                let start = lo + (b - t) / 2 + if d == dim { shift } else { 0 };
                (start, start + t - 1)
            })
            .collect()
    };
    let fallback = |c: &Callee, d: usize| -> (i64, i64) {
        let r = match c {
            Callee::Func(j) => root.funcs[*j].as_ref(),
            Callee::Image(name) => root.images.get(name),
        };
        r.and_then(|r| r.get(d).copied()).unwrap_or((0, 0))
    };
    let run = |t: &[i64], dim: usize, shift: i64| propagate(g, base, &[(out, boxed(t, dim, shift))], expand, &fallback);
    let base_run = run(&p, 0, 0);
    // One run per dimension with the box grown (slopes), one with it moved (advances).
    let mut runs = Vec::new();
    let mut moved = Vec::new();
    for j in 0..n {
        if q[j] > p[j] {
            let mut t = p.clone();
            t[j] = q[j];
            runs.push(Some(run(&t, 0, 0)));
        } else {
            runs.push(None);
        }
        moved.push(run(&p, j, p[j]));
    }
    let fit = |get: &dyn Fn(&Regions) -> Option<NumBox>, full: Option<&NumBox>, bytes: usize| -> Option<Model> {
        let b0 = get(&base_run)?;
        let dims = b0.len();
        let ext = |b: &NumBox, d: usize| (b[d].1 - b[d].0 + 1).max(1) as f64;
        let mut slope = vec![vec![0.0; n]; dims];
        for j in 0..n {
            if let Some(r) = &runs[j] {
                if let Some(b1) = get(r) {
                    if b1.len() == dims {
                        for (d, s) in slope.iter_mut().enumerate() {
                            s[j] = ((ext(&b1, d) - ext(&b0, d)) / (q[j] - p[j]) as f64).max(0.0);
                        }
                    }
                }
            }
        }
        let mut advance = vec![vec![0.0; n]; dims];
        for j in 0..n {
            if let Some(b1) = get(&moved[j]).filter(|b1| b1.len() == dims) {
                for (d, a) in advance.iter_mut().enumerate() {
                    a[j] = (b1[d].0 - b0[d].0) as f64 / p[j] as f64;
                }
            }
        }
        let full: Vec<f64> = (0..dims)
            .map(|d| full.and_then(|f| f.get(d)).map_or(f64::INFINITY, |(lo, hi)| (hi - lo + 1).max(1) as f64))
            .collect();
        Some(Model { base: (0..dims).map(|d| ext(&b0, d)).collect(), slope, advance, full, bytes })
    };
    let mut funcs = BTreeMap::new();
    for i in 0..g.nodes.len() {
        if base_run.funcs[i].is_none() {
            continue;
        }
        let full = if i == out { Some(region) } else { root.funcs[i].as_ref() };
        if let Some(m) = fit(&|r: &Regions| r.funcs[i].clone(), full, g.nodes[i].elem_bytes()) {
            funcs.insert(i, m);
        }
    }
    let mut images = BTreeMap::new();
    for name in base_run.images.keys() {
        let bytes = g.images.get(name).map_or(4, |(_, t)| t.bytes());
        if let Some(m) = fit(&|r: &Regions| r.images.get(name).cloned(), root.images.get(name), bytes) {
            images.insert(name.clone(), m);
        }
    }
    GroupModels { p: p.iter().map(|&v| v as f64).collect(), funcs, images }
}
