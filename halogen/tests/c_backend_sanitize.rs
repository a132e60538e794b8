//! Generated code under AddressSanitizer and UndefinedBehaviorSanitizer.
//!
//! Skipped unless `HALOGEN_SANITIZE=1`:
//!
//! ```sh
//! HALOGEN_SANITIZE=1 cargo test -p halogen --test c_backend_sanitize -- --nocapture
//! ```
//!
//! With the variable set, the JIT compiles with `-fsanitize=address,undefined
//! -fno-sanitize-recover=all`, so any out-of-bounds access, signed overflow, bad shift or
//! other undefined behaviour in the generated C aborts the process. An ASan-instrumented
//! library can only be loaded into a process whose first library is the ASan runtime, so
//! the test re-runs itself with `LD_PRELOAD` set to the C compiler's `libasan.so` (found
//! with `cc -print-file-name=libasan.so`; `HALOGEN_CC` picks the compiler) and checks that
//! the child passes. Leak checking is off: the Rust test harness keeps allocations alive
//! at exit on purpose.

use halogen::prelude::*;
use std::process::Command;

const CHILD: &str = "HALOGEN_SANITIZE_CHILD";

#[test]
fn pipelines_are_clean_under_sanitizers() {
    if std::env::var("HALOGEN_SANITIZE").map_or(true, |v| v.trim() != "1") {
        eprintln!("skipped: set HALOGEN_SANITIZE=1 to run generated code under ASan and UBSan");
        return;
    }
    if std::env::var_os(CHILD).is_none() {
        rerun_with_asan_preloaded();
        return;
    }
    blur_schedules();
    edge_values();
    histogram();
    up_sampling();
    failing_bounds_check();
}

fn rerun_with_asan_preloaded() {
    let cc = halogen::backend::jit::compiler();
    let out =
        Command::new(&cc[0]).args(&cc[1..]).arg("-print-file-name=libasan.so").output().expect("run the C compiler");
    let asan = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(std::path::Path::new(&asan).is_file(), "the C compiler has no libasan.so (got '{asan}')");
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "pipelines_are_clean_under_sanitizers", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("LD_PRELOAD", &asan)
        .env("ASAN_OPTIONS", "detect_leaks=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1")
        .status()
        .expect("re-run the test under ASan");
    assert!(status.success(), "generated code failed under the sanitizers ({status}); see the report above");
}

/// Runs `f` compiled for the interpreter and for the host, and compares.
fn same<T: Element>(build: impl Fn() -> (Func, Vec<(ImageParam, Buffer<T>)>), out_min: &[i32], out_extent: &[i32]) {
    let run = |target: &Target| {
        let (f, inputs) = build();
        let c = Pipeline::new(&[&f]).compile(target).unwrap();
        let mut args = Args::new();
        for (p, b) in &inputs {
            args.image(p, b);
        }
        let mut out = Buffer::<T>::with_min(out_min, out_extent);
        c.realize(&args, &mut out).unwrap();
        out.into_vec()
    };
    assert_eq!(run(&Target::host()), run(&Target::interp()));
}

fn blur_schedules() {
    for schedule in 0..5 {
        same(
            || {
                let input = ImageParam::new(Type::u16(), 2, "input");
                let (x, y) = (Var::new("x"), Var::new("y"));
                let (xi, yi, yo) = (Var::new("xi"), Var::new("yi"), Var::new("yo"));
                let bx = Func::new("blur_x");
                let by = Func::new("blur_y");
                bx.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
                by.def((x, y), (bx.at((x, y - 1)) + bx.at((x, y)) + bx.at((x, y + 1))) / 3);
                match schedule {
                    0 => {}
                    1 => {
                        by.tile(x, y, xi, yi, 16, 8).vectorize(xi, 8).parallel(y);
                        bx.compute_at(&by, x).vectorize(x, 8);
                    }
                    2 => {
                        by.split(y, yo, y, 8).parallel(yo).vectorize(x, 5);
                        bx.store_at(&by, yo).compute_at(&by, y).vectorize(x, 5);
                    }
                    3 => {
                        by.split_with(x, x, xi, 7, TailStrategy::GuardWithIf).vectorize(xi, 7);
                        bx.compute_root().parallel(y).unroll(x, 3);
                    }
                    _ => {
                        bx.compute_root().vectorize(x, 16);
                    }
                }
                let mut img = Buffer::<u16>::from_fn(&[43, 29], |c| (c[0] * 977 + c[1] * 131) as u16);
                img.set_min(&[-1, -1]);
                (by, vec![(input, img)])
            },
            &[0, 0],
            &[41, 27],
        );
    }
}

fn edge_values() {
    for vector in [false, true] {
        same(
            || {
                let (ia, ib) = (ImageParam::new(Type::i32(), 1, "a"), ImageParam::new(Type::i32(), 1, "b"));
                let x = Var::new("x");
                let (a, b) = (ia.at(x), ib.at(x));
                let f = Func::new("ops");
                let e = (&a / &b)
                    ^ (&a % &b)
                    ^ (&a << &b)
                    ^ (&a >> &b)
                    ^ (&a * &b)
                    ^ (&a + &b)
                    ^ (&a - &b)
                    ^ cast(Type::i32(), cast(Type::f32(), &a) * 1e9f32)
                    ^ cast(Type::i32(), abs(&a))
                    ^ cast(Type::i32(), cast(Type::i8(), &a) / cast(Type::i8(), &b))
                    ^ cast(Type::i32(), cast(Type::u16(), &a) * cast(Type::u16(), &b))
                    ^ cast(Type::i32(), (cast(Type::i64(), &a) * cast(Type::i64(), &b)) >> 3);
                f.def(x, e);
                if vector {
                    f.vectorize(x, 8);
                }
                let vals = [0, 1, -1, i32::MIN, i32::MAX, 31, 32, -33, 7, -7, 2, 65535, 65536, -128, 127, 100];
                let bufa = Buffer::<i32>::from_fn(&[32], |c| vals[c[0] as usize % 16]);
                let bufb = Buffer::<i32>::from_fn(&[32], |c| vals[(c[0] as usize * 7 + 3) % 16]);
                (f, vec![(ia, bufa), (ib, bufb)])
            },
            &[0],
            &[32],
        );
    }
}

fn histogram() {
    same(
        || {
            let input = ImageParam::new(Type::u8(), 2, "input");
            let (x, y, i) = (Var::new("x"), Var::new("y"), Var::new("i"));
            let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
            let hist = Func::new("hist");
            hist.def(i, 0);
            hist.update(input.at((r.x(), r.y())), hist.at(input.at((r.x(), r.y()))) + 1);
            let out = Func::new("out");
            out.def((x, y), cast(Type::u8(), hist.at(input.at((x, y)))));
            let yo = Var::new("yo");
            out.split(y, yo, y, 4).parallel(yo).vectorize(x, 8);
            hist.compute_root();
            let img = Buffer::<u8>::from_fn(&[21, 13], |c| ((c[0] * c[0] + 3 * c[1]) % 97) as u8);
            (out, vec![(input, img)])
        },
        &[0, 0],
        &[21, 13],
    );
}

/// Quotient loads (`in(x / 2)` vectorized) from an input exactly as wide as the lanes need,
/// at negative and odd coordinates: the masked load reads nothing past either end.
fn up_sampling() {
    for lanes in [8, 16, 32] {
        same(
            || {
                let input = ImageParam::new(Type::u16(), 1, "coarse");
                let x = Var::new("x");
                let f = Func::new("fine");
                f.def(x, input.at(x / 2) + input.at((x + 1) / 2));
                f.vectorize(x, lanes);
                let mut img = Buffer::<u16>::from_fn(&[36], |c| (c[0] * 977) as u16);
                img.set_min(&[-18]);
                (f, vec![(input, img)])
            },
            &[-35],
            &[70],
        );
    }
}

fn failing_bounds_check() {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("f");
    f.def((x, y), input.at((x + 1, y)));
    f.vectorize(x, 8).parallel(y);
    let c = Pipeline::new(&[&f]).compile(&Target::host()).unwrap();
    let img = Buffer::<u16>::new(&[8, 8]);
    let mut out = Buffer::<u16>::new(&[8, 8]);
    let mut args = Args::new();
    args.image(&input, &img);
    let e = c.realize(&args, &mut out).unwrap_err();
    assert!(e.to_string().contains("too small"), "{e}");
}
