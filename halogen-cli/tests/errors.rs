//! The `halogen` command's answers to its users' mistakes: each is one line naming the
//! thing and the numbers, found before anything is compiled where it can be, and nothing
//! panics. Also the right results where a mistake used to be made by the command itself
//! (a check that passed on infinities, a parameter inside its range that did not compile).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn halogen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halogen")).args(args).output().expect("the halogen binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `args` and expects exit status 1 with exactly `halogen: error: {expected}`.
#[track_caller]
fn fails_with(args: &[&str], expected: &str) {
    let o = halogen(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?} should fail cleanly:\n{err}");
    assert_eq!(err.trim_end(), format!("halogen: error: {expected}"), "{args:?}");
}

/// Runs `args` and expects success.
#[track_caller]
fn succeeds(args: &[&str]) -> Output {
    let o = halogen(args);
    assert!(o.status.success(), "{args:?}:\n{}{}", stdout(&o), stderr(&o));
    o
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// Writes an `.npy` file (version 1.0) with this header and these data bytes.
fn npy(path: &Path, descr: &str, shape: &str, data: &[u8]) {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    header.push_str(&" ".repeat((64 - (10 + header.len() + 1) % 64) % 64));
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

/// Writes a float32 `.npy` array of NumPy shape `shape`.
fn f32_npy(path: &Path, shape: &[usize], values: &[f32]) {
    assert_eq!(shape.iter().product::<usize>(), values.len());
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    npy(path, "<f4", &format!("({})", dims.join(", ")), &data);
}

/// Writes an 8-bit RGB PNG of `w × h` with a gradient that depends on `seed`.
fn png(path: &Path, w: u32, h: u32, seed: u32) {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x * 15 + seed * 40) as u8, (y * 20 + seed * 7) as u8, ((x + y) * 9 + seed) as u8])
    });
    img.save(path).unwrap();
}

/// The value of `"key": ` in a one-line JSON object (numbers, null, strings unquoted).
fn field<'a>(obj: &'a str, key: &str) -> &'a str {
    let start = obj.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("no {key} in {obj}")) + key.len() + 4;
    let rest = &obj[start..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return &quoted[..quoted.find('"').unwrap()];
    }
    rest[..rest.find([',', '}']).unwrap()].trim()
}

/// One declared parameter, as `halogen list --json` gives it.
struct Param {
    app: String,
    name: String,
    min: String,
    max: String,
    kind: String,
}

impl Param {
    /// How the command says what values it accepts.
    fn range(&self) -> String {
        let what = match self.kind.as_str() {
            "real" => "a number",
            "integer" => "an integer",
            "odd integer" => "an odd integer",
            k => panic!("unknown kind {k}"),
        };
        format!("{what} from {} to {}", self.min, self.max)
    }
}

/// Every app's parameters, from `halogen list --json`.
fn declared_params() -> Vec<Param> {
    let json = stdout(&succeeds(&["list", "--json"]));
    let mut out = Vec::new();
    for line in json.lines().filter(|l| l.contains("\"params\": [")) {
        let app = field(line, "name").to_string();
        let params = &line[line.find("\"params\": [").unwrap()..];
        for obj in params.split("{\"name\": ").skip(1) {
            let obj = format!("{{\"name\": {obj}");
            out.push(Param {
                app: app.clone(),
                name: field(&obj, "name").to_string(),
                min: field(&obj, "min").to_string(),
                max: field(&obj, "max").to_string(),
                kind: field(&obj, "kind").to_string(),
            });
        }
    }
    assert!(out.len() >= 20 && out.iter().any(|p| p.name == "r_sigma"), "parameters listed");
    out
}

#[test]
fn check_compares_infinities_exactly() {
    // An infinity in the reference made the tolerance infinite, and inf - inf a NaN
    // difference: max_filter failed on equal infinities ("got inf, expected inf").
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("inf.npy");
    let mut values = vec![0.25f32; 3 * 6 * 8];
    values[5] = f32::INFINITY;
    values[20] = f32::NEG_INFINITY;
    values[60] = f32::INFINITY;
    f32_npy(&input, &[3, 6, 8], &values);
    let out = dir.path().join("out.npy");
    let o =
        succeeds(&["run", "max_filter", s(&input), s(&out), "--param", "radius=1", "--target", "interp", "--check"]);
    assert!(stderr(&o).contains("matches the reference (max relative difference 0.0e0)"), "{}", stderr(&o));
    let o = succeeds(&[
        "bench",
        "max_filter",
        "--input",
        s(&input),
        "--param",
        "radius=1",
        "--schedule",
        "hand",
        "--runs",
        "1",
        "--target",
        "interp",
        "--check",
        "--json",
    ]);
    assert_eq!(field(stdout(&o).lines().find(|l| l.contains("\"app\"")).unwrap(), "check"), "exact");
}

#[test]
fn npy_shapes_are_counted_without_wrapping() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npy");
    let huge = dir.path().join("huge.npy");
    let m = i32::MAX;
    npy(&huge, "|u1", &format!("({m}, {m}, {m})"), &[]);
    fails_with(
        &["run", "max_filter", s(&huge), s(&out)],
        &format!(
            "{}: cannot read the array: not a supported .npy array: shape ({m}, {m}, {m}) has \
             9903520300447984150353281023 elements of 1 byte (9903520300447984150353281023 bytes), but the file \
             holds 0 data bytes",
            huge.display()
        ),
    );
    let big = dir.path().join("big.npy");
    npy(&big, "<f4", "(3, 65536, 65536)", &[0; 12]);
    fails_with(
        &["run", "max_filter", s(&big), s(&out)],
        &format!(
            "{}: cannot read the array: not a supported .npy array: shape (3, 65536, 65536) has 12884901888 \
             elements of 4 bytes (51539607552 bytes), but the file holds 12 data bytes",
            big.display()
        ),
    );
    let long = dir.path().join("long.npy");
    npy(&long, "<f4", "(1, 4294967296)", &[]);
    fails_with(
        &["run", "max_filter", s(&long), s(&out)],
        &format!(
            "{}: cannot read the array: not a supported .npy array: shape (1, 4294967296): axis 1 has 4294967296 \
             elements, more than the 2147483647 a buffer dimension holds",
            long.display()
        ),
    );
    let negative = dir.path().join("negative.npy");
    npy(&negative, "<f4", "(-3, 4)", &[]);
    fails_with(
        &["run", "max_filter", s(&negative), s(&out)],
        &format!(
            "{}: cannot read the array: not a supported .npy array: shape (-3, 4): '-3' is not a non-negative \
             integer",
            negative.display()
        ),
    );
    let empty = dir.path().join("empty.npy");
    npy(&empty, "<f4", "(3, 0, 4)", &[]);
    fails_with(&["run", "max_filter", s(&empty), s(&out)], &format!("{}: the array is empty", empty.display()));
}

#[test]
fn scale_errors_say_what_is_wrong() {
    for (scale, expected) in [
        (
            "1e30",
            "--scale 1e30 is too large: blur's 6400x4800 image would be 6.4e33x4.8e33, 3.072e67 pixels, over the \
             limit of 65536 pixels a side",
        ),
        (
            "11",
            "--scale 11 is too large: blur's 6400x4800 image would be 70400x52800, 3717120000 pixels, over the \
             limit of 65536 pixels a side",
        ),
        (
            "10.24",
            "--scale 10.24 is too large: blur's 6400x4800 image would be 65536x49152, 3221225472 pixels, over the \
             limit of 1073741824 pixels",
        ),
        ("0", "--scale must be positive, got 0"),
        ("-2", "--scale must be positive, got -2"),
        ("-1e300", "--scale must be positive, got -1e300"),
        ("inf", "--scale must be a finite number, got inf"),
        ("NaN", "--scale must be a finite number, got NaN"),
    ] {
        fails_with(&["bench", "blur", &format!("--scale={scale}"), "--runs", "1"], expected);
    }
    // With every app, the first one too large is named.
    fails_with(
        &["bench", "--scale", "17", "--runs", "1"],
        "--scale 17 is too large: blur's 6400x4800 image would be 108800x81600, 8878080000 pixels, over the limit \
         of 65536 pixels a side",
    );
}

#[test]
fn parameters_outside_their_range_are_rejected_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let photo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/photos/chelsea_small.png");
    // It used to reach the compiler and end in a bounds error with IR text.
    fails_with(
        &["run", "bilateral_grid", s(&photo), s(&dir.path().join("o.png")), "--param", "r_sigma=1e-30"],
        "app 'bilateral_grid': parameter 'r_sigma' must be a number from 0.01 to 1, got 1e-30",
    );
    // Every declared range, just outside each end, and the numbers between that it skips.
    for p in declared_params() {
        let (min, max): (f64, f64) = (p.min.parse().unwrap(), p.max.parse().unwrap());
        let mut bad = match p.kind.as_str() {
            "real" => vec![if min > 0.0 { min / 2.0 } else { min - 1.0 }, max * 2.0],
            "integer" => vec![min - 1.0, max + 1.0, min + 0.5],
            _ => vec![min - 2.0, max + 2.0, min + 1.0],
        };
        bad.push(f64::NAN);
        for v in bad {
            let v = v.to_string();
            let kv = format!("{}={v}", p.name);
            fails_with(
                &["lower", &p.app, "--param", &kv],
                &format!("app '{}': parameter '{}' must be {}, got {v}", p.app, p.name, p.range()),
            );
        }
    }
}

/// Benchmarks `app` once at 16x16 under its hand schedule with these parameters, checked
/// against its reference. On the interpreter: what a range must guarantee is that the
/// compiler takes the pipeline and computes the reference's pixels, and the host's C
/// compiles, cold, would take many minutes for the whole sweep.
fn bench_checked(app: &str, kvs: &[String]) -> Output {
    let mut args = vec![
        "bench",
        app,
        "--size",
        "16x16",
        "--runs",
        "1",
        "--schedule",
        "hand",
        "--check",
        "--json",
        "--target",
        "interp",
    ];
    for kv in kvs {
        args.extend(["--param", kv.as_str()]);
    }
    halogen(&args)
}

#[test]
#[ignore = "about 20 minutes on two cores: run with `cargo test -p halogen-cli --test errors -- --ignored`"]
fn every_parameter_works_at_both_ends_of_its_range() {
    // Each parameter at each end of its range, the others at their defaults: built,
    // compiled, run on a small picture and checked against the reference. Where the app
    // turns the pair down (canny's low must not exceed its high), every parameter goes to
    // that end together, which it must take.
    let params = declared_params();
    for p in &params {
        for (end, value) in [("min", &p.min), ("max", &p.max)] {
            let mut kvs = vec![format!("{}={value}", p.name)];
            let mut o = bench_checked(&p.app, &kvs);
            // A rejection of the combination, not a compiler or runtime error.
            let declined = stderr(&o)
                .strip_prefix(&format!("halogen: error: app '{}': ", p.app))
                .is_some_and(|why| !why.contains("error"));
            if !o.status.success() && declined {
                kvs = params
                    .iter()
                    .filter(|q| q.app == p.app)
                    .map(|q| format!("{}={}", q.name, if end == "min" { &q.min } else { &q.max }))
                    .collect();
                o = bench_checked(&p.app, &kvs);
            }
            assert!(o.status.success(), "{} {kvs:?}:\n{}{}", p.app, stdout(&o), stderr(&o));
            let out = stdout(&o);
            let check = field(out.lines().find(|l| l.contains("\"app\"")).unwrap(), "check").to_string();
            assert!(check == "exact" || check.starts_with("max rel"), "{} {kvs:?}: {check}", p.app);
        }
    }
}

#[test]
fn run_takes_one_file_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| -> String { s(&dir.path().join(n)).to_string() };
    let (a, b, m, small, out) = (p("a.png"), p("b.png"), p("m.png"), p("small.png"), p("out.png"));
    for (file, w, h, seed) in [(&a, 16, 12, 0), (&b, 16, 12, 1), (&m, 16, 12, 2), (&small, 8, 6, 3)] {
        png(Path::new(file), w, h, seed);
    }
    let interp = ["--target", "interp", "--param", "levels=2", "--check"];
    // Three pictures for pyramid_blend's three inputs (the mask made gray), in order.
    let mut args = vec!["run", "pyramid_blend", &a, &b, &m, &out];
    args.extend(interp);
    let o = succeeds(&args);
    assert!(stderr(&o).contains("matches the reference"), "{}", stderr(&o));
    // One picture still makes all three; two exposures for exposure_fusion set to two.
    let mut args = vec!["run", "pyramid_blend", &a, &out];
    args.extend(interp);
    succeeds(&args);
    let mut args = vec!["run", "exposure_fusion", &a, &b, &out, "--param", "exposures=2"];
    args.extend(interp);
    succeeds(&args);
    // The wrong number of files, said the same way by run and bench.
    let three = "pyramid_blend takes 3 inputs (a, b, mask), but 2 files were given; give 3 files in that order, or \
                 one picture to make them all";
    fails_with(&["run", "pyramid_blend", &a, &b, &out], three);
    fails_with(&["bench", "pyramid_blend", "--input", &a, "--input", &b], three);
    fails_with(
        &["run", "exposure_fusion", &a, &b, &out],
        "exposure_fusion takes 3 inputs (exposure0, exposure1, exposure2), but 2 files were given; give 3 files \
         in that order, or one picture to make them all",
    );
    fails_with(&["run", "blur", &a, &b, &out], "blur takes 1 input (input), but 2 files were given");
    let array = p("a.npy");
    f32_npy(Path::new(&array), &[3, 12, 16], &[0.5; 3 * 12 * 16]);
    fails_with(
        &["run", "pyramid_blend", &array, &out],
        "pyramid_blend takes 3 inputs (a, b, mask), but the one file given is an array, which makes one input; give \
         3 files in that order, or one picture to make them all",
    );
    // Inputs that do not fit together, found before compiling.
    fails_with(
        &["run", "pyramid_blend", &a, &small, &m, &out],
        "app 'pyramid_blend': images a and b must have the same extents, got [16, 12, 3] and [8, 6, 3]",
    );
    fails_with(
        &["run", "pyramid_blend", &a, &b, &small, &out],
        "app 'pyramid_blend': the mask must be 16x12 like the images, got [8, 6]",
    );
    let o = halogen(&["run", "conv_layer", &a, &b, &m, &p("o.npy")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("halogen: error: app 'conv_layer': input 'input' (activations")
            && stderr(&o).trim_end().ends_with("is not a picture; give it as a .npy array"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn mistakes_name_the_thing_and_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| -> PathBuf { dir.path().join(n) };
    png(&p("in.png"), 16, 12, 0);
    let input = p("in.png");
    let input = s(&input);
    let out = p("out.png");
    let out = s(&out);
    let apps = stdout(&succeeds(&["list", "--json"]));
    let names: Vec<&str> =
        apps.lines().filter(|l| l.contains("\"name\"")).map(|l| field(l, "name")).collect::<Vec<_>>();
    let blur_schedules = "naive, root, hand, hand_sliding, gpu, gpu_shared, distributed, distributed_exchange, auto";
    let missing = p("no/such/folder/out.png");
    let wrong_channels = p("four.npy");
    f32_npy(&wrong_channels, &[4, 6, 8], &[0.5; 4 * 6 * 8]);
    let wrong_type = p("float.npy");
    f32_npy(&wrong_type, &[6, 8], &[0.5; 6 * 8]);
    let bmp = p("out.bmp");
    let under_a_file = format!("{input}/out.png");
    let cases: Vec<(Vec<&str>, String)> = vec![
        // Apps and schedules.
        (vec!["run", "nope", input, out], format!("unknown app 'nope'; the apps are: {}", names.join(", "))),
        (vec!["lower", "nope"], format!("unknown app 'nope'; the apps are: {}", names.join(", "))),
        (
            vec!["run", "blur", input, out, "--schedule", "fast"],
            format!("app 'blur' has no schedule 'fast'; its schedules are: {blur_schedules}"),
        ),
        (
            vec!["lower", "blur", "--schedule", "fast"],
            format!("app 'blur' has no schedule 'fast'; its schedules are: {blur_schedules}"),
        ),
        (
            vec!["bench", "blur", "--schedule", "hand,fast", "--size", "16x16"],
            format!("app 'blur' has no schedule 'fast'; its schedules are: {blur_schedules}"),
        ),
        // Parameters.
        (vec!["lower", "max_filter", "--param", "radius"], "parameter 'radius' is not of the form name=value".into()),
        (vec!["lower", "max_filter", "--param", "=3"], "parameter '=3' has an empty name".into()),
        (
            vec!["lower", "max_filter", "--param", "radius=2", "--param", "radius=3"],
            "parameter 'radius' is given twice (radius=2 and radius=3)".into(),
        ),
        (
            vec!["bench", "max_filter", "--param", "radius=2", "--param", "radius=2"],
            "parameter 'radius' is given twice (radius=2 and radius=2)".into(),
        ),
        (
            vec!["run", "blur", input, out, "--param", "radius=3"],
            "app 'blur': unknown parameter 'radius'; this app takes no parameters".into(),
        ),
        (
            vec!["lower", "max_filter", "--param", "size=3"],
            "app 'max_filter': unknown parameter 'size'; its parameters are: radius".into(),
        ),
        (
            vec!["bench", "blur", "sobel", "--param", "radius=3"],
            "no app benchmarked takes the parameter 'radius'".into(),
        ),
        (
            vec!["lower", "max_filter", "--param", "radius=three"],
            "app 'max_filter': parameter 'radius' must be an integer from 0 to 64, got three".into(),
        ),
        (
            vec!["lower", "max_filter", "--param", "radius="],
            "app 'max_filter': parameter 'radius' must be an integer from 0 to 64, got nothing".into(),
        ),
        (
            vec!["lower", "max_filter", "--param", "radius=inf"],
            "app 'max_filter': parameter 'radius' must be an integer from 0 to 64, got inf".into(),
        ),
        (
            vec!["lower", "nl_means", "--param", "patch_size=4"],
            "app 'nl_means': parameter 'patch_size' must be an odd integer from 1 to 15, got 4".into(),
        ),
        (
            vec!["lower", "canny", "--param", "low=200"],
            "app 'canny': low must not exceed high, got low = 200 and high = 150".into(),
        ),
        // Input files.
        (
            vec!["run", "blur", "/no/such/picture.png", out],
            "/no/such/picture.png: cannot read the image: No such file or directory (os error 2)".into(),
        ),
        (vec!["run", "blur", s(dir.path()), out], format!("{}: is a folder; give an input file", dir.path().display())),
        (
            vec!["run", "max_filter", s(&wrong_channels), out],
            "max_filter's input 'input' takes float32 values of NumPy shape (3, H, W) (planar RGB), but the array \
             holds float32 values of shape (4, 6, 8)"
                .into(),
        ),
        (
            vec!["run", "hist_eq", s(&wrong_type), out],
            "hist_eq's input 'input' takes uint8 values of NumPy shape (H, W) (gray u8, not all one value), but the array \
             holds float32 values of shape (6, 8)"
                .into(),
        ),
        (
            vec!["bench", "max_filter", "--input", s(&wrong_channels)],
            "max_filter's input 'input' takes float32 values of NumPy shape (3, H, W) (planar RGB), but the array \
             holds float32 values of shape (4, 6, 8)"
                .into(),
        ),
        // Outputs, before anything is computed.
        (
            vec!["run", "blur", input, s(&missing)],
            format!(
                "{}: cannot write there: {} is not an existing folder",
                missing.display(),
                missing.parent().unwrap().display()
            ),
        ),
        (
            vec!["run", "blur", input, s(dir.path())],
            format!("{}: is a folder; give the output file's name", dir.path().display()),
        ),
        (
            vec!["run", "blur", input, s(&bmp)],
            format!("{}: unknown file format 'bmp'; use .png, .jpg, .tif or .npy", bmp.display()),
        ),
        (
            vec!["run", "conv_layer", input, out],
            "conv_layer's output has extents [32, 16, 12, 1], which is not a picture (gray WxH or RGB WxHx3); \
             write it to a .npy file"
                .into(),
        ),
        (
            vec!["run", "blur", input, &under_a_file],
            format!("{input}/out.png: cannot write there: {input} is not an existing folder"),
        ),
        // Benchmark options.
        (vec!["bench", "blur", "--runs", "0"], "--runs must be at least 1".into()),
        (vec!["bench", "blur", "sobel", "--input", input], "--input needs exactly one app to benchmark".into()),
    ];
    for (args, expected) in &cases {
        fails_with(args, expected);
    }
    // Sizes clap rejects: its own message and status 2, still no panic.
    for (size, expected) in [
        ("0x5", "'0x5' is not a size like 640x480 (sides from 1 to 65536)"),
        ("65537x5", "'65537x5' is not a size like 640x480 (sides from 1 to 65536)"),
        ("65536x65536", "'65536x65536' has 4294967296 pixels, over the limit of 1073741824"),
    ] {
        let o = halogen(&["bench", "blur", "--size", size]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains(expected), "{}", stderr(&o));
    }
    // The demo's folder cannot be made inside a file.
    let o = halogen(&["demo", "--out", &format!("{input}/demo"), "--synthetic"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with(&format!("halogen: error: {input}/demo: cannot create the folder: ")),
        "{}",
        stderr(&o)
    );
}
