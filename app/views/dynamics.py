"""Dynamics: do trained Transformers behave like particle systems? Two models on one sentence set."""
from __future__ import annotations

import csv
import io

import streamlit as st

import dynamics_cache as dcache
import explorer_cache as cache
import explorer_state as state
from macaron import sentences
from macaron.plot import dynamics as P
from macaron.studies import dynamics

VIEWS = {"set": "The whole sentence set", "one": "One sentence"}
EXPERIMENT_SIZES = (16, 32, 64, 128, 0)  # 0: every sentence of the set

state.header("Dynamics: do trained Transformers behave like particle systems?",
             "The mathematics of self-attention as interacting particles (idealised: pure attention, the same "
             "weights at every layer, long times) predicts that tokens gather into clusters, a few leaders draw "
             "the attention and the token cloud loses rank with depth. Each chart "
             "measures one prediction on two trained models, over a whole sentence set (the median, with a band "
             "over the middle half of the sentences) or on one sentence.")


def chart(key: str, fig, where=st) -> None:
    """A figure under its title, with its one-sentence explanation and the paper it tests."""
    title, text, paper = P.CHARTS[key]
    where.markdown(f"**{title}**")
    where.plotly_chart(fig, key=f"d_{key}", config=dict(displaylogo=False), theme=None)  # our fonts and greys
    where.caption(f"{text} *{paper}.*")


def csv_text(rows: list[dict]) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def render() -> None:
    picks, view, set_name, text, run_exp, n_exp = inputs()
    measured = measure(picks, set_name, text)
    if measured is None:
        return
    models, sents, labels, sets = measured
    token_cloud(sets, labels)
    attention(sets, labels)
    ode_experiments(picks, models, sents, labels, view, run_exp, n_exp)
    st.download_button("Every measure (CSV)", data=lambda: csv_text([r for s in sets for r in s.rows()]),
                       file_name="dynamics.csv", mime="text/csv", on_click="ignore", icon=":material/table:")


def inputs():
    """Two models, the sentence set or one sentence, and the ODE experiments' switch in the sidebar."""
    names, default_a, default_b = state.models_on_offer()
    pair, choice = st.columns([3, 2])
    with pair:
        picks = state.model_pair(("Model A", "Model B"), ("d_a", "d_b"), names, (default_a, default_b))
    state.init_widget("d_view", "view", "set", valid=lambda v: v in VIEWS)
    state.init_widget("d_set", "set", sentences.ALL, valid=lambda v: v in sentences.names())
    with choice:
        view = st.radio("Measure", list(VIEWS), key="d_view", format_func=VIEWS.get, horizontal=True)
        if view == "set":
            set_name = st.selectbox("Sentence set", sentences.names(), key="d_set",
                                    format_func=lambda n: f"{n} ({len(sentences.read(n))} sentences)",
                                    label_visibility="collapsed",
                                    help="Written for this project: everyday sentences and sentences from computing, "
                                         "science and engineering (macaron/sentences/).")
    url = dict(a=state.url_model(picks[0], names), b=state.url_model(picks[1], names), view=view)
    picks, url["at"] = state.stage_picker("d_stage", "at", picks, [cache.stages(p[1]) if p else [] for p in picks])
    if view == "set":
        text, url["set"] = None, set_name
    else:
        set_name = ""
        text, _ = state.sentence_input("d_text", "d_preset")
        url["s"] = text

    with st.sidebar:
        st.subheader("ODE experiments")
        state.init_widget("d_exp", "exp", False, parse=state.parse_bool)
        run_exp = st.toggle("Run the ODE experiments", key="d_exp",
                            help="Rerun each model's own weights in other orders, with smaller steps and for more "
                                 "layers: the work of about 25 forward passes per sentence and model, so seconds "
                                 "to minutes on a CPU as the sentences grow in number.")
        n_exp = 0
        if view == "set":
            state.init_widget("d_n", "n", 32, parse=int, valid=lambda v: v in EXPERIMENT_SIZES)
            n_exp = st.select_slider("Sentences for the experiments", EXPERIMENT_SIZES, key="d_n",
                                     format_func=lambda n: "all" if n == 0 else str(n))
    url.update(exp=run_exp, n=n_exp if view == "set" else None)
    state.sync_url(url)
    return picks, view, set_name, text, run_exp, n_exp


def measure(picks, set_name: str, text):
    """The models loaded and measured on the sentences: (models, sentences, labels, measures), or None."""
    if any(p is None for p in picks):
        return None
    models = [cache.try_load(p[1]) for p in picks]
    if any(m is None for m in models):
        return None
    if text is not None and any(cache.trace(p[1], text, p[0]) is None for p in picks):
        return None  # the sentence box says what is wrong
    sents = dcache.texts(set_name, text)
    labels = [f"A: {picks[0][0]}", f"B: {picks[1][0]}"]
    st.caption(f"**A** {state.model_label(models[0])} · **B** {state.model_label(models[1])} · "
               + (f"{len(sents)} sentences" if text is None else "one sentence") + " · tokens measured standardised "
               "(LayerNorm without its gain and bias; a pre-LN model's operators read this, a post-LN model's "
               "read a LayerNorm's output, gain and bias included)")
    sets = [dcache.measures(p[1], sents) for p in picks]
    return models, sents, labels, sets


def token_cloud(sets, labels) -> None:
    """The token cloud over depth: clusters, rank, cosines, energy and step sizes."""
    st.subheader("The token cloud over depth")
    left, right = st.columns(2)
    chart("clusters", P.over_depth(sets, "clusters", labels), left)
    chart("rank_one", P.over_depth(sets, "rank_one", labels), right)
    chart("cosines", P.cosine_histograms(sets, labels))
    left, right = st.columns(2)
    chart("energy", P.over_depth(sets, "energy", labels), left)
    chart("step", P.over_depth(sets, "step", labels), right)


def attention(sets, labels) -> None:
    """Attention per diffusion sub-step: entropy, distance from doubly stochastic, leaders, rank."""
    st.subheader("Attention, per diffusion sub-step")
    left, right = st.columns(2)
    chart("entropy", P.attention(sets, "entropy", labels), left)
    chart("ds_gap", P.attention(sets, "ds_gap", labels), right)
    left, right = st.columns(2)
    chart("leaders", P.leaders(sets, labels), left)
    with right:
        st.markdown("**The tokens that lead most often**")
        tabs = st.tabs(labels)
        for tab, s in zip(tabs, sets):
            tab.dataframe([dict(token=r.key, leads=round(r.leads), chance=round(r.expected, 1),
                                **{"leads ÷ chance": round(r.lift, 2)}, tokens=r.occurrences)
                           for r in s.leaders.by_token[:12]], hide_index=True, height=300)
        st.caption("A leader is the token that receives the most attention of one head in one diffusion sub-step "
                   "(causal: the most for its place, ÷ what uniform attention over what each row sees would give "
                   "it); chance is how often a token drawn at random from its sentence would. "
                   "*Geshkovski et al. 2023.*")
    left, right = st.columns(2)
    chart("first_token", P.attention(sets, "first_token", labels), left)
    with right.expander("Effective rank of the attention"):
        chart("attention_rank", P.attention(sets, "attention_rank", labels))


def ode_experiments(picks, models, sents, labels, view: str, run_exp: bool, n_exp: int) -> None:
    """The trained operators rerun as an ODE solver (when switched on), and past their trained depth."""
    st.subheader("The trained operators as an ODE solver")
    if not run_exp:
        st.info("Switch on **Run the ODE experiments** in the sidebar to rerun each model's own weights in "
                "other orders, with smaller steps, and past its trained depth.", icon=":material/science:")
    else:
        exp_sents = sents if view == "one" or n_exp == 0 else sents[:n_exp]
        results = [dcache.experiments(p[1], exp_sents) for p in picks]
        chart("experiments", P.experiments(results, labels, [m.config.scheme for m in models]))
        st.caption(f"On {len(exp_sents)} sentence{'s' if len(exp_sents) > 1 else ''}, about 15 % of their words "
                   "masked. Bars: median over sentences, whiskers: quartiles. *· layers 2–L*: the first layer left "
                   "as trained (it moves a token by about its own length in a post-LN model, the small "
                   "embedding by many times its size in a pre-LN one, *Are the steps small?* above: no small step "
                   "of an ODE). *Euler moves*: a post-LN sub-step's move is split, then its LayerNorm runs once, "
                   "as trained.")
        with st.expander("The numbers"):
            for label, rs in zip(labels, results):
                st.markdown(f"**{label}**")
                st.dataframe([dict(experiment=r.name, **{"output change (median)": round(float(r.change.median), 4),
                                   "masked words unchanged": round(r.agreement_masked, 3),
                                   "all tokens unchanged": round(r.agreement, 3), "KL (nats)": round(r.kl, 4),
                                   "masked-word accuracy": round(r.accuracy_masked, 3)}) for r in rs], hide_index=True)
        extended = [dcache.extended(p[1], sents) for p in picks]
        depth = max(len(m.layers) for m in models)
        left, right = st.columns(2)
        chart("extended", P.over_depth(extended, "clusters", labels, trained_depth=depth), left)
        with right:
            st.markdown("**Interaction energy past the trained depth**")
            st.plotly_chart(P.over_depth(extended, "energy", labels, trained_depth=depth), key="d_ext_energy",
                            config=dict(displaylogo=False), theme=None)
            again = "; ".join(_past(m) for m in models)
            st.caption(f"The same runs ({again}): the energy of the token cloud, "
                       "as above, past the depth the model was trained for. *Geshkovski, Koubbi, Polyanskiy & "
                       "Rigollet 2024, "
                       "Dynamic metastability.*")


def _past(model) -> str:
    """What the run past the trained depth is, for one model."""
    k, c = dynamics.past_depth(model), model.config
    if c.shared:  # ALBERT, the ODE pair: one layer's weights at every step
        time = f"{dynamics.PAST_TIME} T = {dynamics.PAST_TIME * c.time:g}"
        return f"{c.name}: the shared layer {k} more times, to {time}: the same weights, the autonomous flow continued"
    return f"{c.name}: the last layer {k} more times"


render()
