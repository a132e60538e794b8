//! Ahead-of-time code: `compile_to_c` and `compile_to_static_library` give C that a plain C
//! program builds, links and calls (with no runtime, and with its own `par_for`, error
//! handler and allocator), computing the interpreter's pixels.

use halogen::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const W: i32 = 37;
const H: i32 = 19;

fn blur() -> (ImageParam, Func) {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let bx = Func::new("blur_x");
    let by = Func::new("blur_y");
    bx.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
    by.def((x, y), (bx.at((x, y - 1)) + bx.at((x, y)) + bx.at((x, y + 1))) / 3);
    let yo = Var::new("yo");
    by.split(y, yo, y, 4).parallel(yo).vectorize(x, 8);
    bx.compute_at(&by, yo).vectorize(x, 8);
    (input, by)
}

/// The pixels of the input the C program builds: (i * 31 + j * 7) % 1000 for the element
/// (i, j) of storage, which covers [-1, W] × [-1, H].
fn expected() -> Vec<u16> {
    let (input, f) = blur();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    let img = Buffer::<u16>::from_fn(&[W + 2, H + 2], |c| ((c[0] * 31 + c[1] * 7) % 1000) as u16);
    let mut img = img;
    img.set_min(&[-1, -1]);
    let mut out = Buffer::<u16>::new(&[W, H]);
    let mut args = Args::new();
    args.image(&input, &img);
    c.realize(&args, &mut out).unwrap();
    out.into_vec()
}

const MAIN: &str = r#"
#include "blur.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = WIDTH, H = HEIGHT };
static uint16_t in[(W + 2) * (H + 2)], out[W * H];
static int tasks;
static char message[256];

static int my_par_for(void *ctx, halogen_task body, int32_t min, int32_t extent, void *closure) {
    tasks += extent;
    for (int32_t i = min; i < min + extent; i++) {
        int r = body(ctx, i, closure);
        if (r) return r;
    }
    return 0;
}
static void my_error(void *ctx, const char *m) {
    (void)ctx;
    strncpy(message, m, sizeof message - 1);
}
static void *my_alloc(void *ctx, size_t bytes) {
    (void)ctx;
    return malloc(bytes);
}
static void my_free(void *ctx, void *block) {
    (void)ctx;
    free(block);
}

int main(void) {
    for (int y = 0; y < H + 2; y++)
        for (int x = 0; x < W + 2; x++) in[y * (W + 2) + x] = (uint16_t)((x * 31 + y * 7) % 1000);
    struct halogen_dim din[2] = {{-1, W + 2, 1, 0}, {-1, H + 2, W + 2, 0}};
    struct halogen_dim dout[2] = {{0, W, 1, 0}, {0, H, W, 0}};
    /* Host-only buffers: no device copy, no dirty flags. */
    struct halogen_buffer bin = {.host = (uint8_t *)in, .type_code = 1, .type_bits = 16, .type_lanes = 1,
                                 .dimensions = 2, .dim = din};
    struct halogen_buffer bout = {.host = (uint8_t *)out, .type_code = 1, .type_bits = 16, .type_lanes = 1,
                                  .dimensions = 2, .dim = dout};
    struct halogen_buffer *bufs[2] = {&bin, &bout};
    /* No runtime: serial loops. */
    if (blur(NULL, NULL, bufs, NULL) != 0) return 1;
    for (int i = 0; i < W * H; i++) printf("%u\n", out[i]);
    /* Our own runtime. */
    /* No GPU and no distribution: the last three members (gpu_launch, gpu_release,
       exchange) are NULL. */
    struct halogen_runtime rt = {my_par_for, my_error, my_alloc, my_free, NULL, NULL, NULL};
    memset(out, 0, sizeof out);
    if (blur(&rt, NULL, bufs, NULL) != 0) return 2;
    for (int i = 0; i < W * H; i++) printf("%u\n", out[i]);
    if (tasks == 0) return 3;
    /* A too small input fails with the message. */
    din[1].extent = 3;
    if (blur(&rt, NULL, bufs, NULL) == 0) return 4;
    fprintf(stderr, "ERROR %s\n", message);
    return strstr(message, "too small") ? 0 : 5;
}
"#;

fn work_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halogen-aot-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_main(dir: &Path) -> PathBuf {
    let main = dir.join("main.c");
    std::fs::write(&main, MAIN.replace("WIDTH", &W.to_string()).replace("HEIGHT", &H.to_string())).unwrap();
    main
}

fn check_program(dir: &Path, build: &mut Command) {
    let out = build.output().expect("run the C compiler");
    assert!(out.status.success(), "build failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(dir.join("main")).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "the C program failed ({}):\n{stderr}", run.status);
    assert!(stderr.contains("ERROR Input buffer 'input' is too small"), "{stderr}");
    let values: Vec<u16> = String::from_utf8_lossy(&run.stdout).lines().map(|l| l.parse().unwrap()).collect();
    let expected = expected();
    assert_eq!(values.len(), 2 * expected.len());
    assert_eq!(&values[..expected.len()], &expected[..], "no runtime");
    assert_eq!(&values[expected.len()..], &expected[..], "custom runtime");
}

#[test]
fn compile_to_c_builds_into_a_c_program() {
    let dir = work_dir("c");
    let (_, f) = blur();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    c.compile_to_c(dir.join("blur.c")).unwrap();
    let header = std::fs::read_to_string(dir.join("blur.h")).unwrap();
    assert!(header.contains("[0] input 'input': uint16 in 2 dimensions"), "{header}");
    assert!(header.contains("[1] output 'blur_y': uint16 in 2 dimensions"), "{header}");
    let main = write_main(&dir);
    let cc = halogen::backend::jit::compiler();
    check_program(
        &dir,
        Command::new(&cc[0])
            .args(&cc[1..])
            // -Wno-psabi: GCC notes that wide vector arguments change the ABI without AVX,
            // which does not matter for the static helpers it warns about.
            .args(["-std=c11", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-Wno-psabi", "-o"])
            .arg(dir.join("main"))
            .arg(&main)
            .arg(dir.join("blur.c"))
            .arg("-lm")
            .current_dir(&dir),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compile_to_static_library_links_into_a_c_program() {
    let dir = work_dir("lib");
    let (_, f) = blur();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    c.compile_to_static_library(&dir, "blur").unwrap();
    assert!(dir.join("libblur.a").is_file() && dir.join("blur.h").is_file());
    let main = write_main(&dir);
    let cc = halogen::backend::jit::compiler();
    check_program(
        &dir,
        Command::new(&cc[0])
            .args(&cc[1..])
            .args(["-std=c11", "-O2", "-o"])
            .arg(dir.join("main"))
            .arg(&main)
            .arg("-L")
            .arg(&dir)
            .args(["-lblur", "-lm"])
            .current_dir(&dir),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn names_that_are_not_c_identifiers_are_refused_not_rewritten() {
    let dir = work_dir("names");
    let (_, f) = blur();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    for stem in ["int", "my-blur", "2blur", "h_blur"] {
        let e = c.compile_to_c(dir.join(format!("{stem}.c"))).unwrap_err().to_string();
        assert!(e.starts_with(&format!("argument error: '{stem}' cannot name the C entry point")), "{e}");
        assert!(!dir.join(format!("{stem}.c")).exists(), "{stem}");
        let e = c.compile_to_static_library(&dir, stem).unwrap_err().to_string();
        assert!(e.contains("cannot name the C entry point"), "{e}");
    }
}
