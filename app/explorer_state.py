"""What the pages share besides caching: the view state kept in the URL query string, the models
on offer, and the widgets every page uses (model pickers, sentence box, presets, sidebar status).

Streamlit puts app/ on sys.path, so pages `import explorer_state` (a name no installed package uses).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

import streamlit as st

import browser
import explorer_cache as cache
import macaron
from macaron import lesson
from macaron.formats.folder import CheckpointError
from macaron.formats.registry import LOADS, fields_of
from macaron.plot.style import display_token, model_label, named  # noqa: F401  (the pages label models with it)
from macaron.schemes import ORDERS_SAID
from macaron.sources import hub, shipped
from macaron.sources.shipped import default_pair
from served_models import all_model_paths, allowed_folder, hub_allowed, model_paths, model_roots

CUSTOM = "Your own model folder…"
HUB = "A model from the Hub…"
LABELS = {False: "visible", True: "collapsed"}  # the inputs' labels; on a projector the boxes speak for themselves
CHART = dict(config=dict(displaylogo=False), theme=None)  # st.plotly_chart's: our fonts, readable on a projector
URL_MAX_VALUE = 2000  # longer values (a pasted page of text) stay out of the link

# The teaching sentences, the opening one and the guided lesson are the library's (macaron.lesson): the app
# and the lesson file read the same steps.
PRESETS, DEFAULT_SENTENCE = lesson.PRESETS, lesson.DEFAULT_SENTENCE
LESSON, LessonStep = lesson.LESSON, lesson.LessonStep


SCHEMES_SAID = ORDERS_SAID  # what Particles and Compare say about the schemes, in the Splitting lab's words
RHYTHM_SAID = (
    "Each bar spans its sub-step's share of layer time, the clock on which layers end at 1, 2, 3, …: Transformer "
    "½ diffusion + ½ convection; Macaron ¼ convection + ½ diffusion + ¼ convection. The shares are not step "
    "sizes: each half-FFN runs at fraction ½ of the step (pre-LN x ← x + ½·FFN(LN(x)); post-LN x ← LN(x + "
    "½·FFN(x))), attention and a Transformer's FFN at the full step. Bar height: mean ‖Δx‖ over particles; grey "
    "dots: single particles.")


# The stages of training and their "context effect": macaron.train.evaluate's context_effect = shuffled_loss − loss
STAGES_SAID = (
    "The same model at the stages of its training: the random start, the plateau (it does not yet use word order: "
    "context effect below 0.05 nats), the rise (half of its final context effect) and the weights shipped. "
    "**Context effect**: how much the model's held-out loss rises when every validation sequence's unmasked words "
    "are shuffled among themselves (masked words, [CLS] and [SEP] stay in place): the loss so shuffled minus the "
    "loss as read, in nats per masked token.")

CONTEXT_GLOSS = "*context effect*: how much worse the model guesses a masked word when the other words are shuffled"

# The two views of a trajectory's states, as the switch under a particles figure names them (Particles, Translate).
STATE_VIEWS = {True: "What the operators read", False: "Raw residual stream"}


def swatch(color: str) -> str:
    """A square in the arrows' own colour, before the words that name it: the words stay in the text colour, since
    vermillion text on white is 3.9 : 1, under the 4.5 : 1 that WCAG AA asks of text (the square is not text)."""
    return f"<span style='color:{color}'>■</span>"


# ---- view state in the URL ------------------------------------------------------------------
def _keep_key(param: str) -> str:
    return f"_keep_{param}"


def initial_query() -> dict:
    """The query string this session was opened with (pages rewrite the live one as they run)."""
    if "_url0" not in st.session_state:
        query = {k: st.query_params.get(k) for k in st.query_params}
        k = lesson_step()  # a lesson link typed by hand (?lesson=2) opens that step's view
        st.session_state["_url0"] = {**_lesson_params(k), **query} if k else query
    return st.session_state["_url0"]


def follow_link() -> None:
    """A link inside the app (a lesson step, st.page_link with query_params) opens its view: when the
    address differs from what the pages last wrote, its parameters replace the widgets' values."""
    live = {k: st.query_params.get(k) for k in st.query_params}
    if "_url_written" not in st.session_state or not live or live == st.session_state["_url_written"]:
        return
    st.session_state["_url0"] = live
    st.session_state["_url_written"] = live
    bound = st.session_state.setdefault("_param_of", {})
    for key, param in list(bound.items()):
        if param in live:
            st.session_state.pop(key, None)
            st.session_state.pop(f"_url_used_{key}", None)


def init_widget(key: str, param: str, default, parse: Callable = str, valid: Callable | None = None) -> None:
    """Give widget `key` its first value: from the URL (?param=…) if valid, else the value last
    used on any page in this session, else `default`. Call before creating the widget."""
    st.session_state.setdefault("_param_of", {})[key] = param
    if key in st.session_state:
        return
    value = None
    raw = initial_query().get(param)
    if raw is not None and not st.session_state.get(f"_url_used_{key}"):
        value = _accepted(raw, parse, valid)
        st.session_state[f"_url_used_{key}"] = True
    if value is None:  # the value last used, kept as the URL writes it (a number may be kept as its text)
        value = _accepted(st.session_state.get(_keep_key(param)), parse, valid)
    st.session_state[key] = default if value is None else value


def resend(key: str) -> None:
    """Send a widget's value with this run again (presenter mode): the browser's first size report (browser.room)
    reruns the page, and a rerun drops what the first run had not yet sent, the widget's value among it, so a text
    box showed empty while the page used its text, and a model box its first name while the page drew the model the
    lesson asked for (seen at 1920 × 1080 and 1280 × 720, now and then, on a fresh server)."""
    if presenting() and key in st.session_state:
        st.session_state[key] = st.session_state[key]  # a value set by the script is sent with the widget


def focus_picker(key: str, tokens: list[str]) -> int | None:
    """The sidebar's particle whose weights the figure spells out (plot.particles' focus): its index in `tokens` (the
    first of a repeated word), or None. The URL keeps its word as labelled (`focus=the`); a word the sentence lacks
    picks none."""
    words = list(dict.fromkeys(display_token(t) for t in tokens))
    init_widget(key, "focus", "", valid=lambda v: v in words or v == "")
    if st.session_state[key] not in words:
        st.session_state[key] = ""
    with st.sidebar:
        st.selectbox("Spell out whom a word listens to", [""] + words, key=key, format_func=lambda w: w or "(none)",
                     help="Ringed in the plane; above it, after each attention sub-step, the four it listened to "
                          "most and their weights (its row of the matrix). Not drawn with What if… nor with two "
                          "models side by side.")
    return named(tokens, st.session_state[key])


def not_drawn(*keys: str) -> None:
    """Widgets a run stops before drawing (no sentence to show): their values are given again, as init_widget
    gives them, by the run that draws them. Streamlit sends a widget new to the page the value set in its own
    run only, so a value left from a run that did not draw it shows as none picked (and then reads None)."""
    for key in keys:
        st.session_state.pop(key, None)


def _accepted(raw, parse: Callable, valid: Callable | None):
    """`raw` (text is parsed) if it is a valid value for the widget, else None."""
    if raw is None:
        return None
    try:
        value = parse(raw) if isinstance(raw, str) else raw
        return value if valid is None or valid(value) else None
    except (ValueError, TypeError):
        return None


def sync_url(params: dict[str, object]) -> None:
    """Write this page's view into the URL (and remember it for the other pages). Presenter mode
    and the lesson step stay in it."""
    step = lesson_step()
    clean = {k: v for k, v in (("present", "1" if presenting() else None), ("lesson", step and str(step)))
             if v is not None}  # text, as the address holds it: follow_link compares the two
    for k, v in params.items():
        st.session_state[_keep_key(k)] = v
        if v is None or v == "" or (isinstance(v, str) and len(v) > URL_MAX_VALUE):
            continue
        clean[k] = ("1" if v else "0") if isinstance(v, bool) else str(v)
    if {k: st.query_params.get(k) for k in st.query_params} != clean:
        st.query_params.from_dict(clean)
    st.session_state["_url_written"] = clean


def presenting() -> bool:
    """Presenter mode (?present=1): large fonts, no sidebar, for a projector. It lasts the session."""
    if "_present" not in st.session_state:
        st.session_state["_present"] = initial_query().get("present") in ("1", "true", "yes")
    return st.session_state["_present"]


def parse_bool(s: str) -> bool:
    if s.lower() in ("1", "true", "yes", "on"):
        return True
    if s.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(s)


# ---- widgets shared by the pages ------------------------------------------------------------
def header(title: str, intro: str) -> None:
    """A page's title and the sentence that says what it shows; during the guided lesson, the step's
    sentence instead, with the way back and on."""
    k = lesson_step()
    if k is None and presenting():  # a projector: the plane gets the room, the words wait behind the title's ⓘ
        st.title(title, help=intro)
        return
    st.title(title)
    if k is None:
        st.markdown(intro)
        return
    step = lesson.step(k)
    text, back, on = st.columns([10, 2.2, 2.6], vertical_alignment="center")  # room for the keys' names
    text.markdown(f":material/school: **Lesson {k} of {len(LESSON)} · {step.title}.** {step.say}",
                  help=step.more or None)  # the figures behind the sentence: the plot and ▶ Play stay on screen
    if k > 1:  # a presenter's clicker sends PageUp / PageDown (some send ← / →: browser.lesson_keys)
        lesson_link(k - 1, "Back", back, icon=":material/arrow_back:", key="back", shortcut="PageUp")
    if k < len(LESSON):
        lesson_link(k + 1, "Next", on, icon=":material/arrow_forward:", key="next", shortcut="PageDown")
    browser.lesson_keys()


def models_on_offer() -> tuple[list[str], str | None, str | None]:
    """(names, default A, default B) of the listed models; says so on the page when there are none."""
    paths = model_paths()
    names = list(paths)
    if not names:
        st.warning(f"**No model found.** {list_said(names)} You can still open a folder of your own with the model "
                   "picker below.", icon=":material/info:")
    return (names, *default_pair(names, paths))


NOT_HERE = ("**This server does not open that folder.** It opens model folders only inside the folders "
            "its operator allows (MACARON_MODEL_ROOTS).")


def model_picker(label: str, key: str, param: str, default: str | None, names: list[str]) -> tuple[str, str] | None:
    """A model select box (shipped or listed models, plus your own folder where the server allows it:
    model_roots). Returns (name, path), or None when nothing usable was chosen. The URL holds the
    name, or an allowed folder's path."""
    roots, from_hub = model_roots(), hub_allowed()
    options = names + ([CUSTOM] if roots else []) + ([HUB] if from_hub else [])
    folder_key, hub_key = f"{key}_folder", f"{key}_hub"
    st.session_state.setdefault("_param_of", {})[key] = param
    fallback = default if default in names else (names[0] if names else None)
    showing = f"; showing **{fallback}** instead." if fallback else "."
    first = fallback or (CUSTOM if roots else HUB if from_hub else None)  # with no model listed: a way to open one
    if key not in st.session_state:
        raw = initial_query().get(param) if not st.session_state.get(f"_url_used_{key}") else None
        st.session_state[f"_url_used_{key}"] = True
        kept = raw or st.session_state.get(_keep_key(param))
        if kept in names or (kept == CUSTOM and roots) or (kept == HUB and from_hub):
            st.session_state[key] = kept
        elif kept and kept != CUSTOM and allowed_folder(kept):
            st.session_state[key], st.session_state[folder_key] = CUSTOM, kept
        elif kept and from_hub and hub.is_hub_id(kept):  # a Hub model this server has not yet: asked, not fetched
            st.session_state[key], st.session_state[hub_key] = HUB, kept
        else:
            st.session_state[key] = first
            if kept and kept not in (CUSTOM, HUB):  # the same words whether that path exists or not
                st.warning("The link asks for a model this server does not offer" + showing,
                           icon=":material/link_off:")
    if st.session_state[key] not in options:  # its folder left the server's list while this page was open
        if st.session_state[key] is not None:
            st.warning(f"**{st.session_state[key]}** is no longer on this server's list of models" + showing,
                       icon=":material/folder_off:")
        st.session_state[key] = first
    if not options:
        return None
    resend(key)  # a fresh server's first page showed names[0] in the box while drawing the model asked for
    choice = st.selectbox(label, options, key=key, label_visibility=LABELS[presenting()],
                          help=list_said(names) + (
                              " Choose the last entry to open a folder of your own: a Macaron Explorer checkpoint "
                              "or a Hugging Face encoder or decoder folder (config.json, model.safetensors, "
                              f"tokenizer.json) of these families: {LOADS}."
                              if roots else "") + (" Choose \"A model from the Hub…\" to open a Hugging Face Hub "
                                                   "model by its name." if from_hub else ""))
    if choice == HUB:
        return hub_picker(hub_key)
    if choice != CUSTOM:
        return choice, all_model_paths()[choice]
    folder = st.text_input("Model folder", key=folder_key, placeholder="/path/to/model-folder",
                           help="A folder on the server, inside the folders it allows: ours (config.json with a "
                                "'scheme') or a Hugging Face encoder or decoder folder.")
    folder = (folder or "").strip()
    if not folder:
        st.info("Type the path of a model folder on the server.", icon=":material/folder_open:")
        return None
    path = allowed_folder(folder)
    if path is None:
        st.error(NOT_HERE, icon=":material/block:")
        return None
    return Path(path).name or path, path


def list_said(names: list[str]) -> str:
    """What a model list holds, in two sentences (the model picker's ⓘ): where its models come from, the shipped
    ones' layers × width as their configs say, and how to add one."""
    paths, listed = all_model_paths(), os.environ.get("MACARON_MODELS") or os.environ.get("MACARON_MODELS_DIR")
    ours = [paths[n] for n in names if Path(paths[n]).parent == shipped.PRETRAINED]
    shapes, others = " and ".join(sorted({s for s in map(shape, ours) if s})), len(names) - len(ours)
    origin = ("the folders MACARON_MODELS or MACARON_MODELS_DIR name" if listed else
              "this computer's Hugging Face cache or fetched releases")
    return (f"This list: {len(ours)} models shipped in pretrained/" + f" ({shapes}: layers × width)" * bool(shapes)
            + f", {others} from {origin}" * bool(others) + ". To add one: python -m macaron fetch NAME downloads a Hub "
            "model or a release onto this computer (listed unless MACARON_MODELS or MACARON_MODELS_DIR is set), or "
            "start the app with MACARON_MODELS=folder1,folder2 (or MACARON_MODELS_DIR=a folder of model folders), "
            "which then lists only those.")


def shape(folder: str) -> str | None:
    """Layers × width of a folder of ours, as its config says: '6 × 512'; a translator's encoder + decoder layers,
    '3 + 3 × 256'; None for another config."""
    try:
        c = fields_of(Path(folder))
        layers = f"{c['encoder']['n_layers']} + {c['decoder']['n_layers']}" if "encoder" in c else c["n_layers"]
        return f"{layers} × {c.get('encoder', c)['d_model']}"
    except (CheckpointError, OSError, KeyError, TypeError):
        return None


def hub_picker(key: str) -> tuple[str, str] | None:
    """A Hugging Face Hub model by name: this server's copy (the local Hub cache) where it has one, else a button
    that downloads it (macaron.sources.hub: its file list judged first; a progress bar). Returns (name, folder)
    or None."""
    name = st.text_input("Hub model", key=key, placeholder="bert-base-uncased, or owner/name",
                         help="The name of a model on the Hugging Face Hub, as on its page. These families open: "
                              f"{LOADS}. Only its config, safetensors weights and tokenizer are downloaded (at most "
                              f"{hub.max_bytes() / 1e9:g} GB); no code from it is run.")
    name = (name or "").strip()
    if not name:
        st.info("Type the name of a model on the Hugging Face Hub and press Enter.", icon=":material/cloud:")
        return None
    if not hub.is_hub_id(name):
        st.error(f"**{name}** is not a Hub model's name (owner/name, letters, digits, '-', '_' and '.').",
                 icon=":material/error:")
        return None
    folder = hub.cached(name)
    if folder is not None:
        return name, str(folder)
    if not st.button(f"Download {name} from the Hub", key=f"{key}_go", icon=":material/download:"):
        st.info(f"**{name}** is not on this server yet.", icon=":material/cloud_download:")
        return None
    folder = cache.download_from_hub(name)
    return (name, folder) if folder else None


def stage_picker(key: str, param: str, picks: list, stages: list[list[tuple[str, str, str]]],
                 title: str = "Stage of training") -> tuple[list, str | None]:
    """One control (in the sidebar; one line above the view in presenter mode) for the stage of training of every
    pick (random start, plateau, rise, final), shown where a picked model has more than one stage.
    Returns the picks moved to that stage ((name, path); a pick without such a stage stays as it is) and
    the stage's name for the URL (None: the weights shipped). `stages`: explorer_cache.stages of each
    pick's folder."""
    named = [[name for name, *_ in s] for s in stages]
    options = next((n for pick, n in zip(picks, named) if pick is not None and len(n) > 1), None)
    if options is None or presenting() and lesson_step() not in (None, lesson.STAGED):
        return list(picks), None  # on a projector, a lesson step about the trained weights gives the row to the plane
    init_widget(key, param, options[-1], valid=lambda v: v in options or v == "final")
    if st.session_state[key] not in options:  # "final" of a run still going (its last stage is "latest"), or
        st.session_state[key] = options[-1]   # a stage the model switched to does not have
    out, captions = [], []
    present = presenting()  # no sidebar on a projector: one line above the view, so ▶ Play stays on screen
    with st.sidebar if not present else st.container():
        if not present:
            st.subheader(title)
        slot, words = st.columns([2, 3], vertical_alignment="center") if present else (st.container(), None)
        chosen = slot.select_slider(title, options, key=key, label_visibility="collapsed", help=STAGES_SAID)
        for pick, s, n in zip(picks, stages, named):
            if pick is None or chosen not in n:
                out.append(pick)
                continue
            _, label, path = s[n.index(chosen)]
            captions.append(f"{pick[0]}: {label}" if len(picks) > 1 else label)
            out.append((f"{pick[0]} · {chosen}", path))
        gloss = [] if present or not captions else [CONTEXT_GLOSS]  # said where the number is, not only behind ⓘ
        (words or st).caption((f"**{title}** · " if present else "") + "  \n".join(captions + gloss),
                              help=STAGES_SAID)  # its words say what the context effect in the caption is
    return out, (chosen if chosen != options[-1] else None)


def figure_size(stage_line: bool, key: str) -> dict:
    """The animation's size. On a projector (presenter mode, large type) the room the browser reports below this
    point (app/browser.py), so the plane is as tall as the screen allows with ▶ Play still on it; until the browser
    has reported it, a size that fits 1280 × 720 (60 px shorter where a stage-of-training control takes a line
    above). Elsewhere the height that fits 1280 × 720 and 1024 × 768 beside the sidebar."""
    if not presenting():
        return dict(height=480)
    room = browser.room(key)
    if room is None:
        return dict(height=430 - 60 * stage_line, width=(960, 1860), font_size=PRESENTER_FONT)
    width, height = room
    return dict(height=max(MIN_HEIGHT, height - BELOW), width=max(width, 480), font_size=PRESENTER_FONT)


PRESENTER_FONT = 18  # px: token labels and axis titles read from the back of a classroom
MIN_HEIGHT = 360     # px: below this a plane is not worth drawing; the page scrolls instead
BELOW = 8            # px left under the figure (the measuring point takes no room: main.py's CSS)


def model_pair(labels: tuple[str, str], keys: tuple[str, str], names: list[str], defaults: tuple) -> tuple:
    """Two model pickers side by side (URL parameters a and b)."""
    picks = []
    for column, label, key, param, default in zip(st.columns(2), labels, keys, ("a", "b"), defaults):
        with column:
            picks.append(model_picker(label, key, param, default, names))
    return tuple(picks)


def url_model(pick: tuple[str, str] | None, names: list[str]) -> str | None:
    """What the URL keeps of a pick: the name of a listed model or of a Hub model (its folder in the Hub cache),
    else its folder."""
    if pick is None:
        return None
    from_hub = hub_allowed() and Path(pick[1]).is_relative_to(hub.cache_dir()) and hub.is_hub_id(pick[0])
    return pick[0] if pick[0] in names or from_hub else pick[1]


def preset_picker(text_key: str, key: str) -> None:
    """A select box of teaching sentences that fills the sentence box."""
    def apply():
        choice = st.session_state[key]
        if choice in PRESETS:
            st.session_state[text_key] = PRESETS[choice]
        st.session_state[key] = "(choose one)"  # the box is a menu, not a state: the sentence box holds it

    st.selectbox("Preset sentences", ["(choose one)"] + list(PRESETS), key=key, on_change=apply,
                 label_visibility=LABELS[presenting()],
                 help="Sentences chosen to teach: two senses of 'bank', masked words to guess, a long one. "
                      + lesson.WHAT_THEY_KNOW)


def sentence_input(key: str, preset_key: str, columns=(5, 2), **text_input) -> tuple[str, list]:
    """The sentence box (URL parameter s) with the preset menu beside it. Returns (text, the row's
    remaining columns) so a page can put more beside them."""
    init_widget(key, "s", DEFAULT_SENTENCE)
    resend(key)
    row = st.columns(list(columns))
    text = row[0].text_input("Sentence", key=key, placeholder="Type a sentence and press Enter",
                             label_visibility=LABELS[presenting()], **text_input)
    with row[1]:
        preset_picker(key, preset_key)
    link_limit_note(text)
    return text or "", row[2:]


def link_limit_note(text: str | None) -> None:
    """Say so when a text is too long to travel in the share link (sync_url leaves it out)."""
    if text and len(text) > URL_MAX_VALUE:
        st.caption(f":material/link_off: This text ({len(text):,} characters) is too long for a share link (at most "
                   f"{URL_MAX_VALUE:,}): the address bar holds the rest of the view, without it. It stays here "
                   "and on the other pages.")


WORD = re.compile(r"\[[^\]\s]*\]|[^\W_]+(?:['’-][^\W_]+)*")  # [SPECIAL] tokens, or words (no punctuation)


def maskable_words(text: str) -> list[re.Match]:
    """The words of `text` one could mask: letters and digits (inner apostrophes and hyphens kept),
    never punctuation, never a [MASK] or other bracketed token already there."""
    return [m for m in WORD.finditer(text) if not m.group().startswith("[")]


def mask_word(text: str, word_index: int | None) -> str:
    """The text with its maskable word number `word_index` replaced by [MASK] (punctuation stays)."""
    words = maskable_words(text)
    if word_index is None or not 0 <= word_index < len(words):
        return text
    m = words[word_index]
    return text[:m.start()] + "[MASK]" + text[m.end():]


def explain(md: str) -> None:
    """A short plain-words explanation beside a view."""
    st.caption(md)


# ---- the guided lesson ----------------------------------------------------------------------
def lesson_step() -> int | None:
    """The lesson step this page shows (?lesson=k), or None."""
    raw = st.query_params.get("lesson")
    return int(raw) if raw and raw.isdigit() and 1 <= int(raw) <= len(LESSON) else None


def _offers(path: str, stage: str) -> bool:
    try:
        return any(m.name == stage for m in macaron.milestones(path))
    except Exception:  # an unreadable folder offers nothing; the model picker says why when it is opened
        return False


def _lesson_params(k: int) -> dict:
    """Step k's URL parameters, with the default pair; a step at a stage of training takes the default
    pair among the models that ship that stage (the 6 × 512 pair ships its final weights only)."""
    a, b = lesson_models(k)
    return lesson.params(k, a, b)


def lesson_models(k: int) -> tuple[str | None, str | None]:
    """The (Transformer, Macaron) names step k opens: the default pair, or where the step asks for a stage of
    training, the default pair among the models that ship that stage."""
    view, paths = LESSON[k - 1].view, model_paths()
    full = lesson.full_size(k, list(paths))
    if full:  # `make full-size` fetched BERT-base and the paper's Macaron-base: a step that names both opens them
        return full
    if view.get("at", "final") != "final":
        paths = {n: p for n, p in paths.items() if _offers(p, view["at"])} or paths
    return default_pair(list(paths), paths)


def lesson_view(k: int) -> dict:
    """Step k's URL: its view with the default models, presenter mode kept."""
    return dict(_lesson_params(k), lesson=str(k), **({"present": "1"} if presenting() else {}))


def lesson_link(k: int, label: str | None = None, where=st, icon: str | None = None, key: str = "",
                shortcut: str | None = None) -> None:
    """A button that opens step k's page and view (a button, not st.page_link, which would light up
    every step on the current page as if it were the one open)."""
    if where.button(label or f"{k} · {LESSON[k - 1].title}", key=f"lesson{key}{k}", icon=icon, type="tertiary",
                    shortcut=shortcut):
        st.switch_page(LESSON[k - 1].page, query_params=lesson_view(k))


def lesson_menu() -> None:
    """The lesson's steps, in the sidebar: each opens its page and view; under them, the whole lesson as one
    file for the models the steps open."""
    with st.sidebar.expander(f"Guided lesson ({len(LESSON)} steps)", icon=":material/school:",
                             expanded=bool(lesson_step())):
        for k in range(1, len(LESSON) + 1):
            lesson_link(k, key="menu")
        if k := lesson_step():  # the open step's note, for the teacher's screen (presenter mode hides the sidebar)
            st.caption(f"**For the teacher · step {k}.** {lesson.step(k).note}")
        paths = model_paths()
        (a, b), learner = lesson_models(1), lesson_models(lesson.STAGED)[0]
        if a is None or b is None:
            return
        folders = (paths[a], paths[b], paths.get(learner or a, paths[a]))
        shown = ", ".join(dict.fromkeys(n for n in (a, b, learner, lesson.TRANSLATOR) if n))
        st.download_button("Download this lesson", data=lambda: lesson_file(*folders), file_name="macaron-lesson.html",
                           mime="text/html", on_click="ignore", icon=":material/download:", key="lesson_file",
                           disabled=not all((Path(f) / "config.json").is_file() for f in folders),
                           help=f"All {len(LESSON)} steps in one HTML file ({shown}): their text, the teacher's notes "
                                "and the figures, interactive as here. It opens in any browser, offline (about 6 MB, "
                                "nothing fetched), and prints as a handout, one step a page.")


@st.cache_data(show_spinner=False, max_entries=2)  # a few MB each; every session asks for the same one
def lesson_file(transformer: str, macaron_path: str, learner: str) -> str:
    """The lesson file (macaron.plot.lesson) for these folders; a page with the reason if one does not load."""
    import html

    from macaron.plot import lesson as handout

    try:
        return handout.lesson_html([transformer, macaron_path], learner)
    except Exception as e:  # a folder that does not load: say why in the file, never a traceback
        return (f"<!DOCTYPE html><meta charset='utf-8'><title>Macaron Explorer lesson</title>"
                f"<p>The lesson could not be written: {html.escape(str(e))}</p>")


# ---- device and timing ----------------------------------------------------------------------
def device_text() -> str:
    import torch
    n, gpu = torch.get_num_threads(), torch.cuda.is_available()
    return f"CUDA GPU · {torch.cuda.get_device_name(0)}" if gpu else f"CPU · {n} thread{'s' * (n > 1)}"


def sidebar_status() -> None:
    """Device and last-trace timing, at the bottom of the sidebar."""
    with st.sidebar:
        st.divider()
        st.caption(f":material/memory: **Inference:** {device_text()}")
        last = st.session_state.get("_last_trace")
        if last:
            how = f"cached (computed in {last['ms']:.0f} ms)" if last["cached"] else f"{last['ms']:.0f} ms"
            st.caption(f":material/timer: **Last trace:** {how} · {last['tokens']} tokens · "
                       f"{last['model']} on {last['device']}")
