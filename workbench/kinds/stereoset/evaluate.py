"""`workbench evaluate FILE --kind stereoset`: lms, ss and icat per model, overall, per split and
per split × domain, with the reference evaluator's counting (see metrics.py) and the
scoring rules in scoring.py. `--predictions` scores a predictions file in the reference
format instead of a model; `--predictions-out` writes one, so numbers can be checked against
other tools in both directions.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...core.errors import InputError, display_path
from ...evaluation.intervals import notes
from ...evaluation.versions import Compared
from ...evaluation.request import EvaluateRequest
from .data import (
    load,
    load_predictions,
    locate,
    looks_like_stereoset,
    release_file,
    write_predictions,
)
from .metrics import document
from .scoring import DEFAULT_RULE, RULES

DETECT_LIMIT = 256 << 20  # files larger than this are not opened just to guess their kind


def detect(path: Path) -> bool:
    """A StereoSet JSON file, or a release folder holding one (data/stereoset.json)."""
    path = Path(path)
    try:
        if path.is_dir():
            return release_file(path) is not None
        if path.is_file() and path.suffix.lower() in (".json", ".jsonl") and path.stat().st_size < DETECT_LIMIT:
            from .data import hf_records

            if hf_records(path) is not None:  # a Hugging Face export
                return True
            return looks_like_stereoset(json.loads(path.read_text(encoding="utf-8-sig")))
    except (OSError, ValueError):
        return False
    return False


def _predictions_path(base: Path, model: str, several: bool) -> Path:
    """With several models each gets its own file: NAME.<model>.json beside the given path."""
    if not several:
        return base
    from ...evaluation.output import short

    return base.with_name(f"{base.stem}.{short(model)}{base.suffix or '.json'}")


def evaluate(request: EvaluateRequest, console) -> dict:
    from ...core.progress import progress_bar
    from ...evaluation.output import write_csv, write_json
    from .report import item_rows, rows, table, write_items, write_plot

    rule = request.score_rule or DEFAULT_RULE
    if rule not in RULES:
        raise InputError(f"unknown --score-rule {rule!r} for stereoset; choose {' or '.join(RULES)}")
    if len(request.sources) != 1:
        raise InputError(f"stereoset evaluates one file or release at a time, got {len(request.sources)}")
    if request.predictions is not None and request.models:
        raise InputError("give either --model or --predictions, not both")
    if request.predictions is None and not request.models:
        raise InputError("no model: pass --model (a Hub name or a local folder), or --predictions FILE")
    if request.predictions is not None and request.predictions_out is not None:
        raise InputError("--predictions-out writes model scores; with --predictions the scores are read from a file")
    several = len(dict.fromkeys(request.models)) > 1
    if request.predictions_out is not None and several:  # each model's own file, checked as every output is
        from ...core.outputs import check_outputs
        from ...evaluation.output import request_inputs

        check_outputs(
            [
                (f"--predictions-out for {m}", _predictions_path(Path(request.predictions_out), m, True), False)
                for m in dict.fromkeys(request.models)
            ],
            request_inputs(request),
        )
    data = load(request.sources[0])
    causal_rule = (request.options or {}).get("causal_intersentence") or "continuation"
    masked_input = (request.options or {}).get("masked_intrasentence") or "in-sentence"
    warnings = list(data.notes)

    scores_by_model: dict[str, dict[str, float]] = {}
    methods: dict[str, dict[str, str]] = {}
    if request.predictions is not None:
        name = str(request.predictions)
        scores_by_model[name] = load_predictions(Path(request.predictions), data)
        methods[name] = {"scores": f"read from {display_path(request.predictions)}"}
    else:
        from ...models.lm_loading import load_scorer
        from .scoring import model_methods, score_model, switch_warnings

        for model in dict.fromkeys(request.models):
            scorer = load_scorer(
                model, root=request.root, spec=request.spec, runtimes=request.runtimes, cache_path=request.cache_path
            )
            try:
                scores, how = score_model(
                    scorer,
                    data,
                    rule,
                    progress_bar,
                    causal_intersentence=causal_rule,
                    masked_intrasentence=masked_input,
                )
                warnings += switch_warnings(model, scorer.kind, data, causal_rule, masked_input)
            finally:
                if scorer.cache is not None:
                    scorer.cache.close()
            scores_by_model[model] = scores
            methods[model] = model_methods(scorer, how)
            del scorer

    doc = document(data, rule if request.predictions is None else None, scores_by_model, methods, request.intervals)
    # which computation ran is in each model's `methods` (the same JSON as a release's evaluate.py)
    console.print(table(doc))
    for note in warnings:
        console.print(f"{request.sources[0]}: {note}", markup=False, highlight=False)
    for line in notes(doc["uncertainty"]):
        console.print(line, markup=False, highlight=False)
    if request.predictions_out is not None:
        for model, scores in scores_by_model.items():
            path = _predictions_path(Path(request.predictions_out), model, len(scores_by_model) > 1)
            write_predictions(data, scores, path)
            console.print(f"wrote {display_path(path)}")
    doc.update(request.annotations())  # how each model ran; --unverified warnings
    if request.json_out:
        write_json(doc, Path(request.json_out))
        console.print(f"wrote {display_path(request.json_out)}")
    if request.csv_out:
        write_csv(rows(doc), Path(request.csv_out))
        console.print(f"wrote {display_path(request.csv_out)}")
    if request.items_out:
        write_items(item_rows(data, scores_by_model), Path(request.items_out))
        console.print(f"wrote {display_path(request.items_out)}")
    if request.plots:
        path = write_plot(doc, Path(request.plots))
        console.print(f"wrote {display_path(path)}")
    return doc


# `workbench evaluate A B`: each version evaluated alone, then these measures side by side, with
# how ss, lms and icat moved (icat alone can hide a move of both that cancels out).
COMPARED = Compared(
    keys=("model", "split", "domain"), measures=("ss", "lms", "icat", "n"), changed=("lms", "icat"), unit="CAT"
)


def without_removed(source: str, removed: set[str], folder: Path) -> tuple[Path, int] | None:
    """A renewal's middle step (evaluation/versions.py): the StereoSet source (a file, or a release
    folder such as `build --original`'s) without the CATs a renewed release removed, as a StereoSet
    JSON file in `folder`. A release's changes.csv lists sentence ids: a CAT goes when any of its
    sentences (or its own id) is listed, since a CAT is scored only whole. Returns (file, CATs
    dropped), or None when the source is not a local StereoSet source or no CAT of it is listed."""
    from .data import from_hf, hf_records, read_json

    path = Path(source)
    if not path.exists():
        return None
    try:
        found, _ = locate(source)
    except InputError:
        return None
    records = hf_records(found) if found.suffix.lower() in (".json", ".jsonl") else None
    doc = from_hf(records) if records is not None else read_json(found, "StereoSet file")
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        return None

    def gone(cat) -> bool:
        if not isinstance(cat, dict):
            return False
        ids = [cat.get("id"), *(s.get("id") for s in cat.get("sentences") or [] if isinstance(s, dict))]
        return any(str(i) in removed for i in ids if i is not None)

    data = doc["data"]
    dropped = sum(gone(c) for cats in data.values() if isinstance(cats, list) for c in cats)
    if not dropped:
        return None
    kept = {split: [c for c in cats if not gone(c)] if isinstance(cats, list) else cats for split, cats in data.items()}
    target = Path(folder) / f"{found.stem}.json"
    target.write_text(json.dumps({**doc, "data": kept}, ensure_ascii=False) + "\n", encoding="utf-8")
    return target, dropped


def measure_rows(doc: dict) -> list[dict]:
    from .report import rows

    return rows(doc)
