//! Pipelines written as text: the `.halogen` format.
//!
//! A file declares a pipeline's inputs, parameters, Funcs and output, and optionally
//! named schedules; [`parse_pipeline`] builds the same [`Func`]s the Rust API would, so a
//! text pipeline compiles, auto-schedules and runs like any other. It is what the
//! `halogen` command runs with `--pipeline FILE`, and what generated pipelines are
//! written in. (The printed loop nest has a parser of its own, `ir::parse`, for the
//! per-pass filetests; the two formats are unrelated.)
//!
//! ```text
//! # A 3×3 box blur of a 16-bit image, as in the `blur` app.
//! input input : u16[2] estimate [0, 6402] [0, 6400]
//! blur_x(x, y) = (input(x, y) + input(x + 1, y) + input(x + 2, y)) / 3
//! blur_y(x, y) = (blur_x(x, y) + blur_x(x, y + 1) + blur_x(x, y + 2)) / 3
//! output blur_y size [input.width - 2, input.height - 2] estimate [0, 6400] [0, 4800]
//!
//! schedule hand {
//!     blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 16).parallel(y)
//!     blur_x.compute_at(blur_y, x).vectorize(x, 16)
//! }
//! ```
//!
//! # Statements
//! One per line (`;` also ends one); a line ending in an operator, a comma or `=`, or
//! inside `(` `)` or `[` `]`, goes on to the next. `#` starts a comment.
//!
//! - `input NAME : TYPE[DIMS]`, then optionally `estimate [min, extent] ...` (one pair per
//!   dimension, for the auto-scheduler) and `values [lo, hi]` (the range of the test data
//!   the `halogen` command makes): an `ImageParam`.
//! - `param NAME : TYPE = VALUE`, optionally `range [lo, hi]`: a scalar `Param`; `VALUE`
//!   is its default and its estimate.
//! - `var NAME, ...`: pure variables. The arguments of a Func's first definition are
//!   declared by it, so this is rarely needed.
//! - `rdom NAME = [min, extent] ...`: a reduction domain; its variables are `NAME.x`,
//!   `NAME.y`, `NAME.z`, `NAME.w`, and a 1-D domain used as a value is `NAME.x`.
//! - `NAME = BOUNDARY(INPUT)`: a boundary condition over an input's bounds, `BOUNDARY`
//!   one of `repeat_edge`, `repeat_image`, `mirror_image`, `mirror_interior`, or
//!   `constant_exterior(INPUT, VALUE)`.
//! - `NAME(x, y, ...) = EXPR`: a Func's pure definition (the first one), or an update
//!   (later ones, whose arguments are expressions); `NAME(args) += EXPR` (and `-=`, `*=`,
//!   `/=`) is the update `NAME(args) = NAME(args) + EXPR`.
//! - `output NAME`, optionally `size [EXPR, ...]` (the output's extents from the inputs'
//!   and parameters' values: integers, `+ - * /`, `INPUT.width`, `INPUT.height`,
//!   `INPUT.channels`, `INPUT.extent(d)`; default: the first input's extents) and
//!   `estimate [min, extent] ...`.
//! - `schedule NAME { ... }`: a named schedule, one chain of directives per line:
//!   `FUNC.directive(args).directive(args)`, or `FUNC.update(n).directive(args)` for an
//!   update stage. The directives are `compute_root`, `compute_inline`, `compute_at(f, v)`,
//!   `compute_with(f, v)`,
//!   `store_root`, `store_at(f, v)`, `split(v, outer, inner, factor[, tail])` (tail:
//!   `round_up`, `guard_with_if`, `shift_inwards`), `tile(x, y, xi, yi, w, h)`,
//!   `tile(x, y, xo, yo, xi, yi, w, h)`, `fuse(inner, outer, fused)`, `reorder(v, ...)`
//!   (innermost first), `reorder_storage(v, ...)`, `parallel(v)`, `parallel(v, task_size)`
//!   (Halide's tasks of several iterations; also spelt `parallel_tasks`), `vectorize(v, n)`,
//!   `unroll(v, n)`, `unroll_full(v)` and `bound(v, min, extent)`; for a GPU target,
//!   `gpu_blocks(v)`, `gpu_threads(v)`, `gpu_tile(x, xo, xi, w)` (also spelt `gpu_tile_1d`),
//!   `gpu_tile(x, y, xo, yo, xi, yi, w, h)`, `gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, w,
//!   h, d)`, and on an update `atomic()`.
//!
//! # Expressions
//! Halide's: integer literals are `i32` and float literals `f32` (each takes the other
//! operand's type where its value fits); operators `+ - * / %` (division and modulo round
//! toward negative infinity), `<< >> & | ^ ~`, `== != < <= > >=`, `&& || !`; calls of
//! inputs, Funcs and the functions `min`, `max`, `clamp`, `select`, `abs`, `absd`,
//! `sqrt`, `exp`, `log`, `pow`, `floor`, `ceil`, `round`, `trunc`, `sin`, `cos`, `tan`,
//! `atan2`, `lerp`, and the inline reductions `sum`, `product`, `maximum`, `minimum`;
//! conversions written as the type's name (`u8(e)`, `f32(e)`, ...); `INPUT.width`,
//! `INPUT.height`, `INPUT.channels`, `INPUT.min(d)`, `INPUT.extent(d)`.
//!
//! Types: `bool`, `u8`, `u16`, `u32`, `u64`, `i8`, `i16`, `i32`, `i64`, `f32`, `f64`.
//!
//! Every mistake is an `Err` that starts with `FILE:LINE:COLUMN:`.

mod lexer;
mod parser;
mod pipeline;
mod schedule;

pub use pipeline::{TextInput, TextParam, TextPipeline};

use crate::error::Error;
use std::path::Path;

/// A place in the source: 1-based line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pos {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1, in characters.
    pub col: u32,
}

/// A mistake at a place in the source, before the file's name is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TextError {
    pos: Pos,
    message: String,
}

impl TextError {
    pub(crate) fn at(pos: Pos, message: impl Into<String>) -> TextError {
        TextError { pos, message: message.into() }
    }

    /// A mistake the library recorded while the file's statement at `pos` ran, at that
    /// statement: without the error's kind (the caller gives it) and without the Rust line
    /// the library names, which is the parser's, not the file's.
    pub(crate) fn from_library(pos: Pos, e: &Error) -> TextError {
        let msg = e.to_string();
        let msg = msg.split_once(": ").map(|(_, m)| m).unwrap_or(&msg);
        let msg = msg.rsplit_once(" (at ").map(|(m, _)| m).unwrap_or(msg);
        TextError::at(pos, msg)
    }

    /// As a [`Error::Definition`] naming the file.
    pub(crate) fn in_file(&self, file: &str) -> Error {
        Error::Definition(format!("{file}:{self}"))
    }
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.pos.line, self.pos.col, self.message)
    }
}

/// Parses a pipeline from `source`; `file` names it in error messages.
///
/// ```
/// use halogen::prelude::*;
/// let p = halogen::text::parse_pipeline(
///     "input in : i32[1]\nf(x) = in(x) * 2 + 1\noutput f size [in.width]",
///     "double.halogen",
/// )
/// .unwrap();
/// let c = p.pipeline().compile(&Target::interp()).unwrap();
/// let img = Buffer::<i32>::from_vec(vec![1, 2, 3], &[3]).unwrap();
/// let mut args = Args::new();
/// args.image(p.input("in").unwrap(), &img);
/// let mut out = Buffer::<i32>::new(&[3]);
/// c.realize(&args, &mut out).unwrap();
/// assert_eq!(out.as_slice(), &[3, 5, 7]);
///
/// let e = halogen::text::parse_pipeline("f(x) = g(x)\noutput f", "bad.halogen").unwrap_err();
/// assert_eq!(e.to_string(), "definition error: bad.halogen:1:8: unknown name 'g'");
/// ```
pub fn parse_pipeline(source: &str, file: &str) -> Result<TextPipeline, Error> {
    parser::parse(source, file).map_err(|e| e.in_file(file))
}

/// Reads and parses the pipeline in the file at `path`.
///
/// ```no_run
/// let p = halogen::text::load_pipeline("examples/blur.halogen").unwrap();
/// println!("{} schedules", p.schedule_names().len());
/// ```
pub fn load_pipeline(path: impl AsRef<Path>) -> Result<TextPipeline, Error> {
    let path = path.as_ref();
    let source = std::fs::read_to_string(path)
        .map_err(|e| Error::Argument(format!("cannot read pipeline file '{}': {e}", path.display())))?;
    parse_pipeline(&source, &path.display().to_string())
}

#[cfg(test)]
mod tests;
