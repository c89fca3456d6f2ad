"""App latency: server-side time from a new sentence to a ready figure, on CPU.

  Particles page: tokenise + trace + PCA + animation figure + JSON spec   target ≤ 250 ms (median)
  Compare page:   both traces + PCAs + side-by-side animation + Procrustes
                  residuals + CKA + cosine curves + JSON specs             target ≤ 400 ms (median)

6 × 512 models, 32 tokens. Uses pretrained/*-small checkpoints when they exist, else random
`ModelConfig.named('small', scheme=...)` models (the output says which). Every repeat uses a
new sentence, so no cache helps. The JSON spec is what st.plotly_chart sends to the browser.
Optional: --browser also times, in Chromium on the app as shipped (a server this script starts, its
default models), Enter on a new 32-token sentence → the new figure drawn; target ≤ 300 ms (median
of 10). Writes the "App latency" section of benchmarks/RESULTS.md.

Usage: python benchmarks/bench_app.py [--repeats 20] [--browser [--browser-repeats 10]]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import plotly.io as pio
import torch

import macaron
from macaron import plot
from macaron.studies import analysis
from results import write_section

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from served import ARGS, CHROMIUM, server  # noqa: E402  (the app served as the tests serve it)

TARGET_ONE, TARGET_TWO, TARGET_BROWSER = 250.0, 400.0, 300.0
MAX_TOKENS = 96  # the app's particle limit
# Every word is one token for the benchmark's word tokenizer and for the shipped WordPiece one.
WORDS = ("the old river bank was quiet when the tired workers walked slowly to the small hotel near the "
         "station and ordered coffee with two pieces of apple bread before the evening train").split()
FILLERS = "red blue green black white brown grey pink gold silver dark light warm cold soft loud".split()


def sentence(i: int) -> str:
    """30 words (32 tokens with [CLS] and [SEP]); word 3 changes every repeat, so no cache helps."""
    words = list(WORDS[:30])
    words[3] = FILLERS[i % len(FILLERS)]
    words[7] = FILLERS[(i // len(FILLERS)) % len(FILLERS)]
    return " ".join(words)


def word_tokenizer():
    """A word-level WordPiece tokenizer whose vocabulary holds every benchmark word (1 word = 1 token)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])}
    for w in WORDS + FILLERS:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return tok


def models(folder: Path) -> tuple[list[Path], str]:
    shipped = {n: macaron.sources.shipped.PRETRAINED / n for n in macaron.available()}
    small = [shipped.get("transformer-small"), shipped.get("macaron-small")]
    if all(p is not None for p in small):
        return small, "trained checkpoints pretrained/transformer-small and pretrained/macaron-small"
    tok = word_tokenizer()
    out = []
    for scheme in ("transformer", "macaron"):
        torch.manual_seed(0)
        cfg = macaron.ModelConfig.named("small", scheme=scheme, dropout=0.0, name=f"random-{scheme}-small")
        out.append(macaron.save(macaron.build(cfg, tok), folder / f"random-{scheme}-small"))
    return out, "RANDOM weights (no trained 6×512 checkpoints in pretrained/): ModelConfig.named('small')"


def spec(fig) -> str:
    return pio.to_json(fig.to_dict(), validate=False)  # what st.plotly_chart does with a Figure


def particles_once(model, text: str) -> tuple[float, dict]:
    parts = {}
    t0 = time.perf_counter()
    traj = model.trace(text, max_tokens=MAX_TOKENS)
    t1 = time.perf_counter()
    proj = analysis.project(traj, normalised=True)  # the app's default view
    t2 = time.perf_counter()
    fig = plot.particles(traj, proj, trail=4, height=480)
    t3 = time.perf_counter()
    spec(fig)
    t4 = time.perf_counter()
    parts.update(trace=t1 - t0, pca=t2 - t1, figure=t3 - t2, json=t4 - t3)
    assert len(traj.tokens) == 32, len(traj.tokens)
    return (t4 - t0) * 1000, {k: v * 1000 for k, v in parts.items()}


def compare_once(ma, mb, text: str) -> float:
    t0 = time.perf_counter()
    ta, tb = ma.trace(text, max_tokens=MAX_TOKENS), mb.trace(text, max_tokens=MAX_TOKENS)
    projs = [analysis.project(t, normalised=True) for t in (ta, tb)]  # the page as it opens
    fig = plot.compare([ta, tb], projs, ["A", "B"], trail=3, height=480)
    pr = analysis.procrustes(ta, tb, normalised=True)
    ov = plot.lines_over_depth([("residual", pr.layer_times, pr.layer_residuals)], "Procrustes residual")
    cka = plot.cka(analysis.cka(ta, tb, normalised=True), ta, tb, "A", "B")
    sa, sb = (analysis.kept_states(t, True, analysis.keep_mask(t.tokens, True)) for t in (ta, tb))
    cos = plot.lines_over_depth([("A", ta.times, analysis.mean_pairwise_cosine(sa)),
                                 ("B", tb.times, analysis.mean_pairwise_cosine(sb))], "cos")
    for f in (fig, ov, cka, cos):
        spec(f)
    return (time.perf_counter() - t0) * 1000


# In the page: when Enter was pressed and when each websocket message arrived (its size), to split the
# time into the server's part (until the figure's message, the largest, has arrived) and the drawing.
ARRIVALS = """window.__msgs = [];
const Socket = window.WebSocket;
window.WebSocket = function (...args) { const ws = new Socket(...args);
    ws.addEventListener('message', e => window.__msgs.push([performance.now(), e.data.size || e.data.byteLength || 0]));
    return ws; };
window.WebSocket.prototype = Socket.prototype;
document.addEventListener('keydown', e => { if (e.key === 'Enter') { window.__enter = performance.now(); window.__msgs = []; } }, true);"""  # noqa: E501  (the page's script, as injected)
RECEIVED = ("() => Math.max(...[...window.__msgs].sort((a, b) => b[1] - a[1]).slice(0, 1).map(m => m[0])) "
            "- window.__enter")
QUIET = "() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-testid=\"stSkeleton\"]')"
DRAWN = """([w, n]) => {  // the new figure is drawn: the matrix's row names (SVG text) hold the new word
    const g = document.querySelector('.js-plotly-plot');
    if (!g) return false;
    const rows = Array.from(g.querySelectorAll('.y2tick text')).map(t => t.textContent);
    return rows.includes(w) && rows.length === n;
}"""


def fit(words: list[str], tokenizer, n: int) -> str:
    """A sentence of exactly n tokens ([CLS], [SEP] included): the longest prefix of `words` that fits,
    topped up with 'the'."""
    words = list(words)
    while len(tokenizer.encode(" ".join(words)).ids) > n:
        words.pop()
    while len(tokenizer.encode(" ".join(words)).ids) < n:
        words.append("the")
    return " ".join(words)


def browser_enter_to_figure(repeats: int, n_tokens: int = 32) -> tuple[list[float], list[float], str, list[float]]:
    """Chromium at 1280×720 on the app as shipped (its default models): type a new sentence of n_tokens
    tokens, press Enter, time until the new figure is drawn (its SVG text shows the new word), and
    until its message had arrived. Returns both lists of times, the model used and the load averages
    before and after."""
    from playwright.sync_api import sync_playwright

    default = macaron.default_pair(macaron.available())[0]  # the model the app opens first
    tokenizer = macaron.load(default, device="cpu").tokenizer
    env = {k: v for k, v in os.environ.items() if k not in ("MACARON_MODELS", "MACARON_MODELS_DIR")}
    times, received, load = [], [], [os.getloadavg()[0]]
    with server(env) as (url, _), sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = b.new_page(viewport={"width": 1280, "height": 720})
        page.add_init_script(ARRIVALS)
        for _ in range(120):
            try:
                page.goto(f"{url}/", timeout=2000)
                break
            except Exception:
                time.sleep(0.5)
        page.wait_for_selector(".js-plotly-plot", timeout=120_000)
        box = page.get_by_label("Sentence", exact=True)
        for i in range(repeats + 2):  # the first two warm the page and the server's caches up
            page.wait_for_function(QUIET, timeout=60_000)  # the page has finished its last run
            words = WORDS[:34]
            new = FILLERS[i % len(FILLERS)]
            words[3] = new
            text = fit(words, tokenizer, n_tokens)
            n = len(tokenizer.encode(text).ids)
            assert n == n_tokens, (n, text)
            box.fill(text)
            t0 = time.perf_counter()
            box.press("Enter")
            page.wait_for_function(DRAWN, arg=[new, n], timeout=60_000, polling="raf")
            if i >= 2:
                times.append((time.perf_counter() - t0) * 1000)
            page.wait_for_timeout(300)  # let the rest of the page finish before the next sentence
            if i >= 2:
                received.append(page.evaluate(RECEIVED))
        b.close()
    load.append(os.getloadavg()[0])
    return times, received, default, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--browser", action="store_true", help="also time Enter → figure drawn in Chromium")
    ap.add_argument("--browser-repeats", type=int, default=10)
    args = ap.parse_args()
    # the browser first, while nothing of this script runs beside the server it starts
    browser, received, default, load = (browser_enter_to_figure(args.browser_repeats) if args.browser
                                        else ([], [], "", []))
    torch.set_grad_enabled(False)
    threads = macaron.set_threads(int(os.environ.get("MACARON_APP_THREADS", "0") or 0) or None)  # as the app
    with tempfile.TemporaryDirectory() as tmp:
        paths, source = models(Path(tmp))
        ma, mb = (macaron.load(p, device="cpu") for p in paths)
        print(f"models: {source}")
        for w in range(3):  # warm-up: first calls pay for lazy imports and allocator growth
            particles_once(ma, sentence(500 + w))
            compare_once(ma, mb, sentence(600 + w))
        one, one_b, two, parts = [], [], [], []
        for i in range(args.repeats):  # interleaved, a new sentence every time
            ms, p = particles_once(ma, sentence(i))
            one.append(ms)
            parts.append(p)
            one_b.append(particles_once(mb, sentence(100 + i))[0])
            two.append(compare_once(ma, mb, sentence(200 + i)))
    med = statistics.median
    part_med = {k: med(p[k] for p in parts) for k in parts[0]}
    rows = [("Particles, Transformer", med(one), TARGET_ONE), ("Particles, Macaron", med(one_b), TARGET_ONE),
            ("Compare (both)", med(two), TARGET_TWO)]
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, {threads} thread(s)")
    print(f"{'view':<26} {'median ms':>10} {'target':>7} {'ratio':>6}")
    for name, m, t in rows:
        print(f"{name:<26} {m:>10.1f} {t:>7.0f} {m / t:>6.2f}")
    print("Particles (Transformer) parts, median ms: " + ", ".join(f"{k} {v:.1f}" for k, v in part_med.items()))
    if browser:
        p90 = statistics.quantiles(browser, n=10)[-1]
        print(f"browser Enter → figure drawn ({default}): median {med(browser):.0f} ms, p90 {p90:.0f} ms "
              f"(n={len(browser)}, target {TARGET_BROWSER:.0f}); its message arrived after {med(received):.0f} ms "
              f"(median); load average {load[0]:.2f} → {load[1]:.2f}")
    cpu = platform.processor() or platform.machine()
    body = [f"{date.today()}, {cpu}, {os.cpu_count()} cores, {threads} thread(s) as the app sets them, "
            f"torch {torch.__version__}, "
            f"median of {args.repeats}, 32 tokens, a new sentence every repeat; models: {source}; "
            f"load average at the end {os.getloadavg()[0]:.1f} (other work on the machine slows every figure).",
            "Server side: tokenise, trace, PCA, Plotly figure and its JSON spec (what st.plotly_chart sends); "
            "Compare: both traces and PCAs, the side-by-side animation, Procrustes residuals by layer, CKA and "
            "cosine figures. The app runs torch and BLAS with one thread on a 2-core CPU (two threads measured 1.5-10× "
            "slower here whenever anything else runs; MACARON_APP_THREADS overrides).",
            "", "| view | median ms | target ms | ratio to target |", "|---|---|---|---|"]
    body += [f"| {n} | {m:.1f} | {t:.0f} | {m / t:.2f} |" for n, m, t in rows]
    body += ["", "Particles (Transformer) parts, median ms: " + ", ".join(f"{k} {v:.1f}" for k, v in part_med.items())]
    if browser:
        body += ["", f"Browser (Chromium, headless, 1280×720), the app as shipped: its default model {default}, "
                     "32 tokens, a new sentence each time: Enter → the new figure "
                     f"drawn (its SVG text shows the new word), median **{med(browser):.0f} ms**, p90 {p90:.0f} ms "
                     f"(n={len(browser)}; target ≤ {TARGET_BROWSER:.0f} ms, "
                     f"ratio {med(browser) / TARGET_BROWSER:.2f}); "
                     f"1-minute load average {load[0]:.2f} before, {load[1]:.2f} after. Of that, the server's part "
                     f"(Enter → the figure's message arrived in the page): median {med(received):.0f} ms; the rest is "
                     "Streamlit's frontend and Plotly drawing, on the same 2 cores as the server. The figure holds "
                     "every frame: particles, moves, attention lines, labels and the mixing matrix of each sub-step."]
    write_section("App latency", "\n".join(body))


if __name__ == "__main__":
    main()
