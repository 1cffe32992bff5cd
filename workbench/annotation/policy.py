"""Final labels from several annotators, and agreement between them.

An annotator's decision on an item is one of the kind's label-scheme choices (e.g. valid-pro,
valid-anti, invalid, incoherent). The annotators' votes combine under the configured policy:

- single: one annotator decides (with several, they must agree, else it is a disagreement);
- majority: the most frequent category wins if it has at least `min_votes` votes and no tie
  (e.g. kept where >= 3 of 5 validators agreed); votes that all agree but are fewer than
  `min_votes` are "not enough votes" (more votes may settle the item), not a disagreement;
- adjudicator: annotators who agree decide, as under single; an adjudicator's label decides
  every item it is on, disputed or not.

Annotators who take the same decision but propose different corrected texts with it (an
audit's fix, docs/renewing.md) disagree: the item waits for an adjudicator.

An adjudication is a label given in `workbench annotate --adjudicate` (its event says
`role: adjudicator`) or any label of the configured `[annotation] adjudicator`. Under every
policy an adjudication decides a disputed item (a disagreement); until then the item stays a
disagreement. Adjudicators who disagree with each other decide nothing. Adjudications are
never votes: they count neither in the votes nor in agreement.

Agreement uses maintained libraries: Cohen's kappa per pair (scikit-learn), Fleiss' kappa
(statsmodels; per label, Fleiss' per-category kappa) over items every annotator labelled,
Krippendorff's alpha (krippendorff) over all items, missing labels allowed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

from ..core.labels import LabelScheme
from .store import ItemState, annotator_key


def category(state: ItemState, scheme: LabelScheme) -> str | None:
    """The scheme's choice id for an annotator's current label (None: not labelled)."""
    if not state.label:
        return None
    return scheme.category(state.label, state.stance)


FINAL, DISAGREEMENT, NOT_ENOUGH_VOTES, UNLABELLED = "final", "disagreement", "not-enough-votes", "unlabelled"
STATUSES = (FINAL, DISAGREEMENT, NOT_ENOUGH_VOTES, UNLABELLED)


@dataclass
class Final:
    status: str  # final | disagreement | not-enough-votes | unlabelled
    category: str | None = None
    votes: dict | None = None  # the annotators' votes (adjudications apart)
    scheme: LabelScheme = field(kw_only=True)
    rulings: dict = field(default_factory=dict, kw_only=True)  # adjudicators' labels
    adjudicated: bool = field(default=False, kw_only=True)  # an adjudication decided it
    disputed: bool = field(default=False, kw_only=True)  # the annotators' votes disagree

    @property
    def label(self) -> str | None:
        return None if self.category is None else self.scheme.decode(self.category)[0]

    @property
    def stance(self) -> str | None:
        return None if self.category is None else self.scheme.decode(self.category)[1]

    @property
    def kept(self) -> bool:
        """Final and one of the choices that keep an item for release."""
        return self.status == "final" and self.category in self.scheme.kept_ids()


def adjudicator_name(states: dict, adjudicator: str | None) -> str | None:
    """The configured adjudicator as their label file spells the name (one person whatever the case)."""
    if not adjudicator:
        return None
    return next((a for a in states if annotator_key(a) == annotator_key(adjudicator)), adjudicator)


def split_votes(
    states: dict[str, dict[str, ItemState]], item: str, scheme: LabelScheme, adjudicator: str | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """({annotator: choice} votes, {adjudicator: choice} adjudications) on one item;
    `adjudicator` is the configured name as `adjudicator_name` gives it."""
    votes: dict[str, str] = {}
    rulings: dict[str, str] = {}
    for a, s in states.items():
        state = s.get(item)
        if state is not None and (c := category(state, scheme)):
            (rulings if state.adjudicated or a == adjudicator else votes)[a] = c
    return votes, rulings


def combine(votes: dict[str, str], policy: str, min_votes: int) -> tuple[str, str | None]:
    """(status, choice) of the annotators' votes alone under a policy."""
    counts = Counter(votes.values())
    if not counts:
        return UNLABELLED, None
    if policy == "majority":
        (top, n), *rest = counts.most_common()
        if n >= min_votes and not (rest and rest[0][1] == n):
            return FINAL, top
        # everyone agrees, but too few have voted yet: not a disagreement
        return (NOT_ENOUGH_VOTES if not rest else DISAGREEMENT), None
    return (FINAL, next(iter(counts))) if len(counts) == 1 else (DISAGREEMENT, None)


def final_labels(
    states: dict[str, dict[str, ItemState]],
    items: list[str],
    policy: str = "single",
    min_votes: int = 2,
    adjudicator: str | None = None,
    *,
    scheme: LabelScheme,
) -> dict[str, Final]:
    out: dict[str, Final] = {}
    adjudicator = adjudicator_name(states, adjudicator)
    for item in items:
        votes, rulings = split_votes(states, item, scheme, adjudicator)
        status, choice = combine(votes, policy, min_votes)
        if status == FINAL and _fixes_differ(states, item, votes, choice):
            status, choice = DISAGREEMENT, None  # the same decision with different corrected texts
        ruling, disputed = set(rulings.values()), status == DISAGREEMENT
        if len(ruling) == 1 and (disputed or policy == "adjudicator"):
            status, choice, adjudicated = FINAL, ruling.pop(), True
        else:
            adjudicated = False
        out[item] = Final(
            status, choice, votes, rulings=rulings, adjudicated=adjudicated, disputed=disputed, scheme=scheme
        )
    return out


def _fixes_differ(states: dict[str, dict[str, ItemState]], item: str, votes: dict[str, str], choice: str) -> bool:
    """Whether the annotators who chose `choice` proposed different corrected texts (an audit's fix)."""
    fixes = [getattr(states[a][item], "fix", None) for a, c in votes.items() if c == choice]
    texts = {tuple(sorted(f.items())) for f in fixes if f}
    return len(texts) > 1


def fleiss_per_label(table, ids: tuple[str, ...]) -> dict[str, float]:
    """Fleiss' per-category kappa (Fleiss 1971) from an items x categories count table with the
    same number of raters per item: 1 - sum n_ij (m - n_ij) / (N m (m - 1) p_j (1 - p_j)).
    Categories nobody chose are left out; one category chosen for everything is 1.0."""
    n_items, m = table.shape[0], int(table[0].sum())
    out = {}
    for j, choice in enumerate(ids):
        p = table[:, j].sum() / (n_items * m)
        if p == 0:
            continue
        out[choice] = (
            1.0
            if p == 1
            else float(1 - (table[:, j] * (m - table[:, j])).sum() / (n_items * m * (m - 1) * p * (1 - p)))
        )
    return out


def agreement(
    states: dict[str, dict[str, ItemState]],
    scheme: LabelScheme,
    items: set[str] | None = None,
    adjudicator: str | None = None,
) -> dict:
    """Agreement between the annotators on `items` (default: every labelled item): adjudications
    and the configured adjudicator's labels are not votes, and count only in `adjudicators`."""
    import numpy as np

    adjudicator = adjudicator_name(states, adjudicator)
    votes: dict[str, dict[str, str]] = {}
    adjudicators: set[str] = set()
    for item in sorted(items if items is not None else {i for s in states.values() for i in s}):
        on_item, rulings = split_votes(states, item, scheme, adjudicator)
        for a, c in on_item.items():
            votes.setdefault(a, {})[item] = c
        adjudicators.update(rulings)
    annotators = sorted(votes)
    items = sorted({i for v in votes.values() for i in v})
    code = {c: k for k, c in enumerate(scheme.ids)}
    matrix = np.full((len(annotators), len(items)), np.nan)
    for a_i, a in enumerate(annotators):
        for i_i, item in enumerate(items):
            if item in votes[a]:
                matrix[a_i, i_i] = code[votes[a][item]]
    result: dict = {"annotators": annotators, "adjudicators": sorted(adjudicators), "items": len(items), "pairs": []}
    if len(annotators) < 2 or not items:
        return result
    from sklearn.metrics import cohen_kappa_score

    for (i, a), (j, b) in combinations(enumerate(annotators), 2):
        both = ~np.isnan(matrix[i]) & ~np.isnan(matrix[j])
        if both.sum() == 0:
            continue
        x, y = matrix[i][both], matrix[j][both]
        kappa = 1.0 if len(set(x) | set(y)) == 1 else float(cohen_kappa_score(x, y))
        result["pairs"].append(
            {"a": a, "b": b, "items": int(both.sum()), "agreement": float((x == y).mean()), "cohen_kappa": kappa}
        )
    complete = ~np.isnan(matrix).any(axis=0)
    if complete.sum() > 0:
        from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

        table, _ = aggregate_raters(matrix[:, complete].T.astype(int), n_cat=len(scheme.ids))
        result["fleiss_kappa"] = float(fleiss_kappa(table)) if len(set(matrix[:, complete].ravel())) > 1 else 1.0
        result["fleiss_per_label"] = fleiss_per_label(table, scheme.ids)
        result["fleiss_items"] = int(complete.sum())
    if (~np.isnan(matrix)).sum(axis=0).max() >= 2:
        import krippendorff

        values = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
        distinct = set(values[~np.isnan(values)].ravel())
        result["krippendorff_alpha"] = (
            1.0
            if len(distinct) == 1
            else float(krippendorff.alpha(reliability_data=values, level_of_measurement="nominal"))
        )
    return result
