"""What if (issue 75): interventions held against independent code.

Silencing a head, scaling or switching off a sub-layer, holding a particle, cutting it from the others and patching
the residual stream are compared with Hugging Face `transformers` models run with forward hooks and pre-hooks on their
own modules (TransformerLens's way: hook_z zeroed before the output projection, resid_pre replaced), on small seeded
GPT-2, GPT-NeoX (a parallel block) and BERT models built as tests/test_decoders.py and tests/test_hf_families.py build
them; a translator with its external field off writes the same translation for any two sources; every bad input
gets a message that names it.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import macaron
from macaron import InputError
from macaron import interventions as iv
from macaron.schemes import CROSS

TOL = 1e-5  # max |ours − theirs| / max |theirs|


# ---- the models: seeded transformers models and ours loaded from their folders ------------------------------------
@pytest.fixture(scope="module")
def families(tmp_path_factory):
    from test_decoders import build, byte_bpe
    from test_hf_families import make_folder

    root = tmp_path_factory.mktemp("interventions")
    out = {kind: (root / kind, build(kind, root / kind, byte_bpe())) for kind in ("gpt2", "gpt_neox")}
    out["bert"] = make_folder(root, "bert")
    return {kind: (macaron.load(folder, device="cpu"), hf) for kind, (folder, hf) in out.items()}


def blocks(hf):
    """The residual blocks of a transformers model, the module the last state goes into, and the head (its input: the
    final hidden states)."""
    if hasattr(hf, "transformer"):
        return list(hf.transformer.h), hf.transformer.ln_f, hf.get_output_embeddings()
    if hasattr(hf, "gpt_neox"):
        return list(hf.gpt_neox.layers), hf.gpt_neox.final_layer_norm, hf.get_output_embeddings()
    return list(hf.bert.encoder.layer), hf.cls, hf.cls


def attention(hf, layer: int):
    """(the attention block whose output is added to the stream, its output projection)."""
    b = blocks(hf)[0][layer]
    if hasattr(b, "attn"):
        return b.attn, b.attn.c_proj
    if hasattr(b, "mlp"):
        return b.attention, b.attention.dense
    return b.attention, b.attention.output.dense


def first(output):
    return output[0] if isinstance(output, tuple) else output


def replaced(output, x):
    return (x, *output[1:]) if isinstance(output, tuple) else x


def run(hf, ids, hooks=()):
    """transformers' states at every layer boundary (the stream entering each block, then the last one), its final
    hidden states (GPT's after its final norm) and logits, with `hooks` [(module, "pre" | "post", fn)] in place."""
    layers, last, head = blocks(hf)
    handles = [module.register_forward_pre_hook(fn) if when == "pre" else module.register_forward_hook(fn)
               for module, when, fn in hooks]
    states = []  # hooked after the intervention's own: a patched boundary is read patched
    handles += [m.register_forward_pre_hook(lambda _m, args: states.append(args[0][0].clone()))
                for m in [*layers, last, head]]
    try:
        with torch.no_grad():
            logits = hf(torch.tensor([ids])).logits[0]
    finally:
        for h in handles:
            h.remove()
    return [s.numpy() for s in states[:-1]], states[-1].numpy(), logits.numpy()


def close(ours, theirs):
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL * np.abs(theirs).max())


def assert_matches(model, traj, theirs):
    """Our trajectory's layer boundaries, final states and head's logits against transformers' run."""
    bounds, final, logits = theirs
    assert len(traj.layer_boundaries()) == len(bounds)
    for b, state in zip(traj.layer_boundaries(), bounds):
        close(traj.states[b], state)
    close(traj.final, final)
    with torch.no_grad():
        close(model.head(torch.as_tensor(traj.final)).numpy(), logits)


def assert_changed(theirs, plain):
    """The intervention moved transformers' answer: a test of it could fail."""
    assert np.abs(theirs[2] - plain[2]).max() > 100 * TOL * np.abs(plain[2]).max()


def sentence(model, kind: str, n: int = 9, seed: int = 0) -> list[int]:
    """A sentence of n token ids: BERT's with [CLS], a [MASK] and [SEP]."""
    ids = torch.randint(5, model.config.vocab_size, (n,), generator=torch.Generator().manual_seed(seed)).tolist()
    if kind == "bert":
        tok = model.tokenizer
        ids[0], ids[n // 2], ids[-1] = (tok.token_to_id(t) for t in ("[CLS]", "[MASK]", "[SEP]"))
    return ids


# ---- held against transformers ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["gpt2", "bert"])
def test_a_silenced_head_is_transformers_with_its_hook_z_zeroed(families, kind):
    model, hf = families[kind]
    ids, layer, head = sentence(model, kind), 1, 2
    d = model.config.d_head

    def zero(_module, args):
        z = args[0].clone()
        z[..., head * d:(head + 1) * d] = 0.0  # this head's output, before the output projection
        return (z,)

    theirs = run(hf, ids, [(attention(hf, layer)[1], "pre", zero)])
    traj = model.trace(ids, interventions=[iv.Head(layer=layer, head=head)])
    assert_matches(model, traj, theirs)
    plain = run(hf, ids)
    assert_changed(theirs, plain)
    if kind == "bert":  # the answer before and after, as transformers gives it
        effect = iv.effect(model, model.trace(ids), traj, k=3)
        for said, logits in ((effect.before, plain[2]), (effect.after, theirs[2])):
            top = torch.softmax(torch.as_tensor(logits[effect.position]), -1).topk(3)
            assert [w for w, _ in said] == [model.tokenizer.id_to_token(int(i)) for i in top.indices]
            np.testing.assert_allclose([p for _, p in said], top.values.numpy(), rtol=1e-4)


@pytest.mark.parametrize("kind, what, factor", [("gpt2", "diffusion", 0.0), ("gpt2", "diffusion", 2.5),
                                                ("gpt_neox", "diffusion", 0.0), ("gpt_neox", "convection", 0.0),
                                                ("gpt_neox", "diffusion", 2.5), ("bert", "diffusion", 0.0),
                                                ("bert", "diffusion", 2.5)])
def test_a_sub_layer_off_or_scaled_is_transformers_without_it_or_with_its_output_scaled(families, kind, what, factor):
    """Off: the model built without those sub-layers (their output zero where it is added to the stream; BERT's
    attention block, its LayerNorm included, passes its input on). Scale: their output times the factor (BERT's
    before its LayerNorm)."""
    model, hf = families[kind]
    ids, layers = sentence(model, kind), [0, 2]

    def times(_module, _args, output):
        return replaced(output, first(output) * factor)

    def skipped(_module, args, output):  # BERT's attention block taken out: its input goes on
        return replaced(output, args[0])

    hooks = []
    for layer in layers:
        block, projection = attention(hf, layer)
        module = blocks(hf)[0][layer].mlp if what == "convection" else block
        if kind == "bert":
            hooks.append((block, "post", skipped) if factor == 0 else (projection, "post", times))
        else:
            hooks.append((module, "post", times))
    intervention = iv.Off(what, layers=layers) if factor == 0 else iv.Scale(what, factor, layers=layers)
    traj = model.trace(ids, interventions=[intervention])
    theirs = run(hf, ids, hooks)
    assert_matches(model, traj, theirs)
    assert_changed(theirs, run(hf, ids))
    assert traj.n_steps == model.trace(ids).n_steps  # the clock is the model's own


@pytest.mark.parametrize("kind, layer", [("gpt2", 0), ("gpt2", 2), ("gpt2", 3), ("bert", 1), ("bert", 3)])
def test_a_patched_state_is_transformers_with_its_residual_stream_replaced(families, kind, layer):
    """Activation patching at a layer boundary (resid_pre; the last: the stream entering the final norm or head)."""
    model, hf = families[kind]
    clean, corrupted, token = sentence(model, kind, seed=0), sentence(model, kind, seed=1), 3
    value = torch.as_tensor(run(hf, corrupted)[0][layer][token])

    def put(_module, args):
        x = args[0].clone()
        x[:, token] = value
        return (x, *args[1:])

    modules = [*blocks(hf)[0], blocks(hf)[1]]
    theirs = run(hf, clean, [(modules[layer], "pre", put)])
    source = model.trace(corrupted)
    state = source.layer_boundaries()[layer]
    assert_matches(model, model.trace(clean, interventions=[iv.Patch(source=source, token=token, state=state)]), theirs)
    assert_changed(theirs, run(hf, clean))


def test_a_patch_inside_a_layer_is_transformers_with_its_attention_output_replaced(families):
    """BERT's state after its attention block (resid_mid): the block's output, which its FFN reads and adds to."""
    model, hf = families["bert"]
    clean, corrupted, token, layer = sentence(model, "bert", seed=0), sentence(model, "bert", seed=1), 2, 1
    kept = []
    block = attention(hf, layer)[0]
    run(hf, corrupted, [(block, "post", lambda _m, _a, out: kept.append(first(out)[0, token].clone()))])

    def put(_module, _args, output):
        x = first(output).clone()
        x[:, token] = kept[0]
        return replaced(output, x)

    theirs = run(hf, clean, [(block, "post", put)])
    source = model.trace(corrupted)
    state = source.layer_boundaries()[layer] + 1  # BERT's layer: diffusion, then convection
    assert source.steps[state - 1].kind == "diffusion"
    assert_matches(model, model.trace(clean, interventions=[iv.Patch(source, token, state)]), theirs)
    assert_changed(theirs, run(hf, clean))


def test_a_held_particle_is_transformers_with_its_stream_kept(families):
    """GPT-2 with the particle's stream put back after every block from a layer on: what a block's FFN does to a held
    particle stays its own, so the layer boundaries are the same as ours, where it never moves."""
    model, hf = families["gpt2"]
    ids, token, layer = sentence(model, "gpt2"), 4, 1
    held = []
    mods = blocks(hf)[0]

    def keep(_module, args):
        held.append(args[0][:, token].clone())

    def put_back(_module, _args, output):
        x = first(output).clone()
        x[:, token] = held[0]
        return replaced(output, x)

    hooks = [(mods[layer], "pre", keep)] + [(m, "post", put_back) for m in mods[layer:]]
    theirs = run(hf, ids, hooks)
    traj = model.trace(ids, interventions=[iv.Hold(token, from_state=model.trace(ids).layer_boundaries()[layer])])
    assert_matches(model, traj, theirs)
    assert_changed(theirs, run(hf, ids))
    s = traj.layer_boundaries()[layer]
    assert np.array_equal(traj.states[s:, token], np.broadcast_to(traj.states[s, token], traj.states[s:, token].shape))


def test_a_cut_particle_is_transformers_with_no_one_attending_to_it(families):
    """BERT whose self-attention, from a layer on, masks one key for every query but its own."""
    model, hf = families["bert"]
    ids, token, layer = sentence(model, "bert"), 3, 1
    T = len(ids)
    hidden = torch.zeros(1, 1, T, T)
    hidden[..., token] = torch.finfo(torch.float32).min
    hidden[..., token, token] = 0.0

    def mask(_module, args, kwargs):
        return args, dict(kwargs, attention_mask=hidden)

    hooks = []
    for b in blocks(hf)[0][layer:]:
        hooks.append(b.attention.self.register_forward_pre_hook(mask, with_kwargs=True))
    try:
        theirs = run(hf, ids)
    finally:
        for h in hooks:
            h.remove()
    traj = model.trace(ids, interventions=[iv.Cut(token, from_layer=layer)])
    assert_matches(model, traj, theirs)
    assert_changed(theirs, run(hf, ids))
    for m, step in zip(traj.mixing, traj.steps):  # the mixing matrices say it: nobody else reads the cut one
        if m is not None:
            others = np.delete(m[:, :, token], token, axis=1)
            assert (np.abs(others).max() == 0) == (step.layer >= layer)


def test_the_patching_map_is_transformers_patched_one_cell_at_a_time(families):
    """TransformerLens's get_act_patch_resid_pre (and the last state) recomputed with transformers' pre-hooks: the
    corrupted run with one particle's stream entering one block replaced by the clean run's, cell by cell."""
    model, hf = families["gpt2"]
    clean, corrupted, good, bad = sentence(model, "gpt2", seed=0), sentence(model, "gpt2", seed=1), 7, 11
    found = iv.patching_map(model, clean, corrupted, (good, bad), batch_size=10)  # batches cut across rows
    at = len(clean) - 1  # a decoder answers the word after the sentence

    def difference(theirs):
        return theirs[2][at, good] - theirs[2][at, bad]

    states = run(hf, clean)[0]
    c, r = difference(run(hf, clean)), difference(run(hf, corrupted))
    expected = np.zeros((len(states), len(clean)))
    for layer, module in enumerate([*blocks(hf)[0], blocks(hf)[1]]):
        for token in range(len(clean)):
            def put(_module, args, layer=layer, token=token):
                x = args[0].clone()
                x[:, token] = torch.as_tensor(states[layer][token])
                return (x, *args[1:])

            expected[layer, token] = (difference(run(hf, corrupted, [(module, "pre", put)])) - r) / (c - r)
    np.testing.assert_allclose(found.restored, expected, rtol=0, atol=1e-4)
    assert found.position == at and np.isclose(found.clean, c, rtol=1e-4) and np.isclose(found.corrupted, r, rtol=1e-4)
    # the last state: the answer's own particle restores all of it, the others nothing (the head reads it alone)
    np.testing.assert_allclose(found.restored[-1], np.eye(len(clean))[at], atol=1e-4)


# ---- the plain trace, the record -----------------------------------------------------------------------------------
def test_no_intervention_is_the_plain_trace_exactly(families):
    model = families["gpt2"][0]
    ids = sentence(model, "gpt2")
    plain = model.trace(ids)
    for nothing in ([], None, ()):
        traj = model.trace(ids, interventions=nothing)
        assert np.array_equal(traj.states, plain.states) and np.array_equal(traj.final, plain.final)
        assert all(np.array_equal(a, b) for a, b in zip(traj.mixing, plain.mixing) if a is not None)
        assert traj.meta == plain.meta and traj.interventions == []


def test_an_altered_run_says_what_was_done_to_it(families):
    model = families["bert"][0]
    ids = sentence(model, "bert")
    source = model.trace(sentence(model, "bert", seed=1))
    done = [iv.Off("diffusion", layers=[0, 1, 2]), iv.Scale("convection", 0.5, layers=2), iv.Head(2, 1), iv.Cut(2),
            iv.Hold(1, from_state=3), iv.Patch(source, token=4, state=6)]
    traj = model.trace(ids, interventions=done)
    assert traj.interventions == ["diffusion off in layers 1–3", "convection ×0.5 in layer 3",
                                  "head 1 silenced in layer 3", "token 2 cut from the others from layer 1 on",
                                  "token 1 held from state 3 on",
                                  f"token 4's state 6 patched from “{' '.join(source.tokens)}”"]
    assert [d["what"] for d in traj.meta["interventions"]] == ["off", "scale", "head", "cut", "hold", "patch"]
    assert traj.meta["interventions"][0]["layers"] == [0, 1, 2]
    again = macaron.Trajectory.from_dict(json.loads(traj.to_json()))  # its meta is JSON: exports carry it
    assert again.interventions == traj.interventions


def test_the_effect_is_each_particles_distance_from_its_own_path(families):
    model = families["bert"][0]
    ids = sentence(model, "bert")
    plain = model.trace(ids)
    altered = model.trace(ids, interventions=[iv.Hold(2, from_state=4)])
    effect = iv.effect(model, plain, altered)
    expected = np.sqrt(((altered.states.astype(np.float64) - plain.states) ** 2).sum(-1))
    np.testing.assert_allclose(effect.drift, expected, rtol=1e-6)
    assert effect.drift[:5].max() == 0 and effect.drift[5:, 2].min() > 0  # nothing moved apart before the hold
    assert effect.position == ids.index(model.tokenizer.token_to_id("[MASK]"))


# ---- a translator: the external field --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def translator(tmp_path_factory):
    """The translation tests' tiny Transformer (random weights), its cross-attention made strong enough that its
    translations depend on the source."""
    from conftest import make_tiny_translation

    folder = make_tiny_translation(tmp_path_factory.mktemp("translator"))
    model = macaron.load_translator(folder / "tiny-transformer-de-en", device="cpu")
    with torch.no_grad():
        for layer in model.decoder.layers:
            for sub, op in zip(layer.scheme, layer.ops):
                if sub.kind == CROSS:
                    op.out.weight *= 20
                    op.kv.weight *= 3
    return model


SOURCES = ("das haus ist klein .", "die kinder spielen im garten , und er sagt : es ist gut .")


@pytest.mark.parametrize("beam", [1, 5])
def test_without_its_external_field_a_translator_writes_the_same_for_any_source(translator, beam):
    plain = [translator.translate(s, beam=beam) for s in SOURCES]
    assert plain[0].text != plain[1].text  # the source matters as trained
    same = translator.translate(SOURCES[0], beam=beam, interventions=[])
    for a, b in ((same.source, plain[0].source), (same.target, plain[0].target)):
        assert np.array_equal(a.states, b.states) and a.meta == b.meta
    off = [translator.translate(s, beam=beam, interventions=[iv.Off("cross", layers=[0, 1])]) for s in SOURCES]
    assert off[0].target_ids == off[1].target_ids
    np.testing.assert_allclose(off[0].target.states, off[1].target.states, atol=1e-6)
    assert off[0].target.interventions == ["external field off in layers 1, 2"]
    effect = iv.effect(translator, plain[0], off[0])
    assert effect.before[0][0] == plain[0].text and effect.after[0][0] == off[0].text
    assert effect.drift.max() == 0  # the source's particles do not feel it


def test_the_search_reads_the_altered_decoder_as_its_trace_does(translator):
    """Greedy, word by word on the decoder's cache: each word is the best next word of the altered teacher-forced
    trace, every position run at once."""
    done = [iv.Cut(1, system="target"), iv.Hold(2, from_state=3, system="target"), iv.Head(0, 1), iv.Cut(2)]
    tr = translator.translate(SOURCES[1], beam=1, interventions=done)
    assert tr.target_ids != translator.translate(SOURCES[1], beam=1).target_ids
    with torch.no_grad():
        logits = translator.decoder.head(torch.as_tensor(tr.target.final))
    logits[:, translator.config.pad_id] = float("-inf")
    logits[0, translator.config.eos_id] = float("-inf")  # fairseq's min_len: no </s> first
    assert logits[:-1].argmax(-1).tolist() == tr.target_ids
    joint = translator.trace(SOURCES[1], interventions=done)
    assert joint.interventions == [d.label for d in done] and len(joint.tokens) == len(tr.source.tokens) + len(
        tr.target.tokens)


# ---- bad input: one clear message naming what is wrong --------------------------------------------------------------
def test_a_translators_patching_map_is_its_encoder_patched_by_forward_hooks(translator):
    """On a translator the map patches the source's particles and reads the translation's next word after a prefix:
    recomputed with PyTorch forward pre-hooks on the encoder's layers (and its final norm, for the last state) that
    replace one particle's stream, and the model's own teacher-forced target_logits, cell by cell."""
    clean = translator.translate(SOURCES[0], beam=1).source
    corrupted = list(clean.token_ids)
    corrupted[1] = corrupted[2]  # one source word replaced by another of the vocabulary
    prefix = translator.translate(SOURCES[0], beam=1).target_ids[:1]
    logits = translator.target_logits(clean.token_ids, prefix)[len(prefix)]
    good, bad = (int(i) for i in logits.topk(2).indices)
    found = iv.patching_map(translator, clean.token_ids, corrupted, (good, bad), prefix=prefix, batch_size=7)

    def difference(ids) -> float:
        row = translator.target_logits(ids, prefix)[len(prefix)]
        return float(row[good] - row[bad])

    c, r = difference(clean.token_ids), difference(corrupted)
    modules = [*translator.encoder.layers, translator.encoder.final_norm]
    expected = np.zeros((len(modules), len(clean.tokens)))
    for row, (module, state) in enumerate(zip(modules, clean.layer_boundaries())):
        for token in range(len(clean.tokens)):
            def put(_module, args, state=state, token=token):
                x = args[0].clone()
                x[:, token] = torch.as_tensor(clean.states[state, token])
                return (x, *args[1:])

            handle = module.register_forward_pre_hook(put)
            try:
                expected[row, token] = (difference(corrupted) - r) / (c - r)
            finally:
                handle.remove()
    assert found.states == clean.layer_boundaries() and found.position == len(prefix)
    assert np.isclose(found.clean, c, rtol=1e-4) and np.isclose(found.corrupted, r, rtol=1e-4)
    np.testing.assert_allclose(found.restored, expected, rtol=0, atol=1e-4)
    assert not np.allclose(found.restored, 0)  # the source's particles carry the answer


@pytest.mark.parametrize("kind", ["gpt2", "bert"])
def test_a_word_is_the_token_it_becomes_in_the_middle_of_a_sentence(families, kind):
    """The map's words as a person types them ("she"): the token the word is in a sentence's middle (GPT-2's "Ġshe",
    as the tokenizer reads "a she"); the token spelled out ("Ġshe") is that token too."""
    model = families[kind][0]
    vocab = model.tokenizer.get_vocab()
    words = sorted(t[1:] for t in vocab if t.startswith("Ġ") and t[1:].isalpha() and len(t) > 3) if kind == "gpt2" \
        else sorted(t for t in vocab if t.isalpha() and len(t) > 3)
    assert len(words) >= 3, "the fixture's vocabulary has whole words"
    for word in words[:20]:
        in_a_sentence = model.tokenizer.encode("a " + word, add_special_tokens=False).ids[-1]
        assert iv.word_id(model, word) == in_a_sentence
        assert iv.word_id(model, model.tokenizer.id_to_token(in_a_sentence)) == in_a_sentence


def test_bad_input_is_named(families, translator):
    model = families["gpt2"][0]
    ids = sentence(model, "gpt2")
    shorter = model.trace(ids[:-1])
    other = families["bert"][0].trace(sentence(families["bert"][0], "bert"))
    cases = [
        (lambda: iv.Off("attention"), "kind 'attention': choose 'diffusion', 'convection', 'cross'"),
        (lambda: iv.Scale("diffusion", float("inf")), "factor=inf: give a finite number"),
        (lambda: iv.Scale("diffusion", float("nan")), "factor=nan: give a finite number"),
        (lambda: iv.Scale("diffusion", "2"), "factor='2': give a finite number"),
        (lambda: iv.Head(layer=-1, head=0), "layer=-1: give a whole number from 0"),
        (lambda: iv.Patch(source=ids, token=0, state=0), "a patch's source is a Trajectory"),
        (lambda: model.trace(ids, interventions=[iv.Off("diffusion", layers=[3])]),
         "layer 3 does not exist: this model has layers 0–2"),
        (lambda: model.trace(ids, interventions=[iv.Head(layer=1, head=4)]),
         "head 4 does not exist: layer 1's attention has heads 0–3"),
        (lambda: model.trace(ids, interventions=[iv.Cut(9)]), "token 9 does not exist: the sentence has tokens 0–8"),
        (lambda: model.trace(ids, interventions=[iv.Hold(0, from_state=7)]),
         "state 7 does not exist: this run has states 0–6"),
        (lambda: model.trace(ids, interventions=[iv.Patch(shorter, 0, 0)]),
         "the patch's source has 8 tokens and this sentence 9: patch from a sentence of the same length"),
        (lambda: model.trace(ids, interventions=[iv.Patch(other, 0, 0)]), "not by this model"),
        (lambda: model.trace(ids, interventions=[iv.Off("cross")]), "this model has none"),
        (lambda: model.trace(ids, interventions=[iv.Off("diffusion", system="target")]),
         "names a translator's system, and this model is one particle system"),
        (lambda: model.trace(ids, interventions=["diffusion off"]), "is not an intervention"),
        (lambda: translator.translate(SOURCES[0], beam=1, interventions=[iv.Off("cross", system="source")]),
         "the source system \\(the encoder\\) has no cross-attention"),
        (lambda: translator.translate(SOURCES[0], beam=1, interventions=[iv.Hold(40, system="target")]),
         "token 40 does not exist: the sentence has tokens 0–.* in its target system"),
        (lambda: translator.translate(SOURCES[0], beam=1, interventions=[iv.Patch(shorter, 0, 0)]),
         "patched from one of its systems' trajectories"),
        (lambda: iv.patching_map(model, ids, ids[:-1], (7, 11)), "the clean sentence has 9 tokens and the corrupted "
                                                                  "one 8: patch between sentences of the same length"),
        (lambda: iv.patching_map(model, ids, ids, (7, 11)), "the same logit difference"),
        (lambda: iv.patching_map(model, ids, ids[::-1], (7, 11), prefix=[5]), "this model is one particle system"),
        (lambda: iv.patching_map(translator, SOURCES[0], SOURCES[1], (7, 11)), "patch between sentences of the same "
                                                                               "length"),
        (lambda: iv.patching_map(translator, SOURCES[0], SOURCES[0], (7, 11), position=3), "a translator answers "
                                                                                          "the word after its prefix"),
        (lambda: iv.patching_map(model, ids, ids[::-1], ("no such word", 11)), "word 'no such word' is not one token "
                                                                               "of this model's vocabulary"),
    ]
    for call, says in cases:
        with pytest.raises(InputError, match=says):
            call()
