"""The `honest` benchmark kind: hurtful completions of identity templates, the top-K curve.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of workbench/authoring/stages.py.
"""

from ..base import TEXT, Audit, EvaluatorOption, Kind, Resampling
from ...authoring.renew import PAIR_AUDIT_SOURCE, audit_scheme, renewal_stages
from ...authoring.stages import kind_fields
from .authoring import AUTHORING, import_published, refresh, stages

# The audit of a template (docs/renewing.md): what the HONEST templates are meant to be (Nozza,
# Bianchi and Hovy 2021: a neutral sentence whose one slot takes a word about the identity, the
# fills judged with a word lexicon), and Blodgett et al.'s pitfalls that apply to a template.
AUDIT = audit_scheme(
    "template-audit",
    "template",
    (
        (
            "slot-unfit",
            "the [M] slot cannot take a word about the identity (it asks for a place, a time, a number ...)",
        ),
        ("identity-mismatch", "does not fit the identities put into it (their number, gender or agreement)"),
        (
            "lexicon-mismatch",
            "its fills cannot be judged with a word lexicon (the slot takes a phrase, or a word whose "
            "hurtfulness depends on the sentence)",
        ),
        ("not-neutral", "the template itself is hurtful or leading, so its fills measure the template, not the model"),
        ("unnatural", "ungrammatical or unnatural beyond a fix"),
    ),
    "Keep this template, fix its text (its prompts follow), or drop it, and why?",
)
AUDIT_SOURCE = (
    'Nozza, Bianchi and Hovy (2021), "HONEST: Measuring Hurtful Sentence Completion in Language Models", '
    "NAACL 2021, https://aclanthology.org/2021.naacl-main.191/; " + PAIR_AUDIT_SOURCE
)
FIXED = (("raw", TEXT),)  # what a fix may change: the template (with [I]); its prompts are made again from it
from .completions import DECODINGS, MAX_NEW_TOKENS, SEED, TEMPERATURE, TOP_P
from .measure import TOP_K
from .parsing import NORMALISATIONS, REPEATED
from .scoring import parse_ks
from .words import WORDS

KIND = Kind(
    name="honest",
    description="HONEST: hurtful completions of identity templates, the top-K curve.",
    evaluator="workbench.kinds.honest.evaluate",
    demo="workbench.kinds.honest.example",
    example="workbench.kinds.honest.example",
    standalone="workbench.kinds.honest.standalone",
    resampling=Resampling(
        "template",
        "templates",
        shared_by="the identities filled into it",
        why="every identity filled into one template shares its wording",
    ),
    evaluator_options=(
        EvaluatorOption(
            "--lexicon",
            "the hurtful-word lexicon (HurtLex TSV: lemma, category[, level]); required",
            type=str,
            metavar="LEXICON.tsv",
            required=True,
        ),
        EvaluatorOption(
            "--top-k",
            "completions per template (K), or a comma-separated list of K (1,5,10,20): HONEST@k is reported at each",
            type=parse_ks,
            default=TOP_K,
            metavar="K[,K...]",
        ),
        EvaluatorOption(
            "--repeated-templates",
            "how a template listed on several rows counts: rows (each row, the "
            "default) or once (the last row only, as the reference HONEST tool does)",
            choices=REPEATED,
            default="rows",
            metavar="rows|once",
        ),
        EvaluatorOption(
            "--lemma-normalisation",
            "how lexicon lemmas and fills are normalised before they are "
            "compared: workbench (accents stripped by Unicode decomposition and a table of common "
            "letters, the default) or unidecode (transliterated, as the reference HONEST tool does; "
            "needs pip install unidecode)",
            choices=NORMALISATIONS,
            default="workbench",
            metavar="workbench|unidecode",
        ),
        EvaluatorOption(
            "--group-by", "grouping column (default: category, mf or type, whichever is there)", metavar="COLUMN"
        ),
        # --score-rule generation (causal LMs): K generated completions per template. No declared
        # defaults, so that one given without the rule is refused (completions.completions_for).
        EvaluatorOption(
            "--max-new-tokens",
            f"with --score-rule generation: new tokens per completion (default {MAX_NEW_TOKENS})",
            type=int,
            metavar="N",
        ),
        EvaluatorOption(
            "--decoding",
            "with --score-rule generation: greedy (one completion per template, the "
            "default for K = 1) or sample (K seeded samples, the default for K > 1)",
            choices=DECODINGS,
            metavar="greedy|sample",
        ),
        EvaluatorOption(
            "--temperature",
            f"with --score-rule generation and sampling: the temperature (default {TEMPERATURE})",
            type=float,
            metavar="T",
        ),
        EvaluatorOption(
            "--top-p",
            f"with --score-rule generation and sampling: the nucleus (top-p) mass (default {TOP_P})",
            type=float,
            metavar="P",
        ),
        EvaluatorOption(
            "--generation-seed",
            f"with --score-rule generation and sampling: completion r of every "
            f"template is sampled with seed S + r (default {SEED})",
            type=int,
            metavar="S",
        ),
    ),
    words=WORDS,
    audit=Audit(AUDIT, AUDIT_SOURCE, import_published, FIXED, lambda: renewal_stages(AUTHORING, AUDIT, FIXED, refresh)),
    **{**kind_fields(AUTHORING), "stages": stages},
)
