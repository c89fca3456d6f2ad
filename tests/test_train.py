"""Pre-training: masking, packing, the pre-tokenised cache, the training loop, resume, DDP, bad input.

Everything runs on the tiny fixture corpus with a tokenizer trained here and a 2-layer × 32 model.
"""
from __future__ import annotations

import collections
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import macaron
from macaron.network.model import build
from macaron.sources.milestones import param_checksum
from macaron.train import data as D
from macaron.train import pretrain, trainer
from macaron.train.objective import Schedule
from macaron.train.tokenizer import train_tokenizer
from macaron.train.watch import trainer_pid
from served import free_port

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "tiny_corpus"
TINY = ["--d-model", "32", "--layers", "2", "--heads", "2", "--ffn", "64", "--seq-len", "32", "--batch", "8",
        "--eval-seqs", "16", "--eval-batch", "8", "--log-every", "1", "--threads", "1"]
STATS = {"sources": {"lighthouse": "stories about lighthouses", "particles": "prose about particles"},
         "per_source": {"lighthouse": {"train": {"words": 1200}, "valid": {"words": 100}},
                        "particles": {"train": {"words": 900}, "valid": {"words": 50}}},
         "words": {"train": 2100, "valid": 150, "total": 2250}}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A private copy of the fixture corpus (the cache is written next to it) and a tiny tokenizer."""
    root = tmp_path_factory.mktemp("tiny")
    corpus = root / "corpus"
    shutil.copytree(FIXTURE, corpus)
    (corpus / "stats.json").write_text(json.dumps(STATS))
    # trained once on this corpus and kept: WordPiece training is not deterministic, the tests should be
    shutil.copyfile(FIXTURE.parent / "tiny_tokenizer.json", root / "tokenizer.json")
    return {"root": root, "corpus": corpus, "tokenizer": root / "tokenizer.json"}


def run(tiny, tmp, *extra, name="tiny"):
    """pretrain.main on the tiny corpus; returns (exit code, the model's run folder, its model folder)."""
    run_dir, out = tmp / f"run-{name}", tmp / f"out-{name}"
    argv = ["--corpus", str(tiny["corpus"]), "--tokenizer", str(tiny["tokenizer"]), "--run-dir", str(run_dir),
            "--out", str(out), "--name", name, *TINY, *extra]
    return pretrain.main(argv), run_dir / name, out / name


def rows(file: Path, kind: str) -> list[dict]:
    return [r for r in map(json.loads, file.read_text().splitlines()) if r["type"] == kind]


def specials_of(tiny) -> D.Specials:
    return D.specials(D.load_tokenizer(tiny["tokenizer"]))


# ---- masking ----------------------------------------------------------------------------
def test_masking_statistics_and_specials(tiny):
    sp = specials_of(tiny)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(sp.first_ordinary, sp.vocab_size, (400, 64), generator=g)
    ids[:, 0] = sp.cls
    ids[:, 40] = sp.sep  # a [SEP] between documents
    ids[:, -1] = sp.sep
    ids[::3, 50:] = sp.pad
    inputs, labels = D.mask_tokens(ids, sp, D.generator_for(0, 1))
    special = (ids == sp.cls) | (ids == sp.sep) | (ids == sp.pad)
    chosen = labels != D.IGNORE
    assert not chosen[special].any(), "a special token was chosen for prediction"
    assert torch.equal(inputs[special], ids[special]), "a special token was altered"
    assert torch.equal(labels[chosen], ids[chosen])
    rate = chosen.sum().item() / (~special).sum().item()
    assert abs(rate - 0.15) < 0.01, rate
    n = chosen.sum().item()
    masked = (inputs[chosen] == sp.mask).sum().item() / n
    kept = (inputs[chosen] == ids[chosen]).sum().item() / n
    randomised = 1 - masked - kept
    assert abs(masked - 0.8) < 0.02 and abs(kept - 0.1) < 0.02 and abs(randomised - 0.1) < 0.02, \
        (masked, kept, randomised)
    replaced = inputs[chosen & (inputs != ids) & (inputs != sp.mask)]
    assert (replaced >= sp.first_ordinary).all(), "a random replacement was a special token"
    assert not ((inputs != ids) & ~chosen).any(), "a position was altered without a target"
    # the same key gives the same masks; another step re-draws them
    again_inputs, again_labels = D.mask_tokens(ids, sp, D.generator_for(0, 1))
    assert torch.equal(again_inputs, inputs) and torch.equal(again_labels, labels)
    _, other = D.mask_tokens(ids, sp, D.generator_for(0, 2))
    assert not torch.equal(other, labels)


@pytest.mark.parametrize("masked", [1, 63, 64, 65, 200])
def test_the_head_padded_to_a_few_shapes_gives_the_loss_of_the_masked_positions(masked):
    """MaskedLM pads the head's rows to a multiple of ROWS (oneDNN keeps a kernel per shape): the loss and every
    gradient are those of the cross-entropy over the masked positions alone, computed here from the full head."""
    from macaron import ModelConfig
    from macaron.train.objective import MaskedLM

    torch.manual_seed(0)
    model = build(ModelConfig(d_model=32, n_layers=2, n_heads=4, ffn_total=64, vocab_size=50, max_len=64, dropout=0.0))
    ids = torch.randint(5, 50, (4, 60))
    labels = torch.full_like(ids, D.IGNORE)
    where = torch.cat([torch.zeros(1, dtype=torch.long), 1 + torch.randperm(ids.numel() - 1)[:masked - 1]])  # 0 too:
    # the padding rows repeat position 0, so a target of its own there would be counted again
    labels.view(-1)[where] = ids.view(-1)[where]
    mlm = MaskedLM(model)
    rows, head = [], model.head
    model.head = lambda x: rows.append(len(x)) or head(x)  # what the head is given
    loss = mlm(ids, None, labels)
    del model.head
    assert rows[0] % MaskedLM.ROWS == 0 and 0 <= rows[0] - masked < MaskedLM.ROWS  # a few shapes in all
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    logits = model.head(model(ids)).flatten(0, 1)[where]
    by_hand = torch.nn.functional.log_softmax(logits, -1).gather(1, ids.view(-1)[where, None]).mean().neg()
    by_hand.backward()
    torch.testing.assert_close(loss, by_hand)
    for n, p in model.named_parameters():
        torch.testing.assert_close(grads[n], p.grad, atol=1e-6, rtol=1e-4, msg=n)


# ---- packing ----------------------------------------------------------------------------
@pytest.mark.parametrize("cross", [True, False])
def test_pack_ranges_respects_boundaries(cross):
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 21, 300)
    lengths[17] = 100  # longer than a whole sequence: must be cut
    sent = np.concatenate([[0], np.cumsum(lengths)])
    doc = sent[np.sort(rng.choice(300, 60, replace=False))]
    doc[0] = 0
    L = 32
    ranges = D.pack_ranges(sent, doc, L, cross_documents=cross)
    assert ranges[0, 0] == 0 and ranges[-1, 1] == sent[-1]
    assert (ranges[1:, 0] == ranges[:-1, 1]).all(), "tokens lost or repeated"
    boundaries = set(sent.tolist())
    for a, b in ranges:
        inner_docs = ((doc > a) & (doc < b)).sum()
        assert (b - a) + 2 + inner_docs <= L
        if not cross:
            assert inner_docs == 0, "a sequence crosses a document boundary"
        in_long = sent[17] <= a < sent[18] or sent[17] < b <= sent[18]
        if not in_long:
            assert a in boundaries and b in boundaries, f"cut inside a sentence: {a}, {b}"
    # greedy packing: the next sentence did not fit
    for (a, b), (c, d) in zip(ranges[:-1], ranges[1:]):
        if b in boundaries and not (sent[17] <= b < sent[18]):
            nxt = sent[np.searchsorted(sent, b) + 1]
            new_doc = int(b in set(doc.tolist()))
            inner = ((doc > a) & (doc < b)).sum()
            if cross or not new_doc:
                assert (b - a) + 2 + inner + (nxt - b) + new_doc > L, "packing left room for the next sentence"


def test_packed_rows_on_the_fixture(tiny):
    tok = D.load_tokenizer(tiny["tokenizer"])
    sp = D.specials(tok)
    split = D.pretokenize(tiny["corpus"], tok, "train")
    packed = D.Packed(split, sp, 32)
    text = (tiny["corpus"] / "train-00000.txt").read_text()
    n_docs = len([d for d in text.split("\n\n") if d.strip()])
    assert len(split.doc) == n_docs
    assert split.ids.dtype == np.uint16 and split.n_tokens == len(split.ids)
    seps = 0
    for i in range(len(packed)):
        row = packed.row(i)
        assert row[0] == sp.cls and row[-1] == sp.sep and len(row) <= 32
        assert len(row) == packed.lengths[i]
        assert sp.pad not in row[1:-1] and sp.cls not in row[1:]
        seps += int((row[1:-1] == sp.sep).sum())
    inner = sum(int(((split.doc > a) & (split.doc < b)).sum()) for a, b in packed.ranges)
    assert seps == inner > 0, "documents sharing a sequence are separated by one [SEP] each"
    body = np.concatenate([r[1:-1][r[1:-1] != sp.sep] for r in map(packed.row, range(len(packed)))])
    assert np.array_equal(body, np.asarray(split.ids, dtype=np.int64)), "packing lost or reordered tokens"
    ids, attention_mask = packed.batch([0, 1, 2])
    assert ids.shape[0] == 3 and torch.equal(attention_mask, ids != sp.pad)


def test_pretokenised_cache_is_reused_and_keyed_by_tokenizer(tiny, tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    shutil.copytree(FIXTURE, corpus)
    tok = D.load_tokenizer(tiny["tokenizer"])
    first = D.pretokenize(corpus, tok, "valid")
    assert first.folder.parent == corpus / "cache" and first.folder.name == D.tokenizer_hash(tok)

    def boom(*a, **k):
        raise AssertionError("re-tokenised although the cache was valid")

    monkeypatch.setattr(D, "_encode", boom)
    second = D.pretokenize(corpus, tok, "valid")
    assert np.array_equal(np.asarray(second.ids), np.asarray(first.ids))
    other = train_tokenizer([str(corpus / "train-00000.txt")], vocab_size=300, min_frequency=1)
    with pytest.raises(AssertionError, match="re-tokenised"):
        D.pretokenize(corpus, other, "valid")  # another tokenizer: another cache key
    monkeypatch.undo()
    (corpus / "valid-00000.txt").write_text("A changed shard means new arrays.\n")
    assert D.pretokenize(corpus, tok, "valid").n_tokens < first.n_tokens


def test_data_order_is_model_independent_and_disjoint():
    order = D.Order(100, 8, seed=3)
    assert np.array_equal(order.indices(5), D.Order(100, 8, seed=3).indices(5))
    epoch = np.concatenate([order.indices(s) for s in range(order.per_epoch)])
    assert len(set(epoch.tolist())) == len(epoch) == 96
    assert not np.array_equal(order.indices(0), order.indices(order.per_epoch))  # re-shuffled each epoch
    lengths = np.full(100, 10)
    assert order.steps_for_tokens(800, lengths) == 10 and order.steps_for_tokens(801, lengths) == 11


# ---- training ---------------------------------------------------------------------------
def test_loss_decreases_and_the_model_folder_is_complete(tiny, tmp_path):
    code, run_dir, out = run(tiny, tmp_path, "--steps", "80", "--eval-every", "40", "--lr", "3e-3", "--warmup", "4")
    assert code == 0
    evals = rows(run_dir / "metrics.jsonl", "eval")
    train = rows(run_dir / "metrics.jsonl", "train")
    assert [e["step"] for e in evals] == [0, 40, 80]
    assert evals[-1]["loss"] < evals[1]["loss"] < evals[0]["loss"] - 0.4, evals
    assert np.mean([r["loss"] for r in train[-5:]]) < np.mean([r["loss"] for r in train[:5]]) - 0.4
    assert all(abs(e["perplexity"] - np.exp(e["loss"])) < 1e-6 * e["perplexity"] for e in evals)
    model = macaron.load(out, device="cpu")
    assert model.config.d_model == 32 and model.config.name == "tiny" and model.tokenizer is not None
    card = (out / "README.md").read_text()
    assert f"{evals[-1]['loss']:.4f}" in card and f"{model.num_parameters():,}" in card
    assert "lighthouse" in card and "1,300" in card and "2,250" in card  # sources and words from stats.json
    assert f"{train[-1]['tokens']:,}" in card and "--steps 80" in card
    assert "training_curve.png" in card and (out / "training_curve.png").stat().st_size > 5000
    assert (out / "metrics.jsonl").read_text() == (run_dir / "metrics.jsonl").read_text()
    facts = json.loads((out / "training.json").read_text())
    assert facts["final"]["loss"] < facts["final"]["unigram_loss"] + 1.0 and "context_effect" in facts["final"]


def tensors(folder: Path, pattern: str = "*.safetensors") -> dict[str, torch.Tensor]:
    """Every tensor of the safetensors files in `folder` matching `pattern`, by name."""
    from safetensors.torch import load_file

    files = sorted(folder.glob(pattern))
    assert files, f"no {pattern} in {folder}"
    return {k: v for f in files for k, v in load_file(f).items()}


def assert_same_tensors(a: dict, b: dict):
    assert sorted(a) == sorted(b)
    for name in a:
        assert torch.equal(a[name], b[name]), f"{name} differs"


def test_resume_gives_the_uninterrupted_result(tiny, tmp_path):
    """Stopped at step 5 and resumed, a run ends with the uninterrupted run's weights and optimizer state,
    bit for bit (the weights alone would differ if the optimizer's moments or the schedule were not restored)."""
    args = ["--steps", "8", "--eval-every", "4", "--lr", "2e-3"]
    code, run_a, out_a = run(tiny, tmp_path, *args, "--stop-after", "20", name="a")  # past the budget: no stop
    assert code == 0 and (out_a / "config.json").is_file()
    code, run_b, out_b = run(tiny, tmp_path, *args, "--stop-after", "5", name="b")
    state = run_b.parent / "checkpoint" / "state.json"
    assert code == 0 and not out_b.exists() and state.is_file()
    assert json.loads(state.read_text())["step"] == 5
    before = state.read_text()
    assert run(tiny, tmp_path, *args, "--resume", "--stop-after", "5", name="b")[0] == 0  # there already
    assert state.read_text() == before and not out_b.exists()
    code, _, _ = run(tiny, tmp_path, *args, "--resume", name="b")
    assert code == 0
    assert_same_tensors(tensors(out_a), tensors(out_b))  # the published weights (float32)
    ckpt_a, ckpt_b = run_a.parent / "checkpoint", run_b.parent / "checkpoint"
    assert_same_tensors(tensors(ckpt_a, "a.*.safetensors"), tensors(ckpt_b, "b.*.safetensors"))  # + AdamW moments
    assert ((run_a / "metrics.jsonl").read_text().count('"eval"')
            == (run_b / "metrics.jsonl").read_text().count('"eval"'))
    a, b = rows(run_a / "metrics.jsonl", "train"), rows(run_b / "metrics.jsonl", "train")
    assert [r["loss"] for r in a] == [r["loss"] for r in b] and [r["step"] for r in b] == list(range(1, 9))


def test_equal_budget_means_equal_tokens_for_different_schemes(tiny, tmp_path):
    budget = ["--tokens", "3000", "--eval-every", "1000"]
    seen = {}
    for scheme in ("transformer", "macaron"):
        code, run_dir, _ = run(tiny, tmp_path, *budget, "--scheme", scheme, name=scheme)
        assert code == 0
        last = rows(run_dir / "metrics.jsonl", "train")[-1]
        seen[scheme] = (last["step"], last["tokens"])
    assert seen["transformer"] == seen["macaron"] and seen["macaron"][1] >= 3000


def test_torchrun_two_processes_train_one_masked_lm_as_one_process_would(tiny, tmp_path):
    common = ["--corpus", str(tiny["corpus"]), "--tokenizer", str(tiny["tokenizer"]), *TINY, "--steps", "3",
              "--eval-every", "2", "--dropout", "0", "--lr", "2e-3", "--device", "cpu"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(free_port()), "-m", "macaron.train.pretrain", *common,
           "--run-dir", str(tmp_path / "run-ddp"), "--out", str(tmp_path / "out-ddp"), "--name", "ddp"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((tmp_path / "run-ddp" / "done.json").read_text())["step"] == 3
    ddp = macaron.load(tmp_path / "out-ddp" / "ddp", device="cpu")
    # the trainer compares the ranks' weights before every checkpoint and stops if they differ (the next
    # test): at the end, every rank held the weights rank 0 saved
    agreed = f"the 2 processes hold the same parameters at step 3 (compared before every checkpoint): ddp SHA-256 " \
             f"{param_checksum(ddp)[:16]}"
    assert agreed in done.stdout, done.stdout[-3000:]
    # the two ranks took disjoint halves of each batch: the same as one process accumulating both halves
    code, _, out = run(tiny, tmp_path, *common[4:], "--accum", "2", name="single")
    assert code == 0
    single = macaron.load(out, device="cpu")
    for (name, p), q in zip(ddp.state_dict().items(), single.state_dict().values()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=name)


REPLICAS = """
import sys
from pathlib import Path

import torch
from macaron.train.distributed import Dist
from macaron.train.resume import TrainError

dist = Dist("cpu")
torch.manual_seed(0)
same, drifted = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
with torch.no_grad():
    drifted.weight[2, 3] += 1e-7 * dist.rank  # rank 1's copy: a few float32 steps away
dist.check_replicas({"same": same}, step=1)
try:
    dist.check_replicas({"same": same, "drifted": drifted}, step=2)
    said = "not noticed"
except TrainError as e:
    said = str(e)
Path(sys.argv[1], f"rank{dist.rank}.txt").write_text(said)  # a file each: the two stdouts interleave
dist.close()
"""


def test_torchrun_ranks_whose_parameters_drift_apart_stop_the_run(tmp_path):
    """The check the trainer runs before every checkpoint: every rank learns that rank 1's copy differs."""
    script = tmp_path / "replicas.py"
    script.write_text(REPLICAS)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr",
                           "127.0.0.1", "--master_port", str(free_port()), str(script), str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    for rank in (0, 1):
        said = (tmp_path / f"rank{rank}.txt").read_text()
        assert said.startswith("drifted: at step 2 the parameters of rank(s) [1] differ from rank 0's"), (rank, said)


# ---- bad input --------------------------------------------------------------------------
def corrupt_corpus(tiny, tmp_path, how: str) -> Path:
    corpus = tmp_path / f"corpus-{how}"
    shutil.copytree(FIXTURE, corpus)
    shard = corpus / "train-00001.txt"
    if how == "binary":
        shard.write_bytes(b"some text\n\x00\x01\x02\x00 binary junk")
    elif how == "latin1":
        shard.write_bytes("caf\xe9 au lait\n".encode("latin-1"))
    elif how == "empty":
        shard.write_text("\n\n   \n")
    return corpus


@pytest.mark.parametrize("how", ["binary", "latin1", "empty"])
def test_bad_corpus_shard_is_named_and_nothing_is_written(tiny, tmp_path, capsys, how):
    corpus = corrupt_corpus(tiny, tmp_path, how)
    code = pretrain.main(["--corpus", str(corpus), "--tokenizer", str(tiny["tokenizer"]), *TINY, "--steps", "2",
                          "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "train-00001.txt" in err
    assert {"binary": "corrupt", "latin1": "UTF-8", "empty": "empty"}[how] in err
    assert not (tmp_path / "run").exists() and not (tmp_path / "out").exists()


def test_missing_corpus_and_broken_tokenizer(tiny, tmp_path, capsys):
    code = pretrain.main(["--corpus", str(tmp_path / "nowhere"), "--tokenizer", str(tiny["tokenizer"]), *TINY,
                          "--steps", "1", "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out")])
    assert code == 2 and "nowhere" in capsys.readouterr().err
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    code = pretrain.main(["--corpus", str(tiny["corpus"]), "--tokenizer", str(bad), *TINY, "--steps", "1",
                          "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "out")])
    assert code == 2 and str(bad) in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_resume_refuses_incompatible_checkpoints_and_keeps_them(tiny, tmp_path, capsys):
    code, run_dir, out = run(tiny, tmp_path, "--steps", "2", "--eval-every", "100", name="r")
    assert code == 0
    before = snapshot(run_dir.parent) | {f"out/{k}": v for k, v in snapshot(out).items()}
    capsys.readouterr()
    state = str(run_dir.parent / "checkpoint" / "state.json")
    # a different architecture
    assert run(tiny, tmp_path, "--steps", "4", "--resume", "--d-model", "64", name="r")[0] == 2
    err = capsys.readouterr().err
    assert state in err and "d_model" in err
    # a different tokenizer (vocabulary) than the checkpoint's
    other = tmp_path / "other-tokenizer.json"
    train_tokenizer([str(tiny["corpus"] / "train-00000.txt")], vocab_size=300, min_frequency=1).save(str(other))
    argv = ["--corpus", str(tiny["corpus"]), "--tokenizer", str(other), "--run-dir", str(run_dir.parent),
            "--out", str(out.parent), "--name", "r", *TINY, "--steps", "4", "--resume"]
    assert pretrain.main(argv) == 2
    err = capsys.readouterr().err
    assert state in err and "tokenizer" in err and "vocab_size" in err
    # another batch size changes the data order
    assert run(tiny, tmp_path, "--steps", "4", "--resume", "--batch", "4", name="r")[0] == 2
    assert "batch" in capsys.readouterr().err
    # starting again over an existing run without --resume or --overwrite
    assert run(tiny, tmp_path, "--steps", "4", name="r")[0] == 2
    assert "--resume" in capsys.readouterr().err
    # a damaged checkpoint
    after = snapshot(run_dir.parent) | {f"out/{k}": v for k, v in snapshot(out).items()}
    assert after == before, "a refused run changed files"
    # a longer budget would change the learning-rate schedule: not the same experiment
    assert run(tiny, tmp_path, "--steps", "4", "--resume", name="r")[0] == 2
    assert "total_steps: checkpoint 2 vs now 4" in capsys.readouterr().err
    (run_dir.parent / "checkpoint" / "r.optimizer.safetensors").write_bytes(b"garbage")
    assert run(tiny, tmp_path, "--steps", "2", "--resume", name="r")[0] == 2
    assert "optimizer.safetensors" in capsys.readouterr().err
    assert run(tiny, tmp_path, "--steps", "4", "--resume", name="nothing-here")[0] == 2
    assert "no checkpoint" in capsys.readouterr().err


# ---- packed data, lockstep, a budget that fits the clock, detached -----------------------------
@pytest.fixture(scope="module")
def packed(tiny, tmp_path_factory):
    from macaron.train.pack import pack

    out = tmp_path_factory.mktemp("packed") / "packed"
    pack(tiny["corpus"], tiny["tokenizer"], out, log=lambda m: None)
    return out


def test_packed_folder_holds_the_same_token_ids_compressed(tiny, packed, tmp_path):
    from macaron.train.pack import fit, load_split, read_manifest

    tok = D.load_tokenizer(tiny["tokenizer"])
    for name in ("train", "valid"):
        text = D.pretokenize(tiny["corpus"], tok, name)
        back = load_split(packed, name, tmp_path / "cache")
        assert np.array_equal(np.asarray(back.ids), np.asarray(text.ids))
        assert np.array_equal(back.sent, text.sent) and np.array_equal(back.doc, text.doc)
        assert read_manifest(packed)["splits"][name]["tokens"] == text.n_tokens
    assert (packed / "tokenizer.json").read_text() == tok.to_str() or D.tokenizer_hash(
        D.load_tokenizer(packed / "tokenizer.json")) == D.tokenizer_hash(tok)
    # too little room: whole documents are dropped from the end, and the arrays stay consistent
    train = D.pretokenize(tiny["corpus"], tok, "train")
    full = sum(len(b) for b in fit(train, 1 << 30)[0].values())
    blobs, kept = fit(train, full // 2, log=lambda m: None)
    assert sum(map(len, blobs.values())) <= full // 2 and 0 < kept < len(train.doc)
    # a damaged array is named
    victim = packed.parent / "damaged"
    shutil.copytree(packed, victim)
    (victim / "valid.ids.npy.xz").write_bytes(b"\xfd7zXZ garbage")
    with pytest.raises(D.DataError, match="valid.ids.npy.xz: damaged"):
        load_split(victim, "valid", tmp_path / "cache2")


def test_a_model_trained_in_lockstep_equals_the_same_model_trained_alone(tiny, packed, tmp_path):
    """Lockstep means the same batches and masks in the same order: with dropout off, a model trained
    beside another ends bit-identical to the model trained alone on the same data."""
    common = ["--data", str(packed), *TINY, "--steps", "6", "--eval-every", "3", "--dropout", "0", "--lr", "2e-3"]
    both = pretrain.main([*common, "--models", "transformer-mini,macaron-mini", "--run-dir", str(tmp_path / "both"),
                          "--out", str(tmp_path / "both-out")])
    alone = pretrain.main([*common, "--models", "macaron-mini", "--run-dir", str(tmp_path / "alone"),
                           "--out", str(tmp_path / "alone-out")])
    assert both == alone == 0
    assert_same_tensors(*(tensors(tmp_path / f"{which}-out" / "macaron-mini") for which in ("both", "alone")))
    t, m = (rows(tmp_path / "both" / n / "metrics.jsonl", "train") for n in ("transformer-mini", "macaron-mini"))
    assert [(r["step"], r["tokens"]) for r in t] == [(r["step"], r["tokens"]) for r in m]
    assert [r["loss"] for r in t] != [r["loss"] for r in m]  # two different models, one stream of batches
    cfg = json.loads((tmp_path / "both-out" / "macaron-mini" / "config.json").read_text())
    assert cfg["scheme"] == "macaron" and cfg["d_model"] == 32 and cfg["name"] == "macaron-mini"


def test_a_race_pair_on_packed_data_resumes_to_the_uninterrupted_run(packed, tmp_path):
    """The race's two-model run as `make race` starts it (packed data, post-LN, 40 % masks, dropout, a seed, two
    threads, float16 saves), stopped at step 5 and resumed: both models end with the uninterrupted run's weights and
    AdamW moments bit for bit, and every step's loss is the same (issue 69: the 60 M control collapsed after a
    resume)."""
    recipe = ["--data", str(packed), *TINY[:-2], "--models", "transformer-mini,transformer-halves-mini", "--norm",
              "post", "--mask-rate", "0.4", "--warmup", "3", "--lr", "2e-3", "--steps", "10", "--eval-every", "4",
              "--save-dtype", "float16", "--threads", "2", "--seed", "1", "--device", "cpu"]

    def race(name: str, *extra: str) -> Path:
        assert pretrain.main([*recipe, *extra, "--run-dir", str(tmp_path / name), "--out",
                              str(tmp_path / name / "models")]) == 0
        return tmp_path / name

    straight = race("straight")
    race("resumed", "--stop-after", "5")
    assert json.loads((tmp_path / "resumed" / "checkpoint" / "state.json").read_text())["step"] == 5
    resumed = race("resumed", "--resume")
    for name in ("transformer-mini", "transformer-halves-mini"):
        assert_same_tensors(tensors(straight / "checkpoint", f"{name}.*.safetensors"),
                            tensors(resumed / "checkpoint", f"{name}.*.safetensors"))  # weights and moments
        assert_same_tensors(tensors(straight / "models" / name), tensors(resumed / "models" / name))
        a, b = (rows(r / name / "metrics.jsonl", "train") for r in (straight, resumed))
        assert [(r["step"], r["loss"]) for r in a] == [(r["step"], r["loss"]) for r in b] and len(a) == 10


def test_on_an_amx_cpu_a_pair_steps_at_once_and_each_model_ends_as_trained_alone(tiny, packed, tmp_path, monkeypatch,
                                                                                   capsys):
    """Where the CPU kind trains faster so (AMX, in bf16 and float32), the two models of a lockstep run take their
    steps at the same time on a thread each: each ends bit-identical to the same model trained alone on one thread.
    With dropout (one generator for both) or a model that uses a weight twice in a forward (autocast's one cache of
    casts) they keep turns."""
    from macaron.train import precision as P

    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"amx_bf16", "amx_tile", "avx512_bf16"}))
    where = []  # the thread of every model's step
    step = trainer.Member.step
    monkeypatch.setattr(trainer.Member, "step", lambda m, *a: where.append(threading.current_thread().name) or
                        step(m, *a))
    common = ["--data", str(packed), *TINY, "--dropout", "0", "--lr", "2e-3", "--device", "cpu"]  # even with a GPU
    pair = ["--models", "transformer-mini,macaron-mini"]
    six = ["--steps", "6", "--eval-every", "3"]
    for dtype, kernel in (("bf16", "matmul–softmax"), ("float32", "SDPA")):
        run = [*common, *six, "--precision", dtype]
        assert pretrain.main([*run, *pair, "--threads", "2", "--run-dir", str(tmp_path / dtype / "both"),
                              "--out", str(tmp_path / dtype / "both-out")]) == 0
        assert f"{kernel} attention, eager, the models at once on a thread each" in capsys.readouterr().out
        assert len(where) == 12 and all(w.startswith("model_") for w in where) and len(set(where)) == 2
        assert torch.get_num_threads() == 2  # the count the run set, back after its steps
        where.clear()
        for name in ("transformer-mini", "macaron-mini"):
            assert pretrain.main([*run, "--models", name, "--threads", "1", "--run-dir", str(tmp_path / dtype / name),
                                  "--out", str(tmp_path / dtype / f"{name}-out")]) == 0
            assert_same_tensors(tensors(tmp_path / dtype / "both-out" / name),
                                tensors(tmp_path / dtype / f"{name}-out" / name))
        assert set(where) == {threading.main_thread().name}
        where.clear()
        cards = {w: (tmp_path / dtype / f"{w}-out" / "macaron-mini" / "README.md").read_text()
                 for w in ("both", "macaron-mini")}
        assert f"2 thread(s) per process, the models' steps at once on a thread each, {dtype}" in cards["both"]
        assert f"1 thread(s) per process, {dtype}" in cards["macaron-mini"]
    for why in ([*pair, "--dropout", "0.1"], ["--models", "synthesizer-random-mini,floater-mini"]):
        assert pretrain.main([*common, "--steps", "1", "--eval-every", "1", *why, "--threads", "2", "--overwrite",
                              "--run-dir", str(tmp_path / "turns"), "--out", str(tmp_path / "turns-out")]) == 0
        assert "eager, the models in turn on 2 threads" in capsys.readouterr().out and set(where) == {"MainThread"}


def test_four_models_on_two_threads_step_two_to_a_thread_each_as_trained_alone(tiny, packed, tmp_path, monkeypatch,
                                                                               capsys):
    """The race's seed runs four schemes in one lockstep (issue 47): on a CPU kind that steps models at once, two
    workers of one thread take two models each, in turn, and each model ends bit-identical to itself trained alone
    on one thread. Three models on two threads keep turns (one worker would idle a third of every step)."""
    from macaron.train import precision as P

    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"avx512f", "avx512_bf16"}))  # the Zen 4
    where = []  # (thread, model) of every model's step; list.append is atomic, Counter.update is not
    step = trainer.Member.step
    monkeypatch.setattr(trainer.Member, "step", lambda m, *a: where.append((threading.current_thread().name, m.name))
                        or step(m, *a))
    common = ["--data", str(packed), *TINY, "--dropout", "0", "--lr", "2e-3", "--device", "cpu", "--steps", "4",
              "--eval-every", "2"]
    four = "transformer-mini,macaron-mini,transformer-halves-mini,parallel-mini"
    assert pretrain.main([*common, "--models", four, "--threads", "2", "--run-dir", str(tmp_path / "four"),
                          "--out", str(tmp_path / "four-out")]) == 0
    assert "the models at once 2 to a thread" in capsys.readouterr().out
    assert collections.Counter(name for _, name in where) == dict.fromkeys(four.split(","), 4)
    assert all(thread.startswith("model_") for thread, _ in where) and len({thread for thread, _ in where}) == 2
    assert "at once 2 to a thread" in (tmp_path / "four-out" / "parallel-mini" / "README.md").read_text()
    for name in ("transformer-halves-mini", "parallel-mini"):
        assert pretrain.main([*common, "--models", name, "--threads", "1", "--run-dir", str(tmp_path / name),
                              "--out", str(tmp_path / f"{name}-out")]) == 0
        assert_same_tensors(tensors(tmp_path / "four-out" / name), tensors(tmp_path / f"{name}-out" / name))
    assert pretrain.main([*common, "--models", four.rpartition(",")[0], "--threads", "2", "--run-dir",
                          str(tmp_path / "three"), "--out", str(tmp_path / "three-out")]) == 0
    assert "the models in turn on 2 threads" in capsys.readouterr().out


def test_models_that_call_a_weighted_module_twice_in_a_forward_are_found():
    """Shared layers, tied halves and FLOATER's position ODE call one module more than once a forward; a plain
    Transformer, a Macaron with two half-FFNs and a Random Synthesizer do not."""
    from dataclasses import replace

    from macaron.config import ModelConfig

    plain = ModelConfig(d_model=16, n_layers=2, n_heads=2, ffn_total=32, vocab_size=50, max_len=16, dropout=0.0)
    cases = [(plain, False), (replace(plain, scheme="macaron"), False), (replace(plain, attention="random"), False),
             (replace(plain, shared=True), True), (replace(plain, scheme="macaron", tied_halves=True), True),
             (replace(plain, position="floater"), True)]
    assert [pretrain.reuses_weights(build(cfg)) for cfg, _ in cases] == [reuses for _, reuses in cases]


def test_the_variants_train_on_the_minis_stream_and_load_as_what_they_are(tiny, packed, tmp_path):
    """`make train-variants`: the Random Synthesizer and the FLOATER mini see the minis' batches (the same
    steps and tokens), train their own parts (R, the position ODE), and load as those architectures."""
    common = ["--data", str(packed), *TINY, "--steps", "4", "--eval-every", "2", "--dropout", "0"]
    runs = {}
    for pair in ("transformer-mini,macaron-mini", "synthesizer-random-mini,floater-mini"):
        assert pretrain.main([*common, "--models", pair, "--run-dir", str(tmp_path / pair),
                              "--out", str(tmp_path / pair / "out")]) == 0
        runs.update({n: tmp_path / pair / n for n in pair.split(",")})
    stream = {n: [(r["step"], r["tokens"]) for r in rows(d / "metrics.jsonl", "train")] for n, d in runs.items()}
    assert stream["synthesizer-random-mini"] == stream["floater-mini"] == stream["transformer-mini"]
    out = tmp_path / "synthesizer-random-mini,floater-mini" / "out"
    # on the CPU, where build() below puts the random start, whatever device trained them
    synth, floater = (macaron.load(out / n, device="cpu") for n in ("synthesizer-random-mini", "floater-mini"))
    assert (synth.config.attention, synth.config.position) == ("random", "learned")
    assert (floater.config.attention, floater.config.position) == ("dot", "floater")
    def moved(model, part: str) -> float:  # from the random start of the run's seed (0), rebuilt
        torch.manual_seed(0)
        start = dict(build(model.config).named_parameters())
        return max((p - start[n]).abs().max().item() for n, p in model.named_parameters() if part in n)
    assert moved(synth, "random") > 1e-4 and moved(floater, "floater.") > 1e-4


def test_unknown_model_name_is_explained(packed, tmp_path, capsys):
    code = pretrain.main(["--data", str(packed), *TINY, "--steps", "1", "--models", "macaron-huge",
                          "--run-dir", str(tmp_path / "r"), "--out", str(tmp_path / "o")])
    assert code == 2 and "macaron-huge" in capsys.readouterr().err


def test_fit_minutes_run_detached_fits_the_clock_resumable_and_small_files(packed, tmp_path):
    """Four models in lockstep, detached, with a budget fitted to a clock: tiny widths and a one-minute clock (the
    probe and its compiles take half of it on a loaded 2-core machine)."""
    run_dir = tmp_path / "runs" / "four"
    plan = ["--models", "transformer-small,macaron-small,transformer-mini,macaron-mini", "--data", str(packed),
            "--fit-minutes", "1", "--compile", "--batch", "8", "--lr", "1e-3", "--eval-every", "20",
            "--save-dtype", "float16", "--run-dir", str(run_dir), "--out", str(run_dir / "models")]
    tiny_widths = ["--d-model", "32", "--layers", "2", "--heads", "2", "--ffn", "64", "--seq-len", "32",
                   "--eval-seqs", "16", "--eval-batch", "8", "--threads", "1", "--device", "cpu"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    t0 = time.time()
    started = subprocess.run([sys.executable, "-m", "macaron.train.pretrain", *plan, *tiny_widths, "--detach"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert started.returncode == 0 and "its checks passed, it trains from step 0" in started.stdout, started.stderr
    # --detach returned once the checks passed, not at the end: the trainer is still at work, its run not done
    assert trainer_pid(run_dir) is not None and not (run_dir / "done.json").exists()
    watched = subprocess.run([sys.executable, "-m", "macaron.train.watch", str(run_dir), "--seconds", "170",
                              "--every", "2"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=200)
    wall = time.time() - t0
    log = (run_dir / "train.log").read_text()
    assert watched.returncode == 0 and "done:" in watched.stdout, watched.stdout[-2000:] + log[-3000:]
    budget = json.loads((run_dir / "budget.json").read_text())
    assert budget["steps"] > 1 and budget["models"] == plan[1].split(",")
    assert wall < 60 + 25, f"the run took {wall:.0f} s for a 60 s budget"  # start-up and watch polling
    # every model saw the same batches: the same tokens at every logged step
    seen = {n: [(r["step"], r["tokens"]) for r in rows(run_dir / n / "metrics.jsonl", "train")]
            for n in budget["models"]}
    assert len({json.dumps(v) for v in seen.values()}) == 1 and seen["macaron-small"][-1][0] == budget["steps"]
    for name in budget["models"]:
        folder = run_dir / "models" / name
        files = list(folder.iterdir())
        assert all(f.stat().st_size <= 15 * 2**20 for f in files)
        assert ({"README.md", "config.json", "tokenizer.json", "metrics.jsonl", "training.json"}
                <= {f.name for f in files})
        model = macaron.load(folder, device="cpu")
        assert model.config.name == name and all(p.dtype == torch.float32 for p in model.parameters())
        facts = json.loads((folder / "training.json").read_text())
        assert facts["save_dtype"] == "float16" and facts["trained_with"] == budget["models"]
        assert {"unigram_loss", "context_effect", "context_use", "seq_loss"} <= set(facts["final"])
        assert "context use: loss with the unmasked words replaced by random ones" in (folder / "README.md").read_text()
    # resumable: the checkpoint holds every model and the budget; resuming a finished run changes nothing
    state = json.loads((run_dir / "checkpoint" / "state.json").read_text())
    assert state["step"] == budget["steps"] and state["run"]["total_steps"] == budget["steps"]
    assert sorted(state["members"]) == sorted(budget["models"])


def test_detach_refuses_a_run_folder_whose_trainer_is_still_at_work(tmp_path, capsys, monkeypatch):
    """`make race` again (to resume) while the first process trains must not start a second one on the same
    checkpoint; once that process has ended, it starts."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    busy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "macaron.train.pretrain"])
    cmdline = Path(f"/proc/{busy.pid}/cmdline")
    for _ in range(100):  # until the child has exec'd (before that /proc shows the parent's command)
        if b"macaron.train.pretrain" in cmdline.read_bytes():
            break
        time.sleep(0.05)
    started = []

    class Passes:  # a trainer that passes its checks at once
        pid, returncode = 4321, None

        def __init__(self, env):
            Path(env[trainer.READY]).write_text(json.dumps({"pid": self.pid, "step": 0, "total_steps": 3}))

        def poll(self):
            return None

    monkeypatch.setattr(trainer.subprocess, "Popen", lambda *a, **k: started.append(a) or Passes(k["env"]))
    argv = ["--models", "transformer-mini", "--tokens", "1e3", "--run-dir", str(run_dir), "--detach"]
    try:
        (run_dir / "train.pid").write_text(f"{busy.pid}\n")
        assert pretrain.main(argv) == 2 and not started
        err = capsys.readouterr().err
        assert f"a trainer (pid {busy.pid}) is still at work on {run_dir}" in err and f"kill {busy.pid}" in err
    finally:
        busy.kill()
        busy.wait()
    assert pretrain.main(argv) == 0 and len(started) == 1  # the pid is gone: the run starts (or resumes)
    assert "pid 4321" in capsys.readouterr().out and not (run_dir / "train.ready").exists()


def test_a_detached_start_says_whether_it_started(tiny, tmp_path, capsys):
    """--detach waits for the trainer's checks: a resume refused after the data is read (its checkpoint has another
    budget) is --detach's own exit code and message, not only a line in train.log; a start that passes them says
    where it trains from and where later errors show."""
    first = ["--steps", "2", "--eval-every", "2"]
    assert run(tiny, tmp_path, *first, name="d")[0] == 0  # a finished run of 2 steps
    capsys.readouterr()
    code, model_dir, _ = run(tiny, tmp_path, "--steps", "4", "--eval-every", "2", "--resume", "--detach", name="d")
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "total_steps: checkpoint 2 vs now 4" in err, err
    run_dir = model_dir.parent
    assert "total_steps: checkpoint 2 vs now 4" in (run_dir / "train.log").read_text()
    code, _, _ = run(tiny, tmp_path, *first, "--resume", "--detach", name="d")
    out = capsys.readouterr().out
    assert code == 0 and "its checks passed, it trains from step 2 of 2" in out, out
    assert f"python -m macaron.train.watch {run_dir} (later errors show there)" in out
    pid = int((run_dir / "train.pid").read_text())
    for _ in range(1200):  # that trainer ends at once (the run is at its budget): reap it before the next test
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
        except ChildProcessError:  # reaped already
            break
        time.sleep(0.1)
    assert not (run_dir / "train.ready").exists()


# ---- held-out evaluation: baselines that tell reading context from counting words -------------
def _held_out(tiny):
    tok = D.load_tokenizer(tiny["tokenizer"])
    sp = D.specials(tok)
    split = D.pretokenize(tiny["corpus"], tok, "valid")
    return tok, sp, D.held_out_batches(D.Packed(split, sp, 32), 16, 8, 1234)


def test_shuffled_context_moves_only_unmasked_words(tiny):
    from macaron.train.evaluate import shuffle_context

    _, sp, batches = _held_out(tiny)
    moved = 0
    for (a, attention_mask, lab), (b, attention_mask2, lab2) in zip(batches, shuffle_context(batches, sp)):
        assert torch.equal(attention_mask, attention_mask2) and torch.equal(lab, lab2)
        fixed = (lab != D.IGNORE) | ~attention_mask | (a == sp.cls) | (a == sp.sep)
        assert torch.equal(a[fixed], b[fixed]), "a target, [CLS], [SEP] or padding moved"
        for r in range(len(a)):  # the same words, in another order
            assert sorted(a[r][~fixed[r]].tolist()) == sorted(b[r][~fixed[r]].tolist())
        moved += int((a != b).sum())
    assert moved > 0


def test_replaced_context_changes_only_unmasked_words_into_ordinary_ones(tiny):
    from macaron.train.evaluate import replace_context

    _, sp, batches = _held_out(tiny)
    changed = context = 0
    for (a, attention_mask, lab), (b, attention_mask2, lab2) in zip(batches, replace_context(batches, sp)):
        assert torch.equal(attention_mask, attention_mask2) and torch.equal(lab, lab2)
        fixed = (lab != D.IGNORE) | ~attention_mask | (a == sp.cls) | (a == sp.sep)
        assert torch.equal(a[fixed], b[fixed]), "a target, [CLS], [SEP] or padding changed"
        assert bool((b[~fixed] >= sp.first_ordinary).all()) and bool((b[~fixed] < sp.vocab_size).all())
        changed, context = changed + int((a != b).sum()), context + int((~fixed).sum())
    assert changed > context / 2 > 0, "the context was not replaced"


def test_context_effect_is_zero_for_a_model_that_cannot_read_context(tiny):
    from macaron.train.evaluate import evaluate

    tok, sp, batches = _held_out(tiny)
    train_ids = D.pretokenize(tiny["corpus"], tok, "train").ids
    torch.manual_seed(0)
    model = macaron.build(macaron.ModelConfig(d_model=32, n_layers=2, n_heads=2, ffn_total=64, dropout=0.0,
                                              vocab_size=sp.vocab_size, max_len=32), tok)
    with torch.no_grad():  # sharp attention, so that even an untrained model depends on its context
        for layer in model.layers:
            for op in layer.ops:
                if hasattr(op, "qkv"):
                    op.qkv.weight.normal_(0, 0.5)
                    op.out.weight.normal_(0, 0.5)
    reading = evaluate(model, batches, sp, train_ids)
    reads = reading["context_effect"]
    with torch.no_grad():  # attention off: every particle moves on its own, blind to the others
        for layer in model.layers:
            for op in layer.ops:
                if hasattr(op, "qkv"):
                    op.out.weight.zero_()
                    op.out.bias.zero_()
    blind = evaluate(model, batches, sp, train_ids)
    assert abs(blind["context_effect"]) < 1e-6 < 1e-3 < abs(reads)
    assert abs(blind["context_use"]) < 1e-6 < 1e-3 < abs(reading["context_use"])
    # the unigram baseline, recomputed by hand from the training counts
    counts = np.bincount(np.asarray(train_ids, np.int64), minlength=sp.vocab_size) + 1.0
    targets = np.concatenate([lab[lab != D.IGNORE].numpy() for _, _, lab in batches])
    assert blind["unigram_loss"] == pytest.approx(float(-np.log(counts[targets] / counts.sum()).mean()))
    assert sum(blind["seq_targets"]) == blind["targets"] == len(targets)


def test_bootstrap_difference_is_centred_and_brackets_a_shift():
    from macaron.train.evaluate import Scores, bootstrap_difference

    rng = np.random.default_rng(0)
    n = rng.integers(5, 20, 300)
    la = rng.gamma(2.0, 1.0, 300) * n
    a = Scores(la.sum() / n.sum(), 0.0, 0.0, int(n.sum()), la.tolist(), n.tolist())
    shifted = Scores(0, 0, 0, int(n.sum()), (la + 0.25 * n).tolist(), n.tolist())  # 0.25 nats worse per token
    d = bootstrap_difference(shifted, a)
    assert d["difference"] == pytest.approx(0.25) and d["ci95"][0] == pytest.approx(0.25)
    noisy = Scores(0, 0, 0, int(n.sum()), (la + rng.normal(0.1, 1.0, 300) * n).tolist(), n.tolist())
    d = bootstrap_difference(noisy, a)
    assert d["ci95"][0] < d["difference"] < d["ci95"][1] and d["ci95"][1] - d["ci95"][0] > 0.05
    with pytest.raises(ValueError, match="different validation sets"):
        bootstrap_difference(a, Scores(0, 0, 0, 1, [1.0], [1]))


# ---- precision, masking options, milestones ------------------------------------------------
def test_precision_follows_the_cpu_flags(tmp_path):
    from macaron.train import precision as P

    cpu = torch.device("cpu")
    zen3 = tmp_path / "zen3"  # an x86 CPU with AVX2 only, and an Arm one with BF16
    zen3.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n\n"
                    "processor\t: 1\nflags\t\t: fpu sse2 avx avx2 fma\n")
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n")
    assert P.cpu_flags.__wrapped__(str(zen3)) == {"fpu", "sse2", "avx", "avx2", "fma"}
    assert P.cpu_flags.__wrapped__(str(tmp_path / "absent")) == frozenset()
    assert P.choose(cpu, "auto", P.cpu_flags.__wrapped__(str(zen3))) == torch.float32
    assert P.choose(cpu, "auto", P.cpu_flags.__wrapped__(str(arm))) == torch.bfloat16
    assert P.choose(cpu, "auto", frozenset({"avx512f", "avx512_bf16"})) == torch.bfloat16
    assert P.choose(cpu, "auto", frozenset({"amx_bf16"})) == torch.bfloat16
    assert P.choose(cpu, "float32", frozenset({"avx512_bf16"})) == torch.float32  # forced
    assert P.choose(cpu, "bf16", frozenset()) == torch.bfloat16
    with pytest.raises(ValueError, match="float32"):
        P.choose(cpu, "fp8")
    amx = frozenset({"amx_bf16", "amx_tile", "avx512_bf16"})  # SDPA's bf16 backward is slow there: matmul attention
    assert P.attention(cpu, torch.bfloat16, 128, amx) == "matmul"
    assert P.attention(cpu, torch.bfloat16, 512, amx) == "sdpa"  # SDPA's is faster for long sequences
    assert P.attention(cpu, torch.float32, 128, amx) == "sdpa"
    zen4 = frozenset({"avx512f", "avx512_bf16"})  # matmul attention measured faster there too (issue 47)
    assert P.attention(cpu, torch.bfloat16, 128, zen4) == "matmul"
    assert P.attention(cpu, torch.bfloat16, 128, frozenset({"bf16"})) == "sdpa"  # Arm BF16: not measured
    assert P.attention(torch.device("cuda"), torch.bfloat16, 128, amx) == "sdpa"
    # two models at once, a thread each: measured faster with AMX (bf16 and float32) and on the Zen 4
    assert P.models_at_once(cpu, amx) and P.models_at_once(cpu, zen4)
    assert not P.models_at_once(torch.device("cuda"), amx)
    assert not P.models_at_once(cpu, frozenset({"bf16"})) and not P.models_at_once(cpu, frozenset({"avx2"}))
    a, b = torch.randn(4, 8), torch.randn(8, 3)
    with P.autocast(cpu, torch.bfloat16):
        assert (a @ b).dtype == torch.bfloat16
    with P.autocast(cpu, torch.float32):
        assert (a @ b).dtype == torch.float32


def test_float32_path_on_a_cpu_without_bf16(tiny, tmp_path, monkeypatch, capsys):
    """A CPU without native bf16 trains in float32 and says so; the card records the precision."""
    from macaron.train import precision as P

    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"avx2", "fma"}))
    code, run_dir, out = run(tiny, tmp_path, "--steps", "3", "--eval-every", "3", "--device", "cpu")  # even with a GPU
    assert code == 0
    assert "precision: float32: this CPU has no native bf16" in capsys.readouterr().out
    assert json.loads((out / "training.json").read_text())["precision"] == "float32"
    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"bf16"}))  # Arm BF16: SDPA
    code, _, out = run(tiny, tmp_path, "--steps", "3", "--eval-every", "3", "--precision", "float32", "--device", "cpu",
                       name="forced")
    assert code == 0 and json.loads((out / "training.json").read_text())["precision"] == "float32"


def test_a_run_resumed_on_another_cpu_records_each_precision(tiny, tmp_path, monkeypatch):
    """Started where bf16 is native, resumed (or warm-started) where it is not: the card says which steps
    ran in which precision instead of naming the last one for the whole run."""
    from macaron.train import precision as P
    from macaron.train import publish

    args = ["--steps", "6", "--eval-every", "3", "--keep-every", "3", "--device", "cpu"]  # CPUs, even with a GPU
    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"bf16"}))  # Arm BF16: SDPA
    assert run(tiny, tmp_path, *args, "--stop-after", "3", name="r")[0] == 0
    shipped = tmp_path / "shipped"
    publish.publish(tmp_path / "run-r", shipped, unfinished=True)  # step 3 of 6
    assert json.loads((shipped / "r" / "training.json").read_text())["precisions"] == [[0, "bf16", "sdpa"]]
    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"avx2"}))
    code, _, out = run(tiny, tmp_path, *args, "--resume", name="r")
    assert code == 0
    facts = json.loads((out / "training.json").read_text())
    assert facts["precisions"] == [[0, "bf16", "sdpa"], [3, "float32", "sdpa"]] and facts["precision"] == "float32"
    assert "bf16 with SDPA attention from step 0, float32 with SDPA attention from step 3 |" in \
        (out / "README.md").read_text()
    shutil.rmtree(tmp_path / "run-r")  # a new machine: the published milestone of step 3 is all there is
    code, _, out = run(tiny, tmp_path, *args, "--warm-start", str(shipped), "--rewarm", "1", name="r")
    assert code == 0
    facts = json.loads((out / "training.json").read_text())
    assert facts["precisions"] == [[0, "bf16", "sdpa"], [3, "float32", "sdpa"]]
    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"bf16"}))  # Arm BF16: SDPA
    code, _, out = run(tiny, tmp_path, *args, name="same")
    assert code == 0 and "thread(s) per process, bf16 with SDPA attention |" in (out / "README.md").read_text()


def test_on_an_amx_cpu_bf16_trains_with_matmul_attention_and_says_so(tiny, tmp_path, monkeypatch, capsys):
    """The CPU kind picks the attention kernel; the log and the card name it, and a run resumed on another kind
    records the change from the step it happened."""
    from macaron.network import operators
    from macaron.train import precision as P

    trained = []  # SDPA calls with gradients flowing: none where the trainer took matmul attention
    sdpa = operators.F.scaled_dot_product_attention
    monkeypatch.setattr(operators.F, "scaled_dot_product_attention",
                        lambda *a, **k: trained.append(torch.is_grad_enabled()) or sdpa(*a, **k))
    args = ["--steps", "4", "--eval-every", "2", "--device", "cpu"]  # a CPU, even with a GPU
    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"amx_bf16", "amx_tile", "avx512_bf16"}))
    assert run(tiny, tmp_path, *args, "--stop-after", "2", name="r")[0] == 0
    assert "fused AdamW, matmul–softmax attention" in capsys.readouterr().out
    assert not any(trained) and trained  # evaluations still took SDPA
    monkeypatch.setattr(P, "cpu_flags", lambda *a: frozenset({"bf16"}))  # Arm BF16: SDPA
    code, _, out = run(tiny, tmp_path, *args, "--resume", name="r")
    assert code == 0 and "fused AdamW, SDPA attention" in capsys.readouterr().out and any(trained)
    assert json.loads((out / "training.json").read_text())["precisions"] == [[0, "bf16", "matmul"], [2, "bf16", "sdpa"]]
    assert "bf16 with matmul–softmax attention from step 0, bf16 with SDPA attention from step 2 |" in \
        (out / "README.md").read_text()


def test_cards_of_runs_that_recorded_no_attention_kernel_say_sdpa():
    """Facts written before the kernel was recorded ([step, precision] entries, or one "precision"), as the shipped
    models' are, were trained with SDPA: the card says so, and a run resumed on an AMX CPU adds its own entry."""
    from macaron.train import card

    assert card.precision_words({"precision": "bf16"}) == "bf16 with SDPA attention"
    legacy = {"precisions": [[0, "bf16"], [7500, "float32"], [9000, "bf16", "matmul"]]}
    assert card.precisions(legacy)[:2] == [[0, "bf16", "sdpa"], [7500, "float32", "sdpa"]]
    assert card.precision_words(legacy) == ("bf16 with SDPA attention from step 0, float32 with SDPA attention from "
                                        "step 7,500, bf16 with matmul–softmax attention from step 9,000")
    shipped = json.loads((ROOT / "pretrained" / "transformer-mini" / "training.json").read_text())
    assert card.precision_words(shipped).endswith("with SDPA attention")


def test_weights_published_before_a_config_field_existed_still_warm_start(tiny, tmp_path):
    """A field added to ModelConfig later (at a default that keeps the model as it was) is no difference: the
    shipped models' training.json files were written before `shared`, `step` and `tied_halves` existed."""
    from macaron.train import publish

    args = ["--steps", "4", "--eval-every", "2", "--keep-every", "2", "--device", "cpu"]
    assert run(tiny, tmp_path, *args, "--stop-after", "2", name="r")[0] == 0
    shipped = tmp_path / "shipped"
    publish.publish(tmp_path / "run-r", shipped, unfinished=True)  # step 2 of 4
    facts = json.loads((shipped / "r" / "training.json").read_text())
    for field in ("shared", "step", "tied_halves"):
        del facts["config"][field]
    (shipped / "r" / "training.json").write_text(json.dumps(facts))
    shutil.rmtree(tmp_path / "run-r")
    assert run(tiny, tmp_path, *args, "--warm-start", str(shipped), "--rewarm", "1", name="r")[0] == 0
    facts["config"]["d_model"] = 48  # a real difference is still refused
    (shipped / "r" / "training.json").write_text(json.dumps(facts))
    shutil.rmtree(tmp_path / "run-r")
    assert run(tiny, tmp_path, *args, "--warm-start", str(shipped), "--rewarm", "1", name="r")[0] != 0


def test_mask_rate_and_mask_only_reach_the_batches(tiny, tmp_path, monkeypatch):
    seen = []
    real = pretrain.mask_tokens

    def spy(ids, sp, g, *args):
        inputs, labels = real(ids, sp, g, *args)
        seen.append((ids, inputs, labels, sp))
        return inputs, labels

    monkeypatch.setattr(pretrain, "mask_tokens", spy)
    assert run(tiny, tmp_path, "--steps", "6", "--eval-every", "6", "--mask-rate", "0.4", "--mask-only")[0] == 0
    ids = torch.cat([s[0].flatten() for s in seen])
    inputs = torch.cat([s[1].flatten() for s in seen])
    labels = torch.cat([s[2].flatten() for s in seen])
    sp = seen[0][3]
    chosen = labels != D.IGNORE
    maskable = ~torch.isin(ids, torch.tensor(sp.never_masked))
    assert abs(chosen.sum() / maskable.sum() - 0.4) < 0.05
    assert bool((inputs[chosen] == sp.mask).all())  # every target masked, none random or kept


def test_milestones_are_loadable_folders_with_their_figures(tiny, tmp_path):
    code, run_dir, out = run(tiny, tmp_path, "--steps", "9", "--eval-every", "2", "--keep-every", "4", "--lr", "2e-3")
    assert code == 0
    kept = sorted((run_dir / "milestones").iterdir())
    assert [k.name for k in kept] == ["step-000004", "step-000008", "step-000009"]  # the final weights as well
    evals = {e["step"]: e for e in rows(run_dir / "metrics.jsonl", "eval")}
    facts = json.loads((out / "training.json").read_text())
    for k in kept:
        meta = json.loads((k / "training.json").read_text())
        assert meta["final"]["loss"] == evals[meta["steps"]]["loss"] and "context_effect" in meta["final"]
        assert meta["init_sha256"] == facts["init_sha256"] and meta["budget_steps"] == 9
        in_progress = f"from step {meta['steps']} of 9 steps" in (k / "README.md").read_text()
        assert in_progress == (meta["steps"] < 9)  # the card says how far it is
        assert rows(k / "metrics.jsonl", "eval")[-1]["step"] == meta["steps"]
    final = macaron.load(kept[-1], device="cpu")
    trained = macaron.load(out, device="cpu")
    for (k, a), b in zip(final.state_dict().items(), trained.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-3, rtol=1e-3), k  # float16 copy of the same weights
    torch.manual_seed(0)  # the run's --seed: the random start is rebuilt, and the checksum checks it
    assert param_checksum(macaron.build(final.config)) == facts["init_sha256"]
    torch.manual_seed(1)
    assert param_checksum(macaron.build(final.config)) != facts["init_sha256"]


def test_warm_start_rejoins_the_data_order_at_the_published_step(tiny, tmp_path):
    """A new machine: the run folder is gone, the published milestone is not. The warm-started run goes on
    at the recorded step with the same batches as the uninterrupted run, and ends close to it."""
    from macaron.train import publish

    args = ["--steps", "40", "--eval-every", "10", "--keep-every", "10", "--lr", "3e-3", "--warmup", "4"]
    code, run_a, out_a = run(tiny, tmp_path, *args, name="a")
    assert code == 0
    code, run_b, _ = run(tiny, tmp_path, *args, "--stop-after", "20", name="b")
    assert code == 0
    shipped = tmp_path / "shipped"
    publish.publish(run_b.parent, shipped, unfinished=True)  # step 20 of 40: committed as it goes
    assert json.loads((shipped / "b" / "training.json").read_text())["steps"] == 20
    shutil.rmtree(run_b.parent)  # the machine is new
    code, run_c, out_c = run(tiny, tmp_path, *args, "--warm-start", str(shipped), "--rewarm", "3", name="b")
    assert code == 0
    a, c = rows(run_a / "metrics.jsonl", "train"), rows(run_c / "metrics.jsonl", "train")
    assert [r["step"] for r in c] == list(range(1, 41))  # the published curve goes on
    assert [r["tokens"] for r in c] == [r["tokens"] for r in a]  # the same batches, in the same order
    assert [r["loss"] for r in c[:20]] == [r["loss"] for r in a[:20]]
    lr = [r["lr"] for r in c[20:23]]  # the rate after steps 21, 22, 23: 1/3, 2/3, 3/3 of the schedule, then on
    assert abs(lr[0] - 2 / 3 * a[20]["lr"]) < 1e-12 and lr[1:] == [r["lr"] for r in a[21:23]]
    final_a = json.loads((out_a / "training.json").read_text())["final"]["loss"]
    facts = json.loads((out_c / "training.json").read_text())
    assert abs(facts["final"]["loss"] - final_a) < 0.25 and facts["warm_starts"][0]["step"] == 20
    assert "warm start | at step 20" in (out_c / "README.md").read_text()
    other = ["--steps", "40", "--eval-every", "10", "--lr", "3e-3", "--mask-rate", "0.3"]
    shutil.rmtree(run_c.parent)
    assert run(tiny, tmp_path, *other, "--warm-start", str(shipped), name="b")[0] == 2  # another experiment


def test_a_finished_run_goes_on_in_a_second_phase(tiny, tmp_path):
    """--new-phase: a finished run re-warms to the new peak and decays to its new budget; a plain resume
    after a stop keeps that budget; the card records both phases; a budget that ends before the run's
    step is refused."""
    first = ["--steps", "8", "--eval-every", "4", "--lr", "3e-3", "--warmup", "2"]
    assert run(tiny, tmp_path, *first, name="p")[0] == 0
    assert run(tiny, tmp_path, *first, "--resume", "--new-phase", "--steps", "6", name="p")[0] == 2
    second = ["--resume", "--new-phase", "--steps", "16", "--lr", "1e-3", "--rewarm", "2", "--stop-after", "12"]
    code, run_dir, out = run(tiny, tmp_path, *first, *second, name="p")
    assert code == 0 and not (run_dir.parent / "done.json").exists()
    assert run(tiny, tmp_path, *first, "--resume", name="p")[0] == 0  # the Makefile's first budget: ignored
    lr = {r["step"]: r["lr"] for r in rows(run_dir / "metrics.jsonl", "train")}  # the rate of the NEXT step
    assert [r["step"] for r in rows(run_dir / "metrics.jsonl", "train")] == list(range(1, 17))
    # first phase: step s (0-based) at 3e-3·(s+1)/2 for s < 2, then linearly to 0 at step 8
    assert (lr[1] == pytest.approx(3e-3) and lr[5] == pytest.approx(3e-3 * (1 - 3 / 6))
            and lr[7] == pytest.approx(3e-3 / 6))
    # second phase from step 8: 1e-3·1/2, 1e-3 (row 8 was logged by the first phase: its end, 0), then
    # linearly from step 10 to 0 at step 16
    assert lr[8] == 0 and lr[9] == pytest.approx(1e-3) and lr[10] == pytest.approx(1e-3)
    assert lr[12] == pytest.approx(1e-3 * (1 - 2 / 6)) and lr[15] == pytest.approx(1e-3 / 6)
    facts = json.loads((out / "training.json").read_text())
    assert (facts["steps"], facts["budget_steps"], facts["lr"]) == (16, 16, pytest.approx(3e-3))
    assert [(p["step"], p["total_steps"]) for p in facts["phases"]] == [(0, 8), (8, 16)]
    card = (out / "README.md").read_text()
    assert "| phase 1 | from step 0" in card and "| phase 2 | from step 8" in card and "lr 0.001" in card
    schedule = Schedule("linear", 2, 16)
    schedule.phases = json.loads((out / "training.json").read_text())["phases"]
    schedule.phases = [dict(ph, peak=ph["lr"] / 3e-3) for ph in schedule.phases]
    assert schedule(8) == pytest.approx(1 / 3 / 2)  # half-way up the warm-up to 1e-3, of the base 3e-3


def test_a_second_phase_on_a_new_machine_and_an_unfinished_run(tiny, tmp_path):
    """--warm-start --new-phase (the published run, no checkpoint): one linear warm-up to the new peak,
    whatever --lr the first phase had; phase 1 is recorded as it ran. A run not yet at its budget refuses
    a new phase. A checkpoint written before phases existed resumes as before."""
    from macaron.train import publish

    first = ["--steps", "8", "--eval-every", "4", "--keep-every", "4", "--lr", "3e-3", "--warmup", "2"]
    code, run_dir, _ = run(tiny, tmp_path, *first, name="w")
    assert code == 0
    publish.publish(run_dir.parent, tmp_path / "shipped")
    shutil.rmtree(run_dir.parent)
    code, run_dir, out = run(tiny, tmp_path, *first, "--warm-start", str(tmp_path / "shipped"), "--new-phase",
                             "--steps", "20", "--lr", "1e-3", "--rewarm", "4", name="w")
    assert code == 0
    lr = {r["step"]: r["lr"] for r in rows(run_dir / "metrics.jsonl", "train")}
    assert [lr[s] for s in (9, 10, 11)] == pytest.approx([1e-3 * 2 / 4, 1e-3 * 3 / 4, 1e-3])  # linear, not squared
    assert lr[16] == pytest.approx(1e-3 * (1 - 4 / 8))  # decay from step 12 to 0 at step 20
    facts = json.loads((out / "training.json").read_text())
    assert [(p["step"], p["total_steps"], p["lr"], p["warmup"]) for p in facts["phases"]] == \
        [(0, 8, pytest.approx(3e-3), 2), (8, 20, pytest.approx(1e-3), 4)]
    assert (facts["lr"], facts["warmup"]) == (pytest.approx(3e-3), 2)
    # unfinished: stopped at step 4 of 8, a new phase is refused; resumed without, it ends as before
    assert run(tiny, tmp_path, *first, "--stop-after", "4", name="u")[0] == 0
    state = tmp_path / "run-u" / "checkpoint" / "state.json"
    assert run(tiny, tmp_path, *first, "--resume", "--new-phase", "--steps", "20", name="u")[0] == 2
    doc = json.loads(state.read_text())
    del doc["phases"]  # as a checkpoint of the trainer before phases
    state.write_text(json.dumps(doc))
    assert run(tiny, tmp_path, *first, "--resume", name="u")[0] == 0
    whole = rows(tmp_path / "run-w" / "w" / "metrics.jsonl", "train")[:8]
    assert [r["lr"] for r in rows(tmp_path / "run-u" / "u" / "metrics.jsonl", "train")] == [r["lr"] for r in whole]


# ---- stages of learning: milestones shipped inside a model folder ---------------------------
def _curve(folder: Path, effects: list[float], every: int = 250):
    folder.mkdir(parents=True)
    rows_ = [{"type": "eval", "step": i * every, "tokens": i * every * 100, "loss": 9 - i, "accuracy": 0.1,
              "context_effect": e} for i, e in enumerate(effects)]
    (folder / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows_))
    (folder / "training.json").write_text(json.dumps({"final": rows_[-1]}))
    return folder


def test_plateau_and_rise_are_chosen_by_the_rule(tmp_path):
    from macaron.train.publish import stages_of_learning

    # 0.04 at step 1,250 is a dip after the rise began: the plateau is the last low evaluation before the rise
    rising = _curve(tmp_path / "a", [0.0, 0.01, 0.03, 0.3, 1.1, 0.04, 1.6, 2.0])
    assert stages_of_learning(rising) == {"plateau": 500, "rise": 1000}
    assert stages_of_learning(_curve(tmp_path / "b", [0.0, 0.0, 0.01, 0.02])) == {}  # never read context
    assert stages_of_learning(_curve(tmp_path / "c", [1.5, 2.0, 2.2])) == {"rise": 0}  # no plateau was seen


def test_milestones_list_and_load_every_stage(tiny, tmp_path, monkeypatch):
    from macaron.sources.milestones import param_checksum
    from macaron.train import publish

    code, run_dir, out = run(tiny, tmp_path, "--steps", "12", "--eval-every", "4", "--keep-every", "4", "--lr", "3e-3")
    assert code == 0
    monkeypatch.setattr(publish, "stages_of_learning", lambda m: {"plateau": 4, "rise": 8})
    shipped = tmp_path / "shipped"
    publish.publish(run_dir.parent, shipped, with_milestones=True)
    folder = shipped / "tiny"
    stages = macaron.milestones(folder)
    assert [s.name for s in stages] == ["random start", "plateau", "rise", "final"]
    assert [s.step for s in stages] == [0, 4, 8, 12] and stages[0].tokens == 0
    evals = {e["step"]: e for e in rows(run_dir / "metrics.jsonl", "eval")}
    assert [s.loss for s in stages] == [evals[s.step]["loss"] for s in stages]
    assert all(s.context_effect == evals[s.step]["context_effect"] for s in stages)
    # at=0: rebuilt from the seed, checked, and the caller's random state is untouched
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    start = macaron.load(folder, device="cpu", at=0)
    assert torch.rand(1) == before and start.milestone.name == "random start"
    torch.manual_seed(0)
    fresh = macaron.build(start.config)
    assert all(torch.equal(a, b) for a, b in zip(start.state_dict().values(), fresh.state_dict().values()))
    # the nearest milestone by tokens, and what it is
    rise = macaron.load(folder, device="cpu", at=stages[2].tokens + 1)
    kept = macaron.load(run_dir / "milestones" / "step-000008", device="cpu")
    assert rise.milestone == stages[2] and param_checksum(rise) == param_checksum(kept)
    assert "rise (step 8," in str(rise.milestone) and rise.tokenizer is not None
    assert macaron.load(folder, device="cpu", at=10**9).milestone.name == "final"
    # a checksum that does not match is refused, naming the file
    facts = json.loads((folder / "training.json").read_text())
    (folder / "training.json").write_text(json.dumps({**facts, "init_sha256": "0" * 64}))
    with pytest.raises(macaron.CheckpointError, match="training.json: the random start rebuilt"):
        macaron.load(folder, device="cpu", at=0)
    # a folder of one's own, without training facts, lists only itself, its training not known (not 0 tokens)
    (folder / "training.json").unlink()
    (own,) = macaron.milestones(folder)
    assert (own.name, own.folder, own.tokens, own.step) == ("tiny", folder, None, None)
    assert str(own) == "tiny (its training not recorded)" and own.label() == "tiny"
    assert macaron.load(folder, device="cpu", at=0).milestone == own  # at= has one stage to take


def _unit_standardised(x: np.ndarray) -> np.ndarray:
    x = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_learning_measures_one_sentence_at_every_stage(tiny, tmp_path, monkeypatch):
    """learning.stages against the model's weights read directly: the embedding state computed in NumPy,
    the last state from a hook on the last layer, the [MASK] guesses from the model's own MLM logits."""
    from macaron.studies import learning
    from macaron.train import publish

    code, run_dir, _ = run(tiny, tmp_path, "--steps", "8", "--eval-every", "4", "--keep-every", "4", "--lr", "3e-3")
    assert code == 0
    monkeypatch.setattr(publish, "stages_of_learning", lambda m: {"rise": 4})
    folder = publish.publish(run_dir.parent, tmp_path / "shipped", with_milestones=True)[0]
    text = "each layer of the network nudges every [MASK] ."
    uses = ("a particle moves through the space", "attention lets every particle look at the others", "the")
    rows_ = learning.stages(folder, text, uses=uses, k=3, device="cpu")
    assert [r.milestone.name for r in rows_] == ["random start", "rise", "final"]
    assert [r.milestone.step for r in rows_] == [0, 4, 8]
    for row in rows_:
        model = macaron.load(folder, device="cpu", at=row.milestone.tokens)
        pos = []  # where "the" is in each sentence, and its particle at the embedding and after the last layer
        last = []
        hook = model.layers[-1].register_forward_hook(lambda mod, inp, out: last.append(out[0].detach().numpy()))
        first = []
        for sentence in uses[:2]:
            ids = model.tokenizer.encode(sentence).ids
            pos.append(model.tokenizer.encode(sentence).tokens.index("the"))
            with torch.no_grad():
                model.encode(ids)
            sd = {k: v.double().numpy() for k, v in model.state_dict().items()}
            x = sd["token_embedding.weight"][ids[pos[-1]]] + sd["position_embedding.weight"][pos[-1]]
            if "embed_norm.weight" in sd:  # post-LN only: pre-LN embeds without a norm
                x = (x - x.mean()) / np.sqrt(x.var() + 1e-5) * sd["embed_norm.weight"] + sd["embed_norm.bias"]
            first.append(x)
        hook.remove()
        cos0 = float(_unit_standardised(first[0]) @ _unit_standardised(first[1]))
        cos_last = float(_unit_standardised(last[0][pos[0]]) @ _unit_standardised(last[1][pos[1]]))
        assert row.distance[0] == pytest.approx(1 - cos0, abs=1e-5)
        assert row.distance[-1] == pytest.approx(1 - cos_last, abs=1e-5)
        ids = model.tokenizer.encode(text).ids
        with torch.no_grad():
            probs = torch.softmax(model.mlm_logits(ids), -1)[ids.index(model.tokenizer.token_to_id("[MASK]"))]
        top = probs.topk(3)
        assert [t for t, _ in row.guesses] == [model.tokenizer.id_to_token(int(i)) for i in top.indices]
        # the particles after the last layer (the hook) and the attention weights (eager softmax of q·k)
        last.clear()
        hook = model.layers[-1].register_forward_hook(lambda mod, inp, out: last.append(out[0].detach().numpy()))
        with torch.no_grad():
            model.encode(ids)
        hook.remove()
        u = _unit_standardised(last[0].astype(np.float64))
        cos = u @ u.T
        assert row.mean_cosine == pytest.approx(cos[~np.eye(len(u), dtype=bool)].mean(), abs=1e-4)
        assert [p for _, p in row.guesses] == pytest.approx(top.values.tolist(), abs=1e-5)
    # the weights changed between stages, so do the measures
    assert len({round(r.clusters, 6) for r in rows_}) == 3 and len({r.guesses for r in rows_}) >= 2
    # the held-out curve the stages sit on, from metrics.jsonl
    c = learning.curve(folder)
    evals = rows(run_dir / "metrics.jsonl", "eval")
    assert c["step"].tolist() == [e["step"] for e in evals]
    assert c["context_effect"].tolist() == pytest.approx([e["context_effect"] for e in evals])
    # the figure: every stage named over its line, the sentence's row the distances at the last state
    from macaron import plot
    fig = plot.learning(rows_, c)
    assert [a.text for a in fig.layout.annotations] == ["random start", "rise", "final"]
    assert [s.x0 for s in fig.layout.shapes] == pytest.approx([r.milestone.tokens / 1e6 for r in rows_])
    assert list(fig.data[-1].y) == pytest.approx([r.distance[-1] for r in rows_])
    with pytest.raises(macaron.InputError, match="'river' is not one token"):
        learning.use_distance(macaron.load(folder, device="cpu"), "the river bank", "a bank", "river")


def test_outlook_extrapolates_the_last_evaluations_against_log_tokens():
    """The campaign's stopping rule on curves whose future is known: exactly linear in log(tokens) (the
    line continues), and a plateau followed by a rise (only the last evaluations count)."""
    from macaron.train.watch import outlook

    tokens = [1e6 * 2 ** i for i in range(12)]
    exact = [{"tokens": t, "accuracy": 0.02 * math.log(t) - 0.2, "context_effect": 0.5 * math.log(t / 1e6)}
             for t in tokens]
    ahead = outlook(exact, tokens_per_s=1000.0, hours=5.0)
    want = tokens[-1] + 1000.0 * 3600 * 5
    assert ahead["tokens"] == pytest.approx(want) and ahead["evaluations"] == 8
    assert ahead["accuracy"] == pytest.approx(0.02 * math.log(want) - 0.2)
    assert ahead["context_effect"] == pytest.approx(0.5 * math.log(want / 1e6))
    flat_then_rising = [dict(r, context_effect=0.0) for r in exact[:4]] + exact[4:]
    assert outlook(flat_then_rising, 1000.0)["context_effect"] == pytest.approx(ahead["context_effect"])
    assert outlook(exact[:2], 1000.0) is None and outlook(exact, 0.0) is None
    assert outlook([exact[-1]] * 4, 1000.0) is None  # one token count evaluated again and again: no line


def test_a_model_whose_depth_is_time_trains_and_its_card_says_so(tiny, tmp_path):
    """--shared --step --tied-halves --sphere --move-penalty reach the model, its facts and its card; a
    unit-step model's card says nothing of it."""
    code, _, out = run(tiny, tmp_path, "--steps", "2", "--eval-every", "2", "--scheme", "macaron", "--norm", "post",
                       "--shared", "--step", "0.25", "--tied-halves", "--sphere", "--move-penalty", "3",
                       "--device", "cpu", name="ode")
    assert code == 0
    model = macaron.load(out, device="cpu")
    c = model.config
    assert c.shared and c.step == 0.25 and c.tied_halves and not c.norm_affine
    assert all(layer is model.layers[0] for layer in model.layers)
    card = (out / "README.md").read_text()
    assert "**Depth as time:** one layer's weights at every step" in card and "T = 0.5" in card  # 2 layers × ¼
    assert "Strang's same G" in card and "sphere" in card
    assert "move penalty λ × mean ‖Δx‖²/‖x‖² added to the loss, λ = 3." in card
    code, _, plain = run(tiny, tmp_path, "--steps", "2", "--eval-every", "2", "--device", "cpu", name="plain")
    assert code == 0 and "Depth as time" not in (plain / "README.md").read_text()
    assert "Splitting orders" not in card  # none measured yet
    from macaron.studies import orders
    from macaron.train import card as cards

    record = orders.measure(model, ["the cat sat ."], ["the cat sat ."])  # what --save writes, then the card
    (out / orders.FILE).write_text(json.dumps(record))
    cards.main([str(out)])
    card = (out / "README.md").read_text()
    fit, low, high = record["local_slope"]["strang"]["exact"]
    row = next(line for line in card.splitlines() if line.startswith("| Strang–Marchuk") and "| exact |" in line)
    assert f"{fit:.2f} [{low:.2f}, {high:.2f}] (3)" in row
    assert row.endswith(f"| {record['local_error']['strang']['exact'][0]:.2g} |")


def test_a_resumed_run_may_raise_the_move_penalty_and_its_card_says_from_when(tiny, tmp_path, monkeypatch):
    """The stop rule of the ODE pair (docs/training-notes.md): a run resumed with another --move-penalty trains
    with the new λ from that step, and its checkpoint, facts and card keep every λ with the step it began; a
    resume with the same λ adds nothing; a checkpoint written before runs recorded it reads its λ from its args."""
    from macaron.train import objective

    seen = []
    real = objective.MaskedLM.__init__

    def spy(self, encoder, move_penalty=0.0):
        seen.append(move_penalty)
        real(self, encoder, move_penalty)

    monkeypatch.setattr(objective.MaskedLM, "__init__", spy)
    args = ("--steps", "6", "--eval-every", "3", "--keep-every", "3", "--shared", "--step", "0.5", "--sphere",
            "--norm", "post", "--device", "cpu")
    saved = tmp_path / "run-p" / "checkpoint" / "state.json"
    assert run(tiny, tmp_path, *args, "--move-penalty", "3", "--stop-after", "2", name="p")[0] == 0
    old = json.loads(saved.read_text())
    del old["penalties"]  # as a checkpoint written before runs recorded it
    saved.write_text(json.dumps(old))
    assert run(tiny, tmp_path, *args, "--move-penalty", "6", "--resume", "--stop-after", "4", name="p")[0] == 0
    assert json.loads(saved.read_text())["penalties"] == [[0, 3.0], [2, 6.0]]
    assert run(tiny, tmp_path, *args, "--move-penalty", "6", "--resume", "--stop-after", "5", name="p")[0] == 0
    assert json.loads(saved.read_text())["penalties"] == [[0, 3.0], [2, 6.0]]  # the same λ: nothing new
    code, _, out = run(tiny, tmp_path, *args, "--move-penalty", "9", "--resume", name="p")
    assert code == 0 and seen == [3.0, 6.0, 6.0, 9.0]  # each process trains with the λ it was given
    facts = json.loads((out / "training.json").read_text())
    assert facts["penalties"] == [[0, 3.0], [2, 6.0], [5, 9.0]] and facts["move_penalty"] == 9.0
    assert "added to the loss, λ = 3, 6 from step 2, 9 from step 5." in (out / "README.md").read_text()


def test_publishing_with_stages_that_were_not_kept_replaces_nothing(tiny, tmp_path, monkeypatch):
    """`make publish-mini REPLACE=1` replaces the shipped folders: a stage whose milestone the run did not keep (a
    run warm-started past its plateau) stops it before any shipped folder is touched."""
    from macaron.train import publish

    code, run_dir, _ = run(tiny, tmp_path, "--steps", "8", "--eval-every", "4", "--keep-every", "4")
    assert code == 0
    shipped = tmp_path / "shipped" / "tiny"
    (shipped / "milestones" / "plateau").mkdir(parents=True)
    (shipped / "milestones" / "plateau" / "kept.txt").write_text("the shipped stage")
    monkeypatch.setattr(publish, "stages_of_learning", lambda m: {"plateau": 2, "rise": 4})  # step 2 was not kept
    with pytest.raises(FileNotFoundError, match="plateau milestone was not kept"):  # even when told to replace
        publish.publish(run_dir.parent, shipped.parent, with_milestones=True, replace=True)
    assert (shipped / "milestones" / "plateau" / "kept.txt").read_text() == "the shipped stage"
    assert not (shipped / "config.json").exists()


# ---- publishing loses nothing unless told: --replace, --unfinished, and the Makefile's REPLACE, UNFINISHED, SEED ----
def _facts(folder: Path, steps: int, budget: int, tokens_per_step: int = 100) -> Path:
    """A model folder as far as publishing reads it: training.json (steps of the budget) and a curve."""
    folder.mkdir(parents=True)
    facts = {"steps": steps, "budget_steps": budget, "tokens": tokens_per_step * steps,
             "final": {"loss": 9 - steps / 8, "accuracy": steps / 80}}
    (folder / "training.json").write_text(json.dumps(facts))
    (folder / "metrics.jsonl").write_text("")
    return folder


def _steps(folder: Path) -> int:
    return json.loads((folder / "training.json").read_text())["steps"]


def _refused(capsys, *words: str):
    """A refusal: one line on stderr, no traceback, every word in it."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert all(w in err for w in words), err


def test_publish_refuses_an_unfinished_run_and_an_existing_folder_unless_told(tmp_path, capsys):
    from macaron.train import publish

    run_dir, out = tmp_path / "run", tmp_path / "pretrained"
    _facts(run_dir / "tiny" / "milestones" / "step-000004", 4, 8)  # a milestone: the run is half-way
    argv = [str(run_dir), "--out", str(out)]
    assert publish.main(argv) == 2
    _refused(capsys, "step 4 of its 8: the run has not finished its budget", "--unfinished", "UNFINISHED=1")
    assert not out.exists()
    assert publish.main([*argv, "--unfinished"]) == 0 and _steps(out / "tiny") == 4  # committed as it goes
    _facts(run_dir / "tiny" / "milestones" / "step-000008", 8, 8)  # the run's end
    assert publish.main(argv) == 2
    _refused(capsys, f"{out / 'tiny'}: exists; publishing would replace it", "--replace", "REPLACE=1")
    assert _steps(out / "tiny") == 4
    assert publish.main([*argv, "--replace"]) == 0 and _steps(out / "tiny") == 8


def test_publish_race_refuses_unfinished_models_and_replacing_curves_or_a_shipped_model(tmp_path, capsys):
    """SHIP=macaron-mini would put a 20 M-token race model in place of the shipped 40 M-token one: a replacement."""
    from macaron.train import publish

    run_dir, race, shipped = tmp_path / "run", tmp_path / "race" / "seed-0", tmp_path / "pretrained"
    for name in ("macaron-mini", "transformer-halves-mini"):
        _facts(run_dir / "models" / name, 8, 8)
    _facts(shipped / "macaron-mini", 24, 24, tokens_per_step=1000)  # the shipped one, 40 M tokens in truth
    argv = [str(run_dir), "--race", str(race), "--out", str(shipped)]
    assert publish.main([*argv, "--ship", "macaron-mini"]) == 2
    _refused(capsys, f"{shipped / 'macaron-mini'}: exists; publishing would replace it", "--replace")
    assert not race.exists() and _steps(shipped / "macaron-mini") == 24  # nothing written, curves neither
    assert publish.main(argv) == 0 and _steps(race / "macaron-mini") == 8  # the curves alone: new folders
    assert publish.main(argv) == 2
    _refused(capsys, f"{race / 'macaron-mini'}, {race / 'transformer-halves-mini'}: exists")
    assert publish.main([*argv, "--ship", "macaron-mini", "--replace"]) == 0
    assert _steps(shipped / "macaron-mini") == 8
    early = tmp_path / "early"
    _facts(early / "models" / "macaron-mini", 5, 8)
    assert publish.main([str(early), "--race", str(tmp_path / "race2"), "--out", str(shipped)]) == 2
    _refused(capsys, "step 5 of its 8: the run has not finished its budget")
    assert not (tmp_path / "race2").exists()


def test_make_publish_passes_replace_and_unfinished_and_the_race_needs_seed_and_models():
    """`make -n` prints the commands: REPLACE=1 and UNFINISHED=1 pass the flags, nothing else does; make race and
    make publish-race stop at once, with one line, without SEED or MODELS."""
    def make(*args):
        env = {k: v for k, v in os.environ.items()
               if k not in ("SEED", "MODELS", "REPLACE", "UNFINISHED", "MAKEFLAGS", "MAKELEVEL")}
        # under `make test` a nested make would print its directory after the commands: never, here
        return subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60)

    last = [make("publish-mini", *a).stdout.strip().splitlines()[-1] for a in ((), ("REPLACE=0",), ("REPLACE=1",))]
    assert "--replace" not in last[0] + last[1] and "--unfinished" not in last[0]
    assert "publish --replace " in last[2] and last[2].endswith("runs/mini --with-milestones")
    for target in ("race", "publish-race"):
        for given in ((), ("SEED=1",), ("MODELS=macaron-mini,transformer-halves-mini",)):
            done = make(target, *given)
            assert done.returncode == 2 and "need SEED and MODELS, e.g. make race SEED=1" in done.stderr, done.stderr
            assert done.stdout == ""  # nothing ran, not even the set-up
    done = make("publish-race", "SEED=1", "MODELS=transformer-mini,macaron-mini", "SHIP=macaron-mini", "REPLACE=1",
                "UNFINISHED=1")
    command = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0 and "--replace --unfinished" in command and "--ship \"macaron-mini\"" in command
    assert "race/20e6/seed-1/transformer-mini+macaron-mini --race pretrained/race/seed-1 " in command
