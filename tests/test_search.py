"""The searches as strategies (macaron.translation.search): each calls its decoder with the start token whole, then
with each live hypothesis' newest word and the row of the previous call's hypotheses it continues; NextWord keeps
those rows of its cache (or, for synthesized attention, of its prefixes) and never compares prefixes. Their
outputs are held against fairseq's and transformers' own searches in tests/test_translation.py, test_marian.py."""
import pytest
import torch
import torch.nn.functional as F

from conftest import DECODER_SHAPES
from macaron import ModelConfig, build
from macaron.network.operators import SourceSystem
from macaron.translation.search import FairseqBeam, Generation, NextWord, Specials, TransformersGenerate

START, EOS, PAD, UNK, V = 2, 2, 1, 3, 300


def decoder(**kw):
    torch.manual_seed(0)
    cfg = dict(d_model=32, n_layers=2, n_heads=4, ffn_total=128, vocab_size=V, max_len=24, dropout=0.0, causal=True,
               lm_head=True, mlm_head=False)
    return build(ModelConfig(**{**cfg, **kw}))


def full_pass(model, prefixes, source=None) -> torch.Tensor:
    """[n, V]: the next word's log-probabilities after each prefix, the whole prefix run at once."""
    with torch.no_grad():
        return F.log_softmax(model.head(model(prefixes, None, source=source)[:, -1]).float(), dim=-1)


@pytest.mark.parametrize("kw", [*DECODER_SHAPES, dict(scheme="transformer", norm="pre", attention="dense")])
def test_next_word_follows_the_rows_it_is_given(kw):
    """Hypotheses branch and die as in a beam, the decoder told only each one's new word and its parent's row: each
    call's log-probabilities are the full pass's over the whole prefixes; the cache holds the words read (a
    synthesized attention keeps none: its prefixes run whole)."""
    model = decoder(**kw)
    source = SourceSystem(torch.randn(1, 5, 32), None) if kw.get("cross_attention") else None
    step = NextWord(model, source)
    generator = torch.Generator().manual_seed(1)
    prefixes, rows = torch.full((1, 1), START), None
    for t in range(1, 12):
        with torch.no_grad():
            ours = step(prefixes if rows is None else prefixes[:, -1:], rows)
        assert torch.allclose(ours, full_pass(model, prefixes, source), atol=1e-5), t
        if step.cache is None:
            assert kw.get("attention") == "dense" and torch.equal(step.prefixes.cpu(), prefixes)
        else:
            assert step.cache.length == t and all(k.shape[:3] == (len(prefixes), k.shape[1], t)
                                                  for k, _ in step.cache.past)
        rows = torch.randint(0, len(prefixes), (3,), generator=generator)  # some rows continue twice, some end
        prefixes = torch.cat([prefixes[rows], torch.randint(4, V, (3, 1), generator=generator)], dim=1)


class Calls:
    """A StepDecoder that records how it is called and passes the calls on."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def __call__(self, words, rows=None):
        self.calls.append((words.clone(), None if rows is None else rows.clone()))
        return self.inner(words, rows)


SEARCHES = {
    "fairseq beam": FairseqBeam(4, 9, V, specials=Specials(START, EOS, PAD, UNK)),
    "fairseq greedy": FairseqBeam(1, 9, V, specials=Specials(START, EOS, PAD, UNK)),
    "transformers beam": TransformersGenerate(4, 11, Generation(num_beams=4), Specials(START, EOS, PAD, UNK)),
    "transformers greedy": TransformersGenerate(1, 11, Generation(), Specials(START, EOS, PAD, UNK)),
}


@pytest.mark.parametrize("attention", ["dot", "dense"])
@pytest.mark.parametrize("name", SEARCHES)
def test_a_search_feeds_new_words_and_rows_and_its_words_are_the_full_pass(name, attention):
    """The first call is the start token, whole; every later one one new word a hypothesis and the rows they
    continue. Each finished hypothesis' per-word log-probabilities are the full pass's over its own words: the rows
    the search gave led the decoder to each hypothesis' own prefix."""
    model = decoder(scheme="macaron", norm="pre", position="learned", attention=attention)
    calls = Calls(NextWord(model, None))
    with torch.no_grad():
        found = SEARCHES[name].run(calls)
    assert found
    (first, rows), *rest = calls.calls
    assert rows is None and first.shape[1] == 1 and bool((first == START).all())
    assert rest and all(words.shape == (len(rows), 1) for words, rows in rest)
    for h in found:
        ids = torch.tensor([[START, *h.tokens]])
        expected = [float(full_pass(model, ids[:, :k + 1])[0, w]) for k, w in enumerate(h.tokens)]
        assert h.positional == pytest.approx(expected, abs=1e-4), name


def test_a_translator_runs_the_search_it_is_given():
    """translate(..., search=...) runs the strategy it is given, not the model's own: a search that writes chosen words
    is what the translation holds, both systems traced on them; without one, the model's own (own_search)."""
    import macaron
    from macaron.translation.search import Hypothesis, Search, own_search

    m = macaron.load_translator("macaron-es-en")
    chosen = m.tokenizer.target.encode("I sat on the bench.").ids + [m.config.eos_id]

    class Chosen(Search):
        said = (1, 1.0)
        reads = 0

        def run(self, decoder):
            Chosen.reads += 1
            self.read(decoder, torch.tensor([[m.config.start_id]]), None)  # the decoder is the model's, on the source
            return [Hypothesis(chosen, -1.0, [])]

    text = "Llevé el dinero al banco."
    tr = m.translate(text, search=Chosen())
    assert Chosen.reads == 1 and tr.target_ids == chosen and tr.text == "I sat on the bench."
    assert tr.target.token_ids == [m.config.start_id, *chosen]  # the target's particles: the start, then the words
    assert m.translate(text, beam=1).text == "I took the money to the bank."  # the own search: greedy, another answer
    own = own_search(m.config, len(m.source_row(text)[0]), beam=1)
    assert m.search(text, search=own).tokens == m.translate(text, beam=1).target_ids
