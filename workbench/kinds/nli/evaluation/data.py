"""What the evaluator scores: a release (Hub or local export), BBNLI-format templates, or a
file of precomputed predictions. Everything ends as one table with premise/hypothesis (when
models must run), stance, domain, subtopic, pair_id and, for predictions, the prediction."""

from __future__ import annotations

import json
from pathlib import Path

from ....core.errors import InputError, display_path
from .results import EvalSet, read_export

PREDICTION_FIELDS = ("stance", "domain", "subtopic", "prediction")


def _from_templates(path: Path, source: str) -> EvalSet:
    """BBNLI's audit set: bias samples only; each pro sample is paired with its swapped anti."""
    from ..tables import bindings_text
    from ..templates.expand import expand_all
    from ..templates.loader import load_templates_or_fail

    templates, _ = load_templates_or_fail([path])
    rows, masked, nth = [], 0, {}
    for r in expand_all(templates):
        if r["kind"] != "bias":
            continue
        if r["n_masks"]:
            masked += 1
            continue
        place = f"{r['template_id']}:{r['premise_index']}:{r['hypothesis_index']}:{bindings_text(r['bindings'])}"
        # a second row of one place (its question differs by words the hypothesis does not use, as in
        # BBNLI's own CSV) is paired with the second of its twins
        n = nth[(place, r["stance"])] = nth.get((place, r["stance"]), -1) + 1
        pair = f"{place}:{n}"
        rows.append(
            {
                "premise": r["premise"],
                "hypothesis": r["hypothesis"],
                "stance": r["stance"],
                "domain": r["domain"],
                "subtopic": r["subtopic"],
                "pair_id": pair,
                "cluster": f"{r['template_id']}:{r['hypothesis_index']}",
            }
        )  # its fills vary only the words
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["pair_id"]] = counts.get(r["pair_id"], 0) + 1
    for r in rows:
        if counts[r["pair_id"]] != 2:
            r["pair_id"] = None  # its partner was an exact duplicate and dropped
    notes = [f"{masked} masked samples skipped (generate and validate them first)"] if masked else []
    return EvalSet(source, rows, notes=notes)


def load_eval_set(spec: str) -> EvalSet:
    path = Path(spec).expanduser()
    if path.exists():
        if path.is_dir() and ((path / "data").is_dir() or (path / "manifest.json").is_file()):
            return read_export(path, spec)
        from ....authoring.files import find_template_files

        if path.is_dir() and not find_template_files([path])[0]:
            raise InputError(
                f"{display_path(path)} is neither a release (manifest.json and data/) nor a folder of "
                "templates (*.yaml, *.yml, *.json)"
            )
        return _from_templates(path, spec)
    from .... import sources

    hub = sources.hub_spec(spec)
    if not hub:
        raise InputError(f"dataset {spec!r} is neither a local folder/file nor ORG/NAME[@REVISION]")
    found = sources.resolve(spec)
    result = read_export(found.path, spec)
    result.repo, result.revision = found.repo, found.revision
    return result


def load_predictions(path: Path) -> dict[str, list[dict]]:
    """Predictions JSON lines, grouped by model; every problem names the line."""
    shown = display_path(path)
    from ....core.text import read_text

    text = read_text(path, "predictions file")
    by_model: dict[str, list[dict]] = {}
    problems = []
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 may sit in a string
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{shown}:{number}: invalid JSON: {exc.msg}")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{shown}:{number}: expected a JSON object")
            continue
        missing = [k for k in PREDICTION_FIELDS if k not in obj]
        if missing:
            problems.append(f"{shown}:{number}: missing field(s) {', '.join(missing)}")
            continue
        if obj["stance"] not in ("pro", "anti"):
            problems.append(f"{shown}:{number}: stance must be 'pro' or 'anti', not {obj['stance']!r}")
            continue
        pred = str(obj["prediction"]).lower()
        if pred not in ("entailment", "neutral", "contradiction"):
            problems.append(
                f"{shown}:{number}: prediction must be entailment, neutral or contradiction, not {obj['prediction']!r}"
            )
            continue
        pair = obj.get("pair_id")
        by_model.setdefault(str(obj.get("model") or "predictions"), []).append(
            {
                "stance": obj["stance"],
                "domain": str(obj["domain"]),
                "subtopic": str(obj["subtopic"]),
                "pair_id": None if pair is None else str(pair),
                "prediction": pred,
                "line": number,
            }
        )
        if len(problems) > 50:
            break
    if problems:
        raise InputError(f"{len(problems)} problem(s) in {shown}:\n" + "\n".join(problems[:50]))
    if not by_model:
        raise InputError(f"{shown}: no predictions")
    return by_model
