"""Run the benchmarks and write benchmarks/REPORT.md and benchmarks/results.json.

    python -m benchmarks.run                       # every section (make bench)
    python -m benchmarks.run fluency sofa          # some sections (make bench SECTION="fluency sofa")

Sections: expand, generate, proposers (an LLM proposer beside the masked LM), filter, filter_scale (the paper-scale filter), fluency, queue, evaluate, annotate, labels, labelstudio,
distributed (the NLI loop, its annotation and scale-out), stereoset, crows_pairs, sos, sofa,
honest (the intrinsic kinds' evaluators), fairbelief (30 models' published fills at once), intervals (their cost
in every kind's evaluate), import (`workbench import` of a big CrowS-Pairs-layout file, then run and build;
IMPORT_ROWS), stages_scale (every stage of a renewal on
such a file: import, expand, queue, annotate, the Label Studio push's tasks, build, evaluate; SCALE_ROWS). Each
section's result replaces its earlier one in results.json, and REPORT.md is rewritten from all
of them after every section, so a long run that stops keeps what it measured. A section that cannot run here is recorded with the reason.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("WORKBENCH_PROGRESS", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class Unavailable(Exception):
    """A section cannot run on this machine (say why: no Label Studio, no GPU, ...)."""


class Context:
    """What sections share within one run: a work folder, the base-size fixture models (built on
    first use) and the bench project (expand, generate and filter run on first use)."""

    def __init__(self, work: Path):
        self.work = work
        self._models = None
        self.project_root: Path | None = None  # the generate section leaves its project here

    @property
    def models(self) -> dict[str, Path]:
        if self._models is None:
            from workbench.models.fixtures import build_all

            self._models = build_all(self.work / "models", base=True)
        return self._models

    def project(self) -> Path:
        """The bench project with expand, generate and filter done (the NLI loop's state the
        queue's sections start from): the generate section's project when it ran, else a new one."""
        from workbench.core.config import load_config
        from workbench.kinds import pipeline_for

        from .common import scratch_project

        if self.project_root is None:
            self.project_root = scratch_project(
                self.work / "project", self.models["mlm-bert-base"], [self.models["nli-base"]]
            )
        pipeline = pipeline_for(load_config(self.project_root / "workbench.toml"))
        for stage in ("expand", "generate", "filter"):
            pipeline.run(stage)
        return self.project_root


def sections(argv: list[str]) -> list[str]:
    from .common import ORDER

    names = [n.replace("-", "_") for a in argv for n in a.replace(",", " ").split()]
    unknown = [n for n in names if n not in ORDER]
    if unknown:
        raise SystemExit(f"unknown section(s) {', '.join(unknown)}; sections: {', '.join(ORDER)}")
    return [n for n in ORDER if n in names] if names else list(ORDER)


def main(argv: list[str]) -> int:
    from .common import REPORT, machine, save, stamp

    chosen = sections(argv)
    ctx = Context(Path(tempfile.mkdtemp(prefix="workbench-bench-")))
    command = "python -m benchmarks.run" + (f" {' '.join(argv)}" if argv else "")
    failed = []
    for name in chosen:
        info = machine()
        start = time.perf_counter()
        print(f"{name}: running", flush=True)
        try:
            result = importlib.import_module(f"benchmarks.bench_{name}").run(ctx)
        except Unavailable as exc:
            result = {"status": "could not run", "why": str(exc)}
        except Exception as exc:  # recorded, and the run fails at the end: a crash is a bug to fix
            traceback.print_exc()
            result = {"status": "could not run", "why": f"it failed: {type(exc).__name__}: {exc}"}
            failed.append(name)
        seconds = time.perf_counter() - start
        save(name, stamp(result, command, seconds, info))
        shown = result.get("figure") or result.get("why")
        print(f"{name}: {shown} ({seconds:.0f} s)", flush=True)
    print(f"report: {REPORT}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
