//! One 3×3 convolution layer with bias and ReLU, as in VDSR (Kim et al. 2016) and Halide's
//! `conv_layer` app, in `f32`, with Halide's layouts (channels innermost):
//!
//! - `input(ci, x, y, n)`: `channels_in` channels, `W + 2 × H + 2` pixels (the layer reads
//!   `x .. x + 2`, `y .. y + 2`: no boundary condition, the output is 2 smaller), `batch`
//!   images;
//! - `filter(co, kx, ky, ci)`: `channels_out × 3 × 3 × channels_in`;
//! - `bias(co)`;
//! - `conv(co, x, y, n) = bias(co) + Σ_{ky, kx, ci} filter(co, kx, ky, ci) · input(ci, x +
//!   kx, y + ky, n)`, summed with `ci` innermost and `ky` outermost (a reduction over
//!   `RDom(ci, kx, ky)`), and the output `relu = max(0, conv)`, `(co, x, y, n)`.
//!
//! The sizes are parameters fixed when the pipeline is built (Halide compiles for
//! them too): `channels_in` = `channels_out` = 32 and `batch` = 4 by default. Halide's app
//! uses 128 channels, a batch of 5 and 100×80 pixels (11.8 GFLOP); 32 channels make a
//! layer of VDSR's shape light enough for a 2-core machine at a few hundred pixels square
//! (256×192×4 is 3.6 GFLOP).
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{conv_layer::ConvLayer, App};
//! let app = ConvLayer::with_sizes(8, 16, 2);
//! app.schedule_hand();
//! let inputs = app.make_inputs(12, 7, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert_eq!(out.extents(), vec![16, 12, 7, 2]);
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, AppError, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::prelude::*;

/// The layer's Funcs and inputs.
pub struct ConvLayer {
    /// Activations `(ci, x, y, n)`.
    pub input: ImageParam,
    /// Weights `(co, kx, ky, ci)`.
    pub filter: ImageParam,
    /// Biases `(co)`.
    pub bias: ImageParam,
    /// The convolution plus bias (a reduction), `(co, x, y, n)`.
    pub conv: Func,
    /// `max(0, conv)`: the output.
    pub out: Func,
    /// The reduction over input channels (`x`), `kx` (`y`) and `ky` (`z`).
    pub r: RDom,
    /// Pure variables: the output channel.
    pub c: Var,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables: the image in the batch.
    pub n: Var,
    /// Input channels.
    pub channels_in: i32,
    /// Output channels.
    pub channels_out: i32,
    /// Images per batch that [`App::make_inputs`] makes (the pipeline takes any number).
    pub batch: i32,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu"];
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "channels_in",
        default: 32.0,
        help: "input channels",
        min: 1.0,
        max: 1024.0,
        kind: ParamKind::Integer,
    },
    ParamSpec {
        name: "channels_out",
        default: 32.0,
        help: "output channels",
        min: 1.0,
        max: 1024.0,
        kind: ParamKind::Integer,
    },
    ParamSpec {
        name: "batch",
        default: 4.0,
        help: "images per batch in the generated inputs",
        min: 1.0,
        max: 64.0,
        kind: ParamKind::Integer,
    },
];

/// The vector width for `f32` on AVX2.
const VEC: i32 = 8;
/// Output channels per block of accumulators: 4 vectors.
const TILE_C: i32 = 4 * VEC;
/// Output columns per block of accumulators: 4 vectors × 3 columns = 12 of AVX2's 16
/// registers, with 7 loads (4 weight vectors, 3 broadcast activations) per 12 FMAs.
const TILE_X: i32 = 3;

impl Default for ConvLayer {
    fn default() -> Self {
        ConvLayer::new()
    }
}

impl ConvLayer {
    /// Builds the layer with 32 input and output channels and batches of 4 (no schedule).
    pub fn new() -> ConvLayer {
        ConvLayer::with_sizes(32, 32, 4)
    }

    /// Builds the layer from `config` (`channels_in`, `channels_out`, `batch`).
    pub fn with_config(config: &Config) -> Result<ConvLayer> {
        let v = config.resolve("conv_layer", PARAMS)?;
        Ok(ConvLayer::with_sizes(v[0] as i32, v[1] as i32, v[2] as i32))
    }

    /// Builds the layer with the given channel counts (no schedule); `batch` is the
    /// number of images [`App::make_inputs`] makes.
    pub fn with_sizes(channels_in: i32, channels_out: i32, batch: i32) -> ConvLayer {
        let (ci, co) = (channels_in.max(1), channels_out.max(1));
        let input = ImageParam::new(Type::f32(), 4, "input");
        let filter = ImageParam::new(Type::f32(), 4, "filter");
        let bias = ImageParam::new(Type::f32(), 1, "bias");
        let (c, x, y, n) = (Var::new("c"), Var::new("x"), Var::new("y"), Var::new("n"));
        let r = RDom::new(&[
            (Expr::from(0), Expr::from(ci)),
            (Expr::from(0), Expr::from(3)),
            (Expr::from(0), Expr::from(3)),
        ]);
        let conv = Func::new("conv");
        conv.def((c, x, y, n), bias.at(c));
        conv.update(
            (c, x, y, n),
            conv.at((c, x, y, n)) + filter.at((c, r.y(), r.z(), r.x())) * input.at((r.x(), x + r.y(), y + r.z(), n)),
        );
        let out = Func::new("relu");
        out.def((c, x, y, n), max(0.0f32, conv.at((c, x, y, n))));
        let (w, h, nb) = (256, 192, batch.max(1));
        input.set_estimates(&[(0, ci), (0, w + 2), (0, h + 2), (0, nb)]);
        filter.set_estimates(&[(0, co), (0, 3), (0, 3), (0, ci)]);
        bias.set_estimates(&[(0, co)]);
        out.set_estimates(&[(0, co), (0, w), (0, h), (0, nb)]);
        ConvLayer { input, filter, bias, conv, out, r, c, x, y, n, channels_in: ci, channels_out: co, batch: nb }
    }

    /// Halide's x86 (AVX2) schedule for this app: the output in blocks of 32 channels × 3
    /// columns (4 vectors of 8 by 3: 12 accumulators), the blocks unrolled, parallel over
    /// rows, images and channel blocks; the convolution computed per block, its channels
    /// vectorized and unrolled, its reduction inside with the input channels unrolled by 2.
    /// Halide's app uses blocks of 24 channels × 4 columns for its 128 channels; 32 × 3
    /// keeps 12 accumulators and divides 32 channels. Halide also stages the filter and
    /// input through `.in()` wrappers; those are left out.
    pub fn schedule_hand(&self) {
        let (c, x, y, n) = (self.c, self.x, self.y, self.n);
        let (co, ci, xo, xi) = (Var::new("co"), Var::new("ci"), Var::new("xo"), Var::new("xi"));
        let (rx, ry, rz) = (self.r.x(), self.r.y(), self.r.z());
        // Constant channel bounds make the unrolled blocks' extents constant.
        self.out
            .bound(c, 0, self.channels_out)
            .split(c, co, ci, TILE_C)
            .split(x, xo, xi, TILE_X)
            .reorder(&[ci, xi, xo, y, n, co])
            .vectorize(ci, VEC)
            .unroll_full(ci)
            .unroll_full(xi)
            .parallel(y)
            .parallel(n)
            .parallel(co);
        // As in Halide, the block's columns are unrolled too: where the image is at least
        // a block wide (the version the compiler keeps for it) the block is TILE_X
        // columns, a constant.
        if self.channels_out <= TILE_C {
            // One block covers every channel: the compiler sees a constant channel count.
            self.conv.compute_at(&self.out, xo).vectorize(c, VEC).unroll_full(c).unroll_full(x);
            self.conv
                .update_stage(0)
                .reorder(&[VarOrRVar::from(c), x.into(), y.into(), rx.into(), ry.into(), rz.into(), n.into()])
                .vectorize(c, VEC)
                .unroll_full(c)
                .unroll_full(x);
        } else {
            // Several blocks: each block's channel range starts at a loop variable, so its
            // extent (always TILE_C: the output's last block shifts inwards) is not a
            // constant to the compiler; a split by TILE_C makes the unrolled loop constant.
            let (cb, cv) = (Var::new("cb"), Var::new("cv"));
            self.conv
                .compute_at(&self.out, xo)
                .split(c, cb, cv, TILE_C)
                .vectorize(cv, VEC)
                .unroll_full(cv)
                .unroll_full(x);
            self.conv
                .update_stage(0)
                .split(c, cb, cv, TILE_C)
                .reorder(&[
                    VarOrRVar::from(cv),
                    x.into(),
                    y.into(),
                    rx.into(),
                    ry.into(),
                    rz.into(),
                    n.into(),
                    cb.into(),
                ])
                .vectorize(cv, VEC)
                .unroll_full(cv)
                .unroll_full(x);
        }
        self.conv.update_stage(0).unroll(rx, 2);
    }

    /// For a GPU: rows and images fused into one dimension, and the output in blocks of
    /// 32 channels × 8 columns × 1 row, one thread per output value (neighbouring threads
    /// own neighbouring channels, so the filter's loads coalesce and the input's are one
    /// broadcast per warp); each thread accumulates its own sum in a register over the
    /// whole reduction.
    pub fn schedule_gpu(&self) {
        let (c, x, y, n) = (self.c, self.x, self.y, self.n);
        let (yn, co, xo, yno, ci, xi, yni) = (
            Var::new("yn"),
            Var::new("co"),
            Var::new("xo"),
            Var::new("yno"),
            Var::new("ci"),
            Var::new("xi"),
            Var::new("yni"),
        );
        self.out.fuse(y, n, yn).gpu_tile_3d(
            [c.into(), x.into(), yn.into()],
            [co.into(), xo.into(), yno.into()],
            [ci.into(), xi.into(), yni.into()],
            [32, 8, 1],
        );
        self.conv.compute_at(&self.out, ci);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.conv, &self.out]);
    }

    /// Checks the inputs' shapes against the layer's sizes; returns `(W, H, N)`.
    fn check(&self, inputs: &[DynBuffer]) -> Result<(i32, i32, i32)> {
        common::count("conv_layer", inputs, 3)?;
        let input = common::input::<f32>("conv_layer", inputs, 0, 4)?;
        let filter = common::input::<f32>("conv_layer", inputs, 1, 4)?;
        let bias = common::input::<f32>("conv_layer", inputs, 2, 1)?;
        let (ci, co) = (self.channels_in, self.channels_out);
        let e = input.extents();
        if e[0] != ci || e[1] < 3 || e[2] < 3 {
            return Err(common::too_small(
                "conv_layer",
                format!("input 0 (activations) must have extents [{ci}, W + 2, H + 2, N] with W, H >= 1, got {e:?}"),
            ));
        }
        if filter.extents() != [co, 3, 3, ci] {
            return Err(common::too_small(
                "conv_layer",
                format!("input 1 (filter) must have extents [{co}, 3, 3, {ci}], got {:?}", filter.extents()),
            ));
        }
        if bias.extents() != [co] {
            return Err(common::too_small(
                "conv_layer",
                format!("input 2 (bias) must have extents [{co}], got {:?}", bias.extents()),
            ));
        }
        Ok((e[1] - 2, e[2] - 2, e[3]))
    }

    /// The layer in plain Rust (buffers with mins 0 and the shapes [`App::input_specs`]
    /// describes).
    pub fn reference_on(&self, input: &Buffer<f32>, filter: &Buffer<f32>, bias: &Buffer<f32>) -> Buffer<f32> {
        reference(input, filter, bias)
    }
}

/// The layer in plain Rust: `input (ci, W + 2, H + 2, N)`, `filter (co, 3, 3, ci)`,
/// `bias (co)`, mins 0; the output is `(co, W, H, N)`.
pub fn reference(input: &Buffer<f32>, filter: &Buffer<f32>, bias: &Buffer<f32>) -> Buffer<f32> {
    let ci = input.extent(0);
    let co = bias.extent(0);
    let (w, h, nb) = (input.extent(1) - 2, input.extent(2) - 2, input.extent(3));
    let (inp, fil) = (input.as_slice(), filter.as_slice());
    let (isx, isy, isn) = (ci as usize, (ci * (w + 2)) as usize, (ci * (w + 2) * (h + 2)) as usize);
    let (fkx, fky, fci) = (co as usize, (co * 3) as usize, (co * 9) as usize);
    Buffer::from_fn(&[co, w, h, nb], |p| {
        let (c, x, y, n) = (p[0] as usize, p[1] as usize, p[2] as usize, p[3] as usize);
        let mut acc = bias.as_slice()[c];
        for ky in 0..3 {
            for kx in 0..3 {
                let ibase = (x + kx) * isx + (y + ky) * isy + n * isn;
                let fbase = c + kx * fkx + ky * fky;
                for k in 0..ci as usize {
                    acc += fil[fbase + k * fci] * inp[ibase + k];
                }
            }
        }
        acc.max(0.0)
    })
}

impl App for ConvLayer {
    fn name(&self) -> &'static str {
        "conv_layer"
    }
    fn description(&self) -> &'static str {
        "3x3 convolution layer + bias + ReLU (VDSR), float32 (c, x, y, n) tensors, 32 -> 32 channels"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "gpu" => self.schedule_gpu(),
            _ => return Err(common::unknown_schedule("conv_layer", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![
            InputSpec {
                name: "input".into(),
                ty: Type::f32(),
                channels: 0,
                values: "activations (ci, x, y, n): channels_in x (W + 2) x (H + 2) x N, any values",
            },
            InputSpec {
                name: "filter".into(),
                ty: Type::f32(),
                channels: 0,
                values: "weights (co, kx, ky, ci): channels_out x 3 x 3 x channels_in",
            },
            InputSpec { name: "bias".into(), ty: Type::f32(), channels: 0, values: "biases (co): channels_out" },
        ]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        self.check(inputs)?;
        args.image(&self.input, common::input::<f32>("conv_layer", inputs, 0, 4)?);
        args.image(&self.filter, common::input::<f32>("conv_layer", inputs, 1, 4)?);
        args.image(&self.bias, common::input::<f32>("conv_layer", inputs, 2, 1)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let (w, h, n) = self.check(inputs)?;
        Ok(vec![self.channels_out, w, h, n])
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        let (ci, co) = (self.channels_in, self.channels_out);
        let input = crate::synth::random_f32(&[ci, width + 2, height + 2, self.batch], 0.0, 1.0, seed);
        // He-style uniform weights keep the outputs of order 1 whatever the channel count.
        let a = (6.0 / (9.0 * ci as f64)).sqrt() as f32;
        let filter = crate::synth::random_f32(&[co, 3, 3, ci], -a, a, seed.wrapping_add(1));
        let bias = crate::synth::random_f32(&[co], -0.1, 0.1, seed.wrapping_add(2));
        vec![input.into(), filter.into(), bias.into()]
    }
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        // One image of activations: channel k is the picture's channel k mod 3, grown by a
        // pixel on each side (edge repeated) so that the output has the picture's size;
        // the weights and biases are the generated ones.
        if rgb.dimensions() != 3 || rgb.extent(2) != 3 {
            return Err(AppError::Input {
                app: "conv_layer",
                message: format!("a picture must be planar RGB (x, y, 3), got extents {:?}", rgb.extents()),
            });
        }
        let (w, h) = (rgb.width(), rgb.height());
        let act = Buffer::from_fn(&[self.channels_in, w + 2, h + 2, 1], |p| {
            rgb[[(p[1] - 1).clamp(0, w - 1), (p[2] - 1).clamp(0, h - 1), p[0] % 3]]
        });
        let mut inputs = self.make_inputs(1, 1, 1);
        inputs[0] = act.into();
        Ok(inputs)
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        self.check(inputs)?;
        let input = common::input::<f32>("conv_layer", inputs, 0, 4)?;
        let filter = common::input::<f32>("conv_layer", inputs, 1, 4)?;
        let bias = common::input::<f32>("conv_layer", inputs, 2, 1)?;
        Ok(self.reference_on(input, filter, bias).into())
    }
    fn tolerance(&self) -> Tolerance {
        // The same sums in the same order: equal in practice.
        Tolerance::Relative(1e-6)
    }
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        // Output channels 0..3 of the first image as planar RGB, scaled by the largest.
        let e = output.extents();
        if e.len() != 4 {
            return output.clone();
        }
        let (w, h) = (e[1], e[2]);
        let chans = e[0].min(3);
        let v = |c: i32, x: i32, y: i32| output.get_f64(&[c.min(chans - 1), x, y, 0]).unwrap_or(0.0) as f32;
        let rgb = Buffer::from_fn(&[w, h, 3], |p| v(p[2], p[0], p[1]));
        let hi = rgb.as_slice().iter().fold(0.0f32, |m, &a| m.max(a));
        common::normalize(&rgb, 0.0, hi).into()
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = ConvLayer::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_filter_copies_the_centre() {
        // A filter that picks input channel co at (kx, ky) = (1, 1): the output is the
        // input's centre pixel (plus zero bias), clipped at 0.
        let (ci, co) = (3, 3);
        let input = Buffer::from_fn(&[ci, 6, 5, 1], |p| (p[0] + 10 * p[1] + 100 * p[2]) as f32 - 50.0);
        let filter =
            Buffer::from_fn(&[co, 3, 3, ci], |p| if p[1] == 1 && p[2] == 1 && p[0] == p[3] { 1.0 } else { 0.0 });
        let bias = Buffer::<f32>::new(&[co]);
        let out = reference(&input, &filter, &bias);
        assert_eq!(out.extents(), vec![3, 4, 3, 1]);
        for (c, x, y) in [(0, 0, 0), (2, 3, 2), (1, 2, 1)] {
            assert_eq!(out[[c, x, y, 0]], input[[c, x + 1, y + 1, 0]].max(0.0));
        }
    }

    #[test]
    fn channel_counts_that_do_not_fill_the_blocks() {
        let app = ConvLayer::with_sizes(5, 12, 1);
        app.schedule_hand();
        let inputs = app.make_inputs(7, 4, 3);
        let got = app.run(&Target::interp(), &inputs).unwrap();
        got.compare(&app.reference(&inputs).unwrap(), app.tolerance()).unwrap();
    }

    #[test]
    fn wrong_shapes_are_named() {
        let app = ConvLayer::with_sizes(4, 8, 1);
        let mut inputs = app.make_inputs(5, 5, 1);
        inputs[1] = Buffer::<f32>::new(&[8, 3, 3, 5]).into();
        let e = app.output_extents(&inputs).unwrap_err().to_string();
        assert!(e.contains("filter") && e.contains("[8, 3, 3, 4]") && e.contains("[8, 3, 3, 5]"), "{e}");
        let e = app.inputs_from_rgb(&Buffer::<f32>::new(&[4, 4])).unwrap_err().to_string();
        assert!(e.contains("planar RGB"), "{e}");
        let from_picture = app.inputs_from_rgb(&crate::synth::test_picture(6, 4)).unwrap();
        assert_eq!(app.output_extents(&from_picture).unwrap(), vec![8, 6, 4, 1]);
    }
}
