//! Linear combinations: an integer expression seen as `sum(coefficient * term) + constant`.
//!
//! Integer `+`, `-` and multiplication by a constant form a ring modulo `2^bits`, so
//! collecting terms and cancelling them is exact for every integer type, narrow and
//! unsigned ones included. Coefficients are kept in the signed range of the type's
//! width, so that `x - y` in `u8` comes back as `x - y` and not `x + y * 255`.

use crate::ir::{BinOp, Expr, ExprKind, Type};

/// Most terms collected before giving up (keeps the quadratic term matching cheap).
const MAX_TERMS: usize = 32;

/// `sum(terms[i].0 * terms[i].1) + constant`.
#[derive(Clone, Debug)]
pub(crate) struct Linear {
    /// Terms in order of first appearance, with non-normalised coefficients dropped at zero.
    pub terms: Vec<(Expr, i64)>,
    /// The constant part.
    pub constant: i64,
    /// Leaves and constants met in the original expression (to tell whether the
    /// combination is smaller than what it came from).
    pub occurrences: usize,
}

/// The signed representative of `v` modulo `2^bits`.
pub(crate) fn norm(ty: Type, v: i64) -> i64 {
    Type::int(ty.bits).wrap_int(v)
}

impl Linear {
    /// Number of terms (and constant) the combination needs.
    pub fn size(&self) -> usize {
        self.terms.iter().filter(|(_, c)| *c != 0).count() + (self.constant != 0) as usize
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

/// Collects the integer expression `e`; `None` if it is not an integer or has too many
/// terms.
pub(crate) fn collect(e: &Expr) -> Option<Linear> {
    let ty = e.ty();
    if !ty.element().is_int_or_uint() {
        return None;
    }
    let mut lin = Linear { terms: Vec::new(), constant: 0, occurrences: 0 };
    go(e, 1, ty, &mut lin)?;
    for t in lin.terms.iter_mut() {
        t.1 = norm(ty, t.1);
    }
    lin.constant = norm(ty, lin.constant);
    Some(lin)
}

fn go(e: &Expr, coef: i64, ty: Type, lin: &mut Linear) -> Option<()> {
    if let Some(v) = e.as_int() {
        lin.constant = norm(ty, lin.constant.wrapping_add(coef.wrapping_mul(v)));
        lin.occurrences += 1;
        return Some(());
    }
    if e.ty() == ty {
        if let ExprKind::Binary(op, a, b) = e.kind() {
            match op {
                BinOp::Add => {
                    go(a, coef, ty, lin)?;
                    return go(b, coef, ty, lin);
                }
                BinOp::Sub => {
                    go(a, coef, ty, lin)?;
                    return go(b, coef.wrapping_neg(), ty, lin);
                }
                BinOp::Mul => {
                    if let Some(c) = b.as_int() {
                        return go(a, norm(ty, coef.wrapping_mul(c)), ty, lin);
                    }
                    if let Some(c) = a.as_int() {
                        return go(b, norm(ty, coef.wrapping_mul(c)), ty, lin);
                    }
                }
                _ => {}
            }
        }
    }
    lin.occurrences += 1;
    if let Some(t) = lin.terms.iter_mut().find(|(t, _)| t == e) {
        t.1 = norm(ty, t.1.wrapping_add(coef));
        return Some(());
    }
    if lin.terms.len() >= MAX_TERMS {
        return None;
    }
    lin.terms.push((e.clone(), norm(ty, coef)));
    Some(())
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

