"""Particle-system measures, pinned on constructed inputs whose answers are known by hand."""
import numpy as np
import pytest

from macaron.studies import dynamics as D

RNG = np.random.default_rng(0)


def test_identical_tokens_are_one_cluster_of_rank_one():
    x = np.tile(RNG.normal(size=(1, 16)), (7, 1)) * RNG.uniform(0.5, 2.0, size=(7, 1))  # one direction
    assert D.effective_clusters(x) == pytest.approx(1.0)
    same = np.tile(x[:1], (7, 1))
    assert D.rank_one_residual(same) == pytest.approx(0.0, abs=1e-12)
    assert D.interaction_energy(same, beta=2.0) == pytest.approx(1 / (2 * 2.0))  # the maximum, 1/(2β)
    assert np.allclose(D.pair_cosines(x), 1.0)
    edges, hist = D.cosine_histogram(x[None], bins=20)
    assert hist.shape == (1, 20) and hist[0, -1] > 0 and hist[0, :-1].sum() == 0  # all mass at cos = 1


def test_k_orthogonal_groups_are_k_clusters_and_spread_tokens_are_not_collapsed():
    groups = np.repeat(np.eye(8)[:3], [2, 2, 2], axis=0) * 3.0  # 3 groups of 2 identical tokens
    assert D.effective_clusters(groups) == pytest.approx(3.0)
    assert D.effective_clusters(np.eye(5)) == pytest.approx(5.0)
    # orthonormal tokens: the residual after removing the mean row is sqrt(1 - 1/T) of the whole
    assert D.rank_one_residual(np.eye(4)) == pytest.approx(np.sqrt(1 - 1 / 4))
    # energy: off-diagonal pairs at cos 0 contribute e^{-β}; the diagonal e^0
    T, beta = 5, 1.5
    assert D.interaction_energy(np.eye(T), beta) == pytest.approx(
        (T + T * (T - 1) * np.exp(-beta)) / (2 * beta * T * T))


def test_measures_accept_a_stack_of_states():
    states = RNG.normal(size=(4, 6, 10))
    assert D.effective_clusters(states).shape == (4,) and D.rank_one_residual(states).shape == (4,)
    assert np.allclose(D.effective_clusters(states), [D.effective_clusters(s) for s in states])
    edges, hist = D.cosine_histogram(states, bins=10)
    assert hist.shape == (4, 10) and np.allclose((hist * np.diff(edges)).sum(-1), 1.0)


def test_uniform_attention_is_doubly_stochastic_rank_one_and_maximally_diffuse():
    T = 7
    u = np.full((3, T, T), 1 / T)
    assert np.allclose(D.doubly_stochastic_gap(u), 0.0)
    assert np.allclose(D.attention_entropy(u), np.log(T))
    assert np.allclose(D.attention_effective_rank(u), 1.0)


def test_a_permutation_has_zero_entropy_full_rank_and_is_doubly_stochastic():
    T = 6
    p = np.eye(T)[RNG.permutation(T)]
    assert D.attention_entropy(p) == pytest.approx(0.0)
    assert D.attention_effective_rank(p) == pytest.approx(T)
    assert D.doubly_stochastic_gap(p) == pytest.approx(0.0)


def test_everyone_attending_to_one_token_is_far_from_doubly_stochastic_and_that_token_leads():
    T = 5
    a = np.zeros((2, T, T))
    a[..., 3] = 1.0  # both heads: every row puts all its weight on token 3
    assert np.allclose(D.doubly_stochastic_gap(a), (T - 1) / T)
    share = D.leaders([None, a, None, a])  # convection sub-steps record no mixing
    assert share[3] == 1.0 and share.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no mixing"):
        D.leaders([None, None])


def test_under_a_causal_mask_a_token_leads_by_more_than_its_place_gives_it():
    T = 8
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # row i: evenly over tokens 0 … i
    assert np.allclose(D.uniform_received(T, causal=True), uniform.sum(0))
    assert np.allclose(D.uniform_received(T, causal=False), 1.0)
    a = uniform.copy()
    a[3:] *= 0.9
    a[3:, 3] += 0.1  # rows that see token 3 give it a tenth more; still row-stochastic
    assert np.allclose(a.sum(-1), 1.0)
    # the plain count gives it to the first token (the mask piles even uniform attention there); for its place,
    # token 3 is the one that receives more than uniform attention would give it
    assert D.leaders([a[None]])[0] == 1.0
    assert D.leaders([a[None]], causal=True)[3] == 1.0


def test_random_softmax_attention_lies_between_the_extremes():
    logits = RNG.normal(size=(4, 9, 9)) * 2
    a = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    h, r, g = D.attention_entropy(a), D.attention_effective_rank(a), D.doubly_stochastic_gap(a)
    assert np.all((0 < h) & (h < np.log(9))) and np.all((1 < r) & (r < 9)) and np.all((0 < g) & (g < 8 / 9))


# ---- one trajectory, a sentence set ---------------------------------------------------------------
def test_relative_step_of_a_doubling_is_one_and_of_a_standstill_zero():
    x = RNG.normal(size=(1, 5, 8))
    assert np.allclose(D.relative_step(np.concatenate([x, 2 * x, 2 * x])), [1.0, 0.0])


def _with_states(traj, states):
    traj.states = np.asarray(states, dtype=np.float32)
    return traj


def test_aggregate_gives_mean_and_spread_over_sentences(synthetic):
    T, d = 4, 8
    one = _with_states(synthetic("transformer", tokens=list("abcd"), d=d, n_layers=2),
                       np.tile(np.ones((1, T, d)), (5, 1, 1)))             # every token the same: 1 cluster
    many = _with_states(synthetic("transformer", tokens=list("wxyz"), d=d, n_layers=2, seed=1),
                        np.tile(np.eye(T, d)[None], (5, 1, 1)))            # orthogonal tokens: T clusters
    agg = D.aggregate([D.measure(one, normalised=False), D.measure(many, normalised=False)], "m")
    assert agg.n == 2 and agg.times.shape == (5,)
    assert np.allclose(agg.state["clusters"].mean, (1 + T) / 2) and np.allclose(agg.state["clusters"].std, (T - 1) / 2)
    assert np.allclose(agg.state["rank_one"].q25, 0.25 * np.sqrt(1 - 1 / T))  # linear between the two sentences
    assert np.allclose(agg.step.mean, 0.0) and agg.step.mean.shape == (4,)
    K, H = 2, 2  # two diffusion sub-steps, two heads each: every head kept, and their mean per sub-step
    assert agg.heads["entropy"].mean.shape == (K, H) and agg.diffusion["entropy"].mean.shape == (K,)
    assert np.allclose(agg.diffusion["ds_gap"].mean, agg.heads["ds_gap"].mean.mean(-1))
    assert agg.histogram.shape == (5, 40)
    rows = agg.rows()
    assert {r["measure"] for r in rows} == {*D.STATE_MEASURES, "step", *D.HEAD_MEASURES}
    assert sum(r["measure"] == "entropy" for r in rows) == K * (H + 1)  # per head, and the mean of heads


def test_one_sentence_has_no_spread_and_different_programs_do_not_mix(synthetic):
    m = D.measure(synthetic("macaron"))
    agg = D.aggregate([m])
    assert np.allclose(agg.state["energy"].std, 0) and np.allclose(agg.state["energy"].mean, m.energy)
    with pytest.raises(ValueError, match="different sub-steps"):
        D.aggregate([m, D.measure(synthetic("transformer"))])


def test_attention_measures_are_shares_of_their_extremes(synthetic):
    traj = synthetic("transformer", tokens=list("abcde"))
    T = 5
    traj.mixing = [None if m is None else np.full_like(m, 1 / T) for m in traj.mixing]  # uniform averaging
    m = D.measure(traj)
    assert np.allclose(m.entropy, 1.0) and np.allclose(m.attention_rank, 1 / T) and np.allclose(m.ds_gap, 0)


def test_roles():
    assert [D.role(t) for t in ["[CLS]", "[SEP]", "[MASK]", ".", ",", "river", "##s", "[UNK:é]", "3"]] == \
        ["[CLS]", "[SEP]", "[MASK]", "punctuation", "punctuation", "word", "word piece", "word", "word"]


def test_leaders_by_token_and_role(synthetic):
    tokens = ["[CLS]", "the", "river", ".", "[SEP]"]
    trajs = [synthetic("transformer", tokens=tokens, seed=s) for s in range(3)]
    for traj in trajs:  # every head of every diffusion sub-step: all attention on [SEP]
        traj.mixing = [None if m is None else np.tile(np.eye(5)[4], (m.shape[0], 5, 1)) for m in traj.mixing]
    table = D.leader_table([D.measure(t) for t in trajs])
    slots = 3 * 3 * 2  # sentences × diffusion sub-steps × heads
    assert table.slots == slots
    sep = next(r for r in table.by_role if r.key == "[SEP]")
    assert sep.leads == slots and sep.expected == pytest.approx(slots / 5) and sep.lift == pytest.approx(5.0)
    assert table.by_token[0].key == "[SEP]"
    word = next(r for r in table.by_role if r.key == "word")
    assert word.occurrences == 6 and word.leads == 0 and word.expected == pytest.approx(2 * slots / 5)
    assert [r.key for r in table.by_role] == ["[CLS]", "[SEP]", "punctuation", "word"]  # ROLES order


# ---- models: batched tracing, programs, experiments -------------------------------------------------
def tiny(scheme="transformer", tokenizer=None, **kw):
    import torch

    import macaron
    torch.manual_seed(0)
    cfg = dict(scheme=scheme, d_model=32, n_layers=3, n_heads=4, ffn_total=64, vocab_size=300, max_len=40,
               dropout=0.0)
    cfg.update(kw)
    return macaron.build(macaron.ModelConfig(**cfg), tokenizer)


SENTENCES = ["the cat sat on the mat .", "i went to the bank to deposit my money .", "the capital of france is paris .",
             "she played the piano while he washed the dishes .", "the cat sat .",
             "after the long meeting , the tired engineers walked slowly to the small cafe"]


@pytest.mark.parametrize("scheme", ["transformer", "macaron"])
def test_batched_tracing_equals_one_sentence_at_a_time(tokenizer, scheme):
    model = tiny(scheme, tokenizer)
    batched = model.trace(SENTENCES, batch_size=4)  # two padded batches, sorted by length inside
    for text, traj in zip(SENTENCES, batched):
        alone = model.trace(text)
        assert traj.text == text and traj.tokens == alone.tokens
        assert np.abs(traj.states - alone.states).max() < 1e-5 and np.abs(traj.final - alone.final).max() < 1e-5
        for a, b in zip(traj.mixing, alone.mixing):
            assert (a is None) == (b is None)
            if a is not None:
                assert a.shape == b.shape and np.abs(a - b).max() < 1e-5  # no weight on padding
    assert sorted(i for i, _ in model.iter_trace(SENTENCES, batch_size=4)) == list(range(len(SENTENCES)))


def test_a_trace_reaches_the_host_once_and_a_batch_row_keeps_no_other(tokenizer):
    """One sentence: its states, final states and matrices are views of what the forward recorded (no second copy
    on the host); in a batch every row's arrays are its own, so no row keeps the others or their padding alive."""
    model = tiny("macaron", tokenizer)
    alone = model.trace(SENTENCES[0])
    arrays = [alone.states, alone.final, *(m for m in alone.mixing if m is not None)]
    assert all(a.base is not None and not a.flags.owndata for a in arrays)
    batched = model.trace(SENTENCES[:2], batch_size=2)  # one batch; the shorter sentence is cut from its padding
    for traj in batched:
        assert traj.states.flags.owndata and traj.final.flags.owndata and traj.states.shape[1] == len(traj.tokens)
        assert all(m.flags.owndata for m in traj.mixing if m is not None)


def test_batches_group_similar_lengths_within_a_token_budget(tokenizer):
    from macaron.network.model import length_batches
    lengths = [5, 30, 6, 7, 100, 8, 31]
    batches = length_batches(lengths, batch_size=3, batch_tokens=64)
    assert sorted(i for b in batches for i in b) == list(range(7))
    assert [[lengths[i] for i in b] for b in batches] == [[5, 6, 7], [8, 30], [31], [100]]  # 100 > 64: alone
    model = tiny("transformer", tokenizer)
    few = model.trace(SENTENCES, batch_tokens=24)  # many small batches, the same trajectories
    for a, b in zip(few, model.trace(SENTENCES)):
        assert np.abs(a.states - b.states).max() < 1e-5


def test_measure_set_is_the_aggregate_of_single_measures(tokenizer):
    model = tiny("macaron", tokenizer)
    agg = D.measure_set(model, SENTENCES, batch_size=3)
    single = D.aggregate([D.measure(model.trace(s)) for s in SENTENCES])
    assert agg.n == len(SENTENCES) and agg.meta["scheme"] == "macaron"
    for k in D.STATE_MEASURES:
        assert np.allclose(agg.state[k].mean, single.state[k].mean, atol=1e-5)
    assert np.allclose(agg.diffusion["entropy"].median, single.diffusion["entropy"].median, atol=1e-5)


def test_programs_of_the_schemes():
    t, m = tiny("transformer"), tiny("macaron")  # Transformer: F = 0, G = 1; Macaron: ½G₁ = 0, F = 1, ½G₂ = 2
    assert t.program() == tuple((i, ((0, 1.0, 1), (1, 1.0, 1))) for i in range(3))
    assert D.as_scheme(t, "lie-trotter") == t.program()                        # its own order
    assert D.as_scheme(t, "strang")[0] == (0, ((1, 0.5, 1), (0, 1.0, 1), (1, 0.5, 1)))   # the same FFN twice, for ½
    assert D.as_scheme(t, "lie-trotter-gf")[0] == (0, ((1, 1.0, 1), (0, 1.0, 1))) == D.reversed_order(t)[0]
    assert D.as_scheme(m, "lie-trotter")[0] == (0, ((1, 1.0, 1), (0, 0.5, 1), (2, 0.5, 1)))  # both half FFNs, in a row
    assert D.reversed_order(m)[0] == (0, ((2, 0.5, 1), (1, 1.0, 1), (0, 0.5, 1)))
    assert D.refined(t.program(), 2)[0] == (0, ((0, 1.0, 2), (1, 1.0, 2)))
    assert D.refined(D.refined(t.program(), 2), 2) == D.refined(t.program(), 4)
    assert D.extended(t, 0) == t.program() and D.extended(t, 2)[-2:] == (t.program()[-1],) * 2
    with pytest.raises(ValueError, match="no order"):
        D.as_scheme(tiny("unsplit"), "strang")


def test_own_order_and_zero_repeats_reproduce_the_model_exactly():
    for scheme in ("transformer", "macaron"):
        model = tiny(scheme)
        ids = [[2, 17, 40, 99, 5, 3], [2, 8, 3]]
        base = model.encode(ids).detach()
        for program in (D.as_scheme(model, "lie-trotter") if scheme == "transformer" else model.program(),
                        D.extended(model, 0)):
            assert (model.encode(ids, program=program).detach() == base).all()


def linear_layer(norm: str = "pre"):
    """A one-layer Transformer whose attention is x ↦ xA and FFN x ↦ xB (row vectors): (model, A, B)."""
    import torch
    from torch import nn

    class Linear(nn.Module):
        def __init__(self, m, diffusion):
            super().__init__()
            self.m, self.diffusion = m, diffusion

        def forward(self, x, *rest):
            y = x @ self.m
            return (y, None) if self.diffusion else y

    model = tiny("transformer", n_layers=1, d_model=8, n_heads=2, ffn_total=16, norm=norm)
    g = torch.Generator().manual_seed(0)
    A, B = (0.3 * torch.randn(8, 8, generator=g) for _ in range(2))
    model.layers[0].ops = nn.ModuleList([Linear(A, True), Linear(B, False)])
    return model, A, B


def test_refining_linear_operators_gives_the_product_of_smaller_euler_steps():
    """With linear operators A (diffusion) and B (convection) and no norms, a Transformer layer is
    x(I + A)(I + B) in row-vector form; each sub-step as n steps of h/n gives x(I + A/n)ⁿ(I + B/n)ⁿ."""
    import torch
    from torch import nn

    model, A, B = linear_layer()
    layer = model.layers[0]
    layer.norms = nn.ModuleList([nn.Identity(), nn.Identity()])
    model.final_norm = nn.Identity()
    ids = [2, 11, 12, 13, 3]
    x = model.embed(torch.tensor([ids]))[0].detach()
    eye = torch.eye(8)
    for n in (1, 2, 4):
        y = model.encode(ids, program=D.refined(model.program(), n)).detach()
        expected = x @ torch.linalg.matrix_power(eye + A / n, n) @ torch.linalg.matrix_power(eye + B / n, n)
        assert torch.allclose(y, expected, atol=1e-5), n


def test_post_ln_refinement_moves_n_times_then_normalises_once():
    """Post-LN, linear operators: each sub-step in n moves is LN(x(I + hA/n)ⁿ), recomputed with
    torch's functional layer_norm and the norms' own weights, not LN after every move."""
    import torch
    import torch.nn.functional as F

    model, A, B = linear_layer("post")
    layer, g = model.layers[0], torch.Generator().manual_seed(1)
    with torch.no_grad():
        for norm in layer.norms:
            norm.weight.uniform_(0.5, 1.5, generator=g)
            norm.bias.normal_(0, 0.3, generator=g)
    ids = [2, 11, 12, 13, 3]
    x = model.embed(torch.tensor([ids]))[0].detach()
    eye = torch.eye(8)
    ln = [lambda y, n=n: F.layer_norm(y, (8,), n.weight, n.bias, n.eps) for n in layer.norms]
    outputs = []
    for n in (1, 2, 4):
        y = model.encode(ids, program=D.refined(model.program(), n)).detach()
        expected = ln[1](ln[0](x @ torch.linalg.matrix_power(eye + A / n, n))
                         @ torch.linalg.matrix_power(eye + B / n, n))
        assert torch.allclose(y, expected, atol=1e-5), n
        outputs.append(y)
    assert not torch.allclose(outputs[0], outputs[1], atol=1e-3)  # the moves did change


def test_traced_program_labels_and_clock():
    model = tiny("transformer", n_layers=2)
    traj = model.trace([2, 5, 6, 3], program=D.refined(D.extended(model, 1), 2))
    assert len(traj.steps) == 3 * 2 and np.allclose(traj.times[-1], 3.0)
    own = model.trace([2, 5, 6, 3])  # both enter layer 1's attention at the embedding: the same weights
    assert np.allclose(traj.mixing[0], own.mixing[0]) and not np.allclose(traj.states[1], own.states[1])
    assert traj.steps[0].label == "layer 1 · diffusion (attention) in 2 Euler moves" and traj.steps[0].time == 0.5
    assert traj.steps[-1].label == "layer 3 · convection (FFN) in 2 Euler moves · layer 2's operators"
    assert traj.meta["program"][-1] == [1, [[0, 1.0, 2], [1, 1.0, 2]]]


@pytest.mark.parametrize("program, said", [
    ("macaron", "a program is"),                  # a scheme's name where the data goes
    (((0, ((0, 1.0, 1),)), (7, ((0, 1.0, 1),))), "layer 7: this model's layers are 0 to 1"),
    (((0, ((5, 1.0, 1),)),), "sub-steps 0 to 1"),
    (((0, ((0, 1.0, 0),)),), "at least one Euler move"),
])
def test_a_program_that_cannot_run_is_refused_with_its_shape(program, said):
    from macaron import InputError

    with pytest.raises(InputError, match=said):
        tiny("transformer", n_layers=2).trace([2, 5, 6, 3], program=program)


def test_standard_experiments_and_their_results(tokenizer):
    model = tiny("transformer", tokenizer)
    exps = D.standard_experiments(model, refine=(2,), extend=(1,))
    names = [e.name for e in exps]
    assert len(set(names)) == len(names) and len({e.program for e in exps}) == len(exps)
    assert names[0] == "as trained" and "sub-steps reversed" not in names  # the same program as "G, then F"
    assert "as Strang–Marchuk: ½G, F, ½G · layers 2–3" in names
    results = D.run_experiments(model, SENTENCES, exps, batch_size=4)
    own = results[0]
    assert own.change.mean == 0 and own.agreement == 1 and own.agreement_masked == 1
    assert own.kl == pytest.approx(0, abs=1e-6)
    assert own.n_sentences == len(SENTENCES) and own.n_masked >= len(SENTENCES)  # at least one mask a sentence
    for r in results[1:]:
        assert r.change.mean > 0 and 0 <= r.agreement <= 1 and r.kl >= -1e-6
    headless = tiny("transformer", tokenizer, mlm_head=False)
    assert np.isnan(D.run_experiments(headless, SENTENCES[:2], exps[:2])[1].agreement)


def test_masks_skip_special_tokens_and_repeat_with_the_seed(tokenizer):
    model = tiny("transformer", tokenizer)
    rows = D.masked_rows(model, SENTENCES, rate=0.3, seed=1)
    assert rows == D.masked_rows(model, SENTENCES, rate=0.3, seed=1)
    mask = tokenizer.token_to_id("[MASK]")
    for inputs, true, picked in rows:
        assert picked and 0 not in picked and len(true) - 1 not in picked  # never [CLS] or [SEP]
        assert [i for i, t in enumerate(inputs) if t == mask] == picked


def test_a_long_run_gets_a_readable_depth_axis(synthetic):
    """A shared model run to 16 T has 96 layers: about a dozen whole-layer ticks, not 97 run together."""
    from macaron.plot import dynamics as P

    for layers, every in ((6, 1), (18, 2), (96, 12)):
        agg = D.aggregate([D.measure(synthetic("transformer", n_layers=layers), normalised=False)], "m")
        ticks = P.over_depth([agg], "clusters").layout.xaxis.tickvals
        assert list(ticks) == list(range(0, layers + 1, every))


def test_layers_that_are_steps_of_one_flow_are_drawn_on_the_flows_clock(synthetic):
    """The ODE pair's 6 layers are steps h = 0.5 of one flow: its curves run to t = 3, as the Particles title
    says, and the axis says so; a model of h = 1 stays on layer time beside it."""
    from macaron.plot import dynamics as P

    traj = synthetic("macaron", n_layers=6)
    ode = D.aggregate([D.measure(traj, normalised=False)], "ode", meta=dict(traj.meta, step=0.5))
    plain = D.aggregate([D.measure(traj, normalised=False)], "plain", meta=dict(traj.meta, step=1.0))
    fig = P.over_depth([ode, plain], "clusters", trained_depth=6)
    curves = [d for d in fig.data if d.mode == "lines+markers"]
    np.testing.assert_allclose(curves[0].x, 0.5 * traj.times)
    np.testing.assert_allclose(curves[1].x, traj.times)
    assert "h = 0.5 / 1" in fig.layout.xaxis.title.text
    assert fig.layout.shapes[0].x0 == 3.0  # the ODE model runs past its trained depth from t = 3
    heat = P.cosine_histograms([ode])
    assert heat.data[0].x[-1] == 3.0 and "h = 0.5" in heat.layout.xaxis.title.text
    diff = P.attention([ode], "entropy")
    np.testing.assert_allclose(diff.data[1].x, 0.5 * ode.diffusion_times)
    assert P.over_depth([plain], "clusters").layout.xaxis.title.text == "layer time t"


def test_the_experiments_change_the_order_once_per_order_of_the_operators():
    """Each registered order is one experiment; the race's control (F, ½G, ½G) acts in Lie–Trotter's order, so it
    adds none (its two half-FFNs are two sub-layers only in a network trained so)."""
    from macaron.schemes import SCHEMES, order_of

    assert order_of(SCHEMES["lie-trotter-halves"].substeps) == order_of(SCHEMES["lie-trotter"].substeps)
    assert order_of(SCHEMES["strang"].substeps) == ("convection", "diffusion", "convection")
    for model in (tiny("transformer", dropout=0.0), tiny("macaron", dropout=0.0)):
        names = [e.name for e in D.standard_experiments(model) if e.kind == "order" and "·" not in e.name]
        assert "as Strang–Marchuk: ½G, F, ½G" in names or model.config.scheme == "macaron"
        assert not any("G in halves" in n for n in names), names


def test_attention_to_the_first_token_against_uniform_attention():
    """Uniform attention over what each row sees gives 1, with or without a causal mask; every row on the first
    token gives T for an encoder and, causal, 1 / mean_i 1/(i + 1) over rows i = 1 … T−1 (by hand for T = 4)."""
    T = 4
    uniform = np.full((1, T, T), 1 / T)
    causal_uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    sink = np.zeros((1, T, T))
    sink[..., 0] = 1.0
    assert D.first_token_lift(uniform, causal=False) == pytest.approx([1.0])
    assert D.first_token_lift(causal_uniform[None], causal=True) == pytest.approx([1.0])
    assert D.first_token_lift(sink, causal=False) == pytest.approx([T])
    assert D.first_token_lift(sink, causal=True) == pytest.approx([1 / ((1 / 2 + 1 / 3 + 1 / 4) / 3)])
