//! Test support: a lane-wise evaluator of expressions (through `ir::semantics`, like the
//! interpreter) and a generator of random typed expressions.

use crate::ir::semantics::{self, Scalar};
use crate::ir::{BinOp, CallKind, CmpOp, Expr, ExprKind, Intrinsic, Name, Type};
use std::collections::HashMap;

/// Variable values by name (one entry per lane).
pub(crate) type Env = HashMap<Name, Vec<Scalar>>;

/// The result of an evaluation, and whether some `Int(32)`/`Int(64)` operation
/// overflowed on the way (where the simplifier may assume it does not).
pub(crate) struct Eval {
    pub overflowed: bool,
    /// Whether a float operation produced a NaN somewhere.
    pub nan_seen: bool,
}

/// A deterministic stand-in for memory: the value at `buffer[index]`.
fn memory(buffer: &str, index: i64, ty: Type) -> Scalar {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in buffer.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h = (h ^ index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^= h >> 29;
    if ty.is_float() {
        Scalar::Float(((h % 2001) as f64 - 1000.0) / 8.0)
    } else {
        Scalar::Int(ty.wrap_int(h as i64))
    }
}

fn no_overflow(ty: Type) -> bool {
    ty.element().is_int() && ty.bits >= 32
}

/// True if `op` on `a`, `b` (of the no-overflow type `ty`) leaves the type's range.
fn overflows(op: BinOp, ty: Type, a: i64, b: i64) -> bool {
    let (a, b) = (a as i128, b as i128);
    let exact = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div if b == -1 => -a,
        BinOp::Shl => {
            let amt = (b as u64 & (ty.bits as u64 - 1)) as u32;
            a * (1i128 << amt)
        }
        _ => return false,
    };
    let lo = -(1i128 << (ty.bits - 1));
    exact < lo || exact > -lo - 1
}

impl Eval {
    pub(crate) fn new() -> Eval {
        Eval { overflowed: false, nan_seen: false }
    }

    /// The lanes of `e` with the variables of `env`.
    pub(crate) fn eval(&mut self, e: &Expr, env: &Env) -> Vec<Scalar> {
        let r = self.eval_node(e, env);
        self.nan_seen |= r.iter().any(|v| matches!(v, Scalar::Float(f) if f.is_nan()));
        r
    }

    fn eval_node(&mut self, e: &Expr, env: &Env) -> Vec<Scalar> {
        let ty = e.ty();
        let el = ty.element();
        let lanes = ty.lanes as usize;
        match e.kind() {
            ExprKind::IntImm(v) => vec![Scalar::Int(*v)],
            ExprKind::FloatImm(b) => vec![Scalar::Float(b.get())],
            ExprKind::Var { name, .. } => {
                let v = env.get(name).unwrap_or_else(|| panic!("unbound variable {name}"));
                if v.len() == lanes {
                    v.clone()
                } else {
                    vec![v[0]; lanes]
                }
            }
            ExprKind::Cast(a) => {
                let from = a.ty().element();
                self.eval(a, env).into_iter().map(|v| semantics::cast(from, el, v)).collect()
            }
            ExprKind::Binary(op, a, b) => {
                let at = a.ty().element();
                let (x, y) = (self.eval(a, env), self.eval(b, env));
                x.into_iter()
                    .zip(y)
                    .map(|(p, q)| {
                        if no_overflow(at) {
                            if let (Scalar::Int(p), Scalar::Int(q)) = (p, q) {
                                self.overflowed |= overflows(*op, at, p, q);
                            }
                        }
                        semantics::binary(*op, at, p, q)
                    })
                    .collect()
            }
            ExprKind::Cmp(op, a, b) => {
                let at = a.ty().element();
                let (x, y) = (self.eval(a, env), self.eval(b, env));
                x.into_iter().zip(y).map(|(p, q)| Scalar::Int(semantics::compare(*op, at, p, q) as i64)).collect()
            }
            ExprKind::Not(a) => self.eval(a, env).into_iter().map(semantics::not).collect(),
            ExprKind::Select(c, t, f) => {
                let (c, t, f) = (self.eval(c, env), self.eval(t, env), self.eval(f, env));
                (0..lanes).map(|i| if c[i.min(c.len() - 1)].is_true() { t[i] } else { f[i] }).collect()
            }
            ExprKind::Load { buffer, index, predicate } => {
                let idx = self.eval(index, env);
                let p = predicate.as_ref().map(|p| self.eval(p, env));
                (0..lanes)
                    .map(|i| {
                        if p.as_ref().is_some_and(|p| !p[i].is_true()) {
                            semantics::cast(Type::i32(), el, Scalar::Int(0))
                        } else {
                            memory(buffer, idx[i].as_i64(), el)
                        }
                    })
                    .collect()
            }
            ExprKind::Ramp { base, stride, lanes } => {
                let (b, s) = (self.eval(base, env)[0], self.eval(stride, env)[0]);
                (0..*lanes as i64)
                    .map(|i| {
                        let k = semantics::cast(Type::i64(), el, Scalar::Int(i));
                        let step = semantics::binary(BinOp::Mul, el, s, k);
                        if no_overflow(el) {
                            if let (Scalar::Int(s), Scalar::Int(k), Scalar::Int(st), Scalar::Int(b)) = (s, k, step, b) {
                                self.overflowed |= overflows(BinOp::Mul, el, s, k) || overflows(BinOp::Add, el, b, st);
                            }
                        }
                        semantics::binary(BinOp::Add, el, b, step)
                    })
                    .collect()
            }
            ExprKind::Broadcast { value, lanes } => vec![self.eval(value, env)[0]; *lanes as usize],
            ExprKind::Let { name, value, body } => {
                let v = self.eval(value, env);
                let mut env2 = env.clone();
                env2.insert(name.clone(), v);
                self.eval(body, &env2)
            }
            ExprKind::Call { name, args, kind } => {
                let vals: Vec<Vec<Scalar>> = args.iter().map(|a| self.eval(a, env)).collect();
                let arg_types: Vec<Type> = args.iter().map(|a| a.ty().element()).collect();
                (0..lanes)
                    .map(|i| {
                        let lane: Vec<Scalar> = vals.iter().map(|v| v[i.min(v.len() - 1)]).collect();
                        match kind {
                            CallKind::Intrinsic(w) => semantics::intrinsic(*w, &arg_types, el, &lane),
                            _ => memory(
                                name,
                                lane.iter().fold(0i64, |h, v| h.wrapping_mul(31).wrapping_add(v.as_i64())),
                                el,
                            ),
                        }
                    })
                    .collect()
            }
        }
    }
}

/// Equality of lanes: integers exactly, floats bit for bit (any NaN equals any NaN: NaN
/// payloads are not part of the semantics).
pub(crate) fn same_lanes(a: &[Scalar], b: &[Scalar]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Scalar::Float(p), Scalar::Float(q)) => p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()),
            _ => x == y,
        })
}

/// A small deterministic random number generator (splitmix64).
pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n`.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.below((hi - lo + 1) as u64) as i64)
    }
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub(crate) fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize].clone()
    }
}

/// Integer types the generator uses.
pub(crate) const INT_TYPES: [Type; 7] =
    [Type::i8(), Type::i16(), Type::i32(), Type::i64(), Type::u8(), Type::u16(), Type::u32()];

/// The name of generated variable `k` of type `ty`.
pub(crate) fn var_name(ty: Type, k: usize) -> String {
    format!("{}{}", ["a", "b", "c"][k], ty.element())
}

/// Random expressions of a given type over variables `a<ty>`, `b<ty>`, `c<ty>`.
pub(crate) struct Gen<'a> {
    pub rng: &'a mut Rng,
    /// Let-bound names usable here, with their types.
    pub lets: Vec<(Name, Type)>,
    pub next_let: usize,
    /// Whether floats may appear.
    pub floats: bool,
    /// Whether only "coordinate" operators appear (no bit operations or casts).
    pub simple: bool,
    /// Whether Int(32)/Int(64) constants stay far from the type's limits (where the
    /// simplifier assumes no overflow); other types get extreme values regardless.
    pub small_consts: bool,
}

impl Gen<'_> {
    fn constant(&mut self, ty: Type) -> Expr {
        let el = ty.element();
        let e = if el.is_float() {
            let v = self.rng.pick(&[0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, -2.5, 1e30, f64::INFINITY, f64::NAN, 0.1]);
            Expr::float_imm(el, v)
        } else if el.is_bool() {
            Expr::bool_imm(self.rng.chance(50))
        } else {
            let near_limits_ok = !(self.small_consts && el.is_int() && el.bits >= 32);
            let v = if !near_limits_ok || self.rng.chance(80) {
                self.rng.range(-9, 9)
            } else {
                self.rng.pick(&[
                    el.min_int().unwrap_or(0),
                    el.max_int().unwrap_or(-1),
                    16,
                    64,
                    255,
                    256,
                    1 << 15,
                    -(1 << 15),
                ])
            };
            Expr::int_imm(el, v)
        };
        if ty.is_vector() {
            Expr::broadcast(e, ty.lanes)
        } else {
            e
        }
    }

    fn leaf(&mut self, ty: Type) -> Expr {
        let lets: Vec<Name> = self.lets.iter().filter(|(_, t)| *t == ty).map(|(n, _)| n.clone()).collect();
        if !lets.is_empty() && self.rng.chance(30) {
            return Expr::var(ty, self.rng.pick(&lets));
        }
        if self.rng.chance(30) {
            return self.constant(ty);
        }
        let v = Expr::var(ty.element(), var_name(ty, self.rng.below(3) as usize));
        if ty.is_vector() {
            if self.rng.chance(50) && ty.element().is_int_or_uint() {
                let s = self.constant(ty.element());
                return Expr::ramp(v, s, ty.lanes);
            }
            return Expr::broadcast(v, ty.lanes);
        }
        v
    }

    /// A random expression of type `ty`, `depth` levels deep at most.
    pub(crate) fn expr(&mut self, ty: Type, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(15) {
            return self.leaf(ty);
        }
        let el = ty.element();
        let d = depth - 1;
        if el.is_bool() {
            return match self.rng.below(5) {
                0 | 1 => {
                    let t = self.operand_type(ty.lanes);
                    let op = self.rng.pick(&[CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge]);
                    let a = self.expr(t, d);
                    let b = self.expr(t, d);
                    Expr::cmp(op, a, b)
                }
                2 => {
                    let op = self.rng.pick(&[BinOp::And, BinOp::Or]);
                    let a = self.expr(ty, d);
                    let b = self.expr(ty, d);
                    Expr::binary(op, a, b)
                }
                3 => Expr::not(self.expr(ty, d)),
                _ => self.leaf_bool(ty),
            };
        }
        match self.rng.below(if self.simple { 11 } else { 14 }) {
            0..=6 => {
                let ops: &[BinOp] = if el.is_float() {
                    &[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod, BinOp::Min, BinOp::Max]
                } else if self.simple {
                    &[BinOp::Add, BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod, BinOp::Min, BinOp::Max]
                } else {
                    &[
                        BinOp::Add,
                        BinOp::Sub,
                        BinOp::Mul,
                        BinOp::Div,
                        BinOp::Mod,
                        BinOp::Min,
                        BinOp::Max,
                        BinOp::BitAnd,
                        BinOp::BitOr,
                        BinOp::BitXor,
                        BinOp::Shl,
                        BinOp::Shr,
                    ]
                };
                let op = self.rng.pick(ops);
                let a = self.expr(ty, d);
                // Constant right operands are what most rules look for.
                let b = if self.rng.chance(50) { self.constant(ty) } else { self.expr(ty, d) };
                Expr::binary(op, a, b)
            }
            7 => {
                let c = self.expr(Type::bool().with_lanes(ty.lanes), d);
                let t = self.expr(ty, d);
                let f = self.expr(ty, d);
                Expr::select(c, t, f)
            }
            8 | 9 => {
                let name: Name = format!("l{}", self.next_let).into();
                self.next_let += 1;
                let vt = if self.rng.chance(50) { ty } else { self.operand_type(ty.lanes) };
                let value = self.expr(vt, d);
                self.lets.push((name.clone(), vt));
                let body = self.expr(ty, d);
                self.lets.pop();
                Expr::let_in(name, value, body)
            }
            10 => {
                let from = self.operand_type(ty.lanes);
                if from.element().is_float() && !el.is_float() && self.simple {
                    return self.leaf(ty);
                }
                Expr::cast(ty, self.expr(from, d))
            }
            11 if el.is_float() => {
                let w = self.rng.pick(&[
                    Intrinsic::Floor,
                    Intrinsic::Ceil,
                    Intrinsic::Round,
                    Intrinsic::Trunc,
                    Intrinsic::Sqrt,
                    Intrinsic::Abs,
                ]);
                Expr::intrinsic(ty, w, vec![self.expr(ty, d)])
            }
            11 if el.is_uint() => {
                let st = Type::int(el.bits).with_lanes(ty.lanes);
                Expr::intrinsic(ty, Intrinsic::Abs, vec![self.expr(st, d)])
            }
            12 if el.is_int_or_uint() => Expr::intrinsic(ty, Intrinsic::BitNot, vec![self.expr(ty, d)]),
            _ => {
                let idx = self.expr(Type::i32().with_lanes(ty.lanes), d);
                let pred =
                    if self.rng.chance(30) { Some(self.expr(Type::bool().with_lanes(ty.lanes), d)) } else { None };
                Expr::load(el, "mem", idx, pred)
            }
        }
    }

    fn leaf_bool(&mut self, ty: Type) -> Expr {
        if self.rng.chance(40) {
            return self.constant(ty);
        }
        let t = self.operand_type(ty.lanes);
        let a = self.leaf(t);
        let b = self.leaf(t);
        Expr::lt(a, b)
    }

    /// A random non-bool operand type with `lanes` lanes.
    pub(crate) fn operand_type(&mut self, lanes: u16) -> Type {
        let t = if self.simple {
            Type::i32()
        } else if self.floats && self.rng.chance(20) {
            Type::f32()
        } else {
            self.rng.pick(&INT_TYPES)
        };
        t.with_lanes(lanes)
    }
}

/// Random values for the generated variables of every type (`lanes` 1).
pub(crate) fn random_env(rng: &mut Rng, small: bool) -> Env {
    let mut env = Env::new();
    let mut types = INT_TYPES.to_vec();
    types.push(Type::f32());
    types.push(Type::bool());
    for ty in types {
        for k in 0..3 {
            let v = if ty.is_bool() {
                Scalar::Int(rng.below(2) as i64)
            } else if ty.is_float() {
                Scalar::Float(rng.pick(&[0.0, -0.0, 1.5, -3.25, 7.0, 1e-3, 100.5, -1e20, f32::MAX as f64]) as f32 as f64)
            } else if small || rng.chance(70) {
                Scalar::Int(ty.wrap_int(rng.range(-20, 20)))
            } else {
                Scalar::Int(ty.wrap_int(rng.next() as i64))
            };
            env.insert(var_name(ty, k).into(), vec![v]);
        }
    }
    env
}

/// True if `e` holds an Int(32)/Int(64) constant near the type's limits: where such
/// constants appear, the no-overflow assumption of coordinate arithmetic is in play.
pub(crate) fn has_near_limit_const(e: &Expr) -> bool {
    let ty = e.ty().element();
    if let ExprKind::IntImm(v) = e.kind() {
        if ty.is_int() && ty.bits >= 32 && v.unsigned_abs() > 1u64 << (ty.bits - 2) {
            return true;
        }
    }
    let mut found = false;
    e.for_each_child(|c| found = found || has_near_limit_const(c));
    found
}
