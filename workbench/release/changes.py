"""What changed between a release and the newest earlier one, and why where it can be told.

Every kind's layout says what identifies a released row (`identity(row)` -> key, text, group,
template) on the rows `read_release` returns, the other fields it releases about the row
(`released_fields`: the context a sentence fills, a pair's bias type), and optionally where in
its source it comes from (`edit(row)`, so that a row edited in place is one change shown before
and after), so the comparison, the changelog, the card's summary and `changes.csv` are the same
code for all kinds, and a change of any released field is a change of the data. The earlier release is found in
`exports/` or, when the project has a Hub repo, among its release tags; either way the card
names it by its Hub revision (ORG/NAME@vX.Y.Z), never by a local path.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..annotation.display import word_diff
from ..core.config import Config
from .generic import markdown_table

CHANGES_FILE = "changes.csv"
SHOWN_IN_CARD = 5
SHOWN_IN_CHANGELOG = 20
KINDS = ("added", "edited", "removed")


@dataclass
class Previous:
    version: str
    rows: list[dict]
    manifest: dict
    changelog: str  # its CHANGELOG.md, so earlier entries are kept
    where: str  # "ORG/NAME@vX.Y.Z" (or "NAME vX.Y.Z, not published to the Hub")


@dataclass
class Change:
    change: str  # added | edited | removed
    key: str
    text: str
    group: str
    reason: str
    previous_key: str = ""  # edited: the row's id and text in the previous release
    previous_text: str = ""
    audited: bool = False  # the reason is an audit's decision on the row (a renewal)
    adjudication: dict | None = None  # a renewal: its item's adjudication (renew.adjudications), if one decided it
    fields: dict[str, list[str]] = field(
        default_factory=dict
    )  # edited: released fields changed, {name: [before, after]}


def released(layout, row: dict) -> dict:
    """The fields of a released row that the layout declares besides its identity's text
    (`released_fields`), as versions are compared on them."""
    return {f: row.get(f) for f in getattr(layout, "released_fields", ())}


def content(layout, row: dict) -> tuple:
    """What a row is in a release, for telling whether two versions hold the same data: its
    identity (key, text, group, template) and its released fields."""
    return (*layout.identity(row)[:4], json.dumps(released(layout, row), sort_keys=True, default=str))


def _shown(value) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def changed_fields(layout, before: dict, after: dict) -> dict[str, list[str]]:
    """{field: [before, after]} of the released fields that differ between two versions of a row."""
    old, new = released(layout, before), released(layout, after)
    return {f: [_shown(old[f]), _shown(new[f])] for f in old if old[f] != new[f]}


def find_previous(config: Config, version: str, read_release, notes: list[str]) -> Previous | None:
    """The newest release before `version`: a local build, else a published tag of the project's repo."""
    from .versions import export_dir, parse_version, previous_version

    local = previous_version(config, version)
    if local:
        # Named as readers can find it: its Hub revision, never a path on the maintainer's machine.
        repo = config.project.repo
        where = f"{repo}@v{local}" if repo else f"{config.project.name} v{local}, not published to the Hub"
        return _previous_from(export_dir(config, local), local, read_release, where)
    if not config.project.repo:
        return None
    repo = config.project.repo
    try:
        from huggingface_hub import HfApi

        from ..sources import VERSION, fetch_release, hub_endpoint

        tags = [
            t.name[1:]
            for t in HfApi(endpoint=hub_endpoint()).list_repo_refs(repo, repo_type="dataset").tags
            if t.name.startswith("v") and VERSION.fullmatch(t.name[1:])
        ]
        older = [v for v in tags if parse_version(v) < parse_version(version)]
        if not older:
            return None
        newest = max(older, key=parse_version)
        folder, _ = fetch_release(repo, f"v{newest}")
        return _previous_from(folder, newest, read_release, f"{repo}@v{newest}")
    except Exception as exc:  # noqa: BLE001 -- offline, no repo yet, no access: the build goes on, and says so
        notes.append(f"not compared with releases on the Hub ({repo}): {type(exc).__name__}")
        return None


def _previous_from(folder: Path, version: str, read_release, where: str) -> Previous:
    manifest = (
        json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if (folder / "manifest.json").is_file()
        else {}
    )
    log = folder / "CHANGELOG.md"
    return Previous(
        version, read_release(folder), manifest, log.read_text(encoding="utf-8") if log.is_file() else "", where
    )


def compare(
    previous: Previous, rows: list[dict], layout, manifest: dict, decisions: dict[str, str] | None = None
) -> list[Change]:
    """Rows added, edited and removed, each with the likeliest reason.

    A removed and an added row that come from the same entry of their source (the layout's
    optional `edit(row) -> (entry, reason)`: a pair written out in a file, a template's row for
    one group) are one edited row, shown before and after; so is a row whose key stays and whose
    text changed (a published item fixed in a renewal keeps its id). The reason: the audit's
    decision on the row where `decisions` ({row key: reason}) has one; the entry's own (`pair
    edited`, `template changed`) when its template file changed; `models changed`; the
    annotation policy changed; else `labels changed` (people decided differently)."""
    identity = layout.identity
    old = {i[0]: i for i in map(identity, previous.rows)}
    new = {i[0]: i for i in map(identity, rows)}
    before, after = previous.manifest.get("templates", {}), manifest.get("templates", {})
    edited = {Path(f).stem for f in set(before) | set(after) if before.get(f) != after.get(f)}
    models_changed = bool(previous.manifest) and previous.manifest.get("models") != manifest.get("models")
    was = _policy(previous.manifest.get("config", {}).get("annotation"))
    policy_changed = was is not None and "policy" in manifest and was != manifest["policy"]

    decisions = decisions or {}

    def reason(template: str, edit: str = "", key: str = "") -> str:
        if key in decisions:
            return decisions[key]
        if template in edited:
            if edit:
                return edit
            return "template changed" if template in {Path(f).stem for f in before} else "new template"
        if models_changed:
            return "models changed"
        return "annotation policy changed" if policy_changed else "labels changed"

    entry = getattr(layout, "edit", None)
    old_rows = {identity(r)[0]: r for r in previous.rows}
    new_rows = {identity(r)[0]: r for r in rows}
    gone = {k: r for k, r in old_rows.items() if k not in new}
    came = {k: r for k, r in new_rows.items() if k not in old}
    pairs = _edits(gone, came, entry) if entry else {}
    out = []
    for k, r in came.items():
        key, text, group, template = new[k][:4]
        if k in pairs:
            prior = old[pairs[k]]
            fields = changed_fields(layout, old_rows[pairs[k]], r)
            out.append(
                Change(
                    "edited",
                    key,
                    text,
                    group,
                    reason(template, entry(r)[1], k),
                    prior[0],
                    prior[1],
                    k in decisions,
                    fields=fields,
                )
            )
        else:
            out.append(Change("added", key, text, group, reason(template, key=k), audited=k in decisions))
    for k in old.keys() & new.keys():
        fields = changed_fields(layout, old_rows[k], new_rows[k])
        if old[k][1] != new[k][1] or fields:
            key, text, group, template = new[k][:4]
            why = "text edited" if old[k][1] != new[k][1] else f"{', '.join(fields)} edited"
            out.append(
                Change(
                    "edited", key, text, group, reason(template, why, k), key, old[k][1], k in decisions, fields=fields
                )
            )
    matched = set(pairs.values())
    out += [
        Change("removed", *old[k][:3], reason(old[k][3], key=k), audited=k in decisions)
        for k in gone
        if k not in matched
    ]
    return sorted(out, key=lambda c: (c.change, c.group, c.key))


def _edits(gone: dict[str, dict], came: dict[str, dict], entry) -> dict[str, str]:
    """new key -> old key, for the entries exactly one removed and one added row come from."""

    def by_entry(rows: dict[str, dict]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for k, r in rows.items():
            e = entry(r)
            if e and e[0]:
                out.setdefault(e[0], []).append(k)
        return out

    old, new = by_entry(gone), by_entry(came)
    return {new[e][0]: old[e][0] for e in new if e in old and len(new[e]) == 1 and len(old[e]) == 1}


def policy_basis(config: Config) -> dict:
    """What of `[annotation]` decides final labels (a change of it explains rows added or removed)."""
    return _policy(config.model_dump(mode="json")["annotation"])


def _policy(annotation: dict | None) -> dict | None:
    if not annotation:
        return None
    return {k: annotation.get(k) for k in ("policy", "min_votes", "adjudicator")}


def shown_code(code: dict) -> str:
    """A kind's code as changelogs and warnings name it: "bbq-lite 0.1.0 (code 1a2b3c4d5e6f)"."""
    head = " ".join(str(code.get(k) or "") for k in ("package", "version")).strip() or "?"
    return f"{head} (code {str(code.get('code') or '')[:12] or 'unknown'})"


def evaluator_change(previous: Previous, code: dict, files: dict[str, str]) -> str:
    """One line saying how the release's evaluator changed since `previous` ("" when it did not):
    the kind's code (its package, version and code hash, the manifest's `kind_code`), else the
    files of evaluator/ (workbench's own modules the script runs, copied again by this build)."""
    was = previous.manifest.get("kind_code")
    if isinstance(was, dict) and was != code:
        return f"The evaluator changed: {shown_code(was)} → {shown_code(code)}."
    old = {k: v for k, v in (previous.manifest.get("files") or {}).items() if k.startswith("evaluator/")}
    if previous.manifest and old != files:
        tools = f"workbench {previous.manifest.get('tool_version') or '?'} → {__version__}"
        return f"The evaluator changed: the code of evaluator/ differs from {previous.version}'s ({tools})."
    return ""


def same_data(previous: Previous, rows: list[dict], layout) -> bool:
    """Whether the two versions release the same rows with the same fields (build's "nothing changed")."""
    return sorted(content(layout, r) for r in previous.rows) == sorted(content(layout, r) for r in rows)


ADJUDICATION_COLUMNS = ("adjudicated_by", "proposals", "adjudication_note")


def with_adjudications(changes: list[Change], adjudicated: dict[str, dict]) -> None:
    """Give each change of a row whose item an adjudicator decided ({row key: adjudication}, by its
    key in either version) that adjudication."""
    for c in changes:
        c.adjudication = adjudicated.get(c.key) or adjudicated.get(c.previous_key) or c.adjudication


def changes_csv(changes: list[Change]) -> str:
    """One row per change; in a renewal (changes the audit decided), also who adjudicated the row's
    item, the annotators' competing proposals (JSON: each one's annotator, decision, fix and note)
    and the adjudicator's note, empty where no adjudicator decided it."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    audit = any(c.audited or c.adjudication for c in changes)
    w.writerow(
        [
            "change",
            "id",
            "text",
            "group",
            "previous_id",
            "previous_text",
            "fields",
            "reason",
            *(ADJUDICATION_COLUMNS if audit else ()),
        ]
    )
    for c in changes:
        a = c.adjudication or {}
        extra = (
            [
                ", ".join(a.get("decided_by", ())),
                json.dumps(
                    [
                        {
                            "annotator": p["by"],
                            "decision": p["decision"],
                            **{k: p[k] for k in ("fix", "note") if k in p},
                        }
                        for p in a["proposals"]
                    ],
                    ensure_ascii=False,
                )
                if a
                else "",
                a.get("note", ""),
            ]
            if audit
            else []
        )
        fields = json.dumps(c.fields, ensure_ascii=False) if c.fields else ""
        w.writerow([c.change, c.key, c.text, c.group, c.previous_key, c.previous_text, fields, c.reason, *extra])
    return out.getvalue()


def summary(changes: list[Change], previous: Previous, groups: list[str]) -> list[str]:
    """Markdown lines: counts per group and the reasons."""
    counts = Counter((c.group, c.change) for c in changes)
    groups = sorted(set(groups) | {c.group for c in changes})
    table = [[g, *(counts[(g, kind)] for kind in KINDS)] for g in groups]
    table.append(["**total**", *(sum(c.change == kind for c in changes) for kind in KINDS)])
    lines = [f"Compared with {previous.version} ({previous.where}).", "", markdown_table(["group", *KINDS], table), ""]
    reasons = Counter((c.change, c.reason) for c in changes)
    if reasons:
        lines += [
            "Why: " + "; ".join(f"{n} {change} ({why})" for (change, why), n in sorted(reasons.items())) + ".",
            "",
        ]
    if any(c.audited for c in changes):  # a renewal: the audit's reasons per group
        per = Counter((c.change, c.reason, c.group) for c in changes)
        table = [
            [change, why, *(per[(change, why, g)] for g in groups), n] for (change, why), n in sorted(reasons.items())
        ]
        lines += ["Per reason and group:", "", markdown_table(["change", "reason", *groups, "total"], table), ""]
    return lines


def edits(changes: list[Change], limit: int) -> list[str]:
    """Each edited row before and after (at most `limit`)."""
    some = [c for c in changes if c.change == "edited"]
    lines = []
    for c in some[:limit]:
        was = f" (was `{c.previous_key}`)" if c.previous_key != c.key else ""
        lines.append(f"- `{c.key}`{was}, {c.reason}:")
        if c.previous_text != c.text:
            lines += [
                f"  - before: {c.previous_text}",
                f"  - after: {c.text}",
                f"  - diff: {word_diff(c.previous_text, c.text)}",
            ]
        else:
            lines.append(f"  - text: {c.text}")
        for name, (was_value, value) in c.fields.items():
            lines += [
                f"  - {name} before: {was_value}",
                f"  - {name} after: {value}",
                f"  - {name} diff: {word_diff(was_value, value)}",
            ]
    if len(some) > limit:
        lines.append(f"- ... and {len(some) - limit} more in `{CHANGES_FILE}`")
    return ["Edited:", "", *lines, ""] if lines else []


def examples(changes: list[Change]) -> list[str]:
    lines = edits(changes, SHOWN_IN_CARD)
    for kind in ("added", "removed"):
        some = [c for c in changes if c.change == kind][:SHOWN_IN_CARD]
        if some:
            lines += [f"Some {kind}:", ""] + [f"- `{c.key}` {c.text} ({c.reason})" for c in some] + [""]
    if changes:
        lines += [f"Every change is listed in `{CHANGES_FILE}`.", ""]
    return lines


def removals(changes: list[Change], limit: int) -> list[str]:
    """Each row an audit dropped, with its reason (at most `limit`)."""
    some = [c for c in changes if c.change == "removed" and c.audited]
    lines = [f"- `{c.key}` {c.text} ({c.reason})" for c in some[:limit]]
    if len(some) > limit:
        lines.append(f"- ... and {len(some) - limit} more in `{CHANGES_FILE}`")
    return ["Dropped:", "", *lines, ""] if lines else []


def changelog(
    version: str,
    previous: Previous | None,
    changes: list[Change],
    groups: list[str],
    notes: str = "",
    audit: list[str] = (),
    adjudicated: list[str] = (),
    evaluator: str = "",
) -> str:
    """This version's entry on top of the previous release's changelog (earlier entries kept):
    the maintainer's notes, the counts and reasons, the edited rows before and after, and the
    rows an audit dropped with their reasons; or, where a renewal's audit items each stand for
    several rows, `audit`: the items dropped and fixed (renew.audit_changes); then, in a renewal,
    `adjudicated`: the items an adjudicator decided, with the competing proposals
    (renew.adjudication_lines)."""
    entry = [f"## {version}", ""] + ([notes.strip(), ""] if notes.strip() else [])
    rows = edits(changes, SHOWN_IN_CHANGELOG) + removals(changes, SHOWN_IN_CHANGELOG)
    entry += ["First release.", ""] if previous is None else summary(changes, previous, groups) + (list(audit) or rows)
    entry += [evaluator, ""] if evaluator else []
    entry += list(adjudicated)
    earlier = ""
    if previous is not None and previous.changelog.startswith("# Changelog"):
        earlier = previous.changelog.split("\n", 1)[1].strip("\n")
    return "\n".join(["# Changelog", ""] + entry + ([earlier, ""] if earlier else []))


def card_section(
    version: str, previous: Previous | None, changes: list[Change], groups: list[str], evaluator: str = ""
) -> str:
    if previous is None:
        return ""
    return "\n".join(
        [f"## Changes since {previous.version}", ""]
        + summary(changes, previous, groups)
        + ([evaluator, ""] if evaluator else [])
        + examples(changes)
    )
