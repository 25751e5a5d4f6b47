"""A zoo model compiles for CUDA on a machine without a GPU (CUDA backend issue).

Exports the model, compiles train.bin and infer.bin with --target=cuda
(every generated kernel through ptxas into the embedded fatbin), and
checks what a GPU machine needs of them: they are linked executables that
need no CPU kernel library (oneDNN) and no MPI or NCCL (loaded only by a
job of several processes), and without a GPU they stop at the
device with one line and a non-zero exit. Prints the compile times.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from check_overfit import export, zoo_arguments

NO_DEVICE = "fnn_device_create: no CUDA device"


def needed_libraries(executable):
    dynamic = subprocess.run(["readelf", "-d", str(executable)], check=True,
                             capture_output=True, text=True).stdout
    return [line.split("[")[1].rstrip("]") for line in dynamic.splitlines()
            if "(NEEDED)" in line]


def defines(executable, symbol):
    symbols = subprocess.run(["nm", str(executable)], check=True,
                             capture_output=True, text=True).stdout
    return any(line.split()[1:] == ["T", symbol] for line in symbols.splitlines())


def compile_for_cuda(fastnnc, onnx_file, output, flags):
    started = time.monotonic()
    subprocess.run([fastnnc, str(onnx_file), "--target=cuda", "-o",
                    str(output)] + flags, check=True)
    return time.monotonic() - started


def check_executable(executable, args):
    needed = needed_libraries(executable)
    if any("dnnl" in library for library in needed):
        sys.exit(f"FAILED: {executable.name} links oneDNN: {needed}")
    if not any(library.startswith("libcudart") for library in needed):
        sys.exit(f"FAILED: {executable.name} does not link cudart: {needed}")
    # Loaded at run time, only by a job of several processes.
    if any(library.startswith(("libmpi", "libopen-", "libnccl"))
           for library in needed):
        sys.exit(f"FAILED: {executable.name} links MPI or NCCL: {needed}")
    ran = subprocess.run([str(executable)] + args, capture_output=True,
                         text=True, timeout=120)
    if ran.returncode == 0:
        # A GPU machine: scripts/gpu-check.sh checks the results there.
        print(f"{executable.name}: ran on a GPU")
    elif NO_DEVICE not in ran.stderr:
        sys.exit(f"FAILED: {executable.name} without a GPU: exit "
                 f"{ran.returncode}, {ran.stderr.strip()!r}")


def main():
    parser = argparse.ArgumentParser()
    zoo_arguments(parser)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix=f"cuda-{args.model}-") as tmp:
        tmp = Path(tmp)
        onnx_file = tmp / "model.onnx"
        export(args, onnx_file)
        train = compile_for_cuda(
            args.fastnnc, onnx_file, tmp / "train.bin",
            [f"--hparam=batch_size={args.batch_size}",
             "--hparam=num_classes=10"])
        check_executable(tmp / "train.bin",
                         ["--dataset_name=mock", "--stop_at_step=1"])
        # The collectives reach NCCL through a weak reference that only the
        # CUDA backend's --undefined flag resolves; without it a job of
        # several GPUs would stage every bucket through host memory.
        if not defines(tmp / "train.bin", "fastnn_device_allreduce_create"):
            sys.exit("FAILED: train.bin has no NCCL allreduce "
                     "(fastnn_device_allreduce_create)")
        infer = compile_for_cuda(args.fastnnc, onnx_file, tmp / "infer.bin",
                                 ["--mode=infer",
                                  f"--batch-size={args.batch_size}"])
        check_executable(tmp / "infer.bin", [])
        print(f"{args.model}: --target=cuda compile, batch "
              f"{args.batch_size}: train.bin {train:.1f} s, infer.bin "
              f"{infer:.1f} s")


if __name__ == "__main__":
    main()
