"""Stage `generate`: masked samples -> candidates (kept and rejected, each with its reason).

The masked LM sees each *unique* masked hypothesis once; its top-k fills become candidates
for every masked sample that carries that hypothesis. Fills are cached by (model, revision,
text, k), so a rerun computes only new masked hypotheses. Fluency is not scored here: it is a
triage score for annotators, so the `fluency` stage scores only what reaches the queue.

`[generate] proposers` lists several models, in order: each masked LM gives its top-k fills,
each LLM its answer of top_k words for a hypothesis with one mask (models/llm_proposer.py),
cached alike; every proposal goes through the same filters and inflection, a hypothesis that
an earlier proposer gave already being a duplicate. The `proposer` column names who proposed.
"""

from __future__ import annotations

import math
import re

from .... import languages
from ....core.errors import StageError
from ....core.ids import hypothesis_id, joined_key, json_hash, normalise_text, short_hash, split_key
from ....core.cache import cached_or_computed
from ....core.stage import Output, Stage
from ..tables import CANDIDATE_ORDER, bindings_text, generate_schema
from ....models.proposer import LazyMaskedLM, Proposer, UsesProposalModel, cache_ref
from ..templates import fills as F

# Bumped when the POS decisions change for the same pipeline: cached tags and stage outputs
# made under the earlier rule are not reused (2: the parser runs where the ruler reads it).
POS_RULES = 2


class Generate(UsesProposalModel, Stage):
    name = "generate"
    upstream = ("expand",)
    format = 5  # 5: the proposer of each candidate (4: fills written as the sentence needs them)
    partition_key = "template_id"
    partition_noun = "templates"
    sort_keys = CANDIDATE_ORDER
    reads_models = True
    takes_proposers = True

    def schema(self):
        return generate_schema()

    def _masked(self, inputs):
        import pyarrow.compute as pc

        expanded = inputs["expand"]
        masked = expanded.filter(pc.greater(expanded["n_masks"], 0))
        if masked.num_rows == 0:
            raise StageError(
                "the templates have no masked hypotheses: add <mask> to hypotheses "
                "(see `workbench templates suggest-masks`)"
            )
        return masked

    def partitions(self, ctx, inputs):
        """Per template, a hash of everything of its masked samples that generation reads."""
        columns = ["template_id", "sample_id", "hypothesis", "hypothesis_template", "mask_pos", "groups", "bindings"]
        per: dict[str, list] = {}
        for s in self._masked(inputs).select(columns).to_pylist():
            per.setdefault(s["template_id"], []).append(
                (
                    s["sample_id"],
                    s["hypothesis"],
                    s["hypothesis_template"],
                    s["mask_pos"],
                    s["groups"],
                    bindings_text(s["bindings"]),
                )
            )
        return {t: json_hash(sorted(v)) for t, v in per.items()}

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa
        import pyarrow.compute as pc

        gen = self.section(ctx)
        language = languages.require(
            ctx.config.project.language, "generate (its article, group-word, number and POS rules)"
        )
        proposers = self.proposers(ctx, gen)
        masked = self._masked(inputs)
        todo = masked
        if reused:
            todo = masked.filter(pc.invert(pc.is_in(masked["template_id"], value_set=pa.array(sorted(reused)))))
        samples_new = todo.to_pylist()  # only the templates to generate again become Python rows
        rows, work, loaded = _candidates(samples_new, gen, proposers, ctx.cache, language)
        table = pa.Table.from_pylist(rows, schema=generate_schema()) if rows else None
        work = {**work, "model_loaded": loaded}
        if gen.proposers is None:
            ref = proposers[0].ref
            return Output(table, work, {"model": {"name": ref.name, "revision": ref.revision}, "top_k": gen.top_k})
        return Output(table, work, {**_proposers_info(proposers), "top_k": gen.top_k})

    def counts(self, ctx, table, inputs, work):
        import pyarrow.compute as pc

        masked = self._masked(inputs)
        reasons = {r["values"]: r["counts"] for r in pc.value_counts(table["reject_reason"]).to_pylist() if r["values"]}
        out = {
            "masked_samples": masked.num_rows,
            "masked_hypotheses": pc.count_distinct(masked["hypothesis"]).as_py(),
            "candidates": table.num_rows,
            "kept": pc.sum(table["kept"]).as_py() or 0,
            "rejected_by_reason": dict(sorted(reasons.items())),
            **work,
        }
        if self.section(ctx).proposers is not None:
            out["candidates_per_proposer"] = {
                r["values"]: r["counts"] for r in pc.value_counts(table["proposer"]).to_pylist()
            }
        return out


STAGE = Generate()


def _proposers_info(proposers: list[Proposer]) -> dict:
    """The manifest's record of the proposers: each one's name, kind and revision (an LLM's as
    its answers are filed, with how it was asked), and `model`, the first masked LM (the card's)."""
    listed = []
    for p in proposers:
        if p.kind == "masked":
            listed.append({"name": p.name, "kind": "masked", "revision": p.ref.revision})
        else:
            asking = p.llm.asking
            listed.append(
                {
                    "name": p.name,
                    "kind": "llm",
                    "revision": p.llm.revision,
                    "prompt": asking.prompt,
                    "chat_template": asking.chat_template,
                }
            )
    first = next((p for p in proposers if p.kind == "masked"), None)
    model = {"name": first.ref.name, "revision": first.ref.revision} if first is not None else None
    return {"model": model, "proposers": listed}


def _masked_fills(p: Proposer, texts: list[str], gen, cache) -> tuple[dict, dict[str, int], bool]:
    """A masked LM's top-k fills of each text (cached by model, revision, k and text)."""
    model = LazyMaskedLM(p.ref, gen)
    k = gen.top_k

    def compute_fills(chunk_keys, advance):
        chunk_texts = [split_key(key)[1] for key in chunk_keys]
        result = model().fill(chunk_texts, k, progress=advance)
        return {key: [f.__dict__ for f in result[t]] for key, t in zip(chunk_keys, chunk_texts)}

    fill_keys = [joined_key(k, t) for t in texts]
    found, computed = cached_or_computed(cache, "fill", cache_ref(p.ref, gen), fill_keys, compute_fills, "fill masks")
    return {t: found[joined_key(k, t)] for t in texts}, {"computed_fills": computed}, model.loaded


def _llm_fills(p: Proposer, texts: list[str], gen, cache) -> tuple[dict, dict[str, int], bool]:
    """An LLM's words for each text with one mask, as fills (its list's order their rank; no
    log-probability), cached by model, revision and how it is asked, k and text; a text with
    several masks gets none (counted), an answer without a word none (counted)."""
    from ....models.llm_proposer import NAMESPACE

    k = gen.top_k
    single = [t for t in texts if t.count(F.MARK) == 1]

    def compute(chunk_keys, advance):
        chunk_texts = [split_key(key)[1] for key in chunk_keys]
        result = p.llm.propose(chunk_texts, k, progress=advance)
        return {key: result[t] for key, t in zip(chunk_keys, chunk_texts)}

    keys = [joined_key(k, t) for t in single]
    found, computed = cached_or_computed(cache, NAMESPACE, p.llm.cache_ref(k), keys, compute, f"ask {p.name}")
    out: dict[str, list] = {t: [] for t in texts}
    unread = empty = 0
    for t in single:
        answer = found[joined_key(k, t)]
        unread += answer["unread"]
        empty += not answer["words"]
        out[t] = [
            {"words": [w], "tokens": [w], "word_start": [True], "logprob": None, "rank": i}
            for i, w in enumerate(answer["words"], start=1)
        ]
    work = {
        "computed_proposals": computed,
        "answers_without_words": empty,
        "answer_items_unread": unread,
        "several_masks_not_asked": len(texts) - len(single),
    }
    return out, work, p.llm.loaded


def _candidates(
    samples: list[dict], gen, proposers: list[Proposer], cache, language=None
) -> tuple[list[dict], dict, bool]:
    """Candidate rows (kept and rejected) for these masked samples, and counts of the work done
    (with several proposers, per proposer)."""
    if not samples:
        return [], {"computed_fills": 0}, False
    texts = sorted({r["hypothesis"] for r in samples})
    proposed, work, loaded = [], {}, False
    for p in proposers:
        fills, done, was_loaded = (_masked_fills if p.kind == "masked" else _llm_fills)(p, texts, gen, cache)
        proposed.append((p, fills))
        loaded = loaded or was_loaded
        if gen.proposers is None:
            work.update(done)
        else:
            work.setdefault("proposer_work", {})[p.name] = done
    if gen.proposers is not None:  # fills and LLM answers computed now, all proposers together
        work["computed_fills"] = sum(
            w.get("computed_fills", 0) + w.get("computed_proposals", 0) for w in work["proposer_work"].values()
        )

    enabled = set(gen.filters)
    rows: list[dict] = []
    seen_hypotheses: set[tuple] = set()
    language = language or languages.find(languages.DEFAULT)
    group_cache = _group_words(cache, {(s["group"], s["counterfactual_group"]) for s in samples}, language)
    # A capital is a name by a masked LM's tokenizer (an LLM proposer's by the first masked LM's,
    # else kept: a served model's tokenizer is not at hand).
    first_masked = next((_Casing(p.ref) for p in proposers if p.kind == "masked"), None)
    casings = {p.name: _Casing(p.ref) if p.kind == "masked" else first_masked or _Casing(None) for p in proposers}
    for s in samples:
        gkey = (s["group"], s["counterfactual_group"])
        base = {key: s[key] for key in s if key not in ("hypothesis", "n_masks", "mask_pos", "question")}
        base["masked_hypothesis"] = s["hypothesis"]
        for p, fills in proposed:
            casing = casings[p.name]
            for f in fills[s["hypothesis"]]:
                rows.append(_row(s, base, f, p, gen, casing, enabled, group_cache[gkey], language))

    pos_work = _pos_filter(rows, cache, language=language) if "pos" in enabled else {}
    if "duplicate" in enabled:
        for r in rows:
            if r["reject_reason"] is None:
                key = (r["template_id"], r["premise"], r["stance"], normalise_text(r["hypothesis"]).lower())
                if key in seen_hypotheses:
                    r["reject_reason"] = "duplicate"
                seen_hypotheses.add(key)
    for r in rows:
        r["kept"] = r["reject_reason"] is None

    return rows, {**work, **pos_work}, loaded


def _row(s: dict, base: dict, f: dict, p: Proposer, gen, casing, enabled: set, groups: set, language) -> dict:
    """One candidate: the fill written as the sentence needs it, and the first filter that rejects it."""
    # The fills as the sentence writes them: a capital only at a sentence start (or for a
    # name or an acronym), and a word that agrees with a group in the form the group needs.
    words = written_fills(s, f["words"], language, casing)
    if not any(
        r in enabled
        for i, w in enumerate(f["words"])
        for r in F.word_filter_reasons(w, f["tokens"][i], f["word_start"][i], language)
    ):
        words = agreed_fills(s, words, language)
    filled = F.apply_fills(s["hypothesis"], words, language=language)
    reason = None
    for i, word in enumerate(words):
        reason = F.first_enabled_reason(word, f["tokens"][i], f["word_start"][i], filled, i, groups, enabled, language)
        if reason is not None:
            break
    # The masked LM of `[generate] model` keeps the ids candidates always had; another
    # proposer's differ from its, should both propose a word.
    extra = () if p.name == gen.model and p.kind == "masked" else (p.name,)
    return {
        **base,
        "candidate_id": short_hash(s["sample_id"], *f["words"], *extra),
        "hypothesis": filled.text,
        "hypothesis_id": hypothesis_id(filled.text),
        "fill": list(words),
        "fill_tokens": list(f["tokens"]),
        "fill_spans": [list(span) for span in filled.spans],
        "mask_pos": s["mask_pos"],
        "article_fixed": filled.article_fixed,
        "fill_rank": f["rank"],
        "fill_logprob": f["logprob"],
        "fill_score": None if f["logprob"] is None else math.exp(f["logprob"]),
        "mlm_name": p.name,
        "mlm_revision": p.ref.revision if p.kind == "masked" else p.llm.revision,
        "proposer": p.name,
        "reject_reason": reason,
        "pos_found": None,
    }


# Where a sentence starts: the text's start, or after a full stop, and any opening quote or bracket.
_SENTENCE_START = re.compile(r"(?:^|[.!?\u2026]\s+)[\"'\u00ab\u201c(\s]*$")


class _Casing:
    """Whether a capitalised fill is a name, by the masked LM's own tokenizer: a word whose
    lower-case form is no longer a whole word of its vocabulary ("Paris" -> "par", "##is") is
    kept; one whose lower-case form is as whole ("Takes" -> "takes") is a common word. The
    tokenizer is loaded only when such a fill comes up, and a tokenizer that cannot be loaded
    keeps every capital."""

    def __init__(self, ref):
        self.ref, self.tokenizer, self.failed = ref, None, ref is None

    def pieces(self, word: str) -> float | None:
        if self.tokenizer is None and not self.failed:
            try:
                from transformers import AutoTokenizer

                revision = None if self.ref.revision.startswith("sha256:") else self.ref.revision
                self.tokenizer = AutoTokenizer.from_pretrained(self.ref.location, revision=revision)
            except Exception:  # a missing or unreadable model: its capitals are kept
                self.failed = True
        if self.tokenizer is None:
            return None
        tokens = self.tokenizer.tokenize(" " + word)
        return math.inf if not tokens or self.tokenizer.unk_token in tokens else len(tokens)

    def common(self, word: str) -> bool:
        lower, as_is = self.pieces(word.lower()), self.pieces(word)
        return lower is not None and lower <= as_is


def written_fills(sample: dict, words: list[str], language, casing: _Casing) -> list[str]:
    """The fills in sentence case: a fill that opens a sentence gets a capital; one inside a
    sentence loses the capital a cased masked LM gave it ("Older workers Takes change" ->
    "takes"), unless it is an acronym ("NASA"), written so anywhere ("I"), of mixed case
    ("iPhone"), or a name (its mask allows PROPN, or has no POS, and the tokenizer reads it as
    a name: `_Casing`)."""
    parts = sample["hypothesis"].split(F.MARK)
    if len(parts) - 1 != len(words):
        return list(words)
    constraints = sample.get("mask_pos") or [None] * len(words)
    out, before = [], parts[0]
    for i, word in enumerate(words):
        if _SENTENCE_START.search(before):
            word = word[:1].upper() + word[1:]
        elif word[:1].isupper() and word[1:] == word[1:].lower() and word not in language.capitalised:
            allowed = constraints[i] if i < len(constraints) else None
            if (allowed and "PROPN" not in allowed) or casing.common(word):
                word = word.lower()
        out.append(word)
        before += word + parts[i + 1]
    return out


def agreed_fills(sample: dict, words: list[str], language) -> list[str]:
    """The fills with each word that agrees with a group (a verb whose subject it is; in French
    a predicate adjective or participle) in the form the group needs, judged from the word
    itself (`grammar.agree_in_place`): the masked LM chose it for that group, but a small or
    random model does not always agree it; and a verb after an auxiliary that takes its base
    form in that form ("doesn't works" -> "doesn't work"). Read by the language's parse of the sentence
    rendered from its template; a parse that does not settle it, or no parser, leaves the fill."""
    from ....authoring import text as tt
    from ....core.errors import ModelError
    from ....languages import grammar as G
    from ..tables import bindings_dict
    from ..templates import sentences as S
    from ..templates.counterfactual import written_groups

    template = sample.get("hypothesis_template")
    grammar = language.grammar
    if grammar is None or not template:
        return list(words)
    # A verb after "doesn't", "can", "will"... takes its base form, whatever its subject.
    based = grammar.base is not None and bool(set(language.tokens(template)) & grammar.takes_base)
    if not based and not any(p in tt.GROUP_KEYS for p in tt.placeholders(template)):
        return list(words)
    # Only a verb (and, in a language that agrees them, an adjective or participle) agrees: masks
    # that allow neither are not parsed.
    agreeing = {"VERB", "AUX"} | ({"ADJ"} if grammar.predicate is not None else set())
    constraints = sample.get("mask_pos") or []
    if constraints and all(c and not set(c) & agreeing for c in constraints):
        return list(words)
    bindings = bindings_dict(sample.get("bindings"))
    values = {**bindings, **sample["groups"]}
    try:
        pieces, _ = S.with_groups(
            template, {**bindings, **written_groups(sample)}, values, language, list(words), filled_for=sample["groups"]
        )
        analysis = S._analysis(tuple(pieces.texts), tuple(pieces.kinds), tuple(pieces.pos), language)
    except (ModelError, ValueError):
        return list(words)
    fills = [i for i, kind in enumerate(pieces.kinds) if kind == "fill"]
    if len(fills) != len(words):
        return list(words)
    agreed = G.agree_in_place(pieces.texts, pieces.kinds, analysis, language, only=frozenset({"fill"}))
    return ["".join(t for t, o in zip(agreed.texts, agreed.origin) if o == i) for i in fills]


def _group_words(cache, pairs: set[tuple], language) -> dict[tuple, set[str]]:
    """Group words (with inflected forms) per group pair; cached per language, as importing
    inflect is slow."""
    keys = {joined_key(*p): p for p in pairs}
    found = cache.get_many("group_words", language.code, "1", list(keys))
    missing = {k: sorted(F.group_words(*p, language=language)) for k, p in keys.items() if k not in found}
    if missing:
        cache.put_many("group_words", language.code, "1", missing)
        found.update(missing)
    return {keys[k]: set(v) for k, v in found.items()}


def _pos_filter(rows: list[dict], cache, pipeline: str | None = None, language=None) -> dict[str, int]:
    """Reject fills whose part of speech (spaCy, on the filled sentence) misses the slot's.

    The spec is the full pipeline's tag. Only the tagger (and what it needs) runs on every
    unique filled text; a text goes through the parser as well when one of its fills is split
    into several tokens (its POS is the span's syntactic root) or is a token whose tag the
    attribute ruler may change from the dependency label (`ParseDependence`: main-verb
    "have"/"do", auxiliaries, "that"...). So every decision equals the full pipeline's, at
    about the tagger's cost. The POS at each fill is cached by (pipeline, version, text, span)."""
    from ..templates.masks import ParseDependence, default_spacy_pipeline, load_spacy, pipeline_version

    todo = [r for r in rows if r["reject_reason"] is None and any(r["mask_pos"])]
    if not todo:
        return {"pos_texts_tagged": 0, "pos_texts_parsed": 0}
    pipeline = pipeline or default_spacy_pipeline(language)
    version = f"{pipeline_version(pipeline)}+{POS_RULES}"

    def keys_of(r):
        return [joined_key(f"{a}:{b}", r["hypothesis"]) for (a, b) in r["fill_spans"]]

    wanted = sorted({k for r in todo for k in keys_of(r)})
    found = cache.get_many("pos", pipeline, version, wanted)
    spans_by_text: dict[str, list[str]] = {}
    for k in wanted:
        if k not in found:
            spans_by_text.setdefault(split_key(k)[1], []).append(k)
    missing_texts = sorted(spans_by_text)
    tagger = load_spacy(pipeline, tagger_only=True) if missing_texts else None
    dependence = ParseDependence(tagger) if tagger is not None else None
    need_parse: list[str] = []  # texts where a fill's POS may come from the parse
    for i in range(0, len(missing_texts), 2048):
        chunk = missing_texts[i : i + 2048]
        new = {}
        for text, doc in zip(chunk, tagger.pipe(chunk, batch_size=256)):
            dependent = None
            tags = {}
            for k in spans_by_text[text]:
                a, b = map(int, split_key(k)[0].split(":"))
                span = doc.char_span(a, b, alignment_mode="expand")
                if span is not None and len(span) > 1:
                    break
                if span is not None and len(span):
                    if dependent is None:
                        dependent = dependence.tokens(doc)
                    if span[0].i in dependent:
                        break
                tags[k] = span[0].pos_ if span is not None and len(span) else None
            else:
                new.update(tags)
                continue
            need_parse.append(text)
        cache.put_many("pos", pipeline, version, new)
        found.update(new)
    if need_parse:
        full = load_spacy(pipeline)
        new = {}
        for text, doc in zip(need_parse, full.pipe(need_parse, batch_size=256)):
            for k in spans_by_text[text]:
                a, b = map(int, split_key(k)[0].split(":"))
                span = doc.char_span(a, b, alignment_mode="expand")
                new[k] = span.root.pos_ if span is not None and len(span) else None
        cache.put_many("pos", pipeline, version, new)
        found.update(new)
    for r in todo:
        for key, allowed in zip(keys_of(r), r["mask_pos"]):
            if allowed and found[key] not in allowed:
                r["reject_reason"] = "pos"
                r["pos_found"] = found[key]
                break
    return {"pos_texts_tagged": len(missing_texts), "pos_texts_parsed": len(need_parse)}
