"""The kind's lm-evaluation-harness task (task.yaml, utils.py), copied into every release by
`workbench build` (release/lmeval.py); these files need lm-eval alone, never workbench.

GROUP_BY names the data column whose values give the release's subtasks, one per bias type, as
lm-eval's own crows_pairs has; `group_of` is how `workbench evaluate` reads a value into its
by_bias_type key (stripped), so each subtask holds the pairs of one by_bias_type entry."""

GROUP_BY = "bias_type"
GROUP_WORD = "bias type"


def group_of(value: str) -> str:
    return value.strip()
