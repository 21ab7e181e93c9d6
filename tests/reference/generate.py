#!/usr/bin/python3
"""Generate the PyTorch reference fixtures of tests/reference/.

Run with Debian's python (python3-torch 1.13 + python3-numpy):

    /usr/bin/python3 tests/reference/generate.py            # rewrite the fixtures
    /usr/bin/python3 tests/reference/generate.py --check    # regenerate into a
        temporary folder and fail unless every file is byte-identical

For every fixture NAME this writes tests/reference/NAME/ with
  model.tfm            the model in the .tfm language
  weights.safetensors  the PyTorch module's state_dict, F32, by its own names
                       (absent for fixtures without weights)
  <input>.npy          one file per model input (f32, i64, i32 or bool)
  <output>.npy         the expected value of each model output (f32)
and tests/reference/manifest.json, which lists the fixtures, their inputs,
outputs and tolerances, and the fixture table of tests/reference/README.md.

How the expected outputs are made: weights and inputs are drawn in float32
from numpy RandomStates seeded by the fixture's name. The module (or function)
then runs in float64 -- a deep copy converted with .double(), in eval mode and
with autograd on, so that PyTorch takes its reference (math) path and not the
fused CPU fast path -- and the result is rounded to float32. The float32 module
is also run as a user would (eval, no_grad) and must agree with the float64
result within the fixture's tolerance, or the script fails.

PyTorch 1.13 has no public F.scaled_dot_product_attention (it came in 2.0), so
`sdpa_reference` below is the "equivalent implementation" printed in the
PyTorch 2.x documentation of F.scaled_dot_product_attention; it is
cross-checked against 1.13's F._scaled_dot_product_attention (boolean masks and
is_causal; no custom scale there) and against hand-written numpy.

The output is deterministic: two runs produce byte-identical files.
"""

import argparse
import copy
import filecmp
import inspect
import json
import math
import os
import re
import shutil
import sys
import tempfile
import textwrap
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from safetensors_io import read_safetensors, to_f32, write_safetensors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5

torch.set_num_threads(1)  # fixed summation order -> reproducible bits
torch.use_deterministic_algorithms(True)

# ----------------------------------------------------------------------------
# random data
# ----------------------------------------------------------------------------


def rng_for(name, salt=""):
    return np.random.RandomState(zlib.crc32((name + "/" + salt).encode()) & 0x7FFFFFFF)


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def randomize_parameters(module, rng):
    """Overwrites every parameter with float32 values from `rng` (the defaults
    leave biases at 0 and LayerNorm at 1/0, which would hide mistakes)."""
    with torch.no_grad():
        for mname, mod in module.named_modules():
            for pname, p in mod.named_parameters(recurse=False):
                shape = tuple(p.shape)
                if isinstance(mod, nn.LayerNorm):
                    if pname == "weight":
                        v = 1 + rng.uniform(-0.3, 0.3, shape)
                    else:
                        v = rng.uniform(-0.3, 0.3, shape)
                elif isinstance(mod, nn.Embedding):
                    v = rng.uniform(-1, 1, shape)
                elif len(shape) >= 2:
                    bound = math.sqrt(3.0 / shape[-1])
                    v = rng.uniform(-bound, bound, shape)
                else:
                    v = rng.uniform(-0.5, 0.5, shape)
                p.copy_(torch.from_numpy(np.asarray(v, dtype=np.float32)))


def bool_take_part(rng, shape, p=0.6):
    """A random SDPA-style boolean mask (True = takes part) with at least one
    True in every row."""
    m = rng.uniform(size=shape) < p
    flat = m.reshape(-1, shape[-1])
    keep = rng.randint(0, shape[-1], size=flat.shape[0])
    flat[np.arange(flat.shape[0]), keep] = True
    return np.ascontiguousarray(flat.reshape(shape))


def float_mask(rng, shape, p_inf=0.25):
    """An additive float mask: values in [-2, 2), some -inf, never a whole row
    of -inf."""
    m = rng.uniform(-2, 2, size=shape)
    inf = rng.uniform(size=shape) < p_inf
    flat_inf = inf.reshape(-1, shape[-1])
    keep = rng.randint(0, shape[-1], size=flat_inf.shape[0])
    flat_inf[np.arange(flat_inf.shape[0]), keep] = False
    m[flat_inf.reshape(shape)] = -np.inf
    return m.astype(np.float32)


def padding_mask(rng, batch, seq, trailing=True):
    """nn.MultiheadAttention key_padding_mask (True = ignore the key), at least
    one key kept per batch: trailing padding of random length, or random
    positions."""
    m = np.zeros((batch, seq), dtype=bool)
    for b in range(batch):
        if trailing:
            keep = rng.randint(1, seq + 1)
            m[b, keep:] = True
        else:
            m[b] = rng.uniform(size=seq) < 0.4
            m[b, rng.randint(0, seq)] = False
    return m


def unmask_empty_rows(attn_mask, kpm, batch, heads):
    """nn.MultiheadAttention masks: where attn_mask (bool True = masked, or
    float -inf) and key_padding_mask [batch, sk] (True = ignore) together
    mask every key of a query row, lets the row attend to the first key that
    no batch pads. attn_mask is [sq, sk] or [batch*heads, sq, sk]; changed in
    place."""
    kept = ~kpm.reshape(-1, kpm.shape[-1])  # [batch, sk]
    masked = attn_mask if attn_mask.dtype == bool else np.isneginf(attn_mask)
    for i in range(attn_mask.shape[-2]):
        for bh in range(attn_mask.shape[0] if attn_mask.ndim == 3 else 1):
            batches = [bh // heads] if attn_mask.ndim == 3 else range(batch)
            row = masked[bh, i] if attn_mask.ndim == 3 else masked[i]
            if all((~row & kept[b]).any() for b in batches):
                continue
            free = np.flatnonzero(np.all([kept[b] for b in batches], axis=0))
            assert free.size, "no key is kept in every batch"
            idx = (bh, i, free[0]) if attn_mask.ndim == 3 else (i, free[0])
            attn_mask[idx] = False if attn_mask.dtype == bool else 0.0


def causal_float_mask(n):
    """nn.Transformer.generate_square_subsequent_mask(n): -inf above the
    diagonal, 0 elsewhere."""
    return nn.Transformer.generate_square_subsequent_mask(n).numpy().astype(np.float32)


# ----------------------------------------------------------------------------
# scaled dot-product attention as PyTorch 2.x documents it
# ----------------------------------------------------------------------------


def sdpa_reference(query, key, value, attn_mask=None, is_causal=False, scale=None):
    """The reference implementation from the documentation of
    torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x), without
    dropout: a boolean mask's True means the key takes part; a float mask is
    added to the scaled scores; is_causal masks key j > i for query i
    (torch.ones(L, S).tril(), top-left aligned also when L != S)."""
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=query.dtype)
    if is_causal:
        assert attn_mask is None
        temp_mask = torch.ones(L, S, dtype=torch.bool).tril(diagonal=0)
        attn_bias = attn_bias.masked_fill(temp_mask.logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias = torch.where(attn_mask, attn_bias,
                                    torch.tensor(float("-inf"), dtype=query.dtype))
        else:
            attn_bias = attn_mask.to(query.dtype) + attn_bias
    attn_weight = query @ key.transpose(-2, -1) * scale_factor
    attn_weight = attn_weight + attn_bias
    attn_weight = torch.softmax(attn_weight, dim=-1)
    return attn_weight @ value


def np_softmax(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # rows of -inf give NaN, as torch
        m = np.max(x, axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / e.sum(axis=-1, keepdims=True)


def sdpa_numpy(q, k, v, mask=None, is_causal=False, scale=None):
    """An independent float64 numpy SDPA for cross-checking."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    s = (1 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * s
    L, S = scores.shape[-2:]
    if is_causal:
        scores = np.where(np.tril(np.ones((L, S), bool)), scores, -np.inf)
    if mask is not None:
        if mask.dtype == bool:
            scores = np.where(mask, scores, -np.inf)
        else:
            scores = scores + mask.astype(np.float64)
    return np_softmax(scores) @ v


# ----------------------------------------------------------------------------
# modules
# ----------------------------------------------------------------------------


class EmbeddingModel(nn.Module):
    def __init__(self, num, dim, padding_idx=None):
        super().__init__()
        self.emb = nn.Embedding(num, dim, padding_idx=padding_idx)

    def forward(self, ids):
        return {"y": self.emb(ids)}


class SinusoidalModel(nn.Module):
    """The PyTorch tutorial's PositionalEncoding (without dropout) after a
    token embedding, optionally scaled by sqrt(d_model) as the tutorial's
    TransformerModel does. The table is a non-persistent buffer, so the
    state_dict holds only emb.weight. With num=None the input is already
    embedded (float [..., seq, d])."""

    def __init__(self, num, dim, max_len=64, scale=False):
        super().__init__()
        self.emb = nn.Embedding(num, dim) if num else None
        self.scale = scale
        position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64)
                             * (-math.log(10000.0) / dim))
        pe = torch.zeros(max_len, dim, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.float(), persistent=False)
        self._pe64 = pe

    def _apply(self, fn):
        # .double() must give the float64 table, not float32 widened.
        out = super()._apply(fn)
        if self.pe.dtype == torch.float64:
            self.pe = self._pe64.clone()
        return out

    def forward(self, ids=None, x=None):
        if self.emb is not None:
            x = self.emb(ids)
            if self.scale:
                x = x * math.sqrt(x.size(-1))
        return {"y": x + self.pe[: x.size(-2)]}


class LearnedPositionalModel(nn.Module):
    def __init__(self, num, dim, max_len):
        super().__init__()
        self.tok = nn.Embedding(num, dim)
        self.pos = nn.Embedding(max_len, dim)

    def forward(self, ids):
        x = self.tok(ids)
        positions = torch.arange(ids.size(-1))
        return {"y": x + self.pos(positions)}


class MHAModel(nn.Module):
    def __init__(self, E, H, bias=True, batch_first=True, kdim=None, vdim=None,
                 bare=False):
        super().__init__()
        attn = nn.MultiheadAttention(E, H, dropout=0.1, bias=bias,
                                     batch_first=batch_first, kdim=kdim, vdim=vdim)
        # bare: the weights are attn's own state_dict, names without a prefix
        # (weights = ""); see mha_fixture.
        if bare:
            self.bare = attn
        else:
            self.attn = attn
        self.is_bare = bare

    def forward(self, query, key=None, value=None, key_padding_mask=None,
                attn_mask=None, need_weights=False, average_attn_weights=True):
        attn = self.bare if self.is_bare else self.attn
        if key is None:
            key = value = query
        y, w = attn(query, key, value, key_padding_mask=key_padding_mask,
                    need_weights=need_weights, attn_mask=attn_mask,
                    average_attn_weights=average_attn_weights)
        return {"y": y, "w": w} if need_weights else {"y": y}


class LayerNormModel(nn.Module):
    def __init__(self, dim, affine=True, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps, elementwise_affine=affine)

    def forward(self, x):
        return {"y": self.norm(x)}


class FeedForwardModel(nn.Module):
    """nn.Sequential(Linear, act, Dropout, Linear, Dropout) and a residual:
    names ff.0.*, ff.3.*."""

    def __init__(self, E, FF, act, residual=False):
        super().__init__()
        self.ff = nn.Sequential(nn.Linear(E, FF), act, nn.Dropout(0.1),
                                nn.Linear(FF, E), nn.Dropout(0.1))
        self.residual = residual

    def forward(self, x):
        y = self.ff(x)
        return {"y": x + y if self.residual else y}


class EncoderLayerModel(nn.Module):
    def __init__(self, E, H, FF, norm_first, activation, batch_first=True, eps=1e-5):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            E, H, dim_feedforward=FF, dropout=0.1, activation=activation,
            layer_norm_eps=eps, batch_first=batch_first, norm_first=norm_first)

    def forward(self, x, mask=None, padding=None):
        return {"y": self.layer(x, src_mask=mask, src_key_padding_mask=padding)}


class EncoderStackModel(nn.Module):
    def __init__(self, E, H, FF, layers, norm_first, activation):
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            E, H, dim_feedforward=FF, dropout=0.1, activation=activation,
            batch_first=True, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x, mask=None):
        return {"y": self.encoder(x, mask=mask)}


class SelfAttention000(nn.Module):
    """Seed 000 (StatQuest), verbatim from examples/seeds/generate.py."""

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
        return {"y": torch.matmul(attention_percents, v)}


class EmbeddingAttention001(nn.Module):
    """Seed 001 (Raschka): embedding, then attention with W.matmul(x.T).T."""

    def __init__(self, vocab, d_in, d_k, d_v):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_in)
        self.W_query = nn.Parameter(torch.zeros(d_k, d_in))
        self.W_key = nn.Parameter(torch.zeros(d_k, d_in))
        self.W_value = nn.Parameter(torch.zeros(d_v, d_in))
        self.d_k = d_k

    def forward(self, tokens):
        x = self.embed(tokens)
        queries = self.W_query.matmul(x.T).T
        keys = self.W_key.matmul(x.T).T
        values = self.W_value.matmul(x.T).T
        omega = queries @ keys.T
        attention_weights = F.softmax(omega / self.d_k ** 0.5, dim=-1)
        return {"context": attention_weights @ values,
                "attention_weights": attention_weights}


class NumpyAttention002(nn.Module):
    """Seed 002: numpy attention with [in, out] matrices (x @ Wq)."""

    def __init__(self, d_in, d_k):
        super().__init__()
        self.Wq = nn.Parameter(torch.zeros(d_in, d_k))
        self.Wk = nn.Parameter(torch.zeros(d_in, d_k))
        self.Wv = nn.Parameter(torch.zeros(d_in, d_k))

    def forward(self, x):
        q, k, v = x @ self.Wq, x @ self.Wk, x @ self.Wv
        w = torch.softmax(q @ k.T / math.sqrt(k.size(-1)), dim=-1)
        return {"y": w @ v}


class Head003(nn.Module):
    def __init__(self, inp, dk):
        super().__init__()
        self.wq = nn.Parameter(torch.zeros(inp, dk))
        self.wk = nn.Parameter(torch.zeros(inp, dk))
        self.wv = nn.Parameter(torch.zeros(inp, dk))
        self.dk = dk

    def forward(self, inp):
        q, k, v = inp @ self.wq, inp @ self.wk, inp @ self.wv
        logit = (q @ k.transpose(0, -1)) / math.sqrt(self.dk)
        return torch.softmax(logit, dim=-1) @ v


class MultiHead003(nn.Module):
    """Seed 003: single-head attentions concatenated and projected by `out`."""

    def __init__(self, inp, dk, nh):
        super().__init__()
        self.heads = nn.ModuleList([Head003(inp, dk) for _ in range(nh)])
        self.out = nn.Parameter(torch.zeros(dk * nh, dk))

    def forward(self, x):
        return {"y": torch.cat([h(x) for h in self.heads], 1) @ self.out}


class MultiHeadedAttention004(nn.Module):
    """Seed 004 (annotated transformer), as examples/seeds/generate.py has it;
    returns the output and the attention weights averaged over heads."""

    def __init__(self, num_heads, d_model, dropout=0.1):
        super().__init__()
        self.h = num_heads
        self.d_k = d_model // num_heads
        self.linear_q = nn.Linear(d_model, d_model)
        self.linear_k = nn.Linear(d_model, d_model)
        self.linear_v = nn.Linear(d_model, d_model)
        self.linear_concat = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key=None, value=None):
        if key is None:
            key = value = query
        B = query.size(0)
        q = self.linear_q(query).view(B, -1, self.h, self.d_k).transpose(1, 2)
        k = self.linear_k(key).view(B, -1, self.h, self.d_k).transpose(1, 2)
        v = self.linear_v(value).view(B, -1, self.h, self.d_k).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        p = self.dropout(F.softmax(scores, dim=-1))
        x = torch.matmul(p, v).transpose(1, 2).contiguous().view(B, -1, self.h * self.d_k)
        return {"attn": self.linear_concat(x), "attn_weights": p.mean(dim=1)}


class SdpaFunction(nn.Module):
    """F.scaled_dot_product_attention (as sdpa_reference) as a module."""

    def __init__(self, is_causal=False, scale=None):
        super().__init__()
        self.is_causal = is_causal
        self.scale = scale

    def forward(self, q, k, v, mask=None):
        return {"y": sdpa_reference(q, k, v, attn_mask=mask, is_causal=self.is_causal,
                                    scale=self.scale)}


# ----------------------------------------------------------------------------
# fixtures
# ----------------------------------------------------------------------------

NPY_DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64",
              np.dtype(np.int32): "i32", np.dtype(np.bool_): "bool"}

FIXTURES = []


def wrap_statement(line, width=88):
    """Breaks `lhs = f(a, b, ...)` after the top-level commas of its outermost
    call when it is longer than `width` (a line that ends inside ( )
    continues on the next one)."""
    if len(line) <= width or "(" not in line:
        return [line]
    open_at = line.index("(")
    depth, quoted, cuts = 0, False, []
    for i, c in enumerate(line):
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "([":
            depth += 1
        elif not quoted and c in ")]":
            depth -= 1
        elif not quoted and c == "," and depth == 1:
            cuts.append(i)
    indent = " " * (open_at + 1)
    out, start, current = [], 0, ""
    for cut in cuts + [len(line)]:
        piece = line[start:cut + 1] if cut < len(line) else line[start:]
        piece = piece if start == 0 else piece.lstrip()
        if current and len(current) + 1 + len(piece) > width:
            out.append(current.rstrip())
            current = indent + piece
        else:
            current = piece if not current else current + " " + piece
        start = cut + 1
    out.append(current)
    return out


def fmt_number(x):
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


class Fixture:
    """One folder: a model, its weights, inputs and expected outputs.

    name:     folder name and key in the manifest
    group:    the case it belongs to (README table)
    covers:   one line: the layer and options it exercises
    pytorch:  the PyTorch call it reproduces
    module:   an nn.Module whose forward(**inputs) returns {output: tensor}
    body:     the .tfm statements between the inputs and `output`
    inputs:   list of (name, array, dims); dims are ints or symbol names
    outputs:  the output names, in order
    dynamic:  declare named dims by name (else by their sizes)
    state_module: the module whose state_dict is written (default: module)
    """

    def __init__(self, name, group, covers, pytorch, module, body, inputs, outputs,
                 dynamic=True, rtol=DEFAULT_RTOL, atol=DEFAULT_ATOL, note=None,
                 fast_path_check=True, zero_nan_rows=False, tolerance_reason=None,
                 state_module=None):
        assert all(c.isalnum() or c == "_" for c in name), name
        self.name, self.group, self.covers, self.pytorch = name, group, covers, pytorch
        self.module, self.body, self.inputs, self.outputs = module, body, inputs, outputs
        self.dynamic, self.rtol, self.atol, self.note = dynamic, rtol, atol, note
        self.fast_path_check = fast_path_check
        self.zero_nan_rows = zero_nan_rows
        self.tolerance_reason = tolerance_reason
        # whose state_dict is the weights file (module itself unless it wraps)
        self.state_module = state_module or module
        FIXTURES.append(self)

    # -- the .tfm file -------------------------------------------------------

    def symbols(self):
        sym = {}
        for name, arr, dims in self.inputs:
            assert len(dims) == arr.ndim, (self.name, name, dims, arr.shape)
            for d, size in zip(dims, arr.shape):
                if isinstance(d, str):
                    assert sym.setdefault(d, size) == size, (self.name, d)
                else:
                    assert d == size, (self.name, name, dims, arr.shape)
        return sym

    def tfm_source(self):
        sym = self.symbols()
        lines = [f"# Reference fixture {self.name} (generated by tests/reference/generate.py)"]
        lines += textwrap.wrap(self.covers, 86, initial_indent="# ", subsequent_indent="# ")
        lines += textwrap.wrap("PyTorch: " + self.pytorch, 86, initial_indent="# ",
                               subsequent_indent="#   ", break_on_hyphens=False)
        lines.append(f"model {self.name}")
        for name, arr, dims in self.inputs:
            shown = ", ".join(str(d) if not isinstance(d, str) or self.dynamic
                              else str(sym[d]) for d in dims)
            lines.append(f"input {name}: {NPY_DTYPES[arr.dtype]}[{shown}]")
        lines.append("")
        for statement in self.body.strip("\n").split("\n"):
            lines.extend(wrap_statement(statement))
        lines.append("")
        lines.append("output " + ", ".join(self.outputs))
        return "\n".join(lines) + "\n"

    def attention(self):
        """How tfm-compile's attention fusion must treat the model: "fused"
        (every attention chain becomes one fused op) or "unfused" (the
        attention weights are outputs, so the chain must stay unfused); None
        without attention."""
        if not any(f in self.body for f in ("sdpa(", "multi_head_attention(",
                                            "transformer_encoder_layer(", "softmax(")):
            return None
        weights = {"w", "attention_weights", "attn_weights"}
        return "unfused" if weights & set(self.outputs) else "fused"

    # -- running PyTorch -------------------------------------------------------

    def _torch_inputs(self, dtype):
        out = {}
        for name, arr, _ in self.inputs:
            t = torch.from_numpy(arr.copy())
            if t.is_floating_point():
                t = t.to(dtype)
            out[name] = t
        return out

    def _call(self, module, dtype):
        """Calls forward with the inputs by name where it takes **kwargs or
        has parameters of those names, else in order."""
        t = self._torch_inputs(dtype)
        params = inspect.signature(module.forward).parameters
        if any(p.kind == p.VAR_KEYWORD for p in params.values()) or set(t) <= set(params):
            return module(**t)
        return module(*t.values())

    def run(self):
        """Returns the float64 reference outputs (numpy float64) and checks
        the float32 module against them."""
        m64 = copy.deepcopy(self.module).double().eval()
        with torch.enable_grad():  # parameters require grad: no fast path
            ref = self._call(m64, torch.float64)
        ref = {k: v.detach().numpy().astype(np.float64) for k, v in ref.items()}
        assert list(ref) == self.outputs, (self.name, list(ref), self.outputs)
        m32 = self.module.eval()
        if self.fast_path_check:
            with torch.no_grad():
                got = self._call(m32, torch.float32)
        else:
            got = self._call(m32, torch.float32)
        for k in self.outputs:
            g = got[k].detach().numpy().astype(np.float64)
            r = ref[k]
            nan_rows = np.isnan(r)
            if self.zero_nan_rows:
                assert np.array_equal(np.isnan(g), nan_rows), self.name
                g = np.where(nan_rows, 0, g)
                r = np.where(nan_rows, 0, r)
                ref[k] = r
            assert not np.isnan(r).any(), f"{self.name}: NaN in the reference {k}"
            err = np.abs(g - r) - (self.atol + self.rtol * np.abs(r))
            assert (err <= 0).all(), (
                f"{self.name}: float32 PyTorch differs from float64 in {k}: "
                f"max abs err {np.abs(g - r).max():.2e}")
        return ref

    # -- writing ---------------------------------------------------------------

    def write(self, root):
        d = os.path.join(root, self.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.tfm"), "w") as f:
            f.write(self.tfm_source())
        state = dict(self.state_module.state_dict())
        weights = None
        if state:
            weights = "weights.safetensors"
            path = os.path.join(d, weights)
            write_safetensors(path, state)
            back = read_safetensors(path)
            assert sorted(back) == sorted(state)
            for k in state:
                assert back[k].tobytes() == to_f32(state[k]).tobytes()
        inputs = []
        for name, arr, dims in self.inputs:
            path = os.path.join(d, name + ".npy")
            np.save(path, np.ascontiguousarray(arr), allow_pickle=False)
            back = np.load(path)
            assert back.dtype == arr.dtype and back.tobytes() == arr.tobytes()
            inputs.append({"name": name, "file": name + ".npy",
                           "dtype": NPY_DTYPES[arr.dtype], "shape": list(arr.shape)})
        ref = self.run()
        outputs = []
        for name in self.outputs:
            arr = np.ascontiguousarray(ref[name].astype("<f4"))
            np.save(os.path.join(d, name + ".npy"), arr, allow_pickle=False)
            outputs.append({"name": name, "file": name + ".npy", "dtype": "f32",
                            "shape": list(arr.shape)})
        entry = {"name": self.name, "group": self.group, "covers": self.covers,
                 "pytorch": self.pytorch, "model": "model.tfm", "weights": weights,
                 "dynamic": self.dynamic and any(
                     isinstance(dd, str) for _, _, dims in self.inputs for dd in dims),
                 "inputs": inputs, "outputs": outputs,
                 "rtol": self.rtol, "atol": self.atol}
        if self.attention():
            entry["attention"] = self.attention()
        if self.tolerance_reason:
            entry["tolerance_reason"] = self.tolerance_reason
        if self.note:
            entry["note"] = self.note
        return entry


def shape_tag(**dims):
    return "_".join(f"{k}{v}" for k, v in dims.items())


# ----------------------------------------------------------------------------
# embedding and positional encodings
# ----------------------------------------------------------------------------


def embedding_fixtures():
    for (B, S, num, D, idtype, dynamic) in [(2, 5, 11, 8, np.int64, True),
                                            (None, 17, 7, 12, np.int32, False),
                                            (3, 1, 5, 8, np.int64, True)]:
        tag = shape_tag(**({"b": B} if B else {}), s=S, n=num, d=D)
        name = f"embedding_{tag}"
        rng = rng_for(name)
        m = EmbeddingModel(num, D)
        randomize_parameters(m, rng)
        shape = (B, S) if B else (S,)
        ids = rng.randint(0, num, size=shape).astype(idtype)
        dims = ["batch", "seq"] if B else ["seq"]
        Fixture(name, "embedding",
                f"nn.Embedding({num}, {D}), {NPY_DTYPES[ids.dtype]} ids "
                f"{'named' if dynamic else 'static'} dims",
                f"nn.Embedding({num}, {D})(ids)", m,
                'y = embedding(ids, weight = "emb.weight")',
                [("ids", ids, dims)], ["y"], dynamic=dynamic)

    for zero_row, (B, S, num, D, pad) in [(True, (2, 5, 10, 8, 0)),
                                          (False, (3, 7, 9, 12, 4))]:
        name = f"embedding_padding_idx_{'zero' if zero_row else 'stored'}_" + \
            shape_tag(b=B, s=S, n=num, d=D)
        rng = rng_for(name)
        m = EmbeddingModel(num, D, padding_idx=pad)
        randomize_parameters(m, rng)
        if zero_row:
            with torch.no_grad():
                m.emb.weight[pad].zero_()  # as nn.Embedding initialises it
        ids = rng.randint(0, num, size=(B, S)).astype(np.int64)
        ids[:, -2:] = pad
        Fixture(name, "embedding_padding_idx",
                f"nn.Embedding({num}, {D}, padding_idx={pad}), "
                + ("the padding row zero as initialised" if zero_row else
                   "a non-zero padding row (a loaded state_dict): used as stored"),
                f"nn.Embedding({num}, {D}, padding_idx={pad})(ids)", m,
                f'y = embedding(ids, weight = "emb.weight", padding_idx = {pad})',
                [("ids", ids, ["batch", "seq"])], ["y"], dynamic=True)


def positional_fixtures():
    # sinusoidal: static, dynamic (scaled by sqrt(d) as the tutorial's model
    # does), and on an embedded float input without batch
    for (B, S, num, D, dynamic, scale) in [(2, 5, 11, 8, False, False),
                                           (2, 17, 13, 12, True, True),
                                           (3, 1, 6, 8, True, False)]:
        name = f"posenc_sinusoidal_{'dynamic' if dynamic else 'static'}_" + \
            shape_tag(b=B, s=S, d=D)
        rng = rng_for(name)
        m = SinusoidalModel(num, D, scale=scale)
        randomize_parameters(m, rng)
        ids = rng.randint(0, num, size=(B, S)).astype(np.int64)
        emb = 'x = embedding(ids, weight = "emb.weight")'
        if scale:
            emb += f" * sqrt({D})"
        Fixture(name, "posenc_sinusoidal",
                f"sinusoidal positional encoding added to token embeddings"
                f"{' scaled by sqrt(d)' if scale else ''}, "
                f"{'dynamic' if dynamic else 'static'} seq",
                "emb(ids)" + (" * math.sqrt(d)" if scale else "")
                + " + pe[:seq] (the PyTorch tutorial's PositionalEncoding)", m,
                emb + "\ny = x + positional_encoding(x)",
                [("ids", ids, ["batch", "seq"])], ["y"], dynamic=dynamic)
    for (S, D) in [(7, 8), (1, 12)]:
        name = "posenc_sinusoidal_unbatched_" + shape_tag(s=S, d=D)
        rng = rng_for(name)
        m = SinusoidalModel(None, D)
        x = randn(rng, S, D)
        Fixture(name, "posenc_sinusoidal",
                "sinusoidal positional encoding added to a float [seq, d] input",
                "x + pe[:seq]", m, 'y = x + positional_encoding(x, kind = "sinusoidal")',
                [("x", x, ["seq", D])], ["y"], dynamic=True)

    # learned: an embedding over positions 0..seq-1
    for (B, S, num, D, max_len, dynamic) in [(2, 5, 11, 8, 5, False),
                                             (3, 7, 13, 12, 16, True),
                                             (None, 1, 6, 8, 9, True)]:
        tag = shape_tag(**({"b": B} if B else {}), s=S, d=D, max=max_len)
        name = f"posenc_learned_{'dynamic' if dynamic else 'static'}_{tag}"
        rng = rng_for(name)
        m = LearnedPositionalModel(num, D, max_len)
        randomize_parameters(m, rng)
        shape = (B, S) if B else (S,)
        ids = rng.randint(0, num, size=shape).astype(np.int64)
        Fixture(name, "posenc_learned",
                f"learned positional embedding nn.Embedding({max_len}, {D}) over "
                f"positions 0..seq-1 added to token embeddings, "
                f"{'dynamic' if dynamic else 'static'} seq",
                "tok(ids) + pos(torch.arange(seq))", m,
                'x = embedding(ids, weight = "tok.weight")\n'
                'y = x + positional_encoding(x, kind = "learned", weight = "pos.weight")',
                [("ids", ids, ["batch", "seq"] if B else ["seq"])], ["y"],
                dynamic=dynamic)


# ----------------------------------------------------------------------------
# scaled dot-product attention
# ----------------------------------------------------------------------------


def cross_check_sdpa(name, q, k, v, mask, is_causal, scale, ref):
    """The reference against numpy, and against PyTorch 1.13's own
    F._scaled_dot_product_attention where it applies."""
    mine = sdpa_numpy(q, k, v, mask, is_causal, scale)
    ok = np.isnan(ref) == np.isnan(mine)
    assert ok.all() and np.allclose(np.nan_to_num(mine), np.nan_to_num(ref),
                                     rtol=1e-9, atol=1e-12), name
    if scale is None and (mask is None or mask.dtype == bool):
        tq, tk, tv = (torch.from_numpy(a.astype(np.float64)) for a in (q, k, v))
        tm = None if mask is None else torch.from_numpy(mask)
        if tm is not None:
            tm = tm.expand(*ref.shape[:-1], k.shape[-2])
        out, _ = F._scaled_dot_product_attention(tq, tk, tv, tm, 0.0, False, is_causal)
        out = out.numpy()
        assert np.array_equal(np.isnan(out), np.isnan(ref)), name
        assert np.allclose(np.nan_to_num(out), np.nan_to_num(ref), rtol=1e-9,
                           atol=1e-12), name


def sdpa_fixture(name, covers, q, k, v, qdims, kdims, vdims, mask=None, mdims=None,
                 is_causal=False, scale=None, dynamic=True, zero_nan_rows=False,
                 note=None):
    m = SdpaFunction(is_causal, scale)
    args = "q, k, v"
    call = "F.scaled_dot_product_attention(q, k, v"
    inputs = [("q", q, qdims), ("k", k, kdims), ("v", v, vdims)]
    if mask is not None:
        args += ", attn_mask = mask"
        call += ", attn_mask=mask"
        inputs.append(("mask", mask, mdims))
    if is_causal:
        args += ", is_causal = true"
        call += ", is_causal=True"
    if scale is not None:
        args += f", scale = {fmt_number(scale)}"
        call += f", scale={fmt_number(scale)}"
    with torch.no_grad():
        ref = sdpa_reference(*(torch.from_numpy(a.astype(np.float64)) for a in (q, k, v)),
                             attn_mask=None if mask is None else torch.from_numpy(
                                 mask if mask.dtype == bool else mask.astype(np.float64)),
                             is_causal=is_causal, scale=scale).numpy()
    cross_check_sdpa(name, q, k, v, mask, is_causal, scale, ref)
    Fixture(name, "sdpa_" + covers.split(":")[0], covers.split(": ", 1)[1],
            call + ")", m, f"y = sdpa({args})", inputs, ["y"], dynamic=dynamic,
            zero_nan_rows=zero_nan_rows, note=note)


def sdpa_fixtures():
    # d_q = d_k != d_v, no mask; rank 4 and rank 3
    for (B, H, Sq, Sk, D, Dv, dynamic) in [(2, 2, 5, 7, 8, 4, True),
                                           (1, 1, 1, 5, 8, 12, False),
                                           (3, None, 17, 17, 4, 6, True)]:
        name = "sdpa_plain_" + shape_tag(b=B, **({"h": H} if H else {}), q=Sq, k=Sk, d=D, v=Dv)
        rng = rng_for(name)
        lead = (B, H) if H else (B,)
        ldims = ["batch", H] if H else ["batch"]
        sdpa_fixture(name, f"plain: no mask, d_q = d_k = {D}, d_v = {Dv}",
                     randn(rng, *lead, Sq, D), randn(rng, *lead, Sk, D), randn(rng, *lead, Sk, Dv),
                     ldims + ["sq", D], ldims + ["sk", D], ldims + ["sk", Dv], dynamic=dynamic)

    # boolean masks, True = takes part, broadcast in several ways
    for (B, H, Sq, Sk, D, Dv, mshape, dynamic) in [
            (2, 2, 5, 7, 8, 8, "sq_sk", True),
            (2, 2, 5, 5, 8, 4, "full", False),
            (3, 4, 1, 9, 4, 4, "b1", True),
            (2, None, 17, 6, 8, 6, "full", True)]:
        name = "sdpa_bool_mask_" + shape_tag(b=B, **({"h": H} if H else {}), q=Sq, k=Sk, d=D,
                                              v=Dv) + "_" + mshape
        rng = rng_for(name)
        lead = (B, H) if H else (B,)
        ldims = ["batch", H] if H else ["batch"]
        if mshape == "sq_sk":
            mdims_shape, mdims = (Sq, Sk), ["sq", "sk"]
        elif mshape == "b1":
            mdims_shape, mdims = (B, 1, Sq, Sk), ["batch", 1, "sq", "sk"]
        else:
            mdims_shape, mdims = lead + (Sq, Sk), ldims + ["sq", "sk"]
        sdpa_fixture(name, f"bool_mask: boolean attn_mask (True = takes part) shaped "
                     f"{list(mdims_shape)}",
                     randn(rng, *lead, Sq, D), randn(rng, *lead, Sk, D), randn(rng, *lead, Sk, Dv),
                     ldims + ["sq", D], ldims + ["sk", D], ldims + ["sk", Dv],
                     mask=bool_take_part(rng, mdims_shape), mdims=mdims, dynamic=dynamic)

    # additive float masks (with -inf entries)
    for (B, H, Sq, Sk, D, Dv, full, dynamic) in [(2, 2, 5, 7, 8, 4, False, True),
                                                 (1, 4, 17, 3, 4, 4, True, False),
                                                 (3, None, 1, 6, 8, 8, True, True)]:
        name = "sdpa_float_mask_" + shape_tag(b=B, **({"h": H} if H else {}), q=Sq, k=Sk, d=D,
                                               v=Dv)
        rng = rng_for(name)
        lead = (B, H) if H else (B,)
        ldims = ["batch", H] if H else ["batch"]
        mshape = lead + (Sq, Sk) if full else (Sq, Sk)
        mdims = ldims + ["sq", "sk"] if full else ["sq", "sk"]
        sdpa_fixture(name, f"float_mask: additive float attn_mask shaped {list(mshape)} "
                     "(values in [-2, 2) and -inf)",
                     randn(rng, *lead, Sq, D), randn(rng, *lead, Sk, D), randn(rng, *lead, Sk, Dv),
                     ldims + ["sq", D], ldims + ["sk", D], ldims + ["sk", Dv],
                     mask=float_mask(rng, mshape), mdims=mdims, dynamic=dynamic)

    # is_causal: Sq == Sk, Sq < Sk, Sq > Sk (top-left aligned)
    for (B, H, Sq, Sk, D, Dv, dynamic) in [(2, 2, 5, 5, 8, 8, True),
                                           (1, 4, 17, 17, 4, 6, False),
                                           (2, 2, 3, 7, 8, 4, True),
                                           (1, 2, 7, 3, 8, 8, True),
                                           (3, None, 1, 1, 4, 4, False)]:
        kind = "square" if Sq == Sk else "rect"
        name = f"sdpa_causal_{kind}_" + shape_tag(b=B, **({"h": H} if H else {}), q=Sq, k=Sk,
                                                  d=D, v=Dv)
        rng = rng_for(name)
        lead = (B, H) if H else (B,)
        ldims = ["batch", H] if H else ["batch"]
        same = Sq == Sk
        sdims = "seq" if same else "sq"
        kdims = "seq" if same else "sk"
        sdpa_fixture(name, f"causal_{kind}: is_causal=True, Sq {Sq} "
                     f"{'==' if same else '<' if Sq < Sk else '>'} Sk {Sk} "
                     "(key j > query i masked, top-left aligned)",
                     randn(rng, *lead, Sq, D), randn(rng, *lead, Sk, D), randn(rng, *lead, Sk, Dv),
                     ldims + [sdims, D], ldims + [kdims, D], ldims + [kdims, Dv],
                     is_causal=True, dynamic=dynamic)

    # custom scale, alone and with a mask or is_causal
    for (B, H, Sq, Sk, D, Dv, scale, extra, dynamic) in [
            (2, 2, 5, 7, 8, 4, 0.3, None, True),
            (1, 2, 5, 9, 8, 8, 1.0, "bool", False),
            (2, 1, 6, 6, 4, 4, 0.125, "causal", True),
            (2, None, 3, 4, 12, 8, 2.5, "float", True)]:
        name = "sdpa_scale_" + shape_tag(b=B, **({"h": H} if H else {}), q=Sq, k=Sk, d=D, v=Dv) \
            + "_s" + str(scale).replace(".", "p") + (f"_{extra}" if extra else "")
        rng = rng_for(name)
        lead = (B, H) if H else (B,)
        ldims = ["batch", H] if H else ["batch"]
        mask = None
        causal = extra == "causal"
        qn, kn = ("seq", "seq") if causal else ("sq", "sk")
        if extra == "bool":
            mask = bool_take_part(rng, (Sq, Sk))
        elif extra == "float":
            mask = float_mask(rng, (Sq, Sk))
        sdpa_fixture(name, f"scale: custom scale={scale}"
                     + (f" with a {extra} mask" if extra in ("bool", "float") else "")
                     + (" with is_causal" if causal else ""),
                     randn(rng, *lead, Sq, D), randn(rng, *lead, Sk, D), randn(rng, *lead, Sk, Dv),
                     ldims + [qn, D], ldims + [kn, D], ldims + [kn, Dv],
                     mask=mask, mdims=[qn, kn], is_causal=causal, scale=scale,
                     dynamic=dynamic)

    # the one fixture with fully masked query rows
    B, H, Sq, Sk, D, Dv = 2, 2, 5, 7, 8, 4
    name = "sdpa_fully_masked_rows_" + shape_tag(b=B, h=H, q=Sq, k=Sk, d=D, v=Dv)
    rng = rng_for(name)
    mask = bool_take_part(rng, (B, 1, Sq, Sk))
    mask[0, 0, 1, :] = False
    mask[1, 0, 3, :] = False
    mask[1, 0, 4, :] = False
    sdpa_fixture(name, "fully_masked_rows: boolean mask [batch, 1, sq, sk] with query rows "
                 "that no key may attend: expected 0 there (tfm's rule)",
                 randn(rng, B, H, Sq, D), randn(rng, B, H, Sk, D), randn(rng, B, H, Sk, Dv),
                 ["batch", H, "sq", D], ["batch", H, "sk", D], ["batch", H, "sk", Dv],
                 mask=mask, mdims=["batch", 1, "sq", "sk"], dynamic=True, zero_nan_rows=True,
                 note="Rows (batch 0, query 1) and (batch 1, queries 3 and 4) have every key "
                      "masked. PyTorch's math path gives NaN there (softmax of all -inf); "
                      "tfm gives 0 by design, and so does y.npy. Every other element is "
                      "PyTorch's value.")


# ----------------------------------------------------------------------------
# nn.MultiheadAttention
# ----------------------------------------------------------------------------


def mha_call(weights, H, bias, batch_first, extra=""):
    s = f'heads = {H}, weights = "{weights}"'
    if not bias:
        s += ", bias = false"
    s += f", batch_first = {'true' if batch_first else 'false'}"
    return s + extra


def mha_fixture(name, group, covers, E, H, B, Sq, Sk=None, *, bias=True, batch_first=True,
                kdim=None, vdim=None, cross=False, kpm=None, attn_mask=None,
                need_weights=False, average=True, unbatched=False, bare=False,
                dynamic=True, fast_path_check=True, note=None, kpm_trailing=True):
    rng = rng_for(name)
    m = MHAModel(E, H, bias=bias, batch_first=batch_first, kdim=kdim, vdim=vdim, bare=bare)
    randomize_parameters(m, rng)
    Sk = Sk or Sq
    kd, vd = kdim or E, vdim or E
    separate = cross or kdim or vdim
    qn = "sq" if separate else "seq"
    kn = "sk" if separate else "seq"

    def lay(S, n, feat):
        if unbatched:
            return (S, feat), [n, feat]
        if batch_first:
            return (B, S, feat), ["batch", n, feat]
        return (S, B, feat), [n, "batch", feat]

    qs, qdims = lay(Sq, qn, E)
    inputs = []
    ctor = f"nn.MultiheadAttention({E}, {H}"
    if not bias:
        ctor += ", bias=False"
    if kdim:
        ctor += f", kdim={kdim}, vdim={vdim}"
    ctor += f", batch_first={batch_first})"
    if separate:
        ks, kdims = lay(Sk, kn, kd)
        vs, vdims = lay(Sk, kn, vd)
        inputs = [("query", randn(rng, *qs), qdims), ("key", randn(rng, *ks), kdims),
                  ("value", randn(rng, *vs), vdims)]
        args = "query, key, value"
    else:
        inputs = [("x", randn(rng, *qs), qdims)]
        args = "x, x, x"
    extra = ""
    kw = ""
    if kpm is not None:
        kshape = (Sk,) if unbatched else (B, Sk)
        kdims_ = [kn] if unbatched else ["batch", kn]
        if kpm == "bool":
            mask = padding_mask(rng, 1 if unbatched else B, Sk,
                                trailing=kpm_trailing).reshape(kshape)
        else:  # float, added
            mask = float_mask(rng, kshape)
        inputs.append(("key_padding_mask", mask, kdims_))
        extra += ", key_padding_mask = key_padding_mask"
        kw += ", key_padding_mask=key_padding_mask"
    if attn_mask is not None:
        kind, rank = attn_mask
        if rank == 2:
            ashape, adims = (Sq, Sk), [qn, kn]
        else:
            ashape, adims = (B * H, Sq, Sk), [B * H, qn, kn]
        if kind == "bool":
            allowed = bool_take_part(rng, ashape, p=0.7)
            mask = ~allowed  # nn.MultiheadAttention: True = masked
        elif kind == "causal":
            mask = causal_float_mask(Sq)
        else:
            mask = float_mask(rng, ashape)
        if kpm == "bool":
            unmask_empty_rows(mask, inputs[-1][1], 1 if unbatched else B, H)
        inputs.append(("attn_mask", mask, adims))
        extra += ", attn_mask = attn_mask"
        kw += ", attn_mask=attn_mask"
    outputs = ["y"]
    lhs = "y"
    if need_weights:
        extra += ", need_weights = true"
        kw += ", need_weights=True"
        if not average:
            extra += ", average_attn_weights = false"
            kw += ", average_attn_weights=False"
        outputs = ["y", "w"]
        lhs = "y, w"
    else:
        kw += ", need_weights=False"
    prefix = "" if bare else "attn"
    body = f"{lhs} = multi_head_attention({args}, {mha_call(prefix, H, bias, batch_first, extra)})"

    class Bound(nn.Module):
        """Maps input names to MHAModel's arguments."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, **t):
            q = t.get("x", t.get("query"))
            return self.inner(q, t.get("key"), t.get("value"),
                              key_padding_mask=t.get("key_padding_mask"),
                              attn_mask=t.get("attn_mask"), need_weights=need_weights,
                              average_attn_weights=average)

    # the weights are MHAModel's state_dict: attn.* (or, bare, no prefix)
    return Fixture(name, group, covers, f"{ctor}({args}{kw})", Bound(m), body, inputs,
                   outputs, dynamic=dynamic, fast_path_check=fast_path_check, note=note,
                   state_module=m.bare if bare else m)


def mha_fixtures():
    # packed in_proj, self-attention, batch_first=True
    for (E, H, B, S, dyn) in [(8, 2, 2, 5, True), (12, 4, 1, 17, False), (8, 1, 3, 1, True)]:
        mha_fixture("mha_self_" + shape_tag(e=E, h=H, b=B, s=S), "mha_self",
                    "self-attention, packed in_proj_weight/in_proj_bias, batch_first=True",
                    E, H, B, S, dynamic=dyn)
    # no bias
    for (E, H, B, S) in [(8, 2, 2, 5), (12, 3, 2, 7)]:
        mha_fixture("mha_nobias_" + shape_tag(e=E, h=H, b=B, s=S), "mha_nobias",
                    "bias=False (no in_proj_bias, no out_proj.bias)", E, H, B, S, bias=False)
    # batch_first=False: [seq, batch, E]
    for (E, H, B, S, dyn) in [(8, 2, 2, 5, True), (12, 4, 1, 17, False), (8, 2, 3, 1, True)]:
        mha_fixture("mha_seq_first_" + shape_tag(e=E, h=H, b=B, s=S), "mha_seq_first",
                    "batch_first=False: inputs and output [seq, batch, E]", E, H, B, S,
                    batch_first=False, dynamic=dyn)
    # cross-attention, different query and key/value lengths, distinct key and value
    for (E, H, B, Sq, Sk, bf) in [(8, 2, 2, 5, 7, True), (12, 4, 1, 17, 3, True),
                                  (8, 2, 3, 1, 5, False)]:
        mha_fixture("mha_cross_" + shape_tag(e=E, h=H, b=B, q=Sq, k=Sk) + ("" if bf else "_seqfirst"),
                    "mha_cross", f"cross-attention, query length {Sq} vs key/value length {Sk}, "
                    f"batch_first={bf}", E, H, B, Sq, Sk, cross=True, batch_first=bf)
    # kdim / vdim: separate q_proj_weight/k_proj_weight/v_proj_weight
    for (E, H, B, Sq, Sk, kd, vd, bias, bf) in [(8, 2, 2, 5, 7, 6, 10, True, True),
                                                (12, 3, 1, 3, 4, 5, 7, False, True),
                                                (8, 4, 2, 4, 6, 3, 9, True, False)]:
        mha_fixture("mha_kdim_vdim_" + shape_tag(e=E, h=H, b=B, q=Sq, k=Sk, kd=kd, vd=vd)
                    + ("" if bias else "_nobias") + ("" if bf else "_seqfirst"),
                    "mha_kdim_vdim", f"kdim={kd}, vdim={vd}: q_proj_weight, k_proj_weight, "
                    f"v_proj_weight, bias={bias}, batch_first={bf}",
                    E, H, B, Sq, Sk, kdim=kd, vdim=vd, bias=bias, batch_first=bf)
    # key_padding_mask
    for (E, H, B, Sq, Sk, cross, bf) in [(8, 2, 3, 5, 5, False, True),
                                         (12, 4, 2, 4, 9, True, True),
                                         (8, 2, 2, 6, 6, False, False)]:
        mha_fixture("mha_kpm_bool_" + shape_tag(e=E, h=H, b=B, q=Sq, k=Sk)
                    + ("" if bf else "_seqfirst"), "mha_key_padding_mask",
                    "key_padding_mask bool [batch, sk] (True = ignore the key)"
                    + (", cross-attention, padding at random positions" if cross else "")
                    + f", batch_first={bf}",
                    E, H, B, Sq, Sk, cross=cross, kpm="bool", batch_first=bf,
                    kpm_trailing=not cross)
    mha_fixture("mha_kpm_float_" + shape_tag(e=8, h=2, b=2, q=5, k=5), "mha_key_padding_mask",
                "key_padding_mask float [batch, sk], added to the scores", 8, 2, 2, 5,
                kpm="float", fast_path_check=False,
                note="PyTorch 1.13's fused fast path converts a float key_padding_mask to "
                     "bool; its math path (and PyTorch 2.x) adds it. The expected output is "
                     "the math path's.")
    # attn_mask 2-D and 3-D, bool (True = masked) and float (added)
    for kind in ("bool", "float"):
        for rank in (2, 3):
            for (E, H, B, Sq, Sk, cross) in [(8, 2, 2, 5, 5, False), (12, 4, 1, 3, 6, True)]:
                mha_fixture(f"mha_attn_mask_{rank}d_{kind}_" + shape_tag(e=E, h=H, b=B, q=Sq, k=Sk),
                            f"mha_attn_mask_{rank}d_{kind}",
                            f"attn_mask {kind} {'[sq, sk]' if rank == 2 else '[batch*heads, sq, sk]'} "
                            + ("(True = NOT allowed to attend)" if kind == "bool" else "(added)")
                            + (", cross-attention" if cross else ""),
                            E, H, B, Sq, Sk, cross=cross, attn_mask=(kind, rank),
                            dynamic=rank == 2)
    # both masks
    mha_fixture("mha_masks_causal_kpm_" + shape_tag(e=8, h=2, b=3, s=6), "mha_masks_combined",
                "float causal attn_mask (generate_square_subsequent_mask) with a bool "
                "key_padding_mask", 8, 2, 3, 6, kpm="bool", attn_mask=("causal", 2))
    mha_fixture("mha_masks_bool3d_kpm_" + shape_tag(e=12, h=3, b=2, q=4, k=7), "mha_masks_combined",
                "bool 3-D attn_mask with a bool key_padding_mask, cross-attention",
                12, 3, 2, 4, 7, cross=True, kpm="bool", attn_mask=("bool", 3), dynamic=False)
    # need_weights
    for avg in (True, False):
        label = "avg" if avg else "per_head"
        what = ("need_weights, average_attn_weights=True: w [batch, sq, sk]" if avg else
                "need_weights, average_attn_weights=False: w [batch, heads, sq, sk]")
        mha_fixture(f"mha_weights_{label}_self_" + shape_tag(e=8, h=2, b=2, s=5),
                    f"mha_need_weights_{label}", what + ", self-attention", 8, 2, 2, 5,
                    need_weights=True, average=avg)
        mha_fixture(f"mha_weights_{label}_cross_kpm_" + shape_tag(e=12, h=4, b=2, q=3, k=7),
                    f"mha_need_weights_{label}", what + ", cross-attention, key_padding_mask",
                    12, 4, 2, 3, 7, cross=True, kpm="bool", need_weights=True, average=avg)
        mha_fixture(f"mha_weights_{label}_seqfirst_mask_" + shape_tag(e=8, h=4, b=3, s=4),
                    f"mha_need_weights_{label}", what + ", batch_first=False, float attn_mask",
                    8, 4, 3, 4, batch_first=False, attn_mask=("float", 2), need_weights=True,
                    average=avg)
    # unbatched [seq, E]
    mha_fixture("mha_unbatched_self_" + shape_tag(e=8, h=2, s=5), "mha_unbatched",
                "unbatched [seq, E] self-attention", 8, 2, 1, 5, unbatched=True)
    mha_fixture("mha_unbatched_cross_mask_" + shape_tag(e=12, h=4, q=3, k=6), "mha_unbatched",
                "unbatched cross-attention with a bool [sq, sk] attn_mask", 12, 4, 1, 3, 6,
                cross=True, unbatched=True, attn_mask=("bool", 2))
    mha_fixture("mha_unbatched_weights_avg_" + shape_tag(e=8, h=2, q=4, k=5), "mha_unbatched",
                "unbatched, need_weights averaged: w [sq, sk]", 8, 2, 1, 4, 5, cross=True,
                unbatched=True, need_weights=True)
    mha_fixture("mha_unbatched_weights_per_head_kpm_" + shape_tag(e=8, h=2, s=6), "mha_unbatched",
                "unbatched, need_weights per head: w [heads, sq, sk], key_padding_mask [sk]",
                8, 2, 1, 6, unbatched=True, kpm="bool", need_weights=True, average=False)
    # a bare nn.MultiheadAttention: state_dict names without prefix
    mha_fixture("mha_no_prefix_" + shape_tag(e=8, h=2, b=2, s=5), "mha_no_prefix",
                'a bare nn.MultiheadAttention: weights = "" (in_proj_weight, out_proj.weight, ...)',
                8, 2, 2, 5, bare=True)


# ----------------------------------------------------------------------------
# LayerNorm, feed-forward, residual
# ----------------------------------------------------------------------------


def layer_fixtures():
    for (shape, affine, eps, dims) in [((2, 5, 8), True, 1e-5, ["batch", "seq", 8]),
                                       ((17, 12), True, 1e-5, [17, 12]),
                                       ((3, 1, 8), True, 1e-6, ["batch", "seq", 8]),
                                       ((2, 5, 8), False, 1e-5, ["batch", "seq", 8]),
                                       ((1, 12), False, 1e-5, ["seq", 12])]:
        D = shape[-1]
        name = f"layernorm_{'affine' if affine else 'plain'}_" + "x".join(map(str, shape)) + \
            ("" if eps == 1e-5 else "_eps1em6")
        rng = rng_for(name)
        m = LayerNormModel(D, affine=affine, eps=eps)
        randomize_parameters(m, rng)
        x = randn(rng, *shape) * 2 + 0.5
        args = 'weight = "norm.weight", bias = "norm.bias"' if affine else ""
        if eps != 1e-5:
            args += f", eps = {eps:g}"
        body = f"y = layer_norm(x{', ' + args if args else ''})"
        Fixture(name, "layernorm_affine" if affine else "layernorm_plain",
                f"nn.LayerNorm({D}, eps={eps:g}, elementwise_affine={affine}) over the last dim",
                f"nn.LayerNorm({D}, eps={eps:g}, elementwise_affine={affine})(x)", m, body,
                [("x", x, dims)], ["y"], dynamic=True)
    # eps large enough to matter: rows of small variance
    name = "layernorm_eps_small_variance_2x5x8"
    rng = rng_for(name)
    m = LayerNormModel(8, eps=1e-3)
    randomize_parameters(m, rng)
    x = randn(rng, 2, 5, 8) * 0.02
    Fixture(name, "layernorm_eps", "nn.LayerNorm(8, eps=1e-3) on rows of variance ~4e-4: eps "
            "changes the result", "nn.LayerNorm(8, eps=1e-3)(x)", m,
            'y = layer_norm(x, weight = "norm.weight", bias = "norm.bias", eps = 1e-3)',
            [("x", x, ["batch", "seq", 8])], ["y"])

    acts = {"relu": (nn.ReLU(), "relu(h)", "ReLU"),
            "gelu": (nn.GELU(), "gelu(h)", "GELU"),
            "gelu_tanh": (nn.GELU(approximate="tanh"), 'gelu(h, approximate = "tanh")',
                          "GELU(approximate='tanh')")}
    for act, shapes in [("relu", [((2, 5), 8, 16, True), ((17,), 12, 20, False),
                                  ((1, 1), 8, 32, True)]),
                        ("gelu", [((2, 5), 8, 16, True), ((3, 7), 12, 24, False)]),
                        ("gelu_tanh", [((2, 5), 8, 16, True), ((3, 7), 12, 24, False)])]:
        mod, expr, label = acts[act]
        for (lead, E, FF, residual) in shapes:
            name = f"ff_{act}_" + shape_tag(e=E, f=FF) + "_" + "x".join(map(str, lead)) + \
                ("_residual" if residual else "")
            rng = rng_for(name)
            m = FeedForwardModel(E, FF, copy.deepcopy(mod), residual=residual)
            randomize_parameters(m, rng)
            x = randn(rng, *lead, E)
            dims = (["batch", "seq"] if len(lead) == 2 else ["seq"]) + [E]
            body = ('h = linear(x, weight = "ff.0.weight", bias = "ff.0.bias")\n'
                    f"a = dropout({expr}, p = 0.1)\n"
                    'f = dropout(linear(a, weight = "ff.3.weight", bias = "ff.3.bias"), p = 0.1)\n'
                    + ("y = x + f" if residual else "y = f"))
            Fixture(name, "ff_" + act + ("_residual" if residual else ""),
                    f"Linear({E}, {FF}) -> {label} -> Dropout -> Linear({FF}, {E}) -> Dropout"
                    + (", plus the residual x + ff(x)" if residual else ""),
                    f"nn.Sequential(nn.Linear({E}, {FF}), nn.{label}, nn.Dropout(0.1), "
                    f"nn.Linear({FF}, {E}), nn.Dropout(0.1))(x)" + (" + x" if residual else ""),
                    m, body, [("x", x, dims)], ["y"], dynamic=True)


# ----------------------------------------------------------------------------
# nn.TransformerEncoderLayer
# ----------------------------------------------------------------------------


def encoder_fixture(name, group, E, H, FF, B, S, *, norm_first, activation, batch_first=True,
                    mask=None, kpm=False, eps=1e-5, dynamic=True):
    rng = rng_for(name)
    m = EncoderLayerModel(E, H, FF, norm_first, activation, batch_first=batch_first, eps=eps)
    randomize_parameters(m, rng)
    xs, xdims = ((B, S, E), ["batch", "seq", E]) if batch_first else \
        ((S, B, E), ["seq", "batch", E])
    inputs = [("x", randn(rng, *xs), xdims)]
    extra, kw, what = "", "", []
    if mask is not None:
        if mask == "causal":
            arr, dims = causal_float_mask(S), ["seq", "seq"]
            what.append("float causal src_mask")
        elif mask == "bool":
            arr, dims = ~bool_take_part(rng, (S, S), p=0.7), ["seq", "seq"]
            what.append("bool src_mask [seq, seq] (True = masked)")
        elif mask == "bool3d":
            arr, dims = ~bool_take_part(rng, (B * H, S, S), p=0.7), [B * H, "seq", "seq"]
            what.append("bool src_mask [batch*heads, seq, seq]")
        else:
            arr, dims = float_mask(rng, (S, S)), ["seq", "seq"]
            what.append("float src_mask [seq, seq]")
        inputs.append(("mask", arr, dims))
        extra += ", src_mask = mask"
        kw += ", src_mask=mask"
    if kpm:
        padding = padding_mask(rng, B, S)
        if mask is not None:
            unmask_empty_rows(inputs[1][1], padding, B, H)
        inputs.append(("padding", padding, ["batch", "seq"]))
        extra += ", src_key_padding_mask = padding"
        kw += ", src_key_padding_mask=padding"
        what.append("bool src_key_padding_mask")
    args = (f'heads = {H}, weights = "layer", norm_first = {str(norm_first).lower()}, '
            f'activation = "{activation}"')
    if eps != 1e-5:
        args += f", eps = {eps:g}"
    args += f", batch_first = {str(batch_first).lower()}"
    ctor = (f"nn.TransformerEncoderLayer({E}, {H}, dim_feedforward={FF}, "
            f"activation='{activation}', norm_first={norm_first}, batch_first={batch_first}"
            + (f", layer_norm_eps={eps:g}" if eps != 1e-5 else "") + ")")
    covers = (f"norm_first={norm_first}, activation={activation}, batch_first={batch_first}"
              + (f", eps={eps:g}" if eps != 1e-5 else "")
              + (", " + ", ".join(what) if what else ", no mask"))
    Fixture(name, group, covers, f"{ctor}(x{kw})", m,
            f"y = transformer_encoder_layer(x, {args}{extra})", inputs, ["y"],
            dynamic=dynamic)


def encoder_fixtures():
    cases = [
        # (norm_first, activation, E, H, FF, B, S, mask, kpm, batch_first, eps, dynamic)
        (False, "relu", 8, 2, 16, 2, 5, None, False, True, 1e-5, True),
        (False, "relu", 12, 4, 24, 1, 17, None, False, True, 1e-5, False),
        (False, "relu", 8, 1, 16, 3, 1, None, False, True, 1e-5, True),
        (False, "gelu", 8, 2, 16, 2, 5, None, False, True, 1e-5, True),
        (False, "gelu", 12, 3, 20, 2, 7, None, False, True, 1e-6, True),
        (True, "relu", 8, 2, 16, 2, 5, None, False, True, 1e-5, True),
        (True, "relu", 12, 4, 24, 1, 17, None, False, True, 1e-5, False),
        (True, "gelu", 8, 2, 16, 2, 5, None, False, True, 1e-5, True),
        (True, "gelu", 12, 2, 32, 3, 1, None, False, True, 1e-5, True),
        # masks
        (False, "relu", 8, 2, 16, 2, 5, "causal", False, True, 1e-5, True),
        (True, "gelu", 12, 4, 24, 1, 17, "causal", False, True, 1e-5, True),
        (False, "gelu", 8, 2, 16, 2, 6, "bool", False, True, 1e-5, True),
        (True, "relu", 8, 4, 16, 2, 5, "float", False, True, 1e-5, True),
        (False, "relu", 8, 2, 16, 2, 4, "bool3d", False, True, 1e-5, False),
        (False, "relu", 8, 2, 16, 3, 5, None, True, True, 1e-5, True),
        (True, "gelu", 12, 4, 24, 2, 7, None, True, True, 1e-5, True),
        (False, "gelu", 8, 2, 16, 3, 6, "causal", True, True, 1e-5, True),
        (True, "relu", 12, 3, 20, 2, 5, "bool", True, True, 1e-5, True),
        # batch_first=False
        (False, "relu", 8, 2, 16, 2, 5, None, False, False, 1e-5, True),
        (True, "gelu", 12, 4, 24, 3, 7, "causal", True, False, 1e-5, True),
    ]
    for (nf, act, E, H, FF, B, S, mask, kpm, bf, eps, dyn) in cases:
        parts = ["encoder", "pre" if nf else "post", act,
                 shape_tag(e=E, h=H, f=FF, b=B, s=S)]
        if mask:
            parts.append("mask_" + mask)
        if kpm:
            parts.append("kpm")
        if not bf:
            parts.append("seqfirst")
        if eps != 1e-5:
            parts.append("eps1em6")
        group = "encoder_" + ("pre" if nf else "post") + "_" + act
        encoder_fixture("_".join(parts), group, E, H, FF, B, S, norm_first=nf,
                        activation=act, batch_first=bf, mask=mask, kpm=kpm, eps=eps,
                        dynamic=dyn)

    # two stacked layers (nn.TransformerEncoder, layers.0 and layers.1)
    for nf in (False, True):
        name = f"encoder_stack2_{'pre' if nf else 'post'}_" + shape_tag(e=8, h=2, f=16, b=2, s=5)
        rng = rng_for(name)
        m = EncoderStackModel(8, 2, 16, 2, nf, "relu")
        randomize_parameters(m, rng)
        x = randn(rng, 2, 5, 8)
        args = f'heads = 2, norm_first = {str(nf).lower()}, activation = "relu", src_mask = mask'
        Fixture(name, "encoder_stack",
                f"nn.TransformerEncoder of 2 layers (norm_first={nf}) with a causal mask: "
                "encoder.layers.0.* and encoder.layers.1.*",
                f"nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, norm_first={nf}, "
                "batch_first=True), 2, enable_nested_tensor=False)(x, mask=mask)", m,
                f'h = transformer_encoder_layer(x, weights = "encoder.layers.0", {args})\n'
                f'y = transformer_encoder_layer(h, weights = "encoder.layers.1", {args})',
                [("x", x, ["batch", "seq", 8]), ("mask", causal_float_mask(5), ["seq", "seq"])],
                ["y"])

    # the same block written out by hand from its parts
    for nf in (False, True):
        name = f"encoder_block_manual_{'pre' if nf else 'post'}_" + \
            shape_tag(e=8, h=2, f=16, b=2, s=5)
        rng = rng_for(name)
        m = EncoderLayerModel(8, 2, 16, nf, "relu")
        randomize_parameters(m, rng)
        x = randn(rng, 2, 5, 8)
        kpm = padding_mask(rng, 2, 5)
        p = "layer."
        mha = (f'multi_head_attention({{0}}, {{0}}, {{0}}, heads = 2, weights = "{p}self_attn", '
               'batch_first = true, key_padding_mask = padding)')
        ff1 = (f'relu(linear({{0}}, weight = "{p}linear1.weight", '
               f'bias = "{p}linear1.bias"))')
        ff2 = (f'linear(dropout({{0}}, p = 0.1), weight = "{p}linear2.weight", '
               f'bias = "{p}linear2.bias")')
        n1 = f'layer_norm({{0}}, weight = "{p}norm1.weight", bias = "{p}norm1.bias", eps = 1e-5)'
        n2 = f'layer_norm({{0}}, weight = "{p}norm2.weight", bias = "{p}norm2.bias")'
        if nf:
            body = "\n".join([f"n = {n1.format('x')}",
                              f"a = {mha.format('n')}",
                              "h = x + dropout(a, p = 0.1)",
                              f"g = {n2.format('h')}",
                              f"r = {ff1.format('g')}",
                              f"f = {ff2.format('r')}",
                              "y = h + dropout(f, p = 0.1)"])
        else:
            body = "\n".join([f"a = {mha.format('x')}",
                              f"h = {n1.format('x + dropout(a, p = 0.1)')}",
                              f"r = {ff1.format('h')}",
                              f"f = {ff2.format('r')}",
                              f"y = {n2.format('h + dropout(f, p = 0.1)')}"])
        Fixture(name, "encoder_block_manual",
                f"an encoder block (norm_first={nf}) from layer_norm, multi_head_attention, "
                "linear, relu, dropout and residual adds, with nn.TransformerEncoderLayer's "
                "weight names and a key padding mask",
                f"nn.TransformerEncoderLayer(8, 2, 16, norm_first={nf}, batch_first=True)"
                "(x, src_key_padding_mask=padding)", m, body,
                [("x", x, ["batch", "seq", 8]), ("padding", kpm, ["batch", "seq"])], ["y"])


# ----------------------------------------------------------------------------
# the seed notebooks' layers at small shapes
# ----------------------------------------------------------------------------


def seed_fixtures():
    name = "seed000_self_attention_" + shape_tag(b=2, s=3, d=4)
    rng = rng_for(name)
    m = SelfAttention000(d_model=4, row_dim=1, col_dim=2)
    randomize_parameters(m, rng)
    Fixture(name, "seed000", "seed 000: nn.Linear q/k/v without bias, "
            "softmax(q k^T / sqrt(d)) v written out", "SelfAttention(d_model=4, row_dim=1, "
            "col_dim=2)(x)", m,
            'q = linear(x, weight = "W_q.weight")\n'
            'k = linear(x, weight = "W_k.weight")\n'
            'v = linear(x, weight = "W_v.weight")\n'
            'y = softmax(q @ transpose(k, 1, 2) / sqrt(4), dim = 2) @ v',
            [("x", randn(rng, 2, 3, 4), ["batch", "seq", 4])], ["y"])

    name = "seed001_embedding_attention_" + shape_tag(s=6, d=8, k=6, v=5)
    rng = rng_for(name)
    m = EmbeddingAttention001(vocab=6, d_in=8, d_k=6, d_v=5)
    randomize_parameters(m, rng)
    Fixture(name, "seed001", "seed 001: embedding, then attention with W.matmul(x.T).T "
            "weights, d_q = d_k = 6, d_v = 5", "Raschka's self-attention from scratch", m,
            'x = embedding(tokens, weight = "embed.weight")\n'
            'queries = linear(x, weight = "W_query")\n'
            'keys = linear(x, weight = "W_key")\n'
            'values = linear(x, weight = "W_value")\n'
            'attention_weights = softmax(queries @ transpose(keys) / sqrt(6), dim = -1)\n'
            'context = attention_weights @ values',
            [("tokens", rng.permutation(6).astype(np.int64), ["seq"])],
            ["context", "attention_weights"])

    name = "seed002_numpy_attention_" + shape_tag(s=4, i=5, d=3)
    rng = rng_for(name)
    m = NumpyAttention002(5, 3)
    randomize_parameters(m, rng)
    Fixture(name, "seed002", "seed 002: [in, out] weight matrices (x @ Wq), "
            "softmax(q k^T / sqrt(d_k)) v", "x @ Wq, x @ Wk, x @ Wv, softmax, @ v", m,
            'q = x @ weight("Wq")\nk = x @ weight("Wk")\nv = x @ weight("Wv")\n'
            'y = softmax(q @ transpose(k) / sqrt(3)) @ v',
            [("x", randn(rng, 4, 5), ["seq", 5])], ["y"])

    name = "seed003_concat_heads_" + shape_tag(s=5, i=6, d=4, h=3)
    rng = rng_for(name)
    m = MultiHead003(6, 4, 3)
    randomize_parameters(m, rng)
    heads = "\n".join(f'head{i} = sdpa(x @ weight("heads.{i}.wq"), x @ weight("heads.{i}.wk"), '
                      f'x @ weight("heads.{i}.wv"))' for i in range(3))
    Fixture(name, "seed003", "seed 003: per-head attention concatenated, then projected "
            "by `out` (multi-head attention by hand)", "torch.cat([head(x) ...], 1) @ out", m,
            heads + '\ny = concat(head0, head1, head2, dim = 1) @ weight("out")',
            [("x", randn(rng, 5, 6), ["seq", 6])], ["y"])

    for (E, H, B, Sq, Sk, cross) in [(8, 2, 2, 5, 5, False), (12, 4, 1, 3, 6, True)]:
        name = "seed004_multi_headed_" + shape_tag(e=E, h=H, b=B, q=Sq, k=Sk) + \
            ("_cross" if cross else "")
        rng = rng_for(name)
        m = MultiHeadedAttention004(H, E)
        randomize_parameters(m, rng)
        lin = ", ".join(f'{x}_weight = "linear_{x}.weight", {x}_bias = "linear_{x}.bias"'
                        for x in "qkv")
        args = "query, key, value" if cross else "x, x, x"
        body = (f"attn, attn_weights = multi_head_attention({args}, heads = {H}, {lin}, "
                'out_weight = "linear_concat.weight", out_bias = "linear_concat.bias", '
                "need_weights = true)")
        if cross:
            inputs = [("query", randn(rng, B, Sq, E), ["batch", "sq", E]),
                      ("key", randn(rng, B, Sk, E), ["batch", "sk", E]),
                      ("value", randn(rng, B, Sk, E), ["batch", "sk", E])]
        else:
            inputs = [("x", randn(rng, B, Sq, E), ["batch", "seq", E])]

        class Bound(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, **t):
                return self.inner(t.get("x", t.get("query")), t.get("key"), t.get("value"))

        Fixture(name, "seed004", "seed 004: MultiHeadedAttention with separate "
                "linear_q/k/v/concat, attention weights averaged over heads "
                "[batch, sq, sk]" + (", cross-attention" if cross else ""),
                f"MultiHeadedAttention({H}, {E})({args})", Bound(m), body, inputs,
                ["attn", "attn_weights"], state_module=m)


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------


def readme_table(entries):
    rows = ["| fixture | covers | inputs | outputs |", "|---|---|---|---|"]
    for e in entries:
        ins = ", ".join(f"`{i['name']}` {i['dtype']}{i['shape']}" for i in e["inputs"])
        outs = ", ".join(f"`{o['name']}` {o['shape']}" for o in e["outputs"])
        tol = ""
        if e["rtol"] != DEFAULT_RTOL or e["atol"] != DEFAULT_ATOL:
            tol = f" (rtol {e['rtol']:g}, atol {e['atol']:g})"
        rows.append(f"| `{e['name']}` | {e['covers']}{tol} | {ins} | {outs} |")
    return "\n".join(rows)


def write_readme(root, entries):
    path = os.path.join(root, "README.md")
    src = os.path.join(HERE, "README.md")
    text = open(src).read() if os.path.exists(src) else \
        "# Reference fixtures\n\n<!-- BEGIN FIXTURES -->\n<!-- END FIXTURES -->\n"
    begin, end = "<!-- BEGIN FIXTURES -->", "<!-- END FIXTURES -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    groups = {}
    for e in entries:
        groups.setdefault(e["group"], []).append(e)
    body = (f"\n{len(entries)} fixtures in {len(groups)} groups "
            "(generated by generate.py; tolerances are rtol "
            f"{DEFAULT_RTOL:g}, atol {DEFAULT_ATOL:g} unless shown).\n\n"
            + readme_table(entries) + "\n")
    with open(path, "w") as f:
        f.write(text[:i] + body + text[j:])


def build_all():
    embedding_fixtures()
    positional_fixtures()
    sdpa_fixtures()
    mha_fixtures()
    layer_fixtures()
    encoder_fixtures()
    seed_fixtures()
    names = [f.name for f in FIXTURES]
    assert len(set(names)) == len(names), "duplicate fixture names"


def generate(root):
    entries = [f.write(root) for f in FIXTURES]
    manifest = {
        "comment": "Generated by tests/reference/generate.py with PyTorch "
                   f"{torch.__version__.split('+')[0]}; do not edit by hand.",
        "default_rtol": DEFAULT_RTOL, "default_atol": DEFAULT_ATOL,
        "fixtures": entries}
    text = json.dumps(manifest, indent=1)
    # shapes on one line
    text = re.sub(r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
                  text)
    with open(os.path.join(root, "manifest.json"), "w") as fh:
        fh.write(text + "\n")
    write_readme(root, entries)
    return entries


def stale_folders(root, names):
    out = []
    for d in sorted(os.listdir(root)):
        p = os.path.join(root, d)
        if os.path.isdir(p) and d not in names and os.path.exists(os.path.join(p, "model.tfm")):
            out.append(p)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary folder and compare")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    build_all()
    names = {f.name for f in FIXTURES}
    if args.check:
        tmp = tempfile.mkdtemp(prefix="tfm-reference-")
        try:
            generate(tmp)
            bad = []
            for dirpath, _, files in os.walk(tmp):
                for fn in files:
                    rel = os.path.relpath(os.path.join(dirpath, fn), tmp)
                    mine = os.path.join(HERE, rel)
                    if not os.path.exists(mine) or not filecmp.cmp(
                            os.path.join(dirpath, fn), mine, shallow=False):
                        bad.append(rel)
            bad += [os.path.relpath(p, HERE) + "/ (stale)" for p in stale_folders(HERE, names)]
            if bad:
                print("differs from a fresh run:\n  " + "\n  ".join(sorted(bad)))
                return 1
            print(f"{len(FIXTURES)} fixtures: every file is byte-identical to a fresh run")
            return 0
        finally:
            shutil.rmtree(tmp)
    for p in stale_folders(HERE, names):
        shutil.rmtree(p)
    entries = generate(HERE)
    total = 0
    for dirpath, _, files in os.walk(HERE):
        if dirpath != HERE:
            total += sum(os.path.getsize(os.path.join(dirpath, fn)) for fn in files)
    print(f"wrote {len(entries)} fixtures, {total / 1024:.0f} KiB in their folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
