"""Shared helpers for the benchmarks: clocks, the machine, a scratch project, the report.

Every section returns the same summary (see `summary`): the workload, the figure, its ratio
to a pure batched forward pass of the same inputs (the roof) and to a plain one-item-at-a-time
loop written like the benchmark's reference code, and the clock both were read with. Ratios
compare runs made in the same process, interleaved, so the machine's speed and its other
load cancel out; absolute seconds are context only.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.json"
REPORT = ROOT / "benchmarks" / "REPORT.md"
EXTRA_WORDS = [
    "careful",
    "honest",
    "open",
    "eager",
    "quiet",
    "busy",
    "kind",
    "strong",
    "smart",
    "slow",
    "calm",
    "warm",
    "gentle",
    "loud",
    "happy",
    "sad",
    "ready",
    "willing",
    "afraid",
    "angry",
    "weak",
    "fast",
    "good",
    "bad",
]


@contextmanager
def timer(out: dict, key: str):
    start = time.perf_counter()
    yield
    out[key] = round(time.perf_counter() - start, 4)


def scratch_project(
    folder: Path, mlm: Path, nli: list[Path], copies: int = 8, extra_words: int = 3, top_k: int = 20
) -> Path:
    """A corpus of BBNLI-next's size: each example template in `copies` variants (new id,
    other extra words in every word list), so one added template is a small share of it."""
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "templates").mkdir(parents=True)
    for f in sorted((ROOT / "templates").rglob("*.yaml")):
        for c in range(copies):
            extra = [EXTRA_WORDS[(c * extra_words + i) % len(EXTRA_WORDS)] for i in range(extra_words)]
            text = re.sub(r"^id: (\w+)$", lambda m: f"id: {m.group(1)}_v{c}", f.read_text(), flags=re.M)
            text = re.sub(
                r"^(  [A-Z]+): \[(.*)\]$",
                lambda m: f"{m.group(1)}: [{m.group(2)}, {', '.join(extra)}]",
                text,
                flags=re.M,
            )
            (folder / "templates" / f"{f.stem}_v{c}.yaml").write_text(text)
    models = ", ".join(f'"{m}"' for m in nli)
    (folder / "workbench.toml").write_text(
        f'[generate]\nmodel = "{mlm}"\ntop_k = {top_k}\nbatch_size = 64\n'
        f"[filter]\nmodels = [{models}]\nbatch_size = 64\n[evaluate]\nmodels = []\n"
    )
    return folder


def add_template(folder: Path) -> Path:
    """One new template: a copy of an example template under a new id with new words."""
    src = (ROOT / "templates" / "age" / "work.yaml").read_text()
    new = src.replace("id: age_work", "id: age_work_extra").replace("[sales, design]", "[support, finance]")
    path = folder / "templates" / "work_extra.yaml"
    path.write_text(new)
    return path


# -- clocks -------------------------------------------------------------------------------------
class Clock:
    """How a section reads time. `cpu1`: one torch thread and this process's CPU seconds: on a
    shared 2-core machine, other work barely moves it (wall seconds there move by 2-3x from one
    run to the next). `wall`: torch's default threads and wall seconds (what a user waits)."""

    def __init__(self, mode: str = "cpu1"):
        if mode not in ("cpu1", "wall"):
            raise ValueError(mode)
        self.mode = mode
        self._threads = None

    @property
    def text(self) -> str:
        import torch

        if self.mode == "cpu1":
            return "process CPU seconds, one torch thread"
        return f"wall seconds, {torch.get_num_threads()} torch threads"

    def __enter__(self) -> "Clock":
        import torch

        self._threads = torch.get_num_threads()
        if self.mode == "cpu1":
            torch.set_num_threads(1)
        return self

    def __exit__(self, *exc) -> None:
        import torch

        torch.set_num_threads(self._threads)  # process-wide: later sections get it back

    def now(self) -> float:
        return time.process_time() if self.mode == "cpu1" else time.perf_counter()

    def time(self, fn, *args, **kwargs) -> float:
        start = self.now()
        fn(*args, **kwargs)
        return self.now() - start


def interleaved(clock: Clock, contenders: dict, repeats: int = 3) -> dict[str, list[float]]:
    """Seconds of each contender (name -> no-argument callable) per repeat; the order turns
    round every repeat so a change of load hits all of them alike. Compare the best of each."""
    names = list(contenders)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            times[name].append(clock.time(contenders[name]))
    return times


def best(times: list[float]) -> float:
    return min(times)


# -- the machine --------------------------------------------------------------------------------
def machine() -> dict:
    """What the figures were measured on. No GPU is a fact worth saying: every figure is CPU."""
    import torch
    import transformers

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = (
        torch.cuda.get_device_name(0)
        if torch.cuda.is_available()
        else "none (no GPU in this session: every figure is CPU)"
    )
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        memory = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": memory,
        "gpu": gpu,
        "default_torch_threads": torch.get_num_threads(),
        "load_average_at_start": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }


def summary(
    *,
    title: str,
    workload: str,
    figure: str,
    clock: str,
    roof: float | None = None,
    roof_what: str = "",
    loop: float | None = None,
    loop_what: str = "",
    targets: list[str] = (),
    figures: dict | None = None,
    notes: list[str] = (),
) -> dict:
    """One section's result. roof / loop: the section's speed over the pure batched forward
    pass's and over the plain loop's on the same inputs (> 1 = faster); None with a `*_what`
    saying why there is none (e.g. a stage without a model)."""
    return {
        "title": title,
        "workload": workload,
        "figure": figure,
        "clock": clock,
        "roof": roof,
        "roof_what": roof_what,
        "loop": loop,
        "loop_what": loop_what,
        "targets": list(targets),
        "figures": figures or {},
        "notes": list(notes),
    }


# -- results and the report ---------------------------------------------------------------------
ORDER = [
    "expand",
    "generate",
    "proposers",
    "filter",
    "filter_scale",
    "fluency",
    "queue",
    "evaluate",
    "annotate",
    "labels",
    "labelstudio",
    "distributed",
    "stereoset",
    "crows_pairs",
    "sos",
    "sofa",
    "honest",
    "fairbelief",
    "intervals",
    "lmeval",
    "determinism",
    "generation",
    "nli_llm",
    "import",
    "stages_scale",
]
GROUPS = {
    "NLI loop": [
        "expand",
        "generate",
        "proposers",
        "filter",
        "filter_scale",
        "fluency",
        "queue",
        "evaluate",
        "annotate",
        "labels",
        "labelstudio",
        "distributed",
    ],
    "Intrinsic kinds' evaluators": ["stereoset", "crows_pairs", "sos", "sofa", "honest", "fairbelief"],
    "Uncertainty": ["intervals"],
    "Beside lm-evaluation-harness": ["lmeval", "nli_llm"],
    "Shared model layer": ["determinism", "generation"],
    "Big benchmarks": ["import", "stages_scale"],
}


def save(name: str, result: dict) -> None:
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data = {k: v for k, v in data.items() if k in ORDER}  # older layouts' entries are dropped
    data[name] = result
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    write_report(data)


def _ratio(value) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}×" if value < 10 else f"{value:.1f}×"


def write_report(data: dict) -> None:
    lines = [
        "# Benchmark report",
        "",
        "Generated by `make bench` (`python -m benchmarks.run`) from `benchmarks/results.json`.",
        "`make bench SECTION=name` (or `python -m benchmarks.run name ...`) measures some sections and",
        "rewrites this file with every section measured so far; each section says when, by which",
        "command and on which machine it was measured.",
        "",
        "Every ratio is measured in one run, the contenders interleaved: **× roof** is the section's",
        "speed over a pure batched forward pass of the same inputs (the model calls alone, inputs",
        "pre-built; > 1 means the section does less arithmetic than that pass, e.g. by skipping",
        "repeated rows), **× plain loop** its speed over a one-item-at-a-time loop written like the",
        "benchmark's reference code. Absolute seconds are context only: the machine is shared.",
        "",
        "Model sections read process CPU seconds on one torch thread, which other work on this shared",
        "2-core machine barely moves. On one CPU thread a batched pass can only win what a one-item",
        "call leaves unused (the filter section measures that bound for its model: its plain loop",
        "reaches it), so × plain loop grows with the vocabulary (CrowS-Pairs and SOS with BERT's",
        "30,522 entries), with threads, and on a GPU; the sections say where they measured that too.",
        "",
    ]
    gpus = {r.get("machine", {}).get("gpu", "") for r in data.values()}
    if all(g.startswith("none") for g in gpus):
        lines += ["**No GPU was available in this session: every figure below is measured on the CPU.**", ""]
    lines += ["| section | workload | figure | × roof | × plain loop | clock |", "|---|---|---|---|---|---|"]
    for name in ORDER:
        r = data.get(name)
        if r is None:
            lines.append(f"| {name} | not measured yet (`make bench SECTION={name}`) | | | | |")
        elif r.get("status") == "could not run":
            lines.append(f"| {name} | could not run: {r['why']} | | | | |")
        else:
            lines.append(
                f"| [{name}](#{name.replace('_', '-')}) | {r['workload']} | {r['figure']} | {_ratio(r['roof'])} | "
                f"{_ratio(r['loop'])} | {r['clock']} |"
            )
    lines.append("")
    for group, names in GROUPS.items():
        lines += [f"## {group}", ""]
        for name in names:
            r = data.get(name)
            lines += [f"### {name.replace('_', '-')}", ""]
            if r is None:
                lines += [f"Not measured yet: run `make bench SECTION={name}`.", ""]
                continue
            if r.get("status") == "could not run":
                lines += [f"**Could not run:** {r['why']}", "", *_measured(r), ""]
                continue
            lines += [
                f"**{r['title']}**",
                "",
                f"- **Workload:** {r['workload']}",
                f"- **Figure:** {r['figure']}",
                f"- **× roof:** {_ratio(r['roof'])} — {r['roof_what']}",
                f"- **× plain loop:** {_ratio(r['loop'])} — {r['loop_what']}",
                f"- **Clock:** {r['clock']}",
                *_measured(r),
            ]
            for t in r["targets"]:
                lines.append(f"- **Target:** {t}")
            lines.append("")
            if r["figures"]:
                lines += ["<details><summary>all figures</summary>", "", "| figure | value |", "|---|---|"]
                lines += [
                    f"| `{k}` | {json.dumps(v) if not isinstance(v, str) else v} |" for k, v in r["figures"].items()
                ]
                lines += ["", "</details>", ""]
            lines += [f"- {n}" for n in r["notes"]]
            lines.append("")
    REPORT.write_text("\n".join(lines))


def _measured(r: dict) -> list[str]:
    m, how = r.get("machine", {}), r.get("measured", {})
    cpu = f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {m.get('memory_gib', '?')} GiB"
    return [
        f"- **Machine:** {cpu}; GPU: {m.get('gpu', '?')}; load average {m.get('load_average_at_start', '?')} at "
        f"start (shared); torch {m.get('torch', '?')}, transformers {m.get('transformers', '?')}",
        f"- **Measured:** {how.get('at', '?')} by `{how.get('command', '?')}` in {how.get('seconds', '?')} s",
    ]


def stamp(result: dict, command: str, seconds: float, machine_info: dict) -> dict:
    return {
        **result,
        "machine": machine_info,
        "measured": {
            "at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": command,
            "seconds": round(seconds),
        },
    }
