"""Input safety for the dashboard: upload limits, parsing through ``privclust.core.data.load``,
escaping of user-controlled text (file names, column names and values are shown in the page,
so they are escaped before they reach HTML).
"""

import html
import os
import re

from . import config

UPLOAD_EXTENSIONS = (".csv", ".tsv", ".txt", ".npy", ".npz", ".mtx")


class UploadError(ValueError):
    """A rejected upload; the message is plain text (escape it with :func:`escape` to render)."""


def escape_html(text):
    """HTML-escape a user-derived string for ``pn.pane.HTML`` / HTML attributes."""
    return html.escape(str(text), quote=True)


def escape(text):
    """Escape a user-derived string for ``pn.pane.Markdown`` / ``pn.pane.Alert``.

    HTML is escaped, then Markdown punctuation that could build links, images (a remote request)
    or formatting is backslash-escaped, so the text renders literally.
    """
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]()!|#~{}])")


def max_upload_bytes():
    """Server-side upload cap in bytes (env ``PRIVCLUST_MAX_UPLOAD_MB``, default 50 MB)."""
    return config.max_upload_bytes()


def parse_upload(filename, payload, max_bytes=None, label_column=None):
    """Validate and parse one uploaded file into a private :class:`~privclust.core.data.Dataset`.

    ``payload`` is bytes (or str: FileDropper decodes text mime types); ``label_column``: a
    CSV/TSV column of labels by header name. Everything goes through
    ``privclust.core.data.load`` from an in-memory buffer (never a path built from the name, no
    pickle, no decompression). Any failure becomes :class:`UploadError` with an escaped message.
    """
    from privclust.core.data import load

    name = os.path.basename(str(filename or "upload"))
    limit = max_upload_bytes() if max_bytes is None else int(max_bytes)
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    if not isinstance(payload, (bytes, bytearray)):
        raise UploadError(f"{name}: no file content received")
    if len(payload) > limit:
        raise UploadError(
            f"{name}: file is {len(payload) / 2**20:.1f} MB, larger than "
            f"the server limit of {limit / 2**20:.1f} MB"
        )
    if len(payload) == 0:
        raise UploadError(f"{name}: the file is empty")
    ext = os.path.splitext(name.lower())[1]
    if ext not in UPLOAD_EXTENSIONS:
        raise UploadError(
            f"{name}: unsupported file type {ext or '(none)'}; "
            f"use one of {', '.join(UPLOAD_EXTENSIONS)}"
        )
    fmt = {".txt": "csv"}.get(ext, ext.lstrip("."))
    try:
        dataset = load(
            bytes(payload), format=fmt, name=name, max_bytes=limit, label_column=label_column
        )
    except (ValueError, TypeError, OSError, UnicodeDecodeError) as exc:
        text = str(exc)
        raise UploadError(text if name in text else f"{name}: {text}") from None
    except Exception:  # noqa: BLE001 -- never show a traceback or internals
        raise UploadError(f"{name}: the file could not be read") from None
    dataset.public = False
    return dataset
