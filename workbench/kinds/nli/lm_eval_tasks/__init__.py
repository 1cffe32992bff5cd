"""The NLI kind's lm-evaluation-harness task (task.yaml, utils.py), copied into every release by
`workbench build` (release/lmeval.py); these files need lm-eval alone, never workbench. `render`
writes the project's way of asking a causal LM ([llm] prompt and answers) into the task, so
lm-eval asks as `workbench evaluate` does.

GROUP_BY names the data column whose values give the release's subtasks, one per domain, each
holding the samples of one of `workbench evaluate`'s by_domain entries (the value as written)."""

from __future__ import annotations

import json

LABELS = ("entailment", "neutral", "contradiction")
GROUP_BY = "domain"
GROUP_WORD = "domain"


def render(yaml: str, config: dict | None) -> str:
    """task.yaml with the prompt as a Jinja template of the row and the three answers, in the
    order utils.process_results reads them (entailment, neutral, contradiction)."""
    from ..settings import LLMSection

    section = LLMSection.model_validate((config or {}).get("llm") or {})
    hypothesis = "{{ hypothesis | trim }}{{ '' if (hypothesis | trim).endswith('.') else '.' }}"
    prompt = section.prompt.replace("{premise}", "{{ premise }}").replace("{hypothesis}", hypothesis)
    choices = [section.answers[label] for label in LABELS]
    yaml = yaml.replace("doc_to_text: PROMPT", f"doc_to_text: {json.dumps(prompt)}")
    return yaml.replace("doc_to_choice: CHOICES", f"doc_to_choice: {json.dumps(choices)}")
