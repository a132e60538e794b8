//! Pipelines compiled when the crate is built (Halide's "generators"): a `build.rs`
//! defines and schedules a pipeline, and [`Generator::emit`] compiles it to a static
//! library in `OUT_DIR`, tells Cargo to link it, and writes a typed Rust wrapper that the
//! crate `include!`s. At run time the crate needs no C compiler and no JIT: the wrapper
//! calls the compiled code directly, with Halogen's thread pool for parallel loops.
//!
//! The crate depends on `halogen` twice, under that name (the wrapper refers to
//! `::halogen`): as a build-dependency (the build script compiles the pipeline) and as a
//! dependency (the wrapper takes `halogen::Buffer`s and calls the runtime).
//!
//! ```toml
//! [dependencies]
//! halogen = "0.1"
//! [build-dependencies]
//! halogen = "0.1"
//! ```
//!
//! `build.rs` (it needs Cargo's `OUT_DIR`, so it is not run here):
//!
//! ```no_run
//! use halogen::prelude::*;
//!
//! fn main() -> halogen::Result<()> {
//!     let input = ImageParam::new(Type::u16(), 2, "input");
//!     let gain = Param::<f32>::new("gain");
//!     let (x, y) = (Var::new("x"), Var::new("y"));
//!     let brighter = Func::new("brighter");
//!     brighter.def((x, y), cast(Type::u16(), cast(Type::f32(), input.at((x, y))) * gain.expr()));
//!     brighter.vectorize(x, 8).parallel(y);
//!     halogen::build::Generator::new("brighten").pipeline(&Pipeline::new(&[&brighter])).emit()?;
//!     Ok(())
//! }
//! ```
//!
//! `src/lib.rs`:
//!
//! ```ignore
//! include!(concat!(env!("OUT_DIR"), "/brighten.rs"));
//! // pub fn brighten(input: &halogen::Buffer<u16>, gain: f32, brighter: &mut halogen::Buffer<u16>)
//! //     -> halogen::Result<()>
//! ```
//!
//! The wrapper's arguments are the pipeline's input images (in name order), its scalar
//! `Param`s (in name order) and its outputs, named as in the pipeline (see
//! [`Generator::wrapper`]). It checks each buffer's number of dimensions, and the
//! generated code checks that the inputs cover what the outputs' region needs; a mistake
//! is an `Err` naming the buffer, never an access outside it. The wrapper contains an
//! `unsafe` block (the call into C), allowed on the function itself, so it compiles in a
//! crate that denies `unsafe_code` (but not in one that forbids it).
//!
//! # Which machine the code is for
//!
//! A library built on one machine usually runs on others (that is what building ahead of
//! time is for), so by default the C is compiled for the baseline of the target
//! architecture: no `-march=native`, only what every CPU of the architecture has (SSE2 on
//! x86-64). The generated vector code still compiles there, with narrower instructions.
//! [`Generator::native`] compiles for the build machine's CPU instead (the JIT's choice;
//! right when the program runs where it is built), and [`Generator::c_flag`] adds any
//! other flag, such as `-mavx2` for a known fleet.
//!
//! # Environment
//!
//! - `OUT_DIR` (set by Cargo for build scripts): where everything is written, unless
//!   [`Generator::out_dir`] names a folder.
//! - `HALOGEN_CC`: the C compiler command (split on whitespace), else `clang` if
//!   installed, else `cc`; [`Generator::c_compiler`] overrides both. The build script
//!   asks Cargo to run it again when this variable changes; with that line printed, Cargo
//!   reruns it when the script itself (or anything it is compiled from, Halogen included)
//!   or a variable it names changes, rather than after any change in the package. The
//!   compiler must accept GCC's flags (GCC or Clang), and `ar` must be on the `PATH`.
//! - `TARGET` and `HOST` (set by Cargo): when they differ, `HALOGEN_CC` (or
//!   [`Generator::c_compiler`]) must name a compiler for the target, since `cc` would
//!   build for the build machine. Targets with the MSVC tool chain are not supported.
//! - At run time, `HALOGEN_NUM_THREADS` sets the thread pool's size, as for the JIT.
//!
//! # What is written
//!
//! For a generator named `NAME`, in the output folder: `NAME.c` and `NAME.h` (the C and
//! its header, see [`crate::backend::aot`]), `libNAME.a`, and `NAME.rs` (the wrapper).
//! When the C compiler fails, its command and output are kept in `NAME.log` and the `Err`
//! names that file.

mod wrapper;

use crate::backend::{aot, c, jit};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Compiles one pipeline ahead of time, for a build script: C code, a static library, the
/// `cargo:` lines that link it, and a typed Rust wrapper (see the [module docs](self)).
///
/// ```
/// use halogen::build::Generator;
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u8(), 1, "input");
/// let x = Var::new("x");
/// let doubled = Func::new("doubled");
/// doubled.def(x, input.at(x) * 2);
/// let dir = std::env::temp_dir().join(format!("halogen-generator-doc-{}", std::process::id()));
/// let emitted = Generator::new("double_it")
///     .pipeline(&Pipeline::new(&[&doubled]))
///     .out_dir(&dir)
///     .print_cargo_directives(false)
///     .emit()
///     .unwrap();
/// assert!(emitted.library.ends_with("libdouble_it.a"));
/// let wrapper = std::fs::read_to_string(&emitted.wrapper).unwrap();
/// assert!(wrapper.contains("pub fn double_it("));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Generator {
    name: String,
    pipeline: Option<Pipeline>,
    out_dir: Option<PathBuf>,
    native: bool,
    c_flags: Vec<String>,
    c_compiler: Option<Vec<String>>,
    print_cargo_directives: Option<bool>,
}

/// What [`Generator::emit`] wrote, and the lines it printed for Cargo.
///
/// ```
/// use halogen::build::Generator;
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let ramp = Func::new("ramp");
/// ramp.def(x, x);
/// let dir = std::env::temp_dir().join(format!("halogen-emitted-doc-{}", std::process::id()));
/// let emitted = Generator::new("ramp")
///     .pipeline(&Pipeline::new(&[&ramp]))
///     .out_dir(&dir)
///     .print_cargo_directives(false)
///     .emit()
///     .unwrap();
/// assert!(emitted.header.is_file() && emitted.c_source.is_file());
/// assert!(emitted.cargo_directives.contains(&"cargo:rustc-link-lib=static=ramp".to_string()));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Emitted {
    /// The output folder.
    pub dir: PathBuf,
    /// The static library, `libNAME.a`.
    pub library: PathBuf,
    /// The C header declaring the entry point, `NAME.h`.
    pub header: PathBuf,
    /// The generated C, `NAME.c`.
    pub c_source: PathBuf,
    /// The Rust wrapper to `include!`, `NAME.rs`.
    pub wrapper: PathBuf,
    /// The `cargo:` lines that link the library (printed when running in a build script).
    pub cargo_directives: Vec<String>,
}

impl Generator {
    /// A generator whose C entry point, library (`libNAME.a`) and Rust function are all
    /// called `name`. The name must be a plain identifier (checked by [`Generator::emit`]);
    /// it becomes a global symbol of the final program, so choose one that no other
    /// library defines (prefixing it with the crate's name is a safe habit).
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur_u16");
    /// assert_eq!(g.name(), "blur_u16");
    /// ```
    pub fn new(name: &str) -> Generator {
        Generator {
            name: name.to_string(),
            pipeline: None,
            out_dir: None,
            native: false,
            c_flags: Vec::new(),
            c_compiler: None,
            print_cargo_directives: None,
        }
    }

    /// The generator's name.
    ///
    /// ```
    /// assert_eq!(halogen::build::Generator::new("sobel").name(), "sobel");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The pipeline to compile, with the schedule its Funcs have when `emit` runs.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// use halogen::prelude::*;
    /// let x = Var::new("x");
    /// let f = Func::new("f");
    /// f.def(x, x * 2);
    /// let g = Generator::new("twice").pipeline(&Pipeline::new(&[&f]));
    /// assert!(g.wrapper().unwrap().contains("f: &mut ::halogen::Buffer<i32>"));
    /// ```
    pub fn pipeline(mut self, pipeline: &Pipeline) -> Generator {
        self.pipeline = Some(pipeline.clone());
        self
    }

    /// Writes into `dir` (created if missing) instead of `$OUT_DIR`.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur").out_dir("/tmp/blur-aot");
    /// assert_eq!(g.output_dir().unwrap(), std::path::Path::new("/tmp/blur-aot"));
    /// ```
    pub fn out_dir(mut self, dir: impl AsRef<Path>) -> Generator {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Compiles for the build machine's CPU (`-march=native`) instead of the architecture's
    /// baseline: faster where the program runs on the machine that built it, and liable to
    /// crash with an illegal instruction elsewhere. Not allowed when cross-compiling.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// assert_eq!(Generator::new("blur").native(true).c_flags(), ["-march=native"]);
    /// assert!(Generator::new("blur").c_flags().is_empty());
    /// ```
    pub fn native(mut self, native: bool) -> Generator {
        self.native = native;
        self
    }

    /// Adds a flag for the C compiler, after Halogen's own (`-std=c11 -O3 -fPIC
    /// -ffp-contract=off -fno-math-errno`), e.g. `-mavx2` for machines known to have AVX2.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur").c_flag("-mavx2").c_flag("-mfma");
    /// assert_eq!(g.c_flags(), ["-mavx2", "-mfma"]);
    /// ```
    pub fn c_flag(mut self, flag: &str) -> Generator {
        self.c_flags.push(flag.to_string());
        self
    }

    /// The flags `emit` adds to Halogen's own: `-march=native` if [`Generator::native`],
    /// then those of [`Generator::c_flag`].
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur").c_flag("-g").native(true);
    /// assert_eq!(g.c_flags(), ["-march=native", "-g"]);
    /// ```
    pub fn c_flags(&self) -> Vec<String> {
        let mut f = Vec::new();
        if self.native {
            f.push("-march=native".to_string());
        }
        f.extend(self.c_flags.iter().cloned());
        f
    }

    /// Uses the C compiler command `command` (split on whitespace, as `HALOGEN_CC` is)
    /// instead of `$HALOGEN_CC` or `cc`.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur").c_compiler("ccache clang");
    /// assert_eq!(g.compiler(), ["ccache", "clang"]);
    /// ```
    pub fn c_compiler(mut self, command: &str) -> Generator {
        self.c_compiler = Some(command.split_whitespace().map(str::to_string).collect());
        self
    }

    /// The C compiler command `emit` runs: [`Generator::c_compiler`]'s, else `$HALOGEN_CC`,
    /// else `clang` if installed, else `cc`.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// assert!(!Generator::new("blur").compiler().is_empty());
    /// ```
    pub fn compiler(&self) -> Vec<String> {
        self.c_compiler.clone().unwrap_or_else(jit::compiler)
    }

    /// Whether `emit` prints its `cargo:` lines to stdout, where Cargo reads them. By
    /// default it does when `OUT_DIR` is set, that is, inside a build script.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur").print_cargo_directives(false);
    /// # let _ = g;
    /// ```
    pub fn print_cargo_directives(mut self, print: bool) -> Generator {
        self.print_cargo_directives = Some(print);
        self
    }

    /// The folder `emit` writes to: [`Generator::out_dir`]'s, else `$OUT_DIR`; `Err`
    /// naming both when neither is given (outside a build script).
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let g = Generator::new("blur").out_dir("gen");
    /// assert_eq!(g.output_dir().unwrap(), std::path::Path::new("gen"));
    /// ```
    pub fn output_dir(&self) -> Result<PathBuf> {
        output_dir(&self.name, self.out_dir.as_deref(), std::env::var_os("OUT_DIR"))
    }

    /// The Rust wrapper `emit` writes (the pipeline is lowered, nothing is compiled): one
    /// function named after the generator taking `&Buffer<T>` for each input image, the
    /// scalar `Param`s by value and `&mut Buffer<T>` for each output, with the pipeline's
    /// types; names that are not plain Rust identifiers are adjusted and the docs give the
    /// original.
    ///
    /// ```
    /// use halogen::build::Generator;
    /// use halogen::prelude::*;
    /// let input = ImageParam::new(Type::u16(), 2, "input");
    /// let offset = Param::<u16>::new("offset");
    /// let (x, y) = (Var::new("x"), Var::new("y"));
    /// let shifted = Func::new("shifted");
    /// shifted.def((x, y), input.at((x, y)) + offset.expr());
    /// let w = Generator::new("shift").pipeline(&Pipeline::new(&[&shifted])).wrapper().unwrap();
    /// assert!(w.contains("pub fn shift("));
    /// assert!(w.contains("input: &::halogen::Buffer<u16>,\n    offset: u16,\n    shifted: &mut ::halogen::Buffer<u16>,"));
    /// ```
    pub fn wrapper(&self) -> Result<String> {
        wrapper::source(&self.module()?)
    }

    /// Lowers the pipeline, compiles it into a static library, writes the wrapper, and
    /// (in a build script) prints the `cargo:` lines that link the library; see the
    /// [module docs](self) for the files and the environment.
    ///
    /// Errors name what to change: an unusable name, no pipeline, no output folder
    /// (`OUT_DIR` unset and no [`Generator::out_dir`]), an algorithm or schedule mistake
    /// (as `Pipeline::compile` reports it), a type no `Buffer` holds, a missing C compiler
    /// (with `HALOGEN_CC`), or a compiler failure (with the path of its log).
    ///
    /// ```
    /// use halogen::build::Generator;
    /// let e = Generator::new("blur").out_dir("unused").emit().unwrap_err();
    /// assert!(e.to_string().contains("no pipeline"));
    /// ```
    pub fn emit(&self) -> Result<Emitted> {
        let m = self.module()?;
        let wrapper_text = wrapper::source(&m)?;
        let dir = self.output_dir()?;
        let cc = self.compiler();
        let cc_var = std::env::var_os("HALOGEN_CC").is_some_and(|v| !v.to_string_lossy().trim().is_empty());
        check_target(&self.name, self.c_compiler.is_some() || cc_var, self.native)?;
        let library = aot::build_static_library(&m, &dir, &cc, &self.c_flags())?;
        let wrapper = dir.join(format!("{}.rs", self.name));
        std::fs::write(&wrapper, wrapper_text)
            .map_err(|e| Error::Backend(format!("cannot write the wrapper {}: {e}", wrapper.display())))?;
        let unix = match std::env::var("CARGO_CFG_TARGET_FAMILY") {
            Ok(families) => families.split(',').any(|f| f == "unix"),
            Err(_) => cfg!(unix),
        };
        let mut cargo_directives = vec![
            "cargo:rerun-if-env-changed=HALOGEN_CC".to_string(),
            format!("cargo:rustc-link-search=native={}", dir.display()),
            format!("cargo:rustc-link-lib=static={}", self.name),
        ];
        // The generated code calls the C math library (sqrtf, expf, ...); the static library
        // comes first so the linker resolves its references from libm.
        if unix {
            cargo_directives.push("cargo:rustc-link-lib=m".to_string());
        }
        if self.print_cargo_directives.unwrap_or_else(|| std::env::var_os("OUT_DIR").is_some()) {
            for line in &cargo_directives {
                println!("{line}");
            }
        }
        Ok(Emitted {
            library,
            header: dir.join(format!("{}.h", self.name)),
            c_source: dir.join(format!("{}.c", self.name)),
            wrapper,
            dir,
            cargo_directives,
        })
    }

    /// The pipeline lowered and printed as C with the entry point `name`.
    fn module(&self) -> Result<c::CModule> {
        check_name(&self.name)?;
        let Some(pipeline) = &self.pipeline else {
            return Err(Error::Argument(format!(
                "Generator '{}' has no pipeline; give it one with .pipeline(&Pipeline::new(&[&output]))",
                self.name
            )));
        };
        if pipeline.outputs().is_empty() {
            return Err(Error::Definition(format!(
                "Generator '{}': a pipeline needs at least one output Func",
                self.name
            )));
        }
        let refs: Vec<_> = pipeline.outputs().iter().map(|f| f.func_ref().clone()).collect();
        // Ahead-of-time code is host C, for the machine that builds (as `-march=native`).
        let target = crate::Target::host();
        let lowered = crate::lower::lower(&refs, &target)?;
        c::generate(&lowered, &self.name, &target)
    }
}

/// Checks that `name` can name the C entry point, the library and the Rust function as is.
fn check_name(name: &str) -> Result<()> {
    let plain = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && c::names::sanitize(name) == name
        && !wrapper::is_rust_keyword(name);
    if plain {
        return Ok(());
    }
    Err(Error::Argument(format!(
        "Generator name '{}' cannot name the C entry point, the library lib<name>.a and the Rust function: use ASCII \
         letters, digits and '_', starting with a letter, not a C or Rust keyword, not all capitals, and not starting \
         with 'h_', 'halogen', 'body_' or 'closure_'",
        name.escape_debug()
    )))
}

/// The output folder: `explicit`, else the value of `OUT_DIR` (`out_dir_var`).
fn output_dir(name: &str, explicit: Option<&Path>, out_dir_var: Option<OsString>) -> Result<PathBuf> {
    if let Some(d) = explicit {
        return Ok(d.to_path_buf());
    }
    match out_dir_var {
        Some(d) if !d.is_empty() => Ok(PathBuf::from(d)),
        _ => Err(Error::Argument(format!(
            "Generator '{name}': the environment variable OUT_DIR is not set, so there is no folder to write to; \
             Cargo sets it for build scripts (build.rs), elsewhere give one with .out_dir(path)"
        ))),
    }
}

/// Refuses combinations that would build code for the wrong machine: cross-compiling
/// (Cargo's `TARGET` differs from `HOST`) with the default compiler or with `-march=native`,
/// and MSVC targets (the library is built with a GCC-style compiler and `ar`).
fn check_target(name: &str, compiler_chosen: bool, native: bool) -> Result<()> {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    check_target_with(name, var("HOST"), var("TARGET"), var("CARGO_CFG_TARGET_ENV"), compiler_chosen, native)
}

fn check_target_with(
    name: &str,
    host: Option<String>,
    target: Option<String>,
    target_env: Option<String>,
    compiler_chosen: bool,
    native: bool,
) -> Result<()> {
    if target_env.as_deref() == Some("msvc") {
        return Err(Error::Backend(format!(
            "Generator '{name}': the target {} uses the MSVC tool chain, which halogen::build does not support (it \
             builds with a GCC-style C compiler and ar); use a -gnu target",
            target.as_deref().unwrap_or("(unknown)")
        )));
    }
    let (Some(host), Some(target)) = (host, target) else { return Ok(()) };
    if host == target {
        return Ok(());
    }
    if native {
        return Err(Error::Backend(format!(
            "Generator '{name}': .native(true) compiles for the build machine ({host}), but the target is {target}; \
             drop .native(true) or use .c_flag(\"-march=...\") for the target's CPU"
        )));
    }
    if !compiler_chosen {
        return Err(Error::Backend(format!(
            "Generator '{name}': cross-compiling from {host} to {target}, but `cc` builds for {host}; set HALOGEN_CC \
             to a C compiler for {target} (e.g. HALOGEN_CC={}-gcc)",
            target.replace("-unknown-", "-")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prelude::*;

    fn ramp() -> Pipeline {
        let x = Var::new("x");
        let f = Func::new("f");
        f.def(x, x * 3);
        Pipeline::new(&[&f])
    }

    fn temp_dir(tag: &str) -> PathBuf {
        std::env::temp_dir().join(format!("halogen-build-test-{tag}-{}", std::process::id()))
    }

    #[test]
    fn names_must_be_plain_identifiers() {
        for ok in ["blur", "blur_u16", "Blur2", "a"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "2blur", "_blur", "blur-u16", "blur u16", "fn", "int", "halogen_blur", "BLUR", "h_x", "é"] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("cannot name the C entry point"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_output_folder_comes_from_out_dir_or_the_generator() {
        let e = output_dir("blur", None, None).unwrap_err().to_string();
        assert!(e.contains("OUT_DIR is not set") && e.contains(".out_dir(path)"), "{e}");
        assert!(output_dir("blur", None, Some(OsString::new())).is_err());
        assert_eq!(output_dir("blur", None, Some("/o".into())).unwrap(), PathBuf::from("/o"));
        assert_eq!(output_dir("blur", Some(Path::new("/e")), Some("/o".into())).unwrap(), PathBuf::from("/e"));
    }

    #[test]
    fn cross_compiling_needs_a_compiler_for_the_target() {
        let s = |v: &str| Some(v.to_string());
        let x86 = s("x86_64-unknown-linux-gnu");
        let arm = s("aarch64-unknown-linux-gnu");
        assert!(check_target_with("g", x86.clone(), x86.clone(), s("gnu"), false, true).is_ok());
        assert!(check_target_with("g", None, None, None, false, true).is_ok());
        let e = check_target_with("g", x86.clone(), arm.clone(), s("gnu"), false, false).unwrap_err().to_string();
        assert!(e.contains("HALOGEN_CC=aarch64-linux-gnu-gcc"), "{e}");
        assert!(check_target_with("g", x86.clone(), arm.clone(), s("gnu"), true, false).is_ok());
        let e = check_target_with("g", x86.clone(), arm, s("gnu"), true, true).unwrap_err().to_string();
        assert!(e.contains(".native(true)"), "{e}");
        let e = check_target_with("g", x86.clone(), s("x86_64-pc-windows-msvc"), s("msvc"), true, false).unwrap_err();
        assert!(e.to_string().contains("MSVC"), "{e}");
    }

    #[test]
    fn emit_writes_the_library_the_header_and_the_wrapper() {
        let dir = temp_dir("emit");
        let emitted =
            Generator::new("times_three").pipeline(&ramp()).out_dir(&dir).print_cargo_directives(false).emit().unwrap();
        for p in [&emitted.library, &emitted.header, &emitted.c_source, &emitted.wrapper] {
            assert!(p.is_file(), "{} missing", p.display());
        }
        let w = std::fs::read_to_string(&emitted.wrapper).unwrap();
        assert_eq!(w, Generator::new("times_three").pipeline(&ramp()).wrapper().unwrap());
        assert_eq!(emitted.cargo_directives[0], "cargo:rerun-if-env-changed=HALOGEN_CC");
        assert_eq!(emitted.cargo_directives[1], format!("cargo:rustc-link-search=native={}", dir.display()));
        assert_eq!(emitted.cargo_directives[2], "cargo:rustc-link-lib=static=times_three");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_compiler_is_named() {
        let dir = temp_dir("no-cc");
        let e = Generator::new("g")
            .pipeline(&ramp())
            .out_dir(&dir)
            .c_compiler("/nonexistent/halogen-cc")
            .emit()
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/halogen-cc") && e.contains("HALOGEN_CC"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_compiler_failure_keeps_its_log() {
        let dir = temp_dir("cc-fails");
        let e = Generator::new("g")
            .pipeline(&ramp())
            .out_dir(&dir)
            .c_flag("-include")
            .c_flag("/nonexistent/halogen-missing-header.h")
            .print_cargo_directives(false)
            .emit()
            .unwrap_err()
            .to_string();
        let log = dir.join("g.log");
        assert!(e.contains(&log.display().to_string()), "{e}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("halogen-missing-header.h"), "{text}");
        assert!(!dir.join("g.rs").exists(), "no wrapper for a library that was not built");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn usage_mistakes_are_errors() {
        let e = Generator::new("g").wrapper().unwrap_err().to_string();
        assert!(e.contains("Generator 'g' has no pipeline"), "{e}");
        let e = Generator::new("g").pipeline(&Pipeline::new(&[])).wrapper().unwrap_err().to_string();
        assert!(e.contains("at least one output"), "{e}");
        let e = Generator::new("not valid").pipeline(&ramp()).wrapper().unwrap_err().to_string();
        assert!(e.contains("'not valid'"), "{e}");
    }
}
