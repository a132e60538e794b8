//! Which Funcs are inlined: Algorithm 2 of Sioutas et al. (trivial stages, whose
//! computation costs about what loading them would) and the zero-overlap rule of
//! Algorithm 1 (a stage whose values its single consumer reads at most once gains
//! nothing from being stored).

use super::apply::reduction_iterations;
use super::footprint::{eval_range, propagate, volume, NumBox, Regions};
use super::graph::{Callee, Graph};
use crate::analysis::Scope;
use crate::ir::stack;
use crate::ir::Type;

/// `reaches[a][b]`: `a` reads `b`, directly or through other Funcs.
pub(crate) fn reachability(g: &Graph) -> Vec<Vec<bool>> {
    let n = g.nodes.len();
    let mut r = vec![vec![false; n]; n];
    for &i in &g.order {
        for c in &g.nodes[i].calls {
            if let Callee::Func(j) = c.callee {
                r[i][j] = true;
                let row = r[j].clone();
                for (x, y) in r[i].iter_mut().zip(row) {
                    *x |= y;
                }
            }
        }
    }
    r
}

/// The realized Funcs that read `i`'s values: its consumers, looking through inlined ones.
pub(crate) fn effective_consumers(g: &Graph, inlined: &[bool], i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack: Vec<usize> = g.nodes[i].consumers.clone();
    let mut seen = vec![false; g.nodes.len()];
    while let Some(c) = stack.pop() {
        if std::mem::replace(&mut seen[c], true) {
            continue;
        }
        if inlined[c] {
            stack.extend(g.nodes[c].consumers.iter().copied());
        } else {
            out.push(c);
        }
    }
    out.sort_unstable();
    out
}

/// Calls to `f` per point of stage `k` of `n`, counting those made through inlined Funcs.
fn calls_per_point(g: &Graph, inlined: &[bool], reaches: &[Vec<bool>], n: usize, k: usize, f: usize) -> f64 {
    stack::guard(|| {
        g.nodes[n]
            .calls
            .iter()
            .filter(|c| c.stage == k)
            .map(|c| match c.callee {
                Callee::Func(j) if j == f => 1.0,
                Callee::Func(j) if inlined[j] && reaches[j][f] => calls_per_point(g, inlined, reaches, j, 0, f),
                _ => 0.0,
            })
            .sum()
    })
}

/// True if the realized consumer `e` reads some value of `f` more than once (over its
/// whole estimated region, so that look-up tables read at data-dependent places count):
/// then inlining `f` would compute those values again.
fn reads_values_twice(
    g: &Graph,
    scope: &Scope,
    root: &Regions,
    inlined: &[bool],
    reaches: &[Vec<bool>],
    f: usize,
    e: usize,
) -> bool {
    let Some(region) = root.funcs[e].as_ref() else { return true };
    let probe: NumBox = region.clone();
    let fallback = |c: &Callee, d: usize| -> (i64, i64) {
        let r = match c {
            Callee::Func(j) => root.funcs[*j].as_ref(),
            Callee::Image(name) => root.images.get(name),
        };
        r.and_then(|r| r.get(d).copied()).unwrap_or((0, 0))
    };
    let expand = |n: usize| n == e || (inlined[n] && reaches[n][f]);
    let regions = propagate(g, scope, &[(e, probe.clone())], &expand, &fallback);
    let Some(fp) = regions.funcs[f].as_ref() else { return true };
    let footprint = volume(fp);
    let node = &g.nodes[e];
    let mut reads = 0.0;
    for (k, stage) in node.stages.iter().enumerate() {
        let per_point = calls_per_point(g, inlined, reaches, e, k, f);
        if per_point == 0.0 {
            continue;
        }
        let mut iters: f64 = stage.pure.iter().map(|(d, _)| (probe[*d].1 - probe[*d].0 + 1) as f64).product();
        for (_, _, extent) in &stage.rvars {
            match eval_range(extent, scope) {
                Some((_, hi)) => iters *= hi.max(1) as f64,
                None => return true,
            }
        }
        reads += iters * per_point;
    }
    reads > footprint * 1.05 + 0.5
}

/// True if `i` is a pointwise pair (`Ixy(x, y) = Ix(x, y) * Iy(x, y)`) whose producers the
/// pipeline downstream of it also reads another way (`Ixx` reads `Ix`, `Iyy` reads `Iy`,
/// and `harris` reads all three through the box sums): inlined, their loads are shared and
/// it costs its one or two operations, where storing it costs a store and a load per use
/// (Harris auto-scheduled: 10.2 -> 8.7 ms). Where a producer has no other reader (a
/// pyramid level blended with a mask), inlining adds loads, and `i` is left to Algorithm 1.
fn producers_read_anyway(g: &Graph, reaches: &[Vec<bool>], i: usize) -> bool {
    let n = &g.nodes[i];
    n.pointwise_pair
        && n.calls.iter().all(|c| {
            let Callee::Func(p) = c.callee else { return false };
            // Another reader of `p`, not downstream of `i`, that something downstream of
            // `i` also reads.
            g.nodes[p].consumers.iter().any(|&m| {
                m != i && !reaches[m][i] && (0..g.nodes.len()).any(|e| reaches[e][i] && (e == m || reaches[e][m]))
            })
        })
}

/// Decides which Funcs are inlined (consumers first, so each Func sees its final
/// consumers). Hand-scheduled Funcs keep what the user chose.
pub(crate) fn decide_inlining(g: &Graph, scope: &Scope, root: &Regions, reaches: &[Vec<bool>]) -> Vec<bool> {
    let mut inlined: Vec<bool> = g.nodes.iter().map(|n| n.fixed_inline).collect();
    for &i in g.order.iter().rev() {
        let n = &g.nodes[i];
        if n.fixed || n.is_output || n.has_updates() {
            continue;
        }
        // Algorithm 2: a trivial stage is cheaper to recompute than to store and load.
        if n.trivial || producers_read_anyway(g, reaches, i) {
            inlined[i] = true;
            continue;
        }
        // Algorithm 1: no overlap with its (single) consumer, nothing to reuse.
        let eff = effective_consumers(g, &inlined, i);
        if eff.len() == 1 && !reads_values_twice(g, scope, root, &inlined, reaches, i, eff[0]) {
            inlined[i] = true;
        }
    }
    inlined
}

/// Cost of one point of each Func with its inlined callees substituted. A pointwise
/// reduction's point costs its pure definition plus each update once per point of its
/// reduction domain (the work a consumer's tile pays when the reduction is computed in it).
pub(crate) fn effective_ops(g: &Graph, scope: &Scope, inlined: &[bool]) -> Vec<f64> {
    let mut ops = vec![0.0; g.nodes.len()];
    for &i in &g.order {
        let n = &g.nodes[i];
        let stages = if n.is_pointwise_reduction() { n.stages.len() } else { 1 };
        let mut o = 0.0;
        for k in 0..stages {
            let mut stage_ops = n.stage_ops[k];
            for c in n.calls.iter().filter(|c| c.stage == k) {
                if let Callee::Func(j) = c.callee {
                    if inlined[j] {
                        stage_ops += ops[j];
                    }
                }
            }
            let iterations = if k == 0 { 1.0 } else { reduction_iterations(&n.stages[k], scope, 16.0) };
            o += stage_ops * iterations;
        }
        ops[i] = o;
    }
    ops
}

/// The type that sets each Func's vector width with its inlined callees substituted: the
/// widest of its own and theirs (a `u8` output computing through an inlined `f32` Func
/// works in `f32` vectors).
pub(crate) fn effective_vector_types(g: &Graph, inlined: &[bool]) -> Vec<Type> {
    let mut types = vec![Type::i32(); g.nodes.len()];
    for &i in &g.order {
        let n = &g.nodes[i];
        let mut t = n.vector_type();
        for c in &n.calls {
            if let Callee::Func(j) = c.callee {
                if inlined[j] && types[j].element().bytes() > t.element().bytes() {
                    t = types[j];
                }
            }
        }
        types[i] = t;
    }
    types
}
