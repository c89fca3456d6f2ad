"""What a kind of training owns, apart from the one trainer (fairseq's split between a task, a criterion and the
trainer). A task owns its data, vocabulary, batches, held-out sets and their evaluation, the models it names and the
facts and card of its model folders; its criterion (objective.py) owns the loss; the trainer (trainer.py) owns the
rest: the lockstep loop, optimizers and schedules, checkpoints and resume, precision, budgets, milestones, the writing
of model folders and cards, torchrun and --detach. Two tasks: the masked LM (pretrain.MaskedLMTask) and translation
(translate.TranslationTask), each with a command line that offers its own options and the trainer's
(options.parser), and a training.json and checkpoint that record only what applies to it."""
from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from torch import nn


class Task(ABC):
    """One kind of training. `prepare` reads the data and sets what the trainer reads of it:

    - `data`: the opened data (`tok`, the tokenizer; `tok_hash`, its hash; `stats`, the data's statistics; `train`,
      the training split, whose `n_tokens` a card reports);
    - `train_data`: the training examples as batches draw them: `len()` of them, `lengths` the tokens of each that a
      budget counts;
    - `order`: which examples form batch `step` (data.Order's interface: `indices`, `epoch`, `steps_for_tokens`,
      `tokens_for_steps`);
    - `configs`: name -> the config of each model the command names;
    - `terms`: what a resumed run must share with its checkpoint (stored as the checkpoint's "run").

    `evaluation_sets` builds `held_out`, the fixed batches every evaluation reads."""

    kind = ""  # training.json's "task" (card.KINDS)
    held_out_name = "eval"  # what the log calls an evaluation
    # the terms training.json records too, which a warm start must share with the weights it continues
    published: tuple[str, ...] = ()
    # a term's former name, read from a checkpoint written before the term had its own ({term: former name})
    formerly: dict[str, str] = {}

    def __init__(self, args, dist):
        self.args, self.dist = args, dist
        self.data = self.train_data = self.order = self.held_out = None
        self.configs: dict = {}
        self.terms: dict = {}

    # ---- data and models ----------------------------------------------------------------------------------------
    @abstractmethod
    def prepare(self):
        """Open and check the data, name the models and their configs, and set the run's terms: everything is
        checked before anything is written."""

    @abstractmethod
    def evaluation_sets(self):
        """The fixed held-out batches every evaluation reads (`held_out`)."""

    @abstractmethod
    def batch(self, step: int) -> tuple[list, int]:
        """(this process's micro-batches of global batch `step`, on the device, each the tuple of tensors the
        criterion's forward takes; the tokens of the whole global batch that a budget counts)."""

    @abstractmethod
    def network(self, config) -> nn.Module:
        """The network a model of this config trains (its weights drawn from the global generator)."""

    @abstractmethod
    def criterion(self, network: nn.Module) -> nn.Module:
        """The module whose forward takes a micro-batch and returns its loss; it holds the network."""

    @abstractmethod
    def reuses_weights(self, network: nn.Module) -> bool:
        """Whether one forward of the network calls a module that holds weights more than once (trainer.at_once)."""

    @property
    @abstractmethod
    def longest(self) -> int:
        """The most tokens a sequence of a batch holds (the attention kernel is chosen for it)."""

    @property
    def compiles(self) -> bool:
        """Whether the networks are compiled (torch.compile)."""
        return False

    @property
    def penalty(self) -> float | None:
        """The move penalty λ the criterion adds to the loss (None: the task's loss has no such term)."""
        return None

    @abstractmethod
    def describe(self) -> str:
        """The training data in a few words, for the log."""

    # ---- evaluation and what the model folders say --------------------------------------------------------------
    @abstractmethod
    def evaluate(self, m, step: int) -> dict:
        """The held-out scores of model `m` (trainer.Member) at `step`; every process calls it, and the scores are
        summed over the processes."""

    def evaluated(self, out, m, result: dict):
        """After an evaluation has been recorded in m.last_eval (`out`: the run's output.Output)."""

    @abstractmethod
    def said(self, m, result: dict) -> str:
        """An evaluation's scores in the log's words."""

    @property
    def baseline(self) -> dict:
        """Scores of the data alone that every milestone's card shows beside the model's."""
        return {}

    def evaluation_seconds(self, members: list, measured: float) -> float:
        """What an evaluation of every model takes, for --fit-minutes's budget, from the probe's `measured` one."""
        return measured

    def closing_seconds(self, members: list, per_eval: float, per_ckpt: float) -> float:
        """What the run's end takes after its last step, for --fit-minutes's budget (`per_eval`, `per_ckpt`: the
        probe's seconds for one evaluation of every model and one checkpoint): the last evaluation and the model
        folders."""
        return per_eval + 2 * per_ckpt + 15.0

    @abstractmethod
    def model(self, out, m):
        """The finished model's folder (by the main process): `out.write_model` with its final scores."""

    @abstractmethod
    def facts(self, m) -> dict:
        """training.json's fields of this task (the trainer's own are output.Output.facts')."""

    @abstractmethod
    def write_card(self, folder: Path, facts: dict):
        """training.json, the card and its curve."""

    # ---- the checkpoint ------------------------------------------------------------------------------------------
    def state(self) -> dict:
        """What the checkpoint keeps of the task besides the run's terms."""
        return {}

    def started(self, state: dict | None, members: list):
        """After the run's start; `state`: the checkpoint's, on a resume."""
