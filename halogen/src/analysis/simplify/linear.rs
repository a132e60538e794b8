//! Linear combinations: an integer expression seen as `sum(coefficient * term) + constant`.
//!
//! Integer `+`, `-` and multiplication by a constant form a ring modulo `2^bits`, so
//! collecting terms and cancelling them is exact for every integer type, narrow and
//! unsigned ones included. Coefficients are kept in the signed range of the type's
//! width, so that `x - y` in `u8` comes back as `x - y` and not `x + y * 255`.

use crate::ir::stack;
use crate::ir::{BinOp, Expr, ExprKind, Type};

/// Most terms collected before giving up (keeps the quadratic term matching cheap).
const MAX_TERMS: usize = 32;

/// `sum(terms[i].0 * terms[i].1) + constant`.
#[derive(Clone, Debug)]
pub(crate) struct Linear {
    /// Terms in order of first appearance, with their coefficients (zero if cancelled).
    pub terms: Vec<(Expr, i64)>,
    /// The constant part.
    pub constant: i64,
    /// Leaves and constants met in the original expression (to tell whether the
    /// combination is smaller than what it came from).
    pub occurrences: usize,
    /// False if folding the constants or coefficients wrapped around: the combination is
    /// still equal modulo 2^bits, but reasoning that assumes no overflow must not use it.
    pub exact: bool,
    /// The type of the expression.
    pub ty: Type,
}

/// The signed representative of `v` modulo `2^bits`.
pub(crate) fn norm(ty: Type, v: i64) -> i64 {
    Type::int(ty.bits).wrap_int(v)
}

/// `v` modulo `2^bits`, in the signed range, and whether it was already there.
fn norm128(ty: Type, v: i128) -> (i64, bool) {
    let r = norm(ty, v as i64);
    (r, r as i128 == v)
}

impl Linear {
    /// Number of terms and constants [`emit`] writes for the combination (a leading `0`
    /// where every term is subtracted: `0 - a - b`).
    pub fn size(&self) -> usize {
        let nonzero = self.terms.iter().filter(|(_, c)| *c != 0).count();
        let negated = |c: i64| c < 0 && norm(self.ty, c.wrapping_neg()) > 0;
        let any_positive = self.terms.iter().any(|(_, c)| *c != 0 && !negated(*c));
        nonzero + (self.constant != 0 || (nonzero > 0 && !any_positive)) as usize
    }
    /// True if writing the combination out makes the expression smaller.
    pub fn is_reduced(&self) -> bool {
        self.size() < self.occurrences
    }
    /// The constant value if every term cancelled.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.iter().all(|(_, c)| *c == 0).then_some(self.constant)
    }
}

/// Exact (i128) accumulation; `None` marks an overflow of i128 itself.
struct Acc {
    terms: Vec<(Expr, Option<i128>)>,
    constant: Option<i128>,
    occurrences: usize,
}

/// Collects the integer expression `e`; `None` if it is not an integer or has too many
/// terms.
pub(crate) fn collect(e: &Expr) -> Option<Linear> {
    let ty = e.ty();
    if !ty.element().is_int_or_uint() {
        return None;
    }
    let mut acc = Acc { terms: Vec::new(), constant: Some(0), occurrences: 0 };
    go(e, Some(1), ty, &mut acc)?;
    let mut exact = true;
    let mut fix = |v: Option<i128>| match v {
        Some(v) => {
            let (r, ok) = norm128(ty, v);
            exact &= ok;
            r
        }
        None => {
            exact = false;
            0
        }
    };
    // An i128 overflow loses the value itself: give up rather than guess.
    if acc.constant.is_none() || acc.terms.iter().any(|(_, c)| c.is_none()) {
        return None;
    }
    let terms = acc.terms.into_iter().map(|(t, c)| (t, fix(c))).collect();
    let constant = fix(acc.constant);
    Some(Linear { terms, constant, occurrences: acc.occurrences, exact, ty })
}

/// The value of a constant in the signed range of the type's width (unsigned constants
/// by their two's-complement bits).
fn signed_const(ty: Type, e: &Expr) -> Option<i128> {
    e.as_int().map(|v| norm(ty, v) as i128)
}

fn go(e: &Expr, coef: Option<i128>, ty: Type, acc: &mut Acc) -> Option<()> {
    stack::guard(|| {
        let mul = |c: Option<i128>, k: i128| c.and_then(|c| c.checked_mul(k));
        if let Some(v) = signed_const(ty, e) {
            acc.constant = match (acc.constant, mul(coef, v)) {
                (Some(a), Some(b)) => a.checked_add(b),
                _ => None,
            };
            acc.occurrences += 1;
            return Some(());
        }
        if e.ty() == ty {
            if let ExprKind::Binary(op, a, b) = e.kind() {
                match op {
                    BinOp::Add => {
                        go(a, coef, ty, acc)?;
                        return go(b, coef, ty, acc);
                    }
                    BinOp::Sub => {
                        go(a, coef, ty, acc)?;
                        return go(b, mul(coef, -1), ty, acc);
                    }
                    BinOp::Mul => {
                        if let Some(c) = signed_const(ty, b) {
                            return go(a, mul(coef, c), ty, acc);
                        }
                        if let Some(c) = signed_const(ty, a) {
                            return go(b, mul(coef, c), ty, acc);
                        }
                    }
                    _ => {}
                }
            }
        }
        acc.occurrences += 1;
        if let Some(t) = acc.terms.iter_mut().find(|(t, _)| t == e) {
            t.1 = match (t.1, coef) {
                (Some(a), Some(b)) => a.checked_add(b),
                _ => None,
            };
            return Some(());
        }
        if acc.terms.len() >= MAX_TERMS {
            return None;
        }
        acc.terms.push((e.clone(), coef));
        Some(())
    })
}

/// `term * |coef|` (or just `term`).
fn scaled(ty: Type, term: &Expr, coef: i64) -> Expr {
    if coef == 1 {
        term.clone()
    } else {
        Expr::mul(term.clone(), Expr::const_of(ty, coef))
    }
}

/// Writes the combination out: positive terms first, in order, then the subtracted
/// ones, then the constant (`x - 1` rather than `x + -1`).
pub(crate) fn emit(ty: Type, terms: &[(Expr, i64)], constant: i64) -> Expr {
    let negatable = |c: i64| c < 0 && norm(ty, c.wrapping_neg()) > 0;
    let mut acc: Option<Expr> = None;
    for (t, c) in terms.iter().filter(|(_, c)| *c != 0 && !negatable(*c)) {
        let s = scaled(ty, t, *c);
        acc = Some(match acc {
            None => s,
            Some(a) => Expr::add(a, s),
        });
    }
    let mut constant = norm(ty, constant);
    let has_neg = terms.iter().any(|(_, c)| negatable(*c));
    if acc.is_none() && has_neg {
        // `c - x` rather than `0 - x + c`.
        acc = Some(Expr::const_of(ty, constant));
        constant = 0;
    }
    for (t, c) in terms.iter().filter(|(_, c)| negatable(*c)) {
        let s = scaled(ty, t, norm(ty, c.wrapping_neg()));
        acc = Some(Expr::sub(acc.expect("set above"), s));
    }
    match acc {
        None => Expr::const_of(ty, constant),
        Some(a) if constant == 0 => a,
        Some(a) if negatable(constant) => Expr::sub(a, Expr::const_of(ty, norm(ty, constant.wrapping_neg()))),
        Some(a) => Expr::add(a, Expr::const_of(ty, constant)),
    }
}

/// Writes a collected combination out.
pub(crate) fn emit_linear(ty: Type, lin: &Linear) -> Expr {
    emit(ty, &lin.terms, lin.constant)
}

/// True if every value of the combination is a multiple of `c` (c > 0).
pub(crate) fn divisible_by(lin: &Linear, c: i64) -> bool {
    lin.terms.iter().all(|(_, k)| k % c == 0) && lin.constant % c == 0
}
