"""The Translate page as a person meets it, in Chromium at 1280×720 on the app as shipped (`make app`: no environment
variable, the shipped translators):

  cold: a server just started, /translate opened → the shipped translator's translation written and its figure
        drawn                                                                               target ≤ 10 s
  new sentence: another sentence typed, Enter → its translation written and its figure drawn      target ≤ 1 s

"Drawn" is what the person sees: the translation's words in the page (the library's own translation of the sentence,
beam 5, computed first) and the animation's SVG text naming a word of the new source. Each repeat starts a new server
(cold) and then types new sentences (the test set's, never typed before in that server: no cache helps). Medians are
reported; the server's start (until its health check answers) is timed apart. Writes the "Translate page" section of
benchmarks/RESULTS.md (not with --no-write).

Usage: python benchmarks/bench_translate_page.py [--cold 3] [--sentences 10] [--no-write]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import torch

import macaron
from macaron.lesson import TRANSLATOR
from macaron.plot.style import display_token
from macaron.train.card import hardware
from macaron.translation.model import EXAMPLES, presets
from results import write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from served import ARGS, CHROMIUM, server  # noqa: E402  (the app served as the tests serve it)

TARGET_COLD, TARGET_NEW = 10.0, 1.0
DRAWN = """([words, token]) => {  // the translation written and the figure drawn with a word of its source
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    if (!main || !main.innerText.replace(/\\s+/g, ' ').includes(words)) return false;
    const g = document.querySelector('.js-plotly-plot');
    return !!g && Array.from(g.querySelectorAll('text')).some(t => t.textContent.includes(token));
}"""


def expected(model, sentences: list[str]) -> dict[str, tuple[str, str]]:
    """Per sentence: (the words the page writes, "es → en: " and the translation; the longest source word the
    sentence before it does not have, as the figure labels it: plot.style.display_token)."""
    out, before = {}, set()
    for s in sentences:
        tr = model.translate(s, beam=5)
        words = [w for w in map(display_token, tr.source.tokens) if w.isalpha()]
        new = [w for w in words if w not in before] or words  # else any word of it
        out[s] = (f"es → en: {tr.text}", max(new, key=len)[:8])
        before = set(words)
    return out


def run(cold: int, n_sentences: int) -> dict:
    from playwright.sync_api import sync_playwright

    model = macaron.load_translator(TRANSLATOR, device="cpu")
    first = EXAMPLES["es"][0]
    typed = [s for s in presets(macaron.sources.shipped.PRETRAINED / TRANSLATOR) if s != first][:n_sentences]
    said = expected(model, [first, *typed])
    env = {k: v for k, v in os.environ.items() if not k.startswith("MACARON_")}
    starts, colds, news = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        for c in range(cold):
            t0 = time.perf_counter()
            with server(env) as (url, _):
                starts.append(time.perf_counter() - t0)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                t0 = time.perf_counter()
                page.goto(f"{url}/translate")
                page.wait_for_function(DRAWN, arg=list(said[first]), timeout=120_000, polling="raf")
                colds.append(time.perf_counter() - t0)
                if c == 0:  # new sentences, in the first server only (each typed once)
                    box = page.get_by_label("Sentence to translate (es)", exact=True)
                    for s in typed:
                        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                                               timeout=60_000)
                        box.fill(s)
                        t0 = time.perf_counter()
                        box.press("Enter")
                        page.wait_for_function(DRAWN, arg=list(said[s]), timeout=60_000, polling="raf")
                        news.append(time.perf_counter() - t0)
                page.close()
        browser.close()
    return dict(starts=starts, colds=colds, news=news, n_typed=len(typed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cold", type=int, default=3, help="servers started, each opened cold once")
    ap.add_argument("--sentences", type=int, default=10, help="new sentences typed in the first server")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    r = run(args.cold, args.sentences)
    med = statistics.median
    cold, new, start = med(r["colds"]), med(r["news"]), med(r["starts"])
    rows = [("cold: /translate opened → translation and figure drawn", cold, TARGET_COLD),
            ("new sentence: Enter → translation and figure drawn", new, TARGET_NEW)]
    print(f"load average {load0:.2f} → {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    print(f"server start (health check answers): median {start:.1f} s over {len(r['starts'])}")
    for name, m, t in rows:
        print(f"{name:<58} median {m:6.2f} s  target {t:4.1f} s  ratio {m / t:.2f}")
    print("cold: " + ", ".join(f"{x:.2f}" for x in r["colds"]) + " s; new: " + ", ".join(f"{x:.2f}" for x in r["news"]))
    if args.no_write:
        return
    body = [f"{date.today()}, {hardware()}, torch "
            f"{torch.__version__}; Chromium headless at 1280×720, the app as shipped (`make app`, no environment "
            f"variable) on {TRANSLATOR}, beam 5; 1-minute load average {load0:.2f} before. Cold: a new server each "
            f"time ({len(r['colds'])}), its start timed apart (median {start:.1f} s until its health check answers); "
            f"new sentences: {r['n_typed']} of the test set, each typed once. Drawn: the page writes the library's "
            f"translation and the figure's SVG text names a word of the source.",
            "", "| what the person does | median s | target s | ratio to target |", "|---|---|---|---|"]
    body += [f"| {n} | {m:.2f} | {t:.0f} | {m / t:.2f} |" for n, m, t in rows]
    write_section("Translate page", "\n".join(body))


if __name__ == "__main__":
    main()
