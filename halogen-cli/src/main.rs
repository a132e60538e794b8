//! `halogen`: run Halogen's benchmark apps on pictures, time them, show their loop nests,
//! and make a demo page.
//!
//! ```text
//! halogen list
//! halogen run blur in.png out.png --schedule hand
//! halogen bench blur harris --size 512x384 --json
//! halogen lower blur --schedule hand_sliding
//! halogen demo --out ./halogen-demo
//! ```
//!
//! Errors are one line on stderr and a non-zero exit status.

mod bench;
mod demo;
mod imageio;

use clap::{Parser, Subcommand, ValueEnum};
use halogen::prelude::*;
use halogen_apps::{App, Config};
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

/// Where pipelines run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    /// Native code for this machine (the interpreter until the native back end lands).
    Host,
    /// The reference interpreter.
    Interp,
}

impl TargetArg {
    /// The library's target.
    pub fn target(self) -> Target {
        match self {
            TargetArg::Host => Target::host(),
            TargetArg::Interp => Target::interp(),
        }
    }
}

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
        let parse = |v: &str| v.trim().parse::<i32>().ok().filter(|&n| (1..=65536).contains(&n));
        match (parse(w), parse(h)) {
            (Some(width), Some(height)) => Ok(Size { width, height }),
            _ => Err(format!("'{s}' is not a size like 640x480 (sides from 1 to 65536)")),
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
    List,
    /// Run an app on a picture and save the result.
    Run {
        /// The app (see `halogen list`).
        app: String,
        /// Input picture (PNG, JPEG or TIFF; 8 or 16 bits; gray or RGB).
        input: PathBuf,
        /// Output picture (.png, .jpg or .tif: PNG and TIFF keep 16 bits).
        output: PathBuf,
        /// The schedule to apply.
        #[arg(long, default_value = "hand")]
        schedule: String,
        /// Where to run it.
        #[arg(long, value_enum, default_value_t = TargetArg::Host)]
        target: TargetArg,
        /// An app parameter, `name=value` (repeatable).
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
        /// Also run the plain-Rust reference and check that the results agree.
        #[arg(long)]
        check: bool,
        /// Save the raw output instead of its display version (Harris responses, Sobel
        /// magnitudes are scaled for viewing by default).
        #[arg(long)]
        raw: bool,
    },
    /// Time apps under their schedules: a warm-up, then the min and median of several runs.
    Bench {
        /// Apps to time (all if none are named).
        apps: Vec<String>,
        /// Output size of the synthetic inputs.
        #[arg(long, default_value = "256x192")]
        size: Size,
        /// Only this schedule (default: every schedule of each app).
        #[arg(long)]
        schedule: Option<String>,
        /// Timed runs per app and schedule (at least 1; 10 or more for stable numbers).
        #[arg(long, default_value_t = 10)]
        runs: usize,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = TargetArg::Host)]
        target: TargetArg,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Check every result against the app's reference.
        #[arg(long)]
        check: bool,
        /// An app parameter, `name=value` (repeatable), given to the apps that have it.
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
    },
    /// Print an app's lowered loop nest.
    Lower {
        /// The app.
        app: String,
        /// The schedule to apply.
        #[arg(long, default_value = "hand")]
        schedule: String,
        /// An app parameter, `name=value` (repeatable).
        #[arg(long = "param", value_name = "K=V")]
        params: Vec<String>,
    },
    /// Run a handful of apps on a test picture and write the pictures and an HTML page.
    Demo {
        /// The folder to write into.
        #[arg(long, default_value = "halogen-demo")]
        out: PathBuf,
        /// Size of the generated test picture.
        #[arg(long, default_value = "256x192")]
        size: Size,
        /// Use this picture instead of the generated one.
        #[arg(long)]
        image: Option<PathBuf>,
        /// Where to run.
        #[arg(long, value_enum, default_value_t = TargetArg::Host)]
        target: TargetArg,
    },
}

fn config(params: &[String]) -> Result<Config, CliError> {
    Config::parse(params).map_err(CliError::new)
}

fn cmd_list() -> Result<(), CliError> {
    for name in halogen_apps::app_names() {
        let app = halogen_apps::create(name, &Config::default())?;
        println!("{name:<16} {}", app.description());
        println!("{:<16} schedules: {}", "", app.schedules().join(", "));
        for p in app.params() {
            println!("{:<16} --param {}={} ({})", "", p.name, p.default, p.help);
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    app: &str,
    input: &std::path::Path,
    output: &std::path::Path,
    schedule: &str,
    target: TargetArg,
    params: &[String],
    check: bool,
    raw: bool,
) -> Result<(), CliError> {
    let app = halogen_apps::build(app, schedule, &config(params)?)?;
    let picture = imageio::load_rgb(input)?;
    let inputs = app.inputs_from_rgb(&picture)?;
    let t0 = Instant::now();
    let compiled = app.compile(&target.target())?;
    let compile_s = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let out = app.realize(&compiled, &inputs)?;
    let run_s = t1.elapsed().as_secs_f64();
    let shown = if raw { out.clone() } else { app.display(&out) };
    imageio::save(output, &shown)?;
    let e = out.extents();
    eprintln!(
        "{} ({schedule}) on {}x{}: compiled in {:.1} ms, ran in {:.1} ms; wrote {}",
        app.name(),
        e[0],
        e[1],
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

fn cmd_lower(app: &str, schedule: &str, params: &[String]) -> Result<(), CliError> {
    let app = halogen_apps::build(app, schedule, &config(params)?)?;
    let compiled = app.compile(&Target::host())?;
    println!("{}", compiled.lowered_stmt());
    Ok(())
}

fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::List => cmd_list(),
        Command::Run { app, input, output, schedule, target, params, check, raw } => {
            cmd_run(&app, &input, &output, &schedule, target, &params, check, raw)
        }
        Command::Bench { apps, size, schedule, runs, target, json, check, params } => {
            bench::cmd_bench(&bench::BenchOptions { apps, size, schedule, runs, target, json, check, params })
        }
        Command::Lower { app, schedule, params } => cmd_lower(&app, &schedule, &params),
        Command::Demo { out, size, image, target } => demo::cmd_demo(&out, size, image.as_deref(), target),
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
