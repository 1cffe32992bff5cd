"""Tiny seeded models built locally through the real `transformers` classes.

They have random weights, so their predictions mean nothing, but they are saved with
`save_pretrained` and loaded back with `from_pretrained` exactly like a Hub checkpoint, which
is what the tests and the offline demo need. The vocabulary is English words of the kind the
templates use, plus sub-word pieces, punctuation and numbers so every generation filter can
be exercised.
"""

from __future__ import annotations

import json
from pathlib import Path

# Labels orders of real NLI checkpoints differ; the fixtures reproduce three of them.
NLI_LABEL_ORDERS = {
    "nli-a": {0: "entailment", 1: "neutral", 2: "contradiction"},
    "nli-b": {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
    "nli-c": {0: "Neutral", 1: "Contradiction", 2: "Entailment"},
}

_WORDS = """
the a an and or but not no to of in on at for with without by from as than more less most least
is are was were be been being do does did have has had can cannot could should would will may might must
they them their he she his her it its we our you your who which that this these those there here
men women man woman people person persons workers worker employees employee leaders leader children child
younger older young old with disabilities disabled without public transport housing office retail
sales design team department management board positions position roles role jobs job work company firm
patient nurturing calm caring kind gentle warm loving emotional rational logical strong weak smart
decisive assertive capable confident productive adaptable reliable efficient independent self reliant
slow fast careful careless lazy honest able unable good bad better worse best worst natural naturally
handle use learn manage need rely depend lead care raise cook clean earn make take hold resist fear like
love hate avoid accept help helps needs uses learns manages leads cares cooks cleans earns makes takes
childcare elder care smartphone laptop technology device devices classes class study survey report agency
city council program workshop weekend week weeks hours day days year years time money family home
new old same different other many much few all some every each both either neither only also too very
quite really often always never sometimes usually often rarely about into over under after before
asked offered hired placed promoted reviewed attended followed compared evaluated included involved
equal numbers results feedback help others sick customers tasks skills methods change changes
honest open awkward eager upset afraid angry happy sad quiet loud busy ready willing
""".split()
# A French vocabulary for French projects' fixtures (`build_mlm(..., words=FRENCH_WORDS)`): the
# words of the French example benchmark and the fills its filters must see (the verb "a", group
# words in every form, numbers).
FRENCH_WORDS = """
le la les l un une des du de d qu et ou mais pas ne n plus moins très trop bien mal au aux à en dans sur pour avec
sans par que qui quelqu on il elle ils elles son sa ses leur leurs ce cette
est sont a ont était étaient fait font peut peuvent doit doivent va vont
femme femmes homme hommes fille filles garçon garçons jeune jeunes âgé âgée âgés âgées employé employée employés
employées personne personnes collègue collègues
dîner déjeuner repas cuisine centre social travail bureau équipe méthode méthodes nouvelle nouveau outil outils
ordinateur logiciel réunion semaine formation nouvel reçu
oublié raté préparé réussi appris compris refusé accepté aimé détesté utilisé adopté cuisiné mangé lu fini commencé
suivi évité rejeté
oublie rate prépare réussit apprend comprend refuse accepte aime déteste utilise adopte suit évite rejette
lent lente rapide calme patient patiente fatigué fatiguée capable incapable habile maladroit bon bonne mauvais
mauvaise
souvent toujours jamais parfois vite lentement deux trois dix
""".split()
_PIECES = ["##s", "##ing", "##ed", "##ly", "##er", "##est", "##ness", "##ful", "##able"]
_SYMBOLS = list(".,;:!?'\"()-") + ["0", "1", "2", "3", "7", "10", "42", "100", "1990"]


def vocabulary(words: list[str] | None = None) -> list[str]:
    """The fixtures' vocabulary: the words (English by default), capitalised too, pieces and symbols."""
    base = words or _WORDS
    words = []
    seen = set()
    for w in base + [w.capitalize() for w in base] + _PIECES + _SYMBOLS:
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def _quiet() -> None:
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()


def _bert_tokenizer(words: list[str] | None = None):
    from transformers import BertTokenizer

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {t: i for i, t in enumerate(specials + vocabulary(words))}
    return BertTokenizer(vocab=vocab, do_lower_case=False)


def _bpe_tokenizer():
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import RobertaTokenizer

    corpus = [" ".join(_WORDS[i : i + 12]) for i in range(0, len(_WORDS), 12)]
    corpus += [" ".join(_WORDS).capitalize(), " ".join(_SYMBOLS)]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        corpus,
        vocab_size=1200,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    model = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    # As in real RoBERTa checkpoints, the mask token absorbs the space before it.
    return RobertaTokenizer(
        vocab=model["vocab"], merges=merges, mask_token=AddedToken("<mask>", lstrip=True, rstrip=False, special=True)
    )


def _unigram_tokenizer(style: str, words: list[str] | None = None):
    """A SentencePiece (unigram) tokenizer of XLM-R's or CamemBERT's class, trained on the words:
    the multilingual and French checkpoints' kind of vocabulary (word starts marked with ▁)."""
    from tokenizers import AddedToken, SentencePieceUnigramTokenizer
    from transformers import CamembertTokenizerFast, XLMRobertaTokenizerFast

    base = words or _WORDS
    corpus = [" ".join(base[i : i + 12]) for i in range(0, len(base), 12)]
    corpus += [" ".join(w.capitalize() for w in base), " ".join(_SYMBOLS)]
    spm = SentencePieceUnigramTokenizer()
    spm.train_from_iterator(
        corpus,
        vocab_size=1200,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        unk_token="<unk>",
        show_progress=False,
    )
    cls = CamembertTokenizerFast if style == "camembert" else XLMRobertaTokenizerFast
    # As in the real checkpoints, the mask token absorbs the space before it.
    return cls(
        tokenizer_object=spm._tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        cls_token="<s>",
        sep_token="</s>",
        mask_token=AddedToken("<mask>", lstrip=True, rstrip=False, special=True),
    )


def _sizes(size: str) -> dict:
    if size == "base":
        return dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024)
    return dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def build_mlm(
    out: Path, style: str = "bert", size: str = "tiny", seed: int = 0, words: list[str] | None = None
) -> Path:
    """A masked LM: `bert` (WordPiece), `roberta` (byte-level BPE), or `xlmr` and `camembert` (the
    multilingual and French classes, SentencePiece); `words`: its vocabulary's words instead of
    the English ones (all but roberta)."""
    import torch
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        CamembertConfig,
        CamembertForMaskedLM,
        RobertaConfig,
        RobertaForMaskedLM,
        XLMRobertaConfig,
        XLMRobertaForMaskedLM,
    )

    _quiet()
    torch.manual_seed(seed)
    if style == "bert":
        tok = _bert_tokenizer(words)
        model = BertForMaskedLM(BertConfig(vocab_size=len(tok), max_position_embeddings=128, **_sizes(size)))
    elif style == "roberta":
        tok = _bpe_tokenizer()
        model = RobertaForMaskedLM(
            RobertaConfig(
                max_position_embeddings=130,
                **_token_ids(tok),
                **_sizes(size),
            )
        )
    elif style in ("xlmr", "camembert"):
        tok = _unigram_tokenizer(style, words)
        config, model_class = (
            (CamembertConfig, CamembertForMaskedLM)
            if style == "camembert"
            else (XLMRobertaConfig, XLMRobertaForMaskedLM)
        )
        model = model_class(
            config(
                max_position_embeddings=130,
                **_token_ids(tok),
                **_sizes(size),
            )
        )
    else:
        raise ValueError(f"unknown MLM style {style!r}")
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_embedder(out: Path, seed: int = 0, size: str = "tiny") -> Path:
    """A sentence-embedding encoder as sentence-transformers' MiniLM checkpoints are (a `BertModel`
    with its WordPiece tokenizer, read through `AutoModel` and mean-pooled: models/embedding.py)."""
    import torch
    from transformers import BertConfig, BertModel

    _quiet()
    torch.manual_seed(seed)
    tok = _bert_tokenizer()
    model = BertModel(BertConfig(vocab_size=len(tok), max_position_embeddings=128, **_sizes(size)))
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _token_ids(tok) -> dict:
    """The config fields a model takes from its tokenizer: its vocabulary size and special ids."""
    return dict(
        vocab_size=len(tok), pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
    )


def build_nli(
    out: Path,
    id2label: dict[int, str],
    style: str = "bert",
    size: str = "tiny",
    seed: int = 0,
    neutral_share: float | None = 0.6,
    words: list[str] | None = None,
) -> Path:
    """An NLI classifier: `bert`, `roberta` or `xlmr` (multilingual; `words`: its vocabulary)."""
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
        XLMRobertaConfig,
        XLMRobertaForSequenceClassification,
    )

    _quiet()
    torch.manual_seed(seed)
    labels = {int(k): v for k, v in id2label.items()}
    common = dict(num_labels=len(labels), id2label=labels, label2id={v: k for k, v in labels.items()}, **_sizes(size))
    if style == "bert":
        tok = _bert_tokenizer()
        model = BertForSequenceClassification(BertConfig(vocab_size=len(tok), max_position_embeddings=256, **common))
    elif style == "xlmr":  # the class of multilingual XNLI classifiers
        tok = _unigram_tokenizer("xlmr", words)
        model = XLMRobertaForSequenceClassification(
            XLMRobertaConfig(
                max_position_embeddings=258,
                **_token_ids(tok),
                **common,
            )
        )
    else:
        tok = _bpe_tokenizer()
        model = RobertaForSequenceClassification(
            RobertaConfig(
                max_position_embeddings=258,
                **_token_ids(tok),
                **common,
            )
        )
    model.eval()
    # Random init gives near-equal logits (ties decided by float noise); spread them out so
    # predictions are stable and probabilities informative.
    import torch

    head = model.classifier.out_proj if hasattr(model.classifier, "out_proj") else model.classifier
    with torch.no_grad():
        head.weight.mul_(100.0)
        if hasattr(model.classifier, "dense"):  # RoBERTa-style head: dense + tanh first
            model.classifier.dense.weight.mul_(30.0)
    if neutral_share is not None:
        _calibrate(model, tok, labels, neutral_share, seed)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _calibrate(model, tok, labels: dict[int, str], neutral_share: float, seed: int) -> None:
    """Shift the output bias so that, on random sentences, the classifier predicts neutral
    about `neutral_share` of the time and splits the rest between the other labels. A random
    classifier otherwise predicts one label for everything, which makes a dull demo."""
    import random

    import torch

    rng = random.Random(seed)
    words = [w for w in _WORDS if w.isalpha()]
    pairs = [(" ".join(rng.choices(words, k=10)) + ".", " ".join(rng.choices(words, k=6)) + ".") for _ in range(300)]
    enc = tok([p for p, _ in pairs], [h for _, h in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits.clone()
    neutral = next(i for i, name in labels.items() if name.lower() == "neutral")
    others = [i for i in labels if i != neutral]
    head = model.classifier.out_proj if hasattr(model.classifier, "out_proj") else model.classifier
    with torch.no_grad():
        # Centre the two non-neutral labels against each other, then place neutral's bias at
        # the quantile of the margin that gives the wanted share.
        diff = logits[:, others[0]] - logits[:, others[1]]
        head.bias[others[1]] += float(diff.median())
        logits[:, others[1]] += float(diff.median())
        margin = logits[:, neutral] - torch.maximum(logits[:, others[0]], logits[:, others[1]])
        head.bias[neutral] -= float(torch.quantile(margin, 1 - neutral_share))


def build_all(out: Path, *, base: bool = True, seed: int = 0) -> dict[str, Path]:
    """The fixture set: two MLMs (WordPiece, BPE), three NLI models, and base-size variants."""
    built = {
        "mlm-bert": build_mlm(out / "mlm-bert", "bert", seed=seed),
        "mlm-roberta": build_mlm(out / "mlm-roberta", "roberta", seed=seed + 1),
        "mlm-bert-fr": build_mlm(out / "mlm-bert-fr", "bert", seed=seed + 4, words=FRENCH_WORDS),  # French projects
    }
    for i, (name, order) in enumerate(NLI_LABEL_ORDERS.items()):
        built[name] = build_nli(out / name, order, style="roberta" if name == "nli-a" else "bert", seed=seed + 10 + i)
    built["nli-heldout"] = build_nli(out / "nli-heldout", NLI_LABEL_ORDERS["nli-a"], seed=seed + 20)
    built["clm-gpt2"] = build_clm(out / "clm-gpt2", seed=seed + 30)  # causal LM for the intrinsic kinds
    if base:
        built["mlm-bert-base"] = build_mlm(out / "mlm-bert-base", "bert", size="base", seed=seed + 2)
        built["nli-base"] = build_nli(out / "nli-base", NLI_LABEL_ORDERS["nli-b"], size="base", seed=seed + 3)
    return built


def bias_output(model_dir: Path, boosts: dict[str, float]) -> None:
    """Raise the output bias of the given tokens (MLM, causal LM: see boost_tokens) or labels (classifier) and save.

    Tests use this to make known outputs win deterministically.
    """
    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoModelForSequenceClassification, AutoTokenizer

    config = AutoConfig.from_pretrained(model_dir)
    is_classifier = bool(getattr(config, "id2label", None)) and config.architectures[0].endswith(
        "SequenceClassification"
    )
    if is_classifier:
        model = AutoModelForSequenceClassification.from_pretrained(model_dir)
        head = model.classifier.out_proj if hasattr(model.classifier, "out_proj") else model.classifier
        label2id = {v.lower(): int(k) for k, v in model.config.id2label.items()}
        with torch.no_grad():
            for label, amount in boosts.items():
                head.bias[label2id[label.lower()]] += amount
    elif _is_causal(model_dir):  # no output bias in GPT-2: see boost_tokens
        _boost_causal(model_dir, boosts)
        return
    else:
        tok = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForMaskedLM.from_pretrained(model_dir)
        bias = model.get_output_embeddings().bias
        with torch.no_grad():
            for token, amount in boosts.items():
                tid = tok.convert_tokens_to_ids(token)
                if tid == tok.unk_token_id:
                    raise ValueError(f"token {token!r} is not in the vocabulary")
                bias[tid] += amount
    model.save_pretrained(model_dir)


def build_clm(out: Path, size: str = "tiny", seed: int = 0) -> Path:
    """A GPT-2 causal LM on the fixture BPE vocabulary (BOS `<s>`, EOS `</s>`), saved like a Hub
    checkpoint."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    _quiet()
    torch.manual_seed(seed)
    tok = _bpe_tokenizer()
    sizes = _sizes(size)
    config = GPT2Config(
        n_positions=256,
        n_embd=sizes["hidden_size"],
        n_layer=sizes["num_hidden_layers"],
        n_head=sizes["num_attention_heads"],
        n_inner=sizes["intermediate_size"],
        **_token_ids(tok),
    )
    model = GPT2LMHeadModel(config)
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_lister(out: Path, answer: str) -> Path:
    """A tiny GPT-2 on the fixture BPE vocabulary whose greedy continuation of any prompt is
    `answer`, then EOS: a test's LLM proposer with a known answer. Attention, MLP and positions
    are silenced, so each token alone decides the next: a chain through the answer's tokens
    (which must all differ), entered from any other token (so the prompt must not end in one)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    _quiet()
    tok = _bpe_tokenizer()
    chain = tok(answer, add_special_tokens=False)["input_ids"]
    if len(set(chain)) != len(chain):
        raise ValueError(f"the answer {answer!r} repeats a token: the lister can say each token once")
    width = max(32, len(chain) + 2)
    config = GPT2Config(
        n_positions=256, n_embd=width, n_layer=1, n_head=2, n_inner=64, tie_word_embeddings=False, **_token_ids(tok)
    )
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        for block in model.transformer.h:
            for layer in (block.attn.c_proj, block.mlp.c_proj):
                layer.weight.zero_()
                layer.bias.zero_()
        model.transformer.wpe.weight.zero_()
        # Token direction: 0 for every token outside the chain, j + 1 for the chain's j-th.
        embedding = torch.zeros(config.vocab_size, width)
        embedding[:, 0] = 1.0
        for j, t in enumerate(chain):
            embedding[t] = 0.0
            embedding[t, j + 1] = 1.0
        model.transformer.wte.weight.copy_(embedding)
        model.transformer.ln_f.weight.fill_(1.0)
        model.transformer.ln_f.bias.zero_()
        normed = torch.nn.functional.layer_norm(torch.eye(width), (width,), eps=config.layer_norm_epsilon)
        head = torch.zeros(config.vocab_size, width)
        for j, nxt in enumerate([*chain, tok.eos_token_id]):
            head[nxt] += 10.0 * normed[j]  # direction j is followed by the chain's next token
        model.lm_head.weight.copy_(head)
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def build_mlm_nsp(out: Path, seed: int = 0) -> Path:
    """A BERT pre-training model (masked-LM and next-sentence heads) on the WordPiece vocabulary."""
    import torch
    from transformers import BertConfig, BertForPreTraining

    _quiet()
    torch.manual_seed(seed)
    tok = _bert_tokenizer()
    model = BertForPreTraining(BertConfig(vocab_size=len(tok), max_position_embeddings=128, **_sizes("tiny")))
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def _is_causal(model_dir: Path) -> bool:
    from transformers import AutoConfig

    archs = AutoConfig.from_pretrained(model_dir).architectures or []
    return any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs)


def boost_tokens(model_dir: Path, boosts: dict[str, float]) -> None:
    """Raise the output logits of the given vocabulary tokens (as the tokenizer spells them,
    e.g. "Ġkind" for BPE) by fixed amounts at every position, and save. Masked and causal LMs.

    GPT-2's output layer has no bias, so the boost goes into the final hidden state instead:
    one hidden unit is pinned to a constant (zero weight, bias 1 in the last layer norm) and
    each boosted token's output row reads that unit, which adds `amount` to its logit. The
    output embeddings are untied from the input ones first, so the inputs stay as they were.
    """
    if not _is_causal(model_dir):
        bias_output(model_dir, boosts)
        return
    _boost_causal(model_dir, boosts)


def _boost_causal(model_dir: Path, boosts: dict[str, float]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    head = model.get_output_embeddings()
    if getattr(head, "bias", None) is not None:
        target = ("bias", head.bias)
    else:
        norm = getattr(model.transformer, "ln_f", None) if hasattr(model, "transformer") else None
        if norm is None:
            raise ValueError("boost_tokens knows GPT-2-style causal LMs (final layer norm ln_f)")
        # Untie input and output embeddings, so the boost changes only the output side.
        model.config.tie_word_embeddings = False
        head.weight = torch.nn.Parameter(head.weight.detach().clone())
        unit = norm.weight.shape[0] - 1
        with torch.no_grad():
            norm.weight[unit] = 0.0
            norm.bias[unit] = 1.0
            head.weight[:, unit] = 0.0
        target = ("unit", unit)
    with torch.no_grad():
        for token, amount in boosts.items():
            tid = tok.convert_tokens_to_ids(token)
            if tid is None or tid == tok.unk_token_id:
                raise ValueError(f"token {token!r} is not in the vocabulary")
            if target[0] == "bias":
                target[1][tid] += amount
            else:
                head.weight[tid, target[1]] += amount
    model.save_pretrained(model_dir)


def with_causal_tokenizer(model_dir: Path, folder: Path) -> Path:
    """A copy of a fixture causal LM whose tokenizer adds BOS and nothing else, as real causal
    LMs' do (the fixture's RoBERTa-style tokenizer appends </s>, which would then be the only
    token lm-evaluation-harness's way of scoring an answer reads). Kept when it exists."""
    import shutil

    from tokenizers.processors import TemplateProcessing
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    folder = Path(folder)
    if folder.is_dir():
        return folder
    shutil.copytree(model_dir, folder)
    tok = AutoTokenizer.from_pretrained(folder)
    backend = tok.backend_tokenizer
    backend.post_processor = TemplateProcessing(
        single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", tok.bos_token_id)]
    )
    for name in ("vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.json"):
        (folder / name).unlink(missing_ok=True)
    PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        mask_token="<mask>",
    ).save_pretrained(folder)
    return folder


# A small chat template in the shape of real ones: BOS written by the template, a system turn
# when given, and a generation prompt that ends in a newline (which lm-eval moves into the answer).
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def with_chat_template(model_dir: Path, folder: Path) -> Path:
    """A copy of a fixture causal LM as a chat model: `with_causal_tokenizer`'s tokenizer (it adds
    BOS, as real chat models' do) with CHAT_TEMPLATE. Kept when it exists."""
    from transformers import AutoTokenizer

    folder = Path(folder)
    if folder.is_dir():
        return folder
    staged = with_causal_tokenizer(model_dir, folder.with_name(folder.name + "-staging"))
    tok = AutoTokenizer.from_pretrained(staged)
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(staged)
    staged.rename(folder)
    return folder


def with_text_classifier(
    folder: Path, labels: tuple[str, ...] = ("negative", "neutral", "positive"), seed: int = 0, style: str = "bert"
) -> Path:
    """A tiny seeded text classifier (a judge: sentiment, toxicity, regard, ...) with `labels` in
    id order: a `bert` (WordPiece) or `roberta` (byte-level BPE) *ForSequenceClassification
    checkpoint whose output biases are centred on random sentences so that every label wins some
    texts. Its probabilities stay near uniform (a random encoder barely tells texts apart); its
    head is not magnified as `build_nli`'s is (its RoBERTa head 3000-fold), which would magnify
    the float noise of batching as much: here batch 1 and batch 7 differ by about 1e-7. Kept
    when it exists."""
    import random

    import torch
    from transformers import BertConfig, BertForSequenceClassification, RobertaConfig, RobertaForSequenceClassification

    folder = Path(folder)
    if (folder / "config.json").is_file():
        return folder
    _quiet()
    torch.manual_seed(seed)
    names = {i: str(label) for i, label in enumerate(labels)}
    common = dict(num_labels=len(names), id2label=names, label2id={v: k for k, v in names.items()}, **_sizes("tiny"))
    if style == "bert":
        tok = _bert_tokenizer()
        model = BertForSequenceClassification(BertConfig(vocab_size=len(tok), max_position_embeddings=256, **common))
    elif style == "roberta":
        tok = _bpe_tokenizer()
        model = RobertaForSequenceClassification(
            RobertaConfig(
                max_position_embeddings=258,
                **_token_ids(tok),
                **common,
            )
        )
    else:
        raise ValueError(f"unknown classifier style {style!r}")
    model.eval()
    head = model.classifier.out_proj if hasattr(model.classifier, "out_proj") else model.classifier
    rng = random.Random(seed)
    words = [w for w in _WORDS if w.isalpha()]
    texts = [" ".join(rng.choices(words, k=rng.randint(1, 14))) + "." for _ in range(200)]
    with torch.no_grad():
        head.weight.mul_(50.0)  # labels a few hundredths apart in logit
        logits = model(**tok(texts, padding=True, return_tensors="pt")).logits
        head.bias -= logits.median(dim=0).values
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
