"""The bridge measures on trained-model states, against independent computations."""
import numpy as np
import pytest
import torch

import macaron
from macaron.studies import bridge
from macaron.trajectory import Step, Trajectory


def tiny(scheme="macaron", **kw):
    torch.manual_seed(0)
    cfg = dict(scheme=scheme, d_model=32, n_layers=3, n_heads=4, ffn_total=128, vocab_size=300, max_len=24,
               dropout=0.0)
    cfg.update(kw)
    return macaron.build(macaron.ModelConfig(**cfg))


IDS = [2, 8, 9, 10, 11, 12, 3]


DECODER = dict(causal=True, parallel_norms=True, norm_kind="rms", gated_ffn=True, activation="silu", n_kv_heads=2)


@pytest.mark.parametrize("scheme,norm,position,extra", [
    ("macaron", "pre", "learned", {}), ("transformer", "pre", "learned", {}), ("macaron", "post", "learned", {}),
    ("transformer", "post", "learned", {}), ("transformer", "post", "floater", {}),
    ("unsplit", "post", "learned", {}), ("unsplit", "pre", "rotary", DECODER)])
def test_commutator_limit_is_the_lie_bracket_computed_by_autodiff(scheme, norm, position, extra):
    """κ's small-step limit, from compositions of finite sub-steps, against B'(x)A(x) − A'(x)B(x)
    computed with forward-mode autodiff (torch.func.jvp): two independent roads to the same number.
    Post-LN: the bracket of the moves' fields (the norm after each move has no small-step limit). An unsplit
    sub-step (the race's parallel-mini; GPT-NeoX's parallel block, causal, with its two norms) holds both
    operators: its attention and its FFN are the two maps."""
    model = tiny(scheme, norm=norm, position=position, **extra).double()
    positions = model.block_positions(len(IDS))  # FLOATER: each block its own encoding
    traj = model.trace(IDS)
    curves = bridge.commutators(model, traj)
    limit = bridge.commutator_limit(curves["attention∘FFN"])
    states = torch.as_tensor(traj.states, dtype=torch.float64)
    for i, start in enumerate(traj.layer_boundaries()[:-1]):
        (la, a, part_a), (lb, b, part_b) = bridge._pairs(model, i)["attention∘FFN"]
        A, B = model.layers[la], model.layers[lb]
        ha, hb = A.scheme[a].fraction, B.scheme[b].fraction
        fa = lambda y: A.velocity(a, y, position=positions[la], need_weights=True, part=part_a)[0]  # noqa: E731
        fb = lambda y: B.velocity(b, y, position=positions[lb], need_weights=True, part=part_b)[0]  # noqa: E731
        x = states[start][None]
        va, vb = fa(x), fb(x)
        jb_va = torch.func.jvp(fb, (x,), (va,))[1]
        ja_vb = torch.func.jvp(fa, (x,), (vb,))[1]
        bracket = (ha * hb * (jb_va - ja_vb)).norm(dim=-1)
        kappa = bracket * x.norm(dim=-1) / ((ha * va).norm(dim=-1) * (hb * vb).norm(dim=-1))
        assert limit[i] == pytest.approx(kappa.mean().item(), rel=0.02)


def test_a_field_that_does_not_move_commutes_and_two_ffns_do_not():
    model = tiny("macaron")
    with torch.no_grad():  # attention whose output projection is zero: F = 0 commutes with every G
        for layer in model.layers:
            layer.ops[1].out.weight.zero_()
            layer.ops[1].out.bias.zero_()
    curves = bridge.commutators(model, model.trace(IDS))
    assert set(curves) == {"attention∘FFN", "FFN∘FFN (control)"}
    assert np.allclose(curves["attention∘FFN"], 0.0)
    assert curves["FFN∘FFN (control)"].min() > 0.05  # two different FFNs do not commute


def test_norm_move_recomputed_with_numpy():
    """‖LN_k(x) − x‖/‖x‖ and ‖h·K(x)‖/‖x‖ at the state entering each sub-step, from the trace and the
    norms' weights by hand; a pre-LN model is refused (its stream has no norm)."""
    model = tiny("macaron", norm="post")
    with torch.no_grad():  # gains and biases away from 1 and 0, as training leaves them
        for layer in model.layers:
            for norm in layer.norms:
                norm.weight.uniform_(0.5, 1.5)
                norm.bias.normal_(0, 0.3)
    traj = model.trace(IDS)
    got_norm, got_move = bridge.norm_move(model, traj)
    x = np.asarray(traj.states, dtype=np.float64)
    i, want_norm, want_move = 0, [], []
    for layer in model.layers:
        n_row, m_row = [], []
        for k, sub in enumerate(layer.scheme):
            y, ln = x[i], layer.norms[k]
            std = (y - y.mean(-1, keepdims=True)) / np.sqrt(y.var(-1, keepdims=True) + ln.eps)
            out = std * ln.weight.detach().numpy() + ln.bias.detach().numpy()
            n_row.append((np.linalg.norm(out - y, axis=-1) / np.linalg.norm(y, axis=-1)).mean())
            v = layer.velocity(k, torch.as_tensor(y[None], dtype=torch.float32))[0][0].detach().numpy()
            m_row.append((np.linalg.norm(sub.fraction * v, axis=-1) / np.linalg.norm(y, axis=-1)).mean())
            i += 1
        want_norm.append(np.mean(n_row))
        want_move.append(np.mean(m_row))
    assert np.allclose(got_norm, want_norm, rtol=1e-4) and min(want_norm) > 0.05
    assert np.allclose(got_move, want_move, rtol=1e-4)
    with pytest.raises(ValueError, match="pre-LN"):
        bridge.norm_move(tiny("macaron"), tiny("macaron").trace(IDS))
    s = bridge.summary(model, [traj, traj])  # the median of two equal sentences is the sentence's value
    assert np.allclose(s["norm_move"], got_norm) and np.allclose(s["move"], got_move)
    assert "norm_move" not in bridge.summary(tiny(), [traj])


def test_step_ratio_by_hand():
    states = np.zeros((5, 2, 3), dtype=np.float32)
    states[0] = [[1, 0, 0], [0, 2, 0]]
    states[2] = states[0] * 3          # layer 1 triples every particle: ratio 2
    states[4] = states[2]              # layer 2 does not move: ratio 0
    steps = [Step(i, k, 1.0, i + t, "") for i in range(2) for k, t in (("diffusion", 0.5), ("convection", 1.0))]
    traj = Trajectory(["a", "b"], [0, 1], states, steps, [None] * 4, states[-1])
    assert np.allclose(bridge.step_ratio(traj), [2.0, 0.0])


def test_half_ffn_tie_is_exact_for_tied_halves_and_refuses_one_ffn():
    model = tiny("macaron")
    with torch.no_grad():
        for layer in model.layers:
            layer.ops[2].load_state_dict(layer.ops[0].state_dict())
            layer.norms[2].load_state_dict(layer.norms[0].state_dict())
    tie = bridge.half_ffn_tie(model, model.trace(IDS))
    assert np.allclose(tie.relative_difference, 0.0, atol=1e-6) and np.allclose(tie.cosine, 1.0, atol=1e-6)
    untied = bridge.half_ffn_tie(tiny("macaron"), tiny("macaron").trace(IDS))
    assert np.all(untied.relative_difference > 0.1) and np.all(untied.cosine < 0.99)
    with pytest.raises(ValueError, match="two half-FFNs"):
        bridge.half_ffn_tie(tiny("transformer"), tiny("transformer").trace(IDS))


def test_spread_change_signs_by_hand():
    states = np.array([[[0, 0], [2, 0]], [[0.5, 0], [1.5, 0]], [[-1, 0], [3, 0]]], dtype=np.float32)
    steps = [Step(0, "diffusion", 1.0, 0.5, ""), Step(0, "convection", 1.0, 1.0, "")]
    traj = Trajectory(["a", "b"], [0, 1], states, steps, [None, None], states[-1])
    change = bridge.spread_change(traj)
    assert change["diffusion"] == pytest.approx([-0.5]) and change["convection"] == pytest.approx([3.0])


def test_unsettled_flags_curves_still_changing_at_the_smallest_scales():
    curves = np.array([[0.1, 0.2, 0.4, 0.8, 1.6],     # κ ∝ 1/s: no limit in sight (a huge first step)
                       [1.30, 1.37, 1.40, 1.41, 1.42]])  # settled
    assert bridge.unsettled(curves).tolist() == [True, False]


@pytest.mark.parametrize("extra", [{}, DECODER])
def test_the_two_parts_of_an_unsplit_step_add_up_to_it(extra):
    """The attention and the FFN that 3b swaps inside an unsplit sub-step are the whole of it: their velocities
    add up to the sub-step's (with GPT-NeoX's two norms, each reads its own)."""
    from macaron.schemes import CONVECTION, DIFFUSION

    model = tiny("unsplit", norm="pre", **extra)
    x = torch.as_tensor(model.trace(IDS).states[1])[None]
    layer = model.layers[1]
    whole = layer.velocity(0, x)[0]
    parts = layer.velocity(0, x, part=DIFFUSION)[0] + layer.velocity(0, x, part=CONVECTION)[0]
    torch.testing.assert_close(parts, whole)
    assert not torch.allclose(layer.velocity(0, x, part=DIFFUSION)[0], whole, atol=1e-3)
