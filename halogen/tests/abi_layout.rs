//! The C ABI's layout as the C compiler sees it equals the Rust runtime's
//! (`halogen::runtime::layout`): a C program that includes the prelude's `RUNTIME_TYPES`
//! prints every `sizeof`, `_Alignof` and `offsetof`, and the generated `_Static_assert`s stop
//! a file whose types are laid out otherwise. Skipped, with the reason printed, only when
//! no C compiler runs.

use halogen::backend::c::prelude::{fixed_prelude, RUNTIME_TYPES};
use halogen::runtime::layout::{constants, layouts};
use std::path::PathBuf;
use std::process::{Command, Output};

/// The C compiler command, or `None` (after saying why) when it does not run.
fn c_compiler() -> Option<Vec<String>> {
    let cc = halogen::backend::jit::compiler();
    match Command::new(&cc[0]).args(&cc[1..]).arg("--version").output() {
        Ok(o) if o.status.success() => Some(cc),
        Ok(o) => {
            eprintln!("skipped: `{} --version` failed ({})", cc.join(" "), o.status);
            None
        }
        Err(e) => {
            eprintln!("skipped: no C compiler runs (`{}`: {e})", cc.join(" "));
            None
        }
    }
}

fn work_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("halogen-abi-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn compile(cc: &[String], args: &[&str], source: &str, dir: &std::path::Path) -> Output {
    let c = dir.join("layout.c");
    std::fs::write(&c, source).unwrap();
    Command::new(&cc[0]).args(&cc[1..]).args(["-std=c11", "-Wall", "-Wextra"]).args(args).arg(&c).output().unwrap()
}

/// One line per number: `TYPE|size|N`, `TYPE|align|N`, `TYPE|FIELD|N`, `NAME|value|N`.
fn rust_view() -> Vec<String> {
    let mut lines = Vec::new();
    for l in layouts() {
        lines.push(format!("{}|size|{}", l.c_type, l.size));
        lines.push(format!("{}|align|{}", l.c_type, l.align));
        lines.extend(l.fields.iter().map(|(f, o)| format!("{}|{f}|{o}", l.c_type)));
    }
    lines.extend(constants().iter().map(|(n, v)| format!("{n}|value|{v}")));
    lines
}

/// A C program printing the same lines from the C compiler's view.
fn c_program() -> String {
    let mut s = String::from("#include <stdio.h>\n");
    s.push_str(RUNTIME_TYPES);
    s.push_str("\nint main(void) {\n");
    for l in layouts() {
        let t = l.c_type;
        s.push_str(&format!("    printf(\"{t}|size|%zu\\n\", sizeof({t}));\n"));
        s.push_str(&format!("    printf(\"{t}|align|%zu\\n\", (size_t)_Alignof({t}));\n"));
        for (f, _) in &l.fields {
            s.push_str(&format!("    printf(\"{t}|{f}|%zu\\n\", offsetof({t}, {f}));\n"));
        }
    }
    for (n, _) in constants() {
        s.push_str(&format!("    printf(\"{n}|value|%llu\\n\", (unsigned long long){n});\n"));
    }
    s.push_str("    return 0;\n}\n");
    s
}

#[test]
fn the_c_compiler_lays_out_the_abi_as_rust_does() {
    let Some(cc) = c_compiler() else { return };
    let dir = work_dir("view");
    let exe = dir.join("layout");
    let out = compile(&cc, &["-Werror", "-o", exe.to_str().unwrap()], &c_program(), &dir);
    assert!(out.status.success(), "the layout program failed to build:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success(), "the layout program failed ({})", run.status);
    let c_view: Vec<String> = String::from_utf8_lossy(&run.stdout).lines().map(str::to_string).collect();
    assert_eq!(c_view, rust_view());
    // The descriptor has Halide's fields, a device interface has its four functions.
    for line in ["struct halogen_buffer|device|0", "struct halogen_device_interface|copy_to_device|"] {
        assert!(c_view.iter().any(|l| l.starts_with(line)), "{line} missing from {c_view:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_c_layout_that_differs_from_rust_stops_the_compile() {
    let Some(cc) = c_compiler() else { return };
    let dir = work_dir("mismatch");
    let prelude = fixed_prelude(halogen::Target::host().machine());
    let out = compile(&cc, &["-fsyntax-only"], &prelude, &dir);
    assert!(out.status.success(), "the prelude alone failed:\n{}", String::from_utf8_lossy(&out.stderr));
    // A narrower `flags` moves every field after it.
    let narrowed = prelude.replacen("    uint64_t flags;\n", "    uint32_t flags;\n", 1);
    assert_ne!(narrowed, prelude);
    let out = compile(&cc, &["-fsyntax-only"], &narrowed, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a mismatched layout compiled");
    assert!(stderr.contains("halogen ABI: offsetof(struct halogen_buffer, type_code) is not"), "{stderr}");
    // So does a constant with another value.
    let renumbered = prelude.replacen("#define HALOGEN_DEVICE_DIRTY 2ull", "#define HALOGEN_DEVICE_DIRTY 4ull", 1);
    assert_ne!(renumbered, prelude);
    let out = compile(&cc, &["-fsyntax-only"], &renumbered, &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("halogen ABI: HALOGEN_DEVICE_DIRTY is not 2ull"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
