"""The seed paper's translation BLEU rows on this machine (Lu et al. 2019, Table 1): fairseq 0.6's binarized test set
read, each source translated with the paper's settings, the translations scored twice.

    python -m macaron bleu MODEL --data FOLDER [--beam N] [--lenpen A] [--max-sentences N] [--reference FILE]

FOLDER is as fairseq's preprocess.py writes one (the release's test-set archives hold such a folder): for the source's
and the target's language `{split}.{a}-{b}.{lang}.bin` and `.idx` (a-b either way round, as translation.py's
load_dataset looks for them) and `dict.{lang}.txt`. An .idx file (indexed_dataset.py, IndexedDatasetBuilder.finalize)
is, little-endian:

    b"TNTIDX\\0\\0"             magic
    u64 1                      version
    u64 code, u64 size         the .bin's element type and its bytes: 1 uint8, 2 int8, 3 int16, 4 int32 (what
                               preprocess.py writes), 5 int64; 6 and 7 are floats, never token ids
    u64 n, u64 s               n items, s entries of `sizes`
    i64[n + 1] dim_offsets     item i's shape is sizes[dim_offsets[i]:dim_offsets[i + 1]]: one entry, a sentence
    i64[n + 1] data_offsets    item i is elements data_offsets[i]:data_offsets[i + 1] of the .bin
    i64[s] sizes

The .bin holds each sentence's ids + 1 (add_item: "+1 for Lua compatibility"; the reader's fix_lua_indexing takes
it off), each sentence ending with </s>.

A source is translated by EncoderDecoder.translate (fairseq 0.6's SequenceGenerator) with the settings of the
paper's test scripts (translation/macaron-scripts/test/): IWSLT14 beam 5, lenpen 1.0; WMT14 beam 4, lenpen 0.6. Two
scores, both computed by sacrebleu:

(a) the paper's own measure.
    IWSLT14 (test-iwslt14.sh: generate.py --remove-bpe): fairseq's bleu.Scorer on the words of Dictionary.string
    with "@@ " removed (the reference's <unk> written <<unk>>, so no unknown word matches), as its data scripts
    tokenised and lower-cased them.
    WMT14 (test-wmt14-base.sh, -big.sh): multi-bleu.perl on the hypothesis with "@@ " removed, Moses-detokenised,
    Moses-tokenised again (not aggressive) and its compounds split ("a-b" to "a ##AT##-##AT## b"), against the
    folder's raw-test/{src}-{tgt}.{tgt}.tok.atat (the scripts' reference) when it holds one, else against the
    binarized target made the same way.
    sacrebleu with tokenize="none", smooth_method="none", case kept counts what both of them count on those
    words (whitespace-split 1- to 4-grams, clipped matches, BP = exp(1 − r/c) when c < r, 0 when an order has no
    match); one difference is made up here: fairseq's Scorer counts an empty line as one word (its trim never
    removes the </s> at position 0), so an empty line is scored as the word "</s>".
(b) sacrebleu's standard BLEU (13a tokenisation, mixed case, exp smoothing) on detokenised text, with its
    signature: the translation's text (BPE removed, Moses-detokenised) against `reference` (raw references, one
    a line) or, without one, the binarized target read back the same way (so a word its dictionary lacked is
    <unk>, and IWSLT14's references are lower case).
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..formats.folder import read_json
from ..formats.moses_bpe import DICTIONARY_SPECIALS, EOS, PAD, UNK, MosesBPE, ReadingError, read_dictionary
from ..network.reading import InputError

MAGIC = b"TNTIDX\x00\x00"
HEADER = struct.Struct("<8sQQQQQ")  # magic, version, dtype code, element size, items, entries of sizes
ID_TYPES = {1: "<u1", 2: "<i1", 3: "<i2", 4: "<i4", 5: "<i8"}  # the format's integer codes (6, 7: floats)
LUA = 1  # the +1 every stored id carries
BPE = "@@ "  # generate.py's --remove-bpe (its const)
COMPOUND = re.compile(r"(\S)-(\S)")  # the WMT14 scripts' perl -ple 's{(\S)-(\S)}{$1 ##AT##-##AT## $2}g'
EMPTY = "</s>"  # an empty line, as fairseq's Scorer counts it: one word
CONVERTED = "converted.json"  # an imported folder's record (macaron.formats.fairseq.SOURCE): its `arch`


class DataError(InputError):
    """A test set, dictionary or reference that cannot be read or does not fit the model; the message says which
    file and what is wrong."""


# ---- the binarized set ---------------------------------------------------------------------------------------------
def _bytes(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{file}: file is missing") from None
    except OSError as e:
        raise DataError(f"{file}: unreadable ({e.strerror or e})") from None


def _length_said(found: int, expected: int) -> str:
    return "truncated" if found < expected else "bytes past what its index accounts for"


def read_indexed(prefix) -> list[list[int]]:
    """The sentences of one IndexedDataset (prefix.idx and prefix.bin, the module's text), as fairseq's
    IndexedInMemoryDataset(fix_lua_indexing=True) reads them: one list of ids each."""
    prefix = Path(prefix)
    idx, bin_ = prefix.with_name(prefix.name + ".idx"), prefix.with_name(prefix.name + ".bin")
    raw = _bytes(idx)
    if len(raw) < HEADER.size:
        raise DataError(f"{idx}: {len(raw)} bytes, shorter than the index's {HEADER.size}-byte header: truncated, "
                        f"or not a fairseq index")
    magic, version, code, element_size, n, s = HEADER.unpack_from(raw)
    if magic != MAGIC:
        raise DataError(f"{idx}: starts with {magic!r}, not {MAGIC!r}: not an index of fairseq's IndexedDataset")
    if version != 1:
        raise DataError(f"{idx}: index version {version}; fairseq 0.6 writes and reads version 1")
    if code not in ID_TYPES:
        kind = "floats" if code in (6, 7) else "no type the format defines"
        raise DataError(f"{idx}: element type code {code} ({kind}); token ids are stored as integers (codes 1 to 5)")
    dtype = np.dtype(ID_TYPES[code])
    if element_size != dtype.itemsize:
        raise DataError(f"{idx}: element size {element_size} for type code {code}, whose elements are "
                        f"{dtype.itemsize} bytes")
    expected = HEADER.size + 8 * (2 * (n + 1) + s)
    if len(raw) != expected:
        raise DataError(f"{idx}: {len(raw):,} bytes, but its header ({n:,} items, {s:,} sizes) makes {expected:,}: "
                        f"{_length_said(len(raw), expected)}")
    longs = np.frombuffer(raw, dtype="<i8", offset=HEADER.size)
    dim_offsets, data_offsets, sizes = longs[:n + 1], longs[n + 1:2 * n + 2], longs[2 * n + 2:]
    if s != n or not np.array_equal(dim_offsets, np.arange(n + 1)):
        raise DataError(f"{idx}: items of other than one dimension; a sentence is a list of ids")
    if data_offsets[0] != 0 or not np.array_equal(np.diff(data_offsets), sizes) or (sizes < 0).any():
        raise DataError(f"{idx}: its offsets and sizes disagree: a damaged index")
    data = _bytes(bin_)
    need = int(data_offsets[-1]) * element_size
    if len(data) != need:
        raise DataError(f"{bin_}: {len(data):,} bytes, but {idx.name} indexes {int(data_offsets[-1]):,} ids of "
                        f"{element_size} bytes ({need:,}): {_length_said(len(data), need)}")
    ids = np.frombuffer(data, dtype=dtype).astype(np.int64) - LUA
    return [ids[a:b].tolist() for a, b in zip(data_offsets[:-1], data_offsets[1:])]


@dataclass
class BinarizedSet:
    """A split of a fairseq data folder: the sources' and targets' ids (each ending with </s>) and both
    dictionaries' entries (four specials, then dict.{lang}.txt's lines)."""

    folder: Path
    prefix: Path  # the files' common start, e.g. FOLDER/test.de-en.
    split: str
    source_lang: str
    target_lang: str
    sources: list[list[int]]
    targets: list[list[int]]
    source_symbols: list[str] = field(repr=False)
    target_symbols: list[str] = field(repr=False)

    def dictionary_file(self, side: str) -> Path:
        return self.folder / f"dict.{self.source_lang if side == 'source' else self.target_lang}.txt"


def _pairs(folder: Path, split: str) -> list[tuple[str, str]]:
    """The language pairs `{split}.{a}-{b}.{lang}.idx` files name (data_utils.infer_language_pair's reading)."""
    pattern = re.compile(rf"{re.escape(split)}\.([^.\-]+)-([^.\-]+)\.[^.]+\.idx")
    return sorted({m.groups() for f in folder.iterdir() if (m := pattern.fullmatch(f.name))})


def check_folder(folder) -> Path:
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder (give the test set's folder: the release's archive unpacked, "
                        f"with test.SRC-TGT.LANG.bin/.idx and dict.LANG.txt)")
    return folder


def language_pair(folder, split: str = "test", source_lang: str | None = None,
                  target_lang: str | None = None) -> tuple[str, str, Path]:
    """(source, target, the prefix of their files): the languages given, else the one pair the file names name."""
    folder = check_folder(folder)
    pairs = _pairs(folder, split)
    if not (source_lang and target_lang):
        given = source_lang or target_lang
        candidates = [p for p in pairs if given in p] if given else pairs
        if not candidates:
            raise DataError(f"{folder}: no {split}.SRC-TGT.LANG.idx files" + (f" with {given}" if given else "")
                            + f": not a fairseq binarized data folder of the {split!r} split")
        if len(candidates) > 1:
            raise DataError(f"{folder}: files of several language pairs ({', '.join('-'.join(p) for p in pairs)}): "
                            f"give --source-lang and --target-lang")
        a, b = candidates[0]  # infer_language_pair: {split}.{a}-{b}.* is a → b
        if source_lang:
            target_lang = b if source_lang == a else a
        elif target_lang:
            source_lang = b if target_lang == a else a
        else:
            source_lang, target_lang = a, b
    for a, b in ((source_lang, target_lang), (target_lang, source_lang)):  # load_dataset's split_exists, both ways
        prefix = folder / f"{split}.{a}-{b}."
        if all(Path(f"{prefix}{lang}.idx").is_file() for lang in (source_lang, target_lang)):
            return source_lang, target_lang, prefix
    held = f"it holds {', '.join(f'{split}.{a}-{b}' for a, b in pairs)}" if pairs else f"it holds no {split} files"
    raise DataError(f"{folder}: no {split}.{source_lang}-{target_lang}.{{{source_lang},{target_lang}}}.idx (nor "
                    f"{split}.{target_lang}-{source_lang}.*) for {source_lang} → {target_lang}; {held}")


def _dictionary(file: Path) -> list[str]:
    try:
        return read_dictionary(file, DICTIONARY_SPECIALS)
    except ReadingError as e:
        raise DataError(str(e)) from None


def read_set(folder, source_lang: str | None = None, target_lang: str | None = None,
             split: str = "test") -> BinarizedSet:
    """A split of a fairseq 0.6 data folder, every sentence checked against its dictionary (ids inside it, </s>
    last, no <pad>) and the two sides of one length."""
    source_lang, target_lang, prefix = language_pair(folder, split, source_lang, target_lang)
    data = BinarizedSet(Path(folder).expanduser(), prefix, split, source_lang, target_lang,
                        read_indexed(f"{prefix}{source_lang}"), read_indexed(f"{prefix}{target_lang}"),
                        _dictionary(Path(folder).expanduser() / f"dict.{source_lang}.txt"),
                        _dictionary(Path(folder).expanduser() / f"dict.{target_lang}.txt"))
    if len(data.sources) != len(data.targets):
        raise DataError(f"{prefix}*: {len(data.sources):,} source sentences but {len(data.targets):,} targets")
    if not data.sources:
        raise DataError(f"{prefix}{source_lang}.idx: no sentences")
    for side, lang, rows, symbols in (("source", source_lang, data.sources, data.source_symbols),
                                      ("target", target_lang, data.targets, data.target_symbols)):
        for k, ids in enumerate(rows):
            bad = [i for i in ids if not 0 <= i < len(symbols)]
            if bad or not ids or ids[-1] != EOS or PAD in ids:
                what = (f"id {bad[0]}, outside dict.{lang}.txt's {len(symbols):,} entries" if bad else
                        "no </s> at its end" if not ids or ids[-1] != EOS else "a <pad>")
                raise DataError(f"{prefix}{lang}.bin: {side} sentence {k + 1} holds {what}: not binarized with "
                                f"dict.{lang}.txt")
    return data


# ---- ids to words, as fairseq and the scripts write them -----------------------------------------------------------
def dictionary_string(ids, symbols: list[str], escape_unk: bool = False) -> str:
    """Dictionary.string(ids, "@@ ", escape_unk): each id's entry (<unk> for one outside it; <<unk>> for <unk>
    when escaped), </s> left out, "@@ " removed."""
    unk = "<<unk>>" if escape_unk else "<unk>"
    words = " ".join(unk if i == UNK else symbols[i] if i < len(symbols) else "<unk>" for i in ids if i != EOS)
    return (words + " ").replace(BPE, "").rstrip()


@lru_cache(maxsize=8)
def _moses(lang: str):
    from sacremoses import MosesDetokenizer, MosesTokenizer
    return MosesDetokenizer(lang=lang), MosesTokenizer(lang=lang)


def detokenised(words: str, lang: str) -> str:
    """Moses's detokenisation in `lang` (sacremoses): escapes undone, @-@ joined, spaces before punctuation gone."""
    return _moses(lang)[0].detokenize(words.split()) if words.strip() else ""


def compound_split(line: str) -> str:
    """The WMT14 scripts' last step before multi-bleu.perl: a hyphen inside a word as ##AT##-##AT## between spaces."""
    return COMPOUND.sub(r"\1 ##AT##-##AT## \2", line)


def wmt_tokenised(words: str, lang: str) -> str:
    """A line as test-wmt14-*.sh hands it to multi-bleu.perl: detokenised, Moses-tokenised (escaped, hyphens kept),
    compounds split."""
    text = detokenised(words, lang)
    return compound_split(_moses(lang)[1].tokenize(text, escape=True, return_str=True)) if text else ""


def paper_lines(ids: list[list[int]], symbols: list[str], recipe: str, lang: str, reference: bool) -> list[str]:
    """Hypotheses (or references) as the paper's measure for `recipe` reads them (the module's text, (a))."""
    lines = [dictionary_string(row, symbols, escape_unk=reference) for row in ids]
    if recipe == "wmt14":
        return [wmt_tokenised(line, lang) for line in lines]
    return [line or EMPTY for line in lines]


# ---- the paper's settings and figures ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Protocol:
    """How the paper tested a model of one data set: the search and the measure (its test scripts)."""

    recipe: str
    beam: int
    lenpen: float
    script: str
    measure: str


PROTOCOLS = {
    "iwslt14": Protocol("iwslt14", 5, 1.0, "test-iwslt14.sh",
                        "fairseq generate.py's BLEU: words after --remove-bpe, as the data scripts tokenised and "
                        "lower-cased them, <unk> never matching"),
    "wmt14": Protocol("wmt14", 4, 0.6, "test-wmt14-base.sh and -big.sh",
                      "multi-bleu.perl: Moses-tokenised, case-sensitive, compounds split (##AT##-##AT##)"),
}
# a model whose reading names neither: generate.py's own defaults (--beam 5, --lenpen 1) and its scorer
DEFAULT = Protocol("", 5, 1.0, "generate.py's defaults", "fairseq generate.py's BLEU: words after --remove-bpe, <unk> "
                   "never matching")


@dataclass(frozen=True)
class PaperRow:
    what: str
    bleu: float
    where: str


RELEASED = "Table 1"
BASELINE = "Table 1's Transformer row (the paper does not name its baselines' architectures)"
PAPER = {  # Lu et al. 2019, Table 1; the Macaron archs are those its test scripts name (ARCH=...)
    "transformer_iwslt_de_en_macaron_v2": PaperRow("Macaron small, IWSLT14 De→En", 35.4,
                                                   f"{RELEASED}; the release's README prints BLEU4 = 35.43 for its "
                                                   f"checkpoint"),
    "transformer_wmt_en_de_macaron_v2": PaperRow("Macaron base, WMT14 En→De", 28.9, RELEASED),
    "transformer_wmt_en_de_big_t2t_macaron": PaperRow("Macaron big, WMT14 En→De", 30.2, RELEASED),
    **{arch: PaperRow("Transformer small, IWSLT14 De→En", 34.4, BASELINE)
       for arch in ("transformer_iwslt_de_en", "transformer_iwslt_de_en_v2")},
    **{arch: PaperRow("Transformer base, WMT14 En→De", 27.3, BASELINE)
       for arch in ("transformer_wmt_en_de", "transformer_wmt_en_de_v2")},
    **{arch: PaperRow("Transformer big, WMT14 En→De", 28.4, BASELINE)
       for arch in ("transformer_vaswani_wmt_en_de_big", "transformer_wmt_en_de_big", "transformer_wmt_en_de_big_t2t")},
}


def imported_arch(folder) -> str | None:
    """The fairseq architecture an imported folder came from (its converted.json), None for another folder."""
    file = Path(folder) / CONVERTED
    return read_json(file, DataError).get("arch") if file.is_file() else None


def protocol_of(model) -> Protocol:
    """The paper's protocol for the data its model reads: its reading's recipe (iwslt14, wmt14), set on import."""
    tokenizer = getattr(model, "tokenizer", None)
    recipe = getattr(getattr(getattr(tokenizer, "source", None), "recipe", None), "name", "")
    return PROTOCOLS.get(recipe, DEFAULT)


# ---- translating and scoring ---------------------------------------------------------------------------------------
OWN_TEST_SET = ("a translator trained here is scored on its own test set by `python -m macaron.train.translate "
                "rescore FOLDER --data DIR`")


def require_translation(model) -> None:
    """Refuse a model that is not a translation model with fairseq's dictionaries (the paper's models, imported)."""
    if getattr(model, "kind", None) != "translator":
        raise DataError("this model is not a translation model (an encoder–decoder): bleu scores translations")
    if model.tokenizer is None:
        raise DataError("this model has no dictionaries (tokenizer.json) to check the test set's against")
    if not isinstance(model.tokenizer.source, MosesBPE):  # a trained-here or Marian model's SentencePiece pieces
        raise DataError(f"this translation model reads a vocabulary of its own, not fairseq's dictionaries: bleu "
                        f"scores the paper's models on fairseq's binarized test sets; {OWN_TEST_SET}")


def check_model(data: BinarizedSet, model) -> None:
    """Refuse a model that is not a translation model, reads the other direction, or whose dictionaries differ
    from the set's (sizes, then the first entry that differs)."""
    require_translation(model)
    c, tokenizer = model.config, model.tokenizer
    if c.source_lang and c.target_lang and (c.source_lang, c.target_lang) != (data.source_lang, data.target_lang):
        raise DataError(f"the test set is {data.source_lang} → {data.target_lang}; the model translates "
                        f"{c.source_lang} → {c.target_lang}")
    for side, theirs, ours in (("source", data.source_symbols, tokenizer.source.symbols),
                               ("target", data.target_symbols, tokenizer.target.symbols)):
        file = data.dictionary_file(side)
        if len(theirs) != len(ours):
            raise DataError(f"{file}: {len(theirs):,} entries, the model's {side} dictionary {len(ours):,}: the test "
                            f"set was binarized with another dictionary than the model was trained with")
        first = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), None)
        if first is not None:
            raise DataError(f"{file}: entry {first} is {theirs[first]!r}, the model's {side} dictionary has "
                            f"{ours[first]!r} there: the test set was binarized with another dictionary")


def read_reference(file, n: int, what: str) -> list[str]:
    """A reference file's lines, one a sentence of the test set: all `n` of them."""
    file = Path(file).expanduser()
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataError(f"{file}: {what} file is missing") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{file}: not a readable UTF-8 {what} file ({e})") from None
    if len(lines) != n:
        raise DataError(f"{file}: {len(lines):,} lines for the test set's {n:,} sentences")
    return lines


def scripts_reference(data: BinarizedSet) -> Path | None:
    """The WMT14 scripts' own reference for multi-bleu.perl ($DATA_PATH/raw-test/{src}-{tgt}.{tgt}.tok.atat), when
    the folder holds it."""
    name = f"{data.source_lang}-{data.target_lang}.{data.target_lang}.tok.atat"
    return next((f for f in (data.folder / "raw-test" / name, data.folder / name) if f.is_file()), None)


def translate_all(model, sources: list[list[int]], beam: int, lenpen: float, progress: bool = True
                  ) -> list[list[int]]:
    """Each source's translation (ids ending with </s>), one sentence at a time, with a progress bar on stderr."""
    from tqdm import tqdm

    out = []
    for k, ids in enumerate(tqdm(sources, desc="translating", unit="sentence", disable=not progress)):
        try:
            out.append(model.search(ids, beam=beam, lenpen=lenpen).tokens)
        except InputError as e:
            raise DataError(f"sentence {k + 1} of the test set: {e}") from None
    return out


@dataclass
class Scores:
    """What `evaluate` gives: the translations, both BLEU scores (sacrebleu's BLEUScore) and what each read."""

    hypotheses: list[list[int]]
    paper: object            # (a): the paper's measure
    paper_measure: str
    paper_reference: str
    standard: object         # (b): sacrebleu's standard BLEU on detokenised text
    signature: str
    standard_reference: str
    protocol: Protocol
    beam: int
    lenpen: float
    n: int
    total: int
    row: PaperRow | None
    arch: str | None
    data: BinarizedSet = field(repr=False)


def paper_bleu(hypotheses: list[str], references: list[str]):
    """BLEU as fairseq's Scorer and multi-bleu.perl count it, on lines already in their words (the module's (a))."""
    from sacrebleu.metrics import BLEU
    return BLEU(tokenize="none", smooth_method="none", force=True).corpus_score(hypotheses, [references])


def standard_bleu(hypotheses: list[str], references: list[str]):
    """(sacrebleu's default BLEU on detokenised text, its signature)."""
    from sacrebleu.metrics import BLEU
    metric = BLEU()
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def evaluate(model, data: BinarizedSet, beam: int | None = None, lenpen: float | None = None,
             max_sentences: int | None = None, arch: str | None = None, reference=None,
             progress: bool = True) -> Scores:
    """Translate the set's sources (the first `max_sentences`) with the paper's settings for the model (`beam`,
    `lenpen` override them) and score the translations both ways (the module's text). `arch`: the fairseq
    architecture the model was imported from (imported_arch), for the paper's figure; `reference`: a file of raw
    references for (b)."""
    check_model(data, model)
    protocol = protocol_of(model)
    beam = protocol.beam if beam is None else beam
    lenpen = protocol.lenpen if lenpen is None else lenpen
    if max_sentences is not None and max_sentences < 1:
        raise DataError(f"--max-sentences {max_sentences}: give at least 1")
    total = len(data.sources)
    n = total if max_sentences is None else min(max_sentences, total)
    raw = read_reference(reference, total, "reference")[:n] if reference else None
    atat = scripts_reference(data) if protocol.recipe == "wmt14" else None
    atat_lines = read_reference(atat, total, "reference")[:n] if atat else None
    hypotheses = translate_all(model, data.sources[:n], beam, lenpen, progress)
    targets = data.targets[:n]
    lang = data.target_lang
    paper = paper_bleu(paper_lines(hypotheses, data.target_symbols, protocol.recipe, lang, reference=False),
                       atat_lines or paper_lines(targets, data.target_symbols, protocol.recipe, lang, reference=True))
    decode = model.tokenizer.target.decode
    standard, signature = standard_bleu([decode(h) for h in hypotheses], raw or [decode(t) for t in targets])
    return Scores(hypotheses, paper, protocol.measure,
                  str(atat) if atat else f"the binarized target, {data.prefix.name}{lang}",
                  standard, signature, str(Path(reference)) if reference else "the binarized target, detokenised",
                  protocol, beam, lenpen, n, total, PAPER.get(arch or ""), arch, data)


def report(s: Scores, name: str = "") -> str:
    """What `python -m macaron bleu` prints."""
    d, p = s.data, s.protocol
    ours = f"beam {s.beam}, lenpen {s.lenpen:g}"
    paper_settings = f"beam {p.beam}, lenpen {p.lenpen:g}"
    lines = [f"{name or 'model'}{f' ({s.arch})' if s.arch else ''}: {d.source_lang} → {d.target_lang} on "
             f"{d.prefix}{{{d.source_lang},{d.target_lang}}}, "
             + (f"{s.n:,} sentences" if s.n == s.total else f"the first {s.n:,} of {s.total:,} sentences"),
             f"{ours}" + (f": the paper's ({p.script})" if ours == paper_settings
                          else f" (the paper's, {p.script}: {paper_settings})"),
             f"the paper's measure, {s.paper_measure} (reference: {s.paper_reference}):",
             f"  {s.paper}",
             f"sacrebleu on detokenised text (reference: {s.standard_reference}):",
             f"  {s.standard}",
             f"  signature {s.signature}"]
    if s.row:
        lines.append(f"the paper: {s.row.bleu} BLEU, {s.row.what} ({s.row.where})"
                     + ("" if s.n == s.total else f"; that is on the whole test set, these on its first {s.n:,}"))
    else:
        lines.append(f"the paper: no figure for {s.arch or 'this model'} (its Table 1 rows: "
                     f"{', '.join(sorted({r.what for r in PAPER.values()}))})")
    return "\n".join(lines)


def source_sentences(folder, source_lang: str | None = None, target_lang: str | None = None, split: str = "test",
                     limit: int | None = None) -> list[str]:
    """The test set's source sentences as text (BPE removed, Moses-detokenised in the source's language): the
    sentences the paper's models were scored on, for presets."""
    data = read_set(folder, source_lang, target_lang, split)
    return [detokenised(dictionary_string(ids, data.source_symbols), data.source_lang)
            for ids in data.sources[:limit]]


PRESETS = 8  # the Translate page's preset sentences from a test set


def release_presets(model_folder, source_lang: str | None = None, n: int = PRESETS) -> list[str]:
    """The first `n` source sentences of the paper's test set, for a release that `fetch` imported (its folder in the
    cache's models/) and whose test set it brought; else [] (a test set that does not read, too: `bleu` says why)."""
    from ..sources.releases import imported_dir, release_test_set

    folder = Path(model_folder)
    data = release_test_set(folder.name) if folder.parent.resolve() == imported_dir().resolve() else None
    if data is None:
        return []
    try:
        return source_sentences(data, source_lang or None, limit=n)
    except (InputError, OSError, ValueError):
        return []
