"""French agreement (workbench/languages/grammar.py): the third person of verbs in both numbers
by their conjugation tables, predicate adjectives and participles in gender and number, and
the gender of a group name. Tables cover the verbs a benchmark's sentences use; a form they do
not know is left as written and noted for annotators rather than guessed."""

from __future__ import annotations

from types import ModuleType

from ..grammar import Features, Grammar, Word

# The package's word forms, tokenizer and determiners (workbench/languages/fr), given to
# `grammar_for` rather than imported, so the two modules do not import each other.
_fr: ModuleType | None = None

# Third person singular -> plural of irregular verbs, every tense a sentence is likely to use.
_IRREGULAR = {
    "est": "sont",
    "soit": "soient",
    "fut": "furent",
    "sera": "seront",
    "serait": "seraient",
    "était": "étaient",
    "a": "ont",
    "ait": "aient",
    "eut": "eurent",
    "aura": "auront",
    "aurait": "auraient",
    "avait": "avaient",
    "va": "vont",
    "aille": "aillent",
    "ira": "iront",
    "irait": "iraient",
    "fait": "font",
    "fasse": "fassent",
    "fera": "feront",
    "ferait": "feraient",
    "fit": "firent",
    "peut": "peuvent",
    "puisse": "puissent",
    "pourra": "pourront",
    "pourrait": "pourraient",
    "doit": "doivent",
    "devra": "devront",
    "devrait": "devraient",
    "veut": "veulent",
    "veuille": "veuillent",
    "voudra": "voudront",
    "voudrait": "voudraient",
    "sait": "savent",
    "sache": "sachent",
    "saura": "sauront",
    "saurait": "sauraient",
    "vaut": "valent",
    "dit": "disent",
    "redit": "redisent",
    "prédit": "prédisent",
    "contredit": "contredisent",
    "lit": "lisent",
    "élit": "élisent",
    "relit": "relisent",
    "suffit": "suffisent",
    "voit": "voient",
    "revoit": "revoient",
    "prévoit": "prévoient",
    "croit": "croient",
    "boit": "boivent",
    "vit": "vivent",
    "survit": "survivent",
    "suit": "suivent",
    "poursuit": "poursuivent",
    "part": "partent",
    "repart": "repartent",
    "sort": "sortent",
    "dort": "dorment",
    "endort": "endorment",
    "sert": "servent",
    "sent": "sentent",
    "ressent": "ressentent",
    "consent": "consentent",
    "ment": "mentent",
    "court": "courent",
    "parcourt": "parcourent",
    "secourt": "secourent",
    "meurt": "meurent",
    "acquiert": "acquièrent",
    "plaît": "plaisent",
    "plait": "plaisent",
    "tait": "taisent",
    "rit": "rient",
    "sourit": "sourient",
    "fuit": "fuient",
    "bat": "battent",
    "combat": "combattent",
    "débat": "débattent",
    "résout": "résolvent",
    "vainc": "vainquent",
    "convainc": "convainquent",
    "naît": "naissent",
    "nait": "naissent",
    "vient": "viennent",
    "tient": "tiennent",
    "prend": "prennent",
    "met": "mettent",
}
_IRREGULAR_SINGULAR = {pl: sg for sg, pl in _IRREGULAR.items() if sg not in ("était", "avait", "serait", "aurait")}
_IRREGULAR_SINGULAR.update({"étaient": "était", "avaient": "avait"})
# Families by the end of the lemma: (lemma ending, singular ending, plural ending).
_FAMILIES = (
    ("venir", "vient", "viennent"),
    ("tenir", "tient", "tiennent"),
    ("prendre", "prend", "prennent"),
    ("mettre", "met", "mettent"),
    ("crire", "crit", "crivent"),
    ("uire", "uit", "uisent"),
    ("cevoir", "çoit", "çoivent"),
    ("aître", "aît", "aissent"),
    ("aitre", "ait", "aissent"),
    ("aindre", "aint", "aignent"),
    ("eindre", "eint", "eignent"),
    ("oindre", "oint", "oignent"),
    ("battre", "bat", "battent"),
    ("dre", "d", "dent"),
)
# Verbs in -ir that are not of the second group (finir -> finissent).
_NOT_SECOND_GROUP = (
    "venir",
    "tenir",
    "partir",
    "sortir",
    "dormir",
    "servir",
    "sentir",
    "mentir",
    "courir",
    "mourir",
    "ouvrir",
    "offrir",
    "souffrir",
    "couvrir",
    "cueillir",
    "quérir",
    "fuir",
    "bouillir",
    "vêtir",
    "oir",
)


def _second_group(lemma: str) -> bool:
    return lemma.endswith("ir") and not lemma.endswith(_NOT_SECOND_GROUP)


# Endings of the third persons after the families, singular -> plural, each read both ways,
# tried in order; `when(lemma, morph, word, plural_wanted)` says where a rule applies.
_PAST_SIMPLE = (("a", "èrent"), ("int", "inrent"), ("it", "irent"), ("ut", "urent"))  # not "préfèrent"
_ENDINGS = (
    ("ait", "aient", lambda lemma, morph, w, plural: True),
    # a future: "travaillera" (the plural's "-ront" is read back always)
    (
        "ra",
        "ront",
        lambda lemma, morph, w, plural: not plural or morph.get("Tense") == "Fut" or w[:-1] in (lemma, lemma[:-1]),
    ),
    # the second group: "finit" / "finissent" (a subjunctive "finisse" is not read back to "finit")
    ("it", "issent", lambda lemma, morph, w, plural: _second_group(lemma) and (plural or morph.get("Mood") != "Sub")),
    # -e / -ent: "travaille" / "travaillent"
    ("e", "ent", lambda lemma, morph, w, plural: _e_ent(lemma, morph) and (plural or len(w) > 4)),
)


def verb(word: Word, plural_wanted: bool) -> str | None:
    """The third person of `word` in the wanted number ("travaille" -> "travaillent", "a" -> "ont"):
    one set of rules (irregular verbs, families by lemma, the past simple, endings), each a
    singular and a plural form read in the direction wanted."""
    w, lemma, morph = word.text.lower(), word.lemma.lower(), word.morph
    own, other = (_IRREGULAR_SINGULAR, _IRREGULAR) if plural_wanted else (_IRREGULAR, _IRREGULAR_SINGULAR)
    if morph.get("Number") == ("Plur" if plural_wanted else "Sing") or w in own:
        return word.text
    if w in other:
        return other[w]
    rules = [(sg, pl) for lemma_end, sg, pl in _FAMILIES if lemma.endswith(lemma_end)]
    if morph.get("Tense") == "Past" and morph.get("VerbForm") == "Fin":
        rules += _PAST_SIMPLE
    rules += [(sg, pl) for sg, pl, when in _ENDINGS if when(lemma, morph, w, plural_wanted)]
    for sg, pl in rules:
        have, want = (sg, pl) if plural_wanted else (pl, sg)
        if w.endswith(have):
            return w[: -len(have)] + want
    return None


def _e_ent(lemma: str, morph) -> bool:
    """Verbs whose third persons are -e / -ent: the first group (travailler), ouvrir and its
    like (ouvre, offre, cueille), and every subjunctive."""
    return lemma.endswith(("er", "vrir", "frir", "llir")) or morph.get("Mood") == "Sub"


def predicate(word: Word, have: Features, need: Features) -> str | None:
    """An adjective or participle agreeing with its subject ("fatigué" -> "fatiguées")."""
    w = word.text.lower()
    base = _fr.singular(w) if have.plural else w
    if base is None:
        base = w  # a plural that looks singular ("heureux")
    if have.gender == "Fem":
        candidates = sorted(m for m in _fr.masculine(base) if _fr.feminine(m) == base) or (
            [base] if _fr.feminine(base) == base else []
        )
        if len(candidates) > 1:  # "heureuse": heureux or heureur? the parser's lemma, else -eux but listed -eur words
            lemma = word.lemma.lower()
            candidates = (
                [m for m in candidates if m == lemma]
                or [m for m in candidates if m in _EUR_ADJECTIVES]
                or [m for m in candidates if m.endswith("eux")]
            )
        if len(candidates) != 1:
            return None
        base = candidates[0]
    form = _fr.feminine(base) if need.gender == "Fem" else base
    if need.gender is None and have.gender == "Fem":
        return None
    return _fr.plural(form) if need.plural else form


# Adjectives in -eur (their feminine -euse reads back to -eux too): "travailleuse" is travailleur.
_EUR_ADJECTIVES = frozenset(
    """travailleur menteur rêveur moqueur trompeur flatteur joueur songeur boudeur râleur
bosseur crâneur charmeur blagueur dragueur frimeur tricheur voleur pleurnicheur accrocheur rieur causeur
chercheur penseur batailleur bagarreur""".split()
)
_FEMININE_DETERMINERS = frozenset("la une cette ma ta sa toute aucune certaine certaines quelle quelles".split())
_MASCULINE_DETERMINERS = frozenset("le un ce cet mon ton son tout aucun certain certains quel quels du au".split())
_FEMININE_NOUNS = frozenset(
    """femme fille mère sœur soeur dame tante épouse reine nièce grand-mère belle-mère
personne copine maman veuve demoiselle mademoiselle madame mesdames""".split()
)
_MASCULINE_NOUNS = frozenset(
    """homme garçon père frère monsieur messieurs oncle époux roi neveu fils mari
grand-père beau-père papa veuf gens""".split()
)
_EPICENE = frozenset("enfant enfants élève collègue adulte jeune artiste membre".split())


def gender(group: str) -> str | None:
    """ "Fem" or "Masc" by the group's determiner, its nouns of people, then the endings of its
    words ("employé âgé" Masc, "musulmanes" Fem); a plural group nothing marks is masculine
    ("les jeunes"), a singular one unknown (None)."""
    LANGUAGE = _fr.LANGUAGE
    words = LANGUAGE.tokens(group)
    if not words:
        return None
    raw = group.lower().split()
    first = raw[0] if raw else ""
    if first in _FEMININE_DETERMINERS:
        return "Fem"
    if first in _MASCULINE_DETERMINERS and not (
        first in ("mon", "ton", "son") and len(words) > 1 and LANGUAGE.orthography.vowel_initial(words[1])
    ):
        return "Masc"
    content = [w for w in words if w not in _fr._DETERMINERS and w not in _EPICENE]
    for w in content:
        s = _fr.singular(w) or w
        if s in _FEMININE_NOUNS or w in _FEMININE_NOUNS:
            return "Fem"
        if s in _MASCULINE_NOUNS or w in _MASCULINE_NOUNS:
            return "Masc"
    for w in content:
        s = _fr.singular(w) or w
        if any(m != s and _fr.feminine(m) == s for m in _fr.masculine(s)):
            return "Fem"
        if _fr.feminine(s) != s:
            return "Masc"
    # Nothing says: a plural group is agreed in the masculine, as French agrees a group of
    # either ("les jeunes sont lents"); a singular one is left unknown.
    return "Masc" if LANGUAGE.is_plural(group) else None


def finite_reading(word: Word) -> Word | None:
    """A word read as a finite verb of the third person when its form is one both ways: the
    other number's form by the tables gives it back ("oublient" <-> "oublie", "font" <->
    "fait"), by the parser's lemma where it is a verb's (-er, -ir, -re), else by the first
    group's ("cuisine": cuisiner). None otherwise ("malades", "souvent")."""
    w = word.text.lower()
    if not w.isalpha() or w.endswith("ment") or w in _ADVERBS_LIKE_ADJECTIVES:
        return None
    lemma = word.lemma.lower()
    lemmas = [lemma] if lemma != w and lemma.endswith(("er", "ir", "re")) else []
    if word.pos == "ADV" and not lemmas:
        return None  # an adverb by the parser's lemma too ("souvent")
    if w.endswith("ent") and len(w) > 4:
        lemmas.append(w[:-3] + "er")
    elif w.endswith("e") and len(w) > 2:
        lemmas.append(w[:-1] + "er")
    elif w in _IRREGULAR or w in _IRREGULAR_SINGULAR:
        lemmas.append(lemma)
    for candidate in lemmas:
        for plural in (True, False):
            other = verb(Word(w, candidate), not plural)
            if other and other != w and verb(Word(other, candidate), plural) == w:
                number = "Plur" if plural else "Sing"
                return Word(
                    word.text, candidate, word.tag, "VERB", {"Number": number, "Person": "3", "VerbForm": "Fin"}
                )
    return None


def noun(word: Word, plural_wanted: bool) -> str | None:
    """A predicate noun in the wanted number ("infirmière" <-> "infirmières"); an invariable
    one ("Français", read so by its lemma) keeps its form; None when unknown."""
    w = word.text
    if not w.isalpha() or word.pos == "PROPN":
        return None
    number = word.morph.get("Number")
    if plural_wanted:
        return w if number == "Plur" else _fr.plural(w)
    if number == "Sing" or word.lemma.lower() == w.lower():
        return w
    return _fr.singular(w)


# The determiner of a predicate noun in the other number: indefinite and definite articles.
_PLURAL_ARTICLES = {"un": "des", "une": "des", "le": "les", "la": "les", "l'": "les", "l’": "les"}
_SINGULAR_ARTICLES = {"des": ("un", "une"), "les": ("le", "la")}


def article(determiner: Word | None, noun: Word, wanted: Features) -> str | None:
    """The determiner a predicate noun takes in the wanted number ("un" -> "des", "les" ->
    "les"); none stays none ("sont infirmières" -> "est infirmière"). A singular's needs its
    gender: the subject's, where the tables read the noun as a noun of people of that gender
    ("infirmières" -> "une", "ouvriers" -> "un"); None where no safe one is known (a possessive,
    "de", a noun of either gender such as "collègues", a noun of things: the parser's gender of
    nouns is not reliable enough to choose)."""
    if determiner is None:
        return ""
    d = determiner.text.lower()
    if wanted.plural:
        return _PLURAL_ARTICLES.get(d)
    if d not in _SINGULAR_ARTICLES or _person_gender(noun.text.lower()) != wanted.gender:
        return None
    return _SINGULAR_ARTICLES[d][wanted.gender == "Fem"]


# Endings of masculine nouns of people whose feminine differs (ouvrier, ingénieur, musicien,
# patron, marchand, employé); not "-té", "-ion" (nouns of things: une priorité, une passion).
_PERSON_ENDINGS = ("eur", "ier", "ien", "on", "and", "ant", "ais", "ois", "é")


def _person_gender(word: str) -> str | None:
    """ "Fem" for the feminine of a masculine noun of people ("infirmière", "employées"), "Masc"
    for a masculine one with a feminine of its own ("ouvrier", "ingénieurs"), else None."""
    s = _fr.singular(word) or word
    if any(m != s and _fr.feminine(m) == s for m in _fr.masculine(s)):
        return "Fem"
    if _fr.feminine(s) != s and s.endswith(_PERSON_ENDINGS) and not s.endswith(("té", "ion")):
        return "Masc"
    return None


def maybe_verb(word: str) -> bool:
    """A word that looks like a verb's third person plural ("dorment", "font")."""
    w = word.lower()
    return w in _IRREGULAR_SINGULAR or (w.endswith("ent") and len(w) > 4 and not w.endswith("ment"))


_ADVERBS_LIKE_ADJECTIVES = frozenset(
    "souvent devant avant maintenant pendant cependant autant durant comment néanmoins".split()
)


def maybe_adjective(word: str) -> bool:
    """An adjective by its ending (-ent, -ant, -if, -eux, -é, -able...), not an adverb in -ment."""
    return (
        word not in _ADVERBS_LIKE_ADJECTIVES
        and not word.endswith("ment")
        and word.endswith(
            (
                "ent",
                "ente",
                "ents",
                "entes",
                "ant",
                "ante",
                "ants",
                "antes",
                "if",
                "ive",
                "eux",
                "euse",
                "é",
                "ée",
                "és",
                "ées",
                "able",
                "ible",
                "ables",
                "ibles",
            )
        )
    )


def grammar_for(package: ModuleType) -> Grammar:
    """French agreement over the package's word forms (`package.feminine`, `plural`...)."""
    global _fr
    _fr = package
    return Grammar(
        verb=verb,
        predicate=predicate,
        gender=gender,
        maybe_verb=maybe_verb,
        maybe_adjective=maybe_adjective,
        finite_reading=finite_reading,
        object_after_verb=True,  # a clause after a verb opens with "que"
        noun=noun,
        article=article,
        collective=frozenset(
            "groupe communauté minorité majorité population peuple famille équipe classe génération nation "
            "foule couple tribu bande personnel".split()
        ),
        stand_ins={
            "VERB": "fait",
            "AUX": "peut",
            "ADJ": "bon",
            "ADV": "souvent",
            "NOUN": "chose",
            "PROPN": "Paul",
            "PRON": "cela",
            "": "fait",
        },
        relative_pronouns=frozenset({"qui"}),
        copulas=frozenset({"être", "sembler", "paraître", "devenir", "redevenir", "rester", "demeurer"}),
        skip_after_copula=frozenset(
            {
                "pas",
                "plus",
                "jamais",
                "très",
                "si",
                "trop",
                "assez",
                "bien",
                "tout",
                "toute",
                "toutes",
                "tous",
                "souvent",
                "toujours",
                "vraiment",
                "ne",
                "n'",
            }
        ),
        invariable=frozenset(
            """bien mal mieux ici là ailleurs loin près dehors dedans debout ensemble partout tard
                                tôt ainsi déjà encore aussi comme""".split()
        ),
    )
