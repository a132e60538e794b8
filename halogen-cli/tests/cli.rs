//! The `halogen` command end to end: it runs, writes what it says, and fails cleanly.

use std::path::Path;
use std::process::{Command, Output};

fn halogen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_halogen")).args(args).output().expect("the halogen binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn lower_prints_the_loop_nest() {
    let o = halogen(&["lower", "blur", "--schedule", "hand"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("blur_x") && text.contains("blur_y"), "{text}");
    assert!(text.contains("parallel"), "the hand schedule has a parallel loop:\n{text}");
}

#[test]
fn lower_for_a_gpu_target_prints_the_kernels() {
    for (target, kernel) in [("host-opencl", "__kernel void"), ("host-cuda", "extern \"C\" __global__ void")] {
        let o = halogen(&["lower", "blur", "--schedule", "gpu", "--target", target]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.contains("gpu_block (blur_y.s0.y.yo") && text.contains(kernel), "{target}:\n{text}");
    }
    // A GPU schedule for a target without a GPU is refused by name.
    let o = halogen(&["lower", "blur", "--schedule", "gpu"]);
    assert!(!o.status.success() && stderr(&o).contains("gpu_blocks(yo) needs a GPU target"), "{}", stderr(&o));
}

#[test]
fn list_names_every_app() {
    let o = halogen(&["list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for app in ["blur", "unsharp", "harris", "bilateral_grid", "hist_eq", "local_laplacian"] {
        assert!(stdout(&o).contains(app), "{app} missing from:\n{}", stdout(&o));
    }
}

#[test]
fn demo_writes_pictures_and_a_page() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let o = halogen(&["demo", "--out", out.to_str().unwrap(), "--size", "64x48", "--target", "interp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(out.file_name().unwrap().to_str().unwrap()), "says where: {}", stdout(&o));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for file in ["input.png", "blur.png", "harris.png", "hist_eq.png", "camera_pipe_input.png"] {
        assert!(out.join(file).is_file(), "{file} missing");
        assert!(index.contains(file), "index.html does not show {file}");
    }
    assert!(!index.contains("MISMATCH"), "every result matches its reference");
    // The bundled photograph, resized; camera_pipe reads the raw mosaic made from it.
    assert!(index.contains("coffee_small.png") && index.contains("Bayer"), "{index}");
}

#[test]
fn run_processes_a_picture_and_bench_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.png");
    let output = dir.path().join("out.png");
    // Make an input picture with the demo's generator (through the tool itself).
    let demo_dir = dir.path().join("d");
    let o = halogen(&["demo", "--out", demo_dir.to_str().unwrap(), "--size", "40x30", "--target", "interp"]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(demo_dir.join("input.png"), &input).unwrap();
    let o =
        halogen(&["run", "sobel", input.to_str().unwrap(), output.to_str().unwrap(), "--target", "interp", "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(Path::new(&output).is_file());
    let o = halogen(&[
        "bench",
        "blur",
        "--size",
        "32x16",
        "--runs",
        "2",
        "--schedule",
        "hand",
        "--json",
        "--target",
        "interp",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    assert!(
        json.trim_start().starts_with('[') && json.contains("\"app\": \"blur\"") && json.contains("min_ms"),
        "{json}"
    );
}

#[test]
fn errors_are_one_line_and_fail() {
    for args in [
        vec!["lower", "no_such_app"],
        vec!["lower", "blur", "--schedule", "nope"],
        vec!["run", "blur", "/no/such/file.png", "/tmp/x.png"],
        vec!["lower", "blur", "--param", "radius=3"],
    ] {
        let o = halogen(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line, got:\n{err}");
        assert!(err.starts_with("halogen: error:"), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    }
}

/// A bundled photograph (see data/photos/LICENSES.md).
fn photo(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/photos").join(name)
}

/// The value of `"key": ` in a one-line JSON object (numbers, null, strings unquoted).
fn field<'a>(row: &'a str, key: &str) -> &'a str {
    let start = row.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("no {key} in {row}")) + key.len() + 4;
    let rest = &row[start..];
    rest[..rest.find([',', '}']).unwrap()].trim().trim_matches('"')
}

#[test]
fn bench_times_hand_and_auto_with_jit_times() {
    let o = halogen(&[
        "bench",
        "blur",
        "--size",
        "48x32",
        "--schedule",
        "hand,auto",
        "--runs",
        "2",
        "--threads",
        "1",
        "--fresh-cache",
        "--cached-jit",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    let rows: Vec<&str> = json.lines().filter(|l| l.contains("\"app\"")).collect();
    assert_eq!(rows.len(), 2, "{json}");
    assert_eq!(field(rows[0], "schedule"), "hand");
    assert_eq!(field(rows[1], "schedule"), "auto");
    for r in &rows {
        assert_eq!((field(r, "width"), field(r, "height"), field(r, "threads")), ("48", "32", "1"), "{r}");
        assert!(field(r, "jit_first_ms").parse::<f64>().unwrap() > 0.0, "{r}");
        assert!(field(r, "jit_cached_ms").parse::<f64>().unwrap() > 0.0, "{r}");
        assert_eq!(field(r, "runs"), "2");
    }
    assert_eq!(field(rows[0], "autoschedule_ms"), "null");
    assert!(field(rows[1], "autoschedule_ms").parse::<f64>().is_ok(), "{}", rows[1]);
}

#[test]
fn bench_default_sizes_scale_like_halide_bench() {
    let o = halogen(&["bench", "harris", "--scale", "0.05", "--schedule", "hand", "--runs", "1", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    // 4256x2832 (halide_bench's harris) scaled by 0.05, down to a multiple of 16.
    assert!(json.contains("\"width\": 208, \"height\": 128"), "{json}");
}

#[test]
fn bench_reads_npy_inputs_and_saves_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npy");
    let via_run = dir.path().join("run.npy");
    let outs = dir.path().join("outs");
    // Any u8 gray array is an input of sobel: sobel's own output on a photograph is one.
    let o = halogen(&["run", "sobel", photo("coffee_small.png").to_str().unwrap(), input.to_str().unwrap(), "--raw"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = halogen(&["run", "sobel", input.to_str().unwrap(), via_run.to_str().unwrap(), "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = halogen(&[
        "bench",
        "sobel",
        "--input",
        input.to_str().unwrap(),
        "--schedule",
        "hand",
        "--runs",
        "1",
        "--save-outputs",
        outs.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"width\": 256, \"height\": 172"), "{}", stdout(&o));
    let saved = std::fs::read(outs.join("sobel_hand.npy")).unwrap();
    assert_eq!(saved, std::fs::read(&via_run).unwrap(), "bench and run compute the same output");
}

#[test]
fn run_reads_and_writes_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let out = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let cases = [
        ("unsharp", photo("coffee_small_16bit.tif"), out("u.tif")),
        ("harris", photo("chelsea.jpg"), out("h.png")),
        ("hist_eq", photo("astronaut_small.png"), out("e.jpg")),
        ("camera_pipe", photo("coffee_small_bayer.png"), out("c.npy")),
    ];
    for (app, input, output) in &cases {
        let o = halogen(&["run", app, input.to_str().unwrap(), output, "--check"]);
        assert!(o.status.success(), "{app}: {}", stderr(&o));
        assert!(Path::new(output).is_file(), "{app}");
    }
    // The raw mosaic went in as it is: 256x172 RGB out, as a (3, 172, 256) uint8 array.
    let npy = std::fs::read(&cases[3].2).unwrap();
    let header = String::from_utf8_lossy(&npy[..128]);
    assert!(header.contains("'|u1'") && header.contains("(3, 172, 256)"), "{header}");
    // A 16-bit TIFF written by run reads back.
    let o = halogen(&["run", "blur", &cases[0].2, &out("b.tif")]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn lower_and_run_take_the_auto_schedule() {
    let o = halogen(&["lower", "harris", "--schedule", "auto"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("auto_schedule"), "the chosen schedule comes first:\n{}", stdout(&o));
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("o.png");
    let o = halogen(&[
        "run",
        "bilateral_grid",
        photo("chelsea_small.png").to_str().unwrap(),
        output.to_str().unwrap(),
        "--schedule",
        "auto",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn list_json_describes_each_app() {
    let o = halogen(&["list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    let blur = json.lines().find(|l| l.contains("\"name\": \"blur\"")).expect("blur listed");
    assert!(blur.contains("\"bench_size\": [6400, 4800]"), "{blur}");
    assert!(blur.contains("\"hand_sliding\"") && blur.contains("\"auto\""), "{blur}");
    assert!(blur.contains("\"type\": \"uint16\""), "{blur}");
}

#[test]
fn bad_bench_and_run_arguments_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("f.npy");
    let o = halogen(&["run", "harris", photo("coffee_small.png").to_str().unwrap(), npy.to_str().unwrap(), "--raw"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let npy = npy.to_str().unwrap();
    let photo_path = photo("coffee_small.png");
    let photo = photo_path.to_str().unwrap();
    let out_dir = dir.path().join("demo");
    let out = out_dir.to_str().unwrap();
    for args in [
        vec!["bench", "blur", "--runs", "0"],
        vec!["bench", "blur", "--scale=0"],
        vec!["bench", "blur", "--threads", "0", "--size", "32x16"],
        vec!["bench", "blur", "sobel", "--input", npy],
        vec!["bench", "blur", "--schedule", "hand,nope", "--size", "32x16"],
        vec!["run", "hist_eq", npy, "/tmp/x.png"],
        vec!["run", "blur", photo, "/tmp/x.bmp"],
        vec!["demo", "--out", out, "--image", "/no/such/picture.png"],
    ] {
        let o = halogen(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line, got:\n{err}");
        assert!(err.starts_with("halogen: error:"), "{args:?}: {err}");
    }
    // The type mismatch names what the app takes and what the array holds.
    let err = stderr(&halogen(&["run", "hist_eq", npy, "/tmp/x.png"]));
    assert!(err.contains("uint8") && err.contains("float32"), "{err}");
}

#[test]
fn every_app_auto_scheduled_gives_its_reference_pixels() {
    // The auto-scheduler plans each app for this size; `--check` compares the native
    // result with the app's plain-Rust reference and fails the command on a mismatch.
    let o = halogen(&["bench", "--schedule", "auto", "--size", "48x40", "--runs", "1", "--check", "--json"]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let json = stdout(&o);
    let rows: Vec<&str> = json.lines().filter(|l| l.contains("\"app\"")).collect();
    let apps = stdout(&halogen(&["list"]));
    for app in ["blur", "local_laplacian", "camera_pipe", "interpolate", "conv_layer", "exposure_fusion"] {
        assert!(apps.contains(app) && rows.iter().any(|r| field(r, "app") == app), "{app} missing:\n{json}");
    }
    for r in &rows {
        assert_eq!(field(r, "schedule"), "auto", "{r}");
        let check = field(r, "check");
        assert!(check != "null" && !r.contains("\"error\""), "{r}");
    }
}

/// A pipeline file of `halogen-apps/pipelines/`.
fn pipeline_file(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../halogen-apps/pipelines").join(name).display().to_string()
}

#[test]
fn pipeline_files_run_lower_and_bench_like_apps() {
    let file = pipeline_file("sobel.halogen");
    let dir = std::env::temp_dir().join(format!("halogen-cli-pipeline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("edges.png");
    let photo = photo("coffee_small.png");
    let o = halogen(&["run", "--pipeline", &file, photo.to_str().unwrap(), out.to_str().unwrap(), "--check"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o) + &stderr(&o);
    assert!(said.contains("matches the reference"), "{said}");
    assert!(out.exists());
    // The file in the app's place works too.
    let o = halogen(&["lower", &file, "--schedule", "hand"]);
    assert!(o.status.success() && stdout(&o).contains("produce sobel"), "{}", stderr(&o));
    let o = halogen(&[
        "bench",
        "--pipeline",
        &file,
        "--size",
        "64x48",
        "--runs",
        "1",
        "--schedule",
        "hand,naive",
        "--check",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("exact").count(), 2, "{}", stdout(&o));
    // A mistake in the file is one line naming the file, line and column.
    let bad = dir.join("bad.halogen");
    std::fs::write(&bad, "input a : u8[2]\nf(x, y) = a(x, y) + b\noutput f\n").unwrap();
    let o = halogen(&["lower", "--pipeline", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("bad.halogen:2:21: unknown name 'b'"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// With buffers in device memory on a GPU target, `bench` times the run's kernels and a
/// device-to-device copy of the bytes the pipeline must move (its inputs and its output),
/// and reports the kernels' share of the copy's bandwidth; CPU schedules get nulls.
#[test]
fn bench_on_device_buffers_measures_kernels_against_a_copy() {
    use halogen::runtime::gpu::{device, Api};
    if let Err(e) = device(Api::OpenCL) {
        assert!(!std::env::var("HALOGEN_REQUIRE_OPENCL").is_ok_and(|v| v == "1"), "HALOGEN_REQUIRE_OPENCL=1 but {e}");
        eprintln!("skipping: {e}");
        return;
    }
    let (w, h) = (64, 48);
    let o = halogen(&[
        "bench",
        "transpose",
        "--size",
        &format!("{w}x{h}"),
        "--schedule",
        "gpu,hand",
        "--target",
        "host-opencl",
        "--device-buffers",
        "--runs",
        "2",
        "--check",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = stdout(&o);
    let rows: Vec<&str> = json.lines().filter(|l| l.contains("\"app\"")).collect();
    assert_eq!(rows.len(), 2, "{json}");
    let app = halogen_apps::create("transpose", &Default::default()).unwrap();
    let inputs = app.make_inputs(w, h, 42);
    let out_len: usize = app.output_extents(&inputs).unwrap().iter().map(|&e| e as usize).product();
    let moved = inputs.iter().map(|b| b.len() * b.ty().bytes()).sum::<usize>() + out_len * app.output_type().bytes();
    let gpu = rows[0];
    assert_eq!(field(gpu, "check"), "exact", "{gpu}");
    assert_eq!(field(gpu, "moved_bytes").parse::<f64>().unwrap(), moved as f64, "{gpu}");
    let number = |k: &str| field(gpu, k).parse::<f64>().unwrap_or_else(|_| panic!("{k} in {gpu}"));
    let (kernel_ms, kernel_gb, copy_gb, of_copy) =
        (number("kernel_ms"), number("kernel_gb_per_s"), number("copy_gb_per_s"), number("of_copy"));
    assert!(kernel_ms > 0.0 && copy_gb > 0.0, "{gpu}");
    let expected_gb = moved as f64 / (kernel_ms / 1e3) / 1e9;
    // The JSON has six significant digits.
    assert!((kernel_gb - expected_gb).abs() <= 1e-4 * expected_gb, "{gpu}");
    assert!((of_copy - kernel_gb / copy_gb).abs() <= 1e-4 * of_copy, "{gpu}");
    // The CPU schedule launches no kernel: nothing to compare.
    assert_eq!(field(rows[1], "kernel_ms"), "null", "{}", rows[1]);
}

#[test]
fn a_distributed_schedule_runs_alone_and_writes_what_one_process_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (one, alone) = (dir.path().join("one.npy"), dir.path().join("alone.npy"));
    let input = photo("coffee_small.png");
    let o = halogen(&["run", "blur", input.to_str().unwrap(), one.to_str().unwrap(), "--schedule", "hand"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let args = ["run", "blur", input.to_str().unwrap(), alone.to_str().unwrap(), "--schedule", "distributed_exchange"];
    let o = halogen(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&one).unwrap(), std::fs::read(&alone).unwrap());
    // Started as one of several MPI processes, a halogen without MPI says so instead of
    // computing a slice alone.
    if !cfg!(feature = "mpi") {
        let o = Command::new(env!("CARGO_BIN_EXE_halogen"))
            .args(args)
            .env("OMPI_COMM_WORLD_SIZE", "3")
            .output()
            .expect("the halogen binary runs");
        assert!(!o.status.success() && stderr(&o).contains("built without MPI"), "{}", stderr(&o));
    }
}
