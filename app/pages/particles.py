"""Particles: one model, one sentence. Watch the tokens move, sub-step by sub-step."""
from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

if str(Path(__file__).resolve().parents[2]) not in sys.path:  # run without app/main.py (see common.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app import analysis as an  # noqa: E402
from app import common as cm  # noqa: E402
from app import figures as fg  # noqa: E402

cm.leave_legacy_pages_mode()

st.title("Particles: one sentence, one model")
st.markdown("Every token is a **particle**; every layer is one **time step**. Attention is **diffusion** "
            "(particles move because of each other), the feed-forward network is **convection** (each particle "
            "moves on its own). Type a sentence and press **Enter**, then press **▶ Play** under the plot.")


def render() -> None:
    names = list(cm.model_paths())
    default_model, _ = cm.default_pair(names)
    if not names:
        cm.no_models_message()

    # ---- inputs --------------------------------------------------------------------------------------
    cm.init_widget("p_text", "s", cm.DEFAULT_SENTENCE)
    c1, c2, c3 = st.columns([5, 2, 3])
    with c1:
        text = st.text_input("Sentence", key="p_text", placeholder="Type a sentence and press Enter",
                             help="Write [MASK] where the model should guess a word.")
    with c2:
        cm.preset_picker("p_text", "p_preset")
    with c3:
        picked = cm.model_picker("Model", "p_model", "m", default_model, names)

    words = (text or "").split()
    mask_options = [-1] + list(range(len(words)))  # -1: no word masked (None would read "Choose an option")
    cm.init_widget("p_mask", "mask", -1, parse=int, valid=lambda v: -1 <= v < len(words))
    if st.session_state["p_mask"] not in mask_options:
        st.session_state["p_mask"] = -1

    with st.sidebar:
        st.subheader("View")
        cm.init_widget("p_dim", "dim", "2D", valid=lambda v: v in ("2D", "3D"))
        dim = st.radio("Projection", ["2D", "3D"], key="p_dim", horizontal=True,
                       help="PCA fitted once on all states of the trajectory: one fixed frame for the whole animation.")
        cm.init_widget("p_norm", "norm", False, parse=cm.parse_bool)
        normalised = st.toggle("Normalised states", key="p_norm",
                               help="Off: the raw residual stream. On: each token standardised (LayerNorm without its "
                                    "weights), which is what the next operator reads.")
        cm.init_widget("p_hide", "hide", True, parse=cm.parse_bool)
        hide_special = st.toggle("Leave out [CLS] and [SEP]", key="p_hide",
                                 help="They often sit far from the words and squeeze the plot.")
        cm.init_widget("p_labels", "labels", "auto", valid=lambda v: v in ("auto", "all", "none"))
        label_mode = st.radio("Labels", ["auto", "all", "none"], key="p_labels", horizontal=True,
                              help="auto: as many labels as fit without overlapping (hover names every particle).")
        cm.init_widget("p_trail", "trail", 4, parse=int, valid=lambda v: 0 <= v <= 40)
        trail = st.slider("Trail (sub-steps)", 0, 40, key="p_trail")
        st.selectbox("Mask a word", mask_options, key="p_mask",
                     format_func=lambda i: "(none)" if i < 0 else f"{i + 1}: {words[i]}",
                     help="Replace one word with [MASK] and see what the model guesses at every sub-step.")

    sent = cm.mask_word(text or "", st.session_state["p_mask"])
    model = cm.try_load(picked[1]) if picked else None
    tr = cm.trace(picked[1], sent, picked[0]) if model is not None else None
    url = dict(s=text, m=(picked[0] if picked and picked[0] in names else (picked[1] if picked else None)),
               mask=st.session_state["p_mask"] if st.session_state["p_mask"] >= 0 else None, dim=dim, norm=normalised, hide=hide_special, labels=label_mode,
               trail=trail)
    if tr is None:
        cm.sync_url(url)
        return

    traj = tr.traj
    cm.report_truncation(tr)
    if any(t.startswith("[UNK") for t in traj.tokens):
        st.info("Some characters are outside this model's vocabulary and show as [UNK:…] particles.",
                icon=":material/help:")
    st.caption(f"**{cm.model_label(model)}** · {len(traj.tokens)} particles · {traj.n_steps} sub-steps")

    k = 3 if dim == "3D" else 2
    proj, keep = cm.project(picked[1], sent, k, normalised, hide_special)
    S = len(traj.labels)

    # ---- the animation -----------------------------------------------------------------------------
    cm.init_widget("p_frame", "frame", 0, parse=int, valid=lambda v: 0 <= v < S)
    if st.session_state["p_frame"] >= S:
        st.session_state["p_frame"] = S - 1
    frame = st.session_state["p_frame"]

    fig = fg.particles_animation(traj, proj, keep, start=frame, trail=trail, labels=label_mode)
    st.plotly_chart(fig, key="p_anim", config=dict(displaylogo=False))  # full width: projector-friendly
    left, right = st.columns([3, 2])
    with left:
        pcs = f"PC1 and PC2 explain **{proj.explained[:2].sum():.0%}**" + (
            "" if k == 2 else f", PC3 **{proj.explained[2]:.0%}**")
        st.markdown(
            f"**What you see.** Each dot is a token, placed by a PCA fitted on **all** its states ({pcs} of the "
            "variance). The frame never moves, so motion is real motion; the title names the sub-step just taken. "
            f"Arrows show that last move: <span style='color:{fg.DIFFUSION_COLOR}'>**blue = diffusion**</span> "
            f"(attention), <span style='color:{fg.CONVECTION_COLOR}'>**vermillion = convection**</span> (FFN). "
            "Hover a dot for its token.", unsafe_allow_html=True)
        cm.explain("F = diffusion (attention: particles interact), G = convection (FFN: each particle alone). "
                   "One sub-step: x ← x + h·op(LN(x)) (pre-LN) or x ← LN(x + h·op(x)) (post-LN, BERT).")
    with right:
        st.markdown("**Transformer layer = Lie–Trotter step**, local error $O(\\gamma^2)$")
        st.latex(r"x \leftarrow \Phi_G(\gamma)\,\Phi_F(\gamma)\,x")
        st.markdown("**Macaron layer = Strang–Marchuk step**, local error $O(\\gamma^3)$")
        st.latex(r"x \leftarrow \Phi_G(\tfrac{\gamma}{2})\,\Phi_F(\gamma)\,\Phi_G(\tfrac{\gamma}{2})\,x")

    # ---- one sub-step in detail ------------------------------------------------------------------------
    st.subheader("Inspect one sub-step")
    st.select_slider("Sub-step (also the animation's first frame and part of the shared link)", list(range(S)),
                     key="p_frame", format_func=lambda i: f"{i}: {traj.labels[i]}")
    frame = st.session_state["p_frame"]
    url["frame"] = frame
    cm.sync_url(url)

    diff = fg.diffusion_steps(traj)
    if not diff:
        st.info("This model records no mixing matrices.", icon=":material/info:")
    else:
        # the diffusion sub-step that produced this state, or the last one before it (or the first one)
        before = [s for s in diff if s + 1 <= max(frame, 1)]
        step = before[-1] if before else diff[0]
        kind_now = traj.steps[frame - 1].kind if frame > 0 else None
        if kind_now != "diffusion":
            st.caption(f"State {frame} was not reached by a diffusion sub-step; showing the nearest one: "
                       f"**{traj.steps[step].label}**.")
        H = traj.mixing[step].shape[0]
        cm.init_widget("p_head", "head", "mean", valid=lambda v: v == "mean" or (v.isdigit() and 1 <= int(v) <= H))
        if st.session_state["p_head"] != "mean" and int(st.session_state["p_head"]) > H:
            st.session_state["p_head"] = "mean"
        head_sel = st.radio("Heads", ["mean"] + [str(h + 1) for h in range(H)], key="p_head", horizontal=True,
                            help="The mixing matrix averaged over heads, or one head.")
        url["head"] = head_sel
        cm.sync_url(url)
        head = None if head_sel == "mean" else int(head_sel) - 1
        a, b = st.columns(2)
        with a:
            st.plotly_chart(fg.mixing_heatmap(traj, step, head), key="p_heat", config=dict(displaylogo=False))
            cm.explain("Who pulls whom: row *i* is how particle *i* spreads its attention; it moves towards the "
                       "weighted mean of the others' values. Each row sums to 1.")
        with b:
            if k == 2:
                st.plotly_chart(fg.mixing_edges(traj, proj, keep, step, head), key="p_edges",
                                config=dict(displaylogo=False))
            else:
                st.plotly_chart(fg.mixing_edges(traj, an.Projection(proj.coords[..., :2], proj.explained[:2],
                                                                    proj.components[:2], proj.mean), keep, step, head),
                                key="p_edges", config=dict(displaylogo=False))
            cm.explain("Edges from each particle to the two it listens to most (thicker = stronger), drawn at the "
                       "positions before the sub-step; dotted arrows show where each particle went.")

    # ---- rhythm -----------------------------------------------------------------------------------------
    st.subheader("The rhythm of a layer: how far particles move in each sub-step")
    st.plotly_chart(fg.displacement_figure([traj], [traj.meta.get("model", "")], [keep]), key="p_disp",
                    config=dict(displaylogo=False))
    cm.explain("Bars: mean ‖Δx‖ over particles, each spanning its share of layer time (Transformer: ½ + ½; "
               "Macaron: ¼ + ½ + ¼). Grey dots: single particles. Diffusion and convection alternate.")
    with st.expander("Per particle (heatmap)"):
        st.plotly_chart(fg.displacement_heatmap(traj, keep), key="p_dispmap", config=dict(displaylogo=False))

    # ---- logit lens -----------------------------------------------------------------------------------
    st.subheader("What would the model guess, sub-step by sub-step? (logit lens)")
    mask_positions = [i for i, t in enumerate(traj.tokens) if t == an.MASK_TOKEN]
    if not model.has_mlm_head:
        st.info("This model has no masked-language-model head, so it cannot guess words.", icon=":material/info:")
    elif not mask_positions:
        st.info("Add **[MASK]** to the sentence (or pick *Mask a word* in the sidebar) to see the model's guesses.",
                icon=":material/lightbulb:")
    else:
        pos = mask_positions[0]
        guesses = model.logit_lens(traj, pos, k=5)
        final = ", ".join(f"`{w.replace('`', '')}` {p:.0%}" for w, p in guesses[-1][:3])
        st.markdown(f"Final guesses for [MASK] (token {pos}): {final}")
        st.plotly_chart(fg.logit_lens_figure(guesses, traj), key="p_lens", config=dict(displaylogo=False))
        cm.explain("The model's own output head read off every intermediate state (◆ after diffusion, ● after "
                   "convection). Watch when the right answer appears.")

    # ---- attribution ----------------------------------------------------------------------------------
    st.subheader("Which words mattered? (integrated gradients)")
    cm.init_widget("p_attr", "attr", False, parse=cm.parse_bool)
    do_attr = st.toggle("Compute attribution (Captum: a few dozen forward and backward passes)", key="p_attr",
                        help="Integrated gradients run the model 24 times with gradients: about a second on a "
                             "laptop CPU for a 6×512 model, so it waits for you.")
    url["attr"] = do_attr
    cm.sync_url(url)
    if do_attr:
        target_pos = mask_positions[0] if (mask_positions and model.has_mlm_head) else None
        if target_pos is None:
            choices = list(range(len(traj.tokens)))
            target_pos = st.selectbox("Explain the final state norm of token", choices, key="p_attr_tok",
                                      index=min(1, len(choices) - 1), format_func=lambda i: f"{i}: {traj.tokens[i]}")

        try:
            att = cm.attribution(picked[1], sent, target_pos)
            st.markdown(fg.attribution_html(traj.tokens, att.scores), unsafe_allow_html=True)
            cm.explain(f"Explained: {att.target}. LayerIntegratedGradients on the token embedding, from a baseline "
                       f"where every word is [PAD]; completeness gap {att.delta:.2g}.")
        except Exception as e:  # attribution is an extra: never let it take the page down
            st.warning(f"Attribution failed: {e}", icon=":material/warning:")

    # ---- export ---------------------------------------------------------------------------------------
    st.subheader("Share and export")
    st.caption("The address bar holds this view (sentence, model, options, sub-step): copy it to share.")
    e1, e2, e3 = st.columns(3)
    stem = f"{traj.meta.get('model', 'model')}".replace("/", "_") or "trajectory"
    e1.download_button("Animation (HTML, works offline)", data=lambda: fg.to_html(fig, f"Macaron Explorer · {stem}"),
                       file_name=f"{stem}-particles.html", mime="text/html", on_click="ignore",
                       icon=":material/movie:")
    e2.download_button("Trajectory (CSV)", data=traj.to_csv, file_name=f"{stem}-trajectory.csv", mime="text/csv",
                       on_click="ignore", icon=":material/table:")
    e3.download_button("Trajectory (JSON)", data=traj.to_json, file_name=f"{stem}-trajectory.json",
                       mime="application/json", on_click="ignore", icon=":material/data_object:")


render()
