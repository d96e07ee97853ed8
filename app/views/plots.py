"""HoloViews plot builders of the dashboard (pure functions of arrays; no state, no algorithms).

Titles of plots computed on raw private data carry ``NOT_PRIVATE``: whatever
the browser shows is a release, so a non-private plot must say so.
"""
import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401 -- registers the bokeh backend for .opts()
import numpy as np
import scipy.sparse as sp

NOT_PRIVATE = "NOT PRIVATE"


def mark(title, raw_private):
    """Prefix the title of a plot computed on raw private data (data owner view)."""
    return f"{NOT_PRIVATE} · {title}" if raw_private else title
WIDTH, HEIGHT = 420, 360
PALETTE = "Category10"


def projection(X, use_data):
    """A (d, 2) orthonormal projection to draw R^d in the plane, and the origin shift.

    With ``use_data`` (demo data or the data owner view) the top-2 principal directions; else the
    first two coordinates, which are public (nothing about private data decides the axes).
    """
    d = X.shape[1]
    if d == 1:
        return np.ones((1, 1)), np.zeros(1)
    if not use_data:
        return np.eye(d)[:, :2], np.zeros(d)
    mean = np.asarray(X.mean(axis=0)).ravel()
    sample = X[: min(len(X), 5000)]
    sample = sample.toarray() if sp.issparse(sample) else sample
    _, _, vt = np.linalg.svd(sample - mean, full_matrices=False)
    return vt[:2].T, mean


def _project(points, P, mean):
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    out = (pts - mean) @ P
    if out.shape[1] == 1:
        out = np.column_stack([out[:, 0], np.zeros(len(out))])
    return out


def _opts(title, **kw):
    return dict(title=title, width=WIDTH, height=HEIGHT, tools=["hover"], **kw)


def points(X, labels, P, mean, title, max_points=3000):
    """Scatter of the projected data, coloured by cluster label (None: grey)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    idx = np.arange(len(X))
    if len(X) > max_points:
        idx = np.linspace(0, len(X) - 1, max_points).astype(int)
    xy = _project(X[idx], P, mean)
    lab = np.zeros(len(idx), dtype=int) if labels is None else np.asarray(labels)[idx].astype(int)
    data = {"x": xy[:, 0], "y": xy[:, 1], "cluster": lab.astype(str)}
    color = "cluster" if labels is not None else "lightgrey"
    return hv.Points(data, ["x", "y"], ["cluster"]).opts(
        color=color, cmap=PALETTE, size=3, alpha=0.6, **_opts(title, show_legend=False))


def empty(title, text=""):
    return hv.Points([]).opts(**_opts(title)) * hv.Text(0, 0, text).opts(text_font_size="10pt")


def centres(C, P, mean, color="black", marker="x", label="centres"):
    xy = _project(C, P, mean)
    return hv.Points({"x": xy[:, 0], "y": xy[:, 1]}, ["x", "y"], label=label).opts(
        color=color, marker=marker, size=14, line_width=3)


def balls(C, radii, P, mean, color="crimson"):
    """Balls drawn as circles (an orthonormal projection of a ball is a disc of equal radius)."""
    xy = _project(C, P, mean)
    return hv.Overlay([hv.Ellipse(float(x), float(y), 2 * float(r)).opts(color=color, line_width=2)
                       for (x, y), r in zip(xy, np.ravel(radii))])


def directions(bases, P, scale=1.0):
    """Each subspace's basis vectors as segments through the origin, one colour per cluster."""
    segs = []
    for l, U in enumerate(np.asarray(bases)):
        for j in range(U.shape[1]):
            a = _project(scale * U[:, j], P, 0.0)[0]
            segs.append((-a[0], -a[1], a[0], a[1], str(l)))
    return hv.Segments(segs, ["x0", "y0", "x1", "y1"], ["cluster"]).opts(
        color="cluster", cmap=PALETTE, line_width=3)


def distance_heatmap(D, title, xlabel, ylabel):
    """Heatmap of a (k, k') matrix of subspace distances (rows: this result)."""
    D = np.asarray(D, dtype=float)
    data = [(f"{ylabel} {i}", f"{xlabel} {j}", D[i, j])
            for i in range(D.shape[0]) for j in range(D.shape[1])]
    hm = hv.HeatMap(data, [xlabel, ylabel], "distance").opts(
        cmap="viridis_r", colorbar=True, width=360, height=300, title=title, tools=["hover"])
    labels = hv.Labels(hm).opts(text_color="white", text_font_size="9pt")
    return hm * labels


def matrix(A, row_order, col_order, title, max_side=300):
    """A (count) matrix reordered by cluster labels, as an image (downsampled if large)."""
    A = A.tocsr() if sp.issparse(A) else np.asarray(A)
    r = np.asarray(row_order)
    c = np.asarray(col_order)
    if len(r) > max_side:
        r = r[np.linspace(0, len(r) - 1, max_side).astype(int)]
    if len(c) > max_side:
        c = c[np.linspace(0, len(c) - 1, max_side).astype(int)]
    M = A[r][:, c]
    M = M.toarray() if sp.issparse(M) else M
    M = np.log1p(np.maximum(M, 0))
    return hv.Image(M[::-1], bounds=(0, 0, M.shape[1], M.shape[0]),
                    kdims=["column", "row"], vdims=["log(1+count)"]).opts(
        cmap="Blues", width=WIDTH, height=HEIGHT, title=title, colorbar=True)


def table(T, title):
    T = np.asarray(T, dtype=float)
    data = [(f"col {j}", f"row {i}", T[i, j]) for i in range(T.shape[0]) for j in range(T.shape[1])]
    hm = hv.HeatMap(data, ["column cluster", "row cluster"], "count").opts(
        cmap="Oranges", colorbar=True, width=360, height=300, title=title, tools=["hover"])
    return hm * hv.Labels(hm).opts(text_font_size="9pt")


def tradeoff(df, metric, title):
    """Median and inter-quartile band of a metric over epsilon (log axis), one curve per method."""
    if df is None or len(df) == 0:
        return empty(title, "no sweep yet")
    overlays = []
    for method, g in df.groupby("method"):
        s = g.groupby("epsilon")[metric].describe()
        eps = s.index.to_numpy(dtype=float)
        overlays.append(hv.Spread((eps, s["50%"], s["50%"] - s["25%"], s["75%"] - s["50%"]),
                                  "epsilon", [metric, "lo", "hi"]).opts(alpha=0.2))
        overlays.append(hv.Curve((eps, s["50%"]), "epsilon", metric, label=str(method)).opts(
            line_width=2) * hv.Scatter((eps, s["50%"]), "epsilon", metric).opts(size=5))
    return hv.Overlay(overlays).opts(logx=True, width=640, height=360, title=title,
                                     legend_position="top_right", show_grid=True)
