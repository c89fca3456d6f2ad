"""App tests (streamlit.testing AppTest): every page and every widget path, on tiny random models."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import explorer_state as state
import macaron
from macaron import lesson
from macaron.plot.style import esc
from macaron.studies import zoo
from test_plot import decoded

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "app" / "main.py")
TIMEOUT = 120


def run(at: AppTest) -> AppTest:
    at.run(timeout=TIMEOUT)
    assert not at.exception, [e.message for e in at.exception]
    return at


def fresh(query: dict | None = None, page: str | None = None) -> AppTest:
    """The app opened at a link (`query`), then, where given, moved to another page as its navigation does."""
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    if query:
        at.query_params.update(query)
    run(at)
    if page:
        at.switch_page(page)
        run(at)
    return at


def charts(at: AppTest) -> list:
    return at.get("plotly_chart")


def texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


@pytest.fixture(autouse=True)
def _models(app_env):
    yield


# ---- model discovery (pure) --------------------------------------------------------------------
def test_default_pair_prefers_small_transformer_and_macaron(tmp_path):
    names = ["bert-x", "macaron-mini", "transformer-mini", "macaron-small", "transformer-small"]
    assert state.default_pair(names, {n: tmp_path / n for n in names}) == ("transformer-small", "macaron-small")
    assert state.default_pair(["macaron-mini", "transformer-mini"]) == ("transformer-mini", "macaron-mini")
    # the race's control is a Transformer's sub-layers too, but not the Transformer (sorted, it comes first)
    assert state.default_pair(["macaron-mini", "transformer-halves-mini", "transformer-mini"]) == \
        ("transformer-mini", "macaron-mini")
    assert state.default_pair(["only"]) == ("only", "only")
    assert state.default_pair([]) == (None, None)


def test_default_pair_is_a_finished_pair_while_a_bigger_one_trains(tmp_path):
    """A published milestone of a run still on its way is on offer but not opened first."""
    names = ["macaron-mini", "transformer-mini", "macaron-small", "transformer-small"]
    folders = {n: tmp_path / n for n in names}
    for n in names:
        folders[n].mkdir()
        done = n.endswith("mini")
        (folders[n] / "training.json").write_text(json.dumps({"steps": 90 + 10 * done, "budget_steps": 100}))
    assert state.default_pair(names, folders) == ("transformer-mini", "macaron-mini")
    (folders["transformer-small"] / "training.json").write_text(json.dumps({"steps": 100, "budget_steps": 100}))
    assert state.default_pair(names, folders) == ("transformer-mini", "macaron-mini")  # a finished size first
    (folders["macaron-small"] / "training.json").write_text(json.dumps({"steps": 100, "budget_steps": 100}))
    assert state.default_pair(names, folders) == ("transformer-small", "macaron-small")
    assert state.default_pair(["transformer-small"], folders) == ("transformer-small", "transformer-small")


def test_model_paths_from_environment(app_env, tmp_path, monkeypatch):
    assert set(state.model_paths()) == {"tiny-transformer", "tiny-macaron"}
    monkeypatch.delenv("MACARON_MODELS_DIR")
    monkeypatch.setenv("MACARON_MODELS", f"{app_env / 'tiny-macaron'},{tmp_path / 'x'}")
    assert list(state.model_paths()) == ["tiny-macaron", "x"]


def test_mask_word_offers_words_only():
    assert state.mask_word("the cat sat", 1) == "the [MASK] sat"
    assert state.mask_word("the cat sat", None) == "the cat sat"
    assert state.mask_word("the cat", 7) == "the cat"
    text = "the capital of france. is [MASK] , isn't it ?"
    assert [m.group() for m in state.maskable_words(text)] == ["the", "capital", "of", "france", "is", "isn't", "it"]
    assert state.mask_word(text, 3) == "the capital of [MASK]. is [MASK] , isn't it ?"  # the full stop stays


# ---- Particles --------------------------------------------------------------------------------------
def spec(at: AppTest, i: int = 0) -> dict:
    return json.loads(charts(at)[i].proto.spec)


def analysis_heard(at: AppTest, word: str, head: int) -> str:
    """What the figure should say `word` listened to in the page's model's first diffusion sub-step (one head,
    1-based), its four largest weights recomputed from a fresh trace of the page's sentence by a plain sort."""
    import macaron

    model = macaron.load(str(state.model_paths()[at.selectbox(key="p_model").value]), device="cpu")
    traj = model.trace(state.mask_word(at.text_input(key="p_text").value, at.selectbox(key="p_mask").value))
    k, i = next(k for k, m in enumerate(traj.mixing) if m is not None), traj.tokens.index(word)
    row = traj.mixing[k][head - 1][i]
    top = sorted(range(len(row)), key=lambda j: -row[j])[:4]
    t = traj.tokens
    return f"<b>{word}</b> listened to: " + " · ".join(
        f"{'itself' if j == i else f'{j}·{t[j]}' if t.count(t[j]) > 1 else t[j]} {100 * row[j]:.0f} %" for j in top)


def frame_notes(fig: dict, f: int) -> str:
    return " ".join(a["text"] for a in fig["frames"][f]["layout"]["annotations"])


def test_particles_default_view_and_url():
    at = fresh()
    assert len(charts(at)) >= 3  # the animation (with who pulls whom), rhythm, logit lens
    assert at.text_input(key="p_text").value == state.DEFAULT_SENTENCE
    qp = at.query_params
    assert qp["s"] == [state.DEFAULT_SENTENCE] or qp["s"] == state.DEFAULT_SENTENCE
    assert "frame" in qp and "m" in qp and qp["norm"] in ("1", ["1"])  # the operators' view by default
    fig = spec(at)
    assert len(fig["frames"]) == 5  # 2 layers × 2 sub-steps + embedding
    assert any(d["type"] == "heatmap" for d in fig["data"])  # who pulls whom, on the same clock
    assert "What the operators read" in texts(at.caption)
    dots = len(decoded(next(t for t in fig["data"] if t["name"] == "particles")["x"]))  # drawn: no [CLS], [SEP]
    said = re.search(r"(\d+) particles \((\d+) drawn: \*Leave out \[CLS\] and \[SEP\]\*\)", texts(at.caption))
    assert said and (int(said[1]), int(said[2])) == (dots + 2, dots)  # every particle, and those drawn
    assert len(at.main.get("download_button")) == 7  # PNG, SVG, GIF, MP4, HTML, CSV, JSON (the lesson's: sidebar)
    assert "O(h²) either way" in texts(at.markdown) and "Splitting lab" in texts(at.markdown)
    assert "γ" not in texts(at.markdown) + texts(at.caption)  # the step is h, as in the README and the lab


def test_the_model_pickers_i_says_what_its_list_holds(app_env, monkeypatch):
    """Issue 77: the ⓘ said only "Shipped models live in pretrained/". It says where the listed models come from
    (here the folders MACARON_MODELS_DIR names, all of them), and how to add one; without those variables, how many
    are shipped and their layers × width as their configs say, the others from this computer's caches."""
    at = fresh()
    names = list(state.model_paths())
    said = at.selectbox(key="p_model").help
    assert said.startswith(f"This list: 0 models shipped in pretrained/, {len(names)} from the folders "
                           "MACARON_MODELS or MACARON_MODELS_DIR name.")
    assert "python -m macaron fetch NAME" in said and "MACARON_MODELS=folder1,folder2" in said
    monkeypatch.delenv("MACARON_MODELS_DIR")
    listed = list(state.model_paths())  # pretrained/ and whatever loads from this computer's caches
    shipped = [n for n in listed if (ROOT / "pretrained" / n / "config.json").is_file()]
    shapes = {f"{c['n_layers']} × {c['d_model']}" for c in
              (json.loads((ROOT / "pretrained" / n / "config.json").read_text()) for n in shipped)}
    said = state.list_said(listed)
    assert said.startswith(f"This list: {len(shipped)} models shipped in pretrained/ ({' and '.join(sorted(shapes))}:"
                           " layers × width)")
    others = len(listed) - len(shipped)
    assert (f", {others} from this computer's Hugging Face cache or fetched releases." in said) == bool(others)
    for name in state.model_paths(translation=True):  # a translator: its encoder's and decoder's layers
        c = json.loads((Path(state.all_model_paths()[name]) / "config.json").read_text())
        if "encoder" in c:
            want = f"{c['encoder']['n_layers']} + {c['decoder']['n_layers']} × {c['encoder']['d_model']}"
            assert state.shape(state.all_model_paths()[name]) == want


def test_the_stage_of_trainings_context_effect_is_explained(tmp_path, app_env, monkeypatch):
    """Issue 77: "context effect +1.20 nats" under the stage of training had no word on what it is. Its ⓘ gives the
    definition macaron.train.evaluate computes: the held-out loss with each sequence's unmasked words shuffled,
    minus the loss as read; on a projector too, where the caption stands beside the control."""
    import shutil

    from conftest import add_stages

    staged = add_stages(shutil.copytree(app_env / "tiny-transformer", tmp_path / "staged"))
    monkeypatch.setenv("MACARON_MODELS", str(staged))
    for query in ({}, {"present": "1"}):
        at = fresh({"s": "the cat sat on the mat .", "m": "staged", **query})
        caption = next(c for c in at.caption if "context effect +1.20 nats" in str(c.value))
        assert "shuffled among themselves" in caption.proto.help and "minus the loss as read" in caption.proto.help


def test_particles_every_widget():
    at = fresh()
    words = state.DEFAULT_SENTENCE.replace("[MASK]", "").replace(" .", "").split()  # its words, not the mask
    assert at.selectbox(key="p_mask").options == ["(none)"] + [f"{i + 1}: {w}" for i, w in enumerate(words)]
    at.selectbox(key="p_preset").set_value("bank (river)")
    run(at)
    assert at.text_input(key="p_text").value == state.PRESETS["bank (river)"]
    assert "logit lens" in texts(at.subheader).lower()
    assert "Add **[MASK]**" in texts(at.info)  # no mask, no guesses
    assert "12: water" in at.selectbox(key="p_mask").options  # "water", not "water ."
    at.selectbox(key="p_mask").set_value(2)  # mask "on"
    run(at)
    assert len(charts(at)) >= 3 and "Final guesses" in texts(at.markdown)
    at.selectbox(key="p_model").set_value("tiny-macaron")
    run(at)
    assert "Macaron" in texts(at.caption)
    assert len(spec(at)["frames"]) == 7  # 2 layers × 3 sub-steps + embedding
    at.radio(key="p_dim").set_value("3D")
    run(at)
    assert any(d["type"] == "scatter3d" for d in spec(at)["data"])
    at.button_group(key="p_norm").set_value(False)
    at.toggle(key="p_hide").set_value(False)
    at.radio(key="p_labels").set_value("all")
    at.slider(key="p_trail").set_value(0)
    run(at)
    assert "raw residual stream" in texts(at.caption) and at.query_params["norm"] in ("0", ["0"])
    at.radio(key="p_dim").set_value("2D")
    at.radio(key="p_labels").set_value("none")
    run(at)
    at.radio(key="p_head").set_value("2")
    run(at)
    assert "head 2" in frame_notes(spec(at), 2)  # Macaron: ½C, D, ½C: state 2 follows the diffusion sub-step
    at.toggle(key="p_attr").set_value(True)
    run(at)
    assert any("supports" in str(m.value) for m in at.markdown)  # the attribution strip
    assert "log-probability" in texts(at.caption)


def test_particles_attribution_without_mask_explains_a_norm():
    at = fresh({"s": "the cat sat on the mat .", "attr": "1"})
    assert at.selectbox(key="p_attr_tok").value == 1
    assert "norm of the final state" in texts(at.caption)


def test_particles_reopens_a_shared_link():
    q = {"s": "i went to the bank to deposit my money .", "m": "tiny-macaron", "dim": "3D", "norm": "0",
         "hide": "0", "labels": "all", "trail": "7", "frame": "4", "head": "3", "mask": "3", "focus": "bank"}
    at = fresh(q)
    assert at.text_input(key="p_text").value == q["s"]
    assert at.selectbox(key="p_model").value == "tiny-macaron"
    assert at.radio(key="p_dim").value == "3D" and at.button_group(key="p_norm").value is False
    assert at.toggle(key="p_hide").value is False and at.slider(key="p_trail").value == 7
    assert at.selectbox(key="p_mask").value == 3 and at.radio(key="p_head").value == "3"
    assert spec(at)["layout"]["sliders"][0]["active"] == 4  # the animation opens at the shared frame
    assert at.selectbox(key="p_focus").value == "bank"  # whose weights the figure spells out, head 3's
    model = macaron.load(str(state.model_paths()["tiny-macaron"]), device="cpu")  # each title: its state's guess
    traj = model.trace(state.mask_word(q["s"], 3))
    (word, p), = model.logit_lens(traj, traj.guess_at, k=1)[-1]
    assert spec(at)["frames"][-1]["layout"]["title"]["text"].endswith(f"guess: “{esc(word)}” {100 * p:.0f} %")
    heard = analysis_heard(at, "bank", 3)
    assert heard and heard in frame_notes(spec(at), 2)  # Macaron: ½C, D, ½C: state 2 follows the diffusion
    for k, v in q.items():
        assert at.query_params[k] in (v, [v])


def test_particles_ignores_a_broken_link():
    at = fresh({"frame": "999", "dim": "4D", "trail": "-3", "mask": "x", "m": "no-such-model", "head": "77",
                "focus": "no-such-word"})
    assert at.radio(key="p_dim").value == "2D" and at.slider(key="p_trail").value == 4
    assert at.selectbox(key="p_focus").value == "" and "listened to" not in frame_notes(spec(at), 1)
    assert at.selectbox(key="p_model").value == "tiny-transformer"  # an unknown name is no folder to open
    assert "does not offer" in texts(at.warning) and not at.error
    assert at.title  # the rest of the page is there
    at.selectbox(key="p_model").set_value("tiny-macaron")
    run(at)
    assert spec(at)["layout"]["sliders"][0]["active"] == 0 and at.radio(key="p_head").value == "mean"


@pytest.mark.parametrize("text, expect", [
    ("", "empty"),
    ("   ", "empty"),
    ("word " * 1000, "Truncated"),        # 5,000 characters
    ("x" * 25_000, "Truncated"),          # beyond the character cap
    ("😀 🚀 the cat 🐈", None),
    ("مرحبا بالعالم the bank", None),     # right-to-left script
    ("שלום עולם", None),
    ("<script>alert('x')</script> <b>bold</b> the bank", None),
])
def test_particles_bad_input_is_reported_not_raised(text, expect):
    at = fresh({"s": text} if text else None)
    if not text:
        at.text_input(key="p_text").set_value(text)
        run(at)
    msgs = texts(at.warning) + texts(at.error) + texts(at.info)
    if expect:
        assert expect.lower() in msgs.lower()
    else:
        assert len(charts(at)) >= 3
    assert at.title and at.selectbox(key="p_model")  # the page stays usable
    if len(text) > state.URL_MAX_VALUE:
        assert "s" not in at.query_params  # a pasted page stays out of the shareable link
    for md in at.markdown:
        assert "<script>" not in str(md.value)


def test_particles_truncation_reports_counts():
    at = fresh({"s": "the cat sat " * 60})
    w = texts(at.warning)
    assert "at most 96 particles" in w and "dropped" in w
    particles = next(d for d in spec(at)["data"] if d["name"] == "particles")
    assert len(particles["hovertext"]) <= 96


def test_particles_custom_folders(tmp_path, hf_bert_folder, monkeypatch):
    monkeypatch.setenv("MACARON_MODEL_ROOTS", f"{tmp_path},{hf_bert_folder or tmp_path}")  # your own computer
    at = fresh()
    at.selectbox(key="p_model").set_value(state.CUSTOM)
    run(at)
    assert "Type the path" in texts(at.info)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"scheme": "transformer", "d_model": 30, "n_heads": 4}))
    at.text_input(key="p_model_folder").set_value(str(broken))
    run(at)
    assert "could not be loaded" in texts(at.error) and "divisible" in texts(at.error)
    at.text_input(key="p_model_folder").set_value(str(tmp_path / "missing"))
    run(at)
    assert "no such folder" in texts(at.error)
    if hf_bert_folder is None:
        pytest.skip("the example HF BERT folder is not installed")
    at.text_input(key="p_model_folder").set_value(str(hf_bert_folder))
    run(at)
    at.toggle(key="p_attr").set_value(True)
    run(at)
    assert "no masked-language-model head" in texts(at.info)
    assert "norm of the final state" in texts(at.caption)
    assert at.query_params["m"] in (str(hf_bert_folder), [str(hf_bert_folder)])


def test_no_models_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("MACARON_MODELS_DIR", str(tmp_path))
    at = fresh()
    assert "No model found" in texts(at.warning)
    at.switch_page("views/compare.py")
    run(at)
    assert "No model found" in texts(at.warning)


# ---- Compare --------------------------------------------------------------------------------------
def compare(query: dict | None = None) -> AppTest:
    at = fresh(query)
    at.switch_page("views/compare.py")
    return run(at)


def test_compare_two_models_every_widget():
    at = compare({"t": "1"})
    assert at.selectbox(key="c_a").value == "tiny-transformer" and at.selectbox(key="c_b").value == "tiny-macaron"
    fig = spec(at)
    assert [f["name"] for f in fig["frames"]] == ["0", "0.25", "0.5", "0.75", "1", "1.25", "1.5", "1.75", "2"]
    assert fig["layout"]["sliders"][0]["active"] == 4  # one clock: the figure's own slider, opened at t = 1
    assert at.metric and 0 <= float(at.metric[0].value) <= 1  # Procrustes residual
    assert at.query_params["t"] in ("1", ["1"])
    n_charts = len(charts(at))
    assert n_charts >= 6  # animation, residual by layer, CKA, cosine, clusters, displacement
    at.button_group(key="c_view").set_value("overlay")
    run(at)
    assert "t = 1" in spec(at)["layout"]["title"]["text"] and at.query_params["view"] in ("overlay", ["overlay"])
    at.button_group(key="c_norm").set_value(False)
    at.toggle(key="c_hide").set_value(False)
    at.radio(key="c_labels").set_value("all")
    at.slider(key="c_trail").set_value(1)
    at.slider(key="c_thr").set_value(0.5)
    run(at)
    assert len(charts(at)) == n_charts
    at.text_input(key="c_text").set_value("the cat sat on the [MASK] .")
    at.selectbox(key="c_b").set_value("tiny-transformer")
    run(at)
    assert len(at.main.get("download_button")) == 3


def test_compare_two_sentences():
    at = compare({"mode": "sentences", "view": "overlay"})
    assert at.text_input(key="c_sa").value == state.PRESETS["bank (river)"]
    assert at.text_input(key="c_sb").value == state.PRESETS["bank (money)"]
    assert at.selectbox(key="c_word").value == "bank"
    spec = json.loads(charts(at)[0].proto.spec)
    lay = spec["layout"]
    assert lay["xaxis"]["range"] == lay["xaxis2"]["range"]  # one shared PCA frame
    assert at.button_group(key="c_norm") and not at.metric  # no Procrustes between two sentences
    at.selectbox(key="c_word").set_value("the")
    at.text_input(key="c_sb").set_value("a totally different thing")
    run(at)
    at.text_input(key="c_sb").set_value("")
    run(at)
    assert "empty" in texts(at.warning).lower()


def test_compare_after_an_empty_sentence_draws_the_next_one():
    """A run with no sentence draws nothing below the input; the next sentence draws every chart again with the
    view as it was (the cluster threshold, kept as the link writes it, once came back as text and raised)."""
    at = compare()
    at.slider(key="c_thr").set_value(0.3)
    run(at)
    for text in ("", " ", "the cat sat on the mat ."):
        at.text_input(key="c_text").set_value(text)
        run(at)
    assert at.slider(key="c_thr").value == 0.3 and at.session_state["c_norm"] is True
    assert "Cosine clusters" in texts(at.markdown) and len(charts(at)) >= 4


def test_compare_reopens_a_shared_link_and_survives_a_bad_model(tmp_path, monkeypatch):
    monkeypatch.setenv("MACARON_MODEL_ROOTS", str(tmp_path))
    at = compare({"mode": "models", "s": "the cat sat on the mat .", "a": "tiny-macaron", "b": str(tmp_path),
                  "t": "0.75", "overlay": "0"})
    assert at.selectbox(key="c_a").value == "tiny-macaron" and at.selectbox(key="c_b").value == state.CUSTOM
    assert "could not be loaded" in texts(at.error) and at.title


def test_compare_models_with_different_tokenizers(hf_bert_folder, monkeypatch):
    if hf_bert_folder is None:
        pytest.skip("the example HF BERT folder is not installed")
    monkeypatch.setenv("MACARON_MODEL_ROOTS", str(hf_bert_folder))
    at = compare({"b": str(hf_bert_folder), "s": "the bank of the river ."})
    msgs = texts(at.warning) + texts(at.info)
    assert ("different tokens" in msgs) or len(charts(at)) >= 5


# ---- the guided lesson and presenter mode ------------------------------------------------------------
def test_lesson_steps_open_their_page_and_view():
    at = fresh({"lesson": "2"})  # a step typed by hand opens its view
    assert f"Lesson 2 of {len(state.LESSON)}" in texts(at.markdown) and "A diffusion step" in texts(at.markdown)
    assert f"**For the teacher · step 2.** {lesson.step(2).note}" in texts(at.sidebar.caption)  # the teacher's note
    assert at.text_input(key="p_text").value == state.PRESETS["bank (river)"]
    fig = spec(at)
    assert fig["layout"]["sliders"][0]["active"] == 1  # layer 1's diffusion sub-step
    assert "diffusion" in fig["layout"]["title"]["text"]
    at.button(key="lessonnext3").click()
    run(at)
    assert f"Lesson 3 of {len(state.LESSON)}" in texts(at.markdown)
    fig = spec(at)
    assert fig["layout"]["sliders"][0]["active"] == 2 and "convection" in fig["layout"]["title"]["text"]
    assert "convection (FFN): identity" in frame_notes(fig, 2)
    at.button(key="lessonmenu5").click()  # from the sidebar: Transformer vs Macaron, on Compare
    run(at)
    assert f"Lesson 5 of {len(state.LESSON)}" in texts(at.markdown) and at.selectbox(key="c_b").value == "tiny-macaron"
    header = next(m for m in at.markdown if f"Lesson 5 of {len(state.LESSON)}" in m.value)
    assert zoo.gist(zoo.runs()) in header.value and "{race}" not in header.value  # the race's answer, in words
    assert header.proto.help == zoo.finding(zoo.runs())  # its figures behind the ⓘ
    at.button(key="lessonmenu4").click()
    run(at)
    assert at.title[0].value.startswith("Splitting lab") and f"Lesson 4 of {len(state.LESSON)}" in texts(at.markdown)
    for step in map(lesson.step, range(1, len(state.LESSON) + 1)):
        for h in "hγ":  # the step, h (as the lab and the README write it; γ in older words)
            assert f"O({h}³)" not in step.say or f"O({h}²)" in step.say  # never Strang's order without its condition


def test_lesson_six_opens_the_plateau_of_the_default_transformer(tmp_path, app_env, monkeypatch):
    """"What learning changes": the [MASK] sentence on Particles, the default Transformer at its plateau,
    with the stage control at hand to move on to the final weights."""
    import shutil

    from conftest import add_stages

    staged = add_stages(shutil.copytree(app_env / "tiny-transformer", tmp_path / "staged-transformer"))
    bigger = [shutil.copytree(app_env / f"tiny-{s}", tmp_path / f"{s}-small") for s in ("transformer", "macaron")]
    monkeypatch.setenv("MACARON_MODELS", ",".join(map(str, [staged, app_env / "tiny-macaron", *bigger])))
    monkeypatch.delenv("MACARON_MODELS_DIR")
    assert state.default_pair(list(state.model_paths()), state.model_paths())[0] == "transformer-small"
    at = fresh({"lesson": "6"})  # ... which ships no stages: the lesson takes the Transformer that does
    assert f"Lesson 6 of {len(state.LESSON)}" in texts(at.markdown) and "What learning changes" in texts(at.markdown)
    assert at.text_input(key="p_text").value == state.PRESETS["school [MASK]"]
    assert at.selectbox(key="p_model").value == "staged-transformer"
    assert at.select_slider(key="p_stage").value == "plateau" and "Final guesses for [MASK]" in texts(at.markdown)
    stages = at.select_slider(key="p_stage").options
    later = stages[stages.index("plateau") + 1]
    at.select_slider(key="p_stage").set_value(later)  # as the step asks: the stage moves on, and stays
    run(at)
    assert at.select_slider(key="p_stage").value == later and f"Lesson 6 of {len(state.LESSON)}" in texts(at.markdown)
    at_url = at.query_params.get("at")  # the final weights are the link's default: no `at`
    assert (at_url[0] if isinstance(at_url, list) else at_url) == (None if later == stages[-1] else later)
    at.text_input(key="p_text").set_value("the cat sat on the [MASK] .")  # and a sentence of one's own
    run(at)
    assert at.text_input(key="p_text").value == "the cat sat on the [MASK] ."
    assert at.select_slider(key="p_stage").value == later
    shown = fresh({"lesson": "6", "present": "1"})  # on a projector the stage row stays where the step is about it
    assert shown.select_slider(key="p_stage").value == "plateau"
    other = fresh({"lesson": "1", "present": "1", "m": "staged-transformer"})  # ... and gives way elsewhere
    assert other.selectbox(key="p_model").value == "staged-transformer" and not other.get("select_slider")
    assert "context effect" not in texts(other.caption)


def test_presenter_mode_hides_the_sidebar_and_keeps_itself():
    at = fresh({"present": "1"})
    css = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "stSidebar" in css and "display: none" in css
    assert spec(at)["layout"]["font"]["size"] >= 17
    assert at.query_params["present"] in ("1", ["1"])
    at.text_input(key="p_text").set_value("the cat sat on the mat .")
    run(at)
    assert at.query_params["present"] in ("1", ["1"])


# ---- navigation and sidebar --------------------------------------------------------------------------
def test_navigation_opens_the_lab():
    at = fresh()
    at.switch_page("views/lab.py")
    run(at)
    assert at.title[0].value.startswith("Splitting lab")


def test_sidebar_reports_device_and_timing():
    at = fresh()
    cap = texts(at.sidebar.caption)
    assert "Inference:" in cap and ("CPU" in cap or "CUDA" in cap) and "Last trace" in cap


def test_streamlit_config_disables_the_file_watcher():
    cfg = (ROOT / ".streamlit" / "config.toml").read_text()
    assert 'fileWatcherType = "none"' in cfg
    assert os.path.exists(MAIN)


# ---- serving a class: one server, many sessions ------------------------------------------------------
def test_concurrent_first_loads_wait_on_one_load(app_env, tmp_path, monkeypatch):
    """Thirty students opening the link at once: st.cache_resource holds a lock per key, so the model
    is read once and every session gets the same (read-only) object."""
    import shutil
    import threading
    import time

    import explorer_cache as cache

    folder = shutil.copytree(app_env / "tiny-macaron", tmp_path / "fresh")  # a key no test has loaded
    calls, real = [], cache.macaron.load

    def slow_load(path, *args, **kwargs):
        calls.append(path)
        time.sleep(0.3)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(cache.macaron, "load", slow_load)
    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.load_model(str(folder)))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 6 and all(m is got[0] for m in got)


def test_the_first_run_warms_the_server_once():
    import gc

    fresh()
    assert gc.get_freeze_count() > 0  # the garbage collector no longer walks torch, scipy and plotly


def free_turns() -> int:
    import explorer_cache as cache

    n = 0
    while cache.TURNS.acquire(blocking=False):
        n += 1
    for _ in range(n):
        cache.TURNS.release()
    return n


def heavy_taken() -> bool:
    """Whether another session would have to wait for the heavy slot."""
    import threading

    import explorer_cache as cache

    got = []
    t = threading.Thread(target=lambda: got.append(cache.HEAVY.acquire(blocking=False)) or (
        got[0] and cache.HEAVY.release()))
    t.start()
    t.join()
    return not got[0]


def test_heavy_work_gives_its_turn_back_and_runs_one_at_a_time():
    import explorer_cache as cache

    all_turns = free_turns()
    with cache.turn():
        assert free_turns() == all_turns - 1
        with cache.heavy():
            assert free_turns() == all_turns and heavy_taken()  # the others' pages go on, their heavy work waits
    assert free_turns() == all_turns and not heavy_taken()


def test_a_rerun_that_interrupts_the_wait_for_a_turn_gives_the_turn_back(monkeypatch):
    """A page that waited for its turn under a spinner and is interrupted as the spinner ends (a rerun: the
    visitor moved a control meanwhile) must not keep the turn: leaked turns leave every later page
    waiting for ever (seen with 30 sessions moving the stage control)."""
    import contextlib

    import explorer_cache as cache

    class Rerun(Exception):
        pass

    @contextlib.contextmanager
    def interrupted_spinner(text):
        yield
        raise Rerun  # Streamlit raises its rerun exception at the next st call: here, the spinner's end

    all_turns = free_turns()
    monkeypatch.setattr(cache.st, "spinner", interrupted_spinner)
    taken = [cache.TURNS.acquire(blocking=False) for _ in range(all_turns)]  # the others hold every turn
    import threading
    threading.Timer(0.2, cache.TURNS.release).start()  # one of them finishes
    with pytest.raises(Rerun):
        with cache.turn():
            pass
    for _ in taken[1:]:
        cache.TURNS.release()
    assert free_turns() == all_turns


def test_pages_run_while_another_session_computes_for_minutes():
    import explorer_cache as cache

    with cache.HEAVY:  # another session's sentence-set experiments
        at = fresh()
    assert len(charts(at)) >= 3


# ---- nothing exposed: folders a visitor may open ------------------------------------------------------
def test_a_shared_server_opens_no_folder_a_visitor_names(tmp_path, monkeypatch):
    monkeypatch.delenv("MACARON_MODEL_ROOTS", raising=False)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "config.json").write_text("{}")
    said = []
    for m in (str(secret), str(tmp_path / "missing"), "/etc"):
        at = fresh({"m": m})
        assert state.CUSTOM not in at.selectbox(key="p_model").options  # no "your own model folder"
        assert at.selectbox(key="p_model").value == "tiny-transformer" and not at.error and len(charts(at)) >= 3
        assert at.query_params["m"] in ("tiny-transformer", ["tiny-transformer"])  # no path in the share link
        said.append(texts(at.warning))
    assert "does not offer" in said[0] and said[0] == said[1] == said[2]  # the same words, path or none
    at = compare({"b": str(secret)})
    assert at.selectbox(key="c_b").value == "tiny-macaron" and "does not offer" in texts(at.warning)


def test_model_roots_bound_the_folders_a_visitor_may_open(tmp_path, app_env, monkeypatch):
    import shutil

    root, outside = tmp_path / "models", tmp_path / "outside"
    shutil.copytree(app_env / "tiny-macaron", root / "mine")
    shutil.copytree(app_env / "tiny-macaron", outside)
    (root / "escape").symlink_to(outside)
    monkeypatch.setenv("MACARON_MODEL_ROOTS", str(root))
    at = fresh({"m": str(root / "mine")})  # a link to a folder inside the roots opens it
    assert at.selectbox(key="p_model").value == state.CUSTOM and len(charts(at)) >= 3
    assert at.query_params["m"] in (str(root / "mine"), [str(root / "mine")])
    said = []
    for folder in (outside, tmp_path / "missing", root / "mine" / ".." / ".." / "outside", root / "escape", "/etc"):
        at.text_input(key="p_model_folder").set_value(str(folder))
        run(at)
        said.append(texts(at.error))
        assert "m" not in at.query_params and not charts(at)
    assert "does not open that folder" in said[0] and len(set(said)) == 1  # exists or not: the same words


# ---- faults: the rest of the app goes on, the session keeps its state ---------------------------------
def poison(folder: Path) -> None:
    """Overwrite one weight tensor of the folder with NaN, as a damaged disk or a bad save would."""
    import torch
    from safetensors.torch import load_file, save_file

    for f in folder.glob("*.safetensors"):
        tensors = load_file(f)
        name = next(k for k, t in tensors.items() if t.is_floating_point())
        tensors[name] = torch.full_like(tensors[name], float("nan"))
        save_file(tensors, f)


def test_weights_with_nan_are_named_and_the_page_goes_on(tmp_path, app_env, monkeypatch):
    import shutil

    bad = shutil.copytree(app_env / "tiny-macaron", tmp_path / "bad")
    poison(bad)
    monkeypatch.setenv("MACARON_MODELS", f"{app_env / 'tiny-transformer'},{bad}")
    at = fresh({"s": "the cat sat on the mat ."})
    at.selectbox(key="p_model").set_value("bad")
    run(at)
    err = texts(at.error)
    assert "could not be loaded" in err and "NaN" in err and "model.safetensors" in err
    assert at.text_input(key="p_text").value == "the cat sat on the mat ." and at.title
    at.selectbox(key="p_model").set_value("tiny-transformer")
    run(at)
    assert len(charts(at)) >= 3 and not at.error


def test_a_model_folder_rewritten_or_removed_while_serving(tmp_path, app_env, monkeypatch):
    """A model is read once: rewriting its folder changes nothing for the model in memory. A folder
    that disappears leaves the list; a session that showed it falls back, says so, and keeps the rest."""
    import shutil

    for name in ("tiny-transformer", "tiny-macaron"):
        shutil.copytree(app_env / name, tmp_path / name)
    monkeypatch.setenv("MACARON_MODELS_DIR", str(tmp_path))
    at = fresh({"s": "the cat sat on the mat ."})
    poison(tmp_path / "tiny-transformer")
    at.text_input(key="p_text").set_value("the bank of the river .")
    run(at)
    assert len(charts(at)) >= 3 and not at.error  # still the model read at the start
    shutil.rmtree(tmp_path / "tiny-transformer")
    at.text_input(key="p_text").set_value("i went to the bank .")
    run(at)
    assert ("no longer on this server's list" in texts(at.warning)
            and at.selectbox(key="p_model").value == "tiny-macaron")
    assert at.text_input(key="p_text").value == "i went to the bank ." and len(charts(at)) >= 3


def test_a_sentence_too_long_for_the_link_says_so_and_stays():
    long = "the cat sat on the mat . " * 100  # 2,500 characters
    at = fresh()
    at.text_input(key="p_text").set_value(long)
    run(at)
    assert "too long for a share link" in texts(at.caption) and "s" not in at.query_params
    at.switch_page("views/compare.py")
    run(at)
    assert at.text_input(key="c_text").value == long and "too long for a share link" in texts(at.caption)


def test_particles_stages_of_training_share_one_frame(tmp_path, app_env, monkeypatch):
    """A model shipped with its stages of training offers them; every stage is drawn in one PCA fitted on
    all of them (the same directions, so the same share of variance on each), each at its own scale, and the URL
    keeps the stage."""
    import shutil

    from conftest import add_stages

    staged = add_stages(shutil.copytree(app_env / "tiny-transformer", tmp_path / "staged"))
    other = add_stages(shutil.copytree(app_env / "tiny-macaron", tmp_path / "no-plateau"), kept=("rise",))
    monkeypatch.setenv("MACARON_MODELS", f"{staged},{other},{app_env / 'tiny-macaron'}")
    at = fresh({"s": "the cat sat on the mat .", "m": "staged"})
    slider = at.select_slider(key="p_stage")
    assert list(slider.options) == ["random start", "plateau", "rise", "final"] and slider.value == "final"
    assert "at all 4 stages of training" in texts(at.caption) and "at" not in at.query_params
    seen = {}
    for stage in ("final", "random start", "plateau"):
        at.select_slider(key="p_stage").set_value(stage)
        run(at)
        fig = spec(at)
        seen[stage] = (fig["layout"]["xaxis"]["range"], fig["layout"]["yaxis"]["range"],
                       [f["data"] for f in fig["frames"]])
    assert at.query_params["at"] in ("plateau", ["plateau"])
    assert seen["final"][2] != seen["random start"][2]  # states that differ, each stage at its own scale:
    index = next(i for i, d in enumerate(fig["data"]) if d.get("name") == "particles")
    from test_plot import decoded
    for stage, (xr, yr, frames) in seen.items():  # its cloud spans its plane (true aspect: along one axis)
        spans = [np.ptp(np.concatenate([decoded(f[index][a]) for f in frames])) / (r[1] - r[0])
                 for a, r in (("x", xr), ("y", yr))]
        assert max(spans) > 0.5, (stage, spans)
    # ... and the particles are where one PCA of the sentence at all four stages puts them
    import macaron
    from macaron.studies import analysis
    trajs = [macaron.load(staged, device="cpu", at=t).trace("the cat sat on the mat .") for t in (0, 1000, 2000, 3000)]
    plateau = analysis.project_together(*trajs, normalised=True, hide_special=True)[1]
    dots = seen["plateau"][2][-1][index]  # the last frame's update of the particles trace
    drawn = np.stack([decoded(dots["x"]), decoded(dots["y"])], axis=-1)
    np.testing.assert_allclose(drawn, plateau.coords[-1], atol=1e-4)
    # another model without a plateau: the control goes to its final stage, not to its random start
    at.selectbox(key="p_model").set_value("no-plateau")
    run(at)
    assert list(at.select_slider(key="p_stage").options) == ["random start", "rise", "final"]
    assert at.select_slider(key="p_stage").value == "final" and "at" not in at.query_params
    # a shared link opens the stage it names; a model without stages shows no control
    at = fresh({"s": "the cat sat on the mat .", "m": "staged", "at": "random start"})
    assert at.select_slider(key="p_stage").value == "random start"
    assert [s.key for s in at.sidebar.select_slider] == ["p_stage"]
    # on a projector (no sidebar) the control sits in the page itself
    at = fresh({"s": "the cat sat on the mat .", "m": "staged", "at": "plateau", "present": "1"})
    assert not at.sidebar.select_slider and [s.key for s in at.main.select_slider] == ["p_stage"]
    assert at.select_slider(key="p_stage").value == "plateau"
    assert any(str(c.value).startswith("**Stage of training** · ") for c in at.main.caption)  # its name beside it
    at = fresh({"s": "the cat sat on the mat .", "m": "tiny-macaron"})
    assert not at.select_slider and "stages of training" not in texts(at.caption)


def test_compare_one_model_at_two_stages_of_training(tmp_path, app_env, monkeypatch):
    """The same model as A and B, each at its own stage: both panels drawn in one PCA of every stage (the same
    directions, each at its own scale), the URL keeps each stage, and the two panels show different states."""
    import shutil

    from conftest import add_stages

    staged = add_stages(shutil.copytree(app_env / "tiny-transformer", tmp_path / "staged"))
    monkeypatch.setenv("MACARON_MODELS", f"{staged},{app_env / 'tiny-macaron'}")
    at = compare({"a": "staged", "b": "staged", "at_a": "plateau"})
    assert at.select_slider(key="c_stage_at_a").value == "plateau"
    assert at.select_slider(key="c_stage_at_b").value == "final"
    assert "one PCA fitted on the sentence's states at all 4" in texts(at.caption)
    fig = spec(at)
    assert fig["layout"]["xaxis"]["range"] != fig["layout"]["xaxis2"]["range"]  # each stage at its own scale
    # one PCA for both panels: each axis explains the same share of the variance on both (own fits would not)
    assert fig["layout"]["xaxis"]["title"]["text"] == fig["layout"]["xaxis2"]["title"]["text"]
    assert fig["layout"]["yaxis"]["title"]["text"] == fig["layout"]["yaxis2"]["title"]["text"]
    first = fig["frames"][-1]["data"]
    panels = [a["text"] for a in fig["layout"]["annotations"][:2]]
    assert "A: staged · plateau" in panels[0] and "B: staged · final" in panels[1], panels
    at.select_slider(key="c_stage_at_b").set_value("random start")
    run(at)
    assert at.query_params["at_b"] in ("random start", ["random start"]) and spec(at)["frames"][-1]["data"] != first


def test_particles_says_what_a_post_ln_model_reads(tmp_path, app_env, monkeypatch):
    """A post-LN model's operators read each state as it is (a LayerNorm's output): the view says so,
    and does not call the standardised states exactly what they read."""
    import torch

    import macaron

    pre = macaron.load(app_env / "tiny-transformer")
    torch.manual_seed(0)
    cfg = macaron.ModelConfig(**{**pre.config.to_dict(), "norm": "post", "name": "tiny-post"})
    macaron.save(macaron.build(cfg, pre.tokenizer), tmp_path / "tiny-post")
    monkeypatch.setenv("MACARON_MODELS", f"{tmp_path / 'tiny-post'},{app_env / 'tiny-transformer'}")
    at = fresh({"s": "the cat sat on the mat .", "m": "tiny-post"})
    assert "post-LN model's operators read each state as it is" in texts(at.caption)
    at.button_group(key="p_norm").set_value(False)
    run(at)
    assert "exactly what the next operator reads" in texts(at.caption)
    at = compare({"s": "the cat sat on the mat .", "a": "tiny-post", "b": "tiny-transformer"})
    assert "a post-LN model's operators read the raw state" in texts(at.caption)
    at = fresh({"s": "the cat sat on the mat .", "m": "tiny-transformer"})
    assert "the input of the next attention or FFN" in texts(at.caption) and "as it is" not in texts(at.caption)
    at = compare({"s": "the cat sat on the mat .", "a": "tiny-transformer", "b": "tiny-transformer"})
    assert "what LayerNorm hands to the next operator" in texts(at.caption)


def test_the_variants_are_drawn_and_named(tmp_path, app_env, monkeypatch):
    """A Random Synthesizer and a FLOATER model (the campaign's variants): Particles and Compare draw them,
    the caption says what differs from a Transformer, and a sentence longer than the Synthesizer's
    positions (its R is max_len × max_len) is cut with a warning instead of failing."""
    import torch

    import macaron

    base = macaron.load(app_env / "tiny-transformer")
    for name, fields in (("tiny-synth", dict(attention="random", max_len=16)),
                         ("tiny-floater", dict(position="floater"))):
        torch.manual_seed(0)
        cfg = macaron.ModelConfig(**{**base.config.to_dict(), **fields, "name": name})
        macaron.save(macaron.build(cfg, base.tokenizer), tmp_path / name)
    monkeypatch.setenv("MACARON_MODELS", f"{tmp_path / 'tiny-synth'},{tmp_path / 'tiny-floater'}")
    monkeypatch.delenv("MACARON_MODELS_DIR")
    at = fresh({"s": "the cat sat on the mat .", "m": "tiny-synth"})
    assert charts(at) and "tiny-synth · Transformer" in texts(at.caption)
    assert "random attention (Synthesizer)" in texts(at.caption) and "positions" not in state.model_label(base)
    at = fresh({"s": " ".join(["the cat sat on the mat ."] * 4), "m": "tiny-synth"})
    assert charts(at) and "beyond the model's limit were dropped" in texts(at.warning)
    at = compare({"s": "the cat sat on the mat .", "a": "tiny-synth", "b": "tiny-floater"})
    assert len(charts(at)) >= 1 and "floater positions" in texts(at.caption)
