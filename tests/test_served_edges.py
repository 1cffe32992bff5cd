"""Served models at their edges (models/served.py): a server that is wrong, slow, huge, hostile or
changes its weights, played by a stub OpenAI-compatible server in this process (127.0.0.1, and
127.0.0.2 as "another host"), stopped after each test. Each case: the key goes nowhere else and
shows nowhere, garbage is refused in one line and never cached, every request is bounded, and
answers are cached by what the weights answer rather than by the name they go by."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from workbench.core.errors import InputError, ModelError

KEY = "sk-edge-Very-Secret-7f3a9c01d2e4b5a6c7d8e9f0"


def words(text: str) -> list[str]:
    """The stub's tokens: each word with the spaces before it (they cover the text)."""
    return re.findall(r"\s*\S+", text)


def logprob(token: str, weights: str) -> float:
    """The stub's ln P of a token: it depends on the weights, so other weights answer otherwise."""
    return -float(len(token) % 5 + 1) * (0.5 if weights == "A" else 0.25)


class Stub:
    """An OpenAI-compatible server on `host`: GET /v1/models lists `listed`; POST /v1/completions
    answers echo requests with per-word log-probabilities (`logprob`) and others with a text that
    names the `weights`; /v1/chat/completions the same text. `garbage`, when set, replaces the
    last prompt log-probability (or the text) of every answer but the probe's. `route(handler,
    method, path, body)` may answer a request itself (it returns True then). It records each
    request's (method, path, Authorization header, body) in `seen`, its connections in
    `connections`."""

    def __init__(self, host: str = "127.0.0.1"):
        from workbench.models.served import PROBE

        self.weights, self.listed, self.garbage, self.route, self.answer_as = "A", [{"id": "m"}], None, None, None
        self.seen: list = []
        self.connections = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def setup(self):
                stub.connections += 1
                super().setup()

            def reply(self, status: int, doc, headers: dict | None = None) -> None:
                data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.handle_one(None)

            def do_POST(self):
                self.handle_one(json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0))))

            def handle_one(self, body):
                stub.seen.append((self.command, self.path, self.headers.get("Authorization"), body))
                if stub.route is not None and stub.route(self, self.command, self.path, body):
                    return
                if self.command == "GET":
                    self.reply(200, {"object": "list", "data": stub.listed})
                    return
                model = stub.answer_as if stub.answer_as is not None else body["model"]
                if self.path == "/v1/chat/completions":
                    text = stub.garbage if stub.garbage is not None else f" weights {stub.weights}"
                    message = {"role": "assistant", "content": text}
                    self.reply(200, {"model": model, "choices": [{"message": message, "finish_reason": "stop"}]})
                    return
                prompt, garbage = body["prompt"], stub.garbage if body["prompt"] != PROBE else None
                if not body.get("echo"):
                    text = garbage if garbage is not None else f" weights {stub.weights}"
                    self.reply(200, {"model": model, "choices": [{"text": text, "finish_reason": "length"}]})
                    return
                tokens = words(prompt)
                values = [None] + [logprob(t, stub.weights) for t in tokens[1:]]
                if garbage is not None:
                    values[-1] = garbage
                new = f" weights {stub.weights}"  # what the weights complete the prompt with
                logprobs = {"tokens": [*tokens, new], "token_logprobs": [*values, -0.1]}
                choice = {"text": prompt + new, "logprobs": logprobs, "finish_reason": "length"}
                usage = {"prompt_tokens": len(tokens)}
                self.reply(200, {"model": model, "choices": [choice], "usage": usage})

        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.host, self.port = host, self.httpd.server_address[1]
        self.base = f"http://{host}:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def posts(self, echo: bool | None = None) -> int:
        """How many POSTs came, other than the probe's (of echo requests only, or of others)."""
        from workbench.models.served import PROBE

        return sum(
            1
            for method, _, _, body in self.seen
            if method == "POST"
            and body.get("prompt") != PROBE
            and (echo is None or bool(body.get("echo")) == echo)
            and not (body.get("messages") or [{}])[0].get("content") == PROBE
        )

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.stop()


@pytest.fixture(autouse=True)
def _quick(monkeypatch):
    """Short bounds, so a case that fails fails fast; no key unless a test sets one."""
    monkeypatch.setenv("WORKBENCH_SERVED_TIMEOUT", "20")
    monkeypatch.setenv("WORKBENCH_SERVED_RETRIES", "1")
    for variable in ("WORKBENCH_API_KEY", "OPENAI_API_KEY", "WORKBENCH_SERVED_MAX_BYTES"):
        monkeypatch.delenv(variable, raising=False)


def open_model(name: str, cache=None, **options):
    from workbench.models.served import open_served

    return open_served(name, cache, backoff=0.05, **options)


def entries(path) -> int:
    return sqlite3.connect(path).execute("SELECT COUNT(*) FROM entries").fetchone()[0]


TEXTS = [("Q: is it so? yes", 4), ("Q: is it so? no", 3), ("Another context here: maybe", 6)]


def expected(weights: str) -> list[float]:
    return [logprob(words(text)[-1], weights) for text, _ in TEXTS]


# -- 1. secrets -----------------------------------------------------------------------------------
def test_a_redirect_to_another_origin_is_refused_and_the_key_never_goes_there(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    elsewhere = Stub("127.0.0.2")
    other_port = Stub()
    try:
        for target in (elsewhere, other_port):  # another host; the same host on another port
            stub.route = moved_to(f"{target.base}/models")
            with pytest.raises(ModelError) as refused:
                open_model(f"{stub.base}#m")
            message = str(refused.value)
            assert "redirected GET" in message and f"{target.host}:{target.port}" in message and "\n" not in message
            assert KEY not in message
            assert target.seen == []  # nothing went there, key or not

        def same_origin(handler, method, path, body):  # a redirect within the origin is followed, key and all
            if path == "/v1/models":
                handler.reply(307, b"", {"Location": "/v1/models-here"})
                return True
            if path == "/v1/models-here":
                handler.reply(200, {"data": [{"id": "m"}]})
                return True
            return False

        stub.route = same_origin
        assert open_model(f"{stub.base}#m").continuation_logprobs(TEXTS[:1]) == expected("A")[:1]
        assert {auth for _, _, auth, _ in stub.seen} == {f"Bearer {KEY}"}
        stub.route = moved_to(f"https://127.0.0.1:{stub.port}/v1/models")  # the same host and port, another scheme
        with pytest.raises(ModelError, match=f"redirected GET to https://127.0.0.1:{stub.port}, another address"):
            open_model(f"{stub.base}#m")
    finally:
        elsewhere.stop()
        other_port.stop()


def moved_to(url: str):
    def moved(handler, method, path, body):
        if path == "/v1/models":
            handler.reply(302, b"", {"Location": url})
            return True
        return False

    return moved


def test_a_redirect_from_https_to_http_is_refused_by_the_opener(monkeypatch):
    """https to http on the same host and port: the key would go in clear. Asked of the opener's
    redirect step itself (no TLS server here to start one from)."""
    import io
    import urllib.request

    from workbench.models.served import _opener

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    base = "https://127.0.0.1:8443/v1"
    step = next(h for h in _opener(base).handlers if isinstance(h, urllib.request.HTTPRedirectHandler))
    request = urllib.request.Request(f"{base}/models", headers={"Authorization": f"Bearer {KEY}"})
    with pytest.raises(ModelError, match="redirected GET to http://127.0.0.1:8443, another address") as refused:
        step.redirect_request(request, io.BytesIO(), 302, "Found", {}, "http://127.0.0.1:8443/v1/models")
    assert KEY not in str(refused.value)
    same = step.redirect_request(request, io.BytesIO(), 302, "Found", {}, "https://127.0.0.1:8443/v1/models-too")
    assert same.full_url.endswith("/models-too") and same.get_header("Authorization") == f"Bearer {KEY}"


def key_runs(text: str, key: str = KEY, n: int = 8) -> list[str]:
    """Every run of n characters of the key found in the text, case aside."""
    low = text.lower()
    return [key[i : i + n] for i in range(len(key) - n + 1) if key[i : i + n].lower() in low]


def test_an_echoed_key_is_scrubbed_before_the_text_is_cut_in_any_case_and_in_part(stub, monkeypatch):
    monkeypatch.setenv("WORKBENCH_API_KEY", KEY)
    echoes = [
        "x" * 190 + f" your key {KEY} is not valid",  # the old cut fell inside the key
        f"bad key {KEY.upper()}",
        f"bad key {KEY.lower()[3:30]}...",
        json.dumps({"error": {"message": "a" * 170 + KEY.swapcase()}}),
    ]
    for echo in echoes:

        def refuse(handler, method, path, body, echo=echo):
            handler.reply(401, echo.encode())
            return True

        stub.route = refuse
        with pytest.raises(ModelError) as refused:
            open_model(f"{stub.base}#m")
        message = str(refused.value)
        assert "HTTP 401" in message and "is not accepted" in message
        assert key_runs(message) == [], message


@pytest.mark.parametrize("variable", ["WORKBENCH_API_KEY", "OPENAI_API_KEY"])
@pytest.mark.parametrize("bad", ["sk-first-half\nsecond-half-9f8e7d", "sk-тест-ключ-123456789", "sk-a\tb-1234567890"])
def test_a_key_no_header_can_carry_is_refused_without_showing_it(stub, monkeypatch, variable, bad):
    monkeypatch.setenv(variable, bad)
    with pytest.raises(InputError) as refused:
        open_model(f"{stub.base}#m")
    message = str(refused.value)
    assert variable in message and "\n" not in message
    assert key_runs(message, bad, 6) == [] and stub.seen == []


# -- 2. no garbage --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "garbage, shown",
    [
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (2.5, "2.5"),
        ("1e308", '"1e308"'),
        ("-0.5", '"-0.5"'),
        ([-1.0], "[-1.0]"),
        ({"logprob": -1.0}, '{"logprob": -1.0}'),
        (True, "true"),
    ],
)
def test_a_log_probability_that_is_none_is_refused_in_one_line_and_never_cached(stub, tmp_path, garbage, shown):
    cache = tmp_path / "c.sqlite"
    stub.garbage = garbage
    with pytest.raises(ModelError) as refused:
        open_model(f"{stub.base}#m", cache).continuation_logprobs(TEXTS)
    message = str(refused.value)
    assert "\n" not in message and "log-probability" in message and message.endswith(shown), message
    assert entries(cache) == 0

    stub.garbage = None  # the server is mended: a new run asks again and gets the right answers
    before = stub.posts()
    assert open_model(f"{stub.base}#m", cache).continuation_logprobs(TEXTS) == expected("A")
    assert stub.posts() - before == len(TEXTS)


def test_garbage_in_the_probe_is_refused_when_the_model_is_opened(stub):
    from workbench.models.served import PROBE

    def bad_probe(handler, method, path, body):
        if method == "POST" and body.get("prompt") == PROBE:
            handler.reply(
                200,
                {"choices": [{"text": "", "logprobs": {"tokens": ["a", "b"], "token_logprobs": [None, float("nan")]}}]},
            )
            return True
        return False

    stub.route = bad_probe
    with pytest.raises(ModelError, match="not a finite number at most 0: NaN$"):
        open_model(f"{stub.base}#m")


@pytest.mark.parametrize("text", [{"content": "yes"}, 42, ["yes"], True])
@pytest.mark.parametrize("chat", [False, True])
def test_a_text_that_is_not_a_string_is_refused_in_one_line_and_never_cached(stub, tmp_path, text, chat):
    from workbench.models.generation import GenerationSettings, generate

    cache = tmp_path / "c.sqlite"
    settings = GenerationSettings(max_new_tokens=4, chat_template=chat)
    model = open_model(f"{stub.base}#m", cache)
    stub.garbage = text
    with pytest.raises(ModelError) as refused:
        generate(model, ["Hello", "There"], settings)
    assert "\n" not in str(refused.value) and "not a string" in str(refused.value)
    assert str(refused.value).endswith(json.dumps(text))
    assert entries(cache) == 0
    stub.garbage = None
    assert [g.text for g in generate(open_model(f"{stub.base}#m", cache), ["Hello"], settings)] == [" weights A"]


def test_a_token_that_is_not_a_string_is_refused(stub, tmp_path):
    def numbers(handler, method, path, body):
        if method == "POST" and body["prompt"] == TEXTS[0][0]:
            logprobs = {"tokens": [1, 2, 3], "token_logprobs": [None, -1.0, -2.0]}
            handler.reply(200, {"choices": [{"text": "", "logprobs": logprobs}], "usage": {"prompt_tokens": 2}})
            return True
        return False

    model = open_model(f"{stub.base}#m", tmp_path / "c.sqlite")
    stub.route = numbers
    with pytest.raises(ModelError, match="a token that is not a string: 1$"):
        model.continuation_logprobs(TEXTS[:1])
    assert entries(tmp_path / "c.sqlite") == 0


def test_an_answer_for_another_model_is_refused(stub, tmp_path):
    from workbench.models.generation import GenerationSettings, generate

    stub.listed = [{"id": "m", "root": "/weights/m"}]
    for name in ("m@main", "m-2024-07-18", "/weights/m", "m"):  # the model, as servers name it back
        stub.answer_as = name
        assert generate(open_model(f"{stub.base}#m"), ["Hi"], GenerationSettings(max_new_tokens=2))[0].text
    model = open_model(f"{stub.base}#m", tmp_path / "c.sqlite")
    for name in ("other-model", "m2", "", 7):
        stub.answer_as = name
        with pytest.raises(ModelError) as refused:
            generate(model, ["Hi"], GenerationSettings(max_new_tokens=2))
        assert f"as model {json.dumps(name)}, not the 'm' asked" in str(refused.value)
    assert entries(tmp_path / "c.sqlite") == 0


def test_a_chat_template_that_renders_empty_is_one_line(fixture_models, tmp_path):
    import shutil

    from transformers import AutoTokenizer

    from workbench.models.generation import GenerationSettings, generate
    from workbench.models.lm_loading import load_scorer

    folder = shutil.copytree(fixture_models["clm-gpt2"], tmp_path / "gpt2")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = "{% if false %}{{ messages }}{% endif %}"
    tokenizer.save_pretrained(folder)
    with pytest.raises(ModelError, match="renders the prompt 'Hello' as nothing") as refused:
        generate(load_scorer(str(folder)), ["Hello"], GenerationSettings(max_new_tokens=2, chat_template=True))
    assert "\n" not in str(refused.value)


# -- 3. bounded -----------------------------------------------------------------------------------
def test_a_server_sending_a_byte_at_a_time_meets_the_deadline(stub, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SERVED_TIMEOUT", "1.5")
    monkeypatch.setenv("WORKBENCH_SERVED_RETRIES", "0")
    sent = threading.Event()

    def trickle(handler, method, path, body):  # each byte well within a socket's timeout, never the whole
        data = json.dumps({"object": "list", "data": [{"id": "m"}], "pad": "x" * 300}).encode()
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        try:
            for byte in data:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                sent.set()
                time.sleep(0.2)
        except OSError:
            pass
        return True

    stub.route = trickle
    start = time.monotonic()
    with pytest.raises(ModelError, match="no full answer within 1.5 s") as refused:
        open_model(f"{stub.base}#m")
    assert sent.is_set() and time.monotonic() - start < 10, time.monotonic() - start  # all of it: over a minute
    assert "\n" not in str(refused.value)


def test_the_deadline_holds_for_all_the_tries_of_a_request(stub, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SERVED_TIMEOUT", "1")
    monkeypatch.setenv("WORKBENCH_SERVED_RETRIES", "8")

    def silent(handler, method, path, body):
        time.sleep(30)
        return True

    stub.route = silent
    start = time.monotonic()
    with pytest.raises(ModelError, match="stopped answering"):
        open_model(f"{stub.base}#m")
    assert time.monotonic() - start < 6  # 9 tries of 1 s each, and the waits between, took over 20 s


def test_client_side_errors_are_not_retried_and_408_is(stub, monkeypatch):
    monkeypatch.setenv("WORKBENCH_SERVED_RETRIES", "3")
    with pytest.raises(ModelError, match="TLS failed") as refused:  # https:// to a plain http server
        open_model(f"https://127.0.0.1:{stub.port}/v1#m")
    assert stub.connections == 1 and "\n" not in str(refused.value)

    with pytest.raises(InputError, match="holds a space"):
        open_model(f"http://127.0.0.1:{stub.port}/v1 /x#m")
    assert stub.connections == 1

    timeouts = []

    def timeout_once(handler, method, path, body):
        if not timeouts:
            timeouts.append(path)
            handler.reply(408, {"error": {"message": "request timeout"}})
            return True
        return False

    stub.route = timeout_once
    assert open_model(f"{stub.base}#m").continuation_logprobs(TEXTS[:1]) == expected("A")[:1]
    assert timeouts == ["/v1/models"]


def test_a_run_ends_at_its_own_deadline_and_keeps_what_came(stub, tmp_path, monkeypatch):
    from workbench.models.served import PROBE

    monkeypatch.setenv("WORKBENCH_SERVED_RUN_TIMEOUT", "2")
    monkeypatch.setenv("WORKBENCH_SERVED_WORKERS", "1")

    def slow(handler, method, path, body):
        if method == "POST" and body.get("prompt") != PROBE:
            time.sleep(0.3)
        return False

    stub.route = slow
    texts = [(f"Context number {i}: yes", 4) for i in range(20)]  # 6 s of answers, one at a time
    cache = tmp_path / "c.sqlite"
    start = time.monotonic()
    with pytest.raises(ModelError, match="WORKBENCH_SERVED_RUN_TIMEOUT") as stopped:
        open_model(f"{stub.base}#m", cache).continuation_logprobs(texts)
    assert time.monotonic() - start < 4.5 and "(kept in the cache: a rerun asks only for the rest)" in str(
        stopped.value
    )
    kept = entries(cache)
    assert 0 < kept < len(texts)
    monkeypatch.delenv("WORKBENCH_SERVED_RUN_TIMEOUT")
    asked = stub.posts()
    assert len(open_model(f"{stub.base}#m", cache).continuation_logprobs(texts)) == len(texts)
    assert stub.posts() - asked == len(texts) - kept


@pytest.mark.parametrize("length", [True, False])
def test_an_answer_over_the_size_cap_is_refused_in_one_line(stub, monkeypatch, length):
    monkeypatch.setenv("WORKBENCH_SERVED_MAX_BYTES", str(2**20))
    data = json.dumps({"object": "list", "data": [{"id": "m"}], "pad": "x" * 3 * 2**20}).encode()

    def huge(handler, method, path, body):
        handler.send_response(200)
        if length:
            handler.send_header("Content-Length", str(len(data)))
        else:
            handler.send_header("Connection", "close")  # the body ends when the connection does
        handler.end_headers()
        try:
            handler.wfile.write(data)
        except OSError:
            pass
        handler.close_connection = True
        return True

    stub.route = huge
    with pytest.raises(ModelError, match=r"more than 1048576 bytes: refused \(raise WORKBENCH_SERVED_MAX_BYTES") as e:
        open_model(f"{stub.base}#m")
    assert "\n" not in str(e.value)


# -- 4. identity ----------------------------------------------------------------------------------
def test_new_weights_behind_the_same_name_are_asked_again(stub, tmp_path):
    cache = tmp_path / "c.sqlite"
    first = open_model(f"{stub.base}#m", cache)
    assert first.continuation_logprobs(TEXTS) == expected("A") and stub.posts() == len(TEXTS)
    assert open_model(f"{stub.base}#m", cache).continuation_logprobs(TEXTS) == expected("A")
    assert stub.posts() == len(TEXTS)  # the same weights: all from the cache

    stub.weights = "B"  # new weights, the same name
    second = open_model(f"{stub.base}#m", cache)
    assert second.continuation_logprobs(TEXTS) == expected("B") and stub.posts() == 2 * len(TEXTS)
    assert second.revision != first.revision and second.revision.startswith("served:m probe:")
    identity = second.runtime.record()["served"]["identity"]
    assert identity["probe"]["sha256"] and "by the probe" in identity["verified"]


def test_the_same_weights_listed_or_not_share_one_key(stub, tmp_path):
    from workbench.models.generation import GenerationSettings, generate

    cache = tmp_path / "c.sqlite"
    stub.listed = [{"id": "other"}]  # the server has not loaded m yet: it loads it on demand
    before = open_model(f"{stub.base}#m", cache)
    texts = generate(before, ["one", "two", "three"], GenerationSettings(max_new_tokens=3))
    stub.listed = [{"id": "other"}, {"id": "m", "root": "/models/m", "created": int(time.time())}]
    after = open_model(f"{stub.base}#m", cache)  # loaded now: listed, with a root
    asked = stub.posts()
    assert generate(after, ["one", "two", "three"], GenerationSettings(max_new_tokens=3)) == texts
    assert stub.posts() == asked and after.revision == before.revision
    assert after.runtime.record()["served"]["server_model"] == "m root=/models/m"


def test_a_pinned_revision_keys_the_answers_and_is_said_unverified(stub, tmp_path):
    cache = tmp_path / "c.sqlite"
    model = open_model(f"{stub.base}#m@v1", cache)
    assert model.continuation_logprobs(TEXTS) == expected("A")
    assert {body["model"] for method, _, _, body in stub.seen if method == "POST"} == {"m"}
    assert model.revision == "served:m@v1"
    record = model.runtime.record()
    assert record["revision"] == "served:m@v1" and "not checked" in record["served"]["identity"]["verified"]
    stub.weights = "B"  # the user's pin is taken as given
    assert open_model(f"{stub.base}#m@v1", cache).continuation_logprobs(TEXTS) == expected("A")
    assert stub.posts() == len(TEXTS)


def test_a_server_that_refuses_every_probe_is_said_unverified(stub):
    def no_probe(handler, method, path, body):
        if method == "POST":
            handler.reply(400, {"error": {"message": "no such thing"}})
            return True
        return False

    stub.route = no_probe
    model = open_model(f"{stub.base}#m")
    assert model.revision == "served:m (weights not verified)"
    identity = model.runtime.record()["served"]["identity"]
    assert identity["probe"]["sha256"] is None and identity["verified"].startswith("no: the server refused every probe")
    assert "HTTP 400" in model.logprobs_problem()


# -- the same through `workbench evaluate` --------------------------------------------------------
@pytest.mark.parametrize("case", ["redirect elsewhere", "key with a line break", "NaN log-probabilities"])
def test_evaluate_ends_in_one_line_and_caches_nothing(stub, tmp_path, runner, monkeypatch, case):
    from conftest import invoke
    from test_served import nli_release

    release = nli_release(tmp_path / "loose")
    (tmp_path / "workbench.toml").write_text(
        '[project]\nname = "edges"\n[llm]\nanswers = { entailment = "yes", neutral = "maybe", contradiction = "no" }\n'
        'mode = "log-likelihood"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    key = "sk-evaluate\nsecret-0123456789" if case == "key with a line break" else KEY
    monkeypatch.setenv("OPENAI_API_KEY", key)
    elsewhere = Stub("127.0.0.2")
    if case == "redirect elsewhere":
        stub.route = lambda handler, method, path, body: (
            path == "/v1/models" and (handler.reply(301, b"", {"Location": f"{elsewhere.base}/models"}) or True)
        )
    if case == "NaN log-probabilities":
        stub.garbage = float("nan")
    try:
        result = invoke(
            runner, "evaluate", str(release), "--unverified", "--model", f"{stub.base}#m", "--cache", "c.sqlite"
        )
    finally:
        elsewhere.stop()
    assert result.exit_code == 2, result.output
    message = str(result.exception)
    assert "\n" not in message and key_runs(message, key, 6) == [] and key_runs(result.output, key, 6) == []
    assert elsewhere.seen == []
    assert not (tmp_path / "c.sqlite").exists() or entries(tmp_path / "c.sqlite") == 0
    said = {
        "redirect elsewhere": "redirected GET",
        "key with a line break": "OPENAI_API_KEY holds a control character",
        "NaN log-probabilities": "not a finite number at most 0: NaN",
    }
    assert said[case] in message


@pytest.mark.parametrize(
    "sent, said",
    [
        (
            b"SSH-2.0-OpenSSH_9.6\r\n",
            "BadStatusLine: SSH-2.0-OpenSSH_9.6",
        ),  # not HTTP: its line break was the message's
        (
            b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"data": [{"id": "m"}]}',
            "the answer was cut short (23 bytes",
        ),
    ],
)
def test_an_answer_that_is_not_http_or_cut_short_is_one_line(stub, sent, said):
    def raw(handler, method, path, body):
        handler.wfile.write(sent)
        handler.wfile.flush()
        handler.close_connection = True
        return True

    stub.route = raw
    with pytest.raises(ModelError) as refused:
        open_model(f"{stub.base}#m")
    assert said in str(refused.value) and "stopped answering" in str(refused.value)
    assert "\n" not in str(refused.value) and len(stub.seen) == 2  # retried once, as a failure on the way


def test_a_judge_asked_in_its_chat_template_sends_chat_completions_and_caches_apart(stub, tmp_path):
    """[llm] chat_template (or --apply-chat-template) asks a served judge by chat completions: the
    system instruction, then the prompt as the user's turn, no echo request (chat completions give
    no prompt log-probabilities, so "auto" asks by generation and "log-likelihood" is refused in
    one line); its answers are filed apart from those of the same judge asked without it."""
    from workbench.core.cache import Cache
    from workbench.kinds.nli.classifier import classifier_factory, predict_all
    from workbench.kinds.nli.llm_judge import Asking
    from workbench.kinds.nli.served_judge import served_ref
    from workbench.models.served import PROBE

    def answer_neither(handler, method, path, body):
        if path == "/v1/chat/completions" and body["messages"][-1]["content"] != PROBE:  # not the probe
            message = {"role": "assistant", "content": "Neither, I think."}
            handler.reply(200, {"model": body["model"], "choices": [{"message": message, "finish_reason": "stop"}]})
            return True
        return False

    stub.route = answer_neither
    ref = served_ref(f"{stub.base}#m")
    chat = Asking(chat_template=True, system_instruction="Judge fairly.")
    pairs = [("The nurse is tired.", "The nurse is tired"), ("A cook sings.", "Someone sings")]
    factory = classifier_factory(ref, [], 8, "cpu", chat)
    assert factory.mode == "generation"
    cache = Cache(tmp_path / "c.sqlite")
    try:
        found = predict_all(cache, ref, pairs, factory)
        assert [p.label for p in found] == ["neutral", "neutral"]
        sent = [body for method, path, _, body in stub.seen if path == "/v1/chat/completions" and method == "POST"]
        asked = [b["messages"] for b in sent if b["messages"][-1]["content"] != PROBE]
        assert sorted(asked, key=str) == sorted(
            (
                [{"role": "system", "content": "Judge fairly."}, {"role": "user", "content": chat.render(p, h)}]
                for p, h in pairs
            ),
            key=str,
        )  # the requests go concurrently: in any order
        assert stub.posts(echo=True) == 0  # no log-likelihood request
        described = factory.describe()
        assert described["chat_template"] is True and described["system_instruction"] == "Judge fairly."
        plain = classifier_factory(ref, [], 8, "cpu", Asking(mode="generation"))
        assert plain.cache_revision != factory.cache_revision
        before = len(stub.seen)
        predict_all(cache, ref, pairs, plain)  # nothing of the chat run is read for it
        assert sum(1 for _, path, _, _ in stub.seen[before:] if path == "/v1/completions") == 2
    finally:
        cache.close()
    with pytest.raises(ModelError, match="chat completions, which give no prompt log-probabilities") as refused:
        classifier_factory(ref, [], 8, "cpu", Asking(mode="log-likelihood", chat_template=True))
    assert "\n" not in str(refused.value)
