"""The downloads of a result: JSON and CSV of what was released, and a self-contained HTML plot.

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
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
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
        return {"algorithm": result.spec.label, "task": result.spec.task,
                "release": release.to_dict()}
    g = result.guarantee
    return {
        "algorithm": result.spec.label,
        "class": result.spec.estimator.__name__,
        "task": result.spec.task,
        "settings": {k: _jsonable(v) for k, v in result.settings.items()},
        "dataset_fingerprint": (getattr(result.dataset, "fingerprint", None)
                                if getattr(result.dataset, "public", False) else None),
        "guarantee": g.to_dict() if g is not None else {"kind": "none"},
        "released": {k: _jsonable(v) for k, v in evaluation.released(result).items()},
    }


def csv_cell(value):
    """CSV injection guard (OWASP): a cell starting with = + - @ tab/CR gets a quote prefix."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "@", "\t", "\r") or (
        text[:1] == "-" and not _is_number(text)) else text


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def report_csv(result):
    """Released arrays as long CSV rows: output, index, value (a NOT PRIVATE result: none)."""
    if result.owner_only:
        raise ValueError("a NOT PRIVATE result of the data owner view is never downloaded")
    rows = []
    for name, value in evaluation.released(result).items():
        arr = np.atleast_1d(np.asarray(value))
        for idx in np.ndindex(arr.shape):
            rows.append((name, "/".join(map(str, idx)), csv_cell(arr[idx])))
    return pd.DataFrame(rows, columns=["output", "index", "value"]).to_csv(index=False)


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
    js = "\n".join(f"<script>{(bokehjs_path() / 'js' / name).read_text()}</script>"
                   for name in BOKEHJS)
    return as_file(f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   f"<title>{html.escape(title)}</title>\n{js}\n</head>\n<body>\n{div}\n"
                   f"{script}\n</body></html>\n")


def as_file(text):
    """``text`` as the in-memory UTF-8 file a download button sends."""
    return io.BytesIO(text.encode("utf-8"))
