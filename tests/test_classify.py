"""The shared text classifier (a judge model role) against plain forward passes, one text at a
time: batching, padding, the cache and the loaders change nothing but the cost. Tiny seeded
classifiers built locally through real transformers classes."""

from __future__ import annotations

import pytest

TEXTS = [
    "the workers are kind and calm.",
    "Older people often use a laptop.",
    "they help others",
    "a new survey about housing was reviewed by the city council last week.",
    "the workers are kind and calm.",  # a duplicate on purpose
    "sales",
    "",
    "Children often learn new skills fast, but some people never change their methods at work.",
    "honest",
    "the team leader was asked to manage the new office in the city",
]
LABELS = ("negative", "neutral", "positive")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from workbench.models.fixtures import build_mlm, with_text_classifier

    out = tmp_path_factory.mktemp("classify")
    return {
        "bert": with_text_classifier(out / "judge-bert", seed=11),
        "roberta": with_text_classifier(out / "judge-roberta", ("NOT_TOXIC", "TOXIC"), seed=12, style="roberta"),
        "mlm": build_mlm(out / "mlm", "bert", seed=13),
    }


def spec(batch_size: int | None = None):
    from workbench.models.runtime import LoadSpec

    return LoadSpec(device="cpu", batch_size=batch_size)


def plain(folder, texts):
    """Each text alone through AutoModelForSequenceClassification: softmax of its logits."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    out = []
    with torch.no_grad():
        for text in texts:
            logits = model(**tok(text, return_tensors="pt")).logits
            out.append(torch.softmax(logits.float(), -1)[0].tolist())
    return out


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_probabilities_equal_a_plain_forward_per_text(models, name):
    from workbench.models.classify import load_classifier

    runtimes: dict = {}
    clf = load_classifier(str(models[name]), spec=spec(4), runtimes=runtimes)
    got = clf.probabilities(TEXTS)
    want = plain(models[name], TEXTS)
    assert len(got) == len(TEXTS)
    for g, w in zip(got, want):
        assert g == pytest.approx(w, abs=1e-5)
        assert sum(g) == pytest.approx(1.0, abs=1e-5)
    assert clf.labels == (list(LABELS) if name == "bert" else ["NOT_TOXIC", "TOXIC"])
    assert runtimes[str(models[name])] is clf.runtime and clf.runtime.dtype == "float32"
    # the classifier's decisions are not all alike (the fixture spreads its outputs)
    assert len({max(range(len(row)), key=row.__getitem__) for row in got}) > 1


@pytest.mark.parametrize("name", ["bert", "roberta"])
def test_batch_size_changes_nothing(models, name):
    from workbench.models.classify import load_classifier

    one = load_classifier(str(models[name]), spec=spec(1)).probabilities(TEXTS)
    seven = load_classifier(str(models[name]), spec=spec(7)).probabilities(TEXTS)
    for a, b in zip(one, seven):
        assert max(range(len(a)), key=a.__getitem__) == max(range(len(b)), key=b.__getitem__)
        assert a == pytest.approx(b, abs=1e-6)


def test_out_of_memory_halves_the_batch(models, monkeypatch):
    from workbench.models import classify

    clf = classify.load_classifier(str(models["bert"]), spec=spec(8))
    want = clf.probabilities(TEXTS)
    clf = classify.load_classifier(str(models["bert"]), spec=spec(8))
    real = classify.TextClassifier._step

    def small_memory(self, sequences):
        if len(sequences) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(self, sequences)

    monkeypatch.setattr(classify.TextClassifier, "_step", small_memory)
    got = clf.probabilities(TEXTS)
    assert clf.batch_size == 2
    for a, b in zip(got, want):
        assert a == pytest.approx(b, abs=1e-6)


def test_cache_makes_a_rerun_compute_nothing(models, tmp_path):
    from workbench.models import classify

    path = tmp_path / "scores.sqlite"
    ticks: list[int] = []
    clf = classify.load_classifier(str(models["bert"]), spec=spec(3), cache_path=path)
    before = classify.CALLS["forward"]
    first = clf.probabilities(TEXTS, progress=ticks.append)
    assert classify.CALLS["forward"] > before
    assert sum(ticks) == len(TEXTS)  # one per text, the duplicate included

    again = classify.load_classifier(str(models["bert"]), spec=spec(3), cache_path=path)
    ticks.clear()
    before = classify.CALLS["forward"]
    second = again.probabilities(TEXTS, progress=ticks.append)
    assert classify.CALLS["forward"] == before  # no forward pass at all
    assert second == first
    assert sum(ticks) == len(TEXTS)
    # a text not seen before is the only one computed
    more = again.probabilities(TEXTS + ["a calm and careful nurse"])
    assert classify.CALLS["forward"] == before + 1 and more[:-1] == first
    # another precision is filed apart
    from workbench.models.runtime import keyed_revision

    assert again.cache_revision == keyed_revision(again.ref, again.runtime) == again.ref.revision


def test_label_probability_by_name(models):
    from workbench.core.errors import ModelError
    from workbench.models.classify import load_classifier

    clf = load_classifier(str(models["bert"]), spec=spec())
    rows = clf.probabilities(TEXTS)
    assert clf.label_probability(TEXTS, "Positive") == [r[2] for r in rows]
    assert clf.label_probability(TEXTS, "negative") == [r[0] for r in rows]
    with pytest.raises(ModelError) as err:
        clf.label_probability(TEXTS, "toxic")
    message = str(err.value)
    assert "\n" not in message and "'toxic'" in message and "negative, neutral, positive" in message


def test_a_masked_lm_is_refused_in_one_line(models):
    from workbench.core.errors import ModelError
    from workbench.models.classify import load_classifier

    with pytest.raises(ModelError) as err:
        load_classifier(str(models["mlm"]), spec=spec())
    message = str(err.value)
    assert "\n" not in message
    assert (
        "masked language model" in message and "BertForMaskedLM" in message and "ForSequenceClassification" in message
    )


def test_long_text_is_cut_to_the_position_limit(models):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from workbench.models.classify import load_classifier

    clf = load_classifier(str(models["bert"]), spec=spec())
    text = " ".join(["the workers are kind and calm"] * 80)  # about 480 tokens, over the 256 positions
    got = clf.probabilities([text])[0]
    tok = AutoTokenizer.from_pretrained(models["bert"])
    model = AutoModelForSequenceClassification.from_pretrained(models["bert"]).eval()
    with torch.no_grad():
        logits = model(**tok(text, truncation=True, max_length=clf.limit, return_tensors="pt")).logits
    assert clf.limit == 256
    assert got == pytest.approx(torch.softmax(logits, -1)[0].tolist(), abs=1e-5)


def test_standalone_loader(models, tmp_path):
    from workbench.release.runtime.classify import load_classifier_standalone
    from workbench.release.runtime.release import Refused

    runtimes: dict = {}
    clf = load_classifier_standalone(str(models["bert"]), spec(5), runtimes)
    assert clf.cache is None and runtimes[str(models["bert"])] is clf.runtime
    for g, w in zip(clf.probabilities(TEXTS[:4]), plain(models["bert"], TEXTS[:4])):
        assert g == pytest.approx(w, abs=1e-5)
    with pytest.raises(Refused, match="no such folder"):
        load_classifier_standalone(str(tmp_path / "absent"), spec(), {})
    with pytest.raises(Refused, match="masked language model"):
        load_classifier_standalone(str(models["mlm"]), spec(), {})


def test_modules_fit_a_release_evaluator():
    """Both modules' import closures hold only the standard library, torch, transformers and
    workbench modules a release's evaluator/ copies (no rich, no SQLite cache)."""
    from workbench.release.standalone import ALLOWED, BROUGHT
    from workbench.release.standalone.closure import closure

    for start in ("workbench.models.classify", "workbench.release.runtime.classify"):
        found = closure(start, set(ALLOWED) | set(BROUGHT))
        assert "workbench.models.classify" in found and "workbench.core.cache" not in found
