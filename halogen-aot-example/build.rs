//! Defines, schedules and compiles the crate's pipelines ahead of time with
//! `halogen::build`; `src/lib.rs` includes the wrappers written here.

use halogen::build::Generator;
use halogen::prelude::*;

/// The Halide paper's 3×3 separable box blur of `u16` pixels, as in `halogen-apps`: no
/// boundary condition, so output `(x, y)` reads input `x..=x+2, y..=y+2`.
fn blur() -> Pipeline {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let blur_x = Func::new("blur_x");
    let blur_y = Func::new("blur_y");
    blur_x.def((x, y), (input.at((x, y)) + input.at((x + 1, y)) + input.at((x + 2, y))) / 3);
    blur_y.def((x, y), (blur_x.at((x, y)) + blur_x.at((x, y + 1)) + blur_x.at((x, y + 2))) / 3);
    // The paper's schedule, with tiles small enough that test images span several: tiles in
    // parallel, the horizontal pass computed per tile, both vectorized (8 × u16 = 128 bits,
    // the baseline vector width of x86-64 and AArch64).
    let (xi, yi) = (Var::new("xi"), Var::new("yi"));
    blur_y.tile(x, y, xi, yi, 64, 16).vectorize(xi, 8).parallel(y);
    blur_x.compute_at(&blur_y, x).vectorize(x, 8);
    Pipeline::new(&[&blur_y])
}

/// A brightness and contrast change with scalar parameters of two types:
/// `u16(clamp(f32(input) * gain + f32(bias), 0, 65535))`.
fn brighten() -> Pipeline {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let gain = Param::<f32>::new("gain");
    let bias = Param::<i32>::new("bias");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let brightened = Func::new("brightened");
    let v = cast(Type::f32(), input.at((x, y))) * gain.expr() + cast(Type::f32(), bias.expr());
    brightened.def((x, y), cast(Type::u16(), clamp(v, 0.0f32, 65535.0f32)));
    brightened.vectorize(x, 8).parallel(y);
    Pipeline::new(&[&brightened])
}

fn generate() -> halogen::Result<()> {
    Generator::new("blur_u16").pipeline(&blur()).emit()?;
    Generator::new("brighten_u16").pipeline(&brighten()).emit()?;
    Ok(())
}

fn main() {
    if let Err(e) = generate() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
