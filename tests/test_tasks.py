"""The two tasks share one trainer and nothing else: the translators' command offers no option that only the masked LM
uses, and a translator's training.json and checkpoint record none of them. Which options only the masked LM uses is
not listed here: it is measured, as the options a small masked-LM run reads and a small translation run does not."""
from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import pytest

from macaron.train import pretrain, tatoeba
from macaron.train import translate as tr
from test_translators import synthetic_pairs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
READ: set[str] = set()  # the options a run has read, by name


class Reading(argparse.Namespace):
    """A parsed command line that notes every option read from it."""

    def __getattribute__(self, name):
        if not name.startswith("_"):
            READ.add(name)
        return super().__getattribute__(name)


def options_read(monkeypatch, command, argv) -> set[str]:
    """The options `command(argv)` reads, from the moment its line is parsed to its end."""
    parse = argparse.ArgumentParser.parse_args
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args",
                        lambda p, *a, **k: Reading(**vars(parse(p, *a, **k))))
    READ.clear()
    assert command(argv) == 0
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    return set(READ)


def named_options(command, capsys) -> set[str]:
    """Every option a command's --help names (in its usage, its options or their help), as argparse's names:
    `--no-cross-documents` is `cross_documents`."""
    with pytest.raises(SystemExit):
        command(["--help"])
    said = capsys.readouterr().out
    return {re.sub(r"^no_", "", o.lstrip("-").replace("-", "_")) for o in re.findall(r"(?<![\w-])--[a-z][\w-]*", said)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("tasks")
    corpus = shutil.copytree(FIXTURES / "tiny_corpus", root / "corpus")
    pairs = root / "pairs"
    tatoeba.write(pairs, synthetic_pairs(), "attribution", {"source": "test"}, vocab=80,
                  held_out={"test": 6, "dev": 6}, log=lambda *_: None)
    small = ["--d-model", "32", "--layers", "1", "--heads", "2", "--ffn", "64", "--steps", "2", "--eval-every", "2",
             "--log-every", "1", "--threads", "1"]
    mlm = ["--corpus", str(corpus), "--tokenizer", str(FIXTURES / "tiny_tokenizer.json"), "--seq-len", "32",
           "--batch", "8", "--eval-seqs", "16", "--eval-batch", "8", "--name", "tiny", *small,
           "--run-dir", str(root / "mlm"), "--out", str(root / "mlm" / "models")]
    nmt = ["--models", "macaron-es-en", "--data", str(pairs), "--max-tokens", "128", "--dev-bleu", "2", *small,
           "--run-dir", str(root / "nmt"), "--out", str(root / "nmt" / "models")]
    return root, mlm, nmt


@pytest.fixture(scope="module")
def masked_lm_only(runs):
    """(the options a masked-LM run reads and a translation run does not, both runs' folders)."""
    root, mlm, nmt = runs
    with pytest.MonkeyPatch.context() as mp:
        read_mlm = options_read(mp, pretrain.main, mlm)
        read_nmt = options_read(mp, tr.main, nmt)
    return read_mlm - read_nmt, read_nmt, root


def test_the_translators_command_names_no_option_that_only_the_masked_lm_uses(masked_lm_only, capsys):
    only, read_nmt, _ = masked_lm_only
    masked_lm, translation = named_options(pretrain.main, capsys), named_options(tr.main, capsys)
    only &= masked_lm  # options, not what parsing derives from them (the models' names, the command line)
    assert {"mask_rate", "seq_len", "batch", "corpus"} <= only  # the measure sees what issue 76 names
    assert translation & only == set()
    assert translation - masked_lm <= read_nmt  # the translators' own options are read by their run


def test_a_translators_facts_and_checkpoint_record_only_what_applies(masked_lm_only):
    only, _, root = masked_lm_only
    mlm = json.loads((root / "mlm" / "models" / "tiny" / "training.json").read_text())
    facts = json.loads((root / "nmt" / "models" / "macaron-es-en" / "training.json").read_text())
    state = json.loads((root / "nmt" / "checkpoint" / "state.json").read_text())
    recorded = set(mlm) & only  # what the masked LM's facts record of its own options
    assert {"mask_rate", "seq_len", "batch", "mask_only", "accum"} <= recorded
    assert set(facts) & recorded == set()  # (a translator's "scheme" is its model's, not the masked LM's --scheme)
    assert set(state["run"]) & only == set() and set(state["args"]) & only == set()
    assert "penalties" not in facts and "penalties" not in state  # no move penalty in a translator's loss
    assert (facts["task"], facts["max_tokens"], state["run"]["max_tokens"]) == ("translation", 128, 128)
    splits = facts["stats"]["splits"]  # as macaron.train.tatoeba counted them
    assert (facts["train_pairs"], facts["dev_pairs"]) == (splits["train"]["pairs"], splits["dev"]["pairs"])
