"""CAT templates: the project's own YAML (or JSON) format for writing context association tests.

One file is one subtopic of one split:

    format: workbench-stereoset/1
    id: gender-work                  # default: the file name
    domain: gender                   # StereoSet's bias_type
    subtopic: work                   # optional (default: the id)
    split: intrasentence             # or intersentence
    targets: [women, men]            # the target terms
    contexts:
      - text: "Most {{TARGET}} in the office are BLANK."   # one CAT per target
      - target: women                                      # only this target
        text: "The women on the board are BLANK."
        options: {stereotype: .., anti-stereotype: .., unrelated: ..}

An intrasentence context holds exactly one BLANK; its options are the words in its place, and
options the writer leaves out are proposed by the masked LM (stage `propose`) and labelled by
the validators. An intersentence context is a sentence; its options are the three
continuations, all of them written. `{{TARGET}}` renders the target term (capitalised when it
opens the text). Every problem names the file, the field path and the line, and all of them
are reported at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import Problem, display_path
from ...core.ids import file_sha256, normalise_text, short_hash
from ...authoring import text as tt
from ...authoring.files import (
    RawFile,
    fail_on_errors,
    find_template_files,
    nonempty_string,
    read_file,
    did_you_mean,
    unknown_fields,
)
from .scheme import GOLD

FORMAT = "workbench-stereoset/1"
NLI_FORMAT = "workbench-template/1"
SPLITS = ("intrasentence", "intersentence")
BLANK = "BLANK"
TARGET = "TARGET"
TOP_LEVEL = {"format", "id", "domain", "subtopic", "split", "targets", "contexts", "description"}
CONTEXT_KEYS = {"text", "target", "options"}


@dataclass
class Context:
    index: int
    text: str  # as written: BLANK and {{TARGET}} kept
    target: str | None  # the one target it is for (None: every target)
    options: dict[str, str]  # gold label -> option as written (may be partial for intrasentence)


@dataclass
class CatTemplate:
    id: str
    domain: str
    subtopic: str
    split: str
    targets: list[str]
    contexts: list[Context]
    path: Path | None = None
    sha256: str = ""

    def cats(self) -> list[Cat]:
        """Every CAT this template writes: each context once per target it applies to."""
        out = []
        for c in self.contexts:
            for target in [c.target] if c.target else self.targets:
                out.append(
                    Cat(self, c, target, render(c.text, target), {g: render(o, target) for g, o in c.options.items()})
                )
        return out


@dataclass
class Cat:
    template: CatTemplate
    context_spec: Context
    target: str
    context: str  # rendered; BLANK kept (intrasentence)
    options: dict[str, str] = field(default_factory=dict)  # gold label -> rendered option

    @property
    def id(self) -> str:
        """Stable over edits elsewhere in the file: the split, target and context decide it."""
        return cat_id(self.template.split, self.target, self.context)


def cat_id(split: str, target: str, context: str) -> str:
    return short_hash("stereoset-cat", split, normalise_text(target), normalise_text(context))


def sentence_id(cat: str, sentence: str) -> str:
    return short_hash(cat, normalise_text(sentence))


def render(text: str, target: str) -> str:
    """{{TARGET}} replaced by the term, capitalised where it opens the text; spaces collapsed."""
    stripped = text.strip()
    out = tt.render(stripped, {TARGET: target})
    if tt.PLACEHOLDER.match(stripped) and out[:1].islower():
        out = out[0].upper() + out[1:]
    return normalise_text(out)


def fill_blank(context: str, option: str) -> tuple[str, tuple[int, int]]:
    """The sentence with `option` in place of BLANK, and where the option sits. An option that
    opens the sentence is capitalised, as a writer would; the rest of the context is kept as
    it is, so the sentence matches its context outside the blank (the evaluator checks it)."""
    before, after = context.split(BLANK, 1)
    word = option.strip()
    if not before.strip():
        word = word[:1].upper() + word[1:]
    return before + word + after, (len(before), len(before) + len(word))


# -- checking --------------------------------------------------------------------------------------------
def _string(value: Any, raw: RawFile, path: tuple, problems: list[Problem], what: str) -> str | None:
    text = nonempty_string(value, raw, path, problems, what)
    return None if text is None else text.strip()


def _check_text(value: str, raw: RawFile, path: tuple, problems: list[Problem]) -> None:
    """Braces and placeholders: {{TARGET}} is the only placeholder; masks are written BLANK."""
    for message in tt.syntax_problems(value):
        if "mask" not in message:
            problems.append(raw.problem(path, message))
    for name in tt.placeholders(value):
        if name != TARGET:
            problems.append(
                raw.problem(path, f"unknown placeholder {{{{{name}}}}}: CAT templates know only {{{{TARGET}}}}")
            )
    if tt.MASK_LIKE.search(value):
        problems.append(
            raw.problem(path, f"write {BLANK} where the option goes, not {tt.MASK_LIKE.search(value).group(0)}")
        )


def _blanks(text: str, split: str, raw: RawFile, path: tuple, problems: list[Problem]) -> None:
    count = text.count(BLANK)
    if split == "intrasentence":
        if count == 0:
            hint = f" (the marker is the upper-case word {BLANK})" if "blank" in text.lower() else ""
            problems.append(raw.problem(path, f"no {BLANK} in an intrasentence context{hint}: {text!r}"))
        elif count > 1:
            problems.append(raw.problem(path, f"{count} BLANKs in the context, expected exactly one: {text!r}"))
    elif count:
        problems.append(
            raw.problem(
                path,
                f"{BLANK} belongs in intrasentence contexts; an intersentence context is a "
                "whole sentence and its options are the continuations",
            )
        )


def check_template(raw: RawFile) -> tuple[CatTemplate | None, list[Problem]]:
    problems: list[Problem] = []
    data = raw.data
    if not isinstance(data, dict):
        return None, [raw.problem((), f"a CAT template is a mapping of fields, not a {type(data).__name__}")]
    fmt = data.get("format", FORMAT)
    if fmt == NLI_FORMAT:
        return None, [
            raw.problem(
                ("format",), f"an NLI template ({NLI_FORMAT}) in a stereoset project; CAT templates are {FORMAT}"
            )
        ]
    if fmt != FORMAT:
        problems.append(raw.problem(("format",), f"unsupported format {fmt!r}; expected {FORMAT!r}"))
    unknown_fields(raw, (), data, TOP_LEVEL, problems)

    tid = data.get("id", raw.path.stem)
    tid = _string(tid, raw, ("id",), problems, "id") or raw.path.stem
    domain = None
    if "domain" not in data:
        problems.append(
            raw.problem(("domain",), "missing field: every template names its domain (StereoSet's bias_type)")
        )
    else:
        domain = _string(data["domain"], raw, ("domain",), problems, "domain")
    subtopic = _string(data.get("subtopic", tid), raw, ("subtopic",), problems, "subtopic") or tid
    split = data.get("split")
    if split is None:
        problems.append(raw.problem(("split",), f"missing field: split ({' or '.join(SPLITS)})"))
    elif split not in SPLITS:
        problems.append(raw.problem(("split",), f"split must be {' or '.join(SPLITS)}, not {split!r}"))
        split = None

    targets: list[str] = []
    raw_targets = data.get("targets")
    if raw_targets is None:
        problems.append(raw.problem(("targets",), "missing field: targets (the target terms the contexts are about)"))
    elif not isinstance(raw_targets, list) or not raw_targets:
        problems.append(raw.problem(("targets",), "targets must be a non-empty list of target terms"))
    else:
        seen: dict[str, int] = {}
        for i, t in enumerate(raw_targets):
            value = _string(t, raw, ("targets", i), problems, "target term")
            if value is None:
                continue
            if value.lower() in seen:
                problems.append(
                    raw.problem(("targets", i), f"duplicate target {value!r} (same as targets[{seen[value.lower()]}])")
                )
                continue
            seen[value.lower()] = i
            targets.append(value)

    contexts: list[Context] = []
    raw_contexts = data.get("contexts")
    if raw_contexts is None:
        problems.append(raw.problem(("contexts",), "missing field: contexts (a template needs at least one)"))
    elif not isinstance(raw_contexts, list) or not raw_contexts:
        problems.append(raw.problem(("contexts",), "contexts must be a non-empty list"))
    else:
        for i, item in enumerate(raw_contexts):
            context = _check_context(item, i, split, targets, raw, problems)
            if context is not None:
                contexts.append(context)

    if any(p.severity == "error" for p in problems):
        return None, problems
    template = CatTemplate(tid, domain or "", subtopic, split, targets, contexts, raw.path, file_sha256(raw.path))
    seen_cats: dict[str, int] = {}
    for cat in template.cats():
        i = cat.context_spec.index
        if cat.id in seen_cats:
            problems.append(
                raw.problem(
                    ("contexts", i, "text"),
                    f"the same CAT as contexts[{seen_cats[cat.id]}] (target {cat.target!r}: {cat.context!r})",
                )
            )
        seen_cats.setdefault(cat.id, i)
    if any(p.severity == "error" for p in problems):
        return None, problems
    return template, problems


def _check_context(
    item: Any, i: int, split: str | None, targets: list[str], raw: RawFile, problems: list[Problem]
) -> Context | None:
    path = ("contexts", i)
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict):
        problems.append(raw.problem(path, "a context is a string or a mapping {text, target, options}"))
        return None
    before = len(problems)
    unknown_fields(raw, path, item, CONTEXT_KEYS, problems)
    text = _string(item.get("text"), raw, path + ("text",), problems, "context text")
    if text is not None:
        _check_text(text, raw, path + ("text",), problems)
        if split:
            _blanks(text, split, raw, path + ("text",), problems)
    target = item.get("target")
    if target is not None:
        target = _string(target, raw, path + ("target",), problems, "target")
        if target is not None and targets and target not in targets:
            problems.append(
                raw.problem(path + ("target",), f"{target!r} is not one of the template's targets {targets}")
            )
    elif text is not None and len(targets) > 1 and TARGET not in tt.placeholders(text):
        problems.append(
            raw.problem(
                path + ("text",),
                "mentions no {{TARGET}}, so every target would get the same "
                f"context: use {{{{TARGET}}}} or name its target (one of {targets})",
            )
        )
    options: dict[str, str] = {}
    raw_options = item.get("options")
    if raw_options is not None and not isinstance(raw_options, dict):
        problems.append(raw.problem(path + ("options",), f"options map gold labels ({', '.join(GOLD)}) to options"))
    elif raw_options is not None:
        seen: dict[str, str] = {}
        for key, value in raw_options.items():
            opath = path + ("options", key)
            if key not in GOLD:
                problems.append(
                    raw.problem(
                        opath, f"unknown gold label {key!r}: {did_you_mean(key, GOLD)}(one of {', '.join(GOLD)})"
                    )
                )
                continue
            option = _string(value, raw, opath, problems, f"{key} option")
            if option is None:
                continue
            _check_text(option, raw, opath, problems)
            if BLANK in option:
                problems.append(
                    raw.problem(
                        opath, f"an option holds no {BLANK} (an intrasentence option is what goes in its place)"
                    )
                )
            if split == "intrasentence" and "\n" in option:
                problems.append(raw.problem(opath, "an intrasentence option is a word or a few, on one line"))
            same = option.lower()
            if same in seen:
                problems.append(
                    raw.problem(
                        opath,
                        f"the same option as options.{seen[same]}: the three labels need three different sentences",
                    )
                )
            seen.setdefault(same, key)
            options[key] = option
    if split == "intersentence":
        missing = [g for g in GOLD if g not in options]
        option_field = raw.problem(path + ("options",), "").field
        told = any(p.field.startswith(option_field + ".") for p in problems[before:])
        if missing and not told:
            problems.append(
                raw.problem(
                    path + (("options",) if raw_options is not None else ()),
                    f"an intersentence context needs all three options (missing: "
                    f"{', '.join(missing)}); the masked LM proposes words for BLANK only",
                )
            )
    if len(problems) > before or text is None:
        return None
    return Context(i, text, target, options)


# -- loading ----------------------------------------------------------------------------------------------
def load_one(path: Path) -> tuple[CatTemplate | None, list[Problem], RawFile | None]:
    raw, problems = read_file(path)
    if raw is None:
        return None, problems, None
    template, more = check_template(raw)
    return template, problems + more, raw


def load_templates(paths: list[Path]) -> tuple[list[CatTemplate], list[Problem]]:
    """Every file is checked even when an earlier one is broken; ids and CATs are unique across files."""
    files, problems = find_template_files(paths)
    templates: list[CatTemplate] = []
    by_id: dict[str, CatTemplate] = {}
    by_cat: dict[str, tuple[CatTemplate, int]] = {}
    for f in files:
        template, found, raw = load_one(f)
        problems += found
        if template is None:
            continue
        if template.id in by_id:
            problems.append(
                raw.problem(
                    ("id",), f"template id {template.id!r} is also used by {display_path(by_id[template.id].path)}"
                )
            )
            continue
        clashes = []
        for cat in template.cats():
            if cat.id in by_cat:
                other, index = by_cat[cat.id]
                clashes.append(
                    raw.problem(
                        ("contexts", cat.context_spec.index, "text"),
                        f"the same CAT (target {cat.target!r}, {template.split}) as "
                        f"contexts[{index}] of {display_path(other.path)}",
                    )
                )
        if clashes:
            problems += clashes
            continue
        for cat in template.cats():
            by_cat[cat.id] = (template, cat.context_spec.index)
        by_id[template.id] = template
        templates.append(template)
    return templates, problems


def load_templates_or_fail(paths: list[Path]) -> tuple[list[CatTemplate], list[Problem]]:
    templates, problems = load_templates(paths)
    fail_on_errors(problems, "CAT templates", "workbench validate")
    return templates, problems
