#!/usr/bin/python3
"""Generate the golden test data for the five seed notebooks (examples/seeds/).

Run with Debian's python (python3-torch 1.13 + python3-numpy):

    /usr/bin/python3 examples/seeds/generate.py

For every seed NNN this writes examples/seeds/NNN_<name>/ containing
  weights.safetensors  F32 tensors (written by the small writer below,
                       no dependency on the `safetensors` package)
  <input>.npy          model inputs
  <expected>.npy       expected outputs (float32, C order, little endian)

and asserts that the values the notebooks print are reproduced to the printed
number of decimals. Every written file is read back and checked (the
.safetensors files with the reader below). The output is deterministic: two runs
produce byte-identical files.
"""

import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from safetensors_io import read_safetensors, to_f32, write_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Printed values have 4 decimals: |diff| <= 0.5e-4, plus a little slack.
TOL4 = 6e-5

torch.set_num_threads(1)  # fixed summation order -> reproducible bits
torch.use_deterministic_algorithms(True)

CHECKS = []  # (seed, description) of every assertion that passed


def check(seed, desc, cond):
    if not cond:
        raise AssertionError(f"[{seed}] FAILED: {desc}")
    CHECKS.append((seed, desc))


def check_printed(seed, name, actual, printed, tol=TOL4):
    actual = np.asarray(actual, dtype=np.float64)
    printed = np.asarray(printed, dtype=np.float64)
    check(seed, f"{name} shape {list(printed.shape)}", actual.shape == printed.shape)
    diff = float(np.max(np.abs(actual - printed)))
    check(seed, f"{name} matches printed values (max |diff| {diff:.2e} <= {tol:g})",
          diff <= tol)


def check_close(seed, desc, a, b, tol):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    check(seed, f"{desc} (max |diff| {diff:.2e} <= {tol:g})",
          a.shape == b.shape and diff <= tol)


# ----------------------------------------------------------------------------
# output helpers
# ----------------------------------------------------------------------------

def seed_dir(name):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    return d


def save_npy(d, fname, arr, dtype="<f4"):
    if isinstance(arr, torch.Tensor):
        arr = arr.detach().cpu().numpy()
    arr = np.ascontiguousarray(np.asarray(arr, dtype=dtype))
    path = os.path.join(d, fname)
    np.save(path, arr, allow_pickle=False)
    back = np.load(path, allow_pickle=False)
    assert back.dtype == np.dtype(dtype) and back.shape == arr.shape
    assert back.flags["C_CONTIGUOUS"] and back.tobytes() == arr.tobytes()
    return arr


def save_weights(seed, d, tensors):
    path = os.path.join(d, "weights.safetensors")
    write_safetensors(path, tensors)
    back = read_safetensors(path)
    ok = sorted(back) == sorted(tensors) and all(
        back[k].shape == to_f32(tensors[k]).shape
        and back[k].tobytes() == to_f32(tensors[k]).tobytes() for k in tensors)
    check(seed, f"weights.safetensors re-read: {len(back)} F32 tensors, sorted, "
                f"contiguous offsets, bit-identical", ok)
    return back


def np_softmax(x, axis=-1):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ----------------------------------------------------------------------------
# seed 000: self-attention with nn.Linear (StatQuest style)
# ----------------------------------------------------------------------------

class SelfAttention000(nn.Module):
    """Verbatim from the notebook."""

    def __init__(self, d_model=2, row_dim=0, col_dim=1):
        super().__init__()
        self.W_q = nn.Linear(in_features=d_model, out_features=d_model, bias=False)
        self.W_k = nn.Linear(in_features=d_model, out_features=d_model, bias=False)
        self.W_v = nn.Linear(in_features=d_model, out_features=d_model, bias=False)
        self.row_dim = row_dim
        self.col_dim = col_dim

    def forward(self, token_encoding):
        q = self.W_q(token_encoding)
        k = self.W_k(token_encoding)
        v = self.W_v(token_encoding)
        sims = torch.matmul(q, k.transpose(dim0=self.row_dim, dim1=self.col_dim))
        scaled_sims = sims / torch.tensor(k.size(self.col_dim) ** 0.5)
        attention_percents = F.softmax(scaled_sims, dim=self.col_dim)
        attention_scores = torch.matmul(attention_percents, v)
        return attention_scores


def seed000():
    S = "000"
    d = seed_dir("000_self_attention")
    encodings_matrix = torch.tensor([[[1.16, 0.23],
                                      [0.57, 1.36],
                                      [4.41, -2.16]]])
    torch.manual_seed(42)
    sa = SelfAttention000(d_model=2, row_dim=1, col_dim=2)
    with torch.no_grad():
        y = sa(encodings_matrix)
        q = sa.W_q(encodings_matrix)
        k = sa.W_k(encodings_matrix)
        v = sa.W_v(encodings_matrix)
        sims = torch.matmul(q, k.transpose(1, 2))
        scaled_sims = sims / (torch.tensor(2) ** 0.5)
        attention_percents = F.softmax(scaled_sims, dim=2)

    check(S, "encodings_matrix shape [1, 3, 2]", list(encodings_matrix.shape) == [1, 3, 2])
    check_printed(S, "selfAttention(encodings_matrix) (y)", y,
                  [[[1.0100, 1.0641], [0.2040, 0.7057], [3.4989, 2.2427]]])
    check_printed(S, "sims", sims,
                  [[[-0.0990, 0.0648, -0.6523],
                    [-0.4022, 0.4078, -3.0024],
                    [0.4842, -0.6683, 4.0461]]])
    check_printed(S, "scaled_sims", scaled_sims,
                  [[[-0.0700, 0.0458, -0.4612],
                    [-0.2844, 0.2883, -2.1230],
                    [0.3424, -0.4725, 2.8610]]])
    check_printed(S, "softmax(scaled_sims) (attention_percents)", attention_percents,
                  [[[0.3573, 0.4011, 0.2416],
                    [0.3410, 0.6047, 0.0542],
                    [0.0722, 0.0320, 0.8959]]])
    check_printed(S, "q", q,
                  [[[0.7621, -0.0428], [1.1063, 0.7890], [1.1164, -2.1336]]])
    check_close(S, "module forward == step-by-step attention_percents @ v",
                y, attention_percents @ v, 1e-6)

    W = save_weights(S, d, {"W_q.weight": sa.W_q.weight,
                            "W_k.weight": sa.W_k.weight,
                            "W_v.weight": sa.W_v.weight})
    x = save_npy(d, "x.npy", encodings_matrix)
    save_npy(d, "q.npy", q)
    save_npy(d, "sims.npy", sims)
    save_npy(d, "scaled_sims.npy", scaled_sims)
    save_npy(d, "attention_percents.npy", attention_percents)
    yy = save_npy(d, "y.npy", y)

    # independent float64 numpy re-computation from the files ([out,in] layout)
    x64 = x.astype(np.float64)
    q64 = x64 @ W["W_q.weight"].T.astype(np.float64)
    k64 = x64 @ W["W_k.weight"].T.astype(np.float64)
    v64 = x64 @ W["W_v.weight"].T.astype(np.float64)
    p64 = np_softmax(q64 @ k64.transpose(0, 2, 1) / math.sqrt(2.0))
    check_close(S, "numpy float64 recompute from files == y.npy", p64 @ v64, yy, 1e-5)


# ----------------------------------------------------------------------------
# seed 001: Raschka self-attention from scratch with nn.Embedding
# ----------------------------------------------------------------------------

def seed001():
    S = "001"
    d = seed_dir("001_embedding_attention")
    sentence = 'Life is short, eat dessert first'
    dc = {s: i for i, s in enumerate(sorted(sentence.replace(',', '').split()))}
    check(S, "vocabulary dict as printed",
          dc == {'Life': 0, 'dessert': 1, 'eat': 2, 'first': 3, 'is': 4, 'short': 5})
    sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
    check(S, "sentence_int == [0, 4, 5, 2, 1, 3] (int64)",
          sentence_int.tolist() == [0, 4, 5, 2, 1, 3] and sentence_int.dtype == torch.int64)

    torch.manual_seed(123)
    embed = torch.nn.Embedding(6, 16)
    embedded = embed(sentence_int).detach()
    d_q, d_k, d_v = 24, 24, 28
    dmod = embedded.shape[1]
    W_query = torch.rand(d_q, dmod)
    W_key = torch.rand(d_k, dmod)
    W_value = torch.rand(d_v, dmod)

    check_printed(S, "embeded_sentence", embedded, [
        [0.3374, -0.1778, -0.3035, -0.5880, 0.3486, 0.6603, -0.2196, -0.3792,
         0.7671, -1.1925, 0.6984, -1.4097, 0.1794, 1.8951, 0.4954, 0.2692],
        [0.5146, 0.9938, -0.2587, -1.0826, -0.0444, 1.6236, -2.3229, 1.0878,
         0.6716, 0.6933, -0.9487, -0.0765, -0.1526, 0.1167, 0.4403, -1.4465],
        [0.2553, -0.5496, 1.0042, 0.8272, -0.3948, 0.4892, -0.2168, -1.7472,
         -1.6025, -1.0764, 0.9031, -0.7218, -0.5951, -0.7112, 0.6230, -1.3729],
        [-1.3250, 0.1784, -2.1338, 1.0524, -0.3885, -0.9343, -0.4991, -1.0867,
         0.8805, 1.5542, 0.6266, -0.1755, 0.0983, -0.0935, 0.2662, -0.5850],
        [-0.0770, -1.0205, -0.1690, 0.9178, 1.5810, 1.3010, 1.2753, -0.2010,
         0.4965, -1.5723, 0.9666, -1.1481, -1.1589, 0.3255, -0.6315, -2.8400],
        [0.8768, 1.6221, -1.4779, 1.1331, -1.2203, 1.3139, 1.0533, 0.1388,
         2.2473, -0.8036, -0.2808, 0.7697, -0.6596, -0.7979, 0.1838, 0.2293]])

    # the notebook's own cells (single query token "is" = row 1)
    x_2 = embedded[1]
    query_2 = W_query.matmul(x_2)
    key_2 = W_key.matmul(x_2)
    value_2 = W_value.matmul(x_2)
    check(S, "query_2/key_2/value_2 shapes [24]/[24]/[28]",
          [list(query_2.shape), list(key_2.shape), list(value_2.shape)] == [[24], [24], [28]])
    nb_keys = W_key.matmul(embedded.T).T
    nb_values = W_value.matmul(embedded.T).T
    check(S, "keys.shape [6, 24], values.shape [6, 28]",
          list(nb_keys.shape) == [6, 24] and list(nb_values.shape) == [6, 28])
    omega_24 = query_2.dot(nb_keys[4])
    check_printed(S, "omega_24", omega_24, 2.3206)
    omega_2 = query_2.matmul(nb_keys.T)
    check_printed(S, "omega_2", omega_2,
                  [-7.0847, -4.5398, 3.9887, 10.2379, 2.3206, -10.5434])
    attention_weights_2 = F.softmax(omega_2 / d_k ** 0.5, dim=0)
    check_printed(S, "attention_weights_2", attention_weights_2,
                  [0.0185, 0.0312, 0.1778, 0.6368, 0.1265, 0.0092])

    # full-sequence (all 6 query tokens) version stored as golden data
    queries = embedded @ W_query.T
    keys = embedded @ W_key.T
    values = embedded @ W_value.T
    omega = queries @ keys.T
    attention_weights = F.softmax(omega / d_k ** 0.5, dim=-1)
    context = attention_weights @ values
    check_close(S, "keys == notebook's W_key.matmul(E.T).T", keys, nb_keys, 1e-5)
    check_close(S, "values == notebook's W_value.matmul(E.T).T", values, nb_values, 1e-5)
    check_close(S, "omega[1] == notebook's omega_2", omega[1], omega_2, 1e-4)
    check_printed(S, "omega[1] (printed omega_2)", omega[1],
                  [-7.0847, -4.5398, 3.9887, 10.2379, 2.3206, -10.5434])
    check_printed(S, "attention_weights[1] (printed attention_weights_2)",
                  attention_weights[1], [0.0185, 0.0312, 0.1778, 0.6368, 0.1265, 0.0092])

    W = save_weights(S, d, {"embed.weight": embed.weight, "W_query": W_query,
                            "W_key": W_key, "W_value": W_value})
    tok = save_npy(d, "tokens.npy", sentence_int, dtype="<i8")
    save_npy(d, "embedded.npy", embedded)
    save_npy(d, "queries.npy", queries)
    save_npy(d, "keys.npy", keys)
    save_npy(d, "values.npy", values)
    save_npy(d, "omega.npy", omega)
    save_npy(d, "attention_weights.npy", attention_weights)
    ctx = save_npy(d, "context.npy", context)

    e64 = W["embed.weight"].astype(np.float64)[tok]
    q64 = e64 @ W["W_query"].astype(np.float64).T
    k64 = e64 @ W["W_key"].astype(np.float64).T
    v64 = e64 @ W["W_value"].astype(np.float64).T
    c64 = np_softmax(q64 @ k64.T / math.sqrt(24.0)) @ v64
    check_close(S, "numpy float64 recompute from files == context.npy", c64, ctx, 1e-4)


# ----------------------------------------------------------------------------
# seed 002: numpy self-attention toy example (fixed numbers)
# ----------------------------------------------------------------------------

def seed002():
    S = "002"
    d = seed_dir("002_numpy_attention")
    its = np.array([0.3, 0.8, -0.3])
    snowing = np.array([-0.9, -0.1, 0])
    outside = np.array([1, -0.2, 0.3])
    combined = np.stack((its, snowing, outside), axis=0)
    Wq = np.array([[0.27, 0.14], [0.24, 0.09], [0.56, 0.84]])
    Wk = np.array([[0.1, 0.69], [0.38, 0.63], [0.91, 0.01]])
    Wv = np.array([[0.81, 0.8], [0.67, 0.98], [0.04, 0.3]])

    # float64, as in the notebook
    queries = np.matmul(combined, Wq)
    keys = np.matmul(combined, Wk)
    values = np.matmul(combined, Wv)
    scores = np.matmul(queries, keys.T)
    weights = np_softmax(scores / math.sqrt(keys.shape[1]), axis=-1)
    y = weights @ values

    check_printed(S, "combined", combined,
                  [[0.3, 0.8, -0.3], [-0.9, -0.1, 0.0], [1.0, -0.2, 0.3]], tol=0)
    check_printed(S, "queries", queries,
                  [[0.105, -0.138], [-0.267, -0.135], [0.39, 0.374]], tol=1e-12)
    check_printed(S, "keys", keys,
                  [[0.061, 0.708], [-0.128, -0.684], [0.297, 0.567]], tol=1e-12)
    check_printed(S, "np.matmul(queries, keys.T) (scores)", scores,
                  [[-0.091299, 0.080952, -0.047061],
                   [-0.111867, 0.126516, -0.155844],
                   [0.288582, -0.305736, 0.327888]], tol=1e-12)
    check_close(S, "softmax rows sum to 1", weights.sum(-1), np.ones(3), 1e-12)

    # cross-check the completed TODO against torch (float64)
    with torch.no_grad():
        tq = torch.from_numpy(queries)
        tk = torch.from_numpy(keys)
        tv = torch.from_numpy(values)
        ty = F.softmax(tq @ tk.T / math.sqrt(2.0), dim=-1) @ tv
    check_close(S, "y == torch float64 softmax(QK^T/sqrt(2)) V", y, ty.numpy(), 1e-12)

    W = save_weights(S, d, {"Wq": Wq, "Wk": Wk, "Wv": Wv})
    x = save_npy(d, "x.npy", combined)
    save_npy(d, "queries.npy", queries)
    save_npy(d, "keys.npy", keys)
    save_npy(d, "values.npy", values)
    save_npy(d, "scores.npy", scores)
    save_npy(d, "weights.npy", weights)
    yy = save_npy(d, "y.npy", y)

    x64 = x.astype(np.float64)
    q64 = x64 @ W["Wq"].astype(np.float64)
    k64 = x64 @ W["Wk"].astype(np.float64)
    v64 = x64 @ W["Wv"].astype(np.float64)
    check_close(S, "numpy float64 recompute from float32 files == y.npy",
                np_softmax(q64 @ k64.T / math.sqrt(2.0)) @ v64, yy, 1e-6)


# ----------------------------------------------------------------------------
# seed 003: home-made multi-head attention (unseeded torch.rand in notebook)
# ----------------------------------------------------------------------------

class SelfAttention003(nn.Module):
    """Verbatim from the notebook."""

    def __init__(self, inp, dk):
        super().__init__()
        self.inp, self.dk = inp, dk
        self.wq, self.wk, self.wv = [torch.rand(self.inp.size(-1), dk) for i in range(3)]

    def forward(self, inp):
        return self._dot_attention(inp, self.dk)

    def _dot_attention(self, inp, dk):
        q, k, v = inp @ self.wq, inp @ self.wk, inp @ self.wv
        logit = (q @ k.transpose(0, -1)) / math.sqrt(dk)
        weigt = torch.softmax(logit, dim=-1)
        res = weigt @ v
        return res


class MultiHeadAttention003(nn.Module):
    """Verbatim from the notebook."""

    def __init__(self, inp, dk, nh):
        super().__init__()
        self.inp, self.dk, self.nh = inp, dk, nh
        self.layers = [SelfAttention003(inp, dk) for i in range(nh)]
        self.out = torch.rand(dk * nh, dk, requires_grad=True)

    def forward(self, inp):
        res = []
        for l in self.layers:
            res.append(l(inp))
        ccat = torch.cat(res, 1)
        res = ccat @ self.out
        return res


def seed003():
    S = "003"
    d = seed_dir("003_multi_head")
    embed_a = {"is": [1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
               "one": [0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0],
               "two": [0, 0, 1.0, 0, 0, 0, 0, 0, 0, 0],
               "three": [0, 0, 0, 1.0, 0, 0, 0, 0, 0, 0],
               "four": [0, 0, 0, 0, 1.0, 0, 0, 0, 0, 0],
               "five": [0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0],
               "six": [0, 0, 0, 0, 0, 0, 1.0, 0, 0, 0],
               "seven": [0, 0, 0, 0, 0, 0, 0, 1.0, 0, 0],
               "eight": [0, 0, 0, 0, 0, 0, 0, 0, 1.0, 0],
               "nine": [0, 0, 0, 0, 0, 0, 0, 0, 0, 1.0]}

    def sentence_embed(sentence, embed_dict):
        return [embed_dict[w] for w in sentence.split()]

    inp_list = sentence_embed("one is one", embed_a)
    check(S, "sentence_embed('one is one') as printed",
          inp_list == [[0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0],
                       [1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                       [0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0]])
    inp = torch.tensor(inp_list, dtype=torch.float32)
    check(S, "inp.shape [3, 10]", list(inp.shape) == [3, 10])

    # The notebook never seeds; we seed with 3 and build only the multi-head
    # module (its earlier dot_attention / satten cells drew other random numbers).
    torch.manual_seed(3)
    dk, nh = 8, 6
    mul_head = MultiHeadAttention003(inp, dk, nh)
    with torch.no_grad():
        head0 = mul_head.layers[0](inp)
        y = mul_head(inp)

    check(S, "single-head output shape [3, 8] (as printed for satten(inp))",
          list(head0.shape) == [3, 8])
    check(S, "multi-head output shape [3, 8] (as printed for mul_head(inp))",
          list(y.shape) == [3, 8])
    check(S, "rows 0 and 2 identical (same token 'one'), like every printed output",
          torch.equal(y[0], y[2]) and torch.equal(head0[0], head0[2]))
    check(S, "all values positive (torch.rand weights, one-hot input)",
          bool((y > 0).all()) and bool((head0 > 0).all()))

    tensors = {"out": mul_head.out}
    for i, l in enumerate(mul_head.layers):
        tensors[f"heads.{i}.wq"] = l.wq
        tensors[f"heads.{i}.wk"] = l.wk
        tensors[f"heads.{i}.wv"] = l.wv
    W = save_weights(S, d, tensors)
    x = save_npy(d, "x.npy", inp)
    h0 = save_npy(d, "head0.npy", head0)
    yy = save_npy(d, "y.npy", y)

    x64 = x.astype(np.float64)
    heads = []
    for i in range(nh):
        q = x64 @ W[f"heads.{i}.wq"].astype(np.float64)
        k = x64 @ W[f"heads.{i}.wk"].astype(np.float64)
        v = x64 @ W[f"heads.{i}.wv"].astype(np.float64)
        heads.append(np_softmax(q @ k.T / math.sqrt(dk)) @ v)
    check_close(S, "numpy float64 recompute from files == head0.npy", heads[0], h0, 1e-5)
    check_close(S, "numpy float64 recompute from files == y.npy",
                np.concatenate(heads, axis=1) @ W["out"].astype(np.float64), yy, 1e-4)


# ----------------------------------------------------------------------------
# seed 004: standard multi-headed attention (Harvard annotated transformer)
# ----------------------------------------------------------------------------

class MultiHeadedAttention(nn.Module):
    """Re-implementation of the module the notebook imports (not available).

    Submodules and their creation order match the notebook's printout.
    Returns (output, attention weights averaged over heads)."""

    def __init__(self, num_heads, d_model, dropout=0.1):
        super().__init__()
        assert d_model % num_heads == 0
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.linear_q = nn.Linear(d_model, d_model)
        self.linear_k = nn.Linear(d_model, d_model)
        self.linear_v = nn.Linear(d_model, d_model)
        self.linear_concat = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, value):
        B = query.size(0)
        q = self.linear_q(query).view(B, -1, self.h, self.d_k).transpose(1, 2)
        k = self.linear_k(key).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.linear_v(value).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        p = F.softmax(scores, dim=-1)
        p = self.dropout(p)
        x = torch.matmul(p, v).transpose(1, 2).contiguous().view(B, -1, self.h * self.d_k)
        return self.linear_concat(x), p.mean(dim=1)


def seed004():
    S = "004"
    d = seed_dir("004_multi_headed")
    torch.manual_seed(4)
    mha = MultiHeadedAttention(num_heads=8, d_model=512)
    mha.eval()
    check(S, "module printout matches the notebook's print(mha)", str(mha) == (
        "MultiHeadedAttention(\n"
        "  (linear_q): Linear(in_features=512, out_features=512, bias=True)\n"
        "  (linear_k): Linear(in_features=512, out_features=512, bias=True)\n"
        "  (linear_v): Linear(in_features=512, out_features=512, bias=True)\n"
        "  (linear_concat): Linear(in_features=512, out_features=512, bias=True)\n"
        "  (dropout): Dropout(p=0.1, inplace=False)\n"
        ")"))
    x = torch.rand(1, 60, 512)
    with torch.no_grad():
        attn, attn_weights = mha(key=x, query=x, value=x)
    check(S, "attn.shape [1, 60, 512] (printed)", list(attn.shape) == [1, 60, 512])
    check(S, "attn_weights.shape [1, 60, 60] (printed)", list(attn_weights.shape) == [1, 60, 60])
    check_close(S, "attn_weights rows sum to 1", attn_weights.sum(-1),
                torch.ones(1, 60), 1e-5)
    with torch.no_grad():
        attn2, _ = mha(key=x, query=x, value=x)
    check(S, "eval mode: dropout is identity (two forwards bit-identical)",
          torch.equal(attn, attn2))

    # cross-check against PyTorch's built-in nn.MultiheadAttention
    ref = nn.MultiheadAttention(512, 8, batch_first=True)
    ref.eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.linear_q.weight, mha.linear_k.weight,
                                            mha.linear_v.weight], 0))
        ref.in_proj_bias.copy_(torch.cat([mha.linear_q.bias, mha.linear_k.bias,
                                          mha.linear_v.bias], 0))
        ref.out_proj.weight.copy_(mha.linear_concat.weight)
        ref.out_proj.bias.copy_(mha.linear_concat.bias)
        r_out, r_w = ref(x, x, x, need_weights=True, average_attn_weights=True)
    check_close(S, "attn == torch.nn.MultiheadAttention output", attn, r_out, 1e-5)
    check_close(S, "attn_weights == torch.nn.MultiheadAttention averaged weights",
                attn_weights, r_w, 1e-6)

    tensors = {}
    for n in ("linear_q", "linear_k", "linear_v", "linear_concat"):
        lin = getattr(mha, n)
        tensors[f"{n}.weight"] = lin.weight
        tensors[f"{n}.bias"] = lin.bias
    W = save_weights(S, d, tensors)
    xx = save_npy(d, "x.npy", x)
    a = save_npy(d, "attn.npy", attn)
    aw = save_npy(d, "attn_weights.npy", attn_weights)

    x64 = xx[0].astype(np.float64)

    def lin(n, t):
        return t @ W[f"{n}.weight"].astype(np.float64).T + W[f"{n}.bias"].astype(np.float64)

    q, k, v = lin("linear_q", x64), lin("linear_k", x64), lin("linear_v", x64)
    outs, ps = [], []
    for h in range(8):
        sl = slice(64 * h, 64 * (h + 1))
        p = np_softmax(q[:, sl] @ k[:, sl].T / 8.0)
        ps.append(p)
        outs.append(p @ v[:, sl])
    o64 = lin("linear_concat", np.concatenate(outs, axis=1))
    check_close(S, "numpy float64 recompute from files == attn.npy", o64[None], a, 1e-5)
    check_close(S, "numpy float64 recompute from files == attn_weights.npy",
                np.mean(ps, axis=0)[None], aw, 1e-6)


def main():
    print(f"torch {torch.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    for fn in (seed000, seed001, seed002, seed003, seed004):
        fn()
    current = None
    for seed, desc in CHECKS:
        if seed != current:
            print(f"seed {seed}:")
            current = seed
        print(f"  ok  {desc}")
    print(f"all {len(CHECKS)} checks passed")


if __name__ == "__main__":
    main()
