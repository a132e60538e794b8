//! Deterministic test data: a small random number generator and a procedurally drawn
//! colour picture that looks enough like a photograph (smooth light, edges, corners,
//! texture, noise) for every app to show what it does.

use halogen::prelude::*;

/// SplitMix64: tiny, fast, and the same numbers on every machine.
///
/// ```
/// use halogen_apps::synth::Rng;
/// let mut a = Rng::new(1);
/// let mut b = Rng::new(1);
/// assert_eq!(a.next_u64(), b.next_u64());
/// let u = a.uniform();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed ^ 0x5DEE_CE66_D1CE_4E5B }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Uniform random `u16`s over the whole range.
pub fn random_u16(extents: &[i32], seed: u64) -> Buffer<u16> {
    let mut r = Rng::new(seed);
    Buffer::from_fn(extents, |_| (r.next_u64() >> 48) as u16)
}

/// Uniform random `f32`s in `[lo, hi)`.
pub fn random_f32(extents: &[i32], lo: f32, hi: f32, seed: u64) -> Buffer<f32> {
    let mut r = Rng::new(seed);
    Buffer::from_fn(extents, |_| lo + (hi - lo) * r.uniform() as f32)
}

/// A smooth gray image in `[0, 1]`: waves, a step edge and noise (what
/// `halide_bench.py` gives the bilateral grid).
pub fn smooth_gray(width: i32, height: i32, seed: u64) -> Buffer<f32> {
    let mut r = Rng::new(seed);
    Buffer::from_fn(&[width, height], |c| {
        let (x, y) = (c[0] as f64, c[1] as f64);
        let base = 0.5 + 0.25 * (x / 37.0).sin() * (y / 23.0).cos() + if x > width as f64 / 2.0 { 0.2 } else { 0.0 };
        (base + 0.05 * r.normal()).clamp(0.0, 1.0) as f32
    })
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// A `width × height` planar RGB picture (`(x, y, c)`, values in `[0, 1]`): a sky-to-ground
/// gradient with a soft sun, hills, a house with a window grid (edges and corners), a
/// striped ball (fine detail), a checkerboard floor (aliasing for resamplers) and a little
/// noise. The same picture at any size: everything is drawn in coordinates relative to
/// the image.
///
/// ```
/// let p = halogen_apps::synth::test_picture(64, 48);
/// assert_eq!(p.extents(), vec![64, 48, 3]);
/// assert!(p.as_slice().iter().all(|v| (0.0..=1.0).contains(v)));
/// ```
pub fn test_picture(width: i32, height: i32) -> Buffer<f32> {
    let mut rng = Rng::new(0xC0FFEE);
    let (w, h) = (width.max(1) as f64, height.max(1) as f64);
    let mut out = Buffer::<f32>::new(&[width, height, 3]);
    for y in 0..height {
        for x in 0..width {
            // Coordinates in [0, 1] x [0, h/w]: shapes stay round at any aspect ratio.
            let u = (x as f64 + 0.5) / w;
            let v = (y as f64 + 0.5) / w;
            let vh = (y as f64 + 0.5) / h;
            // Sky: deep blue at the top to pale near the horizon.
            let mut rgb = [0.25 + 0.45 * vh, 0.45 + 0.35 * vh, 0.85 - 0.1 * vh];
            // Sun with a soft glow.
            let (sx, sy) = (0.78, 0.16 * h / w);
            let ds = ((u - sx).powi(2) + (v - sy).powi(2)).sqrt();
            let glow = (-ds * ds / 0.01).exp() * 0.6 + smoothstep(0.075, 0.065, ds);
            for (c, k) in rgb.iter_mut().zip([1.0, 0.9, 0.55]) {
                *c += glow * k;
            }
            // Rolling hills.
            let hill = 0.62 * h / w + 0.05 * (u * 9.0).sin() * (h / w) + 0.03 * (u * 23.0 + 1.0).cos() * (h / w);
            if v > hill {
                let depth = ((v - hill) / (h / w)).min(1.0);
                let t = smoothstep(0.0, 0.01, v - hill);
                let grass = [0.22 + 0.2 * depth, 0.5 - 0.15 * depth, 0.18];
                for (c, g) in rgb.iter_mut().zip(grass) {
                    *c = *c * (1.0 - t) + g * t;
                }
            }
            // Checkerboard floor in the bottom band, in perspective.
            let floor = 0.85 * h / w;
            if v > floor {
                let d = (v - floor) / (h / w - floor + 1e-9) + 0.15;
                let (fu, fv) = ((u - 0.5) / d * 6.0, 1.0 / d * 2.0);
                let check = ((fu.floor() + fv.floor()) as i64).rem_euclid(2) as f64;
                let t = smoothstep(0.0, 0.004, v - floor);
                let tile = 0.35 + 0.45 * check;
                for c in rgb.iter_mut() {
                    *c = *c * (1.0 - t) + tile * t;
                }
            }
            // A house: wall, roof, and a grid of windows.
            let (hx0, hx1, hy0, hy1) = (0.12, 0.42, 0.42 * h / w, 0.8 * h / w);
            if u > hx0 && u < hx1 && v > hy0 && v < hy1 {
                rgb = [0.82, 0.72, 0.55];
                let (wu, wv) = ((u - hx0) / (hx1 - hx0), (v - hy0) / (hy1 - hy0));
                let (cu, cv) = ((wu * 4.0).fract(), (wv * 3.0).fract());
                if (0.25..0.75).contains(&cu) && (0.2..0.7).contains(&cv) && wv < 0.66 {
                    rgb = [0.15, 0.2, 0.35 + 0.3 * cv];
                }
                if wv >= 0.66 && (0.4..0.6).contains(&wu) {
                    rgb = [0.35, 0.2, 0.1]; // door
                }
            }
            let roof_base = 0.42 * h / w;
            let roof_h = 0.14 * h / w;
            let mid = (hx0 + hx1) / 2.0;
            let half = (hx1 - hx0) / 2.0 + 0.03;
            if v <= roof_base && v > roof_base - roof_h * (1.0 - ((u - mid).abs() / half)) && (u - mid).abs() < half {
                rgb = [0.6, 0.18, 0.12];
            }
            // A striped ball: fine detail and a smooth shading gradient.
            let (bx, by, br) = (0.66, 0.7 * h / w, 0.11);
            let db = ((u - bx).powi(2) + (v - by).powi(2)).sqrt();
            if db < br {
                let shade =
                    0.55 + 0.45 * (1.0 - (((u - bx + 0.04).powi(2) + (v - by + 0.04).powi(2)).sqrt() / br)).max(0.0);
                let stripe = if ((u - bx + v - by) * 60.0).sin() > 0.0 { [0.95, 0.85, 0.2] } else { [0.15, 0.35, 0.8] };
                let edge = smoothstep(br, br - 0.004, db);
                for (c, s) in rgb.iter_mut().zip(stripe) {
                    *c = *c * (1.0 - edge) + s * shade * edge;
                }
            }
            // Film grain.
            let n = 0.015 * rng.normal();
            for (c, v) in rgb.iter().enumerate() {
                out[[x, y, c as i32]] = (v + n).clamp(0.0, 1.0) as f32;
            }
        }
    }
    out
}
