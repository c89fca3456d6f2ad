"""The README's animated picture (docs/img/particles.webp): the Particles page's figure while ▶ Play runs, from the
app as shipped, one frame a screenshot of the figure as Chromium draws it, made into a looping animated WebP.

    .venv/bin/python tools/readme_animation.py [--width 1100] [--fps 8] [--out docs/img/particles.webp]

Starts the app on a free port (tools/served.py), opens Particles on the sentence the app opens with, presses ▶ Play
and takes the figure's picture as often as the browser allows until the title names the last sub-step; each frame
is shown as long as it was on screen, the last one two seconds. Needs Chromium (/usr/bin/chromium) and Playwright.
"""
from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from served import CHROMIUM, server  # noqa: E402  (the app served as the tests serve it)

QUIET = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-testid=\"stSkeleton\"], "
         "[data-testid=\"stSpinner\"]')")
TITLE = "() => document.querySelector('.js-plotly-plot .gtitle')?.textContent || ''"
HOLD_LAST_MS = 2000


def frames(url: str, width: int, fps: float) -> list[tuple[Image.Image, int]]:
    """(picture, milliseconds shown) of the figure from ▶ Play to its last sub-step."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(viewport={"width": 1280, "height": 720}, device_scale_factor=1)
        page.goto(url)
        page.wait_for_selector(".js-plotly-plot .gtitle", timeout=300_000)
        page.wait_for_function(QUIET, timeout=300_000)
        figure = page.locator(".js-plotly-plot").first
        page.locator(".js-plotly-plot .updatemenu-button").first.click()
        shots = []
        while True:
            t = time.monotonic()
            shots.append((Image.open(io.BytesIO(figure.screenshot())), t))
            if "sub-step" in (title := page.evaluate(TITLE)) and title.split("sub-step")[1].split()[0] == \
                    title.split(" of ")[-1].split()[0]:
                break  # "sub-step 12 of 12"
            time.sleep(max(0.0, 1 / fps - (time.monotonic() - t)))
        browser.close()
    out = []
    for (img, t), (_, t_next) in zip(shots, shots[1:] + [(None, shots[-1][1] + HOLD_LAST_MS / 1000)]):
        img = img.convert("RGB")
        img = img.resize((width, round(img.height * width / img.width)), Image.LANCZOS) if img.width > width else img
        out.append((img, max(20, round(1000 * (t_next - t)))))
    return out


def main(argv=None) -> int:
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--width", type=int, default=1100, help="the picture's width in pixels")
    a.add_argument("--fps", type=float, default=8.0, help="pictures a second at most")
    a.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "particles.webp")
    args = a.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k not in ("MACARON_MODELS", "MACARON_MODELS_DIR")}
    with server(env) as (url, _):
        shots = frames(url, args.width, args.fps)
    first, *rest = (img for img, _ in shots)
    first.save(args.out, save_all=True, append_images=rest, duration=[ms for _, ms in shots], loop=0, quality=80,
               method=6)
    print(f"wrote {args.out}: {len(shots)} frames, {sum(ms for _, ms in shots) / 1000:.1f} s, "
          f"{args.out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
