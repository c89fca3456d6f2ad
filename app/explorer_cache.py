"""The explorer's caching policy, in one place: what is computed once and shared by every session.

Models load once per process (st.cache_resource). Traces, projections, alignments, attributions
and the toy lab's studies are cached per input in bounded caches (max_entries): cache_resource
for objects the pages only read (no copy per rerun), cache_data for small results. Cached
objects are shared between sessions: treat them as read-only.

The computing itself is macaron's (macaron.studies.analysis, macaron.lab, macaron.plot); this module only
decides what is kept, how sessions share the CPU (turns, heavy), and turns failures into messages
on the page.
"""
from __future__ import annotations

import contextlib
import gc
import os
import threading
import time

import streamlit as st

import macaron
import whatif_state
from macaron import CheckpointError, InputError, lab, plot
from macaron import interventions as iv
from macaron.formats.registry import translates
from macaron.interventions import Effect
from macaron.network.reading import NO_TOKENIZER
from macaron.studies import analysis, bleu
from macaron.translation import model as translation
from macaron.translation.model import EXAMPLES, EncoderDecoder, Translation, joint

MAX_TOKENS = 96        # the explorer shows at most this many particles (more is unreadable)
MAX_CHARS = 20_000     # longer text is cut before tokenising, and the page says so


# ---- the server ---------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)  # main.py says that the server is starting
def warm(paths: tuple[str, ...], text: str) -> int:
    """Once per process, before any page: torch and BLAS threads (MACARON_APP_THREADS, else macaron's
    choice), the default models loaded and one sentence traced, projected and drawn, so that the first
    visitors share one load and the lazy imports (scikit-learn, scipy, plotly) are done. Then every
    object alive leaves the garbage collector's reach (gc.freeze): a full collection walks only what
    the pages made since, not torch, scipy and plotly (0.2 s a collection, holding the GIL, before).
    Streamlit's own full collection after every run is off (.streamlit/config.toml, postScriptGC)."""
    threads = macaron.set_threads(int(os.environ.get("MACARON_APP_THREADS", "0") or 0) or None)
    for path in paths:
        try:
            traj = timed_trace(path, text)[0]
            proj, _ = stage_frame(stages(path), path, text, 2, True, True)  # every stage, where it has them
            plot.particles(traj, proj)
            plot.displacement([traj])
        except Exception:  # a folder that does not load is reported by the page that opens it
            pass
    gc.freeze()
    return threads


TURNS = threading.BoundedSemaphore(max(2, min(4, os.cpu_count() or 1)))
HEAVY = threading.RLock()
ONE_AT_A_TIME = " (one such computation at a time on this server)…"  # what a spinner of heavy work adds
_held = threading.local()


@contextlib.contextmanager
def turn():
    """A page runs in one of TURNS turns (as many as cores), first come first served. A class pressing
    Enter together is served two at a time on two cores, each run at full speed, not thirty at a
    thirtieth of it: half the wait for the median session, and less CPU in all (measured)."""
    _held.turn = False
    try:  # a rerun can interrupt the page at any st call, the spinner's end included: the turn is released
        if TURNS.acquire(blocking=False):
            _held.turn = True
        else:
            with st.spinner("Many people are using this server: your page comes in a moment…"):
                TURNS.acquire()
                _held.turn = True  # no st call between: held and marked as one step
        yield
    finally:
        if _held.turn:
            _held.turn = False
            TURNS.release()


@contextlib.contextmanager
def heavy():
    """A computation of seconds (attribution, the lab's studies, a sentence set's measures) gives its
    page's turn to the others (the rest of that page runs without one) and waits for the server's one
    heavy slot: two of them cannot hold up everyone's pages. Used inside the cached functions only, so
    a cached result never waits."""
    with off_turn(), HEAVY:
        yield


@contextlib.contextmanager
def off_turn():
    """The page waits on something other than the cores (a download): its turn goes to the others meanwhile."""
    if getattr(_held, "turn", False):
        _held.turn = False
        TURNS.release()
    yield


def download_from_hub(name: str) -> str | None:
    """Hub model `name` downloaded into the local Hub cache with a progress bar on the page
    (macaron.sources.hub.download judges the Hub's file list first: a refusal is said before anything downloads).
    The download runs in a thread of its own and the page's run draws its progress; the page gives its turn on the
    cores to the others meanwhile. The folder, or None after an st.error that says why."""
    from macaron.sources import hub

    numbers, outcome = {}, {}

    def work():
        try:
            outcome["folder"] = str(hub.download(name, progress=lambda done, total: numbers.update(done=done,
                                                                                                 total=total)))
        except Exception as e:  # said on the page below
            outcome["error"] = e

    bar = st.progress(0.0, text=f"Asking the Hub about **{name}**…")
    thread = threading.Thread(target=work, name=f"hub-download-{name}", daemon=True)
    with off_turn():
        thread.start()
        while thread.is_alive():
            thread.join(0.25)
            done, total = numbers.get("done", 0), numbers.get("total")
            if total:
                bar.progress(min(1.0, done / total), text=f"Downloading **{name}** from the Hub: "
                                                          f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB")
    bar.empty()
    if "error" in outcome:
        st.error(f"**{name} was not downloaded.** {outcome['error']}", icon=":material/cloud_off:")
        return None
    return outcome["folder"]


# ---- models ---------------------------------------------------------------------------------
RANDOM_START = "#random-start"  # a model path ending so: its random start, rebuilt from the run's seed


@st.cache_resource(show_spinner="Loading the model (once per server)…", max_entries=12)  # 2 models × 4 stages + 4
def load_model(path: str):
    if translates(path.removesuffix(RANDOM_START)):  # two particle systems: the Translate page's
        raise CheckpointError(f"{path}: a translation model (an encoder–decoder): open it on the **Translate** "
                              f"page. This page opens one particle system, an encoder's or a decoder's.")
    start = path.endswith(RANDOM_START)
    model = macaron.load(path.removesuffix(RANDOM_START), at=0) if start else macaron.load(path)
    if model.tokenizer is None:
        raise CheckpointError(f"{path}: the explorer cannot read text with this model: {NO_TOKENIZER}")
    return model


@st.cache_resource(show_spinner="Loading the translation model (once per server)…", max_entries=4)
def load_translation(path: str) -> EncoderDecoder:
    if not translates(path):
        raise CheckpointError(f"{path}: not a translation model (it moves one particle system): open it on the "
                              f"Particles page.")
    model = macaron.load_translator(path)
    if model.tokenizer is None:
        raise CheckpointError(f"{path}: the explorer cannot read text with this model: {NO_TOKENIZER}")
    return model


def try_load(path: str, load=None):
    """The model (by `load`, default load_model), or None after an st.error that says what is wrong (the page goes
    on)."""
    try:
        return (load or load_model)(path)
    except Exception as e:  # any failure to load is reported, never raised into the page
        st.error(f"**This model could not be loaded.** {e}", icon=":material/error:")
        return None


@st.cache_data(show_spinner=False, max_entries=32)
def stages(path: str) -> list[tuple[str, str, str]]:
    """(name, label, model path) of each stage of a model's training (macaron.sources.milestones), in order; one
    entry, the model itself, for a folder without milestones or whose facts do not read."""
    try:
        kept = macaron.milestones(path)
    except Exception:  # unreadable training facts: the model itself still loads (or says why)
        return [("final", "final", path)]
    return [(m.name, m.label(), str(m.folder) if m.folder is not None else path + RANDOM_START) for m in kept]


# ---- traces ---------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=48)
def timed_trace(path: str, text: str) -> tuple[macaron.Trajectory, float]:
    """One sentence's trace, cached once per server, and how long it took (ms)."""
    t0 = time.perf_counter()
    traj = load_model(path).trace(text[:MAX_CHARS], max_tokens=MAX_TOKENS)
    return traj, (time.perf_counter() - t0) * 1000


def trace(path: str, text: str, model_name: str = "") -> macaron.Trajectory | None:
    """Trace one sentence (cached) and report any truncation. Bad text gives an st.warning and None."""
    t0 = time.perf_counter()
    try:
        traj, ms = timed_trace(path, text)
    except InputError as e:
        st.warning(str(e), icon=":material/edit_note:")
        return None
    except Exception as e:  # e.g. a synthesizer model given more tokens than its max_len
        st.error(f"Tracing failed: {e}", icon=":material/error:")
        return None
    _timed(traj, model_name, ms, t0)
    _report_truncation(traj, text)
    if traj.meta.get("reading"):  # e.g. a fairseq import without its BPE codes (macaron.formats.moses_bpe)
        st.info(f"**{model_name or traj.meta.get('model', '')}**: {traj.meta['reading']}", icon=":material/spellcheck:")
    return traj


def _timed(traj: macaron.Trajectory, model_name: str, ms: float, t0: float) -> None:
    """What the sidebar says of the last trace: its computing time, and whether this run took it from the cache."""
    wall = (time.perf_counter() - t0) * 1000
    st.session_state["_last_trace"] = dict(model=model_name or traj.meta.get("model", ""), ms=ms, wall=wall,
                                           cached=wall < ms * 0.5 or wall < 1.0, tokens=len(traj.tokens),
                                           device=traj.meta.get("device", "cpu"))


def _report_truncation(traj: macaron.Trajectory, text: str) -> None:
    parts = []
    if len(text) > MAX_CHARS:
        parts.append(f"the text was cut to its first {MAX_CHARS:,} characters ({len(text) - MAX_CHARS:,} dropped)")
    if traj.truncated and len(traj.tokens) == MAX_TOKENS:
        parts.append(f"the explorer shows at most {MAX_TOKENS} particles, so {traj.truncated} more tokens were "
                     "dropped")
    elif traj.truncated:
        parts.append(f"{traj.truncated} tokens beyond the model's limit were dropped")
    if parts:
        st.warning("Truncated: " + "; ".join(parts) + ". [SEP] stays last.", icon=":material/content_cut:")


# ---- translations -----------------------------------------------------------------------------
MAX_WORDS = 60  # the most words of a translation the explorer generates (fairseq's own limit is 200)


@st.cache_resource(show_spinner=False, max_entries=32)
def _translate(path: str, text: str, beam: int) -> tuple[Translation, macaron.Trajectory, float]:
    """(the translation, both systems on one clock, milliseconds)."""
    t0 = time.perf_counter()
    model = load_translation(path)
    ids, _, dropped = model.tokenize(text[:MAX_CHARS])
    if len(ids) + dropped > MAX_TOKENS:
        raise InputError(f"The sentence reads as {len(ids) + dropped} tokens; the explorer translates at most "
                         f"{MAX_TOKENS}: shorten it.")
    tr = model.translate(text[:MAX_CHARS], beam=beam, max_tokens=MAX_WORDS)
    return tr, joint(tr), (time.perf_counter() - t0) * 1000


def translate(path: str, text: str, beam: int, model_name: str = "") -> tuple[Translation, macaron.Trajectory] | None:
    """Translate one sentence (cached): the translation and both systems on one clock (how the text was read, where
    the reader should know, is its meta's "reading": the page says it). Text the model refuses gives an st.warning,
    any other failure (a damaged folder) an st.error, each naming the model, and None."""
    t0 = time.perf_counter()
    try:
        tr, both, ms = _translate(path, text, beam)
    except Exception as e:  # never raised into the page
        said_failure(e, model_name, "Translating failed")
        return None
    _timed(both, model_name, ms, t0)
    return tr, both


def said_failure(e: Exception, model_name: str, what: str) -> None:
    """A translation model's failure on the page, its name first (two may be on offer): text it refuses (InputError)
    as a warning, anything else as an error."""
    who = f"**{model_name}**: " if model_name else ""
    if isinstance(e, InputError):
        st.warning(f"{who}{e}", icon=":material/edit_note:")
    else:
        st.error(f"{who}{what}: {e}", icon=":material/error:")


@st.cache_resource(show_spinner=False, max_entries=48)
def project_translation(path: str, text: str, beam: int, k: int, normalised: bool, hide_special: bool):
    return analysis.project(_translate(path, text, beam)[1], k, normalised, hide_special)


@st.cache_resource(show_spinner=False, max_entries=48)
def _move_shares(path: str, texts: tuple[str, ...], beam: int, normalised: bool, hide_special: bool
                 ) -> analysis.MoveShares:
    return analysis.move_shares([_translate(path, t, beam)[0].target for t in texts], normalised, hide_special)


def move_shares(path: str, texts: tuple[str, ...], beam: int, normalised: bool, hide_special: bool,
                model_name: str = "") -> analysis.MoveShares | None:
    """Over the translations of `texts` (one sentence, or a set; cached), or None after a message naming the model
    (a preset it refuses, a folder that does not load)."""
    try:
        return _move_shares(path, texts, beam, normalised, hide_special)
    except Exception as e:  # never raised into the page
        said_failure(e, model_name, "Measuring the shares failed")
        return None


@st.cache_data(show_spinner=False, max_entries=16, ttl=300)  # a test set fetched while the server runs shows up
def presets(path: str, lang: str) -> tuple[tuple[str, ...], bool]:
    """A translation model's preset sentences and whether they come from its test set: a translator trained here
    opens on the page's own (one word, two senses), then the first of its test set (True); the paper's, the first of
    its test set where fetch brought it (True); else the page's own in the model's source language (False; none for a
    language they are not written in)."""
    own = translation.presets(path)
    if own:
        return tuple(EXAMPLES.get(lang, ())) + tuple(own), True
    found = bleu.release_presets(path, lang)
    return (tuple(found), True) if found else (tuple(EXAMPLES.get(lang, ())), False)


# ---- what the pages draw from traces --------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=48)
def project(path: str, text: str, k: int, normalised: bool, hide_special: bool) -> analysis.Projection:
    return analysis.project(timed_trace(path, text)[0], k, normalised, hide_special)


@st.cache_resource(show_spinner=False, max_entries=32)
def _stage_frames(paths: tuple[str, ...], text: str, k: int, normalised: bool, hide_special: bool):
    """One PCA of a sentence's states at every stage of training."""
    return analysis.project_together(*(timed_trace(p, text)[0] for p in paths), k=k, normalised=normalised,
                                     hide_special=hide_special)


def stage_frame(stages: list[tuple[str, str, str]], path: str, text: str, k: int, normalised: bool,
                hide_special: bool) -> tuple[analysis.Projection, bool]:
    """(projection, whether it is shared) for `path`'s trace of `text`. Where the model has stages of training:
    one PCA of the sentence at every stage, so moving between stages keeps the directions (each stage is drawn
    at its own scale: the cloud of the weights shipped is far smaller than the random start's, and would fill a
    corner of a range over both). Its own projection otherwise, or when another stage does not load."""
    paths = tuple(p for *_, p in stages)
    if len(paths) > 1 and path in paths:
        try:
            return _stage_frames(paths, text, k, normalised, hide_special)[paths.index(path)], True
        except Exception:  # e.g. a random start that does not rebuild here: this stage alone still draws
            pass
    return project(path, text, k, normalised, hide_special), False


@st.cache_resource(show_spinner=False, max_entries=64)
def project_together(path: str, text_a: str, text_b: str, normalised: bool, hide_special: bool):
    return analysis.project_together(timed_trace(path, text_a)[0], timed_trace(path, text_b)[0], normalised=normalised,
                                     hide_special=hide_special)


@st.cache_resource(show_spinner=False, max_entries=64)
def procrustes(path_a: str, path_b: str, text: str, normalised: bool, hide_special: bool) -> analysis.Procrustes:
    return analysis.procrustes(timed_trace(path_a, text)[0], timed_trace(path_b, text)[0], normalised, hide_special)


@st.cache_resource(show_spinner="Integrating gradients" + ONE_AT_A_TIME, max_entries=64)
def attribution(path: str, text: str, position: int) -> analysis.Attribution:
    """Captum attribution for one traced sentence: position = the [MASK] (explains the top guess) or,
    for a model without a head, the token whose final state norm is explained."""
    with heavy():
        return analysis.attribute(load_model(path), timed_trace(path, text)[0], position)



# ---- what if (macaron.interventions; the panel: whatif_panel) ------------------------------------------
def _other(spec: whatif_state.Spec, trace_other):
    """The trace a patch reads (`trace_other` of its sentence), None for any other intervention."""
    if spec.what != "patch":
        return None
    if not spec.other.strip():
        raise InputError("a patch takes the particle's state from another sentence: type one with as many tokens "
                         "as this one")
    return trace_other(spec.other)


@st.cache_resource(show_spinner="Running the model with the intervention…", max_entries=32)
def _altered(path: str, text: str, spec: whatif_state.Spec) -> tuple[macaron.Trajectory, macaron.Trajectory, Effect]:
    """(the sentence's trace as trained, with `spec`'s intervention, what it changed)."""
    model, plain = load_model(path), timed_trace(path, text)[0]
    other = _other(spec, lambda s: timed_trace(path, s)[0])
    altered = model.trace(text[:MAX_CHARS], max_tokens=MAX_TOKENS,
                          interventions=whatif_state.interventions(spec, plain.layer_boundaries(), other))
    return plain, altered, iv.effect(model, plain, altered)


@st.cache_resource(show_spinner="Translating with the intervention…", max_entries=16)
def _altered_translation(path: str, text: str, beam: int, spec: whatif_state.Spec
                         ) -> tuple[macaron.Trajectory, macaron.Trajectory, Effect, Translation]:
    """(both systems on one clock as trained, and with `spec`'s intervention, what it changed, the altered
    translation): the translation searched again with it, as the model's own search runs."""
    model, (tr, both, _) = load_translation(path), _translate(path, text, beam)
    other = _other(spec, lambda s: _translate(path, s, beam)[0].source)
    altered = model.translate(text[:MAX_CHARS], beam=beam, max_tokens=MAX_WORDS, interventions=whatif_state
                              .interventions(spec, tr.source.layer_boundaries(), other))
    return both, joint(altered), iv.effect(model, tr, altered), altered


def what_if(path: str, text: str, spec: whatif_state.Spec, model_name: str = "", beam: int | None = None
            ) -> tuple | None:
    """(the run as trained, altered, what it changed) of one sentence (`beam`: a translator's, both systems on one
    clock, and the altered Translation), cached; or None after a message that names what is wrong (a layer, head or
    particle that does not exist, a patch from a sentence of another length: InputError) or that the model failed."""
    try:
        return _altered(path, text, spec) if beam is None else _altered_translation(path, text, beam, spec)
    except Exception as e:  # never raised into the page
        who = f" ({model_name})" if model_name else ""
        if isinstance(e, InputError):
            st.warning(f"**What if…**{who}: {e}", icon=":material/edit_note:")
        else:
            st.error(f"**What if…**{who} failed: {e}", icon=":material/error:")
        return None


@st.cache_resource(show_spinner=False, max_entries=32)
def what_if_projection(runs: tuple[tuple, ...], spec: whatif_state.Spec, normalised: bool, hide_special: bool
                       ) -> tuple[analysis.Projection, ...]:
    """One 2-D PCA of the states of each run as trained and altered (each of `runs`: what_if's (path, text, beam)),
    so a particle and its unaltered ghost are in one frame: the projections, as trained then altered, run by run."""
    trajs = [t for path, text, beam in runs for t in (_altered(path, text, spec) if beam is None else
                                                        _altered_translation(path, text, beam, spec))[:2]]
    return analysis.project_together(*trajs, k=2, normalised=normalised, hide_special=hide_special)


# ---- the splitting lab ----------------------------------------------------------------------
def toy_system(kind: str, n: int, beta: float):
    return lab.SYSTEMS[kind](n=n, d=2, beta=beta)


@st.cache_data(show_spinner="Measuring the errors of every scheme" + ONE_AT_A_TIME, max_entries=64)
def study(kind: str, n: int, beta: float) -> lab.ConvergenceStudy:
    with heavy():
        return lab.convergence_study(toy_system(kind, n, beta), lab.initial_positions(n, 2))


@st.cache_data(show_spinner="Moving the particles…", max_entries=128)
def paths(kind: str, n: int, beta: float, horizon: float, n_steps: int, solver: str):
    """The particles at every step under each scheme, and the exact paths on a fine grid."""
    return lab.lab_paths(kind, n, beta, horizon, n_steps, solver)


@st.cache_resource(show_spinner=False, max_entries=32)
def toy_animation(kind: str, n: int, beta: float, horizon: float, n_steps: int, solver: str,
                  shown: tuple[str, ...], magnify: int, height: int = 620):
    """The lab's animation figure, built once per view (a large one takes most of a second to
    assemble), and the paths it shows."""
    p, dense_t, dense = paths(kind, n, beta, horizon, n_steps, solver)
    visible = p.only(shown)
    return plot.toy_particles(visible, dense_t, dense, magnify=magnify, height=height), visible
