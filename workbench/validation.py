"""`workbench validate`'s checks of a config beyond its schema, without loading any model.

Apart from core/config.py because they read the model and annotation layers (core imports
nothing above itself).
"""

from __future__ import annotations

from .contract.kind import Kind
from .core.config import Config
from .core.errors import Problem


def check_models(config: Config, named: list[tuple[str, str]]) -> list[Problem]:
    """Model names that look like local paths must exist; Hub names cannot be checked offline.
    `named`: (config field, model name) pairs."""
    from .models.loading import is_path_like, not_a_checkpoint

    problems = []
    shown = config.shown_source
    for field, name in named:
        local = (config.root / name).expanduser()
        if is_path_like(name):
            if not (local / "config.json").is_file():
                problems.append(Problem(shown, None, field, f"local model path {name!r} has no config.json"))
        elif local.is_dir() and not (local / "config.json").is_file():
            # A bare name may still be a Hub id, which cannot be checked offline: warn.
            problems.append(
                Problem(
                    shown,
                    None,
                    field,
                    not_a_checkpoint(name, local) + " (fine if it names a Hub model)",
                    severity="warning",
                )
            )
    return problems


def check_model_references(config: Config, kind: Kind) -> list[Problem]:
    """The shared sections' models and annotation keys; a kind checks its own sections. `kind`
    is the project's, handed by the caller (`of_config`)."""
    shown = config.shown_source
    from .models.served import is_served

    named = [("generate.model", config.generate.model)]
    named += [  # a served or vLLM name is checked when the stage contacts it
        (f"generate.proposers[{i}]", m) for i, m in enumerate(config.generate.proposers or []) if not is_served(m)
    ]
    named += [(f"evaluate.models[{i}]", m) for i, m in enumerate(config.evaluate.models)]
    problems = check_models(config, named)
    from .annotation.keys import BINDING_IDS

    problems += check_language(config, kind)
    scheme_ids = {c.binding_id for c in kind.scheme.choices} if kind.scheme else set()
    for key in sorted(set(config.annotation.keys) - BINDING_IDS - scheme_ids):
        problems.append(
            Problem(
                shown,
                None,
                f"annotation.keys.{key}",
                f"unknown key binding id; known: {', '.join(sorted(BINDING_IDS | scheme_ids))}",
            )
        )
    return problems


def check_language(config: Config, kind) -> list[Problem]:
    """`[project] language` without support, refused by `validate` at once when a stage of the
    project's kind reads the language's rules (its settings name the language), rather than
    first at `run`. Kinds that score or build text in any language are not concerned."""
    import re
    from types import SimpleNamespace

    from . import languages
    from .core.errors import ConfigError

    code = config.project.language
    if kind is None or kind.stages is None or languages.find(code) is not None:
        return []
    probe = SimpleNamespace(config=config, options={})
    for stage in kind.stages():
        try:
            reads = "language" in (stage.settings(probe) or {})
        except Exception:  # a stage whose settings need more than the config cannot say: not this check's concern
            continue
        if reads:
            try:
                languages.require(code, stage.name)
            except ConfigError as exc:
                message = str(exc)
            line = None
            if config.source and config.source.is_file():
                lines = config.source.read_text(encoding="utf-8").splitlines()
                line = next((n for n, text in enumerate(lines, start=1) if re.match(r"\s*language\s*=", text)), None)
            return [Problem(config.shown_source, line, "project.language", message)]
    return []
