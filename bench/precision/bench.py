"""Mixed precision on CPU, measured in one run.

Speed: resnet_v1_50 (batch 8, momentum SGD) compiled by fastnnc with
precision=fp32 and precision=bf16, each run as train.bin on the mock dataset
for a few steps after a warm-up, alternating, in separate processes; the
best round of each and their ratio (the issue's target: bf16 >= 1.6x fp32).

Accuracy: LeNet on Fashion-MNIST (configs/fashion_mnist_lenet.txt, the
README's main job: momentum SGD at batch 64, seed 0) compiled with
precision=fp32,
bf16 and fp16 (fp16 with dynamic loss scaling, emulated on CPU), trained,
then evaluated on the 10000 test images with train.bin --eval; the issue's
target: bf16 within 0.5 points of fp32, fp16 converging.

Prints a markdown section for bench/RESULTS.md on stdout (progress on
stderr). Run through bench/precision/run.sh.
"""
import argparse
import datetime
import os
import platform
import re
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import (FASHION_MNIST, MAIN_JOB_CONFIG, cpu_name, log,  # noqa: E402
                      main_job_value, run)


def compile_model(fastnnc, onnx_file, binary, hparams):
    start = time.perf_counter()
    command = [fastnnc, onnx_file, "-o", binary]
    for key, value in hparams:
        command += ["--hparam", "%s=%s" % (key, value)]
    run(command)
    return time.perf_counter() - start


def images_per_second(binary, steps, warmup, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = run([binary, "--dataset_name=mock",
               "--stop_at_step=%d" % (warmup + steps),
               "--log_loss_every_n_iters=%d" % steps,
               "--hooks=StopAtStepHook,LoggingTensorHook"], env)
    rates = [float(r) for r in re.findall(r"images/s=([0-9.]+)", out)]
    if len(rates) < 2:
        raise RuntimeError("unexpected train.bin output: " + out)
    return rates[-1]


def speed(args, tmp, fastnnc):
    onnx_file = os.path.join(tmp, "resnet_v1_50.onnx")
    log("== resnet_v1_50: export")
    run([sys.executable, os.path.join(ROOT, "tools", "zoo", "export.py"),
         "--model", "resnet_v1_50", "-o", onnx_file])
    binaries, compile_s = {}, {}
    for precision in ("fp32", "bf16"):
        binaries[precision] = os.path.join(tmp, "resnet_%s.bin" % precision)
        log("== resnet_v1_50: compile %s" % precision)
        compile_s[precision] = compile_model(
            fastnnc, onnx_file, binaries[precision],
            [("batch_size", 8), ("num_classes", 1000),
             ("optimizer", "momentum"), ("weight_decay", 0),
             ("precision", precision)])
    rates = {"fp32": [], "bf16": []}
    for r in range(args.rounds):
        for precision in ("fp32", "bf16"):
            rates[precision].append(images_per_second(
                binaries[precision], args.steps, 2, args.threads))
        log("  round %d: fp32 %.2f img/s, bf16 %.2f img/s" % (
            r + 1, rates["fp32"][-1], rates["bf16"][-1]))
    return compile_s, {p: max(v) for p, v in rates.items()}, rates


def accuracy(args, tmp, fastnnc, fastnn_data):
    data = os.path.join(tmp, "fashion-mnist")
    log("== Fashion-MNIST: convert")
    run([fastnn_data, "convert", "--format=idx", "--input=" + FASHION_MNIST,
         "--output=" + data, "--name=fashion-mnist", "--shards=4"])
    onnx_file = os.path.join(tmp, "lenet.onnx")
    run([sys.executable, os.path.join(ROOT, "tools", "zoo", "export.py"),
         "--model", "lenet", "-o", onnx_file])
    config = MAIN_JOB_CONFIG
    results = {}
    for precision in ("fp32", "bf16", "fp16"):
        binary = os.path.join(tmp, "lenet_%s.bin" % precision)
        train_dir = os.path.join(tmp, "lenet_" + precision)
        log("== lenet %s: compile, train, evaluate" % precision)
        run([fastnnc, onnx_file, "-o", binary, "--hparams", config,
             "--hparam", "use_fp16=%s" % (precision != "fp32"),
             "--hparam", "precision=" + precision])
        # The configuration says use_fp16=False: the flags, which win,
        # repeat what the model was compiled with.
        flags = ["--hparams", config, "--dataset_dir=" + data,
                 "--train_dir=" + train_dir,
                 "--use_fp16=%s" % (precision != "fp32"),
                 "--precision=" + precision]
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        start = time.perf_counter()
        out = run([binary] + flags, env)
        seconds = time.perf_counter() - start
        skipped = re.search(r"(\d+) updates skipped on overflow", out)
        loss = re.findall(r"mean loss ([0-9.]+)", out)
        evaluation = run([binary] + flags + ["--eval"], env)
        top1 = re.search(r"top1=([0-9.]+)", evaluation)
        if not top1:
            raise RuntimeError("unexpected --eval output: " + evaluation)
        results[precision] = (float(top1.group(1)), float(loss[-1]),
                              int(skipped.group(1)) if skipped else 0,
                              seconds)
        log("  top1 %.4f, mean training loss %s, %.0f s" % (
            results[precision][0], loss[-1], seconds))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    fastnn_data = os.path.join(args.build_dir, "tools", "fastnn-data",
                               "fastnn-data")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="fastnn-precision-") as tmp:
        compile_s, best, rates = speed(args, tmp, fastnnc)
        results = None
        if not args.skip_accuracy:
            results = accuracy(args, tmp, fastnnc, fastnn_data)
    load_after = os.getloadavg()
    lines = [
        "## Mixed precision (CPU backend)",
        "",
        "`bench/precision/run.sh`: the same model compiled by fastnnc with "
        "`precision=fp32` and `precision=bf16` (fp16 with dynamic loss "
        "scaling for the accuracy runs), measured in one run on %d "
        "thread(s) (OMP_NUM_THREADS)." % args.threads,
        "",
        "- Machine: %s, %d cores (`%s`); %s. Load average (1 min) %.2f "
        "before, %.2f after the run (the machine is shared)." % (
            platform.machine(), os.cpu_count(), cpu_name(),
            datetime.date.today().isoformat(), load_before[0],
            load_after[0]),
        "",
        "Training throughput, resnet_v1_50, batch 8, momentum SGD, "
        "`train.bin --dataset_name=mock`, %d steps after 2 warm-up steps, "
        "%d alternating rounds, best of each:" % (args.steps, args.rounds),
        "",
        "| precision | compile (s) | images/s (best) | rounds | ratio to fp32 "
        "| target |",
        "|---|---|---|---|---|---|",
    ]
    for precision in ("fp32", "bf16"):
        lines.append("| %s | %.1f | %.2f | %s | %.2f | %s |" % (
            precision, compile_s[precision], best[precision],
            ", ".join("%.2f" % r for r in rates[precision]),
            best[precision] / best["fp32"],
            ">= 1.6" if precision == "bf16" else "-"))
    if results:
        lines += [
            "",
            "Accuracy, LeNet on Fashion-MNIST (configs/fashion_mnist_lenet.txt, "
            "the README's main job: %s epochs of momentum SGD, batch 64, seed "
            "0), top-1 on the 10000 test images (`train.bin --eval`):"
            % main_job_value("num_epochs"),
            "",
            "| precision | top-1 | points from fp32 | mean training loss | "
            "skipped updates | training time (s) |",
            "|---|---|---|---|---|---|",
        ]
        for precision in ("fp32", "bf16", "fp16"):
            top1, loss, skipped, seconds = results[precision]
            lines.append("| %s | %.4f | %+.2f | %.4f | %d | %.0f |" % (
                precision, top1, 100 * (top1 - results["fp32"][0]), loss,
                skipped, seconds))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
