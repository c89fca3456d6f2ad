"""Splitting lab, section 4: the race (is it Strang's order, or the split FFN?) and the same race as translators,
read from the stored runs (macaron.studies.zoo, macaron.studies.translation_race)."""
from __future__ import annotations

import streamlit as st

import explorer_state as state
from macaron import plot
from macaron.schemes import SCHEMES
from macaron.studies import translation_race as bleu_race
from macaron.studies import zoo

ANCHOR = "the-race"  # the lab's intro links here: the trained models' answer, at the page's foot


def section_race() -> None:
    st.header("4 · The race: is it the order?", anchor=ANCHOR)
    race = zoo.runs()  # a few small files: read on each run, so a newly stored run shows at once
    st.markdown(
        "Lu et al. (2019) say Macaron is better *because* Strang's splitting is of higher order. In a stack the "
        "order inside a layer acts only at the ends: six Strang layers are ½G (F ½G ½G)×5 F ½G, and six layers of "
        "**the control** (`transformer-halves-mini`), (F ½G ½G)×6, the Transformer's order with the FFN in two "
        "halves, are the same sub-layers "
        "and parameters with one half-FFN moved from first to last. Trained on the same batches, seed by seed: "
        "**Control − Strang–Marchuk** is the order alone, **Lie–Trotter − Control** (the Transformer − the control) "
        "the split FFN alone.")
    if not race:
        st.info("No race runs are stored yet (`pretrained/race/`; docs/training-notes.md says how to train them).",
                icon=":material/info:")
        return
    st.plotly_chart(plot.race_curves(race), key="l_race_curves", **state.CHART)
    state.explain("Schemes that train level draw their lines on each other (the control's dashed line can hide "
                  "Strang–Marchuk's): click a name in the legend to hide or show its line; the differences below "
                  "give each gap with its interval.")
    diffs = zoo.differences(race)
    if diffs:
        st.plotly_chart(plot.race_differences(diffs, height=110 + 60 * len(diffs)), key="l_race_diffs", **state.CHART)
        st.markdown(zoo.verdicts(diffs))
    section_gap(race)
    st.dataframe([{"scheme": SCHEMES[r.scheme].title, "seed": r.seed, "budget": zoo.millions(r.budget),
                   "tokens (M)": round(r.tokens / 1e6, 2),
                   "parameters": f"{r.parameters:,}", "held-out loss": round(r.loss, 4),
                   "accuracy": round(r.accuracy, 4), "context effect (nats)": round(r.context_effect, 3),
                   zoo.PLATEAU_COLUMN: r.plateau_step} for r in race],
                 hide_index=True, width="stretch")
    state.explain(
        "Held-out loss in nats per masked token on 512 fixed validation sequences (15 % masks); context effect: how "
        "much that loss rises when each sequence's unmasked words are shuffled. A filled diamond is the mean "
        "difference over seeds with its 95 % Student t-interval; an open dot is one seed, with a 95 % bootstrap "
        "interval over validation sequences, which says nothing about another seed. Conditions: one corpus, the "
        "6 × 256 post-LN minis' recipe (batch 16, 40 % masks, peak rate 1e-3, bf16 on a CPU), "
        f"{' or '.join(zoo.millions(b) for b in zoo.budgets(race))} tokens a run, the learning rate decaying to 0 at "
        "the end of each; within a seed every scheme saw the same initial generator state, batches, masks and order, "
        "and runs are compared only at equal budgets.")


def section_translators() -> None:
    """The race run again as translators (the paper's headline task): its finding, every run and difference."""
    if said := bleu_race.finding(translators := zoo.runs(task="translation")):
        table = bleu_race.markdown(translators)  # its paired bootstraps first: the heading comes with them
        st.subheader("And as translators?")
        st.markdown(said + "\n\n" + table)
        state.explain(f"sacreBLEU on {len(translators[0].hypotheses):,} held-out Tatoeba pairs (no test sentence "
                      "occurs in training), beam 5, length penalty 1.0; dev loss in nats a target token. Gains are "
                      "paired in a seed (the same batches): 95 % t-interval over seeds, paired bootstrap p per seed.")


def section_gap(race: list) -> None:
    """Does the split FFN's lead last, or is it the later exit from the plateau? The Transformer − control gap along
    training, at every budget run."""
    paths = zoo.paths(race)
    if not paths:
        return
    st.subheader("Does the split FFN's lead last?")
    st.plotly_chart(plot.race_gaps(paths), key="l_race_gaps", **state.CHART)
    if said := zoo.lasting(race).strip():  # what the longest budget says, once one beyond the race's is stored
        st.markdown(said)
    state.explain(
        f"The gap Lie–Trotter − Control (the Transformer and the control: the same order, G whole or in two halves) "
        f"at every evaluation of a seed's pair, which saw the same batches. A run has left the word-count plateau at "
        f"its first evaluation with a context effect of {zoo.EXIT_NATS:g} nat or more (the markers); on the right "
        f"each run is read that many steps after its own exit, so a gap that is only the later exit would fall to "
        f"about 0 there (the later run then learns at a somewhat lower rate of the same schedule). The learning rate "
        f"decays to 0 at the end of each run's budget: runs of different budgets are not one run stopped early.")
