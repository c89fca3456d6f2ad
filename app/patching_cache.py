"""What the Patching page keeps: one activation-patching map per (model, sentence pair, two words), computed once and
shared by every session (read-only), one such computation at a time on the server (explorer_cache.heavy).

The computing is macaron.interventions.patching_map's; models and traces come from explorer_cache.
"""
from __future__ import annotations

import streamlit as st

import explorer_cache as cache
from macaron import interventions as iv

# Sentence pairs of one length whose answers part (clean, corrupted, the clean answer's word, the corrupted one's),
# chosen by measurement (docs/app/patching.md's table, which tests/test_patching_page.py recomputes): on
# transformer-mini, macaron-mini, transformer-small and macaron-small the logit difference of the two words moves by
# 3.1 or more between the two sentences, and the clean sentence's top guess is its word for she / he and they / he on
# all four (were / was: on macaron-small).
PAIRS = {
    "she / he": ("the woman said that [MASK] was tired .", "the man said that [MASK] was tired .", "she", "he"),
    "they / he": ("the boys said that [MASK] were tired .", "the boy said that [MASK] was tired .", "they", "he"),
    "were / was": ("the children [MASK] in the garden .", "the child [MASK] in the garden .", "were", "was"),
}


@st.cache_resource(show_spinner="Patching every particle at every layer boundary" + cache.ONE_AT_A_TIME,
                   max_entries=32)
def patching(path: str, clean: str, corrupted: str, good: str, bad: str) -> iv.PatchingMap:
    """The map of `path`'s model on the pair, metric logit(good) − logit(bad) where the clean sentence is answered."""
    model = cache.load_model(path)
    with cache.heavy():
        return iv.patching_map(model, clean, corrupted, (good, bad))
