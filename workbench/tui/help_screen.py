"""The help overlay: what to decide, what each line of the item means, every key as mapped.

It is longer than a small terminal, so it scrolls (↑/↓, PgUp/PgDn, Home/End) and closes
only on Escape, q, ? or Enter: a stray key neither closes it nor labels anything.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

NLI_DECISIONS = (
    "Valid = a coherent hypothesis that is neutral given the premises: none of them entails or "
    "contradicts it. Pro/anti = whether it states the stereotype or its opposite. Invalid = not "
    "neutral (entailed or contradicted by a premise). Incoherent = ungrammatical or meaningless."
)
PREMISES = (
    "All premises of the item are shown (premise 1, premise 2, …): the hypothesis is paired with "
    "each of them in the benchmark, and your one label covers every pair. Read them all; call it "
    "valid only if it is neutral given each one."
)
LINES = [
    ("hypothesis", "the sentence you judge (boxed); the highlighted word(s) were filled in by a language model"),
    ("yours", "your label on this item now (unlabelled until you decide); ⚑ when you flagged it"),
    ("● newest item", ("the next item to label; ◀ REVIEWING HISTORY k/n when ← took you back to an earlier "
                       "item (labelled or skipped, in any session): a label key relabels it and goes on to the "
                       "next one, End returns to the newest; ● filtered view k/n in a labelled or flagged view")),
    ("group", "the social group the hypothesis names, → the group of its counterfactual twin"),
    ("premise", "the context sentence(s) the hypothesis is paired with"),
    ("where", "domain / subtopic of the template, and how many premise-hypothesis pairs use this hypothesis"),
    ("template", "the hypothesis as written, with the filled slot as <mask>"),
    ("note, others", "your note; in adjudication, the other annotators' labels"),
]
# Kinds other than nli: the boxed text and the detail lines their queue supplies.
OTHER_LINES = [
    ("text", "the sentence, statement or template you judge (boxed)"),
    LINES[1], LINES[2],
    ("other lines", "what this kind of benchmark shows with it: the paired sentence, the category, the identities"),
    ("where", "group / template file, and how many rows of the benchmark your one label decides"),
    LINES[-1],
]
MODEL_LINES = [
    ("stance", "the stance the template's author intended: a hint, not the answer"),
    ("models", ("per NLI filter model: fooled k/n = it mispredicted k of the n premise-hypothesis pairs "
                "(their gold label is neutral), the wrong labels it gave, and its highest probability for one")),
    ("fluency", "the masked language model's pseudo-log-likelihood per token (closer to 0 = more fluent)"),
]
HIDDEN = ("The written stance, the models' results and the fluency score are hidden so that they do "
          "not sway your label. Adjudicators can show them with [annotation] show_model_results = true "
          "in workbench.toml.")


def help_sections(scheme, show_model_results: bool) -> list[tuple[str, str]]:
    """(heading, text) blocks of the help for a label scheme."""
    question = scheme.question or "Pick one decision per item."
    if scheme.name == "nli":  # the scheme's one-line question speaks of a single premise
        question = ("Is the hypothesis neutral given every premise shown (valid), and does it state the "
                    "stereotype (pro) or its opposite (anti)?")
    sections = [("What you decide", question)]
    if scheme.name == "nli":
        sections.append(("Decisions", NLI_DECISIONS))
        sections.append(("Premises", PREMISES))
    lines = (LINES if scheme.name in ("nli", "stereoset") else OTHER_LINES) + (MODEL_LINES if show_model_results else [])
    sections.append(("What the lines mean", "\n".join(f"{name}: {text}" for name, text in lines)))
    shown = ("Shown here because [annotation] show_model_results = true (meant for adjudicators): the "
             "stance, models and fluency lines above. Annotators should leave it off, so that they do not "
             "sway the label.")
    sections.append(("Model results", shown if show_model_results else HIDDEN))
    sections.append(("Progress", ("The top line counts the items you labelled out of those you see (opted-out "
                                  "domains left out). The rate and ETA appear after a few labels. Every label is "
                                  "saved before the next item shows; quit any time (q or Ctrl+C) and start again "
                                  "to resume after your last label. Items you skipped come back after the rest.")))
    return sections


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "modal.tcss"
    BINDINGS = [Binding("escape,q,question_mark,enter", "close", "Close")]

    def __init__(self, rows: list[tuple[str, str]], sections: list[tuple[str, str]] = ()):
        super().__init__()
        self.rows = rows
        self.sections = list(sections)

    def compose(self) -> ComposeResult:
        width = max(len(k) for k, _ in self.rows) + 2
        body = "\n".join(f"{k:<{width}}{d}" for k, d in self.rows)
        with Vertical(classes="dialog", id="help-dialog"):
            yield Static("Help", classes="dialog-title")
            with VerticalScroll(id="help-body"):
                for heading, text in self.sections[:3]:
                    yield Static(heading, classes="help-heading")
                    yield Static(text, classes="help-text", markup=False)
                yield Static("Keys", classes="help-heading")
                yield Static(body, classes="help-text", markup=False)
                for heading, text in self.sections[3:]:
                    yield Static(heading, classes="help-heading")
                    yield Static(text, classes="help-text", markup=False)
                yield Static("Remap keys in workbench.toml [annotation.keys].", classes="help-text")
            yield Static("↑↓ PgUp PgDn: scroll · Escape, ? or q: close", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one("#help-body", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
