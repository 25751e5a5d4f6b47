"""One model of the exporter matrix (issue 21): a timm or torchvision
classifier as today's PyPI PyTorch exports it, end to end through fastnnc.

Builds the model with seeded random weights (10 classes; nothing is
downloaded), exports it with one of
  default-eval    torch.onnx.export's default (torch.export-based) exporter,
                  the module in eval mode (opset 20 or newer, as it writes);
  default-train   the same exporter, the module in train mode (batch norm on
                  batch statistics, with the running-statistic updates);
  legacy17-train  the TorchScript exporter (dynamo=False) at opset 17 with
                  training=TrainingMode.TRAINING,
then
  - compiles `fastnnc --mode=infer` and compares infer.bin with the module in
    eval mode on a seeded batch: max|fastnn - torch| / max|torch| at most
    1e-4 (test/zoo/check_infer_parity.py), and
  - compiles train.bin and trains 20 momentum-SGD steps on one fixed mock
    batch: every loss finite, the mean of the last 5 below 0.8 x the first
    (test/zoo/check_overfit.py), at a tenth of the model's rate where
    fastnnc warns that the exporter folded normalisation into the weights.
The module is first made like a trained one (as_if_trained).

Run by ctest (-C Long) with any Python: it re-executes itself with the
peer venv's (--venv, .venv-torch2 of scripts/install-peers.sh) and exits
with SKIP_CODE, one line saying why, where that venv or timm is missing.
"""
import argparse
import os
import sys
from pathlib import Path

SKIP_CODE = 77
STEPS = 20
BATCH = 2

# name -> (library, image size, learning rate, constructor arguments). The
# image sizes are the smallest each architecture's fixed structure allows
# (a patch grid, windows that tile every stage) within what keeps a CPU run
# short; the rates are what each trains at without diverging on one batch.
MODELS = {
    "vit_small_patch16_224": ("timm", 64, 0.01, {"img_size": 64}),
    "deit_tiny_patch16_224": ("timm", 64, 0.01, {"img_size": 64}),
    "convnext_atto": ("timm", 64, 0.01, {}),
    "efficientnet_b1": ("timm", 64, 0.05, {}),
    "regnetx_002": ("timm", 64, 0.05, {}),
    "mobilenetv3_large_100": ("timm", 64, 0.01, {}),
    "swin_tiny_patch4_window7_224": ("timm", 128, 0.01,
                                     {"img_size": 128, "window_size": 4}),
    "levit_128": ("timm", 128, 0.002, {"img_size": 128}),
    "resnet26d": ("timm", 64, 0.05, {}),
    "mixer_s16_224": ("timm", 64, 0.01, {"img_size": 64}),
    "res2net50_26w_4s": ("timm", 64, 0.05, {}),
    "nf_resnet26": ("timm", 64, 0.05, {}),
    "swin_t": ("torchvision", 64, 0.01, {}),
    "maxvit_t": ("torchvision", 224, 0.01, {}),
    "efficientnet_v2_s": ("torchvision", 64, 0.05, {}),
}
EXPORTERS = ("default-eval", "default-train", "legacy17-train")

# Where the exporter folded normalisation into the weights (fastnnc warns),
# the graph is a network without it, which diverges at the rate the
# normalised one takes: it trains at a tenth of the rate, and these two,
# which diverge even there (as PyTorch's own training of the folded
# function does, at 0.005 and 0.0005 unclipped), train as normaliser-free
# networks are trained, with the global gradient norm clipped:
# name -> (learning rate, max_gradient_norm).
FOLDED_TRAINING = {
    "resnet26d": (0.005, 1),
    "efficientnet_v2_s": (0.001, 1),
}


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP_CODE)


def in_venv(venv):
    """Re-executes this script with the venv's Python unless already there."""
    python = Path(venv) / "bin" / "python"
    if not python.exists():
        skip(f"{python} is missing (scripts/install-peers.sh installs it)")
    if Path(sys.prefix).resolve() != Path(venv).resolve():
        os.execv(str(python), [str(python), *sys.argv])


def build(name, seed=0):
    """The model with seeded random weights and stochastic depth off, so
    that the 20 steps on one batch train the same network under each
    exporter (a train-mode default export draws the dropped residual
    branches with RandomUniformLike, which fastnnc imports as random
    masks)."""
    import torch
    library, _, _, arguments = MODELS[name]
    torch.manual_seed(seed)
    if library == "timm":
        import timm
        module = timm.create_model(name, pretrained=False, num_classes=10,
                                   **arguments)
    else:
        import torchvision
        module = getattr(torchvision.models, name)(num_classes=10, **arguments)
    for layer in module.modules():
        if type(layer).__name__ == "DropPath":  # timm
            layer.drop_prob = 0.0
        elif type(layer).__name__ == "StochasticDepth":  # torchvision
            layer.p = 0.0
    as_if_trained(module, MODELS[name][1], seed)
    return module


def as_if_trained(module, size, seed):
    """Gives the fresh module what a trained one has, without data:
      - every constant parameter (zero biases, timm's zero-initialised
        classifier heads, batch-norm scales of one) seeded random values
        around its own, so that no output is trivially zero (infer.bin's
        comparison of an all-zero head would hold whatever fastnn computed);
      - batch-norm running statistics of its own activations (the average
        over 4 seeded random batches), so that a graph whose exporter folded
        them into the convolutions (the default exporter, in train mode too)
        is the normalised network, as a trained model's export is, and not
        one whose activations explode or vanish with depth."""
    import torch
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for parameter in module.parameters():
            if parameter.numel() > 1 and bool(
                    (parameter == parameter.reshape(-1)[0]).all()):
                value = abs(float(parameter.reshape(-1)[0]))
                scale = 0.1 * (value if value > 0 else 1.0)
                parameter += scale * (2 * torch.rand(
                    parameter.shape, generator=generator) - 1)
        norms = [layer for layer in module.modules()
                 if isinstance(layer, torch.nn.modules.batchnorm._BatchNorm)]
        momenta = [layer.momentum for layer in norms]
        for layer in norms:
            layer.reset_running_stats()
            layer.momentum = None  # a cumulative average
        module.train()
        for _ in range(4):
            module(2 * torch.rand((4, 3, size, size), generator=generator) - 1)
        for layer, momentum in zip(norms, momenta):
            layer.momentum = momentum
            layer.num_batches_tracked.zero_()
    module.eval()


def export(module, exporter, images, path):
    """Writes the ONNX file of `exporter`; the module is left in eval mode."""
    import torch
    names = {"input_names": ["images"], "output_names": ["logits"]}
    if exporter == "legacy17-train":
        torch.onnx.export(module.train(), (images,), str(path), dynamo=False,
                          opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, **names)
    else:
        module.train(exporter == "default-train")
        torch.onnx.export(module, (images,), str(path), **names)
    module.eval()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, choices=sorted(MODELS))
    parser.add_argument("--exporter", required=True, choices=EXPORTERS)
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--venv", required=True,
                        help="the peer venv with torch, torchvision and timm")
    parser.add_argument("--keep", help="a directory to keep the files in")
    args = parser.parse_args()
    in_venv(args.venv)
    try:
        import timm  # noqa: F401  (only its presence is checked here)
    except ImportError:
        skip(f"timm is not installed in {args.venv} (scripts/install-peers.sh)")

    import tempfile

    import numpy as np
    import torch
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "zoo"))
    from check_infer_parity import compare, import_warnings, run_infer
    from check_overfit import overfit

    _, size, learning_rate, _ = MODELS[args.model]
    module = build(args.model)
    images = np.random.RandomState(1).uniform(
        -1, 1, (BATCH, 3, size, size)).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix=f"export-{args.model}-") as tmp:
        tmp = Path(args.keep or tmp)
        tmp.mkdir(parents=True, exist_ok=True)
        onnx_file = tmp / "model.onnx"
        export(module, args.exporter, torch.from_numpy(images), onnx_file)
        # After the export: the legacy exporter's trace runs the train-mode
        # forward, which moves the batch-norm statistics it then writes.
        with torch.no_grad():
            expected = module(torch.from_numpy(images)).numpy()
        [ours] = run_infer(args.fastnnc, onnx_file, tmp, images, ["logits"],
                           BATCH)
        if compare(f"{args.model} ({args.exporter})", "logits", ours,
                   {"pytorch": expected}):
            sys.exit("FAILED: infer.bin differs from PyTorch")
        warnings = import_warnings(args.fastnnc, onnx_file, BATCH)
        max_gradient_norm = None
        if ("folded in by the exporter" in warnings or
                "computed from them by the exporter's optimizer" in warnings):
            learning_rate, max_gradient_norm = FOLDED_TRAINING.get(
                args.model, (learning_rate / 10, None))
            clipping = ("" if max_gradient_norm is None else
                        f", gradient norm clipped to {max_gradient_norm}")
            print(f"{args.model} ({args.exporter}): normalisation folded by "
                  f"the exporter, learning rate {learning_rate:g}{clipping}")
        overfit(f"{args.model} ({args.exporter})", args.fastnnc, onnx_file,
                tmp, STEPS, learning_rate=learning_rate, weight_decay=0,
                batch=BATCH, max_gradient_norm=max_gradient_norm)


if __name__ == "__main__":
    main()
