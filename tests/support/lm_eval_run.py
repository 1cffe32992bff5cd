"""lm-evaluation-harness run as a user runs a release's task: `lm_eval.simple_evaluate` with the hf
backend on the CPU, offline, in a process that never imports workbench itself (what a task
imports, it brings: the release's own evaluator/ folder or nothing).

Starting that process (torch, transformers, datasets, lm_eval) is most of a run's cost, so one
worker serves every run of the test session: each request a line of JSON on its stdin, each answer
a line on its stdout. After a run the worker forgets what the run imported from the request's
folders (a release's `workbench` evaluator package, the tasks' utils) and the path entries it
added, so the next release's task reads its own."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

WORKER = textwrap.dedent("""
    import json, os, sys
    import lm_eval
    from lm_eval.tasks import TaskManager

    def run(request):
        folders = [folder for folder, _ in request["pairs"]]
        tasks = [task for _, task in request["pairs"]]
        chat = {}
        if request.get("system") is not None:  # --apply_chat_template --system_instruction TEXT
            chat = {"apply_chat_template": True, "system_instruction": request["system"]}
        found = lm_eval.simple_evaluate(
            model="hf", model_args=f"pretrained={request['model']}{request.get('model_args', '')}", tasks=tasks,
            device="cpu", batch_size=8, task_manager=TaskManager(include_path=folders),
            log_samples=bool(request.get("samples")), **chat)
        imported = {m: getattr(sys.modules[m], "__file__", None) for m in sys.modules
                    if m == "workbench" or m.startswith("workbench.")}
        samples = {}
        for task in tasks if request.get("samples") else ():
            samples[task] = [[s["doc"], [float(r[0]) for r in s["filtered_resps"]]] for s in found["samples"][task]]
        return {"results": found["results"], "workbench": imported, "samples": samples}

    answers = os.fdopen(os.dup(1), "w")  # the answers' own channel: what lm-eval prints goes to stderr
    os.dup2(2, 1)
    modules, path = set(sys.modules), list(sys.path)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = {"ok": run(request)}
        except BaseException as exc:  # the test reads what went wrong; the worker serves the next run
            import traceback
            answer = {"error": "".join(traceback.format_exception(exc))[-3000:]}
        releases = tuple(os.path.dirname(folder.rstrip("/")) + "/" for folder, _ in request["pairs"])
        for name in set(sys.modules) - modules:  # what this run's releases brought: forgotten
            where = getattr(sys.modules[name], "__file__", None) or ""
            if name == "workbench" or name.startswith("workbench.") or where.startswith(releases):
                del sys.modules[name]
        sys.path[:] = path
        print(json.dumps(answer), file=answers, flush=True)
""")

_worker: subprocess.Popen | None = None


def _start(home: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HOME": str(home),
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    home.mkdir(parents=True, exist_ok=True)
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=home, env=env, text=True
    )
    atexit.register(_stop, worker)
    return worker


def _stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.stdin.close()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def run_lm_eval(
    model,
    pairs: list[tuple[Path, str]],
    home: Path,
    *,
    system: str | None = None,
    model_args: str = "",
    samples: bool = False,
) -> dict:
    """lm-eval's results for `model` on each (task folder, task name): {"results": lm-eval's
    results by task, "workbench": {module: file} of every workbench module the run imported,
    "samples": {task: [[doc, [each choice's log-likelihood]]]} with `samples`}. `system` set:
    asked with --apply_chat_template --system_instruction it. `home`: the worker's HF_HOME (its
    first caller's; the worker serves the whole session)."""
    global _worker
    if _worker is None or _worker.poll() is not None:
        _worker = _start(Path(home))
    request = {
        "model": str(model),
        "pairs": [[str(folder), task] for folder, task in pairs],
        "system": system,
        "model_args": model_args,
        "samples": samples,
    }
    _worker.stdin.write(json.dumps(request) + "\n")
    _worker.stdin.flush()
    line = _worker.stdout.readline()
    assert line, f"the lm-eval worker ended (exit {_worker.wait()})"
    answer = json.loads(line)
    assert "ok" in answer, answer["error"]
    return answer["ok"]
