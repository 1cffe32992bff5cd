"""The command line of every release's standalone evaluate.py, and `main`, which its launcher
calls with what the build pinned: the kind, the release (ORG/NAME@vX.Y.Z or None), the folder
the script is in and the evaluator's version.

A kind's standalone module (`Kind.standalone`) supplies what differs:

    evaluate(args, run, folder, origin, manifest) -> (doc, revisions)   the JSON document and
        each model's revision, computed with the code `workbench evaluate` uses
    TITLE, MEASURES, DATA                    what the launcher's docstring says it scores
    SCORES, MODEL_NOTE, EXAMPLE, REQUIREMENTS, COMMAND, MODEL_HELP    (optional) more of it
    add_options(parser)                      (optional) the kind's own options
    check_options(args) -> str | None        (optional) what is wrong with them, in one line
    provenance(args) -> dict                 (optional) what the provenance adds (an input's hash)

`main` finds and checks the release, calls `evaluate`, and writes the JSON: the kind's
document, how each model ran (`runtime`), --unverified warnings and the provenance. Every
problem a user can cause ends in one line `evaluate.py: error: ...` and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import WorkbenchError, one_line
from ...core.outputs import atomic_write_text, check_outputs, json_text, remove_empty
from ...evaluation.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    INTERVAL_HELP,
    Settings,
)
from ...models.runtime import add_model_options, runtime_record, spec_from_args
from .release import Refused, locate_release, unverified_warning, verified_manifest

SCORES = "language models"
MODEL_HELP = "masked or causal LM: a Hub name or a local checkpoint folder; repeat for several"


@dataclass
class Run:
    """What the launcher pinned, and how each model ran (model -> models.runtime.Runtime)."""

    kind: str
    dataset: str | None
    here: Path
    version: str
    runtimes: dict = field(default_factory=dict)


def headline(kind: str, title: str, dataset: str | None) -> str:
    """The first line of the launcher's docstring and of --help."""
    return f"Standalone evaluator for {dataset or 'an unpublished release'} ({title}, kind `{kind}`)."


def option_parser(standalone, run: Run) -> argparse.ArgumentParser:
    """The options every kind's script has, then the kind's own."""
    parser = argparse.ArgumentParser(
        description=headline(run.kind, standalone.TITLE, run.dataset),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    predictions = getattr(standalone, "PREDICTIONS", "")  # what a --predictions file holds, where the kind reads one
    model_help = getattr(standalone, "MODEL_HELP", MODEL_HELP)
    parser.add_argument(
        "--model",
        "-m",
        action="append",
        required=not predictions,
        help=model_help + (" (or --predictions)" if predictions else ""),
    )
    if predictions:
        parser.add_argument(
            "--predictions",
            "-p",
            action="append",
            metavar="FILE",
            help=f"score {predictions} read from FILE in place of a model (its model is named by the file's stem, "
            "or NAME=FILE); repeat for several",
        )
    parser.add_argument("--json", type=Path, help="write the scores as JSON to this file")
    parser.add_argument(
        "--from-hub",
        action="store_true",
        help="score the pinned revision from the Hub even when release files are beside the script",
    )
    parser.add_argument(
        "--unverified",
        action="store_true",
        help="score the files beside the script although manifest.json is missing (they cannot be "
        "checked; the JSON says so)",
    )
    # --device, --batch-size, --dtype, --device-map, ...: as `workbench evaluate`; --apply-chat-template
    # and --system-instruction where the kind's models answer multiple-choice requests
    add_model_options(parser, chat=getattr(standalone, "CHAT_TEMPLATE", False))
    parser.add_argument("--ci-level", type=float, default=DEFAULT_LEVEL, help=INTERVAL_HELP["ci_level"])
    parser.add_argument("--bootstrap", type=int, default=DEFAULT_RESAMPLES, help=INTERVAL_HELP["bootstrap"])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=INTERVAL_HELP["seed"])
    if hasattr(standalone, "add_options"):
        standalone.add_options(parser)
    return parser


def parsed(parser: argparse.ArgumentParser, standalone, argv=None) -> argparse.Namespace:
    """The options, with `args.spec` and `args.intervals`: the model options checked as `workbench evaluate` checks
    them, then the kind's; a bad value is argparse's one-line error (exit code 2)."""
    args = parser.parse_args(argv)
    if getattr(args, "predictions", None) and args.model:
        parser.error("give either --model or --predictions, not both")
    if not args.model and not getattr(args, "predictions", None):
        parser.error("one of --model or --predictions is required")
    try:
        args.spec = spec_from_args(args)
    except WorkbenchError as exc:
        parser.error(str(exc))
    args.intervals = Settings(args.ci_level, args.bootstrap, args.seed)  # as `workbench evaluate` gets them
    if args.intervals.problem():
        parser.error(args.intervals.problem())
    problem = standalone.check_options(args) if hasattr(standalone, "check_options") else None
    if problem:
        parser.error(problem)
    return args


def write_scores(doc: dict, path: Path | None) -> None:
    """The JSON, written atomically (a device or FIFO written through) as `workbench evaluate` writes
    it: a figure that is not a finite number as null."""
    if path:
        atomic_write_text(path, json_text(doc, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {path}")


def released_as(folder: Path, manifest: dict) -> dict:
    """What release was scored, as `workbench evaluate` records it: name, version, the manifest's
    sha256 and the data files' hashes it lists (checked before scoring), for a local folder too;
    which published copy its data is (`source_copy`, as its build recognised it: the table of known
    copies is not shipped) and, for a renewal, the copy it renews (`origin_copy`)."""
    import hashlib

    path = folder / "manifest.json"
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    files = manifest.get("files") or {}
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    origin = config.get("origin") if isinstance(config.get("origin"), dict) else {}
    return {
        "release_name": manifest.get("name"),
        "release_version": manifest.get("version"),
        "manifest_sha256": digest,
        "files": {n: d for n, d in files.items() if n.startswith("data/")} if isinstance(files, dict) else {},
        # which published copy the data is, as the build recognised it (workbench's table of known copies)
        "source_copy": manifest.get("source_copy") or "unknown",
        **({"origin_copy": origin["published_copy"]} if origin.get("published_copy") else {}),
    }


def _resolved(name: str) -> str:
    """A model folder's absolute path, else the Hub name as given."""
    folder = Path(name).expanduser()
    return str(folder.resolve()) if folder.is_dir() else name


def release_inputs(args: argparse.Namespace, run: Run, folder: Path, origin: dict, manifest: dict) -> list:
    """What the script reads, which --json must not replace: the release's manifest, the files
    it lists and its data/ folder (a downloaded snapshot whole), the script and its evaluator/,
    the models given as local folders or files, and any file an option names (a lexicon, say).
    A new file beside the script (`--json scores.json`, as the card says) is fine."""
    found: list = [("this script", run.here / "evaluate.py"), ("the evaluator's code", run.here / "evaluator")]
    if origin.get("dataset_folder") is None:
        found.append(("the downloaded release", folder))
    else:
        found += [("the release's manifest", folder / "manifest.json"), ("the release's data folder", folder / "data")]
        found += [("the release file", folder / name) for name in manifest.get("files") or {}]
    for name in args.model or []:
        path = Path(name).expanduser()
        if path.exists():
            found.append(("the model folder" if path.is_dir() else "the model file", path))
    found += [(f"the --predictions file of {name}", path) for name, path in named_predictions(args).items()]
    found += [
        (f"the --{dest.replace('_', '-')} file", value)
        for dest, value in vars(args).items()
        if dest != "json" and isinstance(value, Path)
    ]
    return found


def named_predictions(args: argparse.Namespace) -> dict[str, Path]:
    """Each --predictions file by the model it stands for, as `workbench evaluate` names them."""
    from ...evaluation.declared import prediction_names

    return prediction_names(getattr(args, "predictions", None) or [])


# How `workbench evaluate` names a model behind a server or run by vLLM (models/served.is_served).
SERVED = ("http://", "https://", "vllm:")


def refuse_served(models: list[str], dataset: str | None) -> None:
    """A served or vLLM model is refused before anything is read: this script loads checkpoints
    with transformers alone (`from_pretrained` would read `http://...` as a malformed Hub name)."""
    served = next((m for m in models if m.strip().lower().startswith(SERVED)), None)
    if served is not None:
        raise Refused(
            f"--model {served}: a release's evaluate.py runs local checkpoints and Hub models only, not a "
            f"model behind a server or run by vLLM; ask it with `workbench evaluate {dataset or 'RELEASE'} "
            f"--model {served}` (the workbench package), which asks served models where the kind can"
        )


def main(
    standalone, *, kind: str, dataset: str | None, here: Path, version: str, argv=None, kind_code: dict | None = None
) -> int:
    """Score the release with the kind's `standalone.evaluate` and write the JSON; 0 when
    scored, 2 when refused (the problem said in one line). `kind_code`: the kind's package,
    version and code hash the build pinned (the provenance records it)."""
    run = Run(kind, dataset, Path(here), version)
    args = parsed(option_parser(standalone, run), standalone, argv)
    made: list[Path] = []
    try:
        refuse_served(args.model or [], dataset)
        folder, origin = locate_release(run.here, dataset, args.from_hub, args.unverified)
        manifest = verified_manifest(folder, kind, origin)
        made = check_outputs([("--json", args.json, False)], release_inputs(args, run, folder, origin, manifest))
        try:
            doc, revisions = standalone.evaluate(args, run, folder, origin, manifest)
        except (Refused, WorkbenchError, OSError):
            raise
        except (Exception, SystemExit) as exc:  # the kind's code failed: one line naming it, as workbench says it
            raise Refused(f"kind {kind!r}: its evaluator failed: {one_line(exc)}") from exc
        doc = {k: v for k, v in doc.items() if k not in ("tool", "tool_version")}
        doc["runtime"] = runtime_record(args.spec, run.runtimes)
        if origin.get("unverified"):
            doc["unverified"] = [unverified_warning(folder)]
        provenance = {
            "evaluator": "standalone evaluate.py",
            "evaluator_version": version,
            "kind_code": kind_code,
            "release": dataset,
            "dataset_folder": origin["dataset_folder"],
            "dataset_commit": origin["dataset_commit"],
            "model_revisions": revisions,
            **released_as(folder, manifest),
            "models": {
                name: {"given": name, "resolved": _resolved(name), "revision": revision}
                for name, revision in revisions.items()
            },
            "intervals": {
                "level": args.intervals.level,
                "resamples": args.intervals.resamples,
                "seed": args.intervals.seed,
            },
            **(standalone.provenance(args) if hasattr(standalone, "provenance") else {}),
        }
    except (Refused, WorkbenchError, OSError) as exc:
        remove_empty(made)  # nothing half-written: no folder made for a JSON that never came
        print(f"evaluate.py: error: {exc}", file=sys.stderr)
        return 2
    try:
        write_scores({"tool": "evaluate.py", "tool_version": version, **doc, "provenance": provenance}, args.json)
    except OSError as exc:  # checked before scoring, but a disk can fill: one line, nothing left behind
        print(f"evaluate.py: error: cannot write {args.json}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0
