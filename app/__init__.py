"""privclust.app: the Panel dashboard (param models, Viewer views, the served page).

``privclust serve`` / ``panel serve app/page.py`` serves it; in a notebook, call
``pn.extension()`` and display ``create_app()`` or single views such as ``ClustersView(lab=Lab())``.
"""


def create_app(*args, **kwargs):
    """The dashboard page for one session (see :func:`privclust.app.page.create_app`)."""
    from .page import create_app as _create_app
    return _create_app(*args, **kwargs)


__all__ = ["create_app"]
