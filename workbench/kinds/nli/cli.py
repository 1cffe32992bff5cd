"""The nli kind's own commands: generate, filter, candidates, stats and `templates` (BBNLI
import, lint, mask suggestions). The registry adds them to `workbench` with every kind's."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ...cli.common import console, example, get_config, get_pipeline, get_workspace
from ...core.errors import ConfigError, display_path


def register(app: typer.Typer) -> None:
    from .cli_templates import app as templates

    app.add_typer(templates, name="templates")
    app.command(
        "generate",
        epilog=example(
            "workbench generate                                 # model and top-k from workbench.toml",
            "workbench generate --model fixtures-models/mlm-bert --top-k 5",
        ),
    )(generate)
    app.command(
        "filter",
        epilog=example(
            "workbench filter                                   # models and rule from workbench.toml",
            "workbench filter --force",
        ),
    )(filter_)
    app.command(
        "candidates",
        epilog=example(
            "workbench candidates                         # a sample of kept candidates with provenance",
            "workbench candidates --rejected --reason pos --limit 20",
            "workbench candidates --template age_work --json candidates.json",
        ),
    )(candidates)
    app.command("stats", epilog=example("workbench stats", "workbench stats --json stats.json"))(stats)


def _nli_project(ctx: typer.Context):
    """The project's config, when its kind is this one (these commands read nli stages)."""
    from ... import kinds

    config = get_config(ctx)
    kind = kinds.of_config(config)
    if kind.name != "nli":
        raise ConfigError(
            f"`workbench {ctx.command.name}` is a step of the nli kind; this project's kind is "
            f"{kind.name!r} (`workbench status` lists its stages)"
        )
    if kind.renewing:
        raise ConfigError(
            f"`workbench {ctx.command.name}` is a step of building BBNLI-next; this project renews a "
            "published BBNLI (its [origin]), whose stages have no masks, fills or filter: "
            "`workbench status` lists them, `workbench annotations stats` counts the audit"
        )
    return config


def generate(
    ctx: typer.Context,
    model: Optional[str] = typer.Option(
        None,
        "--model",
        "-m",
        help="Masked LM (Hub name or local folder); default generate.model (refused beside generate.proposers).",
    ),
    top_k: Optional[int] = typer.Option(None, "--top-k", "-k", help="Fills per mask (default generate.top_k, 20)."),
    force: bool = typer.Option(
        False, "--force", help="Rebuild the table even when inputs are unchanged (cached fills are reused)."
    ),
) -> None:
    """Fill every unique masked hypothesis with the masked LM's top-k words and write
    candidates for every masked sample, kept and rejected, each rejection with its reason.
    With generate.proposers, each listed model proposes: masked LMs their top-k fills, LLMs
    the top-k words they answer for a one-mask slot, all through the same filters.
    """
    _nli_project(ctx)
    r = get_pipeline(ctx, model=model, top_k=top_k).run("generate", force=force)
    if r.get("skipped"):
        console.print(f"generate: up to date ({r['candidates']} candidates); use --force to rebuild")
        return
    console.print(
        f"generate: {r['masked_hypotheses']} unique masked hypotheses ({r['masked_samples']} samples) -> "
        f"{r['candidates']} candidates, {r['kept']} kept; rejected {r['rejected_by_reason']}; "
        f"{r['computed_fills']} filled now, rest from cache; {r.get('templates_computed', 0)} template(s) generated, "
        f"{r.get('templates_reused', 0)} reused; {r['seconds']:.1f}s"
    )
    for name, count in (r.get("candidates_per_proposer") or {}).items():
        work = (r.get("proposer_work") or {}).get(name, {})
        said = {k: v for k, v in work.items() if k != "computed_fills" and v}
        console.print(f"  {name}: {count} candidates" + (f"; {said}" if said else ""))


def filter_(
    ctx: typer.Context,
    force: bool = typer.Option(
        False, "--force", help="Rebuild the table even when inputs are unchanged (cached predictions are reused)."
    ),
) -> None:
    """Run every filter model on every candidate (premise, hypothesis) pair and keep the
    candidates that at least filter.min_fooled models get wrong (predict non-neutral).
    Predictions are cached, so an interrupted run resumes where it stopped.
    """
    _nli_project(ctx)
    r = get_pipeline(ctx).run("filter", force=force)
    if r.get("skipped"):
        console.print(f"filter: up to date ({r['kept']} adversarial of {r['candidates']}); use --force to rebuild")
        return
    console.print(
        f"filter: {r['candidates']} candidates ({r['unique_pairs']} unique pairs) -> {r['kept']} adversarial; "
        f"fooled per model {r['fooled_per_model']}; computed now {r['computed_pairs']}; {r['seconds']:.1f}s"
    )


def candidates(
    ctx: typer.Context,
    rejected: bool = typer.Option(
        False, "--rejected", help="Show rejected candidates (with their reason) instead of kept ones."
    ),
    reason: Optional[str] = typer.Option(None, "--reason", help="Only this rejection reason (implies --rejected)."),
    template: Optional[str] = typer.Option(None, "--template", "-t", help="Only this template id."),
    limit: int = typer.Option(10, "--limit", "-n", help="How many to show (0 = all)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the shown candidates as JSON."),
) -> None:
    """Show generated candidates with their provenance: fill, masked-LM rank and score (an LLM
    proposer's: its list's rank, no score), the model that proposed it and its revision, and for
    rejected ones why they were rejected. Fluency (per-token
    log-likelihood from the [fluency] scorer: the masked LM's pseudo-log-likelihood unless the
    project chose a causal LM) is shown for hypotheses that reached the annotation queue.
    """
    from ...core.outputs import json_text

    import pyarrow.compute as pc

    from ...core.errors import StageError

    config = _nli_project(ctx)
    ws = get_workspace(config)
    table = ws.read("generate")
    try:
        scored = ws.read("fluency")
        fluency = dict(zip(scored["hypothesis_id"].to_pylist(), scored["pll_per_token"].to_pylist()))
    except StageError:
        fluency = {}
    keep = pc.invert(table["kept"]) if (rejected or reason) else table["kept"]
    if reason:
        keep = pc.and_(keep, pc.equal(table["reject_reason"], reason))
    if template:
        keep = pc.and_(keep, pc.equal(table["template_id"], template))
    rows = table.filter(keep)
    total = rows.num_rows
    rows = (rows.slice(0, limit) if limit else rows).to_pylist()
    t = Table(title=f"{'rejected' if rejected or reason else 'kept'} candidates: {len(rows)} of {total}")
    for r in rows:
        r["fill"] = " | ".join(r["fill"])
        r["bindings"] = dict(r["bindings"])
        r["fluency"] = fluency.get(r["hypothesis_id"])
    for col in ("hypothesis", "fill", "rank", "score", "fluency", "model @ revision", "reason"):
        t.add_column(col, justify="right" if col in ("rank", "score", "fluency") else "left")
    for r in rows:
        t.add_row(
            r["hypothesis"],
            r["fill"],
            str(r["fill_rank"]),
            "-" if r["fill_score"] is None else f"{r['fill_score']:.4f}",  # an LLM's words have no score
            "-" if r["fluency"] is None else f"{r['fluency']:.2f}",
            f"{r['mlm_name'].rstrip('/').split('/')[-1]} @ {r['mlm_revision'][:15]}",
            r["reject_reason"] or "",
        )
    console.print(t)
    if json_out:
        json_out.write_text(json_text(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"wrote {display_path(json_out)}")


def stats(
    ctx: typer.Context,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the tables as JSON."),
) -> None:
    """Print the per-subtopic tables of the construction funnel that exist so far."""
    from ...core.outputs import json_text

    from .stats import compute_stats

    config = _nli_project(ctx)
    tables = compute_stats(config, get_workspace(config))
    for title, rows in tables.items():
        if not rows:
            continue
        t = Table(title=title)
        for col in rows[0]:
            t.add_column(col, justify="right" if isinstance(rows[0][col], (int, float)) else "left")
        for r in rows:
            t.add_row(*(str(v) for v in r.values()))
        console.print(t)
    if json_out:
        json_out.write_text(json_text(tables, indent=2) + "\n", encoding="utf-8")
        console.print(f"wrote {display_path(json_out)}")
