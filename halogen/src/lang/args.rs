//! Conversion of call and definition arguments (`(x, y)`, `[e0, e1]`, `vec![..]`, `()`)
//! into a list of expressions.

use super::var::{RDom, RVar, Var};
use crate::ir::Expr;

/// Anything that can be the argument list of a Func call or definition.
///
/// ```
/// use halogen::prelude::*;
/// let (x, y) = (Var::new("x"), Var::new("y"));
/// let f = Func::new("f");
/// f.def((x, y), x + y);
/// let _call: Expr = f.at((x - 1, y));
/// let _scalar = Func::new("s");
/// _scalar.def((), Expr::from(3));
/// ```
pub trait IntoArgs {
    /// The arguments as expressions, first dimension first.
    fn into_args(self) -> Vec<Expr>;
}

macro_rules! single_arg {
    ($($t:ty),*) => {$(
        impl IntoArgs for $t {
            fn into_args(self) -> Vec<Expr> {
                vec![Expr::from(self)]
            }
        }
    )*};
}
single_arg!(Var, &Var, RVar, &RVar, RDom, Expr, &Expr, i32);

impl IntoArgs for () {
    fn into_args(self) -> Vec<Expr> {
        Vec::new()
    }
}

impl IntoArgs for Vec<Expr> {
    fn into_args(self) -> Vec<Expr> {
        self
    }
}

impl IntoArgs for &[Expr] {
    fn into_args(self) -> Vec<Expr> {
        self.to_vec()
    }
}

impl IntoArgs for Vec<Var> {
    fn into_args(self) -> Vec<Expr> {
        self.into_iter().map(Expr::from).collect()
    }
}

impl IntoArgs for &[Var] {
    fn into_args(self) -> Vec<Expr> {
        self.iter().map(Expr::from).collect()
    }
}

impl<T: Into<Expr>, const N: usize> IntoArgs for [T; N] {
    fn into_args(self) -> Vec<Expr> {
        self.into_iter().map(Into::into).collect()
    }
}

macro_rules! tuple_args {
    ($($name:ident),+) => {
        impl<$($name: Into<Expr>),+> IntoArgs for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_args(self) -> Vec<Expr> {
                let ($($name,)+) = self;
                vec![$($name.into()),+]
            }
        }
    };
}
tuple_args!(A);
tuple_args!(A, B);
tuple_args!(A, B, C);
tuple_args!(A, B, C, D);
tuple_args!(A, B, C, D, E);
tuple_args!(A, B, C, D, E, F);
