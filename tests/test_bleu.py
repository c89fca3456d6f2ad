"""`python -m macaron bleu`: the paper's binarized test sets read, translated with its settings, scored
(macaron.studies.bleu).

The test sets here are written as fairseq 0.6's preprocess.py writes one, by a writer in this file from the format's
spec (IndexedDatasetBuilder: ids + 1, int32 unless told, the TNTIDX index; Dictionary.save's dict.{lang}.txt); the
models are tiny random fairseq checkpoints imported as tests/test_translation.py imports them, their translations
held against that file's recomputation of fairseq's generator. The paper's measures are held against fairseq's
Scorer (generate.py and libbleu.cpp) and multi-bleu.perl transcribed here, not against sacrebleu alone.
"""
from __future__ import annotations

import math
import random
import re
import struct
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import macaron
from macaron.__main__ import main
from macaron.formats.fairseq_import import import_fairseq
from macaron.studies import bleu as B
from test_translation import EOS, PAD, UNK, Paper, end_early, save_fairseq, translation_args, translation_state

# a joined dictionary: German and English words, BPE pieces, Moses's escapes, WMT14's @-@; madeupwords to a multiple of
# 8 entries with the four specials, as Dictionary.finalize pads it
WORDS = ("das haus ist klein groß sehr ich habe ein die kinder spielen im garten er sagt gut welt meister@@ schaft "
         "hau@@ s the house is small big very i have a children play in garden he says good world cup . , ? : "
         "&amp; &apos; &quot; @-@").split()
SYMBOLS = ["<Lua heritage>", "<pad>", "</s>", "<unk>", *WORDS] + [f"madeupword{i:04d}" for i in range(-(len(WORDS) + 4)
                                                                                              % 8)]
GERMAN = ["das haus ist klein .", "das haus ist sehr groß .", "die kinder spielen im garten .",
          "er sagt : das ist gut &amp; groß .", "die welt @-@ meister@@ schaft ist sehr gut .", "die kinder spielen ."]
ENGLISH = ["the house is small .", "the house is very big .", "the children play in the garden .",
           "he says : it is good &amp; big .", "the world cup is very good .", "the children play ."]
IDS = {s: i for i, s in enumerate(SYMBOLS)}
TARGET_POSITIONS = 12  # translations of at most 10 words (translate's cap, the positions − 2): a quick search
CODES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64}  # indexed_dataset.py's dtypes, integers


def ids(sentence: str) -> list[int]:
    """A line as preprocess.py binarizes it: each word's dictionary id, </s> appended."""
    return [IDS.get(w, UNK) for w in sentence.split()] + [EOS]


# ---- fairseq's files, from the format's spec -----------------------------------------------------------------------
def write_indexed(prefix, sentences, code: int = 4) -> None:
    """IndexedDatasetBuilder: add_item writes ids + 1 and grows data_offsets by bytes / element size, dim_offsets
    by one dimension, sizes by the length; finalize writes the magic, version 1, (code, element size), (items,
    sizes), then the three arrays as int64."""
    dtype = np.dtype(CODES[code]).newbyteorder("<")
    data_offsets, dim_offsets, sizes = [0], [0], []
    with open(f"{prefix}.bin", "wb") as f:
        for sentence in sentences:
            written = f.write(np.array(np.asarray(sentence) + 1, dtype=dtype).tobytes())
            data_offsets.append(data_offsets[-1] + written / dtype.itemsize)
            sizes.append(len(sentence))
            dim_offsets.append(dim_offsets[-1] + 1)
    with open(f"{prefix}.idx", "wb") as f:
        f.write(b"TNTIDX\x00\x00" + struct.pack("<Q", 1) + struct.pack("<QQ", code, dtype.itemsize)
                + struct.pack("<QQ", len(data_offsets) - 1, len(sizes)))
        for array in (dim_offsets, data_offsets, sizes):
            f.write(np.array(array, dtype="<i8").tobytes())


def write_dictionary(file: Path, symbols=SYMBOLS) -> Path:
    """Dictionary.save: every entry past the four specials, "<symbol> <count>", the most frequent first."""
    file.write_text("".join(f"{s} {1000 - i}\n" for i, s in enumerate(symbols[4:])), encoding="utf-8")
    return file


def write_set(folder: Path, sources, targets, pair=("de", "en"), split="test") -> Path:
    """A data-bin folder as preprocess.py --joined-dictionary writes it: both sides of `split`, dict.{lang}.txt each."""
    folder.mkdir(parents=True, exist_ok=True)
    a, b = pair
    for lang, sentences in ((a, sources), (b, targets)):
        write_indexed(folder / f"{split}.{a}-{b}.{lang}", sentences)
        write_dictionary(folder / f"dict.{lang}.txt")
    return folder


# ---- fairseq's Scorer and multi-bleu.perl, transcribed -------------------------------------------------------------
def dictionary_string(row, symbols, escape_unk):
    """Dictionary.string(row, "@@ ", escape_unk)."""
    words = " ".join(("<<unk>>" if escape_unk else "<unk>") if i == UNK else symbols[i] if i < len(symbols) else
                     "<unk>" for i in row if i != EOS)
    return (words + " ").replace("@@ ", "").rstrip()


def fairseq_bleu(references, hypotheses, symbols) -> tuple[float, list[float], int, int]:
    """generate.py with --remove-bpe and bleu.Scorer (libbleu.cpp): the reference (its <unk> escaped) and the
    hypothesis as strings, tokenised back into ids by a dictionary that grows (Tokenizer.tokenize,
    add_if_not_exist, </s> appended); the reference's <unk> ids made -999; both trimmed (leading <pad>, trailing
    </s> and <pad>, never position 0); clipped n-gram matches. (BLEU, precisions, predlen, reflen)."""
    known = list(symbols)
    index = {s: i for i, s in enumerate(known)}

    def tokenized(line):
        out = []
        for word in re.sub(r"\s+", " ", line).strip().split():
            if word not in index:
                index[word] = len(known)
                known.append(word)
            out.append(index[word])
        return out + [EOS]

    def trim(t):
        start = 0
        while start < len(t) and t[start] == PAD:
            start += 1
        t = t[start:]
        end = len(t) - 1
        while end > 0 and t[end] in (EOS, PAD):
            end -= 1
        return t[:end + 1]

    match, count, reflen, predlen = [0] * 4, [0] * 4, 0, 0
    for reference, hypothesis in zip(references, hypotheses):
        ref = trim([-999 if i == UNK else i for i in tokenized(dictionary_string(reference, symbols, True))])
        pred = trim(tokenized(dictionary_string(hypothesis, symbols, False)))
        reflen, predlen = reflen + len(ref), predlen + len(pred)
        for n in range(1, 5):
            if len(pred) < n:
                continue
            count[n - 1] += len(pred) - n + 1
            left = Counter(tuple(pred[i:i + n]) for i in range(len(pred) - n + 1))
            for i in range(len(ref) - n + 1):
                if left[tuple(ref[i:i + n])] > 0:
                    match[n - 1] += 1
                    left[tuple(ref[i:i + n])] -= 1
    precision = [m / c if c else 0 for m, c in zip(match, count)]
    brevity = min(1, math.exp(1 - reflen / predlen))
    score = brevity * math.exp(sum(math.log(p) if p > 0 else -math.inf for p in precision) / 4) * 100
    return score, [100 * p for p in precision], predlen, reflen


def multi_bleu(references: list[str], hypotheses: list[str]) -> float:
    """multi-bleu.perl with one reference: words split at whitespace, each n-gram's count clipped by the
    reference's, BP = exp(1 − r/c) when c < r, log 0 as −9999999999."""
    correct, total, c, r = [0] * 4, [0] * 4, 0, 0
    for reference, hypothesis in zip(references, hypotheses):
        ref, hyp = reference.split(), hypothesis.split()
        c, r = c + len(hyp), r + len(ref)
        for n in range(1, 5):
            ref_grams = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            for gram, k in Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1)).items():
                total[n - 1] += k
                correct[n - 1] += min(k, ref_grams[gram])
    brevity = math.exp(1 - r / c) if c < r else 1
    return brevity * math.exp(sum(math.log(k / t) if k and t else -9999999999 for k, t in zip(correct, total)) / 4) \
        * 100


# ---- tiny models of the paper's, and their translations -------------------------------------------------------------
def paper_model(folder: Path, arch: str, seed: int = 3, end: float = 0.5):
    """(model, fairseq's computation of it, the folder): a checkpoint of `arch` written as train.py saves one, with
    the joined dictionary, imported. </s> made likelier (some translations end early) and <unk> unlikely (a
    reference holding the model's <unk> never matches it, by fairseq's rule, so BLEU 100 needs none)."""
    folder.mkdir(parents=True, exist_ok=True)
    dictionary = write_dictionary(folder / "dict.txt")
    args = translation_args(arch, share_all_embeddings=True, share_decoder_input_output_embed=True,
                            max_target_positions=TARGET_POSITIONS)
    state = translation_state(args, len(SYMBOLS), len(SYMBOLS), seed)
    end_early(state, args, end)  # </s>'s output row: `end` × the bias every final state carries
    state["decoder.embed_tokens.weight"][UNK] = -6 * state["decoder.embed_tokens.weight"][EOS]  # the one shared table
    with pytest.MonkeyPatch.context() as mp:
        checkpoint = save_fairseq(folder / f"{arch}.pt", args, state, mp)
    out = import_fairseq(checkpoint, dictionary, None, folder / "paper-model", "paper-model")
    return macaron.load(out, device="cpu"), Paper(state, args), out


FAIRSEQ_CHECKED = (0, 2)  # the sentences whose translations are held against fairseq's generator (float64: slow)


@pytest.fixture(scope="module")
def iwslt(tmp_path_factory):
    """The release's IWSLT14 architecture (de → en), its sources and translations (beam 5, lenpen 1.0), some
    ending early and one at the limit."""
    model, paper, folder = paper_model(tmp_path_factory.mktemp("iwslt"), "transformer_iwslt_de_en_macaron_v2", end=1.0)
    sources = [ids(s) for s in GERMAN]
    own = [model.translate(s, beam=5, lenpen=1.0).target_ids for s in sources]
    assert UNK not in sum(own, []) and len({len(t) for t in own}) > 2
    return dict(model=model, paper=paper, folder=folder, sources=sources, own=own)


@pytest.fixture(scope="module")
def wmt(tmp_path_factory):
    """The release's WMT14 base architecture (en → de), its sources and translations (beam 4, lenpen 0.6)."""
    model, paper, folder = paper_model(tmp_path_factory.mktemp("wmt"), "transformer_wmt_en_de_macaron_v2", end=0.5)
    sources = [ids(s) for s in ENGLISH]
    own = [model.translate(s, beam=4, lenpen=0.6).target_ids for s in sources]
    return dict(model=model, paper=paper, folder=folder, sources=sources, own=own)


def maxlen(model) -> int:
    return model.config.decoder.max_len - 2  # translate's cap: the teacher-forced trace must fit the positions


def perturbed(rows, seed: int, rate: float = 0.15) -> list[list[int]]:
    """Other references: each row with words dropped, replaced (some by <unk>) and swapped, every third longer by
    two words, the second line empty."""
    rng = random.Random(seed)
    out = []
    for k, row in enumerate(rows):
        words = [w for w in row[:-1] if rng.random() > rate]
        words = [rng.choice([UNK, rng.randrange(4, len(SYMBOLS))]) if rng.random() < rate else w for w in words]
        if len(words) > 3:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        out.append(words + (words[:2] if k % 3 == 0 else []) + [EOS])
    out[1] = [EOS]
    return out


def standard(hypotheses, references) -> float:
    """sacrebleu's default BLEU of the rows read back as text: "@@ " removed, Moses-detokenised (English)."""
    from sacrebleu.metrics import BLEU
    from sacremoses import MosesDetokenizer

    detok = MosesDetokenizer(lang="en")
    text = [[detok.detokenize(dictionary_string(row, SYMBOLS, False).split()) for row in rows]
            for rows in (hypotheses, references)]
    return BLEU().corpus_score(text[0], [text[1]]).score


# ---- tests: the reader ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("code", sorted(CODES))
def test_the_reader_gives_back_what_fairseqs_builder_wrote(tmp_path, code):
    rng = random.Random(code)
    top = 126 if code == 2 else 254  # ids + 1 must fit the type
    sentences = [[rng.randrange(4, top) for _ in range(rng.randrange(0, 30))] + [EOS] for _ in range(40)]
    write_indexed(tmp_path / "test.de-en.de", sentences, code)
    assert B.read_indexed(tmp_path / "test.de-en.de") == sentences
    stored = np.fromfile(tmp_path / "test.de-en.de.bin", dtype=np.dtype(CODES[code]).newbyteorder("<"))
    assert stored.tolist() == [i + 1 for s in sentences for i in s]  # the Lua +1 is in the file, not in the ids


def test_the_set_is_found_both_ways_with_its_dictionaries(tmp_path, iwslt):
    folder = write_set(tmp_path / "data", iwslt["sources"], [ids(s) for s in ENGLISH])
    data = B.read_set(folder)  # test.de-en.*: de → en, as infer_language_pair reads the names
    assert (data.source_lang, data.target_lang) == ("de", "en") and data.source_symbols == SYMBOLS
    assert data.sources == iwslt["sources"] and data.targets == [ids(s) for s in ENGLISH]
    back = B.read_set(folder, "en", "de")  # load_dataset also opens test.de-en.* for en → de
    assert back.sources == data.targets and back.targets == data.sources
    assert B.read_set(folder, target_lang="de").sources == data.targets
    texts = B.source_sentences(folder)
    assert texts[3] == "er sagt: das ist gut & groß."  # "@@ " removed, Moses's escapes undone, detokenised
    assert texts[4] == "die welt-meisterschaft ist sehr gut."
    whole_words = [k for k, s in enumerate(GERMAN) if "@" not in s]
    for k in whole_words:  # a preset reads back as the test set's source
        assert iwslt["model"].tokenize(texts[k])[0] == iwslt["sources"][k], texts[k]
    assert B.source_sentences(folder, limit=2) == texts[:2]


# ---- tests: the measures --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(12))
def test_the_iwslt_measure_counts_as_fairseqs_scorer(seed):
    rng = random.Random(seed)
    references = [[rng.choice(range(3, len(SYMBOLS))) for _ in range(rng.randrange(0, 14))] + [EOS] for _ in range(8)]
    hypotheses = perturbed(references, seed + 100)
    hypotheses[2] = [UNK, *references[2][:-1], UNK, EOS]  # a <unk> where the reference may have one too
    ours = B.paper_bleu(B.paper_lines(hypotheses, SYMBOLS, "iwslt14", "en", reference=False),
                        B.paper_lines(references, SYMBOLS, "iwslt14", "en", reference=True))
    score, precisions, predlen, reflen = fairseq_bleu(references, hypotheses, SYMBOLS)
    assert ours.score == pytest.approx(score, abs=1e-9) and (ours.sys_len, ours.ref_len) == (predlen, reflen)
    assert ours.precisions == pytest.approx(precisions, abs=1e-9)
    if seed == 0:
        assert 0 < score < 100  # not a case of all or nothing


def test_the_wmt_measure_reads_as_the_scripts_write_it():
    # test-wmt14-*.sh: "@@ " removed; detokenizer.perl (@-@ joined, escapes undone); tokenizer.perl -l de (escaped,
    # not aggressive); s{(\S)-(\S)}{$1 ##AT##-##AT## $2}g, whose matches do not overlap
    row = ids("die welt @-@ meister@@ schaft &amp; &quot; das haus &quot; .")
    assert B.paper_lines([row], SYMBOLS, "wmt14", "de", reference=True) == [
        "die welt ##AT##-##AT## meisterschaft &amp; &quot; das haus &quot; ."]
    assert B.compound_split("a-b-c x--y -z") == "a ##AT##-##AT## b-c x ##AT##-##AT## -y -z"
    from sacremoses import MosesDetokenizer, MosesTokenizer

    references = [ids(s) for s in GERMAN * 2]
    hypotheses = perturbed(references, 8, rate=0.05)
    ours = B.paper_bleu(*(B.paper_lines(rows, SYMBOLS, "wmt14", "de", reference=r)
                          for rows, r in ((hypotheses, False), (references, True))))
    detok, tok = MosesDetokenizer(lang="de"), MosesTokenizer(lang="de")
    lines = [[re.sub(r"(\S)-(\S)", r"\1 ##AT##-##AT## \2", tok.tokenize(detok.detokenize(
        dictionary_string(row, SYMBOLS, r).split()), escape=True, return_str=True)) for row in rows]
        for rows, r in ((hypotheses, False), (references, True))]
    assert ours.score == pytest.approx(multi_bleu(lines[1], lines[0]), abs=1e-9) and 0 < ours.score < 100


# ---- tests: the command's evaluation --------------------------------------------------------------------------------
def test_a_reference_that_is_the_models_own_translation_scores_100(tmp_path, iwslt):
    folder = write_set(tmp_path / "data", iwslt["sources"], iwslt["own"])
    scores = B.evaluate(iwslt["model"], B.read_set(folder), arch=B.imported_arch(iwslt["folder"]), progress=False)
    assert scores.hypotheses == iwslt["own"] and (scores.beam, scores.lenpen) == (5, 1.0)
    for k in FAIRSEQ_CHECKED:  # fairseq's generator with the paper's IWSLT14 settings
        assert scores.hypotheses[k] == iwslt["paper"].beam(iwslt["sources"][k], 5, maxlen(iwslt["model"]), 1.0)[0][0]
    assert scores.paper.score == pytest.approx(100) and scores.standard.score == pytest.approx(100)
    assert scores.row.bleu == 35.4 and scores.arch == "transformer_iwslt_de_en_macaron_v2"


def test_other_references_score_as_fairseq_and_sacrebleu_do(tmp_path, iwslt):
    from sacrebleu.metrics import BLEU

    references = perturbed(iwslt["own"], 1)
    folder = write_set(tmp_path / "data", iwslt["sources"], references)
    scores = B.evaluate(iwslt["model"], B.read_set(folder), progress=False)
    score, precisions, predlen, reflen = fairseq_bleu(references, iwslt["own"], SYMBOLS)
    assert 0 < score < 100 and scores.paper.score == pytest.approx(score, abs=1e-9)
    assert scores.paper.precisions == pytest.approx(precisions, abs=1e-9)
    assert scores.standard.score == pytest.approx(standard(iwslt["own"], references), abs=1e-9)
    assert 0 < scores.standard.score < 100
    raw = tmp_path / "raw.en"  # raw references for the standard score: three the translations' own text
    text = [B.detokenised(dictionary_string(row, SYMBOLS, False), "en") for row in iwslt["own"]]
    raw.write_text("".join(line + "\n" for line in text[:3] + ["the house is small ."] * 3), encoding="utf-8")
    again = B.evaluate(iwslt["model"], B.read_set(folder), max_sentences=4, reference=raw, progress=False)
    assert again.hypotheses == iwslt["own"][:4] and again.n == 4 and again.total == len(GERMAN)
    assert again.standard.score == pytest.approx(
        BLEU().corpus_score(text[:4], [text[:3] + ["the house is small ."]]).score, abs=1e-9)
    assert again.paper.score == pytest.approx(fairseq_bleu(references[:4], iwslt["own"][:4], SYMBOLS)[0], abs=1e-9)


def test_wmt_uses_its_settings_and_the_scripts_reference(tmp_path, wmt):
    references = perturbed(wmt["own"], 2)
    folder = write_set(tmp_path / "data", wmt["sources"], references, pair=("en", "de"))
    scores = B.evaluate(wmt["model"], B.read_set(folder), arch=B.imported_arch(wmt["folder"]), progress=False)
    assert scores.hypotheses == wmt["own"] and (scores.beam, scores.lenpen) == (4, 0.6)
    for k in FAIRSEQ_CHECKED:  # fairseq's generator with the paper's WMT14 settings
        assert scores.hypotheses[k] == wmt["paper"].beam(wmt["sources"][k], 4, maxlen(wmt["model"]), 0.6)[0][0]
    lines = [B.paper_lines(rows, SYMBOLS, "wmt14", "de", reference=r) for rows, r in ((wmt["own"], False),
                                                                                      (references, True))]
    assert scores.paper.score == pytest.approx(multi_bleu(lines[1], lines[0]), abs=1e-9)
    assert scores.row.bleu == 28.9 and "binarized target" in scores.paper_reference
    raw_test = folder / "raw-test"
    raw_test.mkdir()
    atat = lines[0][:2] + lines[1][2:]  # the scripts' own reference file, when the folder holds it
    (raw_test / "en-de.de.tok.atat").write_text("".join(line + "\n" for line in atat), encoding="utf-8")
    again = B.evaluate(wmt["model"], B.read_set(folder), beam=1, progress=False)
    assert again.hypotheses != scores.hypotheses and again.beam == 1  # the override changed the search
    for k in FAIRSEQ_CHECKED:
        assert again.hypotheses[k] == wmt["paper"].greedy(wmt["sources"][k], maxlen(wmt["model"]))
    assert again.paper_reference.endswith("en-de.de.tok.atat")
    hyp = B.paper_lines(again.hypotheses, SYMBOLS, "wmt14", "de", reference=False)
    assert again.paper.score == pytest.approx(multi_bleu(atat, hyp), abs=1e-9)


# ---- tests: the command line ----------------------------------------------------------------------------------------
def test_the_command_prints_both_scores_beside_the_papers(tmp_path, iwslt, capsys):
    references = perturbed(iwslt["own"], 1)
    folder = write_set(tmp_path / "data", iwslt["sources"], references)
    assert main(["bleu", str(iwslt["folder"]), "--data", str(folder)]) == 0
    out, err = capsys.readouterr()
    paper = fairseq_bleu(references, iwslt["own"], SYMBOLS)[0]
    assert f"BLEU = {paper:.2f}" in out and f"BLEU = {standard(iwslt['own'], references):.2f}" in out
    assert "the paper: 35.4 BLEU, Macaron small, IWSLT14 De→En" in out and "35.43" in out
    assert "beam 5, lenpen 1: the paper's (test-iwslt14.sh)" in out and "6 sentences" in out
    assert "signature nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2." in out
    assert "translating" in err  # the progress bar, on stderr
    assert main(["bleu", str(iwslt["folder"]), "--data", str(folder), "--beam", "1", "--lenpen", "0.6",
                 "--max-sentences", "2", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "beam 1, lenpen 0.6 (the paper's, test-iwslt14.sh: beam 5, lenpen 1)" in out and not err
    assert "the first 2 of 6 sentences" in out and "that is on the whole test set, these on its first 2" in out


def bleu_error(capsys, *argv) -> str:
    assert main(["bleu", *map(str, argv), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_bad_input_is_one_clear_message(tmp_path, iwslt, models_dir, capsys):
    model = iwslt["folder"]
    good = write_set(tmp_path / "good", iwslt["sources"], iwslt["own"])
    assert "no such folder" in bleu_error(capsys, model, "--data", tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    said = bleu_error(capsys, model, "--data", tmp_path / "empty")  # the model's languages, looked for both ways
    assert "no test.de-en.{de,en}.idx (nor test.en-de.*) for de → en; it holds no test files" in said
    with pytest.raises(B.DataError, match=r"no test\.SRC-TGT\.LANG\.idx files"):  # nor a pair to read off names
        B.read_set(tmp_path / "empty")
    assert "not a translation model" in bleu_error(capsys, models_dir / "tiny-macaron", "--data", good)

    def broken(name, change) -> Path:
        folder = write_set(tmp_path / name, iwslt["sources"], iwslt["own"])
        change(folder)
        return folder

    def cut(file, keep):
        file.write_bytes(file.read_bytes()[:keep])

    def poke(file, offset, data):
        raw = bytearray(file.read_bytes())
        raw[offset:offset + len(data)] = data
        file.write_bytes(bytes(raw))

    de = "test.de-en.de"
    for name, change, says in (
            ("bin", lambda f: cut(f / f"{de}.bin", 10), "truncated"),
            ("idx", lambda f: cut(f / f"{de}.idx", 60), "truncated"),
            ("header", lambda f: cut(f / f"{de}.idx", 20), "shorter than the index's 48-byte header"),
            ("magic", lambda f: poke(f / f"{de}.idx", 0, b"MMIDIDX\x00"), "not an index of fairseq's"),
            ("version", lambda f: poke(f / f"{de}.idx", 8, struct.pack("<Q", 2)), "index version 2"),
            ("float", lambda f: poke(f / f"{de}.idx", 16, struct.pack("<Q", 6)), "floats"),
            ("nobin", lambda f: (f / f"{de}.bin").unlink(), "file is missing"),
            ("nodict", lambda f: (f / "dict.en.txt").unlink(), "dictionary file is missing"),
            ("short", lambda f: write_dictionary(f / "dict.en.txt", SYMBOLS[:-8]),
             f"{len(SYMBOLS) - 8} entries, the model's target dictionary {len(SYMBOLS)}"),
            ("other", lambda f: write_dictionary(f / "dict.de.txt", SYMBOLS[:9] + ["zzz"] + SYMBOLS[10:]),
             f"entry 9 is 'zzz', the model's source dictionary has {SYMBOLS[9]!r}"),
            ("outside", lambda f: write_indexed(f / de, [[len(SYMBOLS) + 3, EOS]] * len(GERMAN)),
             f"id {len(SYMBOLS) + 3}, outside dict.de.txt"),
            ("noeos", lambda f: write_indexed(f / de, [[10, 11]] * len(GERMAN)), "no </s> at its end"),
            ("fewer", lambda f: write_indexed(f / de, iwslt["sources"][:2]), "6 targets")):
        assert says in bleu_error(capsys, model, "--data", broken(name, change)), name
    assert "the model translates de → en" in bleu_error(capsys, model, "--data", good, "--source-lang", "en",
                                                        "--target-lang", "de")
    assert "for de → fr" in bleu_error(capsys, model, "--data", good, "--target-lang", "fr")
    raw = tmp_path / "raw.en"
    raw.write_text("one line\n", encoding="utf-8")
    assert "1 lines for the test set's 6 sentences" in bleu_error(capsys, model, "--data", good, "--reference", raw)
    assert "give at least 1" in bleu_error(capsys, model, "--data", good, "--max-sentences", 0)
    assert "beam=0" in bleu_error(capsys, model, "--data", good, "--beam", 0)


def test_a_translator_trained_here_is_sent_to_its_own_test_set(tmp_path, capsys):
    """bleu reads fairseq's binarized sets with fairseq's dictionaries; a translator trained here reads a vocabulary
    of its own: one message that says where it is scored instead, with a set given (a valid one) or without."""
    from macaron.sources.shipped import PRETRAINED

    translator = PRETRAINED / "macaron-es-en"
    data = write_set(tmp_path / "data", [ids(s) for s in GERMAN], [ids(s) for s in ENGLISH], pair=("es", "en"))
    said = bleu_error(capsys, translator, "--data", data)
    assert "reads a vocabulary of its own, not fairseq's dictionaries" in said
    for said in (said, bleu_error(capsys, translator)):
        assert "python -m macaron.train.translate rescore FOLDER --data DIR" in said
