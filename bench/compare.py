#!/usr/bin/env python3
"""Halogen against real Halide, OpenCV and NumPy, measured in one sitting.

For each app asked for, on the same inputs (same values, sizes and types):
  Halide    the hand schedule (and any extra hand schedules of the app), and with --auto the
            auto-schedulers shipped with PyPI `halide`: Mullapudi2016, Adams2019 greedy
            (beam 1), Li2018 (and the full Adams2019 beam search with --adams-full)
  OpenCV    the app's nearest OpenCV equivalent, where there is one
  NumPy     a vectorised NumPy version, where there is one (the check reference)
  Halogen   `halogen bench` under the app's hand schedule(s) and `auto`
then prints per-app min/median times and the ratios Halogen/Halide-hand,
Halogen-auto/best-Halide-auto and Halogen/OpenCV (on min times), Halogen's JIT times (first
compile into an empty cache, and a second, cached one) next to Halide's, and how Halogen's
output agrees with Halide's hand-scheduled output.

The six apps of shared/anchors/halide_bench.py (blur, unsharp, harris, bilateral_grid,
hist_eq, local_laplacian) come from that file, whose classes, timing function and options
are reused as they are; the others from bench/ports/*.py, classes written to the same
protocol (see bench/README.md).  Both sides follow halide_bench.py's timing rules: a warm-up,
then at least --runs timed calls (up to 50 for fast variants, --slow-runs for slow ones).

Usage:
  python bench/compare.py                                   # every app with a Halide counterpart
  python bench/compare.py --apps blur,harris --auto --md r.md --json r.json
  python bench/compare.py --scale 0.05 --runs 2 --apps blur,sobel   # quick smoke test
  python bench/compare.py --list                            # the apps and where they come from
"""
import argparse
import glob
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

# Importing halide_bench.py and the ports must not leave __pycache__ folders behind (the
# anchors' folder may be read-only; the ports' is in the source tree).
sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PORTS = os.path.join(HERE, "ports")
AUTO_DEFAULT = ["Mullapudi2016", "Adams2019_greedy", "Li2018"]
# The dtypes `halogen bench --input` reads (halogen-apps/src/npy.rs).
NPY_DTYPES = {"uint8", "uint16", "int32", "float32"}
# Float apps whose outputs may differ by more than 1e-4 relative in a few samples even
# between two Halide schedules: (largest fraction of samples over 1e-4, largest relative
# difference). Local Laplacian: a 1-ulp change of gray flips int(gray * (K-1) * 256), one
# remap-LUT step (shared/anchors/fixtures/MANIFEST.json). A port may set `loose_tolerance`.
LOOSE = {"local_laplacian": (1e-3, 4e-3)}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", default="",
                    help="comma-separated apps (default: every app that has a Halide counterpart)")
    ap.add_argument("--auto", action="store_true",
                    help="also run Halide's auto-schedulers (" + ", ".join(AUTO_DEFAULT) + ")")
    ap.add_argument("--adams-full", action="store_true",
                    help="with --auto, also Adams2019 with its full beam search (minutes per app)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="scale image sides as halide_bench.py --scale does (for quick tests)")
    ap.add_argument("--runs", type=int, default=10, help="minimum timed runs per variant (default: %(default)s)")
    ap.add_argument("--slow-s", type=float, default=2.5,
                    help="a variant whose warm-up takes longer gets only --slow-runs runs (default: %(default)s)")
    ap.add_argument("--slow-runs", type=int, default=3, help="(default: %(default)s)")
    ap.add_argument("--threads", type=int, default=0,
                    help="threads for Halide, OpenCV and Halogen (0: each library's default, all cores)")
    ap.add_argument("--ll-levels", type=int, default=4,
                    help="local Laplacian intensity levels K (default: %(default)s)")
    default_anchors = os.environ.get("HALOGEN_ANCHORS", os.path.join(REPO, "..", "shared", "anchors"))
    ap.add_argument("--anchors", default=default_anchors,
                    help="folder holding halide_bench.py (default: $HALOGEN_ANCHORS, else ../shared/anchors from the "
                         "repository root)")
    ap.add_argument("--halogen-bin", help="the halogen binary to run (default: build it with cargo)")
    ap.add_argument("--cargo-profile", default="release",
                    help="cargo profile to build halogen with when --halogen-bin is not given (default: %(default)s)")
    ap.add_argument("--halogen-timeout", type=float, default=600,
                    help="seconds one `halogen bench` call (compile + runs) may take (default: %(default)s)")
    ap.add_argument("--synthetic-inputs", action="store_true",
                    help="let Halogen make its own inputs of the same size instead of reading Halide's "
                         "(no output comparison then)")
    ap.add_argument("--halide-strict-float", action="store_true",
                    help="compile Halide with its strict_float feature (no FMA contraction) and Halogen for its "
                         "default target (likewise): float outputs then agree bit for bit. Without it Halide "
                         "contracts multiply-adds, and so does Halogen (`--target host-fast_math`)")
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy versions")
    ap.add_argument("--no-opencv", action="store_true", help="skip the OpenCV versions")
    ap.add_argument("--keep-dir", help="keep the exchanged .npy inputs and outputs in this folder")
    ap.add_argument("--md", help="write the tables as markdown to this file")
    ap.add_argument("--json", help="write every measurement as JSON to this file")
    ap.add_argument("--strict", action="store_true",
                    help="exit with status 1 if a hand-scheduled variant (Halide or Halogen) fails or Halogen's "
                         "output disagrees with Halide's (for CI)")
    ap.add_argument("--list", action="store_true", help="list the apps and exit")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not args.scale > 0:
        ap.error("--scale must be positive")
    if args.threads < 0:
        ap.error("--threads must be 0 or more")
    return args


def die(msg):
    print(f"compare.py: {msg}", file=sys.stderr)
    sys.exit(2)


# --------------------------------------------------------------------------------------
# Loading halide_bench.py and the ports
# --------------------------------------------------------------------------------------

def import_anchors(args):
    """Imports halide_bench.py from --anchors with the options it should run under.

    halide_bench parses sys.argv when imported (and sets HL_NUM_THREADS from it), so the
    options are handed over through sys.argv."""
    anchors = os.path.abspath(args.anchors)
    path = os.path.join(anchors, "halide_bench.py")
    if not os.path.isfile(path):
        die(f"{path} not found: compare.py needs shared/anchors/halide_bench.py (pass --anchors DIR)")
    saved = sys.argv
    sys.argv = [path, "--no-fixtures", "--no-bench", "--runs", str(args.runs), "--slow-s", str(args.slow_s),
                "--slow-runs", str(args.slow_runs), "--threads", str(args.threads), "--ll-levels", str(args.ll_levels)]
    sys.path.insert(0, anchors)
    try:
        import halide_bench
    except ImportError as e:
        die(f"cannot import halide_bench.py: {e}. It needs halide==21.0.0, numpy and opencv-python-headless "
            "(pip install halide==21.0.0 numpy opencv-python-headless scipy pillow)")
    finally:
        sys.argv = saved
    return halide_bench


def is_port_class(obj):
    return isinstance(obj, type) and all(hasattr(obj, a) for a in
                                         ("name", "build", "hand", "make_inputs", "make_output"))


def load_ports():
    """Every port class in bench/ports/*.py: {app name: (class, file)}; and load errors."""
    sys.path.insert(0, PORTS)
    found, errors = {}, {}
    for path in sorted(glob.glob(os.path.join(PORTS, "*.py"))):
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem.startswith("_"):
            continue
        try:
            mod = importlib.import_module(stem)
        except Exception as e:  # noqa: BLE001 (a broken port must not stop the others)
            errors[stem] = f"{type(e).__name__}: {e}"
            continue
        for obj in vars(mod).values():
            if is_port_class(obj) and obj.__module__ == mod.__name__:
                found[obj.name] = (obj, os.path.relpath(path, REPO))
    return found, errors


# --------------------------------------------------------------------------------------
# Halogen
# --------------------------------------------------------------------------------------

def halogen_binary(args):
    if args.halogen_bin:
        if not os.access(args.halogen_bin, os.X_OK):
            die(f"--halogen-bin {args.halogen_bin} is not an executable file")
        return os.path.abspath(args.halogen_bin)
    if shutil.which("cargo") is None:
        die("cargo not found: install Rust or pass --halogen-bin")
    print(f"== building halogen (cargo build --profile {args.cargo_profile} -p halogen-cli)", flush=True)
    r = subprocess.run(["cargo", "build", "--profile", args.cargo_profile, "-p", "halogen-cli"], cwd=REPO)
    if r.returncode != 0:
        die("cargo build failed")
    meta = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1"], cwd=REPO,
                          capture_output=True, text=True, check=True)
    target = json.loads(meta.stdout)["target_directory"]
    sub = "debug" if args.cargo_profile in ("dev", "test") else args.cargo_profile
    return os.path.join(target, sub, "halogen")


def halogen_apps(binary):
    r = subprocess.run([binary, "list", "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"`{binary} list --json` failed: {r.stderr.strip()}")
    return {a["name"]: a for a in json.loads(r.stdout)}


def run_halogen(args, binary, app, schedule, in_files, size, params, out_dir, strict_float=False):
    """One `halogen bench` call; returns its JSON row (with 'error' if it failed).
    `strict_float`: the app's float semantics must not contract multiply-adds."""
    cmd = [binary, "bench", app, "--schedule", schedule, "--json", "--fresh-cache", "--cached-jit",
           "--runs", str(args.runs), "--max-runs", "50", "--slow-ms", str(args.slow_s * 1e3),
           "--slow-runs", str(args.slow_runs),
           # The same float semantics as Halide's: FMA contraction unless strict.
           "--target", "host" if args.halide_strict_float or strict_float else "host-fast_math"]
    if in_files:
        cmd += [a for f in in_files for a in ("--input", f)]
        cmd += ["--save-outputs", out_dir]
    else:
        cmd += ["--size", f"{size[0]}x{size[1]}"]
    if args.threads > 0:
        cmd += ["--threads", str(args.threads)]
    for p in params:
        cmd += ["--param", p]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.halogen_timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.halogen_timeout:.0f} s (compile + runs; raise --halogen-timeout)"}
    try:
        rows = json.loads(r.stdout) if r.stdout.strip() else []
    except json.JSONDecodeError:
        rows = []
    if rows:
        return rows[0]
    err = r.stderr.strip().splitlines()
    return {"error": (err[-1] if err else f"exit status {r.returncode}")[:400]}


def halogen_params(spec):
    """The `--param`s that make the Halogen app compute what the Halide class computes."""
    if hasattr(spec, "halogen_params"):
        return list(spec.halogen_params())
    if spec.name == "local_laplacian":
        return [f"levels={spec.J}", f"intensity_levels={spec.K}"]
    if spec.name == "bilateral_grid":
        return [f"s_sigma={spec.s}", f"r_sigma={spec.r}"]
    return []


# --------------------------------------------------------------------------------------
# Measuring one app
# --------------------------------------------------------------------------------------

def agreement(np, out, ref, exact, loose=None):
    """How Halogen's output agrees with Halide's: max |difference|, count, relative size."""
    if out.shape != ref.shape:
        return {"text": f"shape {list(out.shape)} != Halide's {list(ref.shape)}", "ok": False}
    d = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    n = int(np.count_nonzero(d))
    max_abs = float(d.max()) if d.size else 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-30) if ref.size else 1.0
    rec = {"max_abs": max_abs, "n_differ": n, "size": int(d.size), "max_rel": max_abs / scale}
    if not np.all(np.isfinite(out)):
        rec.update(text="non-finite values", ok=False)
    elif n == 0:
        rec.update(text="exact", ok=True)
    elif exact:
        rec.update(text=f"{n} differ (max {max_abs:g})", ok=False)
    else:
        over = int(np.count_nonzero(d / scale > 1e-4))
        ok = over == 0 or (loose is not None and over <= loose[0] * d.size and max_abs / scale <= loose[1])
        rec.update(text=f"max|d|/max|ref| = {max_abs / scale:.1e}" + (f" ({over} > 1e-4)" if over else ""),
                   ok=ok, n_over_1e4=over)
    return rec


def measure_app(args, hb, cls, binary, h_apps, work):
    np = hb.np
    kw = {"K": args.ll_levels} if cls.__name__ == "LocalLaplacian" else {}
    spec = cls(**kw)
    if args.scale != 1.0:
        # halide_bench.py's scaling, for the ports too.
        W = max(64, int(spec.W * args.scale) // 16 * 16)
        H = max(64, int(spec.H * args.scale) // 16 * 16)
        spec = cls(W, H, **kw)
    print(f"== {spec.name}: {spec.desc}", flush=True)
    rec = {"title": spec.title, "desc": spec.desc, "mp": spec.mp, "W": spec.W, "H": spec.H,
           "halide": {}, "halogen": {}, "opencv": None, "numpy": None}
    rng = np.random.default_rng(42)
    inputs = spec.make_inputs(rng)

    ref = None
    if not args.no_numpy and hasattr(spec, "numpy"):
        try:
            st = spec.numpy_prep(inputs)
            ref = spec.make_output()
            rec["numpy"] = hb.bench(lambda: spec.numpy(inputs, ref, st))
            print(f"  numpy: {rec['numpy']['min_ms']:.2f} / {rec['numpy']['median_ms']:.2f} ms", flush=True)
        except Exception as e:  # noqa: BLE001
            rec["numpy"], ref = {"error": str(e)[:400]}, None

    # Halide.
    kinds = ["hand"] + list(getattr(spec, "extra_hand", {}).keys())
    if args.auto:
        kinds += ["auto_" + a for a in AUTO_DEFAULT + (["Adams2019"] if args.adams_full else [])]
    out_arr = spec.make_output()
    # Halogen's outputs are compared with Halide's hand-scheduled one, or where that failed
    # (a tile larger than a tiny test image), with the first Halide variant that ran.
    halide_out, halide_out_kind = None, None
    for kind in kinds:
        if kind.startswith("auto_") and hb.LOADED.get(kind[5:].replace("_greedy", "")):
            r = {"error": hb.LOADED[kind[5:].replace("_greedy", "")]}
        else:
            r = hb.run_halide_variant(spec, kind, inputs, out_arr, ref, None)
        r.pop("traceback", None)
        rec["halide"][kind] = r
        if halide_out is None and "error" not in r:
            halide_out, halide_out_kind = out_arr.copy(), kind
        if "error" in r:
            print(f"  halide {kind}: FAILED {r['error']}", flush=True)
        else:
            print(f"  halide {kind}: {r['min_ms']:.2f} / {r['median_ms']:.2f} ms (jit {r['jit_s']:.2f} s) "
                  f"{r.get('check_vs_numpy') or ''}", flush=True)

    # OpenCV.
    if not args.no_opencv and getattr(spec, "opencv_note", None):
        try:
            st = spec.opencv_prep(inputs)
            r = hb.bench(lambda: spec.opencv(st))
            o = spec.opencv(st)
            r["comparable"] = o is not None
            r["check_vs_numpy"] = (hb.compare(o, ref, spec.exact, getattr(spec, "interior", 0))
                                   if o is not None else "n/a (different algorithm/rounding)")
            r["note"] = spec.opencv_note
        except Exception as e:  # noqa: BLE001
            r = {"error": str(e)[:400], "note": spec.opencv_note}
        rec["opencv"] = r
        if "error" in r:
            print(f"  opencv: FAILED {r['error']}", flush=True)
        else:
            print(f"  opencv: {r['min_ms']:.2f} / {r['median_ms']:.2f} ms {r['check_vs_numpy']}", flush=True)

    # Halogen, on the very same inputs.
    if spec.name not in h_apps:
        rec["halogen_missing"] = "no Halogen app of this name"
        print("  halogen: no app of this name", flush=True)
        return rec
    app_dir = os.path.join(work, spec.name)
    os.makedirs(app_dir, exist_ok=True)
    in_files = []
    if not args.synthetic_inputs:
        for i, a in enumerate(inputs):
            if str(a.dtype) not in NPY_DTYPES:
                raise ValueError(f"input {i} is {a.dtype}; halogen reads {sorted(NPY_DTYPES)}")
            f = os.path.join(app_dir, f"input{i}.npy")
            np.save(f, np.ascontiguousarray(a))
            in_files.append(f)
    h_scheds = h_apps[spec.name]["schedules"]
    wanted = ["hand"] + [k for k in getattr(spec, "extra_hand", {}) if k in h_scheds] + ["auto"]
    for sched in wanted:
        r = run_halogen(args, binary, spec.name, sched, in_files, (spec.W, spec.H), halogen_params(spec), app_dir,
                        strict_float=getattr(spec, "strict_float", False))
        if "error" not in r and in_files:
            out_file = os.path.join(app_dir, f"{spec.name}_{sched}.npy")
            if halide_out is not None and os.path.isfile(out_file):
                loose = getattr(spec, "loose_tolerance", LOOSE.get(spec.name))
                r["vs_halide_hand"] = agreement(np, np.load(out_file), halide_out, spec.exact, loose)
                r["vs_halide_hand"]["halide_variant"] = halide_out_kind
                if halide_out_kind != "hand":
                    r["vs_halide_hand"]["text"] += f" (vs Halide {halide_out_kind})"
        rec["halogen"][sched] = r
        if "error" in r:
            print(f"  halogen {sched}: FAILED {r['error']}", flush=True)
        else:
            jc = r.get("jit_cached_ms")
            print(f"  halogen {sched}: {r['min_ms']:.2f} / {r['median_ms']:.2f} ms (jit {r['jit_first_ms'] / 1e3:.2f} s"
                  f"{'' if jc is None else f', cached {jc / 1e3:.2f} s'}) "
                  f"vs Halide: {r.get('vs_halide_hand', {}).get('text', 'not compared')}", flush=True)
    rec["ratios"] = ratios(rec)
    return rec


def best(variants, prefix):
    ok = [(k, v) for k, v in variants.items() if k.startswith(prefix) and "min_ms" in v]
    return min(ok, key=lambda kv: kv[1]["min_ms"]) if ok else (None, None)


def ratios(rec):
    """Halogen / other, on min and on median times (None where either side is missing)."""
    def r(a, b):
        if not a or not b or "min_ms" not in a or "min_ms" not in b:
            return None
        return {"min": a["min_ms"] / b["min_ms"], "median": a["median_ms"] / b["median_ms"]}

    hal, hh = rec["halogen"], rec["halide"]
    _, best_auto = best(hh, "auto_")
    # OpenCV's version is timed even where it computes something a little different
    # (the tables say so): it is the library one would otherwise call.
    return {"halogen_vs_halide_hand": r(hal.get("hand"), hh.get("hand")),
            "halogen_auto_vs_best_halide_auto": r(hal.get("auto"), best_auto),
            "halogen_vs_opencv": r(hal.get("hand"), rec["opencv"])}


# --------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------

def ms(v):
    return "—" if not v or "min_ms" not in v else f"{v['min_ms']:.2f} / {v['median_ms']:.2f}"


def ratio(v):
    return "—" if not v else f"{v['min']:.2f}x"


def summary_rows(results):
    rows = []
    for name, rec in results["apps"].items():
        if "error" in rec:
            rows.append([name, "FAILED: " + rec["error"]] + [""] * 9)
            continue
        hal, hh = rec["halogen"], rec["halide"]
        bk, bv = best(hh, "auto_")
        hal_hand = hal.get("hand", {})
        jit_h = hh.get("hand", {}).get("jit_s")
        jf, jc = hal_hand.get("jit_first_ms"), hal_hand.get("jit_cached_ms")
        rt = rec.get("ratios", {})
        cv = rec["opencv"]
        cv_txt = ms(cv) + ("" if not cv or cv.get("comparable", True) else " (different algorithm)")
        agree = hal_hand.get("vs_halide_hand", {}).get("text") or hal_hand.get("error", rec.get("halogen_missing", ""))
        rows.append([
            f"{name} ({rec['mp']:.2f} MP)", ms(hh.get("hand")), ms(hal_hand) if "error" not in hal_hand else "FAILED",
            ratio(rt.get("halogen_vs_halide_hand")),
            "—" if bk is None else f"{ms(bv)} ({bk[5:]})",
            ms(hal.get("auto")) if "error" not in hal.get("auto", {}) else "FAILED",
            ratio(rt.get("halogen_auto_vs_best_halide_auto")), cv_txt, ratio(rt.get("halogen_vs_opencv")),
            "—" if jit_h is None else f"{jit_h:.2f}",
            "—" if jf is None else f"{jf / 1e3:.2f} / {'—' if jc is None else f'{jc / 1e3:.2f}'}",
            agree,
        ])
    return rows


SUMMARY_HEAD = ["app", "Halide hand ms", "Halogen hand ms", "Halogen / Halide hand", "best Halide auto ms",
                "Halogen auto ms", "Halogen auto / best Halide auto", "OpenCV ms", "Halogen / OpenCV",
                "Halide JIT s", "Halogen JIT s first / cached", "Halogen vs Halide (hand outputs)"]


def md_table(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def detail_rows(rec):
    rows = []
    for k, v in rec["halide"].items():
        rows.append(["Halide", k] + variant_cells(rec, v, v.get("jit_s"), None, v.get("autoschedule_s"),
                                                  v.get("check_vs_numpy")))
    for k, v in rec["halogen"].items():
        jf, jc, asm = v.get("jit_first_ms"), v.get("jit_cached_ms"), v.get("autoschedule_ms")
        rows.append(["Halogen", k] + variant_cells(rec, v, None if jf is None else jf / 1e3,
                                                   None if jc is None else jc / 1e3,
                                                   None if asm is None else asm / 1e3,
                                                   v.get("vs_halide_hand", {}).get("text", "")))
    if rec["opencv"]:
        v = rec["opencv"]
        rows.append(["OpenCV", v.get("note", "")] + variant_cells(rec, v, None, None, None, v.get("check_vs_numpy")))
    if rec["numpy"]:
        rows.append(["NumPy", ""] + variant_cells(rec, rec["numpy"], None, None, None, "(reference)"))
    return rows


def variant_cells(rec, v, jit, jit_cached, sched_s, check):
    if "error" in v or "min_ms" not in v:
        return ["—", "—", "—", "—", "", "", "FAILED: " + str(v.get("error", "?"))]
    jit_txt = "" if jit is None else f"{jit:.2f}" + ("" if jit_cached is None else f" / {jit_cached:.2f}")
    return [f"{v['min_ms']:.2f}", f"{v['median_ms']:.2f}", f"{rec['mp'] / (v['min_ms'] / 1e3):.0f}", v["runs"],
            "" if sched_s is None else f"{sched_s:.2f}", jit_txt, check or ""]


DETAIL_HEAD = ["side", "variant", "min ms", "median ms", "MP/s (min)", "runs", "autoschedule s",
               "JIT s (Halogen: first / cached)", "check (Halide: vs NumPy; Halogen: vs Halide hand)"]


def write_md(results, path):
    m = results["meta"]
    lines = ["# Halogen against Halide, OpenCV and NumPy", "",
             f"{m['date']}, {m['platform']}, {m['cpu_count']} cores; Halide {m['versions'].get('halide')} "
             f"(JIT target `{m['halide_target']}`), OpenCV {m['versions'].get('cv2.__version__')}, "
             f"NumPy {m['versions'].get('numpy')}; threads: {m['threads'] or 'library defaults'}; "
             f"scale {m['scale']}; at least {m['runs']} timed runs per variant (halide_bench.py's rules). "
             "Times are min / median ms; ratios are on min times (below 1: Halogen is faster).", "",
             md_table(SUMMARY_HEAD, summary_rows(results)), ""]
    for name, rec in results["apps"].items():
        if "error" in rec:
            continue
        lines += [f"## {name}: {rec['title']}", "", f"{rec['desc']} ({rec['mp']:.2f} MP)", "",
                  md_table(DETAIL_HEAD, detail_rows(rec)), ""]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def print_summary(results):
    rows = [SUMMARY_HEAD] + summary_rows(results)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(SUMMARY_HEAD))]
    print()
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------

def main(argv=None):
    args = parse_args(argv)
    hb = import_anchors(args)
    ports, port_errors = load_ports()
    catalogue = {name: (cls, os.path.relpath(hb.__file__, REPO)) for name, cls in hb.PIPELINES.items()}
    for name, (cls, path) in ports.items():
        if name in catalogue:
            print(f"compare.py: {path} defines '{name}', which halide_bench.py has: using halide_bench.py's",
                  file=sys.stderr)
            continue
        catalogue[name] = (cls, path)
    for stem, err in port_errors.items():
        print(f"compare.py: warning: bench/ports/{stem}.py cannot be loaded: {err}", file=sys.stderr)

    if args.list:
        binary = args.halogen_bin and os.path.abspath(args.halogen_bin)
        known = halogen_apps(binary) if binary else {}
        for name, (cls, path) in catalogue.items():
            extra = "" if not binary else ("" if name in known else "  (no Halogen app)")
            print(f"{name:<16} {path}{extra}")
        for stem in port_errors:
            print(f"{stem:<16} bench/ports/{stem}.py  (cannot be loaded)")
        return 0

    names = [a.strip() for a in args.apps.split(",") if a.strip()] or list(catalogue)
    for n in names:
        if n not in catalogue:
            why = (f"bench/ports/{n}.py cannot be loaded: {port_errors[n]}" if n in port_errors
                   else f"no Halide counterpart (halide_bench.py or bench/ports/{n}.py)")
            die(f"unknown app '{n}': {why}; the apps are: {', '.join(catalogue)}")
    if args.halide_strict_float:
        # halide_bench compiles and auto-schedules for its module-level TARGET.
        hb.TARGET = hb.TARGET.with_feature(hb.hl.TargetFeature.StrictFloat)
    binary = halogen_binary(args)
    h_apps = halogen_apps(binary)
    hb.load_autoschedulers(AUTO_DEFAULT + ["Adams2019"])

    results = {"meta": {
        "date": time.strftime("%Y-%m-%d %H:%M"), "platform": platform.platform(), "cpu_count": os.cpu_count(),
        "versions": hb.pkg_versions(), "halide_target": str(hb.TARGET), "threads": args.threads,
        "scale": args.scale, "runs": args.runs, "slow_s": args.slow_s, "slow_runs": args.slow_runs,
        "halogen_bin": binary, "halide_strict_float": args.halide_strict_float, "autoschedulers": (AUTO_DEFAULT + (["Adams2019"] if args.adams_full else []))
        if args.auto else [], "autoscheduler_load": hb.LOADED, "same_inputs": not args.synthetic_inputs,
    }, "apps": {}}
    t0 = time.perf_counter()
    work = args.keep_dir or tempfile.mkdtemp(prefix="halogen-compare-")
    os.makedirs(work, exist_ok=True)
    try:
        for name in names:
            try:
                results["apps"][name] = measure_app(args, hb, catalogue[name][0], binary, h_apps, work)
            except Exception as e:  # noqa: BLE001 (one broken app must not lose the others' numbers)
                traceback.print_exc()
                results["apps"][name] = {"error": f"{type(e).__name__}: {e}"[:400]}
            results["meta"]["total_s"] = time.perf_counter() - t0
            if args.json:
                with open(args.json, "w") as fh:
                    json.dump(results, fh, indent=1)
            if args.md:
                write_md(results, args.md)
    finally:
        if not args.keep_dir:
            shutil.rmtree(work, ignore_errors=True)
    print_summary(results)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    problems = problems_of(results)
    for p in problems:
        print(f"compare.py: {p}", file=sys.stderr)
    if any(not p.startswith("strict:") for p in problems) or (args.strict and problems):
        return 1
    return 0


def problems_of(results):
    """What went wrong: whole apps that failed, and (prefixed 'strict:') failed hand
    variants and disagreeing outputs."""
    out = []
    for name, rec in results["apps"].items():
        if "error" in rec:
            out.append(f"{name}: {rec['error']}")
            continue
        if "error" in rec["halide"].get("hand", {}):
            out.append(f"strict: {name}: Halide hand failed: {rec['halide']['hand']['error']}")
        if "halogen_missing" in rec:
            out.append(f"strict: {name}: {rec['halogen_missing']}")
        for sched, r in rec["halogen"].items():
            if "error" in r and sched != "auto":
                out.append(f"strict: {name}: Halogen {sched} failed: {r['error']}")
            elif not r.get("vs_halide_hand", {}).get("ok", True):
                out.append(f"strict: {name}: Halogen {sched} disagrees with Halide: {r['vs_halide_hand']['text']}")
    return out


if __name__ == "__main__":
    sys.exit(main())
