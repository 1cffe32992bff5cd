"""Served models (models/served.py): any OpenAI-compatible server as a model, named
`http://HOST:PORT/v1#MODEL`. The server is the real `transformers serve` (started once for the
module on 127.0.0.1, offline, serving the tiny fixture GPT-2), reached directly or through a
small counting proxy on 127.0.0.1 that can die mid-run; `transformers serve` returns no prompt
log-probabilities, so log-likelihoods are tested against a stub on 127.0.0.1 that computes them
with the same local model, as vLLM's server would return them. Nothing leaves 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import invoke

from workbench.core.errors import InputError, ModelError

KEY = "sk-test-DO-NOT-PRINT-8d1f0c"
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
PROMPTS = [
    "The cat is",
    "A person cooked dinner.\nQuestion: Women cook. True, False or Neither?\nAnswer:",
    "Hello",
    "women and men",
    "The doctor said that",
]
ROWS = [
    ("A person cooked dinner.", "Women cook.", "Men cook."),
    ("The nurse helped a patient.", "Women are caring.", "Men are caring."),
    ("Someone fixed the car.", "Men are mechanics.", "Women are mechanics."),
    ("A child read a book.", "Girls like reading.", "Boys like reading."),
]
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def served_copy(fixture: Path, folder: Path) -> Path:
    """The fixture GPT-2 with a causal LM's tokenizer (BOS added, no EOS appended: the fixture's
    RoBERTa-style one appends </s>) and a small chat template, which chat completions need."""
    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    shutil.copytree(fixture, folder)
    backend = AutoTokenizer.from_pretrained(folder).backend_tokenizer
    bos = backend.token_to_id("<s>")
    backend.post_processor = TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", bos)])
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        (folder / name).unlink(missing_ok=True)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
    )
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(folder)
    return folder


def wait_healthy(port: int, proc: subprocess.Popen, log: Path, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"transformers serve exited ({proc.returncode}):\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with NO_PROXY.open(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    pytest.fail(
        f"transformers serve did not answer /health in {limit_s:g} s:\n{log.read_text(errors='replace')[-3000:]}"
    )


@pytest.fixture(scope="module")
def model_dir(fixture_models, tmp_path_factory) -> Path:
    return served_copy(fixture_models["clm-gpt2"], tmp_path_factory.mktemp("served") / "gpt2")


@pytest.fixture(scope="module")
def server(model_dir, tmp_path_factory):
    """`transformers serve MODEL_DIR` on a free port of 127.0.0.1, stopped after the module."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    env.pop("OPENAI_API_KEY", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from transformers.cli.transformers import main; main()",
                "serve",
                str(model_dir),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--device",
                "cpu",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=log.parent,
        )
    try:
        wait_healthy(port, proc, log)
        yield SimpleNamespace(port=port, folder=model_dir, name=f"http://127.0.0.1:{port}/v1#{model_dir}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


class Proxy:
    """A counting HTTP proxy on 127.0.0.1 in front of the server. It counts requests by what they
    ask (`/v1/models`, `probe`: an echo request, `generate`), keeps the Authorization headers it
    saw, and after `limit` answered generation requests it dies: the request over the limit gets
    no answer and the listener closes, so later connections are refused."""

    def __init__(self, upstream: int, port: int = 0, limit: int | None = None):
        self.upstream, self.limit = upstream, limit
        self.counts: Counter = Counter()
        self.auth: set = set()
        self.lock = threading.Lock()
        self.admitted = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.forward(None)

            def do_POST(self):
                self.forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def forward(self, body):
                what = self.path
                if body is not None:
                    what = "probe" if json.loads(body).get("echo") else "generate"
                with proxy.lock:
                    proxy.auth.add(self.headers.get("Authorization"))
                    if what == "generate" and proxy.limit is not None and proxy.admitted >= proxy.limit:
                        self.close_connection = True  # dies without answering
                        threading.Thread(target=proxy.stop, daemon=True).start()
                        return
                    proxy.counts[what] += 1
                    proxy.admitted += what == "generate"
                request = urllib.request.Request(
                    f"http://127.0.0.1:{proxy.upstream}{self.path}",
                    data=body,
                    method=self.command,
                    headers={"Content-Type": "application/json"},
                )
                try:
                    with NO_PROXY.open(request, timeout=60) as r:
                        status, data = r.status, r.read()
                except urllib.error.HTTPError as exc:
                    status, data = exc.code, exc.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.stopped = False

    def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            self.httpd.shutdown()
            self.httpd.server_close()

    def name(self, folder: Path) -> str:
        return f"http://127.0.0.1:{self.port}/v1#{folder}"


class LogprobServer:
    """/v1/models and /v1/completions with echo=true and logprobs as vLLM's server answers them
    (the prompt's tokens as text, each one's ln P, None for the first; one generated token),
    computed with the local model: what `transformers serve` lacks."""

    def __init__(self, folder: Path):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder).eval()
        lock = threading.Lock()
        self.requests = Counter()
        server = self

        def answer(prompt: str) -> dict:
            ids = tok(prompt)["input_ids"]
            with lock, torch.no_grad():
                lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].float(), dim=-1)
            nxt = int(lp[-1].argmax())
            values = [None] + [lp[i - 1, t].item() for i, t in enumerate(ids) if i] + [lp[-1, nxt].item()]
            tokens = [tok.decode([t]) for t in [*ids, nxt]]
            return {
                "id": "x",
                "object": "text_completion",
                "model": str(folder),
                "choices": [
                    {
                        "index": 0,
                        "text": prompt + tokens[-1],
                        "finish_reason": "length",
                        "logprobs": {"tokens": tokens, "token_logprobs": values, "top_logprobs": None},
                    }
                ],
                "usage": {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1},
            }

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status: int, doc: dict):
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                server.requests[self.path] += 1
                self.reply(200, {"object": "list", "data": [{"id": "gpt2", "object": "model", "root": str(folder)}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                server.requests[self.path] += 1
                if self.path != "/v1/completions" or not body.get("echo") or body.get("model") != "gpt2":
                    self.reply(400, {"error": {"message": "this stub answers echo requests for gpt2 only"}})
                    return
                self.reply(200, answer(body["prompt"]))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.name = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1#gpt2"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# -- generation -----------------------------------------------------------------------------------
def test_greedy_texts_from_the_server_equal_local_generation(server, tmp_path):
    from workbench.models.generation import GenerationSettings, generate
    from workbench.models.lm_loading import load_scorer
    from workbench.models.served import open_served

    local = load_scorer(str(server.folder))
    served = open_served(server.name, tmp_path / "c.sqlite")
    plain = generate(
        local, PROMPTS, GenerationSettings(max_new_tokens=10, add_bos=True)
    )  # the server's tokenizer adds BOS
    stop = next(t.text[3:5] for t in plain if len(set(t.text)) > 3 and t.text[3:5].isascii() and t.text[3:5].strip())
    for settings in (
        GenerationSettings(max_new_tokens=10),
        GenerationSettings(max_new_tokens=10, stop=(stop,)),
        GenerationSettings(max_new_tokens=8, chat_template=True, system_prompt="Be brief."),
    ):
        mine = generate(
            local,
            PROMPTS,
            GenerationSettings(**{**settings.describe(), "stop": settings.stop, "add_bos": not settings.chat_template}),
        )
        theirs = generate(served, PROMPTS, settings)
        assert [g.text for g in theirs] == [g.text for g in mine]
        assert [g.stop_reason for g in theirs] == [g.stop_reason for g in mine]
        assert all(g.token_ids == () for g in theirs)
    assert any(
        g.stop_reason == "stop" for g in generate(served, PROMPTS, GenerationSettings(max_new_tokens=10, stop=(stop,)))
    )
    assert len({g.text for g in plain}) > 2


def test_answers_are_cached_by_model_server_id_prompt_and_settings(server, tmp_path):
    from workbench.models.generation import GenerationSettings, generate
    from workbench.models.served import GENERATED, open_served

    proxy = Proxy(server.port)
    try:
        first = open_served(proxy.name(server.folder), tmp_path / "c.sqlite")
        done = generate(first, PROMPTS[:3], GenerationSettings(max_new_tokens=6))
        assert proxy.counts["generate"] == 3
        again = open_served(proxy.name(server.folder), tmp_path / "c.sqlite")  # a new run: read from the cache
        assert generate(again, PROMPTS[:3] + PROMPTS[:1], GenerationSettings(max_new_tokens=6)) == done + done[:1]
        assert proxy.counts["generate"] == 3
        generate(again, PROMPTS[:3], GenerationSettings(max_new_tokens=7))  # other settings: asked again
        assert proxy.counts["generate"] == 6
    finally:
        proxy.stop()
    db = sqlite3.connect(tmp_path / "c.sqlite")
    rows = db.execute("SELECT model, revision FROM entries WHERE namespace=?", (GENERATED,)).fetchall()
    # no port: a restarted server reuses them; the weights are told by the probe's answer
    assert rows and set(rows) == {(str(server.folder), first.revision)} and first.revision == again.revision
    assert re.fullmatch(f"served:{re.escape(str(server.folder))} probe:[0-9a-f]{{16}}", first.revision)
    record = first.runtime.record()["served"]
    assert record["server_model"] == str(server.folder) and record["identity"]["answered_as"] == str(server.folder)


# -- an NLI evaluation by generation --------------------------------------------------------------
def nli_release(folder: Path) -> Path:
    rows = [
        {
            "premise": premise,
            "hypothesis": h,
            "stance": stance,
            "domain": "gender",
            "subtopic": f"s{k % 2}",
            "pair_id": f"p{k}",
        }
        for k, (premise, pro, anti) in enumerate(ROWS)
        for h, stance in ((pro, "pro"), (anti, "anti"))
    ]
    (folder / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), folder / "data" / "all.parquet")
    return folder


def local_answers(model_dir: Path) -> list[str]:
    """What the model generates locally for each row's prompt, asked as the served judge asks."""
    from workbench.kinds.nli.llm_judge import Asking
    from workbench.kinds.nli.served_judge import GENERATION
    from workbench.models.generation import GenerationSettings, generate
    from workbench.models.lm_loading import load_scorer

    asking = Asking()
    prompts = [asking.render(premise, h) for premise, pro, anti in ROWS for h in (pro, anti)]
    settings = GenerationSettings(**{**GENERATION.describe(), "stop": GENERATION.stop, "add_bos": True})
    return [g.text for g in generate(load_scorer(str(model_dir)), prompts, settings)]


def project_for(folder: Path, texts: list[str], mode: str = "auto", answers: dict | None = None) -> dict:
    """A project whose answer words (unless given) are first words the model generates for some
    rows but not all: some answers parse, some do not. Returns the answers."""
    from workbench.kinds.nli.served_judge import _bare

    if answers is None:
        firsts = Counter(_bare(t.split()[0]) for t in texts if t.split() and _bare(t.split()[0]))
        common = [w for w, _ in firsts.most_common()]
        assert common, texts
        words = common[:2] if sum(firsts[w] for w in common[:2]) < len(texts) else common[:1]
        words += ["qqzx", "zzqx"][: 3 - len(words)]
        answers = dict(zip(("entailment", "neutral", "contradiction"), words))
    shown = ", ".join(f'{k} = "{v}"' for k, v in answers.items())
    (folder / "workbench.toml").write_text(
        f'[project]\nname = "served"\n[llm]\nanswers = {{ {shown} }}\nmode = "{mode}"\n', encoding="utf-8"
    )
    return answers


def test_an_evaluation_by_generation_counts_unparseable_answers_and_keeps_the_key_secret(
    server, tmp_path, runner, monkeypatch
):
    from workbench.kinds.nli.served_judge import read_answer

    release = nli_release(tmp_path / "loose")
    texts = local_answers(server.folder)
    answers = project_for(tmp_path, texts)
    labels = [read_answer(t, answers) for t in texts]
    unparseable = labels.count(None)
    assert 0 < unparseable < len(labels), (texts, answers)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    proxy = Proxy(server.port)
    try:
        name = proxy.name(server.folder)
        result = invoke(
            runner, "evaluate", str(release), "--unverified", "--model", name, "--cache", "c.sqlite", "--json", "s.json"
        )
    finally:
        proxy.stop()
    assert result.exit_code == 0, result.output
    assert proxy.auth == {f"Bearer {KEY}"}  # the key went to the server, as a bearer token
    assert proxy.counts["generate"] == len(texts) and proxy.counts["probe"] == 1
    entry = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"][name]
    asked = entry["asked"]
    assert asked["mode"] == "generation" and asked["unparseable"] == unparseable
    assert "left out" in asked["unparseable_rule"] and "no logprobs" in asked["served"]["no_log_likelihood"]
    assert entry["overall"]["n"] == len(labels) - unparseable
    kept = [label for label in labels if label is not None]
    assert entry["overall"]["accuracy"] == pytest.approx(100 * kept.count("neutral") / len(kept), abs=1e-3)
    assert f"{unparseable} of {len(labels)} generated answers are unparseable" in " ".join(result.output.split())
    for path in tmp_path.rglob("*"):  # output, JSON, cache (and its WAL): no key anywhere
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in result.output


def test_a_server_that_dies_mid_run_is_one_line_and_a_rerun_asks_only_for_the_rest(server, tmp_path, monkeypatch):
    release = nli_release(tmp_path / "loose")
    project_for(tmp_path, local_answers(server.folder))
    port = free_port()
    proxy = Proxy(server.port, port, limit=3)
    env = {**os.environ, "OPENAI_API_KEY": KEY, "WORKBENCH_SERVED_RETRIES": "2", "WORKBENCH_SERVED_WORKERS": "2"}
    command = [
        sys.executable,
        "-m",
        "workbench",
        "evaluate",
        str(release),
        "--unverified",
        "--model",
        proxy.name(server.folder),
        "--cache",
        "c.sqlite",
        "--json",
        "s.json",
    ]
    try:
        died = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        proxy.stop()
    assert died.returncode == 2, (died.stdout[-2000:], died.stderr[-2000:])
    assert "Traceback" not in died.stdout + died.stderr and KEY not in died.stdout + died.stderr
    errors = [line for line in died.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ") and "stopped answering" in errors[0], died.stderr
    assert "after 3 of 8 answers had come back" in errors[0]
    assert not (tmp_path / "s.json").exists()
    cached = sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT COUNT(*) FROM entries WHERE namespace='nli'")
    assert cached.fetchone()[0] == 3

    again = Proxy(server.port, port)  # the server is back, at the same address
    try:
        rerun = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    finally:
        again.stop()
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert again.counts["generate"] == 8 - 3  # the 3 answers already cached are not asked again
    assert json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"][proxy.name(server.folder)]


# -- log-likelihoods ------------------------------------------------------------------------------
def test_log_likelihoods_are_refused_in_one_line_where_the_server_gives_none(server, tmp_path, runner, monkeypatch):
    from workbench.models.lm_loading import load_scorer
    from workbench.models.served import open_served

    release = nli_release(tmp_path / "loose")
    project_for(tmp_path, local_answers(server.folder), mode="log-likelihood")
    monkeypatch.chdir(tmp_path)
    result = invoke(runner, "evaluate", str(release), "--unverified", "--model", server.name, "--no-cache")
    assert result.exit_code == 2, result.output
    message = str(result.exception)
    assert "\n" not in message and "gives no prompt log-probabilities" in message and "holds no logprobs" in message
    assert 'mode = "log-likelihood"' in message
    with pytest.raises(ModelError, match="gives no prompt log-probabilities") as refused:
        open_served(server.name).choice_logprobs([("The cat is", ["big", "small"])])
    assert "\n" not in str(refused.value)
    with pytest.raises(ModelError, match="per-token|each of its own tokens") as refused:  # the intrinsic kinds' scorer
        load_scorer(server.name)
    assert "\n" not in str(refused.value) and "no logprobs" in str(refused.value)


def test_a_server_with_prompt_logprobs_scores_continuations_as_the_local_model_does(
    server, tmp_path, runner, monkeypatch
):
    from workbench.models.lm_loading import load_scorer
    from workbench.models.lm_scoring import choice_logprobs
    from workbench.models.served import open_served

    stub = LogprobServer(server.folder)
    try:
        items = [
            (f"{premise}\nQuestion: {h} True, False or Neither?\nAnswer:", ["True", "Neither", "False"])
            for premise, h, _ in ROWS
        ]
        served = open_served(stub.name)
        assert served.logprobs_problem() is None
        theirs = served.choice_logprobs(items)
        mine = choice_logprobs(load_scorer(str(server.folder)), items)
        assert theirs == [pytest.approx(row, abs=1e-4) for row in mine]

        release = nli_release(tmp_path / "loose")
        # single tokens the tiny model finds about equally likely (test_nli_llm): its labels vary
        project_for(tmp_path, [], "log-likelihood", {"entailment": "your", "neutral": "these", "contradiction": "jobs"})
        monkeypatch.chdir(tmp_path)
        result = invoke(
            runner,
            "evaluate",
            str(release),
            "--unverified",
            "--model",
            stub.name,
            "--model",
            str(server.folder),
            "--no-cache",
            "--json",
            "s.json",
        )
    finally:
        stub.stop()
    assert result.exit_code == 0, result.output
    models = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))["models"]
    remote, local = models[stub.name], models[str(server.folder)]
    assert "log-likelihood" in remote["asked"]["mode"] and remote["asked"]["served"]["model"] == "gpt2"
    assert "unparseable" not in remote["asked"]

    def figures(measures: dict) -> dict:
        return {k: v for k, v in measures.items() if isinstance(v, (int, float))}

    for mine, theirs in [
        (local["overall"], remote["overall"]),
        *((local["by_subtopic"][s], remote["by_subtopic"][s]) for s in local["by_subtopic"]),
    ]:
        assert figures(theirs) == pytest.approx(figures(mine), abs=1e-3)  # the same labels, asked the same way
    assert 0 < local["overall"]["accuracy"] < 100


# -- addresses ------------------------------------------------------------------------------------
def test_nothing_listening_or_a_wrong_address_is_one_line_and_quick(server, tmp_path, runner, monkeypatch):
    release = nli_release(tmp_path / "loose")
    monkeypatch.chdir(tmp_path)
    for name, said in (
        (f"http://127.0.0.1:{free_port()}/v1#m", "cannot reach"),
        (f"http://127.0.0.1:{server.port}/nothing/here#m", "no OpenAI-compatible API"),
    ):
        start = time.monotonic()
        result = invoke(runner, "evaluate", str(release), "--unverified", "--model", name, "--no-cache")
        assert time.monotonic() - start < 20
        assert result.exit_code == 2 and isinstance(result.exception, ModelError), result.output
        assert said in str(result.exception) and "\n" not in str(result.exception)
    result = invoke(
        runner,
        "evaluate",
        str(release),
        "--unverified",
        "--no-cache",
        "--model",
        f"http://user:{KEY}@127.0.0.1:{server.port}/v1#m",
    )
    assert result.exit_code == 2 and isinstance(result.exception, InputError)
    assert KEY not in str(result.exception) and "must not hold a user, a key or a query" in str(result.exception)


def test_the_filter_refuses_a_judge_asked_by_generation(server):
    from workbench.kinds.nli.classifier import classifier_factory, resolve_classifiers
    from workbench.kinds.nli.served_judge import refuse_in_filter

    ((ref, labels),) = resolve_classifiers([server.name], root=None)
    factory = classifier_factory(ref, labels, 8)
    assert factory.mode == "generation"
    with pytest.raises(ModelError, match="the filter needs one for every pair"):
        refuse_in_filter(factory)


def test_honest_by_generation_scores_a_served_model_as_the_checkpoint(server, tmp_path):
    """HONEST's completions from the server (its tokenizer adds BOS, as the local rule does)
    give the local checkpoint's completions and figures; the JSON says the prompt went as text."""
    from test_honest_generation import run, write_lexicon, write_templates

    templates = write_templates(tmp_path / "templates.tsv")
    lexicon, _ = write_lexicon(tmp_path / "lexicon.tsv")
    local, local_items = run(server.folder, templates, lexicon, [1], max_new_tokens=6)
    served, served_items = run(server.name, templates, lexicon, [1], max_new_tokens=6)
    assert [i["fills"] for i in served_items] == [i["fills"] for i in local_items]
    mine = served["models"][server.name]
    assert mine["model_kind"] == "served" and mine["overall"] == local["models"][str(server.folder)]["overall"]
    assert "as text" in mine["completions"]["prompt"]
