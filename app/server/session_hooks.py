"""Hooks into the browser session a component is built in (no-ops outside a server session).

``pn.state.on_session_destroyed`` called outside a session (a notebook, a test, the warm-up's
throw-away page) appends the callback to a process-wide list that Panel registers on *every*
later session; inside a session, Bokeh refuses a callback unless it takes exactly one required
argument (a callback with an optional argument is refused silently, and whatever it should have
stopped outlives the closed tab). :func:`on_session_end` avoids both.
"""

import panel as pn


def in_session():
    """Is this code running while a server session's document is being built or updated?"""
    return pn.state.curdoc is not None and pn.state.curdoc.session_context is not None


def on_session_end(*callbacks):
    """Call each ``callback(session_context)`` when this browser session ends."""
    if not in_session():
        return
    for cb in callbacks:
        pn.state.on_session_destroyed(_one_argument(cb))


def _one_argument(cb):
    def on_end(session_context):
        cb(session_context)

    return on_end
