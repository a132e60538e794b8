"""Random but realistic image pipelines, written both as Halogen text (`.halogen`) and as
Halide Python, so that the same pipeline runs on both compilers.

Modelled on the random pipeline generator of Adams et al. 2019: chains and DAGs of
stencils of radius 1-3 in one or two dimensions, point-wise math, down- and
up-sampling, transposes, look-up tables, histograms, scans, reductions over RDoms and
min/max windows, on u8, u16 or f32 images, 2 to 24 stages. A pipeline is drawn from one
integer seed and nothing else, so a seed names it for good.

Integer pipelines compute in i32 with operations that keep every value within the
input type's range (averages with power-of-two weights, min, max, absolute differences,
range-preserving look-ups), so no arithmetic overflows: Halide treats signed overflow as
undefined and the two compilers must agree exactly. Float pipelines use weights and
operations that keep values in [0, 1].

    python3 bench/corpus/generate.py SEED [--halide]   # prints one pipeline
"""

import argparse
import random
import sys

# ----------------------------------------------------------------------------------------
# A small expression tree, printed in both languages.
# ----------------------------------------------------------------------------------------

TYPE_NAMES = {"u8": ("u8", "hl.UInt(8)"), "u16": ("u16", "hl.UInt(16)"), "i32": ("i32", "hl.Int(32)"),
              "f32": ("f32", "hl.Float(32)")}


class E:
    """An expression node: `kind` and its parts."""

    def __init__(self, kind, *parts):
        self.kind, self.parts = kind, parts

    def __add__(self, o):
        return E("bin", "+", self, lit(o))

    def __sub__(self, o):
        return E("bin", "-", self, lit(o))

    def __mul__(self, o):
        return E("bin", "*", self, lit(o))

    def __floordiv__(self, o):
        return E("bin", "/", self, lit(o))


def lit(v):
    if isinstance(v, E):
        return v
    if isinstance(v, float):
        return E("flt", v)
    return E("int", v)


def div(a, b):
    """a / b: floor division for integers, true division for floats."""
    return E("bin", "/", lit(a), lit(b))


def call(f, *args):
    return E("call", f, [lit(a) for a in args])


def fn(name, *args):
    return E("fn", name, [lit(a) for a in args])


def cast(t, e):
    return E("cast", t, lit(e))


def var(name):
    return E("var", name)


def halogen(e):
    k, p = e.kind, e.parts
    if k == "int":
        return str(p[0]) if p[0] >= 0 else f"({p[0]})"
    if k == "flt":
        return repr(float(p[0]))
    if k == "var":
        return p[0]
    if k == "bin":
        return f"({halogen(p[1])} {p[0]} {halogen(p[2])})"
    if k == "call":
        return f"{p[0]}({', '.join(halogen(a) for a in p[1])})"
    if k == "fn":
        return f"{p[0]}({', '.join(halogen(a) for a in p[1])})"
    if k == "cast":
        return f"{TYPE_NAMES[p[0]][0]}({halogen(p[1])})"
    if k == "gt":
        return f"({halogen(p[0])} > {halogen(p[1])})"
    raise ValueError(k)


def halide(e):
    k, p = e.kind, e.parts
    if k == "int":
        return str(p[0]) if p[0] >= 0 else f"({p[0]})"
    if k == "flt":
        return f"hl.f32({float(p[0])!r})"
    if k == "var":
        # Names with a dot are reduction variables (`r1.x`) or input fields.
        return p[0]
    if k == "bin":
        op = "//" if p[0] == "/" and not e.float else p[0]
        return f"({halide(p[1])} {op} {halide(p[2])})"
    if k == "call":
        return f"{p[0]}[{', '.join(halide(a) for a in p[1])}]"
    if k == "fn":
        return f"hl.{p[0]}({', '.join(halide(a) for a in p[1])})"
    if k == "cast":
        return f"hl.cast({TYPE_NAMES[p[0]][1]}, {halide(p[1])})"
    if k == "gt":
        return f"({halide(p[0])} > {halide(p[1])})"
    raise ValueError(k)


def mark_float(e, is_float):
    """Division is floor division for integers, true division for floats."""
    e.float = is_float
    for p in e.parts:
        if isinstance(p, E):
            mark_float(p, is_float)
        elif isinstance(p, list):
            for q in p:
                mark_float(q, is_float)
    return e


# ----------------------------------------------------------------------------------------
# Pipelines
# ----------------------------------------------------------------------------------------

BINOMIAL = {1: [1, 2, 1], 2: [1, 4, 6, 4, 1], 3: [1, 6, 15, 20, 15, 6, 1]}


class Stage:
    def __init__(self, name, kind, value=None, updates=(), rdoms=(), helpers=()):
        self.name, self.kind, self.value = name, kind, value
        self.updates = list(updates)      # (args, value) pairs
        self.rdoms = list(rdoms)          # (name, [(min, extent)...]) with E bounds
        self.helpers = list(helpers)      # Stages this one defines first (tables, histograms)


class Pipeline:
    def __init__(self, seed, ty, width, height, stages, out_value):
        self.seed, self.ty, self.width, self.height = seed, ty, width, height
        self.stages, self.out_value = stages, out_value

    @property
    def name(self):
        return f"p{self.seed}"

    @property
    def is_float(self):
        return self.ty == "f32"


def draw(seed, width=1536, height=1024, stages=None):
    """The pipeline of `seed`, for images of `width` x `height`; `stages` overrides the
    drawn number of stages (for chains longer than the corpus draws)."""
    rng = random.Random(seed)
    ty = rng.choice(["u8", "u8", "u16", "f32"])
    flt = ty == "f32"
    top = 255 if ty == "u8" else 65535
    x, y = var("x"), var("y")
    W, H = var("input.width"), var("input.height")
    n = rng.randint(2, 24)
    if stages is not None:
        n = stages
    stages = [Stage("s0", "input", cast("f32" if flt else "i32", call("clamped", x, y)))]
    level = 0  # how many times the image has been down-sampled, net
    counter = [0]

    def fresh(prefix):
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def scale(e, num, den):
        """e * num / den in the working type."""
        if flt:
            return e * (num / den)
        return (e if num == 1 else e * num) // den

    def pick():
        # Mostly the latest stage; now and then an earlier one (a DAG).
        k = len(stages) - 1
        return stages[k] if rng.random() < 0.7 or k == 0 else stages[rng.randint(max(0, k - 4), k)]

    def at(s, a, b):
        return call(s.name, a, b)

    # Weights: what image pipelines are mostly made of; whole-image reductions are rarer.
    kinds = {"pointwise": 6, "stencil": 8, "box": 2, "minmax": 2, "sum": 2, "down": 2, "up": 2,
             "transpose": 1, "lut": 2, "histogram": 1, "scan": 1}
    while len(stages) <= n:
        kind = rng.choices(list(kinds), weights=list(kinds.values()))[0]
        name = f"s{len(stages)}"
        a = pick()
        if kind == "pointwise":
            b = pick()
            if b is a and len(stages) > 1:
                b = stages[rng.randrange(len(stages) - 1)] if stages[-1] is a else stages[-1]
            op = rng.randrange(5)
            if op == 0:
                v = scale(at(a, x, y) + at(b, x, y), 1, 2)
            elif op == 1:
                v = fn("max", at(a, x, y), at(b, x, y))
            elif op == 2:
                v = fn("min", at(a, x, y), at(b, x, y))
            elif op == 3:
                v = fn("abs", at(a, x, y) - at(b, x, y))
                v = v if flt else cast("i32", v)
            else:
                v = scale(at(a, x, y) * 3 + at(b, x, y), 1, 4)
            stages.append(Stage(name, kind, v))
        elif kind == "stencil":
            r = rng.choice([1, 1, 2, 3])
            w = BINOMIAL[r]
            along_y = rng.random() < 0.5
            terms = None
            for i, wi in enumerate(w):
                d = i - r
                t = at(a, x, y + d if d else y) if along_y else at(a, x + d if d else x, y)
                t = t * (wi / sum(w)) if flt else (t if wi == 1 else t * wi)
                terms = t if terms is None else terms + t
            stages.append(Stage(name, kind, terms if flt else terms // sum(w)))
        elif kind == "box":
            rd = fresh("r")
            rx, ry = var(f"{rd}.x"), var(f"{rd}.y")
            v = fn("sum", at(a, x + rx - 1, y + ry - 1))
            stages.append(Stage(name, kind, scale(v, 1, 9), rdoms=[(rd, [(lit(0), lit(3)), (lit(0), lit(3))])]))
        elif kind == "minmax":
            r = rng.choice([1, 2])
            rd = fresh("r")
            rx = var(f"{rd}.x")
            which = rng.choice(["maximum", "minimum"])
            along_y = rng.random() < 0.5
            t = at(a, x, y + rx - r) if along_y else at(a, x + rx - r, y)
            stages.append(Stage(name, kind, fn(which, t), rdoms=[(rd, [(lit(0), lit(2 * r + 1))])]))
        elif kind == "down":
            if level >= 3:
                continue
            level += 1
            v = at(a, x * 2, y * 2) + at(a, x * 2 + 1, y * 2) + at(a, x * 2, y * 2 + 1) + at(a, x * 2 + 1, y * 2 + 1)
            stages.append(Stage(name, kind, scale(v, 1, 4)))
        elif kind == "up":
            if level <= 0:
                continue
            level -= 1
            v = at(a, x // 2, y // 2) + at(a, (x + 1) // 2, (y + 1) // 2)
            stages.append(Stage(name, kind, scale(v, 1, 2)))
        elif kind == "transpose":
            stages.append(Stage(name, kind, at(a, y, x)))
        elif kind == "lut":
            table = fresh("table")
            i = var("i")
            if flt:
                entry = (cast("f32", i) * (1.0 / 255.0)) * (cast("f32", i) * (1.0 / 255.0))
                idx = fn("clamp", cast("i32", at(a, x, y) * 255.0), 0, 255)
            else:
                entry = (i * i) // top if top == 255 else (i // 256) * (i // 256)
                idx = fn("clamp", at(a, x, y), 0, top)
            helper = Stage(table, "table", entry)
            helper.args = ["i"]
            stages.append(Stage(name, kind, call(table, idx), helpers=[helper]))
        elif kind == "histogram":
            hist = fresh("hist")
            rd = fresh("r")
            rx, ry = var(f"{rd}.x"), var(f"{rd}.y")

            def bin_of(v):
                """The histogram's bin, in [0, 255], of value `v`."""
                if flt:
                    return fn("clamp", cast("i32", v * 255.0), 0, 255)
                return fn("clamp", v if top == 255 else v // 256, 0, 255)

            b = bin_of(at(a, rx, ry))
            helper = Stage(hist, "hist", lit(0), updates=[([b], call(hist, b) + 1)],
                           rdoms=[(rd, [(lit(0), W), (lit(0), H)])])
            helper.args = ["i"]
            here = bin_of(at(a, x, y))
            if flt:
                v = div(cast("f32", call(hist, here)), cast("f32", W * H))
            else:
                v = (call(hist, here) * top) // (W * H)
            stages.append(Stage(name, kind, v, helpers=[helper]))
        elif kind == "scan":
            scan = fresh("scan")
            rd = fresh("r")
            rx = var(f"{rd}.x")
            helper = Stage(scan, "scanf", at(a, x, y),
                           updates=[([rx, y], call(scan, rx - 1, y) + at(a, rx, y))],
                           rdoms=[(rd, [(lit(1), W - 1)])])
            helper.args = ["x", "y"]
            cx = fn("clamp", x, 0, W - 1)
            if flt:
                v = div(call(scan, cx, y), cast("f32", cx + 1))
            else:
                v = call(scan, cx, y) // (cx + 1)
            stages.append(Stage(name, kind, v, helpers=[helper]))
        elif kind == "sum":
            r = rng.choice([1, 2])
            rd = fresh("r")
            rx = var(f"{rd}.x")
            along_y = rng.random() < 0.5
            t = at(a, x, y + rx - r) if along_y else at(a, x + rx - r, y)
            stages.append(Stage(name, kind, scale(fn("sum", t), 1, 2 * r + 1),
                                rdoms=[(rd, [(lit(0), lit(2 * r + 1))])]))
    # Back to full resolution.
    while level > 0:
        level -= 1
        a = stages[-1]
        v = at(a, x // 2, y // 2) + at(a, (x + 1) // 2, (y + 1) // 2)
        stages.append(Stage(f"s{len(stages)}", "up", scale(v, 1, 2)))
    last = stages[-1]
    out = at(last, x, y) if flt else cast(ty, fn("clamp", at(last, x, y), 0, top))
    for s in stages:
        mark_float(s.value, flt)
        for h in s.helpers:
            mark_float(h.value, flt)
            for args, v in h.updates:
                mark_float(v, flt)
                for q in args:
                    mark_float(q, flt)
            for _, bounds in h.rdoms:
                for lo, ext in bounds:
                    mark_float(lo, False)
                    mark_float(ext, False)
    mark_float(out, flt)
    return Pipeline(seed, ty, width, height, stages, out)


# ----------------------------------------------------------------------------------------
# Writers
# ----------------------------------------------------------------------------------------

def _rdom_text(name, bounds):
    return f"rdom {name} = " + " ".join(f"[{halogen(lo)}, {halogen(ext)}]" for lo, ext in bounds)


def to_halogen(p):
    """The pipeline as a `.halogen` file (no schedule: the auto-scheduler writes it)."""
    w, h = p.width, p.height
    lines = [f"# Corpus pipeline {p.seed}: {len(p.stages) - 1} stages on {p.ty} "
             f"({', '.join(s.kind for s in p.stages[1:])}).",
             f"input input : {p.ty}[2] estimate [0, {w}] [0, {h}]",
             "clamped = repeat_edge(input)"]
    for s in p.stages:
        for hp in s.helpers:
            args = ", ".join(hp.args)
            for name, bounds in hp.rdoms:
                lines.append(_rdom_text(name, bounds))
            lines.append(f"{hp.name}({args}) = {halogen(hp.value)}")
            for uargs, v in hp.updates:
                lines.append(f"{hp.name}({', '.join(halogen(a) for a in uargs)}) = {halogen(v)}")
        for name, bounds in s.rdoms:
            lines.append(_rdom_text(name, bounds))
        lines.append(f"{s.name}(x, y) = {halogen(s.value)}")
    lines.append(f"out(x, y) = {halogen(p.out_value)}")
    lines.append(f"output out estimate [0, {w}] [0, {h}]")
    return "\n".join(lines) + "\n"


def to_halide(p):
    """Python source of `build()`, which returns (input ImageParam, output Func)."""
    w, h = p.width, p.height
    ty = TYPE_NAMES[p.ty][1]
    lines = ["def build():",
             "    x, y, i = hl.Var('x'), hl.Var('y'), hl.Var('i')",
             f"    input = hl.ImageParam({ty}, 2, 'input')",
             "    input_width, input_height = input.width(), input.height()",
             "    clamped = hl.BoundaryConditions.repeat_edge(input)"]

    def py(e):
        return halide(e).replace("input.width", "input_width").replace("input.height", "input_height")

    def rdoms(rs):
        for name, bounds in rs:
            b = ", ".join(f"({py(lo)}, {py(ext)})" for lo, ext in bounds)
            lines.append(f"    {name} = hl.RDom([{b}])")

    for s in p.stages:
        for hp in s.helpers:
            rdoms(hp.rdoms)
            lines.append(f"    {hp.name} = hl.Func('{hp.name}')")
            lines.append(f"    {hp.name}[{', '.join(hp.args)}] = {py(hp.value)}")
            for uargs, v in hp.updates:
                lines.append(f"    {hp.name}[{', '.join(py(a) for a in uargs)}] = {py(v)}")
        rdoms(s.rdoms)
        lines.append(f"    {s.name} = hl.Func('{s.name}')")
        lines.append(f"    {s.name}[x, y] = {py(s.value)}")
    lines.append("    out = hl.Func('out')")
    lines.append(f"    out[x, y] = {py(p.out_value)}")
    lines.append(f"    input.set_estimates([(0, {w}), (0, {h})])")
    lines.append(f"    out.set_estimates([(0, {w}), (0, {h})])")
    lines.append("    return input, out")
    return "\n".join(lines) + "\n"


def halide_build(p, hl):
    """Runs `to_halide(p)` and returns (input ImageParam, output Func)."""
    scope = {"hl": hl}
    exec(to_halide(p), scope)  # noqa: S102 (our own generated code)
    return scope["build"]()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seed", type=int)
    ap.add_argument("--halide", action="store_true", help="print the Halide Python instead")
    ap.add_argument("--size", default="1536x1024")
    ap.add_argument("--stages", type=int, help="this many stages instead of the drawn number")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    p = draw(a.seed, w, h, a.stages)
    sys.stdout.write(to_halide(p) if a.halide else to_halogen(p))


if __name__ == "__main__":
    main()
