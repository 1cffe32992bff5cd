"""`workbench templates ...`: import, lint and mask suggestions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from ...core.errors import ConfigError, Problem, display_path
from ...cli.common import console, err_console, example, get_config, print_problems

app = typer.Typer(
    help="Author templates: import BBNLI files, lint, and get mask suggestions.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=example(
        "workbench templates import-bbnli ../shared/bbnli --out templates/bbnli",
        "workbench templates lint templates/",
        "workbench templates suggest-masks templates/ --out suggestions.yaml",
    ),
)


@app.command(
    "import-bbnli",
    epilog=example(
        "workbench templates import-bbnli ../shared/bbnli --out templates/bbnli",
        "workbench templates import-bbnli ../shared/bbnli/gender/man_is_to_surgeon.json --out templates/",
    ),
)
def import_bbnli(
    src: Path = typer.Argument(..., help="A BBNLI JSON file, or a folder searched recursively for them."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the converted YAML templates (sub-folders kept)."),
    force: bool = typer.Option(False, "--force", help="Overwrite converted files that already exist."),
) -> None:
    """Convert BBNLI source files into the project's template format, losslessly.

    References, phenomenon, category, questions, the original id/name and answer choices
    are all kept. Files that cannot be read are reported and the others still convert.
    """
    from .templates.bbnli import dump_yaml, read_bbnli
    from ...authoring.files import find_template_files

    files, problems = find_template_files([src])
    files = [f for f in files if f.suffix == ".json"]
    written = skipped = 0
    base = src if src.is_dir() else src.parent
    for f in files:
        data, found = read_bbnli(f)
        problems += found
        if data is None:
            continue
        target = out / f.relative_to(base).with_suffix(".yaml")
        if target.exists() and not force:
            skipped += 1
            problems.append(Problem(display_path(target), None, "", "exists; not overwritten (use --force)", "warning"))
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        dump_yaml(data, target)
        written += 1
    print_problems(problems)
    console.print(
        f"converted {written} file(s) into {display_path(out)}" + (f", {skipped} left as they were" if skipped else "")
    )
    if any(p.severity == "error" for p in problems):
        raise typer.Exit(2)


@app.command(
    "lint",
    epilog=example(
        "workbench templates lint                # the templates folder of workbench.toml",
        "workbench templates lint templates/ ../shared/bbnli --strict",
    ),
)
def lint(
    ctx: typer.Context,
    paths: Optional[List[Path]] = typer.Argument(
        None, help="Template files or folders (default: the configured templates folder)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Fail on warnings too."),
) -> None:
    """Report every problem in the templates, each with file, field path and (YAML) line.

    Exit code 0 when clean, 2 when there are errors (or warnings with --strict).
    """
    from ... import kinds, languages
    from .templates.loader import load_templates

    config = get_config(ctx, check=False)
    kind = kinds.of_config(config)
    language = languages.find(config.project.language)  # validate refuses one without support
    if kind.name == "nli":
        from .templates.lint import grammar_problems, unmasked_bias_hypotheses

        templates, problems = load_templates(list(paths or [config.path("templates")]))
        problems += unmasked_bias_hypotheses(templates) + grammar_problems(templates, language)
        n_ok = len(templates)
    else:  # the project's own kind checks its own template files
        if kind.check_templates is None:
            raise ConfigError(f"the {kind.name} kind has no template files to lint")
        from ...authoring.stages import Layout
        from .templates.lint import identity_number_problems

        n_ok, problems = 0, []
        for path in paths or [config.path("templates")]:
            n, found = kind.check_templates(_with_templates(config, path))
            n_ok, problems = n_ok + n, problems + found
        n_ok -= len({p.file for p in problems if p.severity == "error"})
        if isinstance(kind.release, Layout) and not any(p.severity == "error" for p in problems):
            problems += identity_number_problems(kind.release.authoring, paths or [config.path("templates")], language)
    print_problems(problems)
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    files = len({p.file for p in problems})
    summary = f"{n_ok} template(s) ok; {errors} error(s), {warnings} warning(s)"
    if problems:
        summary += f" in {files} file(s)"
    (err_console if problems else console).print(summary)
    if errors or (strict and warnings):
        raise typer.Exit(2)


def _with_templates(config, path: Path):
    """The project's config with its templates folder pointed at `path` (lint of named files)."""
    project = config.project.model_copy(update={"templates": str(Path(path).resolve())})
    return config.model_copy(update={"project": project})


@app.command(
    "suggest-masks",
    epilog=example(
        "workbench templates suggest-masks                       # print suggestions as YAML",
        "workbench templates suggest-masks templates/ --out suggestions.yaml",
    ),
)
def suggest_masks(
    ctx: typer.Context,
    paths: Optional[List[Path]] = typer.Argument(
        None, help="Template files or folders (default: the configured templates folder)."
    ),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", help="Write suggestions to this YAML file instead of stdout."
    ),
    include_test: bool = typer.Option(False, "--include-test", help="Also suggest masks for test hypotheses."),
    spacy_model: Optional[str] = typer.Option(
        None,
        "--spacy-model",
        help="spaCy pipeline for POS tags (default: an installed pipeline of [project] language).",
    ),
) -> None:
    """Propose masked variants of unmasked hypotheses (mask the verb; replace a word-list
    placeholder by a mask; add a mask beside a placeholder). Suggestions are written for the
    author to accept or edit; templates are never changed.
    """
    from .templates.loader import load_templates_or_fail
    from .templates.masks import suggest, write_suggestions

    from ... import languages

    config = get_config(ctx, check=False)
    language = languages.require(config.project.language, "`workbench templates suggest-masks`")
    if not paths:
        from ... import kinds

        if kinds.of_config(config).name != "nli":
            raise ConfigError(
                f"`workbench templates suggest-masks` proposes masks for nli templates; this project's "
                f"kind is {kinds.of_config(config).name!r}, which has no masks"
            )
        paths = [config.path("templates")]
    templates, _ = load_templates_or_fail(list(paths))
    suggestions = suggest(templates, include_test=include_test, spacy_model=spacy_model, language=language)
    write_suggestions(suggestions, out if out else sys.stdout)
    err_console.print(
        f"{len(suggestions)} suggestion(s) for {len({s['template'] for s in suggestions})} template(s)"
        + (f" written to {display_path(out)}" if out else "")
    )
