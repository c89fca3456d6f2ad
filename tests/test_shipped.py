"""What the app and the documentation say about the shipped models, checked on the shipped weights themselves.

The guided lesson's sixth step ("What learning changes") and the teacher's notes say: at the plateau
of its training a shipped mini guesses the same few words whatever the sentence; its final weights
guess the word of the lesson's sentence. Both are measured here on `pretrained/`, so a re-trained or
re-published pair that no longer shows it fails instead of leaving the lesson untrue.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import macaron
from app import explorer_state as state
from macaron.studies import learning
from macaron.studies.analysis import MASK_TOKEN

ROOT = Path(__file__).resolve().parent.parent
MINIS = ("transformer-mini", "macaron-mini")
MASKED = [t for t in state.PRESETS.values() if MASK_TOKEN in t]


def top(model, text: str, k: int = 5) -> list[str]:
    """The model's own top-k guesses for the [MASK] of `text`, from its MLM logits."""
    ids, tokens, _ = model.tokenize(text)
    with torch.no_grad():
        logits = model.mlm_logits(ids)[tokens.index(MASK_TOKEN)]
    return [model.tokenizer.id_to_token(i) for i in logits.topk(k).indices.tolist()]


@pytest.mark.parametrize("name", MINIS)
def test_each_mini_ships_its_stages_and_meets_its_targets(name):
    stages = macaron.milestones(name)
    assert [s.name for s in stages] == ["random start", "plateau", "rise", "final"]
    assert stages[1].context_effect < 0.05 <= stages[2].context_effect  # publish's rule for the plateau
    assert stages[2].context_effect >= stages[3].context_effect / 2     # ... and for the rise
    facts = json.loads((ROOT / "pretrained" / name / "training.json").read_text())
    assert facts["steps"] == facts["budget_steps"]  # the planned schedule ran to its end
    assert facts["final"]["accuracy"] >= 0.35 and facts["final"]["context_effect"] >= 2.5  # the minis' targets
    macaron.load(name, device="cpu", at=0)  # the random start rebuilds from its seed (checksum checked)


@pytest.mark.parametrize("name", MINIS)
def test_the_plateau_guesses_the_same_few_words_whatever_the_sentence(name):
    """The app's [MASK] sentences (five): at the plateau their top-5 guesses come from at most 9 tokens, each a
    common word or punctuation (the, of, and, to, a, ",", ".", "##s") or a word of the sentence itself (it reads
    the words around as a bag); the final weights guess differently for each (at least 15 tokens)."""
    plateau = macaron.load(name, device="cpu", at=macaron.milestones(name)[1].tokens)
    final = macaron.load(name, device="cpu")
    assert plateau.milestone.name == "plateau" and len(MASKED) >= 5
    guesses = [top(plateau, t) for t in MASKED]
    common = {"the", "of", "and", "to", "a", ",", ".", "##s"}
    assert len(set().union(*guesses)) <= 9, guesses
    assert all(w in common or w in t.split() for t, g in zip(MASKED, guesses) for w in g), guesses
    guesses = [top(final, t) for t in MASKED]
    assert len(set().union(*guesses)) >= 15, guesses


@pytest.mark.parametrize("name, rank", [("transformer-mini", 1), ("macaron-mini", 2)])
def test_the_lessons_sentence_is_guessed_by_the_final_weights_only(name, rank):
    step = next(s for s in state.LESSON if s.title == "What learning changes")
    text, word = step.view["s"], "school"
    assert step.view["at"] == "plateau" and word in step.say
    stages = list(learning.at_stages(name, device="cpu"))
    assert word in top(stages[-1], text, rank)  # final: among the first `rank` guesses
    assert all(word not in top(m, text, 5) for m in stages[:-1])  # no earlier stage has it in its top 5


@pytest.mark.parametrize("name", ["transformer-ode", "macaron-ode"])
def test_the_ode_pairs_measured_orders_are_of_its_weights_and_near_the_theorem(name):
    """Lesson step 4, the lab's section 3e and the documentation say the ODE pair's measured orders are close to the
    theorem's: the shipped record must be of the shipped weights (a re-published pair measured again), and
    each local and global slope within 0.2 of the order the theorem gives for that model."""
    from macaron import lesson
    from macaron.sources.shipped import resolve
    from macaron.studies import orders

    assert name in lesson.ODE_PAIR
    record = orders.read(resolve(name), macaron.load(name, device="cpu"))
    assert record is not None, f"{name}: no orders.json (make publish-ode measures it)"
    for part, k in (("local", 0), ("global", 1)):
        for scheme, by_solver in record[f"{part}_slope"].items():
            for solver, (slope, _, _) in by_solver.items():
                assert abs(slope - record["expected"][scheme][solver][k]) < 0.2, (part, scheme, solver, slope)
    assert record["expected"]["strang"]["exact"] == [3, 2]  # one G in both halves


def test_the_race_control_ships_opens_in_the_pickers_and_reads_context(monkeypatch):
    """Issue 47: the control's seed-0 weights (the Macaron's sub-layers in Lie–Trotter order) ship as a model. Its
    layers run F, ½G, ½G; it reads word order (held-out context effect over 2 nats); its facts are the race's seed-0
    run; Particles and Compare (beside macaron-mini, on one layer clock) open it without an exception."""
    from macaron.studies import zoo
    from test_app import fresh

    name = "transformer-halves-mini"
    model = macaron.load(name, device="cpu")
    assert [(s.kind, s.fraction) for s in model.layers[0].scheme] == [("diffusion", 1.0), ("convection", 0.5),
                                                                       ("convection", 0.5)]
    facts = json.loads((ROOT / "pretrained" / name / "training.json").read_text())
    assert facts["seed"] == 0 and facts["tokens"] >= 20_000_000 and facts["final"]["context_effect"] >= 2.0
    raced = next(r for r in zoo.runs() if r.scheme == "lie-trotter-halves" and r.seed == 0)
    assert raced.loss == facts["final"]["loss"] and raced.parameters == model.num_parameters()
    monkeypatch.setenv("MACARON_MODELS_DIR", str(ROOT / "pretrained"))
    monkeypatch.delenv("MACARON_MODELS", raising=False)
    for page, query, key in ((None, {"m": name}, "p_model"), ("views/compare.py", {"a": "macaron-mini", "b": name},
                                                               "c_b")):
        at = fresh(query, page)
        assert at.selectbox(key=key).value == name and len(at.get("plotly_chart")) >= 2


TRANSLATORS = ("transformer-es-en", "macaron-es-en")


@pytest.mark.parametrize("name", TRANSLATORS)
def test_a_shipped_translator_translates_held_out_sentences_as_its_card_says(name):
    """The first 60 held-out test pairs (no test sentence occurs in training) translated again by the shipped weights
    with the card's search: sacreBLEU on them is a real translator's, and the test set's whole translation stored with
    the race gives the card's BLEU again."""
    from sacrebleu.metrics import BLEU

    from macaron.studies import translation_race as bleu_race
    from macaron.studies import zoo

    folder = ROOT / "pretrained" / name
    facts = json.loads((folder / "training.json").read_text())
    final = facts["final"]
    stored = zoo.RACE / "translation" / f"seed-{facts['seed']}" / name / "test.hyp.en"
    references = bleu_race.references()
    hypotheses = stored.read_text(encoding="utf-8").splitlines()
    assert BLEU().corpus_score(hypotheses, [references]).score == pytest.approx(final["bleu"], abs=0.01)
    assert final["bleu"] >= 40 and final["beam"] == 5 and final["lenpen"] == 1.0
    model = macaron.load(folder, device="cpu")
    assert macaron.translation.model.presets(folder)  # the Translate page's presets: the test set's first sentences
    sources = (ROOT / "pretrained" / "race" / "translation" / "test.es").read_text(encoding="utf-8").splitlines()[:60]
    again = [model.tokenizer.target.decode(model.search(s, beam=5).tokens) for s in sources]
    assert again == hypotheses[:60]  # the shipped float16 weights translate as the run's own did
    assert BLEU().corpus_score(again, [references[:60]]).score >= 30
