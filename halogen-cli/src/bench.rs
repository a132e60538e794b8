//! `halogen bench`: time apps under their schedules.

use crate::{timed_compile, CliError, Size, TargetArg};
use halogen_apps::{App, Config, DynBuffer};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

/// What `halogen bench` was asked to do.
pub struct BenchOptions {
    pub apps: Vec<String>,
    pub size: Size,
    pub schedule: Option<String>,
    pub runs: usize,
    pub target: TargetArg,
    pub json: bool,
    pub check: bool,
    pub params: Vec<String>,
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
    pub app: String,
    pub schedule: String,
    pub width: i32,
    pub height: i32,
    pub compile_ms: f64,
    pub first_ms: f64,
    pub min_ms: f64,
    pub median_ms: f64,
    pub runs: usize,
    /// `None` unless checked; then "exact", "max rel 1e-7" or the mismatch.
    pub check: Option<String>,
}

impl Timing {
    /// Output megapixels per second at the best run.
    pub fn mpix_per_s(&self) -> f64 {
        (self.width as f64 * self.height as f64 / 1e6) / (self.min_ms / 1e3).max(1e-12)
    }
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

/// Compiles `app`, runs it once to warm up, then `runs` timed times; `tick` is called after
/// each run. The output buffer is allocated once, outside the timed region.
pub fn time_app(
    app: &dyn App,
    schedule: &str,
    inputs: &[DynBuffer],
    target: TargetArg,
    runs: usize,
    check: bool,
    tick: &mut dyn FnMut(),
) -> Result<(Timing, DynBuffer), CliError> {
    let (compiled, compile_s) = timed_compile(app, &target.target())?;
    let mut out = DynBuffer::zeros(app.output_type(), &app.output_extents(inputs)?)?;
    let t = Instant::now();
    app.realize_into(&compiled, inputs, &mut out)?;
    let first = t.elapsed().as_secs_f64();
    tick();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        app.realize_into(&compiled, inputs, &mut out)?;
        times.push(t.elapsed().as_secs_f64());
        tick();
    }
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    let med = median(&mut times);
    let check = if check {
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
            height: e[1],
            compile_ms: compile_s * 1e3,
            first_ms: first * 1e3,
            min_ms: min * 1e3,
            median_ms: med * 1e3,
            runs: times.len(),
            check,
        },
        out,
    ))
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

fn json_number(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "null".into()
    }
}

/// The timings as a JSON array.
pub fn to_json(results: &[Timing], target: TargetArg) -> String {
    let rows: Vec<String> = results
        .iter()
        .map(|t| {
            format!(
                "  {{\"app\": {}, \"schedule\": {}, \"target\": {}, \"width\": {}, \"height\": {}, \"compile_ms\": {}, \"first_ms\": {}, \"min_ms\": {}, \"median_ms\": {}, \"runs\": {}, \"mpix_per_s\": {}, \"check\": {}}}",
                json_string(&t.app),
                json_string(&t.schedule),
                json_string(&format!("{target:?}").to_lowercase()),
                t.width,
                t.height,
                json_number(t.compile_ms),
                json_number(t.first_ms),
                json_number(t.min_ms),
                json_number(t.median_ms),
                t.runs,
                json_number(t.mpix_per_s()),
                t.check.as_deref().map(json_string).unwrap_or_else(|| "null".into()),
            )
        })
        .collect();
    format!("[\n{}\n]", rows.join(",\n"))
}

/// The timings as an aligned text table.
pub fn to_table(results: &[Timing]) -> String {
    let mut s = format!(
        "{:<16} {:<14} {:>9} {:>11} {:>10} {:>10} {:>9} {:>5}",
        "app", "schedule", "size", "compile ms", "min ms", "median ms", "MP/s", "runs"
    );
    let checked = results.iter().any(|t| t.check.is_some());
    if checked {
        s.push_str("  check");
    }
    s.push('\n');
    for t in results {
        s.push_str(&format!(
            "{:<16} {:<14} {:>9} {:>11.1} {:>10.2} {:>10.2} {:>9.2} {:>5}",
            t.app,
            t.schedule,
            format!("{}x{}", t.width, t.height),
            t.compile_ms,
            t.min_ms,
            t.median_ms,
            t.mpix_per_s(),
            t.runs
        ));
        if let Some(c) = &t.check {
            s.push_str(&format!("  {c}"));
        }
        s.push('\n');
    }
    s
}

/// `halogen bench`.
pub fn cmd_bench(o: &BenchOptions) -> Result<(), CliError> {
    if o.runs == 0 {
        return Err(CliError::new("--runs must be at least 1"));
    }
    let names: Vec<String> = if o.apps.is_empty() {
        halogen_apps::app_names().iter().map(|s| s.to_string()).collect()
    } else {
        o.apps.clone()
    };
    // Validate everything before timing anything.
    let mut plan: Vec<(String, String)> = Vec::new();
    for name in &names {
        let app = halogen_apps::create(name, &config_for(name, &o.params, &names)?)?;
        match &o.schedule {
            Some(s) if app.schedules().contains(&s.as_str()) => plan.push((name.clone(), s.clone())),
            Some(s) if !o.apps.is_empty() => {
                return Err(halogen_apps::build(name, s, &Config::default())
                    .err()
                    .map(CliError::from)
                    .unwrap_or_else(|| CliError::new(format!("app '{name}' has no schedule '{s}'"))))
            }
            Some(_) => {} // benchmarking all apps: skip the ones without this schedule
            None => plan.extend(app.schedules().iter().map(|s| (name.clone(), s.to_string()))),
        }
    }
    if plan.is_empty() {
        return Err(CliError::new(format!("no app has the schedule '{}'", o.schedule.as_deref().unwrap_or_default())));
    }
    let bar = ProgressBar::new((plan.len() * (o.runs + 1)) as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .map_err(CliError::from_display)?,
    );
    let mut results = Vec::new();
    for (name, schedule) in &plan {
        bar.set_message(format!("{name} / {schedule}"));
        let app = halogen_apps::build(name, schedule, &config_for(name, &o.params, &names)?)?;
        let inputs = app.make_inputs(o.size.width, o.size.height, 42);
        let (timing, _) = time_app(app.as_ref(), schedule, &inputs, o.target, o.runs, o.check, &mut || bar.inc(1))?;
        results.push(timing);
    }
    bar.finish_and_clear();
    if o.json {
        println!("{}", to_json(&results, o.target));
    } else {
        print!("{}", to_table(&results));
    }
    if let Some(bad) = results.iter().find(|t| t.check.as_deref().is_some_and(|c| c.starts_with("MISMATCH"))) {
        return Err(CliError::new(format!(
            "{} ({}) does not match its reference: {}",
            bad.app,
            bad.schedule,
            bad.check.as_deref().unwrap_or_default()
        )));
    }
    Ok(())
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
}
