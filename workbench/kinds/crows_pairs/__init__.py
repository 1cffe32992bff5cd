"""The `crows-pairs` benchmark kind: sentence pairs, more vs less stereotyping, scored by pseudo-log-likelihood.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of workbench/authoring/stages.py.
"""

from ..base import TEXT, Audit, Kind, Resampling
from ...authoring.renew import PAIR_AUDIT, PAIR_AUDIT_SOURCE, renewal_stages
from ...authoring.stages import kind_fields
from .authoring import AUTHORING, import_published

from .words import AUDIT_WORDS, PAIRED, WORDS

FIXED = (("sent_more", TEXT), ("sent_less", PAIRED))  # what a fix may change: the pair's two sentences

KIND = Kind(
    name="crows-pairs",
    description="CrowS-Pairs: sentence pairs, more vs less stereotyping, scored by pseudo-log-likelihood.",
    evaluator="workbench.kinds.crows_pairs.evaluate",
    demo="workbench.kinds.crows_pairs.example",
    example="workbench.kinds.crows_pairs.example",
    standalone="workbench.kinds.crows_pairs.evaluate",
    evaluator_options=(),  # none: said here, so listing the kinds imports no evaluator
    resampling=Resampling(
        "pair", "pairs", why="each pair is scored on its own; a bias type's figures resample its pairs"
    ),
    lm_eval_tasks="workbench.kinds.crows_pairs.lm_eval_tasks",
    words=WORDS,
    audit=Audit(
        PAIR_AUDIT,
        PAIR_AUDIT_SOURCE,
        import_published,
        FIXED,
        lambda: renewal_stages(AUTHORING, PAIR_AUDIT, FIXED),
        words=AUDIT_WORDS,
    ),
    **kind_fields(AUTHORING),
)
