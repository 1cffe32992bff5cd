"""Language support: what the construction loop must know of a language, as small data and functions.

A language is a `Language` value named `LANGUAGE` in a package `workbench/languages/<code>/`
(English and French are built in) or registered by any installed package under the entry-point
group `workbench.languages` (`fr = "my_package.french:LANGUAGE"`), the way kinds are. A project
picks one with `[project] language` (BCP-47; "fr-CA" uses "fr" when there is no "fr-CA").
Every step that depends on the language asks `require(code, step)`, which refuses a language
with no support in one line instead of applying another language's rules. docs/languages.md
says what a new language needs.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping

from ..core.errors import ConfigError
from .grammar import Grammar
from .orthography import Orthography

GROUP = "workbench.languages"
DEFAULT = "en"


@dataclass(frozen=True, eq=False)  # hashed by identity: one value per language
class Language:
    """Everything the loop reads of one language. Only `code` and `name` are required; a rule
    left out (None) is one the language does not have."""

    code: str  # BCP-47 primary tag, the card's `language:`
    name: str
    spacy_pipelines: tuple[str, ...] = ()  # pipeline package names, preferred first (none: no POS filter)
    spacy_prefix: str = ""  # any installed package whose name starts so will do ("en_core_web")
    spacy_install: str = ""  # the pip line that installs the first one
    determiners: frozenset[str] = (
        frozenset()
    )  # articles, possessives, quantifiers: a group opening with one needs no article
    group_stopwords: frozenset[str] = frozenset()  # words of a group name that are not group words
    number_words: frozenset[str] = frozenset()  # fills rejected as numbers
    join_word: str = "and"  # joins a suggested mask to a word ("less {{W}} and <mask:ADJ>")
    word_forms: Callable[[str], set[str]] = lambda word: {word}  # a group word's inflected forms (itself included)
    is_plural: Callable[[str], bool] = lambda group: False  # is a group name plural (its head word)
    agreement: Mapping[str, str] = field(
        default_factory=dict
    )  # singular verb -> plural verb, mended after a swapped group
    # The article fixer ("a"/"an"): (next word, article as written) -> the right article; None: no such rule.
    indefinite_article: Callable[[str, str], str] | None = None
    indefinite_articles: frozenset[str] = frozenset()  # the articles that fixer rewrites
    elisions: tuple[str, ...] = ()  # prefixes cut from a word before it is read ("l'", "d'")
    word_pattern: str = r"[\w'-]+"  # what a word is (French adds the typographic apostrophe)
    capitalised: frozenset[str] = frozenset()  # words written with a capital anywhere in a sentence ("I")
    # Spelling where a placeholder, a fill or a changed word meets its neighbours (contractions,
    # elisions, a/an); None: the article fixer alone, if the language has one.
    orthography: Orthography | None = None
    # Agreement by syntax (workbench/languages/grammar.py): the forms of the words that agree with
    # a group; None: only `agreement`'s verb right after a swapped group is mended.
    grammar: Grammar | None = None

    @property
    def spelling(self) -> Orthography | None:
        """The rules `respell` applies: the declared orthography, else one made of the article fixer."""
        if self.orthography is not None or self.indefinite_article is None:
            return self.orthography
        return Orthography(article=self.indefinite_article, articles=self.indefinite_articles)

    def tokens(self, text: str) -> list[str]:
        """The words of a text, lower-cased, elided prefixes cut ("l'homme" -> "homme")."""
        import re

        words = []
        for w in re.findall(self.word_pattern, text.lower()):
            w = w.replace("\u2019", "'")
            for prefix in self.elisions:
                if w.startswith(prefix) and len(w) > len(prefix):
                    w = w[len(prefix) :]
                    break
            words.append(w)
        return words


@lru_cache(maxsize=1)
def _targets() -> dict[str, str]:
    """code -> "module:ATTRIBUTE": the built-in folders, then the entry points (which may replace them)."""
    from importlib.metadata import entry_points

    found = {info.name: f"{__name__}.{info.name}:LANGUAGE" for info in pkgutil.iter_modules(__path__) if info.ispkg}
    found.update({ep.name: ep.value for ep in entry_points(group=GROUP)})
    return found


def supported() -> list[str]:
    """The codes of every language with support, sorted."""
    return sorted(_targets())


@lru_cache(maxsize=None)
def _load(code: str) -> Language:
    module, _, attribute = _targets()[code].partition(":")
    language = getattr(importlib.import_module(module), attribute or "LANGUAGE")
    if not isinstance(language, Language):
        raise ConfigError(f"language {code!r}: {_targets()[code]} is not a workbench.languages.Language")
    return language


def find(code: str | None) -> Language | None:
    """The support for a BCP-47 tag: the tag itself, else its primary language; None when neither."""
    code = (code or DEFAULT).replace("_", "-")
    for candidate in (code, code.split("-")[0].lower()):
        if candidate in _targets():
            return _load(candidate)
    return None


def freshness(config) -> dict:
    """What a stage that reads language rules adds to its settings: the project's language when
    it is not the default (so English projects keep the freshness they had before languages)."""
    code = config.project.language
    return {"language": code} if code != DEFAULT else {}


def require(code: str | None, step: str) -> Language:
    """The support for `code`, or a one-line refusal naming the step and the languages there are."""
    language = find(code)
    if language is None:
        raise ConfigError(
            f"{step} has no support for language {code!r} ([project] language); "
            f"supported: {', '.join(supported())} (docs/languages.md says how to add one)"
        )
    return language
