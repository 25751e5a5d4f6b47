"""torchvision models the zoo does not hold: real exports of other
architectures (hard-swish and squeeze-excite gates, GELU through Erf, layer
norm over channels-last activations).

Exports torchvision's model (10 classes, 96x96, opset 13, eval mode: the
inference export PyTorch users ship, with its Identity-tied parameters),
then
  - compiles `fastnnc --mode=infer` and compares infer.bin with ONNX Runtime
    and with the PyTorch module on a seeded batch (max relative error 1e-4,
    as test/zoo/check_infer_parity.py), and
  - compiles train.bin and trains 30 momentum-SGD steps on one fixed mock
    batch: every loss finite, the mean of the last 5 below 0.8 x the first
    (--learning-rate: what the architecture tolerates; ConvNeXt, made for
    AdamW, diverges at mobilenet's 0.05).
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime
import torch
import torchvision

from check_infer_parity import compare, run_infer
from check_overfit import overfit

IMAGE_SIZE = 96
BATCH = 4
STEPS = 30


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="torchvision name")
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    args = parser.parse_args()
    onnxruntime.set_default_logger_severity(3)

    torch.manual_seed(0)
    module = getattr(torchvision.models, args.model)(num_classes=10).eval()
    with tempfile.TemporaryDirectory(prefix=f"tv-{args.model}-") as tmp:
        tmp = Path(tmp)
        onnx_file = tmp / "model.onnx"
        images = np.random.RandomState(1).uniform(
            -1, 1, (BATCH, 3, IMAGE_SIZE, IMAGE_SIZE)).astype(np.float32)
        torch.onnx.export(module, torch.from_numpy(images), str(onnx_file),
                          input_names=["images"], output_names=["logits"],
                          opset_version=13, do_constant_folding=False)

        [ours] = run_infer(args.fastnnc, onnx_file, tmp, images, ["logits"],
                           BATCH)
        session = onnxruntime.InferenceSession(
            str(onnx_file), providers=["CPUExecutionProvider"])
        with torch.no_grad():
            against = {"onnxruntime": session.run(["logits"],
                                                  {"images": images})[0],
                       "pytorch": module(torch.from_numpy(images)).numpy()}
        if compare(args.model, "logits", ours, against):
            sys.exit("FAILED: infer.bin differs from its peers")
        overfit(args.model, args.fastnnc, onnx_file, tmp, STEPS,
                learning_rate=args.learning_rate, weight_decay=0, batch=BATCH)


if __name__ == "__main__":
    main()
