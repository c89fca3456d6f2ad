"""The full-size pair in the browser, offline: a random BERT-base-shaped Macaron written as the paper's fairseq 0.6
release writes one (benchmarks/bench_fairseq.py) and imported, and a random BERT-base-shaped BertForMaskedLM in a
local Hub cache, opened in Particles, Compare (side by side), Dynamics (one sentence) and the lab's section 3 by
`streamlit run` in Debian's Chromium at 1280×720. Prints each page's error elements (none expected) and leaves a
screenshot of each (its first screen and the whole page) in screenshots/full-size/ for a person to look at.

A check to run by hand (minutes on a 2-core CPU: two 110 M-parameter models), not part of the suite, which opens
imported and Hub-cached models at a small size (tests/test_fairseq.py, tests/test_hub.py).

    python tools/full_size_check.py [--work /tmp/full-size]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "benchmarks"), str(ROOT / "tests")]
SHOTS = ROOT / "screenshots" / "full-size"
PAPER, HUB = "paper-macaron-bert-base", "org/bert-base-shaped"
SENTENCE = "the cat sat on the mat because it was tired"
WORDS = 32768  # the release's dict.txt lines


def paper_model(cache: Path) -> None:
    """The release's shape, imported where `fetch` puts it; dict.txt holds the README's words, so text reads."""
    from bench_fairseq import write_release
    from macaron.formats.fairseq_import import import_fairseq

    out = cache / "models" / PAPER
    if out.exists():
        return
    release = cache / "release"
    release.mkdir(parents=True, exist_ok=True)
    checkpoint, vocab = write_release(release, 12, 768, 12, WORDS)
    words = sorted(set(re.findall(r"[a-z]+", (ROOT / "README.md").read_text().lower())))
    words += [c + "@@" for c in "abcdefghijklmnopqrstuvwxyz"] + list("abcdefghijklmnopqrstuvwxyz.,")
    words = (words + [f"w{i}" for i in range(WORDS)])[:WORDS]
    vocab.write_text("".join(f"{w} {WORDS - i}\n" for i, w in enumerate(words)))
    import_fairseq(checkpoint, vocab, None, out)


def hub_model(cache: Path) -> None:
    """BERT-base's shape (12 × 768, 12 heads, 3072) with the suite's tokenizer, as huggingface_hub caches it."""
    import torch
    import transformers

    from conftest import tiny_tokenizer

    root = cache / f"models--{HUB.replace('/', '--')}"
    snapshot = root / "snapshots" / ("0" * 40)
    if snapshot.exists():
        return
    tok = tiny_tokenizer()
    torch.manual_seed(0)
    model = transformers.BertForMaskedLM(transformers.BertConfig(vocab_size=tok.get_vocab_size())).eval()
    snapshot.mkdir(parents=True)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text("0" * 40)
    model.save_pretrained(snapshot, safe_serialization=True)
    tok.save(str(snapshot / "tokenizer.json"))


def look(browser, url: str, name: str, path: str, heading: str | None = None) -> int:
    """Open a page, wait until it has drawn (and `heading` is on it), screenshot it: its error elements' count."""
    from served import ERRORS, QUIET

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{url}/{path}&s={urllib.parse.quote(SENTENCE)}")
    page.wait_for_selector(".js-plotly-plot", timeout=1_200_000)
    if heading:
        page.get_by_text(heading).first.wait_for(timeout=1_200_000)
    for _ in range(2):
        page.wait_for_function(QUIET, timeout=1_200_000)
        page.wait_for_timeout(1500)
    if heading:
        page.get_by_text(heading).first.scroll_into_view_if_needed()
    errors = page.locator(ERRORS)
    found = errors.count()
    for i in range(found):
        print(f"  {name}: {errors.nth(i).inner_text()[:300]}")
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": 1280, "height": 4000})  # the whole page (Streamlit scrolls inside)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(SHOTS / f"{name}_full.png"))
    page.close()
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/full-size"), help="caches of the two models")
    args = ap.parse_args()
    os.environ.update(MACARON_CACHE=str(args.work / "macaron"), HF_HUB_CACHE=str(args.work / "hub"),
                      HF_HUB_OFFLINE="1")
    os.environ.pop("MACARON_MODELS", None)
    os.environ.pop("MACARON_MODELS_DIR", None)
    paper_model(args.work / "macaron")
    hub_model(args.work / "hub")
    from playwright.sync_api import sync_playwright

    from served import ARGS, CHROMIUM, server

    SHOTS.mkdir(parents=True, exist_ok=True)
    hub = urllib.parse.quote(HUB, safe="")
    pair = f"a={hub}&b={PAPER}"
    pages = [("particles-paper", f"?m={PAPER}", None), ("particles-hub", f"?m={hub}", None),
             ("compare", f"compare?{pair}", None), ("dynamics", f"dynamics?view=one&{pair}", None),
             ("lab-3", f"lab?{pair}", "3a · Is the step small?")]
    failed = 0
    with server(dict(os.environ), args.work / "streamlit.log") as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for name, path, heading in pages:
            n = look(browser, url, name, path, heading)
            print(f"{name}: {n} error element(s)", flush=True)
            failed += n
        browser.close()
    print(f"screenshots in {SHOTS}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
