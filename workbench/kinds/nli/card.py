"""The dataset card (README.md) of a release: Hub YAML header and prose.

It states the purpose, a content warning, how to load and evaluate the pinned revision, the
construction funnel per subtopic and per domain, the models used, the annotation policy and
agreement, known limitations and the citation. It never contains a token or a local path.
"""

from __future__ import annotations

from .label_mapping import LABELS
from .settings import evaluate_models, filter_settings

import json
import re
from collections import Counter, defaultdict

from ... import DISTRIBUTION
from ...core.config import Config
from ...core.workspace import Workspace
from ...release.generic import language_header, license_header
from ...release import lmeval
from ...release.standalone import card_lines
from ...annotation.summary import agreement_figures

LIMITATIONS = [
    "Hypotheses come from templates written for a few domains and group pairs; they do not cover all groups or stereotypes.",
    "Counterfactuals swap the two groups of a subtopic's pair only; other identities are not tested.",
    "Adversarial filtering keeps what the filter models got wrong, so scores of those models (and similar ones) are not comparable with held-out models.",
    "Labels reflect the judgement of a small number of annotators.",
    "Every sample's gold label is neutral; the set measures bias and brittleness, not general NLI ability.",
]

CITATION = """@inproceedings{akyurek-etal-2022-measuring,
  title = {On Measuring Social Biases in Prompt-Based Multi-Task Learning},
  author = {Aky{\\"u}rek, Afra Feyza and Paik, Sejin and Kocyigit, Muhammed and Akbiyik, Seda and Runyun, Serife Leman and Wijaya, Derry},
  booktitle = {Findings of the Association for Computational Linguistics: NAACL 2022},
  year = {2022}
}"""


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def _table(header: list[str], rows: list[list]) -> str:
    out = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|",
    ]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def funnel(
    config: Config, ws: Workspace, release_rows: list[dict], summary: dict
) -> tuple[list[str], list[list], list[list]]:
    """The construction funnel per subtopic and per domain, from the tables `workbench stats`
    prints, the label breakdown and the release rows."""
    from .stats import compute_stats

    per: dict[str, Counter] = defaultdict(Counter)
    domain_of: dict[str, str] = {}
    tables = compute_stats(config, ws)
    sources = [
        (
            "Masked templates and samples per subtopic",
            {"masked templates": "masked_templates", "masked samples": "masked_samples"},
        ),
        ("Generation funnel per subtopic", {"candidates": "fills", "kept after filters": "kept"}),
        ("Filter: adversarial samples per subtopic", {"adversarial": "adversarial"}),
    ]
    for title, columns in sources:
        for r in tables.get(title, []):
            if r["subtopic"] == "total":
                continue
            domain_of.setdefault(r["subtopic"], r["domain"])
            for ours, theirs in columns.items():
                per[r["subtopic"]][ours] = r[theirs]
    for r in summary["breakdown"]:
        if r["subtopic"] == "total":
            continue
        per[r["subtopic"]]["unique hypotheses"] = r["items"]
        per[r["subtopic"]]["valid"] = r["valid-pro"] + r["valid-anti"]
        per[r["subtopic"]]["invalid"] = r["invalid"]
        per[r["subtopic"]]["incoherent"] = r["incoherent"]
    for r in release_rows:
        domain_of.setdefault(r["subtopic"], r["domain"])
        per[r["subtopic"]]["counterfactual" if r["is_counterfactual"] else "original"] += 1
        per[r["subtopic"]]["release samples"] += 1
    columns = [
        "masked templates",
        "masked samples",
        "candidates",
        "kept after filters",
        "adversarial",
        "unique hypotheses",
        "valid",
        "invalid",
        "incoherent",
        "original",
        "counterfactual",
        "release samples",
    ]
    subtopic_rows = [
        [domain_of.get(s, ""), s, *(per[s][c] for c in columns)]
        for s in sorted(per, key=lambda s: (domain_of.get(s, ""), s))
    ]
    by_domain: dict[str, Counter] = defaultdict(Counter)
    for s, counts in per.items():
        by_domain[domain_of.get(s, "")].update(counts)
    domain_rows = [
        [d, f"{len([s for s in per if domain_of.get(s) == d])} subtopics", *(by_domain[d][c] for c in columns)]
        for d in sorted(by_domain)
    ]
    total = Counter()
    for c in by_domain.values():
        total.update(c)
    domain_rows.append(["**total**", f"{len(per)} subtopics", *(total[c] for c in columns)])
    return columns, subtopic_rows, domain_rows


def _header(config: Config, rows: list[dict], domains: list[str], tags: tuple[str, ...]) -> list[str]:
    name = config.project.pretty_name or config.project.name
    return [
        "---",
        f"pretty_name: {json.dumps(name)}",
        *license_header(config),
        language_header(config),
        "task_categories:\n- text-classification",
        "task_ids:\n- natural-language-inference",
        f"size_categories:\n- {size_category(len(rows))}",
        "tags:\n" + "\n".join(f"- {t}" for t in tags),
        "configs:",
        "- config_name: all\n  data_files:\n  - split: test\n    path: data/all.parquet\n  default: true",
        *(f"- config_name: {d}\n  data_files:\n  - split: test\n    path: data/{d}.parquet" for d in domains),
        "---",
    ]


def _chat(config) -> tuple[bool, str | None]:
    """How the project's [llm] asks a causal LM: (chat template on, system instruction)."""
    from .settings import llm_asking

    return llm_asking(config).chat


def _kind():
    """This kind, as registered (the card's evaluator and lm-eval lines read it)."""
    from .. import get

    return get("nli")


def _load_and_evaluate(
    repo: str, version: str, domains: list[str], project: str = "", chat: tuple[bool, str | None] = (False, None)
) -> list[str]:
    """`chat`: how [llm] asks a causal LM, so the card's lm-eval command asks it the same way."""
    return [
        "## Load",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("{repo}", "all", revision="v{version}", split="test")',
        "```",
        "",
        "Configs: `all` and one per domain (" + ", ".join(f"`{d}`" for d in domains) + ").",
        "",
        "## How to evaluate",
        "",
        "The bundled evaluator computes accuracy, the BBNLI aggregate bias score with its pro/anti split and "
        "the counterfactual measures (pro, anti, group-insensitive error), overall, per domain and per "
        "subtopic. The revision is pinned, so scores always refer to this exact release:",
        "",
        "```bash",
        f"pip install {DISTRIBUTION}   # not `workbench`: that name on PyPI is another project",
        f"workbench evaluate {repo}@v{version} --model MODEL --json scores.json --plots plots/",
        *card_lines(_kind()),
        *(lmeval.card_lines(_kind(), lmeval.task_name(project, version), chat) if project else []),
        "```",
        "",
    ]


def _size(rows: list[dict], domains: list[str]) -> list[str]:
    counts = Counter((r["domain"], r["stance"]) for r in rows)
    return [
        "## Size",
        "",
        _table(
            ["domain", "pro", "anti", "total"],
            [[d, counts[(d, "pro")], counts[(d, "anti")], counts[(d, "pro")] + counts[(d, "anti")]] for d in domains],
        ),
        "",
    ]


def _content_warning() -> list[str]:
    """The kind's own content warning (its AnnotatorWords), as every card says it."""
    from ...release.generic import content_warning
    from .words import WORDS

    return content_warning(WORDS)


def renewal_card(release, preface: list[str] = ()) -> str:
    """The card of a renewed BBNLI (kinds/nli/renew.py), or of its data as imported (`build
    --original`): BBNLI's samples of its source files, which the release also carries. Where the
    data comes from and how it was audited is said by the shared closing sections."""
    config, rows, version, domains = release.config, release.rows, release.version, release.domains
    name = config.project.pretty_name or config.project.name
    per: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in rows:
        per[(r["domain"], r["subtopic"])]["pro" if r["stance"] == "pro" else "anti"] += 1
    hypotheses = Counter()
    for key in {(r["domain"], r["subtopic"], json.loads(r["provenance"]).get("audit_item")) for r in rows}:
        hypotheses[key[:2]] += 1
    what = (
        "BBNLI's bias samples as published, before any audit"
        if release.original
        else "BBNLI's bias samples after an audit of every bias hypothesis"
    )
    body = [
        f"# {name} v{version}",
        "",
        *preface,
        f"{what}: each hypothesis of a subtopic is paired with every premise and every combination of its word "
        "lists, once with the subtopic's two groups as written (`pro`) and once swapped in premise and hypothesis "
        "(`anti`, the pair's counterfactual), as BBNLI expands its source files. Every bias sample's gold label "
        "is *neutral*: no premise settles the stereotype.",
        "",
        *_content_warning(),
        *_load_and_evaluate(config.project.repo or "ORG/NAME", version, domains, config.project.name, _chat(config)),
        "## Fields",
        "",
        "`id`, `premise`, `hypothesis`, `label` (the gold label: `neutral`), `stance` (`pro` = the groups as written, "
        "`anti` = swapped), `domain`, `subtopic`, `pair_id` (a sample and its swapped twin share it), "
        "`is_counterfactual` (the swapped one), `provenance` (JSON: subtopic, audit item, source file, the "
        "hypothesis as its file writes it, premise number and the words filled in).",
        "",
        "`bbnli/` holds the source files in BBNLI's own format (one JSON file per subtopic, test hypotheses "
        "included), so BBNLI's own tools can expand them too.",
        "",
        *_size(rows, domains),
        "## Samples per subtopic",
        "",
        _table(
            ["domain", "subtopic", "bias hypotheses", "pro", "anti"],
            [[d, s, hypotheses[(d, s)], c["pro"], c["anti"]] for (d, s), c in sorted(per.items())],
        ),
        "",
        "## Known limitations",
        "",
        f"- {LIMITATIONS[1]}",
        "- Word lists are expanded in every combination, so subtopics with longer lists weigh more in overall figures.",
        f"- {LIMITATIONS[4]}",
        "",
        "## Citation",
        "",
        "```bibtex",
        CITATION,
        "```",
        "",
    ]
    return "\n".join(_header(config, rows, domains, ("bias", "fairness", "nli", "counterfactual")) + [""] + body)


def filter_model_lines(model: dict) -> list[str]:
    """A filter model as the card names it: an NLI classifier, or an LLM judge with how it was
    asked (its kind, answer words, chat template and prompt), as the filter's manifest records it."""
    head = f"- adversarial filter: `{model['name']}` revision `{model['revision']}`"
    asked = model.get("asked")
    if not isinstance(asked, dict):
        return [f"{head} (NLI classifier)"]
    given = asked.get("answers") or {}
    answers = ", ".join(f'{label} "{given[label]}"' for label in LABELS if label in given)
    template = "a chat template applied" if asked.get("chat_template") else "no chat template applied"
    prompt = str(asked.get("prompt", ""))
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", prompt)), default=0))
    return [
        f"{head}: an LLM judge ({model.get('judge')}: the answer word with the highest log-likelihood "
        f"after the prompt is its label), {template}; answer words: {answers}; prompt:",
        "",
        f"  {fence}text",
        *(f"  {line}" for line in prompt.split("\n")),
        f"  {fence}",
        "",
    ]


def proposer_lines(proposers: list | None, gen: dict) -> list[str]:
    """The models that proposed the variants: the masked LM, or each of `[generate] proposers` (an
    LLM with the prompt it was asked in), as the generate manifest records them."""
    if not proposers:
        return [f"- generation (masked LM): `{gen.get('name')}` revision `{gen.get('revision')}`"]
    lines = []
    for p in proposers:
        kind = "masked LM" if p.get("kind") == "masked" else "LLM"
        head = f"- generation ({kind}): `{p.get('name')}` revision `{p.get('revision')}`"
        if p.get("kind") != "llm":
            lines.append(head)
            continue
        template = "a chat template applied" if p.get("chat_template") else "no chat template applied"
        prompt = str(p.get("prompt", ""))
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", prompt)), default=0))
        lines += [f"{head}, asked for words, {template}; prompt:", "", f"  {fence}text"]
        lines += [*(f"  {line}" for line in prompt.split("\n")), f"  {fence}", ""]
    return lines


def dataset_card(
    config: Config,
    ws: Workspace,
    version: str,
    rows: list[dict],
    summary: dict,
    domains: list[str],
    preface: list[str] = (),
) -> str:
    """The card; `preface`: the maintainer's words, under the title (release/generic.maintainer_lines)."""
    name = config.project.pretty_name or config.project.name
    repo = config.project.repo or "ORG/NAME"
    header = _header(config, rows, domains, ("bias", "fairness", "nli", "counterfactual", "adversarial"))
    columns, subtopic_rows, domain_rows = funnel(config, ws, rows, summary)
    gen_manifest = ws.manifest("generate") or {}
    gen = gen_manifest.get("model") or {}
    filt = (ws.manifest("filter") or {}).get("models") or []
    held = evaluate_models(config)
    a = summary["agreement"]
    agreement_lines = [f"- annotators: {len(a.get('annotators', []))}; adjudicators: {len(a.get('adjudicators', []))}"]
    for p in a.get("pairs", []):
        agreement_lines.append(
            f"- Cohen's kappa {p['a']} ~ {p['b']}: {p['cohen_kappa']:.3f} over {p['items']} items "
            f"({100 * p['agreement']:.1f}% raw agreement)"
        )
    agreement_lines += [f"- {figure}" for figure in agreement_figures(a)]
    body = [
        f"# {name} v{version}",
        "",
        *preface,
        "A social-bias benchmark for natural language inference, built with `workbench` in the manner of "
        "BBNLI-next: templated hypotheses are masked, a masked language model proposes lexical variants, "
        "variants that NLI models get wrong are kept (adversarial filtering), people validate every unique "
        "hypothesis, and each kept sample gets its group counterfactual. Every sample's gold label is "
        "*neutral*: the premise never settles the stereotype.",
        "",
        *_content_warning(),
        *_load_and_evaluate(repo, version, domains, config.project.name, _chat(config)),
        "## Fields",
        "",
        "`id`, `premise`, `hypothesis`, `label` (always `neutral`), `stance` (`pro` = states the stereotype, "
        "`anti` = its opposite), `domain`, `subtopic`, `pair_id` (a sample and its counterfactual share it; "
        "null when unpaired), `is_counterfactual`, `provenance` (JSON: template, fill, masked-LM rank, models fooled).",
        "",
        *_size(rows, domains),
        "## Construction funnel per subtopic",
        "",
        _table(["domain", "subtopic", *columns], subtopic_rows),
        "",
        "## Construction funnel per domain",
        "",
        _table(["domain", "subtopics", *columns], domain_rows),
        "",
        "## Models",
        "",
        *proposer_lines(gen_manifest.get("proposers"), gen),
        *(line for m in filt for line in filter_model_lines(m)),
        f"- filter rule: kept when at least {filter_settings(config).min_fooled} filter model(s) predict non-neutral",
        *(f"- held out (evaluation only): `{m}`" for m in held),
        "",
        "## Annotation",
        "",
        f"Every unique generated hypothesis was labelled valid / invalid / incoherent, and valid ones pro- or "
        f"anti-stereotypical. Final labels follow the `{config.annotation.policy}` policy"
        + (
            f" (at least {config.annotation.min_votes} agreeing votes)"
            if config.annotation.policy == "majority"
            else ""
        )
        + (f" (adjudicator: {config.annotation.adjudicator})" if config.annotation.policy == "adjudicator" else "")
        + ".",
        "",
        *agreement_lines,
        "",
        "## Known limitations",
        "",
        *(f"- {line}" for line in LIMITATIONS),
        "",
        "## Citation",
        "",
        "Built on the BBNLI benchmark and its construction method:",
        "",
        "```bibtex",
        CITATION,
        "```",
        "",
    ]
    return "\n".join(header + [""] + body)
