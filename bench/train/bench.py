"""Training throughput of fastnnc's train.bin against the peers users pick.

For each model: export it from the zoo (seed 0), compile its training step
with fastnnc, then run, alternating, in rounds within this one run, each in
its own process so that its peak RSS is its own, with the same batch and
thread count:
- train.bin (momentum SGD, no weight decay) on the mock dataset, against
  PyTorch 2 (.venv-torch2) on the same module definition (forward,
  cross-entropy + 0.4 x the aux head's, backward, `torch.optim.SGD`
  momentum step on a fixed random batch), eager and torch.compile
  (inductor), in fp32 and, for the bf16 rows, train.bin with
  precision=bf16 against `torch.autocast("cpu", torch.bfloat16)`;
- train.bin compiled with plain SGD (optimizer=sgd) against ONNX Runtime
  Training (.venv-ort-training) on the same ONNX file with its SGD (its
  training API offers SGD without momentum and AdamW only), fp32.
Steps after a warm-up count (torch.compile compiles in the warm-up). Also
prints train.bin's GFLOP/s (3x the forward's multiply-adds x 2 per image:
forward, data and weight gradients) as a share of the matrix-product peak
of PyTorch's kernels measured in this run. Prints a markdown section for
bench/RESULTS.md on stdout (progress on stderr). Run through
bench/train/run.sh.
"""
import argparse
import os
import re
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))

from benchlib import (  # noqa: E402
    fastnnc_line, forward_macs, import_rss, load_average, log, machine_line,
    peer_versions, require_peers, run, run_measured, run_peer)
from peers import WARMUP_STEPS  # noqa: E402

from fastnn_zoo.onnx_export import build_model  # noqa: E402

# (model, batch, timed steps): a few seconds per side and round here.
CASES = [("lenet", 64, 60), ("resnet_v1_50", 8, 6), ("mobilenet_v2", 8, 10),
         ("inception_v3", 4, 4)]
# The issue's targets for train.bin / PyTorch 2's best of eager and
# torch.compile, images per second.
TARGET = 1.5
PYTORCH_MODES = ("eager", "compile")
PEER_SIDES = PYTORCH_MODES + ("ort-training",)


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


def compile_fastnn(fastnnc, onnx_file, binary, batch_size, classes,
                   optimizer, precision):
    start = time.perf_counter()
    run([fastnnc, onnx_file, "-o", binary,
         "--hparam", "batch_size=%d" % batch_size,
         "--hparam", "optimizer=" + optimizer,
         "--hparam", "weight_decay=0",
         "--hparam", "precision=" + precision,
         "--hparam", "num_classes=%d" % classes])
    return time.perf_counter() - start


def prepare_model(args, tmp, fastnnc, name, batch_size, steps):
    """Exports and compiles one model's variants (train.bin and the ORT
    Training artifacts). Returns the compile seconds per precision, a
    measuring function per (side, precision) and the peers that failed
    already."""
    onnx_file = os.path.join(tmp, name + ".onnx")
    log("== %s: export, compile" % name)
    run([sys.executable, os.path.join(ROOT, "tools", "zoo", "export.py"),
         "--model", name, "-o", onnx_file])
    _, config = build_model(name, seed=0)
    threads = args.threads
    # A fresh inductor cache: round 1's warm-up compiles cold, later
    # rounds' warm-ups hit the cache (outside the timed steps either way).
    inductor = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(tmp, "inductor")}
    compile_s, variants = {}, {}

    def fastnn(optimizer, precision):
        binary = os.path.join(tmp, "%s_%s_%s.bin" % (name, optimizer,
                                                      precision))
        seconds = compile_fastnn(fastnnc, onnx_file, binary, batch_size,
                                 config["num_classes"], optimizer, precision)
        return seconds, lambda: time_fastnn(binary, steps, threads)

    def pytorch(mode, precision):
        return lambda: run_peer("torch", [
            "torch-train", name, str(batch_size), str(steps), str(threads),
            mode, precision], threads, inductor)

    for precision in args.precisions:
        compile_s[precision], variants[("train.bin", precision)] = fastnn(
            "momentum", precision)
        for mode in PYTORCH_MODES:
            variants[(mode, precision)] = pytorch(mode, precision)
    # A peer that fails on a model is reported (its last error line), not
    # fatal; train.bin failing is.
    failures = {}
    if "fp32" in args.precisions:
        _, variants[("train.bin sgd", "fp32")] = fastnn("sgd", "fp32")
        artifacts = os.path.join(tmp, name + "-ort-training")
        try:
            run_peer("ort-training", ["ort-artifacts", onnx_file, artifacts],
                     threads)
            variants[("ort-training", "fp32")] = lambda: run_peer(
                "ort-training", ["ort-train", onnx_file, artifacts,
                                 str(batch_size), str(steps), str(threads)],
                threads)
        except RuntimeError as error:
            failures[("ort-training", "fp32")] = str(error)
    return compile_s, variants, failures


def measure_model(args, variants, failures):
    """Measures one model's variants in alternating rounds; returns, per
    (side, precision), the list of (images/s, peak RSS MiB) of each round,
    and adds the peers that failed to `failures`."""
    results = {key: [] for key in variants}
    for r in range(args.rounds):
        for key, measure in variants.items():
            if key in failures:
                continue
            try:
                results[key].append(measure())
            except RuntimeError as error:
                if key[0] not in PEER_SIDES:
                    raise
                failures[key] = str(error)
                log("  %s %s failed: %s" % (key + (error,)))
        log("  round %d: %s" % (r + 1, ", ".join(
            "%s %s %.1f img/s (%.0f MiB)" % (key + results[key][-1])
            for key in variants if key not in failures)))
    return results


def best(results, key):
    return max(rate for rate, _ in results[key]) if results.get(key) \
        else None


def share_ceilings(peaks):
    """The GFLOP/s each precision's share of peak divides by: its own
    matrix-product peak, but for bf16 at least the fp32 one. A CPU without
    bf16 matrix instructions (AVX2) can always compute a bf16 product in
    fp32 (train.bin converts there), while PyTorch's bf16 product on it is
    a scalar fallback (0.1-0.3 GFLOP/s), which made the share read
    15000-35000%."""
    return {p: max(peak, peaks["fp32"]) for p, peak in peaks.items()}


def ceiling_text(peaks):
    """How the share column's ceiling was chosen in this run."""
    if peaks.get("bf16", 0) >= peaks["fp32"]:
        return "its precision's peak"
    if "bf16" in peaks:
        return ("its precision's peak, for bf16 the fp32 one (this CPU's "
                "bf16 product is slower than its fp32 one: no bf16 matrix "
                "instructions)")
    return "the fp32 peak"


def peak_rss(results, key):
    return max(rss for _, rss in results[key]) if results.get(key) \
        else None


def cell(value, failed=False, form="%.1f"):
    if failed:
        return "fails (below)"
    return form % value if value is not None else "-"


def ratio(ours, theirs):
    return "%.2f" % (ours / theirs) if ours and theirs else "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--models", default=",".join(c[0] for c in CASES))
    parser.add_argument("--precisions", default="fp32,bf16",
                        type=lambda text: text.split(","))
    args = parser.parse_args()
    require_peers()
    load_before = load_average()
    fastnnc = os.path.join(args.build_dir, "bin", "fastnnc")
    wanted = args.models.split(",")
    versions = peer_versions()
    # fp32 always: it is also the bf16 rows' ceiling where bf16 products
    # run slower than fp32 ones.
    peaks = {p: run_peer("torch", ["gemm-peak", str(args.threads), p],
                         args.threads)[0]
             for p in sorted(set(args.precisions) | {"fp32"})}
    log("matrix-product peaks: %s GFLOP/s" % peaks)
    ceiling = share_ceilings(peaks)
    torch_import = import_rss("torch", "torch")
    ort_import = import_rss("ort-training", "onnxruntime.training")
    measured = []
    with tempfile.TemporaryDirectory(prefix="fastnn-train-bench-") as tmp:
        # Every binary first: fastnnc links the build directory's runtime
        # libraries, which other engineers' builds replace while we measure.
        prepared = [(name, batch_size, steps) + prepare_model(
            args, tmp, fastnnc, name, batch_size, steps)
            for name, batch_size, steps in CASES if name in wanted]
        for name, batch_size, steps, compile_s, variants, failures in \
                prepared:
            log("== %s: measure" % name)
            measured.append((name, batch_size, steps, compile_s,
                             measure_model(args, variants, failures),
                             failures))
    load_after = load_average()

    lines = [
        "## Training (CPU backend)",
        "",
        "`bench/train/run.sh`: each model exported from the zoo (seed 0), "
        "its training step compiled with fastnnc and run as `train.bin "
        "--dataset_name=mock`; the peers run the same module definition "
        "(PyTorch 2, eager and torch.compile) or the same ONNX file (ONNX "
        "Runtime Training) on a fixed random batch; same batch, %d threads "
        "each (OMP_NUM_THREADS, torch.set_num_threads, "
        "intra_op_num_threads), each side in its own process, %d warm-up "
        "steps (torch.compile compiles in them; inductor in-process, "
        "TORCHINDUCTOR_COMPILE_THREADS=1), then the timed steps, in %d "
        "alternating rounds within one run; best round of each, peak RSS "
        "the largest." % (args.threads, WARMUP_STEPS, args.rounds),
        "- Against PyTorch 2: momentum SGD (lr 0.001, momentum 0.9, no "
        "weight decay) on both sides, cross-entropy + 0.4 x the aux head's; "
        "bf16 rows: train.bin `precision=bf16` against "
        "`torch.autocast(\"cpu\", dtype=torch.bfloat16)` (fp32 master "
        "weights on both sides).",
        "- Against ONNX Runtime Training: plain SGD on both sides "
        "(train.bin `optimizer=sgd`; ORT's training API offers SGD without "
        "momentum and AdamW only), fp32, the artifacts generated from the "
        "ONNX file train.bin is compiled from (every float initializer but "
        "batch norm's running statistics trained; "
        "`onnxblock.loss.CrossEntropyLoss`).",
        "",
        machine_line(load_before, load_after),
        fastnnc_line(fastnnc),
        "- train.bin: oneDNN 2.6 (Debian libdnnl), OMP_NUM_THREADS = the "
        "thread count.",
    ] + ["- %s." % v for v in versions] + [
        "- Matrix-product peak of PyTorch 2's kernels (2048^2, best of "
        "torch.mm and oneDNN 3.13's linear, %d "
        "threads, this run): %s; train.bin's GFLOP/s counts 3 x 2 x the "
        "forward's multiply-adds per image; its share is of %s." % (
            args.threads, ", ".join("%s %.1f GFLOP/s" % (p, peaks[p])
                                    for p in sorted(peaks)),
            ceiling_text(peaks)),
        "",
        "| model | batch | precision | timed steps | fastnnc compile (s) | "
        "train.bin (img/s) | PyTorch 2 eager (img/s) | torch.compile "
        "(img/s) | ratio to eager | ratio to torch.compile | ratio to best "
        "PyTorch 2 | target | train.bin SGD (img/s) | ORT Training SGD "
        "(img/s) | ratio to ORT Training | train.bin GFLOP/s (share of "
        "peak) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, batch_size, steps, compile_s, results, failures in measured:
        flops_per_image = 3 * 2 * forward_macs(name)
        for precision in args.precisions:
            rate = {side: best(results, (side, precision)) for side in
                    ("train.bin", "train.bin sgd") + PEER_SIDES}
            failed = {side: (side, precision) in failures
                      for side in PEER_SIDES}
            ours = rate["train.bin"]
            pytorch = max([r for r in (rate["eager"], rate["compile"]) if r]
                          or [None])
            gflops = ours * flops_per_image / 1e9
            lines.append(
                "| %s | %d | %s | %d | %.1f | %.1f | %s | %s | %s | %s | %s "
                "| >= %.1f | %s | %s | %s | %.0f (%.0f%%) |" % (
                    name, batch_size, precision, steps, compile_s[precision],
                    ours, cell(rate["eager"], failed["eager"]),
                    cell(rate["compile"], failed["compile"]),
                    ratio(ours, rate["eager"]), ratio(ours, rate["compile"]),
                    ratio(ours, pytorch), TARGET, cell(rate["train.bin sgd"]),
                    cell(rate["ort-training"], failed["ort-training"]),
                    ratio(rate["train.bin sgd"], rate["ort-training"]),
                    gflops, 100 * gflops / ceiling[precision]))
    if "fp32" in args.precisions:
        lines += [
            "",
            "Peak RSS (MiB), fp32, the same processes. A peer's peak "
            "includes its imports (nothing subtracted): `import torch` alone "
            "peaks at %.0f MiB here, `import onnxruntime.training` (which "
            "imports torch) at %.0f MiB." % (torch_import, ort_import),
            "",
            "| model | batch | train.bin | train.bin SGD | PyTorch 2 eager | "
            "torch.compile | ORT Training SGD | train.bin SGD / ORT Training "
            "| train.bin / PyTorch 2 eager |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name, batch_size, steps, compile_s, results, failures in measured:
            rss = {side: peak_rss(results, (side, "fp32")) for side in
                   ("train.bin", "train.bin sgd") + PEER_SIDES}
            failed = {side: (side, "fp32") in failures for side in PEER_SIDES}
            lines.append("| %s | %d | %.0f | %.0f | %s | %s | %s | %s | %s |"
                         % (name, batch_size, rss["train.bin"],
                            rss["train.bin sgd"],
                            cell(rss["eager"], failed["eager"], "%.0f"),
                            cell(rss["compile"], failed["compile"], "%.0f"),
                            cell(rss["ort-training"], failed["ort-training"],
                                 "%.0f"),
                            ratio(rss["train.bin sgd"], rss["ort-training"]),
                            ratio(rss["train.bin"], rss["eager"])))
    notes = ["- %s %s, %s: `%s`" % (name, key[1], key[0], error)
             for name, _, _, _, _, failures in measured
             for key, error in sorted(failures.items())]
    if notes:
        lines += ["", "Peers that failed, with their last error line:", ""] \
            + notes
    print("\n".join(lines))


if __name__ == "__main__":
    main()
