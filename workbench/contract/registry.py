"""The registry of benchmark kinds, found through the entry-point group `workbench.kinds`.

Every kind — the six built in and any plugin — is an entry point `NAME = "module:KIND"` whose
object is a `Kind` (see `kind.py`, the contract). Entry points are read once per process and
loaded only when a kind is used, so a plugin that fails to import breaks only itself: it is
listed by `workbench kinds` with its error, and using it says why. Every module of a kind is
imported through `loader.py`, which turns any failure into one line naming the kind (and bounds
how long a plugin's import is waited for).

A kind's command-line options (its evaluator options and model roles) become options of
`workbench evaluate` and of a release's evaluate.py beside their own. An option that is not
`--name`, or takes the flag or the name of one of theirs (`reserve`, called by the command line
before any plugin loads), makes that kind broken with one line saying which: it can never take
`--json` over for every kind, nor stop every command from starting.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import ConfigError
from .kind import AnnotatorWords, EvaluatorOption, Field, ItemQuestion, Kind, ReleaseLayout  # noqa: F401  (the contract, re-exported)
from . import loader
from .loader import KindBroken, call, import_module, warn

if TYPE_CHECKING:
    from ..core.config import Config
    from ..core.pipeline import Pipeline

GROUP = "workbench.kinds"
# The kind of a project whose workbench.toml names none (the loop this tool started with).
DEFAULT_KIND = "nli"
# Also registered in pyproject.toml; listed here so a source checkout that was never installed
# (no entry points) still has them.
BUILT_IN = {
    "nli": "workbench.kinds.nli:KIND",
    "stereoset": "workbench.kinds.stereoset:KIND",
    "crows-pairs": "workbench.kinds.crows_pairs:KIND",
    "sos": "workbench.kinds.sos:KIND",
    "sofa": "workbench.kinds.sofa:KIND",
    "honest": "workbench.kinds.honest:KIND",
}


@dataclass
class Entry:
    """One registered kind before (and after) it is loaded."""

    name: str
    target: str  # "module:ATTRIBUTE"
    package: str  # the distribution it comes from
    version: str
    kind: Kind | None = None
    error: str | None = None  # why it could not be loaded


_ENTRIES: dict[str, Entry] | None = None
_REGISTERED: dict[str, Kind] = {}
_RESERVED: dict[str, str] = {}  # a flag or option name -> whose it is ("workbench evaluate's --json")
FLAG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9-]*")


def reserve(names: dict[str, str]) -> None:
    """Flags and option names (dests) that are the command line's own, each with whose it is: a
    kind declaring one of them is broken (see the module docstring)."""
    _RESERVED.update(names)


def option_problem(kind: Kind) -> str | None:
    """Why the kind's options cannot be added to the command line (one line), else None."""
    for option in kind.options():  # its model roles are among them
        if not isinstance(option.flag, str) or not FLAG.fullmatch(option.flag):
            return f"its option {option.flag!r} is not a flag of the form --name (letters, digits and -)"
        for name in (option.flag, option.dest):
            if name in _RESERVED:
                return f"its option {option.flag} clashes with {_RESERVED[name]}: rename it"
    return None


def _entries() -> dict[str, Entry]:
    global _ENTRIES
    if _ENTRIES is None:
        from importlib.metadata import entry_points

        from .. import __version__

        found = {name: Entry(name, target, "workbench", __version__) for name, target in BUILT_IN.items()}
        for ep in entry_points(group=GROUP):
            dist = getattr(ep, "dist", None)
            package = dist.metadata["Name"] if dist is not None else "?"
            version = dist.version if dist is not None else ""
            if ep.name in BUILT_IN and ep.value == BUILT_IN[ep.name]:
                continue  # workbench's own, listed above
            entry, known = Entry(ep.name, ep.value, package, version), found.get(ep.name)
            if known is None:
                found[ep.name] = entry
            elif not loader.is_plugin(known):  # listed beside the built-in kind, as broken: it never replaces it
                entry.error = f"{ep.name!r} is the name of a kind built into workbench: rename it"
                found[f"{ep.name} ({package})"] = entry
            elif (known.package, known.target) != (package, ep.value):  # which one would depend on sys.path
                first, second = sorted([known, entry], key=lambda e: (e.package, e.target))
                first.error = (
                    f"two packages register it, {loader.origin(first)} ({first.target}) and "
                    f"{loader.origin(second)} ({second.target}): uninstall one"
                )
                found[ep.name] = first
        _ENTRIES = found
    return _ENTRIES


def _load(entry: Entry) -> Kind:
    if entry.kind is not None:
        return entry.kind
    if entry.error is None:
        module, _, attribute = entry.target.partition(":")
        try:
            kind = getattr(import_module(entry, module, "kind"), attribute or "KIND")
            if not isinstance(kind, Kind):
                raise TypeError(f"{entry.target} is a {type(kind).__name__}, not a workbench Kind")
            if kind.name != entry.name:
                raise ValueError(f"{entry.target} declares kind {kind.name!r}, registered as {entry.name!r}")
            problem = option_problem(kind)
            if problem:
                raise KindBroken(entry, "its options", problem)
            entry.kind = dataclasses.replace(kind, package=entry.package, version=entry.version, module=module)
        except KindBroken as exc:  # a broken plugin must not break the other kinds
            entry.error = exc.reason
        except Exception as exc:  # noqa: BLE001 -- its KIND is not a Kind, or not the one registered
            entry.error = loader.describe(exc)
    if entry.error is not None:
        raise KindBroken(entry, f"it cannot be loaded from {entry.target}", entry.error)
    return entry.kind


def register(kind: Kind) -> Kind:
    """Add (or replace) a kind at run time; tests and notebooks use this, packages use entry points."""
    _REGISTERED[kind.name] = kind
    for alias in kind.aliases:
        _REGISTERED[alias] = kind
    return kind


def names() -> list[str]:
    return sorted(set(_entries()) | set(_REGISTERED))


def get(name: str) -> Kind:
    if name in _REGISTERED:
        return _REGISTERED[name]
    entries = _entries()
    if name not in entries:
        for entry in entries.values():  # an alias of a kind that loads
            if entry.error is None and name in _try(entry, "aliases", ()):
                return _load(entry)
        raise ConfigError(
            f"unknown benchmark kind {name!r}; installed: {', '.join(names())} (`workbench kinds` lists them)"
        )
    return _load(entries[name])


def _try(entry: Entry, attribute: str, default):
    try:
        return getattr(_load(entry), attribute)
    except ConfigError:
        return default


def listing(plugins: bool = True) -> list[Entry]:
    """Every registered kind, each loaded if it can be (errors kept on the entry); without
    `plugins`, workbench's own kinds only (none of another package's code is imported)."""
    out = []
    for name in sorted(_entries()):
        entry = _entries()[name]
        if not plugins and loader.is_plugin(entry):
            continue
        try:
            _load(entry)
        except ConfigError:
            pass
        out.append(entry)
    for name, kind in sorted(_REGISTERED.items()):
        if name not in _entries() and name == kind.name:
            out.append(Entry(name, "(registered at run time)", kind.package, kind.version, kind))
    return out


PARTS = (
    ("evaluator", "evaluator"),
    ("standalone", "standalone"),
    ("lm_eval_tasks", "lm-eval task"),
    ("example", "example"),
    ("demo", "demo"),
)


def broken_part(kind: Kind) -> KindBroken | None:
    """The first module the kind names that cannot be imported (see PARTS), else None; for
    `workbench kinds`, which imports them all to list a kind broken anywhere as broken."""
    for field_name, role in PARTS:
        if getattr(kind, field_name):
            try:
                kind.part(field_name, role)
            except KindBroken as exc:
                return exc
    return None


def loadable(plugins: bool = True) -> list[Kind]:
    return [e.kind for e in listing(plugins) if e.kind is not None]


def of_config(config: "Config") -> Kind:
    """The project's kind; in a project that renews a published benchmark (`[origin]`), its renewal.
    The kind's `annotation_defaults` fill the [annotation] settings the project leaves unset (they
    stay unset: `model_fields_set` still tells what the project chose), so the build, stats, Label
    Studio and the kind's own stages all read the same policy."""
    kind = get(config.project.kind or DEFAULT_KIND)
    kind = kind.renewal() if config.origin is not None else kind
    ac = config.annotation
    for key, value in kind.annotation_defaults.items():
        if key not in ac.model_fields_set:
            ac.__dict__[key] = value  # a default, not the project's choice: not added to the set fields
    return kind


def pipeline_for(config: "Config", workspace=None, **options) -> "Pipeline":
    """The configured kind's pipeline over the configured workspace."""
    return of_config(config).pipeline(config, workspace, {k: v for k, v in options.items() if v is not None})


def settings_problems(config: "Config") -> list:
    """Sections of workbench.toml that no shared model and not the project's kind declares,
    and the kind's own sections that do not validate."""
    from ..core.errors import Problem, did_you_mean

    kind = of_config(config)
    problems = []
    for name in sorted(config.extra_sections()):
        if name not in kind.settings:
            known = sorted([*type(config).model_fields, *kind.settings])
            problems.append(
                Problem(
                    config.shown_source,
                    config.line_of(name),
                    name,
                    f"unknown section [{name}] for kind {kind.name!r}: {did_you_mean(name, known)}"
                    f"(known: {', '.join(known)})",
                )
            )
    for name, model in kind.settings.items():
        try:
            config.section(name, model)
        except ConfigError as exc:
            problems.extend(exc.problems)
    for unused in kind.unused_settings:  # a shared section (or key) the file sets but the kind never reads
        section, _, key = unused.partition(".")
        node = getattr(config, section, None)
        given = key in getattr(node, "model_fields_set", ()) if key else section in config.model_fields_set
        if given:
            shown = f"[{section}] {key}" if key else f"[{section}]"
            problems.append(
                Problem(
                    config.shown_source,
                    config.line_of(*unused.split(".")),
                    unused,
                    f"{shown} is not read by kind {kind.name!r} (it has no such step): it changes nothing; remove it",
                    severity="warning",
                )
            )
    return problems


def skipped(exc: KindBroken, shown: str) -> None:
    """The default report of a kind left out of detection: one warning line on stderr."""
    warn(f"{exc}; skipped while recognising {shown}")


def recognises(kind: Kind, path, shown: str | None = None, report=skipped) -> bool:
    """Whether `kind`'s evaluator recognises `path` (its `detect`). A kind whose evaluator cannot
    be imported, or whose detect raises, is given to `report` (the error, what was looked at) and
    taken as not recognising it: one broken kind never stops another kind's file being evaluated."""
    try:
        module = kind.evaluator_module()
        detect = getattr(getattr(module, "DECLARED", None), "detect", None) or module.detect  # a declared evaluator's
        return bool(call(kind, f"{kind.evaluator}.detect failed", detect, path, own_errors=False))
    except KindBroken as exc:
        report(exc, shown or str(path))
        return False
