"""The kind's lm-evaluation-harness task (task.yaml, utils.py), copied into every release by
`workbench build` (release/lmeval.py); these files need lm-eval alone, never workbench.

GROUP_BY names the data column whose values give the release's subtasks, one per attribute;
`group_of` is how `workbench evaluate` reads a value into its by_attribute key (case- and
separator-insensitive), so each subtask holds the pairs of one by_attribute entry."""

from __future__ import annotations

GROUP_BY = "attribute"
GROUP_WORD = "attribute"


def group_of(value: str) -> str:
    from ..metrics import attribute_name

    return attribute_name(value)
