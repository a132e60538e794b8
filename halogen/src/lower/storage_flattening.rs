//! Pass 5: allocation and storage flattening. Each `Realize` becomes one `Allocate` per
//! value with named shape (`f.min.d`, `f.extent.d`, `f.stride.d`); multi-dimensional
//! `Provide` and calls become flat `Store` and `Load`s on those buffers, on the output
//! buffers and on the input images (whose shapes are bound when the pipeline runs).

use super::environment::{buffer_name, buffer_names, Environment};
use crate::error::Result;
use crate::ir::stack;
use crate::ir::{
    mutate_expr_children, mutate_stmt_children, CallKind, Expr, ExprKind, Fold, MsgPart, Mutator, Name, Stmt, Type,
};
use std::collections::HashMap;

fn sym(name: &str, what: &str, d: usize) -> Expr {
    Expr::var(Type::i32(), format!("{name}.{what}.{d}"))
}

fn shape_param(name: &str, what: &str, d: usize) -> Expr {
    Expr::param(Type::i32(), format!("{name}.{what}.{d}"))
}

struct Flatten<'a> {
    env: &'a Environment,
    /// Funcs whose storage is allocated here (shape symbols are lets, not parameters).
    internal: HashMap<Name, Option<Fold>>,
    counter: usize,
}

impl Flatten<'_> {
    /// Flat index of `args` into the storage of `name`.
    fn index(&self, name: &str, args: &[Expr], is_image: bool) -> Expr {
        let fold = self.internal.get(name).copied().flatten();
        let internal = self.internal.contains_key(name);
        let mut idx: Option<Expr> = None;
        for (d, a) in args.iter().enumerate() {
            let (min, stride) = if internal {
                (sym(name, "min", d), sym(name, "stride", d))
            } else if d == 0 {
                // Inputs and outputs are dense in dimension 0 (checked on entry), so
                // vector accesses along it are dense loads and stores.
                (shape_param(name, "min", d), Expr::i32(1))
            } else {
                let _ = is_image;
                (shape_param(name, "min", d), shape_param(name, "stride", d))
            };
            let offset = match fold {
                Some(f) if f.dim == d => Expr::rem(a.clone(), Expr::i32(f.factor)),
                _ => Expr::sub(a.clone(), min),
            };
            let term = Expr::mul(offset, stride);
            idx = Some(match idx {
                Some(i) => Expr::add(i, term),
                None => term,
            });
        }
        idx.unwrap_or_else(|| Expr::i32(0))
    }
}

impl Mutator for Flatten<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        stack::guard(|| match e.kind() {
            ExprKind::Call { name, args, kind: CallKind::Func { value_index, tuple, .. } } => {
                let args: Vec<Expr> = args.iter().map(|a| self.mutate_expr(a)).collect();
                let buf = buffer_name(name, *value_index, *tuple);
                let index = self.index(name, &args, false);
                Expr::load(e.ty(), buf, index, None)
            }
            ExprKind::Call { name, args, kind: CallKind::Image } => {
                let args: Vec<Expr> = args.iter().map(|a| self.mutate_expr(a)).collect();
                let index = self.index(name, &args, true);
                Expr::load(e.ty(), name.clone(), index, None)
            }
            _ => mutate_expr_children(self, e),
        })
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| {
            match s {
                Stmt::Realize { name, types, bounds, fold, body } => {
                    let f = &self.env.funcs[name];
                    let fold = *fold;
                    let old = self.internal.insert(name.clone(), fold);
                    let body = self.mutate_stmt(body);
                    match old {
                        Some(o) => self.internal.insert(name.clone(), o),
                        None => self.internal.remove(name),
                    };
                    let dims = bounds.len();
                    // Storage order: the user's, else the definition's (dimension 0 innermost).
                    let order: Vec<usize> = if f.schedule.storage_order.is_empty() {
                        (0..dims).collect()
                    } else {
                        let mut o: Vec<usize> = f
                            .schedule
                            .storage_order
                            .iter()
                            .filter_map(|v| f.args.iter().position(|a| a == v))
                            .collect();
                        for d in 0..dims {
                            if !o.contains(&d) {
                                o.push(d);
                            }
                        }
                        o
                    };
                    let alloc_extent = |d: usize| match fold {
                        Some(fo) if fo.dim == d => Expr::i32(fo.factor),
                        _ => sym(name, "extent", d),
                    };
                    let extents: Vec<Expr> = order.iter().map(|&d| alloc_extent(d)).collect();
                    let mut out = body;
                    for (i, buf) in buffer_names(name, types.len()).into_iter().enumerate().rev() {
                        out = Stmt::Allocate { name: buf, ty: types[i], extents: extents.clone(), body: Box::new(out) };
                    }
                    // Strides follow the storage order; wrap the lets from the inside out.
                    let mut lets: Vec<(String, Expr)> = Vec::new();
                    for (d, r) in bounds.iter().enumerate() {
                        lets.push((format!("{name}.min.{d}"), r.min.clone()));
                        lets.push((format!("{name}.extent.{d}"), r.extent.clone()));
                    }
                    let mut stride = Expr::i32(1);
                    for &d in &order {
                        lets.push((format!("{name}.stride.{d}"), stride.clone()));
                        stride = Expr::mul(sym(name, "stride", d), alloc_extent(d));
                    }
                    for (n, v) in lets.into_iter().rev() {
                        out = Stmt::let_stmt(n, v, out);
                    }
                    out
                }
                Stmt::Transfer { op, peer, buffer, mins, extents, strides, .. } if strides.is_empty() => {
                    // One transfer per value's buffer, at the flat index of the box's first
                    // element, with the strides of the storage (a fold never reaches here:
                    // a distributed Func is stored at the root).
                    let f = &self.env.funcs[buffer];
                    let mins: Vec<Expr> = mins.iter().map(|a| self.mutate_expr(a)).collect();
                    let index = self.index(buffer, &mins, false);
                    let internal = self.internal.contains_key(buffer);
                    let strides: Vec<Expr> = (0..mins.len())
                        .map(|d| match (internal, d) {
                            (true, _) => sym(buffer, "stride", d),
                            (false, 0) => Expr::i32(1),
                            (false, _) => shape_param(buffer, "stride", d),
                        })
                        .collect();
                    let names = f.buffer_names();
                    Stmt::block(
                        names
                            .into_iter()
                            .zip(&f.types)
                            .map(|(b, ty)| Stmt::Transfer {
                                op: *op,
                                peer: peer.clone(),
                                buffer: b,
                                ty: *ty,
                                mins: vec![index.clone()],
                                extents: extents.clone(),
                                strides: strides.clone(),
                            })
                            .collect(),
                    )
                }
                Stmt::Provide { name, values, args } => {
                    let args: Vec<Expr> = args.iter().map(|a| self.mutate_expr(a)).collect();
                    let values: Vec<Expr> = values.iter().map(|v| self.mutate_expr(v)).collect();
                    let index = self.index(name, &args, false);
                    let bufs = buffer_names(name, values.len());
                    if values.len() == 1 {
                        return Stmt::Store {
                            buffer: bufs[0].clone(),
                            value: values[0].clone(),
                            index,
                            predicate: None,
                        };
                    }
                    // Every value of a tuple is computed before any is stored, since later
                    // values may read earlier ones at the same site.
                    self.counter += 1;
                    let names: Vec<String> =
                        (0..values.len()).map(|i| format!("{name}.value{}.{i}", self.counter)).collect();
                    let stores: Vec<Stmt> = bufs
                        .iter()
                        .zip(&names)
                        .zip(&values)
                        .map(|((b, n), v)| Stmt::Store {
                            buffer: b.clone(),
                            value: Expr::var(v.ty(), n.as_str()),
                            index: index.clone(),
                            predicate: None,
                        })
                        .collect();
                    let mut out = Stmt::block(stores);
                    for (n, v) in names.iter().zip(values).rev() {
                        out = Stmt::let_stmt(n.as_str(), v, out);
                    }
                    out
                }
                _ => mutate_stmt_children(self, s),
            }
        })
    }
}

/// Runs storage flattening.
pub fn storage_flattening(s: Stmt, env: &Environment) -> Result<Stmt> {
    let mut fl = Flatten { env, internal: HashMap::new(), counter: 0 };
    let body = fl.mutate_stmt(&s);
    // Halide's default constraint: every input and output has stride 1 in dimension 0.
    let images = env.images.iter().filter(|(_, u)| u.dims > 0).map(|(n, _)| n);
    let outputs = env.outputs.iter().filter(|o| !env.funcs[*o].args.is_empty());
    let mut external: Vec<&Name> = images.chain(outputs).collect();
    external.sort();
    let mut all: Vec<Stmt> = external
        .into_iter()
        .map(|name| {
            let stride = shape_param(name, "stride", 0);
            Stmt::Assert {
                condition: Expr::eq_(stride.clone(), Expr::i32(1)),
                message: vec![
                    MsgPart::Text(format!(
                        "Buffer '{name}' must be dense in dimension 0 (stride 1), but its stride is "
                    )),
                    MsgPart::Value(stride),
                ],
            }
        })
        .collect();
    // The values of a tuple-valued output are stored with the Func's shape (its first
    // buffer's), so the others must have that shape too.
    for o in &env.outputs {
        let f = &env.funcs[o];
        if f.types.len() < 2 {
            continue;
        }
        for (i, b) in f.buffer_names().iter().enumerate().skip(1) {
            for d in 0..f.args.len() {
                let fields = ["min", "extent", "stride"];
                let same = fields
                    .iter()
                    .map(|w| Expr::eq_(shape_param(b, w, d), shape_param(o, w, d)))
                    .reduce(Expr::and)
                    .expect("three fields");
                let mut message = vec![MsgPart::Text(format!(
                    "Output buffer {i} of Func '{o}' must have the shape of buffer 0 (the buffers of a tuple-valued \
                     output are stored alike), but in dimension {d} it has min "
                ))];
                for (k, w) in fields.iter().enumerate() {
                    if k > 0 {
                        message.push(MsgPart::Text(format!(", {w} ")));
                    }
                    message.push(MsgPart::Value(shape_param(b, w, d)));
                }
                message.push(MsgPart::Text(" against min ".into()));
                for (k, w) in fields.iter().enumerate() {
                    if k > 0 {
                        message.push(MsgPart::Text(format!(", {w} ")));
                    }
                    message.push(MsgPart::Value(shape_param(o, w, d)));
                }
                all.push(Stmt::Assert { condition: same, message });
            }
        }
    }
    all.push(body);
    Ok(Stmt::block(all))
}
