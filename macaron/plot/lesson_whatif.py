"""A lesson step with What if… (its view's `if`, step 8's "Switch off the interaction") as the lesson file draws it:
the step's sentence run with the intervention the view names, played over its run as trained as the app's What if…
panel draws it (plot.whatif, one 2-D PCA of both runs' states: analysis.project_together), and the same figure at
the handout's frame.

    drawn = whatif_step(model, plain, text, view, at=12, max_tokens=96, height=480, width=1040, font_size=14)
    drawn.figure, drawn.still, drawn.caption

The view's parameters are the app's (app/whatif_state.py: `if=off&if_kind=diffusion`, `if_layers=0,1` for some
layers, none for every layer); a lesson step switches a sub-step off, so that is what this reads.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import plotly.graph_objects as go

from .. import interventions as iv
from ..network.reading import InputError
from ..studies import analysis
from ..trajectory import Trajectory
from .style import model_label
from .whatif import Run, answer, ghost, whatif


@dataclass
class Drawn:
    """A What-if step's figures and what they show."""

    figure: go.Figure     # playable, opening at the view's frame
    still: go.Figure      # the same at the handout's frame (plot.lesson.still_html takes its controls off)
    altered: Trajectory
    effect: iv.Effect
    caption: str          # measured words under the figure (HTML)


def interventions(view: dict) -> list:
    """The view's What-if parameters as the library's interventions: a sub-step kind switched off, at the layers
    `if_layers` names (counted from 0, as the address bar counts them), else at every layer."""
    if view.get("if") != "off":
        raise InputError(f"the lesson draws a sub-step switched off (if=off), not if={view.get('if')!r}")
    layers = [int(i) for i in view.get("if_layers", "").split(",") if i.strip()]
    return [iv.Off(view["if_kind"], layers=layers or None)]


def whatif_step(model, plain: Trajectory, text: str, view: dict, at: int, *, max_tokens: int, height: int,
                width: int, font_size: int) -> Drawn:
    """`plain` (the model's trace of `text`) and its run with the view's intervention, the altered particles over
    their ghosts, opening at the view's `frame` and, for the still, at state `at`; the view's `norm` (each token
    standardised) and `hide` ([CLS] and [SEP] left out) as the app reads them."""
    altered = model.trace(text, max_tokens=max_tokens, interventions=interventions(view))
    normalised = view.get("norm", "1") == "1"
    pp, pa = analysis.project_together(plain, altered, k=2, normalised=normalised,
                                       hide_special=view.get("hide", "1") == "1")
    effect = iv.effect(model, plain, altered)
    runs = [Run(plain, altered, pp, pa, effect)]
    look = dict(trail=int(view.get("trail", 4)), height=height, width=width, font_size=font_size)
    start = min(int(view.get("frame", 0)), len(altered.labels) - 1)
    figure = whatif(runs, start_time=float(altered.times[start]), **look)
    still = whatif(runs, start_time=float(altered.times[at]), **look)
    words = answer(effect)
    said = "; ".join(altered.interventions)
    states = "each token standardised" if normalised else "raw"
    caption = (f"{html.escape(model_label(model))} · What if: {html.escape(said)}"
               + (f" · {html.escape(analysis.guess_said(altered))}, its top 3 as trained: {html.escape(words[0])}; "
                  f"altered: {html.escape(words[1])}" if words else "")
               + f". One PCA of both runs' states ({states}): PC1 and PC2 explain {pa.explained[:2].sum():.0%} of "
               f"their variance. At the printed frame the particles are on average "
               f"{ghost(runs[0]).strayed[at].mean():.2f} of their length as trained away from their ghosts (raw "
               f"states; the chart beside).")
    return Drawn(figure, still, altered, effect, caption)
