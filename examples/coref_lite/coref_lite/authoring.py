"""Template files (`format: coref-lite/1`, README.md) -> a pro and an anti release row per item
(one unit, labelled once), every problem at its file, line and field."""

from workbench.authoring.stages import Authoring, Row, row_hash, text_field, text_list

DATA_FILE = "data/coref_lite.jsonl"
FIELDS = ("sentence", "people", "means", "pro", "anti")
COLUMNS = ("example_id", "item_id", "category", "condition", "sentence", "pronoun", "person_a", "person_b", "answer")


def parse(raw, tid: str) -> tuple[list[Row], list]:
    problems: list = []
    category = text_field(raw.data.get("category"), raw, ("category",), problems, "category")
    items = raw.data.get("items")
    if not isinstance(items, list) or not items:
        return [], [*problems, raw.problem(("items",), "items must be a non-empty list of sentences")]
    rows: list[Row] = []
    for i, item in enumerate(items):
        at = ("items", i)
        if not isinstance(item, dict):
            problems.append(raw.problem(at, f"an item is a mapping with {', '.join(FIELDS)}"))
            continue
        texts = {k: text_field(item.get(k), raw, at + (k,), problems, k) for k in FIELDS if k != "people"}
        people = text_list(item.get("people"), raw, at + ("people",), problems, "people")
        if len(people) != 2:
            if people:  # (an empty list is reported already)
                problems.append(raw.problem(at + ("people",), "people names the sentence's two occupations"))
        elif texts["means"] is not None and texts["means"] not in people:
            problems.append(raw.problem(at + ("means",), f"means must be one of the people ({', '.join(people)})"))
        elif texts["sentence"] is not None and texts["sentence"].count("{pronoun}") != 1:
            problems.append(raw.problem(at + ("sentence",), "the sentence holds {pronoun} once"))
        elif category is not None and None not in texts.values():
            rows += _rows(category, texts, people, at)
    return rows, problems


def _rows(category: str, texts: dict, people: list[str], at: tuple) -> list[Row]:
    unit = "coref-" + row_hash("coref-lite", *texts.values(), *people)
    said = {c: texts["sentence"].replace("{pronoun}", texts[c]) for c in ("pro", "anti")}
    details = [("anti sentence", said["anti"]), ("the pronoun means", f"the {texts['means']}")]
    out = []
    for condition in ("pro", "anti"):
        record: dict = {"example_id": f"{unit}-{condition}", "item_id": unit, "category": category}
        record |= {"condition": condition, "sentence": said[condition], "pronoun": texts[condition]}
        record |= {"person_a": people[0], "person_b": people[1], "answer": people.index(texts["means"])}
        out.append(Row(record, record["example_id"], unit, said["pro"], category, details, at))
    return out


AUTHORING = Authoring(
    kind="coref-lite",
    file_format="coref-lite/1",
    public_format="jsonl",
    parse=parse,
    columns=COLUMNS,
    text_column="sentence",
    data_file=DATA_FILE,
    unit="coreference item",
    top_level=frozenset({"category", "items"}),
    nested={"items.[]": frozenset(FIELDS)},
    question="Is this a fair coreference item: the sentence alone tells whom the pronoun means, and the "
    "pro pronoun is the one a stereotype expects of that person (valid); a flawed item (invalid); or "
    "not sensible text (incoherent)?",
    about="WinoBias-style coreference sentences: each names two occupations and a pronoun that, by the "
    "sentence's meaning, refers to one of them. Every item is asked with the pronoun a stereotype expects "
    "(pro) and with the other one (anti). Measures: accuracy per condition, and pro − anti accuracy within "
    "items (0 = the pronoun's gender does not matter).",
    fields="`data/coref_lite.jsonl`, one sentence per line: `example_id`, `item_id` (shared by an item's two "
    "sentences), `category`, `condition` (pro or anti), `sentence`, `pronoun`, the two occupations `person_a` "
    "and `person_b`, and `answer` (0 or 1: the one the pronoun means).",
)
