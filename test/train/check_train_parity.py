"""Training parity with PyTorch autograd (training-compiler issue).

Builds a model (a zoo model, or `tiny`: convolutions, relu, sigmoid, dense),
turns its dropout off, exports it for training, compiles the training step
with `fastnnc --mode=train --emit=obj` (plain SGD, no weight decay), links
it with the step runner, and runs S steps on S fixed random batches. PyTorch
trains the same model object from the same weights on the same batches with
torch.optim.SGD. Every step's loss must agree to 1e-3 relative, and the
updates must move PyTorch's losses away from those of the initial weights by
at least 10x that (a step that ignored its gradients would fail).

Deep networks at random initialisation are ill-conditioned: resnet_v1_50's
gradient norm is ~600, so one step at lr 1e-5 changes the loss by several
units, and float32 rounding alone moves PyTorch's own losses away from its
float64 losses by more than 1e-3 within a few steps. Its test therefore
trains one fixed batch (--same-batch) at lr 5e-7: the loss falls by a
quarter over the 20 steps while float32 trajectories stay within ~1e-4 of
each other. --fp64-reference compares with PyTorch in float64 instead, each
step allowed 3x PyTorch float32's own error against it (or 1e-3), to tell
fastnn's rounding from PyTorch's when investigating.

The object also holds the evaluation step (fnn_eval_*). After training, the
runner copies the trained state into it by name and evaluates two more
batches; every sample's loss must match PyTorch's eval-mode cross-entropy of
the trained model within 1e-4 relative (absolute below 1; --eval-tolerance;
with --fp64-reference, or 3x PyTorch float32's own error), and its
top-1 and top-5 hits must be PyTorch's, except where the label's logit ties
another within 1e-4.
"""
import argparse
import copy
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from step_runner import compile_runner, run_steps

TOLERANCE = 1e-3
# Evaluation follows the 20 compared steps; ~3e-6 is observed.
EVAL_TOLERANCE = 1e-4
EVAL_BATCHES = 2
# How far the updates must move the losses from those of the initial
# weights: 10x the tolerance.
MIN_UPDATE_EFFECT = 10 * TOLERANCE


def tiny_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2),
        torch.nn.Sigmoid(),
        torch.nn.Flatten(),
        torch.nn.Linear(8 * 4 * 4, 10)), (3, 16, 10)


class Residual(torch.nn.Module):
    """conv-bn-relu with an identity shortcut, then global average pooling:
    the shapes of a resnet block."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(1, stride=2)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.stem(x)))
        x = torch.relu(x + self.bn2(self.conv(x)))
        x = self.pool(x)
        return self.fc(x.mean(dim=(2, 3)))


class Stem(torch.nn.Module):
    """A resnet stem: 7x7/2 convolution, batch norm, relu and an
    overlapping 3x3/2 max pooling."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 8, 7, stride=2, padding=3)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.fc = torch.nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


def zoo_model(zoo, name, image_size):
    sys.path.insert(0, zoo)
    from fastnn_zoo.onnx_export import build_model
    model, config = build_model(name, image_size=image_size)
    return model, (config["channels"], config["image_size"], config["num_classes"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--zoo", required=True)
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--linker", required=True)
    parser.add_argument("--link-inputs", required=True, help="comma-separated")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--image-size", type=int, default=None)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--fp64-reference", action="store_true")
    parser.add_argument("--same-batch", action="store_true",
                        help="every step trains on the first batch")
    parser.add_argument("--eval-tolerance", type=float, default=EVAL_TOLERANCE)
    args = parser.parse_args()

    if args.model == "tiny":
        model, (channels, size, classes) = tiny_model()
    elif args.model == "stem":
        model, (channels, size, classes) = Stem(), (3, 16, 10)
    elif args.model == "residual":
        model, (channels, size, classes) = Residual(), (3, 8, 10)
    else:
        model, (channels, size, classes) = zoo_model(args.zoo, args.model,
                                                     args.image_size)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            module.num_batches_tracked = None
    model.train()

    random = np.random.RandomState(3)
    images = random.uniform(-1, 1, (args.steps, args.batch_size, channels, size,
                                    size)).astype(np.float32)
    labels = random.randint(0, classes, (args.steps, args.batch_size)).astype(np.int64)
    if args.same_batch:
        images[1:], labels[1:] = images[0], labels[0]
    eval_images = random.uniform(-1, 1, (EVAL_BATCHES, args.batch_size, channels,
                                         size, size)).astype(np.float32)
    eval_labels = random.randint(0, classes,
                                 (EVAL_BATCHES, args.batch_size)).astype(np.int64)

    with tempfile.TemporaryDirectory(prefix=f"train-parity-{args.model}-") as tmp:
        tmp = Path(tmp)
        state = {k: v.clone() for k, v in model.state_dict().items()
                 if not k.endswith("num_batches_tracked")}
        outputs = ["logits", "aux_logits"][:2 if hasattr(model, "aux_logits") and model.aux_logits else 1]
        torch.onnx.export(model, torch.from_numpy(images[0]), str(tmp / "model.onnx"),
                          input_names=["images"], output_names=outputs,
                          opset_version=13, do_constant_folding=False,
                          training=torch.onnx.TrainingMode.TRAINING)
        # Tracing in training mode moved the BN statistics, in the model and
        # in the exported initializers; put them back in both, so that the
        # evaluation starts from the same statistics. (The batch counters the
        # export dropped are not model state.)
        result = model.load_state_dict(state, strict=False)
        assert all(k.endswith("num_batches_tracked")
                   for k in result.missing_keys + result.unexpected_keys)
        exported = onnx.load(str(tmp / "model.onnx"))
        for initializer in exported.graph.initializer:
            if initializer.name in state:
                initializer.CopyFrom(onnx.numpy_helper.from_array(
                    state[initializer.name].numpy(), initializer.name))
        onnx.save(exported, str(tmp / "model.onnx"))
        runner, stderr = compile_runner(args.fastnnc, args.linker,
                                        args.link_inputs, tmp / "model.onnx",
                                        tmp, args.batch_size, classes)
        if runner is None:
            sys.exit(f"FAILED: fastnnc: {stderr.strip()}")
        ours, ours_eval = run_steps(runner, tmp, images, labels,
                                    args.learning_rate,
                                    eval_images=eval_images,
                                    eval_labels=eval_labels)

    def batch_loss(net, s):
        dtype = next(net.parameters()).dtype
        out = net(torch.from_numpy(images[s]).to(dtype))
        target = torch.from_numpy(labels[s])
        if isinstance(out, (tuple, list)):
            loss = torch.nn.functional.cross_entropy(out[0], target)
            if len(out) > 1 and out[1] is not None:
                loss = loss + 0.4 * torch.nn.functional.cross_entropy(out[1], target)
            return loss
        return torch.nn.functional.cross_entropy(out, target)

    def pytorch_losses(net):
        optimizer = torch.optim.SGD(net.parameters(), lr=args.learning_rate)
        losses = []
        for s in range(args.steps):
            optimizer.zero_grad()
            loss = batch_loss(net, s)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    # The losses the initial weights give on the same batches: a trajectory
    # the updates do not move by far more than the tolerance would let a
    # step that ignores its gradients pass.
    with torch.no_grad():
        frozen_model = copy.deepcopy(model)
        frozen = [batch_loss(frozen_model, s).item() for s in range(args.steps)]
    exact_model = copy.deepcopy(model).double() if args.fp64_reference else None
    exact = pytorch_losses(exact_model) if exact_model else None
    float32 = pytorch_losses(model)
    moved = max(abs(f - l) / abs(l) for f, l in zip(frozen, float32))
    print(f"{args.model}: the updates move PyTorch's losses by up to "
          f"{moved:.2e} relative (at least {MIN_UPDATE_EFFECT:.0e} needed)")
    failed = moved < MIN_UPDATE_EFFECT
    for s in range(args.steps):
        reference = exact[s] if exact else float32[s]
        error = abs(ours[s] - reference) / max(abs(reference), 1e-12)
        allowed = TOLERANCE
        if exact:
            allowed = max(TOLERANCE, 3 * abs(float32[s] - reference) / abs(reference))
        failed |= error > allowed
        print(f"{args.model} step {s + 1}: fastnn {ours[s]:.7f} pytorch "
              f"{'float64' if exact else 'float32'} {reference:.7f} relative "
              f"error {error:.2e} (allowed {allowed:.1e})"
              + ("" if error <= allowed else " FAIL"))
    failed |= not check_eval(ours_eval, model, exact_model, eval_images,
                             eval_labels, args.model, args.eval_tolerance)
    sys.exit(1 if failed else 0)


def eval_reference(net, images, labels):
    """Per-sample cross-entropy, top-1 and top-5 hits (tf.nn.in_top_k: fewer
    than k logits strictly above the label's) and the label's smallest gap
    to another logit, of `net` in eval mode."""
    net.eval()
    dtype = next(net.parameters()).dtype
    rows = []
    with torch.no_grad():
        for batch, target in zip(images, labels):
            out = net(torch.from_numpy(batch).to(dtype))
            logits = (out[0] if isinstance(out, (tuple, list)) else out).double()
            target = torch.from_numpy(target)
            loss = torch.nn.functional.cross_entropy(logits, target, reduction="none")
            picked = logits.gather(1, target[:, None])
            above = (logits > picked).sum(dim=1)
            gaps = (logits - picked).abs()
            gaps.scatter_(1, target[:, None], float("inf"))
            for i in range(len(target)):
                rows.append((loss[i].item(), float(above[i] < 1),
                             float(above[i] < min(5, logits.shape[1])),
                             gaps[i].min().item()))
    return rows


def check_eval(ours, model, exact_model, images, labels, name, tolerance):
    float32 = eval_reference(model, images, labels)
    exact = eval_reference(exact_model, images, labels) if exact_model else None
    if ours.shape != (len(float32), 5):
        print(f"{name} eval: expected {len(float32)} per-sample lines, got "
              f"{ours.shape} FAIL")
        return False
    ok = True
    for row, reference in zip(ours, exact or float32):
        batch, sample, loss, top1, top5 = row
        allowed = tolerance * max(1.0, abs(reference[0]))
        if exact:
            single = float32[int(batch * len(images[0]) + sample)][0]
            allowed = max(allowed, 3 * abs(single - reference[0]))
        error = abs(loss - reference[0])
        tied = reference[3] < 1e-4
        good = error <= allowed and (tied or (top1, top5) == reference[1:3])
        ok &= good
        print(f"{name} eval {int(batch)}/{int(sample)}: fastnn loss {loss:.7f} "
              f"top1 {top1:g} top5 {top5:g}, pytorch {reference[0]:.7f} "
              f"{reference[1]:g} {reference[2]:g} (error {error:.1e}, allowed "
              f"{allowed:.1e}{', tie' if tied else ''})" + ("" if good else " FAIL"))
    return ok


if __name__ == "__main__":
    main()
