"""The two hot loops of the SPARS 2019 Fig. 1 trial at paper size, against their plain versions in
the same process: the quantised sketch with r = m (quarter-turn counts in reused integer buffers
against ``_signature_parts`` per block) and the SSE of many centre sets on one X (``sse_many``, X
read once, against one ``sse`` per set).

    python benchmarks/sketch/dense_sums.py [--n 200000] [--repeats 3]

Writes benchmarks/results/sketch/dense_sums.{json,md}: CPU seconds (best of ``--repeats``,
alternating the two versions) and their ratio. One Fig. 1 trial (n = 1e7) sketches m = 1000 and
m = 10000 with r = m and computes 131 SSEs. The plain versions allocate fresh block-sized
temporaries, and their CPU time swings with the allocator's state (page faults counted as system
time): on 2026-11-28 the plain m = 10000 sketch took 5.9, 6.2 and 31.3 s in three runs, the fast
one 4.1-4.3 s.
"""

import argparse
import time

import numpy as np
from _common import machine_note, write

from privclust.core._threads import single_thread
from privclust.core.metrics import sse, sse_many
from privclust.core.sketch.operator import _BLOCK_ELEMENTS, SketchOperator


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def plain_quantized(op, X, rows):
    """Sum of the +-1 signs per block, as ``_dense_sum`` computes them."""
    re, im = np.zeros(op.sketch_size), np.zeros(op.sketch_size)
    for start in range(0, X.shape[0], rows):
        a, b = op._dense_sum(X[start : start + rows])
        re += a
        im += b
    return re, im


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, 10)) * 3
    out = {"n": args.n, "d": 10, "repeats": args.repeats, "rows": []}
    for m in (1000, 10000):
        op = SketchOperator.draw(10, m, 1.0, signature="quantized", random_state=1)
        rows = max(16, _BLOCK_ELEMENTS // m)
        plain, fast = [], []
        with single_thread(args.n * m):
            for _ in range(args.repeats):
                t, ref = _cpu(lambda op=op, rows=rows: plain_quantized(op, X, rows))
                plain.append(t)
                t, got = _cpu(lambda op=op, rows=rows: op._dense_sum_quantized(X, rows))
                fast.append(t)
        assert np.array_equal(ref[0], got[0]) and np.array_equal(ref[1], got[1])
        out["rows"].append(
            {"what": f"quantised sketch, r = m = {m}", "plain_s": min(plain), "fast_s": min(fast)}
        )
    centres = [rng.normal(size=(10, 10)) * 3 for _ in range(131)]
    plain, fast = [], []
    for _ in range(args.repeats):
        t, ref = _cpu(lambda: [sse(X, C) for C in centres])
        plain.append(t)
        t, got = _cpu(lambda: sse_many(X, centres))
        fast.append(t)
    assert np.allclose(ref, got, rtol=1e-10)
    out["rows"].append({"what": "131 SSEs, k = 10", "plain_s": min(plain), "fast_s": min(fast)})
    out["machine"] = machine_note()
    lines = [
        f"# Fig. 1 trial hot loops (n = {args.n:.0e}, d = 10; CPU s, best of {args.repeats})",
        "",
        "| loop | plain | fast | ratio |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['what']} | {r['plain_s']:.2f} | {r['fast_s']:.2f} | "
        f"{r['plain_s'] / r['fast_s']:.1f}x |"
        for r in out["rows"]
    ]
    lines += [
        "",
        "Results equal (sketch sums exactly, SSEs to 1e-10).",
        f"Machine: {out['machine']}",
    ]
    write("dense_sums", out, lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
