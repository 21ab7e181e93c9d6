"""The models every GPU check compiles: the seed notebooks' models and the
PyTorch reference fixtures (tests/reference), each with its weights."""

import json
import os


def example_models(source_dir):
    """(name, model.tfm, weights or None, fixture or None) for each model."""
    models = []
    seeds = os.path.join(source_dir, "examples", "seeds")
    for name in sorted(os.listdir(seeds)):
        model = os.path.join(seeds, name, "model.tfm")
        if os.path.isfile(model):
            weights = os.path.join(seeds, name, "weights.safetensors")
            models.append(("seed/" + name, model,
                           weights if os.path.isfile(weights) else None, None))
    reference = os.path.join(source_dir, "tests", "reference")
    with open(os.path.join(reference, "manifest.json")) as f:
        manifest = json.load(f)
    for fixture in manifest["fixtures"]:
        folder = os.path.join(reference, fixture["name"])
        weights = fixture.get("weights")
        models.append((fixture["name"], os.path.join(folder, fixture["model"]),
                       os.path.join(folder, weights) if weights else None,
                       dict(fixture, folder=folder,
                            default_rtol=manifest["default_rtol"],
                            default_atol=manifest["default_atol"])))
    return models
