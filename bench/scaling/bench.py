"""How fastnn's training and inference scale with batch, threads and model.

For each model (lenet, resnet_v1_50, mobilenet_v2 and inception_v3 unless
--models says otherwise): export it from the zoo at its defaults (seed 0),
count its parameters, ONNX nodes and forward multiply-adds, then for each
batch compile its training step (`fastnnc model.onnx --hparam
batch_size=B`, momentum SGD, fp32) and its inference (`--mode=infer
--batch-size=B`), recording compile wall seconds and peak RSS, and run both
at each thread count (OMP_NUM_THREADS): train.bin on the mock dataset (one
warm-up step, then at least 3 timed steps and --min-seconds), infer.bin
--repeat N (after its warm-up run, N runs of at least --min-seconds
together). One measurement per cell: the tables show how the figures grow,
bench/train and bench/infer hold the repeated, peer-relative ones. Prints a
markdown section for bench/RESULTS.md on stdout (progress on stderr). Run
through bench/scaling/run.sh.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from benchlib import (  # noqa: E402
    fastnnc_line, forward_macs, load_average, log, machine_line,
    measure_training, run, run_with_usage, time_inference)

MODELS = ["lenet", "resnet_v1_50", "mobilenet_v2", "inception_v3"]
BATCHES = [1, 4, 16, 64]
THREADS = [1, 2]
MIN_TIMED_STEPS = 3
EXPORT = os.path.join(ROOT, "tools", "zoo", "export.py")


def model_size(onnx_file):
    """(trainable parameters, ONNX nodes) of an exported model: every float
    initializer but batch norm's running statistics counts."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(onnx_file)
    statistics = {node.input[index] for node in model.graph.node
                  if node.op_type == "BatchNormalization"
                  for index in (3, 4) if index < len(node.input)}
    parameters = sum(
        numpy_helper.to_array(init).size for init in model.graph.initializer
        if init.data_type == onnx.TensorProto.FLOAT
        and init.name not in statistics)
    return parameters, len(model.graph.node)


def infer_rate(binary, batch, threads, min_seconds):
    """images/s of infer.bin and its peak RSS: a short run sizes the
    repeat count to `min_seconds` of timed runs."""
    probe_ms, _ = time_inference(binary, 2, threads)
    repeat = max(3, math.ceil(min_seconds * 1e3 / probe_ms))
    ms, rss = time_inference(binary, repeat, threads)
    return batch * 1e3 / ms, rss


def rate_cell(value):
    return "%.0f" % value if value >= 100 else "%.1f" % value


def measure_model(tmp, fastnnc, name, batches, threads, min_seconds):
    """The model's size row and its training and inference rows."""
    onnx_file = os.path.join(tmp, name + ".onnx")
    run([sys.executable, EXPORT, "--model", name, "-o", onnx_file])
    parameters, nodes = model_size(onnx_file)
    size = {"parameters": parameters, "nodes": nodes,
            "gmacs": forward_macs(name) / 1e9, "train_compile": {},
            "infer_compile": {}}
    train_rows, infer_rows = [], []
    for batch in batches:
        binaries = {}
        for mode, flags in (("train", ["--hparam", "batch_size=%d" % batch]),
                            ("infer", ["--mode=infer",
                                       "--batch-size=%d" % batch])):
            binaries[mode] = os.path.join(tmp, "%s-%s-%d.bin" % (
                name, mode, batch))
            _, usage = run_with_usage(
                [fastnnc, onnx_file, "-o", binaries[mode]] + flags)
            size[mode + "_compile"][batch] = usage
            log("%s batch %d: %s compile %.1f s, %.0f MiB" % (
                name, batch, mode, usage["wall_s"], usage["rss_mib"]))
        train, infer = {}, {}
        for count in threads:
            env = dict(os.environ, OMP_NUM_THREADS=str(count))
            train[count] = measure_training(binaries["train"], batch,
                                            MIN_TIMED_STEPS, min_seconds, env)
            infer[count] = infer_rate(binaries["infer"], batch, count,
                                      min_seconds)
            log("%s batch %d, %d thread(s): train %.2f img/s %.0f MiB, infer "
                "%.2f img/s %.0f MiB" % (name, batch, count, *train[count],
                                         *infer[count]))
        for mode, rates, rows in (("train", train, train_rows),
                                  ("infer", infer, infer_rows)):
            os.remove(binaries[mode])
            rows.append(table_row(name, batch, size[mode + "_compile"][batch],
                                  rates, threads))
    os.remove(onnx_file)
    return size, train_rows, infer_rows


def table_row(name, batch, compile_usage, rates, threads):
    """model, batch, compile s, then images/s and peak RSS per thread
    count, and the speedup of the most threads over one."""
    cells = [name, str(batch), "%.1f" % compile_usage["wall_s"]]
    cells += [rate_cell(rates[count][0]) for count in threads]
    if len(threads) > 1:
        cells.append("%.2f" % (rates[threads[-1]][0] / rates[threads[0]][0]))
    cells += ["%.0f" % rates[count][1] for count in threads]
    return "| " + " | ".join(cells) + " |"


def rate_table(title, rows, threads, what):
    header = ["model", "batch", "compile s"]
    header += ["%s img/s, %d thread%s" % (what, count, "s" * (count > 1))
               for count in threads]
    if len(threads) > 1:
        header.append("speedup %d / %d threads" % (threads[-1], threads[0]))
    header += ["peak RSS MiB, %d thread%s" % (count, "s" * (count > 1))
               for count in threads]
    return [title, "", "| " + " | ".join(header) + " |",
            "|" + "---|" * 2 + "---:|" * (len(header) - 2)] + rows + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)))
    parser.add_argument("--threads", default=",".join(map(str, THREADS)))
    parser.add_argument("--min-seconds", type=float, default=5.0,
                        help="least timed seconds per measurement")
    args = parser.parse_args()
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    models = args.models.split(",")
    batches = [int(b) for b in args.batches.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    load_before = load_average()
    sizes, train_rows, infer_rows = [], [], []
    with tempfile.TemporaryDirectory(prefix="fastnn-scaling-bench-") as tmp:
        for name in models:
            log("== %s" % name)
            size, train, infer = measure_model(tmp, fastnnc, name, batches,
                                               threads, args.min_seconds)
            sizes.append((name, size))
            train_rows += train
            infer_rows += infer
    load_after = load_average()
    lines = [
        "## Scaling with batch, threads and model size (CPU backend)",
        "",
        "`bench/scaling/run.sh`: each model exported from the zoo (seed 0); "
        "for each batch its training step compiled with `fastnnc --hparam "
        "batch_size=B` (momentum SGD, fp32) and its inference with "
        "`--mode=infer --batch-size=B`, then run at each thread count "
        "(OMP_NUM_THREADS): `train.bin --dataset_name=mock` (one warm-up "
        "step, then at least %d timed steps and %.0f s) and `infer.bin "
        "--repeat N` (after its warm-up run, at least %.0f s of runs). One "
        "measurement per cell, models one after another; bench/train and "
        "bench/infer have the repeated measurements against the peers. Peak "
        "RSS from wait4; compile time is fastnnc's wall time on 2 threads."
        % (MIN_TIMED_STEPS, args.min_seconds, args.min_seconds),
        "",
        machine_line(load_before, load_after),
        fastnnc_line(fastnnc),
        "",
    ]
    lines += rate_table("Training step:", train_rows, threads, "train")
    lines += rate_table("Inference:", infer_rows, threads, "infer")
    header = ["model", "parameters (M)", "ONNX nodes",
              "forward GMAC / image"]
    header += ["train compile s, batch %d" % b for b in batches]
    header += ["infer compile s, batch %d" % b for b in batches]
    header += ["train compile MiB, batch %d" % batches[-1]]
    lines += ["Compile time with model size:", "",
              "| " + " | ".join(header) + " |",
              "|---|" + "---:|" * (len(header) - 1)]
    for name, size in sizes:
        cells = [name, "%.2f" % (size["parameters"] / 1e6),
                 str(size["nodes"]), "%.3f" % size["gmacs"]]
        cells += ["%.1f" % size["train_compile"][b]["wall_s"]
                  for b in batches]
        cells += ["%.1f" % size["infer_compile"][b]["wall_s"]
                  for b in batches]
        cells.append("%.0f" % size["train_compile"][batches[-1]]["rss_mib"])
        lines.append("| " + " | ".join(cells) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        sys.exit("bench.py: %s" % error)
