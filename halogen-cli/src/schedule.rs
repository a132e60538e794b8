//! Building an app under a named schedule, including `auto` (the auto-scheduler planning
//! for the sizes actually run), and the benchmark sizes of each app.

use crate::{CliError, Size, MAX_PIXELS, MAX_SIDE};
use halogen::prelude::*;
use halogen_apps::{App, Config, DynBuffer};
use std::time::Instant;

/// The schedule name that asks for the auto-scheduler rather than one of the app's own.
pub const AUTO: &str = "auto";

/// An app built with its schedule applied, and what the auto-scheduler did (if it ran).
pub struct BuiltApp {
    /// The app.
    pub app: Box<dyn App>,
    /// Wall-clock seconds `auto_schedule` took (`None` for a named schedule).
    pub autoschedule_s: Option<f64>,
    /// The schedule the auto-scheduler chose, as Rust source (`None` for a named schedule).
    pub auto_source: Option<String>,
}

/// The schedules `halogen bench` runs when none is named: the app's own and `auto`.
pub fn default_schedules(app: &dyn App) -> Vec<String> {
    let mut s: Vec<String> = app.schedules().iter().map(|s| s.to_string()).collect();
    if !s.iter().any(|n| n == AUTO) {
        s.push(AUTO.to_string());
    }
    s
}

/// Whether `schedule` is one `app` can be built with.
pub fn has_schedule(app: &dyn App, schedule: &str) -> bool {
    schedule == AUTO || app.schedules().contains(&schedule)
}

/// `Err` naming the app, the schedule and the app's schedules unless `app` has `schedule`.
pub fn check_schedule(app: &dyn App, schedule: &str) -> Result<(), CliError> {
    if has_schedule(app, schedule) {
        return Ok(());
    }
    Err(CliError::new(format!(
        "app '{}' has no schedule '{schedule}'; its schedules are: {}",
        app.name(),
        default_schedules(app).join(", ")
    )))
}

/// Builds app `name` with `config` and `schedule`. For [`AUTO`] (unless the app has a
/// schedule of that name itself) the auto-scheduler writes the schedule: it plans for the
/// extents of `inputs` and of the output they give where `inputs` are known, else for the
/// app's built-in estimates, and for `threads` cores (else all of this machine's), and
/// for `target`'s GPU where it has one ([`MachineParams::for_target`]).
pub fn build_app(
    name: &str,
    schedule: &str,
    config: &Config,
    inputs: Option<&[DynBuffer]>,
    threads: Option<usize>,
    target: &Target,
) -> Result<BuiltApp, CliError> {
    let app = halogen_apps::create(name, config)?;
    check_schedule(app.as_ref(), schedule)?;
    if schedule != AUTO || app.schedules().contains(&AUTO) {
        app.apply_schedule(schedule)?;
        return Ok(BuiltApp { app, autoschedule_s: None, auto_source: None });
    }
    if let Some(inputs) = inputs {
        set_estimates(app.as_ref(), inputs)?;
    }
    let mut machine = MachineParams::for_target(target);
    if let Some(t) = threads {
        machine.cores = t.max(1);
    }
    let t0 = Instant::now();
    let source = app
        .pipeline()
        .auto_schedule_with_source(&machine)
        .map_err(|e| CliError::new(format!("{name}: the auto-scheduler failed: {e}")))?;
    Ok(BuiltApp { app, autoschedule_s: Some(t0.elapsed().as_secs_f64()), auto_source: Some(source) })
}

/// Sets the estimates of the app's inputs and output to the regions `inputs` cover and
/// give, so the auto-scheduler plans for the sizes actually run (as Halide's benchmarks
/// do) rather than for the app's built-in guess.
fn set_estimates(app: &dyn App, inputs: &[DynBuffer]) -> Result<(), CliError> {
    let region = |mins: Vec<i32>, extents: Vec<i32>| -> Vec<(i32, i32)> { mins.into_iter().zip(extents).collect() };
    for (spec, buf) in app.input_specs().iter().zip(inputs) {
        // The app was created last, so the live ImageParam of this name is its own.
        if let Some(param) = ImageParam::lookup(&spec.name) {
            if param.dimensions() == buf.dimensions() {
                param.set_estimates(&region(buf.mins(), buf.extents()));
            }
        }
    }
    let out = app.output_extents(inputs)?;
    app.output().set_estimates(&region(vec![0; out.len()], out));
    Ok(())
}

/// The output size `halogen bench` uses for an app when no `--size` is given: the size
/// `shared/anchors/halide_bench.py` runs for the six apps it has, the size the app plans
/// for (its estimates) for the others.
pub fn default_size(app: &str) -> Size {
    let (width, height) = match app {
        "blur" => (6400, 4800),
        "unsharp" | "harris" => (4256, 2832),
        "bilateral_grid" | "local_laplacian" => (2560, 1536),
        "hist_eq" | "sobel" => (4000, 3000),
        "max_filter" => (1920, 1080),
        "transpose" => (4096, 4096),
        "resize" => (3840, 2160),
        "camera_pipe" => (2592, 1968),
        "canny" => (4000, 3000),
        "interpolate" | "pyramid_blend" => (3072, 2048),
        "nl_means" => (1536, 1024),
        "conv_layer" => (256, 192),
        "wavelet" => (2048, 1536),
        "exposure_fusion" => (2560, 1536),
        _ => (1920, 1080),
    };
    Size { width, height }
}

/// `v` for a message: exponent notation where plain digits would run long.
pub fn number(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Checks a `--scale` factor on its own: a finite, positive number.
pub fn check_scale(scale: f64) -> Result<(), CliError> {
    if !scale.is_finite() {
        return Err(CliError::new(format!("--scale must be a finite number, got {scale}")));
    }
    if scale <= 0.0 {
        return Err(CliError::new(format!("--scale must be positive, got {}", number(scale))));
    }
    Ok(())
}

/// `size` scaled as `halide_bench.py --scale` scales its images: each side multiplied by
/// `scale`, rounded down to a multiple of 16, and at least 64. `Err` (naming `app`) for a
/// side over [`MAX_SIDE`] or an image over [`MAX_PIXELS`] pixels; `scale` must have passed
/// [`check_scale`].
pub fn scaled(app: &str, size: Size, scale: f64) -> Result<Size, CliError> {
    if scale == 1.0 {
        return Ok(size);
    }
    // In f64 until checked: a cast to i32 would saturate and hide the real size.
    let side = |n: i32| ((n as f64 * scale) / 16.0).floor() * 16.0;
    let (w, h) = (side(size.width).max(64.0), side(size.height).max(64.0));
    let limit = if w > MAX_SIDE as f64 || h > MAX_SIDE as f64 {
        format!("{MAX_SIDE} pixels a side")
    } else if w * h > MAX_PIXELS as f64 {
        format!("{MAX_PIXELS} pixels")
    } else {
        return Ok(Size { width: w as i32, height: h as i32 });
    };
    Err(CliError::new(format!(
        "--scale {} is too large: {app}'s {size} image would be {}x{}, {} pixels, over the limit of {limit}",
        number(scale),
        number(w),
        number(h),
        number(w * h)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_follows_halide_bench() {
        let s = default_size("blur");
        let scaled = |s: Size, f: f64| scaled("blur", s, f).unwrap();
        assert_eq!(scaled(s, 1.0), s);
        assert_eq!(scaled(s, 0.1), Size { width: 640, height: 480 });
        assert_eq!(scaled(s, 0.001), Size { width: 64, height: 64 });
        assert_eq!(scaled(Size { width: 4256, height: 2832 }, 0.05), Size { width: 208, height: 128 });
        assert_eq!(scaled(s, 5.0), Size { width: 32000, height: 24000 });
        let e = super::scaled("blur", s, 10.24).unwrap_err().to_string();
        assert!(e.ends_with("would be 65536x49152, 3221225472 pixels, over the limit of 1073741824 pixels"), "{e}");
    }

    #[test]
    fn auto_plans_for_the_inputs_and_runs() {
        let _apps = crate::app_test_lock();
        let app = halogen_apps::create("blur", &Config::default()).unwrap();
        let inputs = app.make_inputs(40, 24, 1);
        let built = build_app("blur", AUTO, &Config::default(), Some(&inputs), Some(2), &Target::host()).unwrap();
        assert!(built.autoschedule_s.is_some());
        assert!(built.auto_source.as_deref().is_some_and(|s| s.contains("blur_y")));
        let out = built.app.run(&Target::interp(), &inputs).unwrap();
        assert_eq!(out, built.app.reference(&inputs).unwrap());
    }

    #[test]
    fn named_schedules_and_unknown_ones() {
        let _apps = crate::app_test_lock();
        let built = build_app("blur", "hand", &Config::default(), None, None, &Target::host()).unwrap();
        assert!(built.autoschedule_s.is_none());
        assert!(build_app("blur", "nope", &Config::default(), None, None, &Target::host()).is_err());
    }
}
