//! Distributed pipelines (`distribute`, `compute_rank`, border exchange) on 1 to 4 ranks
//! run as threads of this process (`InProcessRanks`): every rank's slice of the output is
//! the single-process result, on the interpreter and on the C back end, and the border
//! exchange moves exactly the rows the ghost-zone formula says. The same pipelines run
//! over MPI in `examples/distributed_blur.rs` under `mpirun` (see `.ci/run`).

use halogen::prelude::*;
use halogen::runtime::distributed::{Communicator, InProcessRanks, TransferStats};
use std::sync::Arc;

const W: i32 = 37;
const H: i32 = 29;

fn targets() -> Vec<Target> {
    vec!["interp-mpi".parse().unwrap(), "host-mpi".parse().unwrap()]
}

/// The rows `[lo, hi)` rank `r` of `ranks` owns of `h` rows (the block distribution).
fn slice(h: i32, r: i32, ranks: i32) -> (i32, i32) {
    let s = (h + ranks - 1) / ranks;
    let lo = (r * s).min(h);
    (lo, (lo + s).min(h))
}

fn input_image() -> Buffer<u16> {
    Buffer::from_fn(&[W + 2, H + 2], |c| ((c[0] * 7 + c[1] * 13) % 251) as u16)
}

/// A 3×3 box blur in two stages, with the schedule `schedule` gives the two Funcs.
fn blur(tag: &str, schedule: impl Fn(&Func, &Func, &Var, &Var)) -> (ImageParam, Func) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new(Type::u16(), 2, &format!("dist_in_{tag}"));
    let bx = Func::new(&format!("dist_bx_{tag}"));
    let by = Func::new(&format!("dist_by_{tag}"));
    bx.def((x, y), (input.at((x, y)) + input.at((x + 1, y)) + input.at((x + 2, y))) / 3);
    by.def((x, y), (bx.at((x, y)) + bx.at((x, y + 1)) + bx.at((x, y + 2))) / 3);
    schedule(&bx, &by, &x, &y);
    (input, by)
}

/// Runs `out` on `ranks` ranks of `target`; returns each rank's output (whole-size
/// buffers, of which each rank writes its slice) and transfer counts.
fn run_on_ranks(input: &ImageParam, out: &Func, target: &Target, ranks: i32) -> Vec<(Buffer<u16>, TransferStats)> {
    let compiled = Pipeline::new(&[out]).compile(target).unwrap();
    let img = input_image();
    InProcessRanks::run(ranks, |comm: Arc<dyn Communicator>| {
        let mut o = Buffer::<u16>::new(&[W, H]);
        let mut args = Args::new();
        args.image(input, &img).communicator(comm.clone());
        compiled.realize(&args, &mut o).unwrap();
        (o, comm.stats())
    })
}

/// The blur unscheduled, on one process, by the interpreter.
fn reference(tag: &str) -> Buffer<u16> {
    let (input, out) = blur(&format!("{tag}_reference"), |_, _, _, _| {});
    let compiled = Pipeline::new(&[&out]).compile(&Target::interp()).unwrap();
    let img = input_image();
    let mut o = Buffer::<u16>::new(&[W, H]);
    let mut args = Args::new();
    args.image(&input, &img);
    compiled.realize(&args, &mut o).unwrap();
    o
}

/// Every rank's rows equal the reference's.
fn check_slices(results: &[(Buffer<u16>, TransferStats)], expected: &Buffer<u16>, what: &str) {
    let ranks = results.len() as i32;
    for (r, (o, _)) in (0..).zip(results) {
        let (lo, hi) = slice(H, r, ranks);
        for y in lo..hi {
            for x in 0..W {
                assert_eq!(o[[x, y]], expected[[x, y]], "{what}: rank {r} of {ranks}, pixel ({x}, {y})");
            }
        }
    }
}

#[test]
fn a_distributed_producer_and_consumer_give_the_single_process_pixels() {
    let tag = "root";
    let (input, by) = blur(tag, |bx, by, _x, y| {
        bx.compute_root().distribute(*y);
        by.parallel(*y).distribute(*y);
    });
    let expected = reference(tag);
    for target in targets() {
        for ranks in 1..=4 {
            let results = run_on_ranks(&input, &by, &target, ranks);
            check_slices(&results, &expected, &format!("{target}"));
            // The ghost-zone formula: rank r needs rows [lo, hi + 2) of bx (its slice of
            // by's rows and the two after), and owns its slice of bx's H + 2 rows; it
            // receives N(r) ∩ H(p) from each other rank p and sends H(r) ∩ N(p).
            let need = |r: i32| {
                let (lo, hi) = slice(H, r, ranks);
                if lo < hi {
                    (lo, hi + 2)
                } else {
                    (0, 0)
                }
            };
            let have = |r: i32| slice(H + 2, r, ranks);
            let overlap = |a: (i32, i32), b: (i32, i32)| (a.1.min(b.1) - a.0.max(b.0)).max(0);
            let row_bytes = (W * 2) as u64;
            for (r, (_, stats)) in (0..).zip(&results) {
                let mut want = TransferStats::default();
                for p in (0..ranks).filter(|&p| p != r) {
                    let rows_in = overlap(need(r), have(p)) as u64;
                    let rows_out = overlap(have(r), need(p)) as u64;
                    want.messages_received += u64::from(rows_in > 0);
                    want.bytes_received += rows_in * row_bytes;
                    want.messages_sent += u64::from(rows_out > 0);
                    want.bytes_sent += rows_out * row_bytes;
                }
                assert_eq!(*stats, want, "{target}: rank {r} of {ranks}");
            }
        }
    }
}

#[test]
fn recomputing_instead_of_communicating_gives_the_same_pixels_without_messages() {
    type Schedule = fn(&Func, &Func, &Var, &Var);
    let schedules: [(&str, Schedule); 3] = [
        ("rank", |bx, by, _x, y| {
            bx.compute_rank();
            by.distribute(*y);
        }),
        ("global", |bx, by, _x, y| {
            bx.compute_root();
            by.distribute(*y);
        }),
        ("inner", |bx, by, x, y| {
            let (yo, yi) = (Var::new("yo"), Var::new("yi"));
            by.split(*y, yo, yi, 4).distribute(yo);
            bx.compute_at(by, yo).vectorize(*x, 8);
        }),
    ];
    for (tag, schedule) in schedules {
        let (input, by) = blur(tag, schedule);
        let expected = reference(tag);
        for target in targets() {
            for ranks in [1, 3] {
                let results = run_on_ranks(&input, &by, &target, ranks);
                if tag == "inner" {
                    // Slices of 4-row tiles: rank r owns tiles, not rows.
                    for (r, (o, _)) in (0..).zip(&results) {
                        let (lo, hi) = slice((H + 3) / 4, r, ranks);
                        for y in (lo * 4)..(hi * 4).min(H) {
                            for x in 0..W {
                                assert_eq!(o[[x, y]], expected[[x, y]], "{tag} {target}: rank {r}, ({x}, {y})");
                            }
                        }
                    }
                } else {
                    check_slices(&results, &expected, &format!("{tag} {target}"));
                }
                for (_, stats) in &results {
                    assert_eq!(*stats, TransferStats::default(), "{tag} {target}: no messages");
                }
            }
        }
    }
}

#[test]
fn a_transposed_read_exchanges_whole_blocks() {
    // The consumer's slice of rows reads a band of columns of the producer, spread over
    // every rank: an all-to-all exchange.
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new(Type::u16(), 2, "dist_t_in");
    let p = Func::new("dist_t_p");
    let t = Func::new("dist_t");
    p.def((x, y), input.at((x, y)) * 2);
    t.def((x, y), p.at((y, x)) + 1);
    p.compute_root().distribute(y);
    t.distribute(y);
    let n: i32 = 24;
    let img = Buffer::<u16>::from_fn(&[n, n], |c| (c[0] * 31 + c[1]) as u16);
    for target in targets() {
        let compiled = Pipeline::new(&[&t]).compile(&target).unwrap();
        for ranks in 1..=4 {
            let results = InProcessRanks::run(ranks, |comm| {
                let mut o = Buffer::<u16>::new(&[n, n]);
                let mut args = Args::new();
                args.image(&input, &img).communicator(comm.clone());
                compiled.realize(&args, &mut o).unwrap();
                (o, comm.stats())
            });
            for (r, (o, stats)) in (0..).zip(&results) {
                let (lo, hi) = slice(n, r, ranks);
                for yy in lo..hi {
                    for xx in 0..n {
                        assert_eq!(o[[xx, yy]], img[[yy, xx]] * 2 + 1, "{target}: rank {r} of {ranks}");
                    }
                }
                // Rank r needs columns [lo, hi) of every row; it has its own rows.
                let others = n - (hi - lo);
                assert_eq!(stats.bytes_received, (others * (hi - lo) * 2) as u64, "{target}: rank {r} of {ranks}");
            }
        }
    }
}

#[test]
fn a_grid_of_ranks_splits_both_dimensions() {
    let tag = "grid";
    let (input, by) = blur(tag, |bx, by, x, y| {
        bx.compute_root().distribute(*x).distribute(*y);
        by.distribute(*x).distribute(*y);
    });
    let expected = reference(tag);
    for target in targets() {
        for ranks in [1, 2, 4, 6] {
            let results = run_on_ranks(&input, &by, &target, ranks);
            let grid = halogen::lower::distribute::grid_shape(2, ranks);
            let (gx, gy) = (grid[0], grid[1]);
            let mut covered = vec![0u8; (W * H) as usize];
            for (r, (o, _)) in (0..).zip(&results) {
                let (xl, xh) = slice(W, r % gx, gx);
                let (yl, yh) = slice(H, r / gx, gy);
                for yy in yl..yh {
                    for xx in xl..xh {
                        assert_eq!(o[[xx, yy]], expected[[xx, yy]], "{target}: rank {r} of {ranks}");
                        covered[(yy * W + xx) as usize] += 1;
                    }
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "{target}: every pixel on exactly one rank of {ranks}");
        }
    }
}

#[test]
fn each_rank_holds_only_its_slice_and_its_ghost_zone() {
    let tag = "slices";
    let (input, by) = blur(tag, |bx, by, _x, y| {
        bx.compute_root().distribute(*y);
        by.distribute(*y);
    });
    let expected = reference(tag);
    let compiled = Pipeline::new(&[&by]).compile(&"interp-mpi".parse().unwrap()).unwrap();
    let img = input_image();
    for ranks in 1..=4 {
        let results = InProcessRanks::run(ranks, |comm| {
            let (lo, hi) = slice(H, comm.rank(), comm.ranks());
            // The output's rows of this rank, and no others.
            let mut mine = Buffer::<u16>::with_min(&[0, lo], &[W, hi - lo]);
            let mut args = Args::new();
            args.image(&input, &img).communicator(comm.clone()).global_output(&by, &[(0, W), (0, H)]);
            let stats = compiled.realize_with_stats(&args, &mut mine).unwrap();
            (mine, stats)
        });
        for (r, (mine, stats)) in (0..).zip(&results) {
            let (lo, hi) = slice(H, r, ranks);
            for yy in lo..hi {
                for xx in 0..W {
                    assert_eq!(mine[[xx, yy]], expected[[xx, yy]], "rank {r} of {ranks}, ({xx}, {yy})");
                }
            }
            // bx's storage: the rows this rank computes and the two it receives, no more.
            let (have, need) = (slice(H + 2, r, ranks), (lo, hi + 2));
            let rows = need.1.max(have.1) - need.0.min(have.0);
            let bx = stats.allocations.get(&halogen::ir::Name::from(format!("dist_bx_{tag}"))).copied().unwrap_or(0);
            assert_eq!(bx, (W * rows) as u64, "rank {r} of {ranks}: elements of bx");
        }
    }
    // A rank's buffer must hold what the rank computes.
    let e = InProcessRanks::run(2, |comm| {
        let mut short = Buffer::<u16>::with_min(&[0, 0], &[W, 3]);
        let mut args = Args::new();
        args.image(&input, &img).communicator(comm).global_output(&by, &[(0, W), (0, H)]);
        compiled.realize(&args, &mut short).map_err(|e| e.to_string())
    });
    let e = e[0].clone().unwrap_err();
    assert!(e.contains("Output buffer 'dist_by_slices' dimension 1: the pipeline writes [0, 14]"), "{e}");
}

#[test]
fn a_distributed_input_is_held_in_blocks_and_its_borders_exchanged() {
    let tag = "placed";
    let (input, by) = blur(tag, |bx, by, _x, y| {
        bx.compute_rank();
        by.distribute(*y);
    });
    input.distribute(&[1]);
    let expected = reference(tag);
    let img = input_image();
    for target in targets() {
        let compiled = Pipeline::new(&[&by]).compile(&target).unwrap();
        for ranks in 1..=4 {
            let results = InProcessRanks::run(ranks, |comm| {
                // This rank's block of the input's rows, and no others.
                let (lo, hi) = slice(H + 2, comm.rank(), comm.ranks());
                let mut block = Buffer::<u16>::from_fn(&[W + 2, hi - lo], |c| img[[c[0], c[1] + lo]]);
                block.set_min(&[0, lo]);
                let mut out = Buffer::<u16>::new(&[W, H]);
                let mut args = Args::new();
                args.image(&input, &block).communicator(comm.clone()).global_input(&input, &[(0, W + 2), (0, H + 2)]);
                compiled.realize(&args, &mut out).unwrap();
                (out, comm.stats())
            });
            check_slices(&results, &expected, &format!("{target}"));
            // Rank r reads input rows [lo, hi + 2) for its output rows [lo, hi), of which
            // its block holds its slice of the H + 2 rows; whole rows of W + 2 pixels move.
            for (r, (_, stats)) in (0..).zip(&results) {
                let (lo, hi) = slice(H, r, ranks);
                let need = if lo < hi { (lo, hi + 2) } else { (0, 0) };
                let rows: i32 = (0..ranks)
                    .filter(|&p| p != r)
                    .map(|p| {
                        let have = slice(H + 2, p, ranks);
                        (need.1.min(have.1) - need.0.max(have.0)).max(0)
                    })
                    .sum();
                assert_eq!(stats.bytes_received, (rows * (W + 2) * 2) as u64, "{target}: rank {r} of {ranks}");
            }
        }
    }
    // A block that misses part of the rank's own rows is an error naming the input.
    let compiled = Pipeline::new(&[&by]).compile(&"interp-mpi".parse().unwrap()).unwrap();
    let e = InProcessRanks::run(2, |comm| {
        let short = Buffer::<u16>::new(&[W + 2, 3]);
        let mut out = Buffer::<u16>::new(&[W, H]);
        let mut args = Args::new();
        args.image(&input, &short).communicator(comm).global_input(&input, &[(0, W + 2), (0, H + 2)]);
        compiled.realize(&args, &mut out).map_err(|e| e.to_string())
    });
    let e = e[0].clone().unwrap_err();
    assert!(e.contains("Input buffer 'dist_in_placed' is too small"), "{e}");
}

#[test]
fn a_rank_without_iterations_sends_nothing() {
    // The producer's 5 rows are one group of 8 (a split whose shifted tail clamps to the
    // region): rank 0 computes all of it, the other ranks none, and only rank 0 sends.
    let (x, y, yi) = (Var::new("x"), Var::new("y"), Var::new("yi"));
    let p = Func::new("dist_empty_p");
    let o = Func::new("dist_empty_o");
    p.def((x, y), x * 100 + y);
    o.def((x, y), p.at((x, y / 4)) + 1);
    p.compute_root().split(y, y, yi, 8).distribute(y);
    o.distribute(y);
    for target in targets() {
        let compiled = Pipeline::new(&[&o]).compile(&target).unwrap();
        let results = InProcessRanks::run(4, |comm| {
            let mut out = Buffer::<i32>::new(&[3, 20]);
            let mut args = Args::new();
            args.communicator(comm.clone());
            compiled.realize(&args, &mut out).unwrap();
            (out, comm.stats())
        });
        for (r, (out, stats)) in (0..).zip(&results) {
            let (lo, hi) = slice(20, r, 4);
            for yy in lo..hi {
                for xx in 0..3 {
                    assert_eq!(out[[xx, yy]], xx * 100 + yy / 4 + 1, "{target}: rank {r}, ({xx}, {yy})");
                }
            }
            if r > 0 {
                assert_eq!(stats.bytes_sent, 0, "{target}: rank {r} computed nothing of the producer");
            }
        }
    }
}

#[test]
fn distribution_mistakes_are_errors() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("dist_err_f");
    f.def((x, y), x + y);
    f.distribute(y);
    let e = Pipeline::new(&[&f]).compile(&Target::host()).unwrap_err().to_string();
    assert!(e.contains("Func 'dist_err_f': distribute(y) needs a distributed target") && e.contains("host-mpi"), "{e}");

    let g = Func::new("dist_err_g");
    g.def((x, y), x + y);
    g.unroll_full(x).distribute(x);
    let e = Pipeline::new(&[&g]).compile(&"host-mpi".parse().unwrap()).unwrap_err().to_string();
    assert!(e.contains("Func 'dist_err_g': distribute(x)") && e.contains("Unrolled"), "{e}");

    let p = Func::new("dist_err_p");
    let c = Func::new("dist_err_c");
    p.def((x, y), x * y);
    c.def((x, y), p.at((x, y)) + 1);
    p.compute_at(&c, y).distribute(y);
    let e = Pipeline::new(&[&c]).compile(&"interp-mpi".parse().unwrap()).unwrap_err().to_string();
    assert!(e.contains("Func 'dist_err_p' is distributed but computed inside"), "{e}");

    let input = ImageParam::new(Type::u8(), 2, "dist_err_in");
    input.distribute(&[1]);
    let g2 = Func::new("dist_err_g2");
    g2.def((x, y), input.at((x, y)));
    let e = Pipeline::new(&[&g2]).compile(&Target::host()).unwrap_err().to_string();
    assert!(e.contains("ImageParam 'dist_err_in': distribute() needs a distributed target"), "{e}");

    // A fused loop has no one dimension to slice the exchanged region along.
    let (fp, fc, xy) = (Func::new("dist_err_fp"), Func::new("dist_err_fc"), Var::new("xy"));
    fp.def((x, y), x * y);
    fc.def((x, y), fp.at((x, y + 1)) + 1);
    fp.compute_root().fuse(x, y, xy).distribute(xy);
    fc.distribute(y);
    let e = Pipeline::new(&[&fc]).compile(&"interp-mpi".parse().unwrap()).unwrap_err().to_string();
    assert!(e.contains("Func 'dist_err_fp': distribute(xy)") && e.contains("fused"), "{e}");

    // Each rank would run the update over values other ranks hold.
    let h = Func::new("dist_err_h");
    h.def((x, y), x + y);
    h.update((x, y), h.at((x, y)) * 2);
    h.distribute(y);
    let e = Pipeline::new(&[&h]).compile(&"interp-mpi".parse().unwrap()).unwrap_err().to_string();
    assert!(e.contains("Func 'dist_err_h' is distributed but has updates"), "{e}");
}
