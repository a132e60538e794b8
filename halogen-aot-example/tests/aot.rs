//! The ahead-of-time pipelines run through their generated wrappers, with no JIT: results
//! against plain-Rust references, and every kind of bad buffer as an `Err`.

use halogen::{Buffer, Error};
use halogen_aot_example::blur::blur_u16;
use halogen_aot_example::brighten::brighten_u16;

/// The blur in plain Rust over the output region `mins .. mins + extents`: output `(x, y)`
/// reads `input` at `x..=x+2, y..=y+2`.
fn blur_reference(input: &Buffer<u16>, mins: [i32; 2], extents: [i32; 2]) -> Buffer<u16> {
    let at = |x: i32, y: i32| input[[x, y]];
    let bx = |x: i32, y: i32| at(x, y).wrapping_add(at(x + 1, y)).wrapping_add(at(x + 2, y)) / 3;
    let mut out = Buffer::with_min(&mins, &extents);
    for c in out.coords() {
        let (x, y) = (c[0], c[1]);
        out[[x, y]] = bx(x, y).wrapping_add(bx(x, y + 1)).wrapping_add(bx(x, y + 2)) / 3;
    }
    out
}

/// Pixels that exercise the wrapping sums: a hash of the coordinates over all of u16.
fn noise(extents: &[i32]) -> Buffer<u16> {
    Buffer::from_fn(extents, |c| {
        let h = (c[0] as u32).wrapping_mul(0x9e37_79b9) ^ (c[1] as u32).wrapping_mul(0x85eb_ca6b);
        (h ^ (h >> 15)) as u16
    })
}

fn runtime_message(e: Error) -> String {
    match e {
        Error::Runtime(m) => m,
        other => panic!("expected a runtime error, got {other:?}"),
    }
}

#[test]
fn blur_matches_the_reference_over_many_tiles() {
    // 64×16 tiles: several in each direction, with partial tiles at both edges.
    for (w, h) in [(150, 70), (64, 16), (8, 1), (1, 3)] {
        let input = noise(&[w + 2, h + 2]);
        let mut out = Buffer::<u16>::new(&[w, h]);
        blur_u16(&input, &mut out).unwrap();
        assert_eq!(out, blur_reference(&input, [0, 0], [w, h]), "{w}x{h}");
    }
}

#[test]
fn blur_computes_the_region_the_output_covers() {
    let input = noise(&[100, 60]);
    let mut out = Buffer::<u16>::with_min(&[5, 7], &[80, 40]);
    blur_u16(&input, &mut out).unwrap();
    assert_eq!(out, blur_reference(&input, [5, 7], [80, 40]));

    // An input that starts elsewhere is read at its own coordinates.
    let mut shifted = Buffer::<u16>::with_min(&[-3, -4], &[40, 30]);
    for c in shifted.coords() {
        shifted[[c[0], c[1]]] = (c[0] * 7 + c[1] * 13).rem_euclid(65536) as u16;
    }
    let mut out = Buffer::<u16>::with_min(&[-3, -4], &[38, 28]);
    blur_u16(&shifted, &mut out).unwrap();
    assert_eq!(out, blur_reference(&shifted, [-3, -4], [38, 28]));
}

#[test]
fn an_input_too_small_for_the_output_is_an_error_naming_it() {
    // One column short: the output's footprint reaches x = 65, the input ends at 64.
    let input = noise(&[65, 34]);
    let mut out = Buffer::<u16>::new(&[64, 32]);
    out.fill(7);
    let message = runtime_message(blur_u16(&input, &mut out).unwrap_err());
    assert!(message.contains("input"), "{message}");
    assert!(message.contains("65"), "{message}");
    // The check runs before any pixel is written.
    assert!(out.as_slice().iter().all(|&v| v == 7));

    // An input that starts after the output's footprint does.
    let late = Buffer::<u16>::with_min(&[1, 0], &[80, 40]);
    let message = runtime_message(blur_u16(&late, &mut out).unwrap_err());
    assert!(message.contains("input"), "{message}");
}

#[test]
fn a_buffer_with_the_wrong_number_of_dimensions_is_an_error() {
    let input = noise(&[66, 34]);
    let flat_input = Buffer::<u16>::new(&[66 * 34]);
    let mut out = Buffer::<u16>::new(&[64, 32]);
    let e = blur_u16(&flat_input, &mut out).unwrap_err();
    assert!(matches!(e, Error::Buffer(_)), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("'input'") && text.contains("1 dimensions") && text.contains("in 2"), "{text}");

    let mut cube = Buffer::<u16>::new(&[64, 32, 3]);
    let e = blur_u16(&input, &mut cube).unwrap_err();
    assert!(e.to_string().contains("'blur_y' holds uint16 in 3 dimensions"), "{e}");

    let mut flat = Buffer::<u16>::new(&[4]);
    let e = brighten_u16(&input, 0, 1.0, &mut flat).unwrap_err();
    assert!(e.to_string().contains("'brightened'"), "{e}");
}

#[test]
fn brighten_matches_the_reference() {
    let input = noise(&[37, 21]);
    for (bias, gain) in [(0, 1.0f32), (-300, 1.75), (1000, 0.5), (-70000, 3.0), (12, -1.0)] {
        let mut out = Buffer::<u16>::new(&[37, 21]);
        brighten_u16(&input, bias, gain, &mut out).unwrap();
        let expected = Buffer::from_fn(&[37, 21], |c| {
            let v = input[[c[0], c[1]]] as f32 * gain + bias as f32;
            // Clamped first, so the truncating cast is in range.
            v.clamp(0.0, 65535.0) as u16
        });
        assert_eq!(out, expected, "bias {bias}, gain {gain}");
    }
}

#[test]
fn brighten_needs_an_input_covering_its_output() {
    let input = noise(&[10, 10]);
    let mut out = Buffer::<u16>::new(&[10, 11]);
    let message = runtime_message(brighten_u16(&input, 0, 1.0, &mut out).unwrap_err());
    assert!(message.contains("input"), "{message}");
}

#[test]
fn the_wrappers_run_concurrently_and_never_compile() {
    let input = noise(&[130, 66]);
    let expected = blur_reference(&input, [0, 0], [128, 64]);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut out = Buffer::<u16>::new(&[128, 64]);
                blur_u16(&input, &mut out).unwrap();
                assert_eq!(out, expected);
            });
        }
    });
    assert_eq!(halogen::backend::jit::compiler_invocations(), 0, "no JIT compilation at run time");
}
