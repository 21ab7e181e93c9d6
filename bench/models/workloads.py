"""The workloads of bench/models: what each one is, its FLOPs and its .tfm.

Importing this module does not import torch; `build_module` does.

A workload is a dict:
  name      directory name under the work dir, e.g. "enc512_s128"
  kind      "encoder" (nn.TransformerEncoderLayer / nn.TransformerEncoder),
            "linear" (nn.Linear) or "attention" (F.scaled_dot_product_attention)
  label     what the table shows in its first column
  input     shape of x (batch 1, batch_first), for encoders and linears
  inputs    {name: shape} of q, k and v, for attention (see input_shapes)
  flops     analytic FLOPs of one forward pass (see flops_* below)
  plus the kind's parameters (E, H, F, layers, S, activation / M, K, N /
  B, H, S, D, causal)
"""

# The linear sweep of the issue: M x K x N.
SWEEP_M = [1, 32, 128, 512]
SWEEP_KN = [384, 768, 1536, 3072]
# --quick: a small subset of it.
QUICK_LINEAR = [(1, 768, 768), (128, 768, 3072), (512, 3072, 768)]
# Attention alone, (batch, heads, seq, head dim), each causal and not.
ATTENTION_SHAPES = [(1, 8, 128, 64), (1, 8, 512, 64), (1, 12, 1024, 64), (1, 8, 2048, 64)]
QUICK_ATTENTION = [(1, 8, 512, 64)]
# Whole-model rows at decode-like sizes: a handful of tokens per call.
DECODE_SEQS = [1, 8]


def flops_encoder_layer(S, E, H, F, B=1):
    """One post-norm nn.TransformerEncoderLayer, batch B, sequence S.

    in_proj 2*S*E*3E, out_proj 2*S*E*E, linear1 + linear2 2 * 2*S*E*F,
    attention 4*B*H*S*S*D (Q K^T and P V, D = E / H); layer norms, softmax,
    bias adds and the activation are not counted.
    """
    D = E // H
    linears = 2 * B * S * (3 * E * E + E * E + 2 * E * F)
    attention = 4 * B * H * S * S * D
    return linears + attention


def encoder(name, label, S, E, H, F, layers, activation):
    return {
        "name": name, "kind": "encoder", "label": label, "S": S, "E": E,
        "H": H, "F": F, "layers": layers, "activation": activation,
        "input": [1, S, E],
        "flops": layers * flops_encoder_layer(S, E, H, F),
    }


def linear(M, K, N):
    return {
        "name": f"linear_m{M}_k{K}_n{N}", "kind": "linear",
        "label": f"linear M={M} K={K} N={N}", "M": M, "K": K, "N": N,
        "input": [1, M, K],
        "flops": 2 * M * K * N,  # the bias add is not counted
    }


def attention(B, H, S, D, causal):
    """F.scaled_dot_product_attention(q, k, v) on [B, H, S, D]. FLOPs are
    4·B·H·S²·D (Q·Kᵀ and P·V), halved when causal: the convention of
    FlashAttention's and PyTorch's benchmarks (the masked half is skipped)."""
    flops = 4 * B * H * S * S * D
    return {
        "name": f"sdpa_b{B}_h{H}_s{S}_d{D}" + ("_causal" if causal else ""), "kind": "attention",
        "label": f"attention ({B},{H},{S},{D})" + (" causal" if causal else ""),
        "B": B, "H": H, "S": S, "D": D, "causal": causal,
        "inputs": {n: [B, H, S, D] for n in ("q", "k", "v")},
        "flops": flops // 2 if causal else flops,
    }


def input_shapes(w):
    """{input name: shape}, in the order the module and the .tfm take them."""
    return w.get("inputs") or {"x": w["input"]}


def all_workloads(quick=False, only=None):
    """The workloads of a run; `only`: a list of substrings of names."""
    ws = [encoder("enc512_s128", "encoder layer E=512 S=128", 128, 512, 8, 2048, 1, "relu")]
    if quick:
        # a smoke test of the stacked-layer path (weight prefixes) that compiles in seconds
        ws.append(encoder("bert2_s128", "BERT-base, 2 of its 12 layers, S=128", 128, 768, 12,
                          3072, 2, "gelu"))
    else:
        ws += [
            encoder("enc512_s512", "encoder layer E=512 S=512", 512, 512, 8, 2048, 1, "relu"),
            encoder("bert12_s128", "BERT-base 12 layers S=128", 128, 768, 12, 3072, 12, "gelu"),
            encoder("bert12_s512", "BERT-base 12 layers S=512", 512, 768, 12, 3072, 12, "gelu"),
        ]
        ws += [encoder(f"enc512_s{s}", f"encoder layer E=512 S={s}", s, 512, 8, 2048, 1, "relu")
               for s in DECODE_SEQS]
    ws += [attention(*shape, causal) for shape in (QUICK_ATTENTION if quick else ATTENTION_SHAPES)
           for causal in (False, True)]
    shapes = QUICK_LINEAR if quick else [
        (m, k, n) for m in SWEEP_M for k in SWEEP_KN for n in SWEEP_KN]
    ws += [linear(*s) for s in shapes]
    if only:
        ws = [w for w in ws if any(o in w["name"] for o in only)]
    return ws


def tfm_source(w):
    """The .tfm model of a workload, reading PyTorch's state_dict names."""
    if w["kind"] == "attention":
        shape = ", ".join(str(d) for d in w["inputs"]["q"])
        return "\n".join([
            f"# bench/models: F.scaled_dot_product_attention on [{shape}]"
            + (", is_causal=True" if w["causal"] else ""),
            f"model {w['name']}",
            *[f"input {n}: f32[{shape}]" for n in w["inputs"]],
            f"y = sdpa(q, k, v, is_causal = {'true' if w['causal'] else 'false'})",
            "output y", ""])
    if w["kind"] == "linear":
        return "\n".join([
            f"# bench/models: nn.Linear({w['K']}, {w['N']}) on x [1, {w['M']}, {w['K']}]",
            f"model {w['name']}",
            f"input x: f32[1, {w['M']}, {w['K']}]",
            'y = linear(x, weight = "weight", bias = "bias")',
            "output y", ""])
    lines = [
        f"# bench/models: {w['label']}: {w['layers']} x nn.TransformerEncoderLayer("
        f"{w['E']}, {w['H']}, {w['F']}, activation='{w['activation']}', batch_first=True)",
        f"model {w['name']}",
        f"input x: f32[1, {w['S']}, {w['E']}]",
    ]
    prev = "x"
    for i in range(w["layers"]):
        # A single layer is the module itself (no prefix); a stack is an
        # nn.TransformerEncoder whose layers are "layers.<i>".
        prefix = "" if w["layers"] == 1 else f"layers.{i}"
        out = "y" if i == w["layers"] - 1 else f"h{i}"
        lines.append(
            f'{out} = transformer_encoder_layer({prev}, heads = {w["H"]}, weights = "{prefix}", '
            f'activation = "{w["activation"]}", batch_first = true)')
        prev = out
    lines += ["output y", ""]
    return "\n".join(lines)


def build_module(w, seed=0):
    """The torch module of a workload, in eval mode (dropout off)."""
    import torch
    from torch import nn
    torch.manual_seed(seed)
    if w["kind"] == "attention":
        class Attention(nn.Module):
            def forward(self, q, k, v):
                return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=w["causal"])
        return Attention().eval()
    if w["kind"] == "linear":
        m = nn.Linear(w["K"], w["N"])
    else:
        def layer():
            return nn.TransformerEncoderLayer(
                w["E"], w["H"], w["F"], dropout=0.0, activation=w["activation"],
                batch_first=True)
        if w["layers"] == 1:
            m = layer()
        else:
            m = nn.TransformerEncoder(layer(), w["layers"], enable_nested_tensor=False)
            # nn.TransformerEncoder deep-copies one layer; give each its own weights
            m.layers = nn.ModuleList([layer() for _ in range(w["layers"])])
    return m.eval()
