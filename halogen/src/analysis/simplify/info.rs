//! Constant bounds of each sub-expression, computed bottom-up while simplifying.
//!
//! Every integer (and bool) expression gets an [`Info`]: the smallest and largest value it
//! can take, as mathematical integers (i128, so unsigned 64-bit values fit). For narrow and
//! unsigned types the bounds are exact about wrap-around: when an operation may leave the
//! type's range the result is widened to the whole range, so rules that use them stay
//! exact. `Int(32)` and `Int(64)` arithmetic is assumed not to overflow (see the module
//! documentation of the simplifier), and its bounds are those of the exact result, which
//! may reach past the type. Floats carry no bounds.

use crate::ir::{BinOp, Expr, ExprKind, Intrinsic, Type, TypeCode};

/// Inclusive constant bounds of an integer or bool expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Info {
    pub min: i128,
    pub max: i128,
}

/// Bounds of an expression: `None` for floats and handles.
pub(crate) type Bnd = Option<Info>;

impl Info {
    pub fn point(v: i128) -> Info {
        Info { min: v, max: v }
    }
    pub fn new(min: i128, max: i128) -> Info {
        Info { min, max }
    }
    /// The single value, if the bounds pin one.
    pub fn as_const(self) -> Option<i128> {
        (self.min == self.max).then_some(self.min)
    }
    pub fn union(self, o: Info) -> Info {
        Info::new(self.min.min(o.min), self.max.max(o.max))
    }
    pub fn intersect(self, o: Info) -> Info {
        let r = Info::new(self.min.max(o.min), self.max.min(o.max));
        // An empty intersection means the facts contradict each other (dead code);
        // keep the first so that nothing downstream sees min > max.
        if r.min > r.max {
            self
        } else {
            r
        }
    }
    fn within(self, r: Info) -> bool {
        self.min >= r.min && self.max <= r.max
    }
}

/// The range of every value of an integer or bool type.
pub(crate) fn type_range(ty: Type) -> Bnd {
    let b = ty.bits as u32;
    match ty.code {
        TypeCode::Int => Some(Info::new(-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)),
        TypeCode::UInt => Some(Info::new(0, (1i128 << b) - 1)),
        TypeCode::Bool => Some(Info::new(0, 1)),
        _ => None,
    }
}

/// The bounds of a result whose exact value lies in `r`: `r` if it fits the type, else the
/// type's whole range (the operation may wrap). `Int(32)` and `Int(64)` values are
/// integers to the simplifier (it assumes their arithmetic does not overflow), so their
/// bounds stay exact: clipped, they would let a rule that assumes no overflow decide
/// `x + y <= 2147483647` on the wrapped value.
fn fit(ty: Type, r: Info) -> Bnd {
    let range = type_range(ty)?;
    Some(if r.within(range) {
        r
    } else if super::no_overflow(ty) {
        Info::new(r.min.clamp(-BEYOND, BEYOND), r.max.clamp(-BEYOND, BEYOND))
    } else {
        range
    })
}

/// Where the exact bounds of `Int(32)`/`Int(64)` results saturate: far beyond every value
/// of every type, so that comparisons with those values still decide the same, and far
/// enough below `i128::MAX` that the arithmetic on bounds cannot overflow.
const BEYOND: i128 = 1 << 120;

/// The value of an integer constant (scalar or broadcast), as a mathematical integer.
pub(crate) fn const_int(e: &Expr) -> Option<i128> {
    let v = e.as_int()?;
    let t = e.ty().element();
    Some(if t.is_uint() { (t.wrap_int(v) as u64) as i128 } else { t.wrap_int(v) as i128 })
}

/// Bounds of a constant or of anything else by its type.
pub(crate) fn of_leaf(e: &Expr) -> Bnd {
    match const_int(e) {
        Some(v) if !e.ty().is_float() => Some(Info::point(v)),
        _ => type_range(e.ty().element()),
    }
}

fn corners(ty: Type, a: Info, b: Info, f: impl Fn(i128, i128) -> Option<i128>) -> Bnd {
    let vs = [f(a.min, b.min), f(a.min, b.max), f(a.max, b.min), f(a.max, b.max)];
    let mut r: Option<Info> = None;
    for v in vs {
        let v = match v {
            Some(v) => v,
            None => return type_range(ty),
        };
        r = Some(match r {
            None => Info::point(v),
            Some(r) => r.union(Info::point(v)),
        });
    }
    fit(ty, r?)
}

/// Smallest `2^k - 1` that is at least `v` (v >= 0).
fn all_ones_above(v: i128) -> i128 {
    let mut m: i128 = 0;
    while m < v {
        m = m * 2 + 1;
    }
    m
}

/// Bounds of `a op b` from the bounds of the operands (`ty` is the operands' type).
pub(crate) fn binary(op: BinOp, ty: Type, a: Bnd, b: Bnd) -> Bnd {
    let ty = ty.element();
    let range = type_range(ty)?;
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        _ => return Some(range),
    };
    let bits = ty.bits as u32;
    match op {
        BinOp::Add => fit(ty, Info::new(a.min.saturating_add(b.min), a.max.saturating_add(b.max))),
        BinOp::Sub => fit(ty, Info::new(a.min.saturating_sub(b.max), a.max.saturating_sub(b.min))),
        BinOp::Mul => corners(ty, a, b, |x, y| Some(x.saturating_mul(y))),
        BinOp::Div => {
            if let Some(c) = b.as_const() {
                if c == 0 {
                    return Some(Info::point(0));
                }
                let (q0, q1) = (a.min.div_euclid(c), a.max.div_euclid(c));
                fit(ty, Info::new(q0.min(q1), q0.max(q1)))
            } else if b.min > 0 || b.max < 0 {
                corners(ty, a, b, |x, y| Some(x.div_euclid(y)))
            } else {
                // |a / b| <= |a| (and x / 0 == 0).
                let m = a.max.max(-a.min);
                fit(ty, Info::new(-m, m))
            }
        }
        BinOp::Mod => {
            let m = b.min.abs().max(b.max.abs());
            if m == 0 {
                return Some(Info::point(0));
            }
            if b.as_const().is_some() && a.min >= 0 && a.max < m {
                return Some(a);
            }
            let hi = if a.min >= 0 { a.max.min(m - 1) } else { m - 1 };
            fit(ty, Info::new(0, hi))
        }
        BinOp::Min => Some(Info::new(a.min.min(b.min), a.max.min(b.max))),
        BinOp::Max => Some(Info::new(a.min.max(b.min), a.max.max(b.max))),
        BinOp::BitAnd => {
            if ty.is_bool() {
                Some(Info::new(a.min & b.min, a.max & b.max))
            } else if a.min >= 0 && b.min >= 0 {
                Some(Info::new(0, a.max.min(b.max)))
            } else if a.min >= 0 {
                Some(Info::new(0, a.max))
            } else if b.min >= 0 {
                Some(Info::new(0, b.max))
            } else {
                Some(range)
            }
        }
        BinOp::BitOr | BinOp::BitXor => {
            if ty.is_bool() {
                Some(Info::new(0, 1))
            } else if a.min >= 0 && b.min >= 0 {
                let lo = if op == BinOp::BitOr { a.min.max(b.min) } else { 0 };
                fit(ty, Info::new(lo, all_ones_above(a.max.max(b.max))))
            } else {
                Some(range)
            }
        }
        BinOp::Shl => match b.as_const() {
            Some(k) => {
                let amt = super::fold::shift_amount(bits, k as i64);
                let f = 1i128 << amt;
                fit(ty, Info::new(a.min.saturating_mul(f), a.max.saturating_mul(f)))
            }
            None => Some(range),
        },
        BinOp::Shr => match b.as_const() {
            Some(k) => {
                let amt = super::fold::shift_amount(bits, k as i64);
                Some(Info::new(a.min >> amt, a.max >> amt))
            }
            None if a.min >= 0 => Some(Info::new(0, a.max)),
            None => Some(range),
        },
        BinOp::And => Some(Info::new(a.min.min(b.min), a.max.min(b.max))),
        BinOp::Or => Some(Info::new(a.min.max(b.min), a.max.max(b.max))),
    }
}

/// Bounds of a conversion from `from` to `to` of a value with bounds `a`.
pub(crate) fn cast(from: Type, to: Type, a: Bnd) -> Bnd {
    let (from, to) = (from.element(), to.element());
    let range = type_range(to)?;
    if to.is_bool() {
        return Some(match a {
            Some(a) if a.min > 0 || a.max < 0 => Info::point(1),
            Some(a) if a.min == 0 && a.max == 0 => Info::point(0),
            _ => range,
        });
    }
    match a {
        Some(a) if !from.is_float() && a.within(range) => Some(a),
        _ => Some(range),
    }
}

/// Bounds of an intrinsic call's result.
pub(crate) fn intrinsic(which: Intrinsic, ty: Type, args: &[Bnd]) -> Bnd {
    let range = type_range(ty.element())?;
    let a = args.first().copied().flatten();
    let r = match (which, a) {
        (Intrinsic::Abs, Some(a)) => {
            let hi = a.max.abs().max(a.min.abs());
            let lo = if a.min >= 0 {
                a.min
            } else if a.max <= 0 {
                -a.max
            } else {
                0
            };
            Info::new(lo, hi)
        }
        (Intrinsic::BitNot, Some(a)) => {
            if ty.is_uint() {
                Info::new(range.max - a.max, range.max - a.min)
            } else {
                Info::new(-1 - a.max, -1 - a.min)
            }
        }
        _ => range,
    };
    fit(ty.element(), r)
}

/// Bounds of a ramp's lanes.
pub(crate) fn ramp(ty: Type, base: Bnd, stride: Bnd, lanes: u16) -> Bnd {
    let range = type_range(ty.element())?;
    match (base, stride) {
        (Some(b), Some(s)) => {
            // Lane i is base + i * stride for i in [0, n].
            let n = lanes as i128 - 1;
            let (lo, hi) = (s.min.saturating_mul(n).min(0), s.max.saturating_mul(n).max(0));
            fit(ty.element(), Info::new(b.min.saturating_add(lo), b.max.saturating_add(hi)))
        }
        _ => Some(range),
    }
}

/// Bounds of a simplified expression from its node alone (children by their type).
/// Used where a rewrite could not be re-simplified.
pub(crate) fn shallow(e: &Expr) -> Bnd {
    match e.kind() {
        ExprKind::IntImm(_) | ExprKind::Broadcast { .. } => of_leaf(e),
        _ => type_range(e.ty().element()),
    }
}
