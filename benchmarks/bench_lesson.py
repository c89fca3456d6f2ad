"""Turning the lesson's pages (issue 77): a fresh server opens the guided lesson's first step, then PageDown (what a
clicker sends) turns to each next step; timed until that step's heading is on the screen, and until its figure is
drawn and the page is quiet. Run it on an idle machine (a newcomer's walk under a training run's load saw a blank
page for 25 s between two steps).

Writes the "Turning the lesson's pages" section of benchmarks/RESULTS.md.

Usage: python benchmarks/bench_lesson.py [--present]   (needs /usr/bin/chromium and Playwright: `make setup-test`)
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import date
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from macaron.lesson import LESSON  # noqa: E402
from macaron.train.card import hardware  # noqa: E402
from results import write_section  # noqa: E402
from served import ARGS, CHROMIUM, QUIET, server  # noqa: E402

WAIT = 600_000  # ms: a ceiling for a hang, not a timing


def settled(page) -> None:
    page.wait_for_selector(".js-plotly-plot", timeout=WAIT)
    page.wait_for_function(QUIET, timeout=WAIT)


def turns(url: str, present: bool) -> tuple[float, list[tuple[int, float, float]]]:
    """Seconds to the first step drawn; per next step (k, s to its heading, s to its figure and a quiet page)."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        t = time.perf_counter()
        page.goto(f"{url}/?lesson=1" + ("&present=1" if present else ""))
        settled(page)
        first, rows = time.perf_counter() - t, []
        for k in range(2, len(LESSON) + 1):
            page.mouse.click(5, 400)  # the page, not a widget, has the focus: as a clicker's key lands
            t = time.perf_counter()
            page.keyboard.press("PageDown")
            page.get_by_text(f"Lesson {k} of {len(LESSON)}").first.wait_for(timeout=WAIT)
            heading = time.perf_counter() - t
            settled(page)
            rows.append((k, heading, time.perf_counter() - t))
        browser.close()
    return first, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--present", action="store_true", help="in presenter mode (&present=1)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    with server() as (url, _):
        first, rows = turns(url, args.present)
    table = "\n".join(["| PageDown to step | its heading shown, s | its figure drawn, page quiet, s |", "|---|---|---|"]
                      + [f"| {k} | {h:.1f} | {q:.1f} |" for k, h, q in rows])
    heading, quiet = [statistics.median(r[k] for r in rows) for k in (1, 2)]
    body = (f"{date.today()}, {hardware()}; 1-minute load average {load:.2f} before. A fresh server (the app as "
            f"shipped), Chromium headless at 1280×720{', presenter mode' if args.present else ''}; the first step "
            f"drawn {first:.1f} s after the address was opened, then PageDown once per step, each step settled "
            f"before the next. Median to the heading {heading:.1f} s, to a quiet page {quiet:.1f} s; slowest "
            f"{max(r[2] for r in rows):.1f} s.\n\n" + table)
    write_section("Turning the lesson's pages", body)
    print(body)


if __name__ == "__main__":
    main()
