//! Burt–Adelson image pyramids, shared by [`crate::pyramid_blend`] and
//! [`crate::exposure_fusion`]: the Halogen Funcs that build them and the plain-Rust
//! versions the references use.
//!
//! The filter is Burt and Adelson's 5-tap generating kernel with `a = 3/8`,
//! `[1 4 6 4 1] / 16`, the one Mertens et al.'s exposure fusion uses. A level is the
//! previous one filtered and sampled at even coordinates, separably: first along `x`, then
//! along `y`. Level `j + 1` of a `w × h` level has `ceil(w / 2) × ceil(h / 2)` pixels, so
//! the sample `x` of a level sits on the sample `2x` of the level below it and no level is
//! ever empty.
//!
//! Up-sampling ("expand") is the same kernel applied to the coarse level with zeros
//! between its samples, times 4 (2 per axis); per axis that gives
//! `(c[i-1] + c[i+1] + 6 c[i]) / 8` at the even position `2i` and `(c[i] + c[i+1]) / 2` at
//! the odd position `2i + 1`.
//!
//! Every level has its own region `[0, w_j) × [0, h_j)` and each stencil reads its source
//! through a clamp of the coordinate it moves along (Forma's boundary condition at the
//! point of use; `repeat_edge` per level), so every level is computed exactly on its own
//! region and a pyramid of an image collapses back to that image.
//!
//! ```
//! use halogen_apps::pyramid::{level_sizes, Planes};
//! assert_eq!(level_sizes(13, 8, 3), vec![(13, 8), (7, 4), (4, 2)]);
//! // A constant image stays constant through down- and up-sampling.
//! let p = Planes::from_fn(13, 8, 1, |_, _, _| 0.5);
//! let d = p.down();
//! assert_eq!((d.width(), d.height()), (7, 4));
//! assert!(d.up(13, 8).data().iter().all(|&v| v == 0.5));
//! ```

use halogen::prelude::*;

/// `1 / 16`: the down-sampling kernel's normalisation (a power of two, so multiplying is
/// exact and the same as dividing).
const SIXTEENTH: f32 = 0.0625;

/// The size of every level of a pyramid of `levels` levels whose base is `w × h`.
pub fn level_sizes(w: i32, h: i32, levels: usize) -> Vec<(i32, i32)> {
    let mut v = vec![(w, h)];
    for j in 1..levels {
        let (pw, ph) = v[j - 1];
        v.push(((pw + 1) / 2, (ph + 1) / 2));
    }
    v
}

/// [`level_sizes`] as expressions of the base size (for the pipelines).
pub(crate) fn level_extents(w: Expr, h: Expr, levels: usize) -> Vec<(Expr, Expr)> {
    let mut v = vec![(w, h)];
    for j in 1..levels {
        let (pw, ph) = v[j - 1].clone();
        v.push(((pw + 1) / 2, (ph + 1) / 2));
    }
    v
}

/// A Gaussian pyramid as Funcs: `levels[0]` is the base; `x_pass[j]` is the `x` pass of
/// the down-sampling that makes level `j` (`None` at level 0).
pub struct Gaussian {
    /// The levels, finest first.
    pub levels: Vec<Func>,
    /// The `x` pass of each level's down-sampling.
    pub x_pass: Vec<Option<Func>>,
}

/// A Laplacian pyramid as Funcs: `levels[j] = gaussian[j] - expand(gaussian[j + 1])`, and
/// the last level is the Gaussian one; `up_x[j]` is the `x` pass of the expansion used by
/// level `j` (`None` at the last level).
pub struct Laplacian {
    /// The levels, finest first.
    pub levels: Vec<Func>,
    /// The `x` pass of each level's expansion.
    pub up_x: Vec<Option<Func>>,
}

/// A collapsed pyramid as Funcs: `levels[j] = detail[j] + expand(levels[j + 1])`, the last
/// level being the coarsest detail level itself; `levels[0]` is the result.
pub struct Collapse {
    /// The partial sums, finest first.
    pub levels: Vec<Func>,
    /// The `x` pass of each level's expansion (`None` at the last level).
    pub up_x: Vec<Option<Func>>,
}

/// Builds pyramid Funcs over `(x, y, rest...)`: the stencils move along `x` and `y`; the
/// other variables (channel, exposure) are carried through.
pub(crate) struct Sampler {
    x: Var,
    y: Var,
    rest: Vec<Var>,
}

impl Sampler {
    /// A sampler over `(x, y, rest...)`.
    pub(crate) fn new(x: Var, y: Var, rest: &[Var]) -> Sampler {
        Sampler { x, y, rest: rest.to_vec() }
    }

    fn args(&self, a: Expr, b: Expr) -> Vec<Expr> {
        let mut v = vec![a, b];
        v.extend(self.rest.iter().map(|&r| Expr::from(r)));
        v
    }

    fn vars(&self) -> Vec<Expr> {
        self.args(self.x.into(), self.y.into())
    }

    /// `f` filtered by `[1 4 6 4 1] / 16` and sampled at even coordinates; `fine` is `f`'s
    /// region. Returns the `x` pass and the result.
    pub(crate) fn down(&self, f: &Func, fine: &(Expr, Expr), name: &str) -> (Func, Func) {
        let (x, y) = (self.x, self.y);
        let dx = Func::new(&format!("{name}_dx"));
        let dy = Func::new(&format!("{name}_dy"));
        let cx = |d: i32| clamp(2 * x + d, 0, fine.0.clone() - 1);
        let cy = |d: i32| clamp(2 * y + d, 0, fine.1.clone() - 1);
        let fx = |d: i32| f.at(self.args(cx(d), y.into()));
        dx.def(self.vars(), taps5(fx(-2), fx(-1), fx(0), fx(1), fx(2)));
        let gy = |d: i32| dx.at(self.args(x.into(), cy(d)));
        dy.def(self.vars(), taps5(gy(-2), gy(-1), gy(0), gy(1), gy(2)));
        (dx, dy)
    }

    /// `f` expanded to twice its size; `coarse` is `f`'s region. Returns the `x` pass and
    /// the result.
    pub(crate) fn up(&self, f: &Func, coarse: &(Expr, Expr), name: &str) -> (Func, Func) {
        let (x, y) = (self.x, self.y);
        let ux = Func::new(&format!("{name}_ux"));
        let uy = Func::new(&format!("{name}_uy"));
        let cx = |d: i32| clamp(x / 2 + d, 0, coarse.0.clone() - 1);
        let cy = |d: i32| clamp(y / 2 + d, 0, coarse.1.clone() - 1);
        let fx = |d: i32| f.at(self.args(cx(d), y.into()));
        ux.def(self.vars(), expand(x.into(), fx(-1), fx(0), fx(1)));
        let gy = |d: i32| ux.at(self.args(x.into(), cy(d)));
        uy.def(self.vars(), expand(y.into(), gy(-1), gy(0), gy(1)));
        (ux, uy)
    }

    /// The Gaussian pyramid of `base`, whose levels have the regions `extents`.
    pub(crate) fn gaussian(&self, base: &Func, extents: &[(Expr, Expr)], name: &str) -> Gaussian {
        let mut levels = vec![base.clone()];
        let mut x_pass = vec![None];
        for j in 1..extents.len() {
            let (dx, dy) = self.down(&levels[j - 1], &extents[j - 1], &format!("{name}{j}"));
            levels.push(dy);
            x_pass.push(Some(dx));
        }
        Gaussian { levels, x_pass }
    }

    /// The Laplacian pyramid of a Gaussian one.
    pub(crate) fn laplacian(&self, g: &Gaussian, extents: &[(Expr, Expr)], name: &str) -> Laplacian {
        let n = g.levels.len();
        let mut levels = Vec::with_capacity(n);
        let mut up_x = Vec::with_capacity(n);
        for j in 0..n - 1 {
            let (ux, uy) = self.up(&g.levels[j + 1], &extents[j + 1], &format!("{name}_up{j}"));
            let l = Func::new(&format!("{name}{j}"));
            l.def(self.vars(), g.levels[j].at(self.vars()) - uy.at(self.vars()));
            levels.push(l);
            up_x.push(Some(ux));
        }
        levels.push(g.levels[n - 1].clone());
        up_x.push(None);
        Laplacian { levels, up_x }
    }

    /// Collapses the detail levels `detail` (finest first) into one image.
    pub(crate) fn collapse(&self, detail: &[Func], extents: &[(Expr, Expr)], name: &str) -> Collapse {
        let n = detail.len();
        let mut levels: Vec<Option<Func>> = vec![None; n];
        let mut up_x: Vec<Option<Func>> = vec![None; n];
        levels[n - 1] = Some(detail[n - 1].clone());
        for j in (0..n - 1).rev() {
            let next = levels[j + 1].clone().expect("built in the previous iteration");
            let (ux, uy) = self.up(&next, &extents[j + 1], &format!("{name}_up{j}"));
            let r = Func::new(&format!("{name}{j}"));
            r.def(self.vars(), detail[j].at(self.vars()) + uy.at(self.vars()));
            levels[j] = Some(r);
            up_x[j] = Some(ux);
        }
        Collapse { levels: levels.into_iter().map(|f| f.expect("every level built")).collect(), up_x }
    }
}

/// `f32` lanes of an AVX2 vector: the hand schedules' vector width.
pub(crate) const LANES: i32 = 8;

/// `f` in parallel strips of `rows` rows, vectorized along `x` by [`LANES`] (Halide's
/// `f.parallel(y, rows).vectorize(x, 8)`, written out).
pub(crate) fn strips(f: &Func, x: Var, y: Var, rows: i32) {
    f.split(y, y, Var::new("yi"), rows).parallel(y).vectorize(x, LANES);
}

/// `f` at root over exactly `region` in `(x, y)`, in parallel strips of `rows` rows. The
/// clamps make every reader of a level stay inside its region, so the bound only states
/// what bounds inference would find, and spares it the work of finding it.
pub(crate) fn root_level(f: &Func, x: Var, y: Var, region: &(Expr, Expr), rows: i32) {
    f.compute_root().bound(x, 0, region.0.clone()).bound(y, 0, region.1.clone());
    strips(f, x, y, rows);
}

/// The pyramid part of the hand schedules, after Halide's `local_laplacian`: every level
/// above the base of every Gaussian pyramid at root, each down-sampling's `x` pass its own
/// root stage, in parallel strips of 8 rows; the collapse's levels above the base at root
/// in strips of 8 rows, with the Laplacian and blended levels they read once inlined into
/// them and the `x` pass of each expansion they read computed per strip; the output (the
/// collapse's base, inlined) in parallel strips of 16 rows. Everything vectorized by 8.
pub(crate) fn schedule_hand(
    gaussians: &[&Gaussian],
    laplacian: &Laplacian,
    collapse: &Collapse,
    out: &Func,
    extents: &[(Expr, Expr)],
    x: Var,
    y: Var,
) {
    let levels = extents.len();
    for j in 1..levels {
        for g in gaussians {
            let dx = g.x_pass[j].as_ref().expect("levels above the base have an x pass");
            root_level(dx, x, y, &(extents[j].0.clone(), extents[j - 1].1.clone()), 8);
            root_level(&g.levels[j], x, y, &extents[j], 8);
        }
    }
    for j in (0..levels).rev() {
        let r = if j == 0 {
            strips(out, x, y, 16);
            out
        } else {
            root_level(&collapse.levels[j], x, y, &extents[j], 8);
            &collapse.levels[j]
        };
        if j + 1 < levels {
            for ux in [&collapse.up_x[j], &laplacian.up_x[j]] {
                ux.as_ref().expect("levels below the top expand the next").compute_at(r, y).vectorize(x, LANES);
            }
        }
    }
}

/// `[1 4 6 4 1] / 16` of five samples, in the order the references use.
fn taps5(a: Expr, b: Expr, c: Expr, d: Expr, e: Expr) -> Expr {
    ((a + e) + 4.0f32 * (b + d) + 6.0f32 * c) * SIXTEENTH
}

/// The expansion at fine coordinate `v` from the coarse samples at `v / 2 - 1`, `v / 2`,
/// `v / 2 + 1`.
fn expand(v: Expr, prev: Expr, here: Expr, next: Expr) -> Expr {
    select((v % 2).eq(0), (prev + next.clone() + 6.0f32 * here.clone()) * 0.125f32, (here + next) * 0.5f32)
}

fn taps5_f32(a: f32, b: f32, c: f32, d: f32, e: f32) -> f32 {
    ((a + e) + 4.0f32 * (b + d) + 6.0f32 * c) * SIXTEENTH
}

fn expand_f32(v: i32, prev: f32, here: f32, next: f32) -> f32 {
    if v % 2 == 0 {
        (prev + next + 6.0f32 * here) * 0.125f32
    } else {
        (here + next) * 0.5f32
    }
}

/// `n` planes of `w × h` floats: one level of a pyramid of every channel (and exposure)
/// at once, for the references.
#[derive(Clone, Debug, PartialEq)]
pub struct Planes {
    w: i32,
    h: i32,
    n: i32,
    data: Vec<f32>,
}

impl Planes {
    /// Planes whose value at `(x, y, plane)` is `f(x, y, plane)`.
    pub fn from_fn(w: i32, h: i32, n: i32, mut f: impl FnMut(i32, i32, i32) -> f32) -> Planes {
        let mut data = Vec::with_capacity((w.max(0) * h.max(0) * n.max(0)) as usize);
        for p in 0..n {
            for y in 0..h {
                for x in 0..w {
                    data.push(f(x, y, p));
                }
            }
        }
        Planes { w, h, n, data }
    }

    /// Width.
    pub fn width(&self) -> i32 {
        self.w
    }

    /// Height.
    pub fn height(&self) -> i32 {
        self.h
    }

    /// Every value, plane after plane, row after row.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The value at `(x, y)` of plane `p` (inside the region).
    pub fn at(&self, x: i32, y: i32, p: i32) -> f32 {
        debug_assert!(x >= 0 && x < self.w && y >= 0 && y < self.h && p >= 0 && p < self.n);
        self.data[((p * self.h + y) * self.w + x) as usize]
    }

    /// The value at the clamped coordinates (`repeat_edge`).
    fn clamped(&self, x: i32, y: i32, p: i32) -> f32 {
        self.at(x.clamp(0, self.w - 1), y.clamp(0, self.h - 1), p)
    }

    /// The next coarser level: the `x` pass, then the `y` pass.
    pub fn down(&self) -> Planes {
        let (w, h) = ((self.w + 1) / 2, (self.h + 1) / 2);
        let dx = Planes::from_fn(w, self.h, self.n, |x, y, p| {
            let f = |d: i32| self.clamped(2 * x + d, y, p);
            taps5_f32(f(-2), f(-1), f(0), f(1), f(2))
        });
        Planes::from_fn(w, h, self.n, |x, y, p| {
            let f = |d: i32| dx.clamped(x, 2 * y + d, p);
            taps5_f32(f(-2), f(-1), f(0), f(1), f(2))
        })
    }

    /// This level expanded to `w × h` (the size of the finer level).
    pub fn up(&self, w: i32, h: i32) -> Planes {
        let ux = Planes::from_fn(w, self.h, self.n, |x, y, p| {
            let f = |d: i32| self.clamped(x / 2 + d, y, p);
            expand_f32(x, f(-1), f(0), f(1))
        });
        Planes::from_fn(w, h, self.n, |x, y, p| {
            let f = |d: i32| ux.clamped(x, y / 2 + d, p);
            expand_f32(y, f(-1), f(0), f(1))
        })
    }

    /// The Gaussian pyramid with this as its base.
    pub fn gaussian(self, levels: usize) -> Vec<Planes> {
        let mut g = vec![self];
        for j in 1..levels {
            let next = g[j - 1].down();
            g.push(next);
        }
        g
    }

    /// The Laplacian pyramid of a Gaussian pyramid.
    pub fn laplacian(g: &[Planes]) -> Vec<Planes> {
        let n = g.len();
        let mut l: Vec<Planes> = (0..n - 1)
            .map(|j| {
                let up = g[j + 1].up(g[j].w, g[j].h);
                Planes::from_fn(g[j].w, g[j].h, g[j].n, |x, y, p| g[j].at(x, y, p) - up.at(x, y, p))
            })
            .collect();
        l.push(g[n - 1].clone());
        l
    }

    /// Collapses detail levels (finest first) into one image.
    pub fn collapse(detail: Vec<Planes>) -> Planes {
        let mut it = detail.into_iter().rev();
        let mut acc = it.next().expect("at least one level");
        for d in it {
            let up = acc.up(d.w, d.h);
            acc = Planes::from_fn(d.w, d.h, d.n, |x, y, p| d.at(x, y, p) + up.at(x, y, p));
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laplacian_collapses_back_to_the_image() {
        let img = Planes::from_fn(19, 10, 2, |x, y, p| ((x * 7 + y * 3 + p) % 11) as f32 / 11.0);
        let l = Planes::laplacian(&img.clone().gaussian(4));
        let back = Planes::collapse(l);
        for (a, b) in back.data().iter().zip(img.data()) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    #[test]
    fn one_pixel_levels_stay_one_pixel() {
        assert_eq!(level_sizes(1, 3, 4), vec![(1, 3), (1, 2), (1, 1), (1, 1)]);
        let p = Planes::from_fn(1, 1, 1, |_, _, _| 2.0).down();
        assert_eq!(p.data(), &[2.0]);
    }
}
