//! Halogen's own single-precision `exp` and `log`: the same sequence of `f32` operations
//! in the interpreter (here) and in the C every back end compiles
//! ([`crate::backend::c_like::scalar_helpers`]: `h_expf`, `h_logf`), so that every target
//! gives the same bits, and without a branch, so that the C compiler turns a vector of
//! them into vector code instead of one call of the C library per lane.
//!
//! Both are Cody–Waite range reduction plus a polynomial (the coefficients of Cephes'
//! `expf` and `logf`), evaluated with plain multiplies and adds, never fused: a fused
//! multiply-add rounds once where this rounds twice, so a target that contracts (the
//! `fast_math` feature) may differ from these in the last bit.
//!
//! | function | largest error against the exact value, over every `f32` input | special values |
//! |---|---|---|
//! | `exp` | under 1 ulp, subnormal results included | `exp(NaN) = NaN`, `exp(+inf) = +inf`, `exp(-inf) = +0`, `exp(±0) = 1`; overflow gives `+inf`, underflow `+0` |
//! | `log` | under 1 ulp, subnormal inputs included | `log(NaN) = NaN`, `log(x < 0) = NaN`, `log(±0) = -inf`, `log(+inf) = +inf`, `log(1) = +0` |
//!
//! The bounds were measured on all 2^32 inputs against `f64` math rounded to `f32` (the
//! `#[ignore]`d test `every_f32_input_is_within_one_ulp`); the test suite checks a sample of
//! them and the special values on every run.
//!
//! ```
//! use halogen::ir::float_math::{exp_f32, log_f32};
//! assert_eq!(exp_f32(0.0), 1.0);
//! assert!((exp_f32(1.0) - std::f32::consts::E).abs() <= f32::EPSILON * 3.0);
//! assert_eq!(log_f32(1.0), 0.0);
//! assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
//! assert!(log_f32(-1.0).is_nan());
//! ```

/// The high part of ln 2 in the Cody–Waite reduction: 0.693359375, whose 9 significant
/// bits make `n * LN2_HI` exact for every `n` the reduction meets.
pub(crate) const LN2_HI: f32 = 0.693_359_4;
/// ln 2 less [`LN2_HI`].
pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
/// `exp(r) ≈ 1 + r + r² · P(r)` on the reduced argument: `P`'s coefficients, highest
/// degree first (Cephes' `expf`).
pub(crate) const EXP_POLY: [f32; 6] = [1.987_569_1e-4, 1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_66, 0.5];
/// `log(1 + f) ≈ f - f²/2 + f³ · Q(f)`: `Q`'s coefficients, highest degree first (Cephes'
/// `logf`).
pub(crate) const LOG_POLY: [f32; 9] = [
    7.037_683_6e-2,
    -1.151_461e-1,
    1.167_699_9e-1,
    -1.242_014_1e-1,
    1.424_932_3e-1,
    -0.166_680_57,
    2.000_071_4e-1,
    -2.499_999_4e-1,
    0.333_333_3,
];

/// `coefs` evaluated at `x` by Horner's rule, one multiply and one add per step (never
/// fused), in the order the C helpers use ([`horner_c`]).
fn horner(coefs: &[f32], x: f32) -> f32 {
    let mut p = coefs[0];
    for c in &coefs[1..] {
        p = p * x + c;
    }
    p
}

/// The C statements of [`horner`]: declares `p` of the C type `ty` and evaluates it at the
/// variable `x`; `broadcast` names the helper that makes a vector of `ty` from a float
/// (`None` for `float`). Each coefficient is printed with the shortest digits that read
/// back as the same `f32`, which C rounds to exactly that value.
pub(crate) fn horner_c(ty: &str, broadcast: Option<&str>, coefs: &[f32], x: &str) -> String {
    let lit = |c: f32| format!("{c:e}f");
    let first = match broadcast {
        Some(bc) => format!("{bc}({})", lit(coefs[0])),
        None => lit(coefs[0]),
    };
    let mut s = format!("    {ty} p = {first};\n");
    for c in &coefs[1..] {
        s.push_str(&format!("    p = p * {x} + {};\n", if *c < 0.0 { format!("({})", lit(*c)) } else { lit(*c) }));
    }
    s
}

/// [`LN2_HI`] and [`LN2_LO`] as C literals that read back as the same `f32`.
pub(crate) fn ln2_c() -> (String, String) {
    (format!("{LN2_HI:e}f"), format!("({LN2_LO:e}f)"))
}

/// `2^bits` for a biased exponent `k + 127` in the normal range.
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `e^x`, within 1 ulp (see the module docs); the C helper `h_expf` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::exp_f32;
/// assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
/// assert_eq!(exp_f32(100.0), f32::INFINITY);
/// assert_eq!(exp_f32(-103.28).to_bits(), 1); // the smallest subnormal
/// ```
pub fn exp_f32(x: f32) -> f32 {
    // Clamped so that 2^n below is two normal halves; NaN goes to the low end here and is
    // given back at the end.
    let c = if x > -104.0 { x } else { -104.0 };
    let c = if c < 89.0 { c } else { 89.0 };
    // n = round(c / ln 2): adding 1.5 * 2^23 rounds to an integer, exactly.
    let t = c * std::f32::consts::LOG2_E + 12_582_912.0;
    let n = t - 12_582_912.0;
    // r = c - n ln 2 in two parts (Cody–Waite): n * 0.693359375 is exact.
    let r = c - n * LN2_HI;
    let r = r - n * LN2_LO;
    let z = r * r;
    let p = horner(&EXP_POLY, r) * z + r + 1.0;
    // p * 2^n, as two halves so that a subnormal result rounds once, at the end.
    let k = n as i32;
    let k1 = k / 2;
    let y = p * pow2(k1) * pow2(k - k1);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// The natural logarithm, within 1 ulp (see the module docs); the C helper `h_logf`
/// computes the same bits.
///
/// ```
/// use halogen::ir::float_math::log_f32;
/// assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
/// assert!((log_f32(f32::from_bits(1)) + 103.279).abs() < 1e-3); // a subnormal input
/// assert!(log_f32(-0.5).is_nan());
/// ```
pub fn log_f32(x: f32) -> f32 {
    // Subnormals (and zero) are scaled into the normal range first.
    let sub = x.to_bits() < 0x0080_0000;
    let xs = if sub { x * 8_388_608.0 } else { x };
    let v = xs.to_bits();
    let e = ((v >> 23) & 0xff) as i32 - 126 - if sub { 23 } else { 0 };
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)), and f = m - 1.
    let m = f32::from_bits((v & 0x007f_ffff) | 0x3f00_0000);
    let low = m < 0.707_106_77;
    let e = if low { e - 1 } else { e };
    let f = if low { m + m - 1.0 } else { m - 1.0 };
    let z = f * f;
    let fe = e as f32;
    let y = horner(&LOG_POLY, f) * f * z;
    let y = y + fe * LN2_LO;
    let y = y - 0.5 * z;
    let r = f + y;
    let r = r + fe * LN2_HI;
    let r = if x == 0.0 { f32::NEG_INFINITY } else { r };
    let r = if x < 0.0 { f32::from_bits(0x7fc0_0000) } else { r };
    let r = if x == f32::INFINITY { x } else { r };
    if x.is_nan() {
        x
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between `got` and the exact `want` (in f64),
    /// measured at `want` rounded to f32.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if got == w || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        if !w.is_finite() || !got.is_finite() {
            return f64::INFINITY;
        }
        let ulp = (f32::from_bits(w.abs().to_bits() + 1) - w.abs()) as f64;
        (got as f64 - want).abs() / ulp
    }

    /// The largest error of `f` against `exact` over the inputs with bit patterns
    /// `start, start + step, ...`.
    fn worst(f: fn(f32) -> f32, exact: fn(f64) -> f64, step: usize) -> (f64, f32) {
        let mut worst = (0.0, 0.0);
        for bits in (0..=u32::MAX).step_by(step) {
            let x = f32::from_bits(bits);
            let e = ulps(f(x), exact(x as f64));
            if e > worst.0 {
                worst = (e, x);
            }
        }
        worst
    }

    /// Both functions within 1 ulp over every `step`-th input bit pattern.
    fn within_one_ulp(step: usize) {
        for (name, f, exact) in
            [("exp", exp_f32 as fn(f32) -> f32, f64::exp as fn(f64) -> f64), ("log", log_f32, f64::ln)]
        {
            let (e, x) = worst(f, exact, step);
            assert!(e <= 1.0, "{name}({x:e}) is {e} ulp off");
        }
    }

    #[test]
    fn a_sample_of_inputs_is_within_one_ulp() {
        within_one_ulp(4093);
    }

    /// All 2^32 inputs (about a minute each in a release build).
    #[test]
    #[ignore]
    fn every_f32_input_is_within_one_ulp() {
        within_one_ulp(1);
    }

    #[test]
    fn special_values() {
        let inf = f32::INFINITY;
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(inf), inf);
        assert_eq!(exp_f32(-inf).to_bits(), 0);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(88.8), inf);
        assert_eq!(exp_f32(-104.0).to_bits(), 0);
        // the smallest subnormal, 2^-149, is e^-103.28
        assert_eq!(exp_f32(-103.28).to_bits(), 1);
        assert!(log_f32(f32::NAN).is_nan());
        assert!(log_f32(-1.0).is_nan());
        assert!(log_f32(-inf).is_nan());
        assert!(log_f32(-f32::MIN_POSITIVE).is_nan());
        assert_eq!(log_f32(0.0), -inf);
        assert_eq!(log_f32(-0.0), -inf);
        assert_eq!(log_f32(inf), inf);
        assert_eq!(log_f32(1.0).to_bits(), 0);
        // subnormal inputs: log(2^-149)
        assert!(ulps(log_f32(f32::from_bits(1)), -149.0 * std::f64::consts::LN_2) <= 1.0);
    }
}
