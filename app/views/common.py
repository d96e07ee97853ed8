"""What every view shares: the :class:`View` base (a ``pn.viewable.Viewer`` of one session's
:class:`~privclust.app.state.Lab`), Markdown and teaching boxes, the size-capped upload drop zone, and the public size line of a
dataset."""

import panel as pn
import param

from ..safety import max_upload_bytes
from ..server.panel_compat import BoundedFileDropper
from ..state import Lab
from . import plots


def md(text, **kw):
    """A full-width Markdown pane (escape user-derived text before passing it)."""
    return pn.pane.Markdown(text, sizing_mode="stretch_width", **kw)


class View(pn.viewable.Viewer):
    """A view of one session's :class:`Lab`: it reads the models, never another view's members."""

    lab = param.ClassSelector(class_=Lab)


def upload_dropper(on_file, on_reject, filetypes, css_class):
    """A one-file drop zone capped at the server's upload limit (in the browser and on the
    server): ``on_file(name, payload)`` on a complete file, ``on_reject(name, message)`` on one
    over the limit."""
    limit = max_upload_bytes()
    dropper = BoundedFileDropper(
        limit,
        on_reject=on_reject,
        accepted_filetypes=list(filetypes),
        multiple=False,
        max_file_size=f"{limit / 2**20:g}MB",
        sizing_mode="stretch_width",
        css_classes=[css_class],
    )

    def changed(event):
        if event.new:
            on_file(*list(event.new.items())[-1])

    dropper.param.watch(changed, "value")
    return dropper


def teach(text):
    """A teaching box (trusted static Markdown) shown above a view."""
    return pn.pane.Markdown(text, css_classes=["pc-teach"], sizing_mode="stretch_width")


def hidden(title):
    """An empty plot saying that it would be computed on raw data."""
    return plots.empty(title, "hidden: computed on raw data (data owner view)")


def size_text(lab, ds):
    """ "n records x d features". For private data outside the data owner view the number of
    records is shown only when the Curator says it is public (``public_facts``: under the
    replace-one unit n is public; under add/remove it is private)."""
    if lab.raw_allowed(ds):
        return f"{ds.n_samples} records x {ds.n_features} features"
    facts = lab.ledger.public_facts() if lab.ledger.dataset is ds else {}
    if "n_samples" in facts:
        return (
            f"{facts['n_samples']} records x {ds.n_features} features (the number of "
            "records is public under the replace-one ledger)"
        )
    return f"{ds.n_features} features, number of records hidden (the data owner view shows it)"
