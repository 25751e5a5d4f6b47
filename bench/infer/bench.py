"""Forward throughput of fastnnc's infer.bin against ONNX Runtime.

For each model: export it from the zoo (seed 0), compile it with `fastnnc
--mode=infer`, then time infer.bin and ONNX Runtime 1.32 (.venv-torch2, CPU
execution provider, all graph optimizations) on the same ONNX file, same
batch and thread count, in alternating rounds within this one run, each
round a process of its own; the best round of each counts. infer.bin's
GFLOP/s (2 x the forward's multiply-adds per image) is shown as a share of
the fp32 matrix-product peak measured in the same run. Prints a
markdown section for bench/RESULTS.md on stdout (progress on stderr). Run
through bench/infer/run.sh.
"""
import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))

from benchlib import (  # noqa: E402
    fastnnc_line, forward_macs, load_average, log, machine_line,
    peer_versions, require_peers, run, run_peer, time_inference)

# (model, batch, timed runs per round): ~1-3 s per round on this machine.
CASES = [("lenet", 64, 300), ("resnet_v1_50", 8, 6), ("mobilenet_v2", 8, 20)]
# The target for infer.bin / ONNX Runtime at 2 threads.
TARGET = 1.2


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="2",
                        help="comma-separated thread counts to run")
    parser.add_argument("--models", default=",".join(c[0] for c in CASES))
    args = parser.parse_args()
    require_peers()
    thread_counts = [int(t) for t in args.threads.split(",")]
    load_before = load_average()
    peaks = {t: run_peer("torch", ["gemm-peak", str(t), "fp32"], t)[0]
             for t in thread_counts}
    log("fp32 matrix-product peaks: %s GFLOP/s" % peaks)
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    wanted = args.models.split(",")
    versions = peer_versions()[:1]  # ONNX Runtime is .venv-torch2's
    rows = []
    with tempfile.TemporaryDirectory(prefix="fastnn-infer-bench-") as tmp:
        # Every binary first: fastnnc links the build directory's runtime
        # libraries, which other engineers' builds replace while we measure.
        compiled = []
        for name, batch_size, repeat in CASES:
            if name not in wanted:
                continue
            onnx_file = os.path.join(tmp, name + ".onnx")
            binary = os.path.join(tmp, name + ".bin")
            log("== %s: export, compile" % name)
            run([sys.executable,
                 os.path.join(ROOT, "tools", "zoo", "export.py"),
                 "--model", name, "-o", onnx_file])
            start = time.perf_counter()
            run([fastnnc, onnx_file, "--mode=infer",
                 "--batch-size=%d" % batch_size, "-o", binary])
            compiled.append((name, batch_size, repeat, onnx_file, binary,
                             time.perf_counter() - start))
        for name, batch_size, repeat, onnx_file, binary, compile_s in \
                compiled:
            for threads in thread_counts:
                ours, theirs = [], []
                for r in range(args.rounds):
                    ours.append(time_inference(binary, repeat, threads)[0])
                    theirs.append(run_peer("torch", [
                        "ort-infer", onnx_file, str(batch_size), str(repeat),
                        str(threads)], threads)[0])
                    log("  %s, %d threads, round %d: infer.bin %.2f ms, ONNX "
                        "Runtime %.2f ms" % (name, threads, r + 1, ours[-1],
                                             theirs[-1]))
                rows.append((name, batch_size, threads, repeat, compile_s,
                             min(ours), min(theirs), forward_macs(name)))
    load_after = load_average()
    lines = [
        "## Inference (CPU backend)",
        "",
        "`bench/infer/run.sh`: each model exported from the zoo (seed 0), "
        "compiled with `fastnnc --mode=infer`, and timed as `infer.bin "
        "--repeat N` (after one warm-up run) against ONNX Runtime's "
        "`InferenceSession` on the same ONNX file (CPU execution provider, "
        "ORT_ENABLE_ALL, intra_op_num_threads = the thread count, "
        "inter_op_num_threads 1, one warm-up run; batch norm without its "
        "training-only running-statistic outputs and dropout without its "
        "training flag, which is what `--mode=infer` makes of the training "
        "export), the same random batch shape, in %d alternating rounds "
        "within one run, each round a process of its own; best round of "
        "each." % args.rounds,
        "",
        machine_line(load_before, load_after),
        fastnnc_line(fastnnc),
        "- infer.bin: oneDNN 2.6 (Debian libdnnl), OMP_NUM_THREADS = the "
        "thread count.",
    ] + ["- %s." % v for v in versions] + [
        "- fp32 matrix-product peak of PyTorch 2's kernels (2048^2, best of "
        "torch.mm and oneDNN 3.13's linear, this run): %s." % ", ".join(
            "%.0f GFLOP/s at %d thread(s)" % (peaks[t], t)
            for t in thread_counts),
        "",
        "| model | batch | threads | runs/round | fastnnc compile (s) | "
        "infer.bin (ms/run) | infer.bin (img/s) | ONNX Runtime (ms/run) | "
        "ONNX Runtime (img/s) | ratio | target | infer.bin GFLOP/s (share "
        "of peak) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, batch_size, threads, repeat, compile_s, ours, theirs,
         macs) in rows:
        gflops = 2 * macs * batch_size / (ours / 1e3) / 1e9
        lines.append("| %s | %d | %d | %d | %.1f | %.2f | %.1f | %.2f | %.1f "
                     "| %.2f | %s | %.0f (%.0f%%) |" % (
                         name, batch_size, threads, repeat, compile_s, ours,
                         batch_size * 1e3 / ours, theirs,
                         batch_size * 1e3 / theirs, theirs / ours,
                         ">= %.1f" % TARGET if threads == 2 else "-",
                         gflops, 100 * gflops / peaks[threads]))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
