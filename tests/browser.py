"""Headless Chromium for the end-to-end tests of pages (the HTML report, the viewer): the
system's Chromium (Debian `chromium`) driven by Playwright, every console error and page error
collected, screenshots saved under build/test-output/screenshots/ for people to look at."""
import shutil
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "build" / "test-output" / "screenshots"


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("no Chromium found (scripts/install-deps.sh installs Debian's chromium)")


class Page:
    """A Playwright page plus the console and page errors it produced."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path


@contextmanager
def open_page(width=1400, height=900):
    """Yields a fresh `Page` in headless Chromium; offline: every request that leaves
    127.0.0.1 or file:// is aborted and counted as an error."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(),
                                    args=["--no-sandbox", "--disable-gpu"])
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = Page(context.new_page())

            def only_local(route):
                url = route.request.url
                if url.startswith(("file://", "http://127.0.0.1", "data:", "blob:", "about:")):
                    route.continue_()
                else:
                    page.errors.append(f"network request outside the machine: {url}")
                    route.abort()

            context.route("**/*", only_local)
            yield page
        finally:
            browser.close()
