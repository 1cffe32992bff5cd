"""A release's evaluate.py for a kind that declares its evaluator (`evaluation.declared`): the
standalone module `release/runtime/cli.py` runs, made from the declaration, so the script and
`workbench evaluate` compute the same document with the same code and no copy of it.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

from ...core.errors import WorkbenchError
from ...evaluation.declared import Declared, ScoresFile
from ...models.roles import CLASSIFIER, EMBEDDER, UNDER_TEST
from .release import Refused, dataset_label


def standalone_of(module):
    """The standalone module cli.main runs: the module itself, or one made from its `DECLARED`."""
    declared = getattr(module, "DECLARED", None)
    return DeclaredStandalone(declared) if isinstance(declared, Declared) else module


def _load(role, name: str, spec, runtimes: dict):
    if role.uses == EMBEDDER:
        return _embedder(name, spec, runtimes)
    if role.uses == CLASSIFIER:
        from .classify import load_classifier_standalone

        return load_classifier_standalone(name, spec, runtimes)
    from .lm import load_lm

    return load_lm(name, spec, runtimes)


def _embedder(name: str, spec, runtimes: dict):
    """A sentence-embedding model (`roles.EMBEDDER`), found as the script finds any model."""
    from ...core.errors import ModelError
    from ...models.embedding import open_embedder
    from .models import model_ref

    try:
        embedder = open_embedder(model_ref(name), spec)
    except ModelError as exc:
        raise Refused(str(exc)) from None
    except ImportError:
        raise Refused("an embedding model needs torch and transformers (pip install torch transformers)") from None
    runtimes[name] = embedder.runtime
    return embedder


# How a release's script opens a model the kind opens itself (`Declared.open_model`): no project, no cache.
HOW = {"root": None, "cache_path": None, "config": None}


class DeclaredStandalone:
    """TITLE, MEASURES, DATA, add_options, check_options and evaluate, as cli.py expects them."""

    def __init__(self, declared: Declared):
        self.declared = d = declared
        self.TITLE = d.title
        self.MEASURES = (
            ", ".join(s.title for s in d.statistics)
            + f", overall and per {d.group_name}"
            + (f"; {', '.join(g.title for g in d.gaps)}" if d.gaps else "")
            + "."
        )
        self.DATA = d.data
        self.CHAT_TEMPLATE = d.takes_chat_template  # cli.py offers --apply-chat-template where it is
        self.MODEL_HELP = next((r.help for r in d.roles if r.name == UNDER_TEST.name), UNDER_TEST.help)
        others = [r for r in d.roles if r.name != UNDER_TEST.name]
        self.EXAMPLE = "".join(f" {r.flag} {r.metavar}" for r in others if r.required) + "".join(
            f" {o.flag} {o.metavar or o.dest.upper()}" for o in d.options if o.required
        )  # what every command must name: the required roles and options
        self.COMMAND = f"python evaluate.py --model MODEL{self.EXAMPLE} --json scores.json"
        if d.read_scores is not None:  # --predictions in place of --model (cli.py), as `workbench evaluate`
            default = "a model's scores of the items in the kind's --predictions layout"
            self.PREDICTIONS = getattr(d.score, "exchanged", default)  # a `Completions`: the completions
        for name, value in d.script.items():  # what the declaration says of its script (REQUIREMENTS, ...)
            setattr(self, name, value)

    def add_options(self, parser) -> None:
        d = self.declared
        for role in d.roles:
            if role.name != UNDER_TEST.name:
                parser.add_argument(role.flag, dest=role.dest, metavar=role.metavar, help=role.help)
        for option in d.options:
            parser.add_argument(
                option.flag,
                dest=option.dest,
                type=option.type,
                default=option.default,
                choices=option.choices or None,
                metavar=option.metavar or None,
                help=option.help,
            )
        if d.rules:
            parser.add_argument(
                "--score-rule",
                choices=list(d.rules),
                default=next(iter(d.rules)),
                help="; ".join(f"{r}: {what}" for r, what in d.rules.items()),
            )

    def check_options(self, args) -> str | None:
        missing = [
            r
            for r in self.declared.roles
            if r.name != UNDER_TEST.name and r.required and not getattr(args, r.dest, None)
        ]
        if missing:
            return f"{missing[0].flag} {missing[0].metavar} is required: {missing[0].help}"
        if self.declared.check is not None:
            try:
                self.declared.check(self._options(args))
            except WorkbenchError as exc:
                return str(exc)
        return None

    def provenance(self, args) -> dict:
        """What the declaration adds to the provenance (a file the user passed, by its hash)."""
        from ...core.ids import file_sha256
        from .cli import named_predictions

        d = self.declared
        found = d.provenance(self._options(args)) if d.provenance is not None else {}
        files = named_predictions(args)
        if files:  # each file by the model it stands for, as `workbench evaluate`'s provenance records it
            found["prediction_files"] = {
                name: {"path": str(path.resolve()), "sha256": file_sha256(path) if path.is_file() else None}
                for name, path in files.items()
            }
        return found

    def _options(self, args) -> dict:
        d = self.declared
        options = {o.dest: getattr(args, o.dest, o.default) for o in d.options}
        if d.rules:
            options["score_rule"] = args.score_rule
        return options

    def evaluate(self, args, run, folder, origin, manifest):
        from .cli import named_predictions

        d = self.declared
        files = named_predictions(args)  # scores read from files, in place of models
        options = {o.dest: getattr(args, o.dest, o.default) for o in d.options}
        if d.rules and not files:  # scores read from a file follow no rule of ours
            options["score_rule"] = args.score_rule
        document = {}
        if d.load is not None:  # told what the scores call the data set and its revision, as workbench is
            known = {"label": dataset_label(origin), "revision": origin.get("revision")}
            try:
                source = d.load(str(folder), {**options, "strict": False, **known})
            except WorkbenchError as exc:
                raise Refused(f"{folder}: {d.data} cannot be read ({exc}); nothing was scored") from None
            items, document = source.items, source.document
            for line in source.notes:
                print(line, file=sys.stderr)
        else:
            path = folder / d.data
            if not path.is_file():
                raise Refused(f"{folder}: no {d.data}")
            items = d.read(path)
        d = d.given(options, items)
        roles = {r.name: getattr(args, r.dest, None) for r in d.roles if r.name != UNDER_TEST.name}

        @contextmanager
        def progress_for(name, total):
            print(f"scoring {len(items)} {d.items_name} with {name} ...", file=sys.stderr)
            yield lambda n: None

        doc, _ = d.evaluate_items(
            items,
            dataset_label(origin),
            options,
            args.intervals,
            lambda role, name: (
                ScoresFile(files[name])
                if files and role.name == UNDER_TEST.name
                else _load(role, name, args.spec, run.runtimes)
                if d.open_model is None
                else d.open_model(role, name, {**HOW, "spec": args.spec, "runtimes": run.runtimes, "options": options})
            ),
            args.model or list(files),
            roles,
            progress_for,
            print,
            document,
            keep_rows=False,  # no items file
        )
        for line in d.summary(doc) if d.summary else []:
            print(line, file=sys.stderr)
        for name, entry in doc["models"].items():
            shown = ", ".join(
                f"{s.title} {entry['overall'][s.key]:.{s.digits}f}"
                + (f" ({s.neutral:g} = unbiased)" if s.neutral is not None else "")
                for s in d.statistics
                if (not s.at or "overall" in s.at) and entry["overall"].get(s.key) is not None  # given overall
            )
            print(f"{name}: {shown} ({entry['overall']['n']} {d.items_name})")
        revisions = {name: entry["revision"] for name, entry in doc["models"].items()}
        return doc, revisions
