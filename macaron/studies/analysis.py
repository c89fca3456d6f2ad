"""What the explorer computes from trajectories: projection, alignment, comparison, clustering and
attribution.

Arrays and Trajectories in, arrays or small dataclasses out: no Streamlit, no plotting, so every
view of the app is one call away in a notebook. Shapes: S states, T tokens (particles), d width.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import orthogonal_procrustes

from ..network.reading import InputError
from ..schemes import CONVECTION
from ..trajectory import MASK_TOKEN, SPECIAL_TOKENS, Trajectory, brief  # noqa: F401  (the pages read them here)


# ---- which particles to show --------------------------------------------------------------
def keep_mask(tokens: list[str], hide_special: bool) -> np.ndarray:
    """Boolean [T]: the particles to show. Never empties the sentence (keeps all if it would)."""
    keep = np.array([not (hide_special and t in SPECIAL_TOKENS) for t in tokens], dtype=bool)
    return keep if keep.any() else np.ones(len(tokens), dtype=bool)


def standardise(states: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm without its affine part, per token: what the next operator actually reads."""
    x = np.asarray(states, dtype=np.float32)
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


def same_tokens(traj_a: Trajectory, traj_b: Trajectory) -> bool:
    """Whether the two trajectories hold the same tokens: their particles can be matched one to one."""
    return traj_a.tokens == traj_b.tokens


def matched(traj_a: Trajectory, traj_b: Trajectory, what: str) -> None:
    """Refuses two trajectories whose particles cannot be matched one to one (`what` compares them so)."""
    if not same_tokens(traj_a, traj_b):
        raise InputError(f"{what} matches particle to particle, but the two models split the sentence into different "
                         f"tokens:\n  A: {' '.join(traj_a.tokens)}\n  B: {' '.join(traj_b.tokens)}\nPick a sentence "
                         "both vocabularies split alike (every word one token in both).")


def kept_states(traj: Trajectory, normalised: bool = False, keep: np.ndarray | None = None) -> np.ndarray:
    """[S, T_kept, d]: the states to measure, raw or standardised, of the kept particles."""
    x = standardise(traj.states) if normalised else traj.states
    return x if keep is None else x[:, keep]


def diffusion_steps(traj: Trajectory) -> list[int]:
    """Indices of the sub-steps that recorded a mixing matrix."""
    return [k for k, s in enumerate(traj.steps) if s.kind != CONVECTION and traj.mixing[k] is not None]


def attention(traj: Trajectory, step: int, head: int | None = None) -> np.ndarray | None:
    """Sub-step `step`'s mixing matrix [rows, columns]: the mean over its heads, or one head (`head`, the last
    where the model has fewer); None for a convection sub-step."""
    m = traj.mixing[step]
    if m is None:
        return None
    return m.mean(0) if head is None else m[min(head, m.shape[0] - 1)]


def listens_to(traj: Trajectory, step: int, i: int, head: int | None = None, top: int = 4) -> list[tuple[int, float]]:
    """Whom particle i listens to in sub-step `step`: its `top` largest attention weights, largest first, as
    (particle index, weight), over every particle (itself, [CLS] and [SEP] included: the row of the matrix, which
    sums to 1). `head`: one head, or None for their mean. Empty for a convection sub-step (each particle reads only
    itself) and for a particle that sub-step does not move (the other system of translation.joint's two)."""
    m = attention(traj, step, head)
    if m is None:
        return []
    row = np.asarray(m, np.float64)[i]
    order = [j for j in np.argsort(-row, kind="stable")[:top] if row[j] > 0]
    return [(int(j), float(row[j])) for j in order]


# ---- PCA with signs that do not flip ----------------------------------------------------------
@dataclass
class Projection:
    """A PCA of a trajectory's states (project): the kept particles' coordinates in the principal axes.
    `transform` maps other states [.., d] into the same axes; `keep` says which particles were kept."""

    coords: np.ndarray      # [S, T_kept, k]: every state of the kept particles in the principal axes
    explained: np.ndarray   # [k]: share of the variance each axis explains
    components: np.ndarray  # [k, d]: unit axes, largest-|loading| entry positive
    mean: np.ndarray        # [d]
    keep: np.ndarray | None = None  # [T] bool: the particles projected (None: all)

    __repr__ = brief

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=np.float64) - self.mean) @ self.components.T


def fix_signs(components: np.ndarray) -> np.ndarray:
    """Flip each axis so its largest-|loading| entry is positive (a rerun never mirrors the plot)."""
    c = np.array(components, dtype=np.float64, copy=True)
    idx = np.argmax(np.abs(c), axis=1)
    signs = np.sign(c[np.arange(len(c)), idx])
    signs[signs == 0] = 1.0
    return c * signs[:, None]


def pca_fit(points: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(components [k, d], explained ratio [k], mean [d]) of points [N, d] with scikit-learn."""
    from sklearn.decomposition import PCA

    points = np.asarray(points, dtype=np.float64)
    n, d = points.shape
    k_fit = max(1, min(k, n, d))
    if n < 2:  # one point: no variance to explain
        comps = np.eye(d)[:k_fit]
        return _pad_components(comps, k), np.zeros(k), points.mean(0)
    # ARPACK (Lanczos, fixed start vector) finds the 2-3 leading axes of a few thousand × 512
    # points ~5× faster than a full SVD, to the same precision
    solver = "arpack" if min(n, d) > 4 * k_fit else "full"
    pca = PCA(n_components=k_fit, svd_solver=solver, random_state=0).fit(points)
    comps = fix_signs(pca.components_)
    ratio = np.nan_to_num(pca.explained_variance_ratio_)
    if k_fit < k:  # fewer axes than asked (tiny inputs): pad with zero axes so shapes stay fixed
        comps, ratio = _pad_components(comps, k), np.concatenate([ratio, np.zeros(k - k_fit)])
    return comps, ratio, pca.mean_


def _pad_components(comps: np.ndarray, k: int) -> np.ndarray:
    if len(comps) >= k:
        return comps[:k]
    return np.vstack([comps, np.zeros((k - len(comps), comps.shape[1]))])


def pca_project(states: np.ndarray, k: int = 2, keep: np.ndarray | None = None) -> Projection:
    """Fit PCA on ALL states of a trajectory (every sub-step, every kept token) and project them.

    One fit for the whole trajectory gives one fixed frame for the whole animation.
    """
    states = np.asarray(states)
    kept = states if keep is None else states[:, keep]
    comps, ratio, mean = pca_fit(kept.reshape(-1, kept.shape[-1]), k)
    coords = (kept.astype(np.float64) - mean) @ comps.T
    return Projection(coords=coords, explained=ratio, components=comps, mean=mean, keep=keep)


def project(traj: Trajectory, k: int = 2, normalised: bool = False, hide_special: bool = True) -> Projection:
    """The particles view: one PCA of all the trajectory's states (every sub-step, every kept token), `k` axes.
    [CLS] and [SEP] (any special token) are left out unless hide_special=False: they sit far from the words and
    would take the first axis; `normalised` standardises each token as LayerNorm does before the PCA."""
    keep = keep_mask(traj.tokens, hide_special)
    return pca_project(kept_states(traj, normalised), k, keep)


def project_together(*trajs: Trajectory, k: int = 2, normalised: bool = False,
                     hide_special: bool = True) -> tuple[Projection, ...]:
    """One PCA fitted on the states of several trajectories (two sentences of one model, one sentence at
    every stage of a model's training): shared axes, so the frame stays when the view switches between them.
    Special tokens left out unless hide_special=False, as in project."""
    keeps = [keep_mask(t.tokens, hide_special) for t in trajs]
    kept = [kept_states(t, normalised, keep) for t, keep in zip(trajs, keeps)]
    comps, ratio, mean = pca_fit(np.concatenate([x.reshape(-1, x.shape[-1]) for x in kept]), k)
    return tuple(Projection((x.astype(np.float64) - mean) @ comps.T, ratio, comps, mean, keep)
                 for x, keep in zip(kept, keeps))


# ---- aligning two models ----------------------------------------------------------------------
@dataclass
class Alignment:
    rotation: np.ndarray   # [d_b, d_a] orthogonal (zero-padded when widths differ)
    scale: float           # optimal isotropic scale after unit-norm standardisation
    residual: float        # Procrustes disparity in [0, 1]: 0 = same shape up to rotation and scale
    mean_a: np.ndarray
    mean_b: np.ndarray
    norm_a: float
    norm_b: float

    __repr__ = brief

    def apply(self, b: np.ndarray) -> np.ndarray:
        """Map points of B [..., d_b] into A's space [..., d_a]."""
        b = _pad_to(np.asarray(b, dtype=np.float64), self.rotation.shape[0])
        z = (b - self.mean_b) / self.norm_b @ self.rotation
        return z * self.scale * self.norm_a + self.mean_a


def _pad_to(x: np.ndarray, d: int) -> np.ndarray:
    if x.shape[-1] >= d:
        return x
    pad = np.zeros(x.shape[:-1] + (d - x.shape[-1],))
    return np.concatenate([x, pad], axis=-1)


def procrustes_align(a: np.ndarray, b: np.ndarray) -> Alignment:
    """Orthogonal Procrustes: rotate B's points onto A's matched points (rows correspond).

    Both sets are centred and scaled to unit Frobenius norm, as in scipy.spatial.procrustes,
    so the residual (disparity) is 1 − (Σσ)², a number in [0, 1] comparable across models.
    Widths may differ: the narrower set is padded with zero coordinates.
    """
    a = np.asarray(a, dtype=np.float64).reshape(-1, np.shape(a)[-1])
    b = np.asarray(b, dtype=np.float64).reshape(-1, np.shape(b)[-1])
    if len(a) != len(b):
        raise ValueError(f"Procrustes needs matched points: {len(a)} vs {len(b)} rows")
    d = max(a.shape[1], b.shape[1])
    a, b = _pad_to(a, d), _pad_to(b, d)
    mean_a, mean_b = a.mean(0), b.mean(0)
    ac, bc = a - mean_a, b - mean_b
    norm_a, norm_b = float(np.linalg.norm(ac)) or 1.0, float(np.linalg.norm(bc)) or 1.0
    rot, scale = orthogonal_procrustes(bc / norm_b, ac / norm_a)
    residual = float(np.clip(1.0 - scale ** 2, 0.0, 1.0))
    return Alignment(rotation=rot, scale=float(scale), residual=residual, mean_a=mean_a, mean_b=mean_b,
                     norm_a=norm_a, norm_b=norm_b)


@dataclass
class Procrustes:
    """Model B's trajectory rotated onto model A's, both drawn in A's PCA frame."""

    alignment: Alignment
    projection: Projection  # A's PCA (2 axes), fitted on A's kept particles
    a: np.ndarray           # [Sa, T_kept, 2]: A's states
    b: np.ndarray           # [Sb, T_kept, 2]: B's states, rotated, then shifted and scaled onto A's at that time
    layer_times: np.ndarray      # [L + 1]: the layer boundaries both trajectories share
    layer_residuals: np.ndarray  # [L + 1]: the residual there, in [0, 1] like the overall one

    __repr__ = brief

    @property
    def residual(self) -> float:
        return self.alignment.residual


def unit_clouds(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each state [.., T, d] centred over its particles and scaled to unit Frobenius norm, and the
    norms: the shape of every cloud, whatever its size (embeddings are ~100× smaller than layer 1)."""
    c = np.asarray(states, dtype=np.float64)
    c = c - c.mean(-2, keepdims=True)
    n = np.linalg.norm(c, axis=(-2, -1))
    return c / np.where(n > 0, n, 1.0)[..., None, None], n


def procrustes(traj_a: Trajectory, traj_b: Trajectory, normalised: bool = False,
               hide_special: bool = True) -> Procrustes:
    """Orthogonal Procrustes of B's states onto A's (the same sentence through two models: the tokens
    must match). One rotation for all layers, fitted on the shapes at the layer boundaries both share,
    each centred and scaled to unit norm so that every layer counts alike (the embedding too).

    Residuals are 1 − (Σσ)² (overall) and 1 − ⟨A_l, B_l R⟩² per boundary, on those unit shapes:
    0 = the same shape up to the rotation and a scale, 1 = orthogonal (Aᵀ B = 0); unrelated clouds fall
    in between, and can come near 0 when there are more dimensions than tokens.

    Both models must split the sentence into the same tokens (else an InputError that shows both); special tokens
    are left out unless hide_special=False."""
    matched(traj_a, traj_b, "Procrustes")
    keep = keep_mask(traj_a.tokens, hide_special)
    sa = kept_states(traj_a, normalised, keep).astype(np.float64)
    sb = kept_states(traj_b, normalised, keep).astype(np.float64)
    ua, na = unit_clouds(sa)
    ub, _ = unit_clouds(sb)
    ia, ib = common_boundaries(traj_a.times, traj_b.times)
    al = procrustes_align(ua[ia].reshape(-1, ua.shape[-1]), ub[ib].reshape(-1, ub.shape[-1]))
    d = al.rotation.shape[0]
    rotated = _pad_to(ub, d) @ al.rotation                            # B's shapes in A's space
    per = [1.0 - max(0.0, float(np.sum(_pad_to(ua[i], d) * rotated[j]))) ** 2 for i, j in zip(ia, ib)]
    # shown at A's size and place at the same layer time (A's PCA reads A's coordinates only)
    at = [state_at(traj_a.times, t) for t in traj_b.times]
    aligned = rotated[..., :sa.shape[-1]] * na[at][:, None, None] + sa[at].mean(-2, keepdims=True)
    pa = pca_project(sa, 2)
    pa.keep = keep
    return Procrustes(al, pa, pa.coords, pa.transform(aligned), traj_a.times[ia], np.array(per, dtype=np.float64))


def common_boundaries(times_a: np.ndarray, times_b: np.ndarray) -> tuple[list[int], list[int]]:
    """Indices of the states of A and B that sit on the same integer layer time."""
    ia = {round(float(t), 6): i for i, t in enumerate(times_a) if float(t).is_integer()}
    ib = {round(float(t), 6): i for i, t in enumerate(times_b) if float(t).is_integer()}
    shared = sorted(set(ia) & set(ib))
    return [ia[t] for t in shared], [ib[t] for t in shared]


def state_at(times: np.ndarray, t: float) -> int:
    """Index of the latest state reached by time t (the state a reader sees at layer time t)."""
    times = np.asarray(times, dtype=np.float64)
    return max(0, int(np.searchsorted(times, t + 1e-9, side="right")) - 1)


# ---- basis-free comparisons -------------------------------------------------------------------
def linear_cka_matrix(states_a: np.ndarray, states_b: np.ndarray) -> np.ndarray:
    """Linear CKA between every state of A [Sa, T, da] and every state of B [Sb, T, db]: [Sa, Sb].

    CKA(X, Y) = ‖YᵀX‖²_F / (‖XᵀX‖_F ‖YᵀY‖_F) with token-centred X, Y (Kornblith et al. 2019),
    computed through the T×T Gram matrices. Invariant to rotations and isotropic scaling.
    """
    def grams(states):
        x = np.asarray(states, dtype=np.float64)
        x = x - x.mean(axis=1, keepdims=True)          # centre over tokens
        g = np.einsum("std,sud->stu", x, x).reshape(len(x), -1)  # [S, T*T]
        n = np.linalg.norm(g, axis=1, keepdims=True)
        return g / np.where(n > 0, n, 1.0)

    a, b = np.asarray(states_a), np.asarray(states_b)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"CKA compares the same tokens: {a.shape[1]} vs {b.shape[1]} tokens")
    return np.clip(grams(a) @ grams(b).T, 0.0, 1.0)


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    return float(linear_cka_matrix(np.asarray(x)[None], np.asarray(y)[None])[0, 0])


def cka(traj_a: Trajectory, traj_b: Trajectory, normalised: bool = False, hide_special: bool = True) -> np.ndarray:
    """[Sa, Sb]: linear CKA between every state of A and of B: the same sentence through two models, which must
    split it into the same tokens (else an InputError that shows both). Special tokens are left out unless
    hide_special=False; `normalised` standardises each token first."""
    matched(traj_a, traj_b, "CKA")
    keeps = [keep_mask(t.tokens, hide_special) for t in (traj_a, traj_b)]
    return linear_cka_matrix(kept_states(traj_a, normalised, keeps[0]), kept_states(traj_b, normalised, keeps[1]))


def time_grid(*trajs: Trajectory) -> np.ndarray:
    """Every layer time any of the trajectories reaches: the clock of a side-by-side view."""
    return np.unique(np.round(np.concatenate([t.times for t in trajs]), 6))


def unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def mean_pairwise_cosine(states: np.ndarray) -> np.ndarray:
    """[S]: mean cosine similarity over all pairs of distinct particles, per state.

    Rising towards 1 with depth means the particles gather in one direction (clustering,
    or rank collapse when it happens too early)."""
    u = unit_rows(states)                       # [S, T, d]
    T = u.shape[1]
    if T < 2:
        return np.ones(len(u))
    s = u.sum(axis=1)                            # Σ_i u_i
    total = np.einsum("sd,sd->s", s, s)          # Σ_ij cos_ij, diagonal included
    return (total - T) / (T * (T - 1))


def cosine_clusters(x: np.ndarray, threshold: float = 0.15) -> np.ndarray:
    """Cluster labels [T] (0-based) of particles by cosine distance: average linkage, cut at `threshold`."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import pdist

    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return np.zeros(len(x), dtype=int)
    dist = np.clip(pdist(unit_rows(x), "cosine"), 0.0, 2.0)
    return fcluster(linkage(dist, method="average"), t=threshold, criterion="distance") - 1


def clusters_over_depth(states: np.ndarray, threshold: float = 0.15) -> np.ndarray:
    """[S]: number of cosine clusters at every state."""
    return np.array([len(set(cosine_clusters(s, threshold))) for s in np.asarray(states)])


def share_in_view(traj: Trajectory, proj: Projection, normalised: bool = False) -> np.ndarray:
    """[S]: the share of each state's spread (its particles' variance about their centre) that lies in
    the plane of `proj`: how much of a frame the picture shows."""
    x = kept_states(traj, normalised, proj.keep).astype(np.float64)
    x = x - x.mean(-2, keepdims=True)
    total = (x ** 2).sum((-2, -1))
    shown = ((x @ np.asarray(proj.components, dtype=np.float64).T) ** 2).sum((-2, -1))
    return shown / np.where(total > 0, total, 1.0)


def mean_norms(states: np.ndarray) -> np.ndarray:
    """[S]: the mean length ‖x‖ of the particles' states, per state (how big the cloud is)."""
    return np.linalg.norm(np.asarray(states, dtype=np.float64), axis=-1).mean(-1)


def displacement_norms(states: np.ndarray) -> np.ndarray:
    """[S-1, T]: ‖x(k+1) − x(k)‖ per sub-step and particle."""
    return np.linalg.norm(np.diff(np.asarray(states, dtype=np.float64), axis=0), axis=-1)


@dataclass
class MoveShares:
    """Where a layer's moves come from: per layer, the share of each particle's path length (the sum of its
    sub-steps' ‖Δx‖) that each kind of sub-step travels, averaged over the particles of every sentence."""

    kinds: tuple[str, ...]   # the kinds of sub-step present: attention, cross-attention, FFN (or both at once)
    shares: np.ndarray       # [layers, kinds], each row summing to 1
    particles: int           # particles averaged over (all sentences together)
    sentences: int

    __repr__ = brief


def move_shares(trajs: list[Trajectory], normalised: bool = False, hide_special: bool = True) -> MoveShares:
    """MoveShares of one system over trajectories of one model (e.g. a decoder's: its self-attention,
    cross-attention and FFN). `normalised`: moves of the states as the operators read them (standardise)."""
    from ..schemes import CROSS, DIFFUSION, FULL

    steps = trajs[0].steps  # kinds in a decoder layer's reading order: self-attention, cross-attention, FFN
    kinds = tuple(k for k in (DIFFUSION, CROSS, CONVECTION, FULL) if any(s.kind == k for s in steps))
    layers = sorted({s.layer for s in steps})
    rows = []
    for traj in trajs:
        keep = keep_mask(traj.tokens, hide_special)
        moved = displacement_norms(kept_states(traj, normalised, keep))  # [sub-steps, particles]
        per = np.zeros((len(layers), len(kinds), moved.shape[1]))
        for k, s in enumerate(traj.steps):
            per[layers.index(s.layer), kinds.index(s.kind)] += moved[k]
        rows.append(per / np.where(per.sum(1, keepdims=True) > 0, per.sum(1, keepdims=True), 1.0))
    pooled = np.concatenate(rows, axis=-1)  # [layers, kinds, every particle of every sentence]
    return MoveShares(kinds, pooled.mean(-1), pooled.shape[-1], len(trajs))


def token_similarity_over_depth(states_a: np.ndarray, i: int, states_b: np.ndarray, j: int,
                                times_a, times_b) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarity between particle i of A and particle j of B on a shared time grid.

    Returns (times, cosine): the union of both trajectories' times; at each, the latest state."""
    grid = np.union1d(np.round(times_a, 6), np.round(times_b, 6))
    ua, ub = unit_rows(np.asarray(states_a)[:, i]), unit_rows(np.asarray(states_b)[:, j])
    cos = [float(ua[state_at(times_a, t)] @ ub[state_at(times_b, t)]) for t in grid]
    return grid, np.array(cos)


# ---- what the head answers ---------------------------------------------------------------------
def answers(model, traj: Trajectory, k: int = 5) -> list[list[tuple[str, float]]] | None:
    """The model's top k guesses (word, probability) where its head answers the sentence (traj.guess_at), at every
    state: the logit lens; None where the model has no head or the sentence nothing to answer."""
    if not model.has_head or traj.guess_at is None:
        return None
    return model.logit_lens(traj, traj.guess_at, k=k)


def guess_said(traj: Trajectory) -> str:
    """What the guesses read at traj.guess_at are for, in words (the app, the lesson and the command line say it
    so): an encoder's [MASK]; a decoder's next word, from the words before it only."""
    i = traj.guess_at
    if i is None:
        return ""
    if not traj.causal:
        return f"[MASK] (token {i})"
    after = f"the next word after “{traj.tokens[i]}” (token {i}), read from the words before it only"
    return f"{after}: the word it expects where [MASK] stands" if MASK_TOKEN in traj.text else \
        f"{after}: the word after the sentence"


# ---- attribution (Captum) ---------------------------------------------------------------------
@dataclass
class Attribution:
    scores: np.ndarray   # [T]: contribution of each token's embedding (summed over d)
    target: str          # what was explained, in words
    delta: float         # completeness gap |Σ scores − (f(x) − f(baseline))|

    __repr__ = brief


def attribute(model, traj: Trajectory, position: int | None = None, n_steps: int = 24,
              what: str = "auto") -> Attribution:
    """Integrated gradients on the token embedding layer (Captum's LayerIntegratedGradients).

    what='guess': the log-probability of the model's top guess at `position` (default: traj.guess_at, the
    [MASK], or for a decoder the token whose next word is guessed); what='norm': the norm of that token's final
    state; 'auto': a guess at traj.guess_at, else the norm. The baseline keeps
    [CLS]/[SEP]/[MASK] and replaces every other token by [PAD].
    """
    import torch
    from captum.attr import LayerIntegratedGradients

    token_ids = list(traj.token_ids)
    tok = model.tokenizer
    special = {tok.token_to_id(t) for t in (*SPECIAL_TOKENS, MASK_TOKEN)} if tok else set()
    special.discard(None)
    ids = torch.tensor([token_ids], dtype=torch.long, device=model.device)
    if position is None:
        position = traj.guess_at if traj.guess_at is not None else 0
    base = torch.tensor([[t if t in special else model.config.pad_id for t in token_ids]],
                        dtype=torch.long, device=model.device)

    if what == "auto":
        what = "guess" if model.has_head and position == traj.guess_at else "norm"
    if what == "guess" and not model.has_head:
        raise ValueError("this model has no head to guess words with: it can only explain a final state norm")
    with torch.enable_grad():
        if what == "guess":
            with torch.no_grad():
                target_id = int(model.head(model(ids))[0, position].argmax())
            word = model.reader.token(target_id)

            def f(x):
                return torch.log_softmax(model.head(model(x))[:, position], dim=-1)[:, target_id]

            where = f"the next word after token {position}" if traj.causal else f"at position {position}"
            described = f"log-probability of “{word}”, {where}"
        else:
            def f(x):
                return model(x)[:, position].norm(dim=-1)

            described = f"norm of the final state of token {position}"
        lig = LayerIntegratedGradients(f, model.token_embedding)
        attr, delta = lig.attribute(ids, baselines=base, n_steps=n_steps, return_convergence_delta=True,
                                    internal_batch_size=n_steps)
    scores = attr.sum(-1)[0].detach().float().cpu().numpy()
    return Attribution(scores=scores, target=described, delta=float(delta.abs().sum()))
