//! Loads and stores, printed by the access pattern [`crate::analysis::access`] finds for
//! their index: dense vector accesses from the first lane's address, strided and clamped
//! ones without an index vector, lookup tables gathered with narrow indices, and dense
//! stores to write-only outputs streamed around the caches (see
//! [`crate::backend::c::streaming`]).

use super::{internal, Printer, Spelled};
use crate::analysis::access::{self, classify_access, AccessPattern, FirstLane, InRange, Narrow, Offset, Uniform};
use crate::backend::c::streaming::CACHE_LINE_BYTES;
use crate::backend::c_like::printer as core;
use crate::backend::c_like::syntax::{index_symbol, paren, strip_parens};
use crate::error::Result;
use crate::ir::{BinOp, Expr, Name, Type};

impl Printer {
    /// The C text, in 64 bits, of the first lane of an index vector (see
    /// [`core::index_c`] for why 64 bits).
    pub(super) fn first_lane_c(&mut self, first: &FirstLane) -> Result<String> {
        core::nested(
            self,
            |_| "int64_t".to_string(),
            |p| match first {
                FirstLane::Expr(e) => core::index_c(p, e),
                FirstLane::Let(name) => match &p.lookup_var(name)?.spelled {
                    Spelled::Base(base) | Spelled::Clamped(_, base) => Ok(base.clone()),
                    Spelled::Scalar(u) => Ok(format!("(int64_t){u}")),
                    _ => Err(internal(format!("'{name}' is not a vector of evenly spaced indices"))),
                },
                FirstLane::Binary(op, a, b) => {
                    Ok(format!("({} {} {})", p.first_lane_c(a)?, index_symbol(*op), p.first_lane_c(b)?))
                }
            },
        )
    }

    /// `start` with the scalar terms of `offset` added or subtracted in order.
    fn offset_c(&mut self, start: String, offset: &Offset) -> Result<String> {
        offset.iter().try_fold(start, |acc, (op, term)| {
            let sym = if *op == BinOp::Add { "+" } else { "-" };
            Ok(format!("({acc} {sym} {})", self.first_lane_c(term)?))
        })
    }

    /// The C text of the scalar a uniform vector repeats.
    pub(super) fn uniform_c(&mut self, u: &Uniform) -> Result<String> {
        match u {
            Uniform::Expr(e) => core::expr(self, e),
            Uniform::Let(name) => match &self.lookup_var(name)?.spelled {
                Spelled::Scalar(u) => Ok(u.clone()),
                _ => Err(internal(format!("'{name}' is not a broadcast"))),
            },
        }
    }

    /// The C conditions under which no lane of a clamped index is clamped.
    pub(super) fn in_range_c(&mut self, in_range: &[InRange]) -> Result<Vec<String>> {
        let mut conds = Vec::new();
        for c in in_range {
            match c {
                InRange::Below { first, last, bound } => {
                    let bound = self.uniform_c(bound)?;
                    let base = self.first_lane_c(first)?;
                    conds.push(format!("(int64_t)({base}) + {last} <= (int64_t)({bound})"));
                }
                InRange::Above { first, bound } => {
                    let bound = self.uniform_c(bound)?;
                    let base = self.first_lane_c(first)?;
                    conds.push(format!("({base}) >= ({bound})"));
                }
                InRange::Let(name) => match &self.lookup_var(name)?.spelled {
                    Spelled::Clamped(c, _) => conds.extend(c.iter().cloned()),
                    _ => return Err(internal(format!("'{name}' is not a clamped index"))),
                },
            }
        }
        Ok(conds)
    }

    /// Whether a dense store of `t` at `index` to an output that may stream does (see
    /// [`crate::backend::c::streaming`]): the vector is a whole number of 16-byte blocks, the innermost
    /// serial loop around it steps the index by exactly one vector over at least a cache
    /// line's worth of iterations, so that successive iterations fill each cache line whole
    /// and in order (a streamed line written in parts, with other stores in between, costs
    /// a partial write to memory for each part), and that loop does little work per byte
    /// it stores.
    fn streams(&self, index: &Expr, t: Type) -> bool {
        let bytes = t.lanes as usize * t.element().bytes();
        if t.element().is_bool() || !bytes.is_multiple_of(16) {
            return false;
        }
        let Some(innermost) = self.f.loops.last() else { return false };
        let run = innermost.extent.map_or(i64::MAX, |e| e.saturating_mul(bytes as i64));
        innermost.work.streams()
            && run >= CACHE_LINE_BYTES
            && self.lookup_var(&innermost.name).ok().and_then(|v| access::step_along(index, &v.name, v.ty, &self.f))
                == Some(t.lanes as i64)
    }

    /// A store of `value` at `index`, printed by its access pattern: dense, strided,
    /// streaming or scattered, predicated.
    pub(super) fn store_c(
        &mut self,
        buffer: &Name,
        value: &Expr,
        index: &Expr,
        predicate: Option<&Expr>,
    ) -> Result<()> {
        let b = self.lookup_buf(buffer)?.clone();
        let vt = value.ty();
        if vt.element() != b.elem {
            return Err(internal(format!("store of {vt} to buffer '{buffer}' of {}", b.elem)));
        }
        let lanes = vt.lanes.max(index.ty().lanes).max(predicate.map_or(1, |p| p.ty().lanes));
        if lanes == 1 {
            let i = core::index_c(self, index)?;
            let v = core::expr(self, value)?;
            let v = if b.elem.is_bool() { format!("(uint8_t){v}") } else { strip_parens(&v).to_string() };
            let target = format!("{}[{}]", b.cname, strip_parens(&i));
            match predicate {
                Some(p) => {
                    let p = core::expr(self, p)?;
                    self.line(format!("if {} {target} = {v};", paren(&p)));
                }
                None => self.line(format!("{target} = {v};")),
            }
            return Ok(());
        }
        let t = b.elem.with_lanes(lanes);
        let v = core::operand(self, value, lanes)?;
        match predicate {
            None => match classify_access(index, lanes, &self.f) {
                AccessPattern::Affine { first, stride: 1 } => {
                    let base = self.first_lane_c(&first)?;
                    match b.stream.as_ref().filter(|_| self.streams(index, t)) {
                        Some(flag) => {
                            let st = self.helpers.store_stream(t);
                            self.line(format!("{st}({} + {base}, {v}, {flag});", b.cname));
                            self.f.streams = true;
                        }
                        None => {
                            let st = self.helpers.store_dense(t);
                            self.line(format!("{st}({} + {base}, {v});", b.cname));
                        }
                    }
                }
                AccessPattern::Affine { first, stride: s } if s != 0 && !b.elem.is_bool() => {
                    let base = self.first_lane_c(&first)?;
                    let st = self.helpers.store_strided(t);
                    self.line(format!("{st}({} + {base}, {s}, {v});", b.cname));
                }
                _ => {
                    let i = core::operand(self, index, lanes)?;
                    let st = self.helpers.store(t);
                    self.line(format!("{st}({}, {i}, {v});", b.cname));
                }
            },
            Some(p) => {
                let i = core::operand(self, index, lanes)?;
                let p = core::operand(self, p, lanes)?;
                let st = self.helpers.store_pred(t);
                self.line(format!("{st}({}, {i}, {v}, {p});", b.cname));
            }
        }
        Ok(())
    }

    /// A load of type `t` at `index`, printed by its access pattern: dense, strided,
    /// clamped, narrow-indexed, gathered, predicated.
    pub(super) fn load_c(&mut self, t: Type, buffer: &Name, index: &Expr, predicate: Option<&Expr>) -> Result<String> {
        let b = self.lookup_buf(buffer)?.clone();
        if t.element() != b.elem {
            return Err(internal(format!("load of {} from buffer '{buffer}' of {}", t.element(), b.elem)));
        }
        let lanes = t.lanes.max(index.ty().lanes);
        if lanes == 1 {
            let i = core::index_c(self, index)?;
            let ld = format!("{}[{}]", b.cname, strip_parens(&i));
            let ld = if b.elem.is_bool() { format!("({ld} != 0)") } else { ld };
            return Ok(match predicate {
                Some(p) => {
                    let p = core::expr(self, p)?;
                    format!("({p} ? {ld} : 0)")
                }
                None => ld,
            });
        }
        let vt = b.elem.with_lanes(lanes);
        match predicate {
            None => match classify_access(index, lanes, &self.f) {
                AccessPattern::Affine { first, stride: 1 } => {
                    let base = self.first_lane_c(&first)?;
                    let ld = self.helpers.load_dense(vt);
                    Ok(format!("{ld}({} + {base})", b.cname))
                }
                AccessPattern::Affine { first, stride } if !b.elem.is_bool() => {
                    // Evenly spaced lanes: one scalar load for a broadcast, dense loads and
                    // a shuffle for every other element, one load per lane otherwise; never
                    // an index vector.
                    let base = self.first_lane_c(&first)?;
                    Ok(match stride {
                        0 => {
                            let bc = self.helpers.broadcast(vt);
                            format!("{bc}({}[{}])", b.cname, strip_parens(&base))
                        }
                        2 if lanes.is_power_of_two() => {
                            let ld = self.helpers.load_stride_two(vt);
                            format!("{ld}({} + {base})", b.cname)
                        }
                        s => {
                            let ld = self.helpers.load_strided(vt);
                            format!("{ld}({} + {base}, {s})", b.cname)
                        }
                    })
                }
                AccessPattern::ClampedDense { first, in_range } => {
                    // A clamped ramp (a boundary condition) is dense away from the edges:
                    // test that with scalars and load densely there.
                    let conds = self.in_range_c(&in_range)?;
                    let base = self.first_lane_c(&first)?;
                    let ldd = self.helpers.load_dense(vt);
                    let i = core::operand(self, index, lanes)?;
                    let ld = self.helpers.load(vt);
                    Ok(format!("(({}) ? {ldd}({} + {base}) : {ld}({}, {i}))", conds.join(" && "), b.cname, b.cname))
                }
                AccessPattern::NarrowIndex { narrow, narrow_ty, offset } => {
                    // A lookup table indexed by narrow pixels: gather with those directly.
                    let o = self.offset_c("0".to_string(), &offset)?;
                    let i = match narrow {
                        Narrow::Expr(a) => core::operand(self, &a, lanes)?,
                        Narrow::Let(name) => match &self.lookup_var(&name)?.spelled {
                            Spelled::Narrow(n) => n.clone(),
                            _ => return Err(internal(format!("'{name}' is not a widened vector"))),
                        },
                    };
                    let ld = self.helpers.load_narrow_index(vt, narrow_ty);
                    Ok(format!("{ld}({} + {o}, {i})", b.cname))
                }
                AccessPattern::Quotient(q) if !b.elem.is_bool() => {
                    // Lane 0 at ⌊a / k⌋ + offset, the lanes' distances from it from a mod k,
                    // for the dividend's first lane a (in 64 bits: it never wraps).
                    let a = self.first_lane_c(&q.numerator)?;
                    let k = q.divisor;
                    let (first, rem) = if k & (k - 1) == 0 {
                        (format!("({a} >> {})", k.trailing_zeros()), format!("(int32_t)({a} & {})", k - 1))
                    } else {
                        (format!("h_div_i64({a}, {k})"), format!("(int32_t)h_mod_i64({a}, {k})"))
                    };
                    let first = self.offset_c(first, &q.offset)?;
                    let ld = self.helpers.load_quotient(vt);
                    Ok(format!("{ld}({} + {first}, {rem}, {}, {k})", b.cname, q.stride))
                }
                pattern => {
                    // A window within one vector's width (up-sampling) is one dense load and
                    // a shuffle where the target has both; anything else is a gather.
                    let window = match pattern {
                        AccessPattern::Window { .. } if !b.elem.is_bool() => self.helpers.load_window(vt),
                        _ => None,
                    };
                    let i = core::operand(self, index, lanes)?;
                    let ld = window.unwrap_or_else(|| self.helpers.load(vt));
                    Ok(format!("{ld}({}, {i})", b.cname))
                }
            },
            Some(p) => {
                let i = core::operand(self, index, lanes)?;
                let p = core::operand(self, p, lanes)?;
                let ld = self.helpers.load_pred(vt);
                Ok(format!("{ld}({}, {i}, {p})", b.cname))
            }
        }
    }
}
