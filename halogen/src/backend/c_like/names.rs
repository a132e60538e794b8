//! Turning IR names (`blur_y.s0.x`, `f$1`, ...) into valid, unique C identifiers.
//!
//! IR names contain `.` and `$` and may repeat in nested scopes; C identifiers may not, and
//! must not collide with the keywords, the prelude's helpers (`h_...`, `halogen_...`), the
//! vector typedefs (`i32x8`) or the C library functions the generated code calls. The
//! printed names stay close to the IR's (`blur_y.s0.x` becomes `blur_y_s0_x`) so that the
//! C reads like the lowered loop nest.

use std::collections::HashSet;

/// C keywords and names the generated code uses for itself.
const RESERVED: &[&str] = &[
    // C11 keywords
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "asm",
    "typeof",
    "bool",
    "true",
    "false",
    // types and macros of the headers the prelude includes
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
    "NULL",
    "INFINITY",
    "NAN",
    "errno",
    "stdin",
    "stdout",
    "stderr",
    "FILE",
    // C library functions the generated code calls
    "memcpy",
    "memset",
    "malloc",
    "calloc",
    "free",
    "snprintf",
    "fprintf",
    "abs",
    "labs",
    "fabs",
    "fabsf",
    "sqrt",
    "sqrtf",
    "exp",
    "expf",
    "log",
    "logf",
    "pow",
    "powf",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "nearbyint",
    "nearbyintf",
    "trunc",
    "truncf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanf",
    "atan2",
    "atan2f",
    "atan",
    "atanf",
    "tanh",
    "tanhf",
    // the generated code's own parameters and locals
    "rt",
    "ctx",
    "buffers",
    "params",
    "closure",
    "index",
    "cl",
    "r",
    "main",
];

/// True if `s` looks like one of the prelude's vector typedefs (`u16x8`, `boolx4`, ...).
fn is_vector_typedef(s: &str) -> bool {
    let Some((head, lanes)) = s.rsplit_once('x') else { return false };
    let scalar = matches!(head, "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "f32" | "f64" | "bool");
    scalar && !lanes.is_empty() && lanes.bytes().all(|b| b.is_ascii_digit())
}

/// `name` with every character that may not appear in a C identifier replaced by `_`, a
/// prefix where it would start with a digit, and a suffix where it would collide with a
/// keyword, a name of the generated code or (all capitals) a macro of the C headers.
///
/// ```
/// use halogen::backend::c_like::names::sanitize;
/// assert_eq!(sanitize("blur_y.s0.x"), "blur_y_s0_x");
/// assert_eq!(sanitize("f$1.min.0"), "f_1_min_0");
/// assert_eq!(sanitize("0x"), "v0x");
/// assert_eq!(sanitize("int"), "int_");
/// assert_eq!(sanitize("h_div_i32"), "v_h_div_i32");
/// assert_eq!(sanitize("EOF"), "EOF_");
/// assert_eq!(sanitize("Blur.X"), "Blur_X");
/// assert_eq!(sanitize(""), "v");
/// ```
pub fn sanitize(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    // Leading underscores are reserved to the implementation; our helpers own h_ and halogen_.
    if s.starts_with('_')
        || s.starts_with("h_")
        || s.starts_with("halogen")
        || s.starts_with("body_")
        || s.starts_with("closure_")
    {
        s.insert_str(0, "v_");
    }
    // All-capital names may be macros of the C headers (EOF, INT32_MAX, NAN, ...).
    let macro_like = s.bytes().any(|b| b.is_ascii_uppercase()) && !s.bytes().any(|b| b.is_ascii_lowercase());
    if RESERVED.contains(&s.as_str()) || is_vector_typedef(&s) || macro_like {
        s.push('_');
    }
    s
}

/// `s` as a C string literal: quotes, backslashes, `?` (trigraphs) and every byte outside
/// printable ASCII escaped (octal escapes of three digits, so a following digit cannot
/// extend them).
///
/// ```
/// use halogen::backend::c_like::names::c_string;
/// assert_eq!(c_string("a \"b\"\n"), "\"a \\\"b\\\"\\n\"");
/// assert_eq!(c_string("é1"), "\"\\303\\2511\"");
/// assert_eq!(c_string("??="), "\"\\?\\?=\"");
/// ```
pub fn c_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'?' => out.push_str("\\?"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// Hands out C identifiers that are unique among the identifiers visible at the current
/// point of a C function: one set per open C block. Identifiers of sibling blocks may
/// repeat, as in hand-written C, but an inner declaration never shadows an outer one, so an
/// expression always means the binding the IR means.
///
/// ```
/// use halogen::backend::c_like::names::Namer;
/// let mut n = Namer::new();
/// assert_eq!(n.fresh("x.y"), "x_y");
/// n.open();
/// assert_eq!(n.fresh("x_y"), "x_y_2"); // would shadow the outer x_y
/// n.close();
/// n.open();
/// assert_eq!(n.fresh("t"), "t");
/// n.close();
/// assert_eq!(n.fresh("t"), "t"); // the sibling block's t is out of scope
/// ```
#[derive(Debug, Default)]
pub struct Namer {
    blocks: Vec<HashSet<String>>,
}

impl Namer {
    /// A namer with one (function-level) block open.
    pub fn new() -> Namer {
        Namer { blocks: vec![HashSet::new()] }
    }

    /// Opens a C block (`{`).
    pub fn open(&mut self) {
        self.blocks.push(HashSet::new());
    }

    /// Closes the innermost C block (`}`).
    pub fn close(&mut self) {
        self.blocks.pop();
        if self.blocks.is_empty() {
            self.blocks.push(HashSet::new());
        }
    }

    fn taken(&self, s: &str) -> bool {
        self.blocks.iter().any(|b| b.contains(s))
    }

    /// `name` sanitized, with a suffix if that is taken by a visible declaration.
    fn untaken(&self, name: &str) -> String {
        let base = sanitize(name);
        let mut candidate = base.clone();
        let mut k = 2;
        while self.taken(&candidate) {
            candidate = format!("{base}_{k}");
            k += 1;
        }
        candidate
    }

    /// A new identifier for the IR name `name`, declared in the innermost block.
    pub fn fresh(&mut self, name: &str) -> String {
        let candidate = self.untaken(name);
        self.reserve(&candidate);
        candidate
    }

    /// A new identifier for the IR name `name`, declared in the function-level block
    /// (whatever block is open now), distinct from every name visible here.
    pub fn fresh_in_function(&mut self, name: &str) -> String {
        let candidate = self.untaken(name);
        self.blocks[0].insert(candidate.clone());
        candidate
    }

    /// Marks `ident` (already a valid identifier) as declared in the innermost block.
    pub fn reserve(&mut self, ident: &str) {
        if let Some(b) = self.blocks.last_mut() {
            b.insert(ident.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_ir_names_that_sanitize_alike_stay_distinct() {
        let mut n = Namer::new();
        let a = n.fresh("a.b");
        let b = n.fresh("a_b");
        let c = n.fresh("a$b");
        assert_eq!((a.as_str(), b.as_str(), c.as_str()), ("a_b", "a_b_2", "a_b_3"));
    }

    #[test]
    fn typedef_and_helper_lookalikes_are_renamed() {
        assert_eq!(sanitize("u16x8"), "u16x8_");
        assert_eq!(sanitize("boolx4"), "boolx4_");
        assert_eq!(sanitize("i32xy"), "i32xy");
        assert_eq!(sanitize("halogen_pipeline"), "v_halogen_pipeline");
        assert_eq!(sanitize("body_1"), "v_body_1");
        assert_eq!(sanitize("memcpy"), "memcpy_");
        assert_eq!(sanitize("é"), "v__");
    }
}
