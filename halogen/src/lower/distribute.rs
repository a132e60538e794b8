//! Distribution over the ranks of a distributed run (Distributed Halide, sections 3–4).
//!
//! - **Slices.** A loop scheduled with `distribute(v)` runs, on rank `r` of `R`, the
//!   slice `[r·s, min(w, (r+1)·s))` of its `w` iterations, `s = ⌈w / R⌉`
//!   ([`slice`]). Two or three distributed loops of one stage split it over a grid of
//!   ranks whose shape is a run-time value (`__grid2.0`, … see [`grid_param`]), so one
//!   compiled pipeline runs on any number of ranks; the rank and the rank count are the
//!   run-time parameters [`RANK`] and [`RANKS`].
//! - **Global and local regions.** Bounds inference sees the sliced loops, so what a
//!   Func's consumers need on this rank (its *required* region `N`) is symbolic in the
//!   rank. Setting the rank to 0 of 1 turns any such region into the region all ranks need
//!   together (its *global* region, [`globalize`]). A distributed Func slices its global
//!   region, so every point is computed by exactly one rank; a root Func that is neither
//!   distributed nor `compute_rank` computes its global region on every rank; a
//!   `compute_rank` Func computes its required region.
//! - **Border exchange.** After a distributed Func is computed, each rank sends every
//!   other rank the part of its own slice (`H`, what it has) that the other needs
//!   (`N`), and receives the converse ([`border_exchange`]): `H(r) ∩ N(r')` for each
//!   pair. The regions of another rank are the same expressions with the rank replaced:
//!   the exchange loop over peers rebinds the pipeline's top-level bound symbols for the
//!   peer, so nothing is tabulated and nothing grows with the rank count.

use super::environment::{Environment, FuncInfo};
use crate::analysis::{simplify, substitute_map, Interval};
use crate::error::{Error, Result};
use crate::ir::{BinOp, CallKind, CombineOp, Expr, ExprKind, ForKind, Name, Stmt, TransferOp, Type};
use crate::runtime::gather::block_slice;
use crate::target::{Feature, Target};
use std::collections::HashMap;

/// The run-time parameter holding this process's rank.
pub const RANK: &str = "__rank";
/// The run-time parameter holding the number of ranks.
pub const RANKS: &str = "__ranks";

/// The run-time parameter holding the extent of dimension `i` (innermost first) of the
/// grid of ranks over which stages with `n` distributed loops are split (`n` of 2 or 3;
/// one distributed loop is split over all [`RANKS`]).
pub fn grid_param(n: usize, i: usize) -> Name {
    format!("__grid{n}.{i}").into()
}

/// The shape of the grid of `ranks` ranks for `n` distributed loops, innermost first, as
/// the runtime binds [`grid_param`]: as close to square as the rank count allows, with
/// the larger factors outermost (whole rows of the innermost dimension stay together).
///
/// ```
/// use halogen::lower::distribute::grid_shape;
/// assert_eq!(grid_shape(1, 6), vec![6]);
/// assert_eq!(grid_shape(2, 6), vec![2, 3]);
/// assert_eq!(grid_shape(2, 4), vec![2, 2]);
/// assert_eq!(grid_shape(2, 7), vec![1, 7]);
/// assert_eq!(grid_shape(3, 12), vec![2, 2, 3]);
/// ```
pub fn grid_shape(n: usize, ranks: i32) -> Vec<i32> {
    let mut left = ranks.max(1);
    let mut shape = Vec::with_capacity(n);
    for k in (1..=n).rev() {
        // The largest factor of what is left no larger than its k-th root: the innermost
        // dimensions get the small factors.
        let root = (left as f64).powf(1.0 / k as f64).round() as i32;
        let f = (1..=root.max(1)).rev().find(|f| left % f == 0).unwrap_or(1);
        let f = if k == 1 { left } else { f };
        shape.push(f);
        left /= f;
    }
    shape
}

/// The block of a distributed input (`ImageParam::distribute(dims)`) that rank `rank` of
/// `ranks` holds, as `(min, extent)` per dimension of the whole image `region`: the
/// [`block_slice`] of each distributed dimension, over the grid of ranks [`grid_shape`]
/// chooses for several (row-major, the lowest
/// dimension fastest), the other dimensions whole. This is the block the pipeline's own
/// distribution of the image expects in the rank's input buffer.
///
/// ```
/// use halogen::lower::distribute::input_block;
/// // 10 rows over 3 ranks: rank 1 holds rows [4, 8), every column.
/// assert_eq!(input_block(&[(0, 6), (0, 10)], &[1], 1, 3), vec![(0, 6), (4, 4)]);
/// // A 2 × 2 grid of 4 ranks over both dimensions.
/// assert_eq!(input_block(&[(0, 6), (2, 10)], &[0, 1], 3, 4), vec![(3, 3), (7, 5)]);
/// ```
pub fn input_block(region: &[(i32, i32)], dims: &[usize], rank: i32, ranks: i32) -> Vec<(i32, i32)> {
    let mut dims = dims.to_vec();
    dims.sort_unstable();
    dims.dedup();
    let mut block = region.to_vec();
    let (shape, mut below) = match dims.len() {
        0 => return block,
        1 => (vec![ranks.max(1)], 1),
        n => (grid_shape(n, ranks), 1),
    };
    for (i, &d) in dims.iter().enumerate() {
        let Some(&(min, extent)) = region.get(d) else { continue };
        let q = rank / below;
        let coordinate = if i + 1 == shape.len() { q } else { q % shape[i] };
        below *= shape[i];
        let (lo, hi) = block_slice(extent, coordinate, shape[i]);
        block[d] = (min + lo, hi - lo);
    }
    block
}

/// The names of every run-time parameter of distribution, with their types.
pub fn params() -> Vec<(Name, Type)> {
    let mut p = vec![(Name::from(RANK), Type::i32()), (Name::from(RANKS), Type::i32())];
    for n in 2..=3 {
        for i in 0..n {
            p.push((grid_param(n, i), Type::i32()));
        }
    }
    p
}

/// An `Err` naming the first distributed loop when `target` cannot run it (no `mpi`
/// feature), a distributed Func with updates, or an update distributed in a way no
/// all-reduce can complete ([`reduction`]).
pub fn check_target(env: &Environment, target: &Target) -> Result<()> {
    if target.has_feature(Feature::Mpi) {
        for f in env.funcs.values() {
            // Each rank would run the updates over values other ranks hold.
            if is_distributed(f) && f.stages.len() > 1 {
                return Err(Error::Schedule(format!(
                    "Func '{}' is distributed but has updates; distributing a Func with update definitions is not \
                     supported (compute it on every rank, or compute_rank(); an update's reduction domain can be \
                     distributed instead)",
                    f.name
                )));
            }
            for k in 1..f.stages.len() {
                reduction(f, k)?;
            }
        }
        return Ok(());
    }
    for f in env.funcs.values() {
        if let Some(v) = f.stages.iter().find_map(|s| s.schedule.distributed.first()) {
            // A distributed input is read through a Func of its own (see environment.rs).
            let what = match f.name.strip_suffix("$placed") {
                Some(image) => format!("ImageParam '{image}': distribute()"),
                None => format!("Func '{}': distribute({v})", f.name),
            };
            return Err(Error::Schedule(format!(
                "{what} needs a distributed target, but target '{target}' has no 'mpi' feature; compile for \
                 '{target}-mpi'"
            )));
        }
    }
    Ok(())
}

/// Whether `f`'s values are dealt out to the ranks: its pure definition has a distributed
/// loop, so each point is computed by one rank and borders are exchanged.
pub fn is_distributed(f: &FuncInfo) -> bool {
    f.stages.first().is_some_and(|s| !s.schedule.distributed.is_empty())
}

/// Whether any stage of `f` has a distributed loop: its values ([`is_distributed`]) or
/// an update's reduction domain ([`reduction`]).
pub fn uses_ranks(f: &FuncInfo) -> bool {
    f.stages.iter().any(|s| !s.schedule.distributed.is_empty())
}

/// An update whose reduction domain is dealt out to the ranks: `f(args) = f(args) ⊕ e`,
/// each rank running its slice of the domain. Every rank holds the whole Func (it is
/// computed on every rank, as a root Func that is not distributed is); ranks other than
/// 0 start the update from `identity` instead of the pure definition's values, and an
/// all-reduce with `op` then gives every rank the sum (or min, max, ...) of all the
/// contributions plus the initial values once ([`all_reduce`]).
#[derive(Clone, Debug)]
pub struct DistributedReduction {
    /// How the ranks' results combine.
    pub op: CombineOp,
    /// The identity of `op` on the Func's type.
    pub identity: Expr,
}

/// The distributed reduction of update stage `k` of `f` (`None` when the stage has no
/// distributed loop); an `Err` naming the Func and the directive when the update cannot be
/// distributed: a distributed loop that is not of the reduction domain, a Func of several
/// values or of a float or bool type (the ranks' partial results would combine in another
/// order than one process adds them, and float rounding depends on it), or an update that
/// is not `f(args) = f(args) ⊕ e` with `⊕` one of `+ * min max & | ^` and `e` not reading
/// `f`.
pub fn reduction(f: &FuncInfo, k: usize) -> Result<Option<DistributedReduction>> {
    let stage = &f.stages[k];
    let sched = &stage.schedule;
    let Some(first) = sched.distributed.first().filter(|_| k > 0) else { return Ok(None) };
    let what = format!("Func '{}' update {}: distribute({first})", f.name, k - 1);
    if let Some(d) = sched.dims.iter().find(|d| sched.distributed.contains(&d.var) && !d.is_rvar) {
        return Err(Error::Schedule(format!(
            "{what}: '{}' is a pure variable of the update; only an update's reduction domain can be distributed \
             (distribute the Func's pure definition to deal out its values)",
            d.var
        )));
    }
    let ty = f.types[0];
    if f.types.len() != 1 || !ty.is_int_or_uint() {
        return Err(Error::Schedule(format!(
            "{what}: a distributed reduction combines integer values across ranks, but '{}' has {}; compute it on \
             every rank instead",
            f.name,
            if f.types.len() == 1 { format!("type {ty}") } else { format!("{} values", f.types.len()) }
        )));
    }
    let shape = || {
        Error::Schedule(format!(
            "{what}: a distributed update must have the form f(args) = f(args) ⊕ e with ⊕ one of + * min max & | ^ \
             and e not reading '{}'; it is {}",
            f.name, stage.values[0]
        ))
    };
    let ExprKind::Binary(bin, a, b) = stage.values[0].kind() else { return Err(shape()) };
    let is_self = |e: &Expr| {
        matches!(e.kind(), ExprKind::Call { name, args, kind: CallKind::Func { value_index: 0, .. } }
            if *name == f.name && *args == stage.args)
    };
    let reads_f = |e: &Expr| !super::schedule_functions::self_calls(&f.name, std::slice::from_ref(e)).is_empty();
    let reduces = |call: &Expr, other: &Expr| is_self(call) && !reads_f(other);
    if !reduces(a, b) && !reduces(b, a) {
        return Err(shape());
    }
    let op = match bin {
        BinOp::Add => CombineOp::Add,
        BinOp::Mul => CombineOp::Mul,
        BinOp::Min => CombineOp::Min,
        BinOp::Max => CombineOp::Max,
        BinOp::BitAnd => CombineOp::BitAnd,
        BinOp::BitOr => CombineOp::BitOr,
        BinOp::BitXor => CombineOp::BitXor,
        _ => return Err(shape()),
    };
    let identity = crate::lang::rfactor::identity(*bin, ty).ok_or_else(shape)?;
    Ok(Some(DistributedReduction { op, identity }))
}

/// A distributed loop of a stage: its coordinate on the grid of ranks and the grid's
/// extent along it.
#[derive(Clone, Debug)]
pub struct GridDim {
    /// The loop variable (the user's name).
    pub var: Name,
    /// This rank's index along the grid dimension.
    pub coordinate: Expr,
    /// The grid's extent along it.
    pub count: Expr,
}

fn i32_param(name: impl Into<Name>) -> Expr {
    Expr::param(Type::i32(), name)
}

/// The distributed loops of stage `k` of `f`, innermost first, with their place on the
/// grid of ranks; an `Err` for a schedule that cannot be distributed.
pub fn stage_grid(f: &FuncInfo, k: usize) -> Result<Vec<GridDim>> {
    let sched = &f.stages[k].schedule;
    if sched.distributed.is_empty() {
        return Ok(Vec::new());
    }
    let what = if k == 0 { format!("Func '{}'", f.name) } else { format!("Func '{}' update {}", f.name, k - 1) };
    let mut vars = Vec::new();
    for dim in &sched.dims {
        if !sched.distributed.contains(&dim.var) {
            continue;
        }
        if !matches!(dim.kind, ForKind::Serial | ForKind::Parallel) {
            return Err(Error::Schedule(format!(
                "{what}: distribute({}): the loop is {:?}; a distributed loop runs its slice serially or in parallel",
                dim.var, dim.kind
            )));
        }
        vars.push(dim.var.clone());
    }
    if let Some(v) = sched.distributed.iter().find(|v| !vars.contains(v)) {
        return Err(Error::Schedule(format!(
            "{what}: distribute({v}): '{v}' is not one of its loops (a later split or fuse renamed it?)"
        )));
    }
    if sched.single_gpu_thread {
        return Err(Error::Schedule(format!("{what}: distribute() and gpu_single_thread() do not combine")));
    }
    let rank = i32_param(RANK);
    let n = vars.len();
    let counts: Vec<Expr> = match n {
        1 => vec![i32_param(RANKS)],
        2 | 3 => (0..n).map(|i| i32_param(grid_param(n, i))).collect(),
        _ => {
            return Err(Error::Schedule(format!(
                "{what}: distribute() over {n} loops ({}); a stage is distributed over at most 3",
                vars.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
            )))
        }
    };
    // Row-major over the grid, innermost fastest: coordinate i is
    // (rank / (count_0 · … · count_{i-1})) % count_i (no modulo for the outermost).
    let mut below = Expr::i32(1);
    let mut out = Vec::with_capacity(n);
    for (i, var) in vars.into_iter().enumerate() {
        let q = if i == 0 { rank.clone() } else { Expr::div(rank.clone(), below.clone()) };
        let coordinate = if i + 1 == n { q } else { Expr::rem(q, counts[i].clone()) };
        below = Expr::mul(below, counts[i].clone());
        out.push(GridDim { var, coordinate: simplify(&coordinate), count: counts[i].clone() });
    }
    Ok(out)
}

/// Where a distributed loop of the pure definition sits among the Func's dimensions: the
/// dimension it runs along and how many of its coordinates one iteration covers (1 for a
/// pure variable, `k` for the outer loop of a split of one by `k`, the product for splits
/// of splits).
fn loop_origin(f: &FuncInfo, var: &Name) -> Option<(usize, i64)> {
    let mut origin: HashMap<Name, (usize, i64)> = f.args.iter().enumerate().map(|(d, a)| (a.clone(), (d, 1))).collect();
    for split in &f.stages[0].schedule.splits {
        match split {
            crate::schedule::Split::Split { old, outer, inner, factor, .. } => {
                let from = origin.remove(old);
                origin.remove(inner);
                match from {
                    Some((d, k)) => origin.insert(outer.clone(), (d, k * *factor as i64)),
                    None => origin.remove(outer),
                };
            }
            crate::schedule::Split::Fuse { inner, outer, fused } => {
                origin.remove(inner);
                origin.remove(outer);
                origin.remove(fused);
            }
        }
    }
    origin.get(var).copied()
}

/// The region of the distributed Func `f` that this rank computes, exactly: along each
/// distributed dimension, the coordinates of this rank's iterations of the distributed
/// loop (`[lo·k, hi·k)` for groups of `k`, cut at the Func's region), and `computed` (the
/// region its loops touch) along the others. Interval arithmetic over the sliced loops
/// would do for the others but not for those: a rank with no iterations still gets a
/// non-empty box from a clamped split, and a rank must never send values it did not
/// compute. `region(d)` is the region `f` covers along `d` (its bound symbols).
pub fn owned_region(
    f: &FuncInfo,
    computed: &[Interval],
    region: impl Fn(usize) -> (Expr, Expr),
) -> Result<Vec<Interval>> {
    let mut owned = computed.to_vec();
    for g in stage_grid(f, 0)? {
        let Some((d, k)) = loop_origin(f, &g.var) else {
            return Err(Error::Schedule(format!(
                "Func '{}': distribute({}): a distributed loop is one of the Func's variables or the outer loop of a \
                 split of one (not a fused or inner loop)",
                f.name, g.var
            )));
        };
        let (min, max) = region(d);
        let k = Expr::i32(k);
        let extent = Expr::add(Expr::sub(max.clone(), min.clone()), Expr::i32(1));
        let groups = Expr::div(Expr::sub(Expr::add(extent, k.clone()), Expr::i32(1)), k.clone());
        let (lo, count) = slice(&Expr::i32(0), &groups, &g.coordinate, &g.count);
        let first = Expr::add(min.clone(), Expr::mul(lo.clone(), k.clone()));
        let last = Expr::min(Expr::sub(Expr::add(min, Expr::mul(Expr::add(lo, count), k)), Expr::i32(1)), max);
        owned[d] = Interval { min: Some(simplify(&first)), max: Some(simplify(&last)) };
    }
    Ok(owned)
}

/// The slice of the loop `[min, min + extent)` that grid coordinate `coordinate` of `count`
/// runs, as a new `(min, extent)`: `[min + c·s, min + min(extent, (c+1)·s))`, `s =
/// ⌈extent / count⌉`. The last coordinates may get fewer iterations, or none.
pub fn slice(min: &Expr, extent: &Expr, coordinate: &Expr, count: &Expr) -> (Expr, Expr) {
    let size = Expr::div(Expr::sub(Expr::add(extent.clone(), count.clone()), Expr::i32(1)), count.clone());
    let lo = Expr::min(Expr::mul(coordinate.clone(), size.clone()), extent.clone());
    let hi = Expr::min(Expr::add(lo.clone(), size), extent.clone());
    (simplify(&Expr::add(min.clone(), lo.clone())), simplify(&Expr::max(Expr::sub(hi, lo), Expr::i32(0))))
}

/// The run-time parameter holding the `min` or `extent` (`what`) of dimension `d` of the
/// whole region of the distributed buffer `buffer` (an output, or a distributed input),
/// whose own buffer on a rank may hold only the rank's slice.
pub fn global_region_param(buffer: &str, what: &str, d: usize) -> Name {
    format!("{buffer}.global.{what}.{d}").into()
}

/// The name a top-level bound symbol has in its global version.
pub fn global_name(n: &Name) -> Name {
    format!("{n}.global").into()
}

/// The name a top-level bound symbol has inside the exchange loop, bound for the peer.
pub fn peer_name(n: &Name) -> Name {
    format!("{n}.peer").into()
}

/// `e` with the rank 0 of 1 (every grid extent 1) and every top-level bound symbol of
/// `symbols` replaced by its global version: the region all ranks together need.
pub fn globalize(e: &Expr, symbols: &[Name]) -> Expr {
    let mut map: HashMap<Name, Expr> = HashMap::new();
    map.insert(RANK.into(), Expr::i32(0));
    map.insert(RANKS.into(), Expr::i32(1));
    for n in 2..=3 {
        for i in 0..n {
            map.insert(grid_param(n, i), Expr::i32(1));
        }
    }
    for s in symbols {
        map.insert(s.clone(), Expr::var(Type::i32(), global_name(s)));
    }
    simplify(&substitute_map(&map, e))
}

fn for_peer(e: &Expr, peer: &Expr, symbols: &[Name]) -> Expr {
    let mut map: HashMap<Name, Expr> = HashMap::new();
    map.insert(RANK.into(), peer.clone());
    for s in symbols {
        map.insert(s.clone(), Expr::var(Type::i32(), peer_name(s)));
    }
    substitute_map(&map, e)
}

/// The intersection of two boxes as transfer boxes (mins and extents); the extents are
/// zero or negative where the boxes do not meet.
fn intersect(a: &[Interval], b: &[Interval]) -> (Vec<Expr>, Vec<Expr>) {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let (Some(xl), Some(xh), Some(yl), Some(yh)) = (&x.min, &x.max, &y.min, &y.max) else {
                unreachable!("distributed regions are bounded (checked by bounds inference)")
            };
            let lo = Expr::max(xl.clone(), yl.clone());
            let hi = Expr::min(xh.clone(), yh.clone());
            (simplify(&lo), simplify(&Expr::add(Expr::sub(hi, lo), Expr::i32(1))))
        })
        .unzip()
}

/// The border exchange of the distributed Func `f` after its production: for every other
/// rank, the part of what this rank computed (`owned`) that the peer needs, sent, and the
/// part of what this rank needs (`needed`) that the peer computed, received; then a wait
/// for all of them. `frame` holds the top-level bound lets in scope (consumers first, then
/// `f`'s own), which the loop over peers binds again for the peer.
pub fn border_exchange(f: &FuncInfo, owned: &[Interval], needed: &[Interval], frame: &[(Name, Expr)]) -> Stmt {
    let peer_var: Name = format!("{}.exchange.peer", f.name).into();
    let peer = Expr::var(Type::i32(), peer_var.clone());
    let symbols: Vec<Name> = frame.iter().map(|(n, _)| n.clone()).collect();
    let at_peer = |r: &[Interval]| -> Vec<Interval> {
        r.iter()
            .map(|iv| Interval {
                min: iv.min.as_ref().map(|e| for_peer(e, &peer, &symbols)),
                max: iv.max.as_ref().map(|e| for_peer(e, &peer, &symbols)),
            })
            .collect()
    };
    let transfer = |op, (mins, extents): (Vec<Expr>, Vec<Expr>)| transfer_if_nonempty(f, op, &peer, mins, extents);
    // Receives first: a peer's send then finds its receive posted.
    let receive = transfer(TransferOp::Receive, intersect(&at_peer(owned), needed));
    let send = transfer(TransferOp::Send, intersect(owned, &at_peer(needed)));
    let mut body = unless_self(&peer, Stmt::block(vec![receive, send]));
    for (n, v) in frame.iter().rev() {
        body = Stmt::let_stmt(peer_name(n), for_peer(v, &peer, &symbols), body);
    }
    over_peers_then_wait(peer_var, body)
}

/// The transfer `op` of `f`'s box `mins`/`extents` with rank `peer`, posted only where the
/// box is not empty.
fn transfer_if_nonempty(f: &FuncInfo, op: TransferOp, peer: &Expr, mins: Vec<Expr>, extents: Vec<Expr>) -> Stmt {
    let nonempty = extents
        .iter()
        .map(|e| Expr::lt(Expr::i32(0), e.clone()))
        .reduce(Expr::and)
        .unwrap_or_else(|| Expr::bool_imm(true));
    let t = Stmt::Transfer {
        op,
        peer: peer.clone(),
        buffer: f.name.clone(),
        ty: f.types[0],
        mins,
        extents,
        strides: Vec::new(),
    };
    Stmt::if_then(simplify(&nonempty), t)
}

/// `body` where `peer` is another rank than this one.
fn unless_self(peer: &Expr, body: Stmt) -> Stmt {
    Stmt::if_then(Expr::cmp(crate::ir::CmpOp::Ne, peer.clone(), i32_param(RANK)), body)
}

/// `body` for every rank as `peer_var`, then the wait that completes the transfers it
/// posted.
fn over_peers_then_wait(peer_var: Name, body: Stmt) -> Stmt {
    let peers = Stmt::for_loop(peer_var, Expr::i32(0), i32_param(RANKS), ForKind::Serial, body);
    Stmt::block(vec![peers, Stmt::TransferWait])
}

/// Ends the distributed reduction `red` of `f`: for every other rank, this rank's elements
/// of the box `mins`/`extents` (the region all ranks' updates write, in `f`'s coordinates)
/// are sent and the peer's are combined into them, then the transfers complete. Sends are
/// packed when posted, before any combining receive lands, so each rank sends its own
/// contributions. Every rank then holds the same values.
pub fn all_reduce(f: &FuncInfo, red: &DistributedReduction, mins: &[Expr], extents: &[Expr]) -> Stmt {
    let peer_var: Name = format!("{}.reduce.peer", f.name).into();
    let peer = Expr::var(Type::i32(), peer_var.clone());
    let transfer = |op| transfer_if_nonempty(f, op, &peer, mins.to_vec(), extents.to_vec());
    let body = unless_self(&peer, Stmt::block(vec![transfer(TransferOp::Combine(red.op)), transfer(TransferOp::Send)]));
    over_peers_then_wait(peer_var, body)
}

/// Starts the distributed reduction `red` of `f`: on every rank but 0, the box
/// `mins`/`extents` is set to the identity, so that the all-reduce counts the pure
/// definition's values once.
pub fn identity_fill(f: &FuncInfo, red: &DistributedReduction, mins: &[Expr], extents: &[Expr]) -> Stmt {
    let vars: Vec<Name> = (0..f.args.len()).map(|d| Name::from(format!("{}.identity.{d}", f.name))).collect();
    let args = vars.iter().map(|v| Expr::var(Type::i32(), v.clone())).collect();
    let mut body = Stmt::Provide { name: f.name.clone(), values: vec![red.identity.clone()], args };
    for (d, v) in vars.into_iter().enumerate() {
        body = Stmt::for_loop(v, mins[d].clone(), extents[d].clone(), ForKind::Serial, body);
    }
    Stmt::if_then(Expr::cmp(crate::ir::CmpOp::Ne, i32_param(RANK), Expr::i32(0)), body)
}
