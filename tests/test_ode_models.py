"""Depth as time: shared layer weights, a time step h, tied Macaron halves and the move penalty, each
checked against code that does not go through the option under test (torchdiffeq for the flow, the
recorded states for the move sizes, hand-built compositions for sharing and tying)."""
from __future__ import annotations

import pytest
import torch
from torchdiffeq import odeint

import macaron
from macaron import ModelConfig, build
from macaron.studies.dynamics import refined
from macaron.train.objective import MaskedLM


def tiny(**kw) -> macaron.Model:
    torch.manual_seed(0)
    fields = dict(d_model=32, n_layers=3, n_heads=4, ffn_total=128, vocab_size=64, max_len=32, dropout=0.0)
    return build(ModelConfig(**{**fields, **kw}))


IDS = torch.randint(5, 64, (2, 9), generator=torch.Generator().manual_seed(1))


def test_shared_layers_are_one_set_of_weights_applied_again_and_again():
    model = tiny(shared=True)
    untied = tiny()
    assert all(layer is model.layers[0] for layer in model.layers)
    per_layer = sum(p.numel() for p in untied.layers[0].parameters())
    assert untied.num_parameters() - model.num_parameters() == 2 * per_layer  # 3 layers held once
    # the same as one layer module applied three times by hand
    x = model.embed(IDS)
    for _ in range(3):
        x = model.layers[0](x)
    torch.testing.assert_close(model(IDS), model.final_norm(x))
    # training moves the one tensor, and every step sees the change
    model.train()
    model(IDS).sum().backward()
    assert model.layers[2].ops[0].qkv.weight.grad is model.layers[0].ops[0].qkv.weight.grad


def test_tied_halves_are_one_tensor_and_match_the_transformers_parameters():
    macaron_ = tiny(scheme="macaron", tied_halves=True)
    transformer = tiny()
    layer = macaron_.layers[0]
    assert layer.ops[0] is layer.ops[2] and layer.norms[0] is layer.norms[2]
    assert layer.ops[0].fc1.weight.data_ptr() == layer.ops[2].fc1.weight.data_ptr()
    assert layer.ops[0].fc1.out_features == transformer.layers[0].ops[1].fc1.out_features == 128  # the whole budget
    assert macaron_.num_parameters() == transformer.num_parameters()
    with pytest.raises(ValueError, match="no two convection"):
        ModelConfig(scheme="transformer", tied_halves=True)


@pytest.mark.parametrize("kw", [dict(shared=True), dict(scheme="macaron", tied_halves=True),
                                dict(scheme="macaron", tied_halves=True, shared=True, step=0.25, norm="post")])
def test_a_weight_used_twice_is_saved_once_and_loads_back(tmp_path, kw):
    model = tiny(**kw)
    macaron.save(model, tmp_path / "m")
    from safetensors.torch import load_file
    stored = {k for f in (tmp_path / "m").glob("*.safetensors") for k in load_file(f)}
    assert not any(k.startswith(("layers.1.", "layers.2.")) for k in stored) or not kw.get("shared")
    assert not any(".ops.2." in k for k in stored) or not kw.get("tied_halves")
    loaded = macaron.load(tmp_path / "m")
    assert all(layer is loaded.layers[0] for layer in loaded.layers) == bool(kw.get("shared"))
    torch.testing.assert_close(loaded(IDS), model(IDS))


def test_a_step_scales_every_move_and_finer_moves_converge_to_the_split_flow_at_first_order():
    """Pre-LN, shared, h = 0.25: the model's trace with each sub-step in n Euler moves against each sub-flow
    dx/dt = h·op(LN(x)) solved by torchdiffeq (dopri5), composed in the scheme's order."""
    h = 0.25
    model = tiny(shared=True, step=h, n_layers=4, scheme="macaron", tied_halves=True).double()
    ids = IDS[:1]
    x = model.embed(ids)
    with torch.no_grad():
        for layer in model.layers:
            for k, sub in enumerate(layer.scheme):
                field = lambda t, y, k=k, layer=layer: h * layer.velocity(k, y)[0]  # noqa: E731
                x = odeint(field, x, torch.tensor([0.0, sub.fraction], dtype=x.dtype), rtol=1e-10, atol=1e-12)[-1]
        exact = model.final_norm(x)
        errors = [(model(ids, program=refined(model.program(), n)) - exact).norm().item() for n in (4, 8, 16)]
    assert errors[0] / errors[1] == pytest.approx(2, rel=0.15) and errors[1] / errors[2] == pytest.approx(2, rel=0.15)
    # and h is really the step: the unit-step model moves four times as far in one Euler move
    unit = tiny(shared=True, step=1.0, n_layers=4, scheme="macaron", tied_halves=True).double()
    unit.load_state_dict(model.state_dict())
    y = model.embed(ids)
    torch.testing.assert_close(model.layers[0].move(1, y, 1.0)[0] - y, 0.25 * (unit.layers[0].move(1, y, 1.0)[0] - y))


def test_move_sizes_are_the_recorded_moves_and_the_penalty_adds_them():
    model = tiny(step=0.5, scheme="macaron")  # pre-LN: the recorded displacement is exactly h·op
    sizes, record = [], []
    model(IDS, record=record, sizes=sizes)
    states = [s for s, _ in record]
    by_hand = [((b - a).pow(2).sum(-1) / a.pow(2).sum(-1)).mean() for a, b in zip(states, states[1:])]
    torch.testing.assert_close(torch.stack(sizes), torch.stack(by_hand))
    labels = torch.full_like(IDS, -100)
    labels[:, 3] = IDS[:, 3]
    plain, penalised = MaskedLM(model)(IDS, None, labels), MaskedLM(model, 5.0)(IDS, None, labels)
    torch.testing.assert_close(penalised - plain, 5.0 * torch.stack(by_hand).mean())


def test_norms_without_gain_keep_every_post_ln_state_on_one_sphere():
    model = tiny(norm="post", norm_affine=False, shared=True, step=0.5, scheme="macaron", tied_halves=True,
                 layer_norm_eps=1e-12)  # the default 1e-5 shortens states of small variance (the embedding)
    assert not any("norm" in name for name, _ in model.named_parameters())
    record = []
    model(IDS, record=record)
    for state, _ in record:  # the embedding and every sub-step: mean zero, length √d
        torch.testing.assert_close(state.mean(-1), torch.zeros(state.shape[:-1]), atol=1e-5, rtol=0)
        torch.testing.assert_close(state.norm(dim=-1), torch.full(state.shape[:-1], 32 ** 0.5), atol=1e-3, rtol=0)


@pytest.mark.parametrize("kw, strang_exact", [(dict(tied_halves=True), 3), (dict(), 2)])
def test_splitting_orders_on_a_networks_own_fields_are_the_theorems(tokenizer, kw, strang_exact):
    """Strang's local order 3 needs exact sub-flows and the same G in both halves (Lu et al., Theorem 1);
    untied halves or Euler sub-steps give 2, as Lie–Trotter does. On the sphere (post-LN without gain), with
    the global errors one order lower."""
    from macaron.studies.orders import global_orders, local_orders

    torch.manual_seed(0)
    model = build(ModelConfig(d_model=32, n_layers=2, n_heads=4, ffn_total=128, vocab_size=tokenizer.get_vocab_size(),
                              max_len=64, dropout=0.0, shared=True, step=0.5, scheme="macaron", norm="post",
                              norm_affine=False, **kw), tokenizer)
    text = ["the cat sat ."]
    local = local_orders(model, text, scales=(1.0, 0.5, 0.25), layers=(1,))
    expected = {"lie-trotter · exact": 2, "lie-trotter · euler": 2, "strang · exact": strang_exact, "strang · euler": 2}
    for key, order in expected.items():
        assert local.slope(key, n_boot=50)[0] == pytest.approx(order, abs=0.1), key
    glob = global_orders(model, text, ns=(1, 2, 4)) if kw else None  # once is enough: the slowest part
    for key, order in expected.items() if glob else ():
        assert glob.slope(key, n_boot=50)[0] == pytest.approx(order - 1, abs=0.1), key
    with pytest.raises(ValueError, match="projected flow"):
        local_orders(build(ModelConfig(norm="post", d_model=32, n_heads=4, ffn_total=128, vocab_size=64)), text)


def test_measured_orders_are_saved_read_and_drawn_as_measured(tokenizer, tmp_path):
    """The record the lab, the lesson and the card show: errors at the real steps (s·h locally; T/(L·n)
    globally) whose slopes are the theorem's for this model (tied halves: Strang 3 and 2 with exact sub-flows;
    untied: 2 and 1, as it says it expects), and a record that is damaged, incomplete or of other weights is a
    CheckpointError naming the file, not a traceback."""
    import json

    import numpy as np

    from macaron.formats.folder import CheckpointError
    from macaron.studies import orders

    def ode(tied: bool):
        torch.manual_seed(0)
        return build(ModelConfig(d_model=32, n_layers=2, n_heads=4, ffn_total=128, max_len=64, dropout=0.0,
                                 vocab_size=tokenizer.get_vocab_size(), shared=True, step=0.5, scheme="macaron",
                                 norm="post", norm_affine=False, tied_halves=tied), tokenizer)

    texts = ["the cat sat .", "a dog ran home ."]
    model = ode(tied=True)
    record = json.loads(json.dumps(orders.measure(model, texts, texts)))  # as a file gives it back
    np.testing.assert_allclose(record["gammas"], [0.5, 0.25, 0.125, 0.0625])
    np.testing.assert_allclose(record["horizon"] / np.array(record["n_steps"]), [0.5, 0.25, 0.125, 0.0625])
    assert record["states"] == 4 and record["sentences"] == 2
    theory = {("strang", "exact"): (3, 2), ("strang", "euler"): (2, 1), ("lie-trotter", "exact"): (2, 1),
              ("lie-trotter", "euler"): (2, 1)}
    study = orders.as_study(record)
    for (s, f), (local, whole) in theory.items():
        assert record["expected"][s][f] == [local, whole]
        assert study.local_slope[s][f] == pytest.approx(local, abs=0.15), (s, f)
        assert study.global_slope[s][f] == pytest.approx(whole, abs=0.15), (s, f)
    assert orders.expected(ode(tied=False))["strang"]["exact"] == [2, 1]  # untied halves: Lie–Trotter's order
    assert orders.read(tmp_path) is None  # none measured: nothing to show
    file = tmp_path / orders.FILE
    for bad, said in ((json.dumps(record)[:200], "not valid JSON"),
                      (json.dumps({k: v for k, v in record.items() if k != "states"}), "not a record of measured"),
                      (json.dumps(dict(record, local_slope={})), "not a record of measured")):
        file.write_text(bad)
        with pytest.raises(CheckpointError, match=f"orders.json: {said}"):
            orders.read(tmp_path)
    file.write_text(json.dumps(record))
    assert orders.read(tmp_path, model) == record
    with pytest.raises(CheckpointError, match="measured on other weights"):
        orders.read(tmp_path, ode(tied=False))


def test_the_ode_pair_is_named_by_its_size_and_matches_in_parameters():
    from macaron.train.options import model_configs, parse_args

    args = parse_args(["--models", "transformer-ode,macaron-ode", "--steps", "1", "--norm", "post", "--step", "0.25"])
    configs = model_configs(args, 512)
    t, m = (build(configs[n]) for n in ("transformer-ode", "macaron-ode"))
    assert t.config.shared and m.config.shared and not t.config.tied_halves and m.config.tied_halves
    assert t.config.step == m.config.step == 0.25 and not m.config.norm_affine  # --step overrides the size's h
    assert t.num_parameters() == m.num_parameters() == sum(p.numel() for p in t.layers[0].parameters()) + \
        sum(p.numel() for n, p in t.named_parameters() if not n.startswith("layers."))


def test_the_label_says_what_makes_a_model_an_ode():
    from macaron.plot.style import model_label

    label = model_label(tiny(shared=True, step=0.5, scheme="macaron", tied_halves=True, norm="post", norm_affine=False))
    for words in ("shared by every step", "h = 0.5 to T = 1.5", "halves tied", "sphere"):
        assert words in label
    assert not any(w in model_label(tiny()) for w in ("shared", "h =", "tied", "sphere"))


def test_the_particles_clock_reads_the_flows_time():
    """A model whose layers are steps h of one flow shows time h·depth (after layer 2 of h = 0.25: t = 0.5);
    a unit-step model keeps the layer clock."""
    from macaron.plot import particles
    from macaron.plot.particles import frame_title
    from macaron.studies.analysis import project

    for h, shared in ((0.25, True), (1.0, False)):
        model = tiny(step=h, shared=shared, scheme="macaron")
        traj = model.trace([2, 7, 9, 3])
        end_of_layer_2 = next(k + 1 for k, s in enumerate(traj.steps) if s.time == 2.0)
        title = frame_title(traj, end_of_layer_2)
        assert (f"t = {2 * h:g} (h = {h:g})" if h != 1.0 else "t = 2  ·") in title, title
        ticks = [s["label"] for s in particles(traj, project(traj)).layout.sliders[0].steps if s["label"]]
        assert ticks == [f"{h * k:g}" for k in range(4)]  # the layer boundaries on the same clock: 0, h, 2h, 3h
