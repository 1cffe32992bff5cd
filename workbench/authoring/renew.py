"""Renewing a published benchmark (docs/renewing.md): its file imported as a project, every item
audited by people (keep, fix with a corrected text, or drop for a reason), and the next version
built from their decisions.

A kind declares its `Audit` (kinds/base.py): the audit scheme, where its reasons come from, an
importer that writes template files reproducing the published file (original ids, fields and
labels kept), and the columns a fix may change. Everything else is here and shared:

    workbench import FILE --kind K --out FOLDER    the project, with `[origin]` crediting the original
    expand -> queue -> validated -> renewed        `renewed`: the kept rows, fixed texts applied

A fix is part of a label event (`fix`: {column: corrected text}, annotation/store.py), so it has
the label's undo, history and attribution, and is adjudicated with it: the text of the decision
that made the final label is applied (the adjudicator's, else the annotators' who agreed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..core.errors import InputError
from ..core.labels import Choice, LabelScheme
from ..core.stage import Output, Stage
from .validated import Validated, label_file_inputs

FIX = "fix"
KEEP = "keep"

# The pitfalls Blodgett, Lopez, Olteanu, Sim and Wallach found in pair benchmarks: "Stereotyping
# Norwegian Salmon: An Inventory of Pitfalls in Fairness Benchmark Datasets", ACL 2021
# (https://aclanthology.org/2021.acl-long.81/), grouped as the audit's reasons to drop a pair.
PAIR_AUDIT_SOURCE = (
    'Blodgett, Lopez, Olteanu, Sim and Wallach (2021), "Stereotyping Norwegian Salmon: An Inventory '
    'of Pitfalls in Fairness Benchmark Datasets", ACL 2021, https://aclanthology.org/2021.acl-long.81/'
)


def audit_scheme(name: str, unit: str, reasons: tuple[tuple[str, str], ...], question: str) -> LabelScheme:
    """An audit's choices: keep (key 1), fix (key 2), then each reason to drop (id, meaning) on the
    next keys."""
    return LabelScheme(
        name,
        (
            Choice(KEEP, KEEP, None, "1", f"keep: a sound {unit} as it is", kept=True),
            Choice(FIX, FIX, None, "2", "fix: sound once its text is corrected", kept=True),
            *(Choice(cid, cid, None, str(k), f"drop: {meaning}") for k, (cid, meaning) in enumerate(reasons, start=3)),
        ),
        question=question,
    )


PAIR_AUDIT = audit_scheme(
    "pair-audit",
    "pair",
    (
        ("not-minimal", "the sentences differ in more than what the pair contrasts (the group, or the word)"),
        ("group-unclear", "the group is not identifiable, or the groups are not a contrasting pair"),
        ("stereotype-unclear", "which stereotype it is about is unclear"),
        ("not-stereotype", "not about a stereotype (e.g. a plain fact, or offensive without a stereotype)"),
        ("unnatural", "ungrammatical or unnatural beyond a fix"),
    ),
    "Keep this pair, fix its text, or drop it, and why?",
)


def chosen_fix(labels, item: str) -> dict | None:
    """The corrected text of an item whose final decision is `fix`: the adjudicators' when an
    adjudication decided it, else that of the annotators who voted fix (who must propose the same)."""
    final = labels.finals[item]
    if final.category != FIX:
        return None
    names = final.rulings if final.adjudicated else final.votes
    fixes = {a: labels.states[a][item].fix for a, c in names.items() if c == FIX}
    texts = {json.dumps(f, sort_keys=True) for f in fixes.values() if f}
    if len(texts) != 1:
        who = ", ".join(sorted(fixes))
        raise InputError(
            f"item {item!r}: decided 'fix' but "
            + (f"{who} proposed different texts" if texts else f"{who} proposed no corrected text")
            + "; an adjudicator decides it with their own fix "
            "(workbench annotate --annotator NAME --adjudicate)"
        )
    return json.loads(texts.pop())


class Renewed(Stage):
    """The rows of the items the audit kept, with each decided fix applied to its record."""

    name = "released"
    upstream = ("expand", "validated")

    def __init__(self, scheme: LabelScheme, text_column: str, fix_fields: tuple[tuple[str, str], ...], refresh=None):
        self.scheme, self.text_column, self.refresh = scheme, text_column, refresh or (lambda record: record)
        self.fix_fields = tuple(column for column, _ in fix_fields)

    def schema(self):
        from .stages import expand_schema

        import pyarrow as pa

        return pa.schema([*expand_schema(), ("label", pa.string())])

    def external_inputs(self, ctx):
        return label_file_inputs(ctx)  # the fixed texts are in the label files

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        from ..annotation.summary import final_labels_for

        validated = inputs["validated"]
        ids = validated["item_id"].to_pylist()
        labels = final_labels_for(ctx.config, ids, self.scheme)
        fixes = {i: f for i in ids if (f := chosen_fix(labels, i))}
        label = dict(zip(ids, validated["label"].to_pylist()))
        rows = []
        for r in inputs["expand"].to_pylist():
            if r["item_id"] not in label:
                continue
            fix = fixes.get(r["item_id"])
            if fix:
                unknown = sorted(set(fix) - set(self.fix_fields))
                if unknown:
                    raise InputError(
                        f"item {r['item_id']!r}: a fix may change {', '.join(self.fix_fields)}, not "
                        f"{', '.join(unknown)}"
                    )
                try:
                    record = self.refresh({**json.loads(r["record"]), **fix})
                except InputError as exc:
                    raise InputError(f"item {r['item_id']!r}: {exc}") from None
                r = {
                    **r,
                    "record": json.dumps(record, ensure_ascii=False, sort_keys=True),
                    "hypothesis": record[self.text_column],
                }
            rows.append({**r, "label": label[r["item_id"]]})
        return Output(
            pa.Table.from_pylist(rows, schema=self.schema()),
            {"units": len(label), "rows": len(rows), "fixed": len(fixes)},
        )

    def counts(self, ctx, table, inputs, work):
        return dict(work)


def audit_sample(ids: list[str], n: int | None, seed: int | None, groups: dict[str, str] | None = None) -> set[str]:
    """The items a partial audit covers (`[origin] sample`, drawn at import): `n` of `ids` at random,
    the same for the same ids and seed wherever it is drawn (ids sorted first, so their order in the
    queue does not matter). Every item when no sample is set. With `groups` ({id: group}, `[origin]
    stratify`), a stratified sample: each group gets its share of `n` in proportion to its size (at
    least one item per group when `n` is at least the number of groups; `allocation`), drawn at
    random within the group, the groups in sorted order from one generator."""
    import random

    if n is None or n >= len(ids):
        return set(ids)
    rng = random.Random(seed or 0)
    if groups is None:
        return set(rng.sample(sorted(ids), n))
    members: dict[str, list[str]] = {}
    for i in sorted(ids):
        members.setdefault(groups[i], []).append(i)
    shares = allocation({g: len(m) for g, m in members.items()}, n)
    return {i for g in sorted(members) for i in rng.sample(members[g], shares[g])}


def allocation(sizes: dict[str, int], n: int) -> dict[str, int]:
    """How many of `n` sampled items each group gets: its share of `n` in proportion to its size
    (largest remainders), at least one per group when `n` allows it, never more than it has. When
    `n` is smaller than the number of groups, one item each for the `n` largest groups (ties in
    sorted order): as many groups as the sample can have."""
    import math

    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    order = sorted(sizes)
    if n < len(order):
        largest = set(sorted(order, key=lambda g: (-sizes[g], g))[:n])
        return {g: int(g in largest) for g in order}
    quota = {g: n * sizes[g] / total for g in order}
    shares = {g: min(sizes[g], max(1, math.floor(quota[g]))) for g in order}
    while sum(shares.values()) < n:
        g = max((g for g in order if shares[g] < sizes[g]), key=lambda g: (quota[g] - shares[g], -order.index(g)))
        shares[g] += 1
    while sum(shares.values()) > n:  # the minimum of one took more than n allows: from the most over their share
        g = max((g for g in order if shares[g] > 1), key=lambda g: (shares[g] - quota[g], -order.index(g)))
        shares[g] -= 1
    return shares


def stratum_of(rows: list[dict], column: str) -> dict[str, str]:
    """{item id: its value of `column`} over the expanded rows of a renewal (an item's first row):
    a field of the kind's record (`bias_type`, `split`, ...), `domain` (the item's group), or a
    column of the published file kept under `source`. Refuses a column no item has, naming those
    it could use."""
    out: dict[str, str] = {}
    known: set[str] = {"domain"}
    for r in rows:
        if r["item_id"] in out:
            continue
        record = json.loads(r["record"]) if r.get("record") else {}
        source = record.get("source") if isinstance(record.get("source"), dict) else {}
        known |= {k for k, v in record.items() if isinstance(v, (str, int, float, bool))} | set(source)
        if column == "domain":
            value = r["domain"]
        elif column in record and not isinstance(record[column], (dict, list)):
            value = record[column]
        elif column in source:
            value = source[column]
        else:
            continue
        out[r["item_id"]] = "" if value is None else str(value)
    missing = {r["item_id"] for r in rows} - set(out)
    if missing:
        raise InputError(
            f"[origin] stratify = {column!r}: "
            + (f"{len(missing)} item(s) have no such column" if out else "no item has such a column")
            + f"; stratify by one of: "
            f"{', '.join(sorted(known - {'id', 'record', 'sentences', 'published', 'layout'}))} "
            "(edit [origin] stratify in workbench.toml, or import again)"
        )
    return out


def renewal_stages(authoring, scheme: LabelScheme, fix_fields: tuple[tuple[str, str], ...], refresh=None) -> list:
    """The renewal pipeline; `refresh` recomputes a fixed record's derived columns (record -> record)."""
    from .stages import Expand, Queue

    class SampledQueue(Queue):
        """The queue of a partial audit: only the items of its sample (Blodgett et al.'s audits
        sample items too); every item when `[origin]` sets no sample."""

        def columns_read(self, ctx):
            origin = ctx.config.origin
            if origin is None or origin.sample is None or not origin.stratify:
                return self.reads_columns
            return {"expand": (*self.reads_columns["expand"], "record")}  # a stratum may be a record's field

        def settings(self, ctx):
            origin = ctx.config.origin
            return {
                **super().settings(ctx),
                "sample": origin.sample if origin else None,
                "seed": origin.seed if origin else None,
                **({"stratify": origin.stratify} if origin and origin.stratify else {}),
            }

        def compute(self, ctx, inputs, reused) -> Output:
            out = super().compute(ctx, inputs, reused)
            origin = ctx.config.origin
            if origin is None or origin.sample is None:
                return out
            import pyarrow as pa
            import pyarrow.compute as pc

            ids = out.table["item_id"].to_pylist()
            groups = (
                stratum_of(inputs["expand"].select(["item_id", "domain", "record"]).to_pylist(), origin.stratify)
                if origin.stratify
                else None
            )
            chosen = audit_sample(ids, origin.sample, origin.seed, groups)
            table = out.table.filter(pc.is_in(out.table["item_id"], value_set=pa.array(sorted(chosen), pa.string())))
            table = table.set_column(
                table.schema.get_field_index("position"),
                "position",
                pa.array(range(table.num_rows), table.schema.field("position").type),
            )
            return Output(table, out.work, out.extra)

    return [
        Expand(authoring),
        SampledQueue(),
        Validated(scheme),
        Renewed(scheme, authoring.text_column, fix_fields, refresh),
    ]


def template_check(authoring):
    """An Audit's `check_templates` (`workbench validate`) for a renewal whose files `authoring` reads."""
    from .stages import check_project

    return lambda config: check_project(authoring, config)


def partial_audit(pipeline, kind, items: list, labels) -> dict:
    """Which items of a renewal nobody audited: every item of the data as published (the audit's
    original stage) that no annotator or adjudicator labelled, whether it is outside the audit's
    sample (`[origin] sample`) or in the queue unlabelled. Returns the counts the card states
    (`units`, `audited`), those items (`unaudited`, `outside` the sample) and their rows as
    published (`rows`), which `build --unaudited keep` releases unchanged."""
    stage = kind.audit.original_stage
    pipeline.run(stage)
    published = pipeline.workspace.read(stage).to_pylist()
    named = unit_of(kind.release)

    def unit(r: dict) -> str:
        try:
            return named(r)
        except KeyError:  # a layout's unit names a column of its release files, not of the stage's rows
            return r.get("unit_id", r.get("item_id"))

    units = list(dict.fromkeys(unit(r) for r in published))
    queued = {i.id for i in items}
    audited = {i.id for i in items if labels.finals[i.id].votes or labels.finals[i.id].rulings}
    nobody = [u for u in units if u not in audited]
    left = set(nobody)
    return {
        "units": len(units),
        "audited": len(audited),
        "unaudited": nobody,
        "outside": [u for u in nobody if u not in queued],
        "rows": [r for r in published if unit(r) in left],
    }


def unaudited_lines(scope: dict, sample: int | None) -> list[str]:
    """Why a partial audit's build stops (the default, `--unaudited refuse`): the items nobody audited."""
    outside = scope["outside"]
    shown = ", ".join(outside[:8]) + (f" ... and {len(outside) - 8} more" if len(outside) > 8 else "")
    where = f"outside the audit's sample ([origin] sample = {sample})" if sample else "not in the audit's queue"
    return [
        f"{len(outside)} of the {scope['units']} items are {where}: nobody audited them ({shown}); pass "
        "--unaudited keep to release them unchanged, as published (the card then says how many items were "
        "audited), or import again without --sample to audit every item"
    ]


# -- the import ---------------------------------------------------------------------------------------------------
def published_entry(table, index: int, id_column: str | None, read: set, entry: dict) -> dict:
    """A published row as a template file's entry: its id (the file's id column, else its number
    from 0 in file order), the kind's fields (`entry`) and, under `source`, every other column."""
    row = table.rows[index]
    source = {c: row[c] for c in table.columns if c not in read | {id_column} and row[c] != ""}
    return {
        "id": str(row[id_column]).strip() if id_column is not None else str(index),
        **entry,
        **({"source": source} if source else {}),
    }


def published_files(
    file_format: str,
    path: Path,
    groups: dict[str, list[dict]],
    per_group=lambda g: {},
    key: str = "pairs",
    noun: str = "",
) -> dict:
    """One template file per group (bias type, attribute) holding its entries (`noun`) under `key`."""
    from .files import dump_yaml

    files = {}
    for group, entries in sorted(groups.items()):
        data = {
            "format": file_format,
            "id": group,
            **per_group(group),
            "description": f"{group} {noun or key} imported from {Path(path).name}",
            key: entries,
        }
        files[re.sub(r"[^A-Za-z0-9_-]+", "-", group) + ".yaml"] = dump_yaml(data)
    return files


def csv_layout(path: Path, id_column: str | None) -> dict | None:
    """How a published CSV (or TSV) is laid out, for a release laid out as it (`build --layout
    original`): its header as written (an unnamed index column too), the id column among it, its
    delimiter (a tab when the header has more tabs than commas) and line ending. None for a file
    that is not one (JSON lines, JSON). Reads the header line alone."""
    import csv

    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20).decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    line = first.rstrip("\n")
    if not line.strip() or first.lstrip().startswith(("{", "[")):
        return None
    delimiter = "\t" if line.count("\t") > line.count(",") else ","
    header = next(csv.reader([line.rstrip("\r")], delimiter=delimiter), [])
    columns = [h.strip() for h in header]  # as the kinds' readers name them
    return {
        "columns": columns,
        "id_column": id_column,
        "delimiter": delimiter,
        "newline": "\r\n" if line.endswith("\r") else "\n",
    }


def one_or_each(values: list):
    """A column's values over one unit's rows as a template file keeps them: one value when they are
    all the same, else the list (read back with `per_row`)."""
    return values[0] if len(set(values)) == 1 else values


def per_row(value, n: int, raw, path: tuple, problems: list):
    """A unit's value for each of its `n` rows: one value for all, or a list of one per row (None
    and a problem when the list's length is not n)."""
    if not isinstance(value, list):
        return [value] * n
    if len(value) != n:
        problems.append(raw.problem(path, f"{len(value)} values for {n} rows: give one, or one per row"))
        return None
    return value


def import_notes(table, id_column: str | None, what: str = "pairs") -> list[str]:
    return list(table.notes) + (
        [] if id_column is not None else [f"no id column: {what} are numbered from 0 in file order"]
    )


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def import_project(
    kind,
    file: Path,
    out: Path,
    *,
    name: str,
    origin: dict,
    sample: int | None = None,
    seed: int | None = None,
    stratify: str | None = None,
) -> dict:
    """Write the renewal project of `file` (a `kind`'s published layout) into `out`: its template
    files (from the kind's importer) and workbench.toml with `[origin]` (and, for a partial audit,
    its sample: `sample` items drawn with `seed`, stratified by the column `stratify` when given).
    Refuses a folder that already holds a project."""
    if sample is not None and sample < 1:
        raise InputError(f"--sample {sample}: a sample is one item or more")
    if stratify is not None and sample is None:
        raise InputError(f"--stratify {stratify}: a stratified sample needs its size (--sample N)")
    if stratify is not None and not stratify.strip():
        raise InputError("--stratify: name the column whose groups the sample keeps in proportion (e.g. bias_type)")
    if kind.audit is None:
        raise InputError(f"kind {kind.name!r} cannot import a published file (it declares no audit)")
    out = Path(out)
    if (out / "workbench.toml").exists():
        raise InputError(f"{out / 'workbench.toml'} exists: import into a new folder")
    if not Path(file).exists():
        raise InputError(f"{file}: no such file or folder")
    from ..core.workspace import atomic_write_text
    from ..sources.known import recognise

    files, notes = kind.audit.importer(Path(file))
    which = recognise(Path(file), kind.name)  # which published copy it is (sources/known_copies.toml)
    check = (lambda folder: _check_stratify(kind, folder, stratify.strip(), Path(file).name)) if stratify else None
    rows = write_imported(files, out / "templates", Path(file), check)
    origin = {
        "file": Path(file).name + ("/" if Path(file).is_dir() else ""),
        "sha256": which.sha256,
        "published_copy": which.label,
        **{k: v for k, v in origin.items() if v},
        **({"sample": sample, "seed": seed if seed is not None else 0} if sample is not None else {}),
        **({"stratify": stratify.strip()} if stratify is not None else {}),
    }
    lines = [
        f"# The renewal of {origin['name']} (docs/renewing.md): written by `workbench import`.",
        "[project]",
        f"name = {_toml(name)}",
        f"kind = {_toml(kind.name)}",
    ]
    if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.+_-]*", origin.get("license") or ""):
        lines.append(
            f"license = {_toml(origin['license'])}   # the original's: `build` checks that a licence you "
            "put here is one the original's allows (docs/renewing.md)"
        )
    lines += [
        "",
        "[annotation]",
        "validators = 2   # every item audited by two people; an adjudicator decides their disagreements",
        "",
        "[origin]",
    ]
    lines += [f"{k} = {_toml(v)}" for k, v in origin.items()]
    atomic_write_text(out / "workbench.toml", "\n".join(lines) + "\n")
    return {"files": sorted(files), "notes": notes, "folder": out, "copy": which, "rows": rows}


def write_imported(files: dict, folder: Path, source: Path, check=None) -> int | None:
    """Write an importer's files into `folder` (templates/): a template file's text as it is, an
    `ImportedTable` streamed from `source` as Parquet (authoring/imported.py), then `check(folder)`
    (an InputError refuses what was written). Returns the rows of the tables written (None when
    there are none). On any failure, Ctrl-C too, whatever it wrote is removed: the folder is as it
    was (no workbench.toml is written after it), and a full disk is an InputError naming the file."""
    from .imported import ImportedTable, partial_name, write_table

    made = [d for d in (folder.parent, folder) if not d.exists()]
    written: list[Path] = []
    rows = None
    target = folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob(".*.partial"):  # left by an import killed outright (no workbench.toml yet)
            stale.unlink()
        for fname, content in files.items():
            target = folder / fname
            target.parent.mkdir(parents=True, exist_ok=True)
            written.append(target)
            if isinstance(content, ImportedTable):
                rows = (rows or 0) + write_table(content, target, f"importing {source.name}")
            else:
                target.write_text(content, encoding="utf-8")
        if check is not None:
            check(folder)
    except BaseException as exc:
        for path in written:
            path.unlink(missing_ok=True)
            partial_name(path).unlink(missing_ok=True)
        for d in reversed(made):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        if isinstance(exc, OSError):
            raise InputError(
                f"{target}: cannot write the imported file ({exc.strerror or exc}); nothing is imported "
                "yet: free the space (or fix the folder) and run the import again"
            ) from None
        raise
    return rows


def _check_stratify(kind, folder: Path, column: str, shown: str) -> None:
    """Refuse, before the project is made, a --stratify column the imported items do not have (the
    check `run` would make, on the rows the kind's expand stage reads from the imported files)."""
    from .stages import load

    expand = next((s for s in kind.audit.stages() if s.name == "expand"), None)
    authoring = getattr(expand, "authoring", None)
    if authoring is None:
        return  # a kind's own expand stage: its run checks the column
    rows, _, _ = load(authoring, [folder])
    items = [{"item_id": r.unit_id, "domain": r.domain, "record": json.dumps(r.record)} for _, r in rows]
    try:
        stratum_of(items, column)
    except InputError as exc:
        why = str(exc).removeprefix(f"[origin] stratify = {column!r}: ").split(" (edit [origin]")[0]
        raise InputError(f"--stratify {column}: {shown}: {why}; nothing was imported") from None


# -- the changelog of a renewal, per audit item ----------------------------------------------------------------
def unit_of(layout):
    """The audit item a released row belongs to (the layout's `unit`, else the row's unit or item id)."""
    return getattr(layout, "unit", None) or (lambda r: r.get("unit_id", r.get("item_id")))


def audit_changes(kind, items: list, labels, previous_rows: list[dict], rows: list[dict]) -> list[str]:
    """Markdown lines of a renewal's changelog naming the audit items themselves, for kinds where an
    item stands for several released rows (a templated hypothesis's samples, a statement's probes,
    a context's sentences): each item dropped since the previous version with its reason and
    rows, each item fixed with the word diff of its text, and the counts per decision and group.
    Empty where every item is one row (its rows' list says it all)."""
    from collections import Counter

    from ..annotation.display import word_diff
    from ..contract.kind import TEXT
    from ..release.generic import markdown_table

    from ..release.changes import content

    unit = unit_of(kind.release)
    before: dict[str, set] = {}
    after: dict[str, set] = {}
    for found, source in ((before, previous_rows), (after, rows)):
        for r in source:
            found.setdefault(unit(r), set()).add(
                content(kind.release, r)
            )  # a fix keeps keys; its text or fields change
    if max(map(len, [*before.values(), *after.values()]), default=1) <= 1:
        return []
    columns = dict(kind.audit.fix_fields)
    dropped, fixed, per = [], [], Counter()
    for item in items:
        final = labels.finals.get(item.id)
        if final is None or not final.category or before.get(item.id) == after.get(item.id):
            continue
        why = kind.scheme.choice(final.category).title
        if item.id in before and item.id not in after:
            dropped.append(f"- `{item.id}` {item.hypothesis} ({why}; {_rows(len(before[item.id]))})")
            per[("dropped", why, item.domain)] += 1
        elif final.category == kind.audit.fix_choice:
            shown = {**dict(item.details), TEXT: item.hypothesis}
            fix = chosen_fix(labels, item.id) or {}
            diffs = [
                f"{column}: {word_diff(shown.get(columns.get(column), ''), text)}"
                for column, text in sorted(fix.items())
            ]
            fixed.append(
                f"- `{item.id}` ({why}; {len(before.get(item.id, ()))} → {_rows(len(after.get(item.id, ())))}): "
                + "; ".join(diffs)
            )
            per[("fixed", why, item.domain)] += 1
    if not per:
        return []
    groups = sorted({g for _, _, g in per})
    reasons = sorted({(d, w) for d, w, _ in per})
    table = [[d, w, *(per[(d, w, g)] for g in groups), sum(per[(d, w, g)] for g in groups)] for d, w in reasons]
    return [
        "Audit items (each stands for several released rows; every row's change is in `changes.csv`):",
        "",
        markdown_table(["decision", "reason", *groups, "total"], table),
        "",
        *(["Dropped items:", "", *dropped, ""] if dropped else []),
        *(["Fixed items:", "", *fixed, ""] if fixed else []),
    ]


def _rows(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


# -- the adjudications of a renewal, for its changelog --------------------------------------------------------
def adjudications(kind, items: list, labels) -> list[dict]:
    """Every queue item an adjudicator decided, in queue order: the competing proposals (each
    annotator's decision, proposed fix and note), who decided, the decision, the fix it applies and
    the adjudicator's note. A fix is {column: corrected text} in the item's order (the audit's fix
    fields), with its word diff against the published text."""
    from ..annotation.display import word_diff
    from ..contract.kind import TEXT

    order = [column for column, _ in kind.audit.fix_fields]
    where = dict(kind.audit.fix_fields)
    out = []
    for item in items:
        final = labels.finals.get(item.id)
        if final is None or not final.adjudicated:
            continue
        shown = {**dict(item.details), TEXT: item.hypothesis}

        def proposal(name: str, choice: str, fix: dict | None = None) -> dict:
            state = labels.states.get(name, {}).get(item.id)
            fix = fix if fix is not None else ((state.fix or {}) if state is not None else {})
            columns = [c for c in order if c in fix] + sorted(c for c in fix if c not in order)
            return {
                "by": name,
                "decision": choice,
                **(
                    {
                        "fix": {c: fix[c] for c in columns},
                        "diff": {c: word_diff(shown.get(where.get(c), ""), fix[c]) for c in columns},
                    }
                    if choice == kind.audit.fix_choice and fix
                    else {}
                ),
                **({"note": state.note} if state is not None and state.note else {}),
            }

        deciding = sorted(a for a, c in final.rulings.items() if c == final.category)
        ruling = proposal(", ".join(deciding), final.category, chosen_fix(labels, item.id) or {})
        notes = [n for a in deciding if (n := getattr(labels.states.get(a, {}).get(item.id), "note", None))]
        out.append(
            {
                "item": item.id,
                "text": item.hypothesis,
                "group": item.domain,
                "proposals": [proposal(a, c) for a, c in sorted((final.votes or {}).items())],
                "decided_by": deciding,
                "decision": final.category,
                **({k: ruling[k] for k in ("fix", "diff") if k in ruling}),
                **({"note": "; ".join(notes)} if notes else {}),
            }
        )
    return out


def _proposed(p: dict) -> str:
    fix = "; ".join(f"{c}: {d}" for c, d in p.get("diff", {}).items())
    return f"{p['decision']}" + (f" ({fix})" if fix else "") + (f", note: {p['note']}" if p.get("note") else "")


def adjudication_lines(records: list[dict]) -> list[str]:
    """The changelog's Adjudicated section: each item an adjudicator decided, the decision applied
    and who took it, their note, and the annotators' competing proposals (a fix as its word diff)."""
    if not records:
        return []
    lines = [
        f"Adjudicated ({len(records)} item{'' if len(records) == 1 else 's'} the annotators disagreed on; "
        "the adjudicator's decision is the one applied):",
        "",
    ]
    for r in records:
        fix = "; ".join(f"{c}: {d}" for c, d in r.get("diff", {}).items())
        lines.append(
            f"- `{r['item']}` {r['text']} ({r['group']}): **{r['decision']}**"
            + (f" ({fix})" if fix else "")
            + f", decided by {', '.join(r['decided_by']) or 'an adjudicator'}"
            + (f"; note: {r['note']}" if r.get("note") else "")
        )
        lines += [f"  - {p['by']} proposed {_proposed(p)}" for p in r["proposals"]]
    return lines + [""]


def adjudicated_rows(kind, records: list[dict], rows: list[dict]) -> dict[str, dict]:
    """{released row key: its item's adjudication} for the rows of `rows` whose item was adjudicated
    (changes.csv gives each such row who decided, the proposals and the note)."""
    by_item = {r["item"]: r for r in records}
    unit = unit_of(kind.release)
    return {kind.release.identity(r)[0]: by_item[u] for r in rows if (u := unit(r)) in by_item}
