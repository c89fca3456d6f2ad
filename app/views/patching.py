"""Patching: which particle, at which depth, carries what decides the model's answer (activation patching as a map)."""
from __future__ import annotations

import csv
import io

import streamlit as st

import explorer_cache as cache
import explorer_state as state
import patching_cache as pcache
from macaron import InputError
from macaron.plot import patching as P
from macaron.plot.style import display_token

PAIRS, DEFAULT = pcache.PAIRS, pcache.PAIRS["she / he"]
KEYS = ("pt_clean", "pt_corrupt", "pt_good", "pt_bad")  # the widgets a pair fills, in PAIRS' order

state.header("Patching: which particle carries the answer, and at which depth",
             "Two sentences of one length, a word or two apart, that the model answers differently. It reads the "
             "**corrupted** one, but one particle, at one depth, is given its state from the **clean** one, and the "
             "run goes on from there. Each cell says how much of the clean answer that one patch brings back: "
             "**1** all of it, **0** none (activation patching, TransformerLens's `get_act_patch_resid_pre`).")


def render() -> None:
    chosen = inputs()
    if chosen is None:
        return
    picked, model, clean, corrupted, good, bad = chosen
    pair = traced(picked, model, clean, corrupted)
    if pair is None:
        return
    a, b = pair
    guesses(model, a, b)
    if not good or not bad:
        st.info("Type the two words whose logits the map compares: the clean sentence's answer and the corrupted "
                "one's.", icon=":material/edit_note:")
        return
    try:
        pm = pcache.patching(picked[1], clean, corrupted, good, bad)
    except InputError as e:  # a word not in the vocabulary, two runs with the same answer
        st.warning(str(e), icon=":material/edit_note:")
        return
    except Exception as e:  # never a traceback on the page
        st.error(f"The patching map could not be computed: {e}", icon=":material/error:")
        return
    st.plotly_chart(P.patching_map(pm, b.tokens, good, bad), key="pt_map", theme=None,
                    config=dict(displaylogo=False))
    said(pm, model, good, bad)
    st.download_button("The map (CSV)", data=lambda: csv_text(pm), file_name="patching_map.csv", mime="text/csv",
                       on_click="ignore", icon=":material/table:")
    st.caption("The translators are not on offer here; the library's patching_map patches a translator's source "
               "particles and reads its next word after a prefix (docs: the Patching page).")


def inputs():
    """The model and its stage, the sentence pair and the two words; the URL follows. (picked, model, clean,
    corrupted, good word, bad word), or None where there is no model to run."""
    names, default_model, _ = state.models_on_offer()
    state.init_widget("pt_clean", "clean", DEFAULT[0])  # written out: docs/hooks.py lists the URL's parameters
    state.init_widget("pt_corrupt", "corrupt", DEFAULT[1])
    state.init_widget("pt_good", "good", DEFAULT[2])
    state.init_widget("pt_bad", "bad", DEFAULT[3])
    left, right = st.columns([3, 2])
    with left:
        picked = state.model_picker("Model", "pt_model", "m", default_model, names)
    with right:
        pair_picker()
    url_m = state.url_model(picked, names)
    (picked,), stage = state.stage_picker("pt_stage", "at", [picked], [cache.stages(picked[1]) if picked else []])
    one, one_word, two, two_word = st.columns([3.6, 1.7, 3.6, 1.7])
    clean = one.text_input("Clean sentence", key="pt_clean", help="Write [MASK] where an encoder should answer; a "
                           "decoder answers the word after the sentence (or where [MASK] is typed).")
    good = one_word.text_input("Clean word", key="pt_good", help="The clean answer's word, as the model's "
                               "vocabulary spells it (its top guesses are listed below).").strip()
    corrupted = two.text_input("Corrupted sentence", key="pt_corrupt",
                               help="As many tokens as the clean sentence, with its answer at the same place.")
    bad = two_word.text_input("Corrupted word", key="pt_bad", help="The corrupted answer's word: the metric is the "
                              "logit of the clean answer's word minus this word's.").strip()
    state.sync_url(dict(m=url_m, at=stage, clean=clean, corrupt=corrupted, good=good, bad=bad))
    model = cache.try_load(picked[1]) if picked else None
    if model is None:
        return None
    if not model.has_head:
        st.warning(f"**{picked[0]}** has no head that reads its states as words (its checkpoint did not ship "
                   "one): the map compares two words' logits, so it needs one.", icon=":material/info:")
        return None
    return picked, model, clean, corrupted, good, bad


def pair_picker() -> None:
    """A menu of measured pairs that fills both sentence boxes and both words."""
    def apply():
        choice = st.session_state["pt_pair"]
        if choice in PAIRS:
            for key, value in zip(KEYS, PAIRS[choice]):
                st.session_state[key] = value
        st.session_state["pt_pair"] = "(choose one)"  # a menu, not a state: the boxes hold the pair

    st.selectbox("Sentence pairs", ["(choose one)"] + list(PAIRS), key="pt_pair", on_change=apply,
                 label_visibility=state.LABELS[state.presenting()],
                 help="Pairs whose answers part on the shipped models: she or he, they or he, were or was.")


def traced(picked, model, clean: str, corrupted: str):
    """Both sentences traced (cached) and checked to pair up: (clean, corrupted) trajectories, or None after a
    message that says what to change."""
    a, b = (cache.trace(picked[1], text, picked[0]) for text in (clean, corrupted))
    if a is None or b is None:
        return None  # the sentence box's message is on the page
    cut = next((t for t in (a, b) if t.truncated), None)
    if cut is not None:
        st.warning(f"The map patches whole sentences, and this one was cut to its first {len(cut.tokens)} tokens: "
                   "shorten it.", icon=":material/content_cut:")
        return None
    if len(a.tokens) != len(b.tokens):
        st.warning(f"The two sentences read as {len(a.tokens)} and {len(b.tokens)} tokens: a patch puts a particle's "
                   "state in the same place of the other sentence, so they need as many. Change a word so that "
                   "they match.", icon=":material/straighten:")
        st.markdown("\n".join(f"- **{what}**: " + " · ".join(code(t) for t in traj.tokens)
                              for what, traj in (("clean", a), ("corrupted", b))))
        return None
    if a.guess_at is None:
        where = "type [MASK] after a word" if model.config.causal else "write [MASK] where it should answer"
        st.warning(f"The model has no answer to read in the clean sentence: {where}.", icon=":material/edit_note:")
        return None
    if b.guess_at != a.guess_at:
        st.warning(f"The model answers at token {a.guess_at} of the clean sentence and at token {b.guess_at} of the "
                   "corrupted one: put [MASK] at the same place in both.", icon=":material/edit_note:")
        return None
    return a, b


def code(token: str) -> str:
    """A token as Markdown shows it literally: a code span."""
    return f"`{display_token(token).replace('`', '')}`"


def guesses(model, a, b) -> None:
    """The model's top words where it answers, on each sentence: the words a person may compare."""
    at = a.guess_at
    where = "the next word" if model.config.causal else f"**{display_token(a.tokens[at])}** (token {at})"
    lines = [f"{what}: " + ", ".join(f"{display_token(w)} {p:.0%}" for w, p in model.logit_lens(traj, at, 5)[-1])
             for what, traj in (("clean", a), ("corrupted", b))]
    st.caption(f"The model's top guesses for {where}: " + " · ".join(lines))


def said(pm, model, good: str, bad: str) -> None:
    """What the map shows, in words, with this map's numbers."""
    answer = display_token(pm.tokens[pm.position])
    st.caption(f"**Metric**: logit({good}) − logit({bad}) where the model answers ({answer}, token {pm.position}, "
               f"outlined): **{pm.clean:+.2f}** on the clean sentence, **{pm.corrupted:+.2f}** on the corrupted one. "
               "A cell is (patched − corrupted) ÷ (clean − corrupted): 1 is the clean run's value, 0 the corrupted "
               "run's, below 0 further from the clean answer than the corrupted run, above 1 past the clean run's. "
               "Rows: the state replaced, the one entering each layer and, last, the one after the last layer. "
               "Hover a cell for its logit difference.")
    rows = P.row_labels(pm)
    found = [f"{row}: {display_token(pm.tokens[t])} ({v:.2f})" for row, (t, v) in zip(rows, P.strongest(pm))]
    own = pm.restored[:, pm.position]
    first = next((rows[k] for k, v in enumerate(own) if v > 0.5), None)
    st.markdown("**On this pair**, the particle whose patch restores most, row by row: " + " · ".join(found) + ". "
                + (f"Patched {first}, the answer's own particle first restores more than half of the clean answer."
                   if first else "The answer's own particle never restores more than half of it."))
    with st.expander("Why some cells are 0 whatever the model"):
        st.markdown(
            "- **The top row** patches the embedding. A word that is the same, at the same place, in both sentences "
            "has the same embedding in both, so its patch changes nothing: 0. Only the words that differ can "
            "restore anything there; where one token alone differs, its patch there makes the corrupted run the "
            "clean one: 1.\n"
            "- **The bottom row** patches the states the head reads. The head reads the answer's own particle "
            "alone, so its patch restores all of the clean answer (1) and every other particle's nothing (0).\n"
            + ("- **A decoder's particles after the answer's** are read by no particle before them (each reads only "
               "those before it), so their columns are 0.\n" if model.config.causal else "")
            + f"\nThe map runs the corrupted sentence {pm.restored.size:,} times ({len(rows)} rows × "
            f"{len(pm.tokens)} particles), batched.")


def csv_text(pm) -> str:
    """The map as a table: one row per cell (the state's index, its row's name, the particle, the share restored)."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["state", "row", "token_index", "token", "restored"])
    for r, (s, row) in enumerate(zip(pm.states, P.row_labels(pm))):
        for t, tok in enumerate(pm.tokens):
            w.writerow([s, row, t, tok, f"{pm.restored[r, t]:.6g}"])
    return out.getvalue()


render()
