"""The `nli` kind (BBNLI, BBNLI-next): premise + hypothesis pairs, gold label neutral.

Everything of the loop lives in this folder: templates and the BBNLI import (templates/),
the stages (stages/: expand -> generate (masked-LM fills) -> filter (keep what NLI models get
wrong) -> fluency (a triage score for each unique adversarial hypothesis) -> queue (unique
hypotheses to label) -> counterfactuals (release rows with each sample's group
counterfactual)), the NLI classifier and its label mapping, the card and release layout, the
evaluator, declared (evaluate.py, which is also the release's standalone module; evaluation/:
accuracy, BBNLI's aggregate bias score, the counterfactual measures, several releases side by
side and --predictions), and the commands only this kind has (cli.py).
"""

from __future__ import annotations

from ..base import Audit, Kind, Resampling
from . import renew
from ...authoring.renew import template_check
from .renew import AUDIT_SOURCE, AUDIT_WORDS, FIXED, HYPOTHESIS_AUDIT
from .scheme import NLI_SCHEME
from .settings import ExpandSection, FilterSection, FluencySection, LLMSection, check_settings
from .words import WORDS


def _stages():
    from .stages import counterfactuals, expand, filter, fluency, generate, queue

    return [expand.STAGE, generate.STAGE, filter.STAGE, fluency.STAGE, queue.STAGE, counterfactuals.STAGE]


def _check_templates(config):
    from .templates.loader import load_templates

    templates, problems = load_templates([config.path("templates")])
    return len(templates), problems


def _commands(app) -> None:
    from .cli import register

    register(app)


class _Layout:
    """The release hooks, imported on first use (they pull in pyarrow and the card)."""

    def __getattr__(self, name):
        from . import release

        return getattr(release, name)


KIND = Kind(
    name="nli",
    description="BBNLI / BBNLI-next: templated NLI hypotheses, masked-LM variants, adversarial filtering, "
    "counterfactual pairs; accuracy, aggregate bias, pro/anti and counterfactual measures.",
    stages=_stages,
    scheme=NLI_SCHEME,
    words=WORDS,
    queue_stage="queue",
    release_stage="counterfactuals",
    run_to="queue",
    release=_Layout(),
    standalone="workbench.kinds.nli.evaluate",
    resampling=Resampling(
        "template",
        "templates",
        shared_by="its lexical variants (the fills of one masked hypothesis) and their counterfactual partners",
        why="fills of one template share its wording",
    ),
    evaluator="workbench.kinds.nli.evaluate",
    evaluator_options=(),  # its declaration's --labels is the release script's ([evaluate] label_overrides here)
    check_templates=_check_templates,
    settings={"expand": ExpandSection, "filter": FilterSection, "fluency": FluencySection, "llm": LLMSection},
    lm_eval_tasks="workbench.kinds.nli.lm_eval_tasks",
    check_settings=check_settings,
    commands=_commands,
    demo="workbench.kinds.nli.demo",
    example="workbench.kinds.nli.demo",
    # renewing BBNLI: one audit item per bias hypothesis, the release BBNLI's expansion gives (renew.py)
    audit=Audit(
        HYPOTHESIS_AUDIT,
        AUDIT_SOURCE,
        renew.import_published,
        FIXED,
        renew.stages,
        original_stage="published",
        release_stage="samples",
        check_templates=template_check(renew.AUTHORING),
        words=AUDIT_WORDS,
    ),
)
