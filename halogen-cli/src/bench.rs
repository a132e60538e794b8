//! `halogen bench`: time apps under their schedules.
//!
//! The timing follows `shared/anchors/halide_bench.py`'s `bench()` so that the numbers
//! compare with real Halide's: the output buffer is allocated once; one untimed warm-up
//! call (timed on its own as `first_ms`); then the timed calls, whose minimum and median
//! are reported. With `--max-runs` above `--runs` the count adapts as there: fast
//! variants get a second warm-up and up to `--max-runs` calls (about one second of
//! timing), and with `--slow-ms` a variant whose warm-up is slower gets `--slow-runs`.
//!
//! The JIT is timed too: `jit_first_ms` is the first compile in this process (lowering
//! plus the C compiler, unless the library is already in the cache: `--fresh-cache`
//! starts from an empty one, in which only the precompiled system headers are made before
//! timing, as they are once per machine), `jit_cached_ms` (with `--cached-jit`) a second compile of
//! the same pipeline, which finds the library in the cache.

use crate::schedule::{self, BuiltApp};
use crate::{imageio, CliError, Size, TargetArg};
use halogen::{Args, Compiled, Target};
use halogen_apps::{App, Config, DynBuffer, DynDeviceBuffer};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// How many timed calls to make.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Protocol {
    /// Timed calls, at least.
    pub runs: usize,
    /// Timed calls at most when adapting to the speed of the variant (`runs` or less: no
    /// adapting, exactly `runs` calls after one warm-up).
    pub max_runs: usize,
    /// A variant whose warm-up takes longer than this many milliseconds gets
    /// `slow_runs` calls instead.
    pub slow_ms: Option<f64>,
    /// Timed calls of a slow variant.
    pub slow_runs: usize,
}

impl Protocol {
    /// Exactly `runs` timed calls after one warm-up.
    pub fn fixed(runs: usize) -> Protocol {
        Protocol { runs, max_runs: runs, slow_ms: None, slow_runs: runs }
    }

    /// After a warm-up call of `first_s` seconds: how many timed calls, and whether to
    /// warm up once more first (`halide_bench.py`'s rule for fast variants).
    ///
    /// ```ignore
    /// let p = Protocol { runs: 10, max_runs: 50, slow_ms: Some(2500.0), slow_runs: 3 };
    /// assert_eq!(p.plan(0.001), (50, true));
    /// assert_eq!(p.plan(0.05), (20, true));
    /// assert_eq!(p.plan(0.5), (10, false));
    /// assert_eq!(p.plan(3.0), (3, false));
    /// ```
    pub fn plan(&self, first_s: f64) -> (usize, bool) {
        if self.slow_ms.is_some_and(|ms| first_s * 1e3 > ms) {
            return (self.slow_runs.max(1), false);
        }
        if self.max_runs > self.runs {
            let fit = ((1.0 / first_s.max(1e-4)) as usize).min(self.max_runs);
            return (self.runs.max(fit).max(1), first_s < 0.2);
        }
        (self.runs.max(1), false)
    }
}

/// What `halogen bench` was asked to do.
pub struct BenchOptions {
    /// Apps to time (all if empty).
    pub apps: Vec<String>,
    /// Output size; `None`: each app's default size (see [`schedule::default_size`]).
    pub size: Option<Size>,
    /// Factor on the default sizes (as `halide_bench.py --scale`).
    pub scale: f64,
    /// Schedules to time; `None`: each app's own and `auto`.
    pub schedules: Option<Vec<String>>,
    /// How many timed calls.
    pub protocol: Protocol,
    /// Where to run.
    pub target: TargetArg,
    /// Print JSON instead of a table.
    pub json: bool,
    /// Check every result against the app's reference.
    pub check: bool,
    /// App parameters, `name=value`.
    pub params: Vec<String>,
    /// Threads for parallel loops and for the auto-scheduler's plan (`None`: all cores).
    pub threads: Option<usize>,
    /// Compile into an empty, temporary library cache, so `jit_first_ms` is a cold compile
    /// (the precompiled system headers, built once per machine, are made before timing).
    pub fresh_cache: bool,
    /// Compile each pipeline a second time and report that time as `jit_cached_ms`.
    pub cached_jit: bool,
    /// Keep inputs and output in device memory across the runs (a GPU target).
    pub device_buffers: bool,
    /// Input files (`.npy` arrays or pictures), in the app's input order, instead of
    /// synthetic inputs.
    pub inputs: Vec<PathBuf>,
    /// Folder to write each output into, as `<app>_<schedule>.npy`.
    pub save_outputs: Option<PathBuf>,
}

/// The parameters of `params` that `app` declares (a parameter is given to the apps that
/// have it); `Err` if some parameter belongs to none of the apps benchmarked.
fn config_for(app: &str, params: &[String], all_apps: &[String]) -> Result<Config, CliError> {
    let given = Config::parse(params).map_err(CliError::new)?;
    let mut c = Config::default();
    for p in params {
        let key = p.split_once('=').map(|(k, _)| k.trim()).unwrap_or_default();
        let declares = |a: &str| {
            halogen_apps::create(a, &Config::default()).is_ok_and(|x| x.params().iter().any(|s| s.name == key))
        };
        if !all_apps.iter().any(|a| declares(a)) {
            return Err(CliError::new(format!("no app benchmarked takes the parameter '{key}'")));
        }
        if declares(app) {
            c.set(key, given.get(key).unwrap_or_default());
        }
    }
    Ok(c)
}

/// The timings of one app under one schedule.
#[derive(Clone, Debug)]
pub struct Timing {
    /// The app.
    pub app: String,
    /// The schedule.
    pub schedule: String,
    /// Output width.
    pub width: i32,
    /// Output height.
    pub height: i32,
    /// The first compile (JIT) of the pipeline, milliseconds.
    pub compile_ms: f64,
    /// A second compile of the same pipeline, with its library cached, if measured.
    pub compile_cached_ms: Option<f64>,
    /// Time the auto-scheduler took, for the `auto` schedule.
    pub autoschedule_ms: Option<f64>,
    /// The warm-up call.
    pub first_ms: f64,
    /// Fastest timed call.
    pub min_ms: f64,
    /// Median timed call.
    pub median_ms: f64,
    /// Timed calls.
    pub runs: usize,
    /// Threads parallel loops ran on.
    pub threads: usize,
    /// `None` unless checked; then "exact", "max rel 1e-7" or the mismatch.
    pub check: Option<String>,
    /// On a GPU with device buffers: how the run's kernels compare with the memory.
    pub device: Option<DeviceTiming>,
}

/// A run on a GPU with its buffers in device memory, against a device-to-device copy
/// measured in the same process: what a memory-bound pipeline could reach.
#[derive(Clone, Copy, Debug)]
pub struct DeviceTiming {
    /// The run's kernels together (fastest run), each from its launch to its end.
    pub kernel_ms: f64,
    /// Bytes the pipeline must move at least: its inputs read once, its output written
    /// once.
    pub moved_bytes: f64,
    /// A device-to-device copy of as many bytes (half read, half written): bytes per
    /// second, read plus written.
    pub copy_bytes_per_s: f64,
}

impl DeviceTiming {
    /// The kernels' bytes per second, counting only the bytes the pipeline must move.
    pub fn kernel_bytes_per_s(&self) -> f64 {
        self.moved_bytes / (self.kernel_ms / 1e3).max(1e-12)
    }

    /// [`DeviceTiming::kernel_bytes_per_s`] as a fraction of the copy's.
    pub fn of_copy(&self) -> f64 {
        self.kernel_bytes_per_s() / self.copy_bytes_per_s.max(1e-12)
    }
}

impl Timing {
    /// Output megapixels per second at the best run.
    pub fn mpix_per_s(&self) -> f64 {
        (self.width as f64 * self.height as f64 / 1e6) / (self.min_ms / 1e3).max(1e-12)
    }
}

/// One benchmarked (app, schedule): its timings, or why it could not be timed.
#[derive(Clone, Debug)]
pub struct Row {
    /// The app.
    pub app: String,
    /// The schedule.
    pub schedule: String,
    /// The timings or the error.
    pub result: Result<Timing, String>,
}

/// Median of a non-empty list.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// How [`time_app`] runs an app.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Where to run.
    pub target: TargetArg,
    /// How many timed calls.
    pub protocol: Protocol,
    /// Compare the result with the app's reference.
    pub check: bool,
    /// Compile a second time to time a compile that finds its library cached.
    pub cached_jit: bool,
    /// Keep inputs and output in device memory across the runs (a GPU target).
    pub device_buffers: bool,
}

/// Compiles `built`'s app, runs it once to warm up, then times it as `o.protocol` says.
/// The output buffer is allocated once, outside the timed region.
pub fn time_app(
    built: &BuiltApp,
    schedule: &str,
    inputs: &[DynBuffer],
    o: &RunOptions,
) -> Result<(Timing, DynBuffer), CliError> {
    let app = built.app.as_ref();
    let (compiled, compile_s) = crate::timed_compile(app, &o.target.target())?;
    let compile_cached_ms = if o.cached_jit {
        let (_, again) = crate::timed_compile(app, &o.target.target())?;
        Some(again * 1e3)
    } else {
        None
    };
    let mut out = DynBuffer::zeros(app.output_type(), &app.output_extents(inputs)?)?;
    let mut times = Vec::new();
    let (first, device) = if o.device_buffers {
        time_on_device(app, &compiled, inputs, &o.target.target(), &o.protocol, &mut times, &mut out)?
    } else {
        (time_runs(&o.protocol, &mut times, || Ok(app.realize_into(&compiled, inputs, &mut out)?))?, None)
    };
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    let med = median(&mut times);
    let check = if o.check {
        let expected = app.reference(inputs)?;
        Some(match out.compare(&expected, app.tolerance()) {
            Ok(a) if a.max_abs == 0.0 => "exact".to_string(),
            Ok(a) => format!("max rel {:.1e}", a.max_rel),
            Err(m) => format!("MISMATCH: {m}"),
        })
    } else {
        None
    };
    let e = out.extents();
    Ok((
        Timing {
            app: app.name().to_string(),
            schedule: schedule.to_string(),
            width: e[0],
            height: e.get(1).copied().unwrap_or(1),
            compile_ms: compile_s * 1e3,
            compile_cached_ms,
            autoschedule_ms: built.autoschedule_s.map(|s| s * 1e3),
            first_ms: first * 1e3,
            min_ms: min * 1e3,
            median_ms: med * 1e3,
            runs: times.len(),
            threads: if o.target.is_interp() { 1 } else { halogen::runtime::thread_pool::num_threads() },
            check,
            device,
        },
        out,
    ))
}

/// [`time_app`]'s runs with the inputs and output in device memory: the inputs copied up
/// and the output allocated before the first run, each run's time the `realize` alone
/// (which waits for its kernels: it reads their error word), the output read back into `out`
/// at the end. Returns the first run's time and, on a GPU, five more runs' fastest kernel
/// time beside a device-to-device copy of the bytes the pipeline moves.
fn time_on_device(
    app: &dyn App,
    compiled: &Compiled,
    inputs: &[DynBuffer],
    target: &Target,
    protocol: &Protocol,
    times: &mut Vec<f64>,
    out: &mut DynBuffer,
) -> Result<(f64, Option<DeviceTiming>), CliError> {
    let mut args = Args::new();
    app.bind(inputs, &mut args)?;
    let uploaded = args.upload(target)?;
    let args = uploaded.args();
    let mut device_out = DynDeviceBuffer::zeros(app.output_type(), &out.extents(), target)?;
    let first = time_runs(protocol, times, || Ok(device_out.realize(compiled, &args)?))?;
    let device = match halogen::runtime::gpu::target_api(target) {
        Some(api) => {
            let moved = inputs.iter().chain([&*out]).map(|b| b.len() * b.ty().bytes()).sum();
            kernels_against_a_copy(api, moved, || device_out.realize(compiled, &args))?
        }
        None => None,
    };
    *out = device_out.to_host()?;
    Ok((first, device))
}

/// The fastest of five runs' kernel times beside a device-to-device copy of `moved` bytes
/// on `api`'s device; `None` where a run launches no kernel (a schedule without GPU loops).
fn kernels_against_a_copy(
    api: halogen::runtime::gpu::Api,
    moved: usize,
    mut run: impl FnMut() -> halogen::Result<()>,
) -> Result<Option<DeviceTiming>, CliError> {
    let mut kernel_s = f64::INFINITY;
    for _ in 0..5 {
        let ((), s) = halogen::runtime::gpu::time_kernels(&mut run)?;
        kernel_s = kernel_s.min(s);
    }
    if kernel_s == 0.0 {
        return Ok(None);
    }
    // Half of it read and half written, as the pipeline's own traffic.
    let copy = halogen::runtime::gpu::copy_bandwidth(api, moved.div_ceil(2), 10)?;
    Ok(Some(DeviceTiming { kernel_ms: kernel_s * 1e3, moved_bytes: moved as f64, copy_bytes_per_s: copy }))
}

/// Times `run` as `protocol` says: a first run (its time returned), a second warm-up where
/// the protocol asks for one, then the timed runs, whose times go to `times`.
fn time_runs(
    protocol: &Protocol,
    times: &mut Vec<f64>,
    mut run: impl FnMut() -> Result<(), CliError>,
) -> Result<f64, CliError> {
    let t = Instant::now();
    run()?;
    let first = t.elapsed().as_secs_f64();
    let (runs, warm_again) = protocol.plan(first);
    if warm_again {
        run()?;
    }
    for _ in 0..runs {
        let t = Instant::now();
        run()?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok(first)
}

/// A string as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// At least six significant digits (small kernel times too), and at least four decimals.
fn json_number(v: f64) -> String {
    if v.is_finite() {
        let magnitude = if v == 0.0 { 0 } else { v.abs().log10().floor() as i32 };
        let decimals = (5 - magnitude).clamp(4, 15) as usize;
        format!("{v:.decimals$}")
    } else {
        "null".into()
    }
}

fn json_opt(v: Option<f64>) -> String {
    v.map(json_number).unwrap_or_else(|| "null".into())
}

/// The rows as a JSON array of objects. A timed row has `app`, `schedule`, `target`,
/// `width`, `height` (of the output), `compile_ms` and its alias `jit_first_ms`,
/// `jit_cached_ms`, `autoschedule_ms` (null where not measured), `first_ms`, `min_ms`,
/// `median_ms`, `runs`, `threads`, `mpix_per_s`, `check`, and, on a GPU with device buffers,
/// `kernel_ms`, `moved_bytes`, `kernel_gb_per_s`, `copy_gb_per_s` and `of_copy` (null
/// otherwise); a failed row has `app`, `schedule`, `target` and `error`.
pub fn to_json(rows: &[Row], target: &TargetArg) -> String {
    let name = target.to_string();
    let target = json_string(&name);
    let items: Vec<String> = rows
        .iter()
        .map(|r| match &r.result {
            Err(e) => format!(
                "  {{\"app\": {}, \"schedule\": {}, \"target\": {target}, \"error\": {}}}",
                json_string(&r.app),
                json_string(&r.schedule),
                json_string(e)
            ),
            Ok(t) => format!(
                "  {{\"app\": {}, \"schedule\": {}, \"target\": {target}, \"width\": {}, \"height\": {}, \
                 \"compile_ms\": {c}, \"jit_first_ms\": {c}, \"jit_cached_ms\": {}, \"autoschedule_ms\": {}, \
                 \"first_ms\": {}, \"min_ms\": {}, \"median_ms\": {}, \"runs\": {}, \"threads\": {}, \
                 \"mpix_per_s\": {}, \"check\": {}, \"kernel_ms\": {}, \"moved_bytes\": {}, \
                 \"kernel_gb_per_s\": {}, \"copy_gb_per_s\": {}, \"of_copy\": {}}}",
                json_string(&t.app),
                json_string(&t.schedule),
                t.width,
                t.height,
                json_opt(t.compile_cached_ms),
                json_opt(t.autoschedule_ms),
                json_number(t.first_ms),
                json_number(t.min_ms),
                json_number(t.median_ms),
                t.runs,
                t.threads,
                json_number(t.mpix_per_s()),
                t.check.as_deref().map(json_string).unwrap_or_else(|| "null".into()),
                json_opt(t.device.map(|d| d.kernel_ms)),
                json_opt(t.device.map(|d| d.moved_bytes)),
                json_opt(t.device.map(|d| d.kernel_bytes_per_s() / 1e9)),
                json_opt(t.device.map(|d| d.copy_bytes_per_s / 1e9)),
                json_opt(t.device.map(|d| d.of_copy())),
                c = json_number(t.compile_ms),
            ),
        })
        .collect();
    format!("[\n{}\n]", items.join(",\n"))
}

/// Timings as an aligned text table.
pub fn to_table(results: &[Timing]) -> String {
    let rows: Vec<Row> = results
        .iter()
        .map(|t| Row { app: t.app.clone(), schedule: t.schedule.clone(), result: Ok(t.clone()) })
        .collect();
    rows_table(&rows)
}

/// Rows (timed or failed) as an aligned text table.
pub fn rows_table(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<16} {:<14} {:>11} {:>11} {:>10} {:>10} {:>9} {:>5}",
        "app", "schedule", "size", "compile ms", "min ms", "median ms", "MP/s", "runs"
    );
    let checked = rows.iter().any(|r| r.result.as_ref().is_ok_and(|t| t.check.is_some()));
    let on_device = rows.iter().any(|r| r.result.as_ref().is_ok_and(|t| t.device.is_some()));
    if on_device {
        s.push_str(&format!(" {:>10} {:>9} {:>9} {:>7}", "kernel ms", "GB/s", "copy GB/s", "of copy"));
    }
    if checked {
        s.push_str("  check");
    }
    s.push('\n');
    for r in rows {
        match &r.result {
            Err(e) => s.push_str(&format!("{:<16} {:<14} FAILED: {e}\n", r.app, r.schedule)),
            Ok(t) => {
                s.push_str(&format!(
                    "{:<16} {:<14} {:>11} {:>11.1} {:>10.2} {:>10.2} {:>9.2} {:>5}",
                    t.app,
                    t.schedule,
                    format!("{}x{}", t.width, t.height),
                    t.compile_ms,
                    t.min_ms,
                    t.median_ms,
                    t.mpix_per_s(),
                    t.runs
                ));
                match t.device {
                    Some(d) => s.push_str(&format!(
                        " {:>10.3} {:>9.1} {:>9.1} {:>6.0}%",
                        d.kernel_ms,
                        d.kernel_bytes_per_s() / 1e9,
                        d.copy_bytes_per_s / 1e9,
                        d.of_copy() * 100.0
                    )),
                    None if on_device => s.push_str(&format!(" {:>10} {:>9} {:>9} {:>7}", "-", "-", "-", "-")),
                    None => {}
                }
                if let Some(c) = &t.check {
                    s.push_str(&format!("  {c}"));
                }
                s.push('\n');
            }
        }
    }
    s
}

/// A library cache folder of our own that is removed again when dropped.
struct TempCache(PathBuf);

impl TempCache {
    /// Makes the folder and points the JIT at it (`HALOGEN_CACHE_DIR`).
    fn install() -> Result<TempCache, CliError> {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("halogen-bench-cache-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| CliError::new(format!("{}: cannot create the cache folder: {e}", dir.display())))?;
        // Set before any pipeline is compiled and before any worker thread exists.
        std::env::set_var("HALOGEN_CACHE_DIR", &dir);
        Ok(TempCache(dir))
    }
}

impl Drop for TempCache {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The inputs of `app` made from `files` (in the app's input order, or one picture).
fn file_inputs(app: &dyn App, files: &[PathBuf]) -> Result<Vec<DynBuffer>, CliError> {
    let loaded: Vec<imageio::Loaded> = files.iter().map(|f| imageio::load(f)).collect::<Result<_, _>>()?;
    let inputs = imageio::app_inputs(app, loaded)?;
    // Sizes that do not fit the app are found here, before anything is compiled.
    app.output_extents(&inputs)?;
    Ok(inputs)
}

/// `halogen bench`.
pub fn cmd_bench(o: &BenchOptions) -> Result<(), CliError> {
    if o.protocol.runs == 0 {
        return Err(CliError::new("--runs must be at least 1"));
    }
    schedule::check_scale(o.scale)?;
    if let Some(t) = o.threads {
        if t == 0 {
            return Err(CliError::new("--threads must be at least 1"));
        }
        // Read once, when the thread pool starts: set before anything runs.
        std::env::set_var("HALOGEN_NUM_THREADS", t.to_string());
    }
    let names: Vec<String> = if o.apps.is_empty() {
        halogen_apps::app_names().iter().map(|s| s.to_string()).collect()
    } else {
        o.apps.clone()
    };
    if !o.inputs.is_empty() && names.len() != 1 {
        return Err(CliError::new("--input needs exactly one app to benchmark"));
    }
    // Files are read once, before anything is timed.
    let files = match names.as_slice() {
        [name] if !o.inputs.is_empty() => {
            let app = halogen_apps::create(name, &config_for(name, &o.params, &names)?)?;
            Some(file_inputs(app.as_ref(), &o.inputs)?)
        }
        _ => None,
    };
    // Validate everything before timing anything.
    let mut plan: Vec<(String, String)> = Vec::new();
    for name in &names {
        let app = halogen_apps::create(name, &config_for(name, &o.params, &names)?)?;
        if o.size.is_none() {
            schedule::scaled(name, schedule::default_size(name), o.scale)?;
        }
        match &o.schedules {
            None => plan.extend(schedule::default_schedules(app.as_ref()).into_iter().map(|s| (name.clone(), s))),
            Some(list) => {
                for s in list {
                    if schedule::has_schedule(app.as_ref(), s) {
                        plan.push((name.clone(), s.clone()));
                    } else if !o.apps.is_empty() {
                        // Named apps must have every schedule asked for.
                        schedule::check_schedule(app.as_ref(), s)?;
                    }
                }
            }
        }
    }
    if plan.is_empty() {
        let asked = o.schedules.as_ref().map(|l| l.join(",")).unwrap_or_default();
        return Err(CliError::new(format!("no app has the schedule '{asked}'")));
    }
    if let Some(dir) = &o.save_outputs {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::new(format!("{}: cannot create the folder: {e}", dir.display())))?;
    }
    let _cache = if o.fresh_cache { Some(TempCache::install()?) } else { None };
    if o.fresh_cache && !o.target.is_interp() {
        // Once per machine, not per pipeline: not part of a first compile's time. A failure
        // here is reported by the compile itself.
        let _ = halogen::backend::jit::precompile_system_headers(&o.target.target());
    }
    let bar = ProgressBar::new(plan.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .map_err(CliError::from_display)?,
    );
    let run = RunOptions {
        target: o.target.clone(),
        protocol: o.protocol,
        check: o.check,
        cached_jit: o.cached_jit,
        device_buffers: o.device_buffers,
    };
    let mut rows = Vec::new();
    for (name, sched) in &plan {
        bar.set_message(format!("{name} / {sched}"));
        let result = bench_one(name, sched, o, &names, &run, files.as_deref());
        rows.push(Row { app: name.clone(), schedule: sched.clone(), result: result.map_err(|e| e.to_string()) });
        bar.inc(1);
    }
    bar.finish_and_clear();
    if o.json {
        println!("{}", to_json(&rows, &o.target));
    } else {
        print!("{}", rows_table(&rows));
    }
    if let Some(bad) = rows.iter().find(|r| r.result.is_err()) {
        let failed = rows.iter().filter(|r| r.result.is_err()).count();
        return Err(CliError::new(format!(
            "{failed} of {} benchmarks failed; first: {} ({}): {}",
            rows.len(),
            bad.app,
            bad.schedule,
            bad.result.as_ref().err().map(String::as_str).unwrap_or_default()
        )));
    }
    if let Some((r, t)) = rows.iter().find_map(|r| {
        r.result.as_ref().ok().filter(|t| t.check.as_deref().is_some_and(|c| c.starts_with("MISMATCH"))).map(|t| (r, t))
    }) {
        return Err(CliError::new(format!(
            "{} ({}) does not match its reference: {}",
            r.app,
            r.schedule,
            t.check.as_deref().unwrap_or_default()
        )));
    }
    Ok(())
}

/// Builds, times and (if asked) saves the output of one app under one schedule.
fn bench_one(
    name: &str,
    sched: &str,
    o: &BenchOptions,
    names: &[String],
    run: &RunOptions,
    files: Option<&[DynBuffer]>,
) -> Result<Timing, CliError> {
    let config = config_for(name, &o.params, names)?;
    // Inputs come before scheduling: the auto-scheduler plans for their extents.
    let inputs = match files {
        Some(f) => f.to_vec(),
        None => {
            let size = match o.size {
                Some(s) => s,
                None => schedule::scaled(name, schedule::default_size(name), o.scale)?,
            };
            halogen_apps::create(name, &config)?.make_inputs(size.width, size.height, 42)
        }
    };
    let built = schedule::build_app(name, sched, &config, Some(&inputs), o.threads, &o.target.target())?;
    let (timing, out) = time_app(&built, sched, &inputs, run)?;
    if let Some(dir) = &o.save_outputs {
        // By the app's name: for a pipeline file, its stem, not its path.
        save_output(dir, built.app.name(), sched, &out)?;
    }
    Ok(timing)
}

fn save_output(dir: &Path, app: &str, schedule: &str, out: &DynBuffer) -> Result<(), CliError> {
    let path = dir.join(format!("{app}_{schedule}.npy"));
    halogen_apps::npy::write(&path, out).map_err(CliError::from_display)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
    }

    #[test]
    fn protocol_follows_halide_bench() {
        let p = Protocol { runs: 10, max_runs: 50, slow_ms: Some(2500.0), slow_runs: 3 };
        assert_eq!(p.plan(0.001), (50, true));
        assert_eq!(p.plan(0.05), (20, true));
        assert_eq!(p.plan(0.5), (10, false));
        assert_eq!(p.plan(3.0), (3, false));
        assert_eq!(Protocol::fixed(4).plan(0.0001), (4, false));
        assert_eq!(Protocol::fixed(4).plan(100.0), (4, false));
    }

    #[test]
    fn failed_rows_in_json_and_table() {
        let rows = vec![Row { app: "blur".into(), schedule: "auto".into(), result: Err("no \"plan\"".into()) }];
        let j = to_json(&rows, &TargetArg(halogen::Target::host()));
        assert!(j.contains("\"error\": \"no \\\"plan\\\"\""), "{j}");
        assert!(rows_table(&rows).contains("FAILED: no \"plan\""));
    }
}
