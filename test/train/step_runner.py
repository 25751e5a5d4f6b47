"""The step runner (StepMain.cpp) from Python: a model's training step
compiled by `fastnnc --mode=train --emit=obj` (plain SGD, no weight decay),
linked with the runner, and run on given batches. Shared by the training
parity checks (check_train_parity.py, test/onnx-exporters/check_keras.py)
and the gradient checks (test/gradcheck)."""
import subprocess
from pathlib import Path

import numpy as np


def compile_runner(fastnnc, linker, link_inputs, onnx_file, tmp, batch_size,
                   num_classes):
    """Compiles onnx_file's training step into tmp/step-runner; returns
    (the runner, or None where fastnnc failed, and fastnnc's stderr).
    link_inputs is the comma-separated list of the runner's link inputs."""
    tmp = Path(tmp)
    compiled = subprocess.run(
        [fastnnc, str(onnx_file), "--mode=train", "--emit=obj",
         "-o", str(tmp / "step.o"), f"--hparam=batch_size={batch_size}",
         f"--hparam=num_classes={num_classes}", "--hparam=optimizer=sgd",
         "--hparam=weight_decay=0"], capture_output=True, text=True)
    if compiled.returncode != 0:
        return None, compiled.stderr
    runner = tmp / "step-runner"
    subprocess.run([linker, str(tmp / "step.o"), "-o", str(runner)]
                   + link_inputs.split(","), check=True)
    return runner, compiled.stderr


def run_steps(runner, tmp, images, labels, learning_rate, step=None,
              trainables=None, eval_images=None, eval_labels=None):
    """Runs one training step per batch of images [S, N, ...] and labels
    [S, N] (batch s as step s + 1, or all as `step`); with eval_*, then the
    evaluation step on the trained state. Returns (the S losses, the
    evaluation's rows [batch, sample, loss, top1, top5]) or raises
    RuntimeError with the runner's message."""
    tmp = Path(tmp)
    np.save(tmp / "images.npy", np.asarray(images, np.float32))
    np.save(tmp / "labels.npy", np.asarray(labels, np.int64))
    command = [str(runner), "--images", str(tmp / "images.npy"),
               "--labels", str(tmp / "labels.npy"),
               "--learning-rate", str(learning_rate)]
    if step is not None:
        command += ["--step", str(step)]
    if trainables:
        command += ["--trainables-out", str(trainables)]
    if eval_images is not None:
        np.save(tmp / "eval_images.npy", np.asarray(eval_images, np.float32))
        np.save(tmp / "eval_labels.npy", np.asarray(eval_labels, np.int64))
        command += ["--eval-images", str(tmp / "eval_images.npy"),
                    "--eval-labels", str(tmp / "eval_labels.npy")]
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        raise RuntimeError(ran.stderr.strip())
    lines = [line.split() for line in ran.stdout.splitlines()]
    losses = np.array([float(line[2]) for line in lines if line[0] == "step"])
    evaluation = np.array([[float(v) for v in line[1:]]
                           for line in lines if line[0] == "eval"])
    if len(losses) != len(images):
        raise RuntimeError(f"expected {len(images)} step lines, got "
                           f"{ran.stdout.strip()}")
    return losses, evaluation
