"""Our own folders (formats.folder writes them): one network (config.json with a 'scheme'), or an encoder–decoder (an
'encoder' and a 'decoder' config, each with its scheme; translation.model), with the tokenizer.json they read text
with: a Hugging Face tokenizers file, the paper's Moses + BPE reading (formats.moses_bpe) or, for a translator of
ours, one joint vocabulary of both languages."""
from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from ..config import ModelConfig
from ..translation.model import JointReading, TranslationConfig
from .base import CONFIG, TOKENIZER, Format
from .folder import CheckpointError, folder_name, read_tokenizer, read_weights
from .moses_bpe import ReadingError, TranslationReading, is_moses_bpe_pair


def model_config(fields: dict, folder: Path) -> ModelConfig:
    """Our config of config.json's fields; a field it cannot take is named with the file."""
    try:
        config = ModelConfig.from_dict(fields)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / CONFIG}: {e}") from None
    config.name = config.name or folder_name(folder)
    return config


def translation_config(fields: dict, folder: Path) -> TranslationConfig:
    try:
        config = TranslationConfig.from_dict(fields)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{folder / CONFIG}: {e}") from None
    config.name = config.name or folder.name
    return config


def reading_of(file) -> TranslationReading | JointReading:
    """A translation folder's tokenizer.json: the paper's reading (ours, key "reader") or one joint vocabulary."""
    if is_moses_bpe_pair(file):
        return TranslationReading.from_file(file)
    try:
        return JointReading(Tokenizer.from_file(str(file)))
    except Exception as e:  # tokenizers raises its own Exception for a file it cannot read
        raise ReadingError(f"{file}: not a readable tokenizer ({e})") from None


class Network(Format):
    name, title = "macaron", "ours (config.json with a scheme)"

    def recognises(self, fields: dict) -> bool:
        return "scheme" in fields

    def judge(self, fields: dict, folder: Path) -> None:
        model_config(fields, folder)

    def load(self, folder: Path, fields: dict):
        config = model_config(fields, folder)  # a wrong config.json is named before the weights are read
        return config, read_weights(folder)

    def reading(self, folder: Path, config: ModelConfig):
        # an encoder's specials under BERT's names; a decoder's <s> is its beginning of text, not a [CLS]
        return read_tokenizer(folder, config.vocab_size, bert_names=not config.causal)


class EncoderDecoderFolder(Format):
    name, title, translates = "encoder-decoder", "ours, an encoder–decoder", True

    def recognises(self, fields: dict) -> bool:
        return all(isinstance(fields.get(k), dict) and "scheme" in fields[k] for k in ("encoder", "decoder"))

    def judge(self, fields: dict, folder: Path) -> None:
        translation_config(fields, folder)

    def load(self, folder: Path, fields: dict):
        return self.open(folder, fields)[:2]

    def open(self, folder: Path, fields: dict):
        config = translation_config(fields, folder)
        reading = self.reading(folder, config)  # a wrong tokenizer.json is named before the weights are read
        return config, read_weights(folder), reading

    def reading(self, folder: Path, config: TranslationConfig):
        if not (folder / TOKENIZER).is_file():
            return None
        try:
            tokenizer = reading_of(folder / TOKENIZER)
        except ReadingError as e:
            raise CheckpointError(str(e)) from None
        sizes = (tokenizer.source.get_vocab_size(), tokenizer.target.get_vocab_size())
        if sizes != (config.encoder.vocab_size, config.decoder.vocab_size):
            raise CheckpointError(f"{folder / TOKENIZER}: dictionaries of {sizes[0]:,} and {sizes[1]:,} entries "
                                  f"for embeddings of {config.encoder.vocab_size:,} and {config.decoder.vocab_size:,}")
        return tokenizer


NETWORK, ENCODER_DECODER = Network(), EncoderDecoderFolder()
