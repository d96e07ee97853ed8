"""The page's notice when its server connection is lost: the page then changes nothing (a slider
moved is never computed) and said nothing; the notice says so and offers a reload."""

import param
from panel.reactive import ReactiveHTML


class LostNotice(ReactiveHTML):
    """Hidden until Bokeh's client reports ``connection_lost`` (the websocket closed: the server
    stopped, restarted or is unreachable); then a bar fixed at the top of the window says that
    nothing on the page works any more and offers a reload (a restarted server gives a fresh
    session; the page's old one is gone)."""

    text = param.String(
        default="The connection to the server was lost: this page no longer computes anything."
    )

    _template = """
<div id="notice" class="pc-lost" role="alert" aria-live="assertive" hidden>
  <span id="message">${text}</span>
  <button id="reload" type="button" onclick="${script('reload')}">Reload the page</button>
</div>"""

    _scripts = {
        "render": """
          const doc = view.model.document;
          if (doc != null)
            doc.on_event('connection_lost', () => { notice.hidden = false; });
        """,
        "reload": "window.location.reload();",
    }

    _stylesheets = [
        """
.pc-lost { position: fixed; top: 0; left: 0; right: 0; z-index: 10000; padding: 12px 20px;
  background: #8b1a1a; color: #fff; font-size: 16px; display: flex; gap: 16px;
  align-items: center; justify-content: center; box-shadow: 0 2px 6px rgba(0, 0, 0, .4); }
.pc-lost[hidden] { display: none; }
.pc-lost button { font-size: 15px; padding: 4px 14px; border-radius: 4px; border: none;
  background: #fff; color: #8b1a1a; font-weight: bold; cursor: pointer; }
"""
    ]
