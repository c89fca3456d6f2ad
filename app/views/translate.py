"""Translate: an encoder–decoder moves two particle systems, the source sentence's and its translation's."""
from __future__ import annotations

import json

import numpy as np
import streamlit as st

import explorer_cache as cache
import explorer_state as state
import whatif_panel as panel
from macaron import plot
from macaron.formats.folder import translator_scores
from macaron.plot.style import CONVECTION_COLOR, CROSS_COLOR, DIFFUSION_COLOR, SYSTEM_LOOK
from macaron.plot.whatif import Run, shared
from macaron.schemes import CONVECTION, CROSS, DIFFUSION
from macaron.translation import model as translation

state.header("Translate: two particle systems",
             "A translation model moves **two** sets of particles: the encoder the source sentence's, then the "
             "decoder the translation's, by attention among themselves (**diffusion**), the FFN (**convection**) "
             "and **cross-attention**, a pull toward the source's particles. Type a sentence, press **Enter**, "
             "then **▶ Play**.")

NO_MODEL = (
    "**No translation model on this server yet.** The seed paper's own models are fetched and converted once "
    "(a few hundred MB from Google Drive, on your machine):\n\n"
    "```\npython -m macaron fetch paper-macaron-iwslt14-de-en\n```\n\n"
    "or a checkpoint you have with `python -m macaron import-fairseq CHECKPOINT --dict DICT`; a Marian model "
    "from the Hub (`python -m macaron fetch Helsinki-NLP/opus-mt-de-en`). They are listed here once on this "
    "machine; MACARON_MODELS_DIR lists a folder of model folders.")
BEAMS = {1: "greedy", 5: "beam 5"}


def render() -> None:
    names = list(state.model_paths(translation=True))
    if not names:
        st.info(NO_MODEL, icon=":material/translate:")
        if not (state.model_roots() or state.hub_allowed()):  # no picker to open one with either
            return
    text, picked, model, beam = inputs(names)
    found = cache.translate(picked[1], text, beam, picked[0]) if model is not None and text.strip() else None
    url = dict(src=text, m=state.url_model(picked, names), beam=beam)
    if found is None:
        state.sync_url(url)
        panel.not_drawn("t")
        if model is not None and not text.strip():
            st.info("Type a sentence in the source language and press Enter.", icon=":material/edit_note:")
        return
    tr, both = found
    other = second(names, picked, url)
    found_b = cache.translate(other[1], text, beam, other[0]) if other else None
    if found_b is None:
        other = None  # its failure said by cache.translate, in its name: the first model's drawing stays
    said([(picked[0], tr, model.config)]
         + ([(other[0], found_b[0], cache.load_translation(other[1]).config)] if found_b else []))
    measured([p for p in (picked, other) if p])
    view = view_options(both, url)
    picks = [p for p in (picked, other) if p]
    spec = panel.chosen("t")
    alt = altered(picks, text, beam, spec) if spec else None
    if alt is not None:
        proj, fig = what_if(picks, text, beam, spec, alt, both, **view)
    elif found_b is None:
        proj, fig = animation(picked, text, beam, both, **view)
    else:
        fig = side_by_side((picked, other), text, beam, (both, found_b[1]), **view)
    source, layers = both.meta["two_systems"]["source"], (model.config.encoder.n_layers, model.config.decoder.n_layers)
    offer = panel.Offer(min(layers), min(model.config.encoder.n_heads, model.config.decoder.n_heads),
                        list(both.tokens[:source]), (DIFFUSION, CONVECTION, CROSS), systems=True)
    panel.controls("t", offer, spec, spec is not None and alt is None, url,
                   [(name if len(picks) > 1 else "", a[2]) for (name, _), a in zip(picks, alt or ())],
                   note="A particle cut, held or patched is the source's. The shares below are of the translation "
                        "as trained.")
    if len(picks) == 1:
        described(picked, alt[0][1] if alt else both, proj, view["normalised"], alt is not None)
    shares(picks, text, beam, model, view["normalised"], view["hide_special"], url)
    export(alt[0][3] if alt else tr, alt[0][1] if alt else both, fig, bool(alt))


def altered(picks, text: str, beam: int, spec) -> list | None:
    """Each model's translation as trained and altered by `spec` (explorer_cache.what_if); None where one is
    refused (the page says why, in its name)."""
    found = [cache.what_if(path, text, spec, name, beam=beam) for name, path in picks]
    return None if any(f is None for f in found) else found


def what_if(picks, text: str, beam: int, spec, alt, both, dim: str, hide_special: bool, label_mode: str, trail: int,
            normalised: bool, frame: int, focus: int | None):
    """Each model's altered translation over its translation as trained, both systems on one clock (2-D)."""
    runs = [Run(before, after, *cache.what_if_projection(((path, text, beam),), spec, normalised, hide_special),
                effect, name if len(picks) > 1 else "")
            for (name, path), (before, after, effect, _) in zip(picks, alt)]
    fig = plot.whatif(runs, said=panel.said(spec, list(both.tokens), systems=True), trail=trail, labels=label_mode,
                      start_time=float(both.times[min(frame, len(both.times) - 1)]), **size())
    st.plotly_chart(fig, key="t_anim", config=dict(displaylogo=False, toImageButtonOptions=dict(scale=2)), theme=None)
    st.segmented_control("Show the states", list(VIEWS), key="t_norm", format_func=VIEWS.get, required=True,
                         label_visibility="collapsed")
    ghosts = ", ".join(f"{shared(r.plain, r.altered) - in_source(r)} of {len(r.altered.tokens) - in_source(r)}"
                       for r in runs)
    st.caption(("Each panel its own PCA of its model's states, as trained and altered" if len(runs) > 1 else
                "One PCA of both systems' states, as trained and altered" + (" (2-D)" if dim == "3D" else ""))
               + f". The translation's particles with a ghost: {ghosts} (the words both runs wrote, from the start: "
                 "where the altered run writes another word, its particles from there on have no counterpart).")
    return runs[0].proj_altered, fig


def in_source(run: Run) -> int:
    """How many of a run's particles (both systems on one clock) are the source's."""
    return run.altered.meta["two_systems"]["source"]


def second(names: list[str], picked, url: dict):
    """A second translation model to watch beside the first on one clock (URL parameter b), or None."""
    others = [n for n in names if n != picked[0]]
    if not others:
        return None
    state.init_widget("t_b", "b", NONE, valid=lambda v: v == NONE or v in others)
    if st.session_state["t_b"] not in [NONE, *others]:
        st.session_state["t_b"] = NONE
    with st.sidebar:
        st.subheader("Compare")
        choice = st.selectbox("Beside it, on one clock", [NONE, *others], key="t_b",
                              help="A second translation model on the same sentence, its panel beside the first, "
                                   "both at their latest state at each time (the paper's Macaron beside a "
                                   "Transformer, say).")
    url["b"] = None if choice == NONE else choice
    return None if choice == NONE else (choice, state.all_model_paths()[choice])


NONE = "(none)"


def inputs(names: list[str]):
    """The sentence row: the source sentence (URL parameter src), a preset menu, the model, the search. Returns
    (text, (name, path) or None, the model or None, beam)."""
    row = st.columns([5, 2, 3, 2])
    with row[2]:
        picked = state.model_picker("Translation model", "t_model", "m", names[0] if names else None, names)
    model = cache.try_load(picked[1], cache.load_translation) if picked else None
    lang = model.config.source_lang if model is not None else ""
    examples, from_test_set = cache.presets(picked[1], lang) if picked else ((), False)
    state.init_widget("t_text", "src", examples[0] if examples else "")
    state.resend("t_text")
    text = row[0].text_input(f"Sentence to translate ({lang or 'source language'})", key="t_text",
                             placeholder="Type a sentence and press Enter",
                             label_visibility=state.LABELS[state.presenting()])

    def apply():
        if st.session_state["t_preset"] in examples:
            st.session_state["t_text"] = st.session_state["t_preset"]
        st.session_state["t_preset"] = "(choose one)"

    row[1].selectbox("Preset sentences", ["(choose one)", *examples], key="t_preset", on_change=apply,
                     label_visibility=state.LABELS[state.presenting()], disabled=not examples,
                     help="Two senses of one word first (a bench and a bank: watch what cross-attention does "
                          "with each), then the first sentences of five words or more of the test set this model's "
                          "BLEU was measured on." if from_test_set and translation.presets(picked[1]) else
                          f"The first {len(examples)} sentences of the test set the paper's BLEU was measured on, read "
                          f"back to text." if from_test_set else
                          "Two senses of one word (a bench and a bank; a bank and a river's side): watch what "
                          "cross-attention does with each.")
    state.init_widget("t_beam", "beam", 5, parse=int, valid=lambda v: v in BEAMS)
    beam = row[3].selectbox("Search", list(BEAMS), key="t_beam", format_func=BEAMS.get,
                            label_visibility=state.LABELS[state.presenting()],
                            help="How the words are chosen, as the model's own code chooses them (fairseq 0.6's "
                                 "generator for the paper's models, transformers' generate for Marian's): greedy, "
                                 "the likeliest next word each time; beam 5, the 5 best partial translations kept at "
                                 "every step (the paper's IWSLT14 test).")
    state.link_limit_note(text)
    return text or "", picked, model, beam


def measured(picks: list) -> None:
    """Each translator's test scores where it was trained here (its card's), in the sidebar."""
    rows = [(name, translator_scores(path)) for name, path in picks]
    rows = [(name, s) for name, s in rows if s]
    if rows:
        with st.sidebar:
            st.subheader("Test scores")
            st.markdown("  \n".join(f"**{name}**: BLEU {s['bleu']:.1f}, chrF {s['chrf']:.1f}" for name, s in rows),
                        help=f"On the {rows[0][1]['sentences']:,} held-out Tatoeba pairs (no test sentence occurs in "
                             f"training), beam {rows[0][1]['beam']}, length penalty {rows[0][1]['lenpen']:g}, "
                             f"sacreBLEU `{rows[0][1]['bleu_signature']}`.")


def said(found: list) -> None:
    """The translations (name, Translation, its model's TranslationConfig), one line each, in words with what the
    search found, and how the text was read where the reader should know."""
    lines = []
    for name, tr, c in found:
        tokens = len(tr.target_ids) - (tr.target_ids[-1:] == [c.eos_id])  # no </s> where the search hit its limit
        hit = ", the explorer's limit: it may be cut short" if tokens >= cache.MAX_WORDS else ""
        who = f"{name}, " if len(found) > 1 else ""
        note = " · :material/spellcheck: approximate reading" if tr.source.meta.get("reading") else ""
        lines.append(f"**{who}{c.source_lang or 'source'} → {c.target_lang or 'target'}:** {tr.text or '(nothing)'}"
                     f" :gray[· {tokens} tokens, {BEAMS[tr.beam]}, score {tr.score:.2f}{hit}{note}]")
    notes = " ".join(filter(None, dict.fromkeys(tr.source.meta.get("reading", "") for _, tr, _ in found)))
    lenpen = ", ".join(dict.fromkeys(f"{tr.lenpen:g}" for _, tr, _ in found))
    st.markdown("  \n".join(lines), help=f"Tokens: the translation's subwords before </s>. Score: the search's own, "
                                         f"the summed log-probability of the tokens and </s> over their number to the "
                                         f"power {lenpen} (the model's length penalty; 1: the mean). " + notes)


def view_options(both, url: dict) -> dict:
    """The sidebar's view (projection, specials, labels, trail) and the first frame; the URL follows."""
    state.init_widget("t_norm", "norm", True, parse=state.parse_bool)
    with st.sidebar:
        st.subheader("View")
        state.init_widget("t_dim", "dim", "2D", valid=lambda v: v in ("2D", "3D"))
        dim = st.radio("Projection", ["2D", "3D"], key="t_dim", horizontal=True,
                       help="One PCA fitted on every state of both systems: one fixed frame for the whole animation.")
        state.init_widget("t_hide", "hide", True, parse=state.parse_bool)
        hide = st.toggle("Leave out </s>", key="t_hide", help="The end of the source and the decoder's start (</s>; "
                                                               "a Marian model's <pad>) often sit far from the words "
                                                               "and squeeze the plot.")
        state.init_widget("t_labels", "labels", "auto", valid=lambda v: v in ("auto", "all", "none"))
        labels = st.radio("Labels", ["auto", "all", "none"], key="t_labels", horizontal=True)
        state.init_widget("t_trail", "trail", 4, parse=int, valid=lambda v: 0 <= v <= 40)
        trail = st.slider("Trail (sub-steps)", 0, 40, key="t_trail")
    S = len(both.labels)
    state.init_widget("t_frame", "frame", 0, parse=int, valid=lambda v: 0 <= v < S)
    frame = min(st.session_state["t_frame"], S - 1)
    normalised = st.session_state["t_norm"]
    focus = state.focus_picker("t_focus", both.tokens)
    url.update(dim=dim, hide=hide, labels=labels, trail=trail, norm=normalised, frame=frame,
               focus=st.session_state["t_focus"] or None)
    state.sync_url(url)
    return dict(dim=dim, hide_special=hide, label_mode=labels, trail=trail, normalised=normalised, frame=frame,
                focus=focus)


def animation(picked, text: str, beam: int, both, dim: str, hide_special: bool, label_mode: str, trail: int,
              normalised: bool, frame: int, focus: int | None):
    """Both systems on one clock: the figure and the switch between the two views of the states."""
    proj = cache.project_translation(picked[1], text, beam, 3 if dim == "3D" else 2, normalised, hide_special)
    fig = plot.particles(both, proj, start=frame, trail=trail, labels=label_mode, focus=focus, **size())
    st.plotly_chart(fig, key="t_anim", config=dict(displaylogo=False, toImageButtonOptions=dict(scale=2)), theme=None)
    st.segmented_control("Show the states", list(VIEWS), key="t_norm", format_func=VIEWS.get, required=True,
                         label_visibility="collapsed")
    return proj, fig


def described(picked, both, proj, normalised: bool, altered: bool = False) -> None:
    """What the figure of one model shows: its particles, its plane, what the arrows and the matrix are."""
    two, k = both.meta["two_systems"], np.shape(proj.coords)[-1]
    pcs = f"PC1 and PC2 explain **{proj.explained[:2].sum():.0%}**" + ("" if k == 2 else
                                                                      f", PC3 **{proj.explained[2]:.0%}**")
    st.caption(f"**{picked[0]}** · {two['source']} source and {len(both.tokens) - two['source']} target particles · "
               f"{both.n_steps} sub-steps (E: the encoder's layers, D: the decoder's) · {pcs} of the variance of "
               f"all states of both systems" + (", as trained and altered (2-D)" if altered else "")
               + (" · every state standardised per token, as a LayerNorm without its weights reads it" if normalised
                  else " · the raw residual stream"))
    source, target = SYSTEM_LOOK["source"], SYSTEM_LOOK["target"]
    st.markdown(
        f"**What you see.** <span style='color:{source[0]}'>●</span> **source** particles, "
        f"<span style='color:{target[0]}'>◆</span> **translation** particles (the decoder reads </s> and each word "
        "before the next, as in training: every word it wrote is a particle). First the encoder moves the source "
        "while the translation waits at its embeddings; then the source stays where the encoder left it, and the "
        f"decoder moves the translation: {state.swatch(DIFFUSION_COLOR)} **attention** among its own particles, each "
        f"seeing only those before it; {state.swatch(CROSS_COLOR)} **cross-attention**, a pull toward the source's "
        f"particles; {state.swatch(CONVECTION_COLOR)} the **FFN**, each on its own. Dotted arrows join each particle "
        "to the one it listens to most; in a cross-attention sub-step that is a source particle. "
        + ("With What if…, a hollow grey dot is each particle's ghost: where the model as trained has it at the same "
           "sub-step, at the end of its faint path, a thin line joining ghost and particle; the chart beside gives "
           "each particle's distance from its own path over depth, a cursor on the same clock." if altered else
           "The matrix shows the particles that move (its rows) and those they listen to (its columns): the "
           "source's over the source's while the encoder runs, then the translation's over the translation's, or "
           "over the source's in a cross-attention sub-step."), unsafe_allow_html=True)


VIEWS = state.STATE_VIEWS


def size() -> dict:
    """The animation's size: as the other pages', but 40 px shorter off a projector (the translation's line above it),
    so the whole figure and its ▶ Play stay on the first 1280 × 720 screen."""
    out = state.figure_size(False, "room_translate")
    if not state.presenting():
        out["height"] -= 40
    return out


def side_by_side(picks, text: str, beam: int, boths, dim: str, hide_special: bool, label_mode: str, trail: int,
                 normalised: bool, frame: int, focus: int | None):
    """Two translation models on one clock: each panel at its latest state at every time (2-D)."""
    projs = [cache.project_translation(path, text, beam, 2, normalised, hide_special) for _, path in picks]
    fig = plot.compare(list(boths), projs, [name for name, _ in picks], trail=trail, labels=label_mode,
                       start_time=float(boths[0].times[min(frame, len(boths[0].times) - 1)]), **size())
    st.plotly_chart(fig, key="t_pair", config=dict(displaylogo=False, toImageButtonOptions=dict(scale=2)), theme=None)
    st.segmented_control("Show the states", list(VIEWS), key="t_norm", format_func=VIEWS.get, required=True,
                         label_visibility="collapsed")
    st.caption("Each panel its own PCA of both systems' states" + (", 2-D (the 3-D view shows one model)"
                                                                    if dim == "3D" else "")
               + ": E1, E2, … are the encoders' layers, D1, D2, … the decoders'; each panel shows its latest state "
                 "at each time, so a Macaron's three sub-steps and a Transformer's two end each layer together.")
    return fig


def shares(picks: list, text: str, beam: int, model, normalised: bool, hide_special: bool, url: dict) -> None:
    """Where the decoder's moves come from, layer by layer: this sentence's translation, or the preset sentences'
    (URL parameter over), by each model."""
    st.subheader("Where do the translation's particles move from? Self-attention, cross-attention, FFN")
    presets, from_test_set = cache.presets(picks[0][1], model.config.source_lang)
    named = (f"the {len(presets)} preset sentences" if translation.presets(picks[0][1]) or not from_test_set else
             f"the first {len(presets)} sentences of the paper's test set")
    state.init_widget("t_over", "over", "sentence", valid=lambda v: v in ("sentence", "presets"))
    over = st.segmented_control("Measured over", ["sentence", "presets"], key="t_over", required=True,
                                format_func={"sentence": "this sentence", "presets": named}.get, disabled=not presets)
    texts = presets if over == "presets" and presets else (text,)
    url["over"] = over
    state.sync_url(url)
    found = {name: measure for name, path in picks
             if (measure := cache.move_shares(path, texts, beam, normalised, hide_special, name)) is not None}
    if not found:  # each failure said in its model's name
        return
    st.plotly_chart(plot.move_shares(found), key="t_shares", config=dict(displaylogo=False), theme=None)
    norm = model.config.decoder.norm
    counts = " and ".join(str(s.particles) for s in found.values())
    what = "this sentence's translation" if len(texts) == 1 else f"the translations of {named}"
    state.explain(
        f"Measured on {what} ({counts} particles{', start and end tokens left out' if hide_special else ''}, "
        f"{BEAMS[beam]}): each "
        "particle's path in a layer is the sum of its sub-steps' lengths ‖Δx‖, "
        + ("of the states as the operators read them (standardised per token)" if normalised else
           "in the raw residual stream")
        + "; the bar splits it by the kind of sub-step that travelled it, averaged over the particles. "
        + ("In this post-LN model each sub-step's move includes its LayerNorm's." if norm == "post" else
           "In this pre-LN model each sub-step's move is its operator's output alone.")
        + " A share of path is not a share of the meaning carried: a short pull can matter most.")


def export(tr, both, fig, altered: bool = False) -> None:
    """The view's link, and the animation and both trajectories (with What if…, the altered translation's) as files."""
    st.subheader("Share and export")
    st.caption("The address bar holds this view (sentence, model, search, options, first frame, What if…): copy it to "
               "share." + (" The files hold the altered translation, what was done in each trajectory's meta; the "
                           "HTML its ghosts too." if altered else ""))
    stem = (both.meta.get("model") or "translation").replace("/", "_") + ("-whatif" if altered else "")
    e1, e2 = st.columns(2)
    e1.download_button("Animation (HTML, works offline)", data=lambda: plot.to_html(fig, f"Macaron Explorer · {stem}"),
                       file_name=f"{stem}-translation.html", mime="text/html", on_click="ignore",
                       icon=":material/code:")
    e2.download_button("Both trajectories (JSON)", data=lambda: json.dumps(
        dict(source=tr.source.to_dict(), target=tr.target.to_dict(), target_ids=tr.target_ids, text=tr.text,
             beam=tr.beam, score=tr.score), ensure_ascii=False), file_name=f"{stem}-translation.json",
        mime="application/json", on_click="ignore", icon=":material/data_object:")


render()
