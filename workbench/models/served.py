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
  server gives them is told by the probe below (`logprobs_problem`); a run that needs them is
  refused in one line naming what the server lacks (`require_logprobs`).

Which weights answer is told by a probe put when the model is opened: the greedy completion of a
fixed short prompt (PROBE, PROBE_TOKENS tokens; sent with echo=true and logprobs=1, so the same
request says whether the server gives prompt log-probabilities; where that is refused, as a plain
completion, then as a chat message). Its answer, hashed with the
model name the server answers as, is part of the revision answers are cached under
(`served:MODEL probe:HASH`): new weights behind the same name are asked again, and the same
weights keep their answers whether or not the server listed the model yet (what GET /models
reports, id and root, is recorded in the JSON, not keyed: a root appears only once a model is
loaded, and `created` is often the time of the listing). Weights that complete the probe alike
are taken for the same; a server whose greedy answers vary from run to run costs a cache miss,
never a wrong answer. `#MODEL@REVISION` pins the key to a revision the user vouches for instead
(requests carry MODEL, or MODEL@REVISION where the server lists it so); a server that refuses
every probe is keyed by name alone. Either is said in the JSON (`served.identity.verified`).

What a server answers is checked before it is used or cached: a log-probability must be a finite
number at most 0 (LOGPROB_SLACK above it is float rounding), a token and a text strings (a null
text reads as ""), and an answer naming a model must name the one asked (its name, its listed
root, or the name with `@REVISION` or a dated `-2024-07-18` snapshot after it, as
`transformers serve` and OpenAI answer). Anything else ends the run in one line quoting what the
server sent (short, the key scrubbed out), and is never cached: a rerun against a mended server
asks again.

Requests go out a few at a time (a thread pool). Each request, its retries and waits included,
gets `timeout` seconds in all: a timer cuts its sockets at the deadline, so a server that sends
a byte a second ends like one that sends nothing. Retried, with exponentially growing waits: connection
errors, timeouts, HTTP 408, 429 and 5xx; refused at once: other 4xx, TLS failures (an https://
address for a plain http server), a URL no request can carry. An answer over `max_bytes` is
refused, not read on. A server that cannot be reached at first contact, or refuses a request,
or stays away through the retries mid-run, ends the run with one line (ModelError). Answers are
committed to the SQLite cache (`core.cache.Cache`) one by one as they come, keyed by the model
name, the revision above, the prompt and the decoding settings: a run cut short keeps what was
answered, and a rerun asks only for the rest.

The API key (WORKBENCH_API_KEY, else OPENAI_API_KEY) is sent as a bearer token to the origin
(scheme, host and port) the model is named at, and nowhere else: a redirect within it is
followed, one to another origin (another host, port, or https to http) is refused in one line.
It is read from the environment for each request, never stored on an object, never part of a
name, a cache key or a message: any server text an error quotes is scrubbed before it is cut
(the key in any case, and any 8 or more of its characters in a row). A key holding a control
character (a pasted line break) or one outside Latin-1 is refused without being shown, and a
model name holding credentials (user:key@host, ?query) is refused before anything is written.

The client's own settings come from the environment, since they describe the connection rather
than the model: WORKBENCH_SERVED_WORKERS (requests at a time, default 4),
WORKBENCH_SERVED_TIMEOUT (seconds a request may take in all, retries included, default 120),
WORKBENCH_SERVED_RETRIES (retries of a failed request, default 3; the waits start at 0.5 s and
double), WORKBENCH_SERVED_MAX_BYTES (the largest answer read, default 16 MiB) and
WORKBENCH_SERVED_RUN_TIMEOUT (seconds all of a run's requests to the model may take, counted from
when it is opened; unset, none: each request is bounded, and the first that fails ends the run).
"""

from __future__ import annotations

import hashlib
import http.client
import ipaddress
import json
import math
import os
import re
import socket
import ssl
import threading
import time
import unicodedata
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
PROBE = "The cat sat on the mat."  # the one prompt the probe sends (weights' identity, log-probabilities)
PROBE_TOKENS = 8  # how many tokens the probe's greedy completion runs to
MAX_BYTES = 16 * 2**20  # the default cap on one answer's size (WORKBENCH_SERVED_MAX_BYTES)
ERROR_BYTES = 64 * 2**10  # how much of an error's body is read (for the text an error quotes)
LOGPROB_SLACK = 1e-4  # a log-probability up to this above 0 is float rounding (log_softmax in float32)
Progress = Callable[[int], None] | None


def is_served(name) -> bool:
    """Whether a model name names a server (`http(s)://...`) or a checkpoint run by vLLM in this
    process (`vllm:MODEL`, models/vllm_model.py: the same calls) rather than a checkpoint."""
    return isinstance(name, str) and name.strip().lower().startswith(("http://", "https://", "vllm:"))


def _raw_key() -> tuple[str, str] | None:
    """(variable, key) of the first key variable set, unchecked."""
    for variable in KEY_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value:
            return variable, value
    return None


def _api_key() -> str | None:
    """The key to send; an InputError, which never shows it, for one that holds a control character
    (a line break pasted with it) or one outside Latin-1: no HTTP header can carry it as it is."""
    found = _raw_key()
    if found is None:
        return None
    variable, value = found
    if any(unicodedata.category(ch) == "Cc" or ord(ch) > 0xFF for ch in value):
        raise InputError(
            f"{variable} holds a control character (a line break?) or a character outside Latin-1, which an "
            "HTTP header cannot carry: set it to the key alone"
        )
    return value


def _scrub(text: str) -> str:
    """`text` with the API key blanked out, in any case, and with it any run of 8 or more of the
    key's characters in a row (a server may echo a request's headers in an error, whole or cut).
    Call it before cutting a text short: a cut key would no longer be found."""
    found = _raw_key()
    if not found or not text:
        return text
    key = found[1].lower()
    n = min(8, len(key))
    pieces = {key[i : i + n] for i in range(len(key) - n + 1)}
    low = "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)  # one character for one
    hidden = [False] * len(text)
    for i in range(len(text) - n + 1):
        if low[i : i + n] in pieces:
            hidden[i : i + n] = [True] * n
    out = []
    for i, ch in enumerate(text):
        if not hidden[i]:
            out.append(ch)
        elif i == 0 or not hidden[i - 1]:
            out.append("***")
    return "".join(out)


def _shown(value, limit: int = 80) -> str:
    """What a server sent, for a message: as JSON, scrubbed, then cut."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    text = _scrub(" ".join(text.split()))
    return text[:limit] + ("..." if len(text) > limit else "")


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
    (None: the one model the server lists), `pin` the revision a user gave after '@' (None: none)."""

    base: str
    model: str | None
    pin: str | None = None

    @property
    def shown(self) -> str:
        pinned = f"@{self.pin}" if self.pin else ""
        return f"{self.base}#{self.model}{pinned}" if self.model else self.base


def parse(name: str) -> Endpoint:
    """The endpoint a served model's name gives; an InputError for a name that is no URL, that
    holds a space or a control character (no request could carry it), or that holds credentials
    (a name is written into outputs and caches; a key belongs in the environment)."""
    url, _, model = name.strip().partition("#")
    if any(ch.isspace() or unicodedata.category(ch) == "Cc" for ch in url):
        raise InputError(
            f"served model {parts_shown(url)}: the address holds a space or a control character; give "
            "http(s)://HOST:PORT/v1#MODEL"
        )
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
    model, at, pin = model.strip().rpartition("@") if "@" in model else ("", "", model.strip())
    if at and not (model.strip() and pin.strip()):
        raise InputError(f"served model {url}#{model}@{pin}: give #MODEL@REVISION, both named")
    return Endpoint(
        f"{parts.scheme.lower()}://{parts.netloc}{path}",
        (model if at else pin).strip() or None,
        pin.strip() if at else None,
    )


def parts_shown(url: str) -> str:
    """A URL that failed to parse, shown without anything after an '@' (where a key would be)."""
    return repr(url.rsplit("@", 1)[-1][:80])


def _origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the port filled in for http and https: what a key is given for."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the origin the model was named at (the key goes along); refuses
    one to another scheme, host or port in one line: the key is given for that origin alone."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if _origin(newurl) != _origin(req.full_url):
            fp.close()
            scheme, host, port = _origin(newurl)
            raise ServerError(
                f"the model server at {req.full_url.rsplit('/', 1)[0]} redirected {req.get_method()} to "
                f"{scheme}://{host}:{port}, another address: refused, since the API key is sent only where "
                "the model is named; name that address yourself if it is the server you mean"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_watched = threading.local()  # per requesting thread: the sockets its request opened (`ServedModel._exchange`)


class _Watched:
    """A connection that tells the request it serves its socket, so the deadline can cut it."""

    def connect(self):
        super().connect()  # type: ignore[misc]
        sockets = getattr(_watched, "sockets", None)
        if sockets is not None:
            sockets.append(self.sock)  # type: ignore[attr-defined]


class _HTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_HTTPConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_HTTPSConnection, req, context=self._context)  # type: ignore[attr-defined]


def _opener(base: str):
    """The opener requests go through: redirects within the origin only (`_SameOrigin`), sockets
    the deadline can cut, no proxy for a loopback host (a local server is reached directly even
    where HTTP_PROXY is set) and the environment's proxies otherwise."""
    host = urllib.parse.urlsplit(base).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    handlers = [_SameOrigin(), _HTTPHandler(), _HTTPSHandler()]
    return urllib.request.build_opener(*handlers, *([urllib.request.ProxyHandler({})] if loopback else []))


class ServerError(ModelError):
    """A request the server refused (`status`: its HTTP status) or never answered (`status` None)."""

    def __init__(self, message: str, status: int | None = None, transient: bool = False):
        super().__init__(message)
        self.status, self.transient = status, transient


class _TooBig(Exception):
    pass


def _read(response, limit: int, cut: bool = False) -> bytes:
    """A response's body, read in pieces up to `limit` bytes: past it, `_TooBig` (or, with `cut`,
    the first `limit` bytes: an error's text is only quoted)."""
    length = (response.headers.get("Content-Length") or "").strip()
    if not cut and length.isdigit() and int(length) > limit:
        raise _TooBig
    pieces: list[bytes] = []
    size = 0
    while True:
        piece = response.read(min(2**16, limit + 1 - size))
        if not piece:
            if not cut and getattr(response, "length", None):  # bytes its Content-Length promised, not sent
                raise http.client.IncompleteRead(b"".join(pieces), response.length)
            return b"".join(pieces)
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            if cut:
                return b"".join(pieces)[:limit]
            raise _TooBig


def _reason(exc: BaseException, timeout: float) -> tuple[str, bool]:
    """(what went wrong, in words; whether it says that nothing listens there)."""
    inner = exc.reason if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException) else exc
    if isinstance(inner, ConnectionRefusedError):
        return "connection refused", True
    if isinstance(inner, socket.gaierror):
        return "unknown host", True
    if isinstance(inner, (TimeoutError, socket.timeout)):
        return f"no full answer within {timeout:g} s", False
    if isinstance(inner, http.client.RemoteDisconnected):
        return "the connection closed without an answer", False
    if isinstance(inner, ConnectionResetError):
        return "connection reset", False
    if isinstance(inner, http.client.IncompleteRead):
        return f"the answer was cut short ({len(inner.partial or b'')} bytes came)", False
    return f"{type(inner).__name__}: {_said(inner)}", False


def _said(exc: BaseException) -> str:
    """An exception's text for a message: on one line, scrubbed, then cut."""
    return _scrub(" ".join(str(exc).split()))[:120]


def _client_side(exc: BaseException) -> str | None:
    """What a failure that no retry can mend says, in words (TLS refused, a URL no request can
    carry); None for one worth retrying."""
    inner = exc.reason if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException) else exc
    if isinstance(inner, ssl.SSLError) and not isinstance(inner, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):
        return (
            f"TLS failed ({_said(inner)}): an https:// address for a server that speaks plain "
            "http, or a certificate this machine does not trust?"
        )
    if isinstance(inner, http.client.InvalidURL):
        return f"a URL no request can carry ({_said(inner)})"
    return None


def _detail(body: bytes) -> str:
    """A server's error text, short and scrubbed (before it is cut): its JSON `detail`,
    `error.message` or `message`, else its text."""
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
    line = _scrub(" ".join(text.split()))
    return line[:200] + ("..." if len(line) > 200 else "")


@dataclass(frozen=True)
class ServedRuntime:
    """How a served model ran, for the JSON documents (the `runtime.Runtime` record's fields, plus
    the endpoint): its weights, precision and devices are the server's, unknown here; `identity`
    says how its weights are told apart, and what of that is not verified."""

    endpoint: str
    model: str
    server_model: str | None
    revision: str
    workers: int
    identity: dict | None = None

    @property
    def batch_size(self) -> int:
        return self.workers

    @property
    def tag(self) -> str:
        return "served"

    def record(self) -> dict:
        served = {"endpoint": self.endpoint, "model": self.model, "server_model": self.server_model}
        return {
            "revision": self.revision,
            "dtype": None,
            "device": "server",
            "device_type": "server",
            "batch_size": self.workers,
            "quantization": None,
            "weight_bytes": None,
            "plan": None,
            "served": {**served, "identity": self.identity},
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
        max_bytes: int | None = None,
    ):
        self.endpoint = parse(endpoint) if isinstance(endpoint, str) else endpoint
        self.cache = cache
        self.workers = workers or _env_number("WORKBENCH_SERVED_WORKERS", 4, int, 1)
        self.timeout = timeout or _env_number("WORKBENCH_SERVED_TIMEOUT", 120.0, float, 0.001)
        self.retries = retries if retries is not None else _env_number("WORKBENCH_SERVED_RETRIES", 3, int, 0)
        self.max_bytes = max_bytes or _env_number("WORKBENCH_SERVED_MAX_BYTES", MAX_BYTES, int, 1024)
        self.backoff = backoff
        self.run_timeout = _env_number("WORKBENCH_SERVED_RUN_TIMEOUT", None, float, 1)
        # every request of the run ends by then
        self._run_ends = time.monotonic() + self.run_timeout if self.run_timeout is not None else None
        self.requests: Counter = Counter()  # requests sent, by path (tests and reports count them)
        self._lock = threading.Lock()
        self._stop = threading.Event()  # set when a run gives up: retries still waiting end at once
        self._opener = _opener(self.endpoint.base)
        self._model: str | None = None  # the name requests carry, once `connect` has looked
        self._root: str | None = None  # the listed entry's root (vLLM: the weights' path or Hub name)
        self._revision: str | None = None
        self._identity: dict | None = None
        self._server_model: str | None = None
        self._logprobs: str | None = None  # "" the server gives prompt log-probabilities; else what it lacks

    def __repr__(self) -> str:
        return f"ServedModel({self.endpoint.shown!r})"

    # -- the connection ---------------------------------------------------------------------------
    def connect(self) -> str:
        """Ask the server for its models (GET /models: the first contact, where a wrong address or
        a server that is not running is said at once), then put the probe to the model. Returns
        the revision answers are cached under (`_identify`)."""
        if self._revision is not None:
            return self._revision
        listing = self._call("GET", "/models", None, first=True)
        data = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(data, list):
            raise ModelError(f"{self.endpoint.base}/models answered no model list: is this an OpenAI-compatible API?")
        entries = {str(m["id"]): m for m in data if isinstance(m, dict) and m.get("id") is not None}
        wanted, pin = self.endpoint.model, self.endpoint.pin
        if wanted is None:
            if len(entries) != 1:
                listed = ", ".join(list(entries)[:8]) or "none"
                raise InputError(
                    f"served model {self.endpoint.base}: name the model after '#', as "
                    f"{self.endpoint.base}#MODEL (the server lists: {listed})"
                )
            wanted = next(iter(entries))
        if pin and f"{wanted}@{pin}" in entries:  # a server that names revisions so (`transformers serve`)
            wanted = f"{wanted}@{pin}"
        entry = entries.get(wanted)  # None: some servers load a model by name on demand
        root = entry.get("root") if entry is not None else None
        self._model, self.listed = wanted, list(entries)
        self._root = root if isinstance(root, str) and root not in ("", wanted) else None
        self._server_model = None if entry is None else wanted + (f" root={self._root}" if self._root else "")
        self._revision = self._identify()
        return self._revision

    def _identify(self) -> str:
        """The revision answers are cached under: the model's name and what its weights answer to a
        fixed probe (the greedy completion of PROBE, with the name the server answers as), so new
        weights behind the same name get a new key and the same weights the same one, listed or
        not (a listing's root appears only once a model is loaded, and `created` is often the
        time of the request: neither is part of the key, both are recorded). A `#MODEL@REVISION`
        name pins the key to that revision instead. The probe also tells whether the server gives
        prompt log-probabilities (`logprobs_problem`)."""
        probes: list[tuple[str, dict]] = [
            ("/completions", {"prompt": PROBE, "echo": True, "logprobs": 1}),
            ("/completions", {"prompt": PROBE}),
            ("/chat/completions", {"messages": [{"role": "user", "content": PROBE}]}),
        ]
        answer: list | None = None
        refused: list[str] = []
        for path, body in probes:
            try:
                out = self._call(
                    "POST", path, {"model": self._model, "max_tokens": PROBE_TOKENS, "temperature": 0, **body}
                )
            except ServerError as exc:
                if exc.status is None or exc.status >= 500 or exc.status in (401, 403, 408, 429):
                    raise
                if exc.status == 404 and self._server_model is None:
                    raise ServerError(f"{exc} (the server does not list {self._model!r})", exc.status) from None
                refused.append(f"{path}{' with echo and logprobs' if 'echo' in body else ''}: HTTP {exc.status}")
                continue
            if "echo" in body:
                try:
                    _token_logprobs(out, self.endpoint.base)
                    self._logprobs = ""
                except ValueError as exc:
                    self._logprobs = f"its /completions answer to echo=true with logprobs=1 {exc}"
            text = _answer_text(out, path == "/chat/completions", self.endpoint.base)
            answer = [out.get("model"), text]
            break
        if self._logprobs is None:
            self._logprobs = f"its /completions refuses echo=true with logprobs ({refused[0].split(': ')[-1]})"
        name = self._model
        digest = hashlib.sha256(json.dumps(answer).encode()).hexdigest() if answer is not None else None
        self._identity = {
            "probe": {"prompt": PROBE, "max_tokens": PROBE_TOKENS, "greedy": True, "sha256": digest},
            "answered_as": answer[0] if answer is not None else None,
            "listed": self._server_model,
        }
        if self.endpoint.pin:
            self._identity["verified"] = (
                f"revision {self.endpoint.pin} pinned by the name: taken as given, not checked against the weights"
            )
            return f"served:{self.endpoint.model}@{self.endpoint.pin}"
        if digest is None:
            self._identity["verified"] = (
                f"no: the server refused every probe ({'; '.join(refused)}); answers are keyed by the model's name "
                "alone, so new weights behind the same name would be taken for the old"
            )
            return f"served:{name} (weights not verified)"
        self._identity["verified"] = (
            "by the probe: weights whose greedy completion of the probe is the same are taken for the same weights"
        )
        return f"served:{name} probe:{digest[:16]}"

    @property
    def name(self) -> str:
        """The model name answers are filed under: the one after '#' (or the server's only one)."""
        self.connect()
        return self.endpoint.model or self._model

    @property
    def revision(self) -> str:
        return self.connect()

    @property
    def runtime(self) -> ServedRuntime:
        return ServedRuntime(
            self.endpoint.base, self.name, self._server_model, self.revision, self.workers, self._identity
        )

    def _same_model(self, said) -> bool:
        """Whether the model an answer names is the one asked: its name, its listed root, or the
        name with a revision (`NAME@main`, `transformers serve`) or a dated snapshot
        (`NAME-2024-07-18`, OpenAI's) after it; a pinned revision must be the one named."""
        asked = self._model or ""
        if said in (asked, self._root):
            return True
        if said.startswith(asked + "@"):
            pin = self.endpoint.pin
            return pin is None or said == f"{self.endpoint.model}@{pin}"
        return re.fullmatch(re.escape(asked) + r"-[0-9][0-9-]*", said) is not None

    def _call(self, method: str, path: str, payload: dict | None, first: bool = False) -> dict:
        """One request, retried on connection errors, timeouts, 408, 429 and 5xx, all within
        `timeout` seconds in total (tries, waits and the answer's every byte); its JSON answer,
        of at most `max_bytes` bytes. An answer that names another model than the one asked is
        refused (`_same_model`)."""
        url = self.endpoint.base + path
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        where = f"the model server at {self.endpoint.base}"
        delay, tries = self.backoff, 0
        start = time.monotonic()
        limit = self.timeout if self._run_ends is None else min(self.timeout, self._run_ends - start)
        if limit <= 0:
            raise ServerError(
                f"{where}: the run has taken its WORKBENCH_SERVED_RUN_TIMEOUT of {self.run_timeout:g} s",
                transient=True,
            )
        deadline = start + limit
        while True:
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            key = _api_key()
            if key:
                headers["Authorization"] = f"Bearer {key}"
            request = urllib.request.Request(url, data=data, headers=headers, method=method)
            with self._lock:
                self.requests[path] += 1
            try:
                status, body = self._exchange(request, deadline)
            except _TooBig:
                raise ServerError(
                    f"{where} answered {method} {path} with more than {self.max_bytes} bytes: refused (raise "
                    "WORKBENCH_SERVED_MAX_BYTES if the answer is meant to be that long)"
                ) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                mistake = _client_side(exc)
                if mistake:
                    raise ServerError(f"cannot ask {where}: {mistake}") from None
                problem, nothing_there = _reason(exc, limit)
                if first and nothing_there:
                    raise ServerError(
                        f"cannot reach {where} ({problem}): is it running, and is the address right?"
                    ) from None
            else:
                if status is None:
                    try:
                        out = json.loads(body)
                    except ValueError:
                        raise ServerError(
                            f"{where} answered {method} {path} with something that is not JSON: "
                            + _shown(body[:ERROR_BYTES].decode("utf-8", "replace"))
                        ) from None
                    said = out.get("model") if isinstance(out, dict) and payload is not None else None
                    if said is not None and not (isinstance(said, str) and self._same_model(said)):
                        raise ServerError(
                            f"{where} answered {method} {path} as model {_shown(said)}, not the {self._model!r} "
                            "asked: refused (is another model behind this address?)"
                        )
                    return out
                detail = _detail(body)
                shown = f"HTTP {status}" + (f": {detail}" if detail else "")
                if status in (401, 403):
                    hint = (
                        ("the key in " + " or ".join(KEY_VARIABLES) + " is not accepted")
                        if key
                        else f"it wants an API key: set {' or '.join(KEY_VARIABLES)}"
                    )
                    raise ServerError(f"{where} refused {method} {path} ({shown}): {hint}", status)
                if first and status == 404:
                    raise ServerError(
                        f"no OpenAI-compatible API at {self.endpoint.base} ({method} {path}: HTTP 404); "
                        "name the API's root, e.g. http://HOST:PORT/v1#MODEL",
                        status,
                    )
                if status not in (408, 429) and status < 500:
                    raise ServerError(f"{where} refused {method} {path} ({shown})", status)
                problem = shown
            left = deadline - time.monotonic()
            if tries >= self.retries or self._stop.is_set() or left <= delay:
                spent = f"{tries + 1} {'try' if tries == 0 else 'tries'} in {limit - max(left, 0):.0f} s"
                if limit < self.timeout:
                    spent += ", the end of the run's WORKBENCH_SERVED_RUN_TIMEOUT"
                raise ServerError(f"{where} stopped answering ({problem}; {spent})", transient=True)
            tries += 1
            if self._stop.wait(delay):
                raise ServerError(f"{where} stopped answering ({problem})", transient=True)
            delay *= 2

    def _exchange(self, request, deadline: float) -> tuple[int | None, bytes]:
        """(None, the body) of an answer, or (its status, the start of its body) of an HTTP error,
        all of it before `deadline`: a timer cuts the request's sockets then (a socket's own
        timeout bounds one read, and a server sending a byte a second never trips it); a
        TimeoutError when it did."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sockets: list = []
        expired = threading.Event()

        def cut() -> None:
            expired.set()
            for sock in list(sockets):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(left, cut)
        timer.daemon = True
        _watched.sockets = sockets
        timer.start()
        try:
            try:
                with self._opener.open(request, timeout=left) as response:
                    answer: tuple[int | None, bytes] = (None, _read(response, self.max_bytes))
            except urllib.error.HTTPError as exc:
                try:
                    answer = (exc.code, _read(exc, ERROR_BYTES, cut=True))
                except (http.client.HTTPException, OSError):
                    answer = (exc.code, b"")
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError):
            if expired.is_set():  # what a cut socket raises, whatever it is
                raise TimeoutError from None
            raise
        finally:
            timer.cancel()
            _watched.sockets = None
        if expired.is_set():
            raise TimeoutError
        return answer

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
        text = _answer_text(out, settings.chat_template, self.endpoint.base)
        finish = out["choices"][0].get("finish_reason")
        at = min((i for i in (text.find(s) for s in settings.stop) if i >= 0), default=-1)
        if at >= 0:
            return {"text": text[:at], "stop": "stop"}
        return {"text": text, "stop": "length" if finish == "length" else "eos"}

    # -- log-likelihoods --------------------------------------------------------------------------
    def _likelihood_body(self, text: str) -> dict:
        return {"model": self._model, "prompt": text, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}

    def logprobs_problem(self) -> str | None:
        """None when the server returns prompt log-probabilities; else what it lacks, in words.
        Told by the probe `connect` puts (one short prompt, a few new tokens)."""
        self.connect()
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
                found = _token_logprobs(out, self.endpoint.base)
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


def _answer_text(out, chat: bool, base: str) -> str:
    """The text of an answer's first choice (a chat answer's message content); a ServerError
    naming what came for an answer without one or whose text is no string (null reads as "")."""
    try:
        choice = out["choices"][0]
        text = (choice.get("message") or {}).get("content") if chat else choice.get("text")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ServerError(f"the model server at {base} answered without a choice: {_shown(out)}") from None
    if text is not None and not isinstance(text, str):
        raise ServerError(f"the model server at {base} answered a text that is not a string: {_shown(text)}")
    return text or ""


def _logprob(value, who: str) -> float | None:
    """A log-probability as the server sent it, checked: None (the first token has none) or a
    finite number at most 0 (LOGPROB_SLACK above it is float rounding). Anything else (NaN,
    infinities, a positive number, a string, a list) is a ServerError naming it: no garbage
    becomes a score, nor is cached. `who` begins the message ("the model server at X answered")."""
    if value is None:
        return None
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = None
    if number is None or not math.isfinite(number) or number > LOGPROB_SLACK:
        raise ServerError(f"{who} a log-probability that is not a finite number at most 0: {_shown(value)}")
    return number


def _token_logprobs(out, base: str) -> tuple[list[str], list]:
    """(tokens, their ln P) of the echoed prompt in a /completions answer, the generated token
    left out (by the answer's usage.prompt_tokens, else the last); a ValueError saying what is
    missing when the answer has none, a ServerError for tokens that are no strings or
    log-probabilities that are no log-probabilities (`_logprob`)."""
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
    wrong = next((t for t in tokens if not isinstance(t, str)), None)
    if wrong is not None:
        raise ServerError(f"the model server at {base} answered a token that is not a string: {_shown(wrong)}")
    checked = [_logprob(v, f"the model server at {base} answered") for v in values]
    prompt = (out.get("usage") or {}).get("prompt_tokens")
    n = prompt if isinstance(prompt, int) and 0 < prompt <= len(tokens) else len(tokens) - 1
    return tokens[:n], checked[:n]


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
        total.append(value)
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
