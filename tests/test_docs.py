"""The README and the documentation site (mkdocs.yml, docs/): the site builds with --strict (every internal link and
anchor resolves, every API page renders), its race tables are what `python -m macaron zoo --markdown` prints, every
repository path and every `python -m macaron` command that README.md and the site name exists, every module of the
package has its reference page, and the README is a front door (at most 200 lines; the first screen says how to
start)."""
from __future__ import annotations

import html
import importlib
import importlib.util
import os
import pkgutil
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import macaron

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# A repository path as the pages write one: a top-level folder of the clone, then a path (no placeholder in it)
TOP = r"(?:macaron|app|tests|tools|benchmarks|docs|pretrained|\.ci|\.streamlit)"
PATH = re.compile(rf"(?<![\w/.~$<-]){TOP}/[\w./+-]*")
FILES = re.compile(r"(?<![\w/.-])(?:Makefile|pyproject\.toml|requirements(?:-\w+)?\.txt|LICENSE|mkdocs\.yml)(?![\w/-])")
CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", flags=re.S)
COMMAND = re.compile(r"python -m (?P<module>macaron(?:\.[\w.]+)?)(?P<rest>[^\n]*)")


def hooks():
    """docs/hooks.py, the site's generated parts (it is not a package: loaded from its file)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Tables(HTMLParser):
    """Every table row of an HTML page, as its cells' text."""

    def __init__(self):
        super().__init__()
        self.rows: list[list[str]] = []
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(" ".join("".join(self.cell).split()))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def html_rows(page: Path) -> list[list[str]]:
    parser = Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.rows


def markdown_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
            if line.startswith("|") and not set(line) <= set("|-: ")]


def text_of(page: Path) -> str:
    body = re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))
    return " ".join(html.unescape(body).split())


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    assert not re.search(r"^WARNING\s+-", done.stderr, flags=re.M), done.stderr[-4000:]  # (--strict stops on one)
    return out


@pytest.mark.slow
def test_the_site_builds_strict_and_offline_with_every_page(site):
    built = {p.relative_to(site).with_suffix(".md").as_posix() for p in site.rglob("*.html")}
    sources = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert sources <= built  # every page of docs/ is on the site, as page.html (use_directory_urls: false)
    loaded = re.compile(r'<(?:script|img|link)[^>]*(?:src|href)="(https?://[^"]*)"')
    scripts = {m for p in site.rglob("*.html") for m in loaded.findall(p.read_text(encoding="utf-8"))}
    assert scripts == set()  # nothing a page loads comes from the network: it opens from disk, offline
    assert not (site / "hooks.py").exists()


@pytest.mark.slow
def test_the_race_tables_on_the_site_are_what_zoo_prints(site):
    printed = subprocess.run([sys.executable, "-m", "macaron", "zoo", "--markdown"], cwd=ROOT, capture_output=True,
                             text=True, timeout=600, check=True).stdout
    expected = markdown_rows(printed)
    assert len(expected) > 20 and any("macaron-es-en" in row for row in expected)  # both races' tables
    races = site / "results" / "races.html"
    shown = html_rows(races)
    missing = [row for row in expected if row not in shown]
    assert missing == []
    text = text_of(races)
    verdicts = [line[2:] for line in printed.splitlines() if line.startswith("- ")]
    assert verdicts and [v for v in verdicts if " ".join(v.split()) not in text] == []


@pytest.mark.slow
def test_the_generated_reference_pages_list_every_command_and_public_name(site):
    cli = text_of(site / "reference" / "cli.html")
    commands = hooks().cli_commands()
    assert {"trace", "lesson", "zoo"} <= set(commands)
    assert [name for name in commands if f"usage: python -m macaron {name}" not in cli] == []
    api = text_of(site / "reference" / "api" / "index.html")
    assert [name for name in macaron.__all__ if f" {name} " not in api] == []


TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.py"))


@pytest.mark.parametrize("tutorial", TUTORIALS, ids=[t.stem for t in TUTORIALS])
def test_every_tutorial_runs_top_to_bottom_and_checks_what_it_showed(tutorial, monkeypatch):
    """Run as a script, as `jupytext --to ipynb` would run its cells in order; its last cell asserts what it showed."""
    import runpy

    import plotly.graph_objects as go

    shown = []
    monkeypatch.setattr(go.Figure, "show", lambda fig, *a, **k: shown.append(fig))
    monkeypatch.chdir(tutorial.parent)
    runpy.run_path(str(tutorial), run_name="__main__")
    assert shown  # it drew what it says
    assert "\nassert " in tutorial.read_text(encoding="utf-8").rsplit("# %%", 1)[1]  # the last cell checks


@pytest.mark.slow
def test_the_tutorials_are_on_the_site_with_their_outputs(site):
    for tutorial in TUTORIALS:
        page = site / "tutorials" / f"{tutorial.stem}.html"
        assert "jp-OutputArea" in page.read_text(encoding="utf-8"), page  # executed: its outputs are on the page


def test_every_module_has_its_reference_page():
    listed = {m for page in (ROOT / "docs" / "reference" / "api").glob("*.md")
              for m in re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), flags=re.M)}
    modules = {m.name for m in pkgutil.walk_packages(macaron.__path__, "macaron.")
               if not m.name.endswith("__main__")} | {"macaron"}
    assert modules - listed == set()


def named_paths(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    found = {m[0].rstrip(".,:;)") for m in PATH.finditer(text) if text[m.end():m.end() + 1] not in "<{*…"}
    found |= set(FILES.findall(text))  # (a path that goes on in a placeholder, seed-<s>/, names no one file)
    found |= {target for target in re.findall(r"\]\(([^)#\s]+)", text) if "://" not in target}  # links, relative
    return found


def test_every_repository_path_the_readme_and_the_site_name_exists():
    missing = []
    for page in PAGES:
        for path in named_paths(page):
            where = (page.parent / path) if path.startswith(".") or path.endswith(".md") and "/" not in path else None
            written = path.endswith(".ipynb") and (ROOT / path).with_suffix(".py").exists()  # jupytext writes it
            if not (written or (ROOT / path).exists() or (page.parent / path).exists() or (where and where.exists())):
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert missing == []


def code_of(page: Path) -> list[str]:
    """The page's code: each line of its fenced blocks (continuation lines joined) and each inline code span."""
    out = []
    for block, span in CODE.findall(page.read_text(encoding="utf-8")):
        out += block.replace("\\\n", " ").splitlines() if block else [span]
    return out


def test_every_python_m_macaron_command_the_readme_and_the_site_name_exists():
    commands = hooks().cli_commands()
    wrong, seen = [], 0
    for page in PAGES:
        for line in code_of(page):
            for m in COMMAND.finditer(line):
                seen += 1
                where = f"{page.relative_to(ROOT)}: {m[0].strip()}"
                if m["module"] != "macaron":  # a module run as a program: it must be one
                    if importlib.util.find_spec(m["module"].rstrip(".")) is None:
                        wrong.append(where)
                    continue
                words = re.split(r"\s*(?:#|;|&&|\|\|)", m["rest"])[0].split()
                if not words or words[0].isupper() or words[0] in ("…", "..."):  # `python -m macaron COMMAND`
                    continue
                if words[0] not in commands:
                    wrong.append(where)
                    continue
                options = {o for a in commands[words[0]]._actions for o in a.option_strings}
                wrong += [f"{where}: {w}" for w in words[1:] if w.startswith("--") and w.split("=")[0] not in options]
    assert seen > 20 and wrong == []


def test_the_readme_is_a_front_door():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    first = "\n".join(lines[:40])
    assert len(lines) <= 200
    for said in ("git clone --depth 1", "make app", "make test", "http://localhost:8501", "make serve", "PORT=",
                 "I want to", "docs/img/particles.webp"):
        assert said in first, said
    from PIL import Image  # the picture moves: frames of the Particles page playing (tools/readme_animation.py)

    picture = ROOT / "docs" / "img" / "particles.webp"
    with Image.open(picture) as im:
        assert im.format == "WEBP" and im.is_animated and im.n_frames >= 8
    assert picture.stat().st_size < 4 * 2**20
