//! Multi-resolution blending (Burt and Adelson 1983): two planar RGB `f32` images `a` and
//! `b` joined along a `f32` mask through Laplacian pyramids, so that the seam is as wide as
//! each level's detail is coarse.
//!
//! The Gaussian pyramid of the mask and the Laplacian pyramids of both images (see
//! [`crate::pyramid`]: `[1 4 6 4 1] / 16` down-sampling, its ×4 zero-insertion expansion,
//! edges clamped at every level) are blended per level,
//! `mask_j · a_j + (1 - mask_j) · b_j`, and the blended pyramid is collapsed. `levels`
//! (default 5, the depth Burt and Adelson's and most pyramid-blending examples use;
//! Forma's pyramid listing builds 4) counts the base level too: 1 level is a plain
//! per-pixel blend. The mask is 1 where `a` is taken, 0 where `b` is; values between mix.
//!
//! Both images go through one pyramid with a fourth dimension `k` (0 = `a`, 1 = `b`), which
//! halves the number of Funcs the compiler sees.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{pyramid_blend::PyramidBlend, App};
//! let app = PyramidBlend::with_levels(3);
//! app.schedule_hand();
//! let inputs = app.make_inputs(24, 16, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert_eq!(out.extents(), vec![24, 16, 3]);
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::pyramid::{self, Collapse, Gaussian, Laplacian, Planes, Sampler};
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::prelude::*;

/// The blend's Funcs and inputs.
pub struct PyramidBlend {
    /// Planar RGB `f32`, taken where the mask is 1.
    pub a: ImageParam,
    /// Planar RGB `f32`, taken where the mask is 0; the size of `a`.
    pub b: ImageParam,
    /// `f32` in `[0, 1]`, the size of `a`.
    pub mask: ImageParam,
    /// `a` and `b` as one Func, `(x, y, c, k)`.
    pub images: Func,
    /// Gaussian pyramid of the images, `(x, y, c, k)`.
    pub image_gaussian: Gaussian,
    /// Laplacian pyramid of the images, `(x, y, c, k)`.
    pub image_laplacian: Laplacian,
    /// Gaussian pyramid of the mask, `(x, y)`.
    pub mask_gaussian: Gaussian,
    /// The blended Laplacian pyramid, `(x, y, c)`.
    pub blended: Vec<Func>,
    /// The collapse of the blended pyramid, `(x, y, c)`.
    pub collapse: Collapse,
    /// The output: the collapse's finest level.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// Which image (0 = `a`, 1 = `b`).
    pub k: Var,
    /// Number of pyramid levels.
    pub levels: usize,
    /// The region of every level.
    pub extents: Vec<(Expr, Expr)>,
}

const SCHEDULES: &[&str] = &["root", "hand"];
const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "levels",
    default: 5.0,
    help: "pyramid levels, counting the base",
    min: 1.0,
    max: 10.0,
    kind: ParamKind::Integer,
}];

impl Default for PyramidBlend {
    fn default() -> Self {
        PyramidBlend::with_levels(5)
    }
}

impl PyramidBlend {
    /// Builds the algorithm from `config` (`levels`).
    pub fn with_config(config: &Config) -> Result<PyramidBlend> {
        let v = config.resolve("pyramid_blend", PARAMS)?;
        Ok(PyramidBlend::with_levels(v[0] as usize))
    }

    /// Builds the algorithm with `levels` pyramid levels (at least 1; 0 is taken as 1).
    pub fn with_levels(levels: usize) -> PyramidBlend {
        let levels = levels.max(1);
        let a = ImageParam::new(Type::f32(), 3, "a");
        let b = ImageParam::new(Type::f32(), 3, "b");
        let mask = ImageParam::new(Type::f32(), 2, "mask");
        let (x, y, c, k) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("k"));
        let extents = pyramid::level_extents(a.width(), a.height(), levels);
        let images = Func::new("images");
        images.def((x, y, c, k), select(k.eq(0), a.at((x, y, c)), b.at((x, y, c))));
        let mask_base = Func::new("mask_base");
        mask_base.def((x, y), mask.at((x, y)));
        let four = Sampler::new(x, y, &[c, k]);
        let image_gaussian = four.gaussian(&images, &extents, "image_g");
        let image_laplacian = four.laplacian(&image_gaussian, &extents, "image_l");
        let mask_gaussian = Sampler::new(x, y, &[]).gaussian(&mask_base, &extents, "mask_g");
        let blended: Vec<Func> = (0..levels)
            .map(|j| {
                let f = Func::new(&format!("blended{j}"));
                let m = mask_gaussian.levels[j].at((x, y));
                let l = &image_laplacian.levels[j];
                f.def((x, y, c), m.clone() * l.at((x, y, c, 0)) + (1.0f32 - m) * l.at((x, y, c, 1)));
                f
            })
            .collect();
        let collapse = Sampler::new(x, y, &[c]).collapse(&blended, &extents, "collapse");
        let out = Func::new("pyramid_blend");
        out.def((x, y, c), collapse.levels[0].at((x, y, c)));
        for p in [&a, &b] {
            p.set_estimates(&[(0, 3072), (0, 2048), (0, 3)]);
        }
        mask.set_estimates(&[(0, 3072), (0, 2048)]);
        out.set_estimates(&[(0, 3072), (0, 2048), (0, 3)]);
        PyramidBlend {
            a,
            b,
            mask,
            images,
            image_gaussian,
            image_laplacian,
            mask_gaussian,
            blended,
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

    /// After Halide's pyramid schedules (its `local_laplacian`): every level above the base
    /// of every pyramid at root over exactly its region, each down-sampling's `x` pass its
    /// own root stage, all in parallel strips of 8 rows and vectorized by 8 (AVX2 `f32`).
    /// The blended Laplacian levels, and the Laplacian levels of the images, are inlined
    /// into the collapse that reads them once; the `x` pass of each expansion is computed
    /// per strip of the level that reads it. The output is the collapse's base level, in
    /// parallel strips of 16 rows.
    pub fn schedule_hand(&self) {
        pyramid::schedule_hand(
            &[&self.image_gaussian, &self.mask_gaussian],
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
        let mut all = vec![&self.images, &self.out];
        for g in [&self.image_gaussian, &self.mask_gaussian] {
            all.extend(g.levels.iter());
            all.extend(g.x_pass.iter().flatten());
        }
        all.extend(self.image_laplacian.levels.iter());
        all.extend(self.image_laplacian.up_x.iter().flatten());
        all.extend(self.blended.iter());
        all.extend(self.collapse.levels.iter());
        all.extend(self.collapse.up_x.iter().flatten());
        common::root_all(&all);
    }

    /// The blend in plain Rust (`a`, `b` planar with the same extents, `mask` their width
    /// and height, mins 0): the same operations in the same order as the pipeline.
    pub fn reference_on(&self, a: &Buffer<f32>, b: &Buffer<f32>, mask: &Buffer<f32>) -> Buffer<f32> {
        let (w, h, ch) = (a.width(), a.height(), a.extent(2));
        let images = Planes::from_fn(w, h, 2 * ch, |x, y, p| if p < ch { a[[x, y, p]] } else { b[[x, y, p - ch]] });
        let l = Planes::laplacian(&images.gaussian(self.levels));
        let m = Planes::from_fn(w, h, 1, |x, y, _| mask[[x, y]]).gaussian(self.levels);
        let blended: Vec<Planes> = l
            .iter()
            .zip(&m)
            .map(|(l, m)| {
                Planes::from_fn(l.width(), l.height(), ch, |x, y, c| {
                    let mv = m.at(x, y, 0);
                    mv * l.at(x, y, c) + (1.0f32 - mv) * l.at(x, y, c + ch)
                })
            })
            .collect();
        let r = Planes::collapse(blended);
        Buffer::from_fn(&[w, h, ch], |p| r.at(p[0], p[1], p[2]))
    }

    /// A mask that takes `a` left of the middle and `b` right of it: the classic test,
    /// where a plain blend shows a seam.
    pub fn half_mask(width: i32, height: i32) -> Buffer<f32> {
        Buffer::from_fn(&[width, height], |p| if 2 * p[0] < width { 1.0 } else { 0.0 })
    }
}

const APP: &str = "pyramid_blend";

/// The three inputs, checked: `a` and `b` planar with the same extents, the mask their
/// width and height.
fn checked(inputs: &[DynBuffer]) -> Result<(&Buffer<f32>, &Buffer<f32>, &Buffer<f32>)> {
    common::count(APP, inputs, 3)?;
    let a = common::input::<f32>(APP, inputs, 0, 3)?;
    let b = common::input::<f32>(APP, inputs, 1, 3)?;
    let m = common::input::<f32>(APP, inputs, 2, 2)?;
    if a.extents() != b.extents() {
        return Err(common::too_small(
            APP,
            format!("images a and b must have the same extents, got {:?} and {:?}", a.extents(), b.extents()),
        ));
    }
    if m.extents() != a.extents()[..2] {
        return Err(common::too_small(
            APP,
            format!("the mask must be {}x{} like the images, got {:?}", a.width(), a.height(), m.extents()),
        ));
    }
    if a.width() < 1 || a.height() < 1 || a.extent(2) < 1 {
        return Err(common::too_small(APP, format!("the images are empty: {:?}", a.extents())));
    }
    Ok((a, b, m))
}

impl App for PyramidBlend {
    fn name(&self) -> &'static str {
        APP
    }
    fn description(&self) -> &'static str {
        "Laplacian-pyramid blend (Burt-Adelson) of two float32 planar RGB images along a float mask"
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
        vec![
            InputSpec {
                name: "a".into(),
                ty: Type::f32(),
                channels: 3,
                values: "planar RGB, taken where the mask is 1",
            },
            InputSpec {
                name: "b".into(),
                ty: Type::f32(),
                channels: 3,
                values: "planar RGB the size of a, taken where the mask is 0",
            },
            InputSpec { name: "mask".into(), ty: Type::f32(), channels: 1, values: "[0, 1], the size of a" },
        ]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        let (a, b, m) = checked(inputs)?;
        args.image(&self.a, a).image(&self.b, b).image(&self.mask, m);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(checked(inputs)?.0.extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // The test picture, joined to smooth colour waves with noise along a hard seam.
        let a = crate::synth::test_picture(width, height);
        let mut r = crate::synth::Rng::new(seed);
        let mut b = Buffer::<f32>::new(&[width, height, 3]);
        for (ci, f) in [0.9f64, 0.6, 0.3].into_iter().enumerate() {
            for yy in 0..height {
                for xx in 0..width {
                    let (xf, yf) = (xx as f64, yy as f64);
                    let v = 0.5 + 0.35 * f * (xf / 13.0 + ci as f64).sin() * (yf / 17.0).cos() + 0.03 * r.normal();
                    b[[xx, yy, ci as i32]] = v.clamp(0.0, 1.0) as f32;
                }
            }
        }
        vec![a.into(), b.into(), PyramidBlend::half_mask(width, height).into()]
    }
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        if rgb.dimensions() != 3 || rgb.extent(2) != 3 {
            return Err(common::too_small(
                APP,
                format!("a picture must be planar RGB (x, y, 3), got extents {:?}", rgb.extents()),
            ));
        }
        // The picture blended with its mirror image: the left half, then the left half
        // again, reflected.
        let (w, h) = (rgb.width(), rgb.height());
        let mirrored = Buffer::from_fn(&[w, h, 3], |p| rgb[[w - 1 - p[0], p[1], p[2]]]);
        Ok(vec![rgb.clone().into(), mirrored.into(), PyramidBlend::half_mask(w, h).into()])
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        let (a, b, m) = checked(inputs)?;
        Ok(self.reference_on(a, b, m).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Relative(1e-5)
    }
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        match output.typed::<f32>() {
            Some(b) => common::normalize(b, 0.0, 1.0).into(),
            None => output.clone(),
        }
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = PyramidBlend::default();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_level_is_a_plain_blend() {
        let app = PyramidBlend::with_levels(1);
        let inputs = app.make_inputs(6, 4, 2);
        let out = app.reference(&inputs).unwrap();
        let (a, b, m) = checked(&inputs).unwrap();
        let out = out.typed::<f32>().unwrap();
        for c in 0..3 {
            for y in 0..4 {
                for x in 0..6 {
                    let mv = m[[x, y]];
                    assert_eq!(out[[x, y, c]], mv * a[[x, y, c]] + (1.0 - mv) * b[[x, y, c]]);
                }
            }
        }
    }

    #[test]
    fn blending_an_image_with_itself_gives_it_back() {
        let app = PyramidBlend::with_levels(4);
        let a = crate::synth::test_picture(19, 13);
        let m = crate::synth::random_f32(&[19, 13], 0.0, 1.0, 3);
        let out = app.reference_on(&a, &a, &m);
        for (o, i) in out.as_slice().iter().zip(a.as_slice()) {
            assert!((o - i).abs() < 1e-5, "{o} vs {i}");
        }
    }

    #[test]
    fn mistakes_are_errors_that_say_what_is_wrong() {
        let app = PyramidBlend::with_levels(2);
        let mut inputs = app.make_inputs(8, 6, 1);
        inputs[2] = Buffer::<f32>::new(&[8, 5]).into();
        let e = app.output_extents(&inputs).unwrap_err().to_string();
        assert!(e.contains("mask") && e.contains("8x6") && e.contains("[8, 5]"), "{e}");
        inputs.pop();
        assert!(app.reference(&inputs).unwrap_err().to_string().contains("3 input"));
        let bad = Config::parse(&["levels=0"]).unwrap();
        let e = PyramidBlend::with_config(&bad).err().expect("levels=0 is refused").to_string();
        assert!(e.ends_with("parameter 'levels' must be an integer from 1 to 10, got 0"), "{e}");
    }
}
