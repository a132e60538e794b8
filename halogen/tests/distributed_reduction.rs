//! Reductions distributed over their reduction domain (`update_stage(k).distribute(r)`)
//! on 1 to 4 ranks run as threads of this process: each rank runs its slice of the
//! domain, and an all-reduce gives every rank the single-process values, on the
//! interpreter and on the C back end. The all-reduce moves exactly one box per pair of
//! ranks: the region the update writes.

use halogen::prelude::*;
use halogen::runtime::distributed::{Communicator, InProcessRanks, TransferStats};
use std::sync::Arc;

const W: i32 = 37;
const H: i32 = 29;

fn targets() -> Vec<Target> {
    vec!["interp-mpi".parse().unwrap(), "host-mpi".parse().unwrap()]
}

fn input_image() -> Buffer<u8> {
    Buffer::from_fn(&[W, H], |c| ((c[0] * 7 + c[1] * 13 + c[0] * c[1]) % 251) as u8)
}

/// Realizes `out` (of `extents`) on `ranks` ranks of `target`: each rank's output and
/// transfer counts.
fn run_on_ranks(
    input: &ImageParam,
    out: &Func,
    extents: &[i32],
    target: &Target,
    ranks: i32,
) -> Vec<(Buffer<i32>, TransferStats)> {
    let compiled = Pipeline::new(&[out]).compile(target).unwrap();
    let img = input_image();
    InProcessRanks::run(ranks, |comm: Arc<dyn Communicator>| {
        let mut o = Buffer::<i32>::new(extents);
        let mut args = Args::new();
        args.image(input, &img).communicator(comm.clone());
        compiled.realize(&args, &mut o).unwrap();
        (o, comm.stats())
    })
}

/// `build(tag, distribute)` makes the pipeline, with its reduction distributed or not;
/// every rank of every run must hold the unscheduled single-process values, and send
/// `box_bytes` to each other rank.
fn check(name: &str, extents: &[i32], box_bytes: u64, build: impl Fn(&str, bool) -> (ImageParam, Func)) {
    let (input, out) = build(&format!("{name}_ref"), false);
    let expected = &run_on_ranks(&input, &out, extents, &Target::interp(), 1)[0].0;
    for (t, target) in targets().into_iter().enumerate() {
        for ranks in 1..=4 {
            let (input, out) = build(&format!("{name}_{t}_{ranks}"), true);
            for (r, (o, stats)) in (0..).zip(run_on_ranks(&input, &out, extents, &target, ranks)) {
                assert_eq!(o.as_slice(), expected.as_slice(), "{name} on {target}: rank {r} of {ranks}");
                let peers = (ranks - 1) as u64;
                let want = TransferStats {
                    messages_sent: peers,
                    bytes_sent: peers * box_bytes,
                    messages_received: peers,
                    bytes_received: peers * box_bytes,
                };
                assert_eq!(stats, want, "{name} on {target}: rank {r} of {ranks}");
            }
        }
    }
}

#[test]
fn a_histogram_distributed_over_its_rows_is_all_reduced() {
    // 256 bins of i32, whatever the rows each rank counts.
    check("dred_hist", &[256], 256 * 4, |tag, distribute| {
        let input = ImageParam::new(Type::u8(), 2, &format!("{tag}_in"));
        let i = Var::new("i");
        let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
        let hist = Func::new(&format!("{tag}_hist"));
        hist.def(i, 0);
        let bin = input.at((r.x(), r.y())).cast::<i32>();
        hist.update(bin.clone(), hist.at(bin) + 1);
        let out = Func::new(&format!("{tag}_out"));
        out.def(i, hist.at(i) * 3 + i);
        hist.compute_root();
        if distribute {
            hist.update_stage(0).distribute(r.y());
        }
        (input, out)
    });
}

#[test]
fn column_sums_with_an_initial_value_count_it_once() {
    // A pure variable beside the distributed one, and a pure definition that is not the
    // identity: ranks other than 0 start from zero.
    check("dred_cols", &[W], W as u64 * 4, |tag, distribute| {
        let input = ImageParam::new(Type::u8(), 2, &format!("{tag}_in"));
        let x = Var::new("x");
        let r = RDom::new(&[(Expr::from(0), input.height())]);
        let sums = Func::new(&format!("{tag}_sums"));
        sums.def(x, x * 1000);
        sums.update(x, sums.at(x) + input.at((x, r.x())).cast::<i32>());
        let out = Func::new(&format!("{tag}_out"));
        out.def(x, sums.at(x));
        sums.compute_root();
        if distribute {
            sums.update_stage(0).parallel(x).distribute(r.x());
        }
        (input, out)
    });
}

#[test]
fn a_scalar_minimum_and_a_split_distributed_domain() {
    // A zero-dimensional Func (a box of one element), its domain split and the outer
    // loop distributed.
    check("dred_min", &[1], 4, |tag, distribute| {
        let input = ImageParam::new(Type::u8(), 2, &format!("{tag}_in"));
        let i = Var::new("i");
        let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
        let m = Func::new(&format!("{tag}_min"));
        m.def((), 200);
        m.update((), min(m.at(()), input.at((r.x(), r.y())).cast::<i32>() + 40));
        let out = Func::new(&format!("{tag}_out"));
        out.def(i, m.at(()) + i);
        m.compute_root();
        if distribute {
            let (ryo, ryi) = (Var::new("ryo"), Var::new("ryi"));
            m.update_stage(0).split(r.y(), ryo, ryi, 4).distribute(ryo);
        }
        (input, out)
    });
}

#[test]
fn a_scatter_whose_written_region_depends_on_the_slice() {
    // Each rank writes only the bins of its slice of the domain; the all-reduce combines
    // the box all slices write together.
    check("dred_scatter", &[W], W as u64 * 4, |tag, distribute| {
        let input = ImageParam::new(Type::u8(), 2, &format!("{tag}_in"));
        let x = Var::new("x");
        let r = RDom::new(&[(Expr::from(0), input.width())]);
        let g = Func::new(&format!("{tag}_g"));
        g.def(x, 5);
        g.update(r.x(), g.at(r.x()) ^ input.at((r.x(), 3)).cast::<i32>());
        let out = Func::new(&format!("{tag}_out"));
        out.def(x, g.at(x));
        g.compute_root();
        if distribute {
            g.update_stage(0).distribute(r.x());
        }
        (input, out)
    });
}

#[test]
fn the_lowered_reduction_fills_ranks_with_the_identity_and_combines() {
    let input = ImageParam::new(Type::u8(), 2, "dred_text_in");
    let i = Var::new("i");
    let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
    let hist = Func::new("dred_text_hist");
    hist.def(i, 0);
    let bin = input.at((r.x(), r.y())).cast::<i32>();
    hist.update(bin.clone(), hist.at(bin) + 1);
    hist.compute_root().update_stage(0).distribute(r.y());
    let c = Pipeline::new(&[&hist]).compile(&"interp-mpi".parse().unwrap()).unwrap();
    let text = c.lowered_stmt().to_string();
    assert!(text.contains("combine add dred_text_hist:int32["), "{text}");
    assert!(text.contains("send dred_text_hist:int32["), "{text}");
    assert!(text.contains("wait transfers"), "{text}");
}

#[test]
fn reductions_that_cannot_be_distributed_are_errors() {
    let mpi: Target = "interp-mpi".parse().unwrap();
    let input = ImageParam::new(Type::u8(), 2, "dred_err_in");
    let x = Var::new("x");
    let r = RDom::new(&[(Expr::from(0), input.height())]);

    // A pure variable of an update.
    let f = Func::new("dred_err_pure");
    f.def(x, 0);
    f.update(x, f.at(x) + input.at((x, r.x())).cast::<i32>());
    f.compute_root().update_stage(0).distribute(x);
    let e = Pipeline::new(&[&f]).compile(&mpi).unwrap_err().to_string();
    assert!(e.contains("Func 'dred_err_pure' update 0: distribute(x)") && e.contains("pure variable"), "{e}");

    // Float sums would round differently across ranks.
    let g = Func::new("dred_err_float");
    g.def(x, 0.0f32);
    g.update(x, g.at(x) + input.at((x, r.x())).cast::<f32>());
    g.compute_root().update_stage(0).distribute(r.x());
    let e = Pipeline::new(&[&g]).compile(&mpi).unwrap_err().to_string();
    assert!(e.contains("Func 'dred_err_float' update 0") && e.contains("type float32"), "{e}");

    // A recurrence is not a reduction.
    let s = Func::new("dred_err_scan");
    let q = RDom::new(&[(Expr::from(1), Expr::from(255))]);
    s.def(x, x);
    s.update(q.x(), s.at(q.x() - 1) + s.at(q.x()));
    s.compute_root().update_stage(0).distribute(q.x());
    let e = Pipeline::new(&[&s]).compile(&mpi).unwrap_err().to_string();
    assert!(e.contains("Func 'dred_err_scan' update 0") && e.contains("f(args) = f(args) ⊕ e"), "{e}");

    // Computed inside another Func's loops.
    let p = Func::new("dred_err_inner");
    let c = Func::new("dred_err_consumer");
    p.def(x, 0);
    p.update(x, p.at(x) + input.at((x, r.x())).cast::<i32>());
    c.def(x, p.at(x));
    p.compute_at(&c, x).update_stage(0).distribute(r.x());
    let e = Pipeline::new(&[&c]).compile(&mpi).unwrap_err().to_string();
    assert!(e.contains("Func 'dred_err_inner' update 0") && e.contains("compute_root"), "{e}");

    // Without the mpi feature.
    let h = Func::new("dred_err_target");
    h.def(x, 0);
    h.update(x, h.at(x) + input.at((x, r.x())).cast::<i32>());
    h.compute_root().update_stage(0).distribute(r.x());
    let e = Pipeline::new(&[&h]).compile(&Target::host()).unwrap_err().to_string();
    assert!(e.contains("Func 'dred_err_target': distribute(r") && e.contains("host-mpi"), "{e}");
}

#[test]
fn a_histogram_of_an_input_held_in_blocks_sees_the_whole_image() {
    // The input is distributed by rows: each rank's buffer holds only its block, yet the
    // reduction domain's `width()` and `height()` are the whole image's, and each rank's
    // slice of the rows is its own block, so only the histograms move.
    let build = |tag: &str, distribute: bool| {
        let input = ImageParam::new(Type::u8(), 2, &format!("dred_block_{tag}_in"));
        let i = Var::new("i");
        let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
        let hist = Func::new(&format!("dred_block_{tag}_hist"));
        hist.def(i, 0);
        let bin = input.at((r.x(), r.y())).cast::<i32>();
        hist.update(bin.clone(), hist.at(bin) + input.height());
        hist.compute_root();
        if distribute {
            input.distribute(&[1]);
            hist.update_stage(0).distribute(r.y());
        }
        (input, hist)
    };
    let img = input_image();
    let (input, hist) = build("ref", false);
    let expected = &run_on_ranks(&input, &hist, &[256], &Target::interp(), 1)[0].0;
    for (t, target) in targets().into_iter().enumerate() {
        let (input, hist) = build(&format!("{t}"), true);
        let compiled = Pipeline::new(&[&hist]).compile(&target).unwrap();
        for ranks in 1..=4 {
            let results = InProcessRanks::run(ranks, |comm: Arc<dyn Communicator>| {
                let (lo, hi) = halogen::runtime::gather::block_slice(H, comm.rank(), comm.ranks());
                let mut block = Buffer::<u8>::from_fn(&[W, hi - lo], |c| img[[c[0], c[1] + lo]]);
                block.set_min(&[0, lo]);
                let mut o = Buffer::<i32>::new(&[256]);
                let mut args = Args::new();
                args.image(&input, &block).communicator(comm.clone()).global_input(&input, &[(0, W), (0, H)]);
                compiled.realize(&args, &mut o).unwrap();
                (o, comm.stats())
            });
            for (r, (o, stats)) in (0..).zip(results) {
                assert_eq!(o.as_slice(), expected.as_slice(), "{target}: rank {r} of {ranks}");
                assert_eq!(stats.bytes_sent, (ranks as u64 - 1) * 256 * 4, "{target}: rank {r} of {ranks}");
            }
        }
    }
}
