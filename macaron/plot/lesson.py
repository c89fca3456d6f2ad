"""The guided lesson as one file: every step of macaron.lesson with its text, its teacher's note and its
figure, interactive as in the app, in one HTML page that opens offline in any browser and prints as a
handout (one step a page).

    html = lesson_html("transformer-small", "macaron-small")   # the models: names or folders
    write(Path("lesson.html"), html)                            # replaced only once complete

The figures are the app's, built by the same functions (plot.particles, plot.compare, plot.toy_particles,
plot.logit_lens, plot.whatif: plot.lesson_whatif) from the same views (macaron.lesson.LESSON). plotly.js is inlined once
(plotly.offline.get_plotlyjs); each figure is plotly.io.to_html without it. Nothing is fetched: no font,
script or image leaves the file.
"""
from __future__ import annotations

import datetime
import html
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import plotly.io as pio

from .. import lesson
from ..formats.folder import CheckpointError
from ..lab import lab_paths
from ..network.reading import NO_TOKENIZER, InputError
from ..schemes import CROSS, SCHEMES
from ..sources.loading import load, load_translator
from ..sources.locate import locate
from ..sources.milestones import Milestone, milestones
from ..sources.shipped import available, default_pair, resolve
from ..studies import analysis, orders
from ..translation.model import joint
from .compare import compare
from .guesses import logit_lens
from .lab import convergence, toy_particles
from .lesson_whatif import whatif_step
from .particles import particles
from .style import model_label, named

WIDTH = 1040          # every figure's width in pixels: a 1280-wide screen and a landscape A4 page both hold it
HEIGHT = 480          # the app's animation height (explorer_state.figure_size)
LAB_HEIGHT = 530      # the Splitting lab's (views/lab.py, ANIMATION_HEIGHT)
MAX_TOKENS = 96       # as the app (explorer_cache.MAX_TOKENS)
STAGE_SHOWN_FIRST = "plateau"


# ---- the models ------------------------------------------------------------------------------------
@dataclass
class Models:
    """The lesson's models (folders) and every stage of training loaded once, traced sentences kept."""

    transformer: Path
    macaron: Path
    learner: Path                    # step 6: the model whose stages of training are shown
    device: str = "cpu"
    _loaded: dict = field(default_factory=dict)
    _traces: dict = field(default_factory=dict)

    def stages(self, folder: Path) -> list[Milestone]:
        return milestones(folder)

    @staticmethod
    def _key(folder: Path, stage: Milestone | None):
        """A stage whose folder is the model's own (its final weights, or a model without stages) is the model."""
        own = stage is None or (stage.folder is not None and Path(stage.folder) == Path(folder))
        return str(folder), None if own else stage.name

    def model(self, folder: Path, stage: Milestone | None = None):
        key = self._key(folder, stage)
        if key not in self._loaded:
            if key[1] is None:
                model = load(folder, self.device)
            elif stage.folder is None:
                model = load(folder, self.device, at=0)  # the random start, rebuilt from its seed and checked
            else:
                model = load(stage.folder, self.device)
            if model.tokenizer is None:
                raise CheckpointError(f"{folder}: the lesson cannot read text with this model: {NO_TOKENIZER}")
            self._loaded[key] = model
        return self._loaded[key]

    def trace(self, folder: Path, text: str, stage: Milestone | None = None):
        key = (*self._key(folder, stage), text)
        if key not in self._traces:
            self._traces[key] = self.model(folder, stage).trace(text, max_tokens=MAX_TOKENS)
        return self._traces[key]


def _folder(name_or_path) -> Path:
    """A model folder (a shipped name or a path), checked to hold a model: a clear CheckpointError otherwise."""
    folder = locate(name_or_path)
    if not (folder / "config.json").is_file():
        raise CheckpointError(f"{folder}: not a model folder (no config.json); a shipped name is one of {available()}")
    return folder


def _offers(folder: Path, stage: str) -> bool:
    try:
        return any(m.name == stage for m in milestones(folder))
    except Exception:  # unreadable training facts: it offers no stage
        return False


def choose_models(models=None, learner=None, device: str = "cpu") -> Models:
    """The lesson's models, as the app chooses them: `models` = (Transformer, Macaron), default the shipped
    default pair; `learner` (step 6) default the first of the two that ships a plateau, else the default
    Transformer among the shipped models that do, else the Transformer given."""
    shipped = available()
    if not models:
        models = [m for m in default_pair(shipped) if m]
        if not models:
            raise CheckpointError("no shipped models in pretrained/: name two model folders")
    models = list(models)
    if len(models) == 1:
        models = models * 2
    if len(models) != 2:
        raise InputError(f"the lesson takes two models (a Transformer and a Macaron), not {len(models)}")
    a, b = (_folder(m) for m in models)
    if learner is not None:
        step6 = _folder(learner)
    else:
        step6 = next((f for f in (a, b) if _offers(f, STAGE_SHOWN_FIRST)), None)
        if step6 is None:
            staged = [n for n in shipped if _offers(resolve(n), STAGE_SHOWN_FIRST)]
            name = default_pair(staged)[0] if staged else None
            step6 = resolve(name) if name else a
    return Models(a, b, step6, device)


# ---- one figure, as HTML ---------------------------------------------------------------------------
def figure_html(fig, div_id: str) -> str:
    """A figure as a <div> and the script that draws it (plotly.js itself is in the page once)."""
    return pio.to_html(fig, include_plotlyjs=False, full_html=False, auto_play=False, div_id=div_id,
                       default_width=f"{WIDTH}px", config=dict(displaylogo=False, responsive=False,
                                                               toImageButtonOptions=dict(scale=2)))


def still_html(fig, div_id: str) -> str:
    """The handout's copy of an animated figure, at the frame it was built to open at: the same figure
    without its frames, ▶ Play and slider (and the room they took). Drawn when the page opens, shown
    only in print, so what prints never depends on where a reader left the animation."""
    spec = fig.to_dict()
    spec.pop("frames", None)
    layout = spec["layout"]
    layout.pop("sliders", None)
    layout.pop("updatemenus", None)
    cut = max(0, layout.get("margin", {}).get("b", 0) - 56)
    if cut and layout.get("height"):
        layout["margin"] = dict(layout["margin"], b=layout["margin"]["b"] - cut)
        layout["height"] -= cut
    return pio.to_html(spec, validate=False, include_plotlyjs=False, full_html=False, div_id=div_id,
                       default_width=f"{WIDTH}px", config=dict(displaylogo=False, responsive=False,
                                                               staticPlot=True))


def _frame(print_at, n_frames: int) -> int:
    return n_frames - 1 if print_at == "last" else int(print_at)


@dataclass
class Panel:
    """One figure of a step: its HTML, the frame the handout prints and what that frame is."""

    html: str
    still: str              # the same figure at the handout's frame, without controls (shown in print only)
    printed: str            # the frame in words, for the handout
    caption: str = ""       # measured words under the figure
    extra: str = ""         # more HTML under it (step 6: the guesses)


def particles_panel(ms: Models, folder: Path, text: str, view: dict, step: lesson.LessonStep, div_id: str,
                    font_size: int, stage: str | None = None) -> tuple[Panel, object, list | None]:
    """A Particles view as the app draws it: where the model has stages of training, one PCA of the
    sentence at every stage, each stage at its own scale (explorer_cache.stage_frame); else its own PCA. Returns the
    panel, the trajectory drawn and its guesses (analysis.answers, whose first answers the titles name)."""
    stages = ms.stages(folder)
    chosen = next((s for s in stages if s.name == (stage or view.get("at", "final"))), stages[-1])
    trajs = [ms.trace(folder, text, s) for s in stages]
    shared = len(stages) > 1
    proj = (analysis.project_together(*trajs, normalised=True, hide_special=True)[stages.index(chosen)] if shared
            else analysis.project(trajs[0], 2, normalised=True, hide_special=True))
    traj = trajs[stages.index(chosen)]
    start = int(view.get("frame", 0))
    focus = named(traj.tokens, view.get("focus"))  # as the app's picker
    model = ms.model(folder, chosen if len(stages) > 1 else None)
    lens = analysis.answers(model, traj)  # each title: its state's first guess
    drawn = dict(trail=int(view.get("trail", 4)), height=HEIGHT, width=WIDTH, font_size=font_size, focus=focus,
                 guesses=lens)  # the animation and its printed still alike
    fig = particles(traj, proj, start=min(start, len(traj.labels) - 1), **drawn)
    f = _frame(step.print_at, len(traj.labels))
    still = particles(traj, proj, start=f, **drawn)
    seen = analysis.share_in_view(traj, proj, True)
    caption = (f"{html.escape(model_label(model))} · {len(traj.tokens)} particles · {traj.n_steps} sub-steps · "
               f"PC1 and PC2 explain {proj.explained[:2].sum():.0%} of the variance of all states"
               + ("" if not shared else " at both stages of training (one PCA for both, each at its own scale)"
                  if len(stages) == 2 else
                  f" at all {len(stages)} stages of training (one PCA for all, each stage at its own scale)")
               + f". States as the operators read them (each token standardised). This plane holds "
               f"{seen[0]:.0%} of the embedding's spread and {seen[1:].mean():.0%} of a later state's (mean).")
    return Panel(figure_html(fig, div_id), still_html(still, div_id + "-print"),
                 f"sub-step {f} of {traj.n_steps}: {traj.labels[f]}", caption), traj, lens


def lab_panel(step: lesson.LessonStep, div_id: str) -> Panel:
    """The Splitting lab's animation at the step's view (views/lab.py with explorer_cache.paths)."""
    v = step.view
    kind, solver, beta, n = v["sys"], v["sub"], float(v["beta"]), int(v["np"])
    horizon, n_steps, magnify = float(v["T"]), int(v["steps"]), int(v["mag"])
    shown = [s for s in v["show"].split(",") if s in SCHEMES]
    paths, dense_t, dense = lab_paths(kind, n, beta, horizon, n_steps, solver)
    visible = paths.only(shown)
    fig = toy_particles(visible, dense_t, dense, magnify=magnify, height=LAB_HEIGHT)
    f = _frame(step.print_at, len(paths.times))
    still = toy_particles(visible, dense_t, dense, magnify=magnify, height=LAB_HEIGHT, start=f)
    final = visible.final_errors()
    caption = (f"Black dots: the exact flow of the {kind} system ({n} particles, β = {beta:g}); each scheme's "
               f"particle is joined to its exact position by a line of its colour, errors drawn ×{magnify}. "
               f"{n_steps} steps of h = {horizon / n_steps:g}, each sub-step solved exactly.")
    if final.get("strang", 0) > 0 and final.get("lie-trotter", 0) > 0:
        ratio = final["lie-trotter"] / final["strang"]
        caption += (f" At t = {horizon:g}, Strang–Marchuk's particles end {ratio:.1f}× closer to the exact ones "
                    "than Lie–Trotter's (measured here, on this toy system, each sub-step solved exactly, the same G "
                    "in both halves)." if ratio >= 1 else
                    f" At t = {horizon:g}, Lie–Trotter's particles end {1 / ratio:.1f}× closer (measured here).")
    return Panel(figure_html(fig, div_id), still_html(still, div_id + "-print"),
                 f"step {f} of {n_steps}, t = {paths.times[f]:g}", caption)


def trained_orders_html(step: lesson.LessonStep, div_id: str) -> str:
    """Step 4's claim on a trained network: the Macaron of the ODE pair (the step's `b`), its measured
    orders with exact and with Euler sub-flows (macaron.studies.orders' record, as the lab's section 3e draws it)."""
    name = step.view.get("b", "")
    try:
        folder = resolve(name)
        record = orders.read(folder, load(folder, device="cpu"))
    except CheckpointError:
        record = None
    if record is None:
        return (f"<p class='caption'>The orders measured on {html.escape(name)} are not in this installation (or "
                f"not of its weights): <code>python -m macaron.studies.orders {html.escape(name)} --save</code> "
                f"measures them.</p>")
    study, charts, said = orders.as_study(record), [], []
    for solver, words in (("exact", "each sub-flow solved exactly (the theorem's setting)"),
                          ("euler", "one Euler move per sub-step (what the network computes)")):
        slopes = {s: record["local_slope"][s][solver][0] for s in ("lie-trotter", "strang")}
        fig = convergence(study, solver, ["lie-trotter", "strang"], error=orders.ERROR)
        said.append(f"{'exact' if solver == 'exact' else 'Euler'} {slopes['lie-trotter']:.2f} and "
                    f"{slopes['strang']:.2f}")
        charts.append(f"<div class='figure'>{figure_html(fig, f'{div_id}-{solver}')}</div>"
                      f"<p class='caption'><b>{html.escape(name)}</b>, trained, {words}: local slopes "
                      f"{slopes['lie-trotter']:.2f} (Lie–Trotter) and {slopes['strang']:.2f} (Strang).</p>")
    source = f"{record['states']} states of {record['sentences']} sentences, measured {html.escape(record['measured'])}"
    # on screen the two charts; in print one line, so the step keeps its one page
    return (f"<div class='screen-only'>{''.join(charts)}<p class='caption'>From {source}, against the exact flow of "
            f"its own attention + FFN solved by torchdiffeq.</p></div>"
            f"<p class='printed'>Trained {html.escape(name)} (charts on screen), local slopes Lie–Trotter and "
            f"Strang: {'; '.join(said)} ({source}).</p>")


def compare_panel(ms: Models, step: lesson.LessonStep, div_id: str, font_size: int) -> Panel:
    """Compare's two models on one layer clock, each in its own PCA (views/compare.py, two models)."""
    text = step.view["s"]
    folders = (ms.transformer, ms.macaron)
    trajs = [ms.trace(f, text) for f in folders]
    projs = [analysis.project(t, 2, normalised=True, hide_special=True) for t in trajs]
    models = [ms.model(f) for f in folders]
    names = [f"{side}: {m.config.name or f.name}" + (" · final" if len(ms.stages(f)) > 1 else "")
             for side, m, f in zip("AB", models, folders)]
    fig = compare(trajs, projs, names, start_time=float(step.view.get("t", 0.0)), trail=3, height=HEIGHT,
                  width=WIDTH, font_size=font_size)
    t = float(step.print_at)
    still = compare(trajs, projs, names, start_time=t, trail=3, height=HEIGHT, width=WIDTH, font_size=font_size)
    caption = (f"A: {html.escape(model_label(models[0]))} · B: {html.escape(model_label(models[1]))}. Each panel "
               "has its own PCA (two models have unrelated coordinates); states as the operators read them.")
    return Panel(figure_html(fig, div_id), still_html(still, div_id + "-print"), f"layer time t = {t:g}", caption)


def translation_panel(translator, step: lesson.LessonStep, div_id: str, font_size: int, device: str = "cpu"
                      ) -> Panel | str:
    """Translate's animation at the step's view: both particle systems of the translator's translation on one clock,
    one PCA (views/translate.py), opened and printed at its decoder's first cross-attention (the step's frame on the
    shipped translator; another translator's layers count otherwise). `translator` None: the shipped one, or a
    caption saying how to train it where this installation lacks it; a translator named that does not load raises
    CheckpointError or InputError, with the reason."""
    v = step.view
    if translator is None and v["m"] not in available():  # never a download while a lesson is built
        return (f"<p class='caption'>The translator of this step, {html.escape(v['m'])}, is not in this installation; "
                f"docs/howto/train.md says how to train it, and <code>--translator</code> names another."
                f"</p>")
    folder = _folder(translator) if translator else resolve(v["m"])
    model = load_translator(folder, device)
    if model.tokenizer is None:
        raise CheckpointError(f"{folder}: the lesson cannot read text with this translator: {NO_TOKENIZER}")
    tr = model.translate(v["src"], beam=int(v.get("beam", 5)))
    both = joint(tr)
    proj = analysis.project(both, 2, normalised=v.get("norm", "1") == "1", hide_special=v.get("hide", "1") == "1")
    f = next(k + 1 for k, s in enumerate(both.steps) if s.kind == CROSS)
    fig = particles(both, proj, start=f, trail=int(v.get("trail", 4)), height=HEIGHT, width=WIDTH, font_size=font_size,
                    focus=named(both.tokens, v.get("focus")))
    two = both.meta["two_systems"]
    caption = (f"{html.escape(model.config.name or str(translator or v['m']))}, beam {tr.beam}: "
               f"“{html.escape(v['src'])}” → “{html.escape(tr.text)}” · {two['source']} source and "
               f"{len(both.tokens) - two['source']} translation particles · {both.n_steps} sub-steps (E: the encoder's "
               f"layers, D: the decoder's) · PC1 and PC2 explain {proj.explained[:2].sum():.0%} of the variance of all "
               f"states of both systems, each token standardised.")
    return Panel(figure_html(fig, div_id), still_html(fig, div_id + "-print"),  # the still: the same frame
                 f"sub-step {f} of {both.n_steps}: {both.labels[f]}", caption)


def whatif_panel(ms: Models, step: lesson.LessonStep, view: dict, div_id: str, font_size: int) -> Panel:
    """A step with What if… (its view's `if`): the Transformer's run with the intervention over its run as trained,
    as the app's panel draws it (plot.lesson_whatif), printed at the step's frame."""
    text = view["s"]
    plain = ms.trace(ms.transformer, text)
    f = _frame(step.print_at, len(plain.labels))
    drawn = whatif_step(ms.model(ms.transformer), plain, text, view, f, max_tokens=MAX_TOKENS, height=HEIGHT,
                        width=WIDTH, font_size=font_size)
    return Panel(figure_html(drawn.figure, div_id), still_html(drawn.still, div_id + "-print"),
                 f"sub-step {f} of {plain.n_steps}: {drawn.altered.labels[f]}", drawn.caption)


def guesses_html(traj, lens) -> str:
    """The model's own top 5 where its head answers the sentence (the first [MASK]; a decoder's next word), its
    last state through its output head (`lens`: analysis.answers), as the app says them."""
    if not lens:
        return ""
    words = ", ".join(f"<b>{html.escape(w if w.isalnum() else f'“{w}”')}</b> {p:.0%}" for w, p in lens[-1])
    return (f"<p class='guesses'>Guesses for {html.escape(analysis.guess_said(traj))}, most likely first: "
            f"{words}</p>")


# ---- the page --------------------------------------------------------------------------------------
CSS = """
:root { --ink: #111; --soft: #555; --rule: #bbb; --blue: #0072B2; }
* { box-sizing: border-box; }
html { font-size: %(root)spx; }
body { margin: 0; font-family: Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; line-height: 1.4; }
nav { position: sticky; top: 0; z-index: 10; background: #fff; border-bottom: 1px solid var(--rule);
      padding: 0.35rem 1rem; display: flex; gap: 0.4rem; align-items: center; flex-wrap: wrap; }
nav b { margin-right: 0.4rem; font-size: 14px; }
nav a, nav button { font: inherit; font-size: 13px; color: var(--ink); text-decoration: none; border: 1px solid var(--rule);
      border-radius: 4px; padding: 0.05rem 0.45rem; background: #f6f6f6; cursor: pointer; white-space: nowrap; }
nav a:hover, nav button:hover { background: #e8e8e8; }
main { width: %(width)spx; margin: 0 auto; }
header.intro { padding: 0.8rem 0 0.4rem 0; }
header.intro h1 { font-size: 1.5rem; margin: 0 0 0.3rem 0; }
header.intro p { margin: 0.25rem 0; font-size: 0.92rem; }
section.step { scroll-margin-top: 2.6rem; padding-top: 0.6rem; border-top: 2px solid var(--ink); margin-top: 1.2rem; }
section.step h2 { font-size: 1.3rem; margin: 0 0 0.3rem 0; }
.text { display: grid; grid-template-columns: 11fr 9fr; gap: 1rem; align-items: start; margin-bottom: 0.3rem; }
.say { margin: 0; font-size: 1rem; }
.more { margin: 0; font-size: 0.82rem; color: #222; }
.note { margin: 0; font-size: 0.82rem; color: #222; border-left: 3px solid var(--ink); padding: 0 0 0 0.6rem; }
.note b { font-weight: bold; }
details.note summary { cursor: pointer; }
details.note p { margin: 0.2rem 0 0 0; }
.caption, .printed { font-size: 0.8rem; color: var(--soft); margin: 0.15rem 0 0 0; }
.printed { display: none; }
.guesses { font-size: 0.95rem; margin: 0.2rem 0; }
.stages { display: flex; gap: 0.4rem; align-items: center; margin: 0.2rem 0 0.3rem 0; font-size: 0.9rem; }
.stages button { font: inherit; border: 1px solid var(--ink); background: #fff; border-radius: 4px; padding: 0.15rem 0.7rem;
      cursor: pointer; }
.stages button[aria-pressed="true"] { background: var(--ink); color: #fff; }
.stack { display: grid; }
.stage { grid-area: 1 / 1; visibility: hidden; }
.stage.shown { visibility: visible; }
.stage h3 { display: none; }
.still { position: absolute; left: -20000px; top: 0; }  /* drawn (laid out) but off screen: it prints */
.continued { display: none; }
@page { size: A4 landscape; margin: 8mm; }
@media print {
  html { font-size: 14px; }
  nav, .screen-only, .stages, .modebar-container, .updatemenu-container, .slider-container, .lens, .more { display: none !important; }
  main { width: auto; }
  header.intro { padding-top: 0; }
  header.intro p.screen-only { display: none; }
  section.step { break-before: page; border-top: none; margin-top: 0; padding-top: 0; }
  section.step:first-of-type { break-before: avoid; }
  .note { color: #000; }
  .caption, .printed { color: #000; }
  .printed { display: block; }
  .stack { display: block; }
  .stage { visibility: visible; display: none; }
  .stage.print { display: block; }
  .stage.print ~ .stage.print { break-before: page; }
  .stage.print ~ .stage.print .continued { display: block; font-size: 1.1rem; font-weight: bold; margin: 0 0 0.3rem 0; }
  .stage h3 { display: block; font-size: 1rem; margin: 0.2rem 0; }
  .figure { display: none; }
  .still { position: static; break-inside: avoid; zoom: 0.92; }  /* room for the intro on page 1 */
  header.intro p { font-size: 0.9rem; margin: 0.1rem 0; }
  details.note summary { display: inline; }
  details.note p { display: inline; }
}
"""  # noqa: E501  (CSS rules kept one to a line, as the file is written)

SCRIPT = """
// presenter mode folds the teacher's notes on screen; a handout prints them
window.addEventListener('beforeprint', function () {
  document.querySelectorAll('details.note').forEach(function (d) { d.dataset.was = d.open; d.open = true; });
});
window.addEventListener('afterprint', function () {
  document.querySelectorAll('details.note').forEach(function (d) { d.open = d.dataset.was === 'true'; });
});
function lessonStage(button) {  // step 6: show one stage of training
  var bar = button.closest('.stages'), stack = document.getElementById(bar.dataset.stack);
  bar.querySelectorAll('button').forEach(function (b) { b.setAttribute('aria-pressed', String(b === button)); });
  stack.querySelectorAll('.stage').forEach(function (s) {
    s.classList.toggle('shown', s.dataset.stage === button.dataset.stage);
  });
}
"""


def _step_html(k: int, step: lesson.LessonStep, body: str, present: bool = False) -> str:
    """A step's section: its title, its sentence and the figures behind it (on screen: the teacher's note, printed
    open, gives them), the teacher's note (folded on a projector: it prints open)."""
    more = f"<p class='more'>{html.escape(step.more)}</p>" if step.more else ""
    note = (f"<details class='note'><summary><b>For the teacher</b></summary><p>{html.escape(step.note)}</p></details>"
            if present else f"<p class='note'><b>For the teacher.</b> {html.escape(step.note)}</p>")
    return (f"<section class='step' id='step-{k}'><h2>{k} · {html.escape(step.title)}</h2>"
            f"<div class='text'><p class='say'>{html.escape(step.say)}</p>{more}{note}</div>{body}</section>")


def _figure_block(p: Panel, why: str) -> str:
    return (f"<div class='figure'>{p.html}</div><div class='still'>{p.still}</div>"
            f"{p.extra}<p class='caption'>{p.caption}</p>"
            f"<p class='printed'>Printed at {html.escape(p.printed)}: {html.escape(why)}.</p>")


def lesson_html(models=None, learner=None, *, translator=None, present: bool = False, device: str = "cpu") -> str:
    """The whole lesson as one self-contained HTML page. `models`: (Transformer, Macaron), names or folders
    (default: the shipped default pair); `learner`: the model of step 6 (default: one that ships its stages
    of training); `translator`: step 7's, a name or folder (default: lesson.TRANSLATOR, shipped; where it is
    missing the step says so); `present`: presenter-sized fonts. Raises CheckpointError or InputError, with the
    reason, for a model named that does not load."""
    ms = choose_models(models, learner, device)
    font = 17 if present else 14
    parts = []
    for k in range(1, len(lesson.LESSON) + 1):
        step = lesson.step(k)
        view = lesson.params(k, "{transformer}", "{macaron}")
        if step.page.endswith("lab.py"):
            parts.append(_step_html(k, step, _figure_block(lab_panel(step, f"fig-{k}"), step.print_why)
                                    + trained_orders_html(step, f"fig-{k}-trained"), present))
        elif step.page.endswith("translate.py"):
            panel = translation_panel(translator, step, f"fig-{k}", font, device)
            parts.append(_step_html(k, step, panel if isinstance(panel, str) else _figure_block(panel, step.print_why),
                                    present))
        elif step.page.endswith("compare.py"):
            parts.append(_step_html(k, step, _figure_block(compare_panel(ms, step, f"fig-{k}", font),
                                                           step.print_why), present))
        elif view.get("if"):
            parts.append(_step_html(k, step, _figure_block(whatif_panel(ms, step, view, f"fig-{k}", font),
                                                           step.print_why), present))
        elif view.get("at", "final") == "final":
            panel = particles_panel(ms, ms.transformer, view["s"], view, step, f"fig-{k}", font)[0]
            parts.append(_step_html(k, step, _figure_block(panel, step.print_why), present))
        else:
            parts.append(_step_html(k, step, _stages_html(ms, k, step, view, font), present))
    made = datetime.date.today().isoformat()
    a, b, c = (ms.model(f).config.name or f.name for f in (ms.transformer, ms.macaron, ms.learner))
    intro = (
        "<header class='intro'><h1>Macaron Explorer · a guided lesson</h1>"
        f"<p>Transformers as particle dynamics, in {len(lesson.LESSON)} steps. Models: <b>{html.escape(a)}</b> "
        f"(Transformer, steps 1–3, 5 and 8), <b>{html.escape(b)}</b> (Macaron, step 5), <b>{html.escape(c)}</b> "
        f"(step 6, at its stages of training), <b>{html.escape(str(translator or lesson.TRANSLATOR))}</b> (step 7, "
        f"a translator). Written {made} by Macaron Explorer "
        "(<code>python -m macaron lesson</code>).</p>"
        f"<p>{html.escape(lesson.WHAT_THEY_KNOW)}</p>"
        "<p class='screen-only'>Works offline, in any browser: nothing is fetched. Under each figure, "
        "<b>▶ Play</b> and the slider step through the sub-steps; hover a dot or a cell for its numbers. Print it "
        "(Ctrl+P, landscape) for a handout: one step a page.</p></header>")
    nav = ("<nav><b>Lesson</b>"
           + "".join(f"<a href='#step-{k}' title='{html.escape(s.title, quote=True)}'>{k} · {html.escape(s.title)}</a>"
                     for k, s in enumerate(lesson.LESSON, start=1))
           + "<button type='button' onclick='window.print()'>Print handout</button></nav>")
    from plotly.offline import get_plotlyjs

    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>Macaron Explorer · guided lesson ({html.escape(a)}, {html.escape(b)})</title>"
            f"<style>{CSS % dict(root=19 if present else 16, width=WIDTH)}</style>"
            f"<script type='text/javascript'>{get_plotlyjs()}</script><script>{SCRIPT}</script></head>"
            f"<body>{nav}<main>{intro}{''.join(parts)}</main></body></html>")


def _stages_html(ms: Models, k: int, step: lesson.LessonStep, view: dict, font: int) -> str:
    """Step 6: the sentence at every stage of the learner's training, one button each, one PCA for all;
    under each, its guesses (as the app says them, and its logit lens)."""
    folder = ms.learner
    stages = ms.stages(folder)
    first = view.get("at", "final")
    if first not in [s.name for s in stages]:
        first = stages[-1].name
    printed = {STAGE_SHOWN_FIRST, stages[-1].name}
    buttons, panels = [], []
    for i, s in enumerate(stages):
        panel, traj, lens = particles_panel(ms, folder, view["s"], view, step, f"fig-{k}-{i}", font, stage=s.name)
        lens_fig = figure_html(logit_lens(lens, traj), f"lens-{k}-{i}") if lens else ""
        label = s.label() if len(stages) > 1 else (ms.model(folder).config.name or folder.name)
        buttons.append(f"<button type='button' data-stage='{i}' aria-pressed='{str(s.name == first).lower()}' "
                       f"onclick='lessonStage(this)'>{html.escape(s.name)}</button>")
        classes = "stage" + (" shown" if s.name == first else "") + (" print" if s.name in printed else "")
        panel.extra = guesses_html(traj, lens)
        panels.append(f"<div class='{classes}' data-stage='{i}'>"
                      f"<p class='continued'>{k} · {html.escape(step.title)} (continued)</p>"
                      f"<h3>{html.escape(label)}</h3>{_figure_block(panel, step.print_why)}"
                      f"<div class='lens'><p class='caption'>The logit lens: the model's output head read off "
                      f"every state (◆ after attention, ● after the FFN), its top 5.</p>{lens_fig}</div></div>")
    name = ms.model(folder).config.name or folder.name
    bar = (f"<div class='stages' data-stack='stack-{k}'><span>{html.escape(name)}, stage of training:</span>"
           + "".join(buttons) + "</div>") if len(stages) > 1 else (
        f"<p class='caption'>{html.escape(name)} ships no stages of training: its final weights only.</p>")
    return f"{bar}<div class='stack' id='stack-{k}'>{''.join(panels)}</div>"


def write(out, text: str) -> Path:
    """Write `text` to `out`, replacing an existing file only once the new one is complete (a temporary file
    beside it, then a rename)."""
    out = Path(out)
    if out.is_dir():
        raise InputError(f"{out}: is a folder; give a file name, e.g. {out / 'lesson.html'}")
    if not out.parent.is_dir():
        raise InputError(f"{out.parent}: no such folder")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's file is private; a lesson is meant to be shared
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out
