"""Training throughput of fastnnc's train.bin against PyTorch.

For each model: export it from the zoo, compile its training step with
fastnnc (momentum SGD, fp32, no weight decay), then run train.bin on the
mock dataset and PyTorch (the same module definition and seed; forward,
cross-entropy, backward, torch.optim.SGD momentum step on a fixed random
batch) with the same batch and thread count, alternating, each in its own
process so that its peak RSS is its own. Steps after a warm-up count. Also
prints the achieved GFLOP/s (3x the forward's multiply-adds x 2 per image:
forward, data and weight gradients) as a share of the sgemm peak measured in
this run. Prints a markdown section for bench/RESULTS.md on stdout
(progress on stderr). Run through bench/train/run.sh, which sets up
PyTorch's BLAS.
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

from benchlib import cpu_name, log, run_measured  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from fastnn_zoo.onnx_export import build_model  # noqa: E402

# (model, batch, timed steps): a few seconds per side and round here.
CASES = [("lenet", 64, 60), ("cifarnet", 64, 40), ("resnet_v1_50", 8, 6)]
WARMUP_STEPS = 2
# The targets for train.bin / PyTorch images per second.
TARGETS = {"lenet": 1.5, "cifarnet": 1.5, "resnet_v1_50": 1.2}


def time_fastnn(binary, steps, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    # One log window of warm-up steps, then one of timed steps.
    out, rss = run_measured(
        [binary, "--dataset_name=mock", "--stop_at_step=%d"
         % (WARMUP_STEPS + steps), "--log_loss_every_n_iters=%d" % steps,
         "--hooks=StopAtStepHook,LoggingTensorHook"], env)
    rates = [float(r) for r in re.findall(r"images/s=([0-9.]+)", out)]
    if len(rates) < 2:
        raise RuntimeError("unexpected train.bin output: " + out)
    return rates[-1], rss


def torch_worker(name, batch_size, steps, threads):
    torch.set_num_threads(threads)
    model, config = build_model(name, seed=0)
    model.train()
    size = config["image_size"]
    images = torch.rand(batch_size, config["channels"], size, size) * 2 - 1
    labels = torch.randint(0, config["num_classes"], (batch_size,))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)

    def step():
        output = model(images)
        logits = output[0] if isinstance(output, tuple) else output
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    for _ in range(WARMUP_STEPS):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print("images/s=%.3f" % (steps * batch_size /
                             (time.perf_counter() - start)))


def time_torch(name, batch_size, steps, threads):
    out, rss = run_measured(
        [sys.executable, __file__, "--torch-worker", name, str(batch_size),
         str(steps), str(threads)])
    return float(re.search(r"images/s=([0-9.]+)", out).group(1)), rss


def forward_macs(name):
    """Multiply-adds of one image's forward pass (convolutions, matmuls)."""
    model, config = build_model(name, seed=0)
    model.eval()
    macs = [0]

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            kernel = module.weight[0].numel()
            macs[0] += output.numel() * kernel
        elif isinstance(module, torch.nn.Linear):
            macs[0] += output.numel() * module.in_features

    for module in model.modules():
        module.register_forward_hook(count)
    size = config["image_size"]
    with torch.no_grad():
        model(torch.zeros(1, config["channels"], size, size))
    return macs[0]


def sgemm_worker(threads):
    """Prints the best fp32 2048^2 matrix-product GFLOP/s of PyTorch's BLAS."""
    torch.set_num_threads(threads)
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    torch.mm(a, b)
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * 2048 ** 3 / (time.perf_counter() - start) / 1e9)
    print(best)


def sgemm_peak(threads):
    """The machine's sgemm peak on `threads` cores: in a process of its own
    whose OpenBLAS may use them all (run.sh gives PyTorch's training runs
    one BLAS thread, its best configuration here, which would make this a
    one-core peak)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, __file__, "--sgemm-worker",
                          str(threads)], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return float(out.split()[-1])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--sgemm-worker":
        sgemm_worker(int(sys.argv[2]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--torch-worker":
        name, batch, steps, threads = sys.argv[2:6]
        torch_worker(name, int(batch), int(steps), int(threads))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", default=",".join(c[0] for c in CASES))
    args = parser.parse_args()
    load_before = os.getloadavg()
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    wanted = args.models.split(",")
    peak = sgemm_peak(args.threads)
    log("sgemm peak: %.1f GFLOP/s on %d threads" % (peak, args.threads))
    rows = []
    with tempfile.TemporaryDirectory(prefix="fastnn-train-bench-") as tmp:
        for name, batch_size, steps in CASES:
            if name not in wanted:
                continue
            onnx_file = os.path.join(tmp, name + ".onnx")
            binary = os.path.join(tmp, name + ".bin")
            log("== %s: export, compile" % name)
            subprocess.run([sys.executable,
                            os.path.join(ROOT, "tools", "zoo", "export.py"),
                            "--model", name, "-o", onnx_file], check=True,
                           stdout=subprocess.DEVNULL)
            _, config = build_model(name, seed=0)
            start = time.perf_counter()
            subprocess.run([fastnnc, onnx_file, "-o", binary,
                            "--hparam", "batch_size=%d" % batch_size,
                            "--hparam", "optimizer=momentum",
                            "--hparam", "weight_decay=0",
                            "--hparam", "use_fp16=False",
                            "--hparam", "num_classes=%d"
                            % config["num_classes"]], check=True)
            compile_s = time.perf_counter() - start
            flops_per_image = 3 * 2 * forward_macs(name)
            ours, theirs = [], []
            for r in range(args.rounds):
                ours.append(time_fastnn(binary, steps, args.threads))
                theirs.append(time_torch(name, batch_size, steps,
                                         args.threads))
                log("  round %d: train.bin %.1f img/s (%.0f MiB), PyTorch "
                    "%.1f img/s (%.0f MiB)" % (r + 1, ours[-1][0],
                                               ours[-1][1], theirs[-1][0],
                                               theirs[-1][1]))
            best_ours = max(rate for rate, _ in ours)
            best_theirs = max(rate for rate, _ in theirs)
            rows.append((name, batch_size, steps, compile_s, best_ours,
                         max(rss for _, rss in ours), best_theirs,
                         max(rss for _, rss in theirs),
                         best_ours * flops_per_image / 1e9))

    load_after = os.getloadavg()
    lines = [
        "## Training (CPU backend)",
        "",
        "`bench/train/run.sh`: each model exported from the zoo (seed 0), "
        "its training step compiled with fastnnc (momentum SGD, fp32, no "
        "weight decay) and run as `train.bin --dataset_name=mock`, against "
        "PyTorch on the same module definition (forward, cross-entropy, "
        "backward, `torch.optim.SGD` momentum step on a fixed batch), same "
        "batch, %d threads each, each side in its own process, %d warm-up "
        "steps, in %d alternating rounds within one run; best round of "
        "each, peak RSS the largest." % (args.threads, WARMUP_STEPS,
                                         args.rounds),
        "",
        "- Machine: %s, %d cores (`%s`); %s. Load average (1 min) %.2f "
        "before, %.2f after the run." % (
            platform.machine(), os.cpu_count(), cpu_name(),
            datetime.date.today().isoformat(), load_before[0],
            load_after[0]),
        "- sgemm peak (torch.mm 2048^2, OpenBLAS on %d threads, this run): "
        "%.1f GFLOP/s; train.bin's GFLOP/s counts 3 x 2 x the forward's "
        "multiply-adds per image." % (args.threads, peak),
        "- PyTorch %s (Debian python3-torch), BLAS through LD_LIBRARY_PATH=%s "
        "(OPENBLAS_NUM_THREADS=%s)." % (
            torch.__version__, os.environ.get("LD_LIBRARY_PATH", "unset"),
            os.environ.get("OPENBLAS_NUM_THREADS", "unset")),
        "",
        "| model | batch | timed steps | compile (s) | train.bin (img/s) | "
        "train.bin peak RSS (MiB) | PyTorch (img/s) | PyTorch peak RSS "
        "(MiB) | ratio | target | train.bin GFLOP/s (share of sgemm peak) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, batch_size, steps, compile_s, ours, our_rss, theirs,
         their_rss, gflops) in rows:
        lines.append("| %s | %d | %d | %.1f | %.1f | %.0f | %.1f | %.0f | "
                     "%.2f | >= %.1f | %.1f (%.0f%%) |" % (
                         name, batch_size, steps, compile_s, ours, our_rss,
                         theirs, their_rss, ours / theirs, TARGETS[name],
                         gflops, 100 * gflops / peak))
    print("\n".join(lines))




if __name__ == "__main__":
    main()
