"""An LLM judge's answer words and prompt are checked before anything is asked (issue 55): words
that the reading in use cannot tell apart (`True`/`true` read case-insensitively, `maybe`/`maybe!`
without punctuation, one the first word of another), blank words, and a `{placeholder}` the
prompt does not fill are each refused in one line; a multi-word answer is read in full."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.core.errors import InputError
from workbench.kinds.nli.llm_judge import Asking
from workbench.kinds.nli.served_judge import read_answer

ANSWERS = {"entailment": "True", "neutral": "Neither", "contradiction": "False"}


@pytest.mark.parametrize(
    "answers, named",
    [
        ({**ANSWERS, "contradiction": "true"}, "entailment = 'True' and contradiction = 'true' are the same word"),
        ({**ANSWERS, "entailment": "maybe", "neutral": "maybe!"}, "entailment = 'maybe' and neutral = 'maybe!'"),
        ({**ANSWERS, "entailment": ""}, "entailment = '' is blank"),
        ({**ANSWERS, "neutral": " "}, "neutral = ' ' is blank"),
        ({**ANSWERS, "neutral": "?!"}, "neutral = '?!' is all punctuation"),
        ({**ANSWERS, "neutral": "Not sure", "contradiction": "Not"}, "'Not' is how 'Not sure' begins"),
    ],
    ids=["case", "punctuation", "empty", "blank", "only-punctuation", "prefix"],
)
def test_answer_words_the_reading_cannot_tell_apart_are_refused_in_one_line(answers, named, tmp_path):
    shown = ", ".join(f"{k} = {v!r}".replace("'", '"') for k, v in answers.items())
    (tmp_path / "workbench.toml").write_text(f'[project]\nname = "x"\n[llm]\nanswers = {{ {shown} }}\n')
    (tmp_path / "templates").mkdir()
    ran = subprocess.run(
        [sys.executable, "-m", "workbench", "validate"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    lines = [line for line in ran.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: [llm] answers") and named in lines[0], ran.stderr


def test_asked_by_log_likelihood_alone_words_differing_in_case_are_different_continuations():
    asking = Asking(answers={**ANSWERS, "contradiction": "true"}, mode="log-likelihood")
    assert asking.answers["contradiction"] == "true"
    with pytest.raises(InputError, match="are the same word"):  # but not the same one twice
        Asking(answers={**ANSWERS, "contradiction": " True"}, mode="log-likelihood")


@pytest.mark.parametrize(
    "prompt, named",
    [("{premise}\n{question}: {hypothesis}\nAnswer:", "{question}"), ("{Premise} {premise} {hypothesis}", "{Premise}")],
)
def test_a_placeholder_the_prompt_does_not_fill_is_refused_not_sent_as_written(prompt, named):
    with pytest.raises(InputError) as refused:
        Asking(prompt=prompt)
    assert str(refused.value).startswith(f"[llm] prompt names {named}, which is no placeholder")
    assert "\n" not in str(refused.value)


def test_braces_that_are_no_placeholder_stay_text():
    asking = Asking(prompt='{premise}\nAnswer as {"label": ...}: {hypothesis}\n{ }Answer:')
    assert asking.render("P.", "H") == 'P.\nAnswer as {"label": ...}: H.\n{ }Answer:'


def test_a_multi_word_answer_is_read_in_full_from_a_generated_answer():
    answers = {"entailment": "Yes", "neutral": "Not sure", "contradiction": "No"}
    Asking(answers=answers, mode="generation")  # accepted: none begins another
    assert read_answer("Not sure, really.", answers) == "neutral"
    assert read_answer("not SURE", answers) == "neutral"
    assert read_answer("No.", answers) == "contradiction"
    assert read_answer("Not at all", answers) is None  # neither answer: not guessed
    assert read_answer("", answers) is None
