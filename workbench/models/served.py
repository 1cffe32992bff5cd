"""Any OpenAI-compatible server as a model, named `http(s)://HOST:PORT/v1#MODEL`.

Big models run where the accelerators are (vLLM, TGI, llama.cpp, `transformers serve`); an
evaluation needs only what the server's API answers. Two questions are put to it:

- generation: POST /completions with the prompt as text (lm-evaluation-harness's
  local-completions), or POST /chat/completions when the settings ask for a chat template (the
  server applies its own). The shared `GenerationSettings` become the request: greedy is
  temperature 0; max_new_tokens is max_tokens; stop strings are sent and the text is also cut
  before the first one here (servers differ in whether they keep it); top_p and seed are sent
  when sampling. Each answer is a `generation.Generation` whose token_ids are empty: the
  server's tokens are its own. `generation.generate` hands a served model to `generate` here.
- log-likelihood of a continuation: POST /completions with echo=true, logprobs=1 and
  max_tokens=1 (lm-eval's way) returns the prompt's tokens with their log-probabilities where
  the server computes them (vLLM's does; `transformers serve` ignores both fields). The
  continuation's tokens are the prompt's last tokens that cover its characters. Whether the
  server gives them is probed once, with one short prompt (`logprobs_problem`); a run that
  needs them is refused in one line naming what the server lacks (`require_logprobs`).

Requests go out a few at a time (a thread pool), each with a timeout, and are retried with
exponentially growing waits on connection errors, timeouts, HTTP 429 and 5xx. A server that
cannot be reached at first contact, or refuses a request, or stays away through the retries
mid-run, ends the run with one line (ModelError). Answers are committed to the SQLite cache
(`core.cache.Cache`) one by one as they come, keyed by the model name after '#', the model id
the server reports (and its root where it lists one), the prompt and the decoding settings: a
run cut short keeps what was answered, and a rerun asks only for the rest.

The API key (WORKBENCH_API_KEY, else OPENAI_API_KEY) is sent as a bearer token and kept nowhere
else: it is read from the environment for each request, never stored on an object, never part
of a name, a cache key or a message (any server text an error quotes has it blanked out), and a
model name holding credentials (user:key@host, ?query) is refused before anything is written.

The client's own settings come from the environment, since they describe the connection rather
than the model: WORKBENCH_SERVED_WORKERS (requests at a time, default 4),
WORKBENCH_SERVED_TIMEOUT (seconds per request, default 300) and WORKBENCH_SERVED_RETRIES
(retries of a failed request, default 3; the waits start at 0.5 s and double).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import math
import os
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError, ModelError
from .generation import Generation, GenerationSettings
from .lm_scoring import _key

KEY_VARIABLES = ("WORKBENCH_API_KEY", "OPENAI_API_KEY")
GENERATED = "served-generate"  # the cache's namespace of generated texts
LIKELIHOODS = "served-loglik"  # ... and of continuations' log-likelihoods
PROBE = "The cat sat on the mat."  # the one prompt the log-probability probe sends
Progress = Callable[[int], None] | None


def is_served(name) -> bool:
    """Whether a model name names a server (`http(s)://...`) or a checkpoint run by vLLM in this
    process (`vllm:MODEL`, models/vllm_model.py: the same calls) rather than a checkpoint."""
    return isinstance(name, str) and name.strip().lower().startswith(("http://", "https://", "vllm:"))


def _api_key() -> str | None:
    for variable in KEY_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value:
            return value
    return None


def _scrub(text: str) -> str:
    """`text` with the API key blanked out: a server may echo a request's headers in an error."""
    key = _api_key()
    return text.replace(key, "***") if key else text


def _env_number(variable: str, default, cast, least):
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = cast(raw)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < least:
        raise InputError(f"{variable}={raw!r}: give a number of at least {least}")
    return value


@dataclass(frozen=True)
class Endpoint:
    """Where a served model answers: `base` is the API's root (…/v1), `model` the name after '#'
    (None: the one model the server lists)."""

    base: str
    model: str | None

    @property
    def shown(self) -> str:
        return f"{self.base}#{self.model}" if self.model else self.base


def parse(name: str) -> Endpoint:
    """The endpoint a served model's name gives; an InputError for a name that is no URL or that
    holds credentials (a name is written into outputs and caches; a key belongs in the environment)."""
    url, _, model = name.strip().partition("#")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 -- raises on a port that is not a number
    except ValueError as exc:
        raise InputError(f"served model {parts_shown(url)}: not a URL ({exc})") from None
    if parts.username is not None or parts.password is not None or parts.query:
        raise InputError(
            f"served model {parts.scheme}://{parts.hostname or '?'}: a model name must not hold a user, a "
            "key or a query (it is written into outputs): give http(s)://HOST:PORT/v1#MODEL and the key "
            f"in {' or '.join(KEY_VARIABLES)}"
        )
    if not parts.hostname:
        raise InputError(f"served model {parts_shown(url)}: no host; give http(s)://HOST:PORT/v1#MODEL")
    path = parts.path.rstrip("/") or "/v1"
    return Endpoint(f"{parts.scheme.lower()}://{parts.netloc}{path}", model.strip() or None)


def parts_shown(url: str) -> str:
    """A URL that failed to parse, shown without anything after an '@' (where a key would be)."""
    return repr(url.rsplit("@", 1)[-1][:80])


def _opener(base: str):
    """An opener that takes no proxy for a loopback host (a local server is reached directly even
    where HTTP_PROXY is set) and the environment's proxies otherwise."""
    host = urllib.parse.urlsplit(base).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    return urllib.request.build_opener(urllib.request.ProxyHandler({})) if loopback else urllib.request.build_opener()


class ServerError(ModelError):
    """A request the server refused (`status`: its HTTP status) or never answered (`status` None)."""

    def __init__(self, message: str, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.status, self.transient = status, transient


def _reason(exc: BaseException, timeout: float) -> tuple[str, bool]:
    """(what went wrong, in words; whether it says that nothing listens there)."""
    inner = exc.reason if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException) else exc
    if isinstance(inner, ConnectionRefusedError):
        return "connection refused", True
    if isinstance(inner, socket.gaierror):
        return "unknown host", True
    if isinstance(inner, (TimeoutError, socket.timeout)):
        return f"no answer within {timeout:g} s", False
    if isinstance(inner, http.client.RemoteDisconnected):
        return "the connection closed without an answer", False
    if isinstance(inner, ConnectionResetError):
        return "connection reset", False
    return f"{type(inner).__name__}: {_scrub(str(inner))[:120]}", False


def _detail(body: bytes) -> str:
    """A server's error text, short: its JSON `detail`, `error.message` or `message`, else its first line."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        found = data.get("detail") or data.get("error") or data.get("message")
        if isinstance(found, dict):
            found = found.get("message") or found
        text = found if isinstance(found, str) else json.dumps(found)
    line = " ".join(text.split())
    return _scrub(line[:200] + ("..." if len(line) > 200 else ""))


@dataclass(frozen=True)
class ServedRuntime:
    """How a served model ran, for the JSON documents (the `runtime.Runtime` record's fields, plus
    the endpoint): its weights, precision and devices are the server's, unknown here."""

    endpoint: str
    model: str
    server_model: str
    revision: str
    workers: int

    @property
    def batch_size(self) -> int:
        return self.workers

    @property
    def tag(self) -> str:
        return "served"

    def record(self) -> dict:
        return {
            "revision": self.revision,
            "dtype": None,
            "device": "server",
            "device_type": "server",
            "batch_size": self.workers,
            "quantization": None,
            "weight_bytes": None,
            "plan": None,
            "served": {"endpoint": self.endpoint, "model": self.model, "server_model": self.server_model},
        }


class ServedModel:
    """A model behind an OpenAI-compatible server: `generate` and `choice_logprobs` /
    `continuation_logprobs`, cached in `cache` (a `core.cache.Cache`, or None)."""

    served = True  # `generation.generate` and the judges tell a served model by it
    kind = "served"

    def __init__(
        self,
        endpoint: Endpoint | str,
        cache=None,
        *,
        workers: int | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        backoff: float = 0.5,
    ):
        self.endpoint = parse(endpoint) if isinstance(endpoint, str) else endpoint
        self.cache = cache
        self.workers = workers or _env_number("WORKBENCH_SERVED_WORKERS", 4, int, 1)
        self.timeout = timeout or _env_number("WORKBENCH_SERVED_TIMEOUT", 300.0, float, 0.001)
        self.retries = retries if retries is not None else _env_number("WORKBENCH_SERVED_RETRIES", 3, int, 0)
        self.backoff = backoff
        self.requests: Counter = Counter()  # requests sent, by path (tests and reports count them)
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set when a run gives up: retries still waiting end at once
        self._opener = _opener(self.endpoint.base)
        self._model: str | None = None  # the name requests carry, once `connect` has looked
        self._revision: str | None = None
        self._logprobs: str | None = None  # "" the server gives prompt log-probabilities; else what it lacks

    def __repr__(self) -> str:
        return f"ServedModel({self.endpoint.shown!r})"

    # -- the connection ---------------------------------------------------------------------------
    def connect(self) -> str:
        """Ask the server once for its models (GET /models): the first contact, where a wrong
        address or a server that is not running is said at once. Returns the revision answers
        are cached under: the model id the server reports, and its root where it lists one."""
        if self._revision is not None:
            return self._revision
        listing = self._call("GET", "/models", None, first=True)
        data = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(data, list):
            raise ModelError(f"{self.endpoint.base}/models answered no model list: is this an OpenAI-compatible API?")
        entries = {str(m["id"]): m for m in data if isinstance(m, dict) and m.get("id") is not None}
        wanted = self.endpoint.model
        if wanted is None:
            if len(entries) != 1:
                listed = ", ".join(list(entries)[:8]) or "none"
                raise InputError(
                    f"served model {self.endpoint.base}: name the model after '#', as "
                    f"{self.endpoint.base}#MODEL (the server lists: {listed})"
                )
            wanted = next(iter(entries))
        entry = entries.get(wanted)
        if entry is None:  # some servers load a model by name on demand; a wrong name is said by the first request
            reported = f"{wanted} (not listed)"
        else:
            root = entry.get("root")
            reported = wanted + (f" root={root}" if isinstance(root, str) and root not in ("", wanted) else "")
        self._model, self._revision = wanted, f"served:{reported}"
        self.listed = list(entries)
        return self._revision

    @property
    def name(self) -> str:
        """The model name answers are filed under: the one after '#' (or the server's only one)."""
        self.connect()
        return self._model

    @property
    def revision(self) -> str:
        return self.connect()

    @property
    def runtime(self) -> ServedRuntime:
        return ServedRuntime(
            self.endpoint.base, self.name, self.revision.removeprefix("served:"), self.revision, self.workers
        )

    def _call(self, method: str, path: str, payload: dict | None, first: bool = False) -> dict:
        """One request, retried on connection errors, timeouts, 429 and 5xx; its JSON answer."""
        url = self.endpoint.base + path
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        where = f"the model server at {self.endpoint.base}"
        delay, tries = self.backoff, 0
        while True:
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            key = _api_key()
            if key:
                headers["Authorization"] = f"Bearer {key}"
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            with self._lock:
                self.requests[path] += 1
            try:
                with self._opener.open(request, timeout=self.timeout) as response:
                    body = response.read()
            except urllib.error.HTTPError as exc:
                status, detail = exc.code, _detail(exc.read() or b"")
                shown = f"HTTP {status}" + (f": {detail}" if detail else "")
                if status in (401, 403):
                    hint = (
                        ("the key in " + " or ".join(KEY_VARIABLES) + " is not accepted")
                        if key
                        else f"it wants an API key: set {' or '.join(KEY_VARIABLES)}"
                    )
                    raise ServerError(f"{where} refused {method} {path} ({shown}): {hint}", status) from None
                if first and status == 404:
                    raise ServerError(
                        f"no OpenAI-compatible API at {self.endpoint.base} ({method} {path}: HTTP 404); "
                        "name the API's root, e.g. http://HOST:PORT/v1#MODEL",
                        status,
                    ) from None
                if status != 429 and status < 500:
                    raise ServerError(f"{where} refused {method} {path} ({shown})", status) from None
                problem = shown
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                problem, nothing_there = _reason(exc, self.timeout)
                if first and nothing_there:
                    raise ServerError(
                        f"cannot reach {where} ({problem}): is it running, and is the address right?"
                    ) from None
            else:
                try:
                    return json.loads(body)
                except ValueError:
                    raise ServerError(f"{where} answered {method} {path} with something that is not JSON") from None
            if tries >= self.retries or self._stop.is_set():
                raise ServerError(f"{where} stopped answering ({problem}; {tries + 1} tries)", transient=True)
            tries += 1
            if self._stop.wait(delay):
                raise ServerError(f"{where} stopped answering ({problem})", transient=True)
            delay *= 2

    def _run(self, jobs: list, ask: Callable, done: Callable[[int, object], None], what: str) -> None:
        """`ask(job)` for every job, `workers` at a time; `done(index, answer)` is called in this
        thread as each answer comes (so the cache, an SQLite connection, is written from here).
        The first failure stops the run: requests not yet sent are dropped, retries waiting end."""
        if not jobs:
            return
        self._stop.clear()
        pool = ThreadPoolExecutor(max_workers=min(self.workers, len(jobs)), thread_name_prefix="served")
        futures = {pool.submit(ask, job): i for i, job in enumerate(jobs)}
        pending, answered = set(futures), 0
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                failed = [f for f in finished if f.exception() is not None]
                for f in finished:  # every answer that came is kept before a failure is raised
                    if f.exception() is None:
                        done(futures[f], f.result())
                        answered += 1
                if failed:
                    raise failed[0].exception()
        except ServerError as exc:
            if exc.transient:
                kept = " (kept in the cache: a rerun asks only for the rest)" if self.cache is not None else ""
                raise ModelError(f"{exc} after {answered} of {len(jobs)} {what} had come back{kept}") from None
            raise ModelError(str(exc)) from None
        finally:
            self._stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            self._stop.clear()

    def _cached(self, namespace: str, keys: list[str]) -> dict:
        return self.cache.get_many(namespace, self.name, self.revision, keys) if self.cache is not None else {}

    def _store(self, namespace: str, items: dict) -> None:
        if self.cache is not None:
            self.cache.put_many(namespace, self.name, self.revision, items)

    def _answers(
        self, namespace: str, keys: list[str], jobs: dict, ask: Callable, on_answer, progress: Progress, what: str
    ) -> list:
        """The answer for every key (duplicates allowed): cached ones read, the rest asked once
        each (`jobs[key]` is what `ask` takes) and stored as they come; `on_answer(i, value)` and
        `progress(n)` are told of each input's answer, cached or new."""
        self.connect()
        found = self._cached(namespace, keys)
        owners: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            owners.setdefault(k, []).append(i)
        out: list = [None] * len(keys)

        def deliver(key: str, value) -> None:
            for i in owners[key]:
                out[i] = value
                if on_answer is not None:
                    on_answer(i, value)
            if progress is not None:
                progress(len(owners[key]))

        for key in owners:
            if key in found:
                deliver(key, found[key])
        missing = [k for k in owners if k not in found]

        def done(j: int, value) -> None:
            self._store(namespace, {missing[j]: value})
            deliver(missing[j], value)

        self._run([jobs[k] for k in missing], ask, done, what)
        return out

    # -- generation -------------------------------------------------------------------------------
    def generate(
        self,
        prompts: Sequence[str],
        settings: GenerationSettings | None = None,
        progress: Progress = None,
        on_answer: Callable[[int, Generation], None] | None = None,
    ) -> list[Generation]:
        """One `Generation` per prompt, in order (see the module's docstring for the request).
        `on_answer(i, generation)` is called as each prompt's answer comes (cached ones first)."""
        settings = settings or GenerationSettings()
        if settings.add_bos:
            raise ModelError(
                f"served model {self.endpoint.shown}: the server encodes the prompt itself, with its "
                "tokenizer's own special tokens; leave add_bos off"
            )
        decoding = {**settings.decoding(), "chat": settings.chat_template, "system": settings.system_prompt}
        keys = [_key("generate", prompt, decoding) for prompt in prompts]
        jobs = dict(zip(keys, prompts))

        def ask(prompt: str) -> dict:
            return self._generate_one(prompt, settings)

        def told(i, value):
            on_answer(i, Generation(value["text"], (), value["stop"]))

        values = self._answers(GENERATED, keys, jobs, ask, told if on_answer else None, progress, "answers")
        return [Generation(v["text"], (), v["stop"]) for v in values]

    def _generate_one(self, prompt: str, settings: GenerationSettings) -> dict:
        body: dict = {"model": self._model, "max_tokens": settings.max_new_tokens}
        if settings.sample:
            body.update(temperature=settings.temperature, top_p=settings.top_p, seed=settings.seed)
        else:
            body["temperature"] = 0
        if settings.stop:
            body["stop"] = list(settings.stop)
        if settings.chat_template:
            head = [{"role": "system", "content": settings.system_prompt}] if settings.system_prompt is not None else []
            body["messages"] = [*head, {"role": "user", "content": prompt}]
            out = self._call("POST", "/chat/completions", body)
        else:
            body["prompt"] = prompt
            out = self._call("POST", "/completions", body)
        try:
            choice = out["choices"][0]
            text = (choice.get("message") or {}).get("content") if settings.chat_template else choice.get("text")
            finish = choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ServerError(f"the model server at {self.endpoint.base} answered without a choice") from None
        text = text or ""
        at = min((i for i in (text.find(s) for s in settings.stop) if i >= 0), default=-1)
        if at >= 0:
            return {"text": text[:at], "stop": "stop"}
        return {"text": text, "stop": "length" if finish == "length" else "eos"}

    # -- log-likelihoods --------------------------------------------------------------------------
    def _likelihood_body(self, text: str) -> dict:
        return {"model": self._model, "prompt": text, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}

    def logprobs_problem(self) -> str | None:
        """None when the server returns prompt log-probabilities; else what it lacks, in words.
        Asked once per model object: one short prompt, one new token."""
        if self._logprobs is None:
            self.connect()
            try:
                out = self._call("POST", "/completions", self._likelihood_body(PROBE))
            except ServerError as exc:
                if exc.status is None or exc.status >= 500 or exc.status in (401, 403, 429):
                    raise ModelError(str(exc)) from None
                self._logprobs = f"its /completions refuses echo=true with logprobs (HTTP {exc.status})"
            else:
                try:
                    _token_logprobs(out)
                    self._logprobs = ""
                except ValueError as exc:
                    self._logprobs = f"its /completions answer to echo=true with logprobs=1 {exc}"
        return self._logprobs or None

    def require_logprobs(self, why: str = "log-likelihoods") -> None:
        """A one-line ModelError when the server gives no prompt log-probabilities."""
        problem = self.logprobs_problem()
        if problem:
            raise ModelError(
                f"served model {self.endpoint.shown} gives no prompt log-probabilities ({problem}); "
                f"{why} need a server that returns them, as vLLM's does"
            )

    def continuation_logprobs(
        self,
        texts: Sequence[tuple[str, int]],
        progress: Progress = None,
        on_answer: Callable[[int, float], None] | None = None,
    ) -> list[float]:
        """For each (text, n): the summed ln P of the prompt tokens that cover the text's last n
        characters (the continuation), each given the tokens before it, as the server tokenizes."""
        self.require_logprobs()
        keys = [_key("loglik", text, int(n)) for text, n in texts]
        jobs = {k: (text, int(n)) for k, (text, n) in zip(keys, texts)}

        def ask(job) -> float:
            text, n = job
            out = self._call("POST", "/completions", self._likelihood_body(text))
            try:
                found = _token_logprobs(out)
            except ValueError as exc:
                raise ServerError(
                    f"the model server at {self.endpoint.base}: its answer to echo=true with logprobs {exc}"
                ) from None
            return _continuation(found, n, text)

        return self._answers(LIKELIHOODS, keys, jobs, ask, on_answer, progress, "log-likelihoods")

    def choice_logprobs(
        self,
        items: Sequence[tuple[str, Sequence[str]]],
        delimiter: str = " ",
        progress: Progress = None,
        on_item: Callable[[int, list[float]], None] | None = None,
    ) -> list[list[float]]:
        """lm-evaluation-harness's multiple-choice log-likelihoods from the server: for each
        (context, choices) the summed ln P of `delimiter + choice` after the context, the
        context's trailing spaces moved to the continuation (as `lm_scoring.choice_logprobs`).
        `on_item(i, values)` is called as each item's choices are all answered."""
        texts, owner = [], []
        for i, (context, choices) in enumerate(items):
            stripped = context.rstrip()
            for choice in choices:
                rest = context[len(stripped) :] + delimiter + choice
                texts.append((stripped + rest, len(rest)))
                owner.append(i)
        values: list[list] = [[None] * len(choices) for _, choices in items]
        slot = [sum(len(c) for _, c in items[:i]) for i in range(len(items))]
        left = [len(choices) for _, choices in items]

        def answered(j: int, value: float) -> None:
            i = owner[j]
            values[i][j - slot[i]] = value
            left[i] -= 1
            if left[i] == 0:
                if on_item is not None:
                    on_item(i, values[i])
                if progress is not None:
                    progress(1)

        self.continuation_logprobs(texts, on_answer=answered)
        return values


def _token_logprobs(out) -> tuple[list[str], list]:
    """(tokens, their ln P) of the echoed prompt in a /completions answer, the generated token
    left out (by the answer's usage.prompt_tokens, else the last); a ValueError saying what is
    missing when the answer has none."""
    try:
        choice = out["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise ValueError("holds no choice") from None
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise ValueError("holds no logprobs")
    tokens, values = logprobs.get("tokens"), logprobs.get("token_logprobs")
    if not isinstance(tokens, list) or not isinstance(values, list) or len(tokens) != len(values) or len(tokens) < 2:
        raise ValueError("holds no echoed prompt tokens with log-probabilities")
    prompt = (out.get("usage") or {}).get("prompt_tokens")
    n = prompt if isinstance(prompt, int) and 0 < prompt <= len(tokens) else len(tokens) - 1
    return [str(t) for t in tokens[:n]], values[:n]


def _continuation(found: tuple[list[str], list], n_chars: int, text: str) -> float:
    """Summed ln P of the last tokens whose text covers the last `n_chars` characters."""
    tokens, values = found
    total, covered = [], 0
    for token, value in zip(reversed(tokens), reversed(values)):
        if covered >= n_chars:
            break
        if value is None:  # the first token has none: the continuation would be the whole text
            raise ModelError(
                f"the server gives no log-probability for the start of {text[-40:]!r}: "
                "the continuation needs a context before it"
            )
        total.append(float(value))
        covered += len(token)
    return math.fsum(total)


def open_served(name: str, cache_path: Path | str | None = None, **options) -> ServedModel:
    """The served model a name gives, connected (its first contact says at once when nothing
    answers there), with the score cache at `cache_path` when given (a `vllm:` name is opened by
    `lm_loading.open_generator`, which takes either)."""
    cache = None
    if cache_path is not None:
        from ..core.cache import Cache

        cache = Cache(Path(cache_path))
    model = ServedModel(parse(name), cache, **options)
    model.connect()
    return model
