"""Compile time and training speed of every model of the zoo.

For each model of `tools/zoo/export.py --list` (or --models): export it at
its defaults (seed 0), compile its training step with `fastnnc model.onnx -o
train.bin --hparam batch_size=8` (default hparams otherwise: momentum SGD,
fp32, CPU target), recording wall and CPU seconds and peak RSS, then run
train.bin on the mock dataset: one warm-up step, then timed steps (at least
3, and at least ~10 s of them), images/s over the timed steps. No peer runs
here: bench/train has the ratios against PyTorch 2 and ONNX Runtime
Training. Prints a markdown section for bench/RESULTS.md on stdout
(progress on stderr). Run through bench/zoo/run.sh.
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from benchlib import (  # noqa: E402
    fastnnc_line, load_average, log, machine_line, measure_training, run,
    run_with_usage)

BATCH_SIZE = 8
MIN_TIMED_STEPS = 3
MIN_TIMED_SECONDS = 10.0
EXPORT = os.path.join(ROOT, "tools", "zoo", "export.py")


def zoo_models():
    """(name, image size) of every model export.py lists."""
    out = run([sys.executable, EXPORT, "--list"])
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return [(row[0], int(row[1])) for row in rows]


def measure_model(tmp, fastnnc, name):
    onnx_file = os.path.join(tmp, name + ".onnx")
    binary = os.path.join(tmp, name + ".bin")
    run([sys.executable, EXPORT, "--model", name, "-o", onnx_file])
    _, compile_usage = run_with_usage(
        [fastnnc, onnx_file, "-o", binary,
         "--hparam", "batch_size=%d" % BATCH_SIZE])
    os.remove(onnx_file)
    rate, train_rss = measure_training(binary, BATCH_SIZE, MIN_TIMED_STEPS,
                                       MIN_TIMED_SECONDS)
    os.remove(binary)
    return compile_usage, rate, train_rss


def rate_cell(value):
    """images/s to the tenth train.bin prints them with (whole ones from
    100 on)."""
    return "%.0f" % value if value >= 100 else "%.1f" % value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", help="comma-separated (default: all)")
    args = parser.parse_args()
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    models = zoo_models()
    if args.models:
        wanted = args.models.split(",")
        unknown = set(wanted) - {name for name, _ in models}
        if unknown:
            sys.exit("bench.py: unknown model(s) %s (see export.py --list)"
                     % ",".join(sorted(unknown)))
        models = [m for m in models if m[0] in wanted]
    load_before = load_average()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, size in models:
            log("== %s" % name)
            compile_usage, rate, train_rss = measure_model(tmp, fastnnc, name)
            log("%s: compile %.1f s wall, %.1f s CPU, %.0f MiB; train %.2f "
                "img/s, %.0f MiB" % (name, compile_usage["wall_s"],
                                     compile_usage["cpu_s"],
                                     compile_usage["rss_mib"], rate,
                                     train_rss))
            rows.append("| %s | %dx%d | %.1f | %.1f | %.0f | %s | %.0f |" % (
                name, size, size, compile_usage["wall_s"],
                compile_usage["cpu_s"], compile_usage["rss_mib"],
                rate_cell(rate), train_rss))
    load_after = load_average()
    print("## Model zoo: compile time and training step (CPU backend)\n")
    print(machine_line(load_before, load_after))
    print(fastnnc_line(fastnnc))
    print("- Each model at its defaults (tools/zoo, seed 0), `fastnnc "
          "model.onnx -o train.bin --hparam batch_size=%d` (momentum SGD, "
          "fp32; LLVM code generation in parts on 2 threads, so CPU can "
          "exceed wall), then `train.bin --dataset_name=mock`: one warm-up "
          "step, then at least %d timed steps and %.0f s; one run each, "
          "models one after another. Peak RSS from wait4.\n"
          % (BATCH_SIZE, MIN_TIMED_STEPS, MIN_TIMED_SECONDS))
    print("| model | input | compile wall s | compile CPU s | compile MiB | "
          "train step img/s (batch %d) | train.bin MiB |" % BATCH_SIZE)
    print("|---|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        sys.exit("bench.py: %s" % error)
