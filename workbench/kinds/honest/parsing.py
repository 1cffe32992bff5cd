"""Parsing HONEST's two TSVs from their text: the templates and the user's HurtLex-style lexicon.

Pure code (the standard library and `core.errors`): a release's standalone evaluate.py carries
it verbatim, so the script keeps the same rows, groups, lemmas and categories as `workbench
evaluate`. Finding and reading the files is data.py's (workbench's paths, the Hub).

The public HONEST tooling reads the template file with the masked text as the index, which
silently keeps one row per distinct text (the last row of each text wins, at the place of the
first); by default every row is kept and the duplicates are counted, so the denominator is the
number of rows the user wrote. `repeated="once"` (`--repeated-templates once`) reproduces the
reference: each text counts once, with its last row's identity and group.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import InputError, Problem, display_path
from ...core.text import check_header

SLOT = "[M]"
GROUP_COLUMNS = ("category", "mf", "type")  # the first one present groups, unless --group-by
MAX_PROBLEMS = 20
REPEATED = ("rows", "once")  # --repeated-templates: every row counts (default) / once, as the reference
NORMALISATIONS = ("workbench", "unidecode")  # --lemma-normalisation: strip_accents (default) / as the reference

# Letters that do not decompose into base + accent but that the public tool's transliteration
# (unidecode) still maps to plain Latin; the common ones of the HONEST languages.
_FOLD = str.maketrans(
    {
        "ß": "ss",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "Þ": "Th",
        "ı": "i",
        "’": "'",
        "‘": "'",
    }
)


def strip_accents(text: str) -> str:
    """Text without diacritics (é → e, ș → s, ß → ss); the case is kept, as matching is
    case-sensitive."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _unidecode() -> Callable[[str], str] | None:
    """unidecode's transliteration (the reference HONEST tool's), or None when it is not installed.
    An optional import: only --lemma-normalisation unidecode needs it, and a release's evaluate.py
    runs without it (its card's pip line does not name it)."""
    try:
        from unidecode import unidecode
    except ImportError:
        return None
    return unidecode


def normaliser(normalisation: str) -> Callable[[str], str]:
    """How lemmas and fills are normalised before they are compared (NORMALISATIONS)."""
    if normalisation == "workbench":
        return strip_accents
    if normalisation != "unidecode":
        raise ValueError(f"normalisation must be one of {NORMALISATIONS}, not {normalisation!r}")
    found = _unidecode()
    if found is None:
        raise InputError(
            "--lemma-normalisation unidecode needs the unidecode package, which the reference HONEST "
            "tool uses to strip accents: pip install unidecode"
        )
    return found


def normalisation_note(lemmas: list[str], normalisation: str) -> str | None:
    """What differs from the reference on this lexicon: the lemmas the two normalisations map
    differently, and the switch (None when none differs, or unidecode is not installed)."""
    reference = _unidecode()
    if reference is None:
        return None
    differ = [lemma for lemma in dict.fromkeys(lemmas) if strip_accents(lemma) != reference(lemma)]
    if not differ:
        return None
    shown = ", ".join(f"{d!r} ({strip_accents(d)!r} / {reference(d)!r})" for d in differ[:3])
    if normalisation == "unidecode":
        return (
            f"--lemma-normalisation unidecode: lemmas and fills transliterated with unidecode, as the reference "
            f"HONEST tool does; {len(differ)} lemma(s) of this lexicon normalise differently from the workbench "
            f"default, e.g. {shown}"
        )
    return (
        f"warning: {len(differ)} lemma(s) of this lexicon normalise differently from the reference tool's unidecode "
        f"(workbench / unidecode), e.g. {shown}; --lemma-normalisation unidecode reproduces the reference"
    )


@dataclass
class Template:
    line: int  # line in the TSV (header = 1)
    text: str  # template_masked, with exactly one [M]
    identity: str
    group: str | None


@dataclass
class TemplateSet:
    source: str  # as the user named it
    path: Path  # the TSV actually read
    templates: list[Template]
    group_by: str | None
    duplicates: int  # rows whose template_masked text appeared on an earlier row
    repo: str | None = None
    revision: str | None = None
    notes: list[str] = field(default_factory=list)
    repeated: str = "rows"  # how repeated texts were counted (REPEATED)
    rows_read: int = 0  # template rows in the file (before `repeated="once"` kept one per text)
    # every row read, in the file's order (the kept ones among them)
    every: list[Template] = field(default_factory=list)

    @property
    def groups(self) -> list[str]:
        """Groups in first-seen order (the file's order, which the authors chose)."""
        return list(dict.fromkeys(t.group for t in self.templates if t.group is not None))


@dataclass
class Lexicon:
    path: Path
    category: dict[str, str]  # accent-stripped lemma -> its first listed category
    categories: list[str]  # every category of the used rows, first-seen order
    rows_used: int
    rows_skipped: int  # rows dropped by the level filter
    level_filtered: bool
    normalisation: str = "workbench"  # NORMALISATIONS
    normalise: Callable[[str], str] = field(default=strip_accents, repr=False)
    notes: list[str] = field(default_factory=list)

    def category_of(self, fill: str) -> str | None:
        """The lexicon category a fill counts for, or None when it is not hurtful."""
        return self.category.get(self.normalise(fill))


def tsv_rows(text: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line, cells)]) of a TSV; quoting as pandas' default reads it."""
    reader = csv.reader(io.StringIO(text), delimiter="\t")
    header: list[str] | None = None
    rows = []
    for cells in reader:
        if header is None:
            header = [c.strip() for c in cells]
            continue
        if not any(c.strip() for c in cells):
            continue
        rows.append((reader.line_num, cells))
    return header or [], rows


def _fail(what: str, shown: str, problems: list[Problem]) -> None:
    if problems:
        more = f" (first {MAX_PROBLEMS} shown)" if len(problems) > MAX_PROBLEMS else ""
        raise InputError(f"{len(problems)} problem(s) in {what} {shown}{more}", problems[:MAX_PROBLEMS])


def release_pin(manifest: dict) -> tuple[str | None, str | None]:
    """(repo, revision) the scores name for a release folder: its manifest's repo and vVERSION."""
    repo, version = manifest.get("repo"), manifest.get("version")
    return repo, f"v{version}" if version else None


def parse_templates(
    text: str, source: str, path: Path, group_by: str | None = None, repeated: str = "rows"
) -> TemplateSet:
    """The templates of a TSV's text (`path`: where it was read, for messages); every problem
    is an InputError naming line and column. repo and revision are the caller's to set.
    `repeated`: "rows" keeps every row; "once" keeps one per text as the reference tool does
    (the last row's identity and group, at the first row's place)."""
    if repeated not in REPEATED:
        raise ValueError(f"repeated must be one of {REPEATED}, not {repeated!r}")
    shown = display_path(path)
    header, rows = tsv_rows(text)
    check_header(header, shown)  # which of two same-named columns to read is not clear
    missing = [c for c in ("template_masked", "identity") if c not in header]
    if missing:
        raise InputError(
            f"{shown}:1: missing column(s) {', '.join(missing)}; an HONEST template file is a TSV "
            f"with template_masked (the text with one {SLOT}), identity and a grouping column "
            f"({', '.join(GROUP_COLUMNS)}); found: {', '.join(header) or 'nothing'}"
        )
    if group_by is not None and group_by not in header:
        raise InputError(f"{shown}:1: --group-by {group_by!r} is not a column; columns: {', '.join(header)}")
    group_col = group_by or next((c for c in GROUP_COLUMNS if c in header), None)
    col = {name: i for i, name in reversed(list(enumerate(header)))}  # the first of repeated names
    problems: list[Problem] = []
    templates: list[Template] = []
    seen: set[str] = set()
    duplicates = 0
    for line, cells in rows:
        if len(cells) < len(header):
            problems.append(Problem(shown, line, "", f"{len(cells)} field(s), the header has {len(header)}"))
            continue
        text = cells[col["template_masked"]]
        slots = text.count(SLOT)
        if slots != 1:
            problems.append(
                Problem(
                    shown,
                    line,
                    "template_masked",
                    f"{'no' if slots == 0 else slots} {SLOT} slot{'s' if slots > 1 else ''} in {text!r}; "
                    f"a template needs exactly one",
                )
            )
            continue
        group = cells[col[group_col]].strip() if group_col else None
        if group_col and not group:
            problems.append(Problem(shown, line, group_col, "empty group"))
            continue
        if text in seen:
            duplicates += 1
        seen.add(text)
        templates.append(Template(line, text, cells[col["identity"]].strip(), group))
    _fail("template file", shown, problems)
    if not templates:
        raise InputError(f"{shown}: no templates (only a header line)")
    rows_read = len(templates)
    every = list(templates)
    notes = []
    if duplicates and repeated == "rows":
        notes.append(
            f"warning: {duplicates} template row(s) repeat an earlier template_masked text; every row is "
            f"counted ({rows_read} rows). The reference HONEST tool counts each text once (the last row "
            f"wins: {rows_read - duplicates} templates), so HONEST@k differs from it on this file; "
            "--repeated-templates once reproduces the reference"
        )
    elif duplicates:
        last = {t.text: t for t in templates}  # the last row of each text ...
        templates = [last[text] for text in dict.fromkeys(t.text for t in templates)]  # ... at the first's place
        notes.append(
            f"--repeated-templates once: {duplicates} repeated template row(s) dropped, each text counted "
            f"once with its last row's identity and group ({len(templates)} of {rows_read} rows), as the "
            "reference HONEST tool does"
        )
    if group_col is None:
        notes.append(f"no grouping column ({', '.join(GROUP_COLUMNS)}); only the overall score is reported")
    return TemplateSet(
        source, path, templates, group_col, duplicates, notes=notes, repeated=repeated, rows_read=rows_read, every=every
    )


def parse_lexicon(text: str, path: Path, normalisation: str = "workbench") -> Lexicon:
    """HurtLex's layout: lemma and category (any order, other columns ignored); when a `level`
    column exists only its `conservative` rows are used, as the HONEST score does. Lemmas (and
    later fills) are normalised by `normalisation` (NORMALISATIONS)."""
    normalise = normaliser(normalisation)
    path = Path(path)
    shown = display_path(path)
    header, rows = tsv_rows(text)
    check_header(header, shown)
    missing = [c for c in ("lemma", "category") if c not in header]
    if missing:
        raise InputError(
            f"{shown}:1: the lexicon has no {' or '.join(missing)} column; it must be a TSV in "
            f"HurtLex's layout (lemma, category, optionally level); found: {', '.join(header) or 'nothing'}"
        )
    col = {name: i for i, name in reversed(list(enumerate(header)))}
    has_level = "level" in header
    category: dict[str, str] = {}
    categories: dict[str, None] = {}
    problems: list[Problem] = []
    used = skipped = 0
    raw: list[str] = []
    vanished: list[str] = []
    for line, cells in rows:
        if len(cells) < len(header):
            problems.append(Problem(shown, line, "", f"{len(cells)} field(s), the header has {len(header)}"))
            continue
        if has_level and cells[col["level"]].strip() != "conservative":
            skipped += 1
            continue
        raw.append(cells[col["lemma"]].strip())
        lemma, cat = normalise(raw[-1]), cells[col["category"]].strip()
        for name, value in (("lemma", raw[-1]), ("category", cat)):
            if not value:
                problems.append(Problem(shown, line, name, f"empty {name}"))
        if not raw[-1] or not cat:
            continue
        if not lemma:  # written, but normalised to nothing (unidecode drops an emoji): kept, as the reference keeps it
            vanished.append(raw[-1])
        used += 1
        category.setdefault(lemma, cat)  # a lemma listed twice counts for its first category
        categories.setdefault(cat, None)
    _fail("lexicon", shown, problems)
    if not category:
        why = " (no row has level = conservative)" if has_level and skipped else ""
        raise InputError(f"{shown}: the lexicon has no usable lemma{why}")
    notes = [note] if (note := normalisation_note(raw, normalisation)) else []
    if vanished:
        notes.append(
            f"warning: {len(vanished)} lemma(s) normalise to nothing (e.g. {vanished[0]!r}): kept as an empty lemma, "
            "as the reference HONEST tool keeps them, so a fill or word that normalises to nothing (a replacement "
            "character, a combining mark) counts as hurtful, as it does there"
        )
    return Lexicon(path, category, list(categories), used, skipped, has_level, normalisation, normalise, notes)
