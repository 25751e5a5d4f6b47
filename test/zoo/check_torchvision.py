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
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime
import torch
import torchvision

from check_infer_parity import TOLERANCE, relative_error

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

        subprocess.run([args.fastnnc, str(onnx_file), "--mode=infer",
                        "-o", str(tmp / "infer.bin")], check=True)
        np.save(tmp / "images.npy", images)
        subprocess.run([str(tmp / "infer.bin"), "--input",
                        f"images={tmp / 'images.npy'}", "--output-dir",
                        str(tmp)], check=True, stdout=subprocess.DEVNULL)
        ours = np.load(tmp / "logits.npy")
        session = onnxruntime.InferenceSession(
            str(onnx_file), providers=["CPUExecutionProvider"])
        with torch.no_grad():
            peers = {"onnxruntime": session.run(["logits"],
                                                {"images": images})[0],
                     "pytorch": module(torch.from_numpy(images)).numpy()}
        failed = False
        for peer, expected in peers.items():
            error = relative_error(ours, expected)
            failed |= not error <= TOLERANCE
            print(f"{args.model} logits vs {peer}: relative error {error:.2e} "
                  f"{'ok' if error <= TOLERANCE else 'FAIL'}")

        hparams = tmp / "hp.txt"
        hparams.write_text(
            f"batch_size={BATCH}\nnum_classes=10\noptimizer=momentum\n"
            f"momentum=0.9\nlearning_rate={args.learning_rate}\n"
            "learning_rate_decay_type=fixed\nweight_decay=0\n"
            f"stop_at_step={STEPS}\nlog_loss_every_n_iters=1\n"
            "dataset_name=mock\nsave_checkpoints_steps=0\n"
            # One mock batch: the fixed batch the model must overfit.
            f"num_sample_per_epoch={BATCH}\nnum_epochs={STEPS}\n")
        subprocess.run([args.fastnnc, str(onnx_file), "-o",
                        str(tmp / "train.bin"), "--hparams", str(hparams)],
                       check=True, stderr=subprocess.DEVNULL)
        ran = subprocess.run([str(tmp / "train.bin"), "--hparams",
                              str(hparams), "--train_dir=" + str(tmp / "run")],
                             capture_output=True, text=True)
    if ran.returncode != 0:
        sys.exit(f"FAILED: train.bin: {ran.stderr.strip()}")
    losses = [float(m.group(1))
              for m in re.finditer(r"loss=([-+0-9.eEinfa]+)", ran.stdout)]
    if len(losses) != STEPS or not all(math.isfinite(x) for x in losses):
        sys.exit(f"FAILED: expected {STEPS} finite losses, got {losses}")
    tail = sum(losses[-5:]) / 5
    print(f"{args.model}: loss {losses[0]:.4f} at step 1, {tail:.4f} over the "
          f"last 5 of {STEPS} steps")
    failed |= tail >= 0.8 * losses[0]
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
