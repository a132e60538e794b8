//! A raw-to-RGB camera pipeline, after Halide's `camera_pipe` (simplified): hot-pixel
//! suppression, bilinear demosaicking of a GRBG Bayer mosaic, colour correction by a 3×3
//! matrix, and a gamma curve through a 1024-entry lookup table, from 16-bit linear raw
//! data to 8-bit planar RGB.
//!
//! The borders use `mirror_interior`, which keeps the Bayer pattern's parity (the pixel
//! mirrored into `x = -1` is `x = 1`, of the same colour). Demosaicking averages with
//! integer rounding, `(a + b + 1) / 2` and `(a + b + c + d + 2) / 4`, in `u32`.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{camera_pipe::CameraPipe, App};
//! let app = CameraPipe::build("hand").unwrap();
//! let inputs = app.make_inputs(32, 24, 5);
//! assert_eq!(app.run(&Target::host(), &inputs).unwrap(), app.reference(&inputs).unwrap());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The camera pipeline's Funcs and input.
pub struct CameraPipe {
    /// Raw GRBG Bayer mosaic, 16-bit linear.
    pub input: ImageParam,
    /// The raw data with hot pixels clamped to their same-colour neighbours' range.
    pub denoised: Func,
    /// Full-resolution RGB, `(x, y, c)`, still linear `u16`.
    pub demosaiced: Func,
    /// Colour-corrected linear RGB in `[0, 1]`.
    pub corrected: Func,
    /// The tone curve: 1024 entries of `u8`.
    pub curve: Func,
    /// The output, 8-bit planar RGB.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu", "distributed"];

/// The output rows of one strip of [`CameraPipe::schedule_hand`] (and of the unit that
/// [`CameraPipe::schedule_distributed`] deals out to the ranks).
const STRIP: i32 = 32;

/// Camera RGB to output RGB (rows sum to 1, so gray stays gray).
pub const MATRIX: [[f32; 3]; 3] = [[1.6, -0.45, -0.15], [-0.25, 1.45, -0.2], [0.0, -0.5, 1.5]];

/// The curve's exponent (a plain gamma).
const GAMMA: f32 = 1.0 / 2.2;

/// Which colour the mosaic holds at `(x, y)`: GRBG, so 0 = red at odd x of even rows,
/// 2 = blue at even x of odd rows, 1 = green elsewhere.
pub fn bayer_colour(x: i32, y: i32) -> i32 {
    match (x.rem_euclid(2), y.rem_euclid(2)) {
        (1, 0) => 0,
        (0, 1) => 2,
        _ => 1,
    }
}

impl Default for CameraPipe {
    fn default() -> Self {
        CameraPipe::new()
    }
}

impl CameraPipe {
    /// Builds the algorithm (no schedule).
    pub fn new() -> CameraPipe {
        let input = ImageParam::new(Type::u16(), 2, "input");
        let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
        let raw = boundary::mirror_interior(&input, &input.bounds());
        let r = |dx: i32, dy: i32| raw.at((x + dx, y + dy));
        let denoised = Func::new("denoised");
        let hi = max(max(r(-2, 0), r(2, 0)), max(r(0, -2), r(0, 2)));
        let lo = min(min(r(-2, 0), r(2, 0)), min(r(0, -2), r(0, 2)));
        denoised.def((x, y), clamp(r(0, 0), lo, hi));

        let d = |dx: i32, dy: i32| denoised.at((x + dx, y + dy)).cast::<u32>();
        let avg2 = |a: Expr, b: Expr| ((a + b + 1u32) / 2u32).cast::<u16>();
        let avg4 = |a: Expr, b: Expr, c2: Expr, e: Expr| ((a + b + c2 + e + 2u32) / 4u32).cast::<u16>();
        let here = denoised.at((x, y));
        let cross = || avg4(d(-1, 0), d(1, 0), d(0, -1), d(0, 1));
        let diag = || avg4(d(-1, -1), d(1, -1), d(-1, 1), d(1, 1));
        let horiz = || avg2(d(-1, 0), d(1, 0));
        let vert = || avg2(d(0, -1), d(0, 1));
        let (xo, yo) = ((x % 2).eq(1), (y % 2).eq(1));
        // GRBG: G at (even, even) and (odd, odd), R at (odd, even), B at (even, odd).
        let is_r = xo.clone() & !yo.clone();
        let is_b = !xo.clone() & yo.clone();
        let is_g_red_row = !xo.clone() & !yo.clone();
        let red = select(
            is_r.clone(),
            here.clone(),
            select(is_b.clone(), diag(), select(is_g_red_row.clone(), horiz(), vert())),
        );
        let green = select(is_r.clone() | is_b.clone(), cross(), here.clone());
        let blue = select(is_b, here, select(is_r, diag(), select(is_g_red_row, vert(), horiz())));
        let demosaiced = Func::new("demosaiced");
        demosaiced.def((x, y, c), select(c.eq(0), red, select(c.eq(1), green, blue)));

        let lin = |ch: i32| demosaiced.at((x, y, ch)).cast::<f32>() / 65535.0f32;
        let row = |m: [f32; 3]| m[0] * lin(0) + m[1] * lin(1) + m[2] * lin(2);
        let corrected = Func::new("corrected");
        corrected.def(
            (x, y, c),
            clamp(select(c.eq(0), row(MATRIX[0]), select(c.eq(1), row(MATRIX[1]), row(MATRIX[2]))), 0.0f32, 1.0f32),
        );
        let curve = Func::new("curve");
        let i = Var::new("i");
        curve.def(i, clamp(pow(i.cast::<f32>() / 1023.0f32, GAMMA) * 255.0f32 + 0.5f32, 0.0f32, 255.0f32).cast::<u8>());
        let out = Func::new("camera_pipe");
        let idx = clamp((corrected.at((x, y, c)) * 1023.0f32 + 0.5f32).cast::<i32>(), 0, 1023);
        out.def((x, y, c), curve.at(idx));
        input.set_estimates(&[(0, 2592), (0, 1968)]);
        out.set_estimates(&[(0, 2592), (0, 1968), (0, 3)]);
        CameraPipe { input, denoised, demosaiced, corrected, curve, out, x, y, c }
    }

    /// Builds the algorithm; it has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<CameraPipe> {
        config.resolve("camera_pipe", &[])?;
        Ok(CameraPipe::new())
    }

    /// The curve at root; the output in parallel strips of 32 rows, channels inside rows,
    /// vectorized by 8; the denoised mosaic slides down each strip (demosaicking reads the
    /// rows above and below), demosaicking and colour correction are computed per row.
    pub fn schedule_hand(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.curve.compute_root();
        self.out.split(y, yo, yi, STRIP).reorder(&[x, c, yi, yo]).parallel(yo).vectorize(x, 8);
        self.corrected.compute_at(&self.out, yi).vectorize(x, 8);
        self.demosaiced.compute_at(&self.out, yi).vectorize(x, 8);
        self.denoised.store_at(&self.out, yo).compute_at(&self.out, yi).vectorize(x, 8);
    }

    /// For a GPU: the curve a kernel of its own; the output in 32×8 tiles with its three
    /// channels unrolled in each thread; each block first denoises its tile and a
    /// two-pixel margin into shared memory, then each thread demosaics its own pixel's
    /// three channels into registers, from which colour correction reads (inlined).
    pub fn schedule_gpu(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        self.curve.compute_root().gpu_tile_1d(Var::new("i"), xo, xi, 64);
        self.out.bound(c, 0, 3).reorder(&[c, x, y]).unroll_full(c).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        self.denoised.compute_at(&self.out, xo).gpu_threads(x).gpu_threads(y);
        self.demosaiced.compute_at(&self.out, xi).reorder(&[c, x, y]).unroll_full(c);
    }

    /// Over the ranks of a distributed run: the hand schedule, with its strips of output
    /// rows dealt out in blocks to the ranks (each rank runs its strips in parallel). The
    /// curve, a table of 1024 entries, is computed whole on every rank (a root Func that is
    /// not distributed); each strip denoises and demosaics the rows it reads, so the ranks
    /// exchange nothing.
    pub fn schedule_distributed(&self) {
        self.schedule_hand();
        self.out.distribute(Var::new("yo"));
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.denoised, &self.demosaiced, &self.corrected, &self.curve, &self.out]);
    }

    /// The pipeline in plain Rust (`input` has mins 0, and is at least 2×2).
    pub fn reference(input: &Buffer<u16>) -> Buffer<u8> {
        let (w, h) = (input.width(), input.height());
        let mirror = |v: i32, n: i32| {
            if n == 1 {
                return 0;
            }
            let period = 2 * (n - 1);
            let m = v.rem_euclid(period);
            (n - 1) - ((m - (n - 1)).abs())
        };
        let raw = |x: i32, y: i32| input[[mirror(x, w), mirror(y, h)]];
        let den = |x: i32, y: i32| {
            let n = [raw(x - 2, y), raw(x + 2, y), raw(x, y - 2), raw(x, y + 2)];
            let hi = n[0].max(n[1]).max(n[2].max(n[3]));
            let lo = n[0].min(n[1]).min(n[2].min(n[3]));
            raw(x, y).min(hi).max(lo)
        };
        let d = |x: i32, y: i32| den(x, y) as u32;
        let avg2 = |a: u32, b: u32| (a + b).div_ceil(2) as u16;
        let avg4 = |a: u32, b: u32, c: u32, e: u32| ((a + b + c + e + 2) / 4) as u16;
        let demosaic = |x: i32, y: i32| -> [u16; 3] {
            let here = den(x, y);
            let cross = || avg4(d(x - 1, y), d(x + 1, y), d(x, y - 1), d(x, y + 1));
            let diag = || avg4(d(x - 1, y - 1), d(x + 1, y - 1), d(x - 1, y + 1), d(x + 1, y + 1));
            let horiz = || avg2(d(x - 1, y), d(x + 1, y));
            let vert = || avg2(d(x, y - 1), d(x, y + 1));
            match bayer_colour(x, y) {
                0 => [here, cross(), diag()],
                2 => [diag(), cross(), here],
                _ if y.rem_euclid(2) == 0 => [horiz(), here, vert()],
                _ => [vert(), here, horiz()],
            }
        };
        let curve: Vec<u8> = (0..1024)
            .map(|i| ((i as f32 / 1023.0f32).powf(GAMMA) * 255.0f32 + 0.5f32).clamp(0.0, 255.0) as u8)
            .collect();
        let mut out = Buffer::<u8>::new(&[w, h, 3]);
        for y in 0..h {
            for x in 0..w {
                let rgb = demosaic(x, y);
                let lin = |ch: usize| rgb[ch] as f32 / 65535.0f32;
                for (ch, m) in MATRIX.iter().enumerate() {
                    let v = (m[0] * lin(0) + m[1] * lin(1) + m[2] * lin(2)).clamp(0.0, 1.0);
                    let idx = ((v * 1023.0f32 + 0.5f32) as i32).clamp(0, 1023);
                    out[[x, y, ch as i32]] = curve[idx as usize];
                }
            }
        }
        out
    }

    /// A raw mosaic of a picture (planar RGB in `[0, 1]`): each pixel keeps the linear
    /// value (gamma 2.2 undone) of its Bayer colour, in 16 bits.
    pub fn mosaic(rgb: &Buffer<f32>) -> Buffer<u16> {
        Buffer::from_fn(&[rgb.width(), rgb.height()], |p| {
            let v = rgb[[p[0], p[1], bayer_colour(p[0], p[1])]].clamp(0.0, 1.0);
            (v.powf(2.2) * 65535.0).round() as u16
        })
    }
}

impl App for CameraPipe {
    fn name(&self) -> &'static str {
        "camera_pipe"
    }
    fn description(&self) -> &'static str {
        "raw GRBG Bayer (16-bit linear) to 8-bit RGB: hot pixels, bilinear demosaic, colour matrix, gamma LUT"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn distributed_slices(&self) -> (usize, i32) {
        (1, STRIP)
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "gpu" => self.schedule_gpu(),
            "distributed" => self.schedule_distributed(),
            _ => return Err(common::unknown_schedule("camera_pipe", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec {
            name: "input".into(),
            ty: Type::u16(),
            channels: 1,
            values: "raw GRBG Bayer mosaic, linear 16-bit",
        }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("camera_pipe", inputs, 1)?;
        args.image(&self.input, common::input::<u16>("camera_pipe", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<u16>("camera_pipe", inputs, 0, 2)?;
        if i.width() < 2 || i.height() < 2 {
            return Err(common::too_small(
                "camera_pipe",
                format!("the mosaic must be at least 2x2, got {:?}", i.extents()),
            ));
        }
        Ok(vec![i.width(), i.height(), 3])
    }
    fn output_type(&self) -> Type {
        Type::u8()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // The test picture's mosaic, with sensor noise and a few hot pixels.
        let mut m = CameraPipe::mosaic(&crate::synth::test_picture(width, height));
        let mut r = crate::synth::Rng::new(seed);
        for v in m.as_mut_slice() {
            let noisy = *v as f64 + 300.0 * r.normal();
            *v = if r.uniform() < 0.002 { 65535 } else { noisy.clamp(0.0, 65535.0) as u16 };
        }
        vec![m.into()]
    }
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        Ok(vec![CameraPipe::mosaic(rgb).into()])
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(CameraPipe::reference(common::input::<u16>("camera_pipe", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Exact
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = CameraPipe::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
