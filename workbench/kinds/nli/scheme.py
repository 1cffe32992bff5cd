"""What annotators decide on each unique generated hypothesis of the nli kind."""

from __future__ import annotations

from ...core.labels import Choice, LabelScheme

NLI_SCHEME = LabelScheme(
    "nli",
    (
        Choice("valid-pro", "valid", "pro", "1", "valid, pro-stereotype", kept=True),
        Choice("valid-anti", "valid", "anti", "2", "valid, anti-stereotype", kept=True),
        Choice("invalid", "invalid", None, "3", "invalid (not neutral)"),
        Choice("incoherent", "incoherent", None, "4", "incoherent"),
    ),
    question="Is the hypothesis neutral given the premise (valid), and does it state the stereotype (pro) or its opposite (anti)?",
)
