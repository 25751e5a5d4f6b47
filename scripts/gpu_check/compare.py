"""Comparisons of scripts/gpu-check.sh, each printed as one table cell.

    compare.py outputs CPU_DIR GPU_DIR --tolerance 1e-4
        every .npy output of infer.bin: max |gpu - cpu| / max |cpu|
    compare.py losses CPU_LOG GPU_LOG --tolerance 1e-3
        the logged losses of the same steps: max |gpu - cpu| / |cpu|
        (--tolerance 0: the printed values must be identical)
"""
import argparse
import re
from pathlib import Path

import numpy as np

STEP = re.compile(r"step (\d+): loss=([-+0-9.eEinfa]+)")


def verdict(error, tolerance, what):
    if error is None:
        return f"FAIL: {what}"
    ok = error <= tolerance
    return f"{error:.2e} ({'pass' if ok else 'FAIL'})"


def compare_outputs(cpu_dir, gpu_dir, tolerance):
    cpu_files = sorted(Path(cpu_dir).glob("*.npy"))
    if not cpu_files:
        return verdict(None, tolerance, f"no outputs in {cpu_dir}")
    worst = 0.0
    for cpu_file in cpu_files:
        gpu_file = Path(gpu_dir) / cpu_file.name
        if not gpu_file.exists():
            return verdict(None, tolerance, f"no {gpu_file.name} from the GPU")
        cpu = np.load(cpu_file).astype(np.float64)
        gpu = np.load(gpu_file).astype(np.float64)
        if cpu.shape != gpu.shape:
            return verdict(None, tolerance, f"{cpu_file.name}: shapes differ")
        scale = max(np.abs(cpu).max(), np.finfo(np.float32).tiny)
        worst = max(worst, float(np.abs(gpu - cpu).max() / scale))
    return verdict(worst, tolerance, "")


def losses(log):
    return {int(step): value
            for step, value in STEP.findall(Path(log).read_text())}


def compare_losses(cpu_log, gpu_log, tolerance):
    cpu, gpu = losses(cpu_log), losses(gpu_log)
    if not cpu or set(cpu) != set(gpu):
        return verdict(None, tolerance,
                       f"steps differ: {len(cpu)} on the CPU, {len(gpu)} on "
                       "the GPU (see the run's log)")
    if tolerance == 0:
        same = all(cpu[s] == gpu[s] for s in cpu)
        return (f"identical over {len(cpu)} logged steps" if same
                else "FAIL: the losses differ")
    worst = max(abs(float(gpu[s]) - float(cpu[s])) / abs(float(cpu[s]))
                for s in cpu)
    return verdict(worst, tolerance, "")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["outputs", "losses"])
    parser.add_argument("cpu")
    parser.add_argument("gpu")
    parser.add_argument("--tolerance", type=float, required=True)
    args = parser.parse_args()
    compare = compare_outputs if args.kind == "outputs" else compare_losses
    print(compare(args.cpu, args.gpu, args.tolerance))


if __name__ == "__main__":
    main()
