"""The served page's log: a Python warning (an estimator's PrivacyWarning, a Bokeh warning) is
one line, ``Category: message``, not the warning with its source context; so is a message the
server was still sending to a page that had just closed.

The handler lives in this importable module, not in ``page.py``: ``panel serve`` runs page.py
as a fresh module per session and clears that module when the session ends, so a handler
defined there would lose its globals and fail inside whatever later session warned.
"""

import asyncio
import logging
import warnings

from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

log = logging.getLogger("py.warnings")
server_log = logging.getLogger("privclust.server")
CLOSED_PAGE = "a page closed while the server was still sending to it"


def _one_line(message, category, filename, lineno, file=None, line=None):
    log.warning("%s: %s", category.__name__, message)


def warnings_as_one_line():
    """Route every Python warning of this process to the log as one line (idempotent)."""
    warnings.showwarning = _one_line


def closed_pages_as_one_line(loop=None):
    """Log a send to a page that has just closed as one line on the event loop (idempotent).

    Bokeh writes to a page's websocket without awaiting the write; when the page has closed in
    between, tornado's write fails with ``WebSocketClosedError`` and asyncio logs "Task exception
    was never retrieved" with two tracebacks. Nothing was lost (the page is gone), so it becomes
    one line; every other exception goes to the loop's previous handler, tracebacks included.
    """
    loop = loop or asyncio.get_event_loop()
    previous = loop.get_exception_handler()
    if getattr(previous, "closed_pages_as_one_line", False):
        return

    def handler(loop, context):
        if isinstance(context.get("exception"), (WebSocketClosedError, StreamClosedError)):
            server_log.info(CLOSED_PAGE)
        elif previous is None:
            loop.default_exception_handler(context)
        else:
            previous(loop, context)

    handler.closed_pages_as_one_line = True
    loop.set_exception_handler(handler)
