"""Power and false-alarm rate of the Clopper-Pearson audit (privclust.core.privacy.audit).

For each case, the audit runs on SEEDS independent seeds; "flag rate" is the share of runs whose
epsilon lower bound exceeds the claimed epsilon (alpha = 1e-3). A correct mechanism should be
flagged ~never, a planted bug (noise scale or sensitivity times a factor < 1) as often as possible.
Writes benchmarks/results/privacy/audit_power.md. Run: python benchmarks/privacy/audit_power.py
"""

import time
from pathlib import Path

import numpy as np

from privclust.core import privacy as P
from privclust.core.privacy.audit import epsilon_lower_bound

SEEDS = 40
OUT = Path(__file__).resolve().parents[1] / "results" / "privacy" / "audit_power.md"


def flag_rate(make, claimed, n, **audit_options):
    hits, bounds, start = 0, [], time.perf_counter()
    for seed in range(SEEDS):
        rng = np.random.default_rng(1000 + seed)
        bound = epsilon_lower_bound(*make(rng, n), **audit_options)
        bounds.append(bound)
        hits += bound > claimed
    return hits / SEEDS, float(np.median(bounds)), (time.perf_counter() - start) / SEEDS


def cases():
    for factor in (1.0, 0.9, 0.8, 0.5):
        for n in (200_000, 1_000_000):
            yield (
                f"Laplace eps=1, noise x{factor}",
                n,
                {},
                lambda g, n, f=factor: (
                    P.laplace(0.0, f, 1.0, g, size=n),
                    P.laplace(1.0, f, 1.0, g, size=n),
                ),
            )
    for factor in (1.0, 0.75, 0.5):
        yield (
            f"Gaussian eps=1 delta=1e-5, sigma x{factor}",
            400_000,
            {"delta": 1e-5},
            lambda g, n, f=factor: (
                P.gaussian(0.0, f, 1.0, 1e-5, g, size=n),
                P.gaussian(1.0, f, 1.0, 1e-5, g, size=n),
            ),
        )
    u, v = np.zeros(20), np.r_[1.0, -np.ones(19)]
    for factor in (1.0, 0.8, 0.5):
        yield (
            f"exponential mechanism k=20 eps=1, sensitivity x{factor}",
            200_000,
            {"categorical": True},
            lambda g, n, f=factor: (
                P.exponential_mechanism(u, 1.0, f, g, size=n),
                P.exponential_mechanism(v, 1.0, f, g, size=n),
            ),
        )


def main():
    rows = [
        "| case | runs per side | flag rate | median eps_lb | s per audit |",
        "|---|---|---|---|---|",
    ]
    for name, n, options, make in cases():
        rate, median, seconds = flag_rate(make, 1.0, n, **options)
        rows.append(f"| {name} | {n} | {rate:.2f} | {median:.3f} | {seconds:.2f} |")
        print(rows[-1], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        f"# Audit power ({SEEDS} seeds, alpha = 1e-3, claimed eps = 1)\n\n" + "\n".join(rows) + "\n"
    )


if __name__ == "__main__":
    main()
