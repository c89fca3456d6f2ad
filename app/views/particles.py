"""Particles: one model, one sentence. Watch the tokens move, sub-step by sub-step."""
from __future__ import annotations

import numpy as np
import streamlit as st

import explorer_cache as cache
import explorer_state as state
import whatif_panel as panel
from macaron import plot
from macaron.plot import slides
from macaron.plot.style import CONVECTION_COLOR, DIFFUSION_COLOR
from macaron.plot.whatif import Run
from macaron.schemes import F_AND_G, PHI_SAID, SCHEMES
from macaron.studies import analysis

VIEWS = state.STATE_VIEWS

state.header("Particles: one sentence, one model",
             "Tokens are **particles**, layers play the part of **time steps** (large ones: see Dynamics): "
             "attention (**diffusion**) moves each particle "
             "because of the others, the FFN (**convection**) moves each on its own. Type a sentence, press "
             "**Enter**, then **▶ Play**.")


def render() -> None:
    chosen = inputs()
    if chosen is None:
        state.not_drawn("p_norm", "p_focus")  # the switch under the figure, the word drawn from the sentence
        panel.not_drawn("p")
        return
    picked, stages, sent, model, traj, url, view = chosen
    frame, head_sel, focus = frame_and_heads(traj, url)
    spec = panel.chosen("p")
    found = cache.what_if(picked[1], sent, spec, picked[0]) if spec else None
    lens = analysis.answers(model, found[1] if found else traj)  # the run drawn: its titles and the logit lens
    proj, fig, shown = animation(traj, model, picked, stages, sent, frame, head_sel, focus, lens, found, spec, **view)
    offer = panel.Offer(len(traj.layer_boundaries()) - 1, model.config.n_heads, list(traj.tokens))
    panel.controls("p", offer, spec, spec is not None and found is None, url, [("", found and found[2])],
                   note="The rhythm and the logit lens below are of the altered run; the attribution of the "
                        "model as trained.")
    described(traj, model, stages, proj, found is not None, **view)
    rhythm(shown, proj, view["normalised"])
    logit_lens(shown, model, lens)
    attribution(traj, model, picked, sent, url)
    export(shown, proj, fig, frame, head_sel, view["trail"], view["label_mode"],
           panel.said(spec, traj.tokens) if found else "")


def inputs():
    """The sentence row, the model and its stage, then the view in the sidebar: (picked, stages, sentence, model,
    trajectory, URL state, view options), or None where there is no trajectory to show."""
    names, default_model, _ = state.models_on_offer()

    text, (c3,) = state.sentence_input("p_text", "p_preset", (5, 2, 3),
                                       help="Write [MASK] where the model should guess a word.")
    with c3:
        picked = state.model_picker("Model", "p_model", "m", default_model, names)
    stages = cache.stages(picked[1]) if picked else []
    url_m = state.url_model(picked, names)
    (picked,), stage = state.stage_picker("p_stage", "at", [picked], [stages])  # first in the sidebar: the lesson

    words = [m.group() for m in state.maskable_words(text)]
    mask_options = [-1] + list(range(len(words)))  # -1: no word masked (None would read "Choose an option")
    state.init_widget("p_mask", "mask", -1, parse=int, valid=lambda v: -1 <= v < len(words))
    if st.session_state["p_mask"] not in mask_options:
        st.session_state["p_mask"] = -1
    state.init_widget("p_norm", "norm", True, parse=state.parse_bool)

    with st.sidebar:
        st.subheader("View")
        state.init_widget("p_dim", "dim", "2D", valid=lambda v: v in ("2D", "3D"))
        dim = st.radio("Projection", ["2D", "3D"], key="p_dim", horizontal=True,
                       help="PCA fitted once on all states of the trajectory: one fixed frame for the whole animation.")
        state.init_widget("p_hide", "hide", True, parse=state.parse_bool)
        hide_special = st.toggle("Leave out [CLS] and [SEP]", key="p_hide",
                                 help="They often sit far from the words and squeeze the plot.")
        state.init_widget("p_labels", "labels", "auto", valid=lambda v: v in ("auto", "all", "none"))
        label_mode = st.radio("Labels", ["auto", "all", "none"], key="p_labels", horizontal=True,
                              help="auto: every particle up to 30 tokens, moved, shortened or on a thin leader line so "
                                   "that no two overlap (beyond 30, the first 30 words that fit); all: every one, even "
                                   "overlapping. Hover names every particle.")
        state.init_widget("p_trail", "trail", 4, parse=int, valid=lambda v: 0 <= v <= 40)
        trail = st.slider("Trail (sub-steps)", 0, 40, key="p_trail")
        st.selectbox("Mask a word", mask_options, key="p_mask",
                     format_func=lambda i: "(none)" if i < 0 else f"{i + 1}: {words[i]}",
                     help="Replace one word with [MASK] and see what the model guesses at every sub-step.")

    sent = state.mask_word(text, st.session_state["p_mask"])
    model = cache.try_load(picked[1]) if picked else None
    traj = cache.trace(picked[1], sent, picked[0]) if model is not None else None
    normalised = st.session_state["p_norm"]
    url = dict(s=text, m=url_m, at=stage,
               mask=st.session_state["p_mask"] if st.session_state["p_mask"] >= 0 else None, dim=dim,
               norm=normalised, hide=hide_special, labels=label_mode, trail=trail)
    if traj is None:
        state.sync_url(url)
        return None
    return picked, stages, sent, model, traj, url, dict(dim=dim, hide_special=hide_special, label_mode=label_mode,
                                                       trail=trail, normalised=normalised)


def frame_and_heads(traj, url: dict) -> tuple[int, str, int | None]:
    """The first frame, the attention head (in the sidebar, for models of several heads) and the particle whose
    weights the figure spells out (its index, or None); the URL follows."""
    if any(t.startswith("[UNK") for t in traj.tokens):
        st.info("Some characters are outside this model's vocabulary and show as [UNK:…] particles.",
                icon=":material/help:")
    S = len(traj.labels)
    state.init_widget("p_frame", "frame", 0, parse=int, valid=lambda v: 0 <= v < S)
    frame = min(st.session_state["p_frame"], S - 1)
    heads = next((m.shape[0] for m in traj.mixing if m is not None), 0)
    head_sel = "mean"
    if heads > 1:
        with st.sidebar:
            state.init_widget("p_head", "head", "mean",
                              valid=lambda v: v == "mean" or (v.isdigit() and 1 <= int(v) <= heads))
            if st.session_state["p_head"] != "mean" and int(st.session_state["p_head"]) > heads:
                st.session_state["p_head"] = "mean"
            head_sel = st.radio("Attention heads", ["mean"] + [str(h + 1) for h in range(heads)], key="p_head",
                                horizontal=True, help="Who pulls whom: the mixing matrix averaged over heads, or "
                                                      "one head.")
    focus = state.focus_picker("p_focus", traj.tokens)
    url.update(frame=frame, head=head_sel if heads > 1 else None, focus=st.session_state["p_focus"] or None)
    state.sync_url(url)
    return frame, head_sel, focus


def animation(traj, model, picked, stages, sent, frame: int, head_sel: str, focus: int | None, lens, found, spec,
              dim: str, hide_special: bool, label_mode: str, trail: int, normalised: bool):
    """The figure and the switch between the two views of the states under it: (the projection of the run drawn,
    the figure, the run drawn): the sentence's, or with What if… its altered run over the unaltered one (2-D)."""
    # Everything that depends on the sub-step (the particles and their moves, who pulls whom, the
    # mixing matrix, the title naming the sub-step) is a frame of this one Plotly figure, so ▶ Play
    # and its slider move them together: one clock, and no server round trip per frame.
    size = state.figure_size(len(stages) > 1, "room_particles")  # measured right above the figure
    head = None if head_sel == "mean" else int(head_sel) - 1
    if found is not None:
        plain, altered, effect = found
        pp, pa = cache.what_if_projection(((picked[1], sent, None),), spec, normalised, hide_special)
        fig = plot.whatif([Run(plain, altered, pp, pa, effect)], said=panel.said(spec, traj.tokens),
                          start_time=float(traj.times[frame]), trail=trail, labels=label_mode, head=head, **size)
        proj, shown = pa, altered
    else:
        proj, _ = cache.stage_frame(stages, picked[1], sent, 3 if dim == "3D" else 2, normalised, hide_special)
        fig = plot.particles(traj, proj, start=frame, trail=trail, labels=label_mode, head=head, focus=focus,
                             guesses=lens, **size)  # each title: its state's first guess
        shown = traj
    st.plotly_chart(fig, key="p_anim", config=dict(displaylogo=False, toImageButtonOptions=dict(scale=2)), theme=None)
    st.segmented_control("Show the states", list(VIEWS), key="p_norm", format_func=VIEWS.get, required=True,
                         label_visibility="collapsed")
    return proj, fig, shown


def described(traj, model, stages, proj, altered: bool, dim: str, hide_special: bool, label_mode: str, trail: int,
              normalised: bool) -> None:
    """What the picture shows: the view of the states, the plane, the model; what the arrows and dots are."""
    sizes = analysis.mean_norms(traj.states)
    grows = (f"the particles' mean length is {sizes[0]:.2g} at the embedding and at most {sizes.max():.3g}"
             + (", so the opening frame is one dot" if sizes.max() > 20 * sizes[0] else ""))
    if traj.meta.get("norm") == "post":  # the operators read each state as it is: a LayerNorm's output
        st.caption("**What the operators read**, near enough: every token standardised over its features. This "
                   "post-LN model's operators read each state as it is, a LayerNorm's output; standardising sets "
                   f"aside that LayerNorm's gain and bias. In the raw residual stream {grows}." if normalised else
                   f"**The raw residual stream**, sizes kept: {grows}. In this post-LN model it is exactly what the "
                   "next operator reads.")
    else:
        st.caption("**What the operators read**: every token standardised over its features (LayerNorm without "
                   f"its weights), the input of the next attention or FFN. In the raw residual stream {grows}."
                   if normalised else f"**The raw residual stream**, sizes kept: {grows}. *What the operators "
                   "read* standardises every token first, as LayerNorm does before each operator.")
    k = np.shape(proj.coords)[-1]
    seen = analysis.share_in_view(traj, proj, normalised) if not altered else None
    if seen is not None and seen[0] < 0.5 * seen[1:].mean():
        st.caption(f"This plane holds {seen[0]:.0%} of the embedding's spread and {seen[1:].mean():.0%} of a later "
                   "state's (mean): at t = 0 the particles differ in many directions at once, few of them drawn here; "
                   "the layers gather their differences into the directions this picture shows.")
    pcs = f"PC1 and PC2 explain **{proj.explained[:2].sum():.0%}**" + (
        "" if k == 2 else f", PC3 **{proj.explained[2]:.0%}**")
    shared = len(stages) > 1 and not altered
    drawn = len(traj.tokens) if proj.keep is None else int(np.sum(proj.keep))
    hidden = f" ({drawn} drawn: *Leave out [CLS] and [SEP]*)" * (drawn < len(traj.tokens))  # the matrix has all
    st.caption(f"**{state.model_label(model)}** · {len(traj.tokens)} particles{hidden} · {traj.n_steps} sub-steps · "
               f"{pcs} "
               + ("of the variance of all states of both runs, as trained and altered (one PCA, in 2-D: a ghost and "
                  "its particle in one frame)" if altered else
                  f"of the variance of all states at all {len(stages)} stages of training (one PCA for all: the same "
                  "directions at every stage, each drawn at its own scale)" if shared else
                  "of the variance of all states"))

    left, right = st.columns([3, 2])
    with left:
        st.markdown(
            "**What you see.** Each dot is a token, placed by one PCA fitted on **all** its states: the frame never "
            "moves, so motion is real motion. The title names the sub-step just taken. Arrows are that move: "
            f"{state.swatch(DIFFUSION_COLOR)} **blue: diffusion (attention)**, each particle moves "
            f"because of the others; {state.swatch(CONVECTION_COLOR)} **vermillion: convection (FFN)**, "
            "each moves on its own. Dotted arrows (*who pulls whom*) join each particle to the one it listens to most; "
            + ("with What if…, a hollow grey dot is each particle's ghost, where the model as trained has it at the "
               "same sub-step, at the end of its faint unaltered path, a thin line joining ghost and particle; the "
               "chart beside gives each particle's distance from its own path over depth, a cursor on the same clock."
               if altered else
               "the matrix on the right gives every weight of the same sub-step (row *i*: particle *i*'s attention, "
               "each row sums to 100 %), and for convection it is the identity: each particle reads only itself.")
            + " Hover a dot or a cell for its numbers.", unsafe_allow_html=True)
    with right:
        st.markdown(state.SCHEMES_SAID)
        for name in ("lie-trotter", "strang"):  # the name above its formula: side by side, Macaron's was cut
            st.markdown(f"{SCHEMES[name].layer}:")
            st.latex(SCHEMES[name].latex)
        st.caption(F_AND_G + " " + PHI_SAID)


def rhythm(traj, proj, normalised: bool) -> None:
    """How far the particles move in each sub-step: the rhythm of a layer."""
    st.subheader("The rhythm of a layer: how far particles move in each sub-step")
    st.plotly_chart(plot.displacement([traj], [traj.meta.get("model", "")], [proj.keep], normalised=normalised),
                    key="p_disp", config=dict(displaylogo=False), theme=None)
    state.explain(state.RHYTHM_SAID + (" Moves of the states as the operators read them (the view above)."
                                       if normalised else " Moves in the raw residual stream (the view above)."))
    with st.expander("Per particle (heatmap)"):
        st.plotly_chart(plot.displacement_heatmap(traj, proj.keep), key="p_dispmap", config=dict(displaylogo=False),
                        theme=None)


def logit_lens(traj, model, guesses) -> None:
    """What the model would guess at every sub-step (`guesses`: analysis.answers of the run drawn), where its head
    answers the sentence."""
    st.subheader("What would the model guess, sub-step by sub-step? (logit lens)")
    if not model.has_head:
        what = "next-word" if traj.causal else "masked-language-model"
        st.info(f"This model has no {what} head, so it cannot guess words.", icon=":material/info:")
    elif traj.guess_at is None:
        st.info("Add **[MASK]** to the sentence (or pick *Mask a word* in the sidebar) to see the model's guesses."
                if not traj.causal else "A decoder guesses a word from the words before it: put **[MASK]** after "
                "at least one word.", icon=":material/lightbulb:")
    else:
        final = ", ".join(f"`{w.replace('`', '')}` {p:.0%}" for w, p in guesses[-1][:3])
        st.markdown(f"Final guesses for {analysis.guess_said(traj)}: {final}")
        st.plotly_chart(plot.logit_lens(guesses, traj), key="p_lens", config=dict(displaylogo=False), theme=None)
        state.explain("The model's own output head read off every intermediate state (◆ after diffusion, ● after "
                      "convection, ■ after an unsplit step). Watch when the right answer appears.")


def attribution(traj, model, picked, sent, url: dict) -> None:
    """Which words mattered (integrated gradients), computed only when asked."""
    st.subheader("Which words mattered? (integrated gradients)")
    state.init_widget("p_attr", "attr", False, parse=state.parse_bool)
    do_attr = st.toggle("Compute attribution (Captum: a few dozen forward and backward passes)", key="p_attr",
                        help="Integrated gradients run the model 24 times with gradients, so they run only "
                             "when you ask.")
    url["attr"] = do_attr
    state.sync_url(url)
    if do_attr:
        target_pos = traj.guess_at if model.has_head else None
        if target_pos is None:
            choices = list(range(len(traj.tokens)))
            target_pos = st.selectbox("Explain the final state norm of token", choices, key="p_attr_tok",
                                      index=min(1, len(choices) - 1), format_func=lambda i: f"{i}: {traj.tokens[i]}")

        try:
            att = cache.attribution(picked[1], sent, target_pos)
            st.markdown(plot.attribution_html(traj.tokens, att.scores), unsafe_allow_html=True)
            state.explain(f"Explained: {att.target}. LayerIntegratedGradients on the token embedding, from a baseline "
                          f"where every word is [PAD]; completeness gap {att.delta:.2g}.")
        except Exception as e:  # attribution is an extra: never let it take the page down
            st.warning(f"Attribution failed: {e}", icon=":material/warning:")


def export(traj, proj, fig, frame: int, head_sel: str, trail: int, label_mode: str, said: str = "") -> None:
    """The view's link, and the frame, the animation and the trajectory as files (`said`: what was done to the run
    drawn, with What if…)."""
    st.subheader("Share and export")
    st.caption("The address bar holds this view (sentence, model, options, first frame, What if…): copy it to share. "
               "The camera icon above the animation saves the frame on screen as a PNG."
               + (f" The files hold the altered run ({said}): the HTML its ghosts too, the slides and the movie "
                  "the altered run alone, the trajectory what was done in its meta." if said else ""))
    stem = (f"{traj.meta.get('model', 'model')}".replace("/", "_") or "trajectory") + ("-whatif" if said else "")
    S = len(traj.labels)
    options = dict(trail=trail, head=None if head_sel == "mean" else int(head_sel) - 1, labels=label_mode)
    slide = st.selectbox("For slides, the frame of sub-step", list(range(S)), index=frame, key="p_still",
                         format_func=lambda i: f"{i}: {traj.labels[i]}",
                         help="Drawn offline by matplotlib, 16:9, in the same colours and labels.")
    s1, s2, s3, s4 = st.columns(4)
    s1.download_button("Frame (PNG)", data=lambda: slides.frame(traj, proj, slide, **options),
                       file_name=f"{stem}-frame{slide}.png", mime=slides.FORMATS["png"], on_click="ignore",
                       icon=":material/image:")
    s2.download_button("Frame (SVG)", data=lambda: slides.frame(traj, proj, slide, fmt="svg", **options),
                       file_name=f"{stem}-frame{slide}.svg", mime=slides.FORMATS["svg"], on_click="ignore",
                       icon=":material/draw:")
    s3.download_button("Animation (GIF)", data=lambda: slides.movie(traj, proj, **options),
                       file_name=f"{stem}-particles.gif", mime=slides.FORMATS["gif"], on_click="ignore",
                       icon=":material/animated_images:")
    s4.download_button("Animation (MP4)", data=lambda: slides.movie(traj, proj, fmt="mp4", **options),
                       file_name=f"{stem}-particles.mp4", mime=slides.FORMATS["mp4"], on_click="ignore",
                       icon=":material/movie:", disabled=not slides.can_write_mp4(),
                       help=None if slides.can_write_mp4() else "Needs the imageio-ffmpeg package (pip install "
                                                                 "imageio-ffmpeg): it ships ffmpeg.")
    e1, e2, e3 = st.columns(3)
    e1.download_button("Animation (HTML, works offline)", data=lambda: plot.to_html(fig, f"Macaron Explorer · {stem}"),
                       file_name=f"{stem}-particles.html", mime="text/html", on_click="ignore",
                       icon=":material/code:")
    e2.download_button("Trajectory (CSV)", data=traj.to_csv, file_name=f"{stem}-trajectory.csv", mime="text/csv",
                       on_click="ignore", icon=":material/table:")
    e3.download_button("Trajectory (JSON)", data=traj.to_json, file_name=f"{stem}-trajectory.json",
                       mime="application/json", on_click="ignore", icon=":material/data_object:")


render()
