"""Models by name from elsewhere, offline: the Hugging Face Hub (a local Hub cache built here, and a server on
127.0.0.1 that answers as the Hub does) and the paper's release (a file server on 127.0.0.1 standing in for Google
Drive, with .tbz2 archives made here). Every socket a test opens is checked: none goes beyond 127.0.0.1.

The fairseq converter is another module's work (macaron.formats.fairseq, the other half of issue 58): these tests stand
in for it at its one seam (macaron.sources.releases.convert) and check what fetch hands it.
"""
from __future__ import annotations

import hashlib
import io
import json
import re
import socket
import tarfile
import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
import torch

import macaron
from macaron.formats.folder import CheckpointError
from macaron.sources import hub
from macaron.sources import locate as sources
from macaron.sources import releases as release

LOCAL = ("127.0.0.1", "localhost", "::1")
SHA = "0123456789abcdef0123456789abcdef01234567"
TEXT = "the bank of the river was [MASK] after the rain ."


# ---- no test reaches beyond 127.0.0.1 ----------------------------------------------------------------------
@pytest.fixture(autouse=True)
def only_localhost(monkeypatch):
    """Any name looked up or address connected to other than 127.0.0.1 fails the test (and the call)."""
    outside = []
    lookup, connect = socket.getaddrinfo, socket.socket.connect

    def guarded_lookup(host, *args, **kwargs):
        if str(host) not in LOCAL:
            outside.append(host)
            raise socket.gaierror(f"test: {host} is outside 127.0.0.1")
        return lookup(host, *args, **kwargs)

    def guarded_connect(self, address):
        if isinstance(address, tuple) and address[0] not in LOCAL:
            outside.append(address)
            raise ConnectionRefusedError(f"test: {address} is outside 127.0.0.1")
        return connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_lookup)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    yield
    assert not outside, f"a test reached beyond 127.0.0.1: {outside}"


@pytest.fixture(autouse=True)
def caches(tmp_path, monkeypatch):
    """An empty Hub cache and Macaron cache of the test's own; the Hub's address a closed port on 127.0.0.1 until a
    test serves one; huggingface_hub's telemetry (which would ask the real Hub) off."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("MACARON_CACHE", str(tmp_path / "macaron"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "MACARON_HUB_MAX_GB", "MACARON_HUB", "MACARON_MODELS",
                 "MACARON_MODELS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # the import-time default, and its template
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", "http://127.0.0.1:9/{repo_id}/resolve/{revision}/"
                                                                  "{filename}")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    return tmp_path


# ---- a tiny BERT, as the Hub stores one ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A seeded random BertForMaskedLM (H = 32, 2 layers), every weight moved by noise, saved as safetensors with
    the suite's tiny tokenizer: (its files by name, the transformers model)."""
    import transformers

    from conftest import tiny_tokenizer

    tok = tiny_tokenizer()
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=64, max_position_embeddings=40,
                                     attn_implementation="eager")
    model = transformers.BertForMaskedLM(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    folder = tmp_path_factory.mktemp("tiny-bert")
    model.save_pretrained(folder, safe_serialization=True)
    tok.save(str(folder / "tokenizer.json"))
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}, model


def put_in_cache(cache: Path, repo: str, files: dict[str, bytes], sha: str = SHA) -> Path:
    """A repository as huggingface_hub caches it: models--owner--name/{refs/main, snapshots/<commit>/…}."""
    root = cache / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / sha
    snapshot.mkdir(parents=True)
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(sha)
    for name, data in files.items():
        (snapshot / name).write_bytes(data)
    return snapshot


def theirs(model, ids: list[int]):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_hidden_states=True)
    return out.hidden_states[-1][0].numpy(), out.logits[0].numpy()


def test_a_hub_name_opens_from_the_local_cache_offline_as_transformers_runs_it(caches, tiny_bert, monkeypatch):
    files, model = tiny_bert
    snapshot = put_in_cache(caches / "hub", "org/tiny-bert", files)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ours = macaron.load("org/tiny-bert", device="cpu")
    traj = ours.trace(TEXT)
    final, logits = theirs(model, traj.token_ids)
    assert np.abs(traj.final - final).max() < 1e-4
    with torch.no_grad():
        assert np.abs(ours.mlm_logits(traj.token_ids).numpy() - logits).max() < 1e-4
    assert ours.config.name == "org/tiny-bert" and ours.config.hf_family == "BERT"  # its Hub id, not the commit
    assert sources.locate("org/tiny-bert") == snapshot
    with pytest.raises(CheckpointError, match="HF_HUB_OFFLINE"):  # offline, not cached: says so, asks no one
        macaron.load("org/not-here")


def test_the_cli_traces_a_hub_name(caches, tiny_bert, monkeypatch, capsys):
    from macaron.__main__ import main

    put_in_cache(caches / "hub", "tiny-bert", tiny_bert[0])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["trace", "--model", "tiny-bert", "the cat sat on the [MASK] ."]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tiny-bert: ") and "top [MASK] guesses" in out
    assert main(["list"]) == 0 and "tiny-bert  (" in capsys.readouterr().out


# ---- a server that answers as the Hub does ------------------------------------------------------------------
class FakeHub(ThreadingHTTPServer):
    """The Hub's endpoints snapshot_download and model_info use: api/models/{id}/revision/{rev} (the file list,
    with sizes when asked), api/models/{id}/tree/{rev}, and {id}/resolve/{rev}/{file} (HEAD and GET, with the
    headers huggingface_hub reads: X-Repo-Commit, ETag, Content-Length). It logs every request."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), HubHandler)
        self.repos: dict[str, dict] = {}
        self.log: list[tuple[str, str]] = []

    def add(self, repo: str, files: dict[str, bytes], model_type: str | None = "bert"):
        self.repos[repo] = dict(files=files, config={"model_type": model_type} if model_type else {})

    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def resolved(self) -> list[str]:
        return [p for _, p in self.log if "/resolve/" in p]


class HubHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.answer(body=False)

    def do_GET(self):
        self.answer(body=True)

    def send(self, status: int, data: bytes, headers: dict, body: bool):
        self.send_response(status)
        for k, v in {"Content-Length": str(len(data)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def answer(self, body: bool):
        hub_, url = self.server, urlsplit(self.path)
        path = unquote(url.path)
        hub_.log.append((self.command, path))
        for pattern, kind in ((r"/api/models/(.+?)/revision/([^/]+)", "info"),
                              (r"/api/models/(.+?)/tree/([^/]+)", "tree"), (r"/(.+?)/resolve/([^/]+)/(.+)", "file")):
            m = re.fullmatch(pattern, path)
            if m:
                break
        else:
            return self.send(404, b"{}", {"Content-Type": "application/json"}, body)
        repo = hub_.repos.get(m[1])
        if repo is None:
            return self.send(404, b'{"error": "Repository not found"}',
                             {"X-Error-Code": "RepoNotFound", "Content-Type": "application/json"}, body)
        files = repo["files"]
        if kind == "info":
            blobs = "blobs=" in url.query.lower()
            siblings = [dict(rfilename=n, **({"size": len(d), "blobId": hashlib.sha1(d).hexdigest()} if blobs else {}))
                        for n, d in files.items()]
            info = dict(id=m[1], sha=SHA, siblings=siblings, config=repo["config"], private=False)
            return self.send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)
        if kind == "tree":
            tree = [dict(type="file", path=n, size=len(d), oid=hashlib.sha1(d).hexdigest()) for n, d in files.items()]
            return self.send(200, json.dumps(tree).encode(), {"Content-Type": "application/json"}, body)
        data = files.get(m[3])
        if data is None:
            return self.send(404, b"{}", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": SHA}, body)
        return self.send(200, data, {"X-Repo-Commit": SHA, "ETag": f'"{hashlib.sha256(data).hexdigest()}"',
                                     "Content-Type": "application/octet-stream"}, body)


@pytest.fixture
def fake_hub(monkeypatch):
    server = FakeHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url())
    yield server
    server.shutdown()
    server.server_close()


def test_a_missing_hub_model_downloads_only_what_loads_with_a_progress_bar(caches, tiny_bert, fake_hub, capsys):
    files, model = tiny_bert
    extra = {"pytorch_model.bin": b"pickle" * 100, "flax_model.msgpack": b"x" * 100, "onnx/model.onnx": b"x",
             "README.md": b"# tiny", "generation_config.json": b"{}"}  # the last: a Marian model's, not a BERT's
    fake_hub.add("org/tiny-bert", files | extra)
    ours = macaron.load("org/tiny-bert", device="cpu")
    err = capsys.readouterr().err
    assert "100%|██████████|" in err, err  # the terminal's progress bar (stderr)
    fetched = {p.rsplit("/", 1)[-1] for p in fake_hub.resolved()}
    assert fetched == set(files) and not fetched & set(extra)  # config, weights and tokenizer; never a pickle
    traj = ours.trace(TEXT)
    assert np.abs(traj.final - theirs(model, traj.token_ids)[0]).max() < 1e-4
    asked = len(fake_hub.log)
    assert macaron.load("org/tiny-bert", device="cpu").config.name == "org/tiny-bert"
    assert len(fake_hub.log) == asked  # the second time from the local cache: no request at all
    assert "org/tiny-bert" in sources.cached()


def test_a_pickled_marian_downloads_its_weights_once(caches, fake_hub, tmp_path):
    """An opus-mt repository as the older ones are, with pytorch_model.bin and no safetensors: the pickle is fetched
    (and read as data), the TensorFlow weights are not, and the second load is the cache's, with no request."""
    import transformers

    from test_marian import SENTENCES, pickle_weights, write_marian

    folder = write_marian(tmp_path / "opus-mt-de-en")
    pickle_weights(folder, transformers.MarianMTModel.from_pretrained(folder))
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    fake_hub.add("Helsinki-NLP/opus-mt-de-en", files | {"tf_model.h5": b"x" * 100}, model_type="marian")
    ours = macaron.load("Helsinki-NLP/opus-mt-de-en", device="cpu")
    assert {p.rsplit("/", 1)[-1] for p in fake_hub.resolved()} == set(files) - {"README.md"}
    local = macaron.load(folder, device="cpu")
    assert ours.translate(SENTENCES[0], beam=1).target_ids == local.translate(SENTENCES[0], beam=1).target_ids
    asked = len(fake_hub.log)
    assert macaron.load("Helsinki-NLP/opus-mt-de-en", device="cpu").config.name == "Helsinki-NLP/opus-mt-de-en"
    assert len(fake_hub.log) == asked  # from the local cache: no request at all
    assert "Helsinki-NLP/opus-mt-de-en" in sources.cached()


def test_a_marian_whose_search_is_not_mapped_is_refused_before_its_weights(caches, fake_hub, tmp_path):
    """A generation setting we do not reproduce (no_repeat_ngram_size) is named from the first files fetched, and no
    weight is downloaded."""
    from test_marian import write_marian

    folder = write_marian(tmp_path / "opus-mt-de-en", generation={"no_repeat_ngram_size": 3})
    fake_hub.add("Helsinki-NLP/opus-mt-de-en", {p.name: p.read_bytes() for p in folder.iterdir()}, model_type="marian")
    with pytest.raises(CheckpointError, match="no_repeat_ngram_size"):
        macaron.load("Helsinki-NLP/opus-mt-de-en", device="cpu")
    assert not any(p.endswith(".safetensors") for p in fake_hub.resolved()), fake_hub.resolved()


def test_the_app_progress_is_told_the_bytes(caches, tiny_bert, fake_hub):
    files, _ = tiny_bert
    fake_hub.add("org/tiny-bert", files)
    seen = []
    folder = hub.download("org/tiny-bert", progress=lambda done, total: seen.append((done, total)))
    assert hub.complete(folder) and seen
    # config.json came first, on its own (judged before the weights); the bar counts the rest
    assert seen[-1][0] == seen[-1][1] == sum(len(d) for name, d in files.items() if name != "config.json")


@pytest.mark.parametrize("case", ["pickle only", "too large", "unknown", "family", "no tokenizer"])
def test_a_hub_model_is_refused_before_any_file_downloads(caches, tiny_bert, fake_hub, monkeypatch, case):
    files, _ = tiny_bert
    weights = {"pytorch_model.bin": b"pickle" * 100, "config.json": files["config.json"],
               "tokenizer.json": files["tokenizer.json"]}
    said = {"pickle only": "no safetensors weights on the Hub (model.safetensors or model.safetensors.index.json), "
                           "only pytorch_model.bin",
            "too large": "over this machine's limit of 10 kB (MACARON_HUB_MAX_GB); nothing was downloaded",
            "unknown": "no such model on the Hub",
            "family": "model_type 't5', a family this explorer does not map. These load: BERT (bert)",
            "no tokenizer": "no tokenizer.json on the Hub"}[case]
    if case == "pickle only":
        fake_hub.add("org/m", weights)
    elif case == "too large":
        fake_hub.add("org/m", files)
        monkeypatch.setenv("MACARON_HUB_MAX_GB", "0.00001")  # 10 kB: the tiny model is larger
    elif case == "family":
        fake_hub.add("org/m", files, model_type="t5")
    elif case == "no tokenizer":
        fake_hub.add("org/m", {k: v for k, v in files.items() if k != "tokenizer.json"})
    with pytest.raises(hub.HubError) as e:
        macaron.load("org/m")
    assert said in str(e.value)
    assert fake_hub.resolved() == [], fake_hub.log  # refused on the file list, before any file
    assert not (caches / "hub" / "models--org--m" / "snapshots").exists()


def test_a_family_the_hub_does_not_name_is_refused_on_config_json_before_the_weights(caches, tiny_bert, fake_hub):
    files, _ = tiny_bert
    config = json.loads(files["config.json"])
    fake_hub.add("org/rel", files | {"config.json": json.dumps(config | {"position_embedding_type": "relative_key"})
                                     .encode()}, model_type=None)
    with pytest.raises(CheckpointError, match="'relative_key' positions is not one we map"):
        macaron.load("org/rel")
    assert [p.rsplit("/", 1)[-1] for p in fake_hub.resolved()] == ["config.json"] * len(fake_hub.resolved())


def test_an_unreachable_hub_and_an_offline_machine_are_said_in_words(caches, monkeypatch):
    with pytest.raises(hub.HubError, match="cannot be reached: is this machine offline"):
        macaron.load("org/anything")  # HF_ENDPOINT: a closed port on 127.0.0.1
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(hub.HubError, match="HF_HUB_OFFLINE is set, so nothing is downloaded"):
        sources.fetch("org/anything")


def test_names_that_are_not_hub_ids_ask_no_one(caches, fake_hub):
    with pytest.raises(CheckpointError, match="no such folder"):
        macaron.load("/no/such/folder")
    with pytest.raises(CheckpointError, match="not fetched yet; python -m macaron fetch paper-macaron-bert-base"):
        macaron.load("paper-macaron-bert-base")
    assert fake_hub.log == []  # a path, and a release's name: the Hub was not asked
    with pytest.raises(CheckpointError, match=r"transformer-minii: no such folder, not one of the shipped models "
                                              r"\[.*\] and, as a Hugging Face Hub id, no such model on the Hub"):
        macaron.load("transformer-minii")  # a typo: every place looked in is said
    assert not hub.is_hub_id("a--b") and not hub.is_hub_id("../x") and not hub.is_hub_id("a/b/c")
    assert hub.is_hub_id("gpt2") and hub.is_hub_id("google-bert/bert-base-uncased")


# ---- the paper's release, from a server standing in for Google Drive ----------------------------------------
def tbz2(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:bz2") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


class Files(ThreadingHTTPServer):
    def __init__(self, folder: Path):
        self.log: list[str] = []
        log = self.log

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                log.append(self.path)
                super().do_GET()

        super().__init__(("127.0.0.1", 0), partial(Handler, directory=str(folder)))


DRIVE = {"MODEL_URL": "model.tbz2", "GLUE_URL": "glue.tbz2", "IWSLT14_MODEL_URL": "iwslt.tbz2",
         "IWSLT14_TEST_URL": "iwslt-test.tbz2", "WMT14_BASE_URL": "base.tbz2", "WMT14_BIG_URL": "big.tbz2",
         "WMT14_TEST_URL": "newstest.tbz2"}


@pytest.fixture
def drive(tmp_path, monkeypatch):
    """A file server on 127.0.0.1 in place of Google Drive; fetch's URLs pointed at its files (DRIVE)."""
    folder = tmp_path / "drive"
    folder.mkdir()
    server = Files(folder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    for constant, file in DRIVE.items():
        monkeypatch.setattr(release, constant, f"{base}/{file}")
    yield folder, server.log
    server.shutdown()
    server.server_close()


@pytest.fixture
def converter(monkeypatch):
    """A stand-in for macaron.formats.fairseq.convert at fetch's seam: records its arguments (checkpoint, dictionary,
    codes, out, source, target: Paths or None), writes a config.json."""
    calls = []

    def convert(checkpoint, dictionary, bpe_codes, out, *, source_dict=None, target_dict=None):
        calls.append(tuple(p and Path(p) for p in (checkpoint, dictionary, bpe_codes, out, source_dict, target_dict)))
        Path(out).mkdir(parents=True)
        (Path(out) / "config.json").write_text(json.dumps({"scheme": "macaron"}))
        return out

    monkeypatch.setattr(release, "convert", convert)
    return calls


def test_the_paper_release_is_fetched_found_in_nested_folders_and_converted_once(caches, drive, converter, capfd):
    folder, log = drive
    tbz2(folder / "model.tbz2", {"unsupervised-bert-base/pretrained/checkpoint_pretrained.pt": b"weights" * 1000,
                                 "unsupervised-bert-base/README": b"x"})
    tbz2(folder / "glue.tbz2", {"glue/data-bin/glue/CoLA/dict.txt": b"the 100\n", "glue/data-bin/glue/CoLA/train.bin":
                                b"x" * 5000, "glue/data-bin/glue/RTE/dict.txt": b"the 100\n"})
    out = sources.fetch("paper-macaron-bert-base")
    checkpoint, dictionary, codes, written, source, target = converter[0]
    assert source is None and target is None  # one dictionary, as --dict
    assert checkpoint.name == "checkpoint_pretrained.pt" and checkpoint.parent.name == "pretrained"
    assert dictionary.read_bytes() == b"the 100\n" and dictionary.parts[-4:] == ("data-bin", "glue", "CoLA", "dict.txt")
    assert codes is None and written.name == "paper-macaron-bert-base"
    assert out == caches / "macaron" / "models" / "paper-macaron-bert-base" and (out / "config.json").is_file()
    assert not (dictionary.parent / "train.bin").exists()  # from the GLUE data, only what fetch reads
    assert "100%" in capfd.readouterr().err  # gdown's progress bar
    assert sorted(log) == ["/glue.tbz2", "/model.tbz2"]
    assert sources.cached()["paper-macaron-bert-base"] == out  # the picker lists it; its name opens it
    assert sources.locate("paper-macaron-bert-base") == out
    import shutil
    shutil.rmtree(out)  # converted again: from the archives kept, none downloaded twice
    sources.fetch("paper-macaron-bert-base")
    assert len(converter) == 2 and sorted(log) == ["/glue.tbz2", "/model.tbz2"]


def test_the_paper_release_converts_for_real_and_opens_by_name(caches, drive, monkeypatch, tmp_path):
    """The whole path with the real importer: a checkpoint written as fairseq 0.6 writes one (tests/test_fairseq.py's
    writer) in the model archive, its dict.txt in the GLUE archive; fetched, converted, opened by its name, traced."""
    import numpy as np

    import macaron
    from test_fairseq import ARCHS, dictionary_lines, fairseq_args, fairseq_state, save_fairseq

    folder, _ = drive
    lines = dictionary_lines()
    state = fairseq_state(6 + len(lines), True, seed=7)
    ckpt = save_fairseq(tmp_path / "checkpoint_pretrained.pt", fairseq_args(ARCHS["macaron"]), state, monkeypatch)
    tbz2(folder / "model.tbz2", {"unsupervised-bert-base/checkpoint_pretrained.pt": ckpt.read_bytes()})
    tbz2(folder / "glue.tbz2", {"glue/data-bin/glue/CoLA/dict.txt": "".join(f"{x}\n" for x in lines).encode()})
    out = sources.fetch("paper-macaron-bert-base")
    model = macaron.load("paper-macaron-bert-base")
    assert model.config.scheme == "macaron" and (out / "converted.json").is_file()
    assert "approximate" in (out / "converted.json").read_text()  # the release has no BPE codes
    traj = model.trace("the cat sat on the mat .")
    assert traj.states.shape[1] == len(traj.tokens) and np.isfinite(np.asarray(traj.states)).all()


@pytest.mark.parametrize("lacks", ["checkpoint", "dictionary"])
def test_what_the_release_lacks_is_named_with_the_way_by_hand(caches, drive, converter, lacks):
    folder, log = drive
    if lacks == "checkpoint":  # then the GLUE data is not worth its download
        tbz2(folder / "model.tbz2", {"model/notes.txt": b"no checkpoint here"})
        said = r"the checkpoint \(\*\.pt\) and the dictionary \(dict\.txt\) not found"
    else:
        tbz2(folder / "model.tbz2", {"model/checkpoint_pretrained.pt": b"w"})
        tbz2(folder / "glue.tbz2", {"glue/CoLA/train.bin": b"x"})
        said = r"paper-macaron-bert-base: the dictionary \(dict\.txt\) not found"
    with pytest.raises(release.FetchError, match=said + r".* import-fairseq .*--out .*paper-macaron-bert-base"):
        sources.fetch("paper-macaron-bert-base")
    assert not converter and log == ["/model.tbz2"] + (["/glue.tbz2"] if lacks == "dictionary" else [])


@pytest.mark.parametrize("evil", ["../evil", "/tmp/macaron-test-evil-absolute", "link"])
def test_an_archive_member_outside_its_folder_or_a_link_is_refused(caches, drive, converter, evil):
    folder, _ = drive
    members = {"model/checkpoint_pretrained.pt": b"w"} | ({} if evil == "link" else {evil: b"evil"})
    tbz2(folder / "model.tbz2", members, links={"model/link": "../../../evil"} if evil == "link" else None)
    with pytest.raises(release.FetchError, match="nothing of it was kept"):
        sources.fetch("paper-macaron-bert-base")
    home = caches / "macaron" / "paper" / "paper-macaron-bert-base"
    assert not (home / "model").exists() and not (home / "model.partial").exists()
    assert not list(caches.rglob("evil")) and not Path("/tmp/macaron-test-evil-absolute").exists()
    assert not converter


# ---- the paper's translation releases: the model's archive and the binarised test set ------------------------
IWSLT = "paper-macaron-iwslt14-de-en"
IWSLT_CKPT = "log/iwslt14_de_en/transformer_iwslt_de_en_macaron_v2/checkpoint_pretrained.pt"  # test-iwslt14.sh's path
IWSLT_DATA = "data-bin/iwslt14.tokenized.de-en.joined/"
WMT_DATA = "data-bin/wmt14_en_de_joined_dict/"


def binarised(data: str, src: str, tgt: str, dictionaries: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """The members of a binarised test set as preprocess.py writes one (its dictionaries, test.{src}-{tgt}.*)."""
    files = {f"dict.{lang}.txt": f"{lang}-word 7\n".encode() for lang in (src, tgt)} | (dictionaries or {})
    files |= {f"test.{src}-{tgt}.{lang}.{ext}": f"{lang} {ext}".encode() * 50 for lang in (src, tgt)
              for ext in ("bin", "idx")}
    return {data + name: data_ for name, data_ in files.items()}


def test_a_translation_release_is_fetched_its_two_dictionaries_found_in_the_test_set_and_converted_once(
        caches, drive, converter, capsys):
    folder, log = drive
    tbz2(folder / "iwslt.tbz2", {IWSLT_CKPT: b"weights" * 1000, "log/code/README": b"a folder named code"})
    tbz2(folder / "iwslt-test.tbz2", binarised(IWSLT_DATA, "de", "en") | {IWSLT_DATA + "code": b"#version: 0.2\n"})
    assert release.release_test_set(IWSLT) is None  # not fetched yet
    out = sources.fetch(IWSLT)
    assert len(converter) == 1
    checkpoint, dictionary, codes, written, source, target = converter[0]
    assert checkpoint.relative_to(caches / "macaron" / "paper" / IWSLT / "model").as_posix() == IWSLT_CKPT
    assert dictionary is None  # two dictionaries, as --source-dict and --target-dict
    assert source.read_bytes() == b"de-word 7\n" and target.read_bytes() == b"en-word 7\n"  # not swapped
    assert source.parts[-3:] == ("data-bin", "iwslt14.tokenized.de-en.joined", "dict.de.txt")
    assert codes.is_file() and codes.read_bytes() == b"#version: 0.2\n"  # the file, not the folder log/code
    assert written.name == IWSLT and out == caches / "macaron" / "models" / IWSLT and (out / "config.json").is_file()
    data = release.release_test_set(IWSLT)  # unpacked whole, where the bleu command reads it
    assert data == caches / "macaron" / "paper" / IWSLT / "data" / "data-bin" / "iwslt14.tokenized.de-en.joined"
    assert (data / "test.de-en.en.idx").read_bytes() == b"en idx" * 50 and (data / "test.de-en.de.bin").is_file()
    said = capsys.readouterr().out
    assert f"source dictionary: {source}" in said and f"target dictionary: {target}" in said
    assert f"test set: {data}" in said
    assert sorted(log) == ["/iwslt-test.tbz2", "/iwslt.tbz2"]
    assert sources.cached()[IWSLT] == out and sources.locate(IWSLT) == out  # the picker lists it; its name opens it
    assert release.release_test_set("paper-macaron-bert-base") is None  # GLUE is no test set
    assert sources.fetch(IWSLT) == out and len(converter) == 1 and len(log) == 2  # converted once


def test_wmt_base_and_big_share_one_download_of_newstest2014_and_the_models_archive_comes_first(caches, drive,
                                                                                                converter):
    folder, log = drive
    tbz2(folder / "base.tbz2", {"log/wmt14_en_de/base/checkpoint_pretrained.pt": b"base",
                                "log/wmt14_en_de/base/dict.en.txt": b"model-en 1\n"})
    tbz2(folder / "big.tbz2", {"log/wmt14_en_de/big/checkpoint_pretrained.pt": b"big"})
    tbz2(folder / "newstest.tbz2", binarised(WMT_DATA, "en", "de") | {WMT_DATA + "raw-test/en-de.en.bpe": b"a@@ b\n"})
    base = sources.fetch("paper-macaron-wmt14-en-de-base")
    big = sources.fetch("paper-macaron-wmt14-en-de-big")
    assert sorted(log) == ["/base.tbz2", "/big.tbz2", "/newstest.tbz2"]  # the test set downloaded once, for both
    assert [c[0].read_bytes() for c in converter] == [b"base", b"big"] and [c[3].name for c in converter] == \
        [base.name, big.name]
    (_, _, codes, _, base_src, base_tgt), (_, _, _, _, big_src, big_tgt) = converter
    assert base_src.read_bytes() == b"model-en 1\n" and "model" in base_src.relative_to(caches).parts  # model's first
    assert base_tgt.read_bytes() == b"de-word 7\n" and big_src.read_bytes() == b"en-word 7\n"
    assert big_tgt.name == "dict.de.txt" and codes is None  # WMT's test set has no BPE codes
    sets = [release.release_test_set(n) for n in ("paper-macaron-wmt14-en-de-base", "paper-macaron-wmt14-en-de-big")]
    assert all((s / "test.en-de.de.bin").is_file() and (s / "raw-test" / "en-de.en.bpe").is_file() for s in sets)
    assert sets[0] != sets[1] and set(sources.cached()) >= {base.name, big.name}


def test_an_archive_kept_where_fetch_kept_it_before_archives_were_shared_is_not_downloaded_again(caches, drive,
                                                                                                 converter):
    folder, log = drive
    old = caches / "macaron" / "paper" / "paper-macaron-bert-base" / "archives"
    old.mkdir(parents=True)
    tbz2(old / "unsupervised-bert-base-pretrained-model.tbz2", {"m/checkpoint_pretrained.pt": b"w"})
    tbz2(old / "glue-data-bin.tbz2", {"glue/CoLA/dict.txt": b"the 1\n"})
    sources.fetch("paper-macaron-bert-base")
    assert log == [] and converter[0][1].read_bytes() == b"the 1\n"


@pytest.mark.parametrize("lacks", ["checkpoint", "target dictionary"])
def test_what_a_translation_release_lacks_is_named_with_the_way_by_hand(caches, drive, converter, lacks):
    folder, log = drive
    out = caches / "macaron" / "models" / IWSLT
    if lacks == "checkpoint":  # then the test set is not worth its download
        tbz2(folder / "iwslt.tbz2", {"log/notes.txt": b"no checkpoint here"})
        said = (r"the checkpoint \(\*\.pt\) and the source dictionary \(dict\.de\.txt\) and the target dictionary "
                r"\(dict\.en\.txt\) not found.* import-fairseq PATH/TO/checkpoint_pretrained\.pt --source-dict "
                r"PATH/TO/dict\.de\.txt --target-dict PATH/TO/dict\.en\.txt")
    else:
        tbz2(folder / "iwslt.tbz2", {IWSLT_CKPT: b"w"})
        tbz2(folder / "iwslt-test.tbz2", {IWSLT_DATA + "dict.de.txt": b"de 1\n"})
        home = caches / "macaron" / "paper" / IWSLT
        said = (rf"{IWSLT}: the target dictionary \(dict\.en\.txt\) not found.* import-fairseq "
                rf"{re.escape(str(home / 'model' / IWSLT_CKPT))} --source-dict "
                rf"{re.escape(str(home / 'data' / IWSLT_DATA / 'dict.de.txt'))} --target-dict PATH/TO/dict\.en\.txt")
    with pytest.raises(release.FetchError, match=said + rf" \[--bpe-codes PATH/TO/code\] --out {re.escape(str(out))}$"):
        sources.fetch(IWSLT)
    assert not converter and not out.exists()
    assert log == ["/iwslt.tbz2"] + (["/iwslt-test.tbz2"] if lacks != "checkpoint" else [])


@pytest.fixture(scope="module")
def translation_files(tmp_path_factory):
    """BPE codes and a joined dictionary as tests/test_translation.py's `release` fixture writes them (its helpers:
    subword-nmt on the Moses-tokenised German and English sentences; preprocess.py's dictionary)."""
    from subword_nmt.learn_bpe import learn_bpe

    from test_translation import ENGLISH, GERMAN, dictionary_lines, moses_words

    folder = tmp_path_factory.mktemp("translation")
    corpus, codes = folder / "train.en-de", folder / "code"
    texts = [(t, "de") for t in GERMAN] + [(t, "en") for t in ENGLISH]
    corpus.write_text("".join(" ".join(moses_words(t, lang)) + "\n" for t, lang in texts), encoding="utf-8")
    with open(corpus, encoding="utf-8") as fin, open(codes, "w", encoding="utf-8") as fout:
        learn_bpe(fin, fout, 10, min_frequency=2)
    joined = folder / "dict.joined.txt"
    joined.write_text("".join(line + "\n" for line in dictionary_lines(texts, codes)), encoding="utf-8")
    return dict(folder=folder, codes=codes, joined=joined)


def test_a_translation_release_converts_for_real_and_translates_by_name(caches, drive, monkeypatch, tmp_path,
                                                                        translation_files, capsys):
    """The whole path with the real importer: a Macaron small checkpoint written as fairseq 0.6 writes one
    (tests/test_translation.py's writer) in the model's archive, the test set's two dictionaries (joined
    vocabulary: equal) in its archive, no BPE codes (as the release ships none); fetched, converted, opened by its
    name, translating."""
    from test_translation import EOS, write_checkpoint

    folder, _ = drive
    ckpt, *_ = write_checkpoint(tmp_path, "transformer_iwslt_de_en_macaron_v2", "joined", translation_files,
                                monkeypatch)
    joined = translation_files["joined"].read_bytes()
    tbz2(folder / "iwslt.tbz2", {IWSLT_CKPT: ckpt.read_bytes()})
    tbz2(folder / "iwslt-test.tbz2", binarised(IWSLT_DATA, "de", "en", {"dict.de.txt": joined, "dict.en.txt": joined}))
    out = sources.fetch(IWSLT)
    assert "BPE codes: not in the release" in capsys.readouterr().out  # what is missing is named
    record = json.loads((out / "converted.json").read_text())
    assert record["arch"] == "transformer_iwslt_de_en_macaron_v2" and record["reading"] == "approximate"
    assert Path(record["dictionary"]).name == "dict.de.txt" and Path(record["target_dictionary"]).name == "dict.en.txt"
    model = macaron.load(IWSLT, device="cpu")
    result = model.translate("das haus ist klein .", beam=1)
    assert result.source.token_ids[-1] == EOS and result.target_ids and len(result.target.steps) > 0
    for traj in (result.source, result.target):
        assert np.isfinite(np.asarray(traj.states)).all() and np.asarray(traj.states).shape[1] == len(traj.token_ids)
    assert sources.cached()[IWSLT] == out


# ---- the app: the picker lists what this machine has; the Hub only where the server allows it ---------------
@pytest.fixture
def shipped_tiny(models_dir, tmp_path, monkeypatch):
    """The tiny models in place of pretrained/ (so the app's list is the shipped one, with the caches after it)."""
    import shutil

    from macaron.sources import shipped

    folder = tmp_path / "pretrained"
    for name in ("tiny-transformer", "tiny-macaron"):
        shutil.copytree(models_dir / name, folder / name)
    monkeypatch.setattr(shipped, "PRETRAINED", folder)  # read when asked, by the library and the app alike
    return folder


def test_the_picker_lists_the_hub_cache_and_the_imported_models(caches, tiny_bert, shipped_tiny, models_dir,
                                                                 monkeypatch):
    import shutil

    import explorer_state as state

    files, _ = tiny_bert
    snapshot = put_in_cache(caches / "hub", "org/tiny-bert", files)
    config = json.loads(files["config.json"]) | {"model_type": "t5"}
    put_in_cache(caches / "hub", "org/t5", files | {"config.json": json.dumps(config).encode()})  # not mapped
    put_in_cache(caches / "hub", "org/half", {"config.json": files["config.json"]})  # no weights (yet)
    shutil.copytree(models_dir / "tiny-macaron", caches / "macaron" / "models" / "paper-macaron-bert-base")
    paths = state.model_paths()
    assert list(paths) == ["tiny-macaron", "tiny-transformer", "org/tiny-bert", "paper-macaron-bert-base"]
    assert paths["org/tiny-bert"] == str(snapshot)
    monkeypatch.setenv("MACARON_MODELS_DIR", str(shipped_tiny))  # the operator's list is the whole list
    assert list(state.model_paths()) == ["tiny-macaron", "tiny-transformer"]


def test_the_full_size_pair_opens_the_steps_that_name_both(monkeypatch):
    import explorer_state as state
    from macaron import lesson

    both = [k for k in range(1, len(lesson.LESSON) + 1) if lesson.full_size(k, ["bert-base-uncased",
                                                                               "paper-macaron-bert-base"])]
    assert both == [5]  # Transformer vs Macaron, on Compare
    assert lesson.full_size(5, ["google-bert/bert-base-uncased", "paper-macaron-bert-base"])[0].startswith("google")
    assert lesson.full_size(5, ["bert-base-uncased"]) is None  # half of it: the shipped pair
    paths = {n: f"/m/{n}" for n in ("transformer-mini", "macaron-mini", "bert-base-uncased", "paper-macaron-bert-base")}
    monkeypatch.setattr(state, "model_paths", lambda: paths)
    assert state.lesson_models(5) == ("bert-base-uncased", "paper-macaron-bert-base")
    assert state.lesson_models(1) == ("transformer-mini", "macaron-mini")


def app_at(query: dict, page: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app" / "main.py"), default_timeout=120)
    at.query_params.update(query)
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_hub_cached_model_opens_in_particles_and_compare(caches, tiny_bert, shipped_tiny, monkeypatch):
    put_in_cache(caches / "hub", "org/tiny-bert", tiny_bert[0])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = app_at({"m": "org/tiny-bert", "s": "the cat sat on the [MASK] ."})
    assert at.selectbox(key="p_model").value == "org/tiny-bert" and len(at.get("plotly_chart")) >= 3
    assert "A model from the Hub…" not in at.selectbox(key="p_model").options  # off unless MACARON_HUB=1
    at = app_at({"mode": "models", "a": "org/tiny-bert", "b": "tiny-macaron"}, "views/compare.py")
    assert at.selectbox(key="c_a").value == "org/tiny-bert" and at.get("plotly_chart") and not at.error


def test_the_hub_entry_downloads_on_a_click_with_a_progress_bar(caches, tiny_bert, shipped_tiny, fake_hub,
                                                               monkeypatch):
    fake_hub.add("org/tiny-bert", tiny_bert[0])
    fake_hub.add("org/big", tiny_bert[0])
    monkeypatch.setenv("MACARON_HUB", "1")
    at = app_at({"m": "org/tiny-bert"})  # a link to a Hub model this server lacks: asked for, not fetched
    assert at.selectbox(key="p_model").value == "A model from the Hub…" and not fake_hub.resolved()
    assert at.text_input(key="p_model_hub").value == "org/tiny-bert" and "not on this server yet" in at.info[0].value
    at.button(key="p_model_hub_go").click().run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) >= 3
    assert fake_hub.resolved() and at.query_params["m"] in ("org/tiny-bert", ["org/tiny-bert"])
    monkeypatch.setenv("MACARON_HUB_MAX_GB", "0.00001")
    at.text_input(key="p_model_hub").set_value("org/big").run()
    at.button(key="p_model_hub_go").click().run()
    assert "org/big was not downloaded" in at.error[0].value and "over this machine's limit" in at.error[0].value
    assert not any("org/big/resolve" in p for p in fake_hub.resolved())
