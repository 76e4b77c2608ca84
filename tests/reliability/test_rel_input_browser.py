"""One real-browser check of bad input: a message carrying a markdown image, a reference
image and a raw <img> pointing at a local server is shown in every column, the page is
reloaded (the transcript is drawn again from the database), and neither the browser nor
the server saw a single request for those images (a tracking pixel would be one)."""

from __future__ import annotations

import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import Page, expect

from backends.registry import backend_names
from tests.browser.conftest import browser, lab_url, page  # noqa: F401  (the browser harness' fixtures)
from tests.browser.test_lab_in_browser import REPLY, create_user, send, settle

pytestmark = pytest.mark.browser
expect.set_options(timeout=60_000)


class _Counting(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        type(self).hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, *args) -> None:
        return None


@pytest.fixture()
def pixel_server():
    _Counting.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Counting.hits
    finally:
        server.shutdown()
        server.server_close()


def test_images_in_a_message_are_never_fetched(lab_url, page: Page, pixel_server, record_figure) -> None:  # noqa: F811
    port, hits = pixel_server
    host = f"127.0.0.1:{port}"
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url) if host in request.url else None)
    page.goto(lab_url)
    user = f"pixel-{uuid.uuid4().hex[:6]}"
    create_user(page, user)
    message = (f"Look ![pixel](http://{host}/pixel.png) and ![ref][r] and <img src=\"http://{host}/raw.png\">\n\n"
               f"[r]: http://{host}/ref.png")
    send(page, message)
    replies = page.get_by_test_id("stChatMessage").filter(has_text=REPLY)
    expect(replies).to_have_count(len(backend_names()))
    settle(page)
    page.wait_for_timeout(1_500)
    page.reload()
    picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="User")
    picker.click()
    picker.fill(user)
    picker.press("Enter")
    expect(picker).to_have_value(user)
    expect(page.get_by_test_id("stChatMessage").filter(has_text="Look").first).to_be_visible()
    settle(page)
    page.wait_for_timeout(1_500)
    shown = page.get_by_test_id("stChatMessage").filter(has_text="Look").first.inner_text()
    seen = requested + hits
    problems = [f"{name} fetched {sum(name in url for url in seen)} times" for name in ("pixel.png", "ref.png", "raw.png")
                if any(name in url for url in seen)]
    if "pixel" not in shown:
        problems.append("the image's text is not shown")
    record_figure("browser: image URLs in a message (markdown, reference, raw <img>) fetched", 3, problems)
