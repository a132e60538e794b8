//! `halogen demo`: a handful of apps on a photograph, written out as PNGs and an HTML page
//! with the pictures and the timings side by side.
//!
//! The photograph is built into the binary (`data/photos/coffee_small.png`, CC0; see
//! `data/photos/LICENSES.md`), so the demo runs from any folder; camera_pipe gets the raw
//! Bayer mosaic made from the same photograph (`coffee_small_bayer.png`), the others the
//! photograph converted to what they read.

use crate::bench::{time_app, Protocol, RunOptions, Timing};
use crate::schedule::BuiltApp;
use crate::{imageio, CliError, Size, TargetArg};
use halogen::prelude::*;
use halogen_apps::{App, Config, DynBuffer};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The bundled photograph (256x172, 8-bit RGB).
const PHOTO: &[u8] = include_bytes!("../../data/photos/coffee_small.png");
/// Its name, for the page.
const PHOTO_NAME: &str = "coffee_small.png";
/// A raw GRBG mosaic of the same photograph (16-bit gray PNG), camera_pipe's input.
const PHOTO_RAW: &[u8] = include_bytes!("../../data/photos/coffee_small_bayer.png");

/// The size of the synthetic picture when no `--size` is given.
const SYNTHETIC_SIZE: Size = Size { width: 256, height: 192 };

/// Where the demo's picture comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The photograph built into the binary.
    Photo,
    /// A picture file.
    File(PathBuf),
    /// The procedurally drawn test picture.
    Synthetic,
}

/// The apps the demo shows, with the parameters it gives them.
///
/// The local Laplacian filter runs with 5 pyramid levels instead of 8: the demo's
/// pictures are a few hundred pixels wide, and 5 levels already reach 8-pixel tiles.
const DEMO_APPS: &[(&str, &[&str])] = &[
    ("blur", &[]),
    ("unsharp", &[]),
    ("harris", &[]),
    ("sobel", &[]),
    ("bilateral_grid", &[]),
    ("hist_eq", &[]),
    ("local_laplacian", &["levels=5", "alpha=4"]),
    ("max_filter", &["radius=2"]),
    ("resize", &["scale=1.5"]),
    ("camera_pipe", &[]),
];

/// Timed runs of each schedule (the interpreter is slow; a few runs give a stable minimum).
const RUNS: usize = 3;

struct Shown {
    name: &'static str,
    params: &'static [&'static str],
    description: &'static str,
    input_file: String,
    output_file: String,
    timings: Vec<Timing>,
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The schedule to compare `hand` with: `root` (every stage stored whole) where the app has
/// it. `naive` (everything inlined) is left out of the demo: on some apps it recomputes
/// each stage many times, which is the point of scheduling but slow to watch.
fn baseline(app: &dyn App) -> Option<&'static str> {
    app.schedules().iter().copied().find(|s| *s == "root")
}

/// The picture an app actually reads (gray, Bayer mosaic, ...), for showing next to its
/// output.
fn input_view(inputs: &[DynBuffer]) -> DynBuffer {
    inputs.first().cloned().unwrap_or_else(|| halogen::Buffer::<u8>::new(&[1, 1]).into())
}

/// `src` resized to `w × h` by averaging each output pixel's footprint (nearest
/// neighbour when enlarging), planar RGB.
pub fn resize_rgb(src: &Buffer<f32>, w: i32, h: i32) -> Buffer<f32> {
    let (sw, sh) = (src.width(), src.height());
    // Input range [lo, hi) covering output index o of n out of m inputs (never empty).
    let span = |o: i32, n: i32, m: i32| {
        let (o, n, m) = (o as i64, n as i64, m as i64);
        let lo = (o * m / n).min(m - 1);
        let hi = ((o + 1) * m + n - 1) / n;
        (lo as i32, hi.clamp(lo + 1, m) as i32)
    };
    Buffer::from_fn(&[w, h, 3], |c| {
        let ((x0, x1), (y0, y1)) = (span(c[0], w, sw), span(c[1], h, sh));
        let mut acc = 0.0f32;
        for y in y0..y1 {
            for x in x0..x1 {
                acc += src[[x, y, c[2]]];
            }
        }
        acc / ((x1 - x0) * (y1 - y0)) as f32
    })
}

/// The centre `w × h` of a raw mosaic, cut at even coordinates so the Bayer pattern
/// keeps its phase; `None` if the mosaic is smaller.
fn crop_mosaic(raw: &Buffer<u16>, w: i32, h: i32) -> Option<Buffer<u16>> {
    if w > raw.width() || h > raw.height() {
        return None;
    }
    let x0 = ((raw.width() - w) / 2) & !1;
    let y0 = ((raw.height() - h) / 2) & !1;
    Some(Buffer::from_fn(&[w, h], |c| raw[[x0 + c[0], y0 + c[1]]]))
}

/// The bundled raw mosaic.
fn photo_raw() -> Result<Buffer<u16>, CliError> {
    let img = image::load_from_memory(PHOTO_RAW)
        .map_err(|e| CliError::new(format!("the bundled raw mosaic cannot be decoded: {e}")))?
        .into_luma16();
    Buffer::from_vec(img.as_raw().clone(), &[img.width() as i32, img.height() as i32]).map_err(CliError::from_display)
}

/// The demo's picture, resized to `size` if given, and the raw mosaic for camera_pipe
/// when the picture is the bundled photograph.
fn demo_picture(source: &Source, size: Option<Size>) -> Result<(Buffer<f32>, Option<Buffer<u16>>), CliError> {
    let (picture, raw) = match source {
        Source::Photo => (imageio::decode_rgb(PHOTO_NAME, PHOTO)?, Some(photo_raw()?)),
        Source::File(p) => (imageio::load_rgb(p)?, None),
        Source::Synthetic => {
            let s = size.unwrap_or(SYNTHETIC_SIZE);
            return Ok((halogen_apps::synth::test_picture(s.width, s.height), None));
        }
    };
    match size {
        Some(s) if (s.width, s.height) != (picture.width(), picture.height()) => {
            let raw = raw.and_then(|r| crop_mosaic(&r, s.width, s.height));
            Ok((resize_rgb(&picture, s.width, s.height), raw))
        }
        _ => Ok((picture, raw)),
    }
}

/// `halogen demo`.
pub fn cmd_demo(out: &Path, size: Option<Size>, source: &Source, target: TargetArg) -> Result<(), CliError> {
    std::fs::create_dir_all(out)
        .map_err(|e| CliError::new(format!("{}: cannot create the folder: {e}", out.display())))?;
    let (picture, raw) = demo_picture(source, size)?;
    let (pw, ph) = (picture.width(), picture.height());
    imageio::save(&out.join("input.png"), &picture.clone().into())?;

    let mut apps: Vec<(Box<dyn App>, Config, &'static [&'static str])> = Vec::new();
    for (name, params) in DEMO_APPS.iter().filter(|(n, _)| halogen_apps::app_names().contains(n)) {
        let config = Config::parse(params).map_err(CliError::new)?;
        apps.push((halogen_apps::create(name, &config)?, config, params));
    }
    let steps: usize = apps.iter().map(|(a, _, _)| 1 + baseline(a.as_ref()).is_some() as usize).sum();
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .map_err(CliError::from_display)?,
    );
    let run = RunOptions {
        target: target.clone(),
        protocol: Protocol::fixed(RUNS),
        check: true,
        cached_jit: false,
        device_buffers: false,
    };
    let mut shown = Vec::new();
    for (probe, config, params) in &apps {
        let name = probe.name();
        let mut schedules = vec!["hand"];
        schedules.extend(baseline(probe.as_ref()));
        let mut timings = Vec::new();
        let mut input_file = String::new();
        let mut output_file = String::new();
        for schedule in schedules {
            bar.set_message(format!("{name} / {schedule}"));
            let app = halogen_apps::build(name, schedule, config)?;
            let inputs = match &raw {
                Some(r) if name == "camera_pipe" => vec![DynBuffer::from(r.clone())],
                _ => app.inputs_from_rgb(&picture)?,
            };
            let built = BuiltApp { app, autoschedule_s: None, auto_source: None };
            let (timing, result) = time_app(&built, schedule, &inputs, &run)?;
            if schedule == "hand" {
                input_file = format!("{name}_input.png");
                output_file = format!("{name}.png");
                imageio::save(&out.join(&input_file), &input_view(&inputs))?;
                imageio::save(&out.join(&output_file), &built.app.display(&result))?;
            }
            timings.push(timing);
            bar.inc(1);
        }
        shown.push(Shown { name, params, description: probe.description(), input_file, output_file, timings });
    }
    bar.finish_and_clear();

    let html = page(&shown, pw, ph, &target, source);
    let index = out.join("index.html");
    std::fs::write(&index, html).map_err(|e| CliError::new(format!("{}: cannot write: {e}", index.display())))?;
    let all: Vec<Timing> = shown.iter().flat_map(|s| s.timings.iter().cloned()).collect();
    print!("{}", crate::bench::to_table(&all));
    println!(
        "wrote {} pictures and index.html to {}",
        1 + 2 * shown.len(),
        std::fs::canonicalize(out).unwrap_or_else(|_| out.to_path_buf()).display()
    );
    if let Some(bad) = all.iter().find(|t| t.check.as_deref().is_some_and(|c| c.starts_with("MISMATCH"))) {
        return Err(CliError::new(format!("{} ({}) does not match its reference", bad.app, bad.schedule)));
    }
    Ok(())
}

fn page(shown: &[Shown], w: i32, h: i32, target: &TargetArg, source: &Source) -> String {
    let source = match source {
        Source::Photo => format!(
            "a photograph ({PHOTO_NAME}, CC0, from scikit-image's sample data; camera_pipe reads a raw Bayer \
             mosaic made from it)"
        ),
        Source::File(p) => format!("the picture {}", html_escape(&p.display().to_string())),
        Source::Synthetic => "a test picture drawn procedurally (gradients, shapes, texture and noise)".to_string(),
    };
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Halogen demo</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; background: #fafafa; color: #222; }}
h1 {{ margin-bottom: 0.2em; }}
table {{ border-collapse: collapse; margin: 1em 0 2em; }}
th, td {{ padding: 0.3em 0.8em; border-bottom: 1px solid #ddd; text-align: right; }}
th:first-child, td:first-child, td:nth-child(2) {{ text-align: left; }}
.app {{ background: white; border: 1px solid #ddd; border-radius: 6px; padding: 1em; margin-bottom: 1.5em; }}
.pair {{ display: flex; gap: 1em; flex-wrap: wrap; }}
figure {{ margin: 0; }}
figure img {{ width: {w2}px; max-width: 45vw; image-rendering: pixelated; border: 1px solid #ccc; }}
figcaption {{ font-size: 0.85em; color: #555; }}
.ok {{ color: #070; }} .bad {{ color: #b00; font-weight: bold; }}
</style></head><body>
<h1>Halogen demo</h1>
<p>Apps from Halogen's benchmark suite run on {source}, {w}&times;{h}, target <code>{target}</code>.
Each app runs under its <code>hand</code> schedule (translated from Halide's) and, for comparison,
<code>root</code> (every stage computed whole, serially). Times are the best of {runs} runs after a
warm-up; every result is checked against the app's plain-Rust reference.</p>
<figure><img src="input.png" alt="input"><figcaption>input.png</figcaption></figure>
<h2>Timings</h2>
<table><tr><th>app</th><th>schedule</th><th>output</th><th>compile ms</th><th>best ms</th><th>median ms</th><th>MP/s</th><th>check</th></tr>
"#,
        w2 = 2 * w.min(400),
        runs = RUNS,
    );
    for a in shown {
        for t in &a.timings {
            let check = t.check.clone().unwrap_or_default();
            let class = if check.starts_with("MISMATCH") { "bad" } else { "ok" };
            let _ = writeln!(
                s,
                "<tr><td><a href=\"#{app}\">{app}</a></td><td>{sched}</td><td>{ow}&times;{oh}</td><td>{c:.1}</td><td>{mn:.2}</td><td>{md:.2}</td><td>{mp:.2}</td><td class=\"{class}\">{check}</td></tr>",
                app = a.name,
                sched = t.schedule,
                ow = t.width,
                oh = t.height,
                c = t.compile_ms,
                mn = t.min_ms,
                md = t.median_ms,
                mp = t.mpix_per_s(),
                check = html_escape(&check),
            );
        }
    }
    s.push_str("</table>\n<h2>Pictures</h2>\n");
    for a in shown {
        let _ = write!(
            s,
            r#"<div class="app" id="{n}"><h3>{n}</h3><p>{d}{p}</p><div class="pair">
<figure><img src="{i}" alt="{n} input"><figcaption>what {n} reads ({i})</figcaption></figure>
<figure><img src="{o}" alt="{n} output"><figcaption>what it computes ({o})</figcaption></figure>
</div></div>
"#,
            n = a.name,
            d = html_escape(a.description),
            p = if a.params.is_empty() {
                String::new()
            } else {
                format!(" <code>{}</code>", html_escape(&a.params.join(" ")))
            },
            i = a.input_file,
            o = a.output_file,
        );
    }
    s.push_str("</body></html>\n");
    s
}
