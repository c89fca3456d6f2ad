"""The paper's reading of text (Lu et al. 2019, bert/macaron-scripts): Moses, lower case, BPE, as the token ids of
a fairseq 0.6 BertDictionary, so that a model imported from the paper's checkpoints reads text as it was trained.

The steps, as process_bert.sh (and the GLUE pipeline after it) run them on a line:

1. its pre-cleanup (common/precleanup_english.py): whitespace collapsed, runs of 4+ dots to "...", << and >>
   to « and », doubled commas and ",." undone, an asterisk opening a word dropped;
2. Moses punctuation normalisation, English, as normalize-punctuation.perl (sacremoses, perl_parity);
3. non-printing characters (Unicode category C) to spaces (remove-non-printing-char.perl);
4. backslashes to spaces (filter_and_cleanup_lines.py; the GLUE pipeline's sed);
5. Moses tokenisation, English, without escaping (tokenizer.perl -no-escape -l en; sacremoses);
6. lower case (gawk tolower);
7. BPE with the release's codes, as fastBPE's applybpe: in each word the best-ranked adjacent pair (a code's
   line order) merged everywhere, left to right, until none is a code, the word's last symbol carrying </w>
   (subword-nmt's version-0.2 rules); "@@" ends every piece but a word's last.

A piece is a dictionary entry (an unknown one is <unk>); a typed [MASK] is <mask>. A sentence reads as the paper's
single-sentence task forms it (glue_dataset.py's GlueSingleDataset): <cls>, the pieces, </s> (fairseq appends
</s> to every binarised line). Without codes, step 7 splits each word into the longest pieces of the dictionary,
left to right: an approximation, and the tokenizer says so (`note`).

The paper's translation models read text as translation/macaron-scripts prepared it (a Recipe each): IWSLT14,
Moses tokenisation in the source's language (escaping on, tokenizer.perl's default), lower case, BPE; WMT14,
Moses normalisation, non-printing characters removed, aggressive hyphen splitting (@-@), no lower case, BPE; both
with "’" straightened as the test-set scripts do, and the ids of fairseq's plain Dictionary (four specials, then
dict.txt's lines from id 4), a sentence its pieces and </s>. A translation is read back as fairseq prints it
(Dictionary.string, "@@ " removed) and detokenised by Moses in the target's language (TranslationReading).

MosesBPE has the interface the library reads of a Hugging Face tokenizer (encode, token_to_id, id_to_token,
get_vocab, get_vocab_size, save); the specials show under BERT's names ([CLS], [SEP], [MASK], [PAD], [UNK]), every
other token as its dictionary entry ("hel@@" and "lo"). It is stored as JSON, a model folder's tokenizer.json with
the key READER first (macaron.formats.folder.read_tokenizer tells it from a Hugging Face tokenizer.json by that key).
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from pathlib import Path

from ..trajectory import MASK_TOKEN
from ..translation import EOS, PAD, UNK

READER = "fairseq-moses-bpe"  # the value of the "reader" key that opens our tokenizer.json
# fairseq 0.6's BertDictionary: Dictionary's specials (index 0 kept free "for consistency with Lua"), then <mask>
# and <cls>; dict.txt's lines follow from id 6
SPECIALS = ("<Lua heritage>", "<pad>", "</s>", "<unk>", "<mask>", "<cls>")
MASK, CLS = 4, 5  # BertDictionary's two more, after the Dictionary's (macaron.translation)
SHOWN = {PAD: "[PAD]", EOS: "[SEP]", UNK: "[UNK]", MASK: MASK_TOKEN, CLS: "[CLS]"}  # as the explorer finds them
# fairseq 0.6's plain Dictionary (translation): the first four, dict.txt's lines from id 4; </s> shown as itself (it
# ends a source and starts and ends a target)
DICTIONARY_SPECIALS = SPECIALS[:4]
PLAIN_SHOWN = {PAD: "[PAD]", EOS: "</s>", UNK: "[UNK]"}
PAIR_READER = "fairseq-moses-bpe-pair"  # a translation model's tokenizer.json: the source's reading and the target's
SEPARATOR, END = "@@", "</w>"
WORDS_KEPT = 1 << 16  # words whose pieces are remembered

# step 1, the pre-cleanup, as (pattern, replacement) in its order; two of its patterns are literal sequences
# (" ,:.)]»" and "[(« ") as its regular expressions match them
PRE_CLEANUP = ((r"\.{4,}", "..."), (r"<<", "«"), (r">>", "»"), (r" (,:\.\)\]»)", r"\1"), (r"(\[\(«) ", r"\1"),
               (r",,", ","), (r",\.", "."), (r" \*([^\s])", r" \1"))


class ReadingError(ValueError):
    """A dictionary, codes or tokenizer file that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class Recipe:
    """The steps a release's scripts ran on a line (the module's text), and the dictionary its ids come from."""

    name: str = "bert"             # whose scripts: bert (process_bert.sh), iwslt14, wmt14
    lang: str = "en"               # Moses's language: normalisation, tokenisation, detokenisation
    cleanup: bool = True           # bert's precleanup_english.py (step 1) and backslash cleanup (step 4)
    normalise: bool = True         # normalize-punctuation.perl (step 2)
    non_printing: bool = True      # remove-non-printing-char.perl (step 3)
    straight_quotes: bool = False  # the translation test sets' sed "s/’/'/g"
    escape: bool = False           # tokenizer.perl's escaping of & | < > ' " [ ] (bert ran it with -no-escape)
    aggressive: bool = False       # tokenizer.perl -a: a hyphen inside a word split off as @-@
    lowercase: bool = True         # step 6
    dictionary: str = "bert"       # bert: BertDictionary, <cls> … </s>; plain: Dictionary, … </s> (translation)

    @property
    def specials(self) -> tuple[str, ...]:
        return SPECIALS if self.dictionary == "bert" else DICTIONARY_SPECIALS

    @property
    def shown(self) -> dict[int, str]:
        return SHOWN if self.dictionary == "bert" else PLAIN_SHOWN


BERT = Recipe()


def iwslt14(lang: str) -> Recipe:
    """prepare-iwslt14.sh: tokenizer.perl -l lang, lowercase.perl, subword-nmt's BPE on the joined corpus."""
    return Recipe("iwslt14", lang, cleanup=False, normalise=False, non_printing=False, straight_quotes=True,
                  escape=True, lowercase=True, dictionary="plain")


def wmt14(lang: str) -> Recipe:
    """prepare-wmt14en2de.sh: normalize-punctuation.perl, remove-non-printing-char.perl, tokenizer.perl -a -l lang,
    subword-nmt's BPE on the joined corpus; cased."""
    return Recipe("wmt14", lang, cleanup=False, straight_quotes=True, escape=True, aggressive=True, lowercase=False,
                  dictionary="plain")


@dataclass(frozen=True)
class Encoding:
    """What `encode` gives, as a Hugging Face Encoding: ids, display tokens, and offsets into the text ((0, 0):
    Moses rewrites the text, so pieces are not spans of it)."""

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]


# ---- the release's files ------------------------------------------------------------------------------------
def _lines(file: Path, what: str) -> list[str]:
    """A release file's lines, or one ReadingError naming the file and what it was to be."""
    try:
        return file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ReadingError(f"{file}: {what} file is missing") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ReadingError(f"{file}: not a readable UTF-8 {what} file ({e})") from None


def read_dictionary(file, specials: tuple[str, ...] = SPECIALS) -> list[str]:
    """Every entry of a fairseq BertDictionary read from dict.txt (BertDictionary.load): the six specials, then
    one entry a line, "<symbol> <count>", the symbol everything before the last space; a plain Dictionary's
    (translation) with its four specials, DICTIONARY_SPECIALS."""
    file = Path(file)
    lines = _lines(file, "dictionary")
    symbols = list(specials)
    for n, line in enumerate(lines, 1):
        symbol, _, count = line.rpartition(" ")
        if not symbol or not count.strip().isdigit():
            raise ReadingError(f"{file}, line {n}: {line[:60]!r} is not '<symbol> <count>' (is this fairseq's "
                               f"dict.txt?)")
        symbols.append(symbol)
    if len(symbols) == len(specials):
        raise ReadingError(f"{file}: the dictionary is empty")
    return symbols


def read_codes(file) -> tuple[list[tuple[str, str]], str]:
    """(merges in rank order, rules) of a BPE codes file: fastBPE's ("a b count" a line; version-0.2 rules) or
    subword-nmt's ("a b" a line, after a "#version: 0.2" line; without it, as subword-nmt reads it, its
    version-0.1 rules: the end of a word a symbol of its own)."""
    file = Path(file)
    lines = _lines(file, "BPE codes")
    rules, start = "0.2", 0
    if lines and lines[0].startswith("#version:"):
        rules, start = lines[0].split(":", 1)[1].strip(), 1
        if rules not in ("0.1", "0.2"):
            raise ReadingError(f"{file}, line 1: BPE codes of version {rules}: only 0.1 and 0.2 are read")
    merges, widths = [], set()
    for n, line in enumerate(lines[start:], start + 1):
        parts = line.strip("\r\n ").split(" ")
        if len(parts) == 3 and not parts[2].isdigit() or len(parts) not in (2, 3) or not all(parts):
            raise ReadingError(f"{file}, line {n}: {line[:60]!r} is neither fastBPE's 'a b count' nor "
                               f"subword-nmt's 'a b'")
        widths.add(len(parts))
        merges.append((parts[0], parts[1]))
    if not merges:
        raise ReadingError(f"{file}: no BPE merges in it")
    if len(widths) > 1:
        raise ReadingError(f"{file}: lines of both fastBPE's 'a b count' and subword-nmt's 'a b' forms")
    if widths == {2} and not start:
        rules = "0.1"  # subword-nmt's own reading of a codes file without its version line
    return merges, rules


# ---- BPE ------------------------------------------------------------------------------------------------------
def bpe_word(word: str, ranks: dict[tuple[str, str], int], rules: str = "0.2") -> list[str]:
    """One word's BPE symbols (without "@@" or </w>): start from its characters, the end of the word marked, then
    merge the best-ranked adjacent pair of symbols, at each place it occurs from the left, until no pair is a
    code."""
    symbols = list(word) + [END] if rules == "0.1" else list(word[:-1]) + [word[-1] + END]
    while len(symbols) > 1:
        rank, first = min((ranks.get(pair, len(ranks)), i) for i, pair in enumerate(zip(symbols, symbols[1:])))
        if rank == len(ranks):
            break
        pair, merged, i = symbols[first:first + 2], [], 0
        while i < len(symbols):
            if i < len(symbols) - 1 and symbols[i] == pair[0] and symbols[i + 1] == pair[1]:
                merged.append(pair[0] + pair[1])
                i += 2
            else:
                merged.append(symbols[i])
                i += 1
        symbols = merged
    if symbols[-1] == END:  # version 0.1: an end of word never merged
        symbols.pop()
    else:
        symbols[-1] = symbols[-1].removesuffix(END)
    return symbols


def longest_pieces(word: str, index: dict[str, int]) -> list[str]:
    """The approximate reading: from the left, the longest prefix of the rest of the word that is an entry ("@@"
    ending it but at the word's end); a character that starts no entry is a piece of its own (<unk>)."""
    out, i = [], 0
    while i < len(word):
        j = next((j for j in range(len(word), i, -1) if _piece(word, i, j) in index), i + 1)
        out.append(_piece(word, i, j))
        i = j
    return out


def _piece(word: str, i: int, j: int) -> str:
    return word[i:j] + ("" if j == len(word) else SEPARATOR)


# ---- the tokenizer --------------------------------------------------------------------------------------------
class MosesBPE:
    """Text to the token ids of a fairseq dictionary as the paper read text, by a Recipe (see the module's text):
    BertDictionary's for its BERT release, a plain Dictionary's for its translation models; and ids back to text."""

    def __init__(self, symbols: list[str], merges: list[tuple[str, str]] | None = None, rules: str = "0.2",
                 source: dict | None = None, recipe: Recipe = BERT):
        specials = recipe.specials
        if list(symbols[:len(specials)]) != list(specials):
            kind = "BertDictionary" if recipe.dictionary == "bert" else "Dictionary"
            raise ReadingError(f"the vocabulary does not start with {kind}'s specials {list(specials)}")
        self.recipe = recipe
        self.symbols, self.rules, self.source = list(symbols), rules, dict(source or {})
        self.merges = None if merges is None else [tuple(m) for m in merges]
        # fairseq's Dictionary.load: a symbol read twice is found at its later id
        self.index = {s: i for i, s in enumerate(self.symbols)}
        self.ranks = {} if self.merges is None else {m: r for r, m in reversed(list(enumerate(self.merges)))}
        self._shown = {name: i for i, name in recipe.shown.items()}
        self._words: dict[str, list[str]] = {}

    @property
    def approximate(self) -> bool:
        """Whether words are split without the release's BPE codes (longest dictionary pieces)."""
        return self.merges is None

    @property
    def note(self) -> str:
        """What a reader of a trace should know of this reading ("" when it is the paper's own)."""
        if not self.approximate:
            return ""
        return ("Approximate reading: no BPE codes came with this model, so each word is split into the longest "
                "pieces of its dictionary, not as the paper's BPE split it.")

    # -- text to pieces --
    @cached_property
    def _moses(self):
        try:
            from sacremoses import MosesPunctNormalizer, MosesTokenizer
        except ImportError:
            raise ReadingError("this model reads text with Moses as the paper did: install sacremoses "
                               "(pip install sacremoses)") from None
        lang = self.recipe.lang
        return MosesPunctNormalizer(lang=lang, perl_parity=True), MosesTokenizer(lang=lang)

    def words(self, text: str) -> list[str]:
        """Steps 1 to 6 (those of the recipe): the text's words, as tokenizer.perl left them (in lower case)."""
        r = self.recipe
        line = " ".join(text.split())
        if r.straight_quotes:
            line = line.replace("\u2019", "'")
        for pattern, replacement in PRE_CLEANUP if r.cleanup else ():
            line = re.sub(pattern, replacement, line)
        normaliser, tokenizer = self._moses
        if r.normalise:
            line = normaliser.normalize(" ".join(line.split()))
        line = "".join(" " if (r.non_printing and unicodedata.category(c)[0] == "C") or (r.cleanup and c == "\\")
                       else c for c in line)
        line = " ".join(line.split())
        if not line:
            return []
        line = tokenizer.tokenize(line, escape=r.escape, aggressive_dash_splits=r.aggressive, return_str=True)
        return (line.lower() if r.lowercase else line).split()

    def pieces(self, text: str) -> list[str]:
        """The dictionary pieces of a text, "@@" ending each but a word's last (step 7)."""
        out = []
        for word in self.words(text):
            pieces = self._words.get(word)
            if pieces is None:
                if self.approximate:
                    pieces = longest_pieces(word, self.index)
                else:
                    symbols = bpe_word(word, self.ranks, self.rules)
                    pieces = [s + SEPARATOR for s in symbols[:-1]] + symbols[-1:]
                if len(self._words) > WORDS_KEPT:
                    self._words.clear()
                self._words[word] = pieces
            out += pieces
        return out

    # -- the tokenizer interface --
    def encode(self, text: str, add_special_tokens: bool = True) -> Encoding:
        """<cls>, the pieces (a typed [MASK] as <mask>), </s>: ids and display tokens (an unknown piece shows as
        [UNK:piece]); with a plain Dictionary (translation) the pieces and </s>."""
        bert = self.recipe.dictionary == "bert"
        ids, tokens = [], []
        for k, part in enumerate(text.split(MASK_TOKEN) if bert else [text]):
            if k:
                ids.append(MASK)
                tokens.append(SHOWN[MASK])
            for piece in self.pieces(part):
                i = self.index.get(piece, UNK)
                ids.append(i)
                tokens.append(piece if i != UNK else f"[UNK:{piece.removesuffix(SEPARATOR)}]")
        if add_special_tokens:
            start = [CLS] if bert else []
            ids = [*start, *ids, EOS]
            tokens = [self.recipe.shown[i] for i in start] + tokens + [self.recipe.shown[EOS]]
        return Encoding(ids, tokens, [(0, 0)] * len(ids))

    def decode(self, ids) -> str:
        """Ids back to text as fairseq prints a translation (Dictionary.string with --remove-bpe: </s> left out,
        <unk> as itself, "@@ " removed), detokenised by Moses in the recipe's language (its escapes undone, @-@
        joined)."""
        words = " ".join(self.symbols[i] if 0 <= i < len(self.symbols) else "<unk>" for i in map(int, ids) if i != EOS)
        words = (words + " ").replace(SEPARATOR + " ", "").rstrip()
        return self._detokenizer.detokenize(words.split()) if words else ""

    @cached_property
    def _detokenizer(self):
        from sacremoses import MosesDetokenizer
        return MosesDetokenizer(lang=self.recipe.lang)

    def token_to_id(self, token: str) -> int | None:
        return self._shown.get(token, self.index.get(token))

    def id_to_token(self, i: int) -> str | None:
        return self.recipe.shown.get(i, self.symbols[i] if 0 <= i < len(self.symbols) else None)

    def get_vocab(self) -> dict[str, int]:
        return {self.id_to_token(i): i for i in range(len(self.symbols))}

    def get_vocab_size(self) -> int:
        return len(self.symbols)

    # -- the file --
    def to_dict(self) -> dict:
        return {"reader": READER, "version": 1, "rules": self.rules, "source": self.source,
                "recipe": asdict(self.recipe),
                "merges": None if self.merges is None else [f"{a} {b}" for a, b in self.merges],
                "symbols": self.symbols}

    def save(self, path) -> None:
        _write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, doc: dict) -> "MosesBPE":
        if not isinstance(doc, dict) or doc.get("reader") != READER:
            raise ReadingError(f"not a {READER} tokenizer")
        try:
            merges = doc["merges"]
            return cls(doc["symbols"], None if merges is None else [tuple(m.split(" ")) for m in merges],
                       doc.get("rules", "0.2"), doc.get("source"), Recipe(**doc.get("recipe", {})))
        except (KeyError, TypeError, AttributeError) as e:
            raise ReadingError(f"a {READER} tokenizer with a field missing or wrong ({e})") from None

    @classmethod
    def from_file(cls, path) -> "MosesBPE":
        return _read_json(path, cls.from_dict)


class TranslationReading:
    """A translation model's reading: `source` reads the source language's text to the encoder's ids; `target` gives
    the decoder's ids their tokens and reads a translation back to text in the target's language. With a joined
    dictionary both have the same entries (stored once); the BPE codes are the source's (joined too, in the paper)."""

    def __init__(self, source: MosesBPE, target_lang: str, target_symbols: list[str] | None = None):
        self.source = source
        self.target = MosesBPE(target_symbols or source.symbols, source.merges, source.rules, source.source,
                               replace(source.recipe, lang=target_lang))
        self.joined = target_symbols is None or list(target_symbols) == source.symbols

    @property
    def note(self) -> str:
        return self.source.note

    def to_dict(self) -> dict:
        return {"reader": PAIR_READER, "version": 1, "source": self.source.to_dict(),
                "target_lang": self.target.recipe.lang, "target_symbols": None if self.joined else self.target.symbols}

    def save(self, path) -> None:
        _write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, doc: dict) -> "TranslationReading":
        if not isinstance(doc, dict) or doc.get("reader") != PAIR_READER:
            raise ReadingError(f"not a {PAIR_READER} tokenizer")
        try:
            return cls(MosesBPE.from_dict(doc["source"]), doc["target_lang"], doc.get("target_symbols"))
        except (KeyError, TypeError) as e:
            raise ReadingError(f"a {PAIR_READER} tokenizer with a field missing or wrong ({e})") from None

    @classmethod
    def from_file(cls, path) -> "TranslationReading":
        return _read_json(path, cls.from_dict)


def _write_json(path, doc: dict) -> None:
    Path(path).write_text(json.dumps(doc, ensure_ascii=False) + "\n", encoding="utf-8")


def _read_json(path, from_dict):
    """A tokenizer.json of ours read by `from_dict`, or one ReadingError that names the file."""
    try:
        return from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReadingError(f"{path}: not a readable tokenizer ({e})") from None
    except ReadingError as e:
        raise ReadingError(f"{path}: {e}") from None


def is_moses_bpe(file, reader: str = READER) -> bool:
    """Whether a tokenizer.json is ours (its first key "reader", as `save` writes it) and not Hugging Face's."""
    try:
        with open(file, encoding="utf-8") as f:
            head = f.read(64)
    except (OSError, UnicodeDecodeError):
        return False
    return head.replace(" ", "").startswith(f'{{"reader":"{reader}"')


def is_moses_bpe_pair(file) -> bool:
    """Whether a tokenizer.json is a translation model's pair of Moses-BPE readings (TranslationReading)."""
    return is_moses_bpe(file, PAIR_READER)
