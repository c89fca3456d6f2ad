"""`python -m macaron import-fairseq`: a fairseq 0.6 checkpoint of the paper's (formats.fairseq maps it), its
dictionaries and BPE codes, checked and written once as a model folder of ours, with a model card that says what
was converted and what was left out.

    python -m macaron import-fairseq checkpoint_pretrained.pt --dict dict.txt [--bpe-codes bpe-code] --out FOLDER
    python -m macaron import-fairseq checkpoint.pt --source-dict dict.de.txt --target-dict dict.en.txt --out FOLDER
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from ..network.model import Model
from ..translation.model import EncoderDecoder
from .base import first_line
from .fairseq import SOURCE, TRANSLATION, convert, convert_translation, read_checkpoint, refuse_unmapped
from .folder import CheckpointError, save
from .moses_bpe import (
    CLS,
    DICTIONARY_SPECIALS,
    EOS,
    SPECIALS,
    MosesBPE,
    ReadingError,
    TranslationReading,
    iwslt14,
    read_codes,
    read_dictionary,
    wmt14,
)


def import_fairseq(checkpoint, dictionary=None, bpe_codes=None, out=None, name: str | None = None, *,
                   source_dict=None, target_dict=None) -> Path:
    """Read a fairseq 0.6 checkpoint of a mapped architecture (MAPPED, TRANSLATION), its dictionary (`dictionary`;
    a translation model's may be two, `source_dict` and `target_dict`) and (if given) its BPE codes, check them and
    write a model folder of ours at `out`: safetensors, config.json, tokenizer.json (the paper's reading,
    macaron.formats.moses_bpe), README.md (the card) and converted.json. Every check runs before anything is written."""
    checkpoint, out = Path(checkpoint), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir()) and not (out / SOURCE).is_file()):
        raise CheckpointError(f"{out}: exists and is not a folder this import wrote; give a new folder")
    ckpt = read_checkpoint(checkpoint)
    arch = refuse_unmapped(ckpt["args"], checkpoint)
    files = _dictionary_files(arch, dictionary, source_dict, target_dict)
    try:
        specials = DICTIONARY_SPECIALS if arch in TRANSLATION else SPECIALS
        symbols = [read_dictionary(f, specials) for f in files]
        merges, rules = read_codes(bpe_codes) if bpe_codes else (None, "0.2")
    except ReadingError as e:
        raise CheckpointError(str(e)) from None
    source = dict(dictionary=files[0].name, bpe_codes=Path(bpe_codes).name if bpe_codes else None)
    try:
        if arch in TRANSLATION:
            config, state, facts = convert_translation(ckpt, (symbols[0], symbols[-1]), checkpoint,
                                                       (files[0], files[-1]), name or out.name)
            recipe = (iwslt14 if "iwslt" in arch or "iwslt" in str(getattr(ckpt["args"], "data", "")) else wmt14)(
                config.source_lang)
            reading = TranslationReading(MosesBPE(symbols[0], merges, rules, source, recipe), config.target_lang,
                                         symbols[-1])
            model, kind = EncoderDecoder(config, reading), "translation"
        else:
            config, state, facts = convert(ckpt, symbols[0], checkpoint, files[0], name or out.name)
            model, kind = Model(config, MosesBPE(symbols[0], merges, rules, source)), "bert"
        _fill(model, state, checkpoint, facts["arch"])
    except CheckpointError:
        raise
    except (ValueError, TypeError, IndexError, RuntimeError) as e:  # a size its args do not allow, a wrong shape
        raise CheckpointError(f"{checkpoint}: weights or args that do not fit together ({first_line(e)})") from None
    record = dict(source=f"fairseq 0.6 (Lu et al. 2019, {kind}/)",
                  checkpoint=str(checkpoint.resolve()), sha256=_sha256(checkpoint), bytes=checkpoint.stat().st_size,
                  dictionary=str(files[0].resolve()), target_dictionary=str(files[-1].resolve()),
                  bpe_codes=str(Path(bpe_codes).resolve()) if bpe_codes else None, bpe_merges=len(merges or ()),
                  bpe_rules=rules if merges else None, reading="approximate" if merges is None else "the paper's",
                  **facts)
    if kind == "bert":
        del record["target_dictionary"]
    else:
        record["recipe"] = reading.source.recipe.name
    _write(model, out, (translation_card if kind == "translation" else card)(model, record), record)
    return out


def _dictionary_files(arch: str, dictionary, source_dict, target_dict) -> list[Path]:
    """[the dictionary] or, a translation model's given apart, [source's, target's]."""
    if arch in TRANSLATION and (source_dict or target_dict):
        if dictionary or not (source_dict and target_dict):
            raise CheckpointError("give --dict (a joined dictionary), or both --source-dict and --target-dict")
        return [Path(source_dict), Path(target_dict)]
    if source_dict or target_dict:
        raise CheckpointError(f"{arch} is a BERT model with one dictionary: give it as --dict")
    if not dictionary:
        raise CheckpointError("give the checkpoint's dictionary: --dict dict.txt"
                              + (" (or --source-dict and --target-dict)" if arch in TRANSLATION else ""))
    return [Path(dictionary)]


def _fill(model, state: dict, checkpoint: Path, arch: str) -> None:
    """Load our weights into the model, once each fits it: one message for the first misfits."""
    expected = model.state_dict()
    wrong = [f"{k}: {tuple(state[k].shape)} for {tuple(expected[k].shape)}" for k in expected
             if k in state and state[k].shape != expected[k].shape]
    missing = sorted(set(expected) - set(state))
    if wrong or missing:
        raise CheckpointError(f"{checkpoint}: weights do not fit {arch}'s args: "
                              + "; ".join(wrong[:3] + [f"missing {m}" for m in missing[:3]]))
    model.load_state_dict(state)


def _write(model, out: Path, text: str, record: dict) -> None:
    """The folder, written whole beside `out` and then moved into place."""
    staging = out.parent / f".{out.name}.importing"
    shutil.rmtree(staging, ignore_errors=True)
    save(model, staging, card=text)
    (staging / SOURCE).write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)


def _sha256(file: Path) -> str:
    h = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _card(title: str, what: str, rows: list[tuple[str, str]], converted: list[str], left_out: list[str]) -> str:
    """A model card: where the weights came from (a table), what became of each part and what was left out."""
    table = "\n".join(f"| {k} | {v} |" for k, v in rows)
    return (f"# {title}\n\nThe paper's own {what} (Lu et al. 2019, *Understanding and Improving Transformer From a "
            f"Multi-Particle Dynamic System Point of View*), imported from its fairseq 0.6 checkpoint by "
            f"`python -m macaron import-fairseq`.\n\n| | |\n|---|---|\n{table}\n\n## Converted\n"
            + "".join(f"- {x}\n" for x in converted if x)
            + "\n## Left out\n" + "".join(f"- {x}\n" for x in left_out + ["the optimizer's state and the training "
                                                                          "meters"])
            + f"\n`{SOURCE}` records the source files and the architecture's fields.\n")


def _source_rows(r: dict) -> list[tuple[str, str]]:
    return [("source", f"`{Path(r['checkpoint']).name}` ({r['bytes']:,} bytes, sha256 `{r['sha256'][:16]}…`)")]


def _tail_rows(model, r: dict) -> list[tuple[str, str]]:
    return [("updates", f"{r['num_updates']:,}" if isinstance(r["num_updates"], int) else "not recorded"),
            ("parameters", f"{model.num_parameters():,}"),
            ("weights", f"float32 safetensors (the checkpoint's: {r['dtype']})")]


def card(model: Model, r: dict) -> str:
    """The model card of a BERT import: where the weights came from and what became of each part."""
    c, f = model.config, r["fields"]
    act = c.activation.upper()
    layer = (f"Macaron: ½ FFN (ReLU), attention, ½ FFN ({act}); scheme `macaron` (Strang–Marchuk)" if f["macaron"]
             else f"Transformer: attention, FFN ({act}); scheme `transformer` (Lie–Trotter)")
    codes = Path(r["bpe_codes"]).name if r["bpe_codes"] else ""
    reading = (f"Moses normalisation and tokenisation (no escaping), lower case, BPE with `{codes}` "
               f"({r['bpe_merges']:,} merges), as bert/macaron-scripts read text" if r["bpe_merges"] else
               "**approximate**: no BPE codes were given, so each word is split into the longest pieces of the "
               "dictionary (Moses and lower case as the paper's)")
    rows = _source_rows(r) + [
        ("architecture", f"`{r['arch']}`: {c.n_layers} layers × {c.d_model}, {c.n_heads} heads, FFN "
                         f"{f['encoder_ffn_embed_dim']}{' per half' if f['macaron'] else ''}"),
        ("layer", f"{layer}; pre-LN, norms {'with' if c.norm_affine else 'without'} gain and bias"),
        ("dictionary", f"`{Path(r['dictionary']).name}`: {c.vocab_size:,} entries (BertDictionary's "
                       f"{len(SPECIALS)} specials, then its lines): token ids unchanged"),
        ("reading", reading + f"; a sentence is <cls> … </s> (ids {CLS} and {EOS}), segment 1")] + _tail_rows(model, r)
    head = f"the masked-word head: Linear → {act} → LayerNorm → the token embedding (tied), no bias" if r["head"] \
        else None
    converted = [f"the token embedding, times √d = {c.embedding_scale:.4g} (`embedding_scale`)",
                 f"one position table: {r['positions']}",
                 "every layer's attention (q, k, v stacked as fairseq's in_proj), FFNs and norms",
                 "the final LayerNorm", head]
    return _card(c.name, "model", rows, converted, r["left_out"])


def translation_card(model: EncoderDecoder, r: dict) -> str:
    """The model card of a translation import: the two systems, how text is read and written, what was converted."""
    c, f = model.config, r["fields"]
    e, d = c.encoder, c.decoder
    pre = e.norm == "pre"
    layer = ("Macaron: ½ FFN, attention, ½ FFN (every FFN ReLU); scheme `macaron` (Strang–Marchuk); the decoder's: "
             "½ FFN, self-attention (causal), cross-attention, ½ FFN" if f["macaron"] else
             "Transformer: attention, FFN (ReLU); scheme `transformer` (Lie–Trotter); the decoder's: self-attention "
             "(causal), cross-attention, FFN")
    norms = ("pre-LN (a final LayerNorm in each system)" if pre else
             "post-LN (a LayerNorm after each residual sub-step, none on the embedding, no final one)")
    codes = Path(r["bpe_codes"]).name if r["bpe_codes"] else ""
    steps = {"iwslt14": "Moses tokenisation (escaped), lower case, as prepare-iwslt14.sh",
             "wmt14": "Moses punctuation normalisation, non-printing characters removed, Moses tokenisation "
                      "(escaped, hyphens split as @-@), cased, as prepare-wmt14en2de.sh"}[r["recipe"]]
    bpe = (f"subword-nmt BPE with `{codes}` ({r['bpe_merges']:,} merges)" if r["bpe_merges"] else
           "**approximate** BPE: no codes were given, so each word is split into the longest pieces of the dictionary")
    joined = c.shared_embeddings or Path(r["dictionary"]) == Path(r["target_dictionary"])
    dictionary = (f"`{Path(r['dictionary']).name}`, joined: {e.vocab_size:,} entries" if joined else
                  f"`{Path(r['dictionary']).name}` ({e.vocab_size:,} entries) and `{Path(r['target_dictionary']).name}`"
                  f" ({d.vocab_size:,})")
    rows = _source_rows(r) + [
        ("architecture", f"`{r['arch']}`, {c.source_lang} → {c.target_lang}: encoder {e.n_layers} layers × "
                         f"{e.d_model}, {e.n_heads} heads; decoder {d.n_layers} × {d.d_model}, {d.n_heads} heads; FFN "
                         f"{f['encoder_ffn_embed_dim']}{' per half' if f['macaron'] else ''}"),
        ("layer", f"{layer}; {norms}"),
        ("dictionary", f"{dictionary} (Dictionary's {len(DICTIONARY_SPECIALS)} specials, then its lines): ids "
                       f"unchanged; a source is its pieces and </s> (id {EOS}), a target starts from </s>"),
        ("reading", f"{steps}; {bpe}; the translation read back with its BPE removed and detokenised by Moses "
                    f"({c.target_lang})"),
        ("search", "fairseq's: beam 5, length penalty 1 (test-iwslt14.sh; its WMT14 scripts: beam 4, 0.6), at most "
                   "200 words")] + _tail_rows(model, r)
    embeddings = ("one token embedding for the source, the target and the next-word head (share_all_embeddings)"
                  if c.shared_embeddings else "each system's token embedding; the next-word head "
                  + ("tied to the decoder's" if d.lm_head_tied else "its own (embed_out)"))
    converted = [f"{embeddings}, times √d = {e.embedding_scale:.4g} (`embedding_scale`)",
                 f"each system's position table: {r['positions']['encoder']}"
                 + ("" if r["positions"]["decoder"] == r["positions"]["encoder"] else
                    f" (the decoder's: {r['positions']['decoder']})"),
                 "every layer's self-attention (q, k, v stacked as fairseq's in_proj), the decoder's cross-attention "
                 "(encoder_attn's in_proj split: q from the target, k and v from the source), FFNs and LayerNorms",
                 "each system's final LayerNorm" if pre else "no embedding LayerNorm (`embedding_norm: false`)"]
    return _card(c.name, "translation model", rows, converted, r["left_out"])
