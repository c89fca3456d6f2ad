"""One door for every model folder: the formats, in the order they are asked, and what they load.

    fmt, fields = registry.read(folder)        config.json read once, the format that recognises it, its config
                                               judged (a family or setting we do not map is named, with what loads)
    config, state = fmt.load(folder, fields)   our config and our weights, under our network's names
    fmt.reading(folder, config)                its reading of text
    fmt.needs(listed), fmt.weights             what a download of it fetches

Loading (sources.loading), the Hub download (sources.hub), `list` and `fetch` read this registry and name no family.
A format is one module (formats.base.Format); a Hugging Face family is one entry of encoders.FAMILIES or
decoders.DECODERS (docs/architecture.md shows one added). The paper's fairseq checkpoints are not folders: they are
converted once into ours (formats.fairseq) and then read as ours.
"""
from __future__ import annotations

from pathlib import Path

from .base import CONFIG, Format, Unmapped, what_it_is
from .decoders import DECODERS_FORMAT
from .encoders import ENCODERS
from .folder import CheckpointError, read_json
from .marian import MARIAN
from .ours import ENCODER_DECODER, NETWORK

FORMATS: tuple[Format, ...] = (ENCODER_DECODER, NETWORK, MARIAN, DECODERS_FORMAT, ENCODERS)
LOADS = ", ".join(f"{title} ({t})" for f in (ENCODERS, DECODERS_FORMAT, MARIAN) for t, title in f.types.items())


def fields_of(folder: Path) -> dict:
    """config.json's fields, or an error naming the file (and the folders just inside that hold one: a package's
    model is often in a subfolder)."""
    file = Path(folder) / CONFIG
    if not file.is_file() and Path(folder).is_dir():
        inside = sorted(str(c.parent) for c in Path(folder).glob(f"*/{CONFIG}"))
        if inside:
            raise CheckpointError(f"{file}: file is missing; a model folder is inside it: {', '.join(inside)}")
    fields = read_json(file)
    if not isinstance(fields, dict):
        raise CheckpointError(f"{file}: expected a JSON object")
    return fields


def recognise(fields: dict) -> Format | None:
    return next((f for f in FORMATS if f.recognises(fields)), None)


def of_type(model_type: str | None) -> Format | None:
    """The format of a Hugging Face model_type (as the Hub lists it), None for one we do not map; without one (old
    BERT exports, ours), the encoders'."""
    if model_type is None:
        return ENCODERS
    return next((f for f in FORMATS if model_type in f.types), None)


def read(folder) -> tuple[Format, dict]:
    """(the folder's format, config.json's fields), its config judged: a family, kind or setting that no format maps
    is named with every family that loads; a file that is not a config of ours or Hugging Face's says so."""
    folder = Path(folder)
    fields = fields_of(folder)
    fmt = recognise(fields)
    try:
        if fmt is None:
            if "model_type" in fields or "hidden_size" in fields:
                raise Unmapped(f"{folder / CONFIG}: {what_it_is(fields)}")
            raise CheckpointError(f"{folder / CONFIG}: neither a Macaron Explorer config (no 'scheme') nor a Hugging "
                                  f"Face config (no 'model_type' / 'hidden_size')")
        fmt.judge(fields, folder)
    except Unmapped as e:
        raise CheckpointError(f"{e}. These Hugging Face families load: {LOADS}") from None
    return fmt, fields


def translates(folder) -> bool:
    """Whether a folder holds a translation model (an encoder–decoder: ours, Marian's, or a Hugging Face config that
    says is_encoder_decoder): the pages that open one particle system leave it to the Translate page. False for a
    folder that does not read (the page that opens it says why)."""
    try:
        fields = fields_of(Path(folder))
    except (CheckpointError, OSError):
        return False
    fmt = recognise(fields)
    return fmt.translates if fmt else fields.get("is_encoder_decoder") is True
