//! Boundary conditions (Forma's constant / clamped / wrap / mirror), chosen at the point
//! of use: each takes a source (a [`Func`] or an [`ImageParam`]) and its region as
//! `(min, extent)` pairs, one per dimension, and returns a new Func defined everywhere
//! that only ever reads the source inside that region. Dimensions past the pairs given
//! are passed through unchanged.
//!
//! | function | outside `abc` |
//! | --- | --- |
//! | [`constant_exterior`] | `vvv\|abc\|vvv` |
//! | [`repeat_edge`] | `aaa\|abc\|ccc` |
//! | [`repeat_image`] | `abc\|abc\|abc` |
//! | [`mirror_image`] | `cba\|abc\|cba` |
//! | [`mirror_interior`] | `cb\|abc\|ba` |
//!
//! ```
//! use halogen::prelude::*;
//! use halogen::boundary;
//! let input = ImageParam::new(Type::u8(), 2, "input");
//! let clamped = boundary::repeat_edge(&input, &input.bounds());
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let blur = Func::new("blur");
//! blur.def((x, y), (clamped.at((x - 1, y)) + clamped.at((x + 1, y))) / 2);
//! assert_eq!(clamped.dimensions(), 2);
//! ```

use super::expr_ops::to_i32;
use super::func::Func;
use super::param::ImageParam;
use super::var::Var;
use crate::error::Error;
use crate::ir::{BinOp, CmpOp, Expr, Name};
use std::panic::Location;

/// Something a boundary condition can wrap: a [`Func`] or an [`ImageParam`].
///
/// ```
/// use halogen::prelude::*;
/// use halogen::boundary::BoundarySource;
/// let input = ImageParam::new(Type::u8(), 2, "input");
/// assert_eq!(BoundarySource::dimensions(&input), 2);
/// assert_eq!(input.call(vec![Expr::from(0), Expr::from(1)]).to_string(), "input(0, 1)");
/// ```
pub trait BoundarySource {
    /// Number of dimensions.
    fn dimensions(&self) -> usize;
    /// Value 0 at `args`.
    fn call(&self, args: Vec<Expr>) -> Expr;
    /// Number of values (tuple size); 1 unless overridden.
    fn outputs(&self) -> usize {
        1
    }
    /// Value `index` at `args` (only 0 unless overridden).
    fn call_value(&self, args: Vec<Expr>, index: usize) -> Expr {
        debug_assert_eq!(index, 0);
        self.call(args)
    }
    /// A name for error messages and for the new Func.
    fn source_name(&self) -> Name;
    /// Whether the source can be called yet (a Func needs its pure definition first).
    fn is_defined(&self) -> bool {
        true
    }
}

impl BoundarySource for Func {
    fn dimensions(&self) -> usize {
        Func::dimensions(self)
    }
    fn call(&self, args: Vec<Expr>) -> Expr {
        self.at_tuple(args, 0)
    }
    fn outputs(&self) -> usize {
        Func::outputs(self).max(1)
    }
    fn call_value(&self, args: Vec<Expr>, index: usize) -> Expr {
        self.at_tuple(args, index)
    }
    fn source_name(&self) -> Name {
        self.name()
    }
    fn is_defined(&self) -> bool {
        self.defined()
    }
}

impl BoundarySource for ImageParam {
    fn dimensions(&self) -> usize {
        ImageParam::dimensions(self)
    }
    fn call(&self, args: Vec<Expr>) -> Expr {
        self.at(args)
    }
    fn source_name(&self) -> Name {
        self.name()
    }
}

/// One dimension's region, as `i32` expressions.
struct Region {
    min: Expr,
    extent: Expr,
}

impl Region {
    /// The last coordinate inside.
    fn max(&self) -> Expr {
        Expr::sub(Expr::add(self.min.clone(), self.extent.clone()), Expr::i32(1))
    }
    /// `c` clamped into the region, so reads stay inside even after wrap arithmetic.
    fn clamp(&self, c: Expr) -> Expr {
        Expr::max(Expr::min(c, self.max()), self.min.clone())
    }
    /// Whether `c` is inside.
    fn contains(&self, c: &Expr) -> Expr {
        let end = Expr::add(self.min.clone(), self.extent.clone());
        Expr::and(Expr::cmp(CmpOp::Ge, c.clone(), self.min.clone()), Expr::cmp(CmpOp::Lt, c.clone(), end))
    }
    /// `x` where it is inside (clamped all the same, so that bounds inference sees the
    /// region), `wrapped` elsewhere: the form Halide writes its boundary conditions in,
    /// which lets loop partitioning (`lower/partition_loops.rs`) run the interior of a
    /// vector loop with dense loads and without the wrapping arithmetic.
    fn inside_or(&self, x: &Expr, wrapped: Expr) -> Expr {
        Expr::select(self.contains(x), self.clamp(x.clone()), wrapped)
    }
}

/// Builds `name(vars) = source(coords(vars))` with fresh Vars. `coord(d, region, v)`
/// maps the coordinate of a bounded dimension; `wrap(inside, value)` may replace each
/// value (for the constant exterior).
#[track_caller]
fn build<S: BoundarySource + ?Sized>(
    what: &str,
    source: &S,
    bounds: &[(Expr, Expr)],
    coord: impl Fn(&Region, Expr) -> Expr,
    wrap: impl Fn(Option<&Expr>, Expr) -> Expr,
) -> Func {
    let loc = Location::caller();
    let src = source.source_name();
    let out = Func::fresh(&format!("{src}_{what}"));
    let dims = source.dimensions();
    let mut problems = Vec::new();
    if !source.is_defined() {
        problems.push(format!(
            "boundary::{what}: Func '{src}' has no definition yet; define it before wrapping it (at {loc})"
        ));
    }
    if bounds.len() > dims && source.is_defined() {
        problems.push(format!(
            "boundary::{what}: '{src}' has {dims} dimensions but {} (min, extent) pairs were given (at {loc})",
            bounds.len()
        ));
    }
    // An undefined source has no dimensions yet; keep the new Func usable anyway.
    let dims = if source.is_defined() { dims } else { bounds.len() };
    let vars: Vec<Var> = (0..dims).map(|_| Var::fresh()).collect();
    let mut coords = Vec::with_capacity(dims);
    let mut inside: Option<Expr> = None;
    for (d, v) in vars.iter().enumerate() {
        let x = v.expr();
        match bounds.get(d) {
            Some((min, extent)) => {
                let region = Region { min: to_i32(min.clone()), extent: to_i32(extent.clone()) };
                let c = region.contains(&x);
                inside = Some(match inside {
                    None => c,
                    Some(acc) => Expr::and(acc, c),
                });
                coords.push(coord(&region, x));
            }
            None => coords.push(x),
        }
    }
    let values: Vec<Expr> =
        (0..source.outputs()).map(|i| wrap(inside.as_ref(), source.call_value(coords.clone(), i))).collect();
    out.def_tuple(vars, &values);
    if !problems.is_empty() {
        let mut data = out.func_ref().lock();
        data.errors.extend(problems.into_iter().map(Error::Definition));
    }
    out
}

/// Outside the region, the constant `value` (converted to the source's type); inside, the
/// source.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::boundary;
/// let input = ImageParam::new(Type::u8(), 2, "input");
/// let padded = boundary::constant_exterior(&input, 0, &input.bounds());
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// assert_eq!(padded.at((x, y)).ty(), Type::u8());
/// ```
#[track_caller]
pub fn constant_exterior<S: BoundarySource + ?Sized>(
    source: &S,
    value: impl Into<Expr>,
    bounds: &[(Expr, Expr)],
) -> Func {
    let value = value.into();
    build(
        "constant_exterior",
        source,
        bounds,
        // Clamped too, so the read stays in bounds where the select is evaluated eagerly.
        |r, x| r.clamp(x),
        |inside, v| match inside {
            Some(c) => {
                let fill = super::expr_ops::cast(v.ty().element(), value.clone());
                Expr::select(c.clone(), v, fill)
            }
            None => v,
        },
    )
}

/// Outside the region, the nearest edge value (the coordinate is clamped).
///
/// ```
/// use halogen::prelude::*;
/// use halogen::boundary;
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// let f = Func::new("f");
/// f.def((x, y), x + y);
/// let g = boundary::repeat_edge(&f, &[(Expr::from(0), Expr::from(10))]);
/// assert_eq!(g.dimensions(), 2); // y is left unbounded
/// ```
#[track_caller]
pub fn repeat_edge<S: BoundarySource + ?Sized>(source: &S, bounds: &[(Expr, Expr)]) -> Func {
    build("repeat_edge", source, bounds, |r, x| r.clamp(x), |_, v| v)
}

/// The region tiled periodically (the coordinate wraps around).
///
/// ```
/// use halogen::prelude::*;
/// use halogen::boundary;
/// let input = ImageParam::new(Type::f32(), 1, "input");
/// let tiled = boundary::repeat_image(&input, &input.bounds());
/// assert_eq!(tiled.output_types(), vec![Type::f32()]);
/// ```
#[track_caller]
pub fn repeat_image<S: BoundarySource + ?Sized>(source: &S, bounds: &[(Expr, Expr)]) -> Func {
    build(
        "repeat_image",
        source,
        bounds,
        |r, x| {
            // Euclidean `%` never goes negative, so one formula covers both sides.
            let off = Expr::binary(BinOp::Mod, Expr::sub(x.clone(), r.min.clone()), r.extent.clone());
            r.inside_or(&x, r.clamp(Expr::add(off, r.min.clone())))
        },
        |_, v| v,
    )
}

/// The region reflected at its edges, the edge pixels repeated: `cba|abc|cba`.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::boundary;
/// let input = ImageParam::new(Type::u8(), 2, "input");
/// let m = boundary::mirror_image(&input, &input.bounds());
/// assert_eq!(m.dimensions(), 2);
/// ```
#[track_caller]
pub fn mirror_image<S: BoundarySource + ?Sized>(source: &S, bounds: &[(Expr, Expr)]) -> Func {
    build(
        "mirror_image",
        source,
        bounds,
        |r, x| {
            // Period 2 * extent; the second half of each period runs backwards.
            let period = Expr::mul(Expr::i32(2), r.extent.clone());
            let c = Expr::binary(BinOp::Mod, Expr::sub(x.clone(), r.min.clone()), period.clone());
            let back = Expr::sub(Expr::sub(period, Expr::i32(1)), c.clone());
            let c = Expr::select(Expr::cmp(CmpOp::Lt, c.clone(), r.extent.clone()), c, back);
            r.inside_or(&x, r.clamp(Expr::add(c, r.min.clone())))
        },
        |_, v| v,
    )
}

/// The region reflected about its edge pixels, which are not repeated: `cb|abc|ba`. An
/// extent of 1 repeats the single pixel.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::boundary;
/// let input = ImageParam::new(Type::u8(), 2, "input");
/// let m = boundary::mirror_interior(&input, &input.bounds());
/// assert_eq!(m.dimensions(), 2);
/// ```
#[track_caller]
pub fn mirror_interior<S: BoundarySource + ?Sized>(source: &S, bounds: &[(Expr, Expr)]) -> Func {
    build(
        "mirror_interior",
        source,
        bounds,
        |r, x| {
            // Period 2 * (extent - 1): distance from the far edge, folded. `% 0` is 0 in
            // the IR, so an extent of 1 maps everything to the single pixel.
            let limit = Expr::sub(r.extent.clone(), Expr::i32(1));
            let period = Expr::mul(Expr::i32(2), limit.clone());
            let c = Expr::binary(BinOp::Mod, Expr::sub(x.clone(), r.min.clone()), period);
            let c = Expr::sub(c, limit.clone());
            let c = Expr::max(c.clone(), Expr::sub(Expr::i32(0), c));
            let c = Expr::sub(limit, c);
            r.inside_or(&x, r.clamp(Expr::add(c, r.min.clone())))
        },
        |_, v| v,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{CallKind, ExprKind};
    use std::collections::HashMap;

    /// A tiny evaluator for the integer expressions these functions build, with the IR's
    /// semantics (floor division, Euclidean remainder, `x / 0 == x % 0 == 0`).
    fn eval(e: &Expr, env: &HashMap<String, i64>) -> i64 {
        match e.kind() {
            ExprKind::IntImm(v) => *v,
            ExprKind::Var { name, .. } => *env.get(&**name).unwrap_or_else(|| panic!("unbound {name}")),
            ExprKind::Cast(a) => e.ty().wrap_int(eval(a, env)),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (eval(a, env), eval(b, env));
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => {
                        if b == 0 {
                            0
                        } else {
                            a.div_euclid(b)
                        }
                    }
                    BinOp::Mod => {
                        if b == 0 {
                            0
                        } else {
                            a.rem_euclid(b)
                        }
                    }
                    BinOp::Min => a.min(b),
                    BinOp::Max => a.max(b),
                    BinOp::And => (a != 0 && b != 0) as i64,
                    BinOp::Or => (a != 0 || b != 0) as i64,
                    _ => panic!("unsupported {op:?}"),
                }
            }
            ExprKind::Cmp(op, a, b) => {
                let (a, b) = (eval(a, env), eval(b, env));
                (match op {
                    CmpOp::Eq => a == b,
                    CmpOp::Ne => a != b,
                    CmpOp::Lt => a < b,
                    CmpOp::Le => a <= b,
                    CmpOp::Gt => a > b,
                    CmpOp::Ge => a >= b,
                }) as i64
            }
            ExprKind::Not(a) => (eval(a, env) == 0) as i64,
            ExprKind::Select(c, t, f) => {
                if eval(c, env) != 0 {
                    eval(t, env)
                } else {
                    eval(f, env)
                }
            }
            _ => panic!("unsupported {e}"),
        }
    }

    /// The pure definition's value, its args, and the coordinates of the source call in it.
    fn parts(f: &Func) -> (Vec<Expr>, Expr) {
        let d = f.func_ref().lock();
        let p = d.pure.as_ref().unwrap();
        (p.args.clone(), p.values[0].clone())
    }

    fn source_call(e: &Expr) -> Vec<Expr> {
        match e.kind() {
            ExprKind::Call { args, kind: CallKind::Image | CallKind::Func { .. }, .. } => args.clone(),
            ExprKind::Select(_, t, _) => source_call(t),
            _ => panic!("no source call in {e}"),
        }
    }

    type Maker = fn(&ImageParam, &[(Expr, Expr)]) -> Func;

    /// Maps coordinate `x` of dimension 0 through the boundary Func built over a 1-D image
    /// with region `(min, extent)` given as run-time parameters.
    fn mapped(make: Maker, min: i64, extent: i64, xs: std::ops::RangeInclusive<i64>) -> Vec<i64> {
        let img = ImageParam::new(crate::ir::Type::u8(), 1, "bnd_img");
        let f = make(&img, &img.bounds());
        let (args, value) = parts(&f);
        let coord = source_call(&value)[0].clone();
        let var = args[0].as_var().unwrap().to_string();
        xs.map(|x| {
            let env = HashMap::from([
                (var.clone(), x),
                ("bnd_img.min.0".to_string(), min),
                ("bnd_img.extent.0".to_string(), extent),
            ]);
            eval(&coord, &env)
        })
        .collect()
    }

    #[test]
    fn repeat_edge_clamps() {
        let got = mapped(repeat_edge, 0, 3, -3..=5);
        assert_eq!(got, vec![0, 0, 0, 0, 1, 2, 2, 2, 2]);
        let got = mapped(repeat_edge, 10, 2, 8..=13);
        assert_eq!(got, vec![10, 10, 10, 11, 11, 11]);
    }

    #[test]
    fn repeat_image_wraps() {
        let got = mapped(repeat_image, 0, 3, -4..=6);
        assert_eq!(got, vec![2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        let got = mapped(repeat_image, 5, 2, 2..=8);
        assert_eq!(got, vec![6, 5, 6, 5, 6, 5, 6]);
    }

    #[test]
    fn mirror_image_repeats_edges() {
        // cba|abc|cba
        let got = mapped(mirror_image, 0, 3, -6..=8);
        assert_eq!(got, vec![0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2]);
        let got = mapped(mirror_image, 10, 1, 7..=12);
        assert_eq!(got, vec![10; 6]);
    }

    #[test]
    fn mirror_interior_skips_edges() {
        // (c)ba|abc|ba(c) with the edge pixel not repeated: ...c b | a b c | b a...
        let got = mapped(mirror_interior, 0, 3, -4..=6);
        assert_eq!(got, vec![0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]);
        let got = mapped(mirror_interior, 4, 1, 1..=7);
        assert_eq!(got, vec![4; 7]);
        let got = mapped(mirror_interior, -2, 2, -5..=2);
        assert_eq!(got, vec![-1, -2, -1, -2, -1, -2, -1, -2]);
    }

    #[test]
    fn every_read_is_inside_for_many_regions() {
        let makers: [Maker; 4] = [repeat_edge, repeat_image, mirror_image, mirror_interior];
        for make in makers {
            for min in -3..=3 {
                for extent in 1..=5 {
                    for c in mapped(make, min, extent, -20..=20) {
                        assert!(c >= min && c < min + extent, "{c} outside [{min}, {})", min + extent);
                    }
                }
            }
        }
    }

    #[test]
    fn constant_exterior_selects() {
        let img = ImageParam::new(crate::ir::Type::u8(), 2, "bnd_const");
        let f = constant_exterior(&img, 7, &img.bounds());
        let (args, value) = parts(&f);
        assert_eq!(value.ty(), crate::ir::Type::u8());
        let ExprKind::Select(cond, _, fill) = value.kind() else { panic!("not a select: {value}") };
        assert_eq!(fill.as_int(), Some(7));
        assert_eq!(fill.ty(), crate::ir::Type::u8());
        let coords = source_call(&value);
        let (vx, vy) = (args[0].as_var().unwrap().to_string(), args[1].as_var().unwrap().to_string());
        for x in -2..6 {
            for y in -2..5 {
                let env = HashMap::from([
                    (vx.clone(), x),
                    (vy.clone(), y),
                    ("bnd_const.min.0".to_string(), 0),
                    ("bnd_const.extent.0".to_string(), 4),
                    ("bnd_const.min.1".to_string(), 1),
                    ("bnd_const.extent.1".to_string(), 2),
                ]);
                let inside = (0..4).contains(&x) && (1..3).contains(&y);
                assert_eq!(eval(cond, &env) != 0, inside, "({x}, {y})");
                let (cx, cy) = (eval(&coords[0], &env), eval(&coords[1], &env));
                assert!((0..4).contains(&cx) && (1..3).contains(&cy));
                if inside {
                    assert_eq!((cx, cy), (x, y));
                }
            }
        }
    }

    #[test]
    fn fewer_bounds_leave_dims_unbounded() {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let g = Func::new("bnd_g");
        g.def((x, y), x * y);
        let f = repeat_edge(&g, &[(Expr::from(0), Expr::from(4))]);
        let (args, value) = parts(&f);
        assert_eq!(args.len(), 2);
        let coords = source_call(&value);
        assert_eq!(coords[1], args[1]);
        assert!(f.func_ref().lock().errors.is_empty());
    }

    #[test]
    fn tuple_sources_keep_every_value() {
        let x = Var::new("x");
        let g = Func::new("bnd_tuple");
        g.def_tuple(x, &[Expr::from(1), Expr::from(2.0f32)]);
        let f = constant_exterior(&g, 0, &[(Expr::from(0), Expr::from(4))]);
        assert_eq!(f.output_types(), vec![crate::ir::Type::i32(), crate::ir::Type::f32()]);
    }

    #[test]
    fn mistakes_are_recorded() {
        let undefined = Func::new("bnd_undefined");
        let f = repeat_edge(&undefined, &[(Expr::from(0), Expr::from(4))]);
        assert!(f.func_ref().lock().errors.iter().any(|e| e.to_string().contains("has no definition yet")));
        let img = ImageParam::new(crate::ir::Type::u8(), 1, "bnd_extra");
        let f = mirror_image(&img, &[(Expr::from(0), Expr::from(4)), (Expr::from(0), Expr::from(4))]);
        let errs = f.func_ref().lock().errors.clone();
        assert!(errs[0].to_string().contains("'bnd_extra' has 1 dimensions but 2 (min, extent) pairs"), "{errs:?}");
    }
}
