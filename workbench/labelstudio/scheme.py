"""What pull relies on in a project's labeling config, and the JSON shape of annotation results.

The config itself is generated from the kind's words (page.py). Layout (headers, styles) may
be edited by hand; the objects' names and data fields, the controls, single choice and the
choice values may not: pull would misread the annotations.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..core.labels import LabelScheme

from .page import FIX_PREFIX, FLAG_KEY, FLAG_TAG, FLAG_VALUE, ID_KEY, LABEL_TAG, NOTE_TAG, TARGET, label_config  # noqa: F401


def _shape(root: ET.Element) -> tuple[dict, dict]:
    """What pull relies on: data fields shown (name -> $variable) and controls (name -> how they answer)."""
    objects = {
        t.get("name"): f"{t.tag} {t.get('value')}"
        for t in root.iter()
        if t.get("name") and (t.get("value") or "").startswith("$")
    }
    controls = {}
    for t in root.iter():
        if t.get("name") and t.get("toName"):
            mode = f" choice={t.get('choice') or 'single'}" if t.tag == "Choices" else ""
            controls[t.get("name")] = f"{t.tag} toName={t.get('toName')}{mode}"
    return objects, controls


def config_problems(config_xml: str, scheme: LabelScheme, words=None) -> list[str]:
    """Why a project's labeling config differs from the one push creates (empty when it does not).

    Layout (headers, styles) may be edited by hand; field names, control types, single vs
    multiple choice and the choice values may not: pull would misread the annotations."""
    try:
        root = ET.fromstring(config_xml or "")
    except ET.ParseError as exc:
        return [f"labeling config is not valid XML: {exc}"]
    want_objects, want_controls = _shape(ET.fromstring(label_config(scheme, words)))
    objects, controls = _shape(root)
    problems = []
    for kind, want, have in (("field", want_objects, objects), ("control", want_controls, controls)):
        for name in sorted(set(want) | set(have)):
            if name not in have:
                problems.append(f'no {kind} named "{name}" ({want[name]})')
            elif name not in want:
                problems.append(f'unexpected {kind} "{name}" ({have[name]})')
            elif want[name] != have[name]:
                problems.append(f'{kind} "{name}" is {have[name]}, expected {want[name]}')
    label = next((c for c in root.iter("Choices") if c.get("name") == LABEL_TAG), None)
    if label is not None:
        values = sorted(c.get("value") for c in label.iter("Choice"))
        if values != sorted(scheme.ids):
            problems.append(f"choices {values} differ from {sorted(scheme.ids)}")
    return problems


def result_for(category: str | None, note: str | None, flag: bool = False) -> list[dict]:
    """An annotation/prediction result in Label Studio's JSON shape."""
    result = []
    if category:
        result.append({"from_name": LABEL_TAG, "to_name": TARGET, "type": "choices", "value": {"choices": [category]}})
    if flag:
        result.append({"from_name": FLAG_TAG, "to_name": TARGET, "type": "choices", "value": {"choices": [FLAG_VALUE]}})
    if note:
        result.append({"from_name": NOTE_TAG, "to_name": TARGET, "type": "textarea", "value": {"text": [note]}})
    return result


def parse_result(result: list[dict]) -> tuple[list[str], str | None, bool]:
    """(every label choice made, note, flagged) from an annotation's result list.

    All choices are returned, never only the first: the caller refuses more than one."""
    choices: list[str] = []
    note, flag = None, False
    for r in result or []:
        value = r.get("value") or {}
        if r.get("from_name") == LABEL_TAG:
            choices += list(value.get("choices") or [])
        elif r.get("from_name") == FLAG_TAG:
            flag = flag or bool(value.get("choices"))
        elif r.get("from_name") == NOTE_TAG and value.get("text"):
            text = value["text"]
            note = (" ".join(text) if isinstance(text, list) else str(text)).strip() or None
    return choices, note, flag


def parse_fix(result: list[dict]) -> dict | None:
    """An audit's fix in an annotation's result: {column: corrected text} of the non-empty fix_<column> areas."""
    fix = {}
    for r in result or []:
        name, text = r.get("from_name") or "", (r.get("value") or {}).get("text")
        if name.startswith(FIX_PREFIX) and text and " ".join(str(text[0]).split()):
            fix[name[len(FIX_PREFIX) :]] = " ".join(str(text[0]).split())
    return fix or None
