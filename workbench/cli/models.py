"""`workbench models ...`: offline fixture models."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import console, example

app = typer.Typer(
    help="Models: build tiny local fixture models for offline runs and tests.",
    no_args_is_help=True,
    rich_markup_mode=None,
    epilog=example("workbench models fixtures --out fixtures-models"),
)


@app.command(
    "fixtures",
    epilog=example(
        "workbench models fixtures --out fixtures-models",
        "workbench models fixtures --out fixtures-models --no-base   # skip the base-size benchmark models",
    ),
)
def fixtures(
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write the models into (one sub-folder each)."),
    base: bool = typer.Option(
        True, "--base/--no-base", help="Also build base-size models (4 layers, hidden 256) for benchmarks."
    ),
    seed: int = typer.Option(0, "--seed", help="Random seed: the same seed gives the same weights."),
) -> None:
    """Build tiny seeded models through the real transformers classes: a BERT-style masked LM
    ([MASK], WordPiece), a RoBERTa-style one (<mask>, BPE) and three-way classifiers whose id2label
    orders differ, as real checkpoints do. Point workbench.toml at their folders.
    """
    from ..models.fixtures import build_all

    built = build_all(out, base=base, seed=seed)
    for name, path in built.items():
        console.print(f"{name:14} {path}")
