//! The typed Rust wrapper a [`super::Generator`] writes next to the static library: one
//! safe function per pipeline that binds `Buffer`s and scalars to the C ABI entry point.
//!
//! The text only names items by absolute paths (`::halogen::...`, `::std::...`), so it
//! compiles wherever it is `include!`d, and it keeps names from the pipeline out of places
//! where they could change the code: they appear as string literals (escaped) and as
//! argument names checked to be plain Rust identifiers.

use crate::backend::c::{printer::union_field, CModule};
use crate::error::{Error, Result};
use crate::ir::{Type, TypeCode};
use crate::runtime::layout::layouts;
use std::collections::HashSet;
use std::fmt::Write as _;

/// The Rust name of the extern declaration inside the wrapper; no argument may take it.
const ENTRY_ITEM: &str = "halogen_entry";

/// Rust's strict and reserved keywords (2015 to 2024 editions), which cannot name an
/// argument.
const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn",
    "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self",
    "Self", "static", "struct", "super", "trait", "true", "try", "type", "unsafe", "use", "where", "while", "abstract",
    "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "union",
];

/// Whether `s` is a Rust keyword.
pub(crate) fn is_rust_keyword(s: &str) -> bool {
    RUST_KEYWORDS.contains(&s)
}

/// The Rust element type a `Buffer` of `t` holds (`halogen::Element`'s implementors).
fn buffer_elem(t: Type) -> Option<&'static str> {
    Some(match (t.code, t.bits) {
        (TypeCode::UInt, 8) => "u8",
        (TypeCode::UInt, 16) => "u16",
        (TypeCode::UInt, 32) => "u32",
        (TypeCode::UInt, 64) => "u64",
        (TypeCode::Int, 8) => "i8",
        (TypeCode::Int, 16) => "i16",
        (TypeCode::Int, 32) => "i32",
        (TypeCode::Int, 64) => "i64",
        (TypeCode::Float, 32) => "f32",
        (TypeCode::Float, 64) => "f64",
        _ => return None,
    })
}

/// The `Type` constructor of an element type, as Rust source.
fn type_ctor(rust: &str) -> String {
    format!("::halogen::Type::{rust}()")
}

/// The Rust type of a scalar parameter of type `t` (every member of `HalogenScalar`).
fn param_type(t: Type) -> Option<&'static str> {
    if t.is_bool() {
        return Some("bool");
    }
    buffer_elem(t)
}

/// A Rust identifier for the argument `name`, unique among `taken`: other characters become
/// `_`, a leading digit gets `v`, a keyword or a taken name gets `_` appended.
fn argument_name(name: &str, taken: &mut HashSet<String>) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) || s.chars().all(|c| c == '_') {
        s.insert(0, 'v');
    }
    while is_rust_keyword(&s) || s == ENTRY_ITEM || taken.contains(&s) {
        s.push('_');
    }
    taken.insert(s.clone());
    s
}

/// Text safe inside a doc comment line and inside backticks.
fn doc_text(s: &str) -> String {
    s.escape_debug().to_string().replace('`', "'")
}

/// The wrapper for the entry point of `m` (its name is the function's).
pub(crate) fn source(m: &CModule) -> Result<String> {
    struct Arg {
        ident: String,
        name: String,
        decl: String,
        doc: String,
    }
    let entry = &m.entry;
    let mut taken = HashSet::new();
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    let mut bindings = Vec::new();
    for b in &m.buffers {
        let Some(elem) = buffer_elem(b.elem) else {
            return Err(Error::Definition(format!(
                "pipeline '{entry}': {} '{}' holds {}, which no Buffer can hold; a Buffer holds u8, u16, u32, u64, i8, \
                 i16, i32, i64, f32 or f64",
                if b.is_output { "output" } else { "input" },
                b.name,
                b.elem
            )));
        };
        let ident = argument_name(&b.name, &mut taken);
        let dims = format!("{} dimension{}", b.dims, if b.dims == 1 { "" } else { "s" });
        let (decl, doc, binding) = if b.is_output {
            (
                format!("{ident}: &mut ::halogen::Buffer<{elem}>"),
                format!("the output `{}`: `{elem}` in {dims}, computed over the region it covers", doc_text(&b.name)),
                format!(
                    "::halogen::runtime::ffi::BufferBinding::output({:?}, {}, {}, {ident}.raw_mut())",
                    &*b.name,
                    type_ctor(elem),
                    b.dims
                ),
            )
        } else {
            (
                format!("{ident}: &::halogen::Buffer<{elem}>"),
                format!("the input image `{}`: `{elem}` in {dims}", doc_text(&b.name)),
                format!(
                    "::halogen::runtime::ffi::BufferBinding::input({:?}, {}, {}, {ident}.raw())",
                    &*b.name,
                    type_ctor(elem),
                    b.dims
                ),
            )
        };
        let arg = Arg { ident, name: b.name.to_string(), decl, doc };
        if b.is_output {
            outputs.push(arg);
        } else {
            inputs.push(arg);
        }
        bindings.push(binding);
    }
    let mut params = Vec::new();
    let mut scalars = Vec::new();
    for p in &m.params {
        let Some(ty) = param_type(p.ty) else {
            return Err(Error::Definition(format!(
                "pipeline '{entry}': Param '{}' has type {}, which a wrapper cannot pass",
                p.name, p.ty
            )));
        };
        let ident = argument_name(&p.name, &mut taken);
        scalars.push(format!("::halogen::runtime::ffi::HalogenScalar {{ {}: {ident} }}", union_field(p.ty)));
        params.push(Arg {
            decl: format!("{ident}: {ty}"),
            doc: format!("the parameter `{}`: `{ty}`", doc_text(&p.name)),
            ident,
            name: p.name.to_string(),
        });
    }
    let args: Vec<&Arg> = inputs.iter().chain(&params).chain(&outputs).collect();

    let mut s = String::new();
    let _ = writeln!(s, "// Generated by halogen::build from the pipeline '{}': do not edit.", doc_text(entry));
    let _ = writeln!(s);
    let _ = writeln!(s, "/// Runs the pipeline `{entry}`, compiled ahead of time by `halogen::build`.");
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// Arguments (inputs, then parameters, then outputs):");
    for a in &args {
        let renamed =
            if a.ident != a.name { format!(" (named `{}` in the pipeline)", doc_text(&a.name)) } else { "".into() };
        let _ = writeln!(s, "/// - `{}`: {}{renamed}", a.ident, a.doc);
    }
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// Parallel loops run on Halogen's thread pool (`HALOGEN_NUM_THREADS` threads).");
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// # Errors");
    let _ = writeln!(s, "///");
    let _ = writeln!(s, "/// [`halogen::Error::Buffer`] if a buffer has a different number of dimensions;");
    let _ = writeln!(s, "/// [`halogen::Error::Runtime`] with the message of the check that failed in the generated");
    let _ = writeln!(s, "/// code, e.g. an input too small for the region the outputs need. Nothing is read or");
    let _ = writeln!(s, "/// written outside the buffers.");
    let _ = writeln!(s, "#[allow(unsafe_code, non_snake_case, clippy::too_many_arguments)]");
    let _ = write!(s, "pub fn {entry}(");
    if args.is_empty() {
        let _ = writeln!(s, ") -> ::halogen::Result<()> {{");
    } else {
        let _ = writeln!(s);
        for a in &args {
            let _ = writeln!(s, "    {},", a.decl);
        }
        let _ = writeln!(s, ") -> ::halogen::Result<()> {{");
    }
    let _ = writeln!(s, "    unsafe extern \"C\" {{");
    let _ = writeln!(s, "        #[link_name = \"{entry}\"]");
    let _ = writeln!(s, "        fn {ENTRY_ITEM}(");
    let _ = writeln!(s, "            rt: *const ::halogen::runtime::ffi::HalogenRuntime,");
    let _ = writeln!(s, "            ctx: *mut ::std::ffi::c_void,");
    let _ = writeln!(s, "            buffers: *const *mut ::halogen::runtime::ffi::HalogenBuffer,");
    let _ = writeln!(s, "            params: *const ::halogen::runtime::ffi::HalogenScalar,");
    let _ = writeln!(s, "        ) -> ::std::ffi::c_int;");
    let _ = writeln!(s, "    }}");
    // The library's C was checked (its _Static_asserts) against the layout of the Halogen
    // that built it; this checks the Halogen the crate runs with against the same numbers.
    let _ = writeln!(s, "    // The C ABI's layout the library was compiled against: a `halogen` runtime that lays");
    let _ = writeln!(s, "    // it out otherwise stops the build here.");
    let _ = writeln!(s, "    #[cfg(target_pointer_width = \"{}\")]", usize::BITS);
    let _ = writeln!(s, "    const _: () = {{");
    let _ = writeln!(s, "        use ::halogen::runtime::ffi as abi;");
    let _ = writeln!(s, "        macro_rules! layout {{");
    let _ = writeln!(s, "            ($t:ty, $size:literal, $($field:ident = $offset:literal),*) => {{");
    let _ = writeln!(s, "                assert!(");
    let _ = writeln!(s, "                    ::std::mem::size_of::<$t>() == $size");
    let _ = writeln!(s, "                        $(&& ::std::mem::offset_of!($t, $field) == $offset)*,");
    let _ =
        writeln!(s, "                    concat!(\"halogen ABI: \", stringify!($t), \" differs from the library's\")");
    let _ = writeln!(s, "                );");
    let _ = writeln!(s, "            }};");
    let _ = writeln!(s, "        }}");
    for l in layouts() {
        let mut line = format!("        layout!(abi::{}, {},", l.rust_type, l.size);
        for (i, (field, offset)) in l.fields.iter().enumerate() {
            let item = format!(" {field} = {offset}{}", if i + 1 == l.fields.len() { ");" } else { "," });
            if line.len() + item.len() > 100 {
                let _ = writeln!(s, "{line}");
                line = "           ".to_string();
            }
            line.push_str(&item);
        }
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(s, "    }};");
    let _ = writeln!(s, "    // SAFETY: the entry point was generated from the same pipeline as this wrapper: it");
    let _ = writeln!(s, "    // takes these buffers and parameters, in this order, with these types, and");
    let _ = writeln!(s, "    // call_checked compares each buffer's type, dimensions and memory with them.");
    let _ = writeln!(s, "    unsafe {{");
    let _ = writeln!(s, "        ::halogen::runtime::ffi::call_checked(");
    let _ = writeln!(s, "            {ENTRY_ITEM},");
    if bindings.is_empty() {
        let _ = writeln!(s, "            &[],");
    } else {
        let _ = writeln!(s, "            &[");
        for b in &bindings {
            let _ = writeln!(s, "                {b},");
        }
        let _ = writeln!(s, "            ],");
    }
    if scalars.is_empty() {
        let _ = writeln!(s, "            &[],");
    } else {
        let _ = writeln!(s, "            &[");
        for p in &scalars {
            let _ = writeln!(s, "                {p},");
        }
        let _ = writeln!(s, "            ],");
    }
    let _ = writeln!(s, "        )");
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "}}");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::c::{generate, BufferArg, ParamArg};
    use crate::prelude::*;

    fn module(buffers: Vec<BufferArg>, params: Vec<ParamArg>) -> CModule {
        CModule { source: String::new(), units: Vec::new(), kernel_source: None, entry: "pipe".into(), buffers, params }
    }

    fn buffer(name: &str, elem: Type, dims: usize, is_output: bool) -> BufferArg {
        BufferArg { name: name.into(), elem, dims, is_output }
    }

    #[test]
    fn blur_with_a_gain() {
        let input = ImageParam::new(Type::u16(), 2, "input");
        let gain = Param::<f32>::new("gain");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let blur_x = Func::new("blur_x");
        let out = Func::new("out");
        blur_x.def((x, y), (input.at((x, y)) + input.at((x + 1, y)) + input.at((x + 2, y))) / 3);
        out.def((x, y), cast(Type::u16(), cast(Type::f32(), blur_x.at((x, y))) * gain.expr()));
        let lowered = crate::lower::lower(&[out.func_ref().clone()], &crate::Target::host()).unwrap();
        let m = generate(&lowered, "blur_gain", &crate::Target::host()).unwrap();
        insta::assert_snapshot!(source(&m).unwrap());
    }

    #[test]
    fn no_arguments() {
        let m = module(vec![buffer("f", Type::i32(), 0, true)], vec![]);
        insta::assert_snapshot!(source(&m).unwrap());
    }

    #[test]
    fn names_become_plain_identifiers() {
        let m = module(
            vec![
                buffer("type", Type::u8(), 1, false),
                buffer("in put", Type::f32(), 3, false),
                buffer("halogen_entry", Type::i16(), 2, false),
                buffer("2nd", Type::u8(), 1, true),
            ],
            vec![
                ParamArg { name: "in_put".into(), ty: Type::i32() },
                ParamArg { name: "b\"\n`x`".into(), ty: Type::bool() },
            ],
        );
        let s = source(&m).unwrap();
        for decl in [
            "type_: &::halogen::Buffer<u8>",
            "in_put: &::halogen::Buffer<f32>",
            "halogen_entry_: &::halogen::Buffer<i16>",
            "in_put_: i32",
            "b___x_: bool",
            "v2nd: &mut ::halogen::Buffer<u8>",
        ] {
            assert!(s.contains(decl), "{decl} missing from\n{s}");
        }
        // The original names travel as escaped string literals and escaped doc text.
        assert!(s.contains(r#"BufferBinding::input("in put", ::halogen::Type::f32(), 3, in_put.raw())"#), "{s}");
        assert!(s.contains(r#"(named `b\"\n'x'` in the pipeline)"#), "{s}");
        assert!(s.contains("HalogenScalar { b: b___x_ }"), "{s}");
        assert!(!s.contains("\n`x"), "{s}");
    }

    #[test]
    fn types_without_a_buffer_are_errors_and_64_bit_ones_are_not() {
        let m = module(vec![buffer("mask", Type::bool(), 2, true)], vec![]);
        let e = source(&m).unwrap_err().to_string();
        assert!(e.contains("output 'mask' holds bool"), "{e}");
        let m = module(vec![buffer("big", Type::u64(), 1, false), buffer("f", Type::i64(), 1, true)], vec![]);
        let s = source(&m).unwrap();
        assert!(s.contains("big: &::halogen::Buffer<u64>") && s.contains("f: &mut ::halogen::Buffer<i64>"), "{s}");
        let m = module(vec![buffer("f", Type::u8(), 1, true)], vec![ParamArg { name: "n".into(), ty: Type::u64() }]);
        assert!(source(&m).unwrap().contains("n: u64"));
    }
}
