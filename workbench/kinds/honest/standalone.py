"""The `honest` kind's standalone evaluator: HONEST@k on data/templates.tsv with the user's
lexicon, with the parsing, fills, measures and document `workbench evaluate --kind honest`
uses (parsing.py, fills.py, completions.py, measure.py, scoring.py).

The lexicon is not part of a release, so the script takes --lexicon (and --top-k, --score-rule,
--group-by and the generation rule's options, as `workbench evaluate` does) besides the shared
options, and records the lexicon's sha256 in the provenance. A release carries this module and
everything it imports in its evaluator/ folder; its evaluate.py runs it through
`release.runtime.cli.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ...core.errors import InputError
from ...core.ids import file_sha256
from ...core.text import read_text
from ...evaluation.intervals import notes
from ...release.runtime.cli import Run
from ...release.runtime.lm import load_lm
from ...release.runtime.release import dataset_label
from .completions import DECODINGS, MAX_NEW_TOKENS, SEED, TEMPERATURE, TOP_P, completions_for
from .fills import CAUSAL_RULES, MASKED_RULES, score_rule
from .measure import TOP_K
from .parsing import (
    NORMALISATIONS,
    REPEATED,
    parse_lexicon,
    parse_templates,
    release_pin,
)
from .scoring import honest_document, model_entry, parse_ks, score_templates

TITLE = "HONEST"
MEASURES = (
    "the share of hurtful fills among each template's top-k fills (HONEST@k, k = 1 ... K), overall,\n"
    "per identity group and per lexicon category, in percent. A fill is hurtful when it is a lemma\n"
    "of LEXICON.tsv, your hurtful-word lexicon in HurtLex's layout (lemma, category[, level]): it\n"
    "is not part of the release, and its sha256 is written into the provenance."
)
DATA = "data/templates.tsv"
EXAMPLE = " --lexicon LEXICON.tsv --top-k 10"
CARD_OPTIONS = " --lexicon LEXICON.tsv"  # the lexicon is the user's: every command on the card names it
COMMAND = f"python evaluate.py --model MODEL{CARD_OPTIONS} --json scores.json"  # the card says so too


def add_options(parser) -> None:
    """The lexicon and the options that change the measures, as `workbench evaluate` has them."""
    parser.add_argument(
        "--lexicon",
        type=Path,
        required=True,
        help="the hurtful-word lexicon: a TSV in HurtLex's layout (lemma, category[, level])",
    )
    parser.add_argument(
        "--top-k",
        type=parse_ks,
        default=[TOP_K],
        help=f"fills per template, K, or a comma-separated list of K (1,5,10,20): HONEST@k is reported "
        f"at each (default {TOP_K})",
    )
    parser.add_argument(
        "--repeated-templates",
        choices=REPEATED,
        default="rows",
        help="how a template listed on several rows counts: rows (each row, the default) or once "
        "(the last row only, as the reference HONEST tool does)",
    )
    parser.add_argument(
        "--lemma-normalisation",
        choices=NORMALISATIONS,
        default="workbench",
        help="how lemmas and fills are normalised: workbench (the default) or unidecode (as the "
        "reference HONEST tool; needs pip install unidecode)",
    )
    parser.add_argument(
        "--score-rule",
        choices=(*MASKED_RULES, *CAUSAL_RULES),
        help="how a model fills the slot (default: fill-mask for masked LMs, next-word for causal; "
        "generation: a causal LM's K generated completions, scored word by word)",
    )
    parser.add_argument("--group-by", help="grouping column (default: category, mf or type, whichever is there)")
    # Those of --score-rule generation, without defaults: one given without the rule is refused.
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        help=f"with --score-rule generation: new tokens per completion (default {MAX_NEW_TOKENS})",
    )
    parser.add_argument(
        "--decoding",
        choices=DECODINGS,
        help="with --score-rule generation: greedy (the default for K = 1) or sample (K seeded "
        "samples, the default for K > 1)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        help=f"with --score-rule generation and sampling: the temperature (default {TEMPERATURE})",
    )
    parser.add_argument(
        "--top-p", type=float, help=f"with --score-rule generation and sampling: the nucleus mass (default {TOP_P})"
    )
    parser.add_argument(
        "--generation-seed",
        type=int,
        help=f"with --score-rule generation and sampling: completion r of every template is sampled "
        f"with seed S + r (default {SEED})",
    )


def check_options(args) -> str | None:
    if min(args.top_k) < 1:
        return f"--top-k must be at least 1 (got {min(args.top_k)})"
    try:
        completions_for(args.score_rule, max(args.top_k), vars(args))
    except InputError as exc:
        return str(exc)
    return None


def provenance(args) -> dict:
    return {"lexicon": {"file": str(args.lexicon.resolve()), "sha256": file_sha256(args.lexicon)}}


def evaluate(args, run: Run, folder: Path, origin: dict, manifest: dict) -> tuple[dict, dict]:
    """The JSON document and each model's revision, as `workbench evaluate` computes them."""
    label = dataset_label(origin)
    table = folder / "data" / "templates.tsv"
    templates = parse_templates(read_text(table, "template file"), label, table, args.group_by, args.repeated_templates)
    templates.repo, templates.revision = release_pin(manifest)  # the pinned tag is v + the manifest's version
    lexicon = parse_lexicon(read_text(args.lexicon, "lexicon"), args.lexicon, args.lemma_normalisation)
    for note in templates.notes:
        print(f"{label}: {note}", file=sys.stderr)
    for note in lexicon.notes:
        print(f"{args.lexicon}: {note}", file=sys.stderr)
    K = max(args.top_k)  # the fills are ranked: HONEST@k for a smaller k reads the first k of the top K
    completions = completions_for(args.score_rule, K, vars(args))
    models, revisions, hits = {}, {}, {}
    for name in args.model:
        print(f"filling {len(templates.templates)} templates with {name} ...", file=sys.stderr)
        scorer = load_lm(name, args.spec, run.runtimes)
        rule = score_rule(scorer.kind, args.score_rule)
        scores, _, hits[name] = score_templates(scorer, templates.templates, lexicon, K, rule, None, completions)
        models[name] = model_entry(scorer, rule, scores, completions)
        revisions[name] = scorer.ref.revision
        print(
            f"{name}: HONEST@{K} {scores['overall']['honest']:.2f} % (lower is better), "
            f"{len(templates.templates)} templates"
        )
    doc = honest_document(label, templates, lexicon, K, models, args.top_k, hits=hits, intervals=args.intervals)
    for line in notes(doc["uncertainty"]):
        print(line)
    return doc, revisions
