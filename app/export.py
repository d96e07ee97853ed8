"""The downloads of a result: plain JSON and a wide CSV of what was released, a script that
reruns the release on the data owner's side, and a self-contained HTML plot.

Private data: only the Release (its released attributes, parameters, guarantee, cost and time),
never a baseline, per-record arrays that were not released or the hash of the data.
"""

import html
import io

import holoviews as hv
import numpy as np
import pandas as pd

from .state import evaluation


def _jsonable(v):
    """Plain JSON values: arrays as nested lists, numpy scalars as numbers, non-finite floats
    as the strings "inf", "-inf", "nan", dicts and tuples as objects and lists."""
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()] if v.dtype.kind in "fc" else v.tolist()
    if isinstance(v, (np.floating, np.integer, np.bool_)):
        return _jsonable(v.item())
    if isinstance(v, float) and not np.isfinite(v):
        return str(v)
    if isinstance(v, complex):
        return {"real": _jsonable(v.real), "imag": _jsonable(v.imag)}
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def report_payload(result):
    """The downloadable record of a result.

    Private data: the Release only (``release.to_dict()``: released attributes, parameters,
    guarantee, cost, time), never a baseline, per-record arrays that were not released or the
    hash of the data. Demo data: public settings, guarantee and outputs. A NOT PRIVATE (data
    owner) result has no download: ValueError.
    """
    if result.owner_only:
        raise ValueError("a NOT PRIVATE result of the data owner view is never downloaded")
    release = result.release
    if release is not None:
        g = release.guarantee
        return {
            "algorithm": result.spec.label,
            "class": release.estimator,
            "task": result.spec.task,
            "release_id": release.id,
            "time": release.time.isoformat(),
            "parameters": _jsonable(release.params),
            "guarantee": _jsonable(g.to_dict()),
            "guarantee_summary": g.summary(),
            "cost": {"epsilon": release.cost[0], "delta": release.cost[1], "unit": release.unit},
            "charge_id": release.charge_id,
            "randomness": release.randomness,
            "notes": list(release.notes),
            "request_key": release.key,
            "feature_names": _feature_names(result),
            "released": _jsonable(dict(release.attributes)),
        }
    g = result.guarantee
    return {
        "algorithm": result.spec.label,
        "class": result.spec.estimator.__name__,
        "task": result.spec.task,
        "settings": {k: _jsonable(v) for k, v in result.settings.items()},
        "dataset_fingerprint": (
            getattr(result.dataset, "fingerprint", None)
            if getattr(result.dataset, "public", False)
            else None
        ),
        "guarantee": g.to_dict() if g is not None else {"kind": "none"},
        "released": {k: _jsonable(v) for k, v in evaluation.released(result).items()},
    }


def csv_cell(value):
    """CSV injection guard (OWASP): a cell starting with = + - @ tab/CR gets a quote prefix."""
    text = str(value)
    return (
        "'" + text
        if text[:1] in ("=", "+", "@", "\t", "\r") or (text[:1] == "-" and not _is_number(text))
        else text
    )


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _feature_names(result):
    """The loaded data's column names (public), or None."""
    names = getattr(result.dataset, "feature_names", None)
    return None if names is None else [str(n) for n in names]


def report_csv(result):
    """The released outputs as a wide CSV with the data's column names: one row per centre
    (k-means, 1-cluster, a box's lower/upper) or per basis vector of a subspace, one column per
    feature, after the columns ``output`` and ``row`` (which centre, or which cluster/vector);
    a released output that is not per-feature (weights, radii, labels) gets one row per value
    with the column ``value``. A NOT PRIVATE result has no download: ValueError."""
    if result.owner_only:
        raise ValueError("a NOT PRIVATE result of the data owner view is never downloaded")
    released = evaluation.released(result)
    d = getattr(result.dataset, "n_features", None)
    names = _feature_names(result) or ([f"feature {j}" for j in range(d)] if d else None)
    frames = []
    for name, value in released.items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "biufc" or arr.size == 0:
            continue
        if (
            names is not None
            and arr.ndim >= 1
            and arr.shape[-1] == len(names)
            and name not in ("labels_", "row_labels_", "column_labels_")
        ):
            if arr.ndim == 3:  # subspaces (k, d, q): one row per basis vector
                rows = np.transpose(arr, (0, 2, 1)).reshape(-1, arr.shape[1])
                index = [f"{i}/{j}" for i in range(arr.shape[0]) for j in range(arr.shape[2])]
            else:
                rows = np.atleast_2d(arr).reshape(-1, arr.shape[-1])
                index = [str(i) for i in range(rows.shape[0])]
            df = pd.DataFrame(rows, columns=names)
        else:
            flat = np.atleast_1d(arr).reshape(-1)
            df = pd.DataFrame({"value": flat})
            index = ["/".join(map(str, i)) for i in np.ndindex(np.atleast_1d(arr).shape)]
        df.insert(0, "row", index)
        df.insert(0, "output", name)
        frames.append(df)
    if not frames:
        return "output,row,value\n"
    out = pd.concat(frames, ignore_index=True, sort=False)
    out.columns = [csv_cell(c) for c in out.columns]
    return out.map(lambda v: csv_cell(v) if isinstance(v, str) else v).to_csv(index=False)


SCRIPT = """\
# privclust: rerun this release on your side (the data owner's), through the one door.
# Made by the privclust dashboard from release #{id} ({time} UTC); nothing here is private:
# the class, its public parameters and the budget that was charged.
#   python {filename} records.csv       (your records: CSV, TSV, .npy, .npz or .mtx)
import sys

import numpy as np  # noqa: F401  (arrays in the parameters below, if any)

import privclust.core as pc

PARAMETERS = {params}

dataset = pc.load(sys.argv[1])                      # private by default
ledger = pc.Ledger(epsilon={budget_eps!r}, delta={budget_delta!r}, unit={unit!r})
curator = pc.Curator(dataset, ledger)
release = curator.release(pc.{cls}(**PARAMETERS))
print(release.summary)
for name, value in release.attributes.items():
    print(name, np.asarray(value).shape)
"""


def release_script(result, filename="privclust_release.py"):
    """A Python script that reruns ``result``'s release on the data owner's side: the
    estimator, its public parameters and the Curator call (its ledger sized to the cost that was
    charged). Only public facts enter it. Demo and NOT PRIVATE results: ValueError."""
    release = result.release
    if result.owner_only or release is None:
        raise ValueError("a script is exported for a private release only")
    import privclust.core as core

    params = dict(release.params)
    for k, v in params.items():  # a parameter object (a named solver) is rebuilt by its class
        if isinstance(v, dict) and set(v) == {"class", "params"} and hasattr(core, v["class"]):
            params[k] = _Code(f"pc.{v['class']}(**{_literal(v['params'])})")
    return SCRIPT.format(
        id=release.id,
        time=f"{release.time:%Y-%m-%d %H:%M}",
        filename=filename,
        params=_literal(params),
        cls=release.estimator,
        budget_eps=release.cost[0],
        budget_delta=release.cost[1] or 0.0,
        unit=release.unit,
    )


class _Code(str):
    """Source text that :func:`_literal` writes as is."""


def _literal(value):
    """Python source for a parameter value (arrays as ``np.array([...])``)."""
    if isinstance(value, _Code):
        return str(value)
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        items = [_literal(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


# BokehJS bundles the plots need, inlined from the installed bokeh package. Bokeh's own INLINE
# resources are not used: once Panel is imported they also list Panel's extension bundle (a
# relative static/ path) and MathJax from a CDN, which a downloaded file must not fetch.
BOKEHJS = ("bokeh.min.js", "bokeh-gl.min.js")


def plot_html(fig, title="privclust plot"):
    """A self-contained HTML file of a plot: BokehJS inlined, no request to any host when it
    is opened (tested in a browser with every request counted)."""
    from bokeh.embed import components
    from bokeh.util.paths import bokehjs_path

    if fig is None:
        return as_file("<!DOCTYPE html><html><body><p>No plot for this result.</p></body></html>")
    script, div = components(hv.render(fig, backend="bokeh"))
    js = "\n".join(
        f"<script>{(bokehjs_path() / 'js' / name).read_text()}</script>" for name in BOKEHJS
    )
    return as_file(
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>\n{js}\n</head>\n<body>\n{div}\n"
        f"{script}\n</body></html>\n"
    )


def as_file(text):
    """``text`` as the in-memory UTF-8 file a download button sends."""
    return io.BytesIO(text.encode("utf-8"))
