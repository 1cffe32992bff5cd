"""`workbench init`: a new project's skeleton, and the settings reference (docs/config.md).

Both are written from the config schema (the shared sections and the kind's own), so the
commented workbench.toml and the reference list every setting with its real default and can
never drift from what `workbench validate` accepts.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Optional

import typer

from .common import console, example


def sections_of(kind, optional: bool = False) -> list[tuple[str, type, str]]:
    """(name, model, whose) of every section a project of `kind` may have, shared ones first;
    `optional`: also the sections a command writes rather than a person (`[origin]`)."""
    from ..core.config import Config

    def model(annotation):
        if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
            return annotation
        if optional:  # X | None
            return next((a for a in typing.get_args(annotation) if hasattr(a, "model_fields")), None)
        return None

    shared = [(name, m, "shared") for name, f in Config.model_fields.items() if (m := model(f.annotation))]
    return shared + [(name, model, f"{kind.name} kind") for name, model in kind.settings.items()]


def toml_value(value) -> str | None:
    """A default as TOML writes it (None: a setting with no value until one is chosen)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) or '""' for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def type_name(annotation) -> str:
    """A setting's type in words: `auto | cpu | cuda`, `list of text`, `integer or unset`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(map(str, args))
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        named = [type_name(a) for a in args if a is not type(None)]
        return " or ".join(named) + (" (or unset)" if type(None) in args else "")
    if origin is list:
        return f"list of {type_name(args[0])}" if args else "list"
    if origin is dict:
        return f"table of {type_name(args[1])}" if args else "table"
    return {str: "text", int: "integer", float: "number", bool: "true | false"}.get(annotation, str(annotation))


def default_of(field):
    return field.get_default(call_default_factory=True)


def annotation_defaults(kind) -> dict:
    """A kind's own [annotation] defaults (its validators per item, its policy), as `kinds.of_config` applies them."""
    return {**({"validators": kind.default_validators} if kind.default_validators else {}), **kind.annotation_defaults}


def commented_toml(kind, name: str) -> str:
    """The workbench.toml `init` writes: every setting commented out at its default, with what it does."""
    out = [
        f"# workbench.toml: a {kind.name} benchmark project ({kind.description})",
        "# Every setting is shown at its default, commented out: uncomment a line to change it.",
        "# What each does: docs/config.md. Check the file with `workbench validate`.",
        "",
    ]
    chosen = {("project", "name"): name, ("project", "kind"): kind.name}
    own = annotation_defaults(kind)
    unused = set(kind.unused_settings)  # a step the kind does not have: no section for it
    for section, model, whose in sections_of(kind):
        if section in unused:
            continue
        out.append(f"[{section}]" + ("" if whose == "shared" else f"   # the {whose}'s own section"))
        for key, field in model.model_fields.items():
            if f"{section}.{key}" in unused:
                continue
            if field.description:
                out.append(f"# {field.description}")
            if (section, key) in chosen:
                out.append(f"{key} = {toml_value(chosen[section, key])}")
                continue
            if section == "annotation" and key in own:
                out.append(f"# {key} = {toml_value(own[key])}   # {kind.name}'s default")
                continue
            value = toml_value(default_of(field))
            unset = type_name(field.annotation).replace(" (or unset)", "")
            out.append(f"# {key} = {value}" if value is not None else f"# {key} =   (unset; {unset})")
        out.append("")
    return "\n".join(out)


def config_markdown() -> str:
    """docs/config.md: every section and setting, for every installed kind."""
    from .. import kinds

    out = [
        "# Settings (`workbench.toml`)",
        "",
        "Generated from the config schema by `python -m workbench.cli.docs config`; a test keeps it current.",
        "`workbench init --kind KIND` writes a project whose workbench.toml lists the same settings, commented out "
        "at their defaults. `workbench validate` checks the file: an unknown key is an error naming the nearest "
        "known one.",
        "",
    ]
    seen = set()
    for entry in kinds.listing():
        if entry.kind is None:
            continue
        for section, model, whose in sections_of(entry.kind, optional=True):
            if (section, whose) in seen:
                continue
            seen.add((section, whose))
            out += [
                f"## `[{section}]`" + ("" if whose == "shared" else f" ({whose})"),
                "",
                "| setting | type | default | what it does |",
                "|---|---|---|---|",
            ]
            for key, field in model.model_fields.items():
                value = None if field.is_required() else toml_value(default_of(field))
                shown = "required" if field.is_required() else "unset" if value is None else f"`{value}`"
                out.append(
                    f"| `{key}` | {type_name(field.annotation).replace('|', '/')} | {shown} | "
                    f"{(field.description or '').replace('|', '/')} |"
                )
            out.append("")
            if section == "annotation":
                out += _kind_annotation_defaults()
    return "\n".join(out)


def _kind_annotation_defaults() -> list[str]:
    """docs/config.md's lines on the kinds whose benchmark sets its own [annotation] defaults."""
    from .. import kinds

    lines = []
    for entry in kinds.listing():
        own = annotation_defaults(entry.kind) if entry.kind else {}
        if own:
            lines.append(f"- {entry.kind.name}: " + ", ".join(f"`{key} = {toml_value(v)}`" for key, v in own.items()))
    if not lines:
        return []
    return [
        "Kinds whose benchmark was validated its own way use these defaults where a project sets nothing "
        "(a renewal's audit does not):",
        "",
        *lines,
        "",
    ]


def register(app: typer.Typer) -> None:
    app.command(
        "init",
        epilog=example(
            "workbench kinds                          # the kinds you can start a project of",
            "workbench init my-benchmark --kind KIND  # a new project in my-benchmark/",
            "workbench init                           # here, of the default kind",
        ),
    )(init)
    app.command(
        "import",
        epilog=example(
            "workbench import published.csv --kind KIND --out renewed \\",
            "    --origin-name NAME --origin-version 1.0 --origin-license cc-by-sa-4.0 \\",
            "    --origin-citation 'Author et al. (2020)' --origin-url https://example.org/dataset",
            "workbench import published.csv --kind KIND --out renewed --sample 100 --seed 1   # audit 100 items",
            "workbench import published.csv --kind KIND --out renewed --sample 100 --stratify bias_type   # per bias type",
        ),
    )(import_)


def import_(
    file: Path = typer.Argument(
        ...,
        help="The benchmark's published file, in its kind's layout (docs/fidelity.md); "
        "or, for a kind published as one file per subtopic, their folder.",
    ),
    kind_name: str = typer.Option(
        ..., "--kind", "-k", help="The kind of the file (`workbench kinds`; one that declares an audit)."
    ),
    out: Path = typer.Option(..., "--out", help="The new project's folder (must not hold a project yet)."),
    name: Optional[str] = typer.Option(None, "--name", help="The renewed dataset's name (default: the folder's name)."),
    origin_name: Optional[str] = typer.Option(
        None, "--origin-name", help="The original dataset's name, as the card credits it (default: the file's name)."
    ),
    origin_version: Optional[str] = typer.Option(None, "--origin-version", help="The original's version."),
    origin_license: Optional[str] = typer.Option(
        None, "--origin-license", help="The original's licence (a Hub licence id also becomes the project's)."
    ),
    origin_citation: Optional[str] = typer.Option(None, "--origin-citation", help="How to cite the original."),
    origin_url: Optional[str] = typer.Option(None, "--origin-url", help="Where the original is published."),
    sample: Optional[int] = typer.Option(
        None,
        "--sample",
        help="Audit only N items, drawn at random (a partial "
        "audit; `build --unaudited keep` releases the others "
        "unchanged). Default: every item.",
    ),
    seed: int = typer.Option(0, "--seed", help="The seed --sample draws with (kept in workbench.toml)."),
    stratify: Optional[str] = typer.Option(
        None,
        "--stratify",
        metavar="COLUMN",
        help="Stratify --sample by this "
        "column (e.g. bias_type, or domain: the kind's group): each group gets "
        "its share of N in proportion to its size, at least one item each when "
        "N allows. Default: drawn from all items at once.",
    ),
) -> None:
    """Renew a published benchmark: turn its file into a project whose items keep their original
    ids, fields and labels, audited by people (keep / fix / drop, and why) before the next
    version is built. `workbench run` then `build` reproduces the original; docs/renewing.md."""
    import re

    from .. import kinds
    from ..authoring.renew import import_project

    kind = kinds.get(kind_name)
    name = name or re.sub(r"[^A-Za-z0-9._-]+", "-", Path(out).resolve().name).strip("-._") or "renewed"
    done = import_project(
        kind,
        file,
        out,
        name=name,
        origin={
            "name": origin_name or Path(file).stem,
            "version": origin_version,
            "license": origin_license,
            "citation": origin_citation,
            "url": origin_url,
        },
        sample=sample,
        seed=seed,
        stratify=stratify,
    )
    for note in done["notes"]:
        console.print(f"{file}: {note}", markup=False, highlight=False)
    console.print(f"{file}: which copy: {done['copy'].sentence()}", markup=False, highlight=False)
    console.print(
        f"wrote {Path(out) / 'workbench.toml'} and templates/ ({', '.join(done['files'])}) of kind "
        f"{kind.name}. Next: `workbench run`, then audit with `workbench annotate --annotator NAME`.",
        markup=False,
        highlight=False,
    )


def init(
    folder: Path = typer.Argument(Path("."), help="The project folder (created if missing; default: here)."),
    kind_name: Optional[str] = typer.Option(
        None, "--kind", "-k", help="The kind of benchmark (`workbench kinds` lists them; default: the default kind)."
    ),
    name: Optional[str] = typer.Option(None, "--name", help="The dataset's name (default: the folder's name)."),
) -> None:
    """Start a project: workbench.toml with every setting commented at its default, and the kind's
    example template files to edit. Nothing that exists is overwritten."""
    import re

    from .. import kinds
    from ..core.config import CONFIG_NAME
    from ..core.errors import ConfigError
    from ..core.workspace import atomic_write_text

    kind = kinds.get(kind_name or kinds.DEFAULT_KIND)
    folder = Path(folder)
    config_file = folder / CONFIG_NAME
    if config_file.exists():
        raise ConfigError(
            f"{config_file} exists: `workbench init` never overwrites a project (edit it, or pick another folder)"
        )
    name = name or re.sub(r"[^A-Za-z0-9._-]+", "-", folder.resolve().name).strip("-._") or "my-benchmark"
    templates = {}
    if kind.example:
        templates = getattr(kind.part("example"), "EXAMPLE_TEMPLATES", {})
    clashes = [t for t in templates if (folder / "templates" / t).exists()]
    if clashes:
        raise ConfigError(f"{folder / 'templates' / clashes[0]} exists: `workbench init` never overwrites a file")
    folder.mkdir(parents=True, exist_ok=True)
    for file, text in templates.items():
        target = folder / "templates" / file
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
    atomic_write_text(config_file, commented_toml(kind, name))
    console.print(
        f"wrote {config_file}"
        + (f" and {len(templates)} example template file(s) in templates/" if templates else "")
        + f" (kind {kind.name}). Next: edit them, then `workbench validate` and `workbench run`."
    )
