"""The README's main job against PyTorch, over several seeds, in one run.

For each seed: LeNet exported from the zoo with that seed (the initial
weights PyTorch's run starts from too), compiled by fastnnc with
configs/fashion_mnist_lenet.txt, trained by train.bin with `--seed` and
evaluated on the 10000 test images with `train.bin --eval`; then
bench/train/fashion_mnist_pytorch.py under PyTorch 2 (.venv-torch2, from
scripts/install-peers.sh) with the same seed, model, optimizer, batch,
epochs and threads. Also train.bin's training time as a ratio to PyTorch
2's, the issue's target for the README job. One seed's top-1 moves by several tenths of a point with
the shuffle order and dropout masks alone, so the comparison is between the
means over seeds, with each side's spread.

Prints a markdown section for bench/RESULTS.md on stdout (progress on
stderr). Run through bench/accuracy/run.sh.
"""
import argparse
import datetime
import os
import platform
import re
import statistics
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import (FASHION_MNIST, MAIN_JOB_CONFIG, cpu_name, log,  # noqa: E402
                      main_job_value, peer_python, peer_versions,
                      require_peers, run)

# The target: the README job's training time at most this share of
# PyTorch 2's.
TIME_TARGET = 0.67


def fastnn_run(args, tmp, data, seed):
    onnx_file = os.path.join(tmp, "lenet_seed%d.onnx" % seed)
    run([sys.executable, os.path.join(ROOT, "tools", "zoo", "export.py"),
         "--model", "lenet", "--seed", str(seed), "-o", onnx_file])
    binary = os.path.join(tmp, "train_seed%d.bin" % seed)
    run([args.fastnnc, onnx_file, "-o", binary, "--hparams", MAIN_JOB_CONFIG])
    flags = ["--hparams", MAIN_JOB_CONFIG, "--dataset_dir=" + data,
             "--train_dir=" + os.path.join(tmp, "run_seed%d" % seed),
             "--seed=%d" % seed]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    start = time.perf_counter()
    out = run([binary] + flags, env)
    seconds = time.perf_counter() - start
    loss = re.findall(r"mean loss ([0-9.]+)", out)
    evaluation = run([binary] + flags + ["--eval"], env)
    top1 = re.search(r"top1=([0-9.]+)", evaluation)
    if not top1 or not loss:
        raise RuntimeError("unexpected train.bin output:\n%s\n%s"
                           % (out[-2000:], evaluation))
    # key=value lines, each after a "# from FILE:LINE" comment.
    config = dict(line.split("=", 1) for line in run(
        [binary] + flags + ["--print-config"]).splitlines()
        if "=" in line and not line.startswith("#"))
    return float(top1.group(1)), float(loss[-1]), seconds, config


def pytorch_run(args, seed, config):
    """PyTorch with train.bin's effective optimizer, schedule, batch and
    epochs (`train.bin --print-config`, defaults included)."""
    settings = ["num_epochs", "batch_size", "learning_rate", "momentum",
                "warmup_steps", "learning_rate_decay_type",
                "learning_rate_decay_factor", "end_learning_rate",
                "num_sample_per_epoch"]
    if config["optimizer"] != "momentum" or config["warmup_scheme"] != "t2t":
        raise RuntimeError("fashion_mnist_pytorch.py trains with momentum "
                           "and t2t warm-up only")
    out = run([peer_python("torch"),
               os.path.join(ROOT, "bench", "train", "fashion_mnist_pytorch.py"),
               "--data", FASHION_MNIST, "--threads", str(args.threads),
               "--seed", str(seed)] +
              ["--%s=%s" % (key.replace("_", "-"), config[key])
               for key in settings if config[key] != "None"])
    losses = [float(v) for v in re.findall(r"mean loss ([0-9.]+)", out)]
    result = re.search(r"train_seconds=([0-9.]+) .* test_top1=([0-9.]+)", out)
    if not result or not losses:
        raise RuntimeError("unexpected PyTorch output:\n" + out)
    return float(result.group(2)), statistics.mean(losses), float(
        result.group(1))


def summary(values):
    mean = statistics.mean(values)
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return mean, spread


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    require_peers()
    torch_version = peer_versions()[0]
    args.fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    fastnn_data = os.path.join(args.build_dir, "tools", "fastnn-data",
                               "fastnn-data")
    load_before = os.getloadavg()
    results = {"train.bin": [], "PyTorch 2": []}
    with tempfile.TemporaryDirectory(prefix="fastnn-accuracy-") as tmp:
        data = os.path.join(tmp, "fashion-mnist")
        log("== Fashion-MNIST: convert")
        run([fastnn_data, "convert", "--format=idx", "--input=" + FASHION_MNIST,
             "--output=" + data, "--name=fashion-mnist", "--shards=4"])
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            log("== seed %d: train.bin" % seed)
            *result, config = fastnn_run(args, tmp, data, seed)
            results["train.bin"].append(tuple(result))
            log("  top1 %.4f, mean loss %.4f, %.0f s" % results["train.bin"][-1])
            log("== seed %d: PyTorch" % seed)
            results["PyTorch 2"].append(pytorch_run(args, seed, config))
            log("  top1 %.4f, mean loss %.4f, %.0f s"
                % results["PyTorch 2"][-1])
    load_after = os.getloadavg()

    lines = [
        "## Fashion-MNIST accuracy (README job)",
        "",
        "`bench/accuracy/run.sh`: configs/fashion_mnist_lenet.txt (%s epochs "
        "of momentum SGD, lr %s, momentum %s, batch %s) trained by train.bin "
        "and by bench/train/fashion_mnist_pytorch.py under PyTorch 2 (the "
        "same zoo module, the data in memory), seeds %d-%d, each seed's "
        "initial weights the same on both sides; top-1 on the 10000 test "
        "images; %d thread(s) each, one after the other. Training time: "
        "train.bin's whole run (reading the TFRecords, checkpoints and "
        "logging included), PyTorch's epochs." % (
            main_job_value("num_epochs"), main_job_value("learning_rate"),
            main_job_value("momentum"), main_job_value("batch_size"),
            args.first_seed, args.first_seed + args.seeds - 1, args.threads),
        "",
        "- Machine: %s, %d cores (`%s`); %s. Load average (1 min) %.2f "
        "before, %.2f after the run (the machine is shared)." % (
            platform.machine(), os.cpu_count(), cpu_name(),
            datetime.date.today().isoformat(), load_before[0],
            load_after[0]),
        "- %s." % torch_version,
        "",
        "| trainer | top-1 per seed | mean top-1 | std | mean training loss "
        "| training time per run (s) |",
        "|---|---|---|---|---|---|",
    ]
    for name, rows in results.items():
        top1, spread = summary([r[0] for r in rows])
        lines.append("| %s | %s | %.4f | %.4f | %.4f | %.0f |" % (
            name, ", ".join("%.4f" % r[0] for r in rows), top1, spread,
            statistics.mean(r[1] for r in rows),
            statistics.mean(r[2] for r in rows)))
    difference = (summary([r[0] for r in results["train.bin"]])[0] -
                  summary([r[0] for r in results["PyTorch 2"]])[0])
    ratios = [ours[2] / theirs[2] for ours, theirs in
              zip(results["train.bin"], results["PyTorch 2"])]
    lines += ["", "train.bin minus PyTorch 2, mean top-1: %+.2f points." %
              (100 * difference),
              "train.bin's training time / PyTorch 2's, per seed: %s; mean "
              "%.2f (target <= %.2f)." % (
                  ", ".join("%.2f" % r for r in ratios),
                  statistics.mean(ratios), TIME_TARGET)]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
