"""`workbench templates lint`'s checks beyond a template's schema: what the loop would silently
leave out or write wrong, reported before anyone labels (file, field, line)."""
from __future__ import annotations

from ....core.errors import Problem
from .schema import Template


def _raw(template: Template):
    """The template's file read again, for the line of a field (None when it cannot be read)."""
    from . import bbnli
    from ....authoring.files import RawFile, read_file

    if template.path is None or not template.path.is_file():
        return None
    raw, _ = read_file(template.path)
    if raw is not None and bbnli.is_bbnli(raw.data):
        converted, _ = bbnli.convert(raw)
        raw = RawFile(raw.path, converted, raw.shown, field_map=raw.field_map)
    return raw


def problem(template: Template, path: tuple, message: str) -> Problem:
    """A warning at a field of the template's file, with its line when the file has lines."""
    raw = _raw(template)
    if raw is None:
        return Problem(str(template.path or template.id), None, ".".join(map(str, path)), message, "warning")
    return raw.problem(path, message, "warning")


def unmasked_bias_hypotheses(templates: list[Template]) -> list[Problem]:
    """Bias hypotheses without a `<mask>`: generate fills only masked ones, so these never reach
    the queue or the release. A template none of whose hypotheses is masked (BBNLI's own files,
    expanded to be evaluated as they are) is left out of the loop as a whole: said once."""
    problems = []
    for t in templates:
        unmasked = [h for h in t.hypotheses if h.kind == "bias" and not h.masked]
        if not unmasked:
            continue
        if not any(h.masked for h in t.hypotheses):
            problems.append(problem(t, ("hypotheses",), "no hypothesis has a <mask>: generate leaves this template "
                                                        "out of the loop (`workbench templates suggest-masks` "
                                                        "proposes masks)"))
            continue
        for h in unmasked:
            problems.append(problem(t, ("hypotheses", h.index, "text"),
                                    "bias hypothesis without a <mask>: generate leaves it out of the loop (no fills, "
                                    "never in the queue or the release); add one, or make it kind: test"))
    return problems
