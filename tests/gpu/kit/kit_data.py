"""Data the GPU kit makes on both machines instead of shipping it: the bench
encoder's weights (the same float32 bits wherever they are made: integer
hashing, then one rounding) and the benchmarks' random inputs.

Imported by make_kit.py (here) and run_kit.py (on the GPU machine); needs
numpy only.
"""

import numpy as np

# An encoder layer of all-MiniLM-L6's size (heads of 64):
# nn.TransformerEncoderLayer(384, 6, 1536, activation="relu",
# batch_first=True), post-norm; its weights are 7 MB in f32 (the kit's
# size limit keeps bench/models' larger layers out).
ENCODER = {"E": 384, "H": 6, "F": 1536}


def uniform(name, shape):
    """Values in [-1, 1) from a hash of the tensor's name and each index:
    no random generator whose stream could change between numpy versions."""
    seed = np.uint64(sum((i + 1) * ord(c) for i, c in enumerate(name)))
    index = np.arange(int(np.prod(shape)), dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (index + seed * np.uint64(0x632BE59BD9B4E019)) * np.uint64(
            0x9E3779B97F4A7C15)
        x ^= x >> np.uint64(31)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(29)
    unit = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return (2 * unit - 1).reshape(shape)


def encoder_weights():
    """The layer's state_dict (PyTorch names), float32, at PyTorch's init
    scale (±1/sqrt(fan_in)); norms near 1, biases small."""
    E, F = ENCODER["E"], ENCODER["F"]
    shapes = {"self_attn.in_proj_weight": (3 * E, E),
              "self_attn.in_proj_bias": (3 * E,),
              "self_attn.out_proj.weight": (E, E),
              "self_attn.out_proj.bias": (E,),
              "linear1.weight": (F, E), "linear1.bias": (F,),
              "linear2.weight": (E, F), "linear2.bias": (E,),
              "norm1.weight": (E,), "norm1.bias": (E,),
              "norm2.weight": (E,), "norm2.bias": (E,)}
    weights = {}
    for name, shape in shapes.items():
        u = uniform(name, shape)
        if name.startswith("norm") and name.endswith("weight"):
            value = 1 + 0.1 * u
        elif len(shape) == 1:
            value = 0.1 * u
        else:
            value = u / np.sqrt(shape[1])
        weights[name] = value.astype(np.float32)
    return weights


def encoder_source():
    E, H, F = ENCODER["E"], ENCODER["H"], ENCODER["F"]
    return "\n".join([
        f"# nn.TransformerEncoderLayer({E}, {H}, {F}, activation='relu', "
        "batch_first=True), any sequence length",
        f"model encoder_e{E}",
        f"input x: f32[1, seq, {E}]",
        f'y = transformer_encoder_layer(x, heads = {H}, weights = "", '
        'activation = "relu", batch_first = true)',
        "output y", ""])


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape, np.float32)
