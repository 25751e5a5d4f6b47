"""The README job's first steps, train.bin against PyTorch float32 and float64
on the very same batches: how closely each float32 trainer follows the exact
(float64) trajectory.

bench/accuracy/bench.py compares accuracies over seeds, where shuffle order
and dropout masks differ between the trainers. Here both sides see Fashion-
MNIST in file order (one TFRecord shard, written in IDX order, read with
shuffle_buffer_size=1) and LeNet without its dropout (whose masks PyTorch
cannot reproduce), with the main job's optimizer, learning rate and batch.
LeNet's TF-slim initialisation starts at a loss of ~12 and its first steps
are violent, so rounding differences grow fast: the table shows, per step,
each float32 trajectory's relative deviation from float64.

Usage: python3 bench/accuracy/trajectory.py [--build-dir build] [--seed 0]
       [--steps 60]   (about a minute; prints a markdown subsection, which
bench/accuracy/run.sh appends to the accuracy section of RESULTS.md)
"""
import argparse
import copy
import os
import re
import sys
import tempfile

import torch
import torch.nn.functional as F

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "bench", "train"))
sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))
from benchlib import FASHION_MNIST, MAIN_JOB_CONFIG, main_job_value, run  # noqa: E402
from fashion_mnist_pytorch import load  # noqa: E402
from fastnn_zoo.onnx_export import build_model  # noqa: E402


def pytorch_losses(model, images, labels, steps, batch, dtype):
    model = copy.deepcopy(model).to(dtype)
    optimizer = torch.optim.SGD(model.parameters(),
                                lr=float(main_job_value("learning_rate")),
                                momentum=float(main_job_value("momentum")))
    losses = []
    for step in range(steps):
        window = slice(step * batch, (step + 1) * batch)
        loss = F.cross_entropy(model(images[window].to(dtype)), labels[window])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def fastnn_losses(args, tmp, model, batch):
    import onnx
    onnx_file = os.path.join(tmp, "lenet.onnx")
    torch.onnx.export(model, torch.zeros(batch, 1, 28, 28), onnx_file,
                      input_names=["images"], output_names=["logits"],
                      opset_version=13,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    onnx.checker.check_model(onnx.load(onnx_file))
    binary = os.path.join(tmp, "train.bin")
    run([os.path.join(args.build_dir, "bin", "fastnnc"), onnx_file, "-o",
         binary, "--hparams", MAIN_JOB_CONFIG])
    data = os.path.join(tmp, "data")
    run([os.path.join(args.build_dir, "tools", "fastnn-data", "fastnn-data"),
         "convert", "--format=idx", "--input=" + FASHION_MNIST,
         "--output=" + data, "--name=fashion-mnist", "--shards=1",
         "--no-progress"])
    out = run([binary, "--hparams", MAIN_JOB_CONFIG, "--dataset_dir=" + data,
               "--train_dir=" + os.path.join(tmp, "run"),
               "--shuffle_buffer_size=1", "--log_loss_every_n_iters=1",
               "--stop_at_step=%d" % args.steps, "--seed=%d" % args.seed],
              dict(os.environ, OMP_NUM_THREADS="1"))
    return [float(v) for v in re.findall(r"step \d+: loss=([0-9.]+)", out)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    torch.set_num_threads(1)
    batch = int(main_job_value("batch_size"))
    model, _ = build_model("lenet", seed=args.seed)
    model.dropout3.p = 0.0
    model.train()
    images, labels = load(FASHION_MNIST, "train")
    count = args.steps * batch
    images, labels = images[:count], labels[:count]
    exact = pytorch_losses(model, images, labels, args.steps, batch,
                           torch.float64)
    single = pytorch_losses(model, images, labels, args.steps, batch,
                            torch.float32)
    with tempfile.TemporaryDirectory(prefix="fastnn-trajectory-") as tmp:
        ours = fastnn_losses(args, tmp, model, batch)
    if len(ours) != args.steps or abs(ours[0] - exact[0]) > 1e-5 * exact[0]:
        sys.exit("trajectory.py: train.bin's first loss %s is not PyTorch's "
                 "%.6f: the two no longer read the same batches"
                 % (ours[:1], exact[0]))

    def deviation(losses, step):
        return (losses[step] - exact[step]) / exact[step]

    print("### The first steps on identical batches (trajectory.py)\n")
    print("LeNet seed %d without dropout, Fashion-MNIST in file order, the "
          "main job's optimizer and batch; each float32 trainer's relative "
          "deviation from PyTorch float64's loss on the same step.\n"
          % args.seed)
    print("| step | float64 loss | PyTorch float32 deviation | train.bin "
          "deviation |")
    print("|---|---|---|---|")
    for step in range(args.steps):
        if step < 12 or (step + 1) % 10 == 0:
            print("| %d | %.5f | %+.1e | %+.1e |" % (
                step + 1, exact[step], deviation(single, step),
                deviation(ours, step)))
    print()
    for name, losses in [("PyTorch float32", single), ("train.bin", ours)]:
        first = next((s + 1 for s in range(args.steps)
                      if abs(deviation(losses, s)) > 1e-3), None)
        print("- %s: first step more than 1e-3 from float64: %s; mean loss "
              "over the %d steps %.4f (float64 %.4f)." % (
                  name, first, args.steps, sum(losses) / len(losses),
                  sum(exact) / len(exact)))

if __name__ == "__main__":
    main()
