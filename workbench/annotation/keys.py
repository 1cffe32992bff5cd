"""The labelling keys: binding ids (what `[annotation.keys]` remaps), default keys, actions.

The decision keys come from the kind's label scheme (one per choice, e.g. `valid_pro` -> 1);
the actions below are the same for every kind. Kept apart from the Textual app so
`workbench validate` can check a config without importing it.
"""

from __future__ import annotations

from ..core.labels import LabelScheme

# (id, default key, action, description). Ids are what [annotation.keys] remaps.
ACTION_KEYS = [
    ("undo", "u", "undo", "undo your latest label (also from earlier sessions)"),
    ("skip", "s", "skip", "skip: the item comes back after the rest"),
    ("back", "left", "back", "back in your history (labelled and skipped items)"),
    ("forward", "right", "forward", "forward in your history"),
    ("newest", "end", "newest", "leave the history: back to the newest item"),
    ("note", "n", "note", "note on this item"),
    ("edit", "e", "edit", "edit: propose a corrected text (an audit's fix; the diff is shown)"),
    ("flag", "f", "flag", "flag for review"),
    ("filter", "d", "filter", "filter by domain, subtopic, status"),
    ("search", "slash", "search", "search hypotheses and templates"),
    ("opt_out", "o", "opt_out", "opt out of domains (or back in)"),
    ("stats", "t", "stats", "your label counts"),
    ("help", "question_mark", "help", "help"),
    ("quit", "q", "quit", "quit (Ctrl+C too); every label is already saved"),
]
# The key bar: decisions and these always; the others as the width allows, in this order.
KEY_BAR_ESSENTIAL = ("undo", "help", "quit")
KEY_BAR_OPTIONAL = ("skip", "back", "forward", "note", "flag", "filter", "search", "opt_out", "stats", "newest")
KEY_BAR_CAPTIONS = {
    "undo": "undo",
    "help": "help",
    "quit": "quit",
    "skip": "skip",
    "back": "back",
    "forward": "fwd",
    "note": "note",
    "flag": "flag",
    "filter": "filter",
    "search": "search",
    "opt_out": "opt out",
    "stats": "stats",
    "newest": "newest",
    "edit": "edit",
}
# Keys only some sessions have: an audit's editor (a session with fix fields).
AUDIT_KEYS = ("edit",)


def keys_for(scheme: LabelScheme) -> list[tuple[str, str, str, str]]:
    """The scheme's decision keys first, then the actions."""
    decisions = [(c.binding_id, c.key, f"decide('{c.id}')", c.title or c.id) for c in scheme.choices]
    return decisions + ACTION_KEYS


def binding_ids(scheme: LabelScheme) -> set[str]:
    return {k[0] for k in keys_for(scheme)}


BINDING_IDS = {k[0] for k in ACTION_KEYS}  # the ids every kind has (a scheme adds its decisions)
