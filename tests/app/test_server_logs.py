"""The server log: a send to a page that has just closed is one line, not two tracebacks; any
other exception on the event loop keeps its traceback."""

import asyncio
import logging

from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

from privclust.app.server import logs


def _report(loop, exc):
    loop.call_exception_handler({"message": "Task exception was never retrieved", "exception": exc})


def test_a_closed_page_is_one_line_and_other_errors_keep_their_traceback(caplog):
    loop = asyncio.new_event_loop()
    try:
        logs.closed_pages_as_one_line(loop)
        logs.closed_pages_as_one_line(loop)  # idempotent: one handler, not a chain of two
        caplog.set_level(logging.INFO)
        for exc in (WebSocketClosedError(), StreamClosedError()):
            _report(loop, exc)
        closed = [r for r in caplog.records if r.getMessage() == logs.CLOSED_PAGE]
        assert len(closed) == 2 and all(r.exc_info is None for r in closed)
        assert "Traceback" not in caplog.text
        caplog.clear()
        try:
            raise ValueError("a real failure")
        except ValueError as exc:
            _report(loop, exc)
        (record,) = caplog.records
        assert record.levelno == logging.ERROR and record.exc_info[0] is ValueError
        assert "Traceback" in caplog.text and "a real failure" in caplog.text
    finally:
        loop.close()


def test_the_previous_handler_still_hears_other_errors():
    loop = asyncio.new_event_loop()
    heard = []
    try:
        loop.set_exception_handler(lambda loop, context: heard.append(context["exception"]))
        logs.closed_pages_as_one_line(loop)
        _report(loop, WebSocketClosedError())
        _report(loop, KeyError("x"))
        assert [type(e) for e in heard] == [KeyError]
    finally:
        loop.close()
