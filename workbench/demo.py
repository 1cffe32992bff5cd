"""The demo of the whole loop, for every installed kind that has one: `make demo`.

It builds tiny offline fixture models into demo-output/models, then runs each kind's demo
(`Kind.demo`: a module with `demo(d: Demo)`), the default kind first: each copies or writes a
small project and runs the real CLI there, command by command, as a maintainer would.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "demo-output"
SHARED = ROOT.parent / "shared"


@dataclass
class Demo:
    """What a kind's demo gets: where to write, the fixture models, and `step` to run a command."""

    out: Path  # demo-output/
    models: Path  # demo-output/models: the fixtures (`workbench models fixtures --no-base`)
    root: Path = ROOT  # the checkout (its templates/ hold the example benchmark)
    shared: Path = SHARED

    def step(self, title: str, *args: str, cwd: Path | None = None) -> None:
        step(title, *args, cwd=cwd or self.out)

    def model(self, name: str) -> str:
        return str(self.models / name)


def step(title: str, *args: str, cwd: Path = OUT) -> None:
    print(f"\n=== {title}\n$ workbench {shlex.join(args)}", flush=True)
    result = subprocess.run([sys.executable, "-m", "workbench", *args], cwd=cwd)
    if result.returncode != 0:
        sys.exit(f"demo step failed: workbench {shlex.join(args)} (exit {result.returncode})")


def authoring_demo(d: Demo, kind: str, write_project, *, model: str, labels=None, evaluate_args=()) -> None:
    """A kind's authoring loop on a small project: check the templates, run to the queue, a
    scripted annotator (or `labels(folder)`: one label file per validator), build 1.0.0 in the
    kind's public layout, score the release."""
    folder = d.out / "authoring" / kind
    write_project(folder)
    d.step(f"{kind}: check the template files", "validate", cwd=folder)
    d.step(f"{kind}: expand them into the queue (one item per unit people validate)", "run", cwd=folder)
    if labels is None:
        from .authoring.stages import write_example_labels

        d.step(
            f"{kind}: a scripted annotator labels every unit",
            "annotate",
            "-a",
            "annotator",
            "--labels-from",
            str(write_example_labels(folder)),
            cwd=folder,
        )
    else:
        paths = labels(folder)
        for n, path in enumerate(paths, start=1):
            d.step(
                f"{kind}: validator {n} of {len(paths)} (scripted)",
                "annotate",
                "-a",
                f"validator{n}",
                "--labels-from",
                str(path),
                cwd=folder,
            )
    d.step(f"{kind}: build release 1.0.0 in the public layout", "build", "--version", "1.0.0", cwd=folder)
    release = str(folder / "exports" / f"{kind}-example" / "1.0.0")
    d.step(
        f"{kind}: score the release",
        "evaluate",
        release,
        *evaluate_args,
        "--model",
        model,
        "--json",
        str(folder / "scores.json"),
        cwd=folder,
    )


def main() -> None:
    from . import kinds

    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    os.environ.setdefault("COLUMNS", "120")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the demo runs on local fixture models only

    # Model weights cannot be downloaded here: the demo uses tiny seeded local models built
    # through the real transformers classes. Real use names Hub checkpoints instead.
    step("Build tiny offline fixture models", "models", "fixtures", "--out", "models", "--no-base")
    demo = Demo(OUT, OUT / "models")
    order = sorted(kinds.loadable(), key=lambda k: (k.name != kinds.DEFAULT_KIND, k.name))
    for kind in order:
        if kind.demo:
            print(f"\n##### kind {kind.name}: {kind.description}", flush=True)
            kind.part("demo").demo(demo)
    print(f"\nDemo finished: outputs in {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
