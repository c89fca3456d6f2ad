"""What the Dynamics page keeps: the measures of a sentence set, the ODE experiments and the runs
past the trained depth, computed once per (model, sentences) and shared by every session.

Models and single traces come from explorer_cache (one model in memory per folder). The computing
is macaron.studies.dynamics'; cached objects are shared between sessions: treat them as read-only. Each
is computed one at a time on the server (explorer_cache.heavy): a set takes seconds to minutes.
"""
from __future__ import annotations

import streamlit as st

import explorer_cache as cache
from macaron import sentences
from macaron.studies import dynamics


def texts(set_name: str, text: str | None) -> tuple[str, ...]:
    """The sentences a view measures: one typed sentence, or a shipped set."""
    return (text,) if text is not None else tuple(sentences.read(set_name))


@st.cache_resource(show_spinner="Tracing and measuring the sentences" + cache.ONE_AT_A_TIME, max_entries=32)
def measures(path: str, sents: tuple[str, ...]) -> dynamics.SetMeasures:
    model = cache.load_model(path)
    with cache.heavy():
        return dynamics.measure_set(model, sents, max_tokens=cache.MAX_TOKENS)


@st.cache_resource(show_spinner="Running the layers past their trained depth" + cache.ONE_AT_A_TIME, max_entries=16)
def extended(path: str, sents: tuple[str, ...]) -> dynamics.SetMeasures:
    model = cache.load_model(path)
    with cache.heavy():
        return dynamics.measure_set(model, sents, program=dynamics.extended(model, dynamics.past_depth(model)),
                                    max_tokens=cache.MAX_TOKENS)


@st.cache_resource(show_spinner="Running the trained operators in other orders and with smaller steps"
                                + cache.ONE_AT_A_TIME, max_entries=16)
def experiments(path: str, sents: tuple[str, ...]) -> list[dynamics.ExperimentResult]:
    model = cache.load_model(path)
    with cache.heavy():
        return dynamics.run_experiments(model, sents, max_tokens=cache.MAX_TOKENS)
