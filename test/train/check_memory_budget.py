"""memory_budget_mb end to end (ctest train.memory-budget): a model trained
with half its arena as the budget trains bitwise as without one.

mobilenet_v2_035 (batch norm, ReLU6, depthwise and pointwise convolutions,
residual adds, dropout) at 32x32, batch 32, is compiled without a budget
and with memory_budget_mb = half of that build's arena, rounded up to the
whole MiB the hyperparameter takes (20.4 MiB unbudgeted since batch norm
applies the ReLU6 in place: recomputation reaches 10.3 MiB, 50.4%); the budgeted
build's arena must fit the budget, both train 4 momentum steps on mock data
(deterministic=True) and their logged losses and final checkpoints
(parameters, momentum slots, batch-norm statistics) must be bitwise equal.
A budget below what recomputation reaches must fail at compile time with
one line giving the smallest arena.
"""
import argparse
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

HPARAMS = """\
dataset_name=mock
num_classes=10
batch_size=32
use_fp16=False
optimizer=momentum
learning_rate=0.01
stop_at_step=4
log_loss_every_n_iters=1
save_checkpoints_steps=4
deterministic=True
seed=3
hooks=StopAtStepHook,LoggingTensorHook,CheckpointSaverHook
"""


def fail(message):
    sys.exit(f"FAILED: {message}")


def run(cmd, check=True):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if check and result.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited with {result.returncode}:\n"
             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def symbol_int64(binary, name):
    """The int64 value of the ELF64 symbol `name` (fnn_model_arena_bytes)."""
    data = Path(binary).read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 2:  # SHT_SYMTAB
            continue
        strings = sections[link][4]
        for at in range(offset, offset + size, entsize):
            name_at, _, _, index, value, _ = struct.unpack_from("<IBBHQQ", data, at)
            end = data.index(b"\0", strings + name_at)
            if data[strings + name_at:end].decode() == name:
                _, _, _, address, file_offset = sections[index][:5]
                return struct.unpack_from("<q", data, value - address + file_offset)[0]
    fail(f"{binary} has no symbol {name}")


def losses(log):
    found = re.findall(r"^step (\d+): loss=(\S+)", log, re.M)
    if not found:
        fail(f"no step lines in:\n{log[-2000:]}")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", required=True)
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--export", required=True)
    parser.add_argument("--torch-python", default=sys.executable)
    args = parser.parse_args()
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "hp.txt").write_text(HPARAMS)
    onnx = work / "model.onnx"
    run([args.torch_python, args.export, "--model", "mobilenet_v2_035", "--image-size", 32,
         "--num-classes", 10, "-o", onnx])
    compile_ = [args.fastnnc, onnx, "--hparams", work / "hp.txt", "-o"]
    run([*compile_, work / "plain.bin"])
    arena = symbol_int64(work / "plain.bin", "fnn_model_arena_bytes")
    budget_mb = -(-arena // 2 // (1 << 20))
    run([*compile_, work / "budget.bin", f"--hparam=memory_budget_mb={budget_mb}"])
    budgeted = symbol_int64(work / "budget.bin", "fnn_model_arena_bytes")
    if budgeted > budget_mb << 20:
        fail(f"the budgeted arena has {budgeted} bytes, over memory_budget_mb={budget_mb}")
    print(f"arena {arena} bytes without a budget, {budgeted} with memory_budget_mb={budget_mb}")

    logs = {}
    for name in ("plain", "budget"):
        logs[name] = run([work / f"{name}.bin", "--hparams", work / "hp.txt",
                          f"--train_dir={work / ('run-' + name)}"]).stdout
    if losses(logs["plain"]) != losses(logs["budget"]):
        fail(f"losses differ:\n{losses(logs['plain'])}\n{losses(logs['budget'])}")
    final = "model.ckpt-4"
    if (work / "run-plain" / final).read_bytes() != (work / "run-budget" / final).read_bytes():
        fail(f"the final checkpoints {final} differ")
    print(f"{len(losses(logs['budget']))} losses equal; final checkpoints bitwise equal")

    small = run([*compile_, work / "small.bin", "--hparam=memory_budget_mb=1"], check=False)
    errors = [line for line in small.stderr.splitlines() if "error" in line]
    if small.returncode == 0 or len(errors) != 1 or \
            not re.search(r"memory budget of 1\.0 MiB.*brings it down to [0-9.]+ MiB "
                          r"\(\d+ bytes\) at the least", errors[0]):
        fail(f"expected one error giving the smallest arena, got {small.returncode}:\n"
             f"{small.stderr}")
    print(f"ok: {errors[0]}")


if __name__ == "__main__":
    main()
