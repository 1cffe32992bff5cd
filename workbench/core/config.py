"""`workbench.toml`: the project's configuration, validated with pydantic.

Paths in the file are relative to the file's folder. Every problem names the file, the key
and the line, and all problems are reported together.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .errors import ConfigError, Problem, did_you_mean, display_path
from .ids import json_hash

CONFIG_NAME = "workbench.toml"
PAPER_MLM = "bert-large-cased-whole-word-masking"
GENERATION_FILTERS = [
    "subword",
    "punctuation",
    "number",
    "group_word",
    "repeated_neighbour",
    "pos",
    "duplicate",
]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


_S = TypeVar("_S", bound=BaseModel)


class ProjectSection(_Section):
    name: str = Field(
        "workbench-benchmark",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="The dataset's name: the release folder exports/<name>/ and the default Hub repo name.",
    )
    kind: str | None = Field(
        None,
        pattern=r"^[a-z][a-z0-9_-]*$",
        description="The kind of benchmark this project builds (`workbench kinds` lists them; unset: the default kind).",
    )
    language: str = Field(
        "en",
        pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$",
        description="The language of the benchmark's text, a BCP-47 tag (en, fr, fr-CA): the card's "
        "`language:`, and the spaCy pipeline, word rules and word lists the loop uses "
        "(docs/languages.md lists the languages with support).",
    )
    pretty_name: str | None = Field(None, description="The dataset's display name on its card (default: name).")
    repo: str | None = Field(
        None,
        pattern=r"^[\w.-]+/[\w.-]+$",
        description="The Hugging Face Hub dataset repo releases are published to, ORG/NAME.",
    )
    license: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9.+_-]*$",
        description="The data's licence, a Hub licence id (cc-by-4.0, mit, other...); unset: the "
        'card says "not stated" and `publish` refuses. Never assumed.',
    )
    description: str | None = Field(
        None, description="The maintainer's own words about the data set, at the top of its card."
    )
    templates: str = Field("templates", description="The folder of template files, relative to workbench.toml.")
    workspace: str = Field(".workbench", description="Where stages write their tables, manifests and the model cache.")
    annotations: str = Field(
        "annotations", description="The folder of label files (one append-only JSON-lines file per annotator)."
    )
    exports: str = Field("exports", description="Where `workbench build` writes releases (exports/<name>/<version>/).")


PROPOSER_PLACEHOLDERS = ("sentence", "k")  # what an LLM proposer's prompt fills in (models/llm_proposer.py)


def proposer_prompt_problem(prompt: str) -> str | None:
    """Why `prompt` cannot ask an LLM proposer for words (a placeholder it does not know, or no
    {sentence}), else None."""
    unknown = [n for n in re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", prompt) if n not in PROPOSER_PLACEHOLDERS]
    if unknown:
        return (
            f"names {{{unknown[0]}}}, which is no placeholder: a proposer prompt fills in only {{sentence}} "
            "and {k} (the model would read the braces as written)"
        )
    if "{sentence}" not in prompt:
        return "must hold {sentence}, where the masked hypothesis goes (its slot written ___)"
    return None


class GenerateSection(_Section):
    model: str = Field(
        PAPER_MLM, description="The masked LM that proposes fills (Hub name or local folder; default the paper's)."
    )
    revision: str | None = Field(
        None, description="The model's Hub revision (commit, tag or branch); unset: the latest."
    )
    top_k: int = Field(20, ge=1, le=1000, description="Fills proposed per mask.")
    batch_size: int = Field(32, ge=1, description="Texts per forward pass (halved automatically on out-of-memory).")
    filters: list[str] = Field(
        default_factory=lambda: list(GENERATION_FILTERS),
        description="Which checks a fill must pass: subword, punctuation, number, group_word, repeated_neighbour, pos, duplicate.",
    )
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto (a GPU when there is one), cpu or cuda.")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="Precision of the weights: auto (the checkpoint's own), float32, bfloat16 or float16."
    )
    device_map: Literal["auto"] | None = Field(
        None, description="auto: spread the layers over the GPUs, then the CPU, when the model does not fit one device."
    )
    proposers: list[str] | None = Field(
        None,
        min_length=1,
        description="The models that propose fills, in order (a hypothesis an earlier one proposed is a duplicate): "
        "masked LMs (top_k fills each) and causal or instruct LMs (a local folder or Hub name, "
        "http(s)://HOST:PORT/v1#MODEL, vllm:MODEL), each asked for top_k words per one-mask slot in llm_prompt "
        "(docs/llms.md); unset: `model` alone, which stays the fluency score's masked LM either way.",
    )
    llm_prompt: str | None = Field(
        None,
        description="How an LLM proposer is asked, with {sentence} (the masked hypothesis, its slot written ___) "
        "and optionally {k}; unset: the prompt docs/llms.md shows.",
    )
    llm_chat_template: bool = Field(
        False, description="Put the LLM prompt in a user turn of the model's chat template (instruct models)."
    )

    @field_validator("llm_prompt")
    @classmethod
    def _askable(cls, value: str | None) -> str | None:
        if value is not None:
            why = proposer_prompt_problem(value)
            if why:
                raise ValueError(why)
        return value

    @field_validator("filters")
    @classmethod
    def _known_filters(cls, value: list[str]) -> list[str]:
        unknown = [f for f in value if f not in GENERATION_FILTERS]
        if unknown:
            raise ValueError(f"unknown filter(s) {unknown}; known: {GENERATION_FILTERS}")
        return value


class EvaluateSection(_Section):
    models: list[str] = Field(
        default_factory=list,
        description="Models `workbench evaluate` scores when none are named (empty: the kind's own default).",
    )
    batch_size: int = Field(32, ge=1, description="Items per forward pass when --batch-size is not given.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto, cpu or cuda, when --device is not given.")
    label_overrides: dict[str, dict[str, str]] = Field(
        default_factory=dict,
        description='Per model, its output labels mapped to entailment/neutral/contradiction when its config does not name them, e.g. {"org/model" = {LABEL_0 = "entailment"}}.',
    )


class AnnotationSection(_Section):
    # How the final label of an item is decided from the annotators' labels.
    policy: Literal["single", "majority", "adjudicator"] = Field(
        "single",
        description="How an item's final label is decided: single (one label decides), majority (min_votes agreeing labels) or adjudicator (the adjudicator settles disagreements).",
    )
    min_votes: int = Field(2, ge=1, description="majority: the votes the winning label needs (e.g. 3 of 5).")
    validators: int = Field(
        1, ge=1, description="People who label each item (the queue serves an item until it has this many labels)."
    )
    adjudicator: str | None = Field(None, description="The annotator whose label settles disagreements.")
    order: Literal["template", "fluency"] = Field(
        "template", description="The order items are served in: template (as written) or fluency (most fluent first)."
    )
    break_every_items: int = Field(
        100, ge=0, description="Remind the annotator to take a break after this many labels (0: never)."
    )
    break_every_minutes: int = Field(30, ge=0, description="... or after this many minutes (0: never).")
    opt_out_domains: list[str] = Field(
        default_factory=list,
        description="Domains whose items are not served (e.g. topics an annotator prefers not to read).",
    )
    show_model_results: bool = Field(
        False,
        description="Show the written stance, models fooled and fluency in the terminal UI (for adjudicators; hidden by default so they do not sway labels).",
    )
    keys: dict[str, str] = Field(
        default_factory=dict, description='Key bindings: binding id -> key, e.g. valid_pro = "a".'
    )


class LabelStudioSection(_Section):
    # The API key is a secret: it comes from LABEL_STUDIO_API_KEY only, never from this file.
    url: str = Field(
        "http://localhost:8080",
        description="The Label Studio server (the API key comes from LABEL_STUDIO_API_KEY only, never from this file).",
    )
    page_size: int = Field(
        100,
        ge=1,
        le=1000,
        description="Tasks per request when reading a project (pull writes each page's labels before reading the next; 1000 cuts the requests for a big project).",
    )
    timeout: float = Field(
        30, gt=0, le=600, description="Seconds per request, so a hung server fails instead of hanging."
    )
    # Label Studio user e-mail -> annotator name, so one person labelling in the TUI and in the
    # browser is one annotator in agreement figures, e.g. "cal@example.com" = "cal".
    annotators: dict[str, str] = Field(
        default_factory=dict,
        description='Label Studio user e-mail -> annotator name, so one person labelling in the terminal and in the browser is one annotator, e.g. "cal@example.com" = "cal".',
    )


class OriginSection(_Section):
    # Written by `workbench import`: the published benchmark this project renews (docs/renewing.md).
    name: str = Field(description="The original dataset's name, as its card credits it.")
    version: str | None = Field(None, description="The original's version (or the date/commit of the file imported).")
    license: str | None = Field(None, description="The original's licence.")
    citation: str | None = Field(None, description="How to cite the original (a BibTeX entry or a reference).")
    url: str | None = Field(None, description="Where the original is published.")
    file: str | None = Field(None, description="The file imported (its name, never a local path).")
    sha256: str | None = Field(
        None,
        description="The imported file's sha256 (of a folder: of its files' paths and contents), to tell which it was.",
    )
    published_copy: str | None = Field(
        None,
        description='Which published copy the imported file is (`name version` from the table of known copies, recognised by its sha256 or its rows: sources/known.py), or "unknown"; the card says it.',
    )
    sample: int | None = Field(
        None,
        ge=1,
        description="How many items the audit covers, drawn at random (`workbench import --sample N`); unset: every item. The others are released unchanged with `build --unaudited keep`.",
    )
    seed: int | None = Field(
        None, description="The seed the audit's sample was drawn with (`import --seed`), so it can be drawn again."
    )
    stratify: str | None = Field(
        None,
        description="The column the audit's sample is stratified by (`import --stratify`, e.g. bias_type): each of its groups gets its share of the sample in proportion to its size, at least one item each when the sample allows; unset: drawn from all items at once.",
    )


class Config(BaseModel):
    """The shared sections; a kind's own sections (its `settings`) are kept as read and
    validated by `section()` against the model the kind declares."""

    model_config = ConfigDict(extra="allow")
    _sections: dict = PrivateAttr(default_factory=dict)

    project: ProjectSection = Field(default_factory=ProjectSection)
    generate: GenerateSection = Field(default_factory=GenerateSection)
    evaluate: EvaluateSection = Field(default_factory=EvaluateSection)
    annotation: AnnotationSection = Field(default_factory=AnnotationSection)
    labelstudio: LabelStudioSection = Field(default_factory=LabelStudioSection)
    origin: OriginSection | None = Field(
        None, description="The published benchmark this project renews (set by `workbench import`)."
    )

    # Where the file was read from; paths resolve against its folder.
    root: Path = Field(default_factory=Path.cwd, exclude=True)
    source: Path | None = Field(default=None, exclude=True)

    def path(self, name: Literal["templates", "workspace", "annotations", "exports"]) -> Path:
        return (self.root / getattr(self.project, name)).resolve()

    @property
    def shown_source(self) -> str:
        """The config file as messages show it."""
        return display_path(self.source) if self.source else CONFIG_NAME

    def at(self, field: str) -> str:
        """'<config file>: <field>', to say where a value that turned out bad was written."""
        return f"{self.shown_source}: {field}"

    def section_hash(self, *sections: str) -> str:
        """Hash of the named sections only, so editing one stage's settings stales only it."""
        dumped = self.model_dump(mode="json")
        return json_hash({s: dumped.get(s) for s in sections})

    def line_of(self, *keys: str) -> int | None:
        """The line of a dotted key or table in the file (None when unknown)."""
        if self.source is None or not self.source.is_file():
            return None
        return _key_line(self.source.read_text(encoding="utf-8", errors="replace"), keys)

    def extra_sections(self) -> dict[str, object]:
        """The sections no shared model declares, as read from the file."""
        return dict(self.__pydantic_extra__ or {})

    def section(self, name: str, model: type[_S]) -> _S:
        """A kind's own section, validated against the model it declares (its defaults when the
        file has none); a bad value is a ConfigError with the file, key and line."""
        cache = self._sections
        if name not in cache:
            raw = self.extra_sections().get(name, {})
            if not isinstance(raw, dict):
                raise ConfigError(
                    f"invalid config {self.shown_source}",
                    [Problem(self.shown_source, None, name, f"[{name}] must be a table")],
                )
            try:
                cache[name] = model.model_validate(raw)
            except ValidationError as exc:
                text = self.source.read_text(encoding="utf-8") if self.source else ""
                raise ConfigError(
                    f"invalid config {self.shown_source}",
                    _problems(exc, text, self.shown_source, prefix=(name,), model=model),
                ) from None
            if self.__pydantic_extra__ is not None:  # so section_hash reads the values, defaults included
                self.__pydantic_extra__[name] = cache[name].model_dump(mode="json")
        return cache[name]


def _problems(exc: ValidationError, text: str, shown: str, prefix: tuple = (), model=None) -> list[Problem]:
    """Pydantic's errors as problems with file, dotted key and line; a misspelt key names the
    nearest setting of its table."""
    problems = []
    for err in exc.errors():
        loc = prefix + tuple(err["loc"])
        field = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in loc)
        field = field.replace(".[", "[")
        message = err["msg"]
        known = _known_keys(model, tuple(err["loc"])[:-1]) if err["type"] == "extra_forbidden" else None
        if known:
            message = f"unknown setting {loc[-1]!r}: {did_you_mean(loc[-1], known)}(known: {', '.join(known)})"
        problems.append(Problem(shown, _key_line(text, loc), field, message))
    return sorted(problems)


def _known_keys(model, loc: tuple) -> list[str]:
    """The settings a (nested) table at `loc` of `model` declares; [] when it cannot be told."""
    for key in loc:
        field = getattr(model, "model_fields", {}).get(key)
        if field is None:
            return []
        model = field.annotation
    fields = getattr(model, "model_fields", None)
    return sorted(fields) if isinstance(fields, dict) else []


def _key_line(text: str, loc: tuple) -> int | None:
    """Best-effort line number of a dotted key in a TOML text (tomllib keeps no positions)."""
    keys = [str(k) for k in loc if not isinstance(k, int)]
    if not keys:
        return None
    table, key = keys[:-1], keys[-1]
    current: list[str] = []
    first_table_line = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = re.match(r"^\[([^\[\]]+)\]$", line)
        if header:
            current = [p.strip() for p in header.group(1).split(".")]
            if current == keys:
                first_table_line = number
            continue
        if current == table and re.match(rf"^{re.escape(key)}\s*=", line):
            return number
    return first_table_line


def load_config(path: str | Path | None = None, *, required: bool = False) -> Config:
    """Read and validate the config; without a file the defaults apply (rooted at cwd)."""
    if path is None:
        candidate = Path.cwd() / CONFIG_NAME
        if not candidate.exists():
            if required:
                raise ConfigError(f"no {CONFIG_NAME} in {Path.cwd()}: create one or pass --config")
            return Config()
        path = candidate
    path = Path(path)
    shown = display_path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {shown}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")  # TOML is UTF-8: anything else is refused, never guessed at
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"invalid config {shown}",
            [
                Problem(
                    shown,
                    line,
                    "",
                    f"not UTF-8 (byte 0x{data[exc.start]:02x} at column {column}); TOML files are UTF-8: "
                    "save it as UTF-8",
                )
            ],
        ) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = None
        m = re.search(r"line (\d+)", str(exc))
        if m:
            line = int(m.group(1))
        raise ConfigError(f"invalid config {shown}", [Problem(shown, line, "", f"invalid TOML: {exc}")]) from None
    try:
        config = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"invalid config {shown}", _problems(exc, text, shown, model=Config)) from None
    config.root = path.resolve().parent
    config.source = path.resolve()
    return config
