//! `halogen`: run Halogen's benchmark apps on pictures, time them, show their loop nests,
//! and make a demo page.
//!
//! ```text
//! halogen list [--json]
//! halogen run blur in.png out.png --schedule hand
//! halogen run camera_pipe data/photos/coffee_small_bayer.png out.png
//! halogen run harris in.npy out.npy --schedule auto
//! halogen run pyramid_blend a.png b.png mask.png out.png
//! halogen bench blur harris --size 512x384 --schedule hand,auto --json
//! halogen bench blur --scale 0.25 --runs 10 --max-runs 50 --threads 2 --fresh-cache --cached-jit
//! halogen lower blur --schedule hand_sliding
//! halogen demo --out ./halogen-demo
//! ```
//!
//! Errors are one line on stderr and a non-zero exit status.

mod bench;
mod demo;
mod distributed;
mod imageio;
mod schedule;

/// Held by the unit tests that create apps. An app's inputs are found by name among the
/// live `ImageParam`s (the most recently created wins: see `halogen::lang::param`), so an
/// app created by a test on another thread between another test's estimates and its
/// auto-schedule would take its inputs' place.
#[cfg(test)]
pub(crate) fn app_test_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

use clap::{Parser, Subcommand};
use halogen::prelude::*;
use halogen_apps::{App, Config, ParamKind};
use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// A user-facing error: one line, no backtrace.
#[derive(Debug)]
pub struct CliError(String);

impl CliError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> CliError {
        CliError(msg.into())
    }
    /// An error from anything displayable.
    pub fn from_display(e: impl fmt::Display) -> CliError {
        CliError(e.to_string())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Keep it to one line whatever the cause said.
        let one_line: Vec<&str> = self.0.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        f.write_str(&one_line.join(" "))
    }
}

impl From<halogen_apps::AppError> for CliError {
    fn from(e: halogen_apps::AppError) -> Self {
        CliError(e.to_string())
    }
}

impl From<halogen::Error> for CliError {
    fn from(e: halogen::Error) -> Self {
        CliError(e.to_string())
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError(e.to_string())
    }
}

/// Where pipelines run: a target string as the library parses it (`host`, `interp`,
/// `host-fast_math`, `host-opencl`, …; see `halogen::target`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetArg(pub Target);

impl TargetArg {
    /// The library's target.
    pub fn target(&self) -> Target {
        self.0.clone()
    }

    /// Whether it is the interpreter.
    pub fn is_interp(&self) -> bool {
        self.0.is_interp()
    }
}

impl std::str::FromStr for TargetArg {
    type Err = String;

    fn from_str(s: &str) -> Result<TargetArg, String> {
        s.parse::<Target>().map(TargetArg).map_err(|e| e.to_string())
    }
}

impl std::fmt::Display for TargetArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The largest side, in pixels, of an image the command makes (`--size`, `--scale`).
pub const MAX_SIDE: i32 = 65536;

/// The most pixels an image the command makes may have: a planar RGB buffer of this many,
/// with an app's margins, keeps its channel stride within `i32`.
pub const MAX_PIXELS: i64 = 1 << 30;

/// An image size `WxH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Size {
    /// Width in pixels.
    pub width: i32,
    /// Height in pixels.
    pub height: i32,
}

impl std::str::FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("'{s}' is not a size like 640x480"))?;
        let parse = |v: &str| v.trim().parse::<i32>().ok().filter(|&n| (1..=MAX_SIDE).contains(&n));
        match (parse(w), parse(h)) {
            (Some(width), Some(height)) if width as i64 * height as i64 > MAX_PIXELS => {
                Err(format!("'{s}' has {} pixels, over the limit of {MAX_PIXELS}", width as i64 * height as i64))
            }
            (Some(width), Some(height)) => Ok(Size { width, height }),
            _ => Err(format!("'{s}' is not a size like 640x480 (sides from 1 to {MAX_SIDE})")),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

#[derive(Parser, Debug)]
#[command(name = "halogen", version, about = "Run, benchmark and inspect Halogen's image pipelines")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the apps with their schedules and parameters.
    List {
        /// Print JSON: one object per app with its name, description, schedules, inputs,
        /// parameters (with the range each accepts) and default benchmark size.
        #[arg(long)]
        json: bool,
    },
    /// Run an app on a picture or a NumPy array and save the result.
    Run {
        /// `APP INPUT... OUTPUT`, or `INPUT... OUTPUT` with `--pipeline`. APP is an app (see
        /// `halogen list`) or a `.halogen` pipeline file. INPUT: one file per input of the
        /// app, in the order `halogen list` shows, or one picture for an app with several
        /// inputs (all of them are made from it); a picture (PNG, JPEG or TIFF; 8 or 16
        /// bits; gray or RGB) is converted to what the app reads, a `.npy` array must have
        /// exactly the input's type and shape; a 16-bit gray picture given to camera_pipe
        /// is its raw Bayer mosaic. OUTPUT: a picture (.png, .jpg or .tif: PNG and TIFF keep
        /// 16 bits) or a `.npy` array (the raw output values).
        #[arg(required = true, num_args = 2.., value_name = "APP INPUT... OUTPUT")]
        files: Vec<String>,
        /// A pipeline written as text (see `halogen::text`) in place of an app.
        #[arg(long, value_name = "FILE")]
        pipeline: Option<PathBuf>,
        /// The schedule to apply (one of the app's, or `auto` for the auto-scheduler).
        #[arg(long, default_value = "hand")]
        schedule: String,
        /// Where to run it: `host`, `host-fast_math` (fused multiply-adds, as Halide does by
        /// default; floats may differ in the last bits), `interp` (the reference interpreter),
        /// or `host-opencl` / `host-cuda` for the GPU schedules (`host-cuda` needs a build
        /// with the cargo feature `cuda`).
        #[arg(long, default_value = "host")]
        target: TargetArg,
        /// An app parameter, `name=value` (repeatable).
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
        /// Also run the plain-Rust reference and check that the results agree.
        #[arg(long)]
        check: bool,
        /// Save the raw output instead of its display version (Harris responses, Sobel
        /// magnitudes are scaled for viewing by default; `.npy` outputs are always raw).
        #[arg(long)]
        raw: bool,
    },
    /// Time apps under their schedules: a warm-up, then the min and median of several runs.
    Bench {
        /// Apps to time (all if none are named and no `--pipeline` is given); a `.halogen`
        /// pipeline file counts as an app.
        apps: Vec<String>,
        /// A pipeline written as text to time as well (repeatable).
        #[arg(long = "pipeline", value_name = "FILE")]
        pipelines: Vec<PathBuf>,
        /// Output size of the synthetic inputs, at most 65536 pixels a side and 2^30 pixels
        /// (default: each app's benchmark size, the one `shared/anchors/halide_bench.py` uses
        /// where it has the app; see `halogen list`).
        #[arg(long, conflicts_with_all = ["scale", "inputs"])]
        size: Option<Size>,
        /// Scale the default sizes as `halide_bench.py --scale` does (sides times this,
        /// rounded down to a multiple of 16, at least 64).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Schedules to time, comma-separated (`hand,auto`); `auto` runs the auto-scheduler
        /// for the sizes benchmarked. Default: each app's own schedules and `auto`.
        #[arg(long, value_delimiter = ',')]
        schedule: Option<Vec<String>>,
        /// Timed runs per app and schedule (at least 1; 10 or more for stable numbers).
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// Let fast variants run more, up to this many times (about one second of timing)
        /// after a second warm-up, as `halide_bench.py` does with 50.
        #[arg(long)]
        max_runs: Option<usize>,
        /// A variant whose warm-up takes longer than this many milliseconds gets only
        /// `--slow-runs` timed runs.
        #[arg(long)]
        slow_ms: Option<f64>,
        /// Timed runs of a slow variant (see `--slow-ms`).
        #[arg(long, default_value_t = 3)]
        slow_runs: usize,
        /// Threads for parallel loops (and the cores the auto-scheduler plans for).
        #[arg(long)]
        threads: Option<usize>,
        /// Compile into a new, empty library cache, so the first JIT time includes the C
        /// compiler (the cache is removed afterwards).
        #[arg(long)]
        fresh_cache: bool,
        /// Compile every pipeline twice and report the second, cached compile too.
        #[arg(long)]
        cached_jit: bool,
        /// On a GPU target, keep the inputs and the output in device memory (copied up once
        /// before the timed runs, the output read back once for `--check`), so the times are
        /// those of a pipeline in a chain of GPU work; without it every run copies its
        /// inputs to the device and its output back.
        #[arg(long)]
        device_buffers: bool,
        /// Input file (`.npy` array or picture; repeat for apps with several inputs, in the
        /// order `halogen list` shows, or give one picture to make them all) instead of
        /// synthetic inputs; needs exactly one app.
        #[arg(long = "input", value_name = "FILE")]
        inputs: Vec<PathBuf>,
        /// Write each output to this folder as `<app>_<schedule>.npy` (a pipeline file's
        /// outputs by its name without `.halogen`).
        #[arg(long, value_name = "DIR")]
        save_outputs: Option<PathBuf>,
        /// Where to run.
        #[arg(long, default_value = "host")]
        target: TargetArg,
        /// Print JSON instead of a table (see the rows' fields in `halogen-cli/src/bench.rs`).
        #[arg(long)]
        json: bool,
        /// Check every result against the app's reference.
        #[arg(long)]
        check: bool,
        /// An app parameter, `name=value` (repeatable), given to the apps that have it.
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
    },
    /// Print an app's lowered loop nest (for `auto`, the chosen schedule first).
    Lower {
        /// The app, or a `.halogen` pipeline file.
        #[arg(required_unless_present = "pipeline", conflicts_with = "pipeline")]
        app: Option<String>,
        /// A pipeline written as text, in place of an app.
        #[arg(long, value_name = "FILE")]
        pipeline: Option<PathBuf>,
        /// The schedule to apply (one of the app's, or `auto`).
        #[arg(long, default_value = "hand")]
        schedule: String,
        /// An app parameter, `name=value` (repeatable).
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
        /// The target to lower for; a GPU target (`host-opencl`, `host-cuda`) also prints
        /// the kernels' source.
        #[arg(long, default_value = "host")]
        target: TargetArg,
        /// For `host-cuda`: also compile the kernels with NVRTC to a cubin for the target's
        /// compute capability (`host-cuda-cuda_capability_NN`; 90, an H100, if it names
        /// none) into the kernel cache (`HALOGEN_CACHE_DIR`), where a run on a machine
        /// without NVRTC finds them. Needs a binary built with the cargo feature `cuda`.
        #[arg(long)]
        compile_kernels: bool,
    },
    /// Run a handful of apps on a photograph and write the pictures and an HTML page.
    Demo {
        /// The folder to write into.
        #[arg(long, default_value = "halogen-demo")]
        out: PathBuf,
        /// Resize the picture to this size (default: the picture's own size; 256x192 for
        /// the synthetic picture).
        #[arg(long)]
        size: Option<Size>,
        /// Use this picture instead of the bundled photograph.
        #[arg(long, conflicts_with = "synthetic")]
        image: Option<PathBuf>,
        /// Use a procedurally drawn test picture instead of the bundled photograph.
        #[arg(long)]
        synthetic: bool,
        /// Where to run.
        #[arg(long, default_value = "host")]
        target: TargetArg,
    },
}

fn config(params: &[String]) -> Result<Config, CliError> {
    Config::parse(params).map_err(CliError::new)
}

fn cmd_list(json: bool) -> Result<(), CliError> {
    use bench::json_string;
    let mut items = Vec::new();
    for name in halogen_apps::app_names() {
        let app = halogen_apps::create(name, &Config::default())?;
        let schedules = schedule::default_schedules(app.as_ref());
        if json {
            let strings = |v: Vec<String>| v.iter().map(|s| json_string(s)).collect::<Vec<_>>().join(", ");
            let inputs: Vec<String> = app
                .input_specs()
                .iter()
                .map(|i| {
                    format!(
                        "{{\"name\": {}, \"type\": {}, \"channels\": {}, \"values\": {}}}",
                        json_string(&i.name),
                        json_string(&i.ty.to_string()),
                        i.channels,
                        json_string(i.values)
                    )
                })
                .collect();
            let params: Vec<String> = app
                .params()
                .iter()
                .map(|p| {
                    let kind = match p.kind {
                        ParamKind::Real => "real",
                        ParamKind::Integer => "integer",
                        ParamKind::OddInteger => "odd integer",
                    };
                    format!(
                        "{{\"name\": {}, \"default\": {}, \"min\": {}, \"max\": {}, \"kind\": {}, \"help\": {}}}",
                        json_string(p.name),
                        p.default,
                        p.min,
                        p.max,
                        json_string(kind),
                        json_string(p.help)
                    )
                })
                .collect();
            let size = schedule::default_size(name);
            items.push(format!(
                "  {{\"name\": {}, \"description\": {}, \"schedules\": [{}], \"inputs\": [{}], \"params\": [{}], \"bench_size\": [{}, {}]}}",
                json_string(name),
                json_string(app.description()),
                strings(schedules),
                inputs.join(", "),
                params.join(", "),
                size.width,
                size.height
            ));
            continue;
        }
        println!("{name:<16} {}", app.description());
        println!("{:<16} schedules: {}", "", schedules.join(", "));
        let inputs: Vec<String> =
            app.input_specs().iter().map(|i| format!("{} ({} {}ch: {})", i.name, i.ty, i.channels, i.values)).collect();
        println!("{:<16} inputs: {}", "", inputs.join("; "));
        for p in app.params() {
            println!("{:<16} --param {}={} ({}; {})", "", p.name, p.default, p.help, p.range_text());
        }
    }
    if json {
        println!("[\n{}\n]", items.join(",\n"));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    app: &str,
    files: &[PathBuf],
    output: &std::path::Path,
    schedule: &str,
    target: TargetArg,
    params: &[String],
    check: bool,
    raw: bool,
) -> Result<(), CliError> {
    let config = config(params)?;
    // Everything the user gave is checked before the (slow) compile: the app, its
    // parameters and schedule, the output's name, the inputs' types and sizes.
    let probe = halogen_apps::create(app, &config)?;
    schedule::check_schedule(probe.as_ref(), schedule)?;
    imageio::check_output(output)?;
    let loaded = files.iter().map(|f| imageio::load(f)).collect::<Result<Vec<_>, _>>()?;
    let inputs = imageio::app_inputs(probe.as_ref(), loaded)?;
    let extents = probe.output_extents(&inputs)?;
    if !imageio::is_npy(output) {
        imageio::check_picture(probe.as_ref(), &extents)?;
    }
    drop(probe);
    // A distributed schedule runs as one rank of a distributed run (under `mpirun`, one
    // per process), on a target with the `mpi` feature.
    let ranks = if halogen_apps::is_distributed_schedule(schedule) { Some(distributed::Ranks::join()?) } else { None };
    let target = match &ranks {
        Some(_) => target.target().with_feature(halogen::target::Feature::Mpi),
        None => target.target(),
    };
    // Built after the inputs are known: the auto-scheduler plans for their size.
    let app = schedule::build_app(app, schedule, &config, Some(&inputs), None, &target)?.app;
    let t0 = Instant::now();
    let compiled = app.compile(&target)?;
    let compile_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let out = match &ranks {
        Some(r) => r.fail_together(app.realize_on_rank(&compiled, &inputs, r.communicator()))?,
        None => app.realize(&compiled, &inputs)?,
    };
    let run_s = t1.elapsed().as_secs_f64();
    // Every rank holds the whole output; the first writes it.
    if ranks.as_ref().is_some_and(|r| r.communicator().rank() != 0) {
        return Ok(());
    }
    let shown = if raw || imageio::is_npy(output) { out.clone() } else { app.display(&out) };
    imageio::save(output, &shown)?;
    let e = out.extents();
    eprintln!(
        "{} ({schedule}) on {}x{}: compiled in {:.1} ms, ran in {:.1} ms; wrote {}",
        app.name(),
        e[0],
        e.get(1).copied().unwrap_or(1),
        compile_s * 1e3,
        run_s * 1e3,
        output.display()
    );
    if check {
        let expected = app.reference(&inputs)?;
        match out.compare(&expected, app.tolerance()) {
            Ok(a) => eprintln!("matches the reference (max relative difference {:.1e})", a.max_rel),
            Err(m) => return Err(CliError::new(format!("{} differs from its reference: {m}", app.name()))),
        }
    }
    Ok(())
}

fn cmd_lower(
    app: &str,
    schedule: &str,
    params: &[String],
    target: &Target,
    compile_kernels: bool,
) -> Result<(), CliError> {
    if compile_kernels && !target.has_feature(halogen::target::Feature::Cuda) {
        return Err(CliError::new(format!(
            "--compile-kernels compiles CUDA kernels; the target '{target}' is not a CUDA target"
        )));
    }
    let built = schedule::build_app(app, schedule, &config(params)?, None, None, target)?;
    // Lowered only: printing the nest needs no C compiler.
    let lowered = built.app.pipeline().lower(target)?;
    if let Some(src) = &built.auto_source {
        println!("{src}");
    }
    println!("{}", lowered.stmt);
    if target.has_gpu_feature() {
        // The kernels as the back end prints them (printing, not compiling, the host C).
        let c = halogen::backend::c::generate(&lowered, "pipeline", target)?;
        if let Some(kernels) = c.kernel_source {
            println!("\n/* The GPU kernels ({target}) */\n{kernels}");
            if compile_kernels {
                compile_cuda_kernels(&kernels, target.cuda_capability().unwrap_or(90))?;
            }
        }
    }
    Ok(())
}

/// Compiles CUDA kernels into the kernel cache with NVRTC.
#[cfg(feature = "cuda")]
fn compile_cuda_kernels(source: &str, capability: u32) -> Result<(), CliError> {
    let cubin = halogen::runtime::gpu::compile_cuda(source, capability)?;
    eprintln!("compiled the kernels for sm_{capability} ({} bytes of cubin) into the kernel cache", cubin.len());
    Ok(())
}

#[cfg(not(feature = "cuda"))]
fn compile_cuda_kernels(_source: &str, _capability: u32) -> Result<(), CliError> {
    Err(CliError::new("--compile-kernels needs a halogen built with the cargo feature 'cuda'"))
}

/// The name under which the apps' registry finds a pipeline file: its path, which must
/// end in `.halogen`.
fn pipeline_name(path: &std::path::Path) -> Result<String, CliError> {
    let name =
        path.to_str().ok_or_else(|| CliError::new(format!("pipeline path '{}' is not UTF-8", path.display())))?;
    if !name.ends_with(".halogen") {
        return Err(CliError::new(format!("pipeline file '{name}' must end in .halogen")));
    }
    Ok(name.to_string())
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::List { json } => cmd_list(json),
        Command::Run { files, pipeline, schedule, target, params, check, raw } => {
            let mut files = files;
            let app = match pipeline {
                Some(p) => pipeline_name(&p)?,
                None => files.remove(0),
            };
            let Some(output) = files.pop().map(PathBuf::from) else {
                return Err(CliError::new("run: name the output file after the inputs"));
            };
            if files.is_empty() {
                return Err(CliError::new(format!("run: '{app}' needs at least one input file before the output")));
            }
            let inputs: Vec<PathBuf> = files.into_iter().map(PathBuf::from).collect();
            cmd_run(&app, &inputs, &output, &schedule, target, &params, check, raw)
        }
        Command::Bench {
            mut apps,
            pipelines,
            size,
            scale,
            schedule,
            runs,
            max_runs,
            slow_ms,
            slow_runs,
            threads,
            fresh_cache,
            cached_jit,
            device_buffers,
            inputs,
            save_outputs,
            target,
            json,
            check,
            params,
        } => bench::cmd_bench(&bench::BenchOptions {
            apps: {
                for p in &pipelines {
                    apps.push(pipeline_name(p)?);
                }
                apps
            },
            size,
            scale,
            schedules: schedule,
            protocol: bench::Protocol { runs, max_runs: max_runs.unwrap_or(runs), slow_ms, slow_runs },
            target,
            json,
            check,
            params,
            threads,
            fresh_cache,
            cached_jit,
            device_buffers,
            inputs,
            save_outputs,
        }),
        Command::Lower { app, pipeline, schedule, params, target, compile_kernels } => {
            let app = match (app, pipeline) {
                (_, Some(p)) => pipeline_name(&p)?,
                (Some(a), None) => a,
                (None, None) => return Err(CliError::new("lower: name an app or give --pipeline FILE")),
            };
            cmd_lower(&app, &schedule, &params, &target.target(), compile_kernels)
        }
        Command::Demo { out, size, image, synthetic, target } => {
            let source = match (image, synthetic) {
                (Some(p), _) => demo::Source::File(p),
                (None, true) => demo::Source::Synthetic,
                (None, false) => demo::Source::Photo,
            };
            demo::cmd_demo(&out, size, &source, target)
        }
    }
}

fn main() -> ExitCode {
    // A bug must still come out as one line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
        eprintln!("halogen: internal error: {}{at}", msg.lines().next().unwrap_or(""));
    }));
    let cli = Cli::parse();
    match std::panic::catch_unwind(|| run(cli)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("halogen: error: {e}");
            ExitCode::from(1)
        }
        Err(_) => ExitCode::from(101),
    }
}

/// Compiles `app` for `target`, timing it.
pub fn timed_compile(app: &dyn App, target: &Target) -> Result<(Compiled, f64), CliError> {
    let t = Instant::now();
    let c = app.compile(target)?;
    Ok((c, t.elapsed().as_secs_f64()))
}
