"""Serve a built site on 127.0.0.1 and drive Debian's chromium with Playwright."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
# No background networking: this machine has no network, and the site must not need one.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on a free loopback port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# What a page scrolls sideways by, and how tall it is: its scrolling width against the width in view (the
# document's and the body's, since either can be the one that overflows), and its full height; CSS px.
_SIZE = """() => ({scroll: document.scrollingElement.scrollWidth, width: document.scrollingElement.clientWidth,
                  bodyScroll: document.body.scrollWidth, height: document.scrollingElement.scrollHeight})"""


def page_size(page: object) -> dict[str, int]:
    """``scroll``, ``bodyScroll``, ``width`` and ``height`` of the page open in ``page`` (a Playwright page)."""
    return page.evaluate(_SIZE)  # type: ignore[attr-defined]


def scrolls_sideways(size: dict[str, int]) -> bool:
    """Whether a page of :func:`page_size` is wider than the screen it is in."""
    return max(size["scroll"], size["bodyScroll"]) > size["width"]
