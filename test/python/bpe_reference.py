#!/usr/bin/env python3
"""Independent reference for tinymlir's GPT-2 tokenizer.

A plain port of the logic in OpenAI's gpt-2/src/encoder.py (bytes_to_unicode,
get_pairs, rank-ordered BPE merges, the `regex` pre-tokenizer pattern), kept
free of anything tinymlir does so the C++ tokenizer can be checked against it.
Needs the third-party `regex` module (Debian: python3-regex) for \\p{L}/\\p{N}.

Usage:
  bpe_reference.py [--data DIR] [FILE]            encode UTF-8 text (FILE or stdin),
                                                  print the ids as a JSON list
  bpe_reference.py [--data DIR] --decode [FILE]   read a JSON list of ids, write the
                                                  decoded bytes to stdout
  bpe_reference.py [--data DIR] --batch FILE      FILE holds a JSON list of strings;
                                                  print one JSON list of ids per line
  bpe_reference.py [--data DIR] --pieces [FILE]   print the pre-tokenizer pieces (JSON)

DIR holds encoder.json and vocab.bpe (default: the repository's data/gpt2).
Exit status: 0 ok, 1 bad input (invalid UTF-8, bad ids), 2 usage or data error.
"""

import argparse
import json
import os
import sys

try:
    import regex as re
except ImportError:  # pragma: no cover - reported to the caller
    sys.stderr.write(
        "bpe_reference.py: the Python 'regex' module is not installed "
        "(apt-get install python3-regex, or pip install regex)\n"
    )
    sys.exit(3)

PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def bytes_to_unicode():
    """Reversible map from utf-8 bytes to printable unicode characters."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    cs = [chr(n) for n in cs]
    return dict(zip(bs, cs))


def get_pairs(word):
    """Set of adjacent symbol pairs in a word (a tuple of symbols)."""
    pairs = set()
    prev_char = word[0]
    for char in word[1:]:
        pairs.add((prev_char, char))
        prev_char = char
    return pairs


class Encoder:
    def __init__(self, encoder, bpe_merges):
        self.encoder = encoder
        self.decoder = {v: k for k, v in self.encoder.items()}
        self.byte_encoder = bytes_to_unicode()
        self.byte_decoder = {v: k for k, v in self.byte_encoder.items()}
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.cache = {}
        self.pat = re.compile(PATTERN)

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return token
        while True:
            bigram = min(pairs, key=lambda pair: self.bpe_ranks.get(pair, float("inf")))
            if bigram not in self.bpe_ranks:
                break
            first, second = bigram
            new_word = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                    new_word.extend(word[i:j])
                    i = j
                except ValueError:
                    new_word.extend(word[i:])
                    break
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = get_pairs(word)
        word = " ".join(word)
        self.cache[token] = word
        return word

    def pieces(self, text):
        return re.findall(self.pat, text)

    def encode(self, text):
        bpe_tokens = []
        for token in re.findall(self.pat, text):
            token = "".join(self.byte_encoder[b] for b in token.encode("utf-8"))
            bpe_tokens.extend(self.encoder[bpe_token] for bpe_token in self.bpe(token).split(" "))
        return bpe_tokens

    def decode_bytes(self, tokens):
        text = "".join(self.decoder[token] for token in tokens)
        return bytes(self.byte_decoder[c] for c in text)


def get_encoder(data_dir):
    with open(os.path.join(data_dir, "encoder.json"), encoding="utf-8") as f:
        encoder = json.load(f)
    with open(os.path.join(data_dir, "vocab.bpe"), encoding="utf-8") as f:
        bpe_data = f.read()
    bpe_merges = [tuple(merge_str.split()) for merge_str in bpe_data.split("\n")[1:-1]]
    return Encoder(encoder=encoder, bpe_merges=bpe_merges)


def read_input(path):
    if path is None or path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def main(argv):
    default_dir = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "gpt2"
    )
    ap = argparse.ArgumentParser(
        description="Reference GPT-2 byte-level BPE (OpenAI encoder.py logic)."
    )
    ap.add_argument("--data", default=default_dir, help="directory with encoder.json and vocab.bpe")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--decode", action="store_true", help="decode a JSON list of ids to bytes")
    mode.add_argument("--batch", action="store_true", help="encode each string of a JSON list")
    mode.add_argument("--pieces", action="store_true", help="print the pre-tokenizer pieces")
    ap.add_argument("file", nargs="?", help="input file (default: stdin)")
    args = ap.parse_args(argv)

    try:
        enc = get_encoder(args.data)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"bpe_reference.py: cannot load {args.data}: {e}\n")
        return 2

    data = read_input(args.file)

    if args.decode:
        try:
            ids = json.loads(data.decode("utf-8"))
            if not isinstance(ids, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) for i in ids
            ):
                raise ValueError("expected a JSON list of integers")
            out = enc.decode_bytes(ids)
        except KeyError as e:
            sys.stderr.write(f"bpe_reference.py: token id {e} is outside the vocabulary\n")
            return 1
        except ValueError as e:
            sys.stderr.write(f"bpe_reference.py: {e}\n")
            return 1
        sys.stdout.buffer.write(out)
        sys.stdout.buffer.flush()
        return 0

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        sys.stderr.write(
            f"bpe_reference.py: invalid UTF-8 at byte offset {e.start:d}: {e.reason}\n"
        )
        return 1

    if args.batch:
        texts = json.loads(text)
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            sys.stderr.write("bpe_reference.py: --batch expects a JSON list of strings\n")
            return 1
        lines = [json.dumps(enc.encode(t)) for t in texts]
        sys.stdout.write("".join(line + "\n" for line in lines))
    elif args.pieces:
        sys.stdout.write(json.dumps(enc.pieces(text), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(json.dumps(enc.encode(text)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
