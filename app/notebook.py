"""The page settings every privclust notebook applies after loading its extensions.

The first code cell of each notebook calls ``hv.extension(..., inline=True)`` and
``pn.extension(..., inline=True)`` (Bokeh, HoloViews and Panel JavaScript from the kernel, not from
a CDN) and then :func:`configure_page`. Nothing here changes what a notebook computes; it changes
only how its plots and widgets reach the browser:

- **own axes**: ``panel serve`` shows every cell on one page and Panel links the axes of all
  plots whose dimensions share a name across a page (``linked_axes``), so every "release"
  histogram got the income example's range; each plot keeps its own axes, as in JupyterLab;
- **canvas, not WebGL**: a few thousand points need no GPU, and WebGL's read-backs make the
  browser log "GPU stall due to ReadPixels" warnings on machines without one;
- **no other host**: a privacy lab must work offline and tell no third party that someone is
  looking at private data (:mod:`privclust.app.server.panel_compat`: no web font when served,
  inlined stylesheets in a kernel).
"""

import holoviews as hv
import panel as pn

from .server import panel_compat

_DONE = False


def configure_page():
    """Apply the settings above once per process (idempotent)."""
    global _DONE
    if _DONE:
        return
    pn.pane.HoloViews.param.linked_axes.default = False
    hv.renderer("bokeh").webgl = False
    # under `panel serve` the notebook runs inside a server session
    served = pn.state.curdoc is not None and pn.state.curdoc.session_context is not None
    if served:
        panel_compat.no_web_font()
    elif pn.config.inline:
        panel_compat.inline_updated_stylesheets()
    _DONE = True
