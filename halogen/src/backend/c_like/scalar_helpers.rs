//! The scalar semantics of [`crate::ir::semantics`] as C helper functions (`h_add_i32`,
//! `h_div_i32`, `h_f2i_u8`, `h_loop_end`, …) that the shared walk
//! ([`super::printer`]) calls, in C every dialect compiles: host C, OpenCL C and CUDA C.

/// The scalar helpers, in C that every dialect compiles: before them, a dialect defines
/// `H_INLINE` (how a helper function is declared), the fixed-width integer types and their
/// `INT*_MIN`/`*_MAX` limits, `floorf`/`floor`, and `h_f32_to_u32`, `h_u32_to_f32`,
/// `h_f64_to_u64`, `h_u64_to_f64` (a float's bits and back).
pub(crate) const SCALAR_HELPERS: &str = r#"
/* ---- scalar semantics (halogen/src/ir/semantics.rs) ---- */

/* Euclidean division and remainder (the remainder is never negative), x / 0 == 0 and
   x % 0 == 0; MIN / -1 wraps to MIN. */
#define H_SIGNED(M, T, UT, UW, MIN, MAX)                                                  \
    H_INLINE T h_div_##M(T a, T b) {                                                 \
        if (b == 0) return 0;                                                             \
        if (b == -1) return (T)(UW)(0 - (UT)a);                                           \
        T q = (T)(a / b);                                                                 \
        if ((T)(a % b) < 0) q = (T)(b > 0 ? q - 1 : q + 1);                               \
        return q;                                                                         \
    }                                                                                     \
    H_INLINE T h_mod_##M(T a, T b) {                                                 \
        if (b == 0 || b == -1) return 0;                                                  \
        T r = (T)(a % b);                                                                 \
        return r < 0 ? (T)(b > 0 ? r + b : r - b) : r;                                    \
    }                                                                                     \
    /* abs of a signed integer is its magnitude in the unsigned type */                   \
    H_INLINE UW h_abs_##M(T x) { return x < 0 ? (UW)(0 - (UT)x) : (UW)x; }

#define H_UNSIGNED(M, T, MAX)                                                             \
    H_INLINE T h_div_##M(T a, T b) { return b == 0 ? 0 : (T)(a / b); }               \
    H_INLINE T h_mod_##M(T a, T b) { return b == 0 ? 0 : (T)(a % b); }

/* Wrap-around +, -, * in an unsigned type wide enough that C does not promote it to int. */
#define H_ARITH(M, T, W)                                                                  \
    H_INLINE T h_add_##M(T a, T b) { return (T)((W)a + (W)b); }                      \
    H_INLINE T h_sub_##M(T a, T b) { return (T)((W)a - (W)b); }                      \
    H_INLINE T h_mul_##M(T a, T b) { return (T)((W)a * (W)b); }

H_ARITH(i8, int8_t, uint32_t)
H_ARITH(i16, int16_t, uint32_t)
H_ARITH(i32, int32_t, uint32_t)
H_ARITH(i64, int64_t, uint64_t)
H_ARITH(u8, uint8_t, uint32_t)
H_ARITH(u16, uint16_t, uint32_t)

/* min(a, b) = b < a ? b : a and max(a, b) = a < b ? b : a; shift amounts are taken
   modulo the width; << is done unsigned, >> is arithmetic for signed types. */
#define H_INT(M, T, UT, UW, BITS)                                                         \
    H_INLINE T h_min_##M(T a, T b) { return b < a ? b : a; }                         \
    H_INLINE T h_max_##M(T a, T b) { return a < b ? b : a; }                         \
    H_INLINE T h_shl_##M(T a, T b) { return (T)(UW)((UT)a << (b & (BITS - 1))); }    \
    H_INLINE T h_shr_##M(T a, T b) { return (T)(a >> (b & (BITS - 1))); }            \
    H_INLINE uint64_t h_bits_##M(T x) { return (uint64_t)(UW)x; }                    \
    H_INLINE T h_from_bits_##M(uint64_t b) { return (T)(UW)b; }

/* float -> int truncates toward zero and saturates; NaN gives 0. Up to 32 bits both
   limits are exact doubles, so a clamp (two min/max instructions, no branch) before the
   conversion does it; 64-bit limits are not (2^63 rounds up), so those compare first. */
#define H_F2I_NARROW(M, T, MIN, MAX)                                                      \
    H_INLINE T h_f2i_##M(double f) {                                                 \
        double c = f == f ? f : 0.0;                                                      \
        c = c < (double)MIN ? (double)MIN : c;                                            \
        c = c > (double)MAX ? (double)MAX : c;                                            \
        return (T)c;                                                                      \
    }
#define H_F2I_WIDE(M, T, MIN, MAX)                                                        \
    H_INLINE T h_f2i_##M(double f) {                                                 \
        if (f != f) return 0;                                                             \
        if (f <= (double)MIN) return MIN;                                                 \
        if (f >= (double)MAX) return MAX;                                                 \
        return (T)f;                                                                      \
    }

H_F2I_NARROW(i8, int8_t, INT8_MIN, INT8_MAX)
H_F2I_NARROW(i16, int16_t, INT16_MIN, INT16_MAX)
H_F2I_NARROW(i32, int32_t, INT32_MIN, INT32_MAX)
H_F2I_WIDE(i64, int64_t, INT64_MIN, INT64_MAX)
H_F2I_NARROW(u8, uint8_t, 0, UINT8_MAX)
H_F2I_NARROW(u16, uint16_t, 0, UINT16_MAX)
H_F2I_NARROW(u32, uint32_t, 0, UINT32_MAX)
H_F2I_WIDE(u64, uint64_t, 0, UINT64_MAX)

/* float -> int where interval analysis proved the value within the integer type (see
   `in_range_float_to_int` in printer.rs): only NaN, which the bounds do not exclude, needs
   care, and the float converts directly, without the detour through double and the
   clamps. */
#define H_F2IR(M, T)                                                                      \
    H_INLINE T h_f2ir_##M##_f32(float f) { return (T)(f == f ? f : 0.0f); }              \
    H_INLINE T h_f2ir_##M##_f64(double f) { return (T)(f == f ? f : 0.0); }

H_F2IR(i8, int8_t)
H_F2IR(i16, int16_t)
H_F2IR(i32, int32_t)
H_F2IR(i64, int64_t)
H_F2IR(u8, uint8_t)
H_F2IR(u16, uint16_t)
H_F2IR(u32, uint32_t)
H_F2IR(u64, uint64_t)

/* float -> int clamped to the integer constants [lo, hi] (see `clamped_float_to_int` in
   printer.rs): NaN to 0, then the clamp in float, then a conversion that cannot leave the
   type, which gives what saturating and then clamping the integer would. */
#define H_F2IC(M, T)                                                                      \
    H_INLINE T h_f2ic_##M##_f32(float f, float lo, float hi) {                            \
        f = f == f ? f : 0.0f;                                                            \
        return (T)(f < lo ? lo : f > hi ? hi : f);                                        \
    }                                                                                     \
    H_INLINE T h_f2ic_##M##_f64(double f, double lo, double hi) {                         \
        f = f == f ? f : 0.0;                                                             \
        return (T)(f < lo ? lo : f > hi ? hi : f);                                        \
    }

H_F2IC(i8, int8_t)
H_F2IC(i16, int16_t)
H_F2IC(i32, int32_t)
H_F2IC(i64, int64_t)
H_F2IC(u8, uint8_t)
H_F2IC(u16, uint16_t)
H_F2IC(u32, uint32_t)
H_F2IC(u64, uint64_t)

H_SIGNED(i8, int8_t, uint32_t, uint8_t, INT8_MIN, INT8_MAX)
H_SIGNED(i16, int16_t, uint32_t, uint16_t, INT16_MIN, INT16_MAX)
H_SIGNED(i32, int32_t, uint32_t, uint32_t, INT32_MIN, INT32_MAX)
H_SIGNED(i64, int64_t, uint64_t, uint64_t, INT64_MIN, INT64_MAX)
H_UNSIGNED(u8, uint8_t, UINT8_MAX)
H_UNSIGNED(u16, uint16_t, UINT16_MAX)
H_UNSIGNED(u32, uint32_t, UINT32_MAX)
H_UNSIGNED(u64, uint64_t, UINT64_MAX)
H_INT(i8, int8_t, uint32_t, uint8_t, 8)
H_INT(i16, int16_t, uint32_t, uint16_t, 16)
H_INT(i32, int32_t, uint32_t, uint32_t, 32)
H_INT(i64, int64_t, uint64_t, uint64_t, 64)
H_INT(u8, uint8_t, uint32_t, uint8_t, 8)
H_INT(u16, uint16_t, uint32_t, uint16_t, 16)
H_INT(u32, uint32_t, uint32_t, uint32_t, 32)
H_INT(u64, uint64_t, uint64_t, uint64_t, 64)

H_INLINE uint64_t h_bits_bool(bool x) { return x; }
H_INLINE bool h_from_bits_bool(uint64_t b) { return b != 0; }

/* Floats: float % is a - b * floor(a / b); min/max as for integers (NaN-sensitive). */
#define H_FLOAT(M, T, U, SUFFIX, TO_BITS, FROM_BITS)                                      \
    H_INLINE T h_min_##M(T a, T b) { return b < a ? b : a; }                              \
    H_INLINE T h_max_##M(T a, T b) { return a < b ? b : a; }                              \
    H_INLINE T h_mod_##M(T a, T b) { return a - b * floor##SUFFIX(a / b); }               \
    H_INLINE uint64_t h_bits_##M(T x) { return TO_BITS(x); }                              \
    H_INLINE T h_from_bits_##M(uint64_t b) { return FROM_BITS((U)b); }

H_FLOAT(f32, float, uint32_t, f, h_f32_to_u32, h_u32_to_f32)
H_FLOAT(f64, double, uint64_t, , h_f64_to_u64, h_u64_to_f64)

/* The end of a loop over [min, min + extent), clamped so the counter never overflows. */
H_INLINE int32_t h_loop_end(int32_t min, int32_t extent) {
    int64_t end = (int64_t)min + (extent > 0 ? extent : 0);
    return end > INT32_MAX ? INT32_MAX : (int32_t)end;
}
"#;

/// Halogen's own single-precision `exp` and `log` (`h_expf`, `h_logf`) as C every dialect
/// compiles, after [`SCALAR_HELPERS`]: the operations of [`crate::ir::float_math`] in the
/// same order, with its coefficients, so every target gives the interpreter's bits, and no
/// branch, so that a vector of them becomes vector code.
pub(crate) fn float_math_helpers() -> String {
    use crate::ir::float_math::{horner_c, ln2_c, EXP_POLY, LOG_POLY};
    let (hi, lo) = ln2_c();
    let exp_poly = horner_c("float", None, &EXP_POLY, "r");
    let log_poly = horner_c("float", None, &LOG_POLY, "f");
    format!(
        r#"
/* ---- exp and log (halogen/src/ir/float_math.rs) ---- */
H_INLINE float h_pow2f(int32_t k) {{ return h_u32_to_f32((uint32_t)(k + 127) << 23); }}

H_INLINE float h_expf(float x) {{
    float c = x > -104.0f ? x : -104.0f;
    c = c < 89.0f ? c : 89.0f;
    const float t = c * 1.442695f + 12582912.0f;
    const float n = t - 12582912.0f;
    float r = c - n * {hi};
    r = r - n * {lo};
    const float z = r * r;
{exp_poly}    p = p * z + r + 1.0f;
    const int32_t k = (int32_t)n;
    const int32_t k1 = k / 2;
    const float y = p * h_pow2f(k1) * h_pow2f(k - k1);
    return x == x ? y : x;
}}

H_INLINE float h_logf(float x) {{
    const bool sub = h_f32_to_u32(x) < 0x00800000u;
    const float xs = sub ? x * 8388608.0f : x;
    const uint32_t v = h_f32_to_u32(xs);
    int32_t e = (int32_t)((v >> 23) & 0xffu) - 126 - (sub ? 23 : 0);
    const float m = h_u32_to_f32((v & 0x007fffffu) | 0x3f000000u);
    const bool low = m < 0.70710677f;
    e = low ? e - 1 : e;
    const float f = low ? m + m - 1.0f : m - 1.0f;
    const float z = f * f;
    const float fe = (float)e;
{log_poly}    float y = p * f * z;
    y = y + fe * {lo};
    y = y - 0.5f * z;
    float r = f + y;
    r = r + fe * {hi};
    r = x == 0.0f ? h_u32_to_f32(0xff800000u) : r;
    r = x < 0.0f ? h_u32_to_f32(0x7fc00000u) : r;
    r = x == h_u32_to_f32(0x7f800000u) ? x : r;
    return x == x ? r : x;
}}
"#
    )
}

/// How the C of a float math function spells its operations on `float` (scalar helpers,
/// every dialect) or on a whole vector of them (the host C's vector helpers), so that one
/// description of each function prints both with the same operations in the same order.
pub(crate) struct FloatC {
    /// The float type.
    pub v: String,
    /// The `int32_t` type of the same lanes (a comparison's result in vectors).
    pub k: String,
    /// The `uint32_t` type of the same lanes.
    pub u: String,
    /// For vectors: the blend helper (`mask, a, b`) and the float broadcast helper.
    pub vector: Option<(String, String)>,
}

impl FloatC {
    /// The scalar spelling.
    pub fn scalar() -> FloatC {
        FloatC { v: "float".into(), k: "int32_t".into(), u: "uint32_t".into(), vector: None }
    }

    /// `c ? a : b` for a comparison `c` and floats `a`, `b`.
    fn sel(&self, c: &str, a: &str, b: &str) -> String {
        match &self.vector {
            Some((blend, _)) => format!("{blend}({c}, {a}, {b})"),
            None => format!("(({c}) ? ({a}) : ({b}))"),
        }
    }

    /// The conjunction (`and`) or disjunction of two comparisons: logical in scalar C
    /// (compilers warn about a bitwise one on booleans), bitwise on vector masks.
    fn both(&self, a: &str, b: &str, and: bool) -> String {
        let op = match (&self.vector, and) {
            (Some(_), true) => "&",
            (Some(_), false) => "|",
            (None, true) => "&&",
            (None, false) => "||",
        };
        format!("({a}) {op} ({b})")
    }

    /// A float constant where a whole value is needed (a select's operand).
    fn lit(&self, c: f32) -> String {
        match &self.vector {
            Some((_, bc)) => format!("{bc}({})", flit(c)),
            None => flit(c),
        }
    }

    /// A float's bits as `u`.
    fn bits(&self, x: &str) -> String {
        match &self.vector {
            Some(_) => format!("(({})({x}))", self.u),
            None => format!("h_f32_to_u32({x})"),
        }
    }

    /// Bits (`u` or `k`) as a float.
    fn of_bits(&self, x: &str) -> String {
        match &self.vector {
            Some(_) => format!("(({})({x}))", self.v),
            None => format!("h_u32_to_f32({x})"),
        }
    }

    /// A nonzero test of an integer as a comparison.
    fn nonzero(&self, x: &str) -> String {
        match &self.vector {
            Some(_) => format!("(({})(({x}) != 0))", self.k),
            None => format!("(({x}) != 0)"),
        }
    }

    /// `k` (an integer) as a float.
    fn to_float(&self, x: &str) -> String {
        match &self.vector {
            Some(_) => format!("__builtin_convertvector({x}, {})", self.v),
            None => format!("(float)({x})"),
        }
    }

    /// A float (integral, small) as `k`.
    fn to_int(&self, x: &str) -> String {
        match &self.vector {
            Some(_) => format!("__builtin_convertvector({x}, {})", self.k),
            None => format!("(int32_t)({x})"),
        }
    }
}

/// An `f32` constant as a C literal that reads back as the same `f32`.
fn flit(c: f32) -> String {
    if c < 0.0 {
        format!("({c:e}f)")
    } else {
        format!("{c:e}f")
    }
}

/// The statements of [`crate::ir::float_math`]'s Horner evaluation of `coefs` at `x` into
/// a new variable `name` of type `ty` (every coefficient but the first is a plain literal,
/// so no broadcast is needed after the first).
fn horner_into(fc: &FloatC, name: &str, coefs: &[f32], x: &str) -> String {
    let mut s = format!("    {} {name} = {};\n", fc.v, fc.lit(coefs[0]));
    for c in &coefs[1..] {
        s.push_str(&format!("    {name} = {name} * {x} + {};\n", flit(*c)));
    }
    s
}

/// The body of `sin` (`shift` 0) or `cos` (`shift` 1) up to the value `v` of the fast path
/// and the comparison `big` of the lanes that take `(float)sin((double)x)` instead (see
/// `float_math::sin_f32`).
pub(crate) fn sin_cos_body(fc: &FloatC, shift: u32) -> String {
    use crate::ir::float_math::{COS_POLY, PIO2_1, PIO2_2, PIO2_3, SIN_POLY, TRIG_HUGE_BITS, TRIG_NEAR_BITS};
    let (v, u) = (&fc.v, &fc.u);
    let mut s = format!(
        "    const {v} t = x * {} + 12582912.0f;
    const {v} j = t - 12582912.0f;
    {v} r = x - j * {};
    r = r - j * {};
    r = r - j * {};
    const {v} z = r * r;
",
        flit(std::f32::consts::FRAC_2_PI),
        flit(PIO2_1),
        flit(PIO2_2),
        flit(PIO2_3)
    );
    s += &horner_into(fc, "ps", &SIN_POLY, "z");
    s += &format!("    const {v} s = ps * z * r + r;\n");
    s += &horner_into(fc, "pc", &COS_POLY, "z");
    s += &format!("    const {v} c = pc * z * z - 0.5f * z + 1.0f;\n");
    s += &format!("    const {u} q = ({} & 3u) + {shift}u;\n", fc.bits("t"));
    s += &format!("    {v} y = {};\n", fc.sel(&fc.nonzero("q & 1u"), "c", "s"));
    s += &format!("    y = {};\n", fc.of_bits(&format!("{} ^ ((q & 2u) << 30)", fc.bits("y"))));
    if shift == 0 {
        s += &format!("    y = {};\n", fc.sel("x == 0.0f", "x", "y"));
    }
    let huge = format!("({} & 0x7fffffffu) > {TRIG_HUGE_BITS:#x}u", fc.bits("x"));
    let near = fc.both(&format!("({} & 0x7fffffffu) < {TRIG_NEAR_BITS:#x}u", fc.bits("r")), "j != 0.0f", true);
    s += &format!("    const {} big = {};\n", fc.k, fc.both(&huge, &near, false));
    s
}

/// The body of `atan` on `a = |x|` into `y` (see `float_math::atan_f32`), the sign of `x`
/// put back.
pub(crate) fn atan_body(fc: &FloatC) -> String {
    use crate::ir::float_math::{ATAN_POLY, PIO2_LO, PIO4_LO};
    let v = &fc.v;
    let mut s = format!("    const {v} a = {};\n", fc.of_bits(&format!("{} & 0x7fffffffu", fc.bits("x"))));
    s += &format!(
        "    const {k} big = a > 2.4142136f;
    const {k} mid = a > 0.41421357f;
    const {v} inv = -1.0f / a;
    const {v} red = (a - 1.0f) / (a + 1.0f);
    const {v} t = {t};
    const {v} y0 = {y0};
    const {v} lo = {lo};
    const {v} z = t * t;
",
        k = fc.k,
        t = fc.sel("big", "inv", &fc.sel("mid", "red", "a")),
        y0 = fc.sel(
            "big",
            &fc.lit(std::f32::consts::FRAC_PI_2),
            &fc.sel("mid", &fc.lit(std::f32::consts::FRAC_PI_4), &fc.lit(0.0))
        ),
        lo = fc.sel("big", &fc.lit(PIO2_LO), &fc.sel("mid", &fc.lit(PIO4_LO), &fc.lit(0.0))),
    );
    s += &horner_into(fc, "p", &ATAN_POLY, "z");
    s += &format!("    p = p * z * t;\n    const {v} ya = y0 + (p + lo + t);\n");
    s += &format!(
        "    const {v} y = {};\n",
        fc.of_bits(&format!("{} | ({} & 0x80000000u)", fc.bits("ya"), fc.bits("x")))
    );
    s
}

/// The body of `atan2(y, x)` given `a`, the arctangent of `y / x`, into `r` (see
/// `float_math::atan2_f32`).
pub(crate) fn atan2_body(fc: &FloatC) -> String {
    use crate::ir::float_math::PI_LO;
    let (v, k) = (&fc.v, &fc.k);
    let sy = format!("({} & 0x80000000u)", fc.bits("y"));
    let pi = fc.of_bits(&format!("{} | {sy}", fc.bits(&fc.lit(std::f32::consts::PI))));
    let lo = fc.of_bits(&format!("{} ^ {sy}", fc.bits(&fc.lit(PI_LO))));
    let corner = fc.of_bits(&format!(
        "{} | {sy}",
        fc.bits(&fc.sel("sx", &fc.lit(2.356_194_5), &fc.lit(std::f32::consts::FRAC_PI_4)))
    ));
    let sign_x = format!("{} & 0x80000000u", fc.bits("x"));
    let ay = format!("{} & 0x7fffffffu", fc.bits("y"));
    let ax = format!("{} & 0x7fffffffu", fc.bits("x"));
    format!(
        "    const {k} sx = {sxv};
    const {v} pi = {pi};
    const {v} lo = {lo};
    {v} r = {r0};
    r = {r1};
    const {k} both_inf = {both_inf};
    r = {r2};
    r = {r3};
",
        sxv = fc.nonzero(&sign_x),
        r0 = fc.sel("sx", "pi + (a + lo)", "a"),
        r1 = fc.sel("y == 0.0f", &fc.sel("sx", "pi", "y"), "r"),
        r2 = fc.sel("both_inf", &corner, "r"),
        r3 = fc.sel(&fc.both("x != x", "y != y", false), "x + y", "r"),
        both_inf = fc.both(&format!("({ay}) == 0x7f800000u"), &format!("({ax}) == 0x7f800000u"), true),
    )
}

/// The body of `tanh` into `y`, given the name of the `exp` (of the same type) it calls
/// (see `float_math::tanh_f32`).
pub(crate) fn tanh_body(fc: &FloatC, exp: &str) -> String {
    use crate::ir::float_math::TANH_POLY;
    let v = &fc.v;
    let mut s = format!(
        "    const {v} a = {};\n    const {v} z = a * a;\n",
        fc.of_bits(&format!("{} & 0x7fffffffu", fc.bits("x")))
    );
    s += &horner_into(fc, "p", &TANH_POLY, "z");
    s += &format!(
        "    const {v} small = p * z * a + a;
    const {v} e = {exp}(a + a);
    const {v} large = 1.0f - 2.0f / (e + 1.0f);
    const {v} m = {m};
    const {v} y = {y};
",
        m = fc.sel("a < 0.625f", "small", "large"),
        y = fc.of_bits(&format!("{} | ({} & 0x80000000u)", fc.bits("m"), fc.bits("x"))),
    );
    s
}

/// The body of `fast_exp` into `y` (see `float_math::fast_exp_f32`); `pow2(k)` spells
/// `2^k` for an `int32_t` (vector) `k`.
pub(crate) fn fast_exp_body(fc: &FloatC, pow2: &dyn Fn(&str) -> String) -> String {
    use crate::ir::float_math::{FAST_EXP_POLY, LN2_HI, LN2_LO};
    let (v, k) = (&fc.v, &fc.k);
    let mut s = format!(
        "    {v} c = {c0};
    c = {c1};
    const {v} t = c * {log2e} + 12582912.0f;
    const {v} n = t - 12582912.0f;
    {v} r = c - n * {hi};
    r = r - n * {lo};
    const {v} z = r * r;
",
        c0 = fc.sel("x > -104.0f", "x", &fc.lit(-104.0)),
        c1 = fc.sel("c < 89.0f", "c", &fc.lit(89.0)),
        log2e = flit(std::f32::consts::LOG2_E),
        hi = flit(LN2_HI),
        lo = flit(LN2_LO),
    );
    s += &horner_into(fc, "p", &FAST_EXP_POLY, "r");
    s += &format!(
        "    p = p * z + r + 1.0f;
    const {k} e = {ni};
    const {k} e1 = e / 2;
    const {v} y = p * {a} * {b};
",
        ni = fc.to_int("n"),
        a = pow2("e1"),
        b = pow2("e - e1"),
    );
    s
}

/// The body of `fast_log` into `y` (see `float_math::fast_log_f32`).
pub(crate) fn fast_log_body(fc: &FloatC) -> String {
    use crate::ir::float_math::{FAST_LOG_POLY, LN2_HI, LN2_LO};
    let (v, k, u) = (&fc.v, &fc.k, &fc.u);
    let mut s = format!(
        "    const {u} w = {bits};
    const {k} e0 = ({k})((w >> 23) & 0xffu) - 126;
    const {v} m = {m};
    const {k} low = m < 0.70710677f;
    const {v} fe0 = {fe0};
    const {v} fe = {fe};
    const {v} f = {f};
    const {v} s = f / (2.0f + f);
    const {v} z = s * s;
",
        bits = fc.bits("x"),
        m = fc.of_bits("(w & 0x007fffffu) | 0x3f000000u"),
        fe0 = fc.to_float("e0"),
        fe = fc.sel("low", "fe0 - 1.0f", "fe0"),
        f = fc.sel("low", "m + m - 1.0f", "m - 1.0f"),
    );
    s += &horner_into(fc, "p", &FAST_LOG_POLY, "z");
    s += &format!(
        "    const {v} l = p * z * s + s;
    {v} y = fe * {hi} + (l + l + fe * {lo});
    y = {nan};
",
        hi = flit(LN2_HI),
        lo = flit(LN2_LO),
        nan = fc.sel("x == x", "y", "x"),
    );
    s
}

/// The body of `fast_pow` into `y`, given the `fast_exp` and `fast_log` it calls.
pub(crate) fn fast_pow_body(fc: &FloatC, exp: &str, log: &str) -> String {
    let v = &fc.v;
    format!(
        "    {v} y = {exp}(x2 * {log}(x));
    y = {};
    y = {};
",
        fc.sel("x == 0.0f", &fc.lit(0.0), "y"),
        fc.sel("x2 == 0.0f", &fc.lit(1.0), "y"),
    )
}

/// The cheaper `fast_exp`, `fast_log` and `fast_pow` (`h_fast_expf`, `h_fast_logf`,
/// `h_fast_powf`) as C every dialect compiles, after [`float_math_helpers`].
pub(crate) fn fast_math_helpers() -> String {
    let fc = FloatC::scalar();
    format!(
        "
/* ---- fast_exp, fast_log, fast_pow (halogen/src/ir/float_math.rs) ---- */
H_INLINE float h_fast_expf(float x) {{
{}    return y;
}}

H_INLINE float h_fast_logf(float x) {{
{}    return y;
}}

H_INLINE float h_fast_powf(float x, float x2) {{
{}    return y;
}}
",
        fast_exp_body(&fc, &|k| format!("h_pow2f({k})")),
        fast_log_body(&fc),
        fast_pow_body(&fc, "h_fast_expf", "h_fast_logf"),
    )
}

/// Halogen's own `sin`, `cos`, `atan`, `atan2`, `tanh` and `pow` (`h_sinf`, …) as host C,
/// after [`float_math_helpers`]: the GPU dialects call the device's functions instead
/// (these fall back to `double` for huge arguments).
pub(crate) fn host_float_math_helpers() -> String {
    use crate::ir::float_math::{POW_EXP_POLY, POW_LN2_HI, POW_LN2_LO, POW_LOG_POLY};
    let fc = FloatC::scalar();
    let dlit = |c: f64| if c < 0.0 { format!("({c:e})") } else { format!("{c:e}") };
    let dhorner = |name: &str, coefs: &[f64], x: &str| {
        let mut s = format!("    double {name} = {};\n", dlit(coefs[0]));
        for c in &coefs[1..] {
            s.push_str(&format!("    {name} = {name} * {x} + {};\n", dlit(*c)));
        }
        s
    };
    format!(
        r#"
/* ---- sin, cos, atan, atan2, tanh, pow (halogen/src/ir/float_math.rs) ---- */
H_INLINE float h_sinf(float x) {{
{sin}    return big ? (float)sin((double)x) : y;
}}

H_INLINE float h_cosf(float x) {{
{cos}    return big ? (float)cos((double)x) : y;
}}

H_INLINE float h_atanf(float x) {{
{atan}    return y;
}}

H_INLINE float h_atan2f(float y, float x) {{
    const float a = h_atanf(y / x);
{atan2}    return r;
}}

H_INLINE float h_tanhf(float x) {{
{tanh}    return y;
}}

H_INLINE float h_powf(float x, float y) {{
    const float ax = h_u32_to_f32(h_f32_to_u32(x) & 0x7fffffffu);
    const bool sub = h_f32_to_u32(ax) < 0x00800000u;
    const float xs = sub ? ax * 8388608.0f : ax;
    const uint32_t v = h_f32_to_u32(xs);
    int32_t e = (int32_t)((v >> 23) & 0xffu) - 126 - (sub ? 23 : 0);
    const float m = h_u32_to_f32((v & 0x007fffffu) | 0x3f000000u);
    const bool low = m < 0.70710677f;
    e = low ? e - 1 : e;
    const double f = low ? (double)m + (double)m - 1.0 : (double)m - 1.0;
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double fe = (double)e;
{logp}    double l = pl * z * s + s;
    l = fe * {hi} + (l + l + fe * {lo});
    l = ax == 0.0f ? -(double)INFINITY : l;
    l = ax == h_u32_to_f32(0x7f800000u) ? (double)INFINITY : l;
    const double t = (double)y * l;
    double c = t > -110.0 ? t : -110.0;
    c = c < 90.0 ? c : 90.0;
    double n = c * 1.4426950408889634 + 6755399441055744.0;
    n = n - 6755399441055744.0;
    double r = c - n * {hi};
    r = r - n * {lo};
{expp}    const int32_t k = (int32_t)n;
    const float mag = (float)(pe * h_u64_to_f64((uint64_t)(k + 1023) << 52));
    const float ay = h_u32_to_f32(h_f32_to_u32(y) & 0x7fffffffu);
    const float yc = ay < 16777216.0f ? y : 0.0f;
    const int32_t yi = (int32_t)yc;
    const bool integer = ay >= 16777216.0f || (float)yi == y;
    const bool odd = (yi & 1) != 0;
    float q = odd ? h_u32_to_f32(h_f32_to_u32(mag) | (h_f32_to_u32(x) & 0x80000000u)) : mag;
    q = (x < 0.0f && ax < h_u32_to_f32(0x7f800000u) && !integer && ay < h_u32_to_f32(0x7f800000u)) ? h_u32_to_f32(0x7fc00000u) : q;
    q = (x != x || y != y) ? x + y : q;
    q = (x == -1.0f && ay == h_u32_to_f32(0x7f800000u)) ? 1.0f : q;
    q = y == 0.0f ? 1.0f : q;
    return x == 1.0f ? 1.0f : q;
}}
"#,
        sin = sin_cos_body(&fc, 0),
        cos = sin_cos_body(&fc, 1),
        atan = atan_body(&fc),
        atan2 = atan2_body(&fc),
        tanh = tanh_body(&fc, "h_expf"),
        logp = dhorner("pl", &POW_LOG_POLY, "z"),
        expp = dhorner("pe", &POW_EXP_POLY, "r"),
        hi = dlit(POW_LN2_HI),
        lo = dlit(POW_LN2_LO),
    )
}
