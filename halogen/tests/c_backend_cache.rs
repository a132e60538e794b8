//! The JIT's compiler handling: the library cache (a second compile of the same pipeline
//! does not run the C compiler, nor lower the pipeline), a missing compiler, and a failing
//! compile.
//!
//! These change process-wide environment variables (`HALOGEN_CC`, `HALOGEN_CACHE_DIR`), so
//! they live in one test function, alone in this test binary.

use halogen::backend::jit;
use halogen::prelude::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn blur() -> (ImageParam, Func) {
    blur_vectorized(8)
}

fn blur_vectorized(lanes: i32) -> (ImageParam, Func) {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let bx = Func::new("blur_x");
    let by = Func::new("blur_y");
    bx.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
    by.def((x, y), (bx.at((x, y - 1)) + bx.at((x, y)) + bx.at((x, y + 1))) / 3);
    by.vectorize(x, lanes).parallel(y);
    bx.compute_at(&by, y).vectorize(x, lanes);
    (input, by)
}

fn run(c: &Compiled, input: &ImageParam) -> Vec<u16> {
    let img = Buffer::<u16>::from_fn(&[20, 12], |c| (c[0] * 31 + c[1] * 7) as u16);
    let mut img = img;
    img.set_min(&[-1, -1]);
    let mut out = Buffer::<u16>::new(&[18, 10]);
    let mut args = Args::new();
    args.image(input, &img);
    c.realize(&args, &mut out).unwrap();
    out.into_vec()
}

/// A compiler wrapper that logs each call's arguments to `log`, then runs `cc`.
fn wrapper(dir: &Path, log: &Path) -> PathBuf {
    let path = dir.join("cc-wrapper.sh");
    std::fs::write(&path, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec cc \"$@\"\n", log.display())).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A "compiler" that answers `--version` but fails every compile.
fn broken(dir: &Path) -> PathBuf {
    let path = dir.join("cc-broken.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo broken-cc 1.0; exit 0; fi\necho 'generated.c:1:1: error: this compiler is broken' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn compile_lines(log: &Path) -> usize {
    std::fs::read_to_string(log).unwrap_or_default().lines().filter(|l| !l.contains("--version")).count()
}

#[test]
fn cache_missing_compiler_and_compile_errors() {
    let dir = std::env::temp_dir().join(format!("halogen-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("calls.log");
    std::env::set_var("HALOGEN_CACHE_DIR", dir.join("cache"));
    std::env::set_var("HALOGEN_CC", wrapper(&dir, &log));

    // First compile: runs the compiler once (plus one --version query).
    let (input, f) = blur();
    let before = jit::compiler_invocations();
    let c1 = Pipeline::new(&[&f]).compile(&Target::host()).unwrap();
    assert_eq!(jit::compiler_invocations(), before + 1);
    assert_eq!(compile_lines(&log), 1);
    let expected = run(&c1, &input);

    // The same pipeline again, rebuilt from scratch: found in the cache by its fingerprint
    // before lowering, so no pass after scheduling runs, until the final nest is asked for.
    let (input2, f2) = blur();
    let lowerings = halogen::lower::lower::lowerings();
    let c2 = Pipeline::new(&[&f2]).compile(&Target::host()).unwrap();
    assert_eq!(halogen::lower::lower::lowerings(), lowerings, "the second compile lowered the pipeline");
    assert_eq!(c2.lowered_stmt().to_string(), c1.lowered_stmt().to_string());
    assert_eq!(halogen::lower::lower::lowerings(), lowerings + 1);
    assert_eq!(jit::compiler_invocations(), before + 1, "the second compile ran the C compiler");
    assert_eq!(compile_lines(&log), 1, "the wrapper was called again:\n{}", std::fs::read_to_string(&log).unwrap());
    assert_eq!(run(&c2, &input2), expected);
    assert_eq!(c1.c_source(), c2.c_source());
    // The cache holds the library and its source.
    let files: Vec<String> = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.iter().any(|f| f.ends_with(".so")) && files.iter().any(|f| f.ends_with(".c")), "{files:?}");

    // The compiled pipeline outlives its Pipeline and works from other threads.
    drop(f2);
    std::thread::scope(|s| {
        s.spawn(|| assert_eq!(run(&c2, &input2), expected));
    });

    // A damaged cache entry is rebuilt, never loaded: a truncated library (loading it would
    // crash the process), one overwritten with garbage, and one without its checksum record.
    drop((c1, c2));
    let so = std::fs::read_dir(dir.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "so"))
        .unwrap();
    let record = PathBuf::from(format!("{}.sum", so.display()));
    assert!(record.is_file(), "no checksum record beside {}", so.display());
    for damage in ["truncated", "overwritten", "without its record"] {
        match damage {
            "truncated" => {
                let len = std::fs::metadata(&so).unwrap().len();
                std::fs::OpenOptions::new().write(true).open(&so).unwrap().set_len(len / 2).unwrap();
            }
            "overwritten" => {
                let len = std::fs::metadata(&so).unwrap().len() as usize;
                std::fs::write(&so, vec![0x5a; len]).unwrap();
            }
            _ => std::fs::remove_file(&record).unwrap(),
        }
        let (input_n, f_n) = blur();
        let before = jit::compiler_invocations();
        let c = Pipeline::new(&[&f_n]).compile(&Target::host()).unwrap();
        assert_eq!(jit::compiler_invocations(), before + 1, "a library {damage} was not rebuilt");
        assert_eq!(run(&c, &input_n), expected, "a library {damage}");
        assert!(record.is_file());
    }

    // A different schedule is a different pipeline: lowered and compiled.
    let lowerings = halogen::lower::lower::lowerings();
    let before = jit::compiler_invocations();
    let (input4, f4) = blur_vectorized(4);
    let c4 = Pipeline::new(&[&f4]).compile(&Target::host()).unwrap();
    assert_eq!(halogen::lower::lower::lowerings(), lowerings + 1);
    assert_eq!(jit::compiler_invocations(), before + 1);
    assert_eq!(run(&c4, &input4), expected);
    let (_, f8) = blur();
    let c8 = Pipeline::new(&[&f8]).compile(&Target::host()).unwrap();
    assert_ne!(c4.c_source(), c8.c_source());
    drop((c4, c8));

    // No compiler: a clear error naming HALOGEN_CC; the interpreter still works.
    std::env::set_var("HALOGEN_CC", dir.join("no-such-compiler"));
    let (_, f3) = blur();
    let e = Pipeline::new(&[&f3]).compile(&Target::host()).unwrap_err().to_string();
    assert!(e.contains("HALOGEN_CC") && e.contains("no-such-compiler") && e.contains("Target::interp()"), "{e}");
    assert!(Pipeline::new(&[&f3]).compile(&Target::interp()).is_ok());

    // A failing compile keeps the source and the log, and says where they are.
    std::env::set_var("HALOGEN_CC", broken(&dir));
    let e = Pipeline::new(&[&f3]).compile(&Target::host()).unwrap_err().to_string();
    assert!(e.contains("this compiler is broken"), "{e}");
    let paths: Vec<&str> = e.split_whitespace().filter(|w| w.contains(".c") || w.contains(".log")).collect();
    let c_file = paths.iter().find(|p| p.trim_end_matches(':').ends_with(".c")).unwrap_or_else(|| panic!("{e}"));
    let log_file = paths.iter().find(|p| p.trim_end_matches(':').ends_with(".log")).unwrap_or_else(|| panic!("{e}"));
    let source = std::fs::read_to_string(c_file.trim_end_matches(':')).unwrap();
    assert!(source.contains("int halogen_pipeline("));
    assert!(std::fs::read_to_string(log_file.trim_end_matches(':')).unwrap().contains("this compiler is broken"));

    precompiled_system_headers(&dir);

    std::env::remove_var("HALOGEN_CC");
    std::env::remove_var("HALOGEN_CACHE_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With Clang, the system headers are precompiled once into the cache folder and every
/// compile reads them from there; a precompiled file the compiler refuses (here: damaged)
/// costs one compile without it, never a failed compile, and is built again by the next.
/// Every header a generated file includes is among the precompiled ones.
fn precompiled_system_headers(dir: &Path) {
    if !std::process::Command::new("clang").arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no clang");
        return;
    }
    let log = dir.join("clang-calls.log");
    let clang = dir.join("clang-wrapper.sh");
    std::fs::write(&clang, format!("#!/bin/sh\necho \"$@\" >> '{}'\nexec clang \"$@\"\n", log.display())).unwrap();
    std::fs::set_permissions(&clang, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::env::set_var("HALOGEN_CC", &clang);
    std::env::set_var("HALOGEN_CACHE_DIR", dir.join("pch-cache"));
    let calls = || std::fs::read_to_string(&log).unwrap_or_default();
    let count = |what: &str| calls().lines().filter(|l| l.contains(what)).count();

    let (input, f) = blur();
    let c = Pipeline::new(&[&f]).compile(&Target::host()).unwrap();
    let expected = run(&c, &input);
    assert_eq!(count("c-header"), 1, "{}", calls());
    assert_eq!(count("-include-pch"), 1, "{}", calls());
    let source = c.c_source().unwrap();
    for include in source.lines().filter(|l| l.trim_start().starts_with("#include")) {
        assert!(halogen::backend::c::prelude::SYSTEM_HEADERS.contains(include.trim()), "{include} is not precompiled");
    }
    // A second pipeline reads the same precompiled headers.
    let (input4, f4) = blur_vectorized(4);
    let c4 = Pipeline::new(&[&f4]).compile(&Target::host()).unwrap();
    assert_eq!(run(&c4, &input4), expected);
    assert_eq!((count("c-header"), count("-include-pch")), (1, 2), "{}", calls());

    // Damaged: refused, the pipeline compiled without it, and it is rebuilt next time.
    let pch = std::fs::read_dir(dir.join("pch-cache"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "pch"))
        .expect("no precompiled headers in the cache");
    std::fs::write(&pch, b"not a precompiled header").unwrap();
    let (input16, f16) = blur_vectorized(16);
    let c16 = Pipeline::new(&[&f16]).compile(&Target::host()).unwrap();
    assert_eq!(run(&c16, &input16), expected);
    assert!(!pch.exists(), "the refused precompiled headers were kept");
    let (input2, f2) = blur_vectorized(2);
    let c2 = Pipeline::new(&[&f2]).compile(&Target::host()).unwrap();
    assert_eq!(run(&c2, &input2), expected);
    assert_eq!(count("c-header"), 2, "{}", calls());
    assert!(pch.is_file());
}
