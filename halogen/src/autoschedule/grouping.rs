//! Algorithms 4 and 5 of Sioutas et al. (stage grouping).
//!
//! Algorithm 4: a stage with more than one consumer starts a group of its own (with its
//! producers), and so does every stage that cannot live inside its consumer's loops (a
//! Func with update definitions other than a pointwise reduction, a consumer scheduled by
//! hand or with such updates) and every stage deeper than [`MAX_FUSION_DEPTH`] below its
//! group output. A pointwise reduction (an inline `sum` over a window: see
//! [`Node::is_pointwise_reduction`]) is a member like a pure Func, computed per tile of
//! its consumer instead of as a whole image through memory. Each group output is
//! computed at root; the rest of the group inside its loops.
//!
//! Algorithm 5: when no tiling of a group satisfies the cache constraints (or a stage of
//! it must be computed outside every loop of the output), the group is split: each stage
//! in turn becomes the output of a new group with its producers, the two parts are
//! scheduled recursively, and the split with the smallest total cost wins. The last
//! segment (the one ending in the output) is never split further than needed.

use super::apply::accumulator_width;
use super::footprint::{group_models, NumBox, Regions};
use super::fusion::Placement;
use super::graph::Graph;
#[cfg(doc)]
use super::graph::Node;
use super::inline::effective_consumers;
#[cfg(doc)]
use super::inline::effective_vector_types;
use super::tiling::{tile_group, GroupInput, Tiling};
use super::MachineParams;
use crate::analysis::Scope;
use crate::ir::stack;
use crate::ir::Type;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

/// Everything the planner reads.
pub(crate) struct Ctx<'a> {
    pub g: &'a Graph,
    pub scope: &'a Scope,
    pub root: &'a Regions,
    pub inlined: &'a [bool],
    pub ops: &'a [f64],
    pub m: &'a MachineParams,
    pub split_slides: bool,
    /// Region each group output covers (estimates for outputs, else what consumers need).
    pub regions: &'a BTreeMap<usize, NumBox>,
    /// Group evaluations left before the planner stops searching splits.
    pub budget: Cell<usize>,
    /// Every member's consumers (see [`Groups::consumers`]).
    pub consumers: &'a BTreeMap<usize, Vec<usize>>,
    /// The type that sets each Func's vector width (see [`effective_vector_types`]).
    pub vector_types: &'a [Type],
}

impl Ctx<'_> {
    /// Lanes of Func `f`'s vectors.
    pub fn lanes(&self, f: usize) -> usize {
        self.m.vector_lanes(self.vector_types[f])
    }
}

/// A group as scheduled.
#[derive(Clone, Debug)]
pub(crate) struct Planned {
    pub out: usize,
    /// Tiled nest and member placements; `None` for outputs without a tileable pure nest
    /// (update definitions, no dimensions) or without members worth tiling for.
    pub tiling: Option<Tiling>,
    /// Members with their placement and the lanes of the vectors along their innermost
    /// dimension (`None`: not vectorized).
    pub members: Vec<(usize, Placement, Option<usize>)>,
    /// Lanes of the output's vectors.
    pub lanes: usize,
    /// The vector width of each vectorized member reduction's updates (see
    /// [`super::apply::accumulator_width`]).
    pub update_widths: BTreeMap<usize, usize>,
}

/// The longest chain of stages computed inside one group output's loops. Lowering's
/// bounds inference grows about threefold with every stage fused at the same loop (a chain
/// of 9 stencils takes minutes to lower), so a deeper chain is cut: its next stage starts
/// a group of its own.
pub(crate) const MAX_FUSION_DEPTH: usize = 3;

/// The groups of Algorithm 4.
pub(crate) struct Groups {
    /// Group outputs, consumers first.
    pub outputs: Vec<usize>,
    /// Each member's consumer, the edge of the tree that Algorithm 5 splits along.
    pub consumer: BTreeMap<usize, usize>,
    /// Each member's consumers: one, or several members and the output of one group.
    pub consumers: BTreeMap<usize, Vec<usize>>,
}

/// Algorithm 4. A stage joins the group of its consumers when they all belong to one
/// group (a stage read by two stages of a group, such as harris' gradients read by both
/// the squared and the cross products, is computed inside that group's loops, outside
/// both readers); otherwise it starts a group of its own.
pub(crate) fn form_groups(g: &Graph, inlined: &[bool]) -> Groups {
    let mut consumer = BTreeMap::new();
    let mut consumers = BTreeMap::new();
    let mut depth: BTreeMap<usize, usize> = BTreeMap::new();
    let mut outputs = Vec::new();
    for &i in g.order.iter().rev() {
        let n = &g.nodes[i];
        if n.fixed || inlined[i] {
            continue;
        }
        if n.is_output || (n.has_updates() && !n.is_pointwise_reduction()) {
            outputs.push(i);
            continue;
        }
        let eff = effective_consumers(g, inlined, i);
        // A pointwise reduction is computed inside its group like a pure Func, so its
        // producers may join too; one that is a group output itself is not tiled.
        let fits_inside = !eff.is_empty()
            && eff.iter().all(|&c| {
                let e = &g.nodes[c];
                let tiled_inside = !e.has_updates() || (e.is_pointwise_reduction() && consumer.contains_key(&c));
                !e.fixed && tiled_inside && e.dims() > 0
            })
            && eff.iter().all(|&c| group_of(&consumer, c) == group_of(&consumer, eff[0]));
        let d =
            if fits_inside { eff.iter().map(|c| depth.get(c).copied().unwrap_or(0)).max().unwrap_or(0) + 1 } else { 0 };
        if fits_inside && d <= MAX_FUSION_DEPTH {
            consumer.insert(i, eff[0]);
            consumers.insert(i, eff);
            depth.insert(i, d);
        } else {
            outputs.push(i);
        }
    }
    Groups { outputs, consumer, consumers }
}

/// The group output a member ends up in.
pub(crate) fn group_of(consumer: &BTreeMap<usize, usize>, mut i: usize) -> usize {
    while let Some(&c) = consumer.get(&i) {
        i = c;
    }
    i
}

/// Plans group `out` with these members (consumers first); splits it if it must.
pub(crate) fn plan(ctx: &Ctx<'_>, out: usize, members: &[usize], consumer: &BTreeMap<usize, usize>) -> Vec<Planned> {
    stack::guard(|| {
        let g = ctx.g;
        let node = &g.nodes[out];
        if node.has_updates() || node.dims() == 0 {
            // Not tiled; members cannot exist (Algorithm 4 made them groups of their own,
            // and a pointwise reduction is never the point a group is split at).
            debug_assert!(members.is_empty());
            return vec![Planned {
                out,
                tiling: None,
                members: Vec::new(),
                lanes: ctx.lanes(out),
                update_widths: BTreeMap::new(),
            }];
        }
        if let Some(p) = try_tile(ctx, out, members, consumer) {
            return vec![p];
        }
        // Algorithm 5: split off the producers of some member.
        let mut best: Option<(f64, Vec<Planned>)> = None;
        for &m in members {
            if ctx.budget.get() == 0 {
                break;
            }
            // A reduction as a group output is not tiled (its cost would read as zero).
            if g.nodes[m].has_updates() {
                continue;
            }
            let sub: Vec<usize> =
                members.iter().copied().filter(|&f| f != m && reaches_through(consumer, f, m)).collect();
            let rest: Vec<usize> = members.iter().copied().filter(|&f| f != m && !sub.contains(&f)).collect();
            // A stage with several consumers must stay on the side of all of them.
            let on_m_side = |f: usize| f == m || sub.contains(&f);
            let splits_a_stage = members.iter().any(|&f| {
                f != m && ctx.consumers.get(&f).is_some_and(|cs| cs.iter().any(|&c| on_m_side(c) != on_m_side(f)))
            });
            if splits_a_stage {
                continue;
            }
            let mut split_consumer = consumer.clone();
            split_consumer.remove(&m);
            let mut plans = plan(ctx, m, &sub, &split_consumer);
            plans.extend(plan(ctx, out, &rest, &split_consumer));
            let cost: f64 = plans.iter().map(|p| p.tiling.as_ref().map_or(0.0, |t| t.cost)).sum();
            if best.as_ref().is_none_or(|(c, _)| cost < *c * (1.0 - 1e-9)) {
                best = Some((cost, plans));
            }
        }
        match best {
            Some((_, plans)) => plans,
            None => {
                // Out of budget: every member becomes a group of its own.
                let mut plans = vec![untiled_or_tiled(ctx, out, consumer)];
                for &m in members {
                    plans.push(untiled_or_tiled(ctx, m, consumer));
                }
                plans
            }
        }
    })
}

fn untiled_or_tiled(ctx: &Ctx<'_>, out: usize, consumer: &BTreeMap<usize, usize>) -> Planned {
    let tiled = if ctx.g.nodes[out].has_updates() { None } else { try_tile(ctx, out, &[], consumer) };
    tiled.unwrap_or(Planned {
        out,
        tiling: None,
        members: Vec::new(),
        lanes: ctx.lanes(out),
        update_widths: BTreeMap::new(),
    })
}

/// True if `f`'s chain of consumers passes through `m`.
fn reaches_through(consumer: &BTreeMap<usize, usize>, mut f: usize, m: usize) -> bool {
    while let Some(&c) = consumer.get(&f) {
        if c == m {
            return true;
        }
        f = c;
    }
    false
}

/// Algorithm 3 on one group.
fn try_tile(ctx: &Ctx<'_>, out: usize, members: &[usize], consumer: &BTreeMap<usize, usize>) -> Option<Planned> {
    let g = ctx.g;
    ctx.budget.set(ctx.budget.get().saturating_sub(1));
    let region = ctx.regions.get(&out).or(ctx.root.funcs[out].as_ref())?;
    let member_set: BTreeSet<usize> = members.iter().copied().collect();
    let expand = |n: usize| n == out || member_set.contains(&n) || ctx.inlined[n];
    let models = group_models(g, ctx.scope, out, region, &expand, ctx.root);
    let external: Vec<usize> =
        models.funcs.keys().copied().filter(|&n| n != out && !member_set.contains(&n) && !ctx.inlined[n]).collect();
    let stages: Vec<(usize, Vec<usize>)> = members
        .iter()
        .map(|&f| {
            let all = ctx.consumers.get(&f).cloned().unwrap_or_else(|| vec![consumer[&f]]);
            (f, all.into_iter().filter(|c| *c == out || member_set.contains(c)).collect())
        })
        .collect();
    let node = &g.nodes[out];
    let single_stage = |f: usize| !g.nodes[f].has_updates();
    let lanes_of = |f: usize| ctx.lanes(f);
    let input = GroupInput {
        out,
        stages: &stages,
        ops: ctx.ops,
        lanes: ctx.lanes(out),
        out_bytes: node.elem_bytes(),
        lanes_of: &lanes_of,
        external: &external,
        single_stage: &single_stage,
        split_slides: ctx.split_slides,
    };
    let tiling = tile_group(&input, &models, ctx.m)?;
    let mut update_widths = BTreeMap::new();
    let members = tiling
        .placements
        .iter()
        .map(|(f, pl)| {
            let model = &models.funcs[f];
            let lanes = ctx.lanes(*f);
            let b = tiling.nest.box_inside(pl.compute);
            let row = if model.dims() > 0 { model.extent(0, &b, &models.p) } else { 0.0 };
            let vectorize = row >= lanes as f64 && pl.slide_dim != Some(0) && lanes > 1;
            let node = &g.nodes[*f];
            if vectorize && node.has_updates() {
                let reduces = node.stages[1..].iter().any(|s| !s.rvars.is_empty());
                update_widths.insert(*f, if reduces { accumulator_width(lanes, row) } else { lanes });
            }
            (*f, *pl, vectorize.then_some(lanes))
        })
        .collect();
    Some(Planned { out, tiling: Some(tiling), members, lanes: ctx.lanes(out), update_widths })
}
