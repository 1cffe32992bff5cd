"""Agreement by syntax: the words whose form depends on a group follow the group put in its place.

A template is written for its own groups. When the loop puts another group there (the anti
stance of `expand`, a counterfactual), every word that agrees with the group must change with
it: the finite verbs whose subject it is ("is"/"are", "works"/"work", "a"/"ont"), through
adverbs, negation and coordinated predicates, the verbs of a relative clause whose subject is a
relative pronoun standing for it, and, in a language that agrees them (French), predicate
adjectives and participles in gender and number. Words of another subject ("The office of
{{GROUP2}} is empty") are never touched.

`analyse` finds those words with the language's spaCy parse, in the sentence as written (its
groups, masks read as a plain word of their part of speech), once; `agree` then puts each in
the form its group needs, for any groups, by the language's `Grammar` (its verb tables,
spaCy's lemma and morphology). Where the parse does not settle it (the group is not read as
one phrase, a word after it looks like its verb but is not parsed so, a form the tables do not
know), the sentence is left as it is and a note says why, for annotators.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

SUBJECTS = frozenset({"nsubj", "nsubjpass", "nsubj:pass", "csubj", "csubj:pass"})
AUXILIARIES = frozenset({"aux", "auxpass", "aux:pass", "aux:tense", "cop"})
RELATIVE_CLAUSES = frozenset({"relcl", "acl:relcl"})
NOUNS = frozenset({"NOUN", "PROPN", "PRON"})


@dataclass(frozen=True)
class Features:
    """What a word agrees with: number, and gender where the language marks it ("Fem"/"Masc", None unknown)."""

    plural: bool
    gender: str | None = None


@dataclass(frozen=True)
class Word:
    """A token as the parser read it: what the inflection tables need."""

    text: str
    lemma: str = ""
    tag: str = ""
    pos: str = ""
    morph: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Grammar:
    """A language's agreement rules, as data and small functions.

    verb(word, plural) -> the third-person form of that number, None when unknown;
    predicate(word, written, wanted) -> an agreeing adjective or participle, None when unknown
    (None for the whole field: the language does not agree predicates);
    gender(group) -> "Fem", "Masc" or None."""

    verb: Callable[[Word, bool], str | None]
    predicate: Callable[[Word, Features, Features], str | None] | None = None
    gender: Callable[[str], str | None] = lambda group: None
    # Whether a word the parser did not read as a verb may be one ("drinks", "dorment"): such a
    # word after "and" in a group's predicate is noted, never changed.
    maybe_verb: Callable[[str], bool] = lambda word: False
    # Whether a word after a copula that the parser read as an adverb is an adjective ("compétent").
    maybe_adjective: Callable[[str], bool] = lambda word: False
    stand_ins: Mapping[str, str] = field(default_factory=dict)  # POS -> a word read for a mask ("": unconstrained)
    relative_pronouns: frozenset[str] = frozenset()
    copulas: frozenset[str] = frozenset()  # lemmas whose predicate agrees with the subject (être, sembler)
    skip_after_copula: frozenset[str] = frozenset()  # words between a copula and its predicate ("pas", "très")
    invariable: frozenset[str] = frozenset()  # adverbs that follow a copula and never agree ("ici", "bien")
    # A verb after an auxiliary that takes its base form ("doesn't work", "can work"): base(word)
    # -> that form, None when unknown (None for the whole field: no such rule); `takes_base`,
    # those auxiliaries, as written or as their lemma ("does", "do", "can't", "ca").
    base: Callable[[Word], str | None] | None = None
    takes_base: frozenset[str] = frozenset()
    # A predicate noun in the other number ("Men are workers" for "A man is a worker"):
    # noun(word, plural) -> its form, None when unknown (None for the whole field: predicate nouns
    # are noted, never changed); article(determiner or None, the noun, the subject's new number
    # and gender) -> the determiner it needs ("": none; None: no safe one, the sentence is noted).
    # A word right after a group that opens the sentence, which the parser misread (a verb
    # tagged as an adverb or a noun, "Les infirmières oublient"): its reading as a finite verb
    # (a Word with a verb's lemma and its Number), None when its form is not one; None for the
    # whole field: such a word is noted, never changed.
    finite_reading: Callable[[Word], Word | None] | None = None
    noun: Callable[[Word, bool], str | None] | None = None
    article: Callable[[Word | None, Word, Features], str | None] = lambda determiner, noun, wanted: None
    # Lemmas of collective nouns, which a subject of either number takes as they are ("Catholics are
    # a quiet group", "Les infirmières sont une communauté soudée"): kept, never pluralised.
    collective: frozenset[str] = frozenset()
    # A group right after a finite verb within a clause is its object, never a subject: true where a
    # clause after a verb always opens with a conjunction (French "que"; English "They say men are").
    object_after_verb: bool = False


@dataclass(frozen=True)
class Phrase:
    """A predicate noun's phrase, as agreement may change it: its determiner (piece, start, end
    past the space after it, the word), where an article would go (piece, offset), the
    adjectives after the noun (piece, start, end, word), and why it may not be changed ("": it may)."""

    determiner: tuple | None = None
    opening: tuple[int, int] | None = None
    adjectives: tuple = ()
    obstacle: str = ""


@dataclass(frozen=True)
class Dependent:
    """A word that agrees with a group: where it is (piece, offsets in the piece), what it is."""

    piece: int
    start: int
    end: int
    word: Word
    role: str  # "verb", "predicate" (adjective, participle); noted only: "noun" (a predicate
    # noun), "pronoun" (a third-person pronoun or possessive after its subject); "base": a verb
    # after an auxiliary that takes its base form (subject: none; only a fill's is changed)
    subject: tuple[int, ...]  # the group pieces of its subject (several when coordinated)
    coordinated: bool = False  # the subject is a coordination ("{{GROUP1}} and {{GROUP2}}")
    other_genders: tuple[str | None, ...] = ()  # genders of the coordination's other nouns
    phrase: Phrase | None = None  # a predicate noun's phrase


@dataclass(frozen=True)
class Analysis:
    dependents: tuple[Dependent, ...] = ()
    # (the group pieces of a subject, whether it is coordinated, its other nouns' genders, why the
    # parse does not settle its agreement)
    unsure: tuple[tuple[tuple[int, ...], bool, tuple, str], ...] = ()
    # the words word order took from a group (_word_order): another subject's, so a second reading
    # of the sentence does not ask for them to agree with the group either
    set_aside: tuple[str, ...] = ()


def features(group: str, language) -> Features:
    grammar = language.grammar
    return Features(language.is_plural(group), grammar.gender(group) if grammar else None)


def parse_text(texts: list[str], kinds: list[str], pos: list, grammar: Grammar) -> tuple[str, list[int]]:
    """The sentence the parser reads (each mask as a plain word of its part of speech) and where each piece starts."""
    out, starts = "", []
    for text, kind, constraint in zip(texts, kinds, pos):
        starts.append(len(out))
        if kind == "mask":
            tag = constraint[0] if constraint else ""
            text = grammar.stand_ins.get(tag) or grammar.stand_ins.get("", "it")
        out += text
    # In sentence case, as the sentence will be written: parsers read "les femmes préparent"
    # at the start of a sentence worse than "Les femmes préparent".
    first = next((i for i, ch in enumerate(out) if ch.isalpha()), None)
    if first is not None:
        out = out[:first] + out[first].upper() + out[first + 1 :]
    return out, starts


def analyse(texts: list[str], kinds: list[str], pos: list, language, nlp) -> Analysis:
    """The words that agree with each group piece of the sentence, found by the parse."""
    grammar = language.grammar
    if grammar is None:
        return Analysis()
    text, starts = parse_text(texts, kinds, pos, grammar)
    doc = nlp(text)
    ends = starts[1:] + [len(text)]

    def piece_of(token) -> int:
        return next(
            i for i in range(len(starts)) if starts[i] <= token.idx < ends[i] or token.idx == ends[i] == starts[i]
        )

    tokens_of = {i: [t for t in doc if starts[i] <= t.idx < ends[i]] for i, k in enumerate(kinds) if k == "group"}
    found: dict[int, Dependent] = {}
    unsure: list[tuple[tuple[int, ...], bool, tuple, str]] = []

    def doubt(g, note, subject=None, coordinated=False, others=()):
        entry = (subject or (g,), coordinated, others, note)
        if entry not in unsure:
            unsure.append(entry)

    group_of = {t.i: i for i, toks in tokens_of.items() for t in toks}
    antecedent: set[int] = set()  # words of a relative clause whose subject stands for a group ("qui travaillent")

    def add(token, role, subject, coordinated=False, others=(), word=None):
        if token.i in group_of or token.i in found:
            return
        p = piece_of(token)
        word = word or Word(token.text, token.lemma_, token.tag_, token.pos_, token.morph.to_dict())
        if (
            role == "verb"
            and grammar.finite_reading is not None
            and None
            in (
                grammar.verb(word, True),
                grammar.verb(word, False),
            )
        ):
            # a verb whose lemma the parser got wrong ("cuisine" read as its own lemma): the
            # language's reading of its form gives the lemma the tables need
            reading = grammar.finite_reading(word)
            if reading is not None:
                word = Word(word.text, reading.lemma, word.tag, word.pos, {**reading.morph, **word.morph})
        phrase = _phrase(token, grammar, piece_of, starts, kinds) if role == "noun" else None
        found[token.i] = Dependent(
            p,
            token.idx - starts[p],
            token.idx - starts[p] + len(token.text),
            word,
            role,
            subject,
            coordinated,
            others,
            phrase,
        )

    for g, toks in tokens_of.items():
        if not toks:
            continue
        heads = [t for t in toks if t.head.i not in {u.i for u in toks} or t.head.i == t.i]
        if len(heads) != 1:
            doubt(g, f"the parser does not read {texts[g]!r} as one phrase")
            continue
        head = heads[0]
        subject: tuple[int, ...] = (g,)
        coordinated, others, governor = False, (), None
        if head.dep_ in SUBJECTS:
            governor = head
        elif head.dep_ == "conj" and head.head.dep_ in SUBJECTS:
            governor = head.head  # the second of a coordinated subject
        if governor is not None:
            conjuncts = [governor] + [
                c for c in governor.subtree if c.dep_ == "conj" and c.pos_ in NOUNS and _conj_root(c) == governor
            ]
            if len(conjuncts) > 1:
                coordinated = True
                subject = tuple(sorted({group_of[c.i] for c in conjuncts if c.i in group_of}))
                others = tuple(_gender_of(c) for c in conjuncts if c.i not in group_of)
            words = _predicate_words(governor.head, grammar)
            for token, role in words:
                add(token, role, subject, coordinated, others)
            misread = None if words or coordinated else _misread_verb(toks, grammar, governor.head)
            if misread is not None:
                add(*misread[:1], "verb", subject, word=misread[1])
            elif not words:
                doubt(
                    g,
                    f"the parser reads {texts[g]!r} as the subject of {governor.head.text!r}, which is not a verb",
                    subject,
                    coordinated,
                    others,
                )
        for clause in head.children:
            if clause.dep_ in RELATIVE_CLAUSES and _relative_subject(clause, grammar):
                for token, role in _predicate_words(clause, grammar):
                    add(token, role, (g,))
                    antecedent.add(token.i)
        verb = None if governor is not None else _verb_after(toks[-1], head, grammar)
        if verb is not None and verb.pos_ in ("VERB", "AUX") and _finite(verb):
            # The finite verb right after the group, with no subject of its own: morphology and
            # word order agree that the group is its subject, only the parse's label does not.
            for token, role in _predicate_words(verb, grammar):
                add(token, role, subject)
            continue
        misread = _misread_verb(toks, grammar) if governor is None else None
        if misread is not None:
            add(*misread[:1], "verb", subject, word=misread[1])
            continue
        if governor is None:
            suspect = verb
            if suspect is not None and suspect.i not in found:
                doubt(
                    g,
                    f"{suspect.text!r} after {texts[g]!r} may be its verb, but the parser does not read "
                    f"{texts[g]!r} as its subject",
                )
            elif not any(_finite(t) and (_has_subject(t) or _has_subject(t.head)) for t in doc) and head.dep_ in (
                "ROOT",
                "compound",
                "dep",
                "amod",
                "appos",
            ):
                doubt(g, f"the parser finds no verb for {texts[g]!r} in this sentence")
    set_aside = _word_order(doc, texts, tokens_of, group_of, found, antecedent, grammar, doubt)
    # After a group that is a subject: third-person pronouns and possessives (they may stand for
    # it: noted), and a word after a conjunction that may be a coordinated verb the parse missed.
    subjects = {s for d in found.values() for s in d.subject}
    for g in sorted(subjects):
        last = tokens_of[g][-1].i
        for t in doc[last + 1 :]:
            if t.i in found or t.i in group_of:
                continue
            person = t.morph.get("Person")
            if (
                t.pos_ in ("PRON", "DET")
                and t.morph.get("Reflex") != ["Yes"]
                and t.morph.get("Gender") != ["Neut"]
                and (
                    (t.morph.get("Poss") == ["Yes"] and person in ([], ["3"]))
                    or (t.morph.get("PronType") == ["Prs"] and person == ["3"])
                )
            ):
                add(t, "pronoun", (g,))
            elif t.pos_ == "CCONJ" and t.i + 1 < len(doc):
                after = doc[t.i + 1]
                if (
                    after.i not in found
                    and after.i not in group_of
                    and not _has_subject(after)
                    and (
                        (grammar.maybe_verb(after.text) and after.pos_ != "VERB")
                        # a verb's form the parse leaves out of the group's predicate ("et dort")
                        or (grammar.finite_reading is not None and grammar.finite_reading(_word(after)) is not None)
                    )
                ):
                    doubt(
                        g, f"{after.text!r} after {t.text!r} may be a verb of {texts[g]!r} the parser does not read so"
                    )
    # A finite verb after a group with no subject in the parse, that nothing above agrees: it may
    # belong to the group (the parse went wrong), so it is noted, never changed.
    masked = {t.i for t in doc for i, k in enumerate(kinds) if k == "mask" and starts[i] <= t.idx < ends[i]}
    ordered = sorted((toks[-1].i, g) for g, toks in tokens_of.items() if toks)
    for n, (last, g) in enumerate(ordered):
        stop = ordered[n + 1][0] if n + 1 < len(ordered) else len(doc)
        for t in doc[last + 1 : stop]:
            if t.i in found or t.i in group_of or t.i in masked or not _finite(t) or t.pos_ not in ("VERB", "AUX"):
                continue
            if _has_subject(t) or (t.dep_ in AUXILIARIES and _has_subject(t.head)) or t.dep_ == "conj":
                continue
            doubt(g, f"{t.text!r} has no subject in the parse: it may agree with {texts[g]!r}")
            break
    if grammar.base is not None:
        for t in doc:
            if t.i not in group_of and t.i not in found and _base_auxiliary(t, grammar) is not None:
                add(t, "base", ())
    return Analysis(tuple(found[i] for i in sorted(found)), tuple(unsure), tuple(set_aside))


def _reads_finite(token, grammar: Grammar) -> bool:
    """A finite verb by the parse, or by the language's verb tables for a word the parse misread."""
    if token.pos_ in ("VERB", "AUX") and _finite(token):
        return True
    return (
        grammar.finite_reading is not None
        and token.pos_ not in ("DET", "ADP", "CCONJ", "SCONJ", "PRON", "NUM", "PROPN", "PUNCT")
        and grammar.finite_reading(_word(token)) is not None
    )


def _word_after(last, group_of):
    """The word right after a group, past adverbs, negation and clitics (None at a punctuation
    mark or another group)."""
    for t in last.doc[last.i + 1 :]:
        if t.pos_ in ("ADV", "PART") or t.lower_ in ("ne", "n'", "n’"):
            continue
        if t.pos_ == "PRON" and t.dep_ not in SUBJECTS and len(t.text.strip("'’")) <= 3:
            continue
        return None if t.is_punct or t.i in group_of else t
    return None


def _coordinated(toks, group_of) -> bool:
    """A group joined to another group ("{{GROUP1}} et {{GROUP2}}"): the verb after it is theirs."""
    heads = {t.head.i for t in toks if t.dep_ == "conj"} | {c.i for t in toks for c in t.children if c.dep_ == "conj"}
    return any(i in group_of and group_of[i] != group_of[toks[0].i] for i in heads)


def _word_order(doc, texts, tokens_of, group_of, found, antecedent, grammar: Grammar, doubt) -> list[str]:
    """Where word order says the parse is wrong, the words it gives a group as its subject are
    left as written and noted, never changed: a group after a preposition ("le chef de {{GROUP1}}
    travaille") or, where the language says so (`object_after_verb`), right after a finite verb
    within a clause ("le patron qui embauche {{GROUP1}} est") is not a subject; and where the word right after a group reads as a finite verb that is
    not agreed with it ("les livres que {{GROUP1}} lisent sont"), that word is the group's verb, so
    the words after it belong to another subject. Such a word alone, with nothing agreed, is
    noted too ("le patron dort et {{GROUP1}} travaillent"). The words of the group's own relative
    clause ("{{GROUP1}} qui travaillent") are not concerned. Returns the words set aside."""
    set_aside: list[str] = []
    for g, toks in tokens_of.items():
        if not toks:
            continue
        first = toks[0]
        before = doc[first.i - 1] if first.i > 0 else None
        mine = sorted(i for i, d in found.items() if g in d.subject and i not in antecedent)
        why = ""
        if before is not None and before.pos_ == "ADP" and not (before.i > 0 and doc[before.i - 1].pos_ == "ADV"):
            why = f"{texts[g]!r} follows the preposition {before.text!r}, so it is not a subject"
        elif (
            grammar.object_after_verb
            and before is not None
            and before.pos_ in ("VERB", "AUX")
            and _finite(before)
            and before.i > 0
            and not doc[before.i - 1].is_punct
        ):
            why = f"{texts[g]!r} follows the verb {before.text!r}, so it is not its subject"
        else:
            after = _word_after(toks[-1], group_of)
            own = [c for c in after.children if c.dep_ in SUBJECTS and c.i > toks[-1].i] if after is not None else []
            if after is not None and after.i not in found and not own and _reads_finite(after, grammar):
                mine = [i for i in mine if i > after.i]
                if mine:
                    why = f"{after.text!r} right after {texts[g]!r} reads as its verb, so the words after it are not"
                if (mine or not any(g in d.subject for d in found.values())) and not _coordinated(toks, group_of):
                    doubt(g, f"{after.text!r} right after {texts[g]!r} may be its verb, but the parse does not read so")
        if not why or not mine:
            continue
        for i in mine:
            d = found.pop(i)
            set_aside.append(d.word.text)
            doubt(
                g,
                f"the parser reads {texts[g]!r} as the subject of {d.word.text!r}, but {why}: left as written",
                d.subject,
                d.coordinated,
                d.other_genders,
            )
    return set_aside


def _word(token) -> Word:
    return Word(token.text, token.lemma_, token.tag_, token.pos_, token.morph.to_dict())


# Dependents of a predicate noun that its number cannot change alone.
_PHRASE_OBSTACLES = {
    "conj": "it is coordinated",
    "relcl": "a clause depends on it",
    "acl:relcl": "a clause depends on it",
    "acl": "a clause depends on it",
    "appos": "an apposition follows it",
    "nummod": "a number goes with it",
    "predet": "its determiner",
}


def _phrase(noun, grammar: Grammar, piece_of, starts, kinds) -> Phrase:
    """Where a predicate noun's phrase may change: its determiner, where an article would go,
    the adjectives after it (in a language that agrees them), or why it may not."""

    def at(token) -> tuple[int, int]:
        p = piece_of(token)
        return p, token.idx - starts[p]

    obstacle = next((why for c in noun.children if (why := _PHRASE_OBSTACLES.get(c.dep_))), "")
    determiners = [c for c in noun.children if c.dep_ in ("det", "poss", "nmod:poss") and c.i < noun.i]
    if len(determiners) > 1:
        obstacle = obstacle or "its determiner"
    adjectives = []
    if any(c.dep_ == "dep" for c in noun.children):
        obstacle = obstacle or "a word goes with it that the parser does not read"
    if grammar.predicate is not None:
        if any(c.dep_ == "amod" and c.i < noun.i for c in noun.children):
            obstacle = obstacle or "an adjective before it"
        for c in noun.children:
            if c.dep_ == "amod" and c.i > noun.i:
                p, start = at(c)
                adjectives.append((p, start, start + len(c.text), _word(c)))
    determiner = None
    if determiners:
        d = determiners[0]
        p, start = at(d)
        determiner = (p, start, start + len(d.text) + len(d.whitespace_), _word(d))
    # An article would open the phrase: after the copula, negation or an adverb of the author's
    # only (a word before it the parse leaves out of the phrase, a fill "kind" read as an adverb
    # in "are kind nurses", may belong to it).
    left = noun.left_edge
    before = noun.doc[left.i - 1] if left.i > 0 else None
    opening = (
        at(left)
        if before is not None
        and before.pos_ in ("AUX", "VERB", "PART", "ADV")
        and kinds[piece_of(before)] in ("text", "changed")
        else None
    )
    return Phrase(determiner, opening, tuple(adjectives), obstacle)


def _conj_root(token):
    while token.dep_ == "conj":
        token = token.head
    return token


def _gender_of(token) -> str | None:
    gender = token.morph.get("Gender")
    return gender[0] if gender else None


def _finite(token) -> bool:
    return token.morph.get("VerbForm") == ["Fin"] or token.tag_ in ("VBZ", "VBP", "VBD", "MD")


def _bare_present(token, auxiliaries) -> bool:
    """A verb read as a base form although it has a subject and no auxiliary ("Men work hard":
    "work" tagged VB): a present, as far as agreement goes."""
    return token.tag_ == "VB" and not auxiliaries and (_has_subject(token) or token.dep_ == "conj")


def _base_auxiliary(token, grammar: Grammar):
    """The auxiliary before `token` that makes it take its base form ("does" of "doesn't
    work", "can" of "can work"), None when it has none."""
    if token.pos_ not in ("VERB", "AUX") and not token.tag_.startswith("VB"):
        return None
    for c in token.children:
        if (
            c.dep_ == "aux"
            and c.i < token.i
            and (c.lower_ in grammar.takes_base or c.lemma_.lower() in grammar.takes_base)
        ):
            return c
    return None


def _participle_or_adjective(token) -> bool:
    return token.pos_ == "ADJ" or token.morph.get("VerbForm") == ["Part"]


def _has_subject(token) -> bool:
    return any(c.dep_ in SUBJECTS for c in token.children)


def _relative_subject(clause, grammar: Grammar) -> bool:
    """A relative clause whose subject is the relative pronoun ("who work here", "qui travaille")."""
    return any(
        c.dep_ in SUBJECTS and (c.lower_ in grammar.relative_pronouns or c.morph.get("PronType") == ["Rel"])
        for c in clause.children
    )


def _predicate_words(governor, grammar: Grammar, predicate: bool = False) -> list:
    """The words of a predicate that agree with its subject: finite verbs and auxiliaries, and
    where the language agrees them, the adjective or participle after a copula; through
    coordinated predicates that have no subject of their own."""
    out = []
    auxiliaries = [c for c in governor.children if c.dep_ in AUXILIARIES]
    # A verb after "does", "can"...: the auxiliary agrees, the verb is in its base form
    # ("doesn't works" is a fill to mend, role "base", not a present to agree).
    based = grammar.base is not None and _base_auxiliary(governor, grammar) is not None
    if governor.pos_ in ("VERB", "AUX") and (_finite(governor) or _bare_present(governor, auxiliaries)) and not based:
        out.append((governor, "verb"))
    out += [(a, "verb") for a in auxiliaries if _finite(a)]
    if grammar.predicate is not None:
        copula = [a for a in auxiliaries if a.lemma_ in grammar.copulas]
        if (predicate or copula) and _participle_or_adjective(governor):
            out.append((governor, "predicate"))
        if governor.lemma_ in grammar.copulas:
            out += [(c, "predicate") for c in governor.children if c.dep_ == "xcomp" and _participle_or_adjective(c)]
        for a in copula:  # the surface reading, where the parse attaches the predicate elsewhere
            after = _next_word(a, grammar.skip_after_copula)
            if after is not None and _participle_or_adjective(after):
                out.append((after, "predicate"))
        if (copula or predicate) and governor.pos_ in ("NOUN", "PROPN"):
            out.append((governor, "noun"))
        if copula and governor.pos_ == "ADV" and governor.lower_ not in grammar.invariable:
            # "est compétent" with "compétent" read as an adverb: an adjective by its ending, else noted
            out.append((governor, "predicate" if grammar.maybe_adjective(governor.lower_) else "unread"))
    elif any(c.dep_ == "attr" and c.pos_ == "NOUN" for c in governor.children) and governor.lemma_ == "be":
        out += [(c, "noun") for c in governor.children if c.dep_ == "attr" and c.pos_ == "NOUN"]
    is_predicate = predicate or (
        grammar.predicate is not None and any(r == "predicate" and t.i == governor.i for t, r in out)
    )
    for c in governor.children:
        if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX", "ADJ") and not _has_subject(c):
            out += _predicate_words(c, grammar, is_predicate and _participle_or_adjective(c))
    return out


def _next_word(token, skip: frozenset[str]):
    """The word after `token`, past adverbs, negation and the words in `skip`."""
    doc = token.doc
    for t in doc[token.i + 1 :]:
        if t.pos_ in ("ADV", "PART") or t.lower_ in skip:
            continue
        return t
    return None


def _misread_verb(toks, grammar: Grammar, governed=None):
    """(token, its reading) of a verb the parser missed right after a group that opens the
    sentence ("Les infirmières oublient les réunions": "oublient" tagged as an adverb), or
    anywhere when the parser reads the group as the subject of that very word (`governed`:
    "Selon moi, les femmes rêve": "rêve" read as a noun), past negation and clitics, when the
    language reads the word as a finite verb and the parse gives it no subject of its own;
    None otherwise."""
    if grammar.finite_reading is None:
        return None
    doc = toks[0].doc
    opening = not any(t.is_alpha for t in doc[: toks[0].i])
    for t in doc[toks[-1].i + 1 :]:
        if t.pos_ == "PRON" and t.dep_ not in SUBJECTS and len(t.text.strip("'’")) <= 3 or t.lower_ in ("ne", "n'"):
            continue
        if (
            t.is_punct
            or any(c.dep_ in SUBJECTS and c not in toks for c in t.children)
            or t.pos_ in ("DET", "ADP", "CCONJ", "SCONJ", "PRON", "NUM", "PROPN", "PUNCT")
        ):
            return None
        reading = grammar.finite_reading(_word(t)) if opening or t == governed else None
        if reading is not None:
            return t, reading
        if t.pos_ not in ("ADV", "PART"):
            return None
    return None


def _verb_after(last, head, grammar: Grammar):
    """A word right after a group (past adverbs, negation, clitics and the group's own relative
    clause) that may be its verb although the parse does not say so: a verb, or a word the
    language's verb tables can inflect, without a subject of its own."""
    doc = last.doc
    clause = {t.i for c in head.children if c.dep_ in RELATIVE_CLAUSES for t in c.subtree}
    for t in doc[last.i + 1 :]:
        if (
            t.i in clause
            or t.pos_ in ("ADV", "PART")
            or (t.pos_ == "PRON" and t.dep_ not in SUBJECTS and len(t.text) <= 3)
        ):
            continue
        if t.is_punct or _has_subject(t) or (t.dep_ in AUXILIARIES and _has_subject(t.head)):
            return None
        if t.pos_ in ("NOUN", "PROPN", "DET", "ADP", "CCONJ", "SCONJ", "PRON", "NUM"):
            return None
        word = Word(t.text, t.lemma_, t.tag_, t.pos_, t.morph.to_dict())
        inflectable = any(grammar.verb(word, plural) not in (None, t.text) for plural in (True, False))
        return t if t.pos_ in ("VERB", "AUX") or inflectable else None
    return None


@dataclass
class Agreed:
    """The pieces after agreement: texts, kinds, the index of the piece each came from (a piece
    with a changed word is split around it), and the notes for annotators."""

    texts: list[str]
    kinds: list[str]
    origin: list[int]
    notes: list[str]


def agree(
    texts: list[str],
    kinds: list[str],
    analysis: Analysis,
    written: Mapping[int, str],
    wanted: Mapping[int, str],
    language,
    filled_for: Mapping[int, str] | None = None,
) -> Agreed:
    """The pieces with every dependent word put in the form its group in `wanted` needs (group
    piece -> value), the words as written agreeing with `written` (fills with `filled_for`, the
    groups the masked LM saw). A changed word becomes a piece of kind "changed" of its own (a
    changed fill stays a fill), so spelling rules apply around it. Masks are left as they are:
    the masked LM fills them for the group it reads."""
    grammar = language.grammar
    notes: list[str] = []
    if grammar is None:
        return Agreed(list(texts), list(kinds), list(range(len(texts))), notes)

    def combined(values: Mapping[int, str], d: Dependent) -> Features:
        return _subject_features(d, values, language)

    changes: dict[int, list[tuple[int, int, str]]] = {}
    for d in analysis.dependents:
        kind = kinds[d.piece]
        if d.role == "base":  # a fill after "doesn't", "can"...: generate wrote its base form, where it knew one
            if kind == "fill" and grammar.base is not None and grammar.base(d.word) != d.word.text:
                notes.append(f"{d.word.text!r} follows an auxiliary and may need its base form: left as written")
            continue
        if kind == "mask" or any(s not in wanted for s in d.subject):
            continue
        have = combined(filled_for if kind == "fill" and filled_for else written, d)
        need = combined(wanted, d)
        if have == need or (d.role == "verb" and have.plural == need.plural):
            continue
        group = " and ".join(repr(wanted[s]) for s in d.subject)
        if d.role == "noun":
            own = d.word.morph.get("Number")
            if (d.word.lemma or d.word.text).lower() in grammar.collective or d.word.text.lower() in grammar.collective:
                continue  # "Catholics are a quiet group": right in either number
            if have.plural == need.plural or grammar.noun is None:
                notes.append(f"{d.word.text!r} may need to agree with {group}: predicate nouns are not changed")
            elif own is None or (own == "Plur") == have.plural:  # else written in a number of its own: kept
                made = _noun_phrase(texts, kinds, d, have, need, grammar)
                if isinstance(made, str):
                    notes.append(f"{d.word.text!r} may need to agree with {group}: left as written ({made})")
                else:
                    for piece, start, end, form in made:
                        changes.setdefault(piece, []).append((start, end, form))
            continue
        if d.role == "unread":
            notes.append(
                f"{d.word.text!r} after a copula is read as an adverb: left as written (it may need to "
                f"agree with {group})"
            )
            continue
        if d.role == "pronoun":
            if have.plural != need.plural or None not in (have.gender, need.gender):
                notes.append(f"{d.word.text!r} may stand for {group}: pronouns are not changed")
            continue
        if d.role == "verb":
            form = grammar.verb(d.word, need.plural)
        else:
            if have.gender is None and need.gender is not None or need.gender is None and have.gender is not None:
                notes.append(f"the gender of {group} is unknown: {d.word.text!r} is left as written")
                continue
            form = grammar.predicate(d.word, have, need)
        if form is None:
            notes.append(
                f"no {'plural' if need.plural else 'singular'} form of {d.word.text!r} is known "
                f"(agreeing with {group}): left as written"
            )
            continue
        if form != d.word.text:
            if d.word.text[:1].isupper():
                form = form[:1].upper() + form[1:]
            changes.setdefault(d.piece, []).append((d.start, d.end, form))
    return _split(texts, kinds, changes, notes)


def _noun_phrase(
    texts: list[str], kinds: list[str], d: Dependent, have: Features, need: Features, grammar: Grammar
) -> list[tuple[int, int, int, str]] | str:
    """The changes that put a predicate noun's phrase in the other number ("a worker" ->
    "workers", "nurses" -> "a nurse", "des infirmières" -> "une infirmière"), or why it is not changed."""
    phrase = d.phrase
    if phrase is None or phrase.obstacle:
        return phrase.obstacle if phrase else "its phrase is not read"
    if have.gender is not None and need.gender is not None and have.gender != need.gender:
        return "its gender would change too"
    editable = ("text", "changed", "fill")
    noun = grammar.noun(d.word, need.plural)
    if noun is None:
        return f"no {'plural' if need.plural else 'singular'} form of it is known"
    gender = need.gender  # a predicate noun of people and its adjectives are in its subject's
    determiner = phrase.determiner[3] if phrase.determiner else None
    article = grammar.article(determiner, d.word, need)
    if article is None:
        number = "plural" if need.plural else "singular"
        return f"no {number} determiner is known for it" + (f" ({determiner.text!r} as written)" if determiner else "")
    out = [(d.piece, d.start, d.end, _case_of(noun, d.word.text))]
    if phrase.determiner is not None:
        piece, start, end, word = phrase.determiner
        if article != word.text.lower():
            if kinds[piece] not in editable:
                return f"its determiner {word.text!r}"
            out.append((piece, start, end, _case_of(article + " ", word.text) if article else ""))
    elif article:
        if phrase.opening is None:
            return "the parse does not say where its phrase opens"
        piece, start = phrase.opening
        if kinds[piece] not in ("text", "changed"):
            if start != 0 or piece == 0 or kinds[piece - 1] not in ("text", "changed"):
                return "no place for its article"
            piece, start = piece - 1, len(texts[piece - 1])
        out.append((piece, start, start, article + " "))
    for piece, start, end, word in phrase.adjectives:
        form = grammar.predicate(word, Features(have.plural, gender), Features(need.plural, gender))
        if form is None or kinds[piece] not in editable:
            return f"no {'plural' if need.plural else 'singular'} form of {word.text!r} is known"
        if form != word.text:
            out.append((piece, start, end, _case_of(form, word.text)))
    return out


def _case_of(form: str, model: str) -> str:
    return form[:1].upper() + form[1:] if model[:1].isupper() else form


def _split(
    texts: list[str], kinds: list[str], changes: Mapping[int, list[tuple[int, int, str]]], notes: list[str]
) -> Agreed:
    """The pieces with each change (piece -> [(start, end, form)]) made a piece of its own."""
    out = Agreed([], [], [], notes)

    def put(text, kind, origin):
        out.texts.append(text), out.kinds.append(kind), out.origin.append(origin)

    for i, (text, kind) in enumerate(zip(texts, kinds)):
        at = 0
        for start, end, form in sorted(changes.get(i, [])):
            if start > at:
                put(text[at:start], kind, i)
            if form:  # a word dropped ("a " before a plural) leaves no piece
                put(form, "fill" if kind == "fill" else "changed", i)
            at = end
        if at < len(text) or not changes.get(i):
            put(text[at:], kind, i)
    return out


def _own_features(word: Word, need: Features) -> Features:
    """A word's number and gender as the parser reads them on it, else the group's."""
    morph = word.morph
    plural = morph.get("Number", "Plur" if need.plural else "Sing") == "Plur"
    gender = morph.get("Gender") if morph.get("Gender") in ("Fem", "Masc") else need.gender
    return Features(plural, gender)


def agree_in_place(
    texts: list[str], kinds: list[str], analysis: Analysis, language, only: frozenset[str] | None = None
) -> Agreed:
    """The pieces with every word that agrees with a group put in the form the group in its
    piece needs, judged from the word itself (its form, its number and gender as the parser
    reads them): for a text written once and used with values of either number or gender,
    where no written value says what its words agree with (an identity put into a template
    written as one string). A word already in the right form is never changed; a word the
    tables cannot inflect, a predicate noun and a pronoun that may stand for the group are
    left as written and noted when their number is not the group's. `only`: the kinds of
    pieces whose words may change (a masked LM's fills: "fill"), every kind but masks by default."""
    grammar = language.grammar
    notes: list[str] = []
    if grammar is None:
        return Agreed(list(texts), list(kinds), list(range(len(texts))), notes)
    changes: dict[int, list[tuple[int, int, str]]] = {}
    for d in analysis.dependents:
        if (
            kinds[d.piece] == "mask"
            or any(kinds[s] != "group" for s in d.subject)
            or (only is not None and kinds[d.piece] not in only)
        ):
            continue
        if d.role == "base":
            if kinds[d.piece] != "fill":  # the author's words are the author's
                continue
            form = grammar.base(d.word)
            if form is None:
                notes.append(f"{d.word.text!r} follows an auxiliary: no base form of it is known, left as written")
            elif form != d.word.text:
                changes.setdefault(d.piece, []).append((d.start, d.end, form))
            continue
        need = _subject_features(d, {s: texts[s] for s in d.subject}, language)
        have = _own_features(d.word, need)
        group = " and ".join(repr(texts[s]) for s in d.subject)
        if d.role in ("noun", "pronoun", "unread"):
            if have.plural != need.plural:
                what = {
                    "noun": "predicate nouns are not changed",
                    "pronoun": "pronouns are not changed",
                    "unread": "it is read as an adverb after a copula",
                }[d.role]
                notes.append(f"{d.word.text!r} may need to agree with {group}: {what}")
            continue
        if d.role == "verb":
            form = grammar.verb(d.word, need.plural)
        else:
            if need.gender is None:  # a group whose gender nothing marks: the word keeps its own
                need = Features(need.plural, have.gender)
            if have == need:
                continue
            form = grammar.predicate(d.word, have, need)
        if form is None:
            if d.role != "verb" or d.word.morph.get("Number") != ("Plur" if need.plural else "Sing"):
                notes.append(
                    f"no {'plural' if need.plural else 'singular'} form of {d.word.text!r} is known "
                    f"(agreeing with {group}): left as written"
                )
            continue
        if form != d.word.text:
            if d.word.text[:1].isupper():
                form = form[:1].upper() + form[1:]
            changes.setdefault(d.piece, []).append((d.start, d.end, form))
    return _split(texts, kinds, changes, notes)


def unsure_notes(
    analysis: Analysis,
    written: Mapping[int, str],
    wanted: Mapping[int, str],
    language,
    filled: Mapping[int, str] | None = None,
) -> list[str]:
    """The parse's doubts about the subjects whose words may change: where the group put in
    (`wanted`) differs in number or gender from the one the author's words agree with
    (`written`) or, in a sentence with fills, the one the fills were chosen for (`filled`). Each
    names the groups of the sentence written, not those of the rendering that was parsed."""
    out = []
    for subject, coordinated, others, note in analysis.unsure:
        if all(s in wanted for s in subject):
            probe = Dependent(0, 0, 0, Word(""), "verb", subject, coordinated, others)
            now = _subject_features(probe, wanted, language)
            if _subject_features(probe, written, language) != now or (
                filled is not None and _subject_features(probe, filled, language) != now
            ):
                out.append(_renamed(note, written, wanted))
    return out


def _renamed(note: str, written: Mapping[int, str], wanted: Mapping[int, str]) -> str:
    """A note of the parsed rendering with each group quoted as the sentence written has it (at once: groups may swap)."""
    import re

    names = {repr(written[g]): repr(wanted[g]) for g in wanted if g in written and written[g] != wanted[g]}
    if not names:
        return note
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    return pattern.sub(lambda m: names[m.group(0)], note)


def _subject_features(d: Dependent, values: Mapping[int, str], language) -> Features:
    """A subject's number and gender: a group's, or a coordination's (plural; feminine only when every noun is)."""
    if not d.coordinated:
        return features(values[d.subject[0]], language)
    genders = [features(values[s], language).gender for s in d.subject] + list(d.other_genders)
    gender = "Masc" if "Masc" in genders else ("Fem" if genders and all(x == "Fem" for x in genders) else None)
    return Features(True, gender)


def disagreements(
    texts: list[str], kinds: list[str], analysis: Analysis, language, set_aside: tuple[str, ...] = ()
) -> list[str]:
    """The words of a sentence that do not agree with their group as the parse reads it (the
    check of a sentence once written, and `templates lint`'s): (word, group) notes. `set_aside`:
    words a first reading found to be another subject's (Analysis.set_aside), not asked again."""
    grammar = language.grammar
    out = []
    for d in analysis.dependents:
        if kinds[d.piece] == "mask" or d.role not in ("verb", "predicate") or d.word.text in set_aside:
            continue
        values = {s: texts[s] for s in d.subject}
        need = features(values[d.subject[0]], language) if not d.coordinated else None
        if need is None:
            continue
        if d.role == "verb":
            form = grammar.verb(d.word, need.plural)
        elif need.gender is None:
            continue
        else:  # the word's own number and gender as the parser reads them, else the group's
            morph = d.word.morph
            have = Features(
                morph.get("Number", "Plur" if need.plural else "Sing") == "Plur",
                morph.get("Gender", need.gender) if morph.get("Gender") in ("Fem", "Masc") else need.gender,
            )
            form = grammar.predicate(d.word, have, need)
        if form is not None and form != d.word.text:
            out.append(f"{d.word.text!r} does not agree with {values[d.subject[0]]!r} ({form!r} would)")
    return out
