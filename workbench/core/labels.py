"""Label schemes: the decisions an annotator can take on an item, spelled in one place.

Each benchmark kind validates its items with its own scheme (e.g. valid-pro / valid-anti /
invalid / incoherent, or stereotype / anti-stereotype / unrelated / incoherent). A
decision is stored as (label, stance) in the label store — stance only where the scheme uses
it — and shown everywhere else by its choice id. The TUI's keys, Label Studio's choices, the
policies, agreement, summaries and the dataset card all read the scheme instead of keeping
their own list.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    id: str  # how the decision is shown and counted, e.g. "valid-pro"
    label: str  # what the label store records, e.g. "valid"
    stance: str | None = None  # recorded with the label where the scheme has stances
    key: str = ""  # the TUI's default key (and Label Studio's hotkey)
    title: str = ""  # what an annotator reads
    kept: bool = False  # a final decision with this choice keeps the item for release

    @property
    def binding_id(self) -> str:
        """The id `[annotation.keys]` uses to remap this choice's key (no dashes)."""
        return self.id.replace("-", "_")


@dataclass(frozen=True)
class LabelScheme:
    name: str
    choices: tuple[Choice, ...]
    question: str = ""  # one line: what the annotator decides

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.choices)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.label for c in self.choices))

    @property
    def stances(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.stance for c in self.choices if c.stance))

    def choice(self, choice_id: str) -> Choice:
        for c in self.choices:
            if c.id == choice_id:
                return c
        raise KeyError(choice_id)

    def category(self, label: str | None, stance: str | None = None) -> str | None:
        """The choice id of a stored (label, stance), or None when it is not a decision here."""
        for c in self.choices:
            if c.label == label and (c.stance is None or c.stance == stance):
                return c.id
        return None

    def decode(self, choice_id: str) -> tuple[str, str | None]:
        """(label, stance) to store for a choice id."""
        c = self.choice(choice_id)
        return c.label, c.stance

    def problem(self, label: str | None, stance: str | None) -> str | None:
        """Why (label, stance) is not a decision of this scheme, or None when it is."""
        if label not in self.labels:
            return f"unknown label {label!r}"
        needs = [c.stance for c in self.choices if c.label == label and c.stance]
        if needs and stance not in needs:
            return f"a {label} label needs stance {' or '.join(needs)}"
        return None

    def kept_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.choices if c.kept)


VALIDITY_SCHEME = LabelScheme(
    "validity",
    (
        Choice("valid", "valid", None, "1", "valid", kept=True),
        Choice("invalid", "invalid", None, "2", "invalid"),
        Choice("incoherent", "incoherent", None, "3", "incoherent"),
    ),
    question="Is the item a fluent, well-formed instance of what it is meant to test?",
)
