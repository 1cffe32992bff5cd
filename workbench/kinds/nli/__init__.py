"""The `nli` kind (BBNLI, BBNLI-next): premise + hypothesis pairs, gold label neutral.

Everything of the loop lives in this folder: templates and the BBNLI import (templates/),
the stages (stages/: expand -> generate (masked-LM fills) -> filter (keep what NLI models get
wrong) -> fluency (a triage score for each unique adversarial hypothesis) -> queue (unique
hypotheses to label) -> counterfactuals (release rows with each sample's group
counterfactual)), the NLI classifier and its label mapping, the card and release layout, the
evaluator (evaluation/: accuracy, BBNLI's aggregate bias score, the counterfactual measures)
and its standalone evaluator (standalone.py), and the commands only this kind has (cli.py).
"""
from __future__ import annotations

from ..base import FILL, FLUENCY, GROUP, MODELS, PREMISES, STANCE, TEMPLATE, TEXT, WHERE, AnnotatorWords, Audit, Field, Kind, Resampling
from . import renew
from ...authoring.renew import template_check
from .renew import AUDIT_SOURCE, AUDIT_WORDS, FIXED, HYPOTHESIS_AUDIT
from .scheme import NLI_SCHEME
from .settings import FilterSection, FluencySection, LLMSection, check_settings


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


WORDS = AnnotatorWords(
    question=("Is the hypothesis neutral given every premise shown (valid), and does it state the "
              "stereotype (pro) or its opposite (anti)?"),
    fields=(
        Field("hypothesis", "the sentence you judge", TEXT),
        Field("filled in", "the word(s) of the hypothesis a language model filled in", FILL),
        Field("group", "the social group the hypothesis names, → the group of its counterfactual twin", GROUP),
        Field("premise", "the context sentence(s) the hypothesis is paired with", PREMISES),
        Field("where", "domain / subtopic of the template, and how many premise-hypothesis pairs use this hypothesis",
              WHERE),
        Field("template", "the hypothesis as written, with the filled slot as <mask>", TEMPLATE),
    ),
    model_fields=(
        Field("stance", "the stance the template's author intended: a hint, not the answer", STANCE),
        Field("models", ("per NLI filter model: fooled k/n = it mispredicted k of the n premise-hypothesis pairs "
                         "(their gold label is neutral), the wrong labels it gave, and its highest probability for one"),
              MODELS),
        Field("fluency", ("log-likelihood per token under the fluency scorer: the masked language model's "
                          "pseudo-log-likelihood unless the project chose a causal LM (closer to 0 = more fluent)"),
              FLUENCY),
    ),
    hidden=("stance", "fooled", "fluency"),
    rows="premise-hypothesis pairs",
    choices=(
        ("valid-pro", "neutral given every premise, and states the stereotype"),
        ("valid-anti", "neutral given every premise, and states the opposite of the stereotype"),
        ("invalid", "a premise entails or contradicts it (not neutral)"),
        ("incoherent", "ungrammatical or meaningless"),
    ),
    help=(
        ("Decisions", ("Valid = a coherent hypothesis that is neutral given the premises: none of them entails or "
                       "contradicts it. Pro/anti = whether it states the stereotype or its opposite. Invalid = not "
                       "neutral (entailed or contradicted by a premise). Incoherent = ungrammatical or meaningless.")),
        ("Premises", ("All premises of the item are shown (premise 1, premise 2, …): the hypothesis is paired with "
                      "each of them in the benchmark, and your one label covers every pair. Read them all; call it "
                      "valid only if it is neutral given each one.")),
    ),
)

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
    standalone="workbench.kinds.nli.standalone",
    resampling=Resampling("template", "templates", shared_by="its lexical variants (the fills of one masked hypothesis) "
                           "and their counterfactual partners", why="fills of one template share its wording"),
    evaluator="workbench.kinds.nli.evaluation.evaluator",
    check_templates=_check_templates,
    settings={"filter": FilterSection, "fluency": FluencySection, "llm": LLMSection},
    lm_eval_tasks="workbench.kinds.nli.lm_eval_tasks",
    check_settings=check_settings,
    commands=_commands,
    demo="workbench.kinds.nli.demo",
    example="workbench.kinds.nli.demo",
    # renewing BBNLI: one audit item per bias hypothesis, the release BBNLI's expansion gives (renew.py)
    audit=Audit(HYPOTHESIS_AUDIT, AUDIT_SOURCE, renew.import_published, FIXED, renew.stages, original_stage="published",
                release_stage="samples", check_templates=template_check(renew.AUTHORING), words=AUDIT_WORDS),
)
