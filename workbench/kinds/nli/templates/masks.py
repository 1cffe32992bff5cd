"""Mask suggestions for unmasked hypotheses, following BBNLI-next's three strategies.

1. `verb`: mask a main verb of the literal text ("{{GROUP1}} earn ..." -> "{{GROUP1}} <mask:VERB> ...").
2. `replace_placeholder`: replace a word-list placeholder by a mask of the same part of speech.
3. `add_beside`: add a mask beside an adjective or noun placeholder ("less {{WORD2}} and <mask:ADJ>").

The hypothesis is rendered with the first value of each list so spaCy sees a real sentence;
character offsets map every token back to the template text, so a suggestion edits the
template itself and keeps all its placeholders.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import IO

from .... import languages
from ....core.errors import ModelError
from ....languages import Language
from ....authoring import text as tt
from .schema import Template

BESIDE_POS = {"ADJ", "NOUN"}


@lru_cache(maxsize=None)
def installed_pipelines(prefix: str = "en_core_web") -> dict[str, str]:
    """Installed spaCy pipelines whose package name starts with `prefix` (a language's: English's
    by default) and their versions, read from package metadata (cheaper than importing spaCy).
    Looked up once per process: reading the metadata of every installed distribution costs a few
    hundred milliseconds, which a rerun should not pay."""
    from importlib.metadata import distributions

    found = {}
    for dist in distributions():
        name = (dist.metadata["Name"] or "").replace("-", "_").lower()
        if name.startswith(prefix):
            found[name] = dist.version
    return found


@lru_cache(maxsize=None)
def default_spacy_pipeline(language: Language | None = None) -> str:
    """Any installed pipeline of the language (English by default) will do; the first it
    prefers (the small one) is taken when it is there."""
    from importlib.metadata import PackageNotFoundError, version

    language = language or languages.find(languages.DEFAULT)
    for preferred in language.spacy_pipelines:  # a direct lookup first: no scan of every distribution
        try:
            version(preferred)
            return preferred
        except PackageNotFoundError:
            continue
    found = sorted(installed_pipelines(language.spacy_prefix)) if language.spacy_prefix else []
    if found:
        return found[0]
    if not language.spacy_install:
        raise ModelError(
            f"{language.name} has no spaCy pipeline in its support: leave `pos` out of [generate] "
            "filters (or pass --spacy-model with a pipeline name or path)"
        )
    raise ModelError(
        f"no {language.name} spaCy pipeline is installed; install one (e.g. `{language.spacy_install}`) "
        "or pass --spacy-model with a pipeline name or path"
    )


def pipeline_version(name: str) -> str:
    """The installed version of a spaCy pipeline package ("" when it is not a package)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return installed_pipelines().get(name, "")


# Left out of the tagger-only pipeline: what the part of speech does not come from. The tagger,
# the morphologizer (French and most other pipelines tag with it), tok2vec and the attribute
# ruler stay.
TAGGER_ONLY_EXCLUDE = ["parser", "lemmatizer", "ner", "senter"]

# Words the parser may attach as `aux`/`auxpass`: forms of be, have, do and get, the modals
# and semi-modals, and "to" (attached as aux even where it is tagged IN). English pipelines make
# such a token AUX by its dependency label, so only for these can that rule change the
# tagger's part of speech. tests/test_generate.py checks on the example benchmark that the
# parser attaches aux/auxpass to no other word.
AUXILIARY_FORMS = frozenset(
    """
be am is are was were been being 's 're 'm ai
have has had having 've 'd
do does did doing done
get gets got gotten getting
will would shall should can could may might must ought need dare used going gon wo ca sha 'll
to
""".split()
)


class ParseDependence:
    """Which tokens of a tagger-only doc may get another part of speech from the full pipeline.

    In spaCy's English pipelines the attribute ruler runs after the parser, and some of its
    rules read the dependency label (a main-verb "have"/"do" is VERB, an auxiliary AUX; "that"
    as a pronoun, "because" as a subordinating conjunction). Without the parser those rules
    never fire. They are read from the pipeline's own ruler, so a token matches here exactly
    when one of them could fire on it once parsed; only such tokens need the parse."""

    def __init__(self, nlp):
        from spacy.matcher import Matcher

        self.matcher = Matcher(nlp.vocab)
        self.auxiliary_rule = False
        specs = []
        if "attribute_ruler" in nlp.pipe_names:
            for rule in nlp.get_pipe("attribute_ruler").patterns:
                if "POS" not in rule["attrs"]:
                    continue
                for pattern in rule["patterns"]:
                    if not any("DEP" in token for token in pattern):
                        continue
                    spec = dict(pattern[rule.get("index", 0)])
                    dep = spec.pop("DEP", None)
                    labels = set(dep.get("IN", ())) if isinstance(dep, dict) else {dep}
                    if labels & {"aux", "auxpass"}:
                        self.auxiliary_rule = True  # matches any tag: narrowed to auxiliary words
                        continue
                    specs.append([spec] if spec else [{}])
        if specs:
            self.matcher.add("parse-dependent", specs)

    def tokens(self, doc) -> set[int]:
        """Indices of the doc's tokens whose part of speech may depend on the parse."""
        found = {start for _, start, _ in self.matcher(doc)} if len(self.matcher) else set()
        if self.auxiliary_rule:
            found.update(t.i for t in doc if t.lower_ in AUXILIARY_FORMS or t.tag_ == "MD" or t.pos_ == "AUX")
        return found


@lru_cache(maxsize=4)
def load_spacy(name: str | None = None, tagger_only: bool = False, language: Language | None = None):
    """The pipeline without NER (by default the language's, English's when none is given);
    `tagger_only` also leaves out everything the POS tags do not need (they come from the tagger
    or morphologizer and the attribute ruler), which is what the POS filter runs."""
    import spacy

    name = name or default_spacy_pipeline(language)
    try:
        if tagger_only:
            return spacy.load(name, exclude=TAGGER_ONLY_EXCLUDE)
        return spacy.load(name, disable=["ner"])
    except OSError:
        raise ModelError(
            f"spaCy pipeline {name!r} is not installed; install it (e.g. "
            f"`{(language or languages.find(languages.DEFAULT)).spacy_install}`) "
            "or pass --spacy-model with an installed pipeline"
        ) from None


def _pieces(template: str, values: dict[str, str]) -> tuple[str, list[tuple[int, int, int, int, str | None]]]:
    """Rendered text and spans (r_start, r_end, t_start, t_end, placeholder)."""
    spans, rendered, pos = [], "", 0
    for m in tt.PLACEHOLDER.finditer(template):
        if m.start() > pos:
            spans.append((len(rendered), len(rendered) + m.start() - pos, pos, m.start(), None))
            rendered += template[pos : m.start()]
        value = values.get(m.group(1), "")
        spans.append((len(rendered), len(rendered) + len(value), m.start(), m.end(), m.group(1)))
        rendered += value
        pos = m.end()
    if pos < len(template):
        spans.append((len(rendered), len(rendered) + len(template) - pos, pos, len(template), None))
        rendered += template[pos:]
    return rendered, spans


def _literal_to_template(spans, start: int, end: int) -> tuple[int, int] | None:
    for r0, r1, t0, _t1, name in spans:
        if name is None and r0 <= start and end <= r1:
            return t0 + (start - r0), t0 + (end - r0)
    return None


def suggest_for(template: str, values: dict[str, str], nlp, word_lists: set[str], join_word: str = "and") -> list[dict]:
    rendered, spans = _pieces(template, values)
    doc = nlp(rendered)
    out: list[dict] = []
    for tok in doc:
        if tok.pos_ == "VERB":
            where = _literal_to_template(spans, tok.idx, tok.idx + len(tok.text))
            if where:
                s, e = where
                out.append(
                    {"strategy": "verb", "masked": tok.text, "suggestion": template[:s] + "<mask:VERB>" + template[e:]}
                )
    for r0, r1, t0, t1, name in spans:
        if name is None or name not in word_lists or r0 == r1:
            continue
        span = doc.char_span(r0, r1, alignment_mode="expand")
        if span is None:
            continue
        pos = span.root.pos_
        tag = f"<mask:{pos}>" if pos in tt.UPOS and pos not in {"PUNCT", "SYM", "X"} else "<mask>"
        out.append(
            {
                "strategy": "replace_placeholder",
                "masked": "{{" + name + "}}",
                "suggestion": template[:t0] + tag + template[t1:],
            }
        )
        if pos in BESIDE_POS:
            out.append(
                {
                    "strategy": "add_beside",
                    "masked": "{{" + name + "}}",
                    "suggestion": template[:t1] + f" {join_word} <mask:{pos}>" + template[t1:],
                }
            )
    return out


def suggest(
    templates: list[Template],
    *,
    include_test: bool = False,
    spacy_model: str | None = None,
    language: Language | None = None,
) -> list[dict]:
    language = language or languages.find(languages.DEFAULT)
    nlp = load_spacy(spacy_model, language=language)
    results = []
    for t in templates:
        values = {**{k: v[0] for k, v in t.words.items()}, **t.groups}
        for h in t.hypotheses:
            if h.masked or (h.kind == "test" and not include_test):
                continue
            for s in suggest_for(h.text, values, nlp, set(t.words), language.join_word):
                results.append(
                    {
                        "template": t.id,
                        "file": str(t.path) if t.path else None,
                        "hypothesis_index": h.index,
                        "original": h.text,
                        **s,
                    }
                )
    return results


def write_suggestions(suggestions: list[dict], out: Path | IO[str]) -> None:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    header = "# Mask suggestions: copy the ones you accept into the template's hypotheses.\n"
    if isinstance(out, Path):
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(header)
            yaml.dump(suggestions, f)
    else:
        out.write(header)
        yaml.dump(suggestions, out)
