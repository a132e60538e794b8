//! Snapshots of the lowered loop nest of blur under the paper's four call schedules
//! (Halide 2012, Fig. 4): inline, root, chunk (compute_at) and sliding window
//! (store_root + compute_at).

mod common;

use halogen::prelude::*;

fn blur(schedule: &str) -> String {
    let common::Blur { blur_x, blur_y, x, y, .. } = common::blur();
    match schedule {
        "inline" => {}
        "root" => {
            blur_x.compute_root();
        }
        "chunk" => {
            blur_x.compute_at(&blur_y, y);
        }
        "sliding_window" => {
            blur_x.store_root().compute_at(&blur_y, y);
        }
        "tiled" => {
            let (xi, yi) = (Var::new("xi"), Var::new("yi"));
            blur_y.tile(x, y, xi, yi, 64, 32).vectorize(xi, 8).parallel(y);
            blur_x.compute_at(&blur_y, x).vectorize(x, 8);
        }
        other => panic!("unknown schedule {other}"),
    }
    Pipeline::new(&[&blur_y]).compile(&Target::interp()).unwrap().lowered_stmt().to_string()
}

#[test]
fn blur_inline() {
    insta::assert_snapshot!(blur("inline"));
}

#[test]
fn blur_root() {
    insta::assert_snapshot!(blur("root"));
}

#[test]
fn blur_chunk() {
    insta::assert_snapshot!(blur("chunk"));
}

#[test]
fn blur_sliding_window() {
    insta::assert_snapshot!(blur("sliding_window"));
}

#[test]
fn blur_tiled_vectorized() {
    insta::assert_snapshot!(blur("tiled"));
}
