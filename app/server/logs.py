"""The served page's log: a Python warning (an estimator's PrivacyWarning, a Bokeh warning) is
one line, ``Category: message``, not the warning with its source context.

The handler lives in this importable module, not in ``page.py``: ``panel serve`` runs page.py
as a fresh module per session and clears that module when the session ends, so a handler
defined there would lose its globals and fail inside whatever later session warned.
"""

import logging
import warnings

log = logging.getLogger("py.warnings")


def _one_line(message, category, filename, lineno, file=None, line=None):
    log.warning("%s: %s", category.__name__, message)


def warnings_as_one_line():
    """Route every Python warning of this process to the log as one line (idempotent)."""
    warnings.showwarning = _one_line
