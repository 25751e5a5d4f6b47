"""The CUDA lowering's generated kernels computed on the host (CUDA backend
issue: kernel math tested without a GPU).

Compiles a zoo model twice, `--target=cpu` (in the CUDA target's layout)
and `--target=cuda --emulate-gpu-kernels` (every generated loop nest outlined into a GPU
kernel as for the GPU, then run as a host loop over that kernel's blocks
and threads, the library calls on the CPU runtime), trains both for one sunk
loop of 2 steps on one fixed mock batch and runs both infer.bin on the same
images. The CUDA lowering's layouts, fusion limits and outlined kernels
(thread linearisation, guards, captured values, the one-thread kernels of a
sunk loop's bookkeeping) must give the CPU build's losses, weight updates
(every trained tensor's change, as --export-onnx writes it) and outputs up
to summation order: relative difference at most --tolerance.
"""
import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper

from check_overfit import export, zoo_arguments


def compile_model(fastnnc, onnx_file, output, flags):
    subprocess.run([fastnnc, str(onnx_file), "-o", str(output)] + flags,
                   check=True)


def train_losses(executable, hparams, train_dir):
    ran = subprocess.run([str(executable), "--hparams", str(hparams),
                          "--train_dir=" + str(train_dir)],
                         capture_output=True, text=True, timeout=1800)
    if ran.returncode != 0:
        sys.exit(f"FAILED: {executable}: {ran.stderr.strip()}")
    return [float(m.group(1))
            for m in re.finditer(r"loss=([-+0-9.eEinfa]+)", ran.stdout)]


def trained_weights(executable, hparams, train_dir, output):
    subprocess.run([str(executable), "--hparams", str(hparams),
                    "--train_dir=" + str(train_dir), "--export-onnx",
                    str(output)], check=True, stdout=subprocess.DEVNULL,
                   timeout=600)
    return {tensor.name: onnx.numpy_helper.to_array(tensor)
            for tensor in onnx.load(str(output)).graph.initializer}


def infer_outputs(executable, images_file, out_dir):
    out_dir.mkdir()
    subprocess.run([str(executable), "--input", f"images={images_file}",
                    "--output-dir", str(out_dir)], check=True,
                   stdout=subprocess.DEVNULL, timeout=1800)
    return {path.stem: np.load(path) for path in sorted(out_dir.glob("*.npy"))}


def relative_difference(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(actual - expected))) / scale


def main():
    parser = argparse.ArgumentParser()
    zoo_arguments(parser)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--iterations-per-loop", type=int, default=2)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--image-size", type=int,
                        help="export at this size instead of the model's")
    args = parser.parse_args()

    # The CPU build in the layout the CUDA target picks (NCHW for fp32,
    # NHWC for fp16 and bf16): another layout changes the kernels'
    # summation order, which batch norm's backward at small batches
    # amplifies to percents in the first layers' updates.
    layout = "nchw" if args.precision == "fp32" else "nhwc"
    builds = {"cpu": ["--target=cpu", f"--layout={layout}"],
              "cuda-emulated": ["--target=cuda", "--emulate-gpu-kernels"]}
    failed = False
    with tempfile.TemporaryDirectory(prefix=f"emulated-{args.model}-") as tmp:
        tmp = Path(tmp)
        onnx_file = tmp / "model.onnx"
        export(args, onnx_file, *(["--image-size", str(args.image_size)]
                                  if args.image_size else []))
        hparams = tmp / "hp.txt"
        hparams.write_text(
            f"batch_size={args.batch_size}\nnum_classes=10\n"
            "optimizer=momentum\nmomentum=0.9\nlearning_rate=0.002\n"
            "learning_rate_decay_type=fixed\nweight_decay=0.00004\n"
            f"precision={args.precision}\n"
            f"iterations_per_loop={args.iterations_per_loop}\n"
            f"stop_at_step={args.steps}\nlog_loss_every_n_iters=1\n"
            "dataset_name=mock\n"
            f"num_sample_per_epoch={args.batch_size}\n"
            f"num_epochs={args.steps}\n")
        # The model's input with the batch given: [batch, C, H, W].
        dims = onnx.load(str(onnx_file)).graph.input[0].type.tensor_type.shape.dim
        shape = [args.batch_size] + [d.dim_value for d in dims[1:]]
        images = tmp / "images.npy"
        np.save(images, np.random.RandomState(1).uniform(-1, 1, shape)
                .astype(np.float32))
        initial = {tensor.name: onnx.numpy_helper.to_array(tensor)
                   for tensor in onnx.load(str(onnx_file)).graph.initializer}
        losses, updates, outputs = {}, {}, {}
        for name, flags in builds.items():
            compile_model(args.fastnnc, onnx_file, tmp / f"{name}-train.bin",
                          flags + ["--hparams", str(hparams)])
            losses[name] = train_losses(tmp / f"{name}-train.bin", hparams,
                                        tmp / f"{name}-run")
            trained = trained_weights(tmp / f"{name}-train.bin", hparams,
                                      tmp / f"{name}-run",
                                      tmp / f"{name}-trained.onnx")
            updates[name] = {key: trained[key] - value
                             for key, value in initial.items()
                             if key in trained and value.dtype.kind == "f"}
            compile_model(args.fastnnc, onnx_file, tmp / f"{name}-infer.bin",
                          flags + ["--mode=infer",
                                   f"--batch-size={args.batch_size}"])
            outputs[name] = infer_outputs(tmp / f"{name}-infer.bin", images,
                                          tmp / f"{name}-outputs")
        cpu, emulated = losses["cpu"], losses["cuda-emulated"]
        if len(cpu) != args.steps or len(emulated) != args.steps:
            sys.exit(f"FAILED: expected {args.steps} losses, got {cpu} and "
                     f"{emulated}")
        for step, (a, b) in enumerate(zip(cpu, emulated), 1):
            difference = abs(a - b) / max(abs(a), 1e-30)
            verdict = "ok" if difference <= args.tolerance else "FAIL"
            failed |= verdict == "FAIL"
            print(f"{args.model} step {step}: loss {a:.6f} (cpu) "
                  f"{b:.6f} (cuda emulated), relative {difference:.1e} "
                  f"{verdict}")
        # The worst tensors: a wrong index in a gradient kernel shows there.
        differences = sorted(
            ((relative_difference(updates["cuda-emulated"][key], expected), key)
             for key, expected in updates["cpu"].items() if np.any(expected)),
            key=lambda item: -item[0] if np.isfinite(item[0]) else -np.inf)
        bad = [(d, key) for d, key in differences if not d <= args.tolerance]
        failed |= bool(bad)
        print(f"{args.model} weight updates of {len(differences)} tensors: "
              f"{len(bad)} differ by more than {args.tolerance:g}; largest: " +
              ", ".join(f"{key} {d:.1e}" for d, key in differences[:5]))
        if not outputs["cpu"] or outputs["cpu"].keys() != outputs["cuda-emulated"].keys():
            sys.exit(f"FAILED: infer.bin outputs {list(outputs['cpu'])} and "
                     f"{list(outputs['cuda-emulated'])}")
        for output, expected in outputs["cpu"].items():
            difference = relative_difference(outputs["cuda-emulated"][output],
                                             expected)
            verdict = "ok" if difference <= args.tolerance else "FAIL"
            failed |= verdict == "FAIL"
            print(f"{args.model} infer {output}: relative {difference:.1e} "
                  f"{verdict}")
    if failed:
        sys.exit("FAILED: the CUDA lowering's kernels differ from the CPU's")


if __name__ == "__main__":
    main()
