#!/usr/bin/python3
"""Write the NumPy goldens of the marsfs catalogue.

Reads exprs.txt (next to this file; its header describes the format),
numpy.txt (the functions of issue 21, in the same format), and
promotion.txt, which this script first writes itself: the dtype matrix of
every operator, function and reduction over the dtypes. It runs each
case's input and NumPy code, and writes golden/<case>/in_<name>.npy for each
input and golden/<case>/out_<name>.npy for each output. A case marked
"check error" must make NumPy raise; marsfs must refuse it too ("check error
MESSAGE": NumPy's message, and marsfs', hold MESSAGE; "check raise" is the
same, marsfs refusing when it computes). Run it with a
Python whose NumPy is 1.24 (NumPy 2 changed the promotion of Python scalars):

    /usr/bin/python3 tensor/testdata/catalogue/gen.py

Given case names, it writes those cases' goldens alone, leaving the others.
"""

import os
import shutil
import sys
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64"}
MAX_INPUT = 200  # elements an input, so the committed goldens stay small


def parse(path):
    cases, cur = [], None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                cur = None
                continue
            if line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            if word == "case":
                cur = {"name": rest.strip(), "in": [], "spec": [], "np": [],
                       "out": ["y"], "check": "values", "line": lineno}
                cases.append(cur)
                continue
            if cur is None:
                sys.exit("%s:%d: %r outside a case" % (path, lineno, word))
            if word == "in":
                name, eq, code = rest.partition("=")
                if not eq:
                    sys.exit("%s:%d: in needs NAME = CODE" % (path, lineno))
                cur["in"].append((name.strip(), code.strip()))
            elif word in ("spec", "np"):
                cur[word].append(rest)
            elif word == "out":
                cur["out"] = rest.split()  # "out" alone: no outputs
            elif word == "check":
                cur["check"] = rest.strip()
            else:
                sys.exit("%s:%d: unknown word %r" % (path, lineno, word))
    return cases


def helpers(rng):
    def f64(*shape):
        return rng.standard_normal(shape).round(3)

    def f32(*shape):
        return (rng.integers(-12, 13, shape) / 4).astype(np.float32)

    def i32(*shape, lo=-9, hi=10):
        return rng.integers(lo, hi, shape, dtype=np.int32)

    def i64(*shape, lo=-9, hi=10):
        return rng.integers(lo, hi, shape, dtype=np.int64)

    def bools(*shape):
        return rng.random(shape) < 0.5

    def ints(dt, *shape, lo=-9, hi=10):
        """Integers of dtype dt in [lo, hi) (clipped to the dtype)."""
        info = np.iinfo(dt)
        return rng.integers(max(lo, int(info.min)), min(hi, int(info.max) + 1), shape).astype(dt)

    def f16(*shape):
        return (rng.integers(-12, 13, shape) / 4).astype(np.float16)

    def pos(*shape):
        return rng.uniform(0.1, 3.0, shape).round(3)

    def nanify(x):
        x = x.copy()
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, max(1, flat.size // 4), replace=False)] = np.nan
        # Keep at least one number in each row and column, so that no
        # nan-reduction sees an all-NaN slice (NumPy warns and gives NaN).
        if x.ndim == 2:
            for i in range(min(x.shape)):
                x[i, i] = i + 0.5
        return x

    return dict(np=np, f64=f64, f32=f32, f16=f16, i32=i32, i64=i64, ints=ints, bools=bools, pos=pos, nanify=nanify,
                grouped=grouped)


def grouped(f, x, lab, groups, axis=0, ddof=0):
    """A group-by reduction as flox makes it with expected groups
    0 .. groups-1: f of the elements of x along axis whose label is g, for
    each g; labels outside the groups are left out; a group with no
    element gives 0 (sum, count), 1 (prod) or NaN (the others; min and max
    of integers are float64 for it)."""
    xm = np.moveaxis(np.asarray(x), axis, 0)
    rest = xm.shape[1:]
    outs = []
    for g in range(groups):
        sel = xm[lab == g]
        if f == "count":
            outs.append(np.full(rest, len(sel), dtype=np.int64))
        elif f in ("min", "max"):
            dt = xm.dtype if xm.dtype.kind == "f" else np.dtype(np.float64)
            outs.append(getattr(np, f)(sel, axis=0).astype(dt) if len(sel) else np.full(rest, np.nan, dt))
        else:
            kw = {"ddof": ddof} if f in ("var", "std") else {}
            outs.append(getattr(np, f)(sel, axis=0, **kw))
    return np.moveaxis(np.stack(outs), 0, axis)


DT = ["bool", "int32", "int64", "float32", "float64"]
# The dtypes NumPy has beyond those: every pair with one of them gets the
# operators of NARROW_BINARY.
NEW_DT = ["int8", "int16", "uint8", "uint16", "uint32", "uint64", "float16"]
NARROW_BINARY = {"add", "sub", "mul", "div", "floordiv", "and", "lt"}
MATRIX_A = {"bool": "[[True, False, True], [False, True, True]]",
            "int": "[[-3, -1, 0], [2, 5, 7]]",
            "uint": "[[3, 1, 0], [2, 5, 7]]",
            "float": "[[-3.5, -1.25, 0.0], [2.0, 5.5, 7.75]]"}
MATRIX_B = {"bool": "[True, False, True]", "int": "[2, 3, 1]", "uint": "[2, 3, 1]", "float": "[2.5, 0.5, 1.5]"}


def kind(dt):
    return "bool" if dt == "bool" else dt.rstrip("0123456789")


def matrix_blocks():
    """Yield the promotion cases as exprs.txt blocks."""
    def block(name, ins, spec, code):
        lines = ["case " + name]
        lines += ["in %s = np.array(%s, dtype=np.%s)" % (n, v, "bool_" if d == "bool" else d) for n, v, d in ins]
        lines += ["spec " + spec, "np " + code]
        return "\n".join(lines) + "\n"

    binary = [("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"), ("floordiv", "//"),
              ("mod", "%"), ("pow", "**"), ("and", "&"), ("or", "|"), ("lt", "<"), ("eq", "==")]
    for x in DT + NEW_DT:
        for y in DT + NEW_DT:
            narrow = x in NEW_DT or y in NEW_DT
            ins = [("a", MATRIX_A[kind(x)], x), ("b", MATRIX_B[kind(y)], y)]
            for name, op in binary:
                if not narrow or name in NARROW_BINARY:
                    yield block("dt_%s_%s_%s" % (name, x, y), ins, "y = a %s b" % op, "y = a %s b" % op)
            for f in ["maximum", "minimum"]:
                if not narrow or f == "maximum":
                    yield block("dt_%s_%s_%s" % (f, x, y), ins, "y = %s(a, b)" % f, "y = np.%s(a, b)" % f)
            ins3 = [("m", "[[True, False, False], [False, True, True]]", "bool")] + ins
            yield block("dt_where_%s_%s" % (x, y), ins3, "y = where(m, a, b)", "y = np.where(m, a, b)")
    unary = [("negative", "-a", "-a"), ("abs", "abs(a)", "np.abs(a)"), ("sqrt", "sqrt(a)", "np.sqrt(a)"),
             ("exp", "exp(a)", "np.exp(a)"), ("floor", "floor(a)", "np.floor(a)"),
             ("sign", "sign(a)", "np.sign(a)"), ("invert", "~a", "~a"), ("round", "round(a)", "np.round(a)"),
             ("not", "logical_not(a)", "np.logical_not(a)")]
    reductions = ["sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax",
                  "cumsum", "cumprod", "any", "all"]
    for x in DT + NEW_DT:
        ins = [("a", MATRIX_A[kind(x)], x)]
        for name, spec, code in unary:
            yield block("dt_%s_%s" % (name, x), ins, "y = " + spec, "y = " + code)
        for r in reductions:
            yield block("dt_%s_%s" % (r, x), ins, "y = a.%s(axis=0)" % r, "y = a.%s(axis=0)" % r)
        for f in ["count_nonzero", "nansum", "nanmax"]:
            yield block("dt_%s_%s" % (f, x), ins, "y = %s(a, axis=1)" % f, "y = np.%s(a, axis=1)" % f)
        for sname, sv in [("int", "2"), ("float", "2.5"), ("bool", "True")]:
            for name, op in [("add", "+"), ("mul", "*"), ("div", "/"), ("floordiv", "//")]:
                yield block("dt_scalar_%s_%s_%s" % (name, x, sname), ins, "y = a %s %s" % (op, sv), "y = a %s %s" % (op, sv))


def write_matrix(path):
    """Write promotion.txt, keeping the cases NumPy answers with one of our
    dtypes or refuses (those become "check error" cases)."""
    out = ["# The dtype matrix, written by gen.py: do not edit.", ""]
    for text in matrix_blocks():
        lines = text.splitlines()
        ns = dict(np=np)
        try:
            with np.errstate(all="ignore"):
                for line in lines:
                    if line.startswith("in "):
                        name, _, code = line[3:].partition("=")
                        ns[name.strip()] = eval(code, ns)
                exec(lines[-1][3:], ns)
        except TypeError:
            text += "out\ncheck error\n"
        else:
            if str(np.asarray(ns["y"]).dtype) not in DTYPES:
                continue  # no such dtype in marsfs
        out.append(text)
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    write_matrix(os.path.join(HERE, "promotion.txt"))
    cases = [c for f in ("exprs.txt", "numpy.txt", "promotion.txt", "conformance.txt", "features.txt") for c in parse(os.path.join(HERE, f))]
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit("duplicate cases: %s" % ", ".join(sorted(dup)))
    out_dir = os.path.join(HERE, "golden")
    only = set(sys.argv[1:])
    unknown = only - set(names)
    if unknown:
        sys.exit("no such cases: %s" % ", ".join(sorted(unknown)))
    if only:
        cases = [c for c in cases if c["name"] in only]
        for c in cases:
            shutil.rmtree(os.path.join(out_dir, c["name"]), ignore_errors=True)
    else:
        shutil.rmtree(out_dir, ignore_errors=True)
    for c in cases:
        rng = np.random.default_rng(zlib.crc32(c["name"].encode()))
        ns = helpers(rng)
        d = os.path.join(out_dir, c["name"])
        os.makedirs(d)
        # Division by zero, empty slices and the like are cases on purpose.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for name, code in c["in"]:
                x = np.asarray(eval(code, ns))
                if x.size > MAX_INPUT:
                    sys.exit("%s: input %s has %d elements" % (c["name"], name, x.size))
                ns[name] = x
                write(c, d, "in_" + name, x)
            verdict, _, want = c["check"].partition(" ")
            if verdict in ("error", "raise"):
                want = want.strip()
                try:
                    exec("\n".join(c["np"]), ns)
                except (TypeError, ValueError, IndexError, ZeroDivisionError, np.linalg.LinAlgError) as e:  # AxisError is both
                    if want not in str(e):
                        sys.exit("%s: NumPy refuses it with %r, not %r" % (c["name"], str(e), want))
                    continue
                sys.exit("%s: NumPy does not refuse it" % c["name"])
            exec("\n".join(c["np"]), ns)
        for name in c["out"]:
            write(c, d, "out_" + name, np.asarray(ns[name]))
    print("%d cases" % len(cases))


def write(case, d, name, x):
    if str(x.dtype) not in DTYPES:
        sys.exit("%s: %s has dtype %s" % (case["name"], name, x.dtype))
    np.save(os.path.join(d, name + ".npy"), x.copy(order="C"))


if __name__ == "__main__":
    main()
