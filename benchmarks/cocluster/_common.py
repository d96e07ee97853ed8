"""Shared helpers for the co-clustering reproduction scripts ([BP25] Figs. 2-3)."""

import csv
import os
from pathlib import Path

import numpy as np

from privclust.core.data import get_dataset

RESULTS = Path(__file__).resolve().parents[1] / "results" / "cocluster"


def load(name):
    """(X csr, labels, n_classes) of a real dataset via PRIVCLUST_DATA_DIR."""
    if not os.environ.get("PRIVCLUST_DATA_DIR"):
        raise SystemExit(
            "set PRIVCLUST_DATA_DIR (the folder of the real data sets) to run this benchmark"
        )
    ds = get_dataset(name)
    labels = np.asarray(ds.labels)
    return ds.X.tocsr(), labels, len(np.unique(labels))


def permuted(X, labels, seed):
    """Rows and columns randomly permuted (the authors permute before their runs)."""
    rng = np.random.default_rng(seed)
    rows, cols = rng.permutation(X.shape[0]), rng.permutation(X.shape[1])
    return X[rows][:, cols], labels[rows]


def write_csv(path, rows, header):
    RESULTS.mkdir(parents=True, exist_ok=True)
    with open(RESULTS / path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
