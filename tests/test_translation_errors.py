"""The translation commands on a folder of the wrong kind, a missing folder or missing data: one line that names the
problem, exit status 2, and nothing written (`translator_card`, the masked LM's `card`, `translate rescore`,
`import-fairseq`, `fetch`; `bleu`'s are in tests/test_bleu.py). Each folder a command is given is a copy in the test's
own folder, compared file by file (size and modification time) before and after."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from macaron.__main__ import main as cli
from macaron.sources.shipped import PRETRAINED
from macaron.train import card, tatoeba, translator_card
from macaron.train import translate as tr
from test_translators import synthetic_pairs

TRANSLATOR, MASKED_LM = PRETRAINED / "macaron-es-en", PRETRAINED / "macaron-mini"


def files(folder: Path) -> dict | None:
    """Every file under `folder` with its size and modification time (None: no folder)."""
    if not folder.exists():
        return None
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(capsys, command, argv, *folders: Path) -> str:
    """`command(argv)` exits with status 2, says one line starting "error: " and writes nothing in `folders`."""
    before = [files(f) for f in folders]
    assert command([str(a) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert [files(f) for f in folders] == before
    return err


@pytest.fixture
def copies(tmp_path):
    """A copy of the shipped translator (trained here) and of a shipped masked LM."""
    return (shutil.copytree(TRANSLATOR, tmp_path / "translator"), shutil.copytree(MASKED_LM, tmp_path / "masked-lm"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A folder of sentence pairs as macaron.train.tatoeba prepares one (small, made here)."""
    out = tmp_path_factory.mktemp("pairs")
    tatoeba.write(out, synthetic_pairs(), "attribution", {"source": "test"}, vocab=80,
                  held_out={"test": 6, "dev": 6}, log=lambda *_: None)
    return out


# ---- the cards --------------------------------------------------------------------------------------------------
def test_translator_card_refuses_what_is_not_a_translators_folder(tmp_path, copies, capsys):
    translator, masked = copies
    said = refused(capsys, translator_card.main, [masked], masked)
    assert f"{masked / 'training.json'}: the facts of a masked LM, not of a translator" in said
    assert f"{tmp_path / 'nowhere'}: no such folder" in refused(capsys, translator_card.main, [tmp_path / "nowhere"])
    bare = tmp_path / "bare"
    shutil.copytree(translator, bare, ignore=shutil.ignore_patterns("training.json"))  # an import has no facts
    assert f"{bare}: no training.json" in refused(capsys, translator_card.main, [bare], bare)
    facts = json.loads((translator / "training.json").read_text())
    del facts["final"]
    (translator / "training.json").write_text(json.dumps(facts))
    said = refused(capsys, translator_card.main, [translator], translator)
    assert f"{translator / 'training.json'}: a field the card reads is missing or wrong (KeyError('final'))" in said


def test_every_folder_is_checked_before_any_card_is_written(copies, capsys):
    translator, masked = copies
    refused(capsys, translator_card.main, [translator, masked], translator, masked)
    refused(capsys, card.main, [masked, translator], translator, masked)


def test_the_masked_lms_card_refuses_a_translators_folder(copies, capsys):
    translator, _ = copies
    said = refused(capsys, card.main, [translator], translator)
    assert f"{translator / 'training.json'}: the facts of a translator, not of a masked LM" in said


def test_translator_card_renders_a_translators_folder(copies, capsys):
    """The check lets a translator's own folder through: its card written again from its facts."""
    translator, _ = copies
    (translator / "README.md").unlink()
    assert translator_card.main([str(translator)]) == 0
    facts = json.loads((translator / "training.json").read_text())
    assert f"| test BLEU | **{facts['final']['bleu']:.2f}** |" in (translator / "README.md").read_text()
    assert capsys.readouterr().out == f"rendered {translator / 'README.md'}\n"


# ---- translate rescore --------------------------------------------------------------------------------------------
def rescore(argv):
    return tr.main(["rescore", *argv])


def test_rescore_refuses_before_it_loads_or_writes(tmp_path, copies, data, capsys):
    translator, masked = copies
    said = refused(capsys, rescore, [masked, "--data", data], masked)
    assert "the facts of a masked LM, not of a translator" in said
    assert f"{tmp_path / 'nowhere'}: no such folder" in refused(capsys, rescore, [tmp_path / "nowhere", "--data", data])
    bare = tmp_path / "bare"
    shutil.copytree(translator, bare, ignore=shutil.ignore_patterns("training.json", "test.hyp.*"))
    assert f"{bare}: no training.json" in refused(capsys, rescore, [bare, "--data", data], bare)
    assert not list(bare.glob("test.hyp.*"))  # the test set's translations: not written either
    said = refused(capsys, rescore, [translator, "--data", tmp_path / "no-data"], translator)
    assert f"{tmp_path / 'no-data' / 'stats.json'}: file is missing" in said
    refused(capsys, rescore, [translator, masked, "--data", data], translator, masked)  # the first is not scored
    other = tmp_path / "zz-en"  # a folder of another language pair than the translator's (es → en)
    tatoeba.write(other, synthetic_pairs(), "attribution", {"source": "test"}, vocab=80, languages=("zz", "en"),
                  held_out={"test": 6, "dev": 6}, log=lambda *_: None)
    said = refused(capsys, rescore, [translator, "--data", other], translator)
    assert f"{translator} translates es→en, the data {other} is zz→en" in said


# ---- import-fairseq and fetch -------------------------------------------------------------------------------------
@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The models cache and the Hub cache in the test's folder (HF_HUB_OFFLINE is set for every test)."""
    monkeypatch.setenv("MACARON_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path / "cache", tmp_path / "hub"


def test_import_fairseq_refuses_what_is_not_a_checkpoint(tmp_path, copies, cache, capsys):
    _, masked = copies
    dictionary = tmp_path / "dict.txt"
    dictionary.write_text("a 1\n")
    out = tmp_path / "out"
    said = refused(capsys, cli, ["import-fairseq", masked, "--dict", dictionary], masked, *cache)
    assert f"{masked}: a folder; give the fairseq checkpoint file (.pt) itself (this one is a model folder" in said
    said = refused(capsys, cli, ["import-fairseq", masked / "model.safetensors", "--dict", dictionary, "--out", out],
                   masked, out, *cache)
    assert "not a fairseq checkpoint" in said
    said = refused(capsys, cli, ["import-fairseq", tmp_path / "none.pt", "--dict", dictionary], *cache)
    assert f"{tmp_path / 'none.pt'}: checkpoint file is missing" in said


def test_fetch_refuses_what_is_not_a_models_name(tmp_path, copies, cache, capsys):
    _, masked = copies
    for name, says in (("", "'': not a model's name"),
                       (masked / "config.json", "not a model's name; fetch takes a release's name or a Hub id"),
                       (masked, "already here (a shipped model or a folder); nothing to fetch"),
                       ("a/b/c", "neither a release fetch knows"),
                       ("someone/no-such-model", "not in the local Hub cache")):
        assert says in refused(capsys, cli, ["fetch", name], masked, *cache), name
