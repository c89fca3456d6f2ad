"""The documentation's screenshots (docs/img/): every page of the explorer as shipped, at 1280×720 and 1920×1080, and
the animations while they play.

    .venv/bin/python tools/screenshots.py [STEM ...]   # starts the app on a free port, writes docs/img/*.png

Needs Chromium (/usr/bin/chromium) and Playwright; uses the shipped models in pretrained/.
"""
from __future__ import annotations

import os
import sys
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from served import ARGS, CHROMIUM, server  # noqa: E402  (the app served as the tests serve it)

DOCS = ROOT / "docs" / "img"
SIZES = ((1280, 720), (1920, 1080))
SENTENCE = "i sat on the bank of the river and watched the water ."
QUIET = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-testid=\"stSkeleton\"], "
         "[data-testid=\"stSpinner\"]')")
# (file stem, address, milliseconds of ▶ Play before the picture, or None for the page as it opens)
VIEWS = [
    ("particles", f"/?s={urllib.parse.quote(SENTENCE)}", None),
    ("particles-playing", f"/?s={urllib.parse.quote(SENTENCE)}", 3000),
    ("compare", f"/compare?s={urllib.parse.quote(SENTENCE)}", None),
    ("compare-playing", f"/compare?s={urllib.parse.quote(SENTENCE)}", 4200),
    ("compare-overlay", f"/compare?s={urllib.parse.quote(SENTENCE)}&view=overlay&t=3", None),
    ("lab", "/lab", None),
    ("lab-playing", "/lab", 2500),
    ("dynamics", "/dynamics", None),  # its measures over the sentence set take a while: shot once drawn
    ("translate", "/translate", None),  # the shipped Macaron translator on its first preset
    ("translate-playing", "/translate", 3000),
]
EXTRA = [  # presenter mode and a lesson step on the classroom screen; the lab's trained-network section
    ("particles-presenter", f"/?present=1&s={urllib.parse.quote(SENTENCE)}", 2300, (1280, 720)),
    ("lesson-2", "/?lesson=2", None, (1280, 720)),
    ("lab-networks", "/lab#3 · Trained networks", None, (1920, 1080)),
    ("lab-networks-tie", "/lab#3c · Are Macaron", None, (1920, 1080)),
    ("dynamics-experiments", "/dynamics?exp=1#The trained operators as an ODE solver", None, (1280, 720)),
    # the ODE pair's measured orders
    ("lab-orders", "/lab?a=transformer-ode&b=macaron-ode#3e · The splitting order", None, (1920, 1080)),
    ("lesson-4", "/?lesson=4", None, (1280, 720)),
    ("lesson-5", "/?lesson=5", None, (1280, 720)),  # what the race found, above Compare's two models
    # the race: loss curves as seed bands, the paired differences with their intervals
    ("lab-race", "/lab#4 · The race", None, (1280, 720)),
    ("lab-race", "/lab#4 · The race", None, (1920, 1080)),
    ("lab-race-gaps", "/lab#Does the split FFN", None, (1280, 720)),  # the gap along training, every budget
    ("lesson-7", "/translate?lesson=7", 2500, (1280, 720)),  # two particle systems, played from the cross-attention
    ("lesson-8", "/?lesson=8", 2500, (1280, 720)),  # what if: diffusion off, the altered paths over their ghosts
]


def settle(page) -> None:
    page.wait_for_selector("h1", timeout=120_000)
    for _ in range(3):  # quiet three times in a row: the page has finished drawing
        page.wait_for_function(QUIET, timeout=180_000)
        page.wait_for_timeout(900)


def shoot(page, url: str, play_ms: int | None, path: Path) -> None:
    url, _, heading = url.partition("#")  # "#text": scroll to the heading that starts with it
    page.goto(url)
    page.wait_for_selector(".js-plotly-plot", timeout=600_000)  # every page opens with a figure
    settle(page)
    if heading:  # a section further down: its heading at the top, once everything is drawn (twice: what
        for _ in range(2):  # is drawn after the first scroll, below it, can make the page longer)
            page.get_by_role("heading", name=heading).first.evaluate("h => h.scrollIntoView()")
            settle(page)
    if play_ms:
        page.locator(".js-plotly-plot .updatemenu-button").first.click()
        page.wait_for_timeout(play_ms)
    page.mouse.move(0, page.viewport_size["height"] - 1)  # no hover labels or mode bar in the picture
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))
    print(path.relative_to(ROOT))


def main() -> None:
    from playwright.sync_api import sync_playwright

    env = {k: v for k, v in os.environ.items() if k not in ("MACARON_MODELS", "MACARON_MODELS_DIR")}
    with server(env) as (base, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        only = sys.argv[1:]  # file stems to take, or every one
        shots = [(stem, path, ms, size) for stem, path, ms in VIEWS for size in SIZES] + EXTRA
        shots = [shot for shot in shots if not only or shot[0] in only]
        for stem, path, ms, (w, h) in shots:
            page = browser.new_page(viewport={"width": w, "height": h})
            shoot(page, base + path, ms, DOCS / f"{stem}-{w}x{h}.png")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
