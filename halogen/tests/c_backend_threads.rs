//! `HALOGEN_NUM_THREADS` sets the size of the pool parallel loops run on. The pool is
//! created on first use, so this test sets the variable first and is alone in its binary.

use halogen::prelude::*;

#[test]
fn halogen_num_threads_sizes_the_pool() {
    std::env::set_var("HALOGEN_NUM_THREADS", "3");
    assert_eq!(halogen::runtime::thread_pool::num_threads(), 3);
    // Nested parallel loops on the 3 threads compute the interpreter's values.
    let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
    let f = Func::new("f");
    f.def((x, y, c), x * 1000 + y * 10 + c);
    let g = Func::new("g");
    g.def((x, y, c), f.at((x, y, c)) * 2 + f.at((x + 1, y, c)));
    g.parallel(c).parallel(y).vectorize(x, 4);
    f.compute_at(&g, y).parallel(c);
    let run = |t: &Target| {
        let compiled = Pipeline::new(&[&g]).compile(t).unwrap();
        let mut out = Buffer::<i32>::new(&[13, 7, 5]);
        compiled.realize(&Args::new(), &mut out).unwrap();
        out.into_vec()
    };
    assert_eq!(run(&Target::host()), run(&Target::interp()));
}
