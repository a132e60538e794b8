//! Exposure fusion (Mertens, Kautz and Van Reeth 2007), as Forma's section 4.4 builds it:
//! N exposures of one scene (planar RGB `f32` in `[0, 1]`) fused into one picture through
//! Laplacian pyramids, with no HDR radiance map in between.
//!
//! Per exposure `k` and pixel, three qualities, all with Mertens et al.'s exponents of 1:
//!
//! - contrast `C`: the absolute response of the 4-neighbour Laplacian `[0 1 0; 1 -4 1; 0 1
//!   0]` to the gray image (`0.299 R + 0.587 G + 0.114 B`), edges clamped;
//! - saturation `S`: the standard deviation of R, G and B;
//! - well-exposedness `E`: `exp(-(R-½)² / 2σ²) · exp(-(G-½)² / 2σ²) · exp(-(B-½)² / 2σ²)`
//!   with `σ = 0.2`, computed as one `exp` of the sum (`1 / 2σ² = 12.5`).
//!
//! The weight `W_k = C · S · E + 10⁻¹²` (the constant keeps all-zero pixels defined) is
//! normalised across the exposures; the Gaussian pyramid of each normalised weight
//! multiplies the Laplacian pyramid of its exposure, the products are summed per level and
//! the sum is collapsed (see [`crate::pyramid`] for the `[1 4 6 4 1] / 16` pyramids, clamped
//! at every level). `levels` defaults to 5; `exposures` to 3. The result is not clamped
//! (a fused pixel may leave `[0, 1]` slightly); [`App::display`] clamps it.
//!
//! The exposures go through one pyramid with a fourth dimension `k`, and the weights
//! through one with a third, which keeps the number of Funcs the compiler sees independent
//! of N.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{exposure_fusion::ExposureFusion, App};
//! let app = ExposureFusion::with_levels(3, 3);
//! app.schedule_hand();
//! let inputs = app.make_inputs(24, 16, 1);
//! assert_eq!(inputs.len(), 3);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::pyramid::{self, Collapse, Gaussian, Laplacian, Planes, Sampler};
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::prelude::*;

/// `1 / (2σ²)` for the well-exposedness Gaussian, `σ = 0.2`.
pub const WELL_EXPOSED_SCALE: f32 = 12.5;
/// Added to every weight before normalising.
pub const WEIGHT_FLOOR: f32 = 1e-12;
/// The exposures [`App::make_inputs`] and [`App::inputs_from_rgb`] make span this many
/// stops each side of the scene's own exposure.
pub const STOPS: f64 = 2.0;

/// The fusion's Funcs and inputs.
pub struct ExposureFusion {
    /// The exposures, planar RGB `f32`, all the same size.
    pub inputs: Vec<ImageParam>,
    /// The exposures as one Func, `(x, y, c, k)`.
    pub images: Func,
    /// Gray of each exposure, `(x, y, k)`.
    pub gray: Func,
    /// Contrast · saturation · well-exposedness (+ 10⁻¹²), `(x, y, k)`.
    pub weight: Func,
    /// The weights' sum over the exposures, `(x, y)`.
    pub weight_sum: Func,
    /// The normalised weights, `(x, y, k)`.
    pub norm_weight: Func,
    /// Gaussian pyramid of the normalised weights, `(x, y, k)`.
    pub weight_gaussian: Gaussian,
    /// Laplacian pyramid of the exposures, `(x, y, c, k)`.
    pub image_laplacian: Laplacian,
    /// Gaussian pyramid of the exposures (the Laplacian one's source), `(x, y, c, k)`.
    pub image_gaussian: Gaussian,
    /// The fused Laplacian pyramid, `(x, y, c)`.
    pub fused: Vec<Func>,
    /// The collapse of the fused pyramid, `(x, y, c)`.
    pub collapse: Collapse,
    /// The output: the collapse's finest level.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// The exposure.
    pub k: Var,
    /// Number of pyramid levels.
    pub levels: usize,
    /// The region of every level.
    pub extents: Vec<(Expr, Expr)>,
}

const APP: &str = "exposure_fusion";
const SCHEDULES: &[&str] = &["root", "hand"];
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "levels",
        default: 5.0,
        help: "pyramid levels, counting the base",
        min: 1.0,
        max: 10.0,
        kind: ParamKind::Integer,
    },
    ParamSpec {
        name: "exposures",
        default: 3.0,
        help: "number of input exposures N",
        min: 2.0,
        max: 8.0,
        kind: ParamKind::Integer,
    },
];

/// Luma, as the other apps compute it.
fn luma(r: Expr, g: Expr, b: Expr) -> Expr {
    0.299f32 * r + 0.587f32 * g + 0.114f32 * b
}

/// Saturation times well-exposedness of one RGB pixel.
fn colour_weight(r: Expr, g: Expr, b: Expr) -> Expr {
    let mu = (r.clone() + g.clone() + b.clone()) / 3.0f32;
    let (dr, dg, db) = (r.clone() - mu.clone(), g.clone() - mu.clone(), b.clone() - mu);
    let saturation = sqrt((dr.clone() * dr + dg.clone() * dg + db.clone() * db) / 3.0f32);
    let (er, eg, eb) = (r - 0.5f32, g - 0.5f32, b - 0.5f32);
    let well = exp(-WELL_EXPOSED_SCALE * (er.clone() * er + eg.clone() * eg + eb.clone() * eb));
    saturation * well
}

fn colour_weight_f32(r: f32, g: f32, b: f32) -> f32 {
    let mu = (r + g + b) / 3.0f32;
    let (dr, dg, db) = (r - mu, g - mu, b - mu);
    let saturation = ((dr * dr + dg * dg + db * db) / 3.0f32).sqrt();
    let (er, eg, eb) = (r - 0.5f32, g - 0.5f32, b - 0.5f32);
    let well = (-WELL_EXPOSED_SCALE * (er * er + eg * eg + eb * eb)).exp();
    saturation * well
}

impl Default for ExposureFusion {
    fn default() -> Self {
        ExposureFusion::with_levels(5, 3)
    }
}

impl ExposureFusion {
    /// Builds the algorithm from `config` (`levels`, `exposures`).
    pub fn with_config(config: &Config) -> Result<ExposureFusion> {
        let v = config.resolve(APP, PARAMS)?;
        Ok(ExposureFusion::with_levels(v[0] as usize, v[1] as usize))
    }

    /// Builds the algorithm with `levels` pyramid levels for `exposures` inputs (at least 1
    /// of each; 0 is taken as 1).
    pub fn with_levels(levels: usize, exposures: usize) -> ExposureFusion {
        let (levels, n) = (levels.max(1), exposures.max(1));
        let inputs: Vec<ImageParam> =
            (0..n).map(|i| ImageParam::new(Type::f32(), 3, &format!("exposure{i}"))).collect();
        let (x, y, c, k) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("k"));
        let (w, h) = (inputs[0].width(), inputs[0].height());
        let extents = pyramid::level_extents(w.clone(), h.clone(), levels);

        // The exposures stacked along k: the last one where k matches no other.
        let images = Func::new("images");
        let mut stacked = inputs[n - 1].at((x, y, c));
        for i in (0..n - 1).rev() {
            stacked = select(k.eq(i as i32), inputs[i].at((x, y, c)), stacked);
        }
        images.def((x, y, c, k), stacked);

        let px = |ch: i32| images.at((x, y, ch, k));
        let gray = Func::new("gray");
        gray.def((x, y, k), luma(px(0), px(1), px(2)));
        let g = |dx: i32, dy: i32| gray.at((clamp(x + dx, 0, w.clone() - 1), clamp(y + dy, 0, h.clone() - 1), k));
        let contrast = abs(g(-1, 0) + g(1, 0) + g(0, -1) + g(0, 1) - 4.0f32 * gray.at((x, y, k)));
        let weight = Func::new("weight");
        weight.def((x, y, k), contrast * colour_weight(px(0), px(1), px(2)) + WEIGHT_FLOOR);
        let weight_sum = Func::new("weight_sum");
        let mut total = weight.at((x, y, 0));
        for i in 1..n {
            total = total + weight.at((x, y, i as i32));
        }
        weight_sum.def((x, y), total);
        let norm_weight = Func::new("norm_weight");
        norm_weight.def((x, y, k), weight.at((x, y, k)) / weight_sum.at((x, y)));

        let weight_gaussian = Sampler::new(x, y, &[k]).gaussian(&norm_weight, &extents, "weight_g");
        let four = Sampler::new(x, y, &[c, k]);
        let image_gaussian = four.gaussian(&images, &extents, "image_g");
        let image_laplacian = four.laplacian(&image_gaussian, &extents, "image_l");
        let fused: Vec<Func> = (0..levels)
            .map(|j| {
                let f = Func::new(&format!("fused{j}"));
                let term = |i: usize| {
                    let i = i as i32;
                    weight_gaussian.levels[j].at((x, y, i)) * image_laplacian.levels[j].at((x, y, c, i))
                };
                let mut acc = term(0);
                for i in 1..n {
                    acc = acc + term(i);
                }
                f.def((x, y, c), acc);
                f
            })
            .collect();
        let collapse = Sampler::new(x, y, &[c]).collapse(&fused, &extents, "collapse");
        let out = Func::new("exposure_fusion");
        out.def((x, y, c), collapse.levels[0].at((x, y, c)));
        for p in &inputs {
            p.set_estimates(&[(0, 2560), (0, 1536), (0, 3)]);
        }
        out.set_estimates(&[(0, 2560), (0, 1536), (0, 3)]);
        ExposureFusion {
            inputs,
            images,
            gray,
            weight,
            weight_sum,
            norm_weight,
            weight_gaussian,
            image_laplacian,
            image_gaussian,
            fused,
            collapse,
            out,
            x,
            y,
            c,
            k,
            levels,
            extents,
        }
    }

    /// After Halide's pyramid schedules (its `local_laplacian`) and Forma's fusion: gray
    /// (read by the contrast stencil), the weights and the normalised weights at root, the
    /// saturation, well-exposedness and contrast fused into the weights; every pyramid
    /// level above the base at root over exactly its region, with each down-sampling's `x`
    /// pass its own root stage; all in parallel strips of 8 rows and vectorized by 8 (AVX2
    /// `f32`). The fused and Laplacian levels are inlined into the collapse that reads them
    /// once; the `x` pass of each expansion is computed per strip of the level that reads
    /// it. The output is the collapse's base level, in parallel strips of 16 rows.
    pub fn schedule_hand(&self) {
        for f in [&self.gray, &self.weight, &self.norm_weight] {
            pyramid::root_level(f, self.x, self.y, &self.extents[0], 8);
        }
        pyramid::schedule_hand(
            &[&self.image_gaussian, &self.weight_gaussian],
            &self.image_laplacian,
            &self.collapse,
            &self.out,
            &self.extents,
            self.x,
            self.y,
        );
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        let mut all = vec![&self.images, &self.gray, &self.weight, &self.weight_sum, &self.norm_weight, &self.out];
        for g in [&self.image_gaussian, &self.weight_gaussian] {
            all.extend(g.levels.iter());
            all.extend(g.x_pass.iter().flatten());
        }
        all.extend(self.image_laplacian.levels.iter());
        all.extend(self.image_laplacian.up_x.iter().flatten());
        all.extend(self.fused.iter());
        all.extend(self.collapse.levels.iter());
        all.extend(self.collapse.up_x.iter().flatten());
        common::root_all(&all);
    }

    /// The fusion in plain Rust (every exposure planar RGB with the same extents, mins 0):
    /// the same operations in the same order as the pipeline.
    pub fn reference_on(&self, exposures: &[&Buffer<f32>]) -> Buffer<f32> {
        let n = exposures.len() as i32;
        let (w, h) = (exposures[0].width(), exposures[0].height());
        let images = Planes::from_fn(w, h, 3 * n, |x, y, p| exposures[(p / 3) as usize][[x, y, p % 3]]);
        let gray = Planes::from_fn(w, h, n, |x, y, k| {
            luma_f32(images.at(x, y, 3 * k), images.at(x, y, 3 * k + 1), images.at(x, y, 3 * k + 2))
        });
        let weight = Planes::from_fn(w, h, n, |x, y, k| {
            let g = |dx: i32, dy: i32| gray.at((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1), k);
            let contrast = (g(-1, 0) + g(1, 0) + g(0, -1) + g(0, 1) - 4.0f32 * gray.at(x, y, k)).abs();
            let px = |ch: i32| images.at(x, y, 3 * k + ch);
            contrast * colour_weight_f32(px(0), px(1), px(2)) + WEIGHT_FLOOR
        });
        let norm = Planes::from_fn(w, h, n, |x, y, k| {
            let total = (1..n).fold(weight.at(x, y, 0), |acc, i| acc + weight.at(x, y, i));
            weight.at(x, y, k) / total
        });
        let wg = norm.gaussian(self.levels);
        let l = Planes::laplacian(&images.gaussian(self.levels));
        let fused: Vec<Planes> = l
            .iter()
            .zip(&wg)
            .map(|(l, wg)| {
                Planes::from_fn(l.width(), l.height(), 3, |x, y, c| {
                    let term = |k: i32| wg.at(x, y, k) * l.at(x, y, 3 * k + c);
                    (1..n).fold(term(0), |acc, k| acc + term(k))
                })
            })
            .collect();
        let r = Planes::collapse(fused);
        Buffer::from_fn(&[w, h, 3], |p| r.at(p[0], p[1], p[2]))
    }

    /// `n` exposures of a scene (planar RGB in `[0, 1]`, display-referred): the scene's
    /// linear light (gamma 2.2 undone) scaled by `2^s` for `s` evenly spaced over
    /// `[-STOPS, STOPS]`, clipped to `[0, 1]` as a sensor clips, gamma 2.2 again; plus
    /// sensor noise of standard deviation `noise` drawn from `seed`.
    pub fn exposures_of(scene: &Buffer<f32>, n: usize, noise: f64, seed: u64) -> Vec<Buffer<f32>> {
        let mut r = crate::synth::Rng::new(seed);
        (0..n)
            .map(|i| {
                let stops = if n > 1 { -STOPS + 2.0 * STOPS * i as f64 / (n - 1) as f64 } else { 0.0 };
                let gain = stops.exp2();
                let mut e = scene.clone();
                for v in e.as_mut_slice() {
                    let lin = (*v as f64).clamp(0.0, 1.0).powf(2.2) * gain;
                    let shown = lin.clamp(0.0, 1.0).powf(1.0 / 2.2) + noise * r.normal();
                    *v = shown.clamp(0.0, 1.0) as f32;
                }
                e
            })
            .collect()
    }
}

fn luma_f32(r: f32, g: f32, b: f32) -> f32 {
    0.299f32 * r + 0.587f32 * g + 0.114f32 * b
}

impl ExposureFusion {
    /// The inputs, checked: one per exposure, planar RGB, all with the same extents.
    fn checked<'a>(&self, inputs: &'a [DynBuffer]) -> Result<Vec<&'a Buffer<f32>>> {
        common::count(APP, inputs, self.inputs.len())?;
        let bufs = (0..inputs.len()).map(|i| common::input::<f32>(APP, inputs, i, 3)).collect::<Result<Vec<_>>>()?;
        let first = bufs[0].extents();
        if first[2] != 3 || first[0] < 1 || first[1] < 1 {
            return Err(common::too_small(APP, format!("exposure 0 must be planar RGB (x, y, 3), got {first:?}")));
        }
        for (i, b) in bufs.iter().enumerate().skip(1) {
            if b.extents() != first {
                return Err(common::too_small(
                    APP,
                    format!(
                        "every exposure must have the extents of exposure 0, {first:?}; exposure {i} has {:?}",
                        b.extents()
                    ),
                ));
            }
        }
        Ok(bufs)
    }
}

impl App for ExposureFusion {
    fn name(&self) -> &'static str {
        APP
    }
    fn description(&self) -> &'static str {
        "exposure fusion (Mertens et al.): N float32 planar RGB exposures fused through Laplacian pyramids"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            _ => return Err(common::unknown_schedule(APP, name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        (0..self.inputs.len())
            .map(|i| InputSpec {
                name: format!("exposure{i}"),
                ty: Type::f32(),
                channels: 3,
                values: "planar RGB in [0, 1], display-referred; every exposure the same size",
            })
            .collect()
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        for (p, b) in self.inputs.iter().zip(self.checked(inputs)?) {
            args.image(p, b);
        }
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(self.checked(inputs)?[0].extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        let scene = crate::synth::test_picture(width, height);
        ExposureFusion::exposures_of(&scene, self.inputs.len(), 0.005, seed).into_iter().map(Into::into).collect()
    }
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        if rgb.dimensions() != 3 || rgb.extent(2) != 3 {
            return Err(common::too_small(
                APP,
                format!("a picture must be planar RGB (x, y, 3), got extents {:?}", rgb.extents()),
            ));
        }
        Ok(ExposureFusion::exposures_of(rgb, self.inputs.len(), 0.0, 0).into_iter().map(Into::into).collect())
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(self.reference_on(&self.checked(inputs)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        // The native code may evaluate exp with a vector library whose last bit differs.
        Tolerance::Relative(1e-5)
    }
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        match output.typed::<f32>() {
            Some(b) => common::normalize(b, 0.0, 1.0).into(),
            None => output.clone(),
        }
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = ExposureFusion::default();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_exposures_fuse_to_themselves() {
        let app = ExposureFusion::with_levels(4, 3);
        let e = crate::synth::test_picture(21, 14);
        let out = app.reference_on(&[&e, &e, &e]);
        for (o, i) in out.as_slice().iter().zip(e.as_slice()) {
            assert!((o - i).abs() < 1e-5, "{o} vs {i}");
        }
    }

    #[test]
    fn exposures_are_ordered_dark_to_bright() {
        let scene = crate::synth::test_picture(16, 12);
        let e = ExposureFusion::exposures_of(&scene, 3, 0.0, 0);
        let mean = |b: &Buffer<f32>| b.as_slice().iter().sum::<f32>() / b.len() as f32;
        assert!(mean(&e[0]) < mean(&e[1]) && mean(&e[1]) < mean(&e[2]));
    }

    #[test]
    fn mistakes_are_errors_that_say_what_is_wrong() {
        let app = ExposureFusion::with_levels(2, 3);
        let mut inputs = app.make_inputs(8, 6, 1);
        inputs[1] = Buffer::<f32>::new(&[8, 7, 3]).into();
        let e = app.output_extents(&inputs).unwrap_err().to_string();
        assert!(e.contains("exposure 1") && e.contains("[8, 7, 3]"), "{e}");
        inputs.pop();
        assert!(app.reference(&inputs).unwrap_err().to_string().contains("3 input"));
        let bad = Config::parse(&["exposures=1"]).unwrap();
        let e = ExposureFusion::with_config(&bad).err().expect("one exposure is refused").to_string();
        assert!(e.ends_with("parameter 'exposures' must be an integer from 2 to 8, got 1"), "{e}");
    }
}
