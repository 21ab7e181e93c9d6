"""The workloads of bench/models: what each one is, its FLOPs and its .tfm.

Importing this module does not import torch; `build_module` does.

A workload is a dict:
  name      directory name under the work dir, e.g. "enc512_s128"
  kind      "encoder" (nn.TransformerEncoderLayer / nn.TransformerEncoder),
            "linear" (nn.Linear), "attention" (F.scaled_dot_product_attention)
            or "hfbert" (transformers' BertModel, bert-base config, random
            weights; the low-precision peers run on these)
  label     what the table shows in its first column
  input     shape of x (batch 1, batch_first), for encoders and linears
  inputs    {name: shape} of q, k and v, for attention, and of input_ids,
            token_type_ids, attention_mask (int64) for hfbert (see
            input_shapes)
  output    the output tfm-run writes and every runtime is checked on ("y";
            hfbert: "last_hidden_state")
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


# transformers' BertConfig of bert-base-uncased (built in code: nothing is downloaded).
BERT_BASE = {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
             "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu",
             "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12}


def hf_bert(S, layers=12):
    """transformers' BertModel with bert-base's config (`layers` of its 12):
    input_ids [1, S] (random ids, fixed seed), token_type_ids zeros,
    attention_mask all ones; the output every runtime is checked on is
    last_hidden_state [1, S, 768]. The pooler stays in the checkpoint
    (CTranslate2's converter requires it) but only CTranslate2 computes it
    (one 768x768 product: 1.2 MFLOP). FLOPs as the encoder rows count them
    (embeddings, layer norms, softmax, GELU not counted)."""
    E, H, F = BERT_BASE["hidden_size"], BERT_BASE["num_attention_heads"], BERT_BASE["intermediate_size"]
    return {
        "name": f"hfbert{layers}_s{S}", "kind": "hfbert",
        "label": f"HF BertModel bert-base{'' if layers == 12 else f', {layers} of 12 layers'} S={S}",
        "S": S, "E": E, "H": H, "F": F, "layers": layers,
        "config": dict(BERT_BASE, num_hidden_layers=layers),
        "inputs": {n: [1, S] for n in ("input_ids", "token_type_ids", "attention_mask")},
        "output": "last_hidden_state",
        "flops": layers * flops_encoder_layer(S, E, H, F),
    }


def weights_file(w):
    """Where export.py writes the weights tfm-compile reads (relative to the workload's dir)."""
    return "hf/model.safetensors" if w["kind"] == "hfbert" else "weights.safetensors"


def output_name(w):
    return w.get("output", "y")


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
        # the low-precision peers and tfm rows on a BertModel that converts in seconds
        ws.append(hf_bert(128, layers=2))
    else:
        ws += [
            encoder("enc512_s512", "encoder layer E=512 S=512", 512, 512, 8, 2048, 1, "relu"),
            encoder("bert12_s128", "BERT-base 12 layers S=128", 128, 768, 12, 3072, 12, "gelu"),
            encoder("bert12_s512", "BERT-base 12 layers S=512", 512, 768, 12, 3072, 12, "gelu"),
            hf_bert(128), hf_bert(512),
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


def hf_bert_tfm(w):
    """examples/bert/bert.tfm (transformers' BertModel by its checkpoint's
    names) sized to the workload's config -- the example is written for a
    hidden size of 64 -- with last_hidden_state as the only output (what
    every runtime is compared on)."""
    c = w["config"]
    E, H, L = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
    D = E // H
    act = {"gelu": "gelu(x)", "relu": "relu(x)", "gelu_new": 'gelu(x, approximate = "tanh")'}[c["hidden_act"]]
    eps = c["layer_norm_eps"]
    return f"""# bench/models: {w['label']}: examples/bert/bert.tfm sized from the checkpoint's
# config.json (hidden {E}, {H} heads of {D}, {L} layers, eps {eps}, {c['hidden_act']}),
# last_hidden_state only.
model {w['name']}
input input_ids: i64[batch, seq]
input token_type_ids: i64[batch, seq]
input attention_mask: i64[batch, seq]

def dense(x, name):
    return linear(x, weight = name + ".weight", bias = name + ".bias")
end
def norm(x, name):
    return layer_norm(x, weight = name + ".weight", bias = name + ".bias", eps = {eps})
end
def act(x):
    return {act}
end
def heads(x):                                   # [batch, seq, {E}] -> [batch, {H}, seq, {D}]
    return permute(reshape(x, [batch, seq, {H}, {D}]), [0, 2, 1, 3])
end
def bert_layer(x, p, mask):                     # post-norm
    q = heads(dense(x, p + ".attention.self.query"))
    k = heads(dense(x, p + ".attention.self.key"))
    v = heads(dense(x, p + ".attention.self.value"))
    a = reshape(permute(softmax(q @ transpose(k) / sqrt({D}) + mask) @ v, [0, 2, 1, 3]), [batch, seq, {E}])
    h = norm(x + dense(a, p + ".attention.output.dense"), p + ".attention.output.LayerNorm")
    return norm(h + dense(act(dense(h, p + ".intermediate.dense")), p + ".output.dense"), p + ".output.LayerNorm")
end

tokens = embedding(input_ids, weight = "embeddings.word_embeddings.weight") \\
  + embedding(token_type_ids, weight = "embeddings.token_type_embeddings.weight")
e = tokens + positional_encoding(tokens, kind = "learned", weight = "embeddings.position_embeddings.weight")
mask = reshape(where(attention_mask == 0, -3.4028234663852886e38, 0), [batch, 1, 1, seq])
x = norm(e, "embeddings.LayerNorm")
for i in 0..{L}:
    x = bert_layer(x, "encoder.layer.{{i}}", mask)
end
last_hidden_state = x
output last_hidden_state
"""


def tfm_source(w):
    """The .tfm model of a workload, reading PyTorch's state_dict names."""
    if w["kind"] == "hfbert":
        return hf_bert_tfm(w)
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


def hf_bert_module(bert):
    """BertModel -> a module whose forward(input_ids, token_type_ids,
    attention_mask) returns last_hidden_state (what every runtime computes)."""
    from torch import nn

    class LastHiddenState(nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, token_type_ids, attention_mask):
            return self.bert(input_ids=input_ids, token_type_ids=token_type_ids,
                             attention_mask=attention_mask).last_hidden_state
    return LastHiddenState().eval()


def hf_bert_onnx_module(bert):
    """What the ONNX export of an hfbert workload traces: the BertModel's own
    embeddings and encoder, with the additive mask built as transformers 4
    built it (_prepare_4d_attention_mask: 0 where attended, float32's minimum
    elsewhere). Same modules, weights and result as hf_bert_module; but
    transformers 5's mask (And/Where over index arithmetic) and its `* scale`
    leave onnxruntime's BERT optimizer unable to fuse Attention, which this
    mask lets it do (with transformers' "eager" attention)."""
    import torch
    from torch import nn

    class LastHiddenStateForOnnx(nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, token_type_ids, attention_mask):
            b, n = attention_mask.shape
            inv = 1.0 - attention_mask[:, None, None, :].expand(b, 1, n, n).to(torch.float32)
            mask = inv.masked_fill(inv.to(torch.bool), torch.finfo(torch.float32).min)
            h = self.bert.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
            return self.bert.encoder(h, attention_mask=mask).last_hidden_state
    return LastHiddenStateForOnnx().eval()


def build_bert(w, seed=0, attn_implementation=None):
    """transformers' BertModel of an hfbert workload, random weights from `seed`."""
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(seed)
    kw = {"attn_implementation": attn_implementation} if attn_implementation else {}
    cfg = BertConfig(**w["config"], hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **kw)
    return BertModel(cfg).eval()


def build_module(w, seed=0):
    """The torch module of a workload, in eval mode (dropout off)."""
    import torch
    from torch import nn
    if w["kind"] == "hfbert":
        return hf_bert_module(build_bert(w, seed))
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
