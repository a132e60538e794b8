"""How compile time grows with the number of stages of a pipeline.

One generated pipeline (`bench/corpus/generate.py SEED --stages N`) for each N: the
pipelines of one seed share their first stages, so each is the previous one plus more
stages. For each, in fresh processes:
  schedule   the auto-scheduler (`autoschedule_ms` of `halogen bench`)
  lower      `halogen lower FILE --schedule auto` (auto-schedule, lowering, printing the
             nest) minus the auto-schedule
  compile    the first compile into an empty cache: lowering, printing C and the C
             compiler (`compile_ms`)
  cached     a second compile of the same pipeline in the same process (`jit_cached_ms`)
and writes a Markdown table and an SVG plot of the times against N, with the per-stage
slope of each series between the smallest and the largest N.

Usage:
  python bench/compile_scaling.py --halogen-bin target/release/halogen \\
      --md bench/results/compile-scaling.md --svg bench/results/compile-scaling.svg
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(binary, path, size, timeout):
    env = dict(os.environ)
    t = time.perf_counter()
    subprocess.run([binary, "lower", path, "--schedule", "auto"], check=True, env=env,
                   stdout=subprocess.DEVNULL, timeout=timeout)
    lower_total = time.perf_counter() - t
    out = subprocess.run([binary, "bench", path, "--schedule", "auto", "--runs", "1", "--fresh-cache",
                          "--cached-jit", "--json", "--size", size],
                         check=True, env=env, capture_output=True, text=True, timeout=timeout)
    row = json.loads(out.stdout)[0]
    schedule_ms = row["autoschedule_ms"]
    return {
        "schedule_ms": schedule_ms,
        "lower_ms": max(lower_total * 1e3 - schedule_ms, 0.0),
        "compile_ms": row["compile_ms"],
        "cached_ms": row["jit_cached_ms"],
        "run_ms": row["min_ms"],
    }


def svg_plot(rows, series, title):
    """A line plot of `series` (key, label, colour) against the stage counts."""
    w, h, left, right, top, bottom = 720, 420, 70, 150, 40, 50
    xs = [r["stages"] for r in rows]
    ymax = max(r[k] for r in rows for k, _, _ in series) / 1e3 * 1.1 or 1.0
    x0, x1 = min(xs), max(xs)

    def px(x):
        return left + (x - x0) / max(x1 - x0, 1) * (w - left - right)

    def py(y):
        return h - bottom - y / ymax * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2 - right / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>',
           f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">stages</text>',
           f'<text x="16" y="{(top + h - bottom) / 2}" transform="rotate(-90 16 {(top + h - bottom) / 2})" '
           'text-anchor="middle">seconds</text>']
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{h - bottom + 16}" text-anchor="middle">{x}</text>')
    for i in range(6):
        y = ymax * i / 5
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2g}</text>')
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{w - right}" y2="{py(y):.1f}" stroke="#ddd"/>')
    for n, (key, label, colour) in enumerate(series):
        pts = " ".join(f"{px(r['stages']):.1f},{py(r[key] / 1e3):.1f}" for r in rows)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r in rows:
            out.append(f'<circle cx="{px(r["stages"]):.1f}" cy="{py(r[key] / 1e3):.1f}" r="3" fill="{colour}"/>')
        ly = top + 10 + 20 * n
        out.append(f'<line x1="{w - right + 12}" y1="{ly}" x2="{w - right + 32}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{w - right + 38}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7000)
    ap.add_argument("--stages", default="10,20,30,40,50,60,70,80,90,100")
    ap.add_argument("--size", default="1536x1024")
    ap.add_argument("--halogen-bin", required=True)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--md")
    ap.add_argument("--svg")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(v) for v in a.stages.split(",")):
            text = subprocess.run([sys.executable, os.path.join(HERE, "corpus", "generate.py"), str(a.seed),
                                   "--stages", str(n), "--size", a.size],
                                  check=True, capture_output=True, text=True).stdout
            path = os.path.join(tmp, f"chain{n}.halogen")
            with open(path, "w") as f:
                f.write(text)
            funcs = sum(1 for line in text.splitlines() if "(x, y) =" in line)
            row = {"stages": n, "funcs": funcs, **measure(a.halogen_bin, path, a.size, a.timeout)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    load = os.getloadavg()
    first, last = rows[0], rows[-1]
    span = max(last["stages"] - first["stages"], 1)
    lines = [f"# Compile time against stages (seed {a.seed}, {a.size})", "",
             f"Load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
             f"{os.cpu_count()} CPUs. Times in ms, one fresh process each.", "",
             "| stages | Funcs | auto-schedule | lowering | first compile | cached compile | run |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['stages']} | {r['funcs']} | {r['schedule_ms']:.0f} | {r['lower_ms']:.0f} | "
                     f"{r['compile_ms']:.0f} | {r['cached_ms']:.1f} | {r['run_ms']:.2f} |")
    lines.append("")
    for key, label in [("schedule_ms", "auto-schedule"), ("lower_ms", "lowering"), ("compile_ms", "first compile")]:
        per_first = first[key] / first["stages"]
        per_last = last[key] / last["stages"]
        slope = (last[key] - first[key]) / span
        lines.append(f"- {label}: {per_first:.1f} ms per stage at {first['stages']} stages, "
                     f"{per_last:.1f} at {last['stages']}; slope {slope:.1f} ms per added stage.")
    md = "\n".join(lines) + "\n"
    print(md)
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg_plot(rows, [("compile_ms", "first compile", "#c0392b"),
                                    ("lower_ms", "lowering", "#2471a3"),
                                    ("schedule_ms", "auto-schedule", "#229954")],
                             f"Compile time against stages (generated pipeline, seed {a.seed})"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
