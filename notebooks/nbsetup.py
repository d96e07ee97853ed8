"""The page settings every privclust notebook applies after loading its extensions.

The first code cell of each notebook calls ``hv.extension(..., inline=True)`` and
``pn.extension(..., inline=True)`` (Bokeh, HoloViews and Panel JavaScript from the kernel, not from
a CDN) and then :func:`configure_page`. This module lives beside the notebooks: JupyterLab, nbclient
and ``panel serve`` all run a notebook in its own folder, so ``import nbsetup`` finds it.

Nothing here changes what a notebook computes; it changes only how its plots and widgets reach
the browser:

- **own axes**: ``panel serve`` shows every cell on one page and Panel links the axes of all
  plots whose dimensions share a name across a page (``linked_axes``), so every "release"
  histogram got the income example's -2e5..4e5; each plot keeps its own axes, as in JupyterLab;
- **canvas, not WebGL**: a few thousand points need no GPU, and WebGL's read-backs make the
  browser log "GPU stall due to ReadPixels" warnings on machines without one;
- **no other host**: a privacy lab must work offline and tell no third party that someone is
  looking at private data. Served, Panel's notebook page template asks Google for its web font;
  in a kernel, Panel 1.9 inlines stylesheets when it first draws an output but points the
  stylesheets of every later update of a pane (a Markdown or Alert text changing) at
  cdn.holoviz.org (reported upstream: github.com/holoviz/panel/issues/7073); those are sent
  as ``data:`` URLs of Panel's own files.
"""
import base64

import holoviews as hv
import panel as pn

_DONE = False


def configure_page():
    """Apply the settings above once per process (idempotent)."""
    global _DONE
    if _DONE:
        return
    pn.pane.HoloViews.param.linked_axes.default = False
    hv.renderer("bokeh").webgl = False
    # under `panel serve` the notebook runs inside a server session (pn.state.served would
    # look at this module's name, not the notebook's)
    served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
    if served:
        pn.template.EditableTemplate._resources["css"].pop("lato", None)
    elif pn.config.inline:
        _inline_updated_stylesheets()
    _DONE = True


def _inline_updated_stylesheets():
    """In a kernel: a stylesheet Panel would point at its CDN (no ``dist_url`` is known for an
    output's document), or at its server path, becomes a ``data:`` URL holding the same file from Panel's installed
    ``dist`` folder. Panel 1.9.4 calls ``patch_stylesheet`` from ``panel.reactive`` (imported
    there by name, in ``Syncable._get_properties`` and ``_update_model``) and from
    ``panel.io.resources`` (looked up at call time by ``panel.theme.base``); both names are
    replaced, and nothing is replaced on a Panel without the function."""
    from panel import reactive
    from panel.io import resources

    original = getattr(resources, "patch_stylesheet", None)
    if original is None or getattr(original, "_privclust_inline", False):
        return

    def patch_stylesheet(stylesheet, dist_url):
        try:
            url = stylesheet.url
        except Exception:
            url = None
        if dist_url == resources.CDN_DIST and isinstance(url, str):
            for prefix in (resources.CDN_DIST, resources.LOCAL_DIST):
                if not url.startswith(prefix):
                    continue
                path = resources.DIST_DIR / url[len(prefix):].split("?")[0]
                if path.is_file():
                    data = base64.b64encode(path.read_bytes()).decode("ascii")
                    stylesheet.url = f"data:text/css;base64,{data}"
                    return None
        return original(stylesheet, dist_url)

    patch_stylesheet._privclust_inline = True
    resources.patch_stylesheet = reactive.patch_stylesheet = patch_stylesheet
