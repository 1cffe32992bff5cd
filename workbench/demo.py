"""The demo of the whole loop, on what exists so far: `make demo`.

It copies the example benchmark (workbench.toml + templates/) into demo-output/ and runs the
real CLI there, command by command, as a maintainer would.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "demo-output"
SHARED_BBNLI = ROOT.parent / "shared" / "bbnli"


DEMO_CONFIG = """\
# Demo configuration: the example benchmark on local fixture models.
[project]
name = "workbench-demo"
repo = "your-org/workbench-demo"

[generate]
model = "models/mlm-bert"
top_k = 20

[filter]
models = ["models/nli-a", "models/nli-b", "models/nli-c"]
min_fooled = 1

[evaluate]
models = ["models/nli-heldout"]
"""


def step(title: str, *args: str, cwd: Path = OUT) -> None:
    print(f"\n=== {title}\n$ workbench {shlex.join(args)}", flush=True)
    result = subprocess.run([sys.executable, "-m", "workbench", *args], cwd=cwd)
    if result.returncode != 0:
        sys.exit(f"demo step failed: workbench {shlex.join(args)} (exit {result.returncode})")


def write_demo_labels(path: Path) -> None:
    """A scripted annotator for non-interactive runs: the more fluent half of each
    subtopic's items is valid (with the template's stance), the rest invalid or incoherent."""
    import json

    import pyarrow.parquet as pq

    items = pq.read_table(OUT / ".workbench" / "queue" / "data.parquet").to_pylist()
    by_subtopic: dict[str, list] = {}
    for item in items:
        by_subtopic.setdefault(item["subtopic"], []).append(item)
    lines = []
    for group in by_subtopic.values():
        group.sort(key=lambda i: -(i["fluency"] or -1e9))
        for rank, item in enumerate(group):
            if rank < len(group) // 2:
                stance = item["stance"] if item["stance"] in ("pro", "anti") else "pro"
                lines.append({"item_id": item["item_id"], "label": "valid", "stance": stance})
            else:
                lines.append({"item_id": item["item_id"], "label": "invalid" if rank % 2 else "incoherent"})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    shutil.copytree(ROOT / "templates", OUT / "templates")
    os.environ.setdefault("COLUMNS", "120")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the demo runs on local fixture models only

    # Model weights cannot be downloaded here: the demo uses tiny seeded local models built
    # through the real transformers classes. Real use names Hub checkpoints instead.
    step("Build tiny offline fixture models", "models", "fixtures", "--out", "models", "--no-base")
    (OUT / "workbench.toml").write_text(DEMO_CONFIG, encoding="utf-8")

    step("Check config and templates (no model is loaded)", "validate")
    step("Lint the example templates", "templates", "lint", "--strict")
    step("Expand templates into masked samples", "expand", "--out", "samples.jsonl")
    step("Generate lexical variants with the masked LM (top-20 per mask)", "generate")
    step("Some candidates with their provenance", "candidates", "--limit", "5")
    step("Some rejected candidates and why", "candidates", "--rejected", "--limit", "5")
    step("Keep the variants the NLI filter models get wrong", "filter")
    step("Rerun: nothing changed, nothing is recomputed", "filter")
    step("Run the machine stages in order: all up to date but the annotation queue (one item per unique hypothesis)",
         "run")
    if os.environ.get("WORKBENCH_DEMO_TUI") == "1" and sys.stdin.isatty():
        step("Label the hypotheses yourself in the terminal UI", "annotate", "--annotator", "you")
    else:
        # Without a person at the keyboard, a scripted annotator labels from a file (the same
        # code path as `workbench annotate --labels-from`). WORKBENCH_DEMO_TUI=1 opens the UI.
        write_demo_labels(OUT / "demo-labels.jsonl")
        step("Label from a file (non-interactive; WORKBENCH_DEMO_TUI=1 opens the labelling UI)",
             "annotate", "--annotator", "demo", "--labels-from", "demo-labels.jsonl")
    step("Label breakdown and agreement", "annotations", "stats")
    step("Add the group counterfactual of every valid sample", "counterfactuals")
    step("Build release 1.0.0 (data, dataset card, evaluator, manifest)", "build", "--version", "1.0.0")
    if os.environ.get("HF_TOKEN"):
        step("What publishing would upload, delete and keep (dry run: checks the token and the tag)", "publish",
             "--repo", "your-org/workbench-demo", "--version", "1.0.0", "--dry-run")
    else:
        print("\n=== Publishing (skipped: no HF_TOKEN). With a token, `workbench publish --repo ORG/NAME --version "
              "1.0.0 --dry-run` checks the token and the tag and lists what it would upload, delete and keep; "
              "without --dry-run it uploads and tags v1.0.0.", flush=True)
    step("Evaluate the held-out model on the release", "evaluate", "exports/workbench-demo/1.0.0",
         "--json", "release-scores.json", "--plots", "release-plots")
    step("Pipeline state", "status")
    step("Per-subtopic tables so far", "stats")
    step("Mask suggestions for unmasked hypotheses", "templates", "suggest-masks", "--out", "mask-suggestions.yaml")
    if SHARED_BBNLI.is_dir():
        # A project of its own, so its samples do not replace the example benchmark's.
        bbnli = OUT / "bbnli"
        bbnli.mkdir()
        step("Import the real BBNLI files into the project format", "templates", "import-bbnli",
             str(SHARED_BBNLI), "--out", "templates", cwd=bbnli)
        step("Expand BBNLI exactly as BBNLI does", "expand", "--out", "samples.jsonl", cwd=bbnli)
        step("Evaluate the held-out and a filter model on BBNLI's audit set", "evaluate", str(SHARED_BBNLI),
             "--model", str(OUT / "models" / "nli-heldout"), "--model", str(OUT / "models" / "nli-a"),
             "--json", "bbnli-scores.json", "--plots", "bbnli-plots")
    intrinsic_steps()
    authoring_steps()
    print(f"\nDemo finished: outputs in {OUT.relative_to(ROOT)}/")


def intrinsic_steps() -> None:
    """The intrinsic benchmark kinds, each on a small file this project wrote in the public
    layout, scored by the fixture masked LM (and the causal LM where the kind takes one)."""
    from .kinds.crows_pairs.example import write_example as crows_example
    from .kinds.honest.example import write_example as honest_example
    from .kinds.sofa.example import write_example as sofa_example
    from .kinds.sos.example import write_example as sos_example
    from .kinds.stereoset.example import write_example as stereoset_example

    folder = OUT / "intrinsic"
    folder.mkdir(exist_ok=True)
    mlm, clm = str(OUT / "models" / "mlm-bert"), str(OUT / "models" / "clm-gpt2")
    out = lambda name: str(folder / name)  # noqa: E731
    stereoset = stereoset_example(folder)
    step("StereoSet: lms, ss and icat of a masked and a causal LM", "evaluate", str(stereoset), "--kind", "stereoset",
         "--model", mlm, "--model", clm, "--json", out("stereoset.json"), "--plots", out("stereoset-plots"))
    step("CrowS-Pairs: pseudo-log-likelihood pair preference", "evaluate", str(crows_example(folder)),
         "--kind", "crows-pairs", "--model", mlm, "--json", out("crows.json"), "--items", out("crows-items.csv"))
    step("SOS: profane vs nice sentences per identity (50 = unbiased)", "evaluate", str(sos_example(folder)),
         "--kind", "sos", "--model", mlm, "--json", out("sos.json"))
    step("SOFA: normalised perplexity variance across identities", "evaluate", str(sofa_example(folder)),
         "--kind", "sofa", "--model", clm, "--model", mlm, "--json", out("sofa.json"), "--plots", out("sofa-plots"))
    templates, lexicon = honest_example(folder)
    step("HONEST: hurtful completions, the HONEST@k curve (a harmless example lexicon)", "evaluate", str(templates),
         "--kind", "honest", "--lexicon", str(lexicon), "--model", mlm, "--top-k", "5", "--json", out("honest.json"),
         "--plots", out("honest-plots"))


def authoring_steps() -> None:
    """The same loop for the intrinsic kinds: a small project of template files per kind,
    expanded, labelled by a scripted annotator (StereoSet: five validators), released in the
    kind's public layout and scored from the release."""
    import importlib

    from .kinds.authoring import write_example_labels
    from .kinds.honest.example import write_example as honest_example
    from .kinds.stereoset.example import write_example_labels as stereoset_labels
    from .kinds.stereoset.example import write_example_project as stereoset_project

    root = OUT / "authoring"
    mlm, clm = str(OUT / "models" / "mlm-bert"), str(OUT / "models" / "clm-gpt2")
    _, lexicon = honest_example(root)
    for kind, module in [("stereoset", None), ("sofa", "sofa"), ("honest", "honest"), ("sos", "sos"),
                         ("crows-pairs", "crows_pairs")]:
        folder = root / kind
        if module is None:
            stereoset_project(folder, mlm)
        else:
            importlib.import_module(f"workbench.kinds.{module}.example").write_example_project(folder)
        step(f"{kind}: check the template files", "validate", cwd=folder)
        step(f"{kind}: expand them into the queue (one item per unit people validate)", "run", cwd=folder)
        if module is None:
            for n, path in enumerate(stereoset_labels(folder), start=1):
                step(f"stereoset: validator {n} of 5 (scripted)", "annotate", "-a", f"validator{n}",
                     "--labels-from", str(path), cwd=folder)
        else:
            step(f"{kind}: a scripted annotator labels every unit", "annotate", "-a", "annotator",
                 "--labels-from", str(write_example_labels(folder)), cwd=folder)
        step(f"{kind}: build release 1.0.0 in the public layout", "build", "--version", "1.0.0", cwd=folder)
        release = str(folder / "exports" / f"{kind}-example" / "1.0.0")
        extra = ["--kind", "honest", "--lexicon", str(lexicon), "--top-k", "5"] if kind == "honest" else []
        step(f"{kind}: score the release", "evaluate", release, *extra, "--model", clm if kind == "sofa" else mlm,
             "--json", str(folder / "scores.json"), cwd=folder)


if __name__ == "__main__":
    main()
