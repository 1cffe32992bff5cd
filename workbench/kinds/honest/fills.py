"""The K fills of each template's `[M]` slot, for masked and causal LMs.

Masked LMs (score rule `fill-mask`): the slot becomes the tokenizer's mask token, and the
fills are the K most probable vocabulary entries there, special tokens excluded, each decoded
alone and stripped, best first: what `pipeline("fill-mask", top_k=K)` returns as `token_str`
(the public HONEST recipe), without special tokens.

Causal LMs see only the text before the slot (stripped of trailing spaces, BOS first):
  - `next-word` (default): the K most probable next tokens that start a word (a piece with a
    leading space, or any piece when the slot opens the text), each completed greedily with
    the most probable next piece while that piece continues the word (no leading space,
    starts with a letter or digit; at most 8 pieces), decoded and stripped. Ranked by the
    first piece's probability; two candidates may complete to the same word, and both count.
  - `next-token`: the same K word-starting pieces, not completed (cheaper; a lemma that
    needs several pieces can then never match).
  - `generation`: K generated completions of a few words, scored word by word (completions.py).

Pure code (the LM scoring layer's scorers come in as arguments): a release's standalone
evaluate.py carries it verbatim.
"""

from __future__ import annotations

from ...core.errors import InputError, ModelError
from ...models.lm_scoring import Progress
from .completions import GENERATION
from .parsing import SLOT

MASKED_RULES = ("fill-mask",)
CAUSAL_RULES = ("next-word", "next-token", GENERATION)
MAX_WORD_PIECES = 8


def score_rule(kind: str, requested: str | None) -> str:
    """The rule for a model kind; an unknown or mismatched --score-rule is the user's error."""
    rules = MASKED_RULES if kind == "masked" else CAUSAL_RULES
    if requested is None:
        return rules[0]
    if requested not in rules:
        raise InputError(
            f"--score-rule {requested!r} does not apply to a {kind} LM in honest; choose {' or '.join(rules)}"
        )
    return requested


def _vocab_size(scorer) -> int:
    model = getattr(scorer, "model", None)
    size = getattr(getattr(model, "config", None), "vocab_size", None)
    return int(size) if size else len(scorer.tokenizer)


def masked_fills(scorer, texts: list[str], K: int, progress: Progress = None) -> list[list[str]]:
    """Fills per text (texts are distinct; the caller maps rows to them)."""
    tok = scorer.tokenizer
    specials = set(tok.all_special_ids)
    vocab = _vocab_size(scorer)
    usable = vocab - len({t for t in specials if t < vocab})
    if K > usable:
        raise InputError(
            f"--top-k {K} is larger than the vocabulary of {scorer_name(scorer)}: it has {usable} non-special tokens"
        )
    sequences, positions = [], []
    for text in texts:
        ids = scorer.encode(text.replace(SLOT, tok.mask_token), add_special_tokens=True)
        if tok.mask_token_id not in ids:
            raise ModelError(
                f"the mask token of {scorer_name(scorer)} was lost encoding {text!r} "
                "(is the template longer than the model's input?)"
            )
        sequences.append(ids)
        positions.append(ids.index(tok.mask_token_id))
    ranked = scorer.top_k_at_mask(sequences, positions, K, exclude_special=True, progress=progress)
    decoded: dict[int, str] = {}
    out = []
    for text, row in zip(texts, ranked):
        if len(row) < K:
            raise ModelError(f"{scorer_name(scorer)} returned {len(row)} fills for {text!r}, not {K}")
        words = []
        for tid, _ in row:
            word = decoded.get(tid)
            if word is None:
                word = decoded[tid] = tok.decode([tid]).strip()
            words.append(word)
        out.append(words)
    return out


class _Pieces:
    """How each causal-LM token sits in a word, computed once per token id."""

    def __init__(self, tokenizer):
        self.tok = tokenizer
        self.specials = set(tokenizer.all_special_ids)
        self.cache: dict[int, tuple[bool, bool]] = {}

    def kind(self, tid: int) -> tuple[bool, bool]:
        """(starts a word, continues a word)."""
        got = self.cache.get(tid)
        if got is None:
            if tid in self.specials:
                got = (False, False)
            else:
                piece = self.tok.convert_ids_to_tokens(tid) or ""
                text = self.tok.decode([tid])
                marked = piece[:1] in ("Ġ", "▁") or text[:1].isspace()
                visible = bool(text.strip())
                got = (marked and visible, not marked and text[:1].isalnum())
            self.cache[tid] = got
        return got


def causal_prefix(scorer, text: str) -> list[int]:
    """BOS + the template's text before the slot, without trailing spaces."""
    before = text[: text.index(SLOT)].rstrip()
    ids = list(scorer.encode(before)) if before else []
    bos = getattr(scorer, "bos_id", None)
    return ([bos] if bos is not None else []) + ids


def causal_fills(
    scorer, texts: list[str], K: int, rule: str = "next-word", progress: Progress = None
) -> list[list[str]]:
    """Fills per text by the causal rule named in the module docstring."""
    tok = scorer.tokenizer
    pieces = _Pieces(tok)
    vocab = _vocab_size(scorer)
    prefixes = [causal_prefix(scorer, t) for t in texts]
    if any(not p for p in prefixes):
        raise ModelError(
            f"{scorer_name(scorer)} has no BOS token, so a template that starts with {SLOT} has nothing to predict from"
        )
    at_start = [not t[: t.index(SLOT)].strip() for t in texts]
    starts: list[list[int] | None] = [None] * len(texts)
    pending = list(range(len(texts)))
    asked = min(vocab, max(2 * K, K + 50))
    first_pass = True
    while pending:
        ranked = scorer.next_token_top_k(
            [prefixes[i] for i in pending], asked, progress=progress if first_pass else None
        )
        first_pass = False
        short = []
        for i, row in zip(pending, ranked):
            chosen = [
                tid
                for tid, _ in row
                if (pieces.kind(tid)[0] or (at_start[i] and tid not in pieces.specials and tok.decode([tid]).strip()))
            ]
            if len(chosen) >= K:
                starts[i] = chosen[:K]
            else:
                short.append(i)
        if short and asked >= vocab:
            raise InputError(
                f"--top-k {K} is larger than the number of word-starting tokens of "
                f"{scorer_name(scorer)} after {texts[short[0]]!r}"
            )
        pending, asked = short, min(vocab, asked * 4)
    words: list[list[list[int]]] = [[[tid] for tid in starts[i]] for i in range(len(texts))]
    if rule == "next-word":
        open_ = [(i, r) for i in range(len(texts)) for r in range(K)]
        for _ in range(MAX_WORD_PIECES - 1):
            if not open_:
                break
            ranked = scorer.next_token_top_k([prefixes[i] + words[i][r] for i, r in open_], 1)
            still = []
            for (i, r), row in zip(open_, ranked):
                tid = row[0][0] if row else None
                if tid is not None and pieces.kind(tid)[1]:
                    words[i][r].append(tid)
                    still.append((i, r))
            open_ = still
    return [[tok.decode(ids).strip() for ids in row] for row in words]


def scorer_name(scorer) -> str:
    return str(getattr(scorer, "name", None) or getattr(getattr(scorer, "ref", None), "name", None) or "the model")
