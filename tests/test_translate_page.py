"""Two particle systems in one picture: translation.joint (both systems on one clock), analysis.move_shares (where
a decoder's moves come from), and the Translate page, in AppTest and in Debian's Chromium (what is drawn).

The models are make_tiny_translation's (random weights, the paper's IWSLT14 shape made tiny); what they compute is
checked against the paper's code in tests/test_translation.py. Here: that the pictures and the measure show what the
two trajectories hold, recomputed from them by plain loops.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import macaron
from conftest import make_tiny_models, make_tiny_translation
from macaron import plot
from macaron.plot.style import display_token, esc, named, short_token
from macaron.schemes import CONVECTION, CROSS, DIFFUSION
from macaron.studies import analysis
from macaron.translation.model import EXAMPLES, joint
from served import PATIENCE
from test_marian import GERMAN, with_specials_only, write_marian

APP = Path(__file__).resolve().parent.parent / "app" / "main.py"
SENTENCE = EXAMPLES["de"][0]
MARIAN = "tiny-opus-mt-de-en"


@pytest.fixture(scope="module")
def pair_dir(tmp_path_factory, tokenizer) -> Path:
    """Three translation models (two converted as fairseq writes them, one Marian as the Hub holds one) and two
    encoders, side by side in one folder of models."""
    folder = tmp_path_factory.mktemp("translation-models")
    make_tiny_translation(folder)
    write_marian(folder / MARIAN)
    return make_tiny_models(folder, tokenizer)


@pytest.fixture(scope="module")
def translated(pair_dir):
    model = macaron.load(pair_dir / "tiny-macaron-de-en", device="cpu")
    return model, model.translate(SENTENCE, beam=1)


# ---- the library ----------------------------------------------------------------------------------------------------
def test_both_systems_move_on_one_clock(translated):
    """While the encoder runs the target's particles wait at their embeddings; then the source stays where the
    encoder left it and the target moves as the decoder moved it; the decoder's clock runs on from the encoder's."""
    _, tr = translated
    both = joint(tr)
    S, E = len(tr.source.tokens), tr.source.n_steps
    assert both.tokens == tr.source.tokens + tr.target.tokens
    assert both.n_steps == E + tr.target.n_steps
    for k in range(E + 1):
        np.testing.assert_array_equal(both.states[k, :S], tr.source.states[k])
        np.testing.assert_array_equal(both.states[k, S:], tr.target.states[0])
    for k in range(1, tr.target.n_steps + 1):
        np.testing.assert_array_equal(both.states[E + k, :S], tr.source.states[-1])
        np.testing.assert_array_equal(both.states[E + k, S:], tr.target.states[k])
    layers = tr.source.times[-1]
    assert both.times[E] == layers and both.times[-1] == layers + tr.target.times[-1]
    assert all(s.label.startswith("encoder layer") for s in both.steps[:E])
    assert all(s.label.startswith("decoder layer") for s in both.steps[E:])
    assert both.meta["two_systems"] == dict(source=S, encoder_layers=layers, encoder_steps=E)


def test_each_mixing_matrix_sits_in_its_block(translated):
    """Encoder attention: source rows over source columns; decoder self-attention: target rows over earlier target
    columns (causal); cross-attention: target rows over source columns. Rows of the still system are zero."""
    _, tr = translated
    both = joint(tr)
    S, E = len(tr.source.tokens), tr.source.n_steps
    T = len(tr.target.tokens)
    kinds = set()
    for k, (step, m) in enumerate(zip(both.steps, both.mixing)):
        if step.kind == CONVECTION:
            assert m is None
            continue
        kinds.add(step.kind)
        rows, cols = (slice(0, S), slice(0, S)) if k < E else (slice(S, S + T), slice(0, S) if step.kind == CROSS
                                                                  else slice(S, S + T))
        block = m[:, rows, cols]
        np.testing.assert_allclose(block.sum(-1), 1.0, atol=1e-5)  # each row's whole attention is in its block
        assert m.sum() == pytest.approx(block.sum(), abs=1e-4)
        if k >= E and step.kind == DIFFUSION:
            assert np.triu(block.mean(0), 1).max() == 0.0  # the decoder sees only the words before
    assert kinds == {DIFFUSION, CROSS}


def test_a_decoders_cross_attention_is_drawn_with_its_source(translated):
    """Alone, a decoder's trajectory lacks the source's particles that cross-attention's columns are: one clear
    message, naming what draws both."""
    _, tr = translated
    cross = next(k for k, step in enumerate(tr.target.steps) if step.kind == CROSS)
    with pytest.raises(ValueError, match="translation.joint"):
        plot.mixing_heatmap(tr.target, cross)


def test_move_shares_are_each_kinds_share_of_the_path(translated):
    """Recomputed by loops over the decoder's trajectory: per layer and particle, the sum of each kind's ‖Δx‖ over
    the sum of all; the mean over the particles."""
    _, tr = translated
    traj = tr.target
    shares = analysis.move_shares([traj, traj], normalised=False, hide_special=False)
    assert shares.kinds == (DIFFUSION, CROSS, CONVECTION)
    assert shares.sentences == 2 and shares.particles == 2 * len(traj.tokens)
    layers = sorted({s.layer for s in traj.steps})
    for layer in layers:
        per_particle = []
        for i in range(len(traj.tokens)):
            path = {kind: 0.0 for kind in shares.kinds}
            for k, step in enumerate(traj.steps):
                if step.layer == layer:
                    path[step.kind] += float(np.sqrt(((traj.states[k + 1, i] - traj.states[k, i]) ** 2).sum()))
            total = sum(path.values())
            per_particle.append([path[kind] / total for kind in shares.kinds])
        np.testing.assert_allclose(shares.shares[layers.index(layer)], np.mean(per_particle, 0), rtol=1e-6)
    np.testing.assert_allclose(shares.shares.sum(1), 1.0)


def test_the_figure_of_two_systems(translated):
    """One frame per state; the legend names the two systems; a particle that does not move draws no arrow; the
    matrix beside is the block that moves, recomputed from each system's own trajectory (the encoder's attention
    and FFN source × source, the decoder's self-attention and FFN translation × translation, its cross-attention
    translation × source); the slider's ticks count the encoder's layers and then the decoder's."""
    _, tr = translated
    both = joint(tr)
    from test_plot import decoded, validated

    fig = validated(plot.particles(both, analysis.project(both, 2, True, False), labels="none"))
    assert len(fig.frames) == both.n_steps + 1
    names = [d.name for d in fig.data]
    assert "source sentence" in names and "translation" in names and "external field (cross-attention)" in names
    S, E = len(tr.source.tokens), tr.source.n_steps
    cross = names.index("external field (cross-attention)")
    for f in range(E + 1, both.n_steps + 1):
        arrows = decoded(fig.to_dict()["frames"][f]["data"][cross]["x"]).astype(float).reshape(-1, 3)[:, :2]
        drawn = ~np.isnan(arrows).all(1)
        if both.steps[f - 1].kind == CROSS:  # only the target's particles move, so only they have arrows
            assert not drawn[:S].any() and drawn[S:].all()
        else:
            assert not drawn.any()
    frames = fig.to_dict()["frames"]
    for f in range(1, both.n_steps + 1):  # the matrix: the moving system's rows over the system it listens to
        system, k = (tr.source, f - 1) if f <= E else (tr.target, f - 1 - E)
        step, heat = system.steps[k], frames[f]["data"][-1]
        listened = tr.source if f <= E or step.kind == CROSS else tr.target
        at = {id(tr.source): range(S), id(tr.target): range(S, len(both.tokens))}  # their places in `both`
        assert [int(label.split("·")[0]) for label in heat["y"]] == list(at[id(system)])
        assert [int(label.split("·")[0]) for label in heat["x"]] == list(at[id(listened)])
        z = decoded(heat["z"]).reshape(len(system.tokens), -1)
        expected = 100 * (np.eye(len(system.tokens)) if step.kind == CONVECTION else system.mixing[k].mean(0))
        np.testing.assert_array_equal(z, np.rint(expected))
        layout = frames[f]["layout"]
        assert layout["yaxis2"]["tickvals"] == heat["y"] and layout["xaxis2"]["tickvals"] == heat["x"]
    ticks = [s.label for s in fig.layout.sliders[0].steps if s.label]
    layers = int(tr.source.times[-1])
    assert ticks == ["0"] + [f"E{k}" for k in range(1, layers + 1)] + [f"D{k}" for k in range(1, layers + 1)]


# ---- the page, in AppTest ---------------------------------------------------------------------------------------
def _app(pair_dir, monkeypatch, **params):
    monkeypatch.setenv("MACARON_MODELS_DIR", str(pair_dir))
    monkeypatch.delenv("MACARON_MODELS", raising=False)
    return _translate_page(**params)


def _translate_page(**params):
    """The app in AppTest, on the Translate page, with these URL parameters; no exception raised."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=180)
    at.query_params.update(params)
    at.run()
    at.switch_page("views/translate.py")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_the_page_translates_and_lists_only_translation_models(pair_dir, monkeypatch, translated):
    at = _app(pair_dir, monkeypatch, src=SENTENCE, beam="1")
    model, tr = translated
    said = " ".join(m.value for m in at.markdown)
    assert f"de → en:** {tr.text}" in said
    assert f"{len(tr.target.tokens) - 2} tokens, greedy" in said  # the decoder's particles but its start and </s>
    assert at.selectbox(key="t_model").options == ["tiny-macaron-de-en", MARIAN, "tiny-transformer-de-en"]
    assert at.selectbox(key="t_b").options == ["(none)", MARIAN, "tiny-transformer-de-en"]
    at.switch_page("views/particles.py")
    at.run()
    assert not at.exception
    assert at.selectbox(key="p_model").options == ["tiny-macaron", "tiny-transformer"]


def test_a_linked_word_is_ringed_and_its_cross_attention_spelled_out(pair_dir, monkeypatch, translated):
    """focus=<word> (as labelled, word-start mark aside): the picker holds it, and at the decoder's first
    cross-attention the figure says whom that translation particle listened to, largest first, read here from the
    joint trajectory's target-row, source-column block by a plain sort (head mean)."""
    model, tr = translated
    both = joint(tr)
    S = both.meta["two_systems"]["source"]
    i = next(k for k in range(S, len(both.tokens)) if display_token(both.tokens[k]) not in
             {display_token(t) for t in both.tokens[:k]})  # the first target word that is no earlier particle's label
    word = display_token(both.tokens[i])
    at = _app(pair_dir, monkeypatch, src=SENTENCE, beam="1", focus=word)
    assert at.selectbox(key="t_focus").value == word
    k = next(k for k, s in enumerate(both.steps) if s.kind == CROSS)
    row = both.mixing[k].mean(0)[i]
    first = max(range(S), key=lambda j: row[j])
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    said = " ".join(a["text"] for a in fig["frames"][k + 1]["layout"]["annotations"])
    assert f"<b>{esc(word)}</b> listened to: " in said
    twice = both.tokens.count(both.tokens[first]) > 1  # a repeated word goes by its place
    notes = [" ".join(a["text"] for a in f["layout"]["annotations"]) for f in fig["frames"]]
    assert notes[1].endswith(f"<b>{esc(word)}</b> stays put")  # the encoder moves the source only
    ffn = next(f for f in range(both.meta["two_systems"]["encoder_steps"] + 1, len(notes))
               if both.steps[f - 1].kind == CONVECTION)
    assert notes[ffn].endswith(f"<b>{esc(word)}</b> reads only itself")
    assert said.split("listened to: ")[1].startswith(esc(display_token(both.tokens[first], first if twice else None)))


def test_the_shares_are_measured_over_the_presets_when_asked(pair_dir, monkeypatch):
    """over=presets: the chart's words name the preset sentences and count their translations' particles."""
    at = _app(pair_dir, monkeypatch, over="presets", beam="1")
    model = macaron.load(pair_dir / "tiny-macaron-de-en", device="cpu")
    particles = sum(len(model.translate(s, beam=1).target.tokens) - 2 for s in EXAMPLES["de"])  # </s> left out
    said = " ".join(str(e.value) for e in [*at.caption, *at.markdown])
    assert f"the translations of the {len(EXAMPLES['de'])} preset sentences ({particles} particles" in said


def test_a_fetched_releases_presets_are_its_test_sentences(tmp_path, pair_dir, monkeypatch):
    """A model that fetch imported, with the test set it brought: the presets, the sentence first shown and the
    shares chart's sentences are the test set's sources as text (BPE removed, Moses-detokenised, as sacremoses
    reads them back)."""
    from sacremoses import MosesDetokenizer

    from test_bleu import ENGLISH as TEST_ENGLISH
    from test_bleu import GERMAN as TEST_GERMAN
    from test_bleu import ids, write_set

    name = "paper-macaron-iwslt14-de-en"
    shutil.copytree(pair_dir / "tiny-macaron-de-en", tmp_path / "models" / name)
    write_set(tmp_path / "paper" / name / "data" / "data-bin" / "iwslt14.tokenized.de-en",
              [ids(s) for s in TEST_GERMAN], [ids(s) for s in TEST_ENGLISH])
    monkeypatch.setenv("MACARON_CACHE", str(tmp_path))
    at = _app(tmp_path / "models", monkeypatch, over="presets", beam="1")
    detok = MosesDetokenizer("de")
    expected = [detok.detokenize(s.replace("@@ ", "").split()) for s in TEST_GERMAN]
    assert at.selectbox(key="t_preset").options == ["(choose one)", *expected]
    assert at.text_input(key="t_text").value == expected[0]
    said = " ".join(str(e.value) for e in [*at.caption, *at.markdown])
    assert f"the translations of the first {len(expected)} sentences of the paper's test set" in said


def test_bad_input_is_a_message(pair_dir, monkeypatch):
    at = _app(pair_dir, monkeypatch)
    for text, said in (("   ", "Type a sentence"), ("haus " * 200, "translates at most"),
                       ("\u200b\u2063 🙂 ß", None)):
        at.text_input(key="t_text").set_value(text).run()
        assert not at.exception, (text, [e.message for e in at.exception])
        shown = " ".join(str(e.value) for e in [*at.info, *at.warning, *at.error])
        if said:
            assert said in shown, (text, shown)


def long_for(pair_dir) -> str:
    """A sentence the Marian model refuses (more tokens than its encoder's positions) and the converted Macaron
    translates (fewer than its own, and than the explorer's limit): the preset, repeated."""
    short, long = (macaron.load(pair_dir / name, device="cpu") for name in (MARIAN, "tiny-macaron-de-en"))

    def tokens(model, text):
        ids, _, dropped = model.tokenize(text)
        return len(ids) + dropped

    text = next(t for t in (" ".join([SENTENCE] * k) for k in range(1, 20))
                if tokens(short, t) > short.config.encoder.max_len)
    assert tokens(long, text) <= long.config.encoder.max_len
    return text


def test_a_second_model_that_fails_leaves_the_first_drawn_and_says_why(tmp_path, pair_dir, monkeypatch):
    """Beside it, on one clock: a second model that refuses the sentence (more tokens than its positions), or whose
    folder is damaged, gives its own message in its name; the first model's translation and drawing stay."""
    models = tmp_path / "models"
    for name in ("tiny-macaron-de-en", MARIAN):
        shutil.copytree(pair_dir / name, models / name)
    damaged = shutil.copytree(pair_dir / "tiny-transformer-de-en", models / "damaged-de-en")
    weights = damaged / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])  # cut short, as a copy that failed half way
    first = macaron.load(models / "tiny-macaron-de-en", device="cpu")
    long = long_for(pair_dir)
    for other, text, says in ((MARIAN, long, "positions this model's encoder has"),
                              ("damaged-de-en", SENTENCE, "damaged or truncated safetensors file")):
        at = _app(models, monkeypatch, m="tiny-macaron-de-en", b=other, src=text, beam="1")
        shown = [str(e.value) for e in [*at.warning, *at.error]]
        assert any(s.startswith(f"**{other}**: ") and says in s for s in shown), shown
        said = " ".join(m.value for m in at.markdown)
        assert f"de → en:** {first.translate(text, beam=1).text}" in said
        assert f"{other}, de → en" not in said  # no line for the model that failed
        charts = {c.key for c in at.get("plotly_chart")}
        assert {"t_anim", "t_shares"} <= charts and "t_pair" not in charts, charts  # the first model's, alone
        assert at.query_params["b"] in (other, [other])  # the choice stays in the link


def test_ids_without_a_vocabulary_entry_are_drawn_by_number(tmp_path, pair_dir, monkeypatch):
    """A Marian folder whose vocab.json names fewer ids than its embeddings (as benchmarks/bench_translate.py writes
    one): the page shows the translation and draws its particles, those whose id has no entry labelled <id 17>."""
    models = tmp_path / "models"
    folder = with_specials_only(pair_dir / MARIAN, models / "specials-only-de-en")
    tr = macaron.load(folder, device="cpu").translate(GERMAN[0], beam=1)
    unnamed = [t for t in tr.target.tokens if t.startswith("<id ")]
    assert unnamed
    at = _app(models, monkeypatch, src=GERMAN[0], beam="1")
    said = " ".join(m.value for m in at.markdown)
    assert f"de → en:** {tr.text or '(nothing)'}" in said
    fig = json.loads(next(c for c in at.get("plotly_chart") if c.key == "t_anim").proto.spec)
    drawn = {t for trace in fig["data"] for t in (trace.get("text") or []) if isinstance(t, str)}
    assert {esc(display_token(t)) for t in unnamed} <= drawn, sorted(drawn)


def test_with_the_hub_allowed_and_no_translation_model_the_hub_picker_opens_one(tmp_path, pair_dir, monkeypatch):
    """MACARON_HUB=1 on a server with no translation model: the page gives its advice and offers the Hub in its
    model picker; a Marian model named there (from the local Hub cache) translates."""
    from test_hub import put_in_cache

    folder = pair_dir / MARIAN
    put_in_cache(tmp_path / "hub", "Helsinki-NLP/opus-mt-de-en",
                 {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file()})
    for name, value in (("HF_HUB_CACHE", str(tmp_path / "hub")), ("HF_HUB_OFFLINE", "1"), ("MACARON_HUB", "1")):
        monkeypatch.setenv(name, value)
    (tmp_path / "models").mkdir()
    at = _app(tmp_path / "models", monkeypatch, beam="1")
    assert "No translation model on this server yet" in at.info[0].value
    picker = at.selectbox(key="t_model")
    assert picker.options == ["A model from the Hub…"] and picker.value == "A model from the Hub…"
    at.text_input(key="t_model_hub").set_value("Helsinki-NLP/opus-mt-de-en").run()
    at.text_input(key="t_text").set_value(GERMAN[0]).run()
    assert not at.exception and not at.error, [e.message for e in at.exception]
    tr = macaron.load(folder, device="cpu").translate(GERMAN[0], beam=1)
    assert f"de → en:** {tr.text}" in " ".join(m.value for m in at.markdown)


# ---- the page, in Chromium -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(pair_dir, tmp_path_factory):
    from served import server as app_server

    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS"}
    env["MACARON_MODELS_DIR"] = str(pair_dir)
    with app_server(env, tmp_path_factory.mktemp("server") / "streamlit.log") as (url, _):
        yield url


TITLE = "() => document.querySelector('.js-plotly-plot .gtitle')?.textContent || ''"
LEGEND = "() => Array.from(document.querySelectorAll('.js-plotly-plot .legendtext')).map(e => e.textContent)"
SEEN = ("() => ({title: document.querySelector('.js-plotly-plot .gtitle')?.textContent || '', "
        "rows: Array.from(document.querySelectorAll('.js-plotly-plot .y2tick text')).map(e => e.textContent), "
        "cols: Array.from(document.querySelectorAll('.js-plotly-plot .x2tick text')).map(e => e.textContent)})")


@pytest.mark.parametrize("name, sentence", [("tiny-macaron-de-en", SENTENCE), (MARIAN, GERMAN[3])])
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_play_moves_both_systems_on_the_first_screen(server, browser, size, name, sentence, pair_dir):
    """For a converted fairseq model and a Marian model: the translation in words, both systems in the legend, and
    Play runs the encoder's layers, then the decoder's with cross-attention, moving particles on the screen."""
    from test_browser import SHOTS, fits, no_errors, settle

    tr = macaron.load(pair_dir / name, device="cpu").translate(sentence, beam=1)
    pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        pg.goto(f"{server}/translate?beam=1&m={name}&src={sentence.replace(' ', '+')}")
        settle(pg, 180_000)  # the server's first page loads PyTorch, and the model, and translates
        no_errors(pg)
        shown = " ".join(pg.inner_text("[data-testid='stMainBlockContainer']").split())
        assert " ".join(tr.text.split()) in shown  # the translation, as words (a browser draws one space for two)
        assert {"source sentence", "translation"} <= set(pg.evaluate(LEGEND))
        assert "embeddings of both sentences" in pg.evaluate(TITLE)
        fits(pg, "input[aria-label='Sentence to translate (de)']", ".js-plotly-plot",
             ".js-plotly-plot .updatemenu-button")
        plane = pg.locator(".js-plotly-plot .nsewdrag").first
        before = plane.screenshot()
        pg.locator(".js-plotly-plot .updatemenu-button").first.click()
        titles, crossed = set(), []
        for _ in range(60):
            pg.wait_for_timeout(150)
            seen = pg.evaluate(SEEN)
            titles.add(seen["title"])
            if "external field (cross-attention)" in seen["title"]:
                crossed.append(seen)
        assert any(t.startswith("encoder layer") for t in titles), titles
        assert any(t.startswith("decoder layer") for t in titles) and crossed, titles
        # the matrix drawn beside a cross-attention sub-step: each translation particle's row over the source's columns
        for seen in crossed:
            assert seen["rows"] == [short_token(t) for t in tr.target.tokens], seen
            assert seen["cols"] == [short_token(t) for t in tr.source.tokens], seen
        SHOTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(SHOTS / f"translate-{name}-{size[0]}x{size[1]}.png"))
        assert plane.screenshot() != before  # the particles moved on the screen
        no_errors(pg)
    finally:
        pg.close()


BOXES = """() => {  // [left, top, right, bottom] as drawn: the first figure's legend, its plane, each note
    const g = document.querySelector('.js-plotly-plot');
    const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    return {legend: box(g.querySelector('.legend')), plane: box(g.querySelector('.draglayer .xy .nsewdrag')),
            notes: Array.from(g.querySelectorAll('.annotation-text')).map(box)};
}"""


def overlap(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1


@pytest.mark.parametrize("size, least", [((1920, 1080), 0.45), ((1280, 720), 0.4)])
def test_presenter_mode_fills_the_screen_as_the_other_pages_do(server, browser, size, least):
    """On a projector the figure reaches the screen's foot with ▶ Play on it; the plane is as tall as the Particles
    page's at 1920 × 1080 (at 1280 × 720 the translation's line takes 40 px more; the legend, beside the plane where
    the matrix gave way, no longer takes a second row above it: 0.4 of the screen, was 0.35), a unit of PC1 as long
    as a unit of PC2 as drawn, its labels at 18 px or more."""
    from test_browser import PLANES, SHOTS, fits, no_errors, settle, unit_px

    pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        pg.goto(f"{server}/translate?present=1&beam=1&src={SENTENCE.replace(' ', '+')}")
        settle(pg, 180_000)
        pg.wait_for_function(f"() => document.querySelector('.js-plotly-plot .nsewdrag')"
                             f".getBoundingClientRect().height >= {least} * innerHeight", timeout=PATIENCE)
        no_errors(pg)
        fits(pg, ".js-plotly-plot .updatemenu-button")
        foot = pg.evaluate("() => document.querySelector('.js-plotly-plot').getBoundingClientRect().bottom")
        assert foot >= size[1] - 40, foot  # the figure takes the room there is
        (plane,) = pg.evaluate(PLANES)
        assert plane["height"] >= least * size[1], plane
        assert unit_px(plane["x"], 0) == pytest.approx(unit_px(plane["y"], 1), rel=0.05)
        sizes = pg.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot .subplot.xy .textpoint "
                            "text')).map(t => parseFloat(getComputedStyle(t).fontSize))")
        assert sizes and min(sizes) >= 18
        # the legend stands clear of the plane and of the note on who pulls whom: above the plane, or beside it in
        # the matrix's column where the matrix gave way (then its rows above went to the plane)
        boxes = pg.evaluate(BOXES)
        for other in [boxes["plane"], *boxes["notes"]]:
            assert not overlap(boxes["legend"], other), (boxes["legend"], other)
        legend, drawn = boxes["legend"], boxes["plane"]
        assert legend[3] <= drawn[1] + 1 or legend[0] >= drawn[2] - 1, (legend, drawn)
        SHOTS.mkdir(exist_ok=True)
        pg.screenshot(path=str(SHOTS / f"translate-presenter-{size[0]}x{size[1]}.png"))
    finally:
        pg.close()


@pytest.mark.parametrize("query", ["beam=1", "beam=1&present=1", "beam=1&b=tiny-transformer-de-en"])
def test_no_wcag21_violation(server, browser, query):
    """axe-core's WCAG 2.1 A and AA rules (tests/test_a11y.py's check: the first screen, then screenful by screenful)
    on the page with one model, on a projector, and with two side by side; and WCAG's contrast of every text the
    figures draw, while ▶ Play runs."""
    from test_a11y import SVG_TEXT, check, low_contrast
    from test_browser import settle

    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        pg.goto(f"{server}/translate?{query}")
        settle(pg, 180_000)
        check(pg, f"/translate?{query}")
        texts = pg.evaluate(SVG_TEXT)  # and the figures' own words, which axe-core skips: titles, bars' per cents
        pg.locator(".js-plotly-plot .updatemenu-button").first.click()
        for _ in range(12):
            pg.wait_for_timeout(250)
            texts += pg.evaluate(SVG_TEXT)
        assert any(t["ground"] != "rgb(255, 255, 255)" for t in texts)  # the shares' per cents, on their bars
        assert not low_contrast(texts), sorted(low_contrast(texts))
    finally:
        pg.close()


def test_a_second_model_that_refuses_the_sentence_is_a_message_beside_the_first_drawing(server, browser, pair_dir):
    """With the Marian model beside the converted Macaron on a sentence longer than its positions: the person sees
    the Macaron's translation and its two particle systems drawn, and the Marian model's own message; no traceback."""
    from urllib.parse import quote_plus

    from test_browser import no_errors, settle

    text = long_for(pair_dir)
    tr = macaron.load(pair_dir / "tiny-macaron-de-en", device="cpu").translate(text, beam=1)
    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        pg.goto(f"{server}/translate?beam=1&m=tiny-macaron-de-en&b={MARIAN}&src={quote_plus(text)}")
        settle(pg, 180_000)
        no_errors(pg)
        shown = " ".join(pg.inner_text("[data-testid='stMainBlockContainer']").split())
        assert "Traceback" not in shown and pg.locator("[data-testid='stAlertContentError']").count() == 0
        warning = " ".join(pg.locator("[data-testid='stAlertContentWarning']").first.inner_text().split())
        assert f"{MARIAN}: The sentence reads as" in warning  # after its icon's name
        assert "positions this model's encoder has" in warning
        assert f"de → en: {' '.join(tr.text.split())}" in shown
        assert {"source sentence", "translation"} <= set(pg.evaluate(LEGEND))  # the first model's animation
        assert "embeddings of both sentences" in pg.evaluate(TITLE)
        assert pg.locator(".js-plotly-plot").count() == 2  # the animation and its shares, not a pair of panels
    finally:
        pg.close()


# ---- the shipped translators, out of the box (no environment variable, no download) -----------------------------
def _shipped_app(monkeypatch, **params):
    for var in ("MACARON_MODELS", "MACARON_MODELS_DIR", "MACARON_HUB", "MACARON_MODEL_ROOTS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MACARON_CACHE", "/nonexistent-macaron-cache")  # nothing imported on this machine counts
    return _translate_page(**params)


def test_the_shipped_macaron_translator_opens_the_page_on_a_translation(monkeypatch):
    from macaron.formats.folder import translator_scores
    from macaron.sources.shipped import PRETRAINED
    from macaron.translation.model import presets

    at = _shipped_app(monkeypatch)
    assert at.selectbox(key="t_model").value == "macaron-es-en"
    assert at.selectbox(key="t_b").options == ["(none)", "transformer-es-en"]  # "Beside it": the Transformer
    first = EXAMPLES["es"][0]
    assert at.text_input(key="t_text").value == first
    assert at.selectbox(key="t_preset").options == ["(choose one)", *EXAMPLES["es"],
                                                    *presets(PRETRAINED / "macaron-es-en")]
    said = " ".join(m.value for m in at.markdown)
    expected = macaron.load("macaron-es-en", device="cpu").translate(first, beam=5).text
    assert f"es → en:** {expected}" in said
    scores = translator_scores(PRETRAINED / "macaron-es-en")
    assert f"**macaron-es-en**: BLEU {scores['bleu']:.1f}, chrF {scores['chrf']:.1f}" in said
    at.selectbox(key="t_b").set_value("transformer-es-en").run()
    assert not at.exception
    other = macaron.load("transformer-es-en", device="cpu").translate(first, beam=5).text
    said = " ".join(m.value for m in at.markdown)
    assert f"es → en:** {other}" in said and "**transformer-es-en**: BLEU" in said


def test_bad_input_to_a_shipped_translator_is_a_message_or_a_translation(monkeypatch):
    at = _shipped_app(monkeypatch)
    for text, said in (("", "Type a sentence"), ("palabra " * 500, "translates at most"),
                       ("The weather is nice today.", None), ("🙂🙂 ¿qué? \u200b", None)):
        at.text_input(key="t_text").set_value(text).run()
        assert not at.exception, (text, [e.message for e in at.exception])
        shown = " ".join(str(e.value) for e in [*at.info, *at.warning, *at.error, *at.markdown])
        assert (said in shown) if said else "es → en:**" in shown, (text, shown[:500])


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_a_fresh_app_opens_translate_on_the_shipped_translator(browser, size, tmp_path):
    """The app as `make app` serves it (no environment variable, nothing downloaded): Translate opens on the shipped
    Macaron translator's translation of the first preset, drawn; Play runs the encoder, then the decoder."""
    from served import server as app_server
    from test_browser import fits, no_errors, settle

    first = EXAMPLES["es"][0]
    expected = macaron.load("macaron-es-en", device="cpu").translate(first, beam=5).text
    env = {k: v for k, v in os.environ.items() if not k.startswith("MACARON_")}
    env["MACARON_CACHE"] = str(tmp_path / "cache")  # an empty cache: only what the clone ships
    with app_server(env, tmp_path / "streamlit.log") as (url, _):
        pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
        try:
            pg.goto(f"{url}/translate")
            settle(pg, 180_000)
            no_errors(pg)
            shown = " ".join(pg.inner_text("[data-testid='stMainBlockContainer']").split())
            assert f"es → en: {expected}" in shown
            assert {"source sentence", "translation"} <= set(pg.evaluate(LEGEND))
            fits(pg, "input[aria-label='Sentence to translate (es)']", ".js-plotly-plot",
                 ".js-plotly-plot .updatemenu-button")
            pg.locator(".js-plotly-plot .updatemenu-button").first.click()
            pg.wait_for_function("() => (document.querySelector('.js-plotly-plot .gtitle')?.textContent || '')"
                                 ".startsWith('decoder layer')", timeout=PATIENCE)
            no_errors(pg)
        finally:
            pg.close()


# ---- the guided lesson's translation step, on the shipped translator ----------------------------------------------
def test_the_lessons_translation_step_opens_translate_at_cross_attention(monkeypatch):
    """Lesson step 7 (typed by hand, ?lesson=7): the shipped Macaron translator on the step's sentence, the animation
    at the decoder's first cross-attention sub-step, and the step's note with the translation race's finding."""
    from macaron import lesson
    from macaron.studies import translation_race as bleu_race
    from macaron.studies import zoo

    k = next(k for k, s in enumerate(lesson.LESSON, 1) if s.page.endswith("translate.py"))
    at = _shipped_app(monkeypatch, lesson=str(k))
    said = " ".join(m.value for m in at.markdown)
    assert f"Lesson {k} of {len(lesson.LESSON)} · Two particle systems" in said
    assert at.selectbox(key="t_model").value == lesson.TRANSLATOR
    assert at.text_input(key="t_text").value == lesson.TRANSLATION_SENTENCE
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    frame = int(lesson.LESSON[k - 1].view["frame"])
    assert fig["layout"]["sliders"][0]["active"] == frame
    title = fig["layout"]["title"]["text"]
    assert "<b>decoder layer 1 · " in title and "cross-attention" in title
    labels = {t for d in fig["data"] if isinstance(d.get("text"), list) for t in d["text"] if isinstance(t, str)}
    assert {"banco", "parque", "bench"} <= labels and not any("▁" in t for t in labels)  # words, without ▁
    gist = bleu_race.gist(zoo.runs(task="translation"))  # the translation race, beside the paper's claim
    assert gist and gist in lesson.step(k).note and gist in lesson.step(5).note and "+1.0 on IWSLT14" in gist


def test_the_lessons_translation_claim_holds_on_the_shipped_translator():
    """Step 7's note: in the decoder's cross-attention of layers 1 and 2, the particle that writes bench (▁the,
    before it) listens most to banco, and so does the one that writes bank in the other sentence (head mean, as
    the dotted arrows are drawn). Read here from the mixing matrices' target-row, source-column block."""
    from macaron import lesson

    model = macaron.load_translator(lesson.TRANSLATOR, device="cpu")
    for sentence, word in ((lesson.TRANSLATION_SENTENCE, "▁bench"), ("Llevé el dinero al banco.", "▁bank")):
        both = joint(model.translate(sentence, beam=5))
        S = both.meta["two_systems"]["source"]
        target = both.tokens[S:]
        writer = S + target.index(word) - 1  # the particle whose next word it is
        assert both.tokens[writer] == "▁the", target
        if sentence == lesson.TRANSLATION_SENTENCE:  # the particle the step rings and spells out
            assert named(both.tokens, lesson.step(7).view["focus"]) == writer
        crosses = [k for k, s in enumerate(both.steps) if s.kind == CROSS][:2]
        assert [both.labels[k + 1].split(" · ")[0] for k in crosses] == ["decoder layer 1", "decoder layer 2"]
        for k in crosses:
            w = both.mixing[k].mean(0)[writer, :S]
            assert both.tokens[int(w.argmax())] == "▁banco", (sentence, both.labels[k + 1], w)
        if sentence == lesson.TRANSLATION_SENTENCE:  # the plan's figures, as the line above the plot writes them
            banco = both.tokens.index("▁banco")
            w1, w2 = (f"{both.mixing[k].mean(0)[writer, banco]:.0%}".replace("%", " %") for k in crosses)
            docs = Path(__file__).resolve().parent.parent / "docs"
            plan, page = (docs / "teach" / "plan.md").read_text(), (docs / "app" / "translate.md").read_text()
            assert f"listened most to *banco* ({w1} in decoder layer 1; " in plan and f"cross-attention: {w2})" in plan
            assert f"*banco* {w1} in the shipped translator's first cross-attention" in " ".join(page.split())
    step = next(s for s in lesson.LESSON if s.page.endswith("translate.py"))
    assert int(step.view["frame"]) == step.print_at == crosses[0] + 1  # the step opens and prints at that sub-step
