"""Release commands: counterfactuals, build, publish, pull."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..core.errors import display_path
from .common import console, example, get_config, get_pipeline


def register(app: typer.Typer) -> None:
    app.command("counterfactuals", epilog=example("workbench counterfactuals"))(counterfactuals)
    app.command(
        "build",
        epilog=example(
            "workbench build --version 1.0.0",
            "workbench build --version 1.1.0 --notes notes/1.1.0.md",
            "workbench build --version 1.1.0 --allow-unlabelled",
            "workbench build --version 1.1.0 --unaudited keep   # a partial audit",
            "workbench build --version 1.1.0 --layout workbench   # a renewal in the kind's columns",
            "workbench build --version 1.1.0 --force",
        ),
    )(build)
    app.command(
        "publish",
        epilog=example(
            "workbench publish --repo my-org/my-bias-benchmark --version 1.0.0 --dry-run",
            "HF_TOKEN=... workbench publish --repo my-org/my-bias-benchmark --version 1.0.0 --private",
        ),
    )(publish)
    app.command(
        "pull",
        epilog=example(
            "workbench pull my-org/my-bias-benchmark@v1.0.0",
            "workbench pull my-org/my-bias-benchmark@v1.0.0 --out releases/v1",
        ),
    )(pull)


def counterfactuals(
    ctx: typer.Context, force: bool = typer.Option(False, "--force", help="Recompute even when unchanged.")
) -> None:
    """Add the group counterfactual of every sample labelled valid: the group swapped in the
    hypothesis only (premise unchanged), paired with the sample through pair_id.
    """
    r = get_pipeline(ctx).run("counterfactuals", force=force)
    if r.get("warnings"):
        console.print(
            f"warning: {r['warnings']} label line(s) could not be read; `workbench annotations stats` lists them",
            style="yellow",
        )
    if r.get("skipped"):
        console.print(f"counterfactuals: up to date ({r['release_samples']} release samples)")
        return
    console.print(
        f"counterfactuals: {r['validated_samples']} validated samples -> {r['release_samples']} release samples "
        f"({r['counterfactuals_added']} counterfactuals added, {r['paired_with_existing']} paired with "
        f"existing samples, {r['unpaired']} without a group to swap); item labels {r['item_labels']}"
    )


def build(
    ctx: typer.Context,
    version: str = typer.Option(..., "--version", "-v", help="Semantic version X.Y.Z of the release."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace an existing local build of this version (never a published one), or build data that did not change.",
    ),
    allow_unlabelled: bool = typer.Option(
        False,
        "--allow-unlabelled",
        help="Build although some queue items have no final label yet (not labelled, waiting for votes, disagreed); they are left out and the card says how many.",
    ),
    notes: Optional[Path] = typer.Option(
        None,
        "--notes",
        help="A Markdown file of release notes: they go into the card and this version's CHANGELOG.md entry.",
    ),
    original: bool = typer.Option(
        False,
        "--original",
        help="In a project made by `workbench import`: build the imported data as published, before any audit (the version the renewed one is compared with).",
    ),
    layout: Optional[str] = typer.Option(
        None,
        "--layout",
        metavar="original|workbench",
        help="How the data file is laid out: original, as the published file a renewal imported (its columns in their order, its index column, its row order; dropped rows left out, fixed ones with their new text, the others as published: the default in a project made by `workbench import` whose kind can), or workbench, in the kind's release columns (the default otherwise).",
    ),
    unaudited: str = typer.Option(
        "refuse",
        "--unaudited",
        metavar="refuse|keep",
        help="In a project made by `workbench import`: what becomes of the items nobody audited (a partial audit, `import --sample`): refuse, listing them (the default), or keep them in the release unchanged, as published (the card says how many items were audited).",
    ),
) -> None:
    """Build exports/<name>/<version>/: the kind's data files, the dataset card, the bundled
    evaluator, a manifest with the sha256 of every file, and the changes against the newest
    earlier release (a local build, else the project repo's tags on the Hub): CHANGELOG.md
    (earlier entries kept) and changes.csv (every row added, edited or removed, and why).
    Queue items without a final label refuse the build, listed (--allow-unlabelled builds
    without them). The card's licence is `[project] license`: without one the card says
    "not stated" and `workbench publish` refuses. Data that did not change is not a new version
    (--force builds it anyway). The same inputs give byte-identical files.
    """
    from ..core.errors import InputError
    from ..release.build import build as run_build

    text = ""
    if notes is not None:
        try:
            text = notes.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(
                f"cannot read the release notes {display_path(notes)}: {getattr(exc, 'strerror', None) or exc}"
            ) from None
    if unaudited not in ("refuse", "keep"):
        raise InputError(f"--unaudited {unaudited}: refuse or keep")
    from .. import kinds

    config = get_config(ctx)
    r = run_build(
        config,
        kinds.of_config(config),
        version,
        force=force,
        allow_unlabelled=allow_unlabelled,
        notes=text,
        original=original,
        unaudited=unaudited,
        layout=layout,
    )
    since = (
        f" ({r['added']} added, {r['edited']} edited, {r['removed']} removed since {r['previous']}: CHANGELOG.md)"
        if r["previous"]
        else ""
    )
    from .. import kinds
    from ..annotation.display import words_of

    words = words_of(kinds.of_config(config).words)  # the release's rows and groups as the kind names them
    console.print(
        f"build: {r['samples']} {words.rows} in {len(r['domains'])} {words.domain}(s) -> "
        f"{display_path(r['path'])}{since}"
    )
    if r["undecided"]:
        console.print(
            "\n".join(
                [f"note: left out of this build (the card says how many): {r['undecided'][0]}", *r["undecided"][1:]]
            ),
            style="yellow",
            markup=False,
            highlight=False,
        )
    if not r["license"]:
        console.print(
            f'warning: no licence: the card says "licence: not stated" and `workbench publish` refuses '
            f"this build; set [project] license in {config.shown_source} (a Hub licence id such as "
            "cc-by-4.0 or mit) and build again with --force",
            style="yellow",
            markup=False,
        )
    for note in r["notes"]:
        console.print(f"note: {note}")


def publish(
    ctx: typer.Context,
    repo: Optional[str] = typer.Option(
        None, "--repo", "-r", help="Hub dataset repo ORG/NAME (default: [project] repo)."
    ),
    version: str = typer.Option(..., "--version", "-v", help="The built version to publish (tagged vX.Y.Z)."),
    private: bool = typer.Option(False, "--private", help="Create the repo private."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Check the token and tag, list what would be uploaded, deleted and kept; change nothing.",
    ),
) -> None:
    """Upload a built release to the Hugging Face Hub in one commit and tag it vX.Y.Z. An
    existing tag is refused: releases are never overwritten. Only the release's files are
    written: files an earlier release wrote and this one lacks are deleted, anything else on
    the repo is kept, and both are listed. A version older than the newest release is tagged
    without moving `main`. A build that states no licence (`[project] license`) is refused. --dry-run checks the token and the tag and lists all of it. The
    token comes from HF_TOKEN or `hf auth login` and is never printed.
    """
    from ..core.errors import InputError
    from ..release.publish import publish as run_publish

    config = get_config(ctx)
    repo = repo or config.project.repo
    if not repo:
        raise InputError("no repo: pass --repo ORG/NAME or set [project] repo in workbench.toml")
    r = run_publish(config, version, repo, private=private, dry_run=dry_run)
    total = sum(f["bytes"] for f in r["files"])
    where = f"{r['repo']}{'' if r['exists'] else ' (new repo' + (', private)' if private else ')')}"
    if r["dry_run"]:
        console.print(
            f"dry run: would upload {len(r['files'])} file(s), {total} bytes, to {where} at {r['endpoint']} "
            f"(branch {r['branch']}) and tag {r['tag']}:"
        )
        for f in r["files"]:
            console.print(f"  {f['path']}  {f['bytes']} bytes")
    else:
        console.print(
            f"published {r['repo']} {r['tag']} ({len(r['files'])} files, {total} bytes, commit {r['commit'][:12]})"
        )
    for f in r["delete"]:
        console.print(
            f"  {'would delete' if r['dry_run'] else 'deleted'} {f} (written by an earlier release, not part of this one)"
        )
    for f in r["keep"]:
        console.print(f"  {'would keep' if r['dry_run'] else 'kept'} {f} (not written by any release: left as it is)")
    for note in r["notes"]:
        console.print(f"note: {note}")


def pull(
    ctx: typer.Context,
    spec: str = typer.Argument(..., help="ORG/NAME@vX.Y.Z"),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder to put it in (default: exports/NAME/X.Y.Z)."),
) -> None:
    """Download a published release by revision (and check it against its manifest)."""
    from ..release.publish import pull as run_pull

    config = get_config(ctx)
    r = run_pull(spec, out, config)
    console.print(f"pulled {r['repo']}@{r['revision']}: {r['files']} file(s) in {display_path(r['path'])}")
