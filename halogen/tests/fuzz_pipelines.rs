//! A fuzzer: random pipelines under random schedules (often illegal), over random buffer
//! placements, with random API mistakes (`common/fuzz.rs` draws them). Every case runs on
//! every target under test and on the interpreter without its schedule, and must either
//! err on every target or compute the same bytes on every one (see `fuzz::judge`); nothing
//! may panic, and no run may crash.
//!
//! By default a fixed seed runs 48 cases. Environment:
//!
//! - `HALOGEN_FUZZ_SEED`: the seed (decimal or `0x` hex); case `k` is drawn from seed + k,
//!   so `HALOGEN_FUZZ_SEED=<seed + k> HALOGEN_FUZZ_CASES=1` runs case `k` alone.
//! - `HALOGEN_FUZZ_CASES`: the number of cases (unlimited when only a time is given).
//! - `HALOGEN_FUZZ_SECONDS`: stop starting cases after this many seconds.
//! - `HALOGEN_FUZZ_CASE_TIMEOUT`: seconds one run may take before it counts as stuck (120;
//!   300 under the sanitizers).
//! - `HALOGEN_FUZZ_SHRINK=0`: report findings as drawn, without shrinking them.
//! - `HALOGEN_FUZZ_VERBOSE=1`: print how each case ended on the interpreter.
//! - `HALOGEN_SANITIZE=1`: the host target's code is built with ASan and UBSan (see
//!   `c_backend_sanitize.rs`), so any out-of-bounds access or undefined behaviour aborts.
//!
//! ```sh
//! HALOGEN_SANITIZE=1 HALOGEN_FUZZ_SECONDS=1800 cargo test -p halogen --test fuzz_pipelines -- --nocapture
//! ```
//!
//! The cases run in a child process (this test run again, with the ASan runtime preloaded
//! when sanitizing), so that a crash or a stuck case is reported with its case and the
//! campaign goes on from the next one. The child's compiled pipelines go to a cache folder
//! of its own (`HALOGEN_CACHE_DIR`), emptied every 32 cases and removed at the end: every
//! random schedule is a new source, and the shared cache would grow without bound.

mod common;

use common::fuzz::{self, Case, Finding};
use common::targets_under_test;
use halogen::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const TEST_NAME: &str = "random_pipelines_err_or_match_the_interpreter";
const CHILD: &str = "HALOGEN_FUZZ_CHILD";
const DEFAULT_SEED: u64 = 0x4841_4c4f_4745_4e00;
const DEFAULT_CASES: u64 = 48;

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={v}: {e}")))
}

/// Straight to stderr: the child's and the summary's lines must show without `--nocapture`.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

#[test]
fn random_pipelines_err_or_match_the_interpreter() {
    if std::env::var_os(CHILD).is_some() {
        child();
    } else {
        parent();
    }
}

/// The files parent and child share, in a folder of their own.
struct Work(PathBuf);

impl Work {
    fn progress(&self) -> PathBuf {
        self.0.join("progress")
    }
    fn case(&self) -> PathBuf {
        self.0.join("case")
    }
    fn findings(&self) -> PathBuf {
        self.0.join("findings")
    }
    fn finished(&self) -> PathBuf {
        self.0.join("finished")
    }
    /// Lines `<outcome> <count>`: how the interpreter's runs ended in the child that
    /// started at case `start`.
    fn outcomes(&self, start: u64) -> PathBuf {
        self.0.join(format!("outcomes.{start}"))
    }
    fn cache(&self) -> PathBuf {
        self.0.join("cache")
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("open the findings file");
    f.write_all(text.as_bytes()).expect("write the findings file");
}

/// One finding as the findings file keeps it: a line with the kind, then the text.
fn record(work: &Work, f: &Finding, case: &str) {
    let text = format!("FINDING {}\n{}\n{case}END FINDING\n", f.kind, f.detail);
    say(&format!("=== fuzz finding: {}\n{}\n{case}", f.kind, f.detail));
    append(&work.findings(), &text);
}

fn sanitizing() -> bool {
    std::env::var("HALOGEN_SANITIZE").is_ok_and(|v| v.trim() == "1")
}

/// The C compiler's ASan runtime, preloaded into a child that loads sanitized libraries.
fn asan_runtime() -> String {
    let cc = halogen::backend::jit::compiler();
    let out =
        Command::new(&cc[0]).args(&cc[1..]).arg("-print-file-name=libasan.so").output().expect("run the C compiler");
    let asan = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(Path::new(&asan).is_file(), "the C compiler has no libasan.so (got '{asan}')");
    asan
}

fn parent() {
    let seed = env_u64("HALOGEN_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let seconds = env_u64("HALOGEN_FUZZ_SECONDS");
    let cases = env_u64("HALOGEN_FUZZ_CASES").unwrap_or(if seconds.is_some() { u64::MAX } else { DEFAULT_CASES });
    // GCC takes over a minute on some sanitized sources of a thousand lines.
    let default_timeout = if sanitizing() { 300 } else { 120 };
    let case_timeout = Duration::from_secs(env_u64("HALOGEN_FUZZ_CASE_TIMEOUT").unwrap_or(default_timeout));
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let work = Work(std::env::temp_dir().join(format!("halogen-fuzz-{}-{nanos}", std::process::id())));
    std::fs::create_dir_all(work.cache()).expect("create the fuzzer's folder");
    let started = Instant::now();
    let deadline = seconds.map(|s| SystemTime::now() + Duration::from_secs(s));
    let asan = sanitizing().then(asan_runtime);
    // Asked once: a rebuild during a long campaign replaces the file, and the running
    // binary's own path then names a deleted file.
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut next = 0u64;
    let mut executed = 0u64;
    while next < cases && deadline.is_none_or(|d| SystemTime::now() < d) {
        let _ = std::fs::remove_file(work.finished());
        let _ = std::fs::remove_file(work.progress());
        let mut cmd = Command::new(&exe);
        cmd.args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD, &work.0)
            .env("HALOGEN_FUZZ_SEED", seed.to_string())
            .env("HALOGEN_FUZZ_START", next.to_string())
            .env("HALOGEN_FUZZ_CASES", cases.to_string())
            .env("HALOGEN_CACHE_DIR", work.cache());
        if let Some(d) = deadline {
            cmd.env("HALOGEN_FUZZ_DEADLINE", d.duration_since(UNIX_EPOCH).unwrap().as_secs().to_string());
        }
        if let Some(asan) = &asan {
            // Huge allocations fail (as `Err`) instead of taking the machine's memory.
            cmd.env("LD_PRELOAD", asan)
                .env("ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=2048")
                .env("UBSAN_OPTIONS", "print_stacktrace=1");
        }
        let mut child = cmd.spawn().expect("start the fuzzing child");
        let (mut last, mut since) = (String::new(), Instant::now());
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for the child") {
                break Some(status);
            }
            let now = std::fs::read_to_string(work.progress()).unwrap_or_default();
            if now != last {
                (last, since) = (now, Instant::now());
            } else if since.elapsed() > case_timeout {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        if let Ok(end) = std::fs::read_to_string(work.finished()) {
            let end: u64 = end.trim().parse().expect("the child's last case");
            executed += end - next;
            next = end;
            continue;
        }
        // The child died in a case, or was stopped there: that case is a finding.
        let at: u64 = last.split_whitespace().next().and_then(|k| k.parse().ok()).unwrap_or(next);
        let case = std::fs::read_to_string(work.case()).unwrap_or_default();
        let (kind, detail) = match status {
            Some(s) => ("crash", format!("the process died ({s}) in `{}`; its report is above", last.trim())),
            None => ("stuck", format!("`{}` ran for more than {case_timeout:?}", last.trim())),
        };
        record(&work, &Finding { kind: kind.into(), detail }, &case);
        executed += at + 1 - next;
        next = at + 1;
    }
    let mut outcomes = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(&work.0).expect("read the fuzzer's folder").flatten() {
        if !entry.file_name().to_string_lossy().starts_with("outcomes.") {
            continue;
        }
        for line in std::fs::read_to_string(entry.path()).unwrap_or_default().lines() {
            if let Some((class, n)) = line.rsplit_once(' ') {
                *outcomes.entry(class.to_string()).or_insert(0u64) += n.parse::<u64>().unwrap_or(0);
            }
        }
    }
    let findings = std::fs::read_to_string(work.findings()).unwrap_or_default();
    let kinds: Vec<&str> = findings.lines().filter_map(|l| l.strip_prefix("FINDING ")).collect();
    say(&format!(
        "fuzz_pipelines: {executed} cases executed in {:.0} s (seed {seed:#x}, cases 0..{next}{}), {} findings{}",
        started.elapsed().as_secs_f64(),
        if sanitizing() { ", under ASan and UBSan" } else { "" },
        kinds.len(),
        if kinds.is_empty() { String::new() } else { format!(": {kinds:?}") }
    ));
    say(&format!(
        "fuzz_pipelines: how the cases ended on the interpreter (crashed and stuck ones aside): {outcomes:?}"
    ));
    assert!(kinds.is_empty(), "the fuzzer found {} problems (see above):\n{findings}", kinds.len());
}

fn child() {
    let work = Work(PathBuf::from(std::env::var_os(CHILD).unwrap()));
    let work = std::mem::ManuallyDrop::new(work); // the parent owns the folder
    let seed = env_u64("HALOGEN_FUZZ_SEED").unwrap();
    let start = env_u64("HALOGEN_FUZZ_START").unwrap();
    let cases = env_u64("HALOGEN_FUZZ_CASES").unwrap();
    let deadline = env_u64("HALOGEN_FUZZ_DEADLINE").map(|s| UNIX_EPOCH + Duration::from_secs(s));
    let shrink = std::env::var("HALOGEN_FUZZ_SHRINK").map_or(true, |v| v.trim() != "0");
    let verbose = std::env::var("HALOGEN_FUZZ_VERBOSE").is_ok_and(|v| v.trim() == "1");
    if !sanitizing() {
        limit_memory();
    }
    let targets = targets_under_test();
    let started = Instant::now();
    let mut outcomes = std::collections::BTreeMap::new();
    let mut k = start;
    while k < cases && deadline.is_none_or(|d| SystemTime::now() < d) {
        let case_seed = seed.wrapping_add(k);
        let runs = std::cell::Cell::new(0u64);
        let note = |what: &str| {
            runs.set(runs.get() + 1);
            std::fs::write(work.progress(), format!("{k} case {case_seed:#x}: {what} (run {})\n", runs.get()))
                .expect("write the progress file");
        };
        note("draw");
        let case = match std::panic::catch_unwind(|| fuzz::draw(case_seed)) {
            Ok(case) => case,
            Err(p) => {
                let f =
                    Finding { kind: "panic".into(), detail: format!("drawing panicked: {}", fuzz::panic_message(p)) };
                record(&work, &f, &format!("seed {case_seed:#x}\n"));
                k += 1;
                continue;
            }
        };
        std::fs::write(work.case(), case.to_string()).expect("write the case file");
        let (found, oracle) = fuzz::check(&case, &targets, &note);
        *outcomes.entry(fuzz::outcome_class(&oracle)).or_insert(0u64) += 1;
        if verbose {
            let what = match &oracle {
                Ok(Ok(_)) => "ok".to_string(),
                Ok(Err(e)) => e.to_string(),
                Err(p) => format!("panic: {p}"),
            };
            say(&format!("case {k} ({case_seed:#x}): {}", what.lines().next().unwrap_or_default()));
        }
        if let Some(f) = found {
            let (f, text) = if shrink {
                let small = fuzz::shrink(&case, &f.kind, 40, |c| {
                    std::fs::write(work.case(), format!("(shrinking)\n{c}")).expect("write the case file");
                    fuzz::check(c, &targets, &|w| note(&format!("shrinking: {w}"))).0
                });
                let f = fuzz::check(&small, &targets, &note).0.unwrap_or(f);
                (
                    f,
                    format!(
                        "{small}(shrunk from case {case_seed:#x}, which had {} directives)\n",
                        case.directives.len()
                    ),
                )
            } else {
                (f, case.to_string())
            };
            record(&work, &f, &text);
        }
        // Each child keeps its own counts, whole after every case (it may die in the next).
        let stats: String = outcomes.iter().map(|(c, n)| format!("{c} {n}\n")).collect();
        std::fs::write(work.outcomes(start), stats).expect("write the outcomes file");
        k += 1;
        if (k - start).is_multiple_of(32) {
            empty_cache(&work.cache());
        }
        if (k - start).is_multiple_of(100) {
            say(&format!("fuzz_pipelines: case {k}, {:.0} s", started.elapsed().as_secs_f64()));
        }
    }
    std::fs::write(work.finished(), k.to_string()).expect("write the end file");
}

/// Removes the compiled pipelines of earlier cases (loaded ones stay mapped).
fn empty_cache(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Caps the child's address space, so that a schedule asking for gigabytes gets an `Err`
/// instead of the machine's memory (ASan has its own cap: its shadow needs the space).
fn limit_memory() {
    let limit = libc::rlimit { rlim_cur: 3 << 30, rlim_max: 3 << 30 };
    // SAFETY: setrlimit reads the struct it is given; nothing else is touched.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &limit);
    }
}

/// Case `k` of the default seed drawn twice is the same case.
#[test]
fn cases_are_reproducible() {
    for k in 0..4 {
        let (a, b): (Case, Case) = (fuzz::draw(DEFAULT_SEED + k), fuzz::draw(DEFAULT_SEED + k));
        assert_eq!(a.to_string(), b.to_string());
    }
}

/// The judge's rules on made-up outcomes.
#[test]
fn the_judge_flags_what_it_should() {
    let (i, h) = (Target::interp(), Target::host());
    let ok = |b: &[u8]| Ok(Ok(b.to_vec()));
    let err = |e: Error| Ok(Err(e));
    let judge = |a, b, r| fuzz::judge(&[(i.clone(), a), (h.clone(), b)], &r).map(|f| f.kind);
    assert_eq!(judge(ok(&[1]), ok(&[1]), ok(&[1])), None);
    let small = || Error::Runtime("input is too small".into());
    assert_eq!(judge(err(small()), err(small()), err(small())), None);
    assert_eq!(judge(ok(&[1]), ok(&[2]), ok(&[1])).as_deref(), Some("pixels differ"));
    assert_eq!(judge(ok(&[1]), err(small()), ok(&[1])).as_deref(), Some("one target errs"));
    assert_eq!(judge(ok(&[1]), ok(&[1]), ok(&[2])).as_deref(), Some("schedule changes pixels"));
    assert_eq!(judge(ok(&[1]), ok(&[1]), err(small())), None);
    assert_eq!(judge(ok(&[1]), Err("boom".into()), ok(&[1])).as_deref(), Some("panic"));
    let oob = Error::Runtime("load from buffer 'f' at index 9 is out of bounds: the buffer has 4 elements".into());
    assert_eq!(judge(err(oob), err(small()), ok(&[1])).as_deref(), Some("interpreter out of bounds"));
    let internal = Error::internal("pass", "bug");
    assert_eq!(judge(err(internal.clone()), err(internal), ok(&[1])).as_deref(), Some("internal error"));
    assert_eq!(judge(err(small()), err(Error::Buffer("x".into())), ok(&[1])).as_deref(), Some("different errors"));
}

// ----- Findings of the fuzzer, each reduced to its smallest form. -----

/// `unroll_full` of a split's inner loop, split by 2^30: the unroll pass made 2^30 copies
/// of the body, and the failed allocation aborted the process. It is an `Err` now.
#[test]
fn a_huge_unrolled_loop_is_an_error() {
    let (x, xo, xi) = (Var::new("x"), Var::new("xo"), Var::new("xi"));
    let f = Func::new("huge_unroll");
    f.def(x, x * 2);
    f.split(x, xo, xi, 1 << 30).unroll_full(xi);
    for target in targets_under_test() {
        let e = Pipeline::new(&[&f]).compile(&target).unwrap_err().to_string();
        assert!(e.contains("has 1073741824 iterations, over 256"), "{target}: {e}");
    }
}

/// On an empty output (extent 0), any split, fuse or vectorize of its loops made the check
/// of the region it writes claim a pixel or two, so the run erred ("the pipeline writes
/// [-1, -1] but the buffer covers [0, -1]"), while the unscheduled pipeline computed the
/// empty output. A pipeline whose outputs are all empty now computes nothing.
#[test]
fn a_split_output_of_extent_zero_computes_nothing() {
    let (x, y, t) = (Var::new("x"), Var::new("y"), Var::new("t"));
    for schedule in 0..2 {
        let f = Func::new("empty_out");
        f.def((x, y), x + y);
        if schedule == 0 {
            f.vectorize(x, 4);
        } else {
            f.fuse(x, y, t);
        }
        for target in targets_under_test() {
            let c = Pipeline::new(&[&f]).compile(&target).unwrap();
            let mut out = Buffer::<i32>::new(&[0, 4]);
            c.realize(&Args::new(), &mut out).unwrap_or_else(|e| panic!("schedule {schedule} on {target}: {e}"));
        }
    }
}

/// A vectorized loop (a ShiftInwards split) whose vector loop is split again with RoundUp,
/// in a Func that is not an output: the fast version of the vector loop dropped the clamp
/// of the first split, which the rounded-up loop passes, so lanes ran past the region and
/// read and wrote past the end of two buffers (caught by the interpreter and by ASan).
#[test]
fn a_rounded_up_vector_loop_keeps_its_clamp() {
    let (x, y, xv, xi) = (Var::new("x"), Var::new("y"), Var::new("x_vi"), Var::new("xi"));
    let g = Func::new("rv_producer");
    g.def((x, y), x + y);
    let f = Func::new("rv_rounded");
    f.def((x, y), g.at((x, y)) * 2);
    let h = Func::new("rv_out");
    h.def((x, y), f.at((x, y)));
    f.vectorize(x, 15).split_with(xv, xv, xi, 9, TailStrategy::RoundUp).compute_root();
    g.compute_at(&f, x);
    for target in targets_under_test() {
        let mut out = Buffer::<i32>::new(&[24, 2]);
        Pipeline::new(&[&h]).compile(&target).unwrap().realize(&Args::new(), &mut out).unwrap();
        let expected: Vec<i32> = out.coords().map(|c| 2 * (c[0] + c[1])).collect();
        common::assert_pixels(&out, &expected, &target);
    }
}

/// An index expression that passes `i32::MAX` (`2y + 2` for an output row near 2^30,
/// inside the coordinate limit) made the region inferred for a producer computed at root
/// wrap, and the host read outside that producer's buffer. The producer's region is now
/// checked in 64 bits against the coordinate limit before anything runs, and so are the
/// coordinates of the same call when the producer is computed inline.
#[test]
fn a_producer_region_past_i32_max_is_refused() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new(Type::i32(), 2, "wrap_in");
    let img = Buffer::<i32>::from_fn(&[2, 8], |c| c[0] + 10 * c[1]);
    let run = |target: &Target, scheduled: bool| {
        let clamped = halogen::boundary::repeat_edge(&input, &input.bounds());
        let out = Func::new("wrap_out");
        out.def((x, y), clamped.at((x, y * 2 + 2)));
        if scheduled {
            clamped.compute_root();
        }
        let mut buf = Buffer::<i32>::with_min(&[0, (1 << 30) - 2], &[2, 2]);
        let mut args = Args::new();
        args.image(&input, &img);
        Pipeline::new(&[&out]).compile(target).and_then(|c| c.realize(&args, &mut buf)).map(|_| buf.into_vec())
    };
    for target in targets_under_test() {
        for scheduled in [false, true] {
            let e = run(&target, scheduled).unwrap_err().to_string();
            assert!(e.contains("is needed in dimension 1 over [2147483646, 2147483648]"), "{target}: {e}");
        }
    }
}

/// A fused loop whose iteration count passes `i32::MAX` (32 columns by 2^30 rows): the
/// count wrapped, and so did the region inferred from the fused variable, which gave a
/// tiny buffer that the loops then ran past (a crash on the host). It is an `Err` now.
#[test]
fn a_fused_loop_of_more_than_2_to_the_31_iterations_is_an_error() {
    let (x, y, t) = (Var::new("x"), Var::new("y"), Var::new("t"));
    let f = Func::new("fuse_tall");
    f.def((x, y), x + y);
    let out = Func::new("fuse_tall_out");
    out.def((x, y), f.at((x, y)) + f.at((x, 0)));
    f.fuse(x, y, t).compute_root();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&out]).compile(&target).unwrap();
        let mut buf = Buffer::<i32>::with_min(&[0, (1 << 30) - 4], &[32, 4]);
        let e = c.realize(&Args::new(), &mut buf).unwrap_err().to_string();
        assert!(e.contains("more than a 32-bit loop counts"), "{target}: {e}");
    }
}

/// Found by a campaign (seed 0x5eed3681): an inlined call's coordinate (`f(x, 2y)` for an
/// output row at -2^30) lay outside the coordinate limit although the region of every
/// realized Func and buffer lay inside it. Only realized regions were checked, and the
/// simplifier, which assumes that coordinate arithmetic does not overflow, rewrote the
/// input's clamp `clamp(2y, lo, hi) - lo` as `max(min(2y, hi) - lo, 0)`, whose
/// subtraction wrapped: the interpreter reported a load out of bounds, the host read far
/// outside the input. The calls of Funcs computed inline are now checked too.
#[test]
fn an_inlined_coordinate_past_the_limit_is_refused() {
    use common::random_pipeline::{build_with, InputBoundary, StageKind};
    let stages = [
        StageKind::Pointwise { src: 0, src2: 0, a: 0, c: 3 },
        StageKind::Down { src: 1, along_y: true },
        StageKind::Lut { src: 2 },
    ];
    for target in targets_under_test() {
        let b = build_with(&stages, InputBoundary::RepeatEdge);
        b.funcs[2].compute_root();
        let out_f = b.funcs.last().unwrap();
        let compiled = Pipeline::new(&[out_f]).compile(&target).unwrap();
        let img = Buffer::<i32>::with_min(&[-6, 54615], &[8, 33]);
        let mut out = Buffer::<i32>::with_min(&[1_073_741_796, -1_073_741_824], &[7, 48]);
        let mut args = Args::new();
        args.image(&b.input, &img);
        let e = compiled.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("outside the coordinates"), "{target}: {e}");
    }
}
