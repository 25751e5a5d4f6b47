"""Forward throughput of fastnnc's infer.bin against PyTorch eval mode.

For each model: export it from the zoo, compile it with `fastnnc
--mode=infer`, then time infer.bin and PyTorch (the same module definition
and seed, eval mode, torch.no_grad, same batch and thread count) in
alternating rounds within this one run; the best round of each counts.
Prints a markdown section for bench/RESULTS.md on stdout (progress on
stderr). Run through bench/infer/run.sh, which sets up PyTorch's BLAS.
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))

from benchlib import cpu_name, log  # noqa: E402

import torch  # noqa: E402

from fastnn_zoo.onnx_export import build_model  # noqa: E402

# (model, batch, timed runs per round): ~1-3 s per round on this machine.
CASES = [("lenet", 64, 300), ("resnet_v1_50", 8, 6), ("mobilenet_v2", 8, 20)]
# The targets for infer.bin / PyTorch.
TARGETS = {"lenet": 2.0, "resnet_v1_50": 1.2}




def loaded_blas():
    """The BLAS shared objects this process mapped (PyTorch's real peer)."""
    with open("/proc/self/maps") as maps:
        names = {line.split()[-1] for line in maps if ".so" in line}
    blas = sorted(os.path.realpath(n) for n in names
                  if re.search(r"openblas|libblas|mkl", n))
    return ", ".join("`%s`" % n for n in blas) or "none found"


def time_fastnn(binary, repeat, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([binary, "--repeat", str(repeat), "--output-dir",
                          os.path.dirname(binary)], check=True, env=env,
                         capture_output=True, text=True).stdout
    match = re.search(r"([0-9.]+) ms per run", out)
    if not match:
        raise RuntimeError("unexpected infer.bin output: " + out)
    return float(match.group(1))


def time_torch(model, batch, repeat):
    with torch.no_grad():
        model(batch)  # warm-up, as infer.bin does
        start = time.perf_counter()
        for _ in range(repeat):
            model(batch)
        return (time.perf_counter() - start) * 1e3 / repeat


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="2",
                        help="comma-separated thread counts to run")
    parser.add_argument("--models", default=",".join(c[0] for c in CASES))
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    load_before = os.getloadavg()
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    wanted = args.models.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="fastnn-infer-bench-") as tmp:
        for name, batch_size, repeat in CASES:
            if name not in wanted:
                continue
            onnx_file = os.path.join(tmp, name + ".onnx")
            binary = os.path.join(tmp, name + ".bin")
            log("== %s: export, compile" % name)
            subprocess.run([sys.executable,
                            os.path.join(ROOT, "tools", "zoo", "export.py"),
                            "--model", name, "-o", onnx_file], check=True,
                           stdout=subprocess.DEVNULL)
            start = time.perf_counter()
            subprocess.run([fastnnc, onnx_file, "--mode=infer",
                            "--batch-size=%d" % batch_size, "-o", binary],
                           check=True)
            compile_s = time.perf_counter() - start
            model, config = build_model(name, seed=0)
            model.eval()
            size = config["image_size"]
            batch = torch.rand(batch_size, config["channels"], size, size) \
                * 2 - 1
            for threads in thread_counts:
                torch.set_num_threads(threads)
                ours, theirs = [], []
                for r in range(args.rounds):
                    ours.append(time_fastnn(binary, repeat, threads))
                    theirs.append(time_torch(model, batch, repeat))
                    log("  %d threads, round %d: infer.bin %.2f ms, PyTorch "
                        "%.2f ms" % (threads, r + 1, ours[-1], theirs[-1]))
                rows.append((name, batch_size, threads, repeat, compile_s,
                             min(ours), min(theirs)))

    blas = loaded_blas()
    load_after = os.getloadavg()
    lines = [
        "## Inference (CPU backend)",
        "",
        "`bench/infer/run.sh`: each model exported from the zoo (seed 0), "
        "compiled with `fastnnc --mode=infer`, and timed as `infer.bin "
        "--repeat N` (after one warm-up run) against PyTorch eval mode on the "
        "same module definition and weights (`torch.no_grad`, same batch, one "
        "warm-up run), the same thread count each, in %d alternating rounds "
        "within one run; best round of each."
        % args.rounds,
        "",
        "- Machine: %s, %d cores (`%s`); %s. Load average (1 min) %.2f "
        "before, %.2f after the run: the machine is shared, and a third "
        "busy process makes two OpenMP threads wait on each other." % (
            platform.machine(), os.cpu_count(), cpu_name(),
            datetime.date.today().isoformat(), load_before[0],
            load_after[0]),
        "- infer.bin: oneDNN 2.6 (Debian libdnnl), OMP_NUM_THREADS = the "
        "thread count.",
        "- PyTorch %s (Debian python3-torch): torch.set_num_threads(threads), "
        "BLAS loaded: %s (LD_LIBRARY_PATH=%s, OPENBLAS_NUM_THREADS=%s, "
        "OPENBLAS_CORETYPE=%s)."
        % (torch.__version__, blas,
           os.environ.get("LD_LIBRARY_PATH", "unset"),
           os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
           os.environ.get("OPENBLAS_CORETYPE", "unset")),
        "- PyTorch's convolutions: its bundled oneDNN 2.6 "
        "(`mkldnn_convolution`, reordering NCHW to blocked layouts and back "
        "around each call, as infer.bin's kernels do) and, for 1x1 kernels, "
        "im2col + BLAS (`_slow_conv2d_forward`), per torch's profiler.",
        "- Both sides run libgomp's default wait policy. With another busy "
        "process on the two cores, spinning OpenMP workers stall every "
        "oneDNN call to the scheduler tick; `OMP_WAIT_POLICY=passive` keeps "
        "infer.bin at its 1-thread speed then (lenet, measured once: ~86 -> "
        "~17 ms per run) but costs ~5-10% on an idle machine.",
        "",
        "| model | batch | threads | runs/round | fastnnc compile (s) | "
        "infer.bin (ms/run) | infer.bin (img/s) | PyTorch (ms/run) | "
        "PyTorch (img/s) | ratio | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, batch_size, threads, repeat, compile_s, ours, theirs in rows:
        target = TARGETS.get(name) if threads == 2 else None
        lines.append("| %s | %d | %d | %d | %.1f | %.2f | %.1f | %.2f | %.1f "
                     "| %.2f | %s |" % (
                         name, batch_size, threads, repeat, compile_s, ours,
                         batch_size * 1e3 / ours, theirs,
                         batch_size * 1e3 / theirs, theirs / ours,
                         ">= %.1f" % target if target else "-"))
    print("\n".join(lines))




if __name__ == "__main__":
    main()
