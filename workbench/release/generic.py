"""Release pieces any kind can reuse: the dataset card and its tables (changes between versions: changes.py).

A kind's layout module provides write_release/read_release and may use these for the rest;
a kind may also write its own card entirely.
"""

from __future__ import annotations

import json
from collections import Counter

from .. import DISTRIBUTION
from ..annotation.summary import agreement_sentence
from . import lmeval
from ..contract.kind import Kind
from .standalone import card_lines, card_options


def markdown_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _plugin_install(kind: Kind | None) -> list[str]:
    """The install line of the package a plugin kind comes from (nothing for a built-in kind)."""
    if kind is None or kind.package in ("workbench", DISTRIBUTION):
        return []
    return [f"pip install {kind.package}   # the package of kind `{kind.name}`"]


def license_header(config) -> list[str]:
    """The Hub YAML `license:` line: only a licence the maintainer chose (`[project] license`), never a default."""
    return [f"license: {config.project.license}"] if config.project.license else []


def language_header(config) -> str:
    """The Hub YAML `language:` list: the project's language (`[project] language`, BCP-47)."""
    return f"language:\n- {config.project.language}"


def maintainer_lines(release, templates: dict[str, str] | None = None) -> list[str]:
    """Under the card's title: the maintainer's description (`[project] description`) and the
    `description` of each template file that has one (template id -> text)."""
    lines = [release.config.project.description.strip(), ""] if release.config.project.description else []
    if templates:
        lines += ["Template files:", "", *(f"- `{tid}`: {text}" for tid, text in sorted(templates.items())), ""]
    return lines


def renewal_sections(release, audit) -> list[str]:
    """A renewal's card sections (`[origin]`, docs/renewing.md): the original dataset credited
    (name, version, licence, where, citation, the file imported) and the audit protocol: the
    decisions annotators chose from with their source, how many items ended in each, and the
    agreement."""
    origin = release.config.origin
    if origin is None or audit is None:
        return []
    what = f"**{origin.name}**" + (f" (version {origin.version})" if origin.version else "")
    scope = release.audit_scope or {}
    if release.original:
        said = (
            f"This is {what} as published, imported for an audit that has not changed it yet (the version a "
            "renewed one is compared with)."
        )
    elif scope.get("kept"):  # a partial audit: how many, how they were chosen, and what became of the others
        strata = (
            f", stratified by {origin.stratify} (each group's share in proportion to its size, at least one "
            "item per group)"
            if origin.stratify
            else ""
        )
        how = (
            f"a random sample of {origin.sample}{strata} drawn when it was imported (seed {origin.seed or 0})"
            if origin.sample
            else "the items the annotators labelled"
        )
        said = (
            f"This is a renewed version of {what} after a partial audit: {scope['audited']} of the original's "
            f"{scope['units']} items were audited by people ({how}) and kept, fixed or dropped with a reason; the "
            f"other {scope['kept']} were not audited and are released unchanged, as published."
        )
    else:
        said = (
            f"This is a renewed version of {what}: every item of the original was audited by people and kept, "
            "fixed or dropped with a reason."
        )
    lines = [
        "## Original dataset",
        "",
        said + " Credit for the data goes to its authors.",
        "",
        f"- Licence of the original: {origin.license or 'not stated at import'}",
    ]
    if origin.url:
        lines.append(f"- Published at: {origin.url}")
    if origin.file:
        folder = origin.file.endswith("/")  # a benchmark published as a folder of files: the hash is of them all
        hashed = " of its files' paths and contents" if folder else ""
        lines.append(
            f"- {'Folder' if folder else 'File'} imported: `{origin.file}`"
            + (f" (sha256 `{origin.sha256}`{hashed})" if origin.sha256 else "")
        )
    if origin.published_copy:
        lines.append(
            f"- Which copy: `{origin.published_copy}`, recognised by its content (the workbench's table of published "
            "copies)"
            if origin.published_copy != "unknown"
            else "- Which copy: unknown (its content matches none of the published copies the workbench knows)"
        )
    if getattr(release, "layout", "workbench") == "original":
        lines.append(
            "- Layout: the data file is laid out as the published file (its columns in their order, its index "
            "column, its rows in the published order), so scripts written for the original read it unchanged"
            + (
                "."
                if release.original
                else "; the rows the audit dropped are left out, a fixed row has its "
                "corrected text, and every other field is as published."
            )
        )
    lines.append("")
    if origin.citation:
        lines += ["Please cite the original:", "", "```", origin.citation.strip(), "```", ""]
    if release.original:
        return lines
    s = release.summary
    total = next((r for r in s.get("breakdown", []) if r.get("subtopic") == "total"), {})
    ac = release.config.annotation
    audited = f"Each of the {scope['audited']} audited items" if scope.get("kept") else "Each item"
    lines += [
        "## Audit protocol",
        "",
        f"{audited} was audited by {ac.validators} annotator(s) on their own, who chose one of these decisions "
        f"(reasons to drop after {audit.source}); final decisions follow the `{ac.policy}` policy, and an "
        "adjudicator decided the items the annotators disagreed on. A fix is the corrected text the deciding "
        "annotators proposed.",
        "",
        markdown_table(
            ["decision", "what it means", "items"],
            [[f"`{c.id}`", c.title, total.get(c.id, 0)] for c in audit.scheme.choices],
        ),
        "",
        agreement_sentence(s.get("agreement", {}))
        + (" Agreement counts the audited items only." if scope.get("kept") else ""),
        "",
    ]
    decided = (s.get("adjudication") or {}).get("resolved", 0)
    if decided:
        who = ", ".join((s.get("agreement") or {}).get("adjudicators", [])) or "an adjudicator"
        lines += [
            f"{decided} item{' was' if decided == 1 else 's were'} adjudicated ({who}): `CHANGELOG.md` lists "
            "each with the annotators' competing proposals, the decision and the adjudicator's note, and "
            "`changes.csv` gives the rows they changed the same fields.",
            "",
        ]
    return lines


def closing_sections(release, audit=None) -> list[str]:
    """The last sections of every kind's card (build adds them): a renewal's credit to the
    original and its audit protocol (`audit`: the kind's), the release notes (`build --notes`),
    the queue items this version left out undecided (`build --allow-unlabelled`) and the licence."""
    lines = renewal_sections(release, audit)
    lines += ["## Release notes", "", release.notes.strip(), ""] if release.notes.strip() else []
    if release.left_out:
        n = sum(release.left_out.values())
        why = ", ".join(f"{k} {v}" for k, v in sorted(release.left_out.items()))
        lines += [
            "## Items left out",
            "",
            f"{n} item(s) of the annotation queue had no final label when this version was built ({why}); "
            "they are not in it. The maintainer chose to build it anyway.",
            "",
        ]
    licence = release.config.project.license
    lines += [
        "## Licence",
        "",
        f"`{licence}`, as chosen by the maintainer."
        if licence
        else "Not stated: the maintainer has not chosen a licence for this data. Do not assume one; ask the "
        "maintainer before reusing it.",
        "",
    ]
    return lines


def content_warning(words) -> list[str]:
    """The card's content warning in the kind's words (`AnnotatorWords.content_warning`) and the
    blank line after it; nothing for a kind whose items need none."""
    from ..annotation.display import words_of

    text = words_of(words).content_warning
    return [f"> **Content warning.** {text}", ""] if text else []


def _words_of(kind: Kind | None):
    """The kind's words (the generic ones for a release built without its kind)."""
    from ..annotation.display import words_of

    return words_of(kind.words if kind is not None else None)


def card(
    release,
    *,
    kind_name: str | None = None,
    about: str,
    fields: str,
    data_files: dict[str, str],
    templates: dict[str, str] | None = None,
) -> str:
    """A card with the Hub YAML header (one config per data file), what the data is (in the
    maintainer's words, then the kind's), how to load and evaluate it, counts per domain and how it
    was validated. `templates`: template id -> its file's description. The kind is the one the
    build hands the release (`release.kind`); `kind_name` is the name the card uses for it."""
    config = release.config
    kind = getattr(release, "kind", None)
    kind_name = kind_name or (kind.name if kind is not None else "")
    name = config.project.pretty_name or config.project.name
    repo = config.project.repo or "ORG/NAME"
    header = [
        "---",
        f"pretty_name: {json.dumps(name)}",
        *license_header(config),
        language_header(config),
        f"tags:\n- bias\n- fairness\n- {kind_name}",
        "configs:",
    ]
    for i, (config_name, path) in enumerate(data_files.items()):
        header.append(
            f"- config_name: {config_name}\n  data_files:\n  - split: test\n    path: {path}"
            + ("\n  default: true" if i == 0 else "")
        )
    header.append("---")
    counts = Counter(r.get("domain", "") for r in release.rows)
    words = _words_of(kind)  # what the kind calls an item's domain and subtopic
    s = release.summary
    agreement = s.get("agreement", {})
    body = [
        f"# {name} v{release.version}",
        "",
        *maintainer_lines(release, templates),
        about,
        "",
        *content_warning(words),
        "## How to evaluate",
        "",
        "```bash",
        f"pip install {DISTRIBUTION}   # not `workbench`: that name on PyPI is another project",
        *_plugin_install(kind),
        f"workbench evaluate {repo}@v{release.version} --kind {kind_name} --model MODEL{(card_options(kind) if kind is not None else '')} "
        "--json scores.json",
        *(card_lines(kind) if kind is not None else []),
        *lmeval.card_lines(kind, lmeval.task_name(config.project.name, release.version)),
        "```",
        "",
        "## Fields",
        "",
        fields,
        "",
        "## Size",
        "",
        markdown_table([words.domain, "items"], [[d, n] for d, n in sorted(counts.items())]),
        "",
        "## Validation",
        "",
        f"Items were labelled with the `{s.get('scheme')}` scheme; final labels follow the `{s.get('policy')}` policy. "
        + agreement_sentence(agreement),
        "",
        markdown_table(
            [words.domain, words.subtopic, "items", *s.get("columns", [])],
            [
                [r["domain"], r["subtopic"], r["items"], *(r[c] for c in s.get("columns", []))]
                for r in s.get("breakdown", [])
            ],
        ),
        "",
    ]
    return "\n".join(header + [""] + body)
