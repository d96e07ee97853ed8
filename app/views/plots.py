"""HoloViews plot builders of the dashboard (pure functions of arrays; no state, no algorithms).

Titles of plots computed on raw private data carry ``NOT_PRIVATE``: whatever
the browser shows is a release, so a non-private plot must say so.
"""

import textwrap

import holoviews as hv
import holoviews.plotting.bokeh  # noqa: F401 -- registers the bokeh backend for .opts()
import numpy as np
import scipy.sparse as sp

NOT_PRIVATE = "NOT PRIVATE"


def mark(title, raw_private):
    """Prefix the title of a plot computed on raw private data (data owner view)."""
    return f"{NOT_PRIVATE} · {title}" if raw_private else title


# Plots fill the width the page gives them (``responsive``) down to MIN_WIDTH; the heights are
# fixed. Titles are a little smaller than Bokeh's default so that a marked title fits.
MIN_WIDTH, HEIGHT = 300, 360
FONTS = {"title": "11pt", "labels": "10pt", "xticks": "9pt", "yticks": "9pt"}
PALETTE = "Category10"


def _canvas(plot, element):
    """Draw on a 2-D canvas, not WebGL (HoloViews' default): a few thousand points need no GPU,
    and WebGL's read-backs make Chromium log "GPU stall due to ReadPixels" warnings."""
    plot.state.output_backend = "canvas"


CANVAS = [_canvas]


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


def axis_labels(P, mean, names=None):
    """What the two plotted axes are, read from a :func:`projection`: the public first two
    coordinates (their column ``names``, else "feature 0", "feature 1") or the top principal
    directions ("PC 1", "PC 2")."""
    P = np.asarray(P, dtype=float)
    d = P.shape[0]
    names = (
        list(names) if names is not None and len(names) == d else [f"feature {j}" for j in range(d)]
    )
    if d == 1:
        return str(names[0]), ""
    public = np.array_equal(P, np.eye(d)[:, :2]) and not np.any(np.asarray(mean))
    return (str(names[0]), str(names[1])) if public else ("PC 1", "PC 2")


def _project(points, P, mean):
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    out = (pts - mean) @ P
    if out.shape[1] == 1:
        out = np.column_stack([out[:, 0], np.zeros(len(out))])
    return out


def _opts(title, **kw):
    """Common options; the mouse wheel scrolls the page (wheel zoom is a tool to switch on)."""
    return dict(
        title=title,
        responsive=True,
        min_width=MIN_WIDTH,
        height=HEIGHT,
        tools=["hover"],
        active_tools=["pan"],
        fontsize=FONTS,
        hooks=CANVAS,
        **kw,
    )


def _dims(P, mean, soft=None, names=None):
    """The x and y dimensions of a cluster plot, labelled by what the axes are; ``soft``: a
    soft range (an empty plot's axes stay defined, no NaN range in the browser, and widen to
    any data overlaid)."""
    xl, yl = axis_labels(P, mean, names)
    return [
        hv.Dimension("x", label=xl, soft_range=soft or (None, None)),
        hv.Dimension("y", label=yl or "y", soft_range=soft or (None, None)),
    ]


def points(X, labels, P, mean, title, max_points=3000, names=None):
    """Scatter of the projected data, coloured by cluster label (None: grey); the axes say
    which features or which projection are drawn (:func:`axis_labels`)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    idx = np.arange(len(X))
    if len(X) > max_points:
        idx = np.linspace(0, len(X) - 1, max_points).astype(int)
    xy = _project(X[idx], P, mean)
    lab = np.zeros(len(idx), dtype=int) if labels is None else np.asarray(labels)[idx].astype(int)
    data = {"x": xy[:, 0], "y": xy[:, 1], "cluster": lab.astype(str)}
    color = "cluster" if labels is not None else "lightgrey"
    return hv.Points(data, _dims(P, mean, names=names), ["cluster"]).opts(
        color=color, cmap=PALETTE, size=3, alpha=0.6, **_opts(title, show_legend=False)
    )


def empty(title, text="", P=None, mean=None, names=None):
    """Axes without data (on [-1, 1]^2 unless overlaid data widen them), with a note in the
    middle; ``P, mean``: the projection, for the axis labels."""
    P = np.eye(2) if P is None else P
    mean = np.zeros(P.shape[0]) if mean is None else mean
    xdim, ydim = _dims(P, mean, soft=(-1, 1), names=names)
    base = hv.Points([], [xdim, ydim]).opts(**_opts(title))
    if not text:
        return base
    text = "\n".join(textwrap.wrap(text, 30))  # a narrow plot must not clip the note
    return base * hv.Text(0, 0, text, kdims=[xdim, ydim]).opts(
        text_font_size="9pt", text_color="#555"
    )


def centres(C, P, mean, color="black", marker="x", label="centres", names=None):
    xy = _project(C, P, mean)
    return hv.Points({"x": xy[:, 0], "y": xy[:, 1]}, _dims(P, mean, names=names), label=label).opts(
        color=color, marker=marker, size=14, line_width=3
    )


def balls(C, radii, P, mean, color="crimson"):
    """Balls drawn as circles (an orthonormal projection of a ball is a disc of equal radius)."""
    xy = _project(C, P, mean)
    return hv.Overlay(
        [
            hv.Ellipse(float(x), float(y), 2 * float(r)).opts(color=color, line_width=2)
            for (x, y), r in zip(xy, np.ravel(radii), strict=True)
        ]
    )


def directions(bases, P, scale=1.0, names=None):
    """Each subspace's basis vectors as segments through the origin, one colour per cluster."""
    segs = []
    for cluster, U in enumerate(np.asarray(bases)):
        for j in range(U.shape[1]):
            a = _project(scale * U[:, j], P, 0.0)[0]
            segs.append((-a[0], -a[1], a[0], a[1], str(cluster)))
    x, y = _dims(P, np.zeros(P.shape[0]), names=names)
    return hv.Segments(segs, [x, y, x.clone("x1"), y.clone("y1")], ["cluster"]).opts(
        color="cluster", cmap=PALETTE, line_width=3
    )


def distance_heatmap(D, title, xlabel, ylabel):
    """Heatmap of a (k, k') matrix of subspace distances: row i (y axis, ``ylabel i``, from the
    top) is subspace i of this result, column j (x axis, ``xlabel j``) subspace j of the
    reference. Each heatmap keeps its own axes: put several in :func:`grid`."""
    D = np.asarray(D, dtype=float)
    data = [
        (f"{xlabel} {j}", f"{ylabel} {i}", D[i, j])
        for i in range(D.shape[0])
        for j in range(D.shape[1])
    ]
    hm = hv.HeatMap(data, [xlabel, ylabel], "distance").opts(
        cmap="viridis_r",
        colorbar=True,
        responsive=True,
        min_width=MIN_WIDTH,
        height=320,
        title=title,
        tools=["hover"],
        fontsize=FONTS,
        invert_yaxis=True,
        axiswise=True,
        hooks=CANVAS,
    )
    return (hm * _cell_labels(data, [xlabel, ylabel], D.shape)).opts(axiswise=True)


def grid(items, cols=2):
    """Plots side by side, each with its own axes (a shared categorical axis would leave the
    other plots' rows empty)."""
    return hv.Layout(items).cols(cols).opts(shared_axes=False)


def _compact(v):
    """A number short enough for a small cell: 3 significant digits, k/M for large counts."""
    v = float(v)
    if not np.isfinite(v):
        return "–"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    if a >= 1000 or v == int(v):
        return f"{v:.0f}"
    return f"{v:.3g}"


def _cell_labels(data, kdims, shape):
    """Compact cell labels, white on the darker half of the colour scale (high values for the
    colour maps used here), black on the lighter half."""
    vals = np.array([v for *_, v in data], dtype=float)
    finite = vals[np.isfinite(vals)]
    mid = (finite.min() + finite.max()) / 2 if finite.size else 0.0
    size = _cell_font(shape)
    layers = []
    for color, pick in (("white", vals > mid), ("black", ~(vals > mid))):
        rows = [(x, y, _compact(v)) for (x, y, v), keep in zip(data, pick, strict=True) if keep]
        if rows:
            layers.append(
                hv.Labels(rows, kdims, "text").opts(text_color=color, text_font_size=size)
            )
    return hv.Overlay(layers)


def _subtitle(text):
    """A hook adding a second, smaller title line under the plot's title."""

    def hook(plot, element):
        from bokeh.models import Title

        plot.state.add_layout(
            Title(text=text, text_font_size="9pt", text_font_style="italic"), "above"
        )

    return hook


def _cell_font(shape):
    """Cell label size by the number of cells along the longer side."""
    side = max(shape)
    return "10pt" if side <= 4 else "8pt" if side <= 8 else "6pt"


def _ordinal(n):
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def matrix(A, row_order, col_order, title, max_side=300):
    """A (count) matrix reordered by cluster labels, as an image. A side longer than
    ``max_side`` is thinned to every s-th row (column) of the reordered matrix, and the title
    says so."""
    A = A.tocsr() if sp.issparse(A) else np.asarray(A)
    r = np.asarray(row_order)
    c = np.asarray(col_order)
    rs = -(-len(r) // max_side)  # ceil: every rs-th row
    cs = -(-len(c) // max_side)
    r, c = r[::rs], c[::cs]
    M = A[r][:, c]
    M = M.toarray() if sp.issparse(M) else M
    M = np.log1p(np.maximum(M, 0))
    shown = [f"every {_ordinal(s)} {what}" for s, what in ((rs, "row"), (cs, "column")) if s > 1]
    hooks = list(CANVAS)
    if shown:  # the title says the drawing is thinned; a line under it says how
        title = f"{title} (subsampled)"
        hooks.append(
            _subtitle(f"{' and '.join(shown)} shown (of {len(row_order)} x {len(col_order)})")
        )
    return hv.Image(
        M[::-1],
        bounds=(0, 0, M.shape[1], M.shape[0]),
        kdims=["column", "row"],
        vdims=["log(1+count)"],
    ).opts(
        cmap="Blues",
        responsive=True,
        min_width=MIN_WIDTH,
        height=HEIGHT,
        title=title,
        colorbar=True,
        fontsize=FONTS,
        axiswise=True,
        hooks=hooks,
    )


def table(T, title):
    """A contingency table as a heatmap, each cell labelled with its count (compact numbers,
    smaller for larger tables; no labels beyond 16 cells a side)."""
    T = np.asarray(T, dtype=float)
    data = [(f"col {j}", f"row {i}", T[i, j]) for i in range(T.shape[0]) for j in range(T.shape[1])]
    hm = hv.HeatMap(data, ["column cluster", "row cluster"], "count").opts(
        cmap="Oranges",
        colorbar=True,
        responsive=True,
        min_width=MIN_WIDTH,
        height=320,
        title=title,
        tools=["hover"],
        fontsize=FONTS,
        invert_yaxis=True,
        axiswise=True,
        hooks=CANVAS,
    )
    if max(T.shape) > 16:
        return hm
    return (hm * _cell_labels(data, ["column cluster", "row cluster"], T.shape)).opts(axiswise=True)


def tradeoff(df, metric, title):
    """Median and inter-quartile band of a metric over epsilon (log axis), one curve per method:
    a tick labelled at every epsilon of the sweep, padding so that no point sits on the frame,
    the legend beside the plot."""
    if df is None or len(df) == 0:
        return empty(title, "no sweep yet")
    if metric not in df or not np.isfinite(df[metric].to_numpy(dtype=float)).any():
        return empty(title, "no fit of the sweep succeeded")
    overlays = []
    grid_eps = set()
    for method, g in df.groupby("method"):
        s = g.groupby("epsilon")[metric].describe()
        eps = s.index.to_numpy(dtype=float)
        grid_eps.update(eps.tolist())
        overlays.append(
            hv.Spread(
                (eps, s["50%"], s["50%"] - s["25%"], s["75%"] - s["50%"]),
                "epsilon",
                [metric, "lo", "hi"],
            ).opts(alpha=0.2)
        )
        overlays.append(
            hv.Curve((eps, s["50%"]), "epsilon", metric, label=str(method)).opts(line_width=2)
            * hv.Scatter((eps, s["50%"]), "epsilon", metric).opts(size=6)
        )
    ticks = [(e, f"{e:g}") for e in sorted(grid_eps)]
    return hv.Overlay(overlays).opts(
        logx=True,
        responsive=True,
        min_width=480,
        height=380,
        title=title,
        xlabel="ε",
        xticks=ticks,
        padding=0.08,
        legend_position="right",
        show_grid=True,
        fontsize=FONTS,
        hooks=CANVAS,
    )
