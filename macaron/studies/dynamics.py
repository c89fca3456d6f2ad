"""Do trained Transformers behave like interacting particle systems? Measures that the theory predicts.

Arrays and Trajectories in, numbers out. Shapes: S states, T tokens, d width, H heads.

Predictions from the mathematics of self-attention dynamics, and the measure that tests each:
- tokens cluster over depth (Geshkovski, Letrouit, Polyanskiy, Rigollet 2023, "The emergence of
  clusters in self-attention dynamics"; "A mathematical perspective on Transformers"):
  `cosine_histogram` (their figure on ALBERT), `effective_clusters`;
- clusters persist for a long time before merging, the interaction energy moves in a staircase
  (Geshkovski, Koubbi, Polyanskiy, Rigollet 2024, "Dynamic metastability"): `interaction_energy`;
- the token cloud collapses towards rank one with depth, slowed by residual paths and layer norms
  (Dong, Cordonnier, Loukas 2021; Wu et al. 2024): `rank_one_residual`;
- attention matrices become close to doubly stochastic, the fixed points of Sinkhorn's scaling
  (Sander, Ablin, Blondel, Peyré 2022, "Sinkformers"): `doubly_stochastic_gap`;
- a few "leader" tokens receive most of the attention (Geshkovski et al. 2023): `leaders`;
- attention becomes low-rank: `attention_effective_rank`, and sharp or diffuse: `attention_entropy`;
- a residual network discretises an ODE only if its steps are small and refining them changes little
  (Sander, Ablin, Peyré 2022, "Do residual neural networks discretize neural ordinary differential
  equations?"): `relative_step`, and the experiments below.

Three levels: measures of one state or one mixing matrix; `measure` (every measure of one
Trajectory, per sub-step) and `aggregate` / `measure_set` (mean and spread over a sentence set,
leaders by token and by role); ODE experiments that rerun a trained model's own operators in
another order, with smaller steps, or for longer (`standard_experiments`, `run_experiments`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from ..network.model import length_batches
from ..schemes import FULL, SCHEMES, get_scheme, order_of
from ..trajectory import Trajectory
from .analysis import SPECIAL_TOKENS, diffusion_steps, mean_pairwise_cosine, standardise, unit_rows

EPS = 1e-12


# ---- the token cloud (one state: [T, d], or all states: [S, T, d]) -------------------------
def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """[..., T, T] cosine similarity between every pair of tokens."""
    u = unit_rows(x)
    return u @ np.swapaxes(u, -1, -2)


def pair_cosines(x: np.ndarray) -> np.ndarray:
    """[..., T(T-1)/2]: the cosine of every pair of distinct tokens."""
    c = cosine_matrix(x)
    i, j = np.triu_indices(c.shape[-1], 1)
    return c[..., i, j]


def cosine_histogram(states: np.ndarray, bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """(edges [bins + 1] on [-1, 1], density [S, bins]): per state, the histogram of pairwise cosines."""
    edges = np.linspace(-1.0, 1.0, bins + 1)
    pairs = pair_cosines(states)
    hist = np.stack([np.histogram(np.clip(p, -1, 1), edges, density=True)[0]
                     for p in pairs.reshape(-1, pairs.shape[-1])])
    return edges, hist.reshape(*pairs.shape[:-1], bins)


def effective_clusters(x: np.ndarray) -> np.ndarray:
    """Effective number of directions the tokens point in: the participation ratio (Σλ)²/Σλ² of the
    eigenvalues λ of their cosine Gram matrix. All tokens alike → 1; k equal groups of identical
    tokens in orthogonal directions → k; T orthogonal tokens → T. [S] for states [S, T, d]."""
    g = cosine_matrix(x)
    lam = np.clip(np.linalg.eigvalsh(g), 0.0, None)
    return lam.sum(-1) ** 2 / np.maximum((lam ** 2).sum(-1), EPS)


def rank_one_residual(x: np.ndarray) -> np.ndarray:
    """Distance of the token cloud from rank collapse (Dong et al. 2021): ‖X − 1 x̄ᵀ‖_F / ‖X‖_F,
    where 1 x̄ᵀ is the closest matrix whose rows are all equal. 0 = every token the same."""
    x = np.asarray(x, dtype=np.float64)
    res = np.linalg.norm(x - x.mean(-2, keepdims=True), axis=(-2, -1))
    return res / np.maximum(np.linalg.norm(x, axis=(-2, -1)), EPS)


def relative_step(states: np.ndarray) -> np.ndarray:
    """[S - 1]: how far each sub-step moves the particles relative to where they are, mean over tokens
    of ‖x_{k+1} − x_k‖ / ‖x_k‖. An Euler step approximates the flow only when this is small."""
    x = np.asarray(states, dtype=np.float64)
    move = np.linalg.norm(np.diff(x, axis=0), axis=-1)
    return (move / np.maximum(np.linalg.norm(x[:-1], axis=-1), EPS)).mean(-1)


def interaction_energy(x: np.ndarray, beta: float = 1.0) -> np.ndarray:
    """E_β = 1/(2β T²) Σ_ij exp(β(⟨x_i, x_j⟩ − 1)) on the unit sphere (Geshkovski et al.): the
    self-attention flow with Q = K = V = I is its gradient ascent. Maximal, 1/(2β), when all tokens
    coincide; plateaus while clusters persist (metastability)."""
    c = cosine_matrix(x)
    T = c.shape[-1]
    return np.exp(beta * (c - 1.0)).sum((-2, -1)) / (2 * beta * T * T)


# ---- mixing matrices (one: [T, T], or per head: [H, T, T]) ---------------------------------
def attention_entropy(a: np.ndarray) -> np.ndarray:
    """Mean row entropy (nats) of row-stochastic matrices [..., T, T]: 0 for a permutation (each
    particle follows one other), log T for uniform averaging."""
    a = np.asarray(a, dtype=np.float64)
    h = -(a * np.log(np.where(a > 0, a, 1.0))).sum(-1)
    return h.mean(-1)


def attention_effective_rank(a: np.ndarray) -> np.ndarray:
    """Effective rank of each matrix [..., T, T]: 1 for uniform averaging (rank one), T for a permutation."""
    s = np.linalg.svd(np.asarray(a, dtype=np.float64), compute_uv=False)
    p = s / np.maximum(s.sum(-1, keepdims=True), EPS)
    return np.exp(-(p * np.log(np.where(p > 0, p, 1.0))).sum(-1))


def doubly_stochastic_gap(a: np.ndarray) -> np.ndarray:
    """How far row-stochastic matrices [..., T, T] are from doubly stochastic (Sander et al. 2022):
    ½ Σ_j |Σ_i A_ij − 1| / T, the total-variation distance between the attention the tokens receive
    and an even share. Rows already sum to 1, so the gap is 0 exactly when the columns do too
    (uniform averaging, a permutation); it tends to 1 when every token attends to the same one."""
    a = np.asarray(a, dtype=np.float64)
    return 0.5 * np.abs(received(a) - 1.0).sum(-1) / a.shape[-1]


def received(a: np.ndarray) -> np.ndarray:
    """[..., T]: the attention each token receives (column sums of row-stochastic matrices)."""
    return np.asarray(a, dtype=np.float64).sum(-2)


def uniform_attention(T: int, causal: bool) -> np.ndarray:
    """[T, T]: every row spreading its attention evenly over the tokens it sees (causal: row i over 0 … i), the
    null against which leading and attention sinks are measured."""
    seen = np.tril(np.ones((T, T))) if causal else np.ones((T, T))
    return seen / seen.sum(-1, keepdims=True)


def uniform_received(T: int, causal: bool) -> np.ndarray:
    """[T]: the attention each token receives under uniform_attention: 1 each without a mask; Σ_{i ≥ j} 1/(i + 1)
    for token j under a causal one."""
    return received(uniform_attention(T, causal))


def leaders(mixing: list[np.ndarray | None], causal: bool = False) -> np.ndarray:
    """[T]: the share of (diffusion sub-step, head) pairs in which each token receives the most attention for its
    place: what it receives ÷ what uniform attention over the tokens each row sees would give it (uniform_received).
    Without a mask that is the most attention; under a causal one the ratio keeps the mask's own pile-up (even
    uniform causal attention gives the first token the most) from being counted as leading. Uniform over tokens
    when no token leads; mass on one token when it leads everywhere."""
    recorded = [m for m in mixing if m is not None]
    if not recorded:
        raise ValueError("no mixing matrices: this trajectory records no diffusion sub-step")
    T = recorded[0].shape[-1]
    place = uniform_received(T, causal)  # one sentence: the same T at every sub-step
    tops = np.concatenate([(received(m) / place).argmax(-1).ravel() for m in recorded])
    return np.bincount(tops, minlength=T) / len(tops)


def first_token_lift(mixing: np.ndarray, causal: bool) -> np.ndarray:
    """[..., H] for mixing [..., H, T, T]: the attention rows 1 … T−1 give the first token (their mean), ÷ what
    uniform attention over the tokens each row sees would give it (1/T; causal: row i sees i + 1 tokens). 1: no
    more than uniform; far above 1: the first token is where attention goes when it has nowhere else to go (an
    attention sink: a decoder's first token, BERT's [CLS]). Under a causal mask leading is no test of this: even
    uniform attention makes the first token lead, since every row sees it."""
    return mixing[..., 1:, 0].mean(-1) / uniform_attention(mixing.shape[-1], causal)[1:, 0].mean()


# ---- one trajectory: every measure, per sub-step -------------------------------------------
STATE_MEASURES = ("clusters", "rank_one", "energy", "mean_cosine")  # [S]: one value per state
HEAD_MEASURES = ("entropy", "attention_rank", "ds_gap", "first_token")  # [K, H]: per diffusion sub-step and head


@dataclass
class Measures:
    """Every measure of one trajectory. S states, K diffusion sub-steps, H heads, T tokens.

    Attention is measured relative to its extremes so that sentences of different lengths
    compare: entropy as a share of log T (0: each token follows one other, 1: uniform averaging),
    effective rank as a share of T."""

    tokens: list[str]
    times: np.ndarray           # [S] layer time of every state (0: the embedding)
    labels: list[str]           # [S]
    clusters: np.ndarray        # [S] effective_clusters
    rank_one: np.ndarray        # [S] rank_one_residual
    energy: np.ndarray          # [S] interaction_energy
    mean_cosine: np.ndarray     # [S] mean cosine over pairs of distinct tokens
    step: np.ndarray            # [S - 1] relative_step of the raw residual stream, per sub-step
    edges: np.ndarray           # [bins + 1] cosine histogram bin edges on [-1, 1]
    histogram: np.ndarray       # [S, bins] density of pairwise cosines
    diffusion_times: np.ndarray  # [K] layer time reached by each diffusion sub-step
    entropy: np.ndarray         # [K, H] attention_entropy / log T
    attention_rank: np.ndarray  # [K, H] attention_effective_rank / T
    ds_gap: np.ndarray          # [K, H] doubly_stochastic_gap
    first_token: np.ndarray     # [K, H] first_token_lift
    leaders: np.ndarray         # [T] share of (diffusion sub-step, head) pairs each token leads
    slots: int                  # K × H: the pairs a leader is counted over


def measure(traj: Trajectory, normalised: bool = True, beta: float = 1.0, bins: int = 40) -> Measures:
    """Every measure of one trajectory. `normalised`: measure the tokens as the next operator reads
    them (standardised per token, LayerNorm without its weights) rather than the raw residual
    stream, whose norm grows with depth; cosines are scale-free either way."""
    T = len(traj.tokens)
    if T < 2:
        raise ValueError("a particle system needs at least two tokens")
    x = standardise(traj.states) if normalised else traj.states
    ks = diffusion_steps(traj)
    mixing = np.stack([traj.mixing[k] for k in ks]).astype(np.float64) if ks else np.zeros((0, 1, T, T))
    edges, hist = cosine_histogram(x, bins)
    return Measures(
        tokens=list(traj.tokens), times=traj.times, labels=traj.labels,
        clusters=effective_clusters(x), rank_one=rank_one_residual(x), energy=interaction_energy(x, beta),
        mean_cosine=mean_pairwise_cosine(x), step=relative_step(traj.states), edges=edges, histogram=hist,
        diffusion_times=np.array([traj.steps[k].time for k in ks]),
        entropy=attention_entropy(mixing) / np.log(T), attention_rank=attention_effective_rank(mixing) / T,
        ds_gap=doubly_stochastic_gap(mixing), first_token=first_token_lift(mixing, traj.causal),
        leaders=leaders(traj.mixing, traj.causal) if ks else np.zeros(T),
        slots=int(mixing.shape[0] * mixing.shape[1]) if ks else 0)


# ---- a sentence set: mean and spread -------------------------------------------------------
@dataclass
class Spread:
    """One measure over N sentences, entry by entry: mean, standard deviation and quartiles."""

    mean: np.ndarray
    std: np.ndarray
    q25: np.ndarray
    median: np.ndarray
    q75: np.ndarray
    n: int

    @classmethod
    def of(cls, values) -> "Spread":
        v = np.asarray(values, dtype=np.float64)  # [N, ...]
        q25, median, q75 = np.quantile(v, [0.25, 0.5, 0.75], axis=0)
        return cls(v.mean(0), v.std(0), q25, median, q75, len(v))

    def to_dict(self) -> dict:
        return {k: np.asarray(v).tolist() if k != "n" else v for k, v in asdict(self).items()}


ROLES = ("[CLS]", "[SEP]", "[MASK]", "punctuation", "word", "word piece")


def role(token: str) -> str:
    """[CLS], [SEP] and [MASK] as themselves; tokens without a letter or digit are punctuation; "##"
    continuations are word pieces; the rest words ([UNK:…] included)."""
    if token in ("[CLS]", "[SEP]", "[MASK]"):
        return token
    if token.startswith("##"):
        return "word piece"
    if not any(c.isalnum() for c in token):
        return "punctuation"
    return "word"


@dataclass
class LeaderRow:
    """How often one token (or role) leads: `leads` of the (sentence, diffusion sub-step, head)
    slots it was present in; `expected` what a token drawn uniformly from each sentence would get;
    lift = leads / expected (1: no more than chance, T: it leads wherever it is)."""

    key: str
    occurrences: int
    leads: float
    expected: float

    @property
    def lift(self) -> float:
        return self.leads / self.expected if self.expected else 0.0

    def to_dict(self) -> dict:
        return dict(asdict(self), lift=self.lift)


@dataclass
class Leaders:
    slots: int                  # (sentence, diffusion sub-step, head) triples counted
    by_role: list[LeaderRow]    # in ROLES order, roles that occur
    by_token: list[LeaderRow]   # most leads first


def leader_table(measures: Sequence[Measures]) -> Leaders:
    """Who leads over a sentence set, by token string and by role."""
    tables: dict[str, dict[str, list]] = {"role": {}, "token": {}}
    for m in measures:
        T = len(m.tokens)
        for tok, share in zip(m.tokens, m.leaders):
            for kind, key in (("role", role(tok)), ("token", tok)):
                row = tables[kind].setdefault(key, [0, 0.0, 0.0])
                row[0] += 1
                row[1] += share * m.slots
                row[2] += m.slots / T

    def rows(kind):
        return [LeaderRow(k, n, float(lead), float(exp)) for k, (n, lead, exp) in tables[kind].items()]

    by_role = sorted(rows("role"), key=lambda r: ROLES.index(r.key))
    by_token = sorted(rows("token"), key=lambda r: (-r.leads, -r.lift, r.key))
    return Leaders(sum(m.slots for m in measures), by_role, by_token)


@dataclass
class SetMeasures:
    """The measures of one model over a sentence set (or one sentence: N = 1, no spread)."""

    model: str
    times: np.ndarray               # [S]
    labels: list[str]               # [S]
    diffusion_times: np.ndarray     # [K]
    state: dict[str, Spread]        # STATE_MEASURES, each [S]
    step: Spread                    # [S - 1], the sub-steps
    heads: dict[str, Spread]        # HEAD_MEASURES, each [K, H]: every head kept
    diffusion: dict[str, Spread]    # HEAD_MEASURES, each [K]: mean over heads first, then spread over sentences
    edges: np.ndarray               # [bins + 1]
    histogram: np.ndarray           # [S, bins]: mean density of pairwise cosines over sentences
    leaders: Leaders
    n: int
    meta: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        """Long format, one row per (measure, state / sub-step / head): for CSV files and tables."""
        def stat(sp: Spread, *index) -> dict:
            return {k: float(np.asarray(getattr(sp, k))[index]) for k in ("mean", "std", "q25", "median", "q75")}

        out = [dict(measure=name, time=float(t), label=lab, head="", **stat(sp, i))
               for name, sp in self.state.items() for i, (t, lab) in enumerate(zip(self.times, self.labels))]
        out += [dict(measure="step", time=float(t), label=lab, head="", **stat(self.step, i))
                for i, (t, lab) in enumerate(zip(self.times[1:], self.labels[1:]))]
        for name in HEAD_MEASURES:
            for i, t in enumerate(self.diffusion_times):
                out.append(dict(measure=name, time=float(t), label="", head="mean", **stat(self.diffusion[name], i)))
                out += [dict(measure=name, time=float(t), label="", head=str(h), **stat(self.heads[name], i, h))
                        for h in range(self.heads[name].mean.shape[-1])]
        return [dict(model=self.model, **r) for r in out]

    def to_dict(self) -> dict:
        return dict(model=self.model, n=self.n, meta=self.meta, times=self.times.tolist(), labels=self.labels,
                    diffusion_times=self.diffusion_times.tolist(),
                    state={k: v.to_dict() for k, v in self.state.items()}, step=self.step.to_dict(),
                    heads={k: v.to_dict() for k, v in self.heads.items()},
                    diffusion={k: v.to_dict() for k, v in self.diffusion.items()},
                    edges=self.edges.tolist(), histogram=self.histogram.tolist(),
                    leaders=dict(slots=self.leaders.slots, by_role=[r.to_dict() for r in self.leaders.by_role],
                                 by_token=[r.to_dict() for r in self.leaders.by_token]))


def aggregate(measures: Sequence[Measures], model: str = "", meta: dict | None = None) -> SetMeasures:
    """Mean and spread over sentences traced by one model with one program (same sub-steps)."""
    if not measures:
        raise ValueError("no sentences to aggregate")
    first = measures[0]
    if any(m.times.shape != first.times.shape or not np.allclose(m.times, first.times) for m in measures):
        raise ValueError("these trajectories have different sub-steps: aggregate one model and one program at a time")

    def stack(name):
        return np.stack([getattr(m, name) for m in measures])

    return SetMeasures(
        model=model, times=first.times, labels=first.labels, diffusion_times=first.diffusion_times,
        state={k: Spread.of(stack(k)) for k in STATE_MEASURES}, step=Spread.of(stack("step")),
        heads={k: Spread.of(stack(k)) for k in HEAD_MEASURES},
        diffusion={k: Spread.of(stack(k).mean(-1)) for k in HEAD_MEASURES},
        edges=first.edges, histogram=stack("histogram").mean(0), leaders=leader_table(measures), n=len(measures),
        meta=dict(meta or {}))


def measure_set(model, texts: Sequence[str], *, program=None, max_tokens: int | None = None, batch_size: int = 64,
                progress: bool = False, **options) -> SetMeasures:
    """Trace a sentence set in batches and aggregate its measures (options: see `measure`); only
    one batch of trajectories is held in memory at a time."""
    measures: list = [None] * len(texts)
    meta: dict = {}
    for i, traj in model.iter_trace(list(texts), max_tokens, program=program, batch_size=batch_size,
                                    progress=progress):
        measures[i], meta = measure(traj, **options), traj.meta
    return aggregate(measures, model.config.name, meta)


# ---- ODE experiments on a trained model's own operators --------------------------------------
# A program is ((layer index, plan), ...) and a plan ((sub-step index, fraction h, Euler moves n), ...):
# which of a layer's operators run, in which order, for which fraction of the step, in how many moves
# (macaron.network.model.Layer).
@dataclass(frozen=True)
class Experiment:
    name: str
    kind: str      # "own" | "order" | "refine" | "extend"
    program: tuple


def _sequential(model) -> None:
    if any(s.kind == FULL for layer in model.layers for s in layer.scheme):
        raise ValueError(f"scheme {model.config.scheme!r} runs attention and FFN in one sub-step: "
                         "there is no order of sub-steps to change")


def as_scheme(model, scheme: str) -> tuple:
    """The model's own operators arranged as another splitting scheme. A sub-step of kind K for
    fraction φ runs the layer's own K sub-steps in their order, each for φ × its share of K's
    fractions: a Transformer's FFN runs twice for ½ in Strang order (½G, F, ½G); a Macaron's two
    half FFNs run back to back (½G₁, ½G₂) where a scheme has one G."""
    _sequential(model)
    target = get_scheme(scheme).substeps
    program = []
    for i, layer in enumerate(model.layers):
        plan = []
        for sub in target:
            own = [(k, s.fraction) for k, s in enumerate(layer.scheme) if s.kind == sub.kind]
            if not own:
                raise ValueError(f"layer {i + 1} has no {sub.kind} sub-step to run as {scheme!r}")
            total = sum(h for _, h in own)
            plan += [(k, sub.fraction * h / total, 1) for k, h in own]
        program.append((i, tuple(plan)))
    return tuple(program)


def reversed_order(model) -> tuple:
    """Every layer's sub-steps in reverse order (the adjoint scheme): G then F for a Transformer,
    ½G₂, F, ½G₁ for Macaron."""
    _sequential(model)
    return tuple((i, plan[::-1]) for i, plan in model.program())


def refined(program: tuple, n: int = 2) -> tuple:
    """Each sub-step in n Euler moves of an n-th of its fraction: x ← x + (h/n)·op(LN(x)), n times
    (pre-LN); post-LN moves n times by (h/n)·op(x) and then normalises once (macaron.network.model.Layer)."""
    return tuple((i, tuple((k, h, m * n) for k, h, m in plan)) for i, plan in program)


def extended(model, k: int) -> tuple:
    """The model's own program, then its last layer k more times (Geshkovski et al.'s ALBERT
    notebook iterates one shared layer): does the dynamics go on clustering past the trained depth?"""
    own = model.program()
    return own + (own[-1],) * k


PAST_DEPTH = 12   # layers run past the trained depth: twice the depth of a 6-layer model
PAST_TIME = 16    # a shared-weight model runs to 16 T: the long times of the clustering theory


def past_depth(model) -> int:
    """How many more times the Dynamics page runs a model's last layer: to 16 T where the layers share
    their weights (the autonomous flow continued), else PAST_DEPTH."""
    return (PAST_TIME - 1) * len(model.layers) if model.config.shared else PAST_DEPTH


def standard_experiments(model, refine: Sequence[int] = (2, 4, 8),
                         extend: Sequence[int] = (1, 2, 4)) -> list[Experiment]:
    """The model as trained, then: its operators in every other sequential registered scheme's order
    and in reverse order, each sub-step refined n times, each of these in all layers and in layers
    2 to L alone (pre-LN, the first layer's step is large: the embedding is small next to its update), and
    the last layer repeated k times. Duplicate programs are dropped."""
    own = model.program()
    out = [Experiment("as trained", "own", own)]
    seen = {own}

    def add(name, kind, program):
        if program not in seen:
            seen.add(program)
            out.append(Experiment(name, kind, program))

    orders = {}  # one experiment per order of the operators: a scheme that only splits a sub-step in a row adds none
    for name, s in SCHEMES.items():
        if all(sub.kind != FULL for sub in s.substeps):
            orders.setdefault(order_of(s.substeps), (f"as {s.title}", "order", as_scheme(model, name)))
    changes = list(orders.values())
    changes += [("sub-steps reversed", "order", reversed_order(model))]
    changes += [(f"each sub-step in {n} Euler moves of h/{n}", "refine", refined(own, n)) for n in refine]
    for name, kind, program in changes:
        add(name, kind, program)
        if len(own) > 1:
            add(f"{name} · layers 2–{len(own)}", kind, own[:1] + program[1:])
    layer = "shared layer" if model.config.shared else "last layer"  # ALBERT: the autonomous flow continued
    for k in extend:
        add(f"{layer} {k} more time{'s' if k > 1 else ''}", "extend", extended(model, k))
    return out


@dataclass
class ExperimentResult:
    """How far a rerun moves a model's output, over a sentence set with some words masked."""

    name: str
    kind: str
    change: Spread               # over sentences: ‖Y' − Y‖_F / ‖Y‖_F of the final states of the real tokens
    agreement: float             # top-1 MLM prediction equal to the model's own, every real token
    agreement_masked: float      # the same at the masked positions
    kl: float                    # mean KL(own ‖ rerun) of the MLM distributions, nats per token
    accuracy_masked: float       # top-1 accuracy of the rerun at the masked positions (the true word)
    n_sentences: int
    n_tokens: int
    n_masked: int

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("change")
        return dict(d, **{f"change_{k}": float(v) for k, v in asdict(self.change).items() if k != "n"})


def masked_rows(model, texts: Sequence[str], max_tokens: int | None = None, rate: float = 0.15,
                seed: int = 0) -> list[tuple[list[int], list[int], list[int]]]:
    """(input ids, true ids, masked positions) per sentence: each word token replaced by [MASK]
    with probability `rate`, at least one per sentence; the same draw for every program."""
    rng = np.random.default_rng(seed)
    mask_id = model.tokenizer.token_to_id("[MASK]")
    out = []
    for text in texts:
        ids, tokens, _ = model.tokenize(text, max_tokens)
        words = [i for i, t in enumerate(tokens) if t not in SPECIAL_TOKENS and t != "[MASK]"]
        picked = [i for i in words if rng.random() < rate] or ([int(rng.choice(words))] if words else [])
        out.append(([mask_id if i in picked else t for i, t in enumerate(ids)], ids, picked))
    return out


def run_experiments(model, texts: Sequence[str], experiments: Sequence[Experiment] | None = None, *,
                    max_tokens: int | None = None, batch_size: int = 64, mask_rate: float = 0.15, seed: int = 0,
                    progress: bool = False) -> list[ExperimentResult]:
    """Run every experiment's program on the same masked sentences and compare with the model as
    trained. MLM columns are NaN for a model without a head."""
    import torch

    experiments = list(experiments or standard_experiments(model))
    rows = masked_rows(model, texts, max_tokens, mask_rate, seed)
    acc = {e.name: dict(change=[], agree=0, agree_m=0, kl=0.0, correct=0) for e in experiments}
    n_tok = n_mask = 0
    batches = [[rows[i] for i in b] for b in length_batches([len(r[0]) for r in rows], batch_size, model.batch_tokens)]
    if progress:
        from tqdm.auto import tqdm
        batches = tqdm(batches, desc=f"experiments {model.config.name or 'model'}", unit="batch")
    with torch.no_grad():
        for batch in batches:
            lengths = torch.tensor([len(r[0]) for r in batch], device=model.device)
            real = torch.arange(int(lengths.max()), device=model.device)[None] < lengths[:, None]  # [B, T]
            masked = torch.zeros_like(real)
            for b, (_, _, picked) in enumerate(batch):
                masked[b, picked] = True
            true = torch.zeros_like(real, dtype=torch.long)
            for b, (_, ids, _) in enumerate(batch):
                true[b, :len(ids)] = torch.tensor(ids)
            n_tok, n_mask = n_tok + int(real.sum()), n_mask + int(masked.sum())
            inputs = [r[0] for r in batch]
            base = model.encode(inputs)
            base_logp = torch.log_softmax(model.head(base), -1) if model.has_mlm_head else None
            for e in experiments:
                y = model.encode(inputs, program=e.program)
                a = acc[e.name]
                diff = ((y - base) * real[..., None]).flatten(1).norm(dim=1)
                a["change"] += (diff / (base * real[..., None]).flatten(1).norm(dim=1)).tolist()
                if base_logp is None:
                    continue
                logp = torch.log_softmax(model.head(y), -1)
                same = logp.argmax(-1) == base_logp.argmax(-1)
                a["agree"] += int((same & real).sum())
                a["agree_m"] += int((same & masked).sum())
                a["correct"] += int(((logp.argmax(-1) == true) & masked).sum())
                kl = (base_logp.exp() * (base_logp - logp)).sum(-1)
                a["kl"] += float((kl * real).sum())
    nan = float("nan")
    per_token = 1 / n_tok if model.has_mlm_head else nan
    per_mask = 1 / n_mask if model.has_mlm_head and n_mask else nan  # nan: nothing to predict
    return [ExperimentResult(e.name, e.kind, Spread.of(a["change"]), a["agree"] * per_token, a["agree_m"] * per_mask,
                             a["kl"] * per_token, a["correct"] * per_mask, len(rows), n_tok, n_mask)
            for e, a in ((e, acc[e.name]) for e in experiments)]
