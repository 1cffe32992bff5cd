"""The paper's appendix tables, computed from whatever stages have run."""

from __future__ import annotations

from collections import Counter, defaultdict

from ...core.config import Config
from ...core.errors import StageError
from ...core.workspace import Workspace


def _with_total(rows: list[dict], key: str) -> list[dict]:
    if not rows:
        return rows
    total = {k: (sum(r[k] for r in rows) if isinstance(rows[0][k], int) else "") for k in rows[0]}
    total[key] = "total"
    return rows + [total]


def compute_stats(config: Config, ws: Workspace) -> dict[str, list[dict]]:
    tables: dict[str, list[dict]] = {}
    try:
        samples = ws.read("expand").to_pylist()
    except StageError:
        return tables
    templates: dict[str, set] = defaultdict(set)
    per_sub: Counter = Counter()
    per_sub_all: Counter = Counter()
    domain_of: dict[str, str] = {}
    for r in samples:
        domain_of[r["subtopic"]] = r["domain"]
        per_sub_all[r["subtopic"]] += 1
        if r["n_masks"]:
            templates[r["subtopic"]].add(r["hypothesis_index"])
            per_sub[r["subtopic"]] += 1
    subtopics = sorted(domain_of, key=lambda s: (domain_of[s], s))
    tables["Masked templates and samples per subtopic"] = _with_total(
        [
            {
                "domain": domain_of[s],
                "subtopic": s,
                "masked_templates": len(templates[s]),
                "masked_samples": per_sub[s],
                "all_samples": per_sub_all[s],
            }
            for s in subtopics
        ],
        "subtopic",
    )
    per_domain: Counter = Counter()
    for s in subtopics:
        per_domain[domain_of[s]] += per_sub[s]
    tables["Masked samples per domain"] = _with_total(
        [{"domain": d, "masked_samples": n} for d, n in sorted(per_domain.items())], "domain"
    )
    tables["Generation funnel per subtopic"] = generation_funnel(ws)
    if config.generate.proposers is not None:
        tables["Proposers: candidates proposed, kept by the generation filters, adversarial, validated"] = (
            proposer_funnel(config, ws)
        )
    tables.update(filter_tables(ws))
    return tables


def proposer_funnel(config: Config, ws: Workspace) -> list[dict]:
    """Per proposer of `[generate] proposers`: its candidates, those the generation filters kept,
    those the adversarial filter kept, and those whose hypothesis people labelled valid (under
    the annotation policy), as far as the stages have run."""
    try:
        generated = ws.read("generate").select(["proposer", "candidate_id", "kept"]).to_pylist()
    except StageError:
        return []
    per: dict[str, dict] = {}
    for name in config.generate.proposers:
        per[name] = {"proposer": name, "proposed": 0, "kept": 0, "adversarial": 0, "valid": 0}
    for r in generated:
        d = per.setdefault(
            r["proposer"], {"proposer": r["proposer"], "proposed": 0, "kept": 0, "adversarial": 0, "valid": 0}
        )
        d["proposed"] += 1
        d["kept"] += int(bool(r["kept"]))
    try:
        filtered = ws.read("filter").select(["proposer", "hypothesis_id", "adversarial"]).to_pylist()
    except StageError:
        filtered = []
    finals = {}
    if filtered:
        try:
            items = ws.read("queue")["item_id"].to_pylist()
        except StageError:
            items = []
        if items:
            from ...annotation.summary import final_labels_for
            from .scheme import NLI_SCHEME

            finals = final_labels_for(config, items, NLI_SCHEME).finals
    for r in filtered:
        if r["adversarial"]:
            d = per[r["proposer"]]
            d["adversarial"] += 1
            final = finals.get(r["hypothesis_id"])
            d["valid"] += int(final is not None and final.kept)
    return _with_total(list(per.values()), "proposer")


def generation_funnel(ws: Workspace) -> list[dict]:
    """Per subtopic: unique masked hypotheses, fills, kept candidates and rejections by reason."""
    try:
        table = ws.read("generate")
    except StageError:
        return []
    rows = table.select(["domain", "subtopic", "masked_hypothesis", "reject_reason", "kept"]).to_pylist()
    reasons = sorted({r["reject_reason"] for r in rows if r["reject_reason"]})
    per: dict[str, dict] = {}
    for r in rows:
        d = per.setdefault(
            r["subtopic"],
            {
                "domain": r["domain"],
                "subtopic": r["subtopic"],
                "_masked": set(),
                "fills": 0,
                "kept": 0,
                **{f"rej_{x}": 0 for x in reasons},
            },
        )
        d["_masked"].add(r["masked_hypothesis"])
        d["fills"] += 1
        if r["kept"]:
            d["kept"] += 1
        else:
            d[f"rej_{r['reject_reason']}"] += 1
    out = []
    for s in sorted(per, key=lambda s: (per[s]["domain"], s)):
        d = per[s]
        masked = len(d.pop("_masked"))
        out.append({"domain": d.pop("domain"), "subtopic": d.pop("subtopic"), "masked_hyps": masked, **d})
    return _with_total(out, "subtopic")


def filter_tables(ws: Workspace) -> dict[str, list[dict]]:
    """Mispredictions per model and domain (BBNLI-next Table 11), kept per subtopic, model agreement."""
    from itertools import combinations

    try:
        rows = ws.read("filter").select(["domain", "subtopic", "predictions", "adversarial"]).to_pylist()
    except StageError:
        return {}
    preds = [{p["model"]: p for p in r["predictions"]} for r in rows]
    models = sorted(preds[0]) if preds else []
    domains = sorted({r["domain"] for r in rows})
    short = {m: m.rstrip("/").split("/")[-1] for m in models}
    table11 = []
    for m in models:
        entry = {"model": short[m]}
        for d in domains:
            entry[d] = sum(1 for r, p in zip(rows, preds) if r["domain"] == d and p[m]["label"] != "neutral")
        entry["all"] = sum(entry[d] for d in domains)
        table11.append(entry)
    kept: dict[str, dict] = {}
    for r in rows:
        k = kept.setdefault(
            r["subtopic"], {"domain": r["domain"], "subtopic": r["subtopic"], "candidates": 0, "adversarial": 0}
        )
        k["candidates"] += 1
        k["adversarial"] += int(r["adversarial"])
    agreement = []
    if len(models) > 1:
        from sklearn.metrics import cohen_kappa_score

        for a, b in combinations(models, 2):
            la = [p[a]["label"] for p in preds]
            lb = [p[b]["label"] for p in preds]
            same = sum(x == y for x, y in zip(la, lb)) / len(la)
            kappa = cohen_kappa_score(la, lb) if len(set(la) | set(lb)) > 1 else 1.0
            agreement.append(
                {
                    "models": f"{short[a]} ~ {short[b]}",
                    "agreement_pct": round(100 * same, 1),
                    "cohen_kappa": round(float(kappa), 3),
                }
            )
        if len(models) > 2:
            from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

            table, _ = aggregate_raters([[p[m]["label"] for m in models] for p in preds])
            agreement.append(
                {"models": "all (Fleiss)", "agreement_pct": "", "cohen_kappa": round(float(fleiss_kappa(table)), 3)}
            )
    return {
        "Filter: mispredicted samples per model and domain": table11,
        "Filter: adversarial samples per subtopic": _with_total(
            [kept[s] for s in sorted(kept, key=lambda s: (kept[s]["domain"], s))], "subtopic"
        ),
        "Filter: agreement between filter models": agreement,
    }
