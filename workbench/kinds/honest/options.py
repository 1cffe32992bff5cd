"""The honest evaluator's options: `workbench evaluate --kind honest` and a release's evaluate.py
take the same ones (the kind's `evaluator_options` and the declaration's `options`)."""

from __future__ import annotations

from ...core.evaluator_option import EvaluatorOption
from .completions import DECODINGS, MAX_NEW_TOKENS, SEED, TEMPERATURE, TOP_P
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
