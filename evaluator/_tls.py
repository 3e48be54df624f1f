"""The TLS context of the process's HTTP clients, one per trust store: loading a CA bundle costs some
50 ms of CPU and 0.8 MB, and a connected run has three clients that verify servers (the judge's,
Langfuse's API and the span exporter).

Both HTTP libraries in the process (the judge's `httpx2`, through `openai`, and Langfuse's `httpx`)
trust first the bundle or folder SSL_CERT_FILE or SSL_CERT_DIR names, and both load it the same way;
that context is made once for both. Without either setting each keeps its own default store (certifi's
bundle for `httpx`, the system's for `httpx2`), made once by its caller. Every client that shares a
context speaks HTTP/1.1: httpcore sets the context's protocols (ALPN) at each connection."""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Callable

__all__ = ["shared_context"]


def shared_context(library_default: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
    """The context the environment's trust store names (shared), else `library_default()`."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
    if cafile is None and capath is None:
        return library_default()
    return _named(cafile, capath)


@functools.cache
def _named(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=cafile, capath=capath)
