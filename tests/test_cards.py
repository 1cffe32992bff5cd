"""Every command a release card shows runs as written (the kind's options included: HONEST's
lexicon), with only its placeholders filled in: MODEL, LEXICON.tsv and the release, here its
local folder for ORG/NAME@vX.Y.Z (no Hub in these tests); and a card never names a path of
the maintainer's machine."""

from __future__ import annotations

import shlex

import pytest
from conftest import invoke
from test_authoring_kinds import KINDS
from test_standalone_evaluator import run_standalone
from test_standalone_honest import lexicon_in


def commands(card: str, start: str) -> list[list[str]]:
    """The card's command lines that begin with `start`, as words (comments dropped)."""
    return [shlex.split(line.split("#")[0]) for line in card.splitlines() if line.startswith(start)]


def filled(words: list[str], release, model: str, lexicon) -> list[str]:
    out = []
    for word in words:
        if "@v" in word and "/" in word:
            word = str(release)  # ORG/NAME@vX.Y.Z -> the same release, downloaded
        out.append({"MODEL": model, "LEXICON.tsv": str(lexicon)}.get(word, word))
    return out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_command_on_the_card_runs_as_written(kind, releases, fixture_models, tmp_path, runner, monkeypatch):
    release = releases(kind)
    card = (release / "README.md").read_text(encoding="utf-8")
    assert "exports/" not in card and str(release.parents[2]) not in card  # no path of the maintainer's machine
    lexicon = lexicon_in(tmp_path / "lexicon")
    model = str(fixture_models["mlm-bert"])
    monkeypatch.chdir(tmp_path)
    found = commands(card, "workbench evaluate")
    assert found, card
    for words in found:
        args = filled(words, release, model, lexicon)[2:]
        assert "MODEL" not in args and "LEXICON.tsv" not in args
        result = invoke(runner, "evaluate", *args, "--cache", str(tmp_path / "c.sqlite"))
        assert result.exit_code == 0, (words, result.output, result.exception)
        assert (tmp_path / "scores.json").is_file()
    for words in commands(card, "python evaluate.py"):
        ran = run_standalone(release / "evaluate.py", filled(words, release, model, lexicon)[2:], cwd=tmp_path)
        assert ran.returncode == 0, (words, ran.stderr[-2000:])
    if kind == "honest":  # the lexicon is the user's: every command names it
        assert all("--lexicon" in w for w in found + commands(card, "python evaluate.py"))
