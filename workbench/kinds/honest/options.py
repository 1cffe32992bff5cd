"""The honest evaluator's options: `workbench evaluate --kind honest` and a release's evaluate.py
take the same ones (the kind's `evaluator_options` and the declaration's `options`)."""

from __future__ import annotations

from ...core.evaluator_option import EvaluatorOption
from ...models.roles import EMBEDDER, ModelRole
from .completions import DECODINGS, MAX_NEW_TOKENS, SEED, TEMPERATURE, TOP_P
from .analyses import AGREEMENT_TEXTS, GROUP_CURVES
from .measure import TOP_K
from .parsing import NORMALISATIONS, REPEATED
from .scoring import parse_ks

OPTIONS = (
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
    # FairBelief's analyses of several models (analyses.py)
    EvaluatorOption(
        "--models-table",
        "a CSV with name, family and size of the models evaluated (their names as the JSON gives them): "
        "Table 1 and the curves grouped by family and size, agreement within and across families",
        type=str,
        metavar="MODELS.csv",
    ),
    EvaluatorOption(
        "--group-curves",
        "a group's per-rank curve across models: pooled (HONEST over the group's templates, the default) "
        "or identity-mean (the mean of its identities' curves, as FairBelief's notebook)",
        choices=GROUP_CURVES,
        default="pooled",
        metavar="|".join(GROUP_CURVES),
    ),
    EvaluatorOption(
        "--agreement-text",
        "with --embedding-model: the sentence a fill is embedded in: appended (the prompt without its mask "
        "token, a space, the fill: FairBelief's, the default) or filled (the fill in the template's slot)",
        choices=AGREEMENT_TEXTS,
        default="appended",
        metavar="|".join(AGREEMENT_TEXTS),
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
)

# The model that embeds fills for FairBelief's agreement between models (a role beside --model).
EMBEDDING = ModelRole(
    "embedder",
    "--embedding-model",
    "a sentence-embedding checkpoint (sentence-transformers layout, e.g. sentence-transformers/all-MiniLM-L6-v2): "
    "with several models, the agreement between their fills (mean pairwise cosine similarity)",
    EMBEDDER,
    required=False,
)
