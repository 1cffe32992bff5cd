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
            problems.append(
                problem(
                    t,
                    ("hypotheses",),
                    "no hypothesis has a <mask>: generate leaves this template "
                    "out of the loop (`workbench templates suggest-masks` "
                    "proposes masks)",
                )
            )
            continue
        for h in unmasked:
            problems.append(
                problem(
                    t,
                    ("hypotheses", h.index, "text"),
                    "bias hypothesis without a <mask>: generate leaves it out of the loop (no fills, "
                    "never in the queue or the release); add one, or make it kind: test",
                )
            )
    return problems


def grammar_problems(templates: list[Template], language) -> list[Problem]:
    """Every template with its group pair, in both stances, read by the language's parser: the
    words that disagree with their group as the author wrote them, and what the swapped stance
    leaves for annotators (`workbench.languages.grammar`), each at its field's line. A language
    without grammar rules or a parser reports nothing here."""
    import itertools

    from ....core.errors import ModelError
    from ....languages import grammar as G
    from ....authoring import text as tt
    from . import sentences as S

    if language is None or language.grammar is None:
        return []
    problems, seen = [], set()
    try:
        for t in templates:
            keys = list(t.words)
            strings = [(("premises", p.index, "text"), p.text) for p in t.premises]
            strings += [(("hypotheses", h.index, "text"), h.text) for h in t.hypotheses]
            for path, text in strings:
                if not any(n in tt.GROUP_KEYS for n in tt.placeholders(text)):
                    continue
                for combo in itertools.product(*(t.words[k] for k in keys)):
                    written = {**dict(zip(keys, combo)), "GROUP1": t.groups["GROUP1"], "GROUP2": t.groups["GROUP2"]}
                    swapped = {**written, "GROUP1": t.groups["GROUP2"], "GROUP2": t.groups["GROUP1"]}
                    pieces = S.render(text, written)
                    analysis = S._analysis(tuple(pieces.texts), tuple(pieces.kinds), tuple(pieces.pos), language)
                    found = [
                        ("as written", S.joined(pieces, language)[0], note)
                        for note in G.disagreements(pieces.texts, pieces.kinds, analysis, language)
                    ]
                    other, notes = S.with_groups(text, written, swapped, language)
                    found += [("swapped", S.joined(other, language)[0], note) for note in notes]
                    for stance, sentence, note in found:
                        key = (t.id, path, note)
                        if key not in seen:
                            seen.add(key)
                            problems.append(problem(t, path, f"{stance} ({sentence!r}): {note}"))
    except ModelError as exc:
        return [Problem("", None, "", f"agreement not checked: {exc}", "warning")]
    return problems


def identity_number_problems(authoring, paths, language) -> list[Problem]:
    """Templates with an identity slot (records with `raw`, `[I]` where the identity goes, and
    `identity`), and statements an identity is put before (records whose text, the authoring's
    text column, is the `identity`, a space and the statement as written): a prompt or probe
    whose words disagree with its identity, by the language's parser ("les filles est [M]": a
    template written as one text used with identities of another number; "are slow to learn"
    after the singular identity "an older person")."""
    from ....core.errors import ModelError
    from ....languages import grammar as G
    from ....authoring.files import find_template_files, read_file
    from ....authoring.stages import check_file
    from .masks import load_spacy

    if language is None or language.grammar is None:
        return []
    files, _ = find_template_files(list(paths))
    problems, seen = [], set()
    try:
        nlp = None
        for path in files:
            raw, _ = read_file(path)
            if raw is None:
                continue
            rows, _, _ = check_file(authoring, raw)
            for row in rows:
                record = row.record
                text, identity = record.get("raw"), record.get("identity")
                if not isinstance(identity, str) or not identity:
                    continue
                shown = record.get(authoring.text_column)
                if isinstance(text, str) and text.count("[I]") == 1:
                    before, after = text.split("[I]")
                elif text is None and isinstance(shown, str) and shown.startswith(identity + " "):
                    before, after = "", shown[len(identity) :]  # the identity, then the statement
                else:
                    continue
                texts, kinds = [], []
                for part in _slots(before) + [(identity, "group")] + _slots(after):
                    texts.append(part[0]), kinds.append(part[1])
                nlp = nlp or load_spacy(language=language)
                analysis = G.analyse(texts, kinds, [None] * len(texts), language, nlp)
                for note in G.disagreements(texts, kinds, analysis, language):
                    key = (raw.shown, row.where, identity, note)
                    if key not in seen:
                        seen.add(key)
                        number = "plural" if language.is_plural(identity) else "singular"
                        problems.append(
                            raw.problem(
                                row.where,
                                f"with the {number} identity {identity!r}: {note}; "
                                "expand writes the agreeing form where the parse is sure "
                                "(else the row's grammar line says so); a template of "
                                "that group's number avoids relying on it",
                                "warning",
                            )
                        )
    except ModelError as exc:
        return [Problem("", None, "", f"agreement not checked: {exc}", "warning")]
    return problems


def _slots(text: str) -> list[tuple[str, str]]:
    """A prompt's text around its `[M]` slot: the slot read as a mask."""
    out = []
    for k, part in enumerate(text.split("[M]")):
        if k:
            out.append(("<mask>", "mask"))
        if part:
            out.append((part, "text"))
    return out
