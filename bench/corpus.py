#!/usr/bin/env python3
"""Halogen's auto-scheduler against Halide's on generated pipelines nobody tuned for.

Each pipeline of the corpus is drawn from a seed by `bench/corpus/generate.py`, written as
a `.halogen` file and as Halide Python, and run on the same random input by
  Halide    its auto-schedulers shipped with PyPI `halide` (Mullapudi2016, Adams2019
            greedy, beam 1, and Li2018): auto-schedule time, JIT time, run times
  Halogen   `halogen bench FILE --schedule auto`: auto-schedule + first compile into an
            empty cache, a cached compile, run times
then checks that Halogen's output equals Halide's (exactly for integer pipelines, to 1e-4
relative for float ones) and reports per pipeline and in geometric mean
  run       Halogen auto min time / the best Halide auto-scheduler's min time
  compile   (Halogen auto-schedule + first compile) / (Halide Adams2019-greedy
            auto-schedule + JIT)

The seeds are split in two sets: `dev` (seeds 1000...) to look at while working on the
auto-scheduler, and `eval` (seeds 5000...) to measure on only. Report both.

Usage:
  python bench/corpus.py --set dev --count 10 --md dev.md --json dev.json
  python bench/corpus.py --set eval --count 40 --md eval.md --json eval.json
  python bench/corpus.py --seeds 5003,5011 --size 512x384       # single pipelines
  python bench/corpus.py --smoke                                # CI: 2 tiny pipelines, checks only
Both sides use the timing rules of shared/anchors/halide_bench.py.
"""
import argparse
import json
import math
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "corpus"))

import compare  # noqa: E402 (the shared Halogen and Halide helpers)
import generate  # noqa: E402

SETS = {"dev": 1000, "eval": 5000}
HALIDE_AUTO = ["Mullapudi2016", "Adams2019_greedy", "Li2018"]
COMPILE_BASELINE = "Adams2019_greedy"


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--set", choices=sorted(SETS), default="dev", help="which seeds (default dev)")
    ap.add_argument("--count", type=int, default=10, help="pipelines of the set (default 10)")
    ap.add_argument("--seeds", help="comma-separated seeds instead of a set")
    ap.add_argument("--size", default="1536x1024", help="image size WxH (default 1536x1024)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--slow-s", type=float, default=1.0)
    ap.add_argument("--slow-runs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="threads on both sides (0: all cores)")
    ap.add_argument("--anchors", default=os.environ.get("HALOGEN_ANCHORS", os.path.join(compare.REPO, "..", "shared", "anchors")))
    ap.add_argument("--halogen-bin", help="the halogen binary (default: cargo build --release)")
    ap.add_argument("--cargo-profile", default="release")
    ap.add_argument("--halogen-timeout", type=float, default=600.0)
    ap.add_argument("--md", help="write the table as Markdown here")
    ap.add_argument("--json", help="write every measurement as JSON here")
    ap.add_argument("--keep", help="keep the generated files and outputs in this folder")
    ap.add_argument("--smoke", action="store_true",
                    help="two small dev pipelines, one run each; fails unless both sides agree")
    # Internal: run the named Halide auto-schedulers on one pipeline in this process and
    # record them in DIR (see halide_isolated).
    ap.add_argument("--halide-child", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--halide-variants", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    # What compare.py's helpers read.
    a.ll_levels, a.halide_strict_float, a.apps = 8, False, None
    if a.smoke:
        a.seeds, a.size, a.runs, a.slow_runs = "1001,1002", "128x96", 1, 1
    return a


def seeds_of(args):
    if args.seeds:
        return [int(s) for s in args.seeds.split(",") if s.strip()]
    return list(range(SETS[args.set], SETS[args.set] + args.count))


class Spec:
    """A generated pipeline in the protocol of halide_bench.py's classes."""

    def __init__(self, hb, pipeline):
        self.hb, self.p = hb, pipeline
        self.name, self.W, self.H = pipeline.name, pipeline.width, pipeline.height
        self.exact = not pipeline.is_float
        self.dtype = {"u8": "uint8", "u16": "uint16", "f32": "float32"}[pipeline.ty]

    def build(self):
        inp, out = generate.halide_build(self.p, self.hb.hl)
        return self.hb.Built([inp], out, {}, {})

    def make_inputs(self, rng):
        np = self.hb.np
        if self.p.is_float:
            return [rng.random((self.H, self.W), dtype=np.float32)]
        top = 256 if self.p.ty == "u8" else 65536
        return [rng.integers(0, top, size=(self.H, self.W), dtype=self.dtype)]

    def make_output(self):
        return self.hb.np.empty((self.H, self.W), self.dtype)


def geomean(vs):
    vs = [v for v in vs if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vs) / len(vs)) if vs else None


def measure(args, hb, binary, seed, work):
    w, h = (int(v) for v in args.size.split("x"))
    p = generate.draw(seed, w, h)
    spec = Spec(hb, p)
    rec = {"seed": seed, "type": p.ty, "stages": len(p.stages) - 1,
           "kinds": [s.kind for s in p.stages[1:]], "halide": {}, "halogen": None}
    d = os.path.join(work, p.name)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{p.name}.halogen")
    with open(path, "w") as fh:
        fh.write(generate.to_halogen(p))
    with open(os.path.join(d, f"{p.name}_halide.py"), "w") as fh:
        fh.write(generate.to_halide(p))
    np = hb.np
    inputs = spec.make_inputs(np.random.default_rng(seed))
    in_file = os.path.join(d, "input0.npy")
    np.save(in_file, inputs[0])
    print(f"== {p.name}: {rec['stages']} stages on {p.ty} ({', '.join(rec['kinds'])})", flush=True)
    rec["halide"], halide_file = halide_isolated(args, seed, d)
    halide_out = np.load(halide_file) if halide_file else None
    r = compare.run_halogen(args, binary, path, "auto", [in_file], (w, h), [], d)
    out_file = os.path.join(d, f"{p.name}_auto.npy")
    if "error" not in r and halide_out is not None and os.path.isfile(out_file):
        r["vs_halide"] = compare.agreement(np, np.load(out_file), halide_out, spec.exact)
    rec["halogen"] = r
    if "error" in r:
        print(f"  halogen auto: FAILED {r['error']}", flush=True)
    else:
        print(f"  halogen auto: {r['min_ms']:.2f} ms (schedule + first compile "
              f"{(r.get('autoschedule_ms') or 0) / 1e3 + r['jit_first_ms'] / 1e3:.2f} s, cached "
              f"{(r.get('jit_cached_ms') or 0):.1f} ms) vs Halide: {r.get('vs_halide', {}).get('text', 'not compared')}",
              flush=True)
    rec.update(ratios(rec))
    return rec


def halide_isolated(args, seed, d):
    """Runs Halide's auto-schedulers on pipeline `seed` (its input in `d/input0.npy`) in
    child processes; returns their results and the file of the first output, if any.

    A schedule Halide compiles can crash the process that runs it (a segmentation fault
    in JIT code has been seen on generated pipelines). Each child records every variant
    before and after running it in `d/halide.json`, so a crash is charged to the variant
    that caused it, and a new child goes on with the variants after it."""
    state_file = os.path.join(d, "halide.json")
    out_file = os.path.join(d, "halide_out.npy")
    for f in (state_file, out_file):
        if os.path.exists(f):
            os.remove(f)
    results, remaining = {}, list(HALIDE_AUTO)
    while remaining:
        cmd = [sys.executable, os.path.abspath(__file__), "--halide-child", d, "--halide-variants",
               ",".join(remaining), "--seeds", str(seed), "--size", args.size, "--runs", str(args.runs),
               "--slow-s", str(args.slow_s), "--slow-runs", str(args.slow_runs), "--threads", str(args.threads),
               "--anchors", args.anchors]
        rc = subprocess.run(cmd).returncode
        state = {"done": {}, "running": None}
        if os.path.isfile(state_file):
            with open(state_file) as fh:
                state = json.load(fh)
        results.update(state["done"])
        crashed = state["running"]
        if rc == 0 or crashed is None:
            for name in remaining:
                results.setdefault(name, {"error": f"the Halide process ended with status {rc} before running it"})
            break
        why = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"status {rc}"
        results[crashed] = {"error": f"crashed the process running it ({why})"}
        print(f"  halide {crashed}: FAILED crashed ({why})", flush=True)
        remaining = remaining[remaining.index(crashed) + 1:]
    return {name: results[name] for name in HALIDE_AUTO}, out_file if os.path.isfile(out_file) else None


def halide_child(args):
    """The child side of halide_isolated: one pipeline, the variants asked for."""
    hb = compare.import_anchors(args)
    names = args.halide_variants.split(",")
    hb.load_autoschedulers(names)
    (seed,) = seeds_of(args)
    w, h = (int(v) for v in args.size.split("x"))
    spec = Spec(hb, generate.draw(seed, w, h))
    # The parent's input, so both sides surely read the same pixels.
    inputs = [hb.np.load(os.path.join(args.halide_child, "input0.npy"))]
    state_file = os.path.join(args.halide_child, "halide.json")
    out_file = os.path.join(args.halide_child, "halide_out.npy")
    state = {"done": {}, "running": None}
    if os.path.isfile(state_file):
        with open(state_file) as fh:
            state = json.load(fh)

    def save():
        with open(state_file + ".tmp", "w") as fh:
            json.dump(state, fh)
        os.replace(state_file + ".tmp", state_file)

    for name in names:
        state["running"] = name
        save()
        if hb.LOADED.get(name.replace("_greedy", "")):
            r = {"error": hb.LOADED[name.replace("_greedy", "")]}
        else:
            out_arr = spec.make_output()
            r = hb.run_halide_variant(spec, "auto_" + name, inputs, out_arr, None, None)
            r.pop("traceback", None)
            if "error" not in r and not os.path.isfile(out_file):
                hb.np.save(out_file, out_arr)
        if "error" in r:
            print(f"  halide {name}: FAILED {r['error']}", flush=True)
        else:
            print(f"  halide {name}: {r['min_ms']:.2f} ms (schedule {r['autoschedule_s']:.2f} s, "
                  f"jit {r['jit_s']:.2f} s)", flush=True)
        state["done"][name] = r
        state["running"] = None
        save()


def ratios(rec):
    ok = [v for v in rec["halide"].values() if "error" not in v]
    g = rec["halogen"]
    out = {"run_ratio": None, "compile_ratio": None, "best_halide": None}
    if not ok or g is None or "error" in g:
        return out
    best_name = min((k for k, v in rec["halide"].items() if "error" not in v), key=lambda k: rec["halide"][k]["min_ms"])
    out["best_halide"] = best_name
    out["run_ratio"] = g["min_ms"] / rec["halide"][best_name]["min_ms"]
    base = rec["halide"].get(COMPILE_BASELINE)
    if base and "error" not in base:
        ours = (g.get("autoschedule_ms") or 0.0) / 1e3 + g["jit_first_ms"] / 1e3
        out["compile_ratio"] = ours / (base["autoschedule_s"] + base["jit_s"])
        out["compile_s"] = ours
    return out


def fmt(v, nd=2, suffix=""):
    return "-" if v is None else f"{v:.{nd}f}{suffix}"


def table(results):
    head = ["seed", "type", "stages", "best Halide auto", "Halide ms", "Halogen auto ms", "run ratio",
            "Halogen schedule+compile s", "compile ratio", "cached compile ms", "agreement"]
    rows = []
    for r in results:
        g = r["halogen"] or {}
        best = r.get("best_halide")
        hms = r["halide"][best]["min_ms"] if best else None
        agree = "FAILED: " + g["error"][:60] if "error" in g else g.get("vs_halide", {}).get("text", "-")
        rows.append([str(r["seed"]), r["type"], str(r["stages"]), best or "-", fmt(hms), fmt(g.get("min_ms")),
                     fmt(r.get("run_ratio"), 2, "x"), fmt(r.get("compile_s")), fmt(r.get("compile_ratio"), 2, "x"),
                     fmt(g.get("jit_cached_ms"), 1), agree])
    run = [r.get("run_ratio") for r in results]
    comp = [r.get("compile_ratio") for r in results]
    rows.append(["geomean", "", "", "", "", "", fmt(geomean(run), 2, "x"), "", fmt(geomean(comp), 2, "x"), "", ""])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def machine_load():
    try:
        return os.getloadavg()
    except OSError:
        return None


def main(argv=None):
    args = parse_args(argv)
    if args.halide_child:
        return halide_child(args)
    if not os.path.isfile(os.path.join(args.anchors, "halide_bench.py")):
        compare.die(f"{args.anchors}/halide_bench.py not found (pass --anchors or set HALOGEN_ANCHORS)")
    hb = compare.import_anchors(args)
    binary = compare.halogen_binary(args)
    seeds = seeds_of(args)
    work = args.keep or tempfile.mkdtemp(prefix="halogen-corpus-")
    os.makedirs(work, exist_ok=True)
    load_before = machine_load()
    t0 = time.time()
    results = [measure(args, hb, binary, s, work) for s in seeds]
    meta = {"set": None if args.seeds else args.set, "seeds": seeds, "size": args.size, "runs": args.runs,
            "threads": args.threads, "load_before": load_before, "load_after": machine_load(),
            "seconds": time.time() - t0, "machine": platform.machine(), "cpus": os.cpu_count(),
            "halogen_bin": binary}
    text = table(results)
    print(text)
    print(f"load average before {load_before}, after {meta['load_after']}")
    if args.md:
        with open(args.md, "w") as fh:
            fh.write(f"# Corpus: {meta['set'] or 'seeds ' + args.seeds}, {len(seeds)} pipelines at {args.size}\n\n")
            fh.write(f"Load average before {load_before}, after {meta['load_after']}; "
                     f"{meta['cpus']} CPUs, threads {args.threads or 'all'}, runs {args.runs}.\n\n{text}\n")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"meta": meta, "results": results}, fh, indent=1)
    bad = [r["seed"] for r in results
           if r["halogen"] is None or "error" in r["halogen"] or not r["halogen"].get("vs_halide", {}).get("ok")]
    if bad:
        print(f"pipelines that failed or disagree with Halide: {bad}", file=sys.stderr)
        if args.smoke:
            sys.exit(1)


if __name__ == "__main__":
    main()
