//! The harness the semantic tests share: the back ends every test runs on, and helpers that
//! compile, realize and compare pixels on them. A test file uses it with `mod common;`.
//!
//! Semantic tests (pixels, user errors) loop over [`targets_under_test`] instead of naming
//! targets, so a new back end joins all of them by being listed there. Tests about one back
//! end's own behaviour (the C cache, generated source, AOT, ...) name their target.
//!
//! `HALOGEN_TEST_TARGETS` (comma-separated target strings, e.g. `interp,host`, as
//! [`Target`]'s `FromStr` reads them) replaces the default list:
//! `HALOGEN_TEST_TARGETS=interp` runs the semantic tests on the interpreter alone. A string
//! that does not parse fails the test with the parser's message.

// Each test binary uses a part of the harness.
#![allow(dead_code)]

pub mod fuzz;
pub mod gpu;
pub mod random_pipeline;

use halogen::prelude::*;
use std::io::Write;
use std::sync::OnceLock;

/// The targets every semantic test runs on, the interpreter (the oracle) first: the list of
/// `HALOGEN_TEST_TARGETS` if set, else the interpreter and the host, the host only when the
/// C compiler runs (otherwise one line on stderr says it is skipped).
pub fn targets_under_test() -> Vec<Target> {
    if let Ok(names) = std::env::var("HALOGEN_TEST_TARGETS") {
        return names.split(',').map(str::trim).filter(|n| !n.is_empty()).map(target_named).collect();
    }
    let mut targets = vec![Target::interp()];
    if c_compiler_runs() {
        targets.push(Target::host());
    }
    targets
}

/// The target of a name in `HALOGEN_TEST_TARGETS`.
fn target_named(name: &str) -> Target {
    name.parse().unwrap_or_else(|e| panic!("HALOGEN_TEST_TARGETS: {e}"))
}

/// Whether the C compiler of the host target answers `--version`; asked once per test binary,
/// which says on stderr when it does not.
fn c_compiler_runs() -> bool {
    static RUNS: OnceLock<bool> = OnceLock::new();
    *RUNS.get_or_init(|| {
        let cc = halogen::backend::jit::compiler();
        let runs = std::process::Command::new(&cc[0])
            .args(&cc[1..])
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !runs {
            // Straight to stderr: the test harness would hide `eprintln!` of a passing test.
            let _ = writeln!(
                std::io::stderr(),
                "C compiler `{}` does not run: semantic tests skip Target::host()",
                cc.join(" ")
            );
        }
        runs
    })
}

/// Compiles `out` for `target` and computes it over the region `mins`/`extents`.
pub fn try_realize<T: Element>(
    target: &Target,
    out: &Func,
    args: &Args<'_>,
    mins: &[i32],
    extents: &[i32],
) -> Result<Buffer<T>, Error> {
    let compiled = Pipeline::new(&[out]).compile(target)?;
    let mut buf = Buffer::<T>::with_min(mins, extents);
    compiled.realize(args, &mut buf)?;
    Ok(buf)
}

/// [`try_realize`], panicking with the target, the error and the loop nest on failure.
pub fn realize<T: Element>(target: &Target, out: &Func, args: &Args<'_>, mins: &[i32], extents: &[i32]) -> Buffer<T> {
    let compiled = Pipeline::new(&[out]).compile(target).unwrap_or_else(|e| panic!("compile on {target}: {e}"));
    let mut buf = Buffer::<T>::with_min(mins, extents);
    compiled
        .realize(args, &mut buf)
        .unwrap_or_else(|e| panic!("realize on {target}: {e}\n{}", compiled.lowered_stmt()));
    buf
}

/// The message of compiling `out` for `target`, which must fail.
pub fn compile_error(target: &Target, out: &Func) -> String {
    match Pipeline::new(&[out]).compile(target) {
        Ok(_) => panic!("compiling '{}' for {target} should fail", out.name()),
        Err(e) => e.to_string(),
    }
}

/// Whether two values have the same bits (so NaNs compare by payload and -0.0 differs from 0.0).
pub fn same_bits<T: Element>(a: T, b: T) -> bool {
    bytemuck::bytes_of(&a) == bytemuck::bytes_of(&b)
}

/// Asserts that `got` holds `expected` (in storage order), bit for bit, naming the first
/// coordinate that differs, both values and how many differ.
#[track_caller]
pub fn assert_pixels<T: Element>(got: &Buffer<T>, expected: &[T], context: impl std::fmt::Display) {
    assert_eq!(got.len(), expected.len(), "{context}: {} values, expected {}", got.len(), expected.len());
    let differ = |(g, e): (&T, &T)| !same_bits(*g, *e);
    let count = got.as_slice().iter().zip(expected).filter(|&p| differ(p)).count();
    if let Some((i, (g, e))) = got.as_slice().iter().zip(expected).enumerate().find(|&(_, p)| differ(p)) {
        let at = got.coords().nth(i).expect("the index is inside the buffer");
        panic!("{context}: {count} values differ; the first at {at:?}: got {g:?}, expected {e:?}");
    }
}

/// Asserts that two buffers cover the same region with the same bits, naming the first
/// coordinate that differs (see [`assert_pixels`]).
#[track_caller]
pub fn assert_same_pixels<T: Element>(got: &Buffer<T>, expected: &Buffer<T>, context: impl std::fmt::Display) {
    assert_eq!(
        (got.mins(), got.extents()),
        (expected.mins(), expected.extents()),
        "{context}: the buffers cover different regions"
    );
    assert_pixels(got, expected.as_slice(), context);
}

/// The Halide paper's 3×3 box blur, the pipeline many tests schedule: `blur_x` averages
/// three pixels of a `uint16` input along x, `blur_y` three of `blur_x` along y.
pub struct Blur {
    /// The input image.
    pub input: ImageParam,
    /// The horizontal pass.
    pub blur_x: Func,
    /// The vertical pass, the output.
    pub blur_y: Func,
    /// The pure variables of both.
    pub x: Var,
    /// The pure variables of both.
    pub y: Var,
}

/// A fresh, unscheduled [`Blur`].
pub fn blur() -> Blur {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let blur_x = Func::new("blur_x");
    let blur_y = Func::new("blur_y");
    blur_x.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
    blur_y.def((x, y), (blur_x.at((x, y - 1)) + blur_x.at((x, y)) + blur_x.at((x, y + 1))) / 3);
    Blur { input, blur_x, blur_y, x, y }
}
