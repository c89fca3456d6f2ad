"""Downloads with each registry's ordinary client, into a cache folder; nothing is installed.

Every fetcher resolves the cache folder to an absolute path first: the clients run with the
cache as their working directory, so a relative `-d data/downloads` would land in
data/downloads/data/downloads.

Each fetcher also says what it would need on this machine to download (`fetch.lacks(cache)`: nothing once
its archive is in the cache), so that a build can stop at once with the list of what is missing
(`missing`) instead of failing source by source after minutes of downloads.
"""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from .clean import CorpusError


class DownloadError(CorpusError):
    pass


def _run(cmd: list[str], cwd: Path, what: str) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines()
                 if ln.strip() and "WARNING" not in ln]
        raise DownloadError(f"{what}: `{' '.join(cmd[:4])} ...` failed: "
                            f"{lines[-1] if lines else 'exit ' + str(proc.returncode)}")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _lacks_pip() -> list[str]:
    return [] if importlib.util.find_spec("pip") else ["pip (python -m pip)"]


def _lacks_command(name: str) -> list[str]:
    return [] if shutil.which(name) else [name]


def _lacks_apt(package: str) -> list[str]:
    """apt-get download needs apt-get and, in its package lists, the package (a fresh image has no lists)."""
    if not shutil.which("apt-get"):
        return ["apt-get (Debian or Ubuntu)"]
    found = subprocess.run(["apt-cache", "show", package], capture_output=True).returncode == 0
    return [] if found else ["apt-get's package lists (apt-get update)"]


def missing(fetchers: Iterable[Callable[[Path], Path]], cache: Path) -> dict[str, list[str]]:
    """{what this machine lacks: [the packages that need it]} for the downloads still to do."""
    out: dict[str, list[str]] = {}
    for fetch in fetchers:
        for what in getattr(fetch, "lacks", lambda cache: [])(cache):
            out.setdefault(what, []).append(getattr(fetch, "spec", "?"))
    return out


def _cached_pypi(cache: Path, name: str, version: str) -> Path | None:
    if not cache.is_dir():
        return None
    for f in sorted(cache.iterdir()):
        idx = f.name.find(f"-{version}")
        if idx > 0 and _norm(f.name[:idx]) == _norm(name) and f.suffix in (".whl", ".gz", ".zip"):
            return f
    return None


def pip_fetch(spec: str) -> Callable[[Path], Path]:
    """`pip download --no-deps NAME==VER` into the cache (wheel when there is one)."""
    name, version = spec.split("==")

    def fetch(cache: Path) -> Path:
        hit = _cached_pypi(cache, name, version)
        if hit is None:
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                  "-d", str(cache.resolve()), spec], cache, spec)
            hit = _cached_pypi(cache, name, version)
        if hit is None:
            raise DownloadError(f"{spec}: pip reported success but no archive in {cache}")
        return hit
    fetch.spec = spec
    fetch.lacks = lambda cache: [] if _cached_pypi(cache, name, version) else _lacks_pip()
    return fetch


def npm_fetch(spec: str) -> Callable[[Path], Path]:
    """`npm pack NAME@VER` in the cache dir: the registry tarball, nothing installed."""
    name, version = spec.rsplit("@", 1)

    def target(cache: Path) -> Path:
        return cache / f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"

    def fetch(cache: Path) -> Path:
        if not target(cache).exists():
            _run(["npm", "pack", spec, "--silent"], cache, spec)
        if not target(cache).exists():
            raise DownloadError(f"{spec}: npm pack did not produce {target(cache).name}")
        return target(cache)
    fetch.spec = spec
    fetch.lacks = lambda cache: [] if target(cache).exists() else _lacks_command("npm")
    return fetch


def apt_fetch(name: str) -> Callable[[Path], Path]:
    """`apt-get download NAME` in the cache dir (current archive version)."""
    def fetch(cache: Path) -> Path:
        hits = sorted(cache.glob(f"{name}_*.deb"))
        if not hits:
            _run(["apt-get", "download", name], cache, name)
            hits = sorted(cache.glob(f"{name}_*.deb"))
        if not hits:
            raise DownloadError(f"{name}: apt-get download produced no .deb")
        return hits[-1]
    fetch.spec = name
    fetch.lacks = lambda cache: [] if any(Path(cache).glob(f"{name}_*.deb")) else _lacks_apt(name)
    return fetch


def bigbench_fetch(spec: str = "bigbench==1.0.0") -> Callable[[Path], Path]:
    """bigbench's metadata has a direct-URL dependency that pip >= 22 rejects, so the
    sdist is fetched by an old pip in a throwaway venv (deleted afterwards)."""
    name, version = spec.split("==")

    def fetch(cache: Path) -> Path:
        hit = _cached_pypi(cache, name, version)
        if hit is not None:
            return hit
        with tempfile.TemporaryDirectory(prefix="bigbench-venv-") as venv:
            _run([sys.executable, "-m", "venv", venv], cache, "bigbench venv")
            py = str(Path(venv) / "bin" / "python")
            _run([py, "-m", "pip", "install", "-q", "pip==21.3.1", "setuptools<70", "wheel"],
                 cache, "bigbench venv pip")
            _run([py, "-m", "pip", "download", "--no-deps", "--no-build-isolation",
                  "-d", str(cache.resolve()), spec], cache, spec)
        hit = _cached_pypi(cache, name, version)
        if hit is None:
            raise DownloadError(f"{spec}: download finished but no sdist in {cache}")
        return hit
    fetch.spec = spec
    fetch.lacks = lambda cache: [] if _cached_pypi(cache, name, version) else (
        _lacks_pip() + ([] if importlib.util.find_spec("ensurepip") else ["python's venv with pip (python3-venv)"]))
    return fetch
