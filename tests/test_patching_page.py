"""The Patching page: the activation-patching map of a sentence pair (issue 75, item 5), on the shipped
transformer-mini; in Streamlit's AppTest and, drawn, in Chromium.

What the map must show is checked against what holds whatever the model: a token that is the same in both sentences
has the same embedding, so its top-row patch restores 0, and where one token differs, its top-row patch makes the
corrupted run the clean one, 1; the head reads the answer's particle alone, so the bottom row is 1 there and 0
elsewhere; and the clean and corrupted logit differences the page states are read here from the
model's own head on each sentence's traced final state.
"""
from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import macaron
from macaron.interventions import PatchingMap
from macaron.plot import patching as P
from test_plot import decoded, validated

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "app" / "main.py")
SHIPPED = ROOT / "pretrained" / "transformer-mini"
TIMEOUT = 600
CLEAN, CORRUPTED, GOOD, BAD = ("the woman said that [MASK] was tired .", "the man said that [MASK] was tired .",
                               "she", "he")  # the page's default pair


@pytest.fixture()
def shipped(monkeypatch):
    monkeypatch.setenv("MACARON_MODELS", str(SHIPPED))
    monkeypatch.delenv("MACARON_MODELS_DIR", raising=False)


def opened(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.query_params.update(query or {})
    at.switch_page("views/patching.py")
    at.run(timeout=TIMEOUT)
    assert not at.exception, [e.message for e in at.exception]
    return at


def drawn_map(at: AppTest) -> dict | None:
    charts = [c for c in at.get("plotly_chart") if c.key == "pt_map"]
    return json.loads(charts[0].proto.spec)["data"][0] if charts else None


def said(at: AppTest) -> str:
    return " ".join(str(e.value) for kind in ("caption", "markdown", "warning", "info", "error") for e in at.get(kind))


def logit_difference(model, text: str, good: str = GOOD, bad: str = BAD) -> float:
    """logit(good) − logit(bad) at the [MASK], from the model's head on the traced final state."""
    traj = model.trace(text)
    with torch.no_grad():
        logits = model.head(torch.as_tensor(traj.final[traj.guess_at]))
    return float(logits[model.tokenizer.token_to_id(good)] - logits[model.tokenizer.token_to_id(bad)])


def test_the_default_pair_draws_its_map(shipped):
    at = opened()
    assert "Patching" in at.title[0].value
    heat = drawn_map(at)
    assert heat is not None, said(at)
    z = decoded(heat["z"])
    model = macaron.load(SHIPPED)
    clean, corrupted = model.trace(CLEAN), model.trace(CORRUPTED)
    layers = len(clean.layer_boundaries()) - 1
    assert z.shape == (layers + 1, len(clean.tokens))  # every layer boundary and the last state, every particle
    same = np.array(clean.token_ids) == np.array(corrupted.token_ids)
    assert same.sum() == len(same) - 1  # one word differs (woman / man)
    np.testing.assert_allclose(z[0, same], 0, atol=1e-5)  # the same token at the same place: nothing to restore
    np.testing.assert_allclose(z[0, ~same], 1, atol=1e-4)  # patched there, the corrupted run is the clean run
    np.testing.assert_allclose(z[-1], np.eye(len(same))[clean.guess_at], atol=1e-4)  # the head reads one particle
    text = said(at)
    for value in (logit_difference(model, CLEAN), logit_difference(model, CORRUPTED)):
        assert f"{value:+.2f}" in text
    assert f"logit({GOOD}) − logit({BAD})" in text and "she" in text  # the top guesses are listed
    assert {"clean": CLEAN, "corrupt": CORRUPTED, "good": GOOD, "bad": BAD}.items() <= dict(at.query_params).items()


def test_the_pairs_on_offer_are_the_ones_the_manual_measured():
    """docs/app/patching.md's table (why these pairs): every cell, the logit difference on the clean and the
    corrupted sentence and the clean sentence's top guess, recomputed on the four shipped encoders from each model's
    own head on each sentence's final state; the menu offers the table's pairs."""
    from patching_cache import PAIRS  # the page's menu

    doc = (ROOT / "docs" / "app" / "patching.md").read_text()
    header, *rows = [line.strip() for line in doc.splitlines() if line.strip().startswith("| ")]
    models = [c.strip() for c in header.strip("|").split("|")[2:]]
    assert models == ["transformer-mini", "macaron-mini", "transformer-small", "macaron-small"]
    assert len(rows) == len(PAIRS)
    loaded = {m: macaron.load(ROOT / "pretrained" / m, device="cpu") for m in models}
    for row, (clean, corrupted, good, bad) in zip(rows, PAIRS.values()):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == f"{good}, {bad}"
        for name, cell in zip(models, cells[2:]):
            model = loaded[name]
            values = [logit_difference(model, text, good, bad) for text in (clean, corrupted)]
            traj = model.trace(clean)
            top = model.logit_lens(traj, traj.guess_at, 1)[-1][0][0]
            assert cell == f"{values[0]:+.2f} / {values[1]:+.2f} ({top})".replace("-", "−"), (name, clean)


def test_a_pair_from_the_menu_fills_both_sentences_and_both_words(shipped):
    at = opened()
    at.selectbox(key="pt_pair").set_value("they / he").run(timeout=TIMEOUT)
    assert not at.exception
    assert at.text_input(key="pt_clean").value == "the boys said that [MASK] were tired ."
    assert (at.text_input(key="pt_good").value, at.text_input(key="pt_bad").value) == ("they", "he")
    z = decoded(drawn_map(at)["z"])
    tokens = macaron.load(SHIPPED).trace("the boys said that [MASK] were tired .").tokens
    differ = [tokens.index("boys"), tokens.index("were")]  # two words differ: both may restore at the start
    assert np.count_nonzero(np.abs(z[0]) > 1e-6) <= 2 and set(np.flatnonzero(np.abs(z[0]) > 1e-6)) <= set(differ)


@pytest.mark.parametrize("query, says", [
    ({"corrupt": "the old man said that [MASK] was tired ."}, "read as 10 and 11 tokens"),
    ({"good": "qqqzzz"}, "word 'qqqzzz' is not one token of this model's vocabulary"),
    ({"clean": "   "}, "The text is empty"),
    ({"clean": "the " * 120 + "[MASK] ."}, "this one was cut to its first 96 tokens"),
    ({"clean": "the woman said that she was tired ."}, "write [MASK] where it should answer"),
    ({"corrupt": "the man said [MASK] that was tired ."}, "put [MASK] at the same place in both"),
    ({"corrupt": "the woman said that [MASK] was tired ."}, "the same logit difference"),
    ({"good": ""}, "Type the two words"),
])
def test_bad_input_is_explained_never_raised(shipped, query, says):
    at = opened(query)
    assert says in said(at), said(at)
    assert drawn_map(at) is None


@pytest.fixture()
def decoder(tmp_path, monkeypatch, tokenizer):
    """A tiny random decoder with a next-word head (our folder, the suite's tokenizer), the only model on offer."""
    from macaron import ModelConfig

    torch.manual_seed(0)
    cfg = ModelConfig(scheme="transformer", d_model=32, n_layers=2, n_heads=4, ffn_total=128, max_len=128,
                      vocab_size=tokenizer.get_vocab_size(), dropout=0.0, name="tiny-decoder", causal=True,
                      mlm_head=False, lm_head=True)
    folder = tmp_path / "tiny-decoder"
    macaron.save(macaron.build(cfg, tokenizer), folder)
    monkeypatch.setenv("MACARON_MODELS", str(folder))
    monkeypatch.delenv("MACARON_MODELS_DIR", raising=False)
    return folder


def test_a_decoder_answers_the_next_word_and_no_later_particle_reaches_it(decoder):
    clean, corrupted = ("she played the [MASK] while he washed the dishes .",
                        "he played the [MASK] while he washed the dishes .")
    at = opened({"clean": clean, "corrupt": corrupted, "good": "piano", "bad": "dishes"})
    z = decoded(drawn_map(at)["z"])
    answer = macaron.load(decoder).trace(clean).guess_at  # the token before the [MASK]: its next word is the answer
    assert z.shape[1] > answer + 1
    np.testing.assert_allclose(z[:, answer + 1:], 0, atol=1e-5)  # causal: nothing after it reaches it (batched: 1e-6)
    np.testing.assert_allclose(z[-1], np.eye(z.shape[1])[answer], atol=1e-4)
    assert "top guesses for the next word" in said(at) and "A decoder's particles after the answer's" in said(at)


@pytest.mark.parametrize("tokens", [8, 40])  # numbers in the cells, and too many columns for them
def test_the_figure_validates_and_draws_the_map_it_is_given(tokens):
    rng = np.random.default_rng(0)
    restored = rng.uniform(-0.9, 0.9, (4, tokens))
    restored[1, 2] = -1.7  # beyond −1: the colour range grows to hold it, symmetric about 0
    restored[0, 0] = -0.001  # written 0.00, not -0.00
    words = [f"w{i}" for i in range(tokens)]
    other = list(words)
    other[3] = "x3"
    pm = PatchingMap(restored, [0, 3, 6, 9], words, position=5, clean=2.0, corrupted=-1.0)
    heat = validated(P.patching_map(pm, other, "she", "he")).to_dict()["data"][0]
    np.testing.assert_array_equal(decoded(heat["z"]).reshape(restored.shape), restored)
    assert heat["zmin"] == -heat["zmax"] and heat["zmax"] == pytest.approx(1.7)
    layout = P.patching_map(pm, other).to_dict()["layout"]
    assert layout["yaxis"]["ticktext"] == ["before layer 1 (embedding)", "before layer 2", "before layer 3",
                                           "after layer 3"]
    assert layout["xaxis"]["ticktext"][3] == "3·w3<br><i>x3</i>" and layout["xaxis"]["ticktext"][4] == "4·w4"
    assert (layout["shapes"][0]["x0"], layout["shapes"][0]["x1"]) == (4.5, 5.5)  # the answer's column outlined
    data = validated(P.patching_map(pm, other)).to_dict()["data"]
    assert len(data) == (2 if tokens <= 24 else 1)  # the numbers, where they fit in their cells
    if len(data) == 2:
        texts = np.array(data[1]["text"]).reshape(restored.shape)
        assert texts[1, 2] == "-1.70" and all(float(t) == round(v, 2) for t, v in zip(texts.ravel(), restored.ravel()))
        assert texts[0, 0] == "0.00"
    hover = heat["hovertext"][1][2]  # the patched logit difference: corrupted + restored × (clean − corrupted)
    assert "<b>-1.70</b>" in hover and "-6.10 (clean +2.00, corrupted -1.00)" in hover


# ---- in Chromium ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from served import server as app_server

    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS_DIR"}
    env["MACARON_MODELS"] = str(SHIPPED)
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    with app_server(env, log) as (url, _):
        yield url, log


# Resolves once the map is drawn as a person reads it: its SVG holds a particle's label and a cell's number.
DRAWN = """([word, number]) => {
    const g = Array.from(document.querySelectorAll('.js-plotly-plot')).find(p => p.querySelector('.heatmaplayer'));
    const texts = g ? Array.from(g.querySelectorAll('text')).map(t => t.textContent) : [];
    return texts.some(t => t.includes(word)) && texts.includes(number);
}"""
NEXT_FRAME = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"


NUMBERS = """() => Array.from(document.querySelectorAll('.js-plotly-plot .scatterlayer text')).map(t => {
    const box = t.getBoundingClientRect();
    return {text: t.textContent, fill: getComputedStyle(t).fill, x: box.left - 3, y: box.top + box.height / 2};
})"""


def contrast(a, b) -> float:
    """WCAG 2.1's contrast ratio of two colours [r, g, b] in 0–255."""
    def luminance(rgb):
        c = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in (x / 255 for x in rgb)]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    light, dark = sorted([luminance(a), luminance(b)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


def low_contrast_numbers(page) -> list:
    """The cells' numbers under WCAG 2.1 AA's 4.5 : 1 on the colour painted beside them (3 px left of the text, in
    the cell), read from a screenshot: the drawn text's fill against the drawn cell."""
    from PIL import Image

    numbers = page.evaluate(NUMBERS)
    shot = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"))
    low = []
    for n in numbers:
        r, g, b = shot[int(n["y"]), int(n["x"])]
        ratio = contrast([float(v) for v in n["fill"][n["fill"].index("(") + 1:-1].split(",")][:3], (r, g, b))
        if ratio < 4.5:
            low.append((n["text"], n["fill"], (r, g, b), round(ratio, 2)))
    assert len(numbers) > 20
    return low


def blue_pixels(page) -> int:
    """How many pixels of the map are the blue of a cell that restores (nearly) all of the clean answer, once the
    browser has painted it: screenshots frame after frame until they are there (or 100 frames have passed)."""
    from PIL import Image

    plot = page.locator(".js-plotly-plot").first
    plot.scroll_into_view_if_needed()
    for _ in range(100):
        rgb = np.asarray(Image.open(io.BytesIO(plot.screenshot())).convert("RGB")).astype(int)
        blue = int(((rgb[..., 2] - rgb[..., 0]) > 100).sum())  # white, orange and text have no such excess of blue
        if blue > 500:
            return blue
        page.wait_for_function(NEXT_FRAME)
    return blue


@pytest.mark.parametrize("width, height", [(1280, 720), (1920, 1080)])
def test_the_map_draws_in_chromium(server, browser, width, height):
    url, log = server
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"{url}/patching", timeout=300_000)
        page.wait_for_function(DRAWN, arg=["woman", "1.00"], timeout=300_000)
        assert page.locator("[data-testid='stException']").count() == 0
        assert blue_pixels(page) > 500
        assert low_contrast_numbers(page) == []
        shots = ROOT / "screenshots"
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / f"patching-{width}x{height}.png"))
    finally:
        page.close()
    assert "Traceback" not in log.read_text()
