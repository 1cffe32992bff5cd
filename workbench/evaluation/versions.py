"""`workbench evaluate A B` for kinds whose evaluator reads one source at a time: each version
is evaluated as if alone (its own tables and files, suffixed with its version), then one table,
one CSV/JSON document and one chart put the kind's measures side by side.

An evaluator takes part by naming, in `COMPARED`, the columns of its measure rows
(`measure_rows(doc)`, the rows of its CSV) that identify a row and the measures shown beside
each other; the first measure is the headline charted per version, and counts (units, ties)
belong in the measures so a reader sees how many items each figure rests on.

A renewal's move is split into dropping and editing (docs/renewing.md) for a CSV file of rows
with the changelog's ids, or a release folder of the shared authoring layout; a kind whose source
is laid out otherwise declares `without_removed(source, removed_ids, folder) -> (file, units
dropped) | None` in its evaluator.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..contract.kind import Kind
from ..core.errors import InputError, display_path


@dataclass(frozen=True)
class Compared:
    keys: tuple[str, ...]  # the columns that identify a row (model, level, group, ...)
    measures: tuple[str, ...]  # shown per version; the first is the headline (its difference is shown, and charted)
    changed: tuple[str, ...] = ()  # other measures whose change is shown too (a kind with several scores)
    unit: str = "item"  # what a dropped item is called (a pair, a CAT)


def version_tags(sources: list[str]) -> list[str]:
    """A short, file-name-safe tag per source: a release's version from its manifest, else the
    file or folder name; made unique with a number when two would be the same."""
    tags = []
    for given in sources:
        path = Path(given)
        tag = ""
        manifest = path / "manifest.json" if path.is_dir() else None
        if manifest is not None and manifest.is_file():
            try:
                tag = str(json.loads(manifest.read_text(encoding="utf-8")).get("version") or "")
            except (OSError, ValueError):
                tag = ""
        tag = tag or (given.rsplit("@", 1)[-1] if "@" in given and not path.exists() else path.stem or given)
        tag = re.sub(r"[^A-Za-z0-9._-]+", "-", tag).strip("-") or "source"
        base, n = tag, 2
        while tag in tags:
            tag, n = f"{base}-{n}", n + 1
        tags.append(tag)
    return tags


def side_by_side(tags: list[str], rows_per_version: list[list[dict]], compared: Compared) -> list[dict]:
    """One row per key present in any version: every measure per version (None where the
    version has no such row), and the change of the headline (and of `changed`) from the first
    version to each other."""
    headline = compared.measures[0]
    indexed = []
    order: dict[tuple, None] = {}
    for rows in rows_per_version:
        found = {}
        for r in rows:
            if r.get(headline) in (None, ""):
                continue
            key = tuple(r.get(k) for k in compared.keys)
            found[key] = r
            order.setdefault(key)
        indexed.append(found)
    out = []
    for key in order:
        row = dict(zip(compared.keys, key))
        for measure in compared.measures:
            for tag, found in zip(tags, indexed):
                row[f"{measure} {tag}"] = found.get(key, {}).get(measure)
        for measure in (headline, *(m for m in compared.changed if m != headline)):
            first = indexed[0].get(key, {}).get(measure)
            for tag, found in list(zip(tags, indexed))[1:]:
                value = found.get(key, {}).get(measure)
                row[f"change {measure} {tags[0]}→{tag}"] = (
                    round(value - first, 4) if _number(value) and _number(first) else None
                )
        out.append(row)
    return out


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def local_source(spec: str) -> str:
    """Where a source's files are on this machine, so that a release is read for its changes.csv and
    manifest however it was named: a release folder as it is; a data file of one (its
    `data/...`, listed in its manifest) as that folder; a Hub release ORG/NAME[@REV] as the folder
    it was fetched into (the Hub's cache, where evaluating it just put it). Anything else (a
    published file) as given."""
    path = Path(spec).expanduser()
    if path.is_file():
        for folder in path.parents[:2]:
            listed = _manifest(folder).get("files")
            if isinstance(listed, dict) and path.resolve().relative_to(folder.resolve()).as_posix() in listed:
                return str(folder)
        return spec
    if path.exists():
        return spec
    from ..sources import hub_spec, resolve

    if hub_spec(spec) is None:
        return spec
    return str(resolve(spec, verify=False).path)


def removed_ids(last: str) -> set[str]:
    """The ids a renewed release's changes.csv lists as removed (none for anything else)."""
    import csv

    changes = Path(local_source(last)) / "changes.csv"
    if not changes.is_file():
        return set()
    try:
        with open(changes, encoding="utf-8", newline="") as f:
            return {r["id"] for r in csv.DictReader(f) if r.get("change") == "removed" and r.get("id")}
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{display_path(changes)}: cannot read the release's changes ({exc})") from None


def _manifest(folder: Path) -> dict:
    try:
        found = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def changes_not_since(first: str, last: str) -> str | None:
    """Why the last release's changes.csv cannot split the move from the first source: it lists
    what changed since another release (items an intermediate release dropped are not in it, so
    their drop would be counted as editing). None when nothing says so (a file as the first
    source is taken to be what the renewal imported)."""
    first, last = local_source(first), local_source(last)
    if not Path(first).is_dir():
        return None
    since, version = _manifest(Path(last)).get("previous_version"), _manifest(Path(first)).get("version")
    if since and version and str(since) != str(version):
        return (
            f"{display_path(Path(last) / 'changes.csv')} lists what changed since {since}, not since {version}: "
            f"no split into dropping and editing (evaluate {since} against it for one)"
        )
    return None


def without_dropped(first: str, last: str, folder: Path, without_removed=None) -> tuple[Path, int] | None:
    """A renewal's middle step (docs/renewing.md): the first source without the items the last
    source (a release, named in any way `local_source` reads) lists as removed in its changes.csv,
    written into `folder`;
    evaluated apart, it tells how much of the move comes from dropping items and how much from
    editing them. `without_removed(first, removed ids, folder)` is the kind's way to write it
    (its evaluator's); without one, the first source is a CSV file (see `_csv_without`). None when
    the two sources are not an original and a renewed release of it with removed items, or when
    none of the removed items is found in the original (a release that lists rows by ids of its own)."""
    first, last = local_source(first), local_source(last)
    removed = removed_ids(last)
    if not removed or changes_not_since(first, last):
        return None
    if without_removed is not None:
        found = without_removed(first, removed, Path(folder))
        if found is not None:
            return found
    return _csv_without(Path(first), removed, Path(folder))


def _layout_without(kind: Kind):
    """For a kind released through the shared authoring layout: its release folder without the rows
    a renewed release removed (authoring/stages.release_without), else None."""
    from ..authoring.stages import release_without

    authoring = getattr(kind.release, "authoring", None)
    if authoring is None:
        return None
    return lambda source, removed, folder: release_without(authoring, source, removed, folder)


def _csv_without(original: Path, removed: set[str], folder: Path) -> tuple[Path, int] | None:
    """A CSV file without the rows `removed` names: rows are matched by the file's `id` column (or
    an unnamed first column, as some published files have), else by their number from 0, as
    `workbench import` numbers them."""
    import csv

    if not (original.is_file() and original.suffix.lower() == ".csv"):
        return None
    with open(original, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return None
    header = [h.strip() for h in rows[0]]
    at = header.index("id") if "id" in header else 0 if header and header[0] == "" else None
    kept = [
        r
        for i, r in enumerate(rows[1:])
        if (r[at].strip() if at is not None and at < len(r) else str(i)) not in removed
    ]
    if len(kept) == len(rows) - 1:
        return None
    target = Path(folder) / original.name
    with open(target, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([rows[0], *kept])
    return target, len(rows) - 1 - len(kept)


def _split(compared: Compared) -> tuple[str, ...]:
    """The measures whose change between versions is shown: the headline and `changed`."""
    headline = compared.measures[0]
    return (headline, *(m for m in compared.changed if m != headline))


def _decompose(rows: list[dict], middle: list[dict], compared: Compared, tags: list[str]) -> None:
    """Each row's move of every measure whose change is shown (`_split`) from the first to the last
    version, split at the middle step."""
    by_key = {tuple(r.get(k) for k in compared.keys): r for r in middle}
    for row in rows:
        found = by_key.get(tuple(row.get(k) for k in compared.keys), {})
        for measure in _split(compared):
            first, last = row.get(f"{measure} {tags[0]}"), row.get(f"{measure} {tags[-1]}")
            mid = found.get(measure)
            numbers = all(_number(v) for v in (first, mid, last))
            row[f"{measure} moved by dropping"] = round(mid - first, 4) if numbers else None
            row[f"{measure} moved by editing"] = round(last - mid, 4) if numbers else None


def _paired(module, before: tuple[str, dict], after: tuple[str, dict], settings, console) -> list[dict]:
    """Each model both versions scored, on the measures the evaluator pairs (`PAIRED`): the change
    over the units both versions have (`intervals.compare_versions`, units matched by their keys);
    none without resamples or without units' keys. `before`/`after`: (label, {model: overall Scope})."""
    from .intervals import compare_versions

    names = tuple(getattr(module, "PAIRED", ()))
    if not names or settings is None or settings.resamples <= 0:
        return []
    out = []
    for model, first in before[1].items():
        last = after[1].get(model)
        if last is None or first.keys is None or last.keys is None:
            continue
        found = compare_versions(first, last, names, settings, model, (before[0], after[0]))
        out.append(found)
        for measure in found["measures"].values():
            console.print(measure["sentence"], markup=False, highlight=False)
    return out


def _label(doc, tag: str) -> str:
    """What a version's document calls its data set (else its tag)."""
    head = doc.get("dataset") if isinstance(doc, dict) else None
    return str(head.get("dataset") or tag) if isinstance(head, dict) else tag


def _shown(value) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def evaluate_versions(module, request, console, kind: Kind) -> dict:
    """Evaluate each source alone, then compare. Returns the comparison document. `kind` is the
    sources' kind, handed by the command line."""
    kind_name = kind.name
    compared: Compared | None = getattr(module, "COMPARED", None)
    if compared is None or not hasattr(module, "measure_rows"):
        raise InputError(
            f"{kind_name} evaluates one file or release at a time (got {len(request.sources)}), and its "
            "evaluator names no measures to compare versions by"
        )
    from rich.table import Table

    from .output import per_version_path, write_csv, write_json

    tags = version_tags(list(request.sources))
    docs, scopes = [], []
    for source, tag in zip(request.sources, tags):
        console.rule(f"{source}  [{tag}]", style="dim")
        one = dataclasses.replace(
            request,
            sources=[source],
            json_out=per_version_path(request.json_out, tag),
            csv_out=per_version_path(request.csv_out, tag),
            items_out=per_version_path(request.items_out, tag),
            plots=Path(request.plots) / tag if request.plots else None,
        )
        docs.append(module.evaluate(one, console))
        scopes.append((_label(docs[-1], tag), dict(getattr(module, "overall", None) or {})))
    settings = getattr(request, "intervals", None)
    paired = [
        {"from": tags[i - 1], "to": tags[i], "models": found}
        for i in range(1, len(tags))
        if (found := _paired(module, scopes[i - 1], scopes[i], settings, console))
    ]
    rows = side_by_side(tags, [module.measure_rows(d) for d in docs], compared)
    decomposed = None
    if len(request.sources) == 2:
        import tempfile

        first, last = (local_source(s) for s in request.sources)  # a Hub release: the folder it was fetched into
        why_not = changes_not_since(first, last)
        if why_not and removed_ids(last):  # only where a split would have been made
            console.print(why_not, markup=False, highlight=False)
        with tempfile.TemporaryDirectory(prefix="workbench-kept-") as folder:
            found = without_dropped(
                first, last, Path(folder), getattr(module, "without_removed", None) or _layout_without(kind)
            )
            if found is not None:
                unit = compared.unit
                console.rule(f"{request.sources[0]} without the {found[1]} {unit}(s) {tags[1]} dropped", style="dim")
                one = dataclasses.replace(
                    request, sources=[str(found[0])], json_out=None, csv_out=None, items_out=None, plots=None
                )
                _decompose(rows, module.measure_rows(module.evaluate(one, console)), compared, tags)
                middle = (f"{scopes[0][0]} without the {found[1]} dropped {unit}(s)", getattr(module, "overall", {}))
                decomposed = {
                    "dropped": found[1],
                    "unit": unit,
                    "measure": compared.measures[0],
                    "measures": list(_split(compared)),
                    "how": f"{tags[0]} without the {unit}s {tags[1]} dropped, evaluated apart: dropping "
                    f"moved each measure from {tags[0]} to it, editing from it to {tags[1]}",
                }
                dropping = _paired(module, scopes[0], middle, settings, console)
                editing = _paired(module, middle, scopes[1], settings, console)
                if dropping or editing:
                    decomposed["paired"] = {"dropping": dropping, "editing": editing}
    table = Table(title=f"{kind_name}: {' vs '.join(tags)} (each version's own counts beside its figures)")
    columns = list(rows[0]) if rows else list(compared.keys)
    for c in columns:
        table.add_column(c, justify="left" if c in compared.keys else "right")
    for r in rows:
        table.add_row(*(_shown(r[c]) for c in columns))
    console.print(table)
    from .provenance import dataset_record

    # each version's JSON has the whole provenance; here, which published copy each source is
    doc = {
        "kind": kind_name,
        "versions": [
            {
                "tag": t,
                "source": s,
                "json": display_path(p) if p else None,
                "source_copy": dataset_record(s, kind_name).get("source_copy", "unknown"),
            }
            for t, s, p in zip(tags, request.sources, [per_version_path(request.json_out, t) for t in tags])
        ],
        "keys": list(compared.keys),
        "measures": list(compared.measures),
        "rows": rows,
        **({"paired": paired} if paired else {}),
        **({"decomposition": decomposed} if decomposed else {}),
    }
    if request.json_out:
        write_json(doc, request.json_out)
        console.print(f"wrote {display_path(request.json_out)}", markup=False)
    if request.csv_out:
        write_csv(rows, request.csv_out)
        console.print(f"wrote {display_path(request.csv_out)}", markup=False)
    if request.plots:
        path = plot_versions(doc, Path(request.plots), kind_name)
        console.print(f"wrote {display_path(path)}", markup=False)
    return doc


def plot_versions(doc: dict, folder: Path, kind_name: str, most: int = 24) -> Path:
    """The headline per row (the first `most` rows), one bar per version, each bar labelled
    with its value and its counts (units, ties); the rows' keys on the axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    headline = doc["measures"][0]
    tags = [v["tag"] for v in doc["versions"]]
    rows = doc["rows"][:most]
    from ..core.names import shortest_names

    shown = {k: shortest_names(str(r[k]) for r in rows if r[k] not in (None, "")) for k in doc["keys"]}
    labels = [" / ".join(shown[k][str(r[k])] for k in doc["keys"] if r[k] not in (None, "")) for r in rows]
    fig, ax = plt.subplots(figsize=(min(16.0, max(6.5, 0.5 * len(rows) * len(tags) + 3)), 5.2))
    x = np.arange(len(rows))
    width = 0.8 / max(1, len(tags))
    top = 0.0
    for i, tag in enumerate(tags):
        values = [r[f"{headline} {tag}"] for r in rows]
        heights = [v if isinstance(v, (int, float)) else 0 for v in values]
        top = max([top, *heights])
        bars = ax.bar(x - 0.4 + width * (i + 0.5), heights, width, label=tag)
        counts = [
            "".join(f"\n{m}={r[f'{m} {tag}']}" for m in doc["measures"][1:] if isinstance(r[f"{m} {tag}"], int))
            for r in rows
        ]
        ax.bar_label(
            bars,
            labels=[(f"{v:.1f}" if isinstance(v, (int, float)) else "—") + c for v, c in zip(values, counts)],
            fontsize=6,
            padding=2,
        )
    ax.set_xticks(x, labels, fontsize=7, rotation=35, ha="right", rotation_mode="anchor")
    ax.set_ylim(min(0, ax.get_ylim()[0]), top * 1.3 if top > 0 else 1)  # room for the labels inside the frame
    ax.set_ylabel(headline)
    more = f" (first {most} of {len(doc['rows'])} rows)" if len(doc["rows"]) > most else ""
    ax.set_title(f"{kind_name}: {headline} by version — {' vs '.join(tags)}{more}", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="version")
    fig.tight_layout()
    from .output import save_chart

    path = save_chart(fig, folder / "versions.png", dpi=120, bbox_inches="tight")  # atomic, as every output
    plt.close(fig)
    return path
