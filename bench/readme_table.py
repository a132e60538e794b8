"""The README's comparison table, from the JSON files `compare.py --json` writes.

Usage: python bench/readme_table.py bench/results/anchors-DATE.json bench/results/apps-DATE.json

One row per app (and one per extra hand schedule, such as blur's hand_sliding): Halide's and
Halogen's hand schedules, Halide's best shipped auto-scheduler, Halogen's auto-scheduler
against both, and OpenCV. Ratios are on min times; below 1 Halogen is faster.
"""

import json
import sys


def min_ms(x):
    return x.get("min_ms") if isinstance(x, dict) and "min_ms" in x else None


def ratio(x, y):
    return f"{x / y:.2f}×" if x and y else "—"


def ms(x):
    return f"{x:.1f}" if x else "—"


def rows_of(path):
    data = json.load(open(path))
    for app, a in data["apps"].items():
        halide, halogen = a.get("halide", {}), a.get("halogen", {})
        hand, ours = min_ms(halide.get("hand")), min_ms(halogen.get("hand"))
        autos = {k[len("auto_"):]: min_ms(v) for k, v in halide.items() if k.startswith("auto_") and min_ms(v)}
        best = min(autos.items(), key=lambda kv: kv[1]) if autos else None
        ours_auto = min_ms(halogen.get("auto"))
        opencv = min_ms(a.get("opencv")) if isinstance(a.get("opencv"), dict) else None
        yield (app, ms(hand), ms(ours), ratio(ours, hand),
               f"{ms(best[1])} ({best[0]})" if best else "—", ms(ours_auto),
               ratio(ours_auto, ours), ratio(ours_auto, best[1]) if best else "—",
               ms(opencv), ratio(ours, opencv))
        for k in halide:
            if k != "hand" and not k.startswith("auto_") and min_ms(halide[k]):
                theirs, mine = min_ms(halide[k]), min_ms(halogen.get(k))
                yield (f"{app} ({k})", ms(theirs), ms(mine), ratio(mine, theirs), "", "", "", "", "", "")


def main(paths):
    print("| app | Halide hand ms | Halogen hand ms | Halogen / Halide | best Halide auto ms "
          "| Halogen auto ms | Halogen auto / hand | Halogen auto / Halide auto | OpenCV ms | Halogen / OpenCV |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in paths:
        for row in rows_of(path):
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
