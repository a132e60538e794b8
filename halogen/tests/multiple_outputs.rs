//! Pipelines with several outputs and Funcs with tuple values as outputs
//! ([`Compiled::realize_outputs`]): same pixels on every back end as separate single-output
//! pipelines, and clear errors for buffers that do not match.

mod common;

use common::gpu::opencl_target;
use common::targets_under_test;
use halogen::prelude::*;

/// A blurred image and its gradient magnitude, both from one shared producer, and a tuple
/// output holding each pixel's maximum of a 3-window and where it is.
struct Outputs {
    input: ImageParam,
    blur: Func,
    edges: Func,
    peak: Func,
    smooth: Func,
}

fn outputs() -> Outputs {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new(Type::u16(), 2, "in");
    let clamped = halogen::boundary::repeat_edge(&input, &input.bounds());
    let smooth = Func::new("smooth");
    smooth.def((x, y), (clamped.at((x - 1, y)) + clamped.at((x, y)) * 2 + clamped.at((x + 1, y))) / 4);
    let blur = Func::new("blur");
    blur.def((x, y), (smooth.at((x, y - 1)) + smooth.at((x, y)) * 2 + smooth.at((x, y + 1))) / 4);
    let edges = Func::new("edges");
    let dx = cast(Type::i32(), smooth.at((x + 1, y))) - cast(Type::i32(), smooth.at((x - 1, y)));
    let dy = cast(Type::i32(), smooth.at((x, y + 1))) - cast(Type::i32(), smooth.at((x, y - 1)));
    edges.def((x, y), sqrt(cast(Type::f32(), dx.clone() * dx + dy.clone() * dy)));
    let r = RDom::new(&[(Expr::from(-1), Expr::from(3))]);
    let peak = Func::new("peak");
    let best = argmax(clamped.at((x + r.x(), y)));
    peak.def_tuple((x, y), &[best[1].clone(), cast(Type::i8(), best[0].clone())]);
    Outputs { input, blur, edges, peak, smooth }
}

fn image(w: i32, h: i32) -> Buffer<u16> {
    Buffer::from_fn(&[w, h], |c| ((c[0] * 7919 + c[1] * 104_729) % 4099) as u16)
}

/// Each output alone, on the interpreter.
fn references(input: &Buffer<u16>, w: i32, h: i32) -> (Buffer<u16>, Buffer<f32>, Buffer<u16>, Buffer<i8>) {
    let o = outputs();
    let mut args = Args::new();
    args.image(&o.input, input);
    let alone = |f: &Func| Pipeline::new(&[f]).compile(&Target::interp()).unwrap();
    let mut blur = Buffer::new(&[w, h]);
    alone(&o.blur).realize(&args, &mut blur).unwrap();
    let mut edges = Buffer::with_min(&[1, 1], &[w - 2, h - 2]);
    alone(&o.edges).realize(&args, &mut edges).unwrap();
    let value = Func::new("peak_value");
    let (x, y) = (Var::new("x"), Var::new("y"));
    value.def((x, y), o.peak.at_tuple((x, y), 0));
    let at = Func::new("peak_at");
    at.def((x, y), o.peak.at_tuple((x, y), 1));
    let mut v = Buffer::new(&[w, h]);
    alone(&value).realize(&args, &mut v).unwrap();
    let mut a = Buffer::new(&[w, h]);
    alone(&at).realize(&args, &mut a).unwrap();
    (blur, edges, v, a)
}

fn schedule_cpu(o: &Outputs) {
    let (x, y, yi) = (Var::new("x"), Var::new("y"), Var::new("yi"));
    o.smooth.compute_root().vectorize(x, 8).parallel(y);
    o.blur.split(y, y, yi, 8).parallel(y).vectorize(x, 8);
    o.edges.vectorize(x, 4);
    o.peak.vectorize(x, 8).parallel(y);
}

fn schedule_gpu(o: &Outputs) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    o.smooth.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
    o.blur.gpu_tile(x, y, xo, yo, xi, yi, 8, 8);
    // Computed on the host, beside device outputs.
    o.edges.vectorize(x, 4);
    o.peak.gpu_tile(x, y, xo, yo, xi, yi, 16, 4);
}

fn check(target: &Target, schedule: fn(&Outputs)) {
    let (w, h) = (45, 21);
    let input = image(w, h);
    let (blur, edges, value, at) = references(&input, w, h);
    let o = outputs();
    schedule(&o);
    let c = Pipeline::new(&[&o.blur, &o.edges, &o.peak]).compile(target).unwrap();
    let mut args = Args::new();
    args.image(&o.input, &input);
    let mut b = Buffer::<u16>::new(&[w, h]);
    let mut e = Buffer::<f32>::with_min(&[1, 1], &[w - 2, h - 2]);
    let (mut v, mut a) = (Buffer::<u16>::new(&[w, h]), Buffer::<i8>::new(&[w, h]));
    c.realize_outputs(&args, &mut [&mut b, &mut e, &mut v, &mut a]).unwrap_or_else(|err| panic!("{target}: {err}"));
    assert_eq!(b.as_slice(), blur.as_slice(), "{target}: blur");
    assert_eq!(e.as_slice(), edges.as_slice(), "{target}: edges");
    assert_eq!(v.as_slice(), value.as_slice(), "{target}: peak value");
    assert_eq!(a.as_slice(), at.as_slice(), "{target}: peak position");
    assert!(a.as_slice().iter().all(|&p| (-1..=1).contains(&p)));
}

#[test]
fn several_outputs_and_tuple_outputs_give_each_output_alone() {
    for t in targets_under_test() {
        check(&t, |_| ());
        check(&t, schedule_cpu);
    }
}

#[test]
fn several_outputs_on_opencl() {
    if let Some(t) = opencl_target() {
        check(&t, schedule_gpu);
    }
}

#[test]
fn buffers_that_do_not_match_the_outputs_are_errors() {
    for t in targets_under_test() {
        let o = outputs();
        let c = Pipeline::new(&[&o.blur, &o.peak]).compile(&t).unwrap();
        let input = image(8, 8);
        let mut args = Args::new();
        args.image(&o.input, &input);
        let mut b = Buffer::<u16>::new(&[8, 8]);
        let e = c.realize(&args, &mut b).unwrap_err().to_string();
        assert!(
            e.contains("this pipeline writes 3 output buffers ('blur', 'peak.0', 'peak.1'); 1 were given")
                && e.contains("realize_outputs"),
            "{t}: {e}"
        );
        let (mut v, mut a) = (Buffer::<u16>::new(&[8, 8]), Buffer::<u8>::new(&[8, 8]));
        let e = c.realize_outputs(&args, &mut [&mut b, &mut v, &mut a]).unwrap_err().to_string();
        assert!(e.contains("output buffer 1 of Func 'peak' holds uint8 but its value 1 is int8"), "{t}: {e}");
        let mut a = Buffer::<i8>::new(&[8, 7]);
        let e = c.realize_outputs(&args, &mut [&mut b, &mut v, &mut a]).unwrap_err().to_string();
        assert!(
            e.contains("output buffer 1 of Func 'peak' differs from buffer 0 in dimension 1 (min 0, extent 7, stride 8 against min 0, extent 8, stride 8)"),
            "{t}: {e}"
        );
        // Different outputs may cover different regions.
        let mut a = Buffer::<i8>::new(&[8, 8]);
        let mut small = Buffer::<u16>::with_min(&[2, 3], &[3, 2]);
        c.realize_outputs(&args, &mut [&mut small, &mut v, &mut a]).unwrap();
    }
}

/// `f` and `g(x, y) = f(x - 1, y) + f(x + 1, y)`, both outputs.
fn output_and_reader() -> (Func, Func) {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("f");
    f.def((x, y), x * 2 + y * 100);
    let g = Func::new("g");
    g.def((x, y), f.at((x - 1, y)) + f.at((x + 1, y)));
    (f, g)
}

fn check_reader(target: &Target, schedule: fn(&Func, &Func)) {
    let (f, g) = output_and_reader();
    schedule(&f, &g);
    let c = Pipeline::new(&[&f, &g]).compile(target).unwrap();
    let mut fb = Buffer::<i32>::with_min(&[-1, 0], &[37, 5]);
    let mut gb = Buffer::<i32>::new(&[35, 5]);
    c.realize_outputs(&Args::new(), &mut [&mut fb, &mut gb]).unwrap_or_else(|e| panic!("{target}: {e}"));
    for y in 0..5 {
        for x in -1..36 {
            assert_eq!(fb[[x, y]], x * 2 + y * 100, "{target}: f({x}, {y})");
        }
        for x in 0..35 {
            assert_eq!(gb[[x, y]], 4 * x + 200 * y, "{target}: g({x}, {y})");
        }
    }
    // The reader needs f one column beyond f's buffer on each side.
    let mut fb = Buffer::<i32>::new(&[35, 5]);
    let e = c.realize_outputs(&Args::new(), &mut [&mut fb, &mut gb]).unwrap_err().to_string();
    assert!(
        e.contains("Output buffer 'f' is too small: dimension 0 needs [-1, 35] but the buffer covers [0, 34]"),
        "{target}: {e}"
    );
}

#[test]
fn an_output_read_by_a_later_output() {
    let vectors = |f: &Func, g: &Func| {
        let (x, y) = (Var::new("x"), Var::new("y"));
        f.vectorize(x, 8).parallel(y);
        g.vectorize(x, 4);
    };
    let auto = |f: &Func, g: &Func| {
        f.set_estimates(&[(-1, 1024), (0, 768)]);
        g.set_estimates(&[(0, 1022), (0, 768)]);
        Pipeline::new(&[f, g]).auto_schedule(&MachineParams::new(2, 16, 32 << 10, 1 << 20, 8 << 20)).unwrap();
    };
    for t in targets_under_test() {
        check_reader(&t, |_, _| ());
        check_reader(&t, vectors);
        check_reader(&t, auto);
    }
    if let Some(t) = opencl_target() {
        check_reader(&t, |f, g| {
            let (x, y) = (Var::new("x"), Var::new("y"));
            let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
            f.gpu_tile(x, y, xo, yo, xi, yi, 8, 2);
            g.gpu_tile(x, y, xo, yo, xi, yi, 16, 4);
        });
        // One on the device, the reader on the host.
        check_reader(&t, |f, _| {
            let (x, y) = (Var::new("x"), Var::new("y"));
            let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
            f.gpu_tile(x, y, xo, yo, xi, yi, 8, 2);
        });
    }
}

/// The generated code itself checks that a tuple's buffers share a shape, for callers that
/// reach it without [`Compiled::realize_outputs`] (C programs calling a static library).
#[test]
fn the_generated_code_checks_the_shapes_of_a_tuples_buffers() {
    use std::collections::BTreeMap;
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("pair");
    f.def_tuple((x, y), &[Expr::from(x) + y, cast(Type::u8(), Expr::from(y))]);
    let lowered = halogen::lower::lower(&[f.func_ref().clone()], &Target::host()).unwrap();
    let Ok(module) = halogen::backend::jit::JitModule::compile_for(&lowered, &Target::host()) else {
        return; // no C compiler: the semantic tests say so
    };
    let mut a = Buffer::<i32>::new(&[6, 4]);
    let mut b = Buffer::<u8>::new(&[6, 3]);
    let outs = vec![("pair.0".into(), a.raw_mut()), ("pair.1".into(), b.raw_mut())];
    let e = module.run(&BTreeMap::new(), &BTreeMap::new(), outs).unwrap_err().to_string();
    assert!(
        e.contains(
            "Output buffer 1 of Func 'pair' must have the shape of buffer 0 (the buffers of a tuple-valued output are \
             stored alike), but in dimension 1 it has min 0, extent 3, stride 6 against min 0, extent 4, stride 6"
        ),
        "{e}"
    );
    let mut b = Buffer::<u8>::new(&[6, 4]);
    let outs = vec![("pair.0".into(), a.raw_mut()), ("pair.1".into(), b.raw_mut())];
    module.run(&BTreeMap::new(), &BTreeMap::new(), outs).unwrap();
    assert_eq!((a[[5, 3]], b[[5, 3]]), (8, 3));
}

#[test]
fn the_auto_scheduler_schedules_several_outputs() {
    let o = outputs();
    o.input.set_estimates(&[(0, 512), (0, 384)]);
    o.blur.set_estimates(&[(0, 512), (0, 384)]);
    o.edges.set_estimates(&[(1, 510), (1, 382)]);
    o.peak.set_estimates(&[(0, 512), (0, 384)]);
    let p = Pipeline::new(&[&o.blur, &o.edges, &o.peak]);
    p.auto_schedule(&MachineParams::new(2, 16, 32 << 10, 1 << 20, 8 << 20)).unwrap();
    let (w, h) = (45, 21);
    let input = image(w, h);
    let (blur, edges, value, at) = references(&input, w, h);
    for t in targets_under_test() {
        let c = p.compile(&t).unwrap();
        let mut args = Args::new();
        args.image(&o.input, &input);
        let mut b = Buffer::<u16>::new(&[w, h]);
        let mut e = Buffer::<f32>::with_min(&[1, 1], &[w - 2, h - 2]);
        let (mut v, mut a) = (Buffer::<u16>::new(&[w, h]), Buffer::<i8>::new(&[w, h]));
        c.realize_outputs(&args, &mut [&mut b, &mut e, &mut v, &mut a]).unwrap_or_else(|err| panic!("{t}: {err}"));
        assert_eq!(b.as_slice(), blur.as_slice(), "{t}: blur");
        assert_eq!(e.as_slice(), edges.as_slice(), "{t}: edges");
        assert_eq!(v.as_slice(), value.as_slice(), "{t}: peak value");
        assert_eq!(a.as_slice(), at.as_slice(), "{t}: peak position");
    }
}
