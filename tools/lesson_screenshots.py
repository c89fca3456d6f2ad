"""The site's pictures of the lesson file (docs/img/): `python -m macaron lesson` with its defaults, opened from
file:// in Debian's Chromium at 1280×720 with the network off, and two pages of its printed handout.

    .venv/bin/python tools/lesson_screenshots.py      (needs /usr/bin/chromium and pdftoppm: poppler-utils)
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from macaron.__main__ import main as cli  # noqa: E402
from served import ARGS, CHROMIUM  # noqa: E402


def main() -> None:
    from playwright.sync_api import sync_playwright

    docs = ROOT / "docs" / "img"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "lesson.html"
        assert cli(["lesson", "--out", str(out)]) == 0
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)
            outside = []
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://")
                          else (outside.append(r.request.url), r.abort()))
            page = context.new_page()
            page.goto(out.as_uri())
            page.wait_for_timeout(1500)
            page.screenshot(path=str(docs / "lesson-file-1280x720.png"))
            page.goto(out.as_uri() + "#step-2")
            page.wait_for_timeout(500)
            page.screenshot(path=str(docs / "lesson-file-step2-1280x720.png"))
            page.goto(out.as_uri() + "#step-6")
            page.wait_for_timeout(500)
            page.locator("#step-6 .stages").get_by_role("button", name="final", exact=True).click()
            page.locator("#step-6 .stage.shown .updatemenu-button").first.click()  # ▶ Play, to the end
            page.wait_for_timeout(9000)
            page.screenshot(path=str(docs / "lesson-file-step6-1280x720.png"))
            page.emulate_media(media="print")
            page.pdf(path=str(Path(tmp) / "lesson.pdf"), prefer_css_page_size=True)
            browser.close()
        assert not outside, outside
        for k in (2, 6):
            subprocess.run(["pdftoppm", "-r", "80", "-png", "-f", str(k), "-l", str(k), "-singlefile",
                            str(Path(tmp) / "lesson.pdf"), str(docs / f"lesson-handout-page{k}")], check=True)
    print("docs/img/lesson-file-*.png and docs/img/lesson-handout-page*.png written")


if __name__ == "__main__":
    main()
