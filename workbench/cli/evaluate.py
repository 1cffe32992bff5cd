"""`workbench evaluate`: score models on any kind's release, public file or templates.

The options every kind shares are declared here; each kind's evaluator declares its own
(`Kind.options()`: its `Declared.options`, or the kind's `evaluator_options`), and they are added
to this command for every installed kind, named in --help with the kinds that take them.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import List, Optional

import typer

from ..core.errors import InputError
from ..evaluation.declared import prediction_names
from ..evaluation.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    INTERVAL_HELP,
    Settings,
)
from ..models.runtime import MODEL_OPTION_HELP, load_spec
from .common import console, err_console, example, get_config, get_workspace


def _kind_options(plugins: bool = True) -> dict[str, tuple]:
    """dest -> (the first declaration of an option, the kinds that declare it, each kind's help);
    without `plugins`, of workbench's own kinds only."""
    from .. import kinds

    found: dict[str, tuple] = {}
    for kind in kinds.loadable(plugins):
        for option in kind.options():
            first, owners, helps = found.setdefault(option.dest, (option, [], []))
            owners.append(kind.name)
            text = option.help + (f" (default {option.default})" if option.default is not None else "")
            helps.append(f"{kind.name}: {text}")
    return found


def own_options() -> dict[str, str]:
    """The flags and option names (dests) that `workbench evaluate` and a release's evaluate.py
    define themselves, each with whose it is: no kind may declare one (contract/registry.reserve)."""
    from types import SimpleNamespace

    from ..release.runtime.cli import Run, option_parser

    own = {"--help": "workbench evaluate's --help", "-h": "workbench evaluate's -h"}
    for param in inspect.signature(evaluate).parameters.values():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        flags = getattr(param.default, "param_decls", None) or ()
        whose = f"workbench evaluate's {flags[0] if flags else param.name}"
        own[param.name] = whose
        own.update({flag: f"workbench evaluate's {flag}" for flag in flags})
    script = option_parser(SimpleNamespace(TITLE=""), Run("", None, Path("."), ""))
    for action in script._actions:
        whose = f"a release evaluate.py's {action.option_strings[0] if action.option_strings else action.dest}"
        own.setdefault(action.dest, whose)
        for flag in action.option_strings:
            own.setdefault(flag, f"a release evaluate.py's {flag}")
    return own


def register(app: typer.Typer, plugins: bool = True) -> None:
    """The command, with the kinds' own options added to its signature (without `plugins`,
    those of workbench's own kinds: what --help lists before any plugin is imported)."""
    import typing

    signature = inspect.signature(evaluate)
    hints = typing.get_type_hints(evaluate)  # real types: the module's annotations are strings
    params = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in signature.parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    for dest, (option, owners, helps) in sorted(_kind_options(plugins).items()):
        help_text = "; ".join(helps)  # each kind says what the option means to it
        params.append(
            inspect.Parameter(
                dest,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Optional[str],
                default=typer.Option(None, option.flag, help=help_text, metavar=option.metavar or None),
            )
        )

    def command(ctx: typer.Context, **kwargs) -> None:
        evaluate(ctx, **kwargs)

    command.__signature__ = signature.replace(parameters=params)
    command.__doc__ = evaluate.__doc__
    command.__name__ = "evaluate"
    app.command(
        "evaluate",
        epilog=example(
            "workbench evaluate exports/NAME/1.0.0 --model MODEL          # a release built here",
            "workbench evaluate ORG/NAME@v1.0.0 ORG/NAME@v1.1.0 --model MODEL --json scores.json --plots plots/",
            "workbench evaluate public-file.csv --kind KIND --model MODEL  # a benchmark's public file",
            "workbench evaluate ORG/NAME@v1.0.0 --model BIG-LM --dtype bfloat16 --device-map auto --max-memory 0=40GiB,1=40GiB,cpu=200GiB",
            "workbench kinds                                              # the kinds, and `--kind` values",
        ),
    )(command)


def evaluate(
    ctx: typer.Context,
    datasets: Optional[List[str]] = typer.Argument(
        None,
        help="ORG/NAME@vX.Y.Z (Hub release), a release folder, or a file or folder in a kind's own layout. Several are shown side by side where the kind allows.",
    ),
    model: Optional[List[str]] = typer.Option(
        None,
        "--model",
        "-m",
        help="Model (Hub name or local folder); repeat for several (default: evaluate.models, else the kind's).",
    ),
    predictions: Optional[List[str]] = typer.Option(
        None,
        "--predictions",
        "-p",
        help="Score precomputed predictions instead of running models in the kind's exchange layout (a likelihood kind: per-sentence log-likelihoods as JSON lines; a generation kind: each prompt's completion, which its judge scores; see README). Where the kind takes a file per model, repeat it: each names its model by the file's stem, or as NAME=FILE.",
    ),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write all measures as JSON."),
    csv_out: Optional[Path] = typer.Option(
        None, "--csv", help="Write all measures as CSV (one row per model and group)."
    ),
    plots: Optional[Path] = typer.Option(None, "--plots", help="Write PNG charts into this folder."),
    cache: Optional[Path] = typer.Option(
        None,
        "--cache",
        help="Score cache file (SQLite). Default: the project's workspace (<workspace>/cache/models.sqlite); outside a project, models.sqlite in the user's cache folder ($XDG_CACHE_HOME/workbench, else ~/.cache/workbench). Scores are keyed by model, revision, dtype, device type and the token ids scored.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Compute every score afresh and read or write no cache."),
    kind: Optional[str] = typer.Option(
        None,
        "--kind",
        "-k",
        help="Benchmark kind, as `workbench kinds` lists them (default: read from the release's manifest or recognised from the file).",
    ),
    score_rule: Optional[str] = typer.Option(
        None, "--score-rule", help="The kind's scoring rule, where it has several (see the kind's docs)."
    ),
    items: Optional[Path] = typer.Option(
        None,
        "--items",
        help="Write one row per scored item (pair, probe, template) to this file, with a model column, in the format its extension names (.csv, .tsv, .parquet, .jsonl or .json).",
    ),
    predictions_out: Optional[Path] = typer.Option(
        None,
        "--predictions-out",
        help="Write each model's per-item scores in the format --predictions reads (the kind's exchange layout: its reference tool's where it has one, per-sentence log-likelihoods for a likelihood kind, completions for a generation kind); with several models, one file each (NAME.MODEL.EXT).",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="Refuse a file with rows that cannot be scored instead of reporting them by line, skipping them and scoring the rest (the output counts them).",
    ),
    unverified: bool = typer.Option(
        False,
        "--unverified",
        help="Score a release folder that has no manifest.json (its files cannot be checked); the output says so.",
    ),
    device: Optional[str] = typer.Option(
        None, "--device", help=MODEL_OPTION_HELP["device"] + " (default: evaluate.device)."
    ),
    batch_size: Optional[str] = typer.Option(
        None, "--batch-size", help=MODEL_OPTION_HELP["batch_size"] + " (auto: evaluate.batch_size)."
    ),
    dtype: str = typer.Option("auto", "--dtype", help=MODEL_OPTION_HELP["dtype"] + "."),
    device_map: Optional[str] = typer.Option(None, "--device-map", help=MODEL_OPTION_HELP["device_map"] + "."),
    max_memory: Optional[str] = typer.Option(None, "--max-memory", help=MODEL_OPTION_HELP["max_memory"] + "."),
    load_in_8bit: bool = typer.Option(False, "--load-in-8bit", help=MODEL_OPTION_HELP["load_in_8bit"] + "."),
    load_in_4bit: bool = typer.Option(False, "--load-in-4bit", help=MODEL_OPTION_HELP["load_in_4bit"] + "."),
    logprob_dtype: str = typer.Option("float32", "--logprob-dtype", help=MODEL_OPTION_HELP["logprob_dtype"] + "."),
    apply_chat_template: bool = typer.Option(
        False,
        "--apply-chat-template",
        help=MODEL_OPTION_HELP["apply_chat_template"] + " (kinds with an lm-evaluation-harness task).",
    ),
    system_instruction: Optional[str] = typer.Option(
        None, "--system-instruction", metavar="TEXT", help=MODEL_OPTION_HELP["system_instruction"] + "."
    ),
    ci_level: float = typer.Option(DEFAULT_LEVEL, "--ci-level", help=INTERVAL_HELP["ci_level"] + "."),
    bootstrap: int = typer.Option(DEFAULT_RESAMPLES, "--bootstrap", help=INTERVAL_HELP["bootstrap"] + "."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help=INTERVAL_HELP["seed"] + "."),
    **kind_options,
) -> None:
    """Score models on a bias benchmark with its kind's measures, as its reference tool computes
    them (`workbench kinds` lists the kinds; each kind's docs name its measures). The kind is read
    from a release's manifest or recognised from the file; --kind names it. Options marked with
    kind names below belong to those kinds' evaluators.
    """
    from .. import kinds
    from ..evaluation.declared_report import evaluator_of
    from ..evaluation.request import EvaluateRequest
    from ..sources.checks import check

    config = get_config(ctx)
    # manifests checked, data decoded strictly, the kind read from them (without sources: the project's)
    checked = check(
        list(datasets or []), kind or (None if datasets else kinds.of_config(config).name), unverified, kinds
    )
    for warning in checked.warnings:
        console.print(f"warning: {warning}", style="yellow", markup=False)
    for line in checked.skipped:  # a broken kind left out of recognising the sources: said, never fatal
        err_console.print(f"warning: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)
    chosen = kinds.get(checked.kind)
    options = _options_for(chosen, kind_options)
    intervals = Settings(ci_level, bootstrap, seed)
    if intervals.problem():
        raise InputError(intervals.problem())
    named_predictions = prediction_names(predictions or [])
    first = next(iter(named_predictions.values()), None)
    if not datasets and first is None:
        raise InputError(f"name the {chosen.name} release or file to evaluate (or --predictions FILE); see --help")
    spec = load_spec(
        device=device or config.evaluate.device,
        batch_size=batch_size,
        dtype=dtype,
        device_map=device_map,
        max_memory=max_memory,
        load_in_8bit=load_in_8bit,
        load_in_4bit=load_in_4bit,
        logprob_dtype=logprob_dtype,
        apply_chat_template=apply_chat_template,
        system_instruction=system_instruction,
        default_batch=config.evaluate.batch_size,
    )
    if spec.chat_template and not getattr(evaluator_of(chosen.evaluator_module()), "CHAT_TEMPLATE", False):
        generates = "chat_template" in {getattr(o, "dest", None) for o in chosen.options()}
        raise InputError(
            f"--apply-chat-template: kind {chosen.name}'s models answer no multiple-choice requests to put in a "
            "chat template (the kinds with an lm-evaluation-harness task do); "
            + ("its generation takes --chat-template on" if generates else "leave it out")
        )
    if first is None:
        from ..models.loading import preflight

        preflight(list(model or []), config.root)  # every named local model's files, before any model scores
    request = EvaluateRequest(
        sources=checked.sources,
        models=list(model or []),
        predictions=first,
        named_predictions=named_predictions,
        predictions_out=predictions_out,
        json_out=json_out,
        csv_out=csv_out,
        plots=plots,
        items_out=items,
        score_rule=score_rule,
        options=options,
        batch_size=config.evaluate.batch_size,
        device=config.evaluate.device,
        cache_path=cache_path(config, cache, no_cache),
        root=config.root,
        config=config,
        load=spec,
        unverified=checked.warnings,
        intervals=intervals,
        strict=strict,
        kind=chosen.name,
        kind_code=_kind_code(chosen),
    )
    for line in other_code(request.sources, chosen.name, request.kind_code):
        err_console.print(f"warning: {line}", style="yellow", markup=False, highlight=False, soft_wrap=True)
    if request.cache_path is not None:
        from ..core.cache import usage

        request.cache_usage_at_start = usage(request.cache_path)
    made = check_outputs(request, chosen, list(datasets or []))  # before any model loads
    try:
        _run(request, chosen)
    except BaseException:  # nothing half-written: no folder made for outputs that never came
        from ..core.outputs import remove_empty

        remove_empty(made)
        raise


def _run(request, chosen) -> None:
    """Score the request with the chosen kind's evaluator and write the sidecars; an exception a
    plugin's evaluator raises (its bug) is one line naming the kind."""
    from ..core import distributed
    from ..core.errors import display_path
    from ..models.runtime import describe_versions

    shown_cache = display_path(request.cache_path) if request.cache_path else "off (--no-cache)"
    console.print(f"{describe_versions()}; score cache: {shown_cache}", markup=False, highlight=False)
    if not distributed.is_main():  # under a launcher every rank scores its share; rank 0 writes the outputs
        import dataclasses

        request = dataclasses.replace(
            request, json_out=None, csv_out=None, plots=None, items_out=None, predictions_out=None
        )
    from ..evaluation.declared_report import Unanswered, evaluator_of

    module = evaluator_of(chosen.evaluator_module())
    try:
        if len(request.sources) > 1 and not getattr(module, "MANY_SOURCES", False):
            from ..evaluation.versions import evaluate_versions

            evaluate_versions(module, request, console, chosen)  # each alone, then side by side
        else:
            try:
                module.evaluate(request, console)
            except Unanswered:  # its outputs were written: their sidecars too, before the one line
                write_sidecars(request)
                raise
    except (Exception, SystemExit) as exc:  # a plugin that exits is a broken plugin too
        from ..contract.loader import KindBroken, is_plugin
        from ..core.errors import WorkbenchError

        if isinstance(exc, WorkbenchError) or not is_plugin(chosen):
            raise
        raise KindBroken(chosen, "its evaluator failed", exc) from exc
    write_sidecars(request)


def _kind_code(kind) -> dict:
    from ..release.build import kind_code

    return kind_code(kind)


def other_code(sources: list[str], kind: str, installed: dict) -> list[str]:
    """A line for each release whose evaluate.py runs other code of the kind than the installed
    one (its manifest's `kind_code`): its figures and this run's may differ, and this says why."""
    from ..evaluation.provenance import release_manifest
    from ..release.changes import shown_code

    lines = []
    for spec in sources:
        manifest = release_manifest(spec) or {}
        built = manifest.get("kind_code")
        if manifest.get("kind") == kind and isinstance(built, dict) and built != installed:
            lines.append(
                f"{spec} was built with kind {kind} from {shown_code(built)}; the installed kind is "
                f"{shown_code(installed)}: these figures may differ from those of the release's evaluate.py"
            )
    return lines


def write_sidecars(request) -> None:
    """Beside each CSV the run wrote (measures, items): `<file>.provenance.json`, how it was made
    (per model its revision, dtype, device and batch size; the versions), as the JSON's `runtime`."""
    from ..core.outputs import json_text
    from ..core.workspace import atomic_write_text

    for path in (request.csv_out, request.items_out):
        if path is not None and Path(path).is_file():
            atomic_write_text(provenance_path(Path(path)), json_text(request.annotations(), indent=2) + "\n")


def provenance_path(path: Path) -> Path:
    from ..evaluation.output import provenance_path as beside

    return beside(path)


def check_outputs(request, chosen, datasets: list[str]) -> list[Path]:
    """Every output path checked (and its folder made) before any work: none may be an input or
    another output, or unwritable (evaluation/output.check_request_outputs). Sources evaluated
    one by one also write each version's own files, which are checked too."""
    from ..evaluation.output import check_request_outputs

    versions = None
    if len(request.sources) > 1 and not getattr(chosen.evaluator_module(), "MANY_SOURCES", False):
        from ..evaluation.versions import version_tags

        versions = version_tags(list(request.sources))
    return check_request_outputs(request, datasets, versions)


def user_cache_dir() -> Path:
    """The user's cache folder for workbench ($XDG_CACHE_HOME/workbench, else ~/.cache/workbench)."""
    import os

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workbench"


def cache_path(config, given: Path | None, off: bool) -> Path | None:
    """The score cache `evaluate` uses: --cache, else the project's workspace, else the user's
    cache folder (never the current folder); None with --no-cache."""
    if off:
        if given is not None:
            raise InputError("--cache and --no-cache: choose one")
        return None
    from ..core.cache import verify  # a folder, or a file that is not the cache: refused before any model loads

    if given is not None:
        return verify(given)
    if config.source is not None:  # a project (workbench.toml found)
        return verify(get_workspace(config).root / "cache" / "models.sqlite")
    return verify(user_cache_dir() / "models.sqlite")


def _options_for(kind, given: dict) -> dict:
    """The values of the chosen kind's own options, converted; an option of another kind is refused."""
    declared = {o.dest: o for o in kind.options()}
    converted = {}
    for dest, text in given.items():
        if text is None:
            continue
        if dest not in declared:
            owners = _kind_options().get(dest, (None, [], []))[1]
            flag = "--" + dest.replace("_", "-")
            raise InputError(f"{flag} is an option of {', '.join(owners) or 'no installed kind'}, not of {kind.name}")
        option = declared[dest]
        if option.choices and text not in option.choices:
            raise InputError(f"{option.flag} must be one of {', '.join(option.choices)} (got {text!r})")
        try:
            converted[dest] = option.type(text)
        except (TypeError, ValueError):
            raise InputError(
                f"{option.flag}: {text!r} is not a valid value ({getattr(option.type, '__name__', 'text')})"
            ) from None
    return kind.option_values(converted)
