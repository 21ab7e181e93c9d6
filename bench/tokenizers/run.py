#!/usr/bin/env python3
"""Tokens per second: tfm's tokenizer (the runtime's C API, one thread)
against the `tokenizers` package (PyPI), on one large text.

    bench/tokenizers/run.py                 # ~8 MB corpus, 3 runs each
    bench/tokenizers/run.py --mb 2 --repeat 5
    bench/tokenizers/run.py --python P      # an interpreter with tokenizers

Without --python it creates bench/tokenizers/.venv (gitignored) and installs
tokenizers==0.23.3 there; tests and CI never need it. It builds
tfm-bench-tokenizers in build/ unless --tfm-bin names a directory holding it.

The corpus (written to --work, default build/bench-tokenizers/): English
prose, the docstrings of the Python standard library of the interpreter
running this (deterministic for one Python version), mixed line by line with
15% synthetic multilingual lines (accented Latin, Greek, Cyrillic, Arabic,
CJK runs, emoji) drawn from a seeded generator. Tokenizers: BERT-style
WordPiece (30522 ids) and GPT-2-style byte-level BPE (50257 ids), trained by
the package on that corpus (real-size vocabularies; none is downloaded), and
the repository's small fixtures (tests/reference/tokenizers). Each line is
one text, special tokens added, no truncation or padding.

The package runs `encode_batch` over all the lines with RAYON_NUM_THREADS=1
(its fastest single-thread path: no Python call per line) and, as a second
row, `encode` per line; tfm calls tfm_tokenizer_encode per line from C
(tfm-bench-tokenizers). Every tokenizer's ids must hash the same in both
(else the row says MISMATCH). Best of --repeat runs; prints a markdown table.
"""

import argparse
import ast
import json
import os
import random
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VENV = os.path.join(HERE, ".venv")
PACKAGES = ["tokenizers==0.23.3"]


def in_venv(argv):
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q"] + PACKAGES,
                       check=True)
    return subprocess.run([python, __file__, "--python", python] + argv).returncode


def english_lines():
    """Docstring paragraphs of the standard library, one per line."""
    stdlib = sysconfig.get_paths()["stdlib"]
    for directory, dirs, files in sorted(os.walk(stdlib)):
        dirs.sort()
        if "test" in directory.split(os.sep) or "site-packages" in directory:
            continue
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    tree = ast.parse(f.read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                     ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if not doc:
                        continue
                    for paragraph in doc.split("\n\n"):
                        line = " ".join(paragraph.split())
                        if len(line) > 20:
                            yield line


SCRIPTS = [
    "abcdefghijklmnopqrstuvwxyzàáâäæçèéêëìíîïñòóôöøùúûüßœ",
    "αβγδεζηθικλμνξοπρστυφχψωάέήίόύώ",
    "абвгдежзийклмнопрстуфхцчшщъыьэюя",
    "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
]
CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 600)] + \
    [chr(c) for c in range(0x3041, 0x3097)]
EMOJI = ["😀", "🎉", "👍", "❤️", "🚀", "🌍", "🤖", "👩‍💻", "🇫🇷", "🙂"]


def synthetic_line(rng):
    script = rng.randrange(len(SCRIPTS) + 1)
    words = []
    for _ in range(rng.randint(6, 20)):
        if script == len(SCRIPTS):
            words.append("".join(rng.choice(CJK) for _ in range(rng.randint(2, 8))))
        else:
            letters = SCRIPTS[script]
            n = min(12, max(1, int(rng.paretovariate(1.6) * 2)))
            # Zipf-like: a small lexicon per script repeats, as words do.
            seed = rng.randint(0, 400)
            word_rng = random.Random(script * 1000 + seed)
            words.append("".join(word_rng.choice(letters) for _ in range(n)))
        if rng.random() < 0.05:
            words.append(rng.choice(EMOJI))
    sep = "" if script == len(SCRIPTS) and rng.random() < 0.5 else " "
    return sep.join(words) + rng.choice([".", "!", "?", ",", ""])


def make_corpus(path, megabytes):
    rng = random.Random(25)
    target = int(megabytes * 1e6)
    size, lines = 0, []
    english = english_lines()
    while size < target:
        if rng.random() < 0.15:
            line = synthetic_line(rng)
        else:
            line = next(english, None)
            if line is None:
                english = english_lines()
                continue
        lines.append(line)
        size += len(line.encode("utf-8")) + 1
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return lines


def train(lines, work):
    from tokenizers import (Tokenizer, decoders, models, normalizers,
                            pre_tokenizers, processors, trainers)
    made = {}
    path = os.path.join(work, "wordpiece-30522.json")
    if not os.path.exists(path):
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        tok.train_from_iterator(lines, trainers.WordPieceTrainer(
            vocab_size=30522, special_tokens=specials, show_progress=False))
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")),
                            ("[SEP]", tok.token_to_id("[SEP]"))])
        tok.decoder = decoders.WordPiece()
        tok.save(path)
    made["WordPiece (BERT uncased), 30522 ids"] = path
    path = os.path.join(work, "bytelevel-50257.json")
    if not os.path.exists(path):
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.train_from_iterator(lines, trainers.BpeTrainer(
            vocab_size=50257, special_tokens=["<|endoftext|>"],
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        tok.save(path)
    made["byte-level BPE (GPT-2 regex), 50257 ids"] = path
    fixtures = os.path.join(ROOT, "tests", "reference", "tokenizers")
    made["WordPiece fixture bert_uncased, 500 ids"] = os.path.join(
        fixtures, "bert_uncased", "tokenizer.json")
    made["byte-level BPE fixture gpt2, 900 ids"] = os.path.join(
        fixtures, "gpt2", "tokenizer.json")
    return made


def fnv(counts_and_ids):
    h = 1469598103934665603
    for v in counts_and_ids:
        v &= (1 << 64) - 1
        for i in range(8):
            h ^= (v >> (8 * i)) & 0xFF
            h = (h * 1099511628211) & ((1 << 64) - 1)
    return "%016x" % h


def time_package(path, lines, repeat):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(path)
    tok.no_truncation()
    tok.no_padding()
    rows = {}
    for mode in ("encode_batch", "encode"):
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            if mode == "encode_batch":
                encodings = tok.encode_batch(lines)
            else:
                encodings = [tok.encode(line) for line in lines]
            best = min(best, time.perf_counter() - start)
        values = []
        for e in encodings:
            values.append(len(e.ids))
            values.extend(e.ids)
        tokens = sum(len(e.ids) for e in encodings)
        rows[mode] = (tokens, best, fnv(values))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python")
    parser.add_argument("--mb", type=float, default=8.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", default=os.path.join(ROOT, "build",
                                                       "bench-tokenizers"))
    parser.add_argument("--tfm-bin", help="a directory with tfm-bench-tokenizers")
    args = parser.parse_args()
    if not args.python:
        return in_venv(sys.argv[1:])
    # One thread for the package (read when it first runs in parallel).
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.join(args.tfm_bin or os.path.join(ROOT, "build", "bin"),
                          "tfm-bench-tokenizers")
    if not args.tfm_bin:
        subprocess.run(["cmake", "--build", os.path.join(ROOT, "build"),
                        "--target", "tfm-bench-tokenizers"], check=True,
                       stdout=subprocess.DEVNULL)
    corpus = os.path.join(args.work, f"corpus-{args.mb:g}mb.txt")
    lines = make_corpus(corpus, args.mb)
    with open(corpus, "rb") as f:
        size = len(f.read())
    print(f"corpus: {len(lines)} lines, {size / 1e6:.1f} MB ({corpus})",
          file=sys.stderr)
    tokenizers = train(lines, args.work)
    import tokenizers as package
    print(f"| tokenizer | tokens | tfm (C API, 1 thread) | tokenizers {package.__version__} "
          "encode_batch, RAYON_NUM_THREADS=1 | tokenizers encode per line | "
          "tfm / encode_batch | ids |")
    print("|---|---|---|---|---|---|---|")
    for name, path in tokenizers.items():
        print(f"timing {name} ...", file=sys.stderr)
        out = subprocess.run([binary, path, corpus, "--repeat", str(args.repeat)],
                             check=True, capture_output=True, text=True).stdout
        tfm = json.loads(out)
        rows = time_package(path, lines, args.repeat)
        tokens, batch_s, batch_hash = rows["encode_batch"]
        _, single_s, _ = rows["encode"]
        same = tfm["hash"] == batch_hash and tfm["tokens"] == tokens
        rate = lambda s: f"{tokens / s / 1e6:.2f} M tokens/s ({size / s / 1e6:.1f} MB/s)"
        print(f"| {name} | {tokens} | {rate(tfm['best_s'])} | {rate(batch_s)} | "
              f"{rate(single_s)} | {batch_s / tfm['best_s']:.2f}x | "
              f"{'same' if same else 'MISMATCH'} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
