#!/usr/bin/env python3
"""The PyTorch side of the README's main job: the zoo's LeNet (the very
module tools/zoo exports to ONNX) trained on Debian's Fashion-MNIST with the
settings of configs/fashion_mnist_lenet.txt, then evaluated on the test
split. Prints one line per epoch and a final machine-readable line:

    pytorch: epochs=E train_seconds=S images_per_second=R test_top1=A

Preprocessing matches train.bin's lenet preprocessing, (pixel - 128) / 128;
the training order is a fresh shuffle per epoch, as the TFRecord pipeline's
shuffle buffer gives. The learning rate follows train.bin's schedule keys
(warm-up and TF-slim's decays, docs/hyperparameters.md); bench/accuracy/
bench.py passes them from `train.bin --print-config`.
"""
import argparse
import gzip
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools", "zoo"))
from fastnn_zoo.lenet import LeNet  # noqa: E402


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, count = struct.unpack(">II", data[:8])
    if magic == 2049:
        return np.frombuffer(data, np.uint8, count, 8).astype(np.int64)
    rows, cols = struct.unpack(">II", data[8:16])
    images = np.frombuffer(data, np.uint8, count * rows * cols, 16)
    return images.reshape(count, 1, rows, cols)


def load(directory, split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(directory, prefix + "-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(directory, prefix + "-labels-idx1-ubyte.gz"))
    images = (images.astype(np.float32) - 128.0) / 128.0
    return torch.from_numpy(images), torch.from_numpy(labels)


def learning_rate(args, epoch_size, g):
    """train.bin's rate for update g (0-based), docs/hyperparameters.md:
    t2t warm-up, then TF-slim's decay every 2 epochs."""
    rate = args.learning_rate
    if g < args.warmup_steps:
        rate *= math.exp(math.log(0.01) / args.warmup_steps) ** (
            args.warmup_steps - g)
    decay_steps = int(epoch_size * 2.0 / args.batch_size)
    if args.learning_rate_decay_type == "exponential":
        rate *= args.learning_rate_decay_factor ** (g // decay_steps)
    elif args.learning_rate_decay_type == "polynomial":
        rate = ((rate - args.end_learning_rate) *
                (1 - min(g, decay_steps) / decay_steps) +
                args.end_learning_rate)
    return rate


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--epochs", "--num-epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--warmup-steps", type=int, default=0,
                        help="t2t warm-up: from 1/100 of the rate, growing "
                        "exponentially to it over this many steps")
    parser.add_argument("--learning-rate-decay-type", default="fixed",
                        choices=["fixed", "exponential", "polynomial"])
    parser.add_argument("--learning-rate-decay-factor", type=float,
                        default=0.94)
    parser.add_argument("--end-learning-rate", type=float, default=0.0001)
    parser.add_argument("--num-sample-per-epoch", type=int,
                        help="the epoch size decay counts in (default: the "
                        "training set's)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_images, train_labels = load(args.data, "train")
    test_images, test_labels = load(args.data, "test")
    model = LeNet(num_classes=10)
    # A base rate of 1 makes LambdaLR's factor the rate itself.
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0,
                                momentum=args.momentum)
    steps_per_epoch = len(train_labels) // args.batch_size
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda g: learning_rate(
            args, args.num_sample_per_epoch or len(train_labels), g))
    start = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(train_labels))
        total = 0.0
        for step in range(steps_per_epoch):
            index = order[step * args.batch_size:(step + 1) * args.batch_size]
            loss = F.cross_entropy(model(train_images[index]),
                                   train_labels[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item()
        print(f"epoch {epoch + 1}: mean loss {total / steps_per_epoch:.4f}",
              flush=True)
    seconds = time.perf_counter() - start

    model.eval()
    correct = 0
    with torch.no_grad():
        for first in range(0, len(test_labels), 1000):
            logits = model(test_images[first:first + 1000])
            correct += (logits.argmax(1) == test_labels[first:first + 1000]
                        ).sum().item()
    images = steps_per_epoch * args.batch_size * args.epochs
    print(f"pytorch: epochs={args.epochs} train_seconds={seconds:.1f} "
          f"images_per_second={images / seconds:.1f} "
          f"test_top1={correct / len(test_labels):.4f}")


if __name__ == "__main__":
    main()
