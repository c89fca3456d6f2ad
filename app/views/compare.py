"""Compare: two models on one sentence (default Transformer vs Macaron), or one model on two sentences."""
from __future__ import annotations

import streamlit as st

import explorer_cache as cache
import explorer_state as state
import whatif_panel as panel
from macaron import plot
from macaron.plot.whatif import Run
from macaron.studies import analysis

MODES = {"models": "Two models · one sentence", "sentences": "One model · two sentences"}
VIEWS = {"side": "Side by side", "overlay": "Overlaid after Procrustes"}
STATES = {True: "What the operators read", False: "Raw residual stream"}

state.header("Compare: same clock, different schemes",
             "Both trajectories run on one **layer clock**: a Transformer layer takes two sub-steps (½ + ½ of layer "
             "time), a Macaron layer three (¼ + ½ + ¼), and layers end at the same times. Press **▶ Play**.")


def render() -> None:
    mode, picks, stages, texts, url, view, look = inputs()
    traced = trace(mode, picks, stages, texts, url, view, **look)
    if traced is None:
        state.not_drawn("c_norm", "c_view")  # the switches under the figure
        panel.not_drawn("c")
        return
    models, trajs, names_ab, colors, projs, share, same_tokens, view = traced
    spec = panel.chosen("c")
    found = altered(mode, picks, texts, names_ab, spec) if spec else None
    fig = animation(mode, picks, stages, texts, url, trajs, names_ab, colors, projs, share, view, spec, found, **look)
    ta, tb = trajs
    tokens = [a if a == b else f"{a} / {b}" for a, b in zip(ta.tokens, tb.tokens)]
    offer = panel.Offer(min(len(t.layer_boundaries()) for t in trajs) - 1, min(m.config.n_heads for m in models),
                        tokens)
    panel.controls("c", offer, spec, spec is not None and found is None, url,
                   [(name, f[2]) for name, f in zip(names_ab, found or ())],
                   note="The same change in both runs; the measures below are of the runs as trained.")
    described(mode, stages, models, share, same_tokens, view, found is not None, look["normalised"])
    if same_tokens:
        how_alike(picks, texts, trajs, names_ab, look["normalised"], look["hide"])
    over_depth(mode, trajs, names_ab, colors, projs, url, look["normalised"])
    export(fig, [f[1] for f in found] if found else trajs, bool(found))


def altered(mode, picks, texts, names_ab, spec) -> list | None:
    """Each panel's run as trained, altered by `spec`, and what it changed (explorer_cache.what_if); None where one
    is refused (the page says why)."""
    found = [cache.what_if(p[1], t, spec, name) for p, t, name in zip(picks, texts, names_ab)]
    return None if any(f is None for f in found) else found


def inputs():
    """One row of inputs (two models and a sentence, or one model and two sentences), then the view in the
    sidebar: (mode, the models picked, their stages, the two texts, URL state, the view, the look of the figure)."""
    present = state.presenting()
    with st.sidebar:
        st.subheader("Compare")
        state.init_widget("c_mode", "mode", "models", valid=lambda v: v in MODES)
        mode = st.radio("What", list(MODES), key="c_mode", format_func=MODES.get, label_visibility="collapsed")
    names, default_a, default_b = state.models_on_offer()

    if mode == "models":
        text, (ca, cb) = state.sentence_input("c_text", "c_preset", (4, 2, 2, 2))
        picks = []
        for column, label, key, param, default in ((ca, "Model A", "c_a", "a", default_a),
                                                   (cb, "Model B", "c_b", "b", default_b)):
            with column:
                picks.append(state.model_picker(label, key, param, default, names))
        url = dict(mode=mode, s=text, a=state.url_model(picks[0], names), b=state.url_model(picks[1], names))
        stages = [cache.stages(p[1]) if p else [] for p in picks]
        slots = st.columns(2) if present else (st.container(), st.container())  # a projector: one line for both
        for i, (side, param) in enumerate((("A", "at_a"), ("B", "at_b"))):  # one model at two stages, if you like
            with slots[i]:
                (picks[i],), url[param] = state.stage_picker(f"c_stage_{param}", param, [picks[i]], [stages[i]],
                                                             title=f"Stage of training, model {side}")
        texts = [text, text]
    else:
        state.init_widget("c_sa", "s1", state.PRESETS["bank (river)"])
        state.init_widget("c_sb", "s2", state.PRESETS["bank (money)"])
        c1, c2, c3 = st.columns([4, 4, 3])
        ta_text = c1.text_input("Sentence A", key="c_sa")
        tb_text = c2.text_input("Sentence B", key="c_sb")
        with c3:
            pm = state.model_picker("Model", "c_m", "m", default_a, names)
        for t in (ta_text, tb_text):
            state.link_limit_note(t)
        url = dict(mode=mode, s1=ta_text, s2=tb_text, m=state.url_model(pm, names))
        picks = [pm, pm]
        stages = [[], []]  # the model as it is: no stages of training on this page's second mode
        texts = [ta_text or "", tb_text or ""]

    state.init_widget("c_norm", "norm", True, parse=state.parse_bool)
    state.init_widget("c_view", "view", "side", valid=lambda v: v in VIEWS)
    with st.sidebar:
        st.subheader("View")
        state.init_widget("c_hide", "hide", True, parse=state.parse_bool)
        hide = st.toggle("Leave out [CLS] and [SEP]", key="c_hide")
        state.init_widget("c_labels", "labels", "auto", valid=lambda v: v in ("auto", "all", "none"))
        labels = st.radio("Labels", ["auto", "all", "none"], key="c_labels", horizontal=True)
        state.init_widget("c_trail", "trail", 3, parse=int, valid=lambda v: 0 <= v <= 40)
        trail = st.slider("Trail (sub-steps)", 0, 40, key="c_trail")
    normalised = st.session_state["c_norm"]
    view = st.session_state["c_view"] if mode == "models" else "side"
    url.update(norm=normalised, hide=hide, labels=labels, trail=trail, view=view)
    return mode, picks, stages, texts, url, view, dict(hide=hide, labels=labels, trail=trail, normalised=normalised)


def trace(mode, picks, stages, texts, url, view, hide, labels, trail, normalised):
    """The models loaded and the two trajectories traced and projected; None where one is missing."""
    text = texts[0]
    if any(p is None for p in picks):
        state.sync_url(url)
        return None
    models = [cache.try_load(p[1]) for p in picks[:1 if mode == "sentences" else 2]]
    if any(m is None for m in models):
        state.sync_url(url)
        return None
    trajs = []
    for p, t in zip(picks, texts):
        trajs.append(cache.trace(p[1], t, p[0]))
        if trajs[-1] is None:
            state.sync_url(url)
            return None
    ta, tb = trajs
    if mode == "models":
        names_ab = [f"A: {picks[0][0]}", f"B: {picks[1][0]}"]
        colors = plot.model_colors([t.meta.get("scheme", "") for t in trajs])  # each model in its scheme's colour
        if stages[0] == stages[1]:  # one model (at two stages, say): one PCA of every stage for both panels
            frames = [cache.stage_frame(stages[0], p[1], text, 2, normalised, hide) for p in picks]
        else:
            frames = [(cache.project(p[1], t, 2, normalised, hide), None) for p, t in zip(picks, texts)]
        projs = [proj for proj, _ in frames]
        share = all(shared for _, shared in frames)
    else:
        names_ab = ["sentence A", "sentence B"]
        projs = cache.project_together(picks[0][1], texts[0], texts[1], normalised, hide)
        colors = None  # one model: the two lines are told apart by dash and marker, in greys
        share = True
    same_tokens = mode == "models" and analysis.same_tokens(ta, tb)
    if view == "overlay" and not same_tokens:
        view = url["view"] = "side"
    return models, trajs, names_ab, colors, projs, share, same_tokens, view


def animation(mode, picks, stages, texts, url, trajs, names_ab, colors, projs, share, view, spec, found, hide, labels,
              trail, normalised):
    """The figure on one layer clock and its two switches: the two runs, or with What if… both altered over their
    runs as trained (side by side)."""
    ta, tb = trajs
    # The layer-time slider is the figure's own: both panels (or the overlay) are frames of one
    # Plotly figure on the union of the two time grids, so Play and the slider drive everything that
    # depends on the time. The URL's t is the frame it opens at.
    grid = [float(t) for t in analysis.time_grid(ta, tb)]
    state.init_widget("c_time", "t", 0.0, parse=float, valid=lambda v: any(abs(v - g) < 1e-6 for g in grid))
    t0 = min(grid, key=lambda g: abs(g - st.session_state["c_time"]))
    size = state.figure_size(mode == "models" and any(len(s) > 1 for s in stages), "room_compare")
    if found is not None:
        fig = plot.whatif(runs(mode, picks, texts, names_ab, spec, found, normalised, hide),
                          said=panel.said(spec, list(ta.tokens)), start_time=t0, trail=trail, labels=labels,
                          colors=colors, **size)
    elif view == "overlay":
        aligned = cache.procrustes(picks[0][1], picks[1][1], texts[0], normalised, hide)
        fig = plot.overlay(aligned, ta, tb, names_ab, start_time=t0, labels=labels, **size)
    else:
        # two stages of one model: one PCA, each panel at its own scale (the shipped cloud is far smaller)
        fig = plot.compare(trajs, projs, names_ab, start_time=t0, trail=trail, labels=labels,
                           share_axes=share and mode != "models", **size)
    st.plotly_chart(fig, key="c_anim", config=dict(displaylogo=False, toImageButtonOptions=dict(scale=2)), theme=None)
    url["t"] = f"{t0:g}"
    state.sync_url(url)

    v1, v2 = st.columns(2)
    v1.segmented_control("Show the states", list(STATES), key="c_norm", format_func=STATES.get, required=True,
                         label_visibility="collapsed")
    if mode == "models":
        v2.segmented_control("Panels", list(VIEWS), key="c_view", format_func=VIEWS.get, required=True,
                             label_visibility="collapsed", disabled=ta.tokens != tb.tokens or found is not None)
    return fig


def runs(mode, picks, texts, names_ab, spec, found, normalised, hide) -> list[Run]:
    """The two altered runs over theirs as trained: two models each in its own PCA (their coordinates are
    unrelated), two sentences of one model in one."""
    keys = [(p[1], t, None) for p, t in zip(picks, texts)]
    if mode == "models":
        projs = [p for k in keys for p in cache.what_if_projection((k,), spec, normalised, hide)]
    else:
        projs = cache.what_if_projection(tuple(keys), spec, normalised, hide)
    return [Run(plain, alt, projs[2 * c], projs[2 * c + 1], effect, name)
            for c, ((plain, alt, effect), name) in enumerate(zip(found, names_ab))]


def described(mode, stages, models, share, same_tokens, view, altered: bool, normalised: bool) -> None:
    """What the figure shows: its frames, the models."""
    if altered:
        st.caption("Each panel: its run with the change (particles) over its run as trained (hollow grey ghosts at "
                   "the end of their faint paths), " + ("each model in its own PCA of both its runs"
                                                        if mode == "models" else "one PCA of all four runs")
                   + "; beside them each particle's distance from its own path over depth, the two runs' in their "
                     "colours." + (" Overlaid after Procrustes returns without What if…" if view == "overlay" else ""))
    elif view == "overlay":
        st.caption("A's particles (dots) and B's (open diamonds) in A's PCA frame: B's states rotated by one "
                   "orthogonal matrix for all layers, then shifted and scaled onto A's cloud at the same time. Grey "
                   "lines join the same token.")
    elif share and mode == "models":
        st.caption(f"One model at two stages of its training: one PCA fitted on the sentence's states at all "
                   f"{len(stages[0])} stages draws both panels: the same directions, each panel at its own scale.")
    elif share:
        st.caption("One PCA fitted on both sentences' states: the two panels share their axes.")
    else:
        st.caption("Each panel has its own PCA (two models have unrelated coordinates); for one common frame, "
                   "choose *Overlaid after Procrustes*. States: " + (
                       "the raw residual stream." if not normalised else
                       "each token standardised; a post-LN model's operators read the raw state, a LayerNorm's "
                       "output, and this sets aside its gain and bias." if any(m.config.norm == "post" for m in models)
                       else "each token standardised, what LayerNorm hands to the next operator."))
    if mode == "models":
        st.caption(f"**A** {state.model_label(models[0])} · **B** {state.model_label(models[1])}")
        if not same_tokens:
            st.warning("The two models split the sentence into different tokens (different tokenizers), so "
                       "particles cannot be matched one to one: no overlay, no CKA.", icon=":material/warning:")
    else:
        st.caption(f"**{state.model_label(models[0])}**")
    st.markdown(state.SCHEMES_SAID)


def how_alike(picks, texts, trajs, names_ab, normalised, hide) -> None:
    """How alike: Procrustes residual by layer, CKA."""
    ta, tb = trajs
    st.subheader("How alike are the two clouds?")
    aligned = cache.procrustes(picks[0][1], picks[1][1], texts[0], normalised, hide)
    b1, b2 = st.columns(2)
    with b1:
        st.metric("Procrustes residual, all layers", f"{aligned.residual:.3f}",
                  help="1 − (Σσ)², after centring each layer's cloud and scaling it to unit size: 0 = the same "
                       "shape up to one rotation and a scale; larger = less alike (unrelated clouds need not "
                       "reach 1).")
        st.plotly_chart(plot.lines_over_depth([("residual", aligned.layer_times, aligned.layer_residuals)],
                                              "Procrustes residual", height=300, yrange=(0, 1.02)),
                        key="c_per_layer", config=dict(displaylogo=False), theme=None)
        state.explain("At each layer boundary (t = 0 is the embedding), with the one rotation: 0 = the same "
                      "shape, larger = less alike. Every cloud is scaled to unit size first, so the small embedding "
                      "counts like the rest.")
    with b2:
        st.markdown("**Linear CKA between every state of A and of B**")
        m = analysis.cka(ta, tb, normalised, hide)
        st.plotly_chart(plot.cka(m, ta, tb, names_ab[0], names_ab[1], height=380), key="c_cka",
                        config=dict(displaylogo=False), theme=None)
        state.explain("1 = the same geometry up to rotation and scale. A bright diagonal means both models "
                      "pass through similar configurations at the same depth.")



def over_depth(mode, trajs, names_ab, colors, projs, url, normalised) -> None:
    """Measures over depth: alignment, clusters or one word in two contexts, and the moves."""
    ta, tb = trajs
    keeps = [p.keep for p in projs]
    kept = [analysis.kept_states(t, normalised, k) for t, k in zip(trajs, keeps)]
    st.subheader("Over depth")
    b1, b2 = st.columns(2)
    with b1:
        st.markdown("**Mean pairwise cosine similarity**")
        series = [(n, t.times, analysis.mean_pairwise_cosine(x)) for n, t, x in zip(names_ab, trajs, kept)]
        st.plotly_chart(plot.lines_over_depth(series, "mean cos(xᵢ, xⱼ)", colors=colors), key="c_cos",
                        config=dict(displaylogo=False), theme=None)
        state.explain("How aligned the particles are with each other; rising towards 1, they gather into a cluster "
                      "(at 1 every particle points the same way). Each model in its scheme's colour.")
    with b2:
        if mode == "sentences":
            shared = sorted({t for t in ta.tokens if t in tb.tokens and t not in analysis.SPECIAL_TOKENS})
            st.markdown("**One word in two contexts**")
            if not shared:
                st.info("The two sentences share no token to follow.", icon=":material/info:")
            else:
                state.init_widget("c_word", "word", "bank" if "bank" in shared else shared[0],
                                  valid=lambda v: v in shared)
                if st.session_state["c_word"] not in shared:
                    st.session_state["c_word"] = shared[0]
                word = st.selectbox("Token in both sentences", shared, key="c_word")
                url["word"] = word
                state.sync_url(url)
                i, j = ta.tokens.index(word), tb.tokens.index(word)
                times, cos = analysis.token_similarity_over_depth(ta.states, i, tb.states, j, ta.times, tb.times)
                st.plotly_chart(plot.lines_over_depth([(f"cos(“{word}” in A, “{word}” in B)", times, cos)],
                                                      "cosine similarity", yrange=(min(0.0, cos.min() - 0.05), 1.02)),
                                key="c_word_fig", config=dict(displaylogo=False), theme=None)
                state.explain("The same token starts from the same embedding (up to its position). Only attention "
                              "reads "
                              "the other words: the FFN acts on each copy alone, so it can only carry on a "
                              "difference that attention (or the position) made.")
        else:
            st.markdown("**Cosine clusters**")
            state.init_widget("c_thr", "thr", 0.15, parse=float, valid=lambda v: 0.01 <= v <= 1.0)
            thr = st.slider("Cosine distance threshold", 0.01, 1.0, step=0.01, key="c_thr")
            url["thr"] = f"{thr:g}"
            state.sync_url(url)
            series = [(n, t.times, analysis.clusters_over_depth(x, thr)) for n, t, x in zip(names_ab, trajs, kept)]
            st.plotly_chart(plot.lines_over_depth(series, "number of clusters", colors=colors), key="c_clusters",
                            config=dict(displaylogo=False), theme=None)
            state.explain("Particles grouped by average-linkage clustering on cosine distance; fewer clusters = the "
                          "particles have gathered.")

    st.markdown("**Displacement per sub-step** (one ‖Δx‖ scale for both)")
    st.plotly_chart(plot.displacement(trajs, names_ab, keeps, normalised=normalised), key="c_disp",
                    config=dict(displaylogo=False), theme=None)
    state.explain(state.RHYTHM_SAID + (" Moves of the states as the operators read them." if normalised else
                                       " Moves in the raw residual stream."))


def export(fig, trajs, altered: bool = False) -> None:
    """The view's link, and the animation and both trajectories (with What if…, the altered runs) as files."""
    ta, tb = trajs
    end = "-whatif" if altered else ""
    st.subheader("Share and export")
    st.caption("The address bar holds this view (What if… too): copy it to share. The camera icon above the animation "
               "saves the frame on screen as a PNG." + (" The files hold the altered runs, what was done in each "
                                                        "trajectory's meta." if altered else ""))
    e1, e2, e3 = st.columns(3)
    e1.download_button("Animation (HTML)", data=lambda: plot.to_html(fig, "Macaron Explorer · compare"),
                       file_name=f"compare{end}.html", mime="text/html", on_click="ignore", icon=":material/movie:")
    e2.download_button("Trajectory A (JSON)", data=ta.to_json, file_name=f"trajectory-A{end}.json",
                       mime="application/json", on_click="ignore", icon=":material/data_object:")
    e3.download_button("Trajectory B (JSON)", data=tb.to_json, file_name=f"trajectory-B{end}.json",
                       mime="application/json", on_click="ignore", icon=":material/data_object:")


render()
