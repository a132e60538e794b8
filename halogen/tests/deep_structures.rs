//! Structures as deep as users make them: long chains of stages, expressions of thousands
//! of terms and deeply nested expressions compile and run on every target, with exact
//! pixels, on a thread with a 2 MiB stack (what `cargo test` threads and many servers
//! give). The compiler's walkers recurse once per level; they grow the stack as needed
//! instead of overflowing it.

mod common;

use common::{assert_pixels, realize, targets_under_test};
use halogen::ir::parse::parse_expr;
use halogen::prelude::*;

/// The output's width: pixels `x` in `[0, WIDTH)`.
const WIDTH: i32 = 16;

/// Runs `f` on a thread with a 2 MiB stack, passing on its panic.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let thread = std::thread::Builder::new().stack_size(2 << 20).spawn(f).expect("a thread starts");
    thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// A chain of `n` Funcs named `{prefix}{i}`: `f_0(x) = x`, `f_i(x) = f_{i-1}(x) + 1`, each
/// but the last computed at root when `root` (else left to the auto-scheduler); the
/// output is the last.
fn chain(prefix: &str, n: usize, root: bool) -> Func {
    let x = Var::new("x");
    let mut prev = Func::new(&format!("{prefix}0"));
    prev.def(x, x.expr());
    for i in 1..n {
        if root {
            prev.compute_root();
        }
        let f = Func::new(&format!("{prefix}{i}"));
        f.def(x, prev.at(x) + 1);
        prev = f;
    }
    prev
}

/// The pixels of a [`chain`] of `n`: `x + n - 1`.
fn chain_pixels(n: usize) -> Vec<i32> {
    (0..WIDTH).map(|x| x + n as i32 - 1).collect()
}

/// Checks `f` over `[0, WIDTH)` on `target` against `expected`.
fn check(target: &Target, f: &Func, expected: &[i32]) {
    let got = realize::<i32>(target, f, &Args::new(), &[0], &[WIDTH]);
    assert_pixels(&got, expected, format_args!("'{}' on {target}", f.name()));
}

#[test]
fn a_chain_of_300_stages_computed_at_root() {
    on_small_stack(|| {
        for target in targets_under_test() {
            // Clang's time on the C of a long chain grows faster than the chain (about 3 s
            // for 30 stages, 17 s for 100): the host runs a shorter one.
            let n = if target == Target::interp() { 300 } else { 30 };
            check(&target, &chain(&format!("root_chain_{n}_"), n, true), &chain_pixels(n));
        }
    })
}

#[test]
fn a_chain_of_800_stages_on_the_interpreter() {
    on_small_stack(|| {
        let n = 800;
        check(&Target::interp(), &chain("long_chain_", n, true), &chain_pixels(n));
    })
}

#[test]
fn an_auto_scheduled_chain_of_300_stages() {
    on_small_stack(|| {
        let n = 300;
        let out = chain("auto_chain_", n, false);
        out.set_estimates(&[(0, 1024)]);
        Pipeline::new(&[&out]).auto_schedule(&MachineParams::host()).expect("the auto-scheduler schedules a chain");
        for target in targets_under_test() {
            check(&target, &out, &chain_pixels(n));
        }
    })
}

#[test]
fn a_sum_of_3000_terms() {
    on_small_stack(|| {
        let x = Var::new("x");
        let mut e = x.expr();
        for i in 0..3000 {
            e = e + i;
        }
        let f = Func::new("sum_of_terms");
        f.def(x, e);
        let expected: Vec<i32> = (0..WIDTH).map(|x| x + (0..3000).sum::<i32>()).collect();
        for target in targets_under_test() {
            check(&target, &f, &expected);
        }
    })
}

#[test]
fn divisions_nested_3000_deep() {
    on_small_stack(|| {
        // Nothing folds: the tree stays 6000 levels deep down to the back ends.
        let x = Var::new("x");
        let mut e = x.expr();
        for i in 0..3000 {
            e = e / 2 + x * (i % 5 + 1);
        }
        let f = Func::new("nested_divisions");
        f.def(x, e);
        let expected: Vec<i32> =
            (0..WIDTH).map(|x| (0..3000).fold(x, |v, i| v.div_euclid(2) + x * (i % 5 + 1))).collect();
        for target in targets_under_test() {
            check(&target, &f, &expected);
        }
    })
}

#[test]
fn selects_nested_3000_deep() {
    on_small_stack(|| {
        let x = Var::new("x");
        let mut e = x.expr();
        for i in 0..3000 {
            e = select(x.gt(i % WIDTH), e + 1, x * 2);
        }
        let f = Func::new("nested_selects");
        f.def(x, e);
        let expected: Vec<i32> =
            (0..WIDTH).map(|x| (0..3000).fold(x, |v, i| if x > i % WIDTH { v + 1 } else { x * 2 })).collect();
        for target in targets_under_test() {
            check(&target, &f, &expected);
        }
    })
}

#[test]
fn mins_nested_3000_deep() {
    on_small_stack(|| {
        let x = Var::new("x");
        let mut e = x.expr();
        for i in 0..3000 {
            e = min(e + 1, x + (10_000 - i));
        }
        let f = Func::new("nested_mins");
        f.def(x, e);
        let expected: Vec<i32> = (0..WIDTH).map(|x| (0..3000).fold(x, |v, i| (v + 1).min(x + 10_000 - i))).collect();
        for target in targets_under_test() {
            check(&target, &f, &expected);
        }
    })
}

#[test]
fn a_deep_expression_prints_parses_compares_hashes_and_drops() {
    on_small_stack(|| {
        // A run-time parameter, which is what a free variable reads back as.
        let p = Param::<i32>::new("deep_p");
        let mut e = p.expr();
        for i in 0..20_000 {
            e = if i % 2 == 0 { e * 3 } else { e - i };
        }
        let text = e.to_string();
        let back = parse_expr(&text).expect("the printed expression parses");
        assert!(back == e, "the expression round-trips through its text");
        let mut set = std::collections::HashSet::new();
        set.insert(e.clone());
        assert!(set.contains(&back));
        drop((e, back, set));

        // A million levels: only dropping it, which frees the nodes one by one.
        let mut e = p.expr();
        for i in 0..1_000_000 {
            e = e + i;
        }
        drop(e);
    })
}

#[test]
fn the_lowered_statement_of_a_long_chain_prints_and_parses() {
    on_small_stack(|| {
        let out = chain("printed_chain_", 300, true);
        let compiled = Pipeline::new(&[&out]).compile(&Target::interp()).expect("the chain compiles");
        let s = compiled.lowered_stmt();
        let back = halogen::ir::parse::parse_stmt(&s.to_string()).expect("the printed statement parses");
        assert!(back == *s, "the statement round-trips through its text");
        assert_eq!(format!("{back:?}"), format!("{s:?}"));
        assert_eq!(back.clone(), back);
    })
}

#[test]
fn a_doubling_chain_of_inlined_stages_is_refused_not_run_out_of_memory() {
    // f_i(x) = f_{i-1}(x) + f_{i-1}(x + 1), all inlined: every link doubles the inlined
    // expression (calls with different arguments need their own copies). At 30 links that
    // is 2^30 terms: the process ran out of memory. Now it is an error naming a Func to
    // compute at root; at 10 links (about a thousand terms) it runs.
    let doubling = |prefix: &str, n: usize| {
        let x = Var::new("x");
        let mut prev = Func::new(&format!("{prefix}0"));
        prev.def(x, x.expr());
        for i in 1..n {
            let f = Func::new(&format!("{prefix}{i}"));
            f.def(x, prev.at(x) + prev.at(x + 1));
            prev = f;
        }
        prev
    };
    for target in targets_under_test() {
        let long = doubling("doubling_long", 30);
        let e = Pipeline::new(&[&long]).compile(&target).unwrap_err().to_string();
        assert!(e.contains("doubling_long29") && e.contains("at root"), "{target}: {e}");
        let short = doubling("doubling_short", 10);
        // f_9(x) = sum over k of C(9, k) (x + k) = 512 x + 9 * 256.
        let want: Vec<i32> = (0..WIDTH).map(|x| 512 * x + 9 * 256).collect();
        check(&target, &short, &want);
    }
}
