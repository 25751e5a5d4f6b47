"""Every zoo model compiles to train.bin and learns (training-compiler issue).

Exports the model (10 classes; a small image where the architecture allows),
compiles train.bin, trains 50 steps on one fixed mock batch with momentum
SGD, and requires the loss to fall: the mean of the last 5 steps below
0.8 x the first step's loss, with every loss finite.

Without weight decay: the loss train.bin logs is the total, and in the deep
batch-normalised nets the L2 term grows (SGD lengthens weights that batch
norm makes scale-free) and outweighs the cross-entropy. PyTorch's own
training of the same module (seed 0, batch 4, momentum SGD at 0.005, L2
4e-5) takes resnet_v1_200's cross-entropy to 0.0001 while its total rises
from 6.1 to 429; train.bin's rose from 5.7 to 329 the same way.
"""
import argparse
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# Image sizes that keep each model's training step small on a CPU; alexnet_v2,
# the vggs and overfeat only accept their default size (their fully connected
# layers are convolutions).
IMAGE_SIZE = {"lenet": 28, "cifarnet": 32, "alexnet_v2": 224, "vgg_a": 224,
              "vgg_16": 224, "vgg_19": 224, "overfeat": 231,
              "inception_v1": 96, "inception_v2": 96, "inception_v3": 128,
              "inception_v4": 128, "inception_resnet_v2": 128,
              **{"resnet_v%d_%d" % (v, n): 64 for v in (1, 2)
                 for n in (50, 101, 152, 200)},
              **{name: 64 for name in (
                  "mobilenet_v1", "mobilenet_v1_075", "mobilenet_v1_050",
                  "mobilenet_v1_025", "mobilenet_v2", "mobilenet_v2_140",
                  "mobilenet_v2_035")},
              "nasnet_cifar": 32, "nasnet_mobile": 96, "nasnet_large": 128,
              "pnasnet_mobile": 96, "pnasnet_large": 128}


def zoo_arguments(parser):
    """The arguments every zoo check takes: the model and the tools."""
    parser.add_argument("--model", required=True)
    parser.add_argument("--export", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--fastnnc", required=True)


def export(args, path, *options):
    """Exports args.model with 10 classes to path (tools/zoo/export.py)."""
    subprocess.run([args.python, args.export, "--model", args.model,
                    "-o", str(path), "--num-classes", "10", *options],
                   check=True, stdout=subprocess.DEVNULL)


def overfit(name, fastnnc, onnx_file, tmp, steps, learning_rate=0.005,
            weight_decay=0, batch=4, max_gradient_norm=None):
    """Compiles onnx_file into tmp/train.bin, trains `steps` momentum-SGD
    steps on one fixed mock batch and exits with FAILED unless every loss is
    finite and the mean of the last 5 is below 0.8 x the first.
    max_gradient_norm, when given, clips the global gradient norm."""
    hparams = tmp / "hp.txt"
    clipping = ("" if max_gradient_norm is None else
                f"max_gradient_norm={max_gradient_norm}\n")
    hparams.write_text(clipping +
        f"batch_size={batch}\nnum_classes=10\noptimizer=momentum\n"
        f"momentum=0.9\nlearning_rate={learning_rate}\n"
        "learning_rate_decay_type=fixed\n"
        f"weight_decay={weight_decay}\nstop_at_step={steps}\n"
        "log_loss_every_n_iters=1\ndataset_name=mock\n"
        # One mock batch: the fixed batch the model must overfit.
        f"num_sample_per_epoch={batch}\nnum_epochs={steps}\n")
    subprocess.run([fastnnc, str(onnx_file), "-o", str(tmp / "train.bin"),
                    "--hparams", str(hparams)], check=True)
    ran = subprocess.run([str(tmp / "train.bin"), "--hparams", str(hparams),
                          "--train_dir=" + str(tmp / "run")],
                         capture_output=True, text=True)
    if ran.returncode != 0:
        sys.exit(f"FAILED: train.bin: {ran.stderr.strip()}")
    losses = [float(m.group(1))
              for m in re.finditer(r"loss=([-+0-9.eEinfa]+)", ran.stdout)]
    if len(losses) != steps or not all(math.isfinite(x) for x in losses):
        sys.exit(f"FAILED: expected {steps} finite losses, got {losses}")
    tail = sum(losses[-5:]) / 5
    print(f"{name}: loss {losses[0]:.4f} at step 1, {tail:.4f} over the "
          f"last 5 of {steps} steps")
    if tail >= 0.8 * losses[0]:
        sys.exit("FAILED: the loss did not fall")


def main():
    parser = argparse.ArgumentParser()
    zoo_arguments(parser)
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix=f"overfit-{args.model}-") as tmp:
        tmp = Path(tmp)
        export(args, tmp / "model.onnx", "--image-size",
               str(IMAGE_SIZE[args.model]))
        overfit(args.model, args.fastnnc, tmp / "model.onnx", tmp, args.steps)


if __name__ == "__main__":
    main()
