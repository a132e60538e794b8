//! Halogen's own single-precision math: `exp`, `log`, `sin`, `cos`, `atan`, `atan2`,
//! `tanh` and `pow`, and the cheaper `fast_exp`, `fast_log` and `fast_pow`. The interpreter
//! computes them here and the C every CPU back end compiles does the same sequence of `f32`
//! operations ([`crate::backend::c_like::scalar_helpers`]: `h_expf`, `h_sinf`, …, and the
//! host C's whole-vector versions), so that every CPU target gives the same bits; and
//! without a branch, so that the C compiler turns a vector of them into vector code instead
//! of one call of the C library per lane. (`tan` is the C library's `tanf`, lane by lane.)
//!
//! Each is a range reduction plus a polynomial, evaluated with plain multiplies and adds,
//! never fused: a fused multiply-add rounds once where this rounds twice, so a target that
//! contracts (the `fast_math` feature) may differ from these in the last bit.
//!
//! - `exp` and `log`: Cody–Waite reduction by ln 2 and the coefficients of Cephes' `expf`
//!   and `logf`.
//! - `sin` and `cos`: one reduction by π/2 with a three-part Cody–Waite constant, then
//!   Cephes' `sinf`/`cosf` polynomials on `[-π/4, π/4]`, picked by the quadrant. Above
//!   `|x| = 64` the reduction's error shows near the zeros (up to 76 ulp by `|x| = 8192`),
//!   and below it within `2^-17` of a nonzero multiple of π/2 (14 ulp next to 3π), so
//!   those arguments (and ±inf, NaN) give `(float)sin((double)x)` (or `cos`), the C
//!   library's double-precision value rounded: the interpreter and the scalar C helper pick
//!   it per element; the vector helper computes the fast path for the whole vector and
//!   redoes only the lanes that need it, only when there are any (a few thousand of the
//!   `f32` values below 64, and the huge ones).
//! - `atan`: reduction to `|t| ≤ tan(π/8)` around 0, π/4 or π/2 (Cephes' `atanf`), the
//!   low part of π/4 or π/2 added back; `atan2(y, x)` is `atan(y / x)` moved to the
//!   quadrant of `(x, y)`, with the special values of C's `atan2f`.
//! - `tanh`: an odd polynomial below `|x| = 0.625` (Cephes' `tanhf`), `1 - 2 / (exp(2|x|) + 1)`
//!   above, which is exactly 1 once `exp` overflows; the sign is put back last, so
//!   `tanh(-0) = -0`.
//! - `pow`: `log|x|` with `log`'s reduction and `exp(y log|x|)` with `exp`'s, both in `f64`
//!   with longer polynomials (the logarithm's error is multiplied by `y`), then the special
//!   values of C's `powf`.
//! - `fast_exp`: `exp`'s reduction with the Taylor polynomial to `r⁵`; `fast_log`: `log`'s
//!   reduction, no subnormal scaling, and `2 atanh(f / (2 + f))` to the 7th power;
//!   `fast_pow(x, y)` is `fast_exp(y * fast_log(x))`. They are for users who trade accuracy
//!   for speed, like Halide's functions of the same names.
//!
//! | function | largest error against the exact value | special values |
//! |---|---|---|
//! | `exp` | 0.99 ulp over every `f32` input, subnormal results included | `exp(NaN) = NaN`, `exp(+inf) = +inf`, `exp(-inf) = +0`, `exp(±0) = 1`; overflow gives `+inf`, underflow `+0` |
//! | `log` | 0.83 ulp over every `f32` input, subnormal inputs included | `log(NaN) = NaN`, `log(x < 0) = NaN`, `log(±0) = -inf`, `log(+inf) = +inf`, `log(1) = +0` |
//! | `sin` | 1.51 ulp over every `f32` input | `sin(±0) = ±0`, subnormals give themselves, `sin(±inf) = sin(NaN) = NaN` |
//! | `cos` | 1.53 ulp over every `f32` input | `cos(±0) = 1`, `cos(±inf) = cos(NaN) = NaN` |
//! | `atan` | 2.09 ulp over every `f32` input | `atan(±0) = ±0`, `atan(±inf) = ±π/2` (the `f32` nearest), `atan(NaN) = NaN` |
//! | `tanh` | 1.23 ulp over every 4093rd `f32` bit pattern (stated bound 2 ulp; not yet run on all 2^32)  | `tanh(±0) = ±0`, `tanh(±inf) = ±1`, `tanh(NaN) = NaN`; `|x| ≥ 9.1` gives ±1 |
//! | `atan2` | 2.29 ulp over 6 million random and edge pairs | C's: `atan2(±0, x ≥ +0) = ±0`, `atan2(±0, x ≤ -0) = ±π`, `atan2(y ≠ 0, ±0) = ±π/2`, `atan2(±inf, +inf) = ±π/4`, `atan2(±inf, -inf) = ±3π/4`, `atan2(y, +inf) = ±0`, `atan2(y, -inf) = ±π`; NaN in, NaN out |
//! | `pow` | correctly rounded on all 6 million random and edge pairs (within 0.5 ulp) | C's `powf`: `pow(x, ±0) = 1` and `pow(1, y) = 1` even for NaN; `pow(x < 0, non-integer y) = NaN`; `pow(x < 0, integer y)` has the sign of `x` for odd `y`; `pow(±0, y < 0) = ±inf` / `+inf`, `pow(±0, y > 0) = ±0` / `+0` (odd / other `y`); `pow(-1, ±inf) = 1`; `pow(|x| < 1, -inf) = +inf`, `pow(|x| > 1, -inf) = +0` and the reverse for `+inf`; `pow(±inf, y)` likewise |
//! | `fast_exp` | 39.3 ulp over every input whose result is normal | `±inf` give `+inf` and `+0`, NaN gives 0; results below `2^-126` are flushed in steps |
//! | `fast_log` | 2.60 ulp over every positive normal input | NaN gives NaN; zero, negatives, subnormals and `+inf` give an unspecified value (the same on every CPU target) |
//! | `fast_pow` | `fast_exp`'s error plus `|y log x|` times `fast_log`'s relative one, for `x > 0` | `fast_pow(0, y) = 0`, `fast_pow(x, 0) = 1`; negative `x` gives an unspecified value |
//!
//! The one-argument bounds were measured on all 2^32 inputs against `f64` math rounded to
//! `f32` (the `#[ignore]`d tests `every_f32_input_is_within_the_stated_error` and
//! `every_input_of_the_fast_versions_is_within_their_stated_error`), the two-argument ones
//! on the pairs of `atan2_and_pow_are_within_the_stated_error`; the test suite checks a
//! sample and the special values on every run.
//!
//! The GPU dialects compute `exp`, `log` and the fast versions with the same helpers (the
//! same bits), and `sin`, `cos`, `atan`, `atan2`, `tanh` and `pow` with the device's own
//! functions, which may differ in the last bits.
//!
//! ```
//! use halogen::ir::float_math::{exp_f32, log_f32, sin_f32, pow_f32};
//! assert_eq!(exp_f32(0.0), 1.0);
//! assert!((exp_f32(1.0) - std::f32::consts::E).abs() <= f32::EPSILON * 3.0);
//! assert_eq!(log_f32(1.0), 0.0);
//! assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
//! assert!(log_f32(-1.0).is_nan());
//! assert_eq!(sin_f32(0.0), 0.0);
//! assert_eq!(pow_f32(3.0, 2.0), 9.0);
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
    // NaN goes to the low end of the reduction and is given back here.
    let y = exp_reduced(x, &EXP_POLY);
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

/// π/2 in three parts for the Cody–Waite reduction of `sin` and `cos`: the first two have
/// few enough significant bits (8 and 11) that `j * PIO2_1` and `j * PIO2_2` are exact for
/// every quadrant count `j` below [`TRIG_HUGE`]'s.
pub(crate) const PIO2_1: f32 = 1.570_312_5;
/// The second part of π/2 (see [`PIO2_1`]).
pub(crate) const PIO2_2: f32 = 4.837_513e-4;
/// π/2 less [`PIO2_1`] and [`PIO2_2`].
pub(crate) const PIO2_3: f32 = 7.549_79e-8;
/// The bits of the largest `|x|` that `sin` and `cos` reduce themselves; above it (and for
/// infinities and NaN) they give `(float)sin((double)x)`, where the three-part π/2 would
/// lose accuracy.
pub(crate) const TRIG_HUGE_BITS: u32 = 0x4280_0000; // 64.0
/// The bits of the smallest reduced argument `|r|` that `sin` and `cos` trust when `x` is not
/// itself that small: below it (within `2^-17` of a nonzero multiple of π/2) they give the
/// `double` value as for huge arguments.
pub(crate) const TRIG_NEAR_BITS: u32 = 0x3700_0000; // 2^-17
/// `sin(r) ≈ r + r³ · S(r²)` on `|r| ≤ π/4`: `S`'s coefficients (Cephes' `sinf`).
pub(crate) const SIN_POLY: [f32; 3] = [-1.951_529_6e-4, 8.332_161e-3, -0.166_666_55];
/// `cos(r) ≈ 1 - r²/2 + r⁴ · C(r²)` on `|r| ≤ π/4` (Cephes' `cosf`).
pub(crate) const COS_POLY: [f32; 3] = [2.443_315_7e-5, -1.388_731_6e-3, 4.166_664_6e-2];
/// `atan(t) ≈ t + t³ · A(t²)` on `|t| ≤ tan(π/8)` (Cephes' `atanf`).
pub(crate) const ATAN_POLY: [f32; 4] = [8.053_744_5e-2, -0.138_776_86, 0.199_777_1, -0.333_329_5];
/// π/2 less its `f32` rounding, added back after the reduction of `atan`.
pub(crate) const PIO2_LO: f32 = -4.371_139e-8;
/// π/4 less its `f32` rounding.
pub(crate) const PIO4_LO: f32 = -2.185_569_5e-8;
/// π less its `f32` rounding.
pub(crate) const PI_LO: f32 = -8.742_278e-8;
/// `tanh(x) ≈ x + x³ · T(x²)` on `|x| < 0.625` (Cephes' `tanhf`).
pub(crate) const TANH_POLY: [f32; 5] = [-5.704_988_7e-3, 2.063_909e-2, -5.373_971_6e-2, 0.133_314_42, -0.333_332_8];
/// `fast_exp`: `exp(r) ≈ 1 + r + r² · P(r)` with the Taylor terms up to `r⁵`.
pub(crate) const FAST_EXP_POLY: [f32; 4] = [8.333_334e-3, 4.166_666_8e-2, 0.166_666_67, 0.5];
/// `fast_log`: `log(1 + f) = 2 atanh(s) ≈ 2s + 2s · s² · L(s²)` with `s = f / (2 + f)`.
pub(crate) const FAST_LOG_POLY: [f32; 3] = [0.142_857_15, 0.2, 0.333_333_34];
/// `pow`'s logarithm in `f64`: `log(1 + f) ≈ 2s + 2s · s² · L(s²)`, the `atanh` series to
/// `s¹⁵` (`|s| ≤ 0.172`, so the first term left out is below `2^-40` of the sum).
pub(crate) const POW_LOG_POLY: [f64; 7] =
    [1.0 / 15.0, 1.0 / 13.0, 1.0 / 11.0, 1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0];
/// `pow`'s `exp(r)` in `f64` on `|r| ≤ ln(2)/2`: the Taylor series to `r¹¹`, highest degree
/// first, ending in the constant term.
pub(crate) const POW_EXP_POLY: [f64; 12] = [
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];
/// ln 2 in two parts for `pow`'s reduction in `f64` (fdlibm's): the high part ends in 32
/// zero bits, so `n * POW_LN2_HI` is exact.
pub(crate) const POW_LN2_HI: f64 = 6.931_471_803_691_238e-1;
/// ln 2 less [`POW_LN2_HI`].
pub(crate) const POW_LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

fn horner_f64(coefs: &[f64], x: f64) -> f64 {
    let mut p = coefs[0];
    for c in &coefs[1..] {
        p = p * x + c;
    }
    p
}

/// `x` with the sign bit of `s` or-ed in.
fn with_sign_of(x: f32, s: f32) -> f32 {
    f32::from_bits(x.to_bits() | (s.to_bits() & 0x8000_0000))
}

/// The reduction shared by `sin` and `cos`, then the polynomial of the quadrant
/// (`shift` 1 turns `sin` into `cos`).
fn sin_cos(x: f32, shift: u32) -> f32 {
    // j = round(x * 2/π); the low bits of t's significand are j's low bits.
    let t = x * std::f32::consts::FRAC_2_PI + 12_582_912.0;
    let j = t - 12_582_912.0;
    let r = x - j * PIO2_1;
    let r = r - j * PIO2_2;
    let r = r - j * PIO2_3;
    let z = r * r;
    let s = horner(&SIN_POLY, z) * z * r + r;
    let c = horner(&COS_POLY, z) * z * z - 0.5 * z + 1.0;
    let q = (t.to_bits() & 3) + shift;
    let v = if q & 1 != 0 { c } else { s };
    let v = f32::from_bits(v.to_bits() ^ ((q & 2) << 30));
    // sin(-0) is -0, which the polynomial turns into +0.
    let v = if x == 0.0 && shift == 0 { x } else { v };
    // Near a nonzero multiple of π/2 the reduction's error is large next to r.
    let near_zero = r.to_bits() & 0x7fff_ffff < TRIG_NEAR_BITS && j != 0.0;
    if x.to_bits() & 0x7fff_ffff > TRIG_HUGE_BITS || near_zero {
        huge_trig(x, shift)
    } else {
        v
    }
}

/// `(float)sin((double)x)` or `(float)cos((double)x)`: the huge arguments' fallback.
fn huge_trig(x: f32, shift: u32) -> f32 {
    if shift == 0 {
        (x as f64).sin() as f32
    } else {
        (x as f64).cos() as f32
    }
}

/// Sine, within 1 ulp (see the module docs); the C helper `h_sinf` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::sin_f32;
/// assert_eq!(sin_f32(0.0), 0.0);
/// assert!(sin_f32(-0.0).is_sign_negative());
/// assert!((sin_f32(std::f32::consts::FRAC_PI_2) - 1.0).abs() <= f32::EPSILON);
/// assert!(sin_f32(f32::INFINITY).is_nan());
/// ```
pub fn sin_f32(x: f32) -> f32 {
    sin_cos(x, 0)
}

/// Cosine, within 1 ulp (see the module docs); the C helper `h_cosf` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::cos_f32;
/// assert_eq!(cos_f32(0.0), 1.0);
/// assert!((cos_f32(std::f32::consts::PI) + 1.0).abs() <= f32::EPSILON);
/// assert!(cos_f32(f32::NAN).is_nan());
/// ```
pub fn cos_f32(x: f32) -> f32 {
    sin_cos(x, 1)
}

/// `atan(a)` for `a = |x|` (or NaN): reduced to `|t| ≤ tan(π/8)` around 0, π/4 or π/2.
fn atan_abs(a: f32) -> f32 {
    let big = a > 2.414_213_6;
    let mid = a > 0.414_213_57;
    let inv = -1.0 / a;
    let red = (a - 1.0) / (a + 1.0);
    let t = if big {
        inv
    } else if mid {
        red
    } else {
        a
    };
    let y0 = if big {
        std::f32::consts::FRAC_PI_2
    } else if mid {
        std::f32::consts::FRAC_PI_4
    } else {
        0.0
    };
    let lo = if big {
        PIO2_LO
    } else if mid {
        PIO4_LO
    } else {
        0.0
    };
    let z = t * t;
    let p = horner(&ATAN_POLY, z) * z * t;
    y0 + (p + lo + t)
}

/// Arctangent, within 2.1 ulp (see the module docs); the C helper `h_atanf` computes the same
/// bits.
///
/// ```
/// use halogen::ir::float_math::atan_f32;
/// assert_eq!(atan_f32(0.0), 0.0);
/// assert_eq!(atan_f32(f32::INFINITY), std::f32::consts::FRAC_PI_2);
/// assert_eq!(atan_f32(-1.0), -std::f32::consts::FRAC_PI_4);
/// ```
pub fn atan_f32(x: f32) -> f32 {
    with_sign_of(atan_abs(f32::from_bits(x.to_bits() & 0x7fff_ffff)), x)
}

/// The angle of the point `(x, y)`, in `[-π, π]`, with the special values of C's `atan2f`
/// (see the module docs); the C helper `h_atan2f` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::atan2_f32;
/// use std::f32::consts::PI;
/// assert_eq!(atan2_f32(0.0, -1.0), PI);
/// assert_eq!(atan2_f32(-0.0, -1.0), -PI);
/// assert_eq!(atan2_f32(-0.0, 1.0).to_bits(), (-0.0f32).to_bits());
/// assert_eq!(atan2_f32(f32::INFINITY, f32::NEG_INFINITY), 3.0 * PI / 4.0);
/// ```
pub fn atan2_f32(y: f32, x: f32) -> f32 {
    let a = atan_f32(y / x);
    let sx = x.to_bits() & 0x8000_0000 != 0;
    let pi = with_sign_of(std::f32::consts::PI, y);
    // -π or π, its low part added to the (smaller) arctangent first.
    let lo = f32::from_bits(PI_LO.to_bits() ^ (y.to_bits() & 0x8000_0000));
    let r = if sx { pi + (a + lo) } else { a };
    let r = if y == 0.0 {
        if sx {
            pi
        } else {
            y
        }
    } else {
        r
    };
    let ay = y.to_bits() & 0x7fff_ffff;
    let ax = x.to_bits() & 0x7fff_ffff;
    let both_inf = ay == 0x7f80_0000 && ax == 0x7f80_0000;
    let corner = with_sign_of(if sx { 2.356_194_5 } else { std::f32::consts::FRAC_PI_4 }, y);
    let r = if both_inf { corner } else { r };
    if x.is_nan() || y.is_nan() {
        x + y
    } else {
        r
    }
}

/// Hyperbolic tangent, within 2 ulp (see the module docs); the C helper `h_tanhf` computes
/// the same bits.
///
/// ```
/// use halogen::ir::float_math::tanh_f32;
/// assert_eq!(tanh_f32(0.0), 0.0);
/// assert!(tanh_f32(-0.0).is_sign_negative());
/// assert_eq!(tanh_f32(100.0), 1.0);
/// assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
/// assert_eq!(tanh_f32(1e-30), 1e-30);
/// ```
pub fn tanh_f32(x: f32) -> f32 {
    let a = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let z = a * a;
    let small = horner(&TANH_POLY, z) * z * a + a;
    // 1 - 2 / (e^2a + 1): e^2a overflows to +inf for large a, giving exactly 1.
    let e = exp_f32(a + a);
    let large = 1.0 - 2.0 / (e + 1.0);
    with_sign_of(if a < 0.625 { small } else { large }, x)
}

/// `x` to the power `y` with the special values of C's `powf` (see the module docs), within
/// 1 ulp; the C helper `h_powf` computes the same bits.
///
/// `log|x|` and `exp(y log|x|)` are computed in `f64` (the same range reductions as
/// [`log_f32`] and [`exp_f32`], with longer polynomials), so that the error of the
/// logarithm, which the exponent multiplies, stays far below the result's last bit.
///
/// ```
/// use halogen::ir::float_math::pow_f32;
/// assert_eq!(pow_f32(2.0, 10.0), 1024.0);
/// assert_eq!(pow_f32(-2.0, 3.0), -8.0);
/// assert!(pow_f32(-2.0, 0.5).is_nan());
/// assert_eq!(pow_f32(f32::NAN, 0.0), 1.0);
/// assert_eq!(pow_f32(-0.0, -3.0), f32::NEG_INFINITY);
/// ```
pub fn pow_f32(x: f32, y: f32) -> f32 {
    // |x| = m * 2^e as in log_f32, m in [sqrt(1/2), sqrt(2)); then log in f64.
    let ax = f32::from_bits(x.to_bits() & 0x7fff_ffff);
    let sub = ax.to_bits() < 0x0080_0000;
    let xs = if sub { ax * 8_388_608.0 } else { ax };
    let v = xs.to_bits();
    let e = ((v >> 23) & 0xff) as i32 - 126 - if sub { 23 } else { 0 };
    let m = f32::from_bits((v & 0x007f_ffff) | 0x3f00_0000);
    let low = m < 0.707_106_77;
    let e = if low { e - 1 } else { e };
    let f = if low { m as f64 + m as f64 - 1.0 } else { m as f64 - 1.0 };
    let s = f / (2.0 + f);
    let z = s * s;
    let fe = e as f64;
    let l = horner_f64(&POW_LOG_POLY, z) * z * s + s;
    let l = fe * POW_LN2_HI + (l + l + fe * POW_LN2_LO);
    let l = if ax == 0.0 { f64::NEG_INFINITY } else { l };
    let l = if ax == f32::INFINITY { f64::INFINITY } else { l };
    // exp(y * l) in f64, clamped (NaN to the low end) to where f32 results end.
    let t = y as f64 * l;
    let c = if t > -110.0 { t } else { -110.0 };
    let c = if c < 90.0 { c } else { 90.0 };
    let n = c * std::f64::consts::LOG2_E + 6_755_399_441_055_744.0;
    let n = n - 6_755_399_441_055_744.0;
    let r = c - n * POW_LN2_HI;
    let r = r - n * POW_LN2_LO;
    let p = horner_f64(&POW_EXP_POLY, r);
    let k = n as i32;
    let mag = (p * f64::from_bits(((k + 1023) as u64) << 52)) as f32;
    // y is an integer if |y| >= 2^24 (all even) or it survives a round trip through i32.
    let ay = f32::from_bits(y.to_bits() & 0x7fff_ffff);
    let yc = if ay < 16_777_216.0 { y } else { 0.0 };
    let yi = yc as i32;
    let integer = ay >= 16_777_216.0 || yi as f32 == y;
    let odd = (yi & 1) != 0;
    let r = if odd { with_sign_of(mag, x) } else { mag };
    let r =
        if x < 0.0 && ax < f32::INFINITY && !integer && ay < f32::INFINITY { f32::from_bits(0x7fc0_0000) } else { r };
    let r = if x.is_nan() || y.is_nan() { x + y } else { r };
    let r = if x == -1.0 && ay == f32::INFINITY { 1.0 } else { r };
    let r = if y == 0.0 { 1.0 } else { r };
    if x == 1.0 {
        1.0
    } else {
        r
    }
}

/// A cheaper `e^x` for users who trade accuracy for speed: [`exp_f32`]'s reduction with a
/// shorter polynomial (see the module docs for its error); `NaN` gives 0. The C helper
/// `h_fast_expf` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::fast_exp_f32;
/// assert_eq!(fast_exp_f32(0.0), 1.0);
/// assert!((fast_exp_f32(1.0) - std::f32::consts::E).abs() < 1e-5);
/// assert_eq!(fast_exp_f32(f32::INFINITY), f32::INFINITY);
/// ```
pub fn fast_exp_f32(x: f32) -> f32 {
    exp_reduced(x, &FAST_EXP_POLY)
}

/// `e^x` by `exp`'s reduction with the polynomial `poly` (`1 + r + r² · poly(r)` on the
/// reduced argument), the steps [`exp_f32`] and [`fast_exp_f32`] share; NaN gives what
/// the clamp's low end gives.
fn exp_reduced(x: f32, poly: &[f32]) -> f32 {
    // Clamped so that 2^n below is two normal halves.
    let c = if x > -104.0 { x } else { -104.0 };
    let c = if c < 89.0 { c } else { 89.0 };
    // n = round(c / ln 2): adding 1.5 * 2^23 rounds to an integer, exactly.
    let t = c * std::f32::consts::LOG2_E + 12_582_912.0;
    let n = t - 12_582_912.0;
    // r = c - n ln 2 in two parts (Cody–Waite): n * 0.693359375 is exact.
    let r = c - n * LN2_HI;
    let r = r - n * LN2_LO;
    let z = r * r;
    let p = horner(poly, r) * z + r + 1.0;
    // p * 2^n, as two halves so that a subnormal result rounds once, at the end.
    let k = n as i32;
    let k1 = k / 2;
    p * pow2(k1) * pow2(k - k1)
}

/// A cheaper natural logarithm for users who trade accuracy for speed (see the module docs
/// for its error), for positive normal `x`; NaN gives NaN, and other inputs (zero,
/// negatives, subnormals, infinity) an unspecified value, the same on every CPU target. The C helper
/// `h_fast_logf` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::fast_log_f32;
/// assert_eq!(fast_log_f32(1.0), 0.0);
/// assert!((fast_log_f32(10.0) - 10f32.ln()).abs() < 1e-5);
/// ```
pub fn fast_log_f32(x: f32) -> f32 {
    let v = x.to_bits();
    let e = ((v >> 23) & 0xff) as i32 - 126;
    let m = f32::from_bits((v & 0x007f_ffff) | 0x3f00_0000);
    let low = m < 0.707_106_77;
    let e = if low { e - 1 } else { e };
    let f = if low { m + m - 1.0 } else { m - 1.0 };
    let s = f / (2.0 + f);
    let z = s * s;
    let fe = e as f32;
    let l = horner(&FAST_LOG_POLY, z) * z * s + s;
    let y = fe * LN2_HI + (l + l + fe * LN2_LO);
    // NaN's payload would otherwise show in the result.
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// A cheaper `x^y`, `fast_exp(y * fast_log(x))`, for users who trade accuracy for speed:
/// for `x > 0` (its error grows with `|y log x|`, see the module docs), and `x == 0` gives
/// 0 and `y == 0` gives 1; for negative `x` the value is unspecified. The C helper
/// `h_fast_powf` computes the same bits.
///
/// ```
/// use halogen::ir::float_math::fast_pow_f32;
/// assert!((fast_pow_f32(2.0, 0.5) - 2f32.sqrt()).abs() < 1e-5);
/// assert_eq!(fast_pow_f32(0.0, 2.0), 0.0);
/// assert_eq!(fast_pow_f32(5.0, 0.0), 1.0);
/// ```
pub fn fast_pow_f32(x: f32, y: f32) -> f32 {
    let r = fast_exp_f32(y * fast_log_f32(x));
    let r = if x == 0.0 { 0.0 } else { r };
    if y == 0.0 {
        1.0
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
    /// `0, step, 2 * step, ...`, on two threads.
    fn worst(f: fn(f32) -> f32, exact: fn(f64) -> f64, step: usize) -> (f64, f32) {
        let half = |lo: u64, hi: u64| {
            let mut worst = (0.0, 0.0);
            for bits in (lo..hi).step_by(step) {
                let x = f32::from_bits(bits as u32);
                let e = ulps(f(x), exact(x as f64));
                if e > worst.0 {
                    worst = (e, x);
                }
            }
            worst
        };
        // The split is a multiple of every step used, so both halves see the same inputs.
        let mid = (1u64 << 31) / step as u64 * step as u64;
        let (a, b) = std::thread::scope(|s| {
            let t = s.spawn(|| half(mid, 1 << 32));
            (half(0, mid), t.join().expect("the other half's thread"))
        });
        if b.0 > a.0 {
            b
        } else {
            a
        }
    }

    /// The one-argument functions, their exact values in `f64` and the largest error the
    /// module docs state, in ulps.
    #[allow(clippy::type_complexity)]
    fn one_argument() -> Vec<(&'static str, fn(f32) -> f32, fn(f64) -> f64, f64)> {
        vec![
            ("sin", sin_f32, f64::sin, 2.0),
            ("cos", cos_f32, f64::cos, 2.0),
            ("atan", atan_f32, f64::atan, 2.1),
            ("tanh", tanh_f32, f64::tanh, 2.0),
            ("exp", exp_f32, f64::exp, 1.0),
            ("log", log_f32, f64::ln, 1.0),
        ]
    }

    /// Every function within its stated error over every `step`-th input bit pattern.
    fn within_bounds(step: usize) {
        for (name, f, exact, bound) in one_argument() {
            let (e, x) = worst(f, exact, step);
            eprintln!("{name}: {e} ulp at {x:e}");
            assert!(e <= bound, "{name}({x:e}) is {e} ulp off");
        }
    }

    #[test]
    fn a_sample_of_inputs_is_within_the_stated_error() {
        within_bounds(4093);
    }

    /// Every input within 2^15 ulps of a multiple of π/2 up to the huge arguments, where
    /// the reduction cancels.
    #[test]
    fn sin_and_cos_near_multiples_of_half_pi() {
        for k in 1..=41 {
            let m = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            for d in -(1i32 << 15)..(1 << 15) {
                for sign in [1.0f32, -1.0] {
                    let x = sign * f32::from_bits((m.to_bits() as i32 + d) as u32);
                    assert!(ulps(sin_f32(x), (x as f64).sin()) <= 2.0, "sin({x:e})");
                    assert!(ulps(cos_f32(x), (x as f64).cos()) <= 2.0, "cos({x:e})");
                }
            }
        }
    }

    /// All 2^32 inputs (about a minute each in a release build).
    #[test]
    #[ignore]
    fn every_f32_input_is_within_the_stated_error() {
        within_bounds(1);
    }

    /// `fast_exp` where the result is normal; elsewhere exact, so not counted.
    fn fast_exp_where_normal(x: f32) -> f32 {
        if (-87.0..88.0).contains(&x) {
            fast_exp_f32(x)
        } else {
            (x as f64).exp() as f32
        }
    }

    /// `fast_log` on positive normal inputs; elsewhere exact, so not counted.
    fn fast_log_where_positive(x: f32) -> f32 {
        if x.is_normal() && x > 0.0 {
            fast_log_f32(x)
        } else {
            (x as f64).ln() as f32
        }
    }

    /// The largest error of the fast versions on positive normal inputs (`fast_log`) and on
    /// inputs whose result is normal (`fast_exp`), every `step`-th bit pattern.
    fn fast_errors(step: usize) -> (f64, f64) {
        (worst(fast_exp_where_normal, f64::exp, step).0, worst(fast_log_where_positive, f64::ln, step).0)
    }

    #[test]
    fn the_fast_versions_are_within_their_stated_error() {
        let (e, l) = fast_errors(4093);
        eprintln!("fast_exp: {e} ulp, fast_log: {l} ulp");
        assert!(e <= FAST_EXP_ULPS && l <= FAST_LOG_ULPS, "fast_exp {e} ulp, fast_log {l} ulp");
    }

    #[test]
    #[ignore]
    fn every_input_of_the_fast_versions_is_within_their_stated_error() {
        let (e, l) = fast_errors(1);
        eprintln!("fast_exp: {e} ulp, fast_log: {l} ulp");
        assert!(e <= FAST_EXP_ULPS && l <= FAST_LOG_ULPS, "fast_exp {e} ulp, fast_log {l} ulp");
    }

    const FAST_EXP_ULPS: f64 = 64.0;
    const FAST_LOG_ULPS: f64 = 4.0;

    /// Two-argument inputs: every pair of a list of edge values, then pseudo-random pairs
    /// (a xorshift generator over all bit patterns, and over moderate magnitudes).
    fn pairs() -> Vec<(f32, f32)> {
        let edges = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.0,
            -2.0,
            0.5,
            -0.5,
            3.0,
            -3.0,
            2.5,
            -2.5,
            1e-30,
            -1e-30,
            1e30,
            -1e30,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            16_777_216.0,
            16_777_217.0,
            -16_777_215.0,
            8_388_609.0,
        ];
        let mut v: Vec<(f32, f32)> = edges.iter().flat_map(|a| edges.iter().map(move |b| (*a, *b))).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..2_000_000 {
            let r = next();
            v.push((f32::from_bits(r as u32), f32::from_bits((r >> 32) as u32)));
            // moderate magnitudes, where results are neither 0 nor infinite
            let a =
                f32::from_bits(0x3000_0000 + (r as u32 % 0x1e00_0000)) * if r & (1 << 40) != 0 { -1.0 } else { 1.0 };
            let b = ((r >> 41) as u32 as f32 / 8_388_608.0 - 0.5) * 60.0;
            v.push((a, b));
            v.push((a, b.round()));
        }
        v
    }

    /// The largest errors of the two-argument functions over [`pairs`].
    fn two_argument_errors() -> (f64, f64) {
        let mut worst = (0.0f64, 0.0f64);
        for (a, b) in pairs() {
            worst.0 = worst.0.max(ulps(atan2_f32(a, b), (a as f64).atan2(b as f64)));
            worst.1 = worst.1.max(ulps(pow_f32(a, b), (a as f64).powf(b as f64)));
        }
        worst
    }

    #[test]
    fn atan2_and_pow_are_within_the_stated_error() {
        let (a, p) = two_argument_errors();
        eprintln!("atan2: {a} ulp, pow: {p} ulp");
        assert!(a <= 3.0 && p <= 0.5, "atan2 {a} ulp, pow {p} ulp");
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

    #[test]
    fn special_values_of_the_others() {
        use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        let (inf, nan, tiny) = (f32::INFINITY, f32::NAN, f32::from_bits(1));
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for (got, want) in [
            (sin_f32(0.0), 0.0),
            (sin_f32(-0.0), -0.0),
            (sin_f32(tiny), tiny),
            (sin_f32(-tiny), -tiny),
            (sin_f32(inf), nan),
            (sin_f32(-inf), nan),
            (sin_f32(nan), nan),
            (sin_f32(1e30), (1e30f32 as f64).sin() as f32),
            (cos_f32(0.0), 1.0),
            (cos_f32(-0.0), 1.0),
            (cos_f32(inf), nan),
            (cos_f32(nan), nan),
            (cos_f32(-1e10), (-1e10f32 as f64).cos() as f32),
            (atan_f32(0.0), 0.0),
            (atan_f32(-0.0), -0.0),
            (atan_f32(inf), FRAC_PI_2),
            (atan_f32(-inf), -FRAC_PI_2),
            (atan_f32(nan), nan),
            (atan_f32(tiny), tiny),
            (tanh_f32(0.0), 0.0),
            (tanh_f32(-0.0), -0.0),
            (tanh_f32(inf), 1.0),
            (tanh_f32(-inf), -1.0),
            (tanh_f32(-20.0), -1.0),
            (tanh_f32(nan), nan),
            (tanh_f32(-tiny), -tiny),
            (atan2_f32(0.0, 0.0), 0.0),
            (atan2_f32(-0.0, 0.0), -0.0),
            (atan2_f32(0.0, -0.0), PI),
            (atan2_f32(-0.0, -0.0), -PI),
            (atan2_f32(-0.0, -5.0), -PI),
            (atan2_f32(3.0, 0.0), FRAC_PI_2),
            (atan2_f32(inf, inf), FRAC_PI_4),
            (atan2_f32(-inf, inf), -FRAC_PI_4),
            (atan2_f32(-inf, -inf), -2.356_194_5),
            (atan2_f32(-2.0, inf), -0.0),
            (atan2_f32(2.0, -inf), PI),
            (atan2_f32(inf, 1.0), FRAC_PI_2),
            (atan2_f32(nan, 1.0), nan),
            (atan2_f32(0.0, nan), nan),
            (pow_f32(nan, 0.0), 1.0),
            (pow_f32(nan, -0.0), 1.0),
            (pow_f32(1.0, nan), 1.0),
            (pow_f32(1.0, inf), 1.0),
            (pow_f32(-1.0, inf), 1.0),
            (pow_f32(-1.0, -inf), 1.0),
            (pow_f32(nan, 1.0), nan),
            (pow_f32(2.0, nan), nan),
            (pow_f32(-8.0, 1.0 / 3.0), nan),
            (pow_f32(-2.0, 3.0), -8.0),
            (pow_f32(-2.0, 2.0), 4.0),
            (pow_f32(-2.0, -1.0), -0.5),
            (pow_f32(0.0, -1.0), inf),
            (pow_f32(-0.0, -1.0), -inf),
            (pow_f32(-0.0, -2.0), inf),
            (pow_f32(-0.0, -0.5), inf),
            (pow_f32(-0.0, 3.0), -0.0),
            (pow_f32(-0.0, 2.0), 0.0),
            (pow_f32(0.0, 0.5), 0.0),
            (pow_f32(0.5, -inf), inf),
            (pow_f32(-0.5, inf), 0.0),
            (pow_f32(2.0, -inf), 0.0),
            (pow_f32(-2.0, inf), inf),
            (pow_f32(-inf, -3.0), -0.0),
            (pow_f32(-inf, -2.0), 0.0),
            (pow_f32(-inf, 3.0), -inf),
            (pow_f32(-inf, 0.5), inf),
            (pow_f32(inf, -1.0), 0.0),
            (pow_f32(inf, 0.1), inf),
            (pow_f32(-3.0, 16_777_215.0), -inf),
            (pow_f32(-3.0, 16_777_216.0), inf),
            (pow_f32(2.0, -149.0), tiny),
            (pow_f32(2.0, 128.0), inf),
            (fast_exp_f32(inf), inf),
            (fast_exp_f32(-inf), 0.0),
            (fast_exp_f32(nan), 0.0),
            (fast_exp_f32(0.0), 1.0),
            (fast_log_f32(1.0), 0.0),
            (fast_log_f32(nan), nan),
            (fast_pow_f32(0.0, 3.0), 0.0),
            (fast_pow_f32(7.0, 0.0), 1.0),
        ] {
            assert!(same(got, want), "{got:e} ({:#x}), expected {want:e} ({:#x})", got.to_bits(), want.to_bits());
        }
    }
}
