"""The guided lesson as one file (macaron.lesson, macaron.plot.lesson, `python -m macaron lesson`), on the
suite's tiny models: the app and the file read the same steps; every step's text, note and figure are in
the file, each figure built by the app's own builder at the step's view; plotly.js is inlined once and
nothing points outside the file; bad input gets a message and writes nothing; an existing file is replaced
only by a complete one. In Chromium: tests/test_lesson_browser.py."""
from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import explorer_state as state
from macaron import lesson
from macaron.__main__ import main
from macaron.plot import lesson as handout
from macaron.plot.particles import frame_title
from macaron.schemes import DIFFUSION
from macaron.studies import analysis
from test_plot import decoded


@pytest.fixture(scope="module")
def staged(models_dir, tmp_path_factory):
    """The tiny Transformer with stages of training (random start, plateau, rise, final), as the minis ship."""
    from conftest import add_stages

    return add_stages(shutil.copytree(models_dir / "tiny-transformer", tmp_path_factory.mktemp("s") / "staged"))


@pytest.fixture(scope="module")
def page(models_dir, staged) -> str:
    return handout.lesson_html([models_dir / "tiny-transformer", models_dir / "tiny-macaron"], staged)


def figure_spec(page: str, div_id: str) -> tuple[dict, dict, list]:
    """(data, layout, frames) of one figure, as the page hands them to Plotly.newPlot / addFrames."""
    call = re.search(r'Plotly\.newPlot\(\s*"%s",\s*(\[.*?\]),\s*(\{.*?\}),\s*\{"displaylogo"' % re.escape(div_id),
                     page, re.S)
    assert call, div_id
    frames = re.search(r"Plotly\.addFrames\('%s', (\[.*?\])\);" % re.escape(div_id), page, re.S)
    return json.loads(call.group(1)), json.loads(call.group(2)), json.loads(frames.group(1)) if frames else []


def test_the_app_and_the_file_read_the_same_steps(page):
    assert state.LESSON is lesson.LESSON and state.PRESETS is lesson.PRESETS
    assert state.DEFAULT_SENTENCE == lesson.DEFAULT_SENTENCE
    for k in range(1, len(lesson.LESSON) + 1):
        step = lesson.step(k)
        section = page[page.index(f"id='step-{k}'"):]
        section = section[:section.index("</section>")]
        for words in (step.title, step.say, step.more, step.note, step.print_why):
            assert html.escape(words) in section and "{race}" not in words, (k, words)
        assert "O(h³)" not in step.say + step.note or "O(h²)" in step.say + step.note  # never without its condition


def test_each_step_draws_the_apps_figure_at_the_steps_view(page, models_dir, staged):
    import macaron

    model = macaron.load(models_dir / "tiny-transformer", device="cpu")
    river = lesson.PRESETS["bank (river)"]
    traj = model.trace(river)
    for k, frame in ((1, 0), (2, 1), (3, 2)):  # Particles at the frame the step names
        data, layout, frames = figure_spec(page, f"fig-{k}")
        assert layout["sliders"][0]["active"] == frame and layout["title"]["text"] == frame_title(traj, frame)
        assert len(frames) == len(traj.labels) and any(d["type"] == "heatmap" for d in data)  # the matrix beside
    assert "diffusion" in figure_spec(page, "fig-2")[1]["title"]["text"]
    assert "convection" in figure_spec(page, "fig-3")[1]["title"]["text"]
    data, layout, frames = figure_spec(page, "fig-4")  # the Splitting lab: the plane and its error chart
    view = lesson.LESSON[3].view
    assert len(frames) == int(view["steps"]) + 1 and "xaxis2" in layout and "RMS" in layout["yaxis2"]["title"]["text"]
    from macaron.sources.shipped import resolve
    from macaron.studies import orders  # and the claim measured on the trained ODE pair's Macaron (lab section 3e)

    record = orders.read(resolve(view["b"]))
    for solver in ("exact", "euler"):
        data, layout, _ = figure_spec(page, f"fig-4-trained-{solver}")
        strang = next(d for d in data if d.get("name", "").startswith("Strang") and d["xaxis"] == "x")
        assert strang["y"] == pytest.approx(record["local_error"]["strang"][solver], rel=1e-3)
        slope = record["local_slope"]["strang"][solver][0]
        assert f"slope local {slope:.2f}" in strang["name"] and f"{slope:.2f} (Strang)" in page
    data, layout, frames = figure_spec(page, "fig-5")  # Compare: two panels on one layer clock
    assert "xaxis2" in layout and layout["title"]["text"].startswith("<b>layer time t = 0")
    tiny_macaron = macaron.load(models_dir / "tiny-macaron", device="cpu").trace(river)
    assert [f["name"] for f in frames] == [f"{t:g}" for t in analysis.time_grid(traj, tiny_macaron)]
    # step 6: every stage of the learner, each its own figure: one PCA of the sentence at every stage (the same
    # directions), each stage at its own scale
    stages = macaron.milestones(staged)
    assert [s.name for s in stages] == ["random start", "plateau", "rise", "final"]
    school = model.trace(lesson.PRESETS["school [MASK]"])
    every = analysis.project_together(*(macaron.load(staged, device="cpu", at=s.tokens).trace(
        lesson.PRESETS["school [MASK]"]) for s in stages), normalised=True, hide_special=True)
    ranges = []
    for i, proj in enumerate(every):
        data, layout, _ = figure_spec(page, f"fig-6-{i}")
        dots = next(d for d in data if d.get("name") == "particles")
        np.testing.assert_allclose(np.stack([decoded(dots["x"]), decoded(dots["y"])], -1), proj.coords[0], atol=1e-4)
        ranges.append(layout["xaxis"]["range"])
    assert ranges[0] != ranges[-1]
    plateau = macaron.load(staged, device="cpu", at=stages[1].tokens)  # the view's frame 0, and its state's guess
    (word, p), = plateau.logit_lens(plateau.trace(lesson.PRESETS["school [MASK]"]), school.guess_at, k=1)[0]
    assert figure_spec(page, "fig-6-1")[1]["title"]["text"] == frame_title(school, 0) + f"  ·  guess: “{word}” " \
        f"{100 * p:.0f} %"
    for i, s in enumerate(stages):
        assert f"<button type='button' data-stage='{i}'" in page and f">{s.name}</button>" in page
        _, lens_layout, _ = figure_spec(page, f"lens-6-{i}")
        assert "top guesses" in lens_layout["xaxis"]["title"]["text"]
    shown = re.findall(r"<div class='stage([^']*)' data-stage='(\d)'>", page)
    assert [c for c, _ in shown] == ["", " shown print", "", " print"]  # opens at the plateau; plateau and final print


# ---- step 8: switch off the interaction ------------------------------------------------------------------------
WHATIF = next(k for k, s in enumerate(lesson.LESSON, 1) if s.view.get("if"))


def traces_at(data: list, frame: dict | None = None) -> dict:
    """A figure's traces by name (the first of each), with a frame's updates applied."""
    traces = [dict(d) for d in data]
    for i, update in zip(frame["traces"], frame["data"]) if frame else ():
        traces[i].update(update)
    named = {}
    for tr in traces:
        named.setdefault(tr.get("name"), tr)
    return named


def xy(trace: dict) -> np.ndarray:
    return np.stack([decoded(trace["x"]), decoded(trace["y"])], -1)


def test_step_8_draws_the_altered_run_over_its_ghosts(page, models_dir):
    """The What-if step: the Transformer's sentence with diffusion off in every layer, played over its run as trained
    (the hollow ghosts) in one PCA of both runs, as the app's panel draws it; the handout's copy at the last state.
    The particles are the altered trace's states, the ghosts the plain trace's, each projected by the library's
    analysis; with diffusion off, no particle moves in an attention sub-step."""
    import torch

    import macaron
    from macaron import interventions as iv

    step = lesson.LESSON[WHATIF - 1]
    assert step.page.endswith("particles.py") and step.view["if"] == "off" and step.view["if_kind"] == "diffusion"
    model = macaron.load(models_dir / "tiny-transformer", device="cpu")
    text = step.view["s"]
    plain, altered = model.trace(text), model.trace(text, interventions=[iv.Off("diffusion")])
    pp, pa = analysis.project_together(plain, altered, k=2, normalised=True, hide_special=True)
    last = len(altered.labels) - 1
    data, layout, frames = figure_spec(page, f"fig-{WHATIF}")
    assert len(frames) == len(altered.labels) and layout["sliders"][0]["active"] == int(step.view["frame"])
    assert "<b>What if:</b> diffusion off in every layer" in " ".join(a["text"] for a in layout["annotations"])
    for f in range(len(frames)):
        drawn = traces_at(data, frames[f])
        np.testing.assert_allclose(xy(drawn["particles"]), pa.coords[f], atol=1e-4)
        np.testing.assert_allclose(xy(drawn["unaltered"]), pp.coords[f], atol=1e-4)
        if f and altered.steps[f - 1].kind == DIFFUSION:  # attention off: no particle moves
            np.testing.assert_allclose(xy(drawn["particles"]), xy(traces_at(data, frames[f - 1])["particles"]))
    data, layout, frames = figure_spec(page, f"fig-{WHATIF}-print")  # the handout's still, at the last state
    assert frames == [] and "sliders" not in layout and layout["title"]["text"] == frame_title(altered, last)
    drawn = traces_at(data)
    np.testing.assert_allclose(xy(drawn["particles"]), pa.coords[last], atol=1e-4)
    np.testing.assert_allclose(xy(drawn["unaltered"]), pp.coords[last], atol=1e-4)
    assert np.linalg.norm(pa.coords[last] - pp.coords[last], axis=-1).min() > 0  # each apart from its ghost
    section = page[page.index(f"id='step-{WHATIF}'"):]
    section = section[:section.index("</section>")]
    assert f"Printed at sub-step {last} of {altered.n_steps}: {html.escape(altered.labels[last])}" in section
    with torch.no_grad():  # the answer the caption states, from the model's head on each run's last states
        for run, said in ((plain, "as trained: "), (altered, "altered: ")):
            p = torch.softmax(model.head(torch.as_tensor(run.final))[run.guess_at], -1)
            word = model.tokenizer.id_to_token(int(p.argmax()))
            assert html.escape(f"{said}{word} {float(p.max()):.0%}") in section


def percent(p: float) -> str:
    return f"{p:.0%}".replace("%", " %")  # as the lesson writes them


def test_step_8_says_what_the_library_measures():
    """Every number and quoted output of step 8, measured again on the shipped models: the [MASK]'s top guess before
    and after diffusion off in every layer on transformer-small and macaron-small, the same answer for another
    sentence with [MASK] at the same place (the [MASK]'s states equal, as derived), and the shipped translator's one
    translation for two sources with cross-attention off (beam 5, as Translate opens)."""
    import macaron
    from macaron import interventions as iv

    step = lesson.step(WHATIF)
    text, off = step.view["s"], [iv.Off("diffusion")]
    answers = {}
    for name in ("transformer-small", "macaron-small"):
        model = macaron.load(name, device="cpu")
        plain, altered = model.trace(text), model.trace(text, interventions=off)
        (was, p_was), (now, p_now) = (model.logit_lens(t, t.guess_at, 1)[-1][0] for t in (plain, altered))
        answers[name] = model, altered, (was, p_was, now, p_now)
        assert any(f"{name} {was} {percent(p_was)} → {w} {percent(p_now)}" in step.note for w in (now, f'"{now}"'))
    model, altered, (was, p_was, now, p_now) = answers["transformer-small"]
    assert f"from {was} ({percent(p_was)}) to {now}, the padding token ({percent(p_now)})" in step.more
    assert model.tokenizer.token_to_id(now) == model.config.pad_id
    cat = model.trace("the cat sat on the [MASK] .", interventions=off)  # another sentence, [MASK] the 6th word
    assert cat.guess_at == altered.guess_at == 6 and cat.tokens[:6] == ["[CLS]", *"the cat sat on the".split()]
    assert altered.tokens[:6] == ["[CLS]", *"he was born in new".split()]  # one token a word: the 6th word
    np.testing.assert_array_equal(cat.states[:, 6], altered.states[:, 6])  # its path: its token and position only
    again, p_again = model.logit_lens(cat, cat.guess_at, 1)[-1][0]
    assert '"the cat sat on the [MASK] ."' in step.note and f"guesses {again} {percent(p_again)} again" in step.note
    translator = macaron.load_translator(lesson.TRANSLATOR, device="cpu")
    sources = ("Me senté en el banco del parque.", "Llevé el dinero al banco.")
    written = {translator.translate(s, beam=5, interventions=[iv.Off("cross")]).text for s in sources}
    assert len(written) == 1
    said = " and ".join(f'"{s}"' for s in sources) + f' both become "{written.pop()}"'
    assert said in step.note and f"({lesson.TRANSLATOR}, Translate" in step.note and "beam 5" in step.note


def test_the_plan_says_whom_bank_listens_to_as_the_shipped_model_does():
    """The lesson plan's answer for step 2, measured again on transformer-small (the step's model, head mean): bank's
    four largest weights in layer 1 and what even would be; itself first in layer 2; [CLS] first in layers 3 to 6."""
    import macaron

    step = lesson.step(2)
    assert step.view["focus"] == "bank" and lesson.step(3).view["focus"] == "bank"
    traj = macaron.load("transformer-small", device="cpu").trace(step.view["s"])
    bank = traj.tokens.index("bank")
    rows = [m.mean(0)[bank].astype(float) for m in traj.mixing if m is not None]  # one per layer
    plan = (Path(__file__).resolve().parent.parent / "docs" / "teach" / "plan.md").read_text()
    top, t = sorted(range(len(traj.tokens)), key=lambda j: -rows[0][j])[:4], traj.tokens
    named = [f"{j}·{t[j]}" if t.count(t[j]) > 1 else t[j] for j in top]  # as the figure names a repeated word
    assert "(" + " · ".join(f"{n} {percent(rows[0][j])}" for n, j in zip(named, top)) + ", " in plan
    assert f"; even would be {percent(1 / len(traj.tokens))})" in plan
    assert int(np.argmax(rows[1])) == bank and f"in layer 2 most to itself ({percent(rows[1][bank])})" in plan
    cls = traj.tokens.index("[CLS]")
    assert all(int(np.argmax(r)) == cls for r in rows[2:]) and len(rows) == 6
    assert f"in layers 3–6 most to [CLS] ({percent(rows[2][cls])} in layer 3)" in plan


def test_step_8_opens_particles_with_diffusion_off_and_the_next_step_without(app_env):
    """?lesson=8 opens Particles with the What-if panel set (diffusion off, every layer) and its figure says so; a step
    opened after it opens with nothing chosen, and step 8 opened again is at every layer whatever was chosen there."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=120)
    at.query_params.update({"lesson": str(WHATIF)})
    at.run(timeout=120)
    assert not at.exception, [e.message for e in at.exception]

    def what_if_said() -> str:
        fig = json.loads(at.get("plotly_chart")[0].proto.spec)
        return " ".join(a["text"] for a in fig["layout"]["annotations"] if a["text"].startswith("<b>What if:</b>"))

    assert at.text_input(key="p_text").value == lesson.PRESETS["born in new [MASK]"]
    assert at.selectbox(key="p_if").value == "off" and at.selectbox(key="p_if_kind").value == "diffusion"
    assert "diffusion off in every layer" in what_if_said()
    assert f"Lesson {WHATIF} of {len(lesson.LESSON)} · Switch off the interaction" in " ".join(
        str(m.value) for m in at.markdown)
    at.multiselect(key="p_if_layers").set_value([1])
    at.run(timeout=120)
    assert "diffusion off in layer 2" in what_if_said()
    at.button(key="lessonmenu1").click()
    at.run(timeout=120)
    assert not at.exception and at.selectbox(key="p_if").value == "" and what_if_said() == ""
    at.button(key=f"lessonmenu{WHATIF}").click()
    at.run(timeout=120)
    assert not at.exception and at.selectbox(key="p_if").value == "off"
    assert "diffusion off in every layer" in what_if_said()


def test_step_4_says_where_the_trained_orders_are_missing(models_dir):
    """A model without measured orders (or with stale ones): the file says so and how to measure them."""
    step = lesson.LESSON[3]
    said = handout.trained_orders_html(step._replace(view=dict(step.view, b=str(models_dir / "tiny-macaron"))), "f")
    assert "are not in this installation" in said and "python -m macaron.studies.orders" in said
    assert "Plotly" not in said


def test_the_translation_step_draws_both_systems_of_the_shipped_translator(page):
    """Step 7: Translate's animation of the shipped translator's translation, opened and printed at the step's
    frame (the decoder's first cross-attention), both systems' particles in it, the translation in words."""
    import macaron
    from macaron.translation.model import joint

    k = next(k for k, s in enumerate(lesson.LESSON, 1) if s.page.endswith("translate.py"))
    step = lesson.LESSON[k - 1]
    tr = macaron.load_translator(lesson.TRANSLATOR, device="cpu").translate(step.view["src"], beam=5)
    both = joint(tr)
    frame = int(step.view["frame"])
    data, layout, frames = figure_spec(page, f"fig-{k}")
    assert layout["sliders"][0]["active"] == frame and layout["title"]["text"] == frame_title(both, frame)
    assert "cross-attention" in layout["title"]["text"] and len(frames) == len(both.labels)
    assert figure_spec(page, f"fig-{k}-print")[1]["title"]["text"] == frame_title(both, step.print_at)
    section = page[page.index(f"id='step-{k}'"):]
    section = section[:section.index("</section>")]
    assert html.escape(f"“{tr.text}”") in section and f"Printed at sub-step {frame} of {both.n_steps}" in section


def test_the_translation_step_says_where_its_translator_is_missing(models_dir, staged, monkeypatch, tmp_path):
    """The shipped translator absent: step 7 says so and the rest is built (nothing downloaded for it). A translator
    named that is not one (no folder, a folder of one particle system, no tokenizer): the reason, no file."""
    from macaron.formats.folder import CheckpointError
    from macaron.sources.shipped import resolve

    steps = list(lesson.LESSON)
    steps[6] = steps[6]._replace(view={**steps[6].view, "m": "no-such-translator"})
    monkeypatch.setattr(lesson, "LESSON", tuple(steps))
    pair = [models_dir / "tiny-transformer", models_dir / "tiny-macaron"]
    page = handout.lesson_html(pair, staged)
    section = page[page.index("id='step-7'"):]
    assert "no-such-translator, is not in this installation" in section[:section.index("</section>")]
    assert 'id="fig-6-0"' in page  # the other steps are built
    monkeypatch.undo()
    untokenised = shutil.copytree(resolve(lesson.TRANSLATOR), tmp_path / "untokenised")
    (untokenised / "tokenizer.json").unlink()
    for bad, said in ((models_dir / "no-such-translator", "no such folder"),
                      (models_dir / "tiny-macaron", "not a translation model"), (untokenised, "cannot read text")):
        with pytest.raises(CheckpointError, match=said):
            handout.lesson_html(pair, staged, translator=bad)


def test_the_handout_copies_are_at_the_frame_each_step_names(page, models_dir):
    import macaron

    traj = macaron.load(models_dir / "tiny-transformer", device="cpu").trace(lesson.PRESETS["bank (river)"])
    last = len(traj.labels) - 1
    for k, frame in ((1, last), (2, 1), (3, 2)):
        data, layout, frames = figure_spec(page, f"fig-{k}-print")
        assert frames == [] and "sliders" not in layout and "updatemenus" not in layout  # a still: no controls
        assert layout["title"]["text"] == frame_title(traj, frame)
        assert f"Printed at sub-step {frame} of {traj.n_steps}: {html.escape(traj.labels[frame])}" in page
    assert figure_spec(page, "fig-5-print")[1]["title"]["text"].startswith("<b>layer time t = 1<")
    assert figure_spec(page, "fig-4-print")[1]["title"]["text"].startswith("<b>t = 1</b>")


def test_plotly_is_inlined_once_and_nothing_points_outside(page):
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    assert page.count(js[:200]) == 1 and js in page
    rest = page.replace(js, "")
    assert not re.search(r"<(script|img|link|iframe|source|video|audio)\b[^>]*\b(src|href)\s*=", rest, re.I)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", rest, re.I)
    assert not re.search(r"""\b(src|href)\s*=\s*['"]?(https?:)?//""", rest, re.I)


def test_presenter_fonts(models_dir, staged):
    big = handout.lesson_html([models_dir / "tiny-transformer", models_dir / "tiny-macaron"], staged, present=True)
    assert figure_spec(big, "fig-1")[1]["font"]["size"] == 17 and "html { font-size: 19px; }" in big


def test_the_command_writes_one_file(models_dir, staged, tmp_path, capsys):
    out = tmp_path / "lesson.html"
    assert main(["lesson", "--out", str(out), "--model", str(models_dir / "tiny-transformer"),
                 "--model", str(models_dir / "tiny-macaron"), "--learning", str(staged),
                 "--translator", "transformer-es-en"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "transformer-es-en, beam 5: “Me senté en el banco del parque.”" in text  # step 7's translator, printed
    # at its own first cross-attention: the embedding, 3 encoder layers of 2 sub-steps, the decoder's G, then C (of
    # 3 × 2 + 3 × 3 sub-steps), not at the Macaron's frame 12
    assert "Printed at sub-step 8 of 15: decoder layer 1 · external field (cross-attention)" in text
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert out.stat().st_size < 15e6 and f"{out}" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["lesson.html"]  # no temporary file left beside it


@pytest.mark.parametrize("bad, said", [("no-such-model", "no such folder"), ("{tmp}", "config.json")])
def test_bad_models_get_a_message_and_no_file(bad, said, models_dir, tmp_path, capsys):
    out = tmp_path / "lesson.html"
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    bad = bad.format(tmp=folder)
    assert main(["lesson", "--out", str(out), "--model", bad, "--model", str(models_dir / "tiny-macaron")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and said in err and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".lesson.html*"))
    out.write_text("the old lesson")  # an existing file stays as it was
    assert main(["lesson", "--out", str(out), "--model", str(models_dir / "tiny-transformer"),
                 "--model", bad]) == 2
    assert out.read_text() == "the old lesson"


def test_a_bad_place_to_write_gets_a_message(models_dir, tmp_path, capsys):
    for out, said in ((tmp_path / "missing" / "lesson.html", "no such folder"), (tmp_path, "is a folder")):
        assert main(["lesson", "--out", str(out), "--model", str(models_dir / "tiny-transformer")]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err
    assert not (tmp_path / "missing").exists()


def test_an_existing_file_is_replaced_only_when_complete(tmp_path, monkeypatch):
    out = tmp_path / "lesson.html"
    out.write_text("the old lesson")

    def broken(src, dst):  # the rename fails (say, the disk is full): the old file stays, nothing is left
        raise OSError("no space left on device")

    monkeypatch.setattr(handout.os, "replace", broken)
    with pytest.raises(OSError):
        handout.write(out, "<!DOCTYPE html>" + "x" * 1000)
    assert out.read_text() == "the old lesson" and [p.name for p in tmp_path.iterdir()] == ["lesson.html"]
    monkeypatch.undo()
    handout.write(out, "<!DOCTYPE html>new")
    assert out.read_text() == "<!DOCTYPE html>new" and [p.name for p in tmp_path.iterdir()] == ["lesson.html"]


def test_the_lessons_sidebar_offers_the_file(app_env):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=120)
    at.run(timeout=120)
    assert not at.exception
    buttons = [b for b in at.sidebar.get("download_button") if b.label == "Download this lesson"]
    assert len(buttons) == 1 and "tiny-transformer" in buttons[0].help and "offline" in buttons[0].help
    made = state.lesson_file(str(app_env / "tiny-transformer"), str(app_env / "tiny-macaron"),
                             str(app_env / "tiny-transformer"))
    assert made.startswith("<!DOCTYPE html>") and "id='step-6'" in made and "tiny-macaron" in made


def test_step_5_says_the_race_cannot_be_read_rather_than_failing(tmp_path, monkeypatch):
    """A damaged stored run costs step 5 its race sentence, with the reason, not the lesson; the other steps are
    the library's text as written."""
    from macaron.studies import zoo

    (tmp_path / "seed-0" / "macaron-mini").mkdir(parents=True)
    (tmp_path / "seed-0" / "macaron-mini" / "training.json").write_text('{"config": ')  # cut short
    monkeypatch.setattr(zoo, "RACE", tmp_path)
    step = lesson.step(5)
    assert "could not be read" in step.say and "training.json" in step.say and "{race}" not in step.note
    assert lesson.step(4) is lesson.LESSON[3]
