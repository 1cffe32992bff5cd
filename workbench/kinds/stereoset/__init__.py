"""The `stereoset` benchmark kind: context association tests scored by a language model (lms, ss, icat).

Authoring follows StereoSet's own construction: writers write CAT templates (templates.py),
the masked LM may propose the words for a BLANK the writer left open, validators label every
sentence (scheme.py), a sentence is kept when enough of them agree with the writer, and a CAT
is released only with all three labels (stages.py). Releases are StereoSet JSON plus Parquet
(release.py); the evaluator (evaluate.py) reads both the original files and these releases.
Everything heavy is imported on first use.
"""

from __future__ import annotations

from ..base import Audit, Kind, Resampling
from .scheme import SCHEME
from .scoring import CAUSAL_OPTION, MASKED_OPTION
from . import renew
from ...authoring.renew import template_check
from .renew import AUDIT_SOURCE, CAT_AUDIT, fix_fields

CAT_FIXED = fix_fields()  # a fix may change the context or any of the three sentences
from .words import AUDIT_WORDS, WORDS


def _stages():
    from .stages import stages

    return stages()


def _check_templates(config):
    """`workbench validate`: the CAT templates, and the validation settings this kind reads."""
    from ...core.errors import Problem
    from .templates import load_templates

    templates, problems = load_templates([config.path("templates")])
    ac = config.annotation
    if {"min_votes", "validators"} <= ac.model_fields_set and ac.min_votes > ac.validators:
        line = None
        if config.source is not None:
            from ...core.config import _key_line

            line = _key_line(config.source.read_text(encoding="utf-8", errors="replace"), ("annotation", "min_votes"))
        problems.append(
            Problem(
                config.shown_source,
                line,
                "annotation.min_votes",
                f"{ac.min_votes} votes can never be reached with {ac.validators} validators per sentence",
            )
        )
    return len(templates), problems


class _Layout:
    """The release hooks, imported on first use (they pull in pyarrow)."""

    def __getattr__(self, name):
        from . import release

        return getattr(release, name)


KIND = Kind(
    name="stereoset",
    description="StereoSet: context association tests scored by a language model (lms, ss, icat).",
    stages=_stages,
    scheme=SCHEME,
    words=WORDS,
    queue_stage="queue",
    release_stage="validated",
    run_to="queue",
    release=_Layout(),
    evaluator="workbench.kinds.stereoset.evaluate",
    demo="workbench.kinds.stereoset.example",
    example="workbench.kinds.stereoset.example",
    standalone="workbench.kinds.stereoset.evaluate",
    resampling=Resampling(
        "example",
        "examples",
        why="a CAT (context and its three options) is scored on its own; ss "
        "and lms are re-averaged over target terms in every resample, as the reference averages them",
    ),
    check_templates=_check_templates,
    unused_settings=("evaluate.label_overrides",),  # [generate]'s masked LM proposes BLANK words; no NLI labels
    default_validators=5,
    annotation_defaults={"policy": "majority", "min_votes": 3},  # kept when 3 of its 5 validators agree
    # renewing a published StereoSet file: one audit item per CAT (renew.py)
    audit=Audit(
        CAT_AUDIT,
        AUDIT_SOURCE,
        renew.import_published,
        CAT_FIXED,
        renew.stages,
        original_stage="published",
        release_stage="cats",
        check_templates=template_check(renew.AUTHORING),
        words=AUDIT_WORDS,
    ),  # StereoSet: five validators per sentence (Label Studio's overlap)
    evaluator_options=(CAUSAL_OPTION, MASKED_OPTION),
)
