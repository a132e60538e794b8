//! Helpers shared by the apps: typed access to inputs, picture conversion, schedule names.

use crate::dynbuf::FromDyn;
use crate::{AppError, DynBuffer, InputSpec, Result};
use halogen::prelude::*;

/// Input `i` as a `Buffer<T>` with `dims` dimensions, or an error naming the app.
pub(crate) fn input<'a, T: FromDyn>(
    app: &'static str,
    inputs: &'a [DynBuffer],
    i: usize,
    dims: usize,
) -> Result<&'a Buffer<T>> {
    let b = inputs.get(i).ok_or_else(|| AppError::Input {
        app,
        message: format!("needs input {i}, but only {} inputs were given", inputs.len()),
    })?;
    let t = b.typed::<T>().ok_or_else(|| AppError::Input {
        app,
        message: format!("input {i} must hold {} values, but it holds {}", T::TYPE, b.ty()),
    })?;
    if t.dimensions() != dims {
        return Err(AppError::Input {
            app,
            message: format!("input {i} must have {dims} dimensions, but it has {}", t.dimensions()),
        });
    }
    Ok(t)
}

/// Checks that there are exactly `n` inputs.
pub(crate) fn count(app: &'static str, inputs: &[DynBuffer], n: usize) -> Result<()> {
    if inputs.len() != n {
        return Err(AppError::Input { app, message: format!("takes {n} input(s), but {} were given", inputs.len()) });
    }
    Ok(())
}

/// An error for a too-small input.
pub(crate) fn too_small(app: &'static str, what: String) -> AppError {
    AppError::Input { app, message: what }
}

/// The error for a schedule the app does not have.
pub(crate) fn unknown_schedule(app: &'static str, schedule: &str, available: &'static [&'static str]) -> AppError {
    AppError::UnknownSchedule { app, schedule: schedule.to_string(), available: available.to_vec() }
}

/// Every Func in `funcs` computed at root (Halide's "root" variant in `halide_bench.py`).
pub(crate) fn root_all(funcs: &[&Func]) {
    for f in funcs {
        f.compute_root();
    }
}

/// Every Func at root as GPU tiles of `w × h` over `x, y` (a first GPU schedule: each stage
/// one kernel, the intermediates in device memory).
pub(crate) fn gpu_root_all(funcs: &[&Func], x: Var, y: Var, w: i32, h: i32) {
    let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    for f in funcs {
        f.compute_root().gpu_tile(x, y, xo, yo, xi, yi, w, h);
    }
}

/// `f` as GPU blocks of `w × h` output points over `x, y`, each thread computing `rows`
/// rows of its column, unrolled (blocks of `w × h / rows` threads): more work per thread
/// than one point, for kernels whose time goes to loads and stores. Returns the block loop
/// over `x`, for producers computed per block.
pub(crate) fn gpu_rows_per_thread(f: &Func, x: Var, y: Var, w: i32, h: i32, rows: i32) -> Var {
    let (xo, yo, xi, yi, yii) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"), Var::new("yii"));
    f.tile_named(x, y, xo, yo, xi, yi, w, h)
        .split(yi, yi, yii, rows)
        .unroll_full(yii)
        .gpu_blocks(xo)
        .gpu_blocks(yo)
        .gpu_threads(xi)
        .gpu_threads(yi);
    xo
}

/// Halide's "inline" variant: Funcs with update definitions go to root (Halogen's default
/// already does that), everything else is inlined. Nothing to do.
pub(crate) fn naive() {}

/// The ITU-R 601 luma of planar RGB: what `halide_bench.py` uses for gray.
pub(crate) fn luma(r: f32, g: f32, b: f32) -> f32 {
    0.299 * r + 0.587 * g + 0.114 * b
}

/// A picture (planar RGB `f32` in `[0, 1]`) converted to what `spec` expects.
pub(crate) fn convert_picture(app: &'static str, rgb: &Buffer<f32>, spec: &InputSpec) -> Result<DynBuffer> {
    if rgb.dimensions() != 3 || rgb.extent(2) != 3 {
        return Err(AppError::Input {
            app,
            message: format!("a picture must be planar RGB (x, y, 3), got extents {:?}", rgb.extents()),
        });
    }
    let (w, h) = (rgb.width(), rgb.height());
    let unit: Buffer<f32> = if spec.channels == 1 {
        Buffer::from_fn(&[w, h], |c| luma(rgb[[c[0], c[1], 0]], rgb[[c[0], c[1], 1]], rgb[[c[0], c[1], 2]]))
    } else {
        Buffer::from_fn(&[w, h, spec.channels], |c| rgb[[c[0], c[1], c[2].min(2)]])
    };
    Ok(from_unit(&unit, spec.ty))
}

/// `[0, 1]` floats converted to `ty` (`u8` and `u16` scaled to their full range).
pub(crate) fn from_unit(unit: &Buffer<f32>, ty: Type) -> DynBuffer {
    let e = unit.extents();
    let scaled = |max: f32| unit.as_slice().iter().map(move |&v| (v.clamp(0.0, 1.0) * max).round());
    if ty == Type::u8() {
        DynBuffer::U8(Buffer::from_vec(scaled(255.0).map(|v| v as u8).collect(), &e).expect("same size"))
    } else if ty == Type::u16() {
        DynBuffer::U16(Buffer::from_vec(scaled(65535.0).map(|v| v as u16).collect(), &e).expect("same size"))
    } else {
        DynBuffer::F32(unit.clone())
    }
}

/// `v` mapped linearly so that `[lo, hi]` becomes `[0, 1]`, clamped.
pub(crate) fn normalize(b: &Buffer<f32>, lo: f32, hi: f32) -> Buffer<f32> {
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut out = b.clone();
    for v in out.as_mut_slice() {
        *v = ((*v - lo) / span).clamp(0.0, 1.0);
    }
    out
}
