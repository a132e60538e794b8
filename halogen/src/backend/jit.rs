//! Just-in-time compilation: the generated C compiled by the system C compiler into a
//! shared library, loaded with `libloading`, and called through the C ABI of
//! [`crate::runtime::ffi`].
//!
//! - The compiler is `$HALOGEN_CC` (split on whitespace, so `ccache gcc` works), else
//!   `clang` when it is installed, else `cc` (see [`compiler`]), run as
//!   `-std=c11 -O3 -march=native -fPIC -shared -ffp-contract=off -fno-math-errno`:
//!   no floating-point contraction, so float results match the interpreter bit for bit.
//!   With `HALOGEN_SANITIZE=1` the code is also built with
//!   `-fsanitize=address,undefined -fno-sanitize-recover=all` (the process must then load
//!   the ASan runtime first, e.g. with `LD_PRELOAD`; see `tests/c_backend_sanitize.rs`).
//! - Libraries are cached in `$HALOGEN_CACHE_DIR`, else `$XDG_CACHE_HOME/halogen`, else
//!   `~/.cache/halogen`, named by the SHA-256 of the source, the flags, the compiler command,
//!   its `--version` output (asked once per process) and the CPU's feature flags. A pipeline compiled before, by
//!   this process or an earlier one, is loaded without running the compiler; the source is
//!   kept beside the library (`<hash>.c`) for inspection.
//! - Each library has a checksum record beside it (`<hash>.so.sum`: size and SHA-256,
//!   written before the library, both by rename). A library whose record is missing or does
//!   not match (truncated, damaged, or written by an older version) is rebuilt, never loaded.
//! - A compile error keeps the source and the compiler's log (`<hash>.log`) and names both
//!   in the `Err`.
//! - A large pipeline's C also comes as translation units (the printer's
//!   [`crate::backend::c::printer::CFile::units`]): on a machine with several cores they
//!   are compiled side by side to objects and linked into the library, since the C
//!   compiler runs on one core and its time grows with the size of a file. The cache key
//!   is the single file's; that file is the one kept.
//! - With Clang, the system headers generated files include
//!   ([`crate::backend::c::prelude::SYSTEM_HEADERS`], the x86 intrinsics above all) are
//!   precompiled once per compiler, flags and machine into the cache folder
//!   (`system-headers-<hash>.pch`) and every compile reads them with `-include-pch`:
//!   parsing them cost about 0.3 s per file, a third of a small pipeline's first compile.
//!   A precompiled file the compiler refuses (a system header updated since) is removed,
//!   the compile retried without it, and the next compile builds it again.
//! - A pipeline is also remembered by its fingerprint before lowering
//!   ([`crate::lower::Scheduled::fingerprint`]): `<fingerprint key>.pre` names the library
//!   and the entry point's arguments, so compiling that pipeline again (in any process of
//!   the same build of Halogen) loads the library without lowering or printing C
//!   ([`JitModule::recall`]). Lowering is most of a compile that finds its library cached.
//! - To read the generated C: `Compiled::c_source()`, the `<hash>.c` files in the cache,
//!   `HALOGEN_DEBUG=c` (prints each file as it is loaded), or `Compiled::compile_to_c`.

use crate::backend::c::prelude::SYSTEM_HEADERS;
use crate::backend::c::{self, CModule};
use crate::error::{Error, Result};
use crate::ir::{Expr, Name};
use crate::lower::Lowered;
use crate::runtime::ffi::{self, BufferBinding, EntryPoint, HalogenScalar};
use crate::runtime::{RawBuffer, RawBufferMut};
use crate::target::Target;
use libloading::Library;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const PASS: &str = "C back end (jit)";

/// The entry point's name in JIT-compiled libraries.
pub const ENTRY: &str = "halogen_pipeline";

static INVOCATIONS: AtomicU64 = AtomicU64::new(0);
static VERSIONS: OnceLock<Mutex<HashMap<Vec<String>, String>>> = OnceLock::new();
static BUILDS: OnceLock<Mutex<HashMap<String, Arc<Mutex<()>>>>> = OnceLock::new();
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);
/// The precompiled headers found or built, by key (`None`: none for that compiler).
static PRECOMPILED: OnceLock<Mutex<HashMap<String, Option<PathBuf>>>> = OnceLock::new();

/// How many times this process has run the C compiler to compile a pipeline (cache hits
/// and `--version` queries do not count).
///
/// ```
/// let before = halogen::backend::jit::compiler_invocations();
/// assert!(halogen::backend::jit::compiler_invocations() >= before);
/// ```
pub fn compiler_invocations() -> u64 {
    INVOCATIONS.load(Ordering::Relaxed)
}

/// Whether `HALOGEN_DEBUG` (a comma-separated list) contains `c`: print each generated
/// file to stderr when it is loaded.
fn debug_c() -> bool {
    std::env::var("HALOGEN_DEBUG").is_ok_and(|v| v.split(',').any(|p| p.trim() == "c"))
}

/// The C compiler command: `$HALOGEN_CC` split on whitespace, else `clang` if it runs,
/// else `cc`.
///
/// Clang comes first because its code is faster: over the apps of `halogen-apps`, under
/// their hand and automatic schedules, Clang 14 and 16 give 0.86× GCC 12's time in
/// geometric mean, and GCC's tuning for a CPU newer than it knows (`-march=native` on a
/// Zen 4 picks `znver3`) leaves a whole register file unused in stencils such as Harris.
/// With `HALOGEN_SANITIZE=1` the default stays `cc`, whose `libasan.so` the sanitizer
/// test preloads.
///
/// ```
/// let cc = halogen::backend::jit::compiler();
/// assert!(!cc.is_empty());
/// ```
pub fn compiler() -> Vec<String> {
    match std::env::var("HALOGEN_CC") {
        Ok(v) if !v.trim().is_empty() => v.split_whitespace().map(str::to_string).collect(),
        _ => vec![default_compiler().to_string()],
    }
}

/// `clang` when `clang --version` succeeds (asked once per process) and no sanitizer
/// build is asked for, else `cc`.
fn default_compiler() -> &'static str {
    static CC: OnceLock<&'static str> = OnceLock::new();
    CC.get_or_init(|| {
        let clang_runs = || Command::new("clang").arg("--version").output().is_ok_and(|o| o.status.success());
        if !sanitize_enabled() && clang_runs() {
            "clang"
        } else {
            "cc"
        }
    })
}

/// Whether `HALOGEN_SANITIZE=1` asks for sanitizer builds (the switch lives in the runtime,
/// whose pooled heap obeys it too).
pub use crate::runtime::config::sanitize_enabled;

/// The flags the C compiler runs with (part of the cache key).
///
/// ```
/// let f = halogen::backend::jit::flags();
/// assert!(f.iter().any(|x| x == "-ffp-contract=off"));
/// ```
pub fn flags() -> Vec<String> {
    flags_for(false)
}

/// The flags for code that may (`fast_math`, see [`crate::Target::with_fast_math`]) or may
/// not contract `a * b + c` into fused multiply-adds.
///
/// ```
/// let f = halogen::backend::jit::flags_for(true);
/// assert!(f.iter().any(|x| x == "-ffp-contract=fast"));
/// ```
pub fn flags_for(fast_math: bool) -> Vec<String> {
    let contract = if fast_math { "-ffp-contract=fast" } else { "-ffp-contract=off" };
    let mut f: Vec<String> = ["-std=c11", "-O3", "-march=native", "-fPIC", "-shared", contract, "-fno-math-errno"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if sanitize_enabled() {
        f.extend(
            ["-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
                .iter()
                .map(|s| s.to_string()),
        );
    }
    f
}

/// Where compiled pipelines are cached (see [`crate::runtime::config::cache_dir`]).
pub fn cache_dir() -> PathBuf {
    crate::runtime::config::cache_dir()
}

fn no_compiler(cc: &[String], why: impl std::fmt::Display) -> Error {
    Error::Backend(format!(
        "no C compiler: running `{} --version` failed: {why}. Target::host() compiles generated C: install gcc or \
             clang, or set HALOGEN_CC to a C compiler; Target::interp() runs without one",
        cc.join(" ")
    ))
}

/// The compiler's `--version` output, asked once per process and command.
fn compiler_version(cc: &[String]) -> Result<String> {
    let versions = VERSIONS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = versions.lock().unwrap_or_else(|p| p.into_inner()).get(cc) {
        return Ok(v.clone());
    }
    let out = Command::new(&cc[0]).args(&cc[1..]).arg("--version").output().map_err(|e| no_compiler(cc, e))?;
    if !out.status.success() {
        return Err(no_compiler(cc, out.status));
    }
    let v = String::from_utf8_lossy(&out.stdout).into_owned();
    versions.lock().unwrap_or_else(|p| p.into_inner()).insert(cc.to_vec(), v.clone());
    Ok(v)
}

/// What `-march=native` depends on: the CPU's feature flags (Linux), so a cache folder
/// shared between different machines never hands one the other's instructions.
fn machine() -> &'static str {
    static MACHINE: OnceLock<String> = OnceLock::new();
    MACHINE.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = info.lines().find(|l| l.starts_with("flags") || l.starts_with("Features")).unwrap_or("");
        format!("{} {flags}", std::env::consts::ARCH)
    })
}

/// The cache key of a source compiled with `cc` (of version `version`) and `flags`.
fn cache_key(source: &str, cc: &[String], version: &str, flags: &[String]) -> String {
    digest(&[source, &cc.join(" "), version, &flags.join(" "), machine()])
}

/// The first 16 bytes of the SHA-256 of `parts` (each prefixed by its length), in hex.
fn digest(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for part in parts {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

/// First line of a record written by [`JitModule::remember`] (its version).
const RECORD_HEADER: &str = "halogen compiled pipeline 1";

/// The name of the record of a pipeline fingerprint: the fingerprint with what else picks
/// the library (the compiler as `$HALOGEN_CC` asks for it, the flags, the machine). The
/// compiler's version is not asked here (that runs it): a compiler upgraded in place
/// leaves records pointing at libraries it built, which still compute the same thing.
fn recall_key(fingerprint: &str, target: &Target) -> String {
    let cc = std::env::var("HALOGEN_CC").unwrap_or_default();
    digest(&[fingerprint, cc.trim(), &flags_for(target.fast_math()).join(" "), machine()])
}

/// A scalar type as `Type`'s `Display` prints it (`uint8`, `float32`, `bool`).
fn parse_type(s: &str) -> Option<crate::ir::Type> {
    use crate::ir::{Type, TypeCode};
    if s == "bool" {
        return Some(Type::bool());
    }
    let (code, bits) = [("uint", TypeCode::UInt), ("int", TypeCode::Int), ("float", TypeCode::Float)]
        .into_iter()
        .find_map(|(p, c)| s.strip_prefix(p).map(|b| (c, b)))?;
    Some(Type::new(code, bits.parse().ok()?))
}

/// Whether `$HALOGEN_CC` picks the compiler.
fn chosen_by_user() -> bool {
    std::env::var("HALOGEN_CC").is_ok_and(|v| !v.trim().is_empty())
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::Backend(format!("{PASS}: cannot {what} {}: {e}", path.display()))
}

/// Compiles `source` into `dir/<key>.so` (through a temporary file, so concurrent builds
/// of the same key by other processes never see a partial library). Where the source also
/// comes as translation units (`units`, the same code split) and the machine has more than
/// one core, the units are compiled side by side and linked instead.
fn build(
    source: &str,
    units: &[String],
    cc: &[String],
    version: &str,
    flags: &[String],
    dir: &Path,
    key: &str,
) -> Result<PathBuf> {
    let so = dir.join(format!("{key}.so"));
    let tag = format!("{}.{}", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed));
    let tmp_c = dir.join(format!("{key}.{tag}.c"));
    let tmp_so = dir.join(format!("{key}.{tag}.so.tmp"));
    let keep_c = dir.join(format!("{key}.c"));
    std::fs::write(&tmp_c, source).map_err(|e| io_error("write the generated C to", &tmp_c, e))?;
    // Same key, same text: the rename is atomic, so a concurrent build reads a whole file.
    std::fs::rename(&tmp_c, &keep_c).map_err(|e| io_error("write the generated C to", &keep_c, e))?;
    INVOCATIONS.fetch_add(1, Ordering::Relaxed);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let compile = |pch: Option<&Path>| {
        if units.len() > 1 && cores > 1 {
            build_units(units, cc, flags, pch, dir, &format!("{key}.{tag}"), &tmp_so, cores)
        } else {
            let mut cmd = Command::new(&cc[0]);
            cmd.args(&cc[1..]).args(flags).args(include_pch(pch)).arg("-o").arg(&tmp_so).arg(&keep_c).arg("-lm");
            run_compiler(cmd, cc)
        }
    };
    let pch = precompiled_headers(cc, version, flags, dir);
    let mut failure = compile(pch.as_deref())?;
    if let (Some(_), Some(stale)) = (&failure, &pch) {
        // A header changed since it was precompiled (or the file is damaged): the
        // compiler refuses it. Build without it, and precompile afresh next time.
        forget_precompiled_headers(stale);
        failure = compile(None)?;
    }
    if let Some((status, log, stderr)) = failure {
        let _ = std::fs::remove_file(&tmp_so);
        let log_path = dir.join(format!("{key}.log"));
        let _ = std::fs::write(&log_path, &log);
        let excerpt: String = stderr.lines().take(20).collect::<Vec<_>>().join("\n");
        let message = format!(
            "the C compiler `{}` failed on the generated code ({status}); the source is at {} and the compiler's log at {}:\n{excerpt}",
            cc.join(" "),
            keep_c.display(),
            log_path.display()
        );
        // A compiler the user chose may not be a C11 compiler at all; the default one
        // failing on our code is our bug.
        return Err(if chosen_by_user() {
            Error::Backend(format!("{message}\n(the compiler is `$HALOGEN_CC`: check that it names a C11 compiler)"))
        } else {
            Error::internal(PASS, message)
        });
    }
    if !tmp_so.is_file() {
        return Err(Error::Backend(format!(
            "the C compiler `{}` reported success but wrote no library at {}{}",
            cc.join(" "),
            tmp_so.display(),
            if chosen_by_user() { " (the compiler is `$HALOGEN_CC`: check that it names a C compiler)" } else { "" }
        )));
    }
    // The checksum goes in first: a library is never in place without the record that
    // vouches for it (a reader that meets another build's pair mid-way rebuilds).
    let bytes = std::fs::read(&tmp_so).map_err(|e| io_error("read the compiled library", &tmp_so, e))?;
    let sum = checksum_path(&so);
    let tmp_sum = dir.join(format!("{key}.{tag}.sum.tmp"));
    std::fs::write(&tmp_sum, checksum_record(&bytes)).map_err(|e| io_error("write the checksum", &tmp_sum, e))?;
    std::fs::rename(&tmp_sum, &sum).map_err(|e| io_error("write the checksum", &sum, e))?;
    std::fs::rename(&tmp_so, &so).map_err(|e| io_error("move the compiled library to", &so, e))?;
    Ok(so)
}

/// The flags for compiling to an object file (or a precompiled header): all but
/// `-shared`, which only linking takes.
fn object_flags(flags: &[String]) -> Vec<&String> {
    flags.iter().filter(|f| *f != "-shared").collect()
}

/// The precompiled system headers ([`crate::backend::c::prelude::SYSTEM_HEADERS`]) for
/// `cc` (of version `version`) with `flags`, built into `dir` the first time they are
/// asked for and reused by every later compile, in this process and others: parsing
/// those headers is a fixed cost of about 0.3 s per compiled file, a third of a small
/// pipeline's first compile. Only Clang's precompiled headers are used (GCC's are looked
/// for by a header's name, beside it, which generated files do not name); `None` for
/// other compilers, for sanitizer builds, and where precompiling fails, and then each
/// compile parses the headers itself as before.
fn precompiled_headers(cc: &[String], version: &str, flags: &[String], dir: &Path) -> Option<PathBuf> {
    if !version.contains("clang version") || sanitize_enabled() {
        return None;
    }
    let flags = object_flags(flags);
    let flags_text = flags.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(" ");
    let key = digest(&[SYSTEM_HEADERS, &cc.join(" "), version, &flags_text, machine()]);
    // Held while building: the other threads' compiles wait for the headers, not redo them.
    let mut known = PRECOMPILED.get_or_init(|| Mutex::new(HashMap::new())).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = known.get(&key) {
        return found.clone();
    }
    let pch = dir.join(format!("system-headers-{key}.pch"));
    let made = if std::fs::metadata(&pch).is_ok_and(|m| m.len() > 0) {
        Some(pch)
    } else {
        // Through temporary files and a rename, like the libraries: a concurrent compile
        // sees a whole file or none. The header stays: the compiler checks that what it
        // precompiled is unchanged, so it is written only where it is missing.
        let tag = format!("{}.{}", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed));
        let header = dir.join(format!("system-headers-{key}.h"));
        let tmp_header = dir.join(format!("system-headers-{key}.{tag}.h.tmp"));
        let tmp = dir.join(format!("system-headers-{key}.{tag}.pch.tmp"));
        let have_header = std::fs::read_to_string(&header).is_ok_and(|h| h == SYSTEM_HEADERS)
            || (std::fs::write(&tmp_header, SYSTEM_HEADERS).is_ok() && std::fs::rename(&tmp_header, &header).is_ok());
        let built = have_header && {
            let mut cmd = Command::new(&cc[0]);
            cmd.args(&cc[1..]).args(&flags).arg("-x").arg("c-header").arg(&header).arg("-o").arg(&tmp);
            cmd.output().is_ok_and(|o| o.status.success())
        };
        let _ = std::fs::remove_file(&tmp_header);
        if built && std::fs::rename(&tmp, &pch).is_ok() {
            Some(pch)
        } else {
            let _ = std::fs::remove_file(&tmp);
            None
        }
    };
    known.insert(key, made.clone());
    made
}

/// Builds the precompiled system headers that compiles for `target` read, or finds them
/// in the cache folder: a cost of about 0.35 s once per machine, compiler and flags,
/// which the first compile pays otherwise. `Ok(false)` where none are used (a compiler
/// other than Clang, a sanitizer build) or they cannot be built. A benchmark of first
/// compiles into an empty cache calls it before timing, since a machine that has
/// compiled any pipeline before has them.
///
/// ```no_run
/// let ready = halogen::backend::jit::precompile_system_headers(&halogen::Target::host()).unwrap();
/// println!("precompiled system headers: {ready}");
/// ```
pub fn precompile_system_headers(target: &Target) -> Result<bool> {
    let cc = compiler();
    let version = compiler_version(&cc)?;
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| io_error("create the cache folder", &dir, e))?;
    Ok(precompiled_headers(&cc, &version, &flags_for(target.fast_math()), &dir).is_some())
}

/// Removes precompiled headers the compiler refused, so that the next compile that asks
/// builds them again.
fn forget_precompiled_headers(pch: &Path) {
    let _ = std::fs::remove_file(pch);
    if let Some(known) = PRECOMPILED.get() {
        known.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, v| v.as_deref() != Some(pch));
    }
}

/// The compiler arguments that read the precompiled headers `pch`, if any.
fn include_pch(pch: Option<&Path>) -> Vec<std::ffi::OsString> {
    pch.map(|p| vec!["-include-pch".into(), p.as_os_str().to_owned()]).unwrap_or_default()
}

/// Loads the compiled library at `path` and finds its entry point `entry`.
fn open_library(path: &Path, entry: &str) -> Result<(Library, EntryPoint)> {
    // SAFETY: the library is one we compiled from generated C (and checked whole); its
    // initializers are the C runtime's own.
    let library = unsafe { Library::new(path) }
        .map_err(|e| Error::Backend(format!("cannot load the compiled pipeline {}: {e}", path.display())))?;
    // SAFETY: the generated entry point has exactly the EntryPoint signature.
    let entry_fn: EntryPoint = unsafe {
        *library.get::<EntryPoint>(entry.as_bytes()).map_err(|e| {
            Error::internal(PASS, format!("the compiled pipeline {} has no entry point '{entry}': {e}", path.display()))
        })?
    };
    Ok((library, entry_fn))
}

/// A failed compiler run: its status, the log to keep (command line and output) and its
/// standard error.
type Failure = (std::process::ExitStatus, String, String);

/// Runs one compiler command; `Ok(Some(..))` if it ran and failed.
fn run_compiler(mut cmd: Command, cc: &[String]) -> Result<Option<Failure>> {
    let line = format!("$ {cmd:?}\n");
    let out = cmd.output().map_err(|e| no_compiler(cc, e))?;
    if out.status.success() {
        return Ok(None);
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let log = format!("{line}{}{stderr}", String::from_utf8_lossy(&out.stdout));
    Ok(Some((out.status, log, stderr)))
}

/// Compiles each unit to an object file, `cores` at a time, and links them into `so`.
/// The units are written beside the library as `<stem>.unitN.c` and removed once linked
/// (the whole file, `<key>.c`, is the one kept for reading).
#[allow(clippy::too_many_arguments)]
fn build_units(
    units: &[String],
    cc: &[String],
    flags: &[String],
    pch: Option<&Path>,
    dir: &Path,
    stem: &str,
    so: &Path,
    cores: usize,
) -> Result<Option<Failure>> {
    let compile_flags = object_flags(flags);
    let paths: Vec<(PathBuf, PathBuf)> = (0..units.len())
        .map(|i| (dir.join(format!("{stem}.unit{i}.c")), dir.join(format!("{stem}.unit{i}.o"))))
        .collect();
    let cleanup = || {
        for (c, o) in &paths {
            let _ = std::fs::remove_file(c);
            let _ = std::fs::remove_file(o);
        }
    };
    let result = (|| {
        for ((c, _), text) in paths.iter().zip(units) {
            std::fs::write(c, text).map_err(|e| io_error("write the generated C to", c, e))?;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let failures: Vec<Result<Option<Failure>>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..cores.min(paths.len()))
                .map(|_| {
                    s.spawn(|| {
                        let mut out = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some((c, o)) = paths.get(i) else { break };
                            let mut cmd = Command::new(&cc[0]);
                            cmd.args(&cc[1..]).args(&compile_flags).args(include_pch(pch));
                            cmd.arg("-c").arg("-o").arg(o).arg(c);
                            out.push(run_compiler(cmd, cc));
                        }
                        out
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| {
                    w.join().unwrap_or_else(|_| vec![Err(Error::internal(PASS, "a compiler thread panicked"))])
                })
                .collect()
        });
        for f in failures {
            if let Some(failure) = f? {
                return Ok(Some(failure));
            }
        }
        let mut link = Command::new(&cc[0]);
        link.args(&cc[1..]).args(flags).arg("-o").arg(so);
        link.args(paths.iter().map(|(_, o)| o)).arg("-lm");
        run_compiler(link, cc)
    })();
    // A failed unit stays for reading (the log names it).
    if matches!(result, Ok(None)) {
        cleanup();
    }
    result
}

/// Where the size and SHA-256 of a cached library are kept: `<key>.so.sum`.
fn checksum_path(so: &Path) -> PathBuf {
    let mut name = so.as_os_str().to_owned();
    name.push(".sum");
    PathBuf::from(name)
}

/// The checksum record of a library: its size in bytes and SHA-256, on one line.
fn checksum_record(bytes: &[u8]) -> String {
    let digest: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
    format!("{} {digest}\n", bytes.len())
}

/// Whether the cached library `so` is whole: its checksum record exists and matches its
/// size and contents. A truncated library would crash the process when loaded (the loader
/// maps pages the file no longer has), and a damaged one would fail on every run; either is
/// rebuilt instead.
fn cached_library_is_intact(so: &Path) -> bool {
    let Ok(record) = std::fs::read_to_string(checksum_path(so)) else { return false };
    let Some(size) = record.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()) else { return false };
    // The size first: a truncated file is caught without reading it.
    if std::fs::metadata(so).map(|m| m.len()).ok() != Some(size) {
        return false;
    }
    std::fs::read(so).is_ok_and(|bytes| checksum_record(&bytes) == record)
}

/// A pipeline compiled to native code and loaded: reusable, and safe to call from several
/// threads at once.
///
/// ```
/// use halogen::prelude::*;
/// use halogen::backend::jit::JitModule;
/// let x = Var::new("x");
/// let f = Func::new("f");
/// f.def(x, x * x);
/// let lowered = halogen::lower::lower(&[f.func_ref().clone()], &halogen::Target::host()).unwrap();
/// let m = JitModule::compile(&lowered).unwrap();
/// assert!(m.source().contains("halogen_pipeline"));
/// ```
pub struct JitModule {
    module: CModule,
    entry: EntryPoint,
    path: PathBuf,
    // Keeps the code `entry` points into loaded.
    _library: Library,
}

impl std::fmt::Debug for JitModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitModule").field("path", &self.path).field("buffers", &self.module.buffers).finish()
    }
}

impl JitModule {
    /// Prints the lowered pipeline as C, compiles it (or finds it in the cache) and loads it.
    pub fn compile(lowered: &Lowered) -> Result<JitModule> {
        JitModule::compile_for(lowered, &Target::host())
    }

    /// [`JitModule::compile`] for `target`'s machine, allowing fused multiply-adds where its
    /// `fast_math` feature says so.
    pub fn compile_for(lowered: &Lowered, target: &Target) -> Result<JitModule> {
        JitModule::load_with(c::generate(lowered, ENTRY, target)?, target.fast_math())
    }

    /// Compiles (or finds in the cache) and loads printed C whose entry point is `module.entry`.
    pub fn load(module: CModule) -> Result<JitModule> {
        JitModule::load_with(module, false)
    }

    /// [`JitModule::load`], allowing fused multiply-adds where `fast_math` says so.
    pub fn load_with(module: CModule, fast_math: bool) -> Result<JitModule> {
        let cc = compiler();
        let version = compiler_version(&cc)?;
        let flags = flags_for(fast_math);
        let key = cache_key(&module.source, &cc, &version, &flags);
        let dir = cache_dir();
        std::fs::create_dir_all(&dir).map_err(|e| io_error("create the cache folder", &dir, e))?;
        let so = dir.join(format!("{key}.so"));
        // One build per key at a time in this process; other processes are safe through
        // the temporary file and rename.
        let lock = {
            let builds = BUILDS.get_or_init(|| Mutex::new(HashMap::new()));
            let mut b = builds.lock().unwrap_or_else(|p| p.into_inner());
            b.entry(key.clone()).or_default().clone()
        };
        let path = {
            let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
            if cached_library_is_intact(&so) {
                so
            } else {
                build(&module.source, &module.units, &cc, &version, &flags, &dir, &key)?
            }
        };
        let (library, entry) = open_library(&path, &module.entry)?;
        if debug_c() {
            eprintln!("=== generated C ({}) ===\n{}", path.display(), module.source);
        }
        Ok(JitModule { module, entry, path, _library: library })
    }

    /// Records this module under `fingerprint` (best effort: a cache that cannot be written
    /// only costs the next compile its lowering), for [`JitModule::recall`].
    pub fn remember(&self, fingerprint: &str, target: &Target) {
        let Some(key) = self.path.file_stem().and_then(|k| k.to_str()) else { return };
        let mut record = format!("{RECORD_HEADER}\nlibrary\t{key}\nentry\t{}\n", self.module.entry);
        for b in &self.module.buffers {
            record.push_str(&format!("buffer\t{}\t{}\t{}\t{}\n", b.name, b.elem, b.dims, b.is_output as u8));
        }
        for p in &self.module.params {
            record.push_str(&format!("param\t{}\t{}\n", p.name, p.ty));
        }
        // A name with a tab or a line break in it cannot be read back: not remembered.
        let names = std::iter::once(self.module.entry.as_str())
            .chain(self.module.buffers.iter().map(|b| &*b.name))
            .chain(self.module.params.iter().map(|p| &*p.name));
        if names.into_iter().any(|n| n.contains(['\t', '\n', '\r'])) {
            return;
        }
        let path = cache_dir().join(format!("{}.pre", recall_key(fingerprint, target)));
        let tmp =
            path.with_extension(format!("{}.{}.tmp", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        if std::fs::write(&tmp, record).is_ok() && std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// The module an earlier [`JitModule::remember`] recorded under `fingerprint` for this
    /// target, loaded from the cache, if its record, library (checked whole) and source are
    /// all there.
    pub fn recall(fingerprint: &str, target: &Target) -> Option<JitModule> {
        let dir = cache_dir();
        let record = std::fs::read_to_string(dir.join(format!("{}.pre", recall_key(fingerprint, target)))).ok()?;
        let mut lines = record.lines();
        if lines.next()? != RECORD_HEADER {
            return None;
        }
        let (mut key, mut entry) = (None, None);
        let (mut buffers, mut params) = (Vec::new(), Vec::new());
        for line in lines {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["library", k] => key = Some(k.to_string()),
                ["entry", e] => entry = Some(e.to_string()),
                ["buffer", name, ty, dims, out] => buffers.push(c::BufferArg {
                    name: Name::from(*name),
                    elem: parse_type(ty)?,
                    dims: dims.parse().ok()?,
                    is_output: *out == "1",
                }),
                ["param", name, ty] => params.push(c::ParamArg { name: Name::from(*name), ty: parse_type(ty)? }),
                _ => return None,
            }
        }
        let (key, entry) = (key?, entry?);
        let so = dir.join(format!("{key}.so"));
        if !cached_library_is_intact(&so) {
            return None;
        }
        let source = std::fs::read_to_string(dir.join(format!("{key}.c"))).ok()?;
        let (library, entry_fn) = open_library(&so, &entry).ok()?;
        let module = CModule { source, units: Vec::new(), kernel_source: None, entry, buffers, params };
        Some(JitModule { module, entry: entry_fn, path: so, _library: library })
    }

    /// The generated C source.
    pub fn source(&self) -> &str {
        &self.module.source
    }

    /// The loaded library's path in the cache.
    pub fn library_path(&self) -> &Path {
        &self.path
    }

    /// The printed module: entry point name, buffer and parameter order.
    pub fn module(&self) -> &CModule {
        &self.module
    }

    /// Runs the pipeline into its output buffers (`outputs`, by storage name: a Func's
    /// name, or `f.0`, `f.1`, … for a tuple's values), with input images and scalar
    /// parameters bound by name.
    pub fn run(
        &self,
        images: &BTreeMap<Name, RawBuffer<'_>>,
        params: &BTreeMap<Name, Expr>,
        outputs: Vec<(Name, RawBufferMut<'_>)>,
    ) -> Result<()> {
        self.run_on_rank(images, params, outputs, None)
    }

    /// [`JitModule::run`] as one rank of a distributed run: the pipeline's border
    /// exchanges go through `communicator`.
    pub fn run_on_rank(
        &self,
        images: &BTreeMap<Name, RawBuffer<'_>>,
        params: &BTreeMap<Name, Expr>,
        outputs: Vec<(Name, RawBufferMut<'_>)>,
        communicator: Option<std::sync::Arc<dyn crate::runtime::distributed::Communicator>>,
    ) -> Result<()> {
        let mut bindings: Vec<BufferBinding<'_>> = Vec::with_capacity(self.module.buffers.len());
        let mut outputs: BTreeMap<Name, RawBufferMut<'_>> = outputs.into_iter().collect();
        for b in &self.module.buffers {
            if b.is_output {
                let Some(o) = outputs.remove(&b.name) else {
                    return Err(Error::Argument(format!("no output buffer given for '{}'", b.name)));
                };
                bindings.push(BufferBinding::output(&b.name, b.elem, b.dims, o));
            } else {
                let Some(r) = images.get(&b.name) else {
                    return Err(Error::Argument(format!(
                        "no buffer given for ImageParam '{0}'; bind it with args.image(&{0}, &buffer)",
                        b.name
                    )));
                };
                bindings.push(BufferBinding::input(&b.name, b.elem, b.dims, r.clone()));
            }
        }
        if let Some(extra) = outputs.keys().next() {
            return Err(Error::Argument(format!("the compiled pipeline writes no buffer '{extra}'")));
        }
        let mut scalars = Vec::with_capacity(self.module.params.len());
        for p in &self.module.params {
            let v = params.get(&p.name).ok_or_else(|| {
                Error::Argument(format!("no value given for Param '{0}'; bind it with args.param(&{0}, value)", p.name))
            })?;
            let s = HalogenScalar::from_expr(v, p.ty).filter(|_| v.ty() == p.ty).ok_or_else(|| {
                Error::Argument(format!("Param '{}' has type {} but was given {v} of type {}", p.name, p.ty, v.ty()))
            })?;
            scalars.push(s);
        }
        // SAFETY: the bindings and scalars follow the module's buffer and parameter lists,
        // which `entry` was generated from; call_checked checks each buffer against them.
        unsafe { ffi::call_checked_with_communicator(self.entry, &bindings, &scalars, communicator) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_keys_depend_on_everything() {
        let cc = vec!["cc".to_string()];
        let f = vec!["-O3".to_string()];
        let k = cache_key("int x;", &cc, "v1", &f);
        assert_eq!(k.len(), 32);
        assert_eq!(k, cache_key("int x;", &cc, "v1", &f));
        assert_ne!(k, cache_key("int y;", &cc, "v1", &f));
        assert_ne!(k, cache_key("int x;", &cc, "v2", &f));
        assert_ne!(k, cache_key("int x;", &["gcc".to_string()], "v1", &f));
        assert_ne!(k, cache_key("int x;", &cc, "v1", &["-O1".to_string()]));
    }
}
