#!/usr/bin/env python3
"""Generate the tokenizer fixtures of tests/reference/tokenizers/.

    python3 tests/reference/tokenizers/generate.py             # make a venv, install, run
    python3 tests/reference/tokenizers/generate.py --python P  # use interpreter P instead
    python3 tests/reference/tokenizers/generate.py --check     # fail unless a fresh run
                                                               # is byte-identical

Without --python, the script creates tests/reference/tokenizers/.venv
(gitignored), installs the `tokenizers` and `gguf` packages from PyPI and runs
itself there. Nothing is downloaded from a model hub: every tokenizer is
trained here, by the package's own trainers, on train.txt (written by this
script), or built from the trained vocabulary in code. See README.md.
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["tokenizers==0.23.3", "gguf==0.19.0", "numpy"]

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
                r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|"
               r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# One line each; \n separates them in corpus.txt. Bytes, since some are not
# UTF-8.
CORPUS = [
    # ASCII
    b"Hello, world!",
    b"The quick brown fox jumps over the lazy dog.",
    b"I'm sure you've seen what they'll do; it's 'quoted' and he'd say DON'T.",
    b"YOU'RE WE'VE THEY'LL I'M HE'D IT'S",
    b"numbers 1 12 123 1234 12345 3.14159 and 2024-01-01",
    b"email: someone@example.com, url: https://example.org/a?b=c&d=e",
    b"   leading and trailing spaces   ",
    b"multiple    spaces\tand\ttabs\t\t here",
    b"CamelCaseWords and snake_case_words",
    b"!!!???...,,,;;;:::",
    b"def f(x): return x**2  # comment",
    b"if (a && b) { c->d[0] = 'e'; }",
    b"a",
    b"",
    b" ",
    b"    ",
    b"supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis",
    b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    b"I love New York and NEW YORK, ish reddish ish.",
    # Accented Latin, Greek, Cyrillic
    "Café, naïve, résumé, Ångström, Øresund, façade".encode(),
    "Zürich Straße ÄÖÜ äöü ß".encode(),
    "Ça va? Très bien, merci! Où êtes-vous?".encode(),
    "İstanbul ve ıİ KELVIN \u212a".encode(),
    "ΑΣ ΟΔΟΣ Σίσυφος".encode(),
    "\u01c4emal \u01c5 \u01c6 titlecase".encode(),
    "e\u0301 vs \u00e9; a\u030a\u0323 vs \u1ea1\u030a (decomposed)".encode(),
    "\ufb01 ligature, \u00bd fraction, x\u00b2 superscript, \u2460 circled".encode(),
    "Привет, мир! Как дела?".encode(),
    # CJK
    "中文分词测试，北京欢迎你。".encode(),
    "日本語のテキスト、カタカナとひらがな。".encode(),
    "한국어 텍스트 테스트입니다".encode(),
    "混合 mixed 文本 text 123 数字".encode(),
    # Other scripts
    "مرحبا بالعالم".encode(),
    "שלום עולם".encode(),
    "สวัสดีครับ".encode(),
    "नमस्ते दुनिया".encode(),
    "digits \u0661\u0662\u0663 \u096a\u096b\u096c \u216b".encode(),
    # Emoji
    "I \u2764\ufe0f emoji \U0001f600\U0001f389\U0001f44d\U0001f3fd and \U0001f1eb\U0001f1f7".encode(),
    "\U0001f468\u200d\U0001f469\u200d\U0001f467 family".encode(),
    "\U0001f980\U0001f970 newer emoji".encode(),
    # Whitespace
    b"tab\there and\rcarriage return",
    "\u00a0non-breaking\u2003em space\u3000ideographic".encode(),
    "zero\u200bwidth\u200cnon\u200djoiners".encode(),
    b"\x0b\x0c vertical tab and form feed",
    # Control characters
    b"bell\x07 escape\x1b[0m null\x00byte",
    "\x7f DEL and \u0085 NEL".encode(),
    "soft\u00adhyphen and RTL \u202e mark".encode(),
    "private use \ue000 and \U000f0000".encode(),
    "replacement char \ufffd itself".encode(),
    # Special tokens written in the text
    b"[CLS] literal [SEP] tokens [MASK] [UNK]",
    b"<s>raw special</s> tokens <unk>",
    b"<|endoftext|>two<|endoftext|>",
    b"<|begin_of_text|>Hi<|eot_id|> there",
    b"<|im_start|>user\rhello<|im_end|>",
    # Not UTF-8: read as U+FFFD per maximal ill-formed subpart
    b"invalid \xff byte",
    b"truncated \xe4\xb8 sequence",
    b"overlong \xc0\xaf and \xe0\x80\xaf",
    b"surrogate \xed\xa0\x80 half",
    b"lone continuation \x80\x80 bytes",
    b"\xf0\x9f\x98 cut emoji, at the end \xf0\x9f",
    b"too big \xf4\x90\x80\x80 \xf5\xff",
    b"mixed \xe2\x82\xac valid \xe2\x82 invalid",
]

# Texts with newlines, which corpus.txt cannot hold as lines.
MULTILINE = [
    b"first line\nsecond line\n\nthird\r\n",
    b"  \n  indented\n\tblock\n",
    b"trailing newline\n",
    b"\n\n\n",
]

TRAIN = """\
The quick brown fox jumps over the lazy dog. The dog sleeps in the sun.
Hello world! Hello again, world. Tokenizers split text into tokens.
A tokenizer turns text into ids, and a model turns ids into vectors.
We're testing byte-level BPE, WordPiece and SentencePiece-style merges.
They'll see that it's working when the ids match, won't they? I'm sure.
Numbers like 1, 12, 123, 2024 and 3.14159 appear in text too.
Email someone@example.com or visit https://example.org for more.
def tokenize(text): return [vocab[word] for word in text.split()]
Café au lait, crème brûlée, naïve résumé, Zürich, Straße, Ångström.
Ça va très bien, merci. Où est la gare? Je ne sais pas.
Der schnelle braune Fuchs springt über den faulen Hund.
El rápido zorro marrón salta sobre el perro perezoso.
Привет, как дела? Всё хорошо, спасибо.
中文分词测试，北京欢迎你。我们学习自然语言处理。
日本語のテキストです。カタカナとひらがなを使います。
한국어 텍스트입니다. 안녕하세요.
New York is a big city. I love New York in the spring.
The reddish fox is smallish and the sky is bluish.
Machine learning models need tokenized input text.
Sentence embeddings compare the meaning of two sentences.
Emoji like 😀 and 🎉 and ❤️ show up in chat messages.
"""


def in_venv(argv):
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q"] + PACKAGES,
                       check=True)
    return subprocess.run([python, __file__, "--python", python] + argv).returncode


def train_lines():
    lines = TRAIN.splitlines()
    for raw in CORPUS:
        lines.append(raw.decode("utf-8", "replace"))
    return lines


def mini_bpe(words, merges_wanted, prefix=""):
    """A deterministic BPE trainer: `words` maps a word's symbols (a tuple)
    to its count; merges the most frequent adjacent pair (ties: the larger
    pair) until `merges_wanted` or no pair occurs twice. The package's
    trainers break ties by hash order, so their output changes from run to
    run; this one regenerates byte-identically."""
    from collections import Counter
    words = dict(words)
    merges = []
    while len(merges) < merges_wanted:
        pairs = Counter()
        for w, n in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        (a, b), n = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        if n < 2:
            break
        merged = a + b[len(prefix):] if prefix and b.startswith(prefix) else a + b
        merges.append((a, b, merged))
        new = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        words = new
    return merges


def reload(tok, edit=None):
    """A tokenizer through its JSON, edited: what a user's file would be."""
    from tokenizers import Tokenizer
    data = json.loads(tok.to_str())
    if edit:
        edit(data)
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False))


def bert(lowercase, strip_accents, chinese, max_chars):
    from tokenizers import (AddedToken, Tokenizer, decoders, models,
                            normalizers, pre_tokenizers, processors, trainers)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]",
                                     max_input_chars_per_word=max_chars))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=chinese,
        strip_accents=strip_accents, lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    # The vocabulary: what WordPieceTrainer would make (BPE over words
    # split as the pre-tokenizer does, with ## continuations), trained
    # deterministically by mini_bpe.
    from collections import Counter
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    counts = Counter()
    for line in train_lines():
        pre = tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(line))
        for word, _ in pre:
            counts[word] += 1
    words = {tuple([w[0]] + ["##" + c for c in w[1:]]): n
             for w, n in counts.items()}
    alphabet = sorted({sym for w in words for sym in w})
    vocab = {t: i for i, t in enumerate(specials + alphabet)}
    for _, _, merged in mini_bpe(words, 500 - len(vocab), prefix="##"):
        vocab.setdefault(merged, len(vocab))
    tok = reload(tok, lambda d: d["model"].update(vocab=vocab))
    tok.add_special_tokens(specials)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    tok.add_tokens([AddedToken("New York", normalized=True),
                    AddedToken("ish", single_word=True)])
    return reload(tok)


def byte_level(kind):
    from tokenizers import (Regex, Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors, trainers)
    tok = Tokenizer(models.BPE())
    if kind == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        specials = ["<|endoftext|>"]
    elif kind == "smollm":
        # SmolLM/SmolLM2's: every digit its own piece, then GPT-2's regex.
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    else:
        regex = LLAMA3_REGEX if kind == "llama3" else QWEN2_REGEX
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(regex), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        if kind == "qwen2":
            tok.normalizer = normalizers.NFC()
            specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
        else:
            specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=900, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(train_lines(), trainer)
    tok.decoder = decoders.ByteLevel()
    if kind == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="<|begin_of_text|> $A",
                pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
                special_tokens=[("<|begin_of_text|>", bos)])])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)

    def edit(data):
        data["model"]["ignore_merges"] = kind == "llama3"
    return reload(tok, edit)


def sentencepiece(kind):
    """Llama 2 (Prepend + Replace, <s>) or Gemma (Replace only, a Split on
    spaces that never matches, <bos>) style BPE with byte fallback. The vocab
    comes from a trained BPE; the merges are rebuilt from it as Hugging Face's
    converter does for SentencePiece models (every split of a token into two
    tokens, ranked by the token's score), so that the GGUF file's
    score-driven merging gives the same ids."""
    from collections import Counter
    counts, chars = Counter(), Counter()
    for line in TRAIN.splitlines():
        for word in line.split(" "):
            if word:
                counts["\u2581" + word] += 1
                chars.update("\u2581" + word)
    # The 110 most frequent characters, as limit_alphabet keeps: the others
    # fall back to bytes.
    alphabet = sorted(c for c, _ in sorted(chars.items(),
                                           key=lambda kv: (-kv[1], kv[0]))[:110])
    words = {tuple(w): n for w, n in counts.items()
             if all(c in alphabet for c in w)}
    pieces = alphabet + [m[2] for m in mini_bpe(words, 560)]
    specials = (["<unk>", "<s>", "</s>"] if kind == "llama2"
                else ["<pad>", "<eos>", "<bos>", "<unk>"])
    vocab = {}
    for t in specials + ["<0x%02X>" % b for b in range(256)] + pieces:
        vocab.setdefault(t, len(vocab))
    merges = []
    for token, tid in vocab.items():
        if tid < len(specials) + 256:
            continue
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in vocab and right in vocab:
                merges.append((tid, vocab[left], vocab[right], left, right))
    merges.sort()
    bos = "<s>" if kind == "llama2" else "<bos>"
    data = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [
            {"id": vocab[t], "content": t, "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": False,
             "special": True} for t in specials],
        "normalizer": (
            {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "\u2581"},
                {"type": "Replace", "pattern": {"String": " "},
                 "content": "\u2581"}]}
            if kind == "llama2" else
            {"type": "Replace", "pattern": {"String": " "},
             "content": "\u2581"}),
        "pre_tokenizer": (None if kind == "llama2" else
                          {"type": "Split", "pattern": {"String": " "},
                           "behavior": "MergedWithPrevious", "invert": False}),
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": bos, "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {bos: {"id": bos, "ids": [vocab[bos]],
                                     "tokens": [bos]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"},
             "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"}] + (
            [{"type": "Strip", "content": " ", "start": 1, "stop": 0}]
            if kind == "llama2" else [])},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True,
                  "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab,
                  "merges": [[m[3], m[4]] for m in merges]},
    }
    from tokenizers import Tokenizer
    return Tokenizer.from_str(json.dumps(data, ensure_ascii=False)), vocab, specials


def write_gguf_llama(path, vocab, specials):
    import gguf
    w = gguf.GGUFWriter(path, arch="llama")
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    types, scores = [], []
    for i, t in enumerate(tokens):
        if t in specials:
            types.append(gguf.TokenType.UNKNOWN if t == "<unk>"
                         else gguf.TokenType.CONTROL)
        elif i < len(specials) + 256:
            types.append(gguf.TokenType.BYTE)
        else:
            types.append(gguf.TokenType.NORMAL)
        # SentencePiece scores: earlier pieces merge first.
        scores.append(-float(i))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(vocab["<unk>"])
    w.add_bos_token_id(vocab["<s>"])
    w.add_eos_token_id(vocab["</s>"])
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_gguf_bpe(path, tok, pre, bos, eos, add_bos):
    """A byte-level BPE vocabulary as convert_hf_to_gguf.py writes it
    (tokenizer.ggml.model gpt2), under llama.cpp's pre-tokenizer name."""
    import gguf
    data = json.loads(tok.to_str())
    vocab = data["model"]["vocab"]
    added = {a["content"]: a for a in data["added_tokens"]}
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    w = gguf.GGUFWriter(path, arch="llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t in added
                       else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges([" ".join(m) for m in data["model"]["merges"]])
    w.add_bos_token_id(vocab[bos])
    w.add_eos_token_id(vocab[eos])
    w.add_add_bos_token(add_bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def encoding_json(enc):
    return {"ids": enc.ids, "type_ids": enc.type_ids,
            "attention_mask": enc.attention_mask,
            "special_tokens_mask": enc.special_tokens_mask,
            "offsets": [list(o) for o in enc.offsets],
            "sequence_ids": [-1 if s is None else s for s in enc.sequence_ids]}


def text_json(raw):
    return {"hex": raw.hex(), "text": raw.decode("utf-8", "replace")}


def cases_for(tok):
    from tokenizers.decoders import DecodeStream
    texts = CORPUS + MULTILINE
    cases = []
    for raw in texts:
        text = raw.decode("utf-8", "replace")
        tok.no_truncation()
        tok.no_padding()
        enc = tok.encode(text)
        case = {"text": text_json(raw), "options": {}}
        case.update(encoding_json(enc))
        case["decode"] = tok.decode(enc.ids, skip_special_tokens=True)
        case["decode_with_special"] = tok.decode(enc.ids,
                                                 skip_special_tokens=False)
        stream = DecodeStream(skip_special_tokens=False)
        case["stream"] = [stream.step(tok, i) or "" for i in enc.ids]
        cases.append(case)
        plain = tok.encode(text, add_special_tokens=False)
        case = {"text": text_json(raw), "options": {"add_special_tokens": False}}
        case.update(encoding_json(plain))
        cases.append(case)

    def option_case(raw, pair, options):
        tok.no_truncation()
        tok.no_padding()
        if options.get("max_length"):
            tok.enable_truncation(
                options["max_length"],
                strategy=options.get("strategy", "longest_first"),
                direction="left" if options.get("truncate_left") else "right")
        if options.get("pad_to_length") or options.get("pad_to_multiple_of"):
            tok.enable_padding(
                length=options.get("pad_to_length") or None,
                pad_to_multiple_of=options.get("pad_to_multiple_of") or None,
                direction="left" if options.get("pad_left") else "right",
                pad_id=0, pad_type_id=0)
        case = {"text": text_json(raw), "options": options}
        if pair is not None:
            case["pair"] = text_json(pair)
        try:
            enc = tok.encode(raw.decode("utf-8", "replace"),
                             pair.decode("utf-8", "replace") if pair is not None else None)
            case.update(encoding_json(enc))
        except Exception as e:
            # The runtime must refuse these too (e.g. ONLY_SECOND truncation
            # of a pair too short to lose what must go).
            case["error"] = str(e)
        cases.append(case)

    a, b, c = CORPUS[1], CORPUS[19], CORPUS[28]
    for pair in [(a, b), (b, c), (c, b"")]:
        option_case(pair[0], pair[1], {})
    for n in [5, 8, 13]:
        option_case(a, None, {"max_length": n})
        option_case(a, b, {"max_length": n})
    option_case(a, None, {"max_length": 6, "truncate_left": True})
    option_case(b, a, {"max_length": 9, "strategy": "only_first"})
    option_case(a, c, {"max_length": 10, "strategy": "only_second"})
    option_case(b, CORPUS[12], {"max_length": 12, "strategy": "only_first"})
    option_case(CORPUS[12], c, {"max_length": 10, "strategy": "only_second"})
    option_case(a, None, {"max_length": 3})
    option_case(b, c, {"max_length": 11, "truncate_left": True})
    option_case(CORPUS[0], None, {"pad_to_length": 16})
    option_case(CORPUS[0], None, {"pad_to_length": 16, "pad_left": True})
    option_case(CORPUS[0], CORPUS[12], {"pad_to_multiple_of": 8})
    option_case(a, None, {"max_length": 7, "pad_to_length": 10})
    tok.no_truncation()
    tok.no_padding()

    batch_texts = [CORPUS[0], CORPUS[1], CORPUS[12], CORPUS[28], CORPUS[13]]
    tok.enable_padding(pad_id=0, pad_type_id=0)
    encs = tok.encode_batch([t.decode("utf-8", "replace") for t in batch_texts])
    tok.no_padding()
    batch = {"texts": [t.hex() for t in batch_texts],
             "ids": [e.ids for e in encs],
             "type_ids": [e.type_ids for e in encs],
             "attention_mask": [e.attention_mask for e in encs]}
    return cases, batch


def write(out):
    import tokenizers
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "corpus.txt"), "wb") as f:
        f.write(b"\n".join(CORPUS) + b"\n")
    with open(os.path.join(out, "train.txt"), "w") as f:
        f.write(TRAIN)
    made = {
        "bert_uncased": bert(True, None, True, 100),
        "bert_cased": bert(False, None, True, 100),
        "bert_strip_accents": bert(False, True, False, 10),
        "gpt2": byte_level("gpt2"),
        "llama3": byte_level("llama3"),
        "qwen2": byte_level("qwen2"),
        "smollm": byte_level("smollm"),
    }
    llama2, vocab, specials = sentencepiece("llama2")
    made["llama2"] = llama2
    made["gemma"] = sentencepiece("gemma")[0]
    ggufs = {"llama2": "tokenizer.gguf", "llama3": "tokenizer.gguf",
             "smollm": "tokenizer.gguf"}
    for name, tok in made.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        tok.save(os.path.join(d, "tokenizer.json"), pretty=True)
        if name == "llama2":
            write_gguf_llama(os.path.join(d, "tokenizer.gguf"), vocab, specials)
        elif name == "llama3":
            write_gguf_bpe(os.path.join(d, "tokenizer.gguf"), tok, "llama-bpe",
                           "<|begin_of_text|>", "<|end_of_text|>", True)
        elif name == "smollm":
            # As SmolLM2's GGUF files: no BOS added.
            write_gguf_bpe(os.path.join(d, "tokenizer.gguf"), tok, "smollm",
                           "<|im_start|>", "<|im_end|>", False)
        cases, batch = cases_for(tok)
        expected = {"tokenizer": name, "tokenizers_version": tokenizers.__version__,
                    "gguf": ggufs.get(name), "cases": cases, "batch": batch}
        with open(os.path.join(d, "expected.json"), "w") as f:
            json.dump(expected, f, ensure_ascii=False, indent=None,
                      separators=(",", ":"))
            f.write("\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python")
    parser.add_argument("--check", action="store_true")
    args, rest = parser.parse_known_args()
    if not args.python:
        return in_venv(sys.argv[1:])
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not args.check:
        write(HERE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        bad = []
        for root, _, files in os.walk(tmp):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), tmp)
                if not filecmp.cmp(os.path.join(tmp, rel), os.path.join(HERE, rel),
                                   shallow=False):
                    bad.append(rel)
        if bad:
            print("differ:", *bad)
            return 1
        print("fixtures are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
