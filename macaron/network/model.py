"""Networks whose layers are splitting-scheme steps, and that can record every sub-step: encoders (every particle
moves because of all the others) and decoders (causal: because of those before it; in an encoder–decoder also
toward the source's particles, macaron.translation.model).

Shapes: B sentences, T tokens, d = d_model, H heads, V vocabulary.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from ..config import ModelConfig
from ..schemes import CONVECTION, CROSS, DIFFUSION, FULL, Sub, substep_label, substep_times
from ..trajectory import Step, Trajectory
from .interventions import prepare, said
from .operators import ACTIVATION, Edit, KeyValueCache, SourceSystem, norm, operator
from .positions import Floater, sinusoids
from .reading import InputError, Reader, Row

# Padded tokens per traced batch: on a CPU, larger batches leave the caches and run slower than one
# sentence at a time (benchmarks/bench_dynamics.py); a GPU wants them large.
BATCH_TOKENS = {"cpu": 2048, "cuda": 1 << 16}


class Intermediate(NamedTuple):
    """One entry of `Model.forward(record=[])`, as x-transformers' intermediates: the residual stream after a
    sub-step (the embedding first) and that sub-step's mixing matrix (None for convection and the embedding)."""

    state: torch.Tensor  # [B, T, d]
    mixing: torch.Tensor | None  # [B, H, T, T]; a cross-attention's [B, H, T, S]


def length_batches(lengths: Sequence[int], batch_size: int, batch_tokens: int) -> list[list[int]]:
    """Indices of sentences in batches of similar length: sorted by length, at most `batch_size`
    sentences and `batch_tokens` padded tokens a batch (a longer sentence goes alone)."""
    out: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if not out or len(out[-1]) == batch_size or (len(out[-1]) + 1) * lengths[i] > batch_tokens:
            out.append([])
        out[-1].append(i)
    return out


class Layer(nn.Module):
    """One time step of the ODE: walk the scheme, one operator per sub-step.

    pre-LN:  x ← x + h·op(LN(x))      (the displacement is exactly h times the operator)
    post-LN: x ← LN(x + h·op(x))      (BERT; the norm moves the particle again, by itself: LN(x) ≠ x)

    h is the sub-step's fraction of the layer's time step (config.step, 1 for BERT-style models).

    A *plan* says which sub-steps run, in which order, for which fraction h, in how many Euler moves
    n: ((k, h, n), ...). The layer's own plan walks its scheme with n = 1; other plans run the same
    operators as another scheme, or with smaller moves (macaron.studies.dynamics' ODE experiments), or with h
    scaled (macaron.interventions: h = 0 is a sub-step switched off, which moves no particle, post-LN's norm
    included).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.scheme, self.post_norm, self.step = cfg.substeps, cfg.norm == "post", cfg.step
        parts, g = [], None  # (operator, norm) of each sub-step; g: the first convection's
        acts = iter(cfg.convection_activations or ())  # each convection sub-step's activation, in order
        for s in self.scheme:
            act = next(acts, None) if s.kind in (CONVECTION, FULL) else None
            tie = cfg.tied_halves and s.kind == CONVECTION and g is not None  # the same G in every half
            parts.append(g if tie else (operator(s.kind, cfg, act), norm(cfg, cfg.d_model)))
            g = parts[-1] if s.kind == CONVECTION and g is None else g
        self.ops, self.norms = (nn.ModuleList(m) for m in zip(*parts))
        self.drop = nn.Dropout(cfg.dropout)

    @property
    def plan(self) -> tuple[tuple[int, float, int], ...]:
        return tuple((k, s.fraction, 1) for k, s in enumerate(self.scheme))

    def velocity(self, k: int, x, attention_mask=None, position=None, need_weights=False, part: str | None = None,
                 source: SourceSystem | None = None, cache: KeyValueCache | None = None, edit: Edit | None = None):
        """The operator of sub-step k evaluated at state x: (v [B, T, d], mixing or None). `part`, of an unsplit
        sub-step (F + G at once): its attention (DIFFUSION) or its FFN (CONVECTION) alone. `source`: the other
        particle system, which a cross-attention sub-step reads. `cache`: the earlier words' keys and values, x
        the words after them (incremental decoding). `edit`: what an intervention changes in the operator."""
        inp = x if self.post_norm else self.norms[k](x)
        op = self.ops[k]
        if self.scheme[k].kind == CONVECTION:
            return op(inp), None
        if self.scheme[k].kind == CROSS:
            return op(inp, source, need_weights, cache, edit)
        if self.scheme[k].kind != FULL:
            return op(inp, attention_mask, position, need_weights, cache, edit)
        if part == DIFFUSION:
            return op.diffusion(inp, attention_mask, position, need_weights, cache, edit)
        if part == CONVECTION:
            return op.ffn(inp, x), None
        return op(inp, attention_mask, position, need_weights, raw=x, cache=cache, edit=edit)

    def substep(self, k: int, x, attention_mask=None, position=None, need_weights=False, fraction: float | None = None,
                moves: int = 1, sizes: list | None = None, source: SourceSystem | None = None,
                cache: KeyValueCache | None = None, edit: Edit | None = None):
        """Advance x by sub-step k for `fraction` of the step (default: its fraction in the scheme), in
        `moves` Euler moves of fraction/moves each. Post-LN normalises once, after the last move: the
        norm is not part of the sub-flow that finer moves resolve. A fraction of 0 is the sub-step switched off:
        x stays, unnormalised, no mixing. The mixing weights returned are those at the state entering the
        sub-step. `sizes` receives each move's mean ‖Δx‖²/‖x‖²."""
        fraction = self.scheme[k].fraction if fraction is None else fraction
        if fraction == 0:
            return x, None
        h = fraction / moves
        if moves > 1 and cache is not None:
            raise ValueError("a key-value cache holds one move's keys and values: run Euler moves without it")
        x, weights = self.move(k, x, h, attention_mask, position, need_weights, sizes, source=source, cache=cache,
                               edit=edit)
        for _ in range(moves - 1):
            x = self.move(k, x, h, attention_mask, position, sizes=sizes, source=source, edit=edit)[0]
        return (self.norms[k](x) if self.post_norm else x), weights

    def move(self, k: int, x, h: float, attention_mask=None, position=None, need_weights=False,
             sizes: list | None = None, part: str | None = None, source: SourceSystem | None = None,
             cache: KeyValueCache | None = None, edit: Edit | None = None):
        """One Euler move of sub-step k's operator (or of one part of an unsplit sub-step: velocity) for a fraction
        h of the layer's step, x + step·h·op, without a post-LN norm: (x', mixing)."""
        v, weights = self.velocity(k, x, attention_mask, position, need_weights, part, source, cache, edit)
        dx = self.step * h * self.drop(v)
        if sizes is not None:  # the move relative to the state, squared: what a penalty keeps small
            sizes.append((dx.float().pow(2).sum(-1) / x.float().pow(2).sum(-1).clamp_min(1e-12)).mean())
        return x + dx, weights

    def forward(self, x, attention_mask=None, position=None, record=None, plan=None, sizes: list | None = None,
                source: SourceSystem | None = None, cache: KeyValueCache | None = None, edits=None):
        for k, h, n in plan or self.plan:
            edit = None if edits is None else edits.next()
            y, weights = self.substep(k, x, attention_mask, position, record is not None, h, n, sizes, source, cache,
                                      edit)
            x = y if edits is None else edits.moved(x, y)
            if record is not None:
                record.append(Intermediate(x, weights))
        return x


class Model(nn.Module):
    """Tokens in, particles out: an embedding, layers that are steps of a splitting scheme (Layer), a final norm
    (pre-LN) and a head that reads words off a state (BERT's masked-word head, or a decoder's next-word head)."""

    def __init__(self, cfg: ModelConfig, tokenizer=None):
        super().__init__()
        self.config, self.tokenizer = cfg, tokenizer
        d = cfg.d_model
        e = cfg.embedding_size or d  # factorised embeddings (ALBERT, ELECTRA): width E, projected to d
        self.token_embedding = nn.Embedding(cfg.vocab_size, e)
        if cfg.position == "learned":
            self.position_embedding = nn.Embedding(cfg.max_len, e)
        elif cfg.position == "floater":
            self.floater = Floater(cfg)
        self.embed_norm = norm(cfg, e) if cfg.norm == "post" and cfg.embedding_norm else nn.Identity()
        self.embed_drop = nn.Dropout(cfg.dropout)
        if cfg.embedding_size:
            self.embed_proj = nn.Linear(e, d)
        shared = Layer(cfg) if cfg.shared else None  # one module at every depth: the same weights each step
        self.layers = nn.ModuleList(shared or Layer(cfg) for _ in range(cfg.n_layers))
        self.final_norm = norm(cfg, d) if cfg.norm == "pre" else nn.Identity()
        if cfg.mlm_head:  # BERT's head; the decoder is tied to the token embedding (d → E first when factorised)
            self.mlm_transform = nn.Sequential(nn.Linear(d, e), ACTIVATION[cfg.head_activation or cfg.activation](),
                                               nn.LayerNorm(e, eps=cfg.layer_norm_eps))
            self.mlm_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        if cfg.lm_head and not cfg.lm_head_tied:  # a decoder's next-word head of its own (tied: the embedding)
            self.lm_head = nn.Linear(d, cfg.vocab_size, bias=False)
        if cfg.lm_head and cfg.lm_head_bias:  # a bias on the next-word logits (Marian's final_logits_bias)
            self.lm_bias = nn.Parameter(torch.zeros(cfg.vocab_size))
        self.apply(_init_weights)
        store_shared_once(self)  # shared layers, tied halves

    # ---- the computation -------------------------------------------------------------
    @property
    def kind(self) -> str:
        """"encoder" or "decoder" (causal): one particle system (an EncoderDecoder's kind: "translator", two)."""
        return "decoder" if self.config.causal else "encoder"

    @property
    def device(self) -> torch.device:
        """Where the weights are (model.to(...) moves them)."""
        return self.token_embedding.weight.device

    @property
    def batch_tokens(self) -> int:
        """Padded tokens per batch when tracing many sentences on this device."""
        return BATCH_TOKENS.get(self.device.type, BATCH_TOKENS["cpu"])

    @property
    def has_mlm_head(self) -> bool:
        """Whether the model has BERT's masked-word head, which guesses a [MASK] (a decoder's next-word head:
        config.lm_head)."""
        return hasattr(self, "mlm_transform")

    @property
    def has_head(self) -> bool:
        """Whether the last state can be read as words: BERT's masked-word head, or a decoder's next-word head."""
        return self.has_mlm_head or self.config.lm_head

    def embed(self, ids, offset: int = 0):
        """[B, T] token ids -> [B, T, d]: the particles' start, the words at positions offset, offset + 1, … (scaled,
        projected and with their position signal as the config says; states[0] of a trace)."""
        x = self.token_embedding(ids)  # [B, T, E]
        if self.config.embedding_scale != 1.0:  # fairseq's √d
            x = x * self.config.embedding_scale
        T = ids.shape[1]
        if self.config.position == "learned":
            x = x + self.position_embedding.weight[offset:offset + T]
        elif self.config.position == "sinusoidal":
            x = x + sinusoids(T, x.shape[-1], x.device, offset)
        x = self.embed_drop(self.embed_norm(x))
        return self.embed_proj(x) if self.config.embedding_size else x  # E -> d, after the norm as in ALBERT

    def block_positions(self, T: int):
        """FLOATER's per-block position encodings [n_layers, T, d], else None for every block."""
        if self.config.position == "floater":
            return self.floater(T)
        return [None] * len(self.layers)

    def program(self) -> tuple[tuple[int, tuple[tuple[int, float, int], ...]], ...]:
        """The model's own computation as data: ((layer index, plan), ...), every layer in turn
        walking its scheme (a plan is ((sub-step index, fraction, Euler moves), ...), see Layer)."""
        return tuple((i, layer.plan) for i, layer in enumerate(self.layers))

    def forward(self, ids, attention_mask=None, record=None, program=None, sizes: list | None = None,
                source: SourceSystem | None = None, cache: KeyValueCache | None = None, edits=None):
        """ids [B, T] -> hidden states [B, T, d] after the final norm. `attention_mask` [B, T] bool: True on real
        tokens, False on padding, which no token attends to (None: no padding). `record`, a list, receives
        an Intermediate (state, mixing) for the embedding and after every sub-step. `program` runs the layers'
        operators in another arrangement: reordered, refined, a layer repeated (default: its own).
        `sizes`, a list, receives every Euler move's mean ‖Δx‖²/‖x‖² (a differentiable scalar each).
        `source`: the encoder's final states and mask, which a decoder's cross-attention sub-steps read.
        `cache` (a causal decoder's): ids are the words after the cache.length it has read, and join them there.
        `edits`: what interventions change, read sub-step by sub-step (macaron.interventions.Edits)."""
        offset = cache.length if cache is not None else 0
        x = self.embed(ids, offset)
        if edits is not None:
            x = edits.begin(x, offset)
        if record is not None:
            record.append(Intermediate(x, None))
        positions = [p if p is None else p[offset:] for p in self.block_positions(offset + ids.shape[1])]
        if cache is not None:
            cache.begin()
        for i, plan in self.program() if program is None else program:
            x = self.layers[i](x, attention_mask, positions[i], record, plan, sizes, source, cache, edits)
        if cache is not None:
            cache.length += ids.shape[1]
        return self.final_norm(x)

    def head(self, hidden):  # [..., d] -> [..., V]
        """Logits over the vocabulary: for an encoder the word at each position (BERT's masked-word head), for a
        decoder the word after it (next-word head)."""
        if self.config.lm_head:
            return F.linear(hidden, self.token_embedding.weight if self.config.lm_head_tied else self.lm_head.weight,
                            self.lm_bias if self.config.lm_head_bias else None)
        if not self.has_mlm_head:
            what = "next-word" if self.config.causal else "masked-language-model"
            raise RuntimeError(f"this model has no {what} head (its checkpoint did not ship one)")
        return F.linear(self.mlm_transform(hidden), self.token_embedding.weight, self.mlm_bias)  # one fused call

    # ---- public, per sentence --------------------------------------------------------
    def encode(self, token_ids, program=None) -> torch.Tensor:
        """Final hidden states [T, d] of one sentence (or [B, T, d] for a padded batch)."""
        ids, attention_mask, single = self._as_batch(token_ids)
        out = self(ids, attention_mask, program=program)
        return out[0] if single else out

    def mlm_logits(self, token_ids) -> torch.Tensor:
        """[T, V] masked-language-model logits for one sentence ([B, T, V] for a batch)."""
        return self.head(self.encode(token_ids))

    def lens_logits(self, states) -> torch.Tensor:
        """Logit lens: the MLM head applied to any recorded states [..., T, d] -> [..., T, V]."""
        x = torch.as_tensor(np.asarray(states), device=self.device)
        with torch.no_grad():
            return self.head(self.final_norm(x))

    def logit_lens(self, trajectory: Trajectory, position: int, k: int = 5) -> list[list[tuple[str, float]]]:
        """Top-k guesses (token, probability) for one position at every recorded state."""
        probs = torch.softmax(self.lens_logits(trajectory.states[:, position]), dim=-1)
        top = probs.topk(k, dim=-1)
        return [[(self.reader.token(int(i)), float(p)) for p, i in zip(ps, ids)]
                for ps, ids in zip(top.values, top.indices)]

    def max_tokens(self) -> int:
        """The most tokens a trace takes, specials included: the model's positions (a longer text is cut to it)."""
        return self.reader.limit

    @property
    def reader(self) -> Reader:
        """How this model reads a text into token ids (its tokenizer, specials and token limit)."""
        return Reader(self.config, self.tokenizer, self.has_mlm_head)

    def tokenize(self, text: str, max_tokens: int | None = None) -> tuple[list[int], list[str], int]:
        """(ids, display tokens, number of tokens dropped): at most `max_tokens` and the model's own
        limit, the last token ([SEP]) kept last, as in training (a decoder keeps its first tokens; a [MASK] it
        reads as the place of the next word: read)."""
        return self.read(text, max_tokens)[:3]

    def read(self, text: str, max_tokens: int | None = None) -> Row:
        """tokenize's (ids, tokens, dropped) and where the head answers the sentence (Trajectory.guess_at; see
        Reader.text)."""
        return self.reader.text(text, max_tokens)

    def trace(self, text_or_ids, max_tokens: int | None = None, *, program=None, interventions=None,
              batch_size: int = 64, batch_tokens: int | None = None, progress: bool = False) -> Trajectory | list:
        """Run sentence(s) and record the state after every sub-step.

        A string or a list of token ids gives one Trajectory; a list of strings (or of id
        lists) gives one Trajectory each, in order, computed in padded batches (see iter_trace).
        Text is cut to `max_tokens` (and the model's limit) with [SEP] kept last; `Trajectory.truncated` says how
        many tokens were dropped. Token ids are traced as given. `program`: the layers' operators in another
        arrangement, data shaped as Model.program() returns (e.g. macaron.dynamics.refined(model.program(), 2):
        each sub-step in two Euler moves). `interventions`: what to change as it runs (macaron.interventions).
        """
        single = isinstance(text_or_ids, str) or is_id_list(text_or_ids)
        items = [text_or_ids] if single else list(text_or_ids)
        out = dict(self.iter_trace(items, max_tokens, program=program, interventions=interventions,
                                   batch_size=batch_size, batch_tokens=batch_tokens, progress=progress))
        return out[0] if single else [out[i] for i in range(len(items))]

    @torch.no_grad()
    def iter_trace(self, items, max_tokens: int | None = None, *, program=None, interventions=None,
                   batch_size: int = 64, batch_tokens: int | None = None, progress: bool = False):
        """Yield (index, Trajectory) for a list of texts or id lists, one padded batch of sentences
        of similar length at a time (see length_batches; `batch_tokens` defaults to BATCH_TOKENS of
        the device), so a large set is measured without holding every trajectory in memory.
        `progress`: a tqdm bar over the sentences."""
        if not items:
            raise InputError("nothing to trace: give a sentence")
        rows = [self.read(x, max_tokens) if isinstance(x, str) else self.reader.ids(x) for x in items]
        texts = [x if isinstance(x, str) else "" for x in items]
        batches = length_batches([len(r[0]) for r in rows], batch_size, batch_tokens or self.batch_tokens)
        steps, meta = self.trace_steps(program), self.trace_meta(program, interventions)  # the clock: the program's
        from tqdm.auto import tqdm
        with tqdm(total=len(rows), desc=f"tracing {self.config.name or 'model'}", unit="sentence",
                  disable=not progress) as bar:
            for batch in batches:
                ids, attention_mask, _ = self._as_batch([rows[i][0] for i in batch])
                run, edits = prepare(self, interventions, [len(rows[i][0]) for i in batch], program)
                record: list = []
                final = self(ids, attention_mask, record, run, edits=edits)
                yield from zip(batch, recorded_trajectories([rows[i] for i in batch], [texts[i] for i in batch],
                                                            record, final, steps, meta))
                bar.update(len(batch))

    def trace_steps(self, program=None) -> list[Step]:
        """One Step per sub-step of the program (a Trajectory's steps); the clock counts program entries, so a
        repeated layer continues the time after the last one."""
        steps = []
        for p, (i, plan) in enumerate(checked_program(self, program)):
            subs = [Sub(self.layers[i].scheme[k].kind, h) for k, h, _ in plan]
            again = "" if i == p else f" · layer {i + 1}'s operators"
            steps += [Step(layer=p, kind=s.kind, fraction=s.fraction, time=p + t,
                           label=substep_label(p, s) + (f" in {n} Euler moves" if n > 1 else "") + again)
                      for s, t, (_, _, n) in zip(subs, substep_times(subs), plan)]
        return steps

    def trace_meta(self, program=None, interventions=None) -> dict:
        """What a Trajectory of this model's `program` and `interventions` says of how it was computed (its meta)."""
        c = self.config
        meta = dict(model=c.name, scheme=c.scheme, norm=c.norm, attention=c.attention, position=c.position,
                    d_model=c.d_model, n_layers=c.n_layers, n_heads=c.n_heads, step=c.step, device=str(self.device),
                    causal=c.causal)
        if program is not None:
            meta["program"] = [[i, [list(entry) for entry in plan]] for i, plan in program]
        if interventions:
            meta["interventions"] = said(interventions)
        if getattr(self.tokenizer, "note", ""):  # what a reader should know of how the text was read
            meta["reading"] = self.tokenizer.note
        return meta

    # ---- helpers ---------------------------------------------------------------------
    def _as_batch(self, token_ids):
        """One id list/1-D tensor, or a batch of them, to padded ids [B, T] and the attention_mask [B, T] (True
        on real tokens, False on padding; for a list, None when its rows need no padding)."""
        if torch.is_tensor(token_ids) and token_ids.dim() == 2:
            ids = token_ids.to(self.device)
            return ids, ids != self.config.pad_id, False
        single = is_id_list(token_ids)
        ids, attention_mask = padded([self.reader.ids(r)[0] for r in ([token_ids] if single else token_ids)],
                                     self.config.pad_id)
        return ids.to(self.device), None if attention_mask is None else attention_mask.to(self.device), single

    def num_parameters(self) -> int:
        """Every weight counted once (tied embeddings once)."""
        return sum(p.numel() for p in self.parameters())


PROGRAM_SHAPE = "((layer index, ((sub-step index, fraction, Euler moves), ...)), ...), as Model.program() returns"


def checked_program(model: Model, program) -> tuple:
    """`program`, or the model's own when None; an InputError says why one given cannot run on `model`."""
    if program is None:
        return model.program()
    try:
        entries = tuple((int(i), tuple((int(k), float(h), int(n)) for k, h, n in plan)) for i, plan in program)
    except (TypeError, ValueError):
        raise InputError(f"a program is {PROGRAM_SHAPE}; {program!r:.80} is not") from None
    for i, plan in entries:
        if not 0 <= i < len(model.layers):
            raise InputError(f"the program names layer {i}: this model's layers are 0 to {len(model.layers) - 1}")
        subs = len(model.layers[i].scheme)
        if any(not 0 <= k < subs or n < 1 for k, _, n in plan):
            raise InputError(f"the program's plan for layer {i}, {plan}, needs sub-steps 0 to {subs - 1} and at "
                             f"least one Euler move each ({PROGRAM_SHAPE})")
    return entries


def padded(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Rows of ids as one [B, T] tensor padded with pad_id, and the attention mask [B, T] (True on real tokens), None
    when no row needs padding: no mask lets SDPA take its fastest kernel."""
    if not rows:
        raise InputError("nothing to read: an empty batch of sentences")
    ids = pad_sequence([torch.tensor(r, dtype=torch.long) for r in rows], batch_first=True, padding_value=pad_id)
    mask = torch.arange(ids.shape[1]) < torch.tensor([len(r) for r in rows])[:, None]
    return ids, None if bool(mask.all()) else mask


def recorded_trajectories(rows: Sequence[Row], texts: Sequence[str], record: list[Intermediate], final: torch.Tensor,
                          steps: list[Step], meta: dict, source_lengths: Sequence[int] | None = None
                          ) -> list[Trajectory]:
    """One Trajectory per row of a recorded batch (Model.forward's `record` and final states [B, T, d], the rows
    the model read, Model.trace_steps and trace_meta), every array copied to the host once (to_host). One sentence's
    arrays are views of those; a batch's rows are copies, so that no row keeps the others (or their padding)
    alive. A cross-attention sub-step's matrix is cut to the row's source, `source_lengths[b]` tokens."""
    matrices = [r.mixing for r in record[1:] if r.mixing is not None]  # [B, H, T, T|S] each
    states, final, *host = to_host([torch.stack([r.state for r in record], 1), final, *matrices])  # [B, S, T, d]
    host = iter(host)
    mixing = [None if r.mixing is None else next(host) for r in record[1:]]
    own = (lambda a: a) if len(rows) == 1 else np.copy
    out = []
    for b, ((token_ids, tokens, dropped, guess_at), text) in enumerate(zip(rows, texts)):
        T = len(token_ids)
        cols = {CROSS: source_lengths[b] if source_lengths else None}
        mix = [None if m is None else own(m[b, :, :T, :cols.get(step.kind, T)]) for m, step in zip(mixing, steps)]
        out.append(Trajectory(tokens=tokens, token_ids=list(token_ids), states=own(states[b, :, :T]),
                              steps=list(steps), mixing=mix, final=own(final[b, :T]), meta=dict(meta), text=text,
                              truncated=dropped, guess_at=guess_at))
    return out


def to_host(tensors: list[torch.Tensor]) -> list[np.ndarray]:
    """float32 host arrays of tensors on one device, each copied once: on the CPU a float32 tensor is viewed, not
    copied; a GPU's are copied, each into its slice of one pinned host buffer (no second copy on the device), and
    waited for once."""
    if tensors[0].device.type == "cpu":
        return [t.float().numpy() for t in tensors]  # bf16 and float16 states are read as float32
    buffer = torch.empty(sum(t.numel() for t in tensors), dtype=torch.float32, pin_memory=True)
    parts, offset = [], 0
    for t in tensors:
        parts.append(buffer[offset:offset + t.numel()].view(t.shape))
        parts[-1].copy_(t, non_blocking=True)  # to float32 on the way
        offset += t.numel()
    torch.cuda.synchronize(tensors[0].device)  # the arrays are read as soon as this returns
    return [part.numpy() for part in parts]


def is_id_list(x) -> bool:
    """Whether x is one sentence's token ids (a 1-D tensor or array, or a non-empty list of ints), not a text or a
    batch."""
    if torch.is_tensor(x) or isinstance(x, np.ndarray):
        return x.ndim == 1
    return isinstance(x, Sequence) and not isinstance(x, str) and len(x) > 0 and \
        all(isinstance(i, (int, np.integer)) for i in x)


def store_shared_once(module: nn.Module) -> None:
    """A weight a module uses in several places (shared layers, tied halves, a shared embedding table) is stored
    once, under its first name: `module.aliases` {alias: first name}, left out of its state_dict and filled back in
    when one is loaded."""
    module.aliases = _aliases(module)
    module.register_state_dict_post_hook(_drop_aliases)
    module.register_load_state_dict_pre_hook(_fill_aliases)


def _aliases(module: nn.Module) -> dict[str, str]:
    """{name: first name} of every parameter or buffer that is also reachable under an earlier name."""
    first: dict[int, str] = {}
    out = {}
    for name, t in [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]:
        if id(t) in first:
            out[name] = first[id(t)]
        else:
            first[id(t)] = name
    return out


def _drop_aliases(module, state_dict, prefix, local_metadata):
    for alias in module.aliases:
        state_dict.pop(prefix + alias, None)


def _fill_aliases(module, state_dict, prefix, *args):
    for alias, name in module.aliases.items():
        if prefix + name in state_dict:
            state_dict.setdefault(prefix + alias, state_dict[prefix + name])


def _init_weights(m: nn.Module):
    if isinstance(m, (nn.Linear, nn.Embedding)):
        nn.init.normal_(m.weight, std=0.02)
        if getattr(m, "bias", None) is not None:
            nn.init.zeros_(m.bias)


def build(config: ModelConfig, tokenizer=None) -> Model:
    """A fresh model in eval mode (call .train() to train it)."""
    return Model(config, tokenizer).eval()
