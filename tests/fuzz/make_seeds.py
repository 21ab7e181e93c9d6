#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/ from the repository's own
files: the example models (with their weights' shapes as `#!w` lines, which
the .tfm fuzzer reads as its weights table), small weights and .npy files,
artifact metadata, and the defect reproducers of issue 8 (cut to a few KB).
Run from the repository root (tests/fuzz/make_seeds.py [DEFECTS_DIR]) after changing the examples; regression inputs
that fuzzing found live in the same folders under names starting with
`regress-` and are kept."""
import glob, json, os, struct, sys

root = os.getcwd()
corpus = os.path.join(root, 'tests/fuzz/corpus')
MAX = 8 * 1024
# The reproducers of issue 8 (../shared/defects), when given.
defects = sys.argv[1] if len(sys.argv) > 1 else None


def short(path):
    if defects and path.startswith(defects):
        path = 'defect-' + path[len(defects):].strip('/')
    for prefix in ('examples/seeds/', 'tests/reference/'):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path.replace('/', '_')


def put(target, name, data):
    os.makedirs(os.path.join(corpus, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    if len(data) > MAX:
        return
    with open(os.path.join(corpus, target, name), 'wb') as f:
        f.write(data)


def safetensors_header(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        return json.loads(f.read(n))


def weight_lines(path):
    if not os.path.exists(path):
        return ''
    lines = []
    for name, entry in safetensors_header(path).items():
        if name == '__metadata__':
            continue
        dtype = {'F32': 'f32', 'F64': 'f64', 'I64': 'i64', 'I32': 'i32'}
        lines.append('#!w %s %s %s' % (name, dtype.get(entry['dtype'], 'f32'),
                                      ' '.join(str(d) for d in entry['shape'])))
    return '\n'.join(lines) + '\n'


# .tfm models: the examples, the lit tests' models and the reproducers.
models = sorted(glob.glob('examples/seeds/*/model.tfm'))
for i, model in enumerate(models):
    folder = os.path.dirname(model)
    text = open(model).read()
    put('tfm-fuzz-tfm', 'example-%s.tfm' % os.path.basename(folder),
        weight_lines(os.path.join(folder, 'weights.safetensors')) + text)
for path in sorted(glob.glob('tests/lit/tfm-compile/*.tfm')):
    text = ''.join(l for l in open(path) if not l.startswith('// RUN'))
    put('tfm-fuzz-tfm', 'lit-' + os.path.basename(path), text)
for path in sorted(glob.glob('%s/*/*.tfm' % defects) if defects else []):
    data = open(path, 'rb').read()[:4096]
    put('tfm-fuzz-tfm', short(path), data)

# .safetensors files: small weights, the reference fixtures, reproducers.
st = sorted(glob.glob('examples/seeds/*/weights.safetensors'))
st += sorted(glob.glob('tests/reference/*/weights.safetensors'))[:40]
st += sorted(glob.glob('%s/*/*.safetensors' % defects) if defects else [])
for path in st:
    put('tfm-fuzz-safetensors', short(path),
        open(path, 'rb').read())

# GGUF files: the reader's fixture (every type it dequantizes).
for path in sorted(glob.glob('tests/reference/gguf/*.gguf')):
    put('tfm-fuzz-gguf', short(path), open(path, 'rb').read())

# .npy files.
npy = sorted(glob.glob('examples/seeds/*/*.npy'))
npy += sorted(glob.glob('tests/reference/*/*.npy'))[:30]
npy += sorted(glob.glob('%s/*/*.npy' % defects) if defects else [])
for path in npy:
    put('tfm-fuzz-npy', short(path),
        open(path, 'rb').read())

# Metadata: what the hand-written test artifact and real compiles carry.
metadata = {
    'mask': {"abi": 1, "model": "mask", "entry": "tfm_mask_run_packed",
             "symbols": ["n"],
             "inputs": [{"name": "x", "dtype": "f32", "shape": ["n"]},
                        {"name": "m", "dtype": "bool", "shape": ["n"]}],
             "outputs": [{"name": "y", "dtype": "f32", "shape": ["n"]},
                         {"name": "any", "dtype": "bool", "shape": []}]},
    'errors': {"abi": 1, "model": "m", "entry": "e",
               "workspace_entry": "w", "workspace_size": "s",
               "symbols": ["batch", "seq"],
               "inputs": [{"name": "ids", "dtype": "i64",
                           "shape": ["batch", "seq"]}],
               "outputs": [{"name": "y", "dtype": "f32",
                            "shape": ["batch", "seq", 4]}],
               "errors": [{"code": 1, "message": "id out of range"},
                          {"code": 2, "message": "sequence too long"}]},
    'truncated-code': {"abi": 1, "model": "m", "entry": "e", "inputs": [],
                       "outputs": [], "errors": [
                           {"code": 4294967373, "message": "too wide"}]},
}
for name, value in metadata.items():
    put('tfm-fuzz-metadata', name + '.json', json.dumps(value))
put('tfm-fuzz-metadata', 'nested-abi.json', '{"abi":' + '[' * 200 +
    ']' * 200 + '}')
for path in sorted(glob.glob('tests/fuzz/metadata/*.json')):
    put('tfm-fuzz-metadata', os.path.basename(path), open(path).read())
