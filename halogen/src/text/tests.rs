//! The parser's errors point at the line and column of the mistake; what it accepts
//! builds the Funcs the Rust API would.

use super::parse_pipeline;
use crate::prelude::*;

fn err(src: &str) -> String {
    match parse_pipeline(src, "t.halogen") {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e.to_string().trim_start_matches("definition error: ").to_string(),
    }
}

#[test]
fn mistakes_name_the_file_line_and_column() {
    let cases: &[(&str, &str)] = &[
        ("f(x) = x\n", "t.halogen:2:1: the file names no output"),
        ("f(x) = y + 1\noutput f", "t.halogen:1:8: unknown name 'y'"),
        ("input a : u9[2]\n", "t.halogen:1:11: unknown type 'u9'"),
        ("input a : u8[2]\nf(x) = a(x)\noutput f", "t.halogen:2:8: input 'a' has 2 dimensions but is called with 1"),
        ("min(x) = x\noutput min", "t.halogen:1:1: 'min' is a reserved word"),
        ("var u8\n", "t.halogen:1:5: 'u8' is a reserved word"),
        ("f(x) += 1\noutput f", "t.halogen:1:6: expected '=' (Func 'f' has no pure definition to update)"),
        ("f(x) = x < 1 < 2\noutput f", "t.halogen:1:14: comparisons do not chain"),
        ("f(x) = 3000000000\noutput f", "t.halogen:1:8: the integer 3000000000 does not fit in 32 bits"),
        ("param k : u8 = 300\n", "t.halogen:1:16: 300 is not a value of type uint8"),
        ("input a : u8[2] estimate [0, 4]\n", "t.halogen:1:17: input 'a' has 2 dimensions but 1 estimates"),
        ("input a : u8[1]\nb = wrap_around(a)\n", "t.halogen:2:5: unknown boundary condition 'wrap_around'"),
        ("f(x) = x\ng(x) = f(x, x)\noutput g", "t.halogen:2:8: Func 'f' has 1 dimensions but is called with 2"),
        ("f(x) = x\noutput f\nschedule s {\n  f.spin(x)\n}", "t.halogen:4:5: unknown directive 'spin'"),
        ("f(x) = x\noutput f\nschedule s {\n  f.split(x, xo, 4)\n}", "t.halogen:4:5: split takes"),
        ("f(x) = x\noutput f\nschedule s {\n  f.update(0).compute_root()\n}", "compute_root applies to a Func"),
        (
            "f(x) = x\noutput f\nschedule s { f.vectorize(x, 4) }\nschedule s { f.vectorize(x, 8) }",
            "t.halogen:4:10: schedule 's' is defined twice",
        ),
        ("f(x) = x $ 2", "t.halogen:1:10: unexpected character '$'"),
        ("f(x, x) = 1\noutput f", "t.halogen:1:6: variable 'x' appears twice"),
        ("f(x) = 1.5 & 2\noutput f", "t.halogen:1:12: '&' does not apply to floats"),
        ("f(x) = x\noutput f size [f.width]", "t.halogen:2:16: 'f' is not an input or an integer parameter"),
    ];
    for (src, want) in cases {
        let got = err(src);
        assert!(got.starts_with(want) || got.contains(want), "for:\n{src}\nwant: {want}\ngot:  {got}");
    }
}

#[test]
fn a_definition_the_library_refuses_is_an_error_at_its_line() {
    // An update of another type than the pure definition is refused by `Func::update`.
    let e = err("input a : i32[1]\nh(x) = a(x)\nh(x) = f32(x)\noutput h");
    assert!(e.starts_with("t.halogen:3:1:") && e.contains("float32"), "{e}");
}

#[test]
fn statements_continue_across_lines_after_operators_and_inside_brackets() {
    let src = "input a : i32[1]\n# a comment\nf(x) = a(x) +\n       a(x + 1) * (2 +\n  3); g(x) = f(x) - 1\noutput g size [a.width - 1]\n";
    let p = parse_pipeline(src, "t.halogen").unwrap();
    let c = p.pipeline().compile(&Target::interp()).unwrap();
    let img = Buffer::<i32>::from_vec(vec![1, 2, 3], &[3]).unwrap();
    let mut args = Args::new();
    args.image(p.input("a").unwrap(), &img);
    let mut out = Buffer::<i32>::new(&p.output_extents(&[vec![3]], &[]).unwrap());
    c.realize(&args, &mut out).unwrap();
    assert_eq!(out.as_slice(), &[1 + 2 * 5 - 1, 2 + 3 * 5 - 1]);
}

#[test]
fn updates_reductions_params_and_boundaries_build_working_funcs() {
    let src = "
        input a : u8[1]
        param k : i32 = 2 range [0, 10]
        clamped = constant_exterior(a, 7)
        rdom r = [0, a.width]
        hist(i) = 0
        hist(i32(a(r)) % 4) += k
        box(x) = sum(i32(clamped(x + r.x - 1)))
        out(x) = hist(x % 4) * 1000 + box(x)
        output out
        schedule s {
            hist.compute_root()
            out.vectorize(x, 4)
        }
    ";
    let p = parse_pipeline(src, "t.halogen").unwrap();
    p.apply_schedule("s").unwrap();
    let c = p.pipeline().compile(&Target::interp()).unwrap();
    let img = Buffer::<u8>::from_vec(vec![1, 2, 5, 6], &[4]).unwrap();
    let mut args = Args::new();
    args.image(p.input("a").unwrap(), &img);
    p.params()[0].bind(&mut args, 3.0).unwrap();
    let mut out = Buffer::<i32>::new(&[4]);
    c.realize(&args, &mut out).unwrap();
    // Bins of v % 4: {1, 5} -> 1, {2, 6} -> 2; each count is k = 3 per value.
    let hist = [0, 6, 6, 0];
    // box(x) sums the four values from x - 1 on; v[i] is the value at i - 1.
    let v = [7, 1, 2, 5, 6, 7, 7];
    let want: Vec<i32> = (0..4).map(|x| hist[x] * 1000 + v[x] + v[x + 1] + v[x + 2] + v[x + 3]).collect();
    assert_eq!(out.as_slice(), &want[..]);
}

#[test]
fn schedule_mistakes_found_by_the_library_point_at_the_directive() {
    let p = parse_pipeline(
        "f(x, y) = x + y\noutput f\nschedule s {\n  f.split(x, xo, xi, 8)\n  f.parallel(nope)\n}",
        "t.halogen",
    )
    .unwrap();
    let e = p.apply_schedule("s").unwrap_err().to_string();
    assert!(e.starts_with("schedule error: t.halogen:5:5:") && e.contains("nope"), "{e}");
}

#[test]
fn keywords_are_names_where_a_name_is_expected() {
    let src = "input input : i32[1]\noutput(x) = input(x) + 1\noutput output";
    let p = parse_pipeline(src, "t.halogen").unwrap();
    assert_eq!(&*p.output().name(), "output");
}

#[test]
fn gpu_directives_schedule_a_text_pipeline_for_a_gpu() {
    let src = "
        input a : u8[2]
        rdom r = [0, a.width] [0, a.height]
        hist(i) = 0
        hist(i32(a(r.x, r.y))) += 1
        out(x, y) = hist(i32(a(x, y))) + x
        output out
        schedule gpu {
            hist.compute_root().gpu_tile(i, io, ii, 64)
            hist.update(0).atomic().gpu_tile(r.x, r.y, rxo, ryo, rxi, ryi, 8, 4)
            out.gpu_tile(x, y, xo, yo, xi, yi, 16, 8)
        }
    ";
    let p = parse_pipeline(src, "t.halogen").unwrap();
    p.apply_schedule("gpu").unwrap();
    let target: Target = "host-opencl".parse().unwrap();
    let lowered = crate::lower::lower(&[p.output().func_ref().clone()], &target).unwrap().stmt.to_string();
    assert!(lowered.contains("gpu_block (out.s0.y.yo") && lowered.contains("gpu_thread (hist.s1.r"), "{lowered}");
    let e = parse_pipeline(src.replace("hist.update(0).atomic()", "hist.atomic()").as_str(), "t.halogen")
        .unwrap_err()
        .to_string();
    assert!(e.contains("atomic applies to an update"), "{e}");

    let src3 = "f(x, y, z) = x + y * z\noutput f\nschedule s { f.gpu_tile(x, y, z, xo, yo, zo, xi, yi, zi, 8, 4, 2) }";
    let p = parse_pipeline(src3, "t.halogen").unwrap();
    p.apply_schedule("s").unwrap();
    let lowered = crate::lower::lower(&[p.output().func_ref().clone()], &target).unwrap().stmt.to_string();
    assert!(lowered.contains("gpu_block (f.s0.z.zo") && lowered.contains("gpu_thread (f.s0.z.zi"), "{lowered}");

    let scan = "input a : i32[1]\nrdom r = [1, 9]\nc(i) = a(i)\nc(r.x) += c(r.x - 1)\noutput c\n\
                schedule s { c.gpu_single_thread()\n c.update(0).gpu_single_thread() }";
    let p = parse_pipeline(scan, "t.halogen").unwrap();
    p.apply_schedule("s").unwrap();
    let lowered = crate::lower::lower(&[p.output().func_ref().clone()], &target).unwrap().stmt.to_string();
    assert!(lowered.contains("gpu_thread (c.s1.__thread_id_x"), "{lowered}");
}

#[test]
fn parallel_with_a_task_size_runs_tasks_of_that_many_iterations() {
    let src = "f(x, y) = x * 10 + y\noutput f size [6, 11]\nschedule s {\n  f.parallel(y, 4).vectorize(x, 4)\n}";
    let p = parse_pipeline(src, "t.halogen").unwrap();
    p.apply_schedule("s").unwrap();
    let c = p.pipeline().compile(&Target::interp()).unwrap();
    assert!(c.lowered_stmt().to_string().contains("for (f.s0.y.y_ti, 0, 4)"));
    let mut out = Buffer::<i32>::new(&[6, 11]);
    c.realize(&Args::new(), &mut out).unwrap();
    assert_eq!(out[[5, 10]], 60);
}
