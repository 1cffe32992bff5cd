"""The contract of a benchmark kind: everything the shared layers need to know about one family
of benchmarks, and nothing they may assume beyond it.

A kind is one `Kind` value. Built-in kinds live in `workbench/kinds/<name>/`; a plugin is any
installed package that names its `Kind` under the entry-point group `workbench.kinds`
(`my_kind = "my_package:KIND"` in its pyproject.toml). The pipeline runner, the label store,
the TUI, Label Studio, build/publish and `workbench evaluate` read only what is declared here,
so a kind never needs a line of shared code changed. Every part is optional but `name` and
`description`: a kind that only evaluates declares an evaluator and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, runtime_checkable

from ..core.errors import ConfigError
from ..core.evaluator_option import EvaluatorOption
from ..core.labels import LabelScheme

if TYPE_CHECKING:
    import typer
    from pydantic import BaseModel

    from ..core.config import Config
    from ..core.errors import Problem
    from ..core.pipeline import Pipeline
    from ..core.stage import Stage
    from ..evaluation.request import EvaluateRequest
    from ..models.roles import ModelRole


@runtime_checkable
class ReleaseLayout(Protocol):
    """How a kind's release rows become files in a release folder, and back."""

    def write_release(self, rows: list[dict], staging: Path) -> list[str]:
        """Write the data files into `staging`; return the groups (e.g. domains) written."""

    def read_release(self, folder: Path) -> list[dict]:
        """The rows of a release folder, as `write_release` was given them (for checks and changes)."""

    def card(self, release: Any) -> str:
        """The dataset card (README.md) of a release being built."""

    def identity(self, row: dict) -> tuple[str, ...]:
        """What identifies a row across versions (to tell added from removed rows): its key, the
        text a changelog shows, its group and its template.

        A layout declares `released_fields`: the other fields of those rows it releases (the
        context a sentence was written in); a version comparison reads them all, so a change of
        any is an edit (build's "nothing changed", the changelog, changes.csv). A layout may also
        define `edit(row) -> (entry, reason) | None`: the entry of its source the
        row comes from (stable when its text is edited) and the changelog's reason for an edit
        there when its template file changed ("pair edited"); a removed and an added row of one
        entry are then one edited row (release/changes.py). And `write_sources(release, staging)`:
        files a release carries beside its data (a renewed benchmark's own source files)."""


class Evaluator(Protocol):
    """A kind's evaluator module (named by `Kind.evaluator`, imported only when used)."""

    def detect(self, path: Path) -> bool:
        """True when a file or release folder has this kind's shape (used without --kind)."""

    def evaluate(self, request: "EvaluateRequest", console: Any) -> dict:
        """Score request.models on request.sources, print tables on `console`, write the outputs
        the request names and return the JSON document."""

    # Optional: MANY_SOURCES = True when `evaluate` compares several sources itself; otherwise
    # `workbench evaluate A B` evaluates each alone and compares them by COMPARED (an
    # evaluation.versions.Compared) over `measure_rows(doc) -> list[dict]` (its CSV rows); and,
    # when its sources are not CSV files of rows, `without_removed(source, removed_ids, folder)`
    # writes the original without a renewal's dropped items (the drop/edit split). CHAT_TEMPLATE =
    # True when its causal LMs answer multiple-choice requests that --apply-chat-template (and
    # --system-instruction) put in the chat template, as its lm-eval task reads them then;
    # `workbench evaluate` and the release's evaluate.py refuse those options for any other kind.


@dataclass(frozen=True)
class Resampling:
    """What a kind's intervals resample (`evaluation/intervals.py`): its independent unit and,
    where several scored items share one (the identities filled into one template), what they
    share. Items of one unit are summed into that unit before resampling, so whole clusters are
    drawn and the interval is not narrowed by items that are not independent."""

    unit: str  # one unit, singular ("pair", "template")
    units: str  # plural, as warnings and sentences say it
    shared_by: str = ""  # what the items of one unit share ("" : each unit is one item)
    why: str = ""  # one line for docs/statistics.md and `workbench kinds`


# What a line of an item can show (`Field.source`): the queue's columns every kind may fill.
# Any other source names one of the item's detail lines (the queue's `details` (label, text)).
TEXT = "text"  # the judged text (`hypothesis`), boxed; always the first field
FILL = "fill"  # the word(s) at `fill_spans`: highlighted in the terminal, a line of their own in Label Studio
GROUP = "group"  # `group`, with "→ counterfactual <counterfactual_group>" when there is one
PREMISES = "premises"  # `premises`: one line each (numbered when there are several)
TEMPLATE = "template"  # `masked_template`
WHERE = "where"  # `domain` / `subtopic`, and `n_samples` when it is not 1
STANCE, MODELS, FLUENCY = "stance", "models", "fluency"  # model results (`model_fields` only)
STANDARD_SOURCES = (TEXT, FILL, GROUP, PREMISES, TEMPLATE, WHERE, STANCE, MODELS, FLUENCY)


@dataclass(frozen=True)
class Field:
    """One line of an item as annotators see it: `line` is the caption at its left in the
    terminal and its header in Label Studio, `caption` says what it means (help screen, Label
    Studio page), `source` what it shows: one of the names above or a detail label (default:
    the line's own name). Several sources make one line from the first that is not empty
    (e.g. a context that is a premise for some items and a template for others)."""

    line: str
    caption: str
    source: str | tuple[str, ...] = ""

    @property
    def sources(self) -> tuple[str, ...]:
        if not self.source:
            return (self.line,)
        return (self.source,) if isinstance(self.source, str) else tuple(self.source)


@dataclass(frozen=True)
class ItemQuestion:
    """A question that depends on the item, picked by the value of one of its lines (e.g. a
    pair's direction). The line is usually `hidden`: the annotator reads the question, not the
    value. Items whose value is not listed get `AnnotatorWords.question`."""

    source: str  # a detail label or a standard source
    questions: tuple[tuple[str, str], ...]  # (value, question)

    def question_for(self, value: str | None, default: str) -> str:
        return dict(self.questions).get(value or "", default)


# What annotators and readers are told of a kind's items unless it says otherwise (AnnotatorWords).
CONTENT_NOTE = (
    "The sentences you are about to read state stereotypes about social groups. They are offensive by "
    "design: the benchmark tests whether language models accept them."
)
CONTENT_WARNING = (
    "The items concern stereotypes about social groups; they are published to measure bias in models, "
    "not to endorse it."
)


def _field(entry) -> Field:
    return entry if isinstance(entry, Field) else Field(*entry)


@dataclass(frozen=True)
class AnnotatorWords:
    """What annotators read for this kind. The terminal UI and the Label Studio labelling page
    are both generated from it, so the two never say different things.

    question: one line, what the annotator decides ("": the scheme's question, which
    `kind_fields(AUTHORING)` makes `Authoring.question`; per_item: a question that depends on the
    item instead); fields: every line of an item as shown, the judged text first (`Field`, or
    a (line, caption) pair whose source is the line's name); model_fields: lines shown only to
    adjudicators who turn model results on; hidden: sources (detail labels, queue fields) never
    shown to annotators; choices: (choice id, caption) of every decision (default: the
    scheme's `Choice.title`); template: what an item's `template_id` is, for the stats screen;
    rows: what an item's `n_samples` counts, on its `where` line ("· 4 probes"); help: extra
    (heading, text) sections of the TUI's help screen; edit: the (column, source) pairs an
    annotator may correct, an audit's fix (the TUI's editor, Label Studio's text areas; set by
    `Kind.renewal()` from `Audit.fix_fields`).

    The rest are the kind's words for what every screen around the item says: domain, domains
    and subtopic name an item's `domain` and `subtopic` columns (filter dialog, opt-outs, the
    `where` line's help, `annotations stats`); search says what the search key looks through;
    content_note is what annotators are told the items contain before the first one (terminal
    and Label Studio), content_warning what the card warns readers of ("" for either: the items
    need no note). The defaults are the words of the loop this tool started with (templated hypotheses)."""

    question: str = ""
    fields: tuple[Field, ...] = ()
    model_fields: tuple[Field, ...] = ()
    hidden: tuple[str, ...] = ()
    help: tuple[tuple[str, str], ...] = ()
    choices: tuple[tuple[str, str], ...] = ()
    per_item: ItemQuestion | None = None
    template: str = "template"
    rows: str = "samples"
    edit: tuple[tuple[str, str], ...] = ()
    domain: str = "domain"
    domains: str = "domains"
    subtopic: str = "subtopic"
    search: str = "hypotheses and templates"
    content_note: str = CONTENT_NOTE
    content_warning: str = CONTENT_WARNING

    def __post_init__(self):
        # (line, caption) pairs, as plugins written before `Field` declare them, become Fields.
        object.__setattr__(self, "fields", tuple(_field(f) for f in self.fields))
        object.__setattr__(self, "model_fields", tuple(_field(f) for f in self.model_fields))

    def caption(self, choice) -> str:
        """What an annotator reads for a choice of the scheme: its caption here, else its title."""
        return dict(self.choices).get(choice.id) or choice.title or choice.id

    def problems(self, scheme: LabelScheme | None) -> list[str]:
        """Why these words do not cover the scheme and the items they describe (empty when they do)."""
        out = []
        ids = scheme.ids if scheme is not None else ()
        for cid, _ in self.choices:
            if cid not in ids:
                out.append(f"caption for {cid!r}, which is not a choice of the scheme ({', '.join(ids)})")
        for c in scheme.choices if scheme is not None else ():
            if not (dict(self.choices).get(c.id) or c.title):
                out.append(f"choice {c.id!r} has no caption")
        if not self.fields:
            out.append("no fields: the judged text needs a line name and a caption")
        for f in (*self.fields, *self.model_fields):
            if not f.caption.strip():
                out.append(f"line {f.line!r} has no caption")
        if self.per_item is not None and not self.per_item.questions:
            out.append("per_item has no questions")
        return out + self.ambiguous()

    def ambiguous(self) -> list[str]:
        """Lines named like a standard source without saying which they mean: `Field("group", ...)`
        would show the queue's group column, not a detail line the kind calls `group` (empty for a
        kind that fills no group), so the kind must say source=GROUP or name its detail otherwise."""
        return [
            f"line {f.line!r} is named like the standard source {f.line!r} (kinds/base.py): give "
            f"source={f.line.upper()} for the queue's own {f.line!r}, or name the item's detail line otherwise"
            for f in (*self.fields[1:], *self.model_fields)
            if not f.source and f.line in STANDARD_SOURCES
        ]


@dataclass(frozen=True)
class Audit:
    """How a published benchmark of this kind is renewed (docs/renewing.md): `workbench import`
    turns its published file into a project, annotators audit every item with `scheme` (keep,
    fix with a corrected text, or drop for a reason) and the next build applies the decisions.

    scheme: the audit's choices (kept ones keep the item; `fix` keeps it with the text proposed);
    source: where the reasons come from (a citation, for the card and docs); importer: the
    published file -> (template files {name: text} reproducing it, or for a file of many items
    {name.parquet: an ImportedTable} read and written a chunk at a time (authoring/imported.py),
    notes); fix_fields: the columns of a row a fix may change, each with where a queue item shows
    it (TEXT or a detail label), so the TUI's editor (key e) opens with the texts; stages: the
    pipeline that applies the decisions (used instead of `Kind.stages` in a project with an
    `[origin]`); fix_choice:
    the scheme's choice a proposed fix is labelled with; original_stage / release_stage: the
    stages whose rows `build --original` and `build` write (the kind's release layout reads them);
    words: what auditors read, when the kind's own words describe lines its audit items lack."""

    scheme: LabelScheme
    source: str
    importer: Callable[[Path], tuple[dict[str, Any], list[str]]]  # {name: text or ImportedTable}
    fix_fields: tuple[tuple[str, str], ...]
    stages: Callable[[], list["Stage"]]
    question: str = ""  # what auditors read (default: the scheme's question)
    original_stage: str = "expand"  # the stage whose rows are the data as published (build --original)
    release_stage: str = "released"  # the stage whose rows are the renewed release
    check_templates: Callable[["Config"], tuple[int, list["Problem"]]] | None = None  # `validate` (default: the kind's)
    fix_choice: str = "fix"
    words: AnnotatorWords | None = None


@dataclass(frozen=True)
class Kind:
    """One family of benchmarks. See the module docstring for how a kind is found."""

    name: str
    description: str
    # authoring: templates -> rows, as pipeline stages in order (None: this kind only evaluates)
    stages: Callable[[], list["Stage"]] | None = None
    queue_stage: str = "queue"  # stage whose rows are the annotation items
    release_stage: str | None = None  # stage whose rows become the release
    run_to: str | None = None  # last stage `workbench run` runs (the machine part)
    check_templates: Callable[["Config"], tuple[int, list["Problem"]]] | None = None  # `validate`
    settings: dict[str, type["BaseModel"]] = field(default_factory=dict)  # its own workbench.toml sections
    check_settings: Callable[["Config"], list["Problem"]] | None = None  # `validate`'s checks of them
    # shared settings it never reads, a section or section.key ("generate", "evaluate.label_overrides"):
    # `workbench init` leaves them out of the workbench.toml it writes
    unused_settings: tuple[str, ...] = ()
    # annotation
    scheme: LabelScheme | None = None  # what annotators decide on each queue item
    words: AnnotatorWords | None = None  # what they read (default: generic words and the scheme's question)
    default_validators: int | None = None  # people per item its benchmark was validated with
    # [annotation] settings its benchmark was validated with (e.g. a majority of 3), used
    # where a project leaves them unset (registry.of_config), so every reader of them agrees
    annotation_defaults: dict[str, Any] = field(default_factory=dict)
    # release
    release: ReleaseLayout | None = None
    # the release's evaluate.py runs it, copied with its imports (what it defines:
    # release/runtime/cli.py); None: the evaluator module when it declares (`DECLARED`), "": none
    standalone: str | None = None
    lm_eval_tasks: str | None = None  # package with its lm-eval task (task.yaml, utils.py) for releases
    # (release/lmeval.py); a declared evaluator scoring with `choices.Choices` has one made from it
    # evaluation
    evaluator: str | None = None  # module implementing `Evaluator`, or defining `DECLARED`
    # its options (None: a declared evaluator's `Declared.options`; read them with `options()`)
    evaluator_options: tuple[EvaluatorOption, ...] | None = None
    # the models its evaluator uses besides --model (a judge scoring generated text): each becomes an
    # option of `workbench evaluate` (models.roles.ModelRole), loaded, cached and recorded as --model is
    # (empty: a declared evaluator's `Declared.roles`)
    model_roles: tuple["ModelRole", ...] = ()
    # the unit and cluster its intervals resample (None: a declared evaluator's unit; see `resampled()`)
    resampling: Resampling | None = None
    # extras
    commands: Callable[["typer.Typer"], None] | None = None  # adds the kind's own CLI commands
    demo: str | None = None  # module with `steps(out) -> list[(title, argv)]` for `make demo`
    example: str | None = None  # module whose EXAMPLE_TEMPLATES {file: text} `workbench init` copies
    aliases: tuple[str, ...] = ()
    audit: Audit | None = None  # renewing a published benchmark of this kind
    renewing: bool = False  # set by `renewal()`: this is a renewal project's kind
    # filled in by the registry: where the kind comes from
    package: str = "workbench"
    version: str = ""
    module: str = ""  # the module its entry point names (its code: kinds/code.py)

    def __post_init__(self):
        if self.evaluator_options is not None:  # said here: the roles' flags join them now
            object.__setattr__(self, "evaluator_options", _with_roles(self.evaluator_options, self.model_roles))
        if self.words is not None and not self.words.question and self.scheme is not None:
            # the question said once, in the scheme (an `Authoring.question`): every screen reads it here
            object.__setattr__(self, "words", _replace(self.words, question=self.scheme.question))
        if self.words is not None and self.scheme is not None:
            wrong = [p for p in self.words.problems(self.scheme) if "not a choice of the scheme" in p]
            if wrong:  # a caption for a choice that does not exist is a typo that would go unseen
                raise ValueError(f"kind {self.name!r}: {'; '.join(wrong)}")
        for words in (self.words, self.audit.words if self.audit else None):
            if words is not None and words.ambiguous():  # a line that would silently show something else
                raise ValueError(f"kind {self.name!r}: {'; '.join(words.ambiguous())}")

    @property
    def capabilities(self) -> tuple[str, ...]:
        """What a user can do with it: author / annotate / release / evaluate."""
        can = {
            "author": self.stages is not None,
            "annotate": self.scheme is not None,
            "release": self.release is not None,
            "evaluate": self.evaluator is not None,
        }
        return tuple(k for k, v in can.items() if v)

    def renewal(self) -> "Kind":
        """This kind as a renewal project uses it: the audit's scheme, words and stages."""
        import dataclasses

        if self.audit is None:
            raise ConfigError(f"kind {self.name!r} cannot renew a published benchmark (it declares no audit)")
        a = self.audit
        own = a.words or self.words
        words = (
            None
            if own is None
            else dataclasses.replace(
                own, question=a.question or a.scheme.question, per_item=None, choices=(), edit=a.fix_fields
            )
        )
        # an audit is not the benchmark's validation: none of its annotation defaults carry over
        # a renewal applies the audit's decisions to the published items: it generates nothing
        unused = tuple(dict.fromkeys((*self.unused_settings, "generate")))
        return dataclasses.replace(
            self,
            scheme=a.scheme,
            words=words,
            stages=a.stages,
            annotation_defaults={},
            release_stage=a.release_stage,
            renewing=True,
            unused_settings=unused,
            check_templates=a.check_templates or self.check_templates,
        )

    @property
    def question(self) -> str:
        if self.words is not None and self.words.question:
            return self.words.question
        return self.scheme.question if self.scheme else ""

    def pipeline(self, config: "Config", workspace=None, options: dict | None = None) -> "Pipeline":
        from ..core.pipeline import Pipeline
        from . import code
        from .loader import call

        if self.stages is None:
            raise ConfigError(
                f"kind {self.name!r} has no authoring pipeline: only `workbench evaluate --kind "
                f"{self.name}` is available for it"
            )
        stages = call(self, "its stages cannot be made", self.stages)  # may import the kind's stage modules
        return Pipeline(config, stages, workspace, options, code=code.identity(self))

    def part(self, field_name: str, role: str | None = None):
        """The module the kind names in `field_name` (evaluator, standalone, lm_eval_tasks, example,
        demo), imported through the guarded loader: a broken one is a one-line KindBroken."""
        from .loader import import_module

        name = getattr(self, field_name)
        if not name:
            raise ConfigError(f"kind {self.name!r} has no {role or field_name} module")
        return import_module(self, name, role or field_name.replace("_", " "))

    def evaluator_module(self) -> Evaluator:
        if not self.evaluator:
            raise ConfigError(f"kind {self.name!r} has no evaluator")
        module = self.part("evaluator")
        self._check_options(getattr(module, "DECLARED", None))
        return module

    # --- what a declared evaluator says once ------------------------------------------------------
    # A kind whose evaluator module defines `DECLARED` (evaluation/declared.py) says its options, its
    # model roles, its resampling unit and its release's evaluate.py there; the methods below read
    # them, so `workbench evaluate`, the evaluation, the release's script and the docs agree.

    def declared(self) -> Any:
        """The evaluator module's `DECLARED` (imported through the guarded loader: a broken module
        is a KindBroken), or None for a kind without one."""
        if not self.evaluator:
            return None
        return getattr(self.part("evaluator"), "DECLARED", None)

    def options(self) -> tuple[EvaluatorOption, ...]:
        """The evaluator's command-line options, its roles' flags among them: the kind's own
        `evaluator_options`, else its declaration's. A kind whose evaluator cannot be imported has
        none here (using it says why; `workbench kinds` lists it as broken)."""
        if self.evaluator_options is not None:
            return self.evaluator_options
        from .loader import KindBroken

        try:
            declared = self.declared()
        except KindBroken:
            return ()
        if declared is None:
            return _with_roles((), self.model_roles)
        return _with_roles(tuple(declared.options), self.model_roles or tuple(declared.roles))

    def standalone_module(self) -> str | None:
        """The module the release's evaluate.py runs: `standalone` when said ("" : none), else the
        evaluator module when it declares its evaluator."""
        if self.standalone is not None:
            return self.standalone or None
        return self.evaluator if self.evaluator and self.declared() is not None else None

    def resampled(self) -> Resampling | None:
        """What its intervals resample: `resampling` when said, else its declaration's unit."""
        if self.resampling is not None:
            return self.resampling
        declared = self.declared()
        if declared is None:
            return None
        shared = f"the {declared.items_name} of one {declared.cluster}" if declared.cluster else ""
        return Resampling(declared.unit, declared.units, shared)

    def _check_options(self, declared) -> None:
        """An option the kind declares that its declaration lacks would be offered on the command
        line and never reach the evaluation (nor the release's script): refused, naming it."""
        if declared is None or self.evaluator_options is None:
            return
        known = {o.dest for o in declared.options} | {r.dest for r in declared.roles}
        missing = [o.flag for o in self.evaluator_options if o.dest not in known]
        if missing:
            from .loader import KindBroken

            raise KindBroken(
                self,
                f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} in its Kind.evaluator_options but not "
                f"in {self.evaluator}.DECLARED.options, so the evaluation would never see {'it' if len(missing) == 1 else 'them'}",
                "declare an option once, in DECLARED.options (the Kind reads it from there)",
            )

    def option_values(self, given: dict[str, Any]) -> dict[str, Any]:
        """The evaluator's options with their defaults, updated by what was given."""
        values = {o.dest: o.default for o in self.options()}
        values.update({k: v for k, v in given.items() if v is not None})
        return values


def _with_roles(options: tuple[EvaluatorOption, ...], roles) -> tuple[EvaluatorOption, ...]:
    """The options, and a flag for each model role besides the model under test not among them."""
    taken = {o.dest for o in options}
    return options + tuple(
        EvaluatorOption(r.flag, r.help, metavar=r.metavar, required=r.required)
        for r in roles
        if r.dest not in taken and r.name != "model"
    )


def _replace(value, **changes):
    import dataclasses

    return dataclasses.replace(value, **changes)
