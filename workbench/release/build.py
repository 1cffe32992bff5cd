"""`workbench build --version X.Y.Z`: a versioned release folder in exports/<name>/<version>/.

    data/all.parquet, data/<domain>.parquet   release samples (one Hub config each)
    README.md                                 dataset card (Hub YAML header + prose)
    evaluate.py                               the bundled evaluator, pinned to this release
    evaluator/                                the workbench modules it runs, copied (release/standalone)
    lm_eval_tasks/                            the release as an lm-evaluation-harness task, where the kind has one
    CHANGELOG.md                              what changed since the previous version (earlier entries kept)
    changes.csv                               every row added, edited or removed, the fields changed, the reason where known
    manifest.json                             sha256 of every file, template hashes, config

Nothing in the folder depends on the time or the machine, so building twice from the same
inputs gives byte-identical files. An existing version with different content is never
overwritten silently (it needs --force).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..contract.kind import Kind
from ..core.config import Config
from ..core.errors import InputError, StageError
from ..core.ids import file_sha256
from ..core.workspace import Workspace, atomic_write_text
from . import changes, generic, lmeval
from .local_paths import local_names, refuse_machine_paths, without
from .staging import staging_folder
from .versions import VERSION, export_dir, parse_version, previous_version  # noqa: F401 (re-exported)

EVALUATE_PY = '''"""Evaluate models on this {kind} release with workbench's evaluator.

    pip install {distribution}
    python evaluate.py --model MODEL --json scores.json

Kind `{kind}` has no standalone evaluator yet, so this script runs `workbench evaluate`
(the package above) on the release files beside it, or on {target} when it is
run elsewhere. It takes the options of `workbench evaluate`.
"""
import os
import subprocess
import sys

DATASET = {dataset!r}
HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    beside = os.path.isfile(os.path.join(HERE, "manifest.json"))
    target = HERE if beside or not DATASET else DATASET
    sys.exit(subprocess.call([sys.executable, "-m", "workbench", "evaluate", target, *sys.argv[1:]]))
'''


def write_evaluator(kind: Kind, dataset: str | None, folder: Path) -> None:
    """The release's evaluate.py: the kind's standalone evaluator with its evaluator/ folder (see
    release/standalone/), or for a kind without one the shim above, which needs workbench installed."""
    from .. import DISTRIBUTION
    from .standalone import write

    if write(kind, dataset, folder, kind_code(kind)) is not None:
        return
    install = DISTRIBUTION if kind.package in ("workbench", DISTRIBUTION) else f"{DISTRIBUTION} {kind.package}"
    (folder / "evaluate.py").write_text(
        EVALUATE_PY.format(
            kind=kind.name, distribution=install, dataset=dataset, target=dataset or "the folder it is in"
        ),
        encoding="utf-8",
    )


def kind_code(kind: Kind) -> dict:
    """Which code of the kind a release's figures come from: its package, version and the hash of
    its code (contract/code.py), as the manifest, the release's evaluate.py and every result record it."""
    from ..contract.code import identity

    return {k: v for k, v in identity(kind).items() if k != "kind"}


@dataclass
class Release:
    """What a kind's release hooks see while a version is built."""

    config: Config
    workspace: Workspace
    version: str
    rows: list[dict]
    summary: dict
    domains: list[str] = field(default_factory=list)
    notes: str = ""  # the maintainer's release notes (build --notes)
    left_out: dict[str, int] = field(default_factory=dict)  # queue items without a final label, by status
    original: bool = False  # a renewal's imported data as published (build --original)
    audit_scope: dict | None = None  # a renewal: items audited of how many, those kept unaudited
    layout: str = "workbench"  # "original": the data file laid out as the published file
    kind: Kind | None = None  # the project's kind, handed by the build (its words, options and package)


SHOWN_UNDECIDED = 5


def undecided(config: Config, items: list, finals: dict, default_validators: int | None = None) -> list[tuple]:
    """(item, status) of every queue item without a final label: not labelled, waiting for votes,
    or a disagreement someone can still settle. Under `majority`, a disagreement among all the
    validators expected (`[annotation] validators`, else the kind's) is settled: no majority, so
    the policy leaves the item out."""
    from ..annotation.policy import DISAGREEMENT, FINAL

    ac = config.annotation
    expected = ac.validators if "validators" in ac.model_fields_set else (default_validators or ac.validators)
    out = []
    for item in items:
        final = finals[item.id]
        settled = (
            final.status == DISAGREEMENT and ac.policy == "majority" and len(final.votes) >= max(expected, ac.min_votes)
        )
        if final.status != FINAL and not settled:
            out.append((item, final.status))
    return out


def undecided_lines(open_items: list[tuple], total: int) -> list[str]:
    """How many queue items have no final label, and the first few of them (id, text, status)."""
    counts = Counter(status for _, status in open_items)
    shown = [f"  {item.id}  {item.hypothesis}  ({status})" for item, status in open_items[:SHOWN_UNDECIDED]]
    more = (
        [f"  ... and {len(open_items) - SHOWN_UNDECIDED} more (`workbench annotations stats`)"]
        if len(open_items) > SHOWN_UNDECIDED
        else []
    )
    return [
        f"{len(open_items)} of the {total} queue items have no final label yet "
        f"({', '.join(f'{n} {s}' for s, n in sorted(counts.items()))}):",
        *shown,
        *more,
    ]


def build(
    config: Config,
    kind: Kind,
    version: str,
    *,
    force: bool = False,
    allow_unlabelled: bool = False,
    notes: str = "",
    original: bool = False,
    unaudited: str = "refuse",
    layout: str | None = None,
) -> dict:
    """Build the configured kind's release: its release stage's rows (computed if stale), written
    by the kind's layout, with the card, changelog, evaluator and a manifest of every file.
    Queue items without a final label refuse the build unless `allow_unlabelled` (the card then
    says how many were left out); `notes` are the maintainer's release notes. `original`: in a
    renewal project, the imported data as published, before any audit (the version the renewed
    one is compared with). `unaudited`: in a renewal, what becomes of the items nobody audited (a
    partial audit): "refuse" lists them and stops, "keep" releases them unchanged, as published.
    `layout`: "original" lays the data file out as the published file (its columns, their order, its
    index column, its row order; the kind's layout's `write_original`), "workbench" as the kind's
    release layout; None (the default) is "original" in a renewal project whose kind can, else
    "workbench". `kind` is the project's (the command line finds it: `of_config`)."""
    import pyarrow as pa

    from ..annotation.session import items_from_table
    from ..annotation.summary import final_labels_for, summarise
    from ..authoring.renew import adjudicated_rows, adjudication_lines, adjudications, audit_changes

    parse_version(version)
    asked = layout
    if kind.release_stage is None or kind.release is None:
        raise StageError(f"kind {kind.name!r} cannot build releases")
    if asked not in (None, "original", "workbench"):
        raise InputError(f"--layout {asked}: original or workbench")
    if asked == "original" and (config.origin is None or getattr(kind.release, "write_original", None) is None):
        raise InputError(
            "--layout original lays a renewal out as the published file it imported: "
            + (
                "this project has no [origin] (start one with `workbench import`)"
                if config.origin is None
                else f"kind {kind.name!r} has no layout of the published file (build with --layout workbench)"
            )
        )
    if original and (config.origin is None or kind.audit is None):
        raise InputError(
            "--original builds the published data a renewal project imported; this project has no "
            "[origin] (start one with `workbench import`)"
        )
    if config.origin is not None:  # a renewal: released only under a licence the original's allows
        from ..authoring.licences import refusal

        why = refusal(config.origin.license, config.project.license, as_published=original)
        if why:
            raise InputError(why)
    pipeline = kind.pipeline(config)
    produced = pipeline.run(kind.audit.original_stage if original else kind.release_stage)
    items = items_from_table(pipeline.table(kind.queue_stage))
    labels = final_labels_for(config, [i.id for i in items], kind.scheme)
    open_items = [] if original else undecided(config, items, labels.finals, kind.default_validators)
    scope = None
    if config.origin is not None and kind.audit is not None and not original:
        from ..authoring.renew import partial_audit, unaudited_lines

        scope = partial_audit(pipeline, kind, items, labels)
        if unaudited == "keep":  # released unchanged below, so not left out
            open_items = [(item, status) for item, status in open_items if status != "unlabelled"]
    if open_items and not allow_unlabelled:
        partial = " or --unaudited keep to release those nobody labelled unchanged" if scope is not None else ""
        raise InputError(
            "\n".join(
                [
                    *undecided_lines(open_items, len(items)),
                    "label them (`workbench annotate`), or pass --allow-unlabelled to build without "
                    f"them (the card then says how many were left out){partial}",
                ]
            )
        )
    if scope is not None and scope["outside"] and unaudited != "keep":
        raise InputError("\n".join(unaudited_lines(scope, config.origin.sample)))
    # the stage's columns that nothing of a release reads (the layout says which) are not read, nor
    # made Python objects: a million rows as dicts take gigabytes
    table = pipeline.workspace.read(
        kind.audit.original_stage if original else kind.release_stage,
        without=tuple(getattr(kind.release, "unread_columns", ())),
    )
    if original and "label" not in table.column_names:  # {"label": "published", **row}, each dict made once
        table = table.add_column(0, "label", pa.repeat(pa.scalar("published"), table.num_rows))
    rows = table.to_pylist()
    if original and rows and rows[0].get("label") != "published":
        rows = [{"label": "published", **r} for r in rows]
    del table
    if scope is not None and unaudited == "keep":  # nobody audited them: released as published
        rows += [{"label": "unaudited", **r, **({"audit": "unaudited"} if "audit" in r else {})} for r in scope["rows"]]
        scope["kept"] = len(scope["unaudited"])
    if not rows:
        raise StageError("no release samples: label items valid first")
    release = Release(
        config,
        pipeline.workspace,
        version,
        rows,
        summarise(config, items, labels),
        notes=notes,
        left_out=dict(Counter(status for _, status in open_items)),
        original=original,
        audit_scope=None if scope is None else {k: v for k, v in scope.items() if k != "rows"},
        kind=kind,
    )
    layout = kind.release
    target = export_dir(config, version)
    messages: list[str] = []
    if config.origin is not None and config.origin.license:
        from ..authoring.licences import known, normalised

        if not known(normalised(config.origin.license)):
            messages.append(
                f"the original's licence {config.origin.license!r} is not one the workbench knows: check "
                f"that it allows releasing this data under {config.project.license or 'no licence'}"
            )
    if force and config.project.repo:
        _refuse_if_published(config.project.repo, version, messages)
    found = changes.find_previous(config, version, layout.read_release, messages)
    previous = found.version if found else None
    expand_manifest = pipeline.workspace.manifest("expand") or {}
    basis = {
        "templates": expand_manifest.get("inputs", {}),
        "models": {
            s: (pipeline.workspace.manifest(s) or {}).get(k)
            for s, k in (("generate", "model"), ("filter", "models"))
            if s in pipeline.stages
        },
        "policy": changes.policy_basis(config),
    }
    # No path of this machine goes into a release: a model named by an absolute folder is named by
    # its folder's name (the release rows' provenance too), and what is written is read for one below.
    local = local_names([basis, config.model_dump(mode="json")])
    basis = without(local, basis)
    rows = release.rows = without(local, rows)

    chosen = asked or ("original" if config.origin is not None and kind.audit is not None else "workbench")
    writer = getattr(layout, "write_original", None) if chosen == "original" else None
    # staged beside the releases, then moved into place; a killed build's folder is removed by the next
    with staging_folder(config.path("exports") if config.path("exports").is_dir() else None) as staging:
        domains = writer(rows, staging) if writer is not None else None
        if domains is None:
            if asked == "original":
                raise InputError(
                    "--layout original: the project's files do not record how the published file is laid "
                    "out (imported from JSON lines, or before `workbench import` recorded it); import the "
                    "published file again, or build with --layout workbench"
                )
            if writer is not None:
                messages.append(
                    "the release is laid out as the workbench's, not as the published file: the project's "
                    "files do not record the published layout (imported from JSON lines, or before imports "
                    "recorded it: a CSV imported again records it)"
                )
            domains = layout.write_release(rows, staging)
            chosen = "workbench"
        release.domains, release.layout = domains, chosen
        sources = getattr(layout, "write_sources", None)
        if sources is not None:
            sources(release, staging)
        adjudicated = (
            adjudications(kind, items, labels)
            if config.origin is not None and kind.audit is not None and not original
            else []
        )
        # the release as written, read back only to compare it with the previous one and to name
        # adjudicated rows: a first release of a million rows is not held twice
        released = layout.read_release(staging) if found or adjudicated else []
        dataset = f"{config.project.repo}@v{version}" if config.project.repo else None
        write_evaluator(kind, dataset, staging)
        code = kind_code(kind)
        evaluator = changes.evaluator_change(found, code, _evaluator_files(staging)) if found else ""
        if found and not force and not evaluator and changes.same_data(found, released, layout):
            raise InputError(
                f"nothing changed in the data since {found.version} ({found.where}), nor in its evaluator: a "
                "new version would repeat it; pass --force to build it anyway"
            )
        diff = (
            changes.compare(found, released, layout, basis, _decisions(config, kind, labels, found, released))
            if found
            else []
        )
        changes.with_adjudications(
            diff, adjudicated_rows(kind, adjudicated, [*(found.rows if found else []), *released])
        )
        if diff:
            (staging / changes.CHANGES_FILE).write_text(changes.changes_csv(diff), encoding="utf-8")
        section = changes.card_section(version, found, diff, release.domains, evaluator)
        card = "\n".join([layout.card(release).rstrip("\n"), "", *generic.closing_sections(release, kind.audit)])
        card = without(local, card.rstrip("\n") + ("\n\n" + section if section else "\n"))
        (staging / "README.md").write_text(card, encoding="utf-8")
        lmeval.write_tasks(
            kind, lmeval.task_name(config.project.name, version), dataset, staging, config.model_dump(mode="json")
        )
        audit = (
            audit_changes(kind, items, labels, found.rows, released)
            if found and config.origin is not None and kind.audit is not None
            else []
        )
        (staging / "CHANGELOG.md").write_text(
            changes.changelog(
                version, found, diff, release.domains, notes, audit, adjudication_lines(adjudicated), evaluator
            ),
            encoding="utf-8",
        )
        manifest = {
            "name": config.project.name,
            "kind": kind.name,
            "version": version,
            "repo": config.project.repo,
            "license": config.project.license,
            "tool_version": __version__,
            "kind_code": code,  # the kind's package, version and code hash: what made its evaluator
            "previous_version": previous,
            "samples": len(rows),
            **({"layout": "original"} if release.layout == "original" else {}),  # the data file as the published one
            # a renewal: which published copy its data files are (sources/known.py; "unknown" but for the published rows)
            **({"source_copy": _source_copy(staging, kind.name)} if config.origin is not None else {}),
            "domains": release.domains,
            "templates": basis["templates"],
            "config": without(local, _read_by(kind, config.model_dump(mode="json"))),
            "models": basis["models"],
            # every file, those of evaluator/ too, named as the Hub names them (forward slashes)
            "files": {
                p.relative_to(staging).as_posix(): file_sha256(p) for p in sorted(staging.rglob("*")) if p.is_file()
            },
        }
        atomic_write_text(staging / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        refuse_machine_paths(staging, config)
        if target.exists():
            same = _same_tree(staging, target)
            if not same and not force:
                raise InputError(
                    f"{target} already holds a different build of {version}; bump the version "
                    "(releases are immutable) or pass --force to replace the local build"
                )
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(staging), str(target))
        target.chmod(0o755)  # staged private
    return {
        "path": target,
        "samples": len(rows),
        "domains": release.domains,
        "previous": previous,
        "release_stage": produced,
        "added": sum(c.change == "added" for c in diff),
        "removed": sum(c.change == "removed" for c in diff),
        "edited": sum(c.change == "edited" for c in diff),
        "undecided": undecided_lines(open_items, len(items)) if open_items else [],
        "license": config.project.license,
        "notes": messages,
    }


def _decisions(config: Config, kind, labels, previous, rows: list[dict]) -> dict[str, str]:
    """In a renewal ([origin]): {row key: the audit's final decision on its item} for the rows of
    both versions, so the changelog gives each dropped or fixed row its reason."""
    if config.origin is None or kind.audit is None:
        return {}
    from ..authoring.renew import unit_of

    why = {i: kind.scheme.choice(f.category).title for i, f in labels.finals.items() if f.category}
    unit = unit_of(kind.release)
    return {kind.release.identity(r)[0]: why[u] for r in [*previous.rows, *rows] if (u := unit(r)) in why}


def _evaluator_files(staging: Path) -> dict[str, str]:
    """The sha256 of every file of the release's evaluator/ (the code its evaluate.py runs)."""
    folder = staging / "evaluator"
    return {p.relative_to(staging).as_posix(): file_sha256(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def _source_copy(staging: Path, kind: str) -> str:
    """Which published copy a release's text data files are, as `workbench evaluate` records it."""
    from ..sources.known import TEXT_DATA, source_copy

    return source_copy(sorted(p for p in (staging / "data").rglob("*") if p.suffix.lower() in TEXT_DATA), kind)


def _read_by(kind, settings: dict) -> dict:
    """The settings `kind` reads: the sections and keys it declares unused (`Kind.unused_settings`:
    a kind without a generation step has no [generate]) left out, as `workbench init` leaves them out."""
    unused = set(kind.unused_settings)
    return {
        section: {k: v for k, v in values.items() if f"{section}.{k}" not in unused}
        if isinstance(values, dict)
        else values
        for section, values in settings.items()
        if section not in unused
    }


def _refuse_if_published(repo: str, version: str, notes: list[str]) -> None:
    """--force replaces a local build; a version already on the Hub is immutable, so it is refused."""
    try:
        from huggingface_hub import HfApi

        from ..sources import hub_endpoint

        tags = {t.name for t in HfApi(endpoint=hub_endpoint()).list_repo_refs(repo, repo_type="dataset").tags}
    except Exception as exc:  # noqa: BLE001 -- offline or no repo yet: nothing to protect there, say it was not checked
        notes.append(f"could not check whether v{version} is already published to {repo} ({type(exc).__name__})")
        return
    if f"v{version}" in tags:
        raise InputError(
            f"v{version} is already published to {repo}: a published release is never rebuilt; bump the version"
        )


def _same_tree(a: Path, b: Path) -> bool:
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all((a / f).read_bytes() == (b / f).read_bytes() for f in files_a)
