"""Data-parallel training with `mpirun -np 2`: fused against unfused
gradient allreduces.

For each model: export it from the zoo, compile its training step with
fastnnc at several allreduce_bucket_bytes (0: one collective per gradient
tensor; 4 MiB; the 25 MiB default), then run train.bin as a job of two
workers on the mock dataset, one core (OMP_NUM_THREADS=1) each. A log window
of warm-up steps is followed by one of timed steps; the last step's
timeline (worker 0) gives the collective calls per step and the time the
compute waited for them. A single-process run of the default train.bin
shows what the collectives cost without mpirun. Prints a markdown section
for bench/RESULTS.md on stdout (progress on stderr).
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import cpu_name, log  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))

from fastnn_zoo.onnx_export import build_model  # noqa: E402

# (model, batch per worker): a second or so per step on one core.
CASES = [("resnet_v1_50", 4), ("mobilenet_v2", 8)]
MIB = 1 << 20
THRESHOLDS = [0, 4 * MIB, 25 * MIB]
DEFAULT = 25 * MIB
WINDOW = 3




def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s\n%s" % (
            " ".join(command), result.returncode, result.stdout[-2000:],
            result.stderr[-2000:]))
    return result.stdout


def measure(binary, hparams, workers, work, mpirun_flags):
    """Means over the timed steps of worker 0's timelines: milliseconds per
    step, collectives started per step, milliseconds in the collectives'
    spans (starts and waits) and in their waits."""
    train_dir = os.path.join(work, "run")
    shutil.rmtree(train_dir, ignore_errors=True)
    command = [binary, "--hparams", hparams, "--train_dir=" + train_dir,
               "--stop_at_step=%d" % (2 * WINDOW), "--profile_every_n_iters=1",
               "--save_checkpoints_steps=0", "--hooks=StopAtStepHook,ProfilerHook"]
    if workers > 1:
        command = (["mpirun"] + mpirun_flags.split() +
                   ["-np", str(workers), "-x", "OMP_NUM_THREADS=1"] + command)
    run(command, env=dict(os.environ, OMP_NUM_THREADS="1"))
    totals = [0.0, 0.0, 0.0, 0.0]
    for step in range(WINDOW + 1, 2 * WINDOW + 1):
        timeline = os.path.join(train_dir, "timeline-step-%d.json" % step)
        spans = [e for e in json.load(open(timeline))["traceEvents"]
                 if e["ph"] == "X"]
        ops = [(e["name"].split()[0], e["dur"]) for e in spans]
        totals[0] += sum(e["dur"] for e in spans if e["cat"] == "step") / 1000.0
        totals[1] += sum(1 for name, _ in ops if name == "allreduce")
        totals[2] += sum(d for name, d in ops
                         if name in ("allreduce", "allreduce_wait")) / 1000.0
        totals[3] += sum(d for name, d in ops if name == "allreduce_wait") / 1000.0
    step_ms, calls, spent_ms, waited_ms = (t / WINDOW for t in totals)
    return step_ms, int(round(calls)), spent_ms, waited_ms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--mpirun-flags",
                        default="--allow-run-as-root --oversubscribe")
    parser.add_argument("--models", default=",".join(m for m, _ in CASES))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cases = [(m, b) for m, b in CASES if m in args.models.split(",")]
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    rows, single = [], []
    with tempfile.TemporaryDirectory(prefix="fastnn-bench-dist-") as work:
        for model_name, batch in cases:
            model, config = build_model(model_name)
            gradient_bytes = 4 * sum(p.numel() for p in model.parameters())
            tensors = sum(1 for _ in model.parameters())
            onnx_path = os.path.join(work, model_name + ".onnx")
            run(["/usr/bin/python3", os.path.join(ROOT, "tools", "zoo", "export.py"),
                 "--model", model_name, "-o", onnx_path])
            hparams = os.path.join(work, "hp.txt")
            with open(hparams, "w") as f:
                f.write("dataset_name=mock\nuse_fp16=False\noptimizer=momentum\n"
                        "weight_decay=0.00004\nnum_classes=%d\n"
                        % config["num_classes"])
            binaries = {}
            for threshold in THRESHOLDS:
                binaries[threshold] = os.path.join(work, "train-%d.bin" % threshold)
                log("%s: compiling with allreduce_bucket_bytes=%d" % (model_name, threshold))
                run([fastnnc, onnx_path, "-o", binaries[threshold], "--hparams", hparams,
                     "--hparam=batch_size=%d" % batch,
                     "--hparam=allreduce_bucket_bytes=%d" % threshold])
            # Rounds alternate the variants; each keeps its fastest round, the
            # one least disturbed by whatever else runs on the machine.
            best = {}
            for round_index in range(args.rounds):
                for threshold in THRESHOLDS:
                    log("%s: 2 workers, allreduce_bucket_bytes=%d, round %d"
                        % (model_name, threshold, round_index + 1))
                    result = measure(binaries[threshold], hparams, 2, work,
                                     args.mpirun_flags)
                    if threshold not in best or result[0] < best[threshold][0]:
                        best[threshold] = result
            for threshold in THRESHOLDS:
                binary = binaries[threshold]
                step_ms, calls, spent_ms, waited_ms = best[threshold]
                # Plus one for the loss and accuracies.
                expected = 1 + (tensors if threshold == 0
                                else math.ceil(gradient_bytes / threshold))
                rows.append((model_name, batch, threshold, gradient_bytes, tensors,
                             calls, expected, step_ms, 2 * batch * 1000.0 / step_ms,
                             waited_ms))
                log("  %d collectives/step (expected %d), %.0f ms/step, waited %.1f ms"
                    % (calls, expected, step_ms, waited_ms))
                if threshold == DEFAULT:
                    log("%s: 1 process" % model_name)
                    one_ms, one_calls, one_spent, _ = measure(
                        binary, hparams, 1, work, args.mpirun_flags)
                    single.append((model_name, batch, one_ms, one_calls, one_spent))
                    log("  %.0f ms/step, %.3f ms in %d collectives"
                        % (one_ms, one_spent, one_calls))

    print("## Data-parallel training (mpirun -np 2, CPU backend)")
    print()
    print("Measured %s on %s (%d cores; OpenMPI over shared memory), two workers "
          "with one core each (OMP_NUM_THREADS=1), mock data, momentum SGD, fp32; "
          "%d warm-up steps, then the mean of %d timed steps' timelines (worker "
          "0), the fastest of %d alternating rounds; "
          "load average at the end %.1f (the machine is shared); "
          "`bench/dist/run.sh`."
          % (datetime.date.today().isoformat(), platform.node(), os.cpu_count(),
             WINDOW, WINDOW, args.rounds, os.getloadavg()[0]))
    print()
    print("Collectives per step count `allreduce` spans: the gradient buckets "
          "plus one for the loss and "
          "accuracies. Expected: one per gradient tensor unfused, else "
          "ceil(gradient bytes / bucket bytes), plus one; a bucket closes before "
          "the tensor that would overflow it, and a tensor larger than a bucket "
          "travels alone, so the greedy count can be a little higher. "
          "\"Waited\" is the time the step spent in `fnn_allreduce_wait`, the "
          "communication the backward pass did not hide.")
    print()
    print("| model | batch/worker | bucket bytes | gradient MiB (tensors) "
          "| collectives/step | expected | ms/step | images/s (job) "
          "| waited ms/step |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (model, batch, threshold, grad, tensors, calls, expected, step_ms, rate,
         waited) in rows:
        print("| %s | %d | %s | %.1f (%d) | %d | %s | %.0f | %.1f | %.1f |" % (
            model, batch, "0 (unfused)" if threshold == 0 else "%d MiB" % (threshold // MIB),
            grad / MIB, tensors, calls,
            str(expected),
            step_ms, rate, waited))
    print()
    print("The workers share memory here, so one collective's latency is "
          "microseconds; what a bucket costs is CPU work (copying and summing "
          "it) on the cores the kernels keep busy, and most of \"waited\" is "
          "the other worker arriving later. Step times move by tens of percent "
          "between runs with the load of the other jobs on the two cores; the "
          "collective counts are exact.")
    print()
    print("Without mpirun (one process, one core, the default buckets) the "
          "collectives return at once:")
    print()
    print("| model | batch | ms/step | collectives/step | ms/step in allreduce spans |")
    print("|---|---|---|---|---|")
    for model, batch, step_ms, calls, spent in single:
        print("| %s | %d | %.0f | %d | %.3f |" % (model, batch, step_ms, calls, spent))


if __name__ == "__main__":
    main()
