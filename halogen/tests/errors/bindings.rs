//! Arguments that do not match the pipeline: images too small, of the wrong type or
//! dimensionality, missing images and parameters.

use crate::common::targets_under_test;
use halogen::prelude::*;

pub(crate) fn brighten() -> (ImageParam, Param<u8>, Func) {
    let input = ImageParam::new(Type::u8(), 2, "photo");
    let gain = Param::<u8>::new("gain");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("brighter");
    f.def((x, y), input.at((x + 1, y)) * gain.expr());
    (input, gain, f)
}

#[test]
fn too_small_input_names_buffer_dimension_and_numbers() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let img = Buffer::<u8>::new(&[10, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'photo'") && e.contains("dimension 0"), "{target}: {e}");
        assert!(e.contains("[1, 10]") && e.contains("[0, 9]"), "{target}: {e}");
    }
}

#[test]
fn wrong_element_type() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let img = Buffer::<u16>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'photo'") && e.contains("uint16") && e.contains("uint8"), "{target}: {e}");

        let img = Buffer::<u8>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<f32>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'brighter'") && e.contains("float32") && e.contains("uint8"), "{target}: {e}");
    }
}

#[test]
fn wrong_dimension_count() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let img = Buffer::<u8>::new(&[11, 8, 3]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'photo'") && e.contains("3 dimensions") && e.contains("2"), "{target}: {e}");

        let img = Buffer::<u8>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'brighter'") && e.contains("1 dimensions"), "{target}: {e}");
    }
}

#[test]
fn missing_bindings() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let mut args = Args::new();
        args.param(&gain, 2);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("ImageParam 'photo'"), "{target}: {e}");

        let img = Buffer::<u8>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("Param 'gain'"), "{target}: {e}");
    }
}
