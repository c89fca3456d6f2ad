"""From a clone to the first page (issue 77, item 6): the README's first command, `make app`, timed on a clean
clone of this repository (its committed HEAD) with a new venv, until the Particles page has drawn its first figure
in Chromium; then the next visitor's first figure on the same server. Run it on an idle machine: it times the
install too. `--revs 1e4a90d HEAD` times each commit in turn, side by side (1e4a90d: the last whose `make app`
installed the test tools and the peers as well).

  clone           a shallow clone (depth 1) of the commit, from disk: no network time in it
  make setup      the venv and `pip install -r requirements.txt` (the library and the app only; PyPI for all
                  but torch, which pip takes from this machine's disk)
  first figure    `make app` started → its server answers → the first figure drawn for the first visitor
  next visitor    a new browser context opening the same address → its first figure drawn

Writes the "From a clone to the first page" section of benchmarks/RESULTS.md.

Usage: python benchmarks/bench_clone.py [--revs REV ...] [--keep]
(needs /usr/bin/chromium and Playwright: `make setup-test`)
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import date
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from macaron.train.card import hardware  # noqa: E402
from results import write_section  # noqa: E402
from served import ARGS, CHROMIUM, DRAWN, ERRORS, FIRST_WORD, PARTICLES, free_port  # noqa: E402


def timed(cmd: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


WAIT = 600  # s: a ceiling for a hang, not a timing
# DRAWN, or a rejection once an error is on the page or WAIT has passed
DRAWN_OR_ERROR = f"""args => Promise.race([({DRAWN})(args), new Promise((_, reject) => {{
    const failed = () => document.querySelector({ERRORS!r});
    const start = performance.now();
    const look = setInterval(() => {{
        if (failed() || performance.now() - start > {WAIT * 1000}) {{
            clearInterval(look);
            reject(new Error(failed() ? failed().innerText : 'no figure after {WAIT} s'));
        }}
    }}, 200);
}})])"""


def first_figure(browser, url: str) -> float:
    """Seconds from opening `url` in a new browser context to the Particles figure drawn with its first word."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = ctx.new_page()
        t = time.perf_counter()
        page.goto(url, wait_until="domcontentloaded", timeout=WAIT * 1000)
        page.evaluate(DRAWN_OR_ERROR, [PARTICLES, FIRST_WORD])
        return time.perf_counter() - t
    finally:
        ctx.close()


def stop(group: int) -> None:
    """Ends `make app` and the server it started (one process group), and waits until they are gone."""
    for sig in (15, 9):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, sig)
        for _ in range(100):
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


def serve_and_open(clone: Path) -> tuple[float, float, float]:
    """(s until the server answers, s until the first visitor's figure, the next visitor's s), from `make app`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items()  # the app as shipped: none of its or Streamlit's settings
           if not k.startswith(("MACARON_", "STREAMLIT_", "HF_", "PYTHON"))}
    env.update(STREAMLIT_SERVER_HEADLESS="true", STREAMLIT_SERVER_PORT=str(port))
    url = f"http://localhost:{port}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        start = time.perf_counter()
        app = subprocess.Popen(["make", "app"], cwd=clone, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1):
                        break
                except OSError:
                    if app.poll() is not None or time.perf_counter() - start > WAIT:
                        raise RuntimeError("make app ended, or its server did not answer, within "
                                           f"{WAIT} s") from None
                    time.sleep(0.1)
            answers = time.perf_counter() - start
            first = answers + first_figure(browser, url)
            return answers, first, first_figure(browser, url)
        finally:
            stop(app.pid)
            browser.close()


def shallow_clone(rev: str, clone: Path) -> float:
    """Seconds to fetch `rev` alone (depth 1) into a new repository at `clone` and check it out."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    clone.mkdir(parents=True)
    t = time.perf_counter()
    for cmd in (["git", "init", "-q"], ["git", "fetch", "-q", "--depth", "1", f"file://{ROOT}", sha],
                ["git", "checkout", "-q", "FETCH_HEAD"]):
        subprocess.run(cmd, cwd=clone, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def measured(rev: str, keep: bool) -> dict:
    """The clone, set-up and first-figure times of `rev` (seconds), with the size of its venv (MB)."""
    work = Path(tempfile.mkdtemp(prefix="macaron-clone-"))
    clone = work / "macaron-explorer"
    try:
        cloned = shallow_clone(rev, clone)
        setup = timed(["make", "setup"], clone)
        venv = sum(f.stat().st_size for f in (clone / ".venv").rglob("*") if f.is_file()) / 1e6
        versions = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-c", "import platform, torch; "
                                   "print(torch.__version__, platform.python_version())"],
                                  capture_output=True, text=True, check=True).stdout.split()
        answers, first, following = serve_and_open(clone)
    finally:
        if keep:
            print(f"the clone of {rev}: {clone}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return dict(clone=cloned, setup=setup, answers=answers, first=first, following=following, venv=venv,
                versions=versions)


def short(rev: str) -> str:
    return subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


ROWS = [("clone", "a shallow clone (from disk)"), ("setup", "make setup: a new venv, requirements.txt"),
        ("answers", "make app → its server answers"), ("first", "make app → the first figure drawn"),
        ("following", "the next visitor: the address opened → the first figure drawn")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--revs", nargs="+", default=["HEAD"], help="the commits to time, in turn (default: HEAD)")
    ap.add_argument("--keep", action="store_true", help="keep the clones (their paths are printed)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    runs = {rev: measured(rev, args.keep) for rev in args.revs}
    names = [f"{rev} ({short(rev)})" if rev == "HEAD" else rev for rev in args.revs]
    rows = [f"| {what} | " + " | ".join(f"{r[k]:.1f}" for r in runs.values()) + " |" for k, what in ROWS]
    rows += ["| **clone to the first figure** | " + " | ".join(f"**{r['clone'] + r['setup'] + r['first']:.0f}**"
                                                          for r in runs.values()) + " |",
             "| the venv, MB | " + " | ".join(f"{r['venv']:,.0f}" for r in runs.values()) + " |"]
    head = ["| step (s) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    versions = next(iter(runs.values()))["versions"]
    said = (f"{date.today()}, {hardware()}, torch {versions[0]}, Python {versions[1]} (the clones' venvs); "
            f"1-minute load average {load:.2f} before. Each commit a clean shallow clone with a new venv, the app "
            "as shipped (no environment variable), Chromium headless at 1280×720; the commits timed in turn.")
    body = said + "\n\n" + "\n".join(head + rows)
    write_section("From a clone to the first page", body)
    print(body)


if __name__ == "__main__":
    main()
