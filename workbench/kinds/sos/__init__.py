"""The `sos` benchmark kind: profane vs nice sentences about one identity, scored like CrowS pairs.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of workbench/authoring/stages.py.
"""

from ..base import TEXT, Audit, Kind, Resampling
from ...authoring.renew import PAIR_AUDIT, PAIR_AUDIT_SOURCE, renewal_stages
from ...authoring.stages import kind_fields
from .authoring import AUTHORING, import_published

FIXED = (("profane", TEXT), ("nice", "nice"))  # what a fix may change: the pair's two sentences
from .metrics import TOKEN_RULE
from .words import WORDS

KIND = Kind(
    name="sos",
    description="SOS_LM: profane vs nice sentences about one identity, scored like CrowS pairs.",
    evaluator="workbench.kinds.sos.evaluate",
    demo="workbench.kinds.sos.example",
    example="workbench.kinds.sos.example",
    standalone="workbench.kinds.sos.evaluate",
    evaluator_options=(TOKEN_RULE,),
    resampling=Resampling(
        "pair",
        "pairs",
        why="each (profane, nice) pair is scored on its own; an attribute's mean over "
        "identities is re-averaged in every resample",
    ),
    lm_eval_tasks="workbench.kinds.sos.lm_eval_tasks",
    words=WORDS,
    audit=Audit(
        PAIR_AUDIT, PAIR_AUDIT_SOURCE, import_published, FIXED, lambda: renewal_stages(AUTHORING, PAIR_AUDIT, FIXED)
    ),
    **kind_fields(AUTHORING),
)
