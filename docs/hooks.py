"""The site's generated parts (mkdocs.yml `hooks:`), filled in at build time from what the library reads and prints,
so that no figure of a stored run and no command's options are typed by hand. A page asks for one with a comment:

    <!-- zoo: markdown -->               python -m macaron zoo --markdown's race tables and verdicts
    <!-- zoo: translation_markdown -->   the translation race's tables
    <!-- zoo: finding -->                the order's answer as the lesson gives it (macaron.studies.zoo.finding)
    <!-- zoo: translation_finding -->    the translation race's finding
    <!-- zoo: translation_gist -->       the same in one sentence (the lesson's)
    <!-- zoo: path_report -->            the Transformer − control gap along training (zoo --path)
    <!-- cli -->                         every `python -m macaron` command with its options (its --help)
    <!-- url -->                         every URL parameter of every page of the app (read from app/)
    <!-- api: names -->                  every name `import macaron` gives, linked to where it is documented
    <!-- benchmarks -->                  each benchmark script's first docstring line, then benchmarks/RESULTS.md
"""
from __future__ import annotations

import argparse
import ast
import os
import re
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
ASKED = re.compile(r"<!-- (?P<what>zoo|cli|url|api|benchmarks)(: (?P<arg>\w+))? -->")
PAGES = {"particles.py": "Particles", "compare.py": "Compare", "lab.py": "Splitting lab", "dynamics.py": "Dynamics",
         "translate.py": "Translate", "patching.py": "Patching"}


class _Parsed(Exception):
    """Raised in place of parse_args: it carries the parser that main() built."""


def cli_parser() -> argparse.ArgumentParser:
    """`python -m macaron`'s parser, as main() builds it (main() holds it in a local: catch it at parse_args)."""
    from macaron import __main__ as cli

    def caught(parser, *args, **kwargs):
        raise _Parsed(parser)

    with mock.patch.object(argparse.ArgumentParser, "parse_args", caught):
        try:
            cli.main([])
        except _Parsed as e:
            return e.args[0]
    raise RuntimeError("macaron.__main__.main() parsed no arguments")


def cli_commands(parser: argparse.ArgumentParser | None = None) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by its name (trace, dynamics, lesson, ...), in the order main() adds them."""
    parser = parser or cli_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices)


def cli_reference() -> str:
    sections = []
    for name, sub in cli_commands().items():
        sub.prog = f"python -m macaron {name}"
        sections.append(f"### `{name}`\n\n```text\n{sub.format_help().rstrip()}\n```")
    return "\n\n".join(sections)


def url_parameters() -> list[tuple[str, str, str]]:
    """(page, parameter, default) for every widget a page keeps in the URL: the calls to explorer_state's
    init_widget(key, param, default), model_picker(label, key, param, default) and stage_picker(key, param, ...)
    whose parameter is written out (the app's shared parameters, present and lesson, are said on the page)."""
    found = []
    for file in sorted((ROOT / "app" / "views").glob("*.py"), key=lambda f: (list(PAGES) + [f.name]).index(f.name)):
        calls = [n for n in ast.walk(ast.parse(file.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]
        for node in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):  # in the order the page draws them
            if not isinstance(node.func, ast.Attribute | ast.Name):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            where = {"init_widget": (1, 2), "model_picker": (2, 3), "stage_picker": (1, None)}.get(name)
            if where is None or len(node.args) <= where[0] or not isinstance(node.args[where[0]], ast.Constant):
                continue
            default = ("the final weights" if where[1] is None else
                       ast.unparse(node.args[where[1]]) if len(node.args) > where[1] else "")
            found.append((PAGES.get(file.name, file.stem), node.args[where[0]].value, default))
    return list(dict.fromkeys(found))


def url_reference() -> str:
    rows = ["| page | parameter | default (as the app's code writes it) |", "|---|---|---|"]
    for page, param, default in url_parameters():
        default = default.replace("|", r"\|")  # a pipe would end the table's cell
        rows.append(f"| {page} | `{param}` | `{default}` |" if default else f"| {page} | `{param}` | |")
    return "\n".join(rows)


def zoo_text(name: str) -> str:
    from macaron.studies import translation_race as bleu_race
    from macaron.studies import zoo

    race, translators = zoo.runs(), zoo.runs(task="translation")
    made = {"markdown": lambda: zoo.markdown(race),
            "translation_markdown": lambda: bleu_race.markdown(translators),
            "finding": lambda: zoo.finding(race), "translation_finding": lambda: bleu_race.finding(translators),
            "translation_gist": lambda: bleu_race.gist(translators),
            "path_report": lambda: f"```text\n{zoo.path_report(zoo.paths(race))}\n```"}
    if name not in made:
        raise ValueError(f"<!-- zoo: {name} -->: no such generated part (known: {', '.join(made)})")
    return made[name]()


def api_names() -> str:
    """A row for each name in macaron.__all__: where it is defined (griffe reads the source, as mkdocstrings does)
    and the first line of its docstring."""
    import griffe

    package = griffe.load("macaron", search_paths=[str(ROOT)])
    rows = ["| name | defined in | what it is |", "|---|---|---|"]
    for name in package.exports:
        member = package[name]
        path = member.target_path if member.is_alias else member.path
        docstring = member.docstring.value.strip() if member.docstring else ""
        said = docstring.split("\n\n")[0].replace("\n", " ").replace("|", r"\|")
        rows.append(f"| [`{name}`][{path}] | `{path.rpartition('.')[0]}` | {said} |")
    return "\n".join(rows)


def benchmarks() -> str:
    """The scripts (what each times, from its docstring) and the figures they last wrote."""
    rows = ["| script | what it measures |", "|---|---|"]
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        docstring = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
        said = docstring.split("\n\n")[0].replace("\n", " ").replace("|", r"\|")
        rows.append(f"| `benchmarks/{script.name}` | {said} |")
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    return "\n".join(rows) + "\n\n" + results.split("\n", 1)[1].strip()  # its own title is this page's


def fill(markdown: str) -> str:
    def one(m: re.Match) -> str:
        if m["what"] == "zoo":
            return zoo_text(m["arg"])
        if m["what"] == "api" and m["arg"] != "names":
            raise ValueError(f"{m[0]}: no such generated part (known: <!-- api: names -->)")
        return {"cli": cli_reference, "url": url_reference, "api": api_names, "benchmarks": benchmarks}[m["what"]]()

    return ASKED.sub(one, markdown)


def on_config(config):
    """The tutorials' figures on the site: mkdocs-jupyter runs each tutorial in a kernel that inherits this process's
    environment, and the renderer named here gives each figure as HTML with plotly.js inside the page (rendered
    offline, from disk) beside Plotly's own mimetype, which nbconvert cannot draw. A reader's Jupyter or Colab keeps
    its own renderer: the tutorials name none."""
    os.environ.setdefault("PLOTLY_RENDERER", "plotly_mimetype+notebook")
    return config


def on_page_markdown(markdown: str, page, config, files) -> str:
    return fill(markdown)


AUTOREF = re.compile(r'<autoref (?P<attrs>[^>]*?)identifier="(?P<id>[^"]*)"(?P<rest>[^>]*)>(?P<title>.*?)</autoref>',
                     flags=re.DOTALL)


def on_page_content(html: str, page, config, files) -> str:
    """Square brackets in a docstring that name nothing of macaron (`keyed [scheme][solver]`, a usage line's
    `[--sentences FILE] [--limit N]`) are text, not cross-references: they stay as written. A reference to a name of
    macaron is left to mkdocs-autorefs, so one that names nothing still fails the strict build."""
    return AUTOREF.sub(lambda m: m[0] if m["id"].startswith("macaron") else f"[{m['title']}][{m['id']}]", html)


# Plotly's notebook renderer writes a MathJax script from a CDN before every figure; the figures here hold no TeX.
MATHJAX = re.compile(r'<script src="https://cdnjs\.cloudflare\.com/ajax/libs/mathjax/[^"]*"></script>')


def on_post_page(output: str, page, config) -> str:
    """No page loads anything from the network: it opens from disk, offline (tests/test_docs.py checks it)."""
    return MATHJAX.sub("", output)
