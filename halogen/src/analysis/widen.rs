//! Re-expressing 32-bit integer arithmetic in 64 bits, for the checks that guard memory.
//!
//! A bounds check computed in the same 32 bits as the code it guards passes when its own
//! arithmetic wraps: `input(x * 65536)` over 65537 outputs needs `[0, 2^32]`, which in 32
//! bits is `[0, 0]`, and a one-element input passed the check. [`widen_to_i64`] rewrites
//! an `int32` expression so that every addition, subtraction, multiplication, division,
//! `min`, `max` and `select` happens in `int64`, where values built from 32-bit operands by
//! a few such steps cannot wrap. Leaves that are already 32-bit values (variables, calls,
//! loads, casts from wider types) are converted as they are: the check then sees exactly
//! what the program computes from them.

use crate::ir::{BinOp, Expr, ExprKind, Name, Type, VarBinding};
use std::collections::HashMap;

/// `e` (an `int32` scalar) computed in `int64`, with every arithmetic step exact; any other
/// type is returned converted to `int64` (integers) or unchanged (non-integers, vectors).
///
/// ```
/// use halogen::analysis::widen::widen_to_i64;
/// use halogen::ir::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let e = widen_to_i64(&Expr::mul(x, Expr::i32(65536)));
/// assert_eq!(e.ty(), Type::i64());
/// assert_eq!(e.to_string(), "(int64(x) * (int64)65536)");
/// ```
pub fn widen_to_i64(e: &Expr) -> Expr {
    Widener { renamed: HashMap::new(), outside: None }.widen(e)
}

/// [`widen_to_i64`], where each 32-bit variable that `values` names is replaced by the
/// 64-bit expression it maps to: names bound outside `e` whose values the caller computed
/// in 64 bits itself (one `let` of a chain each, instead of each use expanding the values
/// of all the names it refers to).
///
/// ```
/// use halogen::analysis::widen::widen_to_i64_replacing;
/// use halogen::ir::{Expr, Name, Type};
/// use std::collections::HashMap;
/// let (t, x) = (Expr::var(Type::i32(), "t"), Expr::var(Type::i32(), "x"));
/// let t_value = widen_to_i64_replacing(&Expr::mul(x, Expr::i32(65536)), &HashMap::new());
/// let values: HashMap<Name, Expr> = [(Name::from("t"), t_value)].into_iter().collect();
/// let e = widen_to_i64_replacing(&Expr::add(t, Expr::i32(1)), &values);
/// assert_eq!(e.to_string(), "((int64(x) * (int64)65536) + (int64)1)");
/// ```
pub fn widen_to_i64_replacing(e: &Expr, values: &HashMap<Name, Expr>) -> Expr {
    Widener { renamed: HashMap::new(), outside: Some(values) }.widen(e)
}

struct Widener<'a> {
    /// Let names whose value was widened, with the name of the 64-bit copy.
    renamed: HashMap<Name, Name>,
    /// Names bound outside the expression, with their values in 64 bits.
    outside: Option<&'a HashMap<Name, Expr>>,
}

impl Widener<'_> {
    fn widen(&mut self, e: &Expr) -> Expr {
        crate::ir::stack::guard(|| self.widen_node(e))
    }

    fn widen_node(&mut self, e: &Expr) -> Expr {
        let ty = e.ty();
        if ty.is_vector() || !ty.is_int_or_uint() {
            return e.clone();
        }
        if ty == Type::i64() {
            return e.clone();
        }
        if ty != Type::i32() {
            // Narrower integers (and uint32) convert exactly.
            return Expr::cast(Type::i64(), e.clone());
        }
        let k = e.kind();
        match k {
            ExprKind::IntImm(v) => Expr::int_imm(Type::i64(), *v),
            ExprKind::Var { name, binding: VarBinding::Plain } if self.renamed.contains_key(name) => {
                Expr::var(Type::i64(), self.renamed[name].clone())
            }
            ExprKind::Var { name, binding: VarBinding::Plain }
                if self.outside.is_some_and(|o| o.contains_key(name)) =>
            {
                self.outside.expect("checked")[name].clone()
            }
            ExprKind::Binary(
                op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Min | BinOp::Max),
                a,
                b,
            ) => Expr::binary(*op, self.widen(a), self.widen(b)),
            ExprKind::Select(c, a, b) => Expr::select(c.clone(), self.widen(a), self.widen(b)),
            ExprKind::Cast(inner) if inner.ty().is_scalar() && inner.ty().bits < 32 => {
                Expr::cast(Type::i64(), inner.clone())
            }
            ExprKind::Let { name, value, body } => {
                let wide_name: Name = format!("{name}.wide").into();
                let value = self.widen(value);
                let previous = self.renamed.insert(name.clone(), wide_name.clone());
                let body = self.widen(body);
                match previous {
                    Some(p) => self.renamed.insert(name.clone(), p),
                    None => self.renamed.remove(name),
                };
                Expr::let_in(wide_name, value, body)
            }
            _ => Expr::cast(Type::i64(), e.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::test_eval::{Env, Eval};
    use crate::ir::semantics::Scalar;

    fn eval_i64(e: &Expr, vars: &[(&str, i64)]) -> i64 {
        let env: Env = vars.iter().map(|(n, v)| (Name::from(*n), vec![Scalar::Int(*v)])).collect();
        match Eval::new().eval(e, &env)[..] {
            [Scalar::Int(v)] => v,
            ref other => panic!("{other:?}"),
        }
    }

    #[test]
    fn products_that_wrap_in_32_bits_are_exact() {
        let x = Expr::var(Type::i32(), "x");
        let e = Expr::sub(Expr::mul(x.clone(), Expr::i32(65536)), Expr::i32(1));
        let w = widen_to_i64(&e);
        assert_eq!(eval_i64(&w, &[("x", 65536)]), 65536 * 65536 - 1);
    }

    #[test]
    fn lets_are_widened_with_their_uses() {
        let x = Expr::var(Type::i32(), "x");
        let t = Expr::var(Type::i32(), "t");
        let e = Expr::let_in("t", Expr::mul(x, Expr::i32(1 << 20)), Expr::add(t.clone(), t));
        let w = widen_to_i64(&e);
        assert_eq!(eval_i64(&w, &[("x", 4096)]), 2 * (4096i64 << 20));
    }
}
