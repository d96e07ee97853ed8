"""A HoloViews figure on a server page, redrawn in place when only its data change.

Building a new figure for every result costs the server HoloViews' ``get_plot`` and the
serialisation of ~100 Bokeh models, and the browser their views: most of a class's CPU while
its students move the ε slider. :class:`LiveFigure` instead keeps a second, *shadow* plot off
the page (HoloViews ``DynamicMap`` s redrawn by one stream, in a document of its own: no
session, no events), redraws it for the new frames, and copies only the properties that
changed (column data, titles, ranges) into the figure on the page. Its caller runs it on the
session's thread (a next-tick callback: Bokeh's normal path for a document change, which the
live Gibbs view uses too). HoloViews' own in-place redraw of a figure on the page (a
``DynamicMap`` triggered from the worker thread) lost an ε step's update under load.

A figure whose layers differ (another algorithm, the data owner view), a page not served by a
Bokeh server (notebooks) or a figure not yet on the page gets a new figure, as before.

The shadow of a result on public data (the synthetic demo sets) is shared by every session of
the process that shows the same layers: a page's first in-place redraw then builds no plot (a
HoloViews ``get_plot``, about 0.3 s of the server's one IO thread, which a class's ten first
slider moves used to pay one after another). A new figure of a public result is a copy of that
shadow's models (:func:`clone`): the shadow's redraw and the copy take half the CPU of the plot
they replace (benchmarks/app/first_figure.py), the largest part of the server's work per new
page while a class opened its pages together (py-spy on benchmarks/app/load.py). A
result on private data always gets a shadow of its own and a figure built for it: a shadow
keeps what it last drew wherever a redraw does not overwrite it, and that must never be another
session's private data.
"""

import collections
import contextlib
import dataclasses
import itertools
import logging
import warnings

import holoviews as hv
import numpy as np
import pandas as pd
from bokeh.document import Document
from bokeh.model import Model
from bokeh.util.warnings import BokehDeprecationWarning

log = logging.getLogger(__name__)

_Redraw = hv.streams.Stream.define("Redraw", version=0)

# the _Plot shadows of public results, shared by all sessions (key: a serial number; most
# recently used last); a shadow in use is taken out, so no two redraws ever draw on one. Several
# per layers: a class's slider steps go back and forth over a few demo results, and a shadow
# that shows a step's result already is compared (~7 ms), not redrawn (~90 ms, a third of the
# server's work per step: py-spy of a served page while its epsilon slider moved)
PUBLIC_SHADOWS = collections.OrderedDict()
PUBLIC_SHADOWS_MAX = 24
PUBLIC_SHADOWS_PER_LAYERS = 8
_SERIAL = itertools.count()


def layers(frames):
    """The kinds of each frame's layers: a shadow plot redraws only frames with the same."""
    out = []
    for frame in frames:
        items = frame.values() if isinstance(frame, hv.Overlay) else [frame]
        out.append(tuple((type(el).__name__, el.group, el.label) for el in items))
    return tuple(out)


def layout(frames):
    """The page's layout of the frames: side by side on shared axes."""
    return hv.Layout(list(frames)).opts(shared_axes=True)


class LiveFigure:
    """One figure on a page (``model``, from :func:`layout` of ``frames``) and what redraws it.
    ``public``: the frames show only public data (a demo set), and the figure is a copy of the
    process's shared shadow of their layers, redrawn for them.

    Build and redraw it on the session's thread only: HoloViews switches Bokeh's property
    validation off process-wide while it updates column data, and a model built meanwhile on
    another thread keeps unconverted values (a figure's title left a string)."""

    def __init__(self, frames, public=False):
        self.layers = layers(frames)
        self._shadow = None  # this figure's own _Plot (private results), built at its first redraw
        if not public:
            self.model = _Plot(frames).model
            return
        shadow = _draw_public(frames)
        self.model = clone(shadow.model)
        _share(shadow)

    def redraw(self, frames, public=False):
        """Show ``frames`` in this figure; False when it cannot (then the caller builds a new
        figure): other layers, not on a server page, or models that do not match. ``public``:
        the frames show only public data (a demo set), so the process's shared shadow of these
        layers may draw them."""
        doc = self._page()
        if layers(frames) != self.layers or doc is None or doc.session_context is None:
            return False
        shadow = None if public else self._shadow
        try:
            if public:
                shadow = _draw_public(frames)
            elif shadow is None:
                shadow = _Plot(frames)
            else:
                shadow.draw(frames)
            found = changes(self.model, shadow.model)
        except Exception:  # noqa: BLE001 -- a new figure shows the result all the same
            log.warning("in-place redraw failed", exc_info=True)
            shadow, found = None, None
        if not public:
            self._shadow = shadow
        elif shadow is not None:
            _share(shadow)
        if found is None:
            return False
        apply(found)
        return True

    def _page(self):
        """The document of the page showing this figure (None before it is shown)."""
        return self.model.document


def _draw_public(frames):
    """A shared shadow showing ``frames`` of public data, taken out of the shared ones: one that
    shows them already, else a new plot while its layers have fewer than
    ``PUBLIC_SHADOWS_PER_LAYERS`` shadows, else the least recently used of them, redrawn."""
    kind, shows = layers(frames), content(frames)
    same = [key for key, shadow in PUBLIC_SHADOWS.items() if shadow.layers == kind]
    showing = next((k for k in reversed(same) if _equal(PUBLIC_SHADOWS[k].shows, shows)), None)
    if showing is not None:
        return PUBLIC_SHADOWS.pop(showing)
    if len(same) < PUBLIC_SHADOWS_PER_LAYERS:
        return _Plot(frames)
    shadow = PUBLIC_SHADOWS.pop(same[0])
    shadow.draw(frames, shows)
    return shadow


def _share(shadow):
    """Put a public shadow (back) among the shared ones, most recently used last."""
    PUBLIC_SHADOWS[next(_SERIAL)] = shadow
    while len(PUBLIC_SHADOWS) > PUBLIC_SHADOWS_MAX:
        PUBLIC_SHADOWS.popitem(last=False)


class _Plot:
    """A HoloViews plot of ``frames`` (one ``DynamicMap`` each, redrawn by one stream): the
    figure on the page and its shadow are built alike, so that their models correspond."""

    def __init__(self, frames):
        self._frames = list(frames)
        self.layers = layers(frames)
        self.shows = content(frames)  # before plotting: a plot adds options to its elements
        self._stream = _Redraw()
        maps = [
            hv.DynamicMap(lambda version, i=i: self._frames[i], streams=[self._stream]).opts(
                framewise=True
            )
            for i in range(len(self._frames))
        ]
        plot = hv.renderer("bokeh").get_plot(layout(maps))
        # a document of its own: in a session HoloViews takes the session's (``curdoc``) and
        # hooks the session's end, a hook that unhooks itself while Panel iterates the hooks
        plot.document = Document()
        self.model = plot.state

    def draw(self, frames, shows=None):
        """Redraw for ``frames`` (``shows``: their :func:`content`, when known); nothing to do
        when they show what the plot shows already (the pages of a class open on one demo
        result: 7 ms to compare, 90 ms to redraw, benchmarks/app/first_figure.py)."""
        shows = content(frames) if shows is None else shows
        if _equal(shows, self.shows):
            return
        self._frames[:] = frames
        self._stream.event(version=self._stream.version + 1)  # DynamicMaps memoize on it
        self.shows = shows


def content(frames):
    """What a plot of ``frames`` shows, as values :func:`_equal` compares: each element's type,
    parameters (dimensions, text, position), data and options. A value of another kind (none in
    this app's figures today) never compares equal, and a hook compares by identity: at worst a
    plot is redrawn for frames it already shows."""
    return [_content(frame) for frame in frames]


def _content(element):
    if isinstance(element, hv.Overlay):
        data = [_content(layer) for layer in element.values()]
    else:
        data = _plain(element.data)
    params = {k: _plain(v) for k, v in element.param.values().items() if k != "name"}
    options = (element.opts.get().kwargs, element.opts.get("norm").kwargs)
    return type(element), params, data, _plain(options)


def _plain(value):
    if isinstance(value, hv.Dimension):
        return {k: _plain(v) for k, v in value.param.values().items()}
    if isinstance(value, pd.DataFrame):
        return [list(value.columns), value.index.to_numpy()] + [
            value[c].to_numpy() for c in value.columns
        ]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [type(value)] + [_plain(v) for v in value]
    if isinstance(value, (*_SCALARS, np.generic, np.ndarray, type)) or callable(value):
        return value
    return object()  # equal to nothing


def changes(live, new):
    """The (model, property, value) settings that make the model graph ``live`` show what
    ``new`` shows, or None when the two graphs differ in shape (model types, lists of models,
    shared references). Only properties set on either model are compared: both are built by
    the same code, and a property left at its default in both is equal. Values are copied:
    ``new`` is redrawn for the next result."""
    pairs = {}
    with warnings.catch_warnings():  # reading every property reads deprecated ones too
        warnings.simplefilter("ignore", BokehDeprecationWarning)
        if not _pair(live, new, pairs):
            return None
        out = []
        for a, b in pairs.values():
            for name in _set(a).keys() | _set(b).keys():
                if b.lookup(name).property.readonly:  # the browser's (sizes it measured)
                    continue
                old, value = getattr(a, name), getattr(b, name)
                if not (_has_model(old) or _has_model(value) or _equal(old, value)):
                    out.append((a, name, _copy(value)))
    return out


_SCALARS = (str, int, float, bool, type(None))
_LEAVES = (*_SCALARS, np.generic, np.ndarray)


def clone(root):
    """A copy of the model graph under ``root`` with new models (new ids, no document), built from
    the properties set on each model, as :func:`changes` reads them: the copy pairs with the
    original model for model, and later redraws of the original's plot copy into it. Shared
    models stay shared, cycles (a callback whose arguments name its plot) stay cycles."""
    copies = {}

    def copy(value):
        if isinstance(value, Model):
            if id(value) not in copies:
                cls = type(value)
                new = copies[id(value)] = cls.__new__(cls)  # known before its references
                # the defaults made on first use too (a figure's toolbar, which holds its tools)
                props = {**value._unstable_default_values, **_set(value)}
                # Model's own initialiser: bokeh's figure() would add tools and axes
                Model.__init__(
                    new,
                    **{
                        name: copy(v)
                        for name, v in props.items()
                        if not value.lookup(name).property.readonly
                    },
                )
            return copies[id(value)]
        if isinstance(value, (list, tuple)):
            if all(isinstance(v, _SCALARS) for v in value):  # a column of labels or colours
                return type(value)(value)
            return type(value)(copy(v) for v in value)
        if isinstance(value, dict):
            return {k: copy(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: copy(getattr(value, f.name)) for f in dataclasses.fields(value)}
            return dataclasses.replace(value, **fields)  # a field spec with a transform
        return value.copy() if isinstance(value, np.ndarray) else value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BokehDeprecationWarning)
        return copy(root)


def apply(found):
    """Set what :func:`changes` found (each setting is a patch to the page)."""
    for model, name, value in found:
        setattr(model, name, value)


def _set(model):
    """The properties set on ``model`` (Bokeh's own record of them: its public
    ``properties_with_values`` computes every default and costs ~100x more)."""
    return model._property_values


def _pair(a, b, pairs):
    """Walk both graphs in step, recording each ``new`` model's live counterpart."""
    if isinstance(b, Model):
        if type(a) is not type(b):
            return False
        if id(b) in pairs:
            return pairs[id(b)][0] is a  # a shared model stays shared
        pairs[id(b)] = (a, b)
        # the new graph's references only: Panel may add its own to the page's models (the
        # design's stylesheets), which :func:`changes` leaves alone
        return all(_pair(getattr(a, n), v, pairs) for n, v in _set(b).items() if _has_model(v))
    if dataclasses.is_dataclass(b):  # a field spec with a transform (a colour mapper)
        if type(a) is not type(b):
            return False
        for f in dataclasses.fields(b):
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if not (_pair(va, vb, pairs) if _has_model(vb) else _equal(va, vb)):
                return False
        return True
    if isinstance(b, (list, tuple)):
        return (
            isinstance(a, (list, tuple))
            and len(a) == len(b)
            and all(_pair(x, y, pairs) for x, y in zip(a, b, strict=True))
        )
    if isinstance(b, dict):
        return (
            isinstance(a, dict)
            and a.keys() == b.keys()
            and all(_pair(a[k], b[k], pairs) for k in b)
        )
    return _equal(a, b)


def _has_model(value):
    """Whether ``value`` holds a Bokeh model (in a list, dict or field spec). Scalars and arrays
    are skipped without a call: a plot's column data are lists of thousands of them, and
    walking each one was most of a slider step's :func:`changes` (py-spy on a served page)."""
    if isinstance(value, _LEAVES):
        return False
    if isinstance(value, Model):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_model(v) for v in value if not isinstance(v, _LEAVES))
    if isinstance(value, dict):
        return any(_has_model(v) for v in value.values() if not isinstance(v, _LEAVES))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_model(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return False
        with contextlib.suppress(TypeError, ValueError):  # arrays inside: compared one by one
            if a == b:  # a column of labels in one call; NaNs only one by one, below
                return True
        return all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if isinstance(v, _SCALARS) else _copy(v) for v in value]
    return value
