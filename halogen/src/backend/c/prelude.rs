//! The C text every generated file starts with: the runtime interface (buffer descriptor,
//! scalar parameter union, runtime function table), the scalar helpers that implement
//! [`crate::ir::semantics`] exactly, and a registry of the vector helpers and typedefs a
//! particular pipeline uses (only those are printed, to keep the file short).
//!
//! Every helper is `static inline`, so the C compiler inlines it and drops what is unused.
//! Integer arithmetic that could overflow a signed C type is done in unsigned types, so the
//! generated code has no undefined behaviour (the sanitizer test checks that).

use super::types::{mask_of, mnemonic, physical_lanes, scalar_c, storage_c, typedef, unsigned_of, value_c};
use crate::backend::c_like::scalar_helpers::{
    atan2_body, atan_body, fast_exp_body, fast_log_body, fast_math_helpers, fast_pow_body, float_math_helpers,
    host_float_math_helpers, sin_cos_body, tanh_body, FloatC, SCALAR_HELPERS,
};
use crate::ir::float_math::{horner_c, ln2_c, EXP_POLY, LOG_POLY};
use crate::ir::{Type, TypeCode};
use crate::target::MachineParams;
use std::collections::{BTreeMap, HashSet};

/// The runtime interface shared by the generated code, the Rust runtime
/// ([`crate::runtime::ffi`]) and the header of ahead-of-time compiled pipelines.
pub const RUNTIME_TYPES: &str = r#"#ifndef HALOGEN_RUNTIME_TYPES
#define HALOGEN_RUNTIME_TYPES
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One dimension of a buffer: coordinates [min, min + extent), elements `stride` apart. */
struct halogen_dim {
    int32_t min, extent, stride, flags;
};

struct halogen_buffer;

/* How a device back end (a GPU's) manages a buffer's device copy. Each function takes the
   caller's context pointer and the buffer and returns 0, or nonzero on failure. They move
   memory; the caller keeps the buffer's flags. */
struct halogen_device_interface {
    /* Allocates the device copy for the buffer's shape; stores its handle in `device`. */
    int (*device_malloc)(void *ctx, struct halogen_buffer *buf);
    /* Releases the device copy; sets `device` to 0. */
    int (*device_free)(void *ctx, struct halogen_buffer *buf);
    /* Copies the device copy to the host memory at `host`. */
    int (*copy_to_host)(void *ctx, struct halogen_buffer *buf);
    /* Copies the host memory at `host` to the device copy (allocating it if `device` is 0). */
    int (*copy_to_device)(void *ctx, struct halogen_buffer *buf);
};

/* Bits of halogen_buffer.flags: which copy was written last. */
#define HALOGEN_HOST_DIRTY 1ull
#define HALOGEN_DEVICE_DIRTY 2ull

/* A buffer: its first element (at the mins), element type and dimensions, and its device
   copy, if any. A host-only buffer has device 0, device_interface NULL and flags 0.
   Generated code reads and writes `host` only: a caller whose newest data is on a device
   (HALOGEN_DEVICE_DIRTY) copies it to the host first, and after a successful run the
   outputs' host copies are the newest (HALOGEN_HOST_DIRTY). */
struct halogen_buffer {
    uint64_t device;
    const struct halogen_device_interface *device_interface;
    uint8_t *host;
    uint64_t flags;
    uint8_t type_code; /* 0 int, 1 uint, 2 float; bool is uint of 1 bit (stored in a byte) */
    uint8_t type_bits;
    uint16_t type_lanes;
    int32_t dimensions;
    const struct halogen_dim *dim;
};

/* A scalar parameter's value. */
union halogen_scalar {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
};

/* The GPU kernels of one generated file: their source in the device's language (api 1:
   OpenCL C, 2: CUDA C), the messages of the checks they make (a kernel whose check fails
   stores the check's number, from 1, in its error word), and the runtime's handle of the
   compiled code (null until the first launch). */
struct halogen_kernels {
    int32_t api;
    int32_t checks;
    const char *source;
    const char *const *check_messages;
    void *state;
};

/* One argument of a kernel launch: a scalar's bytes (`value`, `size`), or a buffer and
   the HALOGEN_ACCESS_* bits of how the kernel and the host code use it. */
struct halogen_kernel_arg {
    const void *value;
    uint64_t size;
    struct halogen_buffer *buffer;
    uint64_t access;
};

/* The kernel reads the buffer / writes it. */
#define HALOGEN_ACCESS_READ 1ull
#define HALOGEN_ACCESS_WRITE 2ull
/* Host code of the pipeline writes it: its host copy may be the newer one before a launch. */
#define HALOGEN_ACCESS_HOST_WRITES 4ull
/* Host code of the pipeline reads or writes it: copy it back after a launch writes it. */
#define HALOGEN_ACCESS_HOST_READS 8ull
/* Its host memory holds data from before the run (an input): copy it to a new device copy. */
#define HALOGEN_ACCESS_HOST_DATA 16ull

/* The body of a parallel loop: runs iteration `index`; nonzero means it failed. */
typedef int (*halogen_task)(void *ctx, int32_t index, void *closure);

/* What generated code calls back into. A null table runs parallel loops serially and
   prints errors to stderr. */
struct halogen_runtime {
    /* Runs body(ctx, i, closure) for i in [min, min + extent), in any order and on any
       threads; returns nonzero if an iteration did. */
    int (*par_for)(void *ctx, halogen_task body, int32_t min, int32_t extent, void *closure);
    /* Reports a failure's message; the failing code then returns nonzero. */
    void (*error)(void *ctx, const char *message);
    /* Storage for an intermediate buffer at the pipeline's top level, uninitialized; null
       when out of memory. */
    void *(*alloc)(void *ctx, size_t bytes);
    /* Releases storage from alloc; null is ignored. */
    void (*free)(void *ctx, void *block);
    /* Runs kernel `name` of `kernels` over blocks[0..3] blocks of threads[0..3] threads
       each, with `nargs` arguments; copies buffers between host and device as their
       access bits say. Nonzero on failure (reported through `error`). Null in a runtime
       without devices. */
    int (*gpu_launch)(void *ctx, struct halogen_kernels *kernels, const char *name, const int32_t *blocks,
                      const int32_t *threads, const struct halogen_kernel_arg *args, int32_t nargs);
    /* Releases the device copy of a buffer the pipeline allocated (its storage ends). */
    void (*gpu_release)(void *ctx, struct halogen_buffer *buf);
    /* A border exchange of a distributed run: op 0 posts a send of the region (`dims`
       dimensions of `extents` and `strides`, in elements of `elem_bytes` bytes, from `base`)
       to rank `peer`, op 1 posts a receive from `peer` into it, op 2 completes every posted
       transfer (the other arguments ignored). Nonzero on failure (reported through
       `error`). Null in a runtime without distribution. */
    int (*exchange)(void *ctx, int32_t op, int32_t peer, void *base, int32_t elem_bytes, int32_t dims,
                    const int64_t *extents, const int64_t *strides);
};
#endif
"#;

/// How the host dialect spells what the shared scalar helpers leave to a dialect (see
/// [`SCALAR_HELPERS`]): `static inline` functions, and a float's bits through `memcpy`.
const HOST_SCALAR_BITS: &str = r#"
#define H_INLINE static inline
static inline uint32_t h_f32_to_u32(float x) { uint32_t u; memcpy(&u, &x, sizeof u); return u; }
static inline float h_u32_to_f32(uint32_t u) { float x; memcpy(&x, &u, sizeof x); return x; }
static inline uint64_t h_f64_to_u64(double x) { uint64_t u; memcpy(&u, &x, sizeof u); return u; }
static inline double h_u64_to_f64(uint64_t u) { double x; memcpy(&x, &u, sizeof x); return x; }
"#;

/// The host's own helpers: error messages built piece by piece, allocation, and the serial
/// runtime used when the caller passes none.
const HOST_HELPERS: &str = r#"
/* Error messages, built piece by piece. */
struct h_msg {
    char text[4096];
    size_t len;
};
static inline void h_msg_str(struct h_msg *m, const char *s) {
    size_t n = strlen(s), room = sizeof m->text - 1 - m->len;
    if (n > room) n = room;
    memcpy(m->text + m->len, s, n);
    m->len += n;
    m->text[m->len] = 0;
}
static inline void h_msg_i64(struct h_msg *m, int64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)v);
    h_msg_str(m, b);
}
static inline void h_msg_u64(struct h_msg *m, uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    h_msg_str(m, b);
}
static inline void h_msg_f64(struct h_msg *m, double v, int digits) {
    char b[64];
    snprintf(b, sizeof b, "%.*g", digits, v);
    h_msg_str(m, b);
}

/* An Allocate's errors, out of line: the 4 KiB message is built (and zeroed) only when an
   allocation fails, never on the path of one that succeeds (producers computed per vector
   allocate millions of times a run). */
static __attribute__((noinline, cold)) void h_alloc_negative(const struct halogen_runtime *rt, void *ctx,
                                                             const char *name, int d, int64_t extent) {
    struct h_msg m = {{0}, 0};
    h_msg_str(&m, "allocation of '");
    h_msg_str(&m, name);
    h_msg_str(&m, "': extent ");
    h_msg_i64(&m, d);
    h_msg_str(&m, " is negative (");
    h_msg_i64(&m, extent);
    h_msg_str(&m, ")");
    rt->error(ctx, m.text);
}
static __attribute__((noinline, cold)) void h_alloc_too_large(const struct halogen_runtime *rt, void *ctx,
                                                              const char *name, uint64_t size) {
    struct h_msg m = {{0}, 0};
    h_msg_str(&m, "allocation of '");
    h_msg_str(&m, name);
    h_msg_str(&m, "' asks for ");
    h_msg_u64(&m, size);
    h_msg_str(&m, " elements, more than the limit of ");
    h_msg_u64(&m, HALOGEN_MAX_ALLOCATION_ELEMENTS);
    rt->error(ctx, m.text);
}

/* The number of elements of an Allocate, checked as the interpreter checks it; false (after
   reporting the error) when the extents are negative or too large. */
static inline bool h_alloc_size(const struct halogen_runtime *rt, void *ctx, const char *name, int dims,
                                const int64_t *extents, uint64_t *elements) {
    uint64_t size = 1;
    for (int d = 0; d < dims; d++) {
        if (__builtin_expect(extents[d] < 0, 0)) {
            h_alloc_negative(rt, ctx, name, d, extents[d]);
            return false;
        }
        if (__builtin_mul_overflow(size, (uint64_t)extents[d], &size)) size = UINT64_MAX;
    }
    if (__builtin_expect(size > HALOGEN_MAX_ALLOCATION_ELEMENTS, 0)) {
        h_alloc_too_large(rt, ctx, name, size);
        return false;
    }
    *elements = size;
    return true;
}

static __attribute__((noinline, cold)) void h_alloc_oom(const struct halogen_runtime *rt, void *ctx, const char *name, const char *elem,
                               uint64_t elements) {
    struct h_msg m = {{0}, 0};
    h_msg_str(&m, "allocation of '");
    h_msg_str(&m, name);
    h_msg_str(&m, "': out of memory for ");
    h_msg_u64(&m, elements);
    h_msg_str(&m, " elements of ");
    h_msg_str(&m, elem);
    rt->error(ctx, m.text);
}

/* Heap blocks start on a cache line (H_ALIGN bytes), as stack arrays do: a vector load or
   store at the start of a row then never straddles two lines (malloc only promises 16). */
static inline void *h_aligned_malloc(size_t bytes) {
    if (bytes > SIZE_MAX - H_ALIGN) return NULL;
    return aligned_alloc(H_ALIGN, (bytes + H_ALIGN - 1) / H_ALIGN * H_ALIGN);
}

/* Heap storage of an Allocate, not initialized (bounds inference makes every read follow a
   write), from the runtime's allocator if `pooled`, else from malloc; null (after reporting
   the error) on failure. */
static inline void *h_alloc(const struct halogen_runtime *rt, void *ctx, const char *name, const char *elem,
                            size_t elem_bytes, int dims, const int64_t *extents, int pooled) {
    uint64_t size;
    if (!h_alloc_size(rt, ctx, name, dims, extents, &size)) return NULL;
    size_t bytes = (size > 0 ? size : 1) * elem_bytes;
    void *p = pooled ? rt->alloc(ctx, bytes) : h_aligned_malloc(bytes);
    if (!p) h_alloc_oom(rt, ctx, name, elem, size);
    return p;
}

/* Heap storage of an Allocate inside a loop: the block in `*slot` (of `*slot_bytes`) is
   reused when it is large enough, and replaced by a larger one when not. The function that
   owns the slot frees it when it returns. From malloc: such blocks are small and per
   thread, and malloc's per-thread caches hand them back still in that core's cache. */
static inline void *h_alloc_reuse(const struct halogen_runtime *rt, void *ctx, const char *name, const char *elem,
                                  size_t elem_bytes, int dims, const int64_t *extents, void **slot,
                                  size_t *slot_bytes) {
    uint64_t size;
    if (!h_alloc_size(rt, ctx, name, dims, extents, &size)) return NULL;
    size_t bytes = (size > 0 ? size : 1) * elem_bytes;
    if (bytes > *slot_bytes) {
        free(*slot);
        *slot_bytes = 0;
        *slot = h_aligned_malloc(bytes);
        if (!*slot) {
            h_alloc_oom(rt, ctx, name, elem, size);
            return NULL;
        }
        *slot_bytes = bytes;
    }
    return *slot;
}

/* The runtime used when the caller passes none: serial loops, errors on stderr, malloc. */
static int h_serial_par_for(void *ctx, halogen_task body, int32_t min, int32_t extent, void *closure) {
    for (int64_t i = 0; i < extent; i++) {
        int r = body(ctx, (int32_t)(min + i), closure);
        if (r) return r;
    }
    return 0;
}
static void h_stderr_error(void *ctx, const char *message) {
    (void)ctx;
    fprintf(stderr, "halogen: %s\n", message);
}
static void *h_malloc(void *ctx, size_t bytes) {
    (void)ctx;
    return h_aligned_malloc(bytes);
}
static void h_free(void *ctx, void *block) {
    (void)ctx;
    free(block);
}
/* Without a runtime there is no device and no distribution: a pipeline with GPU kernels or
   distributed loops then fails with a message. */
static const struct halogen_runtime h_serial_runtime = {h_serial_par_for, h_stderr_error, h_malloc, h_free, NULL, NULL,
                                                        NULL};
"#;

/// Streaming stores: an output of at least `H_STREAM_MIN_BYTES` that the pipeline never
/// reads is written around the caches (x86 non-temporal stores), so its lines are not read
/// from memory before they are overwritten: a third less memory traffic for a stencil that
/// reads as much as it writes. Smaller outputs are stored as usual, where whoever reads
/// them next may still find them in cache. The printer calls these only for dense vector
/// stores along the innermost loop, whose lines are written whole and in order.
const STREAM_HELPERS: &str = r#"
#if defined(__x86_64__) && defined(__SSE2__)
#define H_CAN_STREAM 1
typedef long long h_stream16 __attribute__((vector_size(16)));
static inline void h_nt16(void *p, const void *v) {
    h_stream16 c;
    memcpy(&c, v, 16);
#if defined(__clang__)
    __builtin_nontemporal_store(c, (h_stream16 *)p);
#else
    __builtin_ia32_movntdq((h_stream16 *)p, c);
#endif
}
#if defined(__AVX__)
typedef long long h_stream32 __attribute__((vector_size(32)));
static inline void h_nt32(void *p, const void *v) {
    h_stream32 c;
    memcpy(&c, v, 32);
#if defined(__clang__)
    __builtin_nontemporal_store(c, (h_stream32 *)p);
#else
    __builtin_ia32_movntdq256((h_stream32 *)p, c);
#endif
}
#endif
#else
#define H_CAN_STREAM 0
#endif

/* Whether stores to the output `b` should stream: it is at least H_STREAM_MIN_BYTES. */
static inline int h_stream_wanted(const struct halogen_buffer *b) {
#if H_CAN_STREAM
    double bytes = (double)((b->type_bits + 7) / 8);
    for (int d = 0; d < b->dimensions; d++) bytes *= (double)b->dim[d].extent;
    return bytes >= (double)H_STREAM_MIN_BYTES;
#else
    (void)b;
    return 0;
#endif
}

/* Writes the `n` bytes at `v` to `p` with streaming stores and returns 1, or returns 0
   and writes nothing where `p` is not 16-byte aligned or `n` not a multiple of 16. */
static inline int h_stream_store(void *p, const void *v, size_t n) {
#if H_CAN_STREAM
    char *q = (char *)p;
    const char *w = (const char *)v;
    if (n % 16 != 0 || ((uintptr_t)q & 15) != 0) return 0;
#if defined(__AVX__)
    if (n % 32 == 0 && ((uintptr_t)q & 31) == 0) {
        for (size_t i = 0; i < n; i += 32) h_nt32(q + i, w + i);
        return 1;
    }
#endif
    for (size_t i = 0; i < n; i += 16) h_nt16(q + i, w + i);
    return 1;
#else
    (void)p;
    (void)v;
    (void)n;
    return 0;
#endif
}

/* Orders this thread's streaming stores before whatever it does next. */
static inline void h_stream_fence(void) {
#if H_CAN_STREAM
    __builtin_ia32_sfence();
#endif
}
"#;

/// One legal vector width for every function of a file, so that calls pass wide vectors
/// alike on both sides. Clang gives each function the widest vector width it sees in its
/// own code; on CPUs it tunes for 256-bit vectors (Intel's AVX-512 ones) a function passing
/// an `i32x32` and the helper receiving it could disagree on the registers (the helper
/// read lanes 16 to 31 of its indices from its predicate: out-of-bounds loads). The
/// intrinsics' header comes first: its functions carry widths of their own. Every file
/// ends with [`VECTOR_WIDTH_END`].
const VECTOR_WIDTH_START: &str = "#if defined(__clang__) && defined(__AVX512F__)
#include <immintrin.h>
#pragma clang attribute push(__attribute__((min_vector_width(1024))), apply_to = function)
#endif
";

/// The end of the region [`VECTOR_WIDTH_START`] opens, at the end of every file.
pub const VECTOR_WIDTH_END: &str = "
#if defined(__clang__) && defined(__AVX512F__)
#pragma clang attribute pop
#endif
";

/// The C library headers every generated file includes first (a macro, for `concat!`).
macro_rules! standard_includes {
    () => {
        "#include <math.h>\n#include <stddef.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    };
}

/// Every system header a generated file may include, as one header for a C compiler to
/// precompile once (see `backend::jit`): parsing them, above all the x86 intrinsics, is a
/// fixed cost of about 0.3 s per compiled file otherwise. Generated files still include
/// what they need themselves, so they read and compile the same without it; their
/// includes then cost nothing, as every header guards against a second inclusion.
pub const SYSTEM_HEADERS: &str = concat!(
    standard_includes!(),
    "#include <stdbool.h>\n#include <stdint.h>\n",
    "#if defined(__AVX2__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif\n"
);

/// The fixed start of every generated file: includes, the runtime interface with the
/// checks of its layout ([`super::abi`]) and the scalar helpers. `machine` is the target's:
/// outputs of at least its last-level cache stream.
pub fn fixed_prelude(machine: &MachineParams) -> String {
    let mut s = String::new();
    s.push_str(standard_includes!());
    s.push('\n');
    s.push_str(RUNTIME_TYPES);
    s.push_str(&super::abi::layout_asserts());
    // The vector helpers are static inline, so GCC's note that passing wide vectors without
    // AVX changes the ABI does not apply.
    s.push_str("\n#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC diagnostic ignored \"-Wpsabi\"\n#endif\n");
    s.push_str(VECTOR_WIDTH_START);
    // The prelude defines its scalar helpers for every type and a pipeline calls a few;
    // Clang warns about the rest, even static inline ones (GCC does not).
    s.push_str("#pragma GCC diagnostic ignored \"-Wunused-function\"\n");
    s.push_str(&format!(
        "\n#define HALOGEN_MAX_ALLOCATION_ELEMENTS {}ull\n#define H_ALIGN {}\n",
        crate::ir::semantics::MAX_ALLOCATION_ELEMENTS,
        crate::runtime::pool::BLOCK_ALIGN
    ));
    s.push_str(HOST_SCALAR_BITS);
    s.push_str(SCALAR_HELPERS);
    s.push_str(&float_math_helpers());
    s.push_str(&fast_math_helpers());
    s.push_str(&host_float_math_helpers());
    s.push_str(HOST_HELPERS);
    // Outputs stream from the size of the target machine's last-level cache; defining
    // H_STREAM_MIN_BYTES when compiling the file chooses another size.
    s.push_str(&format!("\n#ifndef H_STREAM_MIN_BYTES\n#define H_STREAM_MIN_BYTES {}ll\n#endif\n", machine.llc));
    s.push_str(STREAM_HELPERS);
    s
}

/// The vector typedefs and helpers one generated file needs, each printed once, helpers
/// after the helpers they call.
///
/// ```
/// use halogen::backend::c::prelude::Helpers;
/// use halogen::Type;
/// let mut h = Helpers::default();
/// let t = Type::u16().with_lanes(8);
/// assert_eq!(h.broadcast(t), "h_bc_u16x8");
/// let text = h.text();
/// assert!(text.contains("typedef uint16_t u16x8"));
/// assert!(text.contains("static inline u16x8 h_bc_u16x8(uint16_t v)"));
/// ```
#[derive(Debug, Default)]
pub struct Helpers {
    typedefs: BTreeMap<(u16, String), String>,
    defs: Vec<String>,
    seen: HashSet<String>,
}

/// The body of a gather of `t` from `buf` by the index vector `idx` (of `idx_t`
/// elements), for a function returning the C vector type `v`: the indices and the result
/// pass through arrays, which x86 does faster than extracting and inserting lanes.
fn gather_body(t: Type, idx_t: Type, v: &str) -> String {
    format!(
        "    {ie} i_[{p}];\n    {e} r_[{p}] = {{0}};\n    memcpy(i_, &idx, sizeof i_);\n    for (int i = 0; i < {n}; i++) r_[i] = buf[i_[i]];\n    {v} r;\n    memcpy(&r, r_, sizeof r);\n{}    return r;\n",
        Helpers::normalize(t),
        e = storage_c(t),
        ie = storage_c(idx_t),
        n = t.lanes,
        p = physical_lanes(t.lanes),
    )
}

/// The preprocessor condition under which the masked loads and stores of
/// [`masked_access`] exist: AVX-512 with byte/word masks and 128/256-bit forms.
const MASKED_GUARD: &str = "defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)";

/// The AVX-512 intrinsics that load and store the lanes of `t` under a lane mask, without
/// touching memory for the lanes that are off.
struct MaskedAccess {
    guard: &'static str,
    load: String,
    store: String,
    mask_type: String,
    register: &'static str,
}

/// Masked load and store intrinsics for a vector type that fills one 128-, 256- or 512-bit
/// register exactly (a power-of-two number of lanes of 1, 2, 4 or 8 bytes); `None` for any
/// other shape, which keeps the portable path.
fn masked_access(t: Type) -> Option<MaskedAccess> {
    let bytes = t.bytes() * t.lanes as usize;
    if !t.lanes.is_power_of_two() || t.lanes < 2 || physical_lanes(t.lanes) != t.lanes {
        return None;
    }
    let (prefix, register) = match bytes {
        16 => ("_mm", "__m128i"),
        32 => ("_mm256", "__m256i"),
        64 => ("_mm512", "__m512i"),
        _ => return None,
    };
    let bits = t.bytes() * 8;
    Some(MaskedAccess {
        guard: MASKED_GUARD,
        load: format!("{prefix}_maskz_loadu_epi{bits}"),
        store: format!("{prefix}_mask_storeu_epi{bits}"),
        mask_type: format!("__mmask{}", t.lanes.max(8)),
        register,
    })
}

/// The pieces of a window load for lanes of type `t` (see [`Helpers::load_window`]): a
/// masked load of the window and a permute of it by each lane's offset.
struct WindowLoad {
    t: Type,
    /// The `#if` condition under which the intrinsics exist.
    guard: String,
    masked: MaskedAccess,
    /// The permute of window `w` by offsets `o` (both in `masked.register`).
    permute: String,
}

impl WindowLoad {
    fn of(t: Type) -> Option<WindowLoad> {
        let masked = masked_access(t)?;
        let n = t.lanes as usize;
        // `_mm`, `_mm256` or `_mm512`, as the masked load is named.
        let prefix = masked.load.split("_maskz").next().unwrap_or_default().to_string();
        let (permute, extra_guard) = match (t.bytes(), n) {
            (4, 4) => ("_mm_castps_si128(_mm_permutevar_ps(_mm_castsi128_ps(w), o))".to_string(), ""),
            (1, 16) => ("_mm_shuffle_epi8(w, o)".to_string(), ""),
            (1, _) => (format!("{prefix}_permutexvar_epi8(o, w)"), " && defined(__AVX512VBMI__)"),
            (8, 2) => return None,
            (bytes, _) => (format!("{prefix}_permutexvar_epi{}(o, w)", bytes * 8), ""),
        };
        Some(WindowLoad { t, guard: format!("{}{extra_guard}", masked.guard), masked, permute })
    }

    /// The statements that load the window of `len + 1` elements at `base` and return it
    /// permuted by `offsets`, a vector of `offsets_ty` (32-bit lanes), narrowed to the
    /// elements' width first where they are narrower.
    fn body(&self, h: &mut Helpers, base: &str, len: &str, offsets: &str, offsets_ty: Type) -> String {
        let t = self.t;
        let lane_offsets = Type::int((t.bytes() * 8) as u8).with_lanes(t.lanes);
        let (v, ov) = (h.ty(t), h.ty(lane_offsets));
        let offsets = if lane_offsets.bits == offsets_ty.bits {
            offsets.to_string()
        } else {
            format!("__builtin_convertvector({offsets}, {ov})")
        };
        format!(
            "        const {reg} w = {load}(({kt})((2ull << {len}) - 1), {base});
        const {ov} o_ = ({ov})({offsets});
        {reg} o;
        memcpy(&o, &o_, sizeof o);
        const {reg} q = {permute};
        {v} r_;
        memcpy(&r_, &q, sizeof r_);
        return r_;
",
            reg = self.masked.register,
            load = self.masked.load,
            kt = self.masked.mask_type,
            permute = self.permute,
        )
    }
}

impl Helpers {
    /// The C name of type `t`, registering its typedef if it is a vector.
    pub fn ty(&mut self, t: Type) -> String {
        if t.is_vector() {
            let name = mnemonic(t);
            self.typedefs.entry((t.lanes, name.clone())).or_insert_with(|| typedef(t));
        }
        value_c(t)
    }

    /// Registers the helper `name`, built by `make` (which may register helpers it calls)
    /// the first time; returns `name`.
    fn helper(&mut self, name: String, make: impl FnOnce(&mut Self) -> String) -> String {
        if !self.seen.contains(&name) {
            self.seen.insert(name.clone());
            let text = make(self);
            self.defs.push(text);
        }
        name
    }

    /// Typedefs, then helpers, as C text.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if !self.typedefs.is_empty() {
            s.push_str("\n/* ---- vector types (GCC/Clang vector extensions) ---- */\n");
            for t in self.typedefs.values() {
                s.push_str(t);
                s.push('\n');
            }
        }
        if !self.defs.is_empty() {
            s.push_str("\n/* ---- vector helpers ---- */\n");
            for d in &self.defs {
                s.push_str(d);
            }
        }
        s
    }

    /// A helper computing each of the first `out.lanes` lanes with `lane` from the lanes of
    /// its arguments (of types `ins`); the other lanes are zero.
    pub fn map(&mut self, name: &str, out: Type, ins: &[Type], lane: impl FnOnce(&[String]) -> String) -> String {
        let name =
            format!("{name}_{}", mnemonic(out)) + &ins.iter().map(|t| format!("_{}", mnemonic(*t))).collect::<String>();
        self.helper(name.clone(), |h| {
            let o = h.ty(out);
            let params: Vec<String> = ins.iter().enumerate().map(|(i, t)| format!("{} a{i}", h.ty(*t))).collect();
            let args: Vec<String> =
                ins.iter().enumerate().map(|(i, t)| if t.is_vector() { format!("a{i}[i]") } else { format!("a{i}") }).collect();
            format!(
                "static inline {o} {name}({}) {{\n    {o} r = {{0}};\n    for (int i = 0; i < {}; i++) r[i] = {};\n    return r;\n}}\n",
                params.join(", "),
                out.lanes,
                lane(&args)
            )
        })
    }

    /// `h_bc_T(v)`: every lane `v`.
    pub fn broadcast(&mut self, t: Type) -> String {
        self.helper(format!("h_bc_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            // An initializer list (not a loop, which GCC turns into lane inserts) becomes one
            // broadcast instruction, and copies the value exactly (-0.0, NaN payloads).
            let lanes = vec!["v"; physical_lanes(t.lanes) as usize].join(", ");
            format!("static inline {v} h_bc_{v}({} v) {{ return ({v}){{{lanes}}}; }}\n", scalar_c(t))
        })
    }

    /// `h_ramp_T(base, stride)`: `base, base + stride, ...`, each lane the previous plus
    /// `stride` in the lane type (wrapping for integers, rounded for floats).
    pub fn ramp(&mut self, t: Type) -> String {
        self.helper(format!("h_ramp_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            let s = scalar_c(t);
            let p = physical_lanes(t.lanes);
            if t.is_float() {
                // Each lane rounds, as the interpreter's running sum does.
                return format!(
                    "static inline {v} h_ramp_{v}({s} b, {s} s) {{\n    {v} r;\n    {s} x = b;\n    for (int i = 0; i < {p}; i++) {{\n        r[i] = x;\n        x = x + s;\n    }}\n    return r;\n}}\n"
                );
            }
            // b + i * s, wrapping: the same as adding s i times.
            let bc = h.broadcast(t);
            let u = h.ty(unsigned_of(t));
            let iota: Vec<String> = (0..p).map(|i| i.to_string()).collect();
            format!(
                "static inline {v} h_ramp_{v}({s} b, {s} s) {{\n    const {u} iota = {{{}}};\n    return ({v})(({u}){bc}(b) + iota * ({u}){bc}(s));\n}}\n",
                iota.join(", ")
            )
        })
    }

    /// `h_dense_T(idx)`: whether the first lanes of an index vector are consecutive.
    fn dense(&mut self, idx: Type) -> String {
        self.helper(format!("h_dense_{}", mnemonic(idx)), |h| {
            let v = h.ty(idx);
            let ut = unsigned_of(idx);
            let u = h.ty(ut);
            let bc = h.broadcast(idx);
            let zero = h.zero(ut);
            let iota: Vec<String> = (0..physical_lanes(idx.lanes)).map(|i| i.to_string()).collect();
            format!(
                "static inline bool h_dense_{v}({v} idx) {{\n    const {u} iota = {{{}}};\n    return {zero}(({u})idx - (({u}){bc}(idx[0]) + iota));\n}}\n",
                iota.join(", ")
            )
        })
    }

    /// `h_zero_T(v)`: whether the first lanes of an unsigned vector are all zero, without
    /// a branch per lane: the lanes are OR-ed together as 64-bit words.
    fn zero(&mut self, t: Type) -> String {
        self.helper(format!("h_zero_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            let p = physical_lanes(t.lanes);
            let bytes = p as usize * t.bytes();
            let keep = if t.lanes < p {
                let lanes: Vec<&str> = (0..p).map(|i| if i < t.lanes { "-1" } else { "0" }).collect();
                format!("    const {v} keep = {{{}}};\n    v &= keep;\n", lanes.join(", "))
            } else {
                String::new()
            };
            let (word, n) = match bytes {
                2 => ("uint16_t", 1),
                4 => ("uint32_t", 1),
                _ => ("uint64_t", bytes / 8),
            };
            format!(
                "static inline bool h_zero_{v}({v} v) {{\n{keep}    {word} w[{n}], o = 0;\n    memcpy(w, &v, sizeof w);\n    for (int k = 0; k < {n}; k++) o |= w[k];\n    return o == 0;\n}}\n"
            )
        })
    }

    /// Fixes the lanes of a loaded bool vector to 0 or 1.
    fn normalize(t: Type) -> &'static str {
        if t.is_bool() {
            "    r = (__typeof__(r))-(r != 0);\n"
        } else {
            ""
        }
    }

    /// `h_ldd_T(p)`: the lanes at `p[0..lanes]` (unaligned).
    pub fn load_dense(&mut self, t: Type) -> String {
        self.helper(format!("h_ldd_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            format!(
                "static inline {v} h_ldd_{v}(const {e} *p) {{\n    {v} r = {{0}};\n    memcpy(&r, p, {n} * sizeof(*p));\n{}    return r;\n}}\n",
                Self::normalize(t),
                e = storage_c(t),
                n = t.lanes
            )
        })
    }

    /// The x86 intrinsics header, included once before the first helper that uses it (only
    /// then: it is large, and most files need none of it).
    fn intrinsics(&mut self) {
        self.helper("immintrin".to_string(), |_| {
            "#if defined(__AVX2__) || defined(__AVX512F__)\n#include <immintrin.h>\n#endif\n".to_string()
        });
    }

    /// `h_lds_T(p, s)`: the lanes at `p[0], p[s], p[2s], ...`.
    pub fn load_strided(&mut self, t: Type) -> String {
        self.helper(format!("h_lds_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            format!(
                "static inline {v} h_lds_{v}(const {e} *p, int64_t s) {{\n    {v} r = {{0}};\n    for (int i = 0; i < {n}; i++) r[i] = p[i * s];\n    return r;\n}}\n",
                e = storage_c(t),
                n = t.lanes
            )
        })
    }

    /// `h_ld2_T(p)`: the lanes at `p[0], p[2], p[4], ...` (`t.lanes` a power of two): two
    /// dense loads, the second ending at the last element needed so that nothing past it
    /// is read, and one shuffle.
    pub fn load_stride_two(&mut self, t: Type) -> String {
        self.helper(format!("h_ld2_{}", mnemonic(t)), |h| {
            let n = t.lanes as usize;
            let ld = h.load_dense(t);
            let v = h.ty(t);
            let mask = h.ty(mask_of(t));
            // Lane i < n/2 is lane 2i of the first load; lane i >= n/2 is element 2i of the
            // span, lane 2i - (n - 1) of the second load, lane 2i + 1 of the two together.
            let lanes: Vec<String> = (0..n).map(|i| if i < n / 2 { 2 * i } else { 2 * i + 1 }.to_string()).collect();
            let lanes = lanes.join(", ");
            format!(
                "static inline {v} h_ld2_{v}(const {e} *p) {{\n    const {v} a = {ld}(p), b = {ld}(p + {last});\n#if defined(__clang__)\n    return __builtin_shufflevector(a, b, {lanes});\n#else\n    return __builtin_shuffle(a, b, ({mask}){{{lanes}}});\n#endif\n}}\n",
                e = storage_c(t),
                last = n - 1,
            )
        })
    }

    /// `h_ld_T(buf, idx)`: a gather.
    pub fn load(&mut self, t: Type) -> String {
        let idx = Type::i32().with_lanes(t.lanes);
        self.helper(format!("h_ld_{}", mnemonic(t)), |h| {
            let (v, iv) = (h.ty(t), h.ty(idx));
            // (The printer loads indices it knows to be dense or evenly spaced without this
            // helper.)
            let generic = gather_body(t, Type::i32(), &v);
            // 32-bit elements: AVX-512 gathers 16 lanes, AVX2 4 or 8.
            let wide = match (t.code, t.bits, t.lanes) {
                (TypeCode::Float, 32, 16) => Some("_mm512_i32gather_ps((__m512i)idx, (const void *)buf, 4)"),
                (TypeCode::Int | TypeCode::UInt, 32, 16) => {
                    Some("_mm512_i32gather_epi32((__m512i)idx, (const void *)buf, 4)")
                }
                _ => None,
            };
            let gather = match (t.code, t.bits, t.lanes) {
                (TypeCode::Float, 32, 8) => Some("_mm256_i32gather_ps((const float *)buf, (__m256i)idx, 4)"),
                (TypeCode::Int | TypeCode::UInt, 32, 8) => {
                    Some("_mm256_i32gather_epi32((const int *)buf, (__m256i)idx, 4)")
                }
                (TypeCode::Float, 32, 4) => Some("_mm_i32gather_ps((const float *)buf, (__m128i)idx, 4)"),
                (TypeCode::Int | TypeCode::UInt, 32, 4) => {
                    Some("_mm_i32gather_epi32((const int *)buf, (__m128i)idx, 4)")
                }
                _ => None,
            };
            if gather.is_some() || wide.is_some() {
                h.intrinsics();
            }
            let body = match (gather, wide) {
                (Some(g), _) => format!("#if defined(__AVX2__)\n    return ({v}){g};\n#else\n{generic}#endif\n"),
                (_, Some(g)) => format!("#if defined(__AVX512F__)\n    return ({v}){g};\n#else\n{generic}#endif\n"),
                _ => generic,
            };
            format!("static inline {v} h_ld_{v}(const {e} *buf, {iv} idx) {{\n{body}}}\n", e = storage_c(t))
        })
    }

    /// `h_ldw_T(buf, idx)`: a gather whose lanes never decrease and span less than one
    /// vector (see [`crate::analysis::access::AccessPattern::Window`]): one masked load of
    /// the window from the first lane, which reads nothing past the last lane, and one
    /// permute of it by each lane's offset. The spread is checked at run time, so a window
    /// wider than the vector falls back to the gather. `None` where `t` has no such permute
    /// (AVX-512; byte lanes beyond 16 need VBMI, tested in the C).
    pub fn load_window(&mut self, t: Type) -> Option<String> {
        let w = WindowLoad::of(t)?;
        let idx = Type::i32().with_lanes(t.lanes);
        Some(self.helper(format!("h_ldw_{}", mnemonic(t)), |h| {
            h.intrinsics();
            let gather = h.load(t);
            let bc = h.broadcast(idx);
            let (v, iv) = (h.ty(t), h.ty(idx));
            let fast = w.body(h, "buf + lo", "spread", &format!("idx - {bc}((int32_t)lo)"), idx);
            format!(
                "static inline {v} h_ldw_{v}(const {e} *buf, {iv} idx) {{
#if {guard}
    const int64_t lo = idx[0], spread = (int64_t)idx[{last}] - lo;
    if (spread >= 0 && spread < {n}) {{
{fast}    }}
#endif
    return {gather}(buf, idx);
}}
",
                e = storage_c(t),
                guard = w.guard,
                last = t.lanes - 1,
                n = t.lanes,
            )
        }))
    }

    /// `h_ldq_T(p, r, s, k)`: lane `i` at `p[(r + s·i) / k]`, for `0 <= r < k` and
    /// `s >= 0` (see [`crate::analysis::access::AccessPattern::Quotient`]). Lane 0 reads
    /// `p[0]`, so the window's length and each lane's offset in it come from the scalars
    /// alone, in unsigned arithmetic (no sum is negative, so it is floor division, and by
    /// the constant `k` of the call a shift or a multiply): where `r` does not change in a
    /// loop the C compiler computes them, and the window's mask, once outside it, and each
    /// load is one masked load and one permute. A window wider than a vector (`s > k`), or a
    /// type with no permute, reads with a gather relative to `p`.
    pub fn load_quotient(&mut self, t: Type) -> String {
        let idx = Type::i32().with_lanes(t.lanes);
        let uidx = Type::u32().with_lanes(t.lanes);
        let window = WindowLoad::of(t);
        self.helper(format!("h_ldq_{}", mnemonic(t)), |h| {
            let gather = h.load(t);
            let (bc, ramp, ubc) = (h.broadcast(idx), h.ramp(idx), h.broadcast(uidx));
            let (v, iv, uv) = (h.ty(t), h.ty(idx), h.ty(uidx));
            let offsets = format!("({uv})({bc}(r) + {ramp}(0, s)) / {ubc}((uint32_t)k)");
            let fast = match &window {
                Some(w) => {
                    h.intrinsics();
                    let body = w.body(h, "p", "span", "o_u", uidx);
                    format!(
                        "#if {guard}
    const uint32_t span = ((uint32_t)r + (uint32_t)s * {last}u) / (uint32_t)k;
    if (span < {n}) {{
{body}    }}
#endif
",
                        guard = w.guard,
                        last = t.lanes - 1,
                        n = t.lanes,
                    )
                }
                None => String::new(),
            };
            format!(
                "static inline {v} h_ldq_{v}(const {e} *p, int32_t r, int32_t s, int32_t k) {{
    const {uv} o_u = {offsets};
{fast}    return {gather}(p, ({iv})o_u);
}}
",
                e = storage_c(t)
            )
        })
    }

    /// `h_ldn_T_I(buf, idx)`: a gather whose indices are a vector of narrow integers
    /// (`idx_t`, 8 or 16 bits), read as they are instead of widened to 32 bits first.
    pub fn load_narrow_index(&mut self, t: Type, idx_t: Type) -> String {
        self.helper(format!("h_ldn_{}_{}", mnemonic(t), mnemonic(idx_t)), |h| {
            let (v, iv) = (h.ty(t), h.ty(idx_t));
            let body = gather_body(t, idx_t, &v);
            format!("static inline {v} h_ldn_{v}_{iv}(const {e} *buf, {iv} idx) {{\n{body}}}\n", e = storage_c(t))
        })
    }

    /// `h_ldp_T(buf, idx, pred)`: lanes whose predicate is false are not read and are zero.
    /// Consecutive indices (a vector loop's tail, a boundary) are one masked load where the
    /// target has them (AVX-512), one dense load where every lane is on, and otherwise a
    /// per-lane loop kept out of line: inlined and unrolled at every tail and boundary site
    /// it was most of the C compiler's time and made tails cost more than the interior.
    /// The out-of-line loop takes and gives its vectors through pointers, so that no call
    /// passes a wide vector in registers (see `VECTOR_WIDTH_START` for how that can go
    /// wrong).
    pub fn load_pred(&mut self, t: Type) -> String {
        let idx = Type::i32().with_lanes(t.lanes);
        let b = Type::bool().with_lanes(t.lanes);
        self.helper(format!("h_ldp_{}", mnemonic(t)), |h| {
            let all = h.all_true(t.lanes);
            let dense = h.dense(idx);
            let ld = h.load_dense(t);
            let (v, iv, bv) = (h.ty(t), h.ty(idx), h.ty(b));
            let e = storage_c(t);
            let masked = match masked_access(t) {
                Some(m) => {
                    let kmask = h.kmask(t.lanes);
                    format!(
                        "#if {guard}
        {v} r = ({v}){load}(({kt}){kmask}(p), buf + idx[0]);
{norm}        return r;
#else
        if ({all}(p)) return {ld}(buf + idx[0]);
#endif
",
                        guard = m.guard,
                        load = m.load,
                        kt = m.mask_type,
                        norm = Self::normalize(t).replace("    ", "        "),
                    )
                }
                None => format!(
                    "        if ({all}(p)) return {ld}(buf + idx[0]);
"
                ),
            };
            format!(
                "static __attribute__((noinline)) void h_ldp_slow_{v}(const {e} *buf, const {iv} *idx, const {bv} *p, {v} *out) {{
    {v} r = {{0}};
    for (int i = 0; i < {n}; i++)
        if ((*p)[i]) r[i] = buf[(*idx)[i]];
{norm}    *out = r;
}}
static inline {v} h_ldp_{v}(const {e} *buf, {iv} idx, {bv} p) {{
    if ({dense}(idx)) {{
{masked}    }}
    {v} r;
    h_ldp_slow_{v}(buf, &idx, &p, &r);
    return r;
}}
",
                norm = Self::normalize(t),
                n = t.lanes
            )
        })
    }

    /// `h_kmask_N(p)`: the lanes of a bool vector that are on, as an AVX-512 mask (bit `i`
    /// for lane `i`); defined only where the target has AVX-512 (BW and VL).
    fn kmask(&mut self, lanes: u16) -> String {
        let b = Type::bool().with_lanes(lanes);
        self.helper(format!("h_kmask_{}", mnemonic(b)), |h| {
            h.intrinsics();
            let bv = h.ty(b);
            let bytes = physical_lanes(lanes) as usize;
            let (reg, zero, test) = match bytes {
                0..=16 => ("__m128i", "_mm_setzero_si128", "_mm_test_epi8_mask"),
                17..=32 => ("__m256i", "_mm256_setzero_si256", "_mm256_test_epi8_mask"),
                _ => ("__m512i", "_mm512_setzero_si512", "_mm512_test_epi8_mask"),
            };
            format!(
                "#if {MASKED_GUARD}
static inline uint64_t h_kmask_{bv}({bv} p) {{
    {reg} b = {zero}();
    memcpy(&b, &p, sizeof p);
    return (uint64_t){test}(b, b);
}}
#endif
"
            )
        })
    }

    /// `h_std_T(p, v)`: stores the lanes at `p[0..lanes]` (unaligned).
    pub fn store_dense(&mut self, t: Type) -> String {
        self.helper(format!("h_std_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            format!(
                "static inline void h_std_{v}({e} *p, {v} v) {{ memcpy(p, &v, {n} * sizeof(*p)); }}\n",
                e = storage_c(t),
                n = t.lanes
            )
        })
    }

    /// `h_sstd_T(p, v, stream)`: stores the lanes at `p[0], p[1], ...`, around the caches
    /// when `stream` is set and `p` is aligned (see `STREAM_HELPERS`).
    pub fn store_stream(&mut self, t: Type) -> String {
        self.helper(format!("h_sstd_{}", mnemonic(t)), |h| {
            let st = h.store_dense(t);
            let v = h.ty(t);
            format!(
                "static inline void h_sstd_{v}({e} *p, {v} v, int stream) {{\n    if (!stream || !h_stream_store(p, &v, {n} * sizeof(*p))) {st}(p, v);\n}}\n",
                e = storage_c(t),
                n = t.lanes
            )
        })
    }

    /// `h_sts_T(p, s, v)`: stores the lanes at `p[0], p[s], p[2s], ...`, in lane order.
    pub fn store_strided(&mut self, t: Type) -> String {
        self.helper(format!("h_sts_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            format!(
                "static inline void h_sts_{v}({e} *p, int64_t s, {v} v) {{\n    for (int i = 0; i < {n}; i++) p[i * s] = v[i];\n}}\n",
                e = storage_c(t),
                n = t.lanes
            )
        })
    }

    /// `h_st_T(buf, idx, v)`: a scatter in lane order, or one `memcpy` where the indices are
    /// consecutive.
    pub fn store(&mut self, t: Type) -> String {
        let idx = Type::i32().with_lanes(t.lanes);
        self.helper(format!("h_st_{}", mnemonic(t)), |h| {
            let dense = h.dense(idx);
            let st = h.store_dense(t);
            let (v, iv) = (h.ty(t), h.ty(idx));
            format!(
                "static inline void h_st_{v}({e} *buf, {iv} idx, {v} v) {{\n    if ({dense}(idx)) {{\n        {st}(buf + idx[0], v);\n        return;\n    }}\n    for (int i = 0; i < {n}; i++) buf[idx[i]] = v[i];\n}}\n",
                e = storage_c(t),
                n = t.lanes
            )
        })
    }

    /// `h_stp_T(buf, idx, v, pred)`: lanes whose predicate is false are not written. As
    /// `h_ldp_T`: one masked or dense store for consecutive indices, else a per-lane loop
    /// out of line.
    pub fn store_pred(&mut self, t: Type) -> String {
        let idx = Type::i32().with_lanes(t.lanes);
        let b = Type::bool().with_lanes(t.lanes);
        self.helper(format!("h_stp_{}", mnemonic(t)), |h| {
            let all = h.all_true(t.lanes);
            let dense = h.dense(idx);
            let st = h.store_dense(t);
            let (v, iv, bv) = (h.ty(t), h.ty(idx), h.ty(b));
            let e = storage_c(t);
            let plain = format!(
                "        if ({all}(p)) {{
            {st}(buf + idx[0], v);
            return;
        }}
"
            );
            let masked = match masked_access(t) {
                Some(m) => {
                    let kmask = h.kmask(t.lanes);
                    format!(
                        "#if {guard}
        {store}(buf + idx[0], ({kt}){kmask}(p), ({reg})v);
        return;
#else
{plain}#endif
",
                        guard = m.guard,
                        store = m.store,
                        kt = m.mask_type,
                        reg = m.register,
                    )
                }
                None => plain,
            };
            format!(
                "static __attribute__((noinline)) void h_stp_slow_{v}({e} *buf, const {iv} *idx, const {v} *v, const {bv} *p) {{
    for (int i = 0; i < {n}; i++)
        if ((*p)[i]) buf[(*idx)[i]] = (*v)[i];
}}
static inline void h_stp_{v}({e} *buf, {iv} idx, {v} v, {bv} p) {{
    if ({dense}(idx)) {{
{masked}    }}
    h_stp_slow_{v}(buf, &idx, &v, &p);
}}
",
                n = t.lanes
            )
        })
    }

    /// `h_m2b_K(mask)`: a comparison's mask (-1/0 lanes of some width) as a bool vector.
    pub fn mask_to_bool(&mut self, mask: Type) -> String {
        let b = Type::bool().with_lanes(mask.lanes);
        self.helper(format!("h_m2b_{}", mnemonic(mask)), |h| {
            let (k, bv) = (h.ty(mask), h.ty(b));
            format!("static inline {bv} h_m2b_{k}({k} m) {{ return __builtin_convertvector(-m, {bv}); }}\n")
        })
    }

    /// `h_b2m_K(b)`: a bool vector as a mask of -1/0 lanes of the mask type `mask`.
    fn bool_to_mask(&mut self, mask: Type) -> String {
        let b = Type::bool().with_lanes(mask.lanes);
        self.helper(format!("h_b2m_{}", mnemonic(mask)), |h| {
            let (k, bv) = (h.ty(mask), h.ty(b));
            format!("static inline {k} h_b2m_{k}({bv} b) {{ return -__builtin_convertvector(b, {k}); }}\n")
        })
    }

    /// `h_blend_T(mask, a, b)`: lanes of `a` where the mask is set, else of `b`.
    fn blend(&mut self, t: Type) -> String {
        let mask = mask_of(t);
        self.helper(format!("h_blend_{}", mnemonic(t)), |h| {
            let (v, k) = (h.ty(t), h.ty(mask));
            format!("static inline {v} h_blend_{v}({k} m, {v} a, {v} b) {{ return ({v})((({k})a & m) | (({k})b & ~m)); }}\n")
        })
    }

    /// `h_vexpf_T(x)`: `h_expf` (see [`crate::ir::float_math`]) on every lane of the
    /// `f32` vector type `t` at once, with the same operations in the same order (so the
    /// same bits), its selects as blends and its conversions as vector conversions.
    pub fn exp_f32(&mut self, t: Type) -> String {
        self.helper(format!("h_vexpf_{}", mnemonic(t)), |h| {
            let blend = h.blend(t);
            let (v, k, f, _) = Self::float_vector_names(h, t);
            let (hi, lo) = ln2_c();
            let poly = horner_c(&v, Some(&f), &EXP_POLY, "r");
            format!(
                "static inline {v} h_vexpf_{v}({v} x) {{
    {v} c = {blend}(x > {f}(-104.0f), x, {f}(-104.0f));
    c = {blend}(c < {f}(89.0f), c, {f}(89.0f));
    const {v} t = c * 1.442695f + 12582912.0f;
    const {v} n = t - 12582912.0f;
    {v} r = c - n * {hi};
    r = r - n * {lo};
    const {v} z = r * r;
{poly}    p = p * z + r + 1.0f;
    const {k} e = __builtin_convertvector(n, {k});
    const {k} e1 = e / 2;
    const {v} y = p * ({v})((e1 + 127) << 23) * ({v})((e - e1 + 127) << 23);
    return {blend}(x == x, y, x);
}}
"
            )
        })
    }

    /// `h_vlogf_T(x)`: `h_logf` on every lane of the `f32` vector type `t` at once (see
    /// [`Helpers::exp_f32`]).
    pub fn log_f32(&mut self, t: Type) -> String {
        self.helper(format!("h_vlogf_{}", mnemonic(t)), |h| {
            let blend = h.blend(t);
            let (v, k, f, i) = Self::float_vector_names(h, t);
            let u = h.ty(Type::u32().with_lanes(t.lanes));
            let (hi, lo) = ln2_c();
            let poly = horner_c(&v, Some(&f), &LOG_POLY, "f");
            format!(
                "static inline {v} h_vlogf_{v}({v} x) {{
    const {k} sub = ({k})(({u})x < 0x00800000u);
    const {v} xs = {blend}(sub, x * 8388608.0f, x);
    const {u} w = ({u})xs;
    const {k} e0 = ({k})((w >> 23) & 0xffu) - 126 - (sub & 23);
    const {v} m = ({v})((w & 0x007fffffu) | 0x3f000000u);
    const {k} low = m < 0.70710677f;
    const {k} e = e0 + low;
    const {v} f = {blend}(low, m + m - 1.0f, m - 1.0f);
    const {v} z = f * f;
    const {v} fe = __builtin_convertvector(e, {v});
{poly}    {v} y = p * f * z;
    y = y + fe * {lo};
    y = y - 0.5f * z;
    {v} r = f + y;
    r = r + fe * {hi};
    r = {blend}(x == 0.0f, ({v})({i}(0xff800000u)), r);
    r = {blend}(x < 0.0f, ({v})({i}(0x7fc00000u)), r);
    r = {blend}(x == ({v})({i}(0x7f800000u)), x, r);
    return {blend}(x == x, r, x);
}}
"
            )
        })
    }

    /// How [`crate::backend::c_like::scalar_helpers`]' shared float math spells the vector
    /// type `t`.
    fn float_c(h: &mut Self, t: Type) -> FloatC {
        let blend = h.blend(t);
        let (v, k, f, _) = Self::float_vector_names(h, t);
        let u = h.ty(Type::u32().with_lanes(t.lanes));
        FloatC { v, k, u, vector: Some((blend, f)) }
    }

    /// `h_vsinf_T(x)` / `h_vcosf_T(x)`: `h_sinf` / `h_cosf` on every lane of the `f32`
    /// vector type `t` (see [`Helpers::exp_f32`]); lanes too large for the reduction are
    /// redone with `double`, only when there are any.
    pub fn sin_cos_f32(&mut self, t: Type, cos: bool) -> String {
        let which = if cos { "cos" } else { "sin" };
        self.helper(format!("h_v{which}f_{}", mnemonic(t)), |h| {
            let fc = Self::float_c(h, t);
            let body = sin_cos_body(&fc, cos as u32);
            let v = &fc.v;
            format!(
                "static inline {v} h_v{which}f_{v}({v} x) {{
{body}    int any = 0;
    for (int i = 0; i < {n}; i++) any |= big[i];
    if (any)
        for (int i = 0; i < {n}; i++)
            if (big[i]) y[i] = (float){which}((double)x[i]);
    return y;
}}
",
                n = t.lanes
            )
        })
    }

    /// `h_v<name>_T(x)`: a one-argument float function on every lane of the `f32` vector
    /// type `t`, its C body (which sets `y`) written by `body` from the type's names.
    fn unary_f32(&mut self, t: Type, name: &str, body: impl FnOnce(&FloatC) -> String) -> String {
        self.helper(format!("h_v{name}_{}", mnemonic(t)), |h| {
            let fc = Self::float_c(h, t);
            let v = fc.v.clone();
            let body = body(&fc);
            format!(
                "static inline {v} h_v{name}_{v}({v} x) {{
{body}    return y;
}}
"
            )
        })
    }

    /// `h_vatanf_T(x)`: `h_atanf` on every lane of the `f32` vector type `t`.
    pub fn atan_f32(&mut self, t: Type) -> String {
        self.unary_f32(t, "atanf", atan_body)
    }

    /// `h_vatan2f_T(y, x)`: `h_atan2f` on every lane of the `f32` vector type `t`.
    pub fn atan2_f32(&mut self, t: Type) -> String {
        self.helper(format!("h_vatan2f_{}", mnemonic(t)), |h| {
            let atan = h.atan_f32(t);
            let fc = Self::float_c(h, t);
            let v = &fc.v;
            format!(
                "static inline {v} h_vatan2f_{v}({v} y, {v} x) {{
    const {v} a = {atan}(y / x);
{}    return r;
}}
",
                atan2_body(&fc)
            )
        })
    }

    /// `h_vtanhf_T(x)`: `h_tanhf` on every lane of the `f32` vector type `t`.
    pub fn tanh_f32(&mut self, t: Type) -> String {
        // Named first, so that its definition comes before the vector types' helpers.
        let exp = self.exp_f32(t);
        self.unary_f32(t, "tanhf", |fc| tanh_body(fc, &exp))
    }

    /// `h_vfast_expf_T(x)`: `h_fast_expf` on every lane of the `f32` vector type `t`.
    pub fn fast_exp_f32(&mut self, t: Type) -> String {
        self.unary_f32(t, "fast_expf", |fc| {
            let v = fc.v.clone();
            fast_exp_body(fc, &|k| format!("({v})(({k} + 127) << 23)"))
        })
    }

    /// `h_vfast_logf_T(x)`: `h_fast_logf` on every lane of the `f32` vector type `t`.
    pub fn fast_log_f32(&mut self, t: Type) -> String {
        self.unary_f32(t, "fast_logf", fast_log_body)
    }

    /// `h_vfast_powf_T(x, y)`: `h_fast_powf` on every lane of the `f32` vector type `t`.
    pub fn fast_pow_f32(&mut self, t: Type) -> String {
        self.helper(format!("h_vfast_powf_{}", mnemonic(t)), |h| {
            let exp = h.fast_exp_f32(t);
            let log = h.fast_log_f32(t);
            let fc = Self::float_c(h, t);
            let v = &fc.v;
            format!(
                "static inline {v} h_vfast_powf_{v}({v} x, {v} x2) {{
{}    return y;
}}
",
                fast_pow_body(&fc, &exp, &log)
            )
        })
    }

    /// The C names a vector float helper of `t` uses: the vector type, its mask type (the
    /// `i32` lanes comparisons give), and the broadcasts of a float and of an `i32`.
    fn float_vector_names(h: &mut Self, t: Type) -> (String, String, String, String) {
        let mask = mask_of(t);
        let (v, k) = (h.ty(t), h.ty(mask));
        let f = h.broadcast(t);
        let i = h.broadcast(mask);
        (v, k, f, i)
    }

    /// `h_sel_T(cond, a, b)`: lane-wise select on a bool vector.
    pub fn select(&mut self, t: Type) -> String {
        let mask = mask_of(t);
        let b = Type::bool().with_lanes(t.lanes);
        self.helper(format!("h_sel_{}", mnemonic(t)), |h| {
            let blend = h.blend(t);
            let b2m = h.bool_to_mask(mask);
            let (v, bv) = (h.ty(t), h.ty(b));
            format!("static inline {v} h_sel_{v}({bv} c, {v} a, {v} b) {{ return {blend}({b2m}(c), a, b); }}\n")
        })
    }

    /// `h_min_T` / `h_max_T` on vectors: `b < a ? b : a` and `a < b ? b : a`, lane-wise.
    pub fn min_max(&mut self, t: Type, is_min: bool) -> String {
        let which = if is_min { "min" } else { "max" };
        self.helper(format!("h_{which}_{}", mnemonic(t)), |h| {
            let blend = h.blend(t);
            let v = h.ty(t);
            let body = if is_min { format!("{blend}(b < a, b, a)") } else { format!("{blend}(a < b, b, a)") };
            format!("static inline {v} h_{which}_{v}({v} a, {v} b) {{ return {body}; }}\n")
        })
    }

    /// Floor division and remainder of a signed integer vector by a divisor whose lanes
    /// are all positive: the native vector `/` and `%` (no division by zero or overflow
    /// possible), then the Euclidean correction.
    pub fn div_mod_positive(&mut self, t: Type, is_div: bool) -> String {
        let which = if is_div { "divp" } else { "modp" };
        self.helper(format!("h_{which}_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            let body = if is_div {
                format!("    {v} q = a / b;\n    return q + ({v})(a - q * b < 0);\n")
            } else {
                format!("    {v} r = a % b;\n    return r + (b & ({v})(r < 0));\n")
            };
            format!("static inline {v} h_{which}_{v}({v} a, {v} b) {{\n{body}}}\n")
        })
    }

    /// `h_shl_T` / `h_shr_T` on integer vectors: amounts modulo the width, `<<` done
    /// unsigned, `>>` arithmetic for signed lanes.
    pub fn shift(&mut self, t: Type, left: bool) -> String {
        let which = if left { "shl" } else { "shr" };
        self.helper(format!("h_{which}_{}", mnemonic(t)), |h| {
            let v = h.ty(t);
            let u = h.ty(unsigned_of(t));
            let m = t.bits - 1;
            let body = if left { format!("({v})(({u})a << ({u})(b & {m}))") } else { format!("a >> (b & {m})") };
            format!("static inline {v} h_{which}_{v}({v} a, {v} b) {{ return {body}; }}\n")
        })
    }

    /// `h_all_boolxN(v)`: whether every lane of a bool vector is true.
    pub fn all_true(&mut self, lanes: u16) -> String {
        let b = Type::bool().with_lanes(lanes);
        self.helper(format!("h_all_{}", mnemonic(b)), |h| {
            let bv = h.ty(b);
            let zero = h.zero(b);
            format!("static inline bool h_all_{bv}({bv} v) {{ return {zero}(v ^ 1); }}\n")
        })
    }

    /// `h_add_T` / `h_sub_T` / `h_mul_T` on signed integer vectors: wrapping, done in the
    /// unsigned vector type.
    pub fn wrapping(&mut self, t: Type, op: &str, symbol: &str) -> String {
        self.helper(format!("h_{op}_{}", mnemonic(t)), |h| {
            let (v, u) = (h.ty(t), h.ty(unsigned_of(t)));
            format!("static inline {v} h_{op}_{v}({v} a, {v} b) {{ return ({v})(({u})a {symbol} ({u})b); }}\n")
        })
    }

    /// `h_f2iv_TO_FROM(v)`: float to integer as `semantics::cast` does it (truncation
    /// toward zero, saturating, NaN to 0), lane-wise without a branch, for the integer
    /// types of at most 32 bits. `None` for 64-bit integers, which need the scalar helper.
    ///
    /// NaN lanes become 0.0 and every lane is clamped to the target's range, which a float
    /// holds exactly except for the top of the 32-bit types from `f32`: those clamp to the
    /// largest float below `2^31` (or `2^32`) and the lanes at or above it are set to the
    /// maximum after the conversion.
    pub fn float_to_int(&mut self, from: Type, to: Type) -> Option<String> {
        if to.bits > 32 || !from.is_float() || !(to.is_int() || to.is_uint()) {
            return None;
        }
        Some(self.helper(format!("h_f2iv_{}_{}", mnemonic(to), mnemonic(from)), |h| {
            let (o, f, m) = (h.ty(to), h.ty(from), h.ty(mask_of(from)));
            let blend = h.blend(from);
            let bc = h.broadcast(from);
            let lit = |v: f64| if from.bits == 32 { format!("{v:?}f") } else { format!("{v:?}") };
            let (min, max) = if to.is_int() {
                (-(2f64.powi(to.bits as i32 - 1)), 2f64.powi(to.bits as i32 - 1) - 1.0)
            } else {
                (0.0, 2f64.powi(to.bits as i32) - 1.0)
            };
            let exact = from.bits == 64 || to.bits <= 16;
            let mut body = format!("    a = ({f})(({m})a & ({m})(a == a));\n");
            body += &format!("    a = {blend}(a < {bc}({lo}), {bc}({lo}), a);\n", lo = lit(min));
            let top = if exact {
                body += &format!("    a = {blend}(a > {bc}({hi}), {bc}({hi}), a);\n", hi = lit(max));
                None
            } else {
                // 2^bits / 2^(bits - 1), and the float just below it.
                let limit = max + 1.0;
                let below = (limit as f32).next_down();
                body += &format!("    const {m} sat = ({m})(a >= {bc}({}));\n", lit(limit));
                body += &format!("    a = {blend}(a > {bc}({b}), {bc}({b}), a);\n", b = lit(below as f64));
                Some(max)
            };
            body += &format!("    {o} r = {};\n", h.in_range_float_lanes_to_int(to, "a"));
            if let Some(max) = top {
                let obc = h.broadcast(to);
                let om = h.ty(mask_of(to));
                let maxc = if to.is_int() { format!("{}", max as i64) } else { format!("{}u", max as u64) };
                body += &format!("    r = ({o})((({om})r & ~({om})sat) | (({om}){obc}({maxc}) & ({om})sat));\n");
            }
            // Forced inline: GCC leaves this call out of long loop bodies, and a wide vector
            // argument then goes through the stack (7% of local_laplacian's time).
            format!(
                "static inline __attribute__((always_inline)) {o} h_f2iv_{o}_{f}({f} a) {{\n{body}    return r;\n}}\n"
            )
        }))
    }

    /// The C expression converting the float vector `a`, every lane already within the
    /// integer lanes `to` (at most 32 bits), to `to`.
    fn in_range_float_lanes_to_int(&mut self, to: Type, a: &str) -> String {
        let o = self.ty(to);
        if to.bits >= 32 {
            format!("__builtin_convertvector({a}, {o})")
        } else {
            // Through 32-bit lanes: x86 converts floats to those in one instruction, and to
            // narrower lanes only one lane at a time.
            let wide = self.ty(Type::int(32).with_lanes(to.lanes));
            format!("__builtin_convertvector(__builtin_convertvector({a}, {wide}), {o})")
        }
    }

    /// `h_f2ic_TO_FROM(v, lo, hi)`: float to integer lanes clamped to `[lo, hi]`, integers
    /// the float type holds exactly (see `clamped_float_to_int` in the shared printer):
    /// NaN lanes to 0, the clamp in float, then a conversion no lane can overflow. `None`
    /// for 64-bit integers.
    pub fn float_to_int_clamped(&mut self, from: Type, to: Type) -> Option<String> {
        if to.bits > 32 || !from.is_float() || !(to.is_int() || to.is_uint()) {
            return None;
        }
        Some(self.helper(format!("h_f2ic_{}_{}", mnemonic(to), mnemonic(from)), |h| {
            let (o, f, m) = (h.ty(to), h.ty(from), h.ty(mask_of(from)));
            let s = scalar_c(from);
            let blend = h.blend(from);
            let bc = h.broadcast(from);
            let convert = h.in_range_float_lanes_to_int(to, "a");
            format!(
                "static inline __attribute__((always_inline)) {o} h_f2ic_{o}_{f}({f} a, {s} lo, {s} hi) {{
    a = ({f})(({m})a & ({m})(a == a));
    a = {blend}(a < {bc}(lo), {bc}(lo), a);
    a = {blend}(a > {bc}(hi), {bc}(hi), a);
    return {convert};
}}
"
            )
        }))
    }

    /// `h_cvt_TO_FROM(v)`: a lane-wise conversion the vector extension does directly
    /// (`__builtin_convertvector`: int↔int wraps, int→float rounds, float↔float rounds).
    pub fn convert(&mut self, from: Type, to: Type) -> String {
        self.helper(format!("h_cvt_{}_{}", mnemonic(to), mnemonic(from)), |h| {
            let (f, t) = (h.ty(from), h.ty(to));
            format!("static inline {t} h_cvt_{t}_{f}({f} v) {{ return __builtin_convertvector(v, {t}); }}\n")
        })
    }
}
