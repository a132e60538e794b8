//! The C types' layout checked against the Rust runtime's: `_Static_assert`s on the size,
//! alignment and every field offset of each type of [`super::prelude::RUNTIME_TYPES`], and
//! on the ABI's constants, with the numbers of [`crate::runtime::layout`]. A C compiler
//! that lays a type out otherwise than Rust does refuses the file instead of producing code
//! that reads the wrong fields.
//!
//! The numbers are those of the machine that prints the file. A file compiled for a target
//! whose pointers have another width (cross-compiling ahead of time) skips the checks: its
//! layout differs from this machine's by design, and the runtime built for that target
//! follows the same C rules.

use crate::runtime::layout::{constants, layouts};
use std::fmt::Write as _;

/// The `_Static_assert`s, to print after the C types.
///
/// ```
/// let text = halogen::backend::c::abi::layout_asserts();
/// let size = std::mem::size_of::<halogen::runtime::ffi::HalogenBuffer>();
/// assert!(text.contains(&format!("_Static_assert(sizeof(struct halogen_buffer) == {size},")));
/// ```
pub fn layout_asserts() -> String {
    let mut s = String::from("\n/* The layout the Rust runtime gives these types (bytes). */\n");
    let _ = writeln!(s, "#if UINTPTR_MAX == {:#x}u", usize::MAX);
    let check = |s: &mut String, what: String, value: String| {
        let _ = writeln!(
            s,
            "_Static_assert({what} == {value}, \"halogen ABI: {what} is not {value} as in the Rust runtime\");"
        );
    };
    for l in layouts() {
        check(&mut s, format!("sizeof({})", l.c_type), l.size.to_string());
        check(&mut s, format!("_Alignof({})", l.c_type), l.align.to_string());
        for (field, offset) in &l.fields {
            check(&mut s, format!("offsetof({}, {field})", l.c_type), offset.to_string());
        }
    }
    s.push_str("#endif\n");
    for (name, value) in constants() {
        check(&mut s, name.to_string(), format!("{value}ull"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    #[test]
    fn generated_files_carry_every_layout_assert() {
        let x = Var::new("x");
        let f = Func::new("f");
        f.def(x, x + 1);
        let lowered = crate::lower::lower(&[f.func_ref().clone()], &crate::Target::host()).unwrap();
        let source = crate::backend::c::generate(&lowered, "add_one", &crate::Target::host()).unwrap().source;
        // After the types they check, before the code that uses them.
        let types = source.find("struct halogen_buffer {").unwrap();
        let asserts = source.find("_Static_assert(sizeof(struct halogen_dim) == 16,").expect("layout asserts");
        assert!(types < asserts && asserts < source.find("int add_one(").unwrap());
        let buffer = std::mem::size_of::<crate::runtime::ffi::HalogenBuffer>();
        assert!(source.contains(&format!("_Static_assert(sizeof(struct halogen_buffer) == {buffer},")));
        let flags = std::mem::offset_of!(crate::runtime::ffi::HalogenBuffer, flags);
        assert!(source.contains(&format!("_Static_assert(offsetof(struct halogen_buffer, flags) == {flags},")));
        let runtime = std::mem::size_of::<crate::runtime::ffi::HalogenRuntime>();
        assert!(source.contains(&format!("_Static_assert(sizeof(struct halogen_runtime) == {runtime},")));
        for l in layouts() {
            for (field, offset) in &l.fields {
                let line = format!("_Static_assert(offsetof({}, {field}) == {offset},", l.c_type);
                assert!(source.contains(&line), "missing: {line}");
            }
        }
        assert!(source.contains("_Static_assert(HALOGEN_DEVICE_DIRTY == 2ull,"));
    }
}
