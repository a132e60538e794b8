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
