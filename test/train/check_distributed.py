"""Data-parallel training end to end (ctest train.distributed.*).

`setup` (a ctest fixture) exports a small model without batch norm or
dropout (convolutions, relu, dense), compiles train.bins of batch B and 2B
(plain SGD, weight decay; batch B also with 4 KiB allreduce buckets, i.e.
several, and with 5 steps per compiled loop), and trains the reference: one process of batch 2B on mock data
(a job of K workers of batch B reads the same samples, worker r the r-th
slice of each batch). The other commands check one behaviour each:

  equivalence  `mpirun -np 2` of batch B, with the default buckets, 4 KiB
               ones and a 5-step loop, logs the reference's loss at every
               step and ends with its weights, to 1e-5 relative; only the
               chief logs and writes checkpoints and events
  resume       a 2-worker run stopped at a checkpoint and restarted ends
               with the final checkpoint of an uninterrupted 2-worker run
  timeline     profile_at_task=1: worker 1 writes the timelines, with spans
               of the bucket collectives and their waits
  kill         a worker killed with SIGKILL mid-run ends the whole job with
               a non-zero exit within 60 s and a message naming its rank
  record-shards  2 workers of batch B over two files of 150 and 10 records
               (record sharding, shuffled) log the loss of one process of
               batch 2B at every step and end with its weights, to 1e-5;
               with shard_by=file the same files give worker 1 a share of
               10 records and an epoch of 10 records per worker
  sigterm      SIGTERM to worker 1 alone stops both workers after the same
               step with exit 143 and the chief's checkpoint of that step;
               the restart ends as an uninterrupted 2-worker run, bitwise
  eval         2 workers evaluate (eval_every_n_iters during training, and
               --eval) what one process evaluates, with the same result:
               3 TFRecord files of a Fashion-MNIST slice (a model with batch
               norm, whose statistics differ per worker), 1 file (worker 1
               has none), and the mock pool
  stuck-worker worker 1 stopped (SIGSTOP) mid-training with
               collective_timeout_s=5 ends the job within 5 + 10 s,
               non-zero, with one line naming rank 1 and the step
  half-precision
               precision=fp16 and bf16 (their gradients reduced in their own
               type): 2 workers of batch B log the loss of one process of
               batch 2B of the same precision at every step and end with its
               weights, within the precision's own rounding (see
               HALF_WEIGHT_FACTOR); and fp16 from a loss scale of 1e9,
               whose first steps overflow: the chief logs the skipped steps
               with a halving scale, and every worker ends with the chief's
               parameters and loss scale (train.bin compares them)
  mpi-at-run-time
               train.bin links no MPI library (readelf -d); with OpenMPI's
               libraries hidden (empty files bind-mounted over them in a
               mount namespace of its own, as on a machine without OpenMPI)
               it trains alone, and under a launcher's environment it exits
               non-zero with one line naming libmpi; mpirun -np 2 loads MPI
               and both workers end alike
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BATCH = 8
STEPS = 30
TOLERANCE = 1e-5
HPARAMS = f"""\
dataset_name=mock
num_classes=10
num_sample_per_epoch=256
num_epochs=1000
use_fp16=False
optimizer=sgd
learning_rate=0.05
learning_rate_decay_type=fixed
weight_decay=0.0001
stop_at_step={STEPS}
log_loss_every_n_iters=1
save_checkpoints_steps=0
seed=5
"""


# Half precision: one worker's gradient of batch B and the reduced one are
# each rounded to the type (relative 2^-11 for fp16, 2^-8 for bf16), where
# one process of batch 2B rounds its gradient once: 2 workers may differ
# from that process by a few times as much as the precision itself moves it
# from fp32. So the losses agree to 1e-3 relative (measured: 4e-6 for fp16,
# 6e-5 for bf16), and each weight tensor's difference from the process of
# the same precision is at most 4 times that process's difference from the
# fp32 one (measured: at most 0.6 for fp16, 2.8 for bf16), plus 1e-5 of
# the tensor's largest magnitude.
HALF_PRECISIONS = {"fp16": "use_fp16=True", "bf16": "precision=bf16"}
HALF_LOSS_TOLERANCE = 1e-3
HALF_WEIGHT_FACTOR = 4

# The evaluation check's data: slices of Debian's Fashion-MNIST, 203 test
# images (not a multiple of the batch) in 3 files.
FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
EVAL_TRAIN_IMAGES, EVAL_TEST_IMAGES, EVAL_FILES = 240, 203, 3
EVAL_STEPS = 20

# The record-sharding check: two training files of very different sizes
# (slices of Fashion-MNIST written by fastnn-data), a model without batch
# norm (batch statistics would differ between a worker's batch and the
# job's), deterministic preprocessing, a shuffle over all records.
SKEWED_RECORDS = (150, 10)
SHARD_STEPS = 25
SHARD_HPARAMS = f"""\
dataset_name=mnist
num_classes=10
preprocessing_name=lenet
use_fp16=False
optimizer=sgd
learning_rate=0.05
learning_rate_decay_type=fixed
num_epochs=1000
stop_at_step={SHARD_STEPS}
log_loss_every_n_iters=1
save_checkpoints_steps=0
shuffle_buffer_size=1024
seed=3
"""
EVAL_HPARAMS = f"""\
dataset_name=mnist
num_classes=10
preprocessing_name=lenet
use_fp16=False
optimizer=sgd
learning_rate=0.05
learning_rate_decay_type=fixed
num_epochs=1000
stop_at_step={EVAL_STEPS}
log_loss_every_n_iters=5
save_checkpoints_steps=10
keep_checkpoint_max=0
eval_every_n_iters=10
seed=2
"""


def fail(message):
    sys.exit(f"FAILED: {message}")


def run(cmd, check=True, **kwargs):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited with {result.returncode}:\n"
             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def mpirun(args, np_, *cmd):
    return [args.mpirun, *args.mpirun_flags.split(), "-np", str(np_),
            "-x", "OMP_NUM_THREADS=1", *cmd]


def lines(log):
    """The log's lines without the progress bar train.bin draws on a
    terminal (mpirun gives the workers a pseudo-terminal)."""
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", log).replace("\r", "\n").splitlines()


def losses(log):
    return {int(m.group(1)): float(m.group(2))
            for m in map(re.compile(r"step (\d+): loss=(\S+)").match, lines(log)) if m}


def read_checkpoint(path):
    """fastnn's checkpoint format (runtime/include/fastnn/trainer/
    Checkpoint.h): {name: float32 array} of every tensor, and the step."""
    data = Path(path).read_bytes()
    if data[:8] != b"FNNCKPT\0":
        fail(f"{path}: not a checkpoint")
    _, count, step, _, _, _ = struct.unpack_from("<IIqqQQ", data, 8)
    offset, tensors = 48, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, offset)
        name = data[offset + 4:offset + 4 + length].decode()
        offset += 4 + length
        _, dtype, rank = struct.unpack_from("<iiI", data, offset)
        offset += 12
        shape = struct.unpack_from(f"<{rank}q", data, offset)
        offset += 8 * rank
        (size,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        if dtype == 0:
            tensors[name] = np.frombuffer(data[offset:offset + size], np.float32).reshape(shape)
        offset += size
    return step, tensors


def train(args, binary, train_dir, extra=(), workers=1, hparams="hp.txt"):
    """A run into train_dir, which a run before it may have left
    checkpoints in (to resume)."""
    work = Path(args.work)
    cmd = [work / binary, "--hparams", work / hparams, f"--train_dir={train_dir}", *extra]
    if workers > 1:
        cmd = mpirun(args, workers, *cmd)
    return run(cmd, env=dict(os.environ, OMP_NUM_THREADS="1"))


def fresh(directory):
    shutil.rmtree(directory, ignore_errors=True)
    return directory


def write_idx_slice(prefix, count, out):
    images = gzip.open(FASHION_MNIST / f"{prefix}-images-idx3-ubyte.gz").read()
    labels = gzip.open(FASHION_MNIST / f"{prefix}-labels-idx1-ubyte.gz").read()
    rows, cols = struct.unpack_from(">II", images, 8)
    (out / f"{prefix}-images-idx3-ubyte").write_bytes(
        struct.pack(">IIII", 0x803, count, rows, cols) + images[16:16 + count * rows * cols])
    (out / f"{prefix}-labels-idx1-ubyte").write_bytes(
        struct.pack(">II", 0x801, count) + labels[8:8 + count])


def setup_eval(args):
    """The evaluation check's TFRecords and train.bin (a model with batch
    norm, on 1x28x28 images)."""
    import torch
    work = Path(args.work)
    if not FASHION_MNIST.is_dir():
        fail(f"{FASHION_MNIST} is missing: install Debian's dataset-fashion-mnist "
             "(scripts/install-deps.sh)")
    (work / "idx").mkdir()
    write_idx_slice("train", EVAL_TRAIN_IMAGES, work / "idx")
    write_idx_slice("t10k", EVAL_TEST_IMAGES, work / "idx")
    run([args.fastnn_data, "convert", "--format=idx", f"--input={work / 'idx'}",
         f"--output={work / 'data'}", "--name=fmnist", f"--shards={EVAL_FILES}",
         "--no-progress"])
    tests = sorted((work / "data").glob("*test*"))
    if len(tests) != EVAL_FILES:
        fail(f"expected {EVAL_FILES} test files, fastnn-data wrote {tests}")
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, stride=2, padding=1), torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(), torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(16 * 7 * 7, 10))
    torch.onnx.export(model, torch.zeros(BATCH, 1, 28, 28), str(work / "eval_model.onnx"),
                      input_names=["images"], output_names=["logits"], opset_version=13,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
    (work / "eval_hp.txt").write_text(EVAL_HPARAMS)
    run([args.fastnnc, work / "eval_model.onnx", "-o", work / "eval_b.bin", "--hparams",
         work / "eval_hp.txt", f"--hparam=batch_size={BATCH}"])


def setup_record_shards(args):
    """The record-sharding check's skewed files, train.bins of batch B and
    2B, and the reference: one process of batch 2B."""
    import torch
    work = Path(args.work)
    files = []
    for count in SKEWED_RECORDS:
        idx = work / f"skewed-idx-{count}"
        idx.mkdir()
        write_idx_slice("train", count, idx)
        write_idx_slice("t10k", 1, idx)
        run([args.fastnn_data, "convert", "--format=idx", f"--input={idx}",
             f"--output={work / 'skewed'}", f"--name=skewed{count}", "--shards=1",
             "--no-progress"])
        files += sorted((work / "skewed").glob(f"skewed{count}-train-*.tfrecord"))
    if len(files) != len(SKEWED_RECORDS):
        fail(f"fastnn-data wrote {files}, expected one training file per slice")
    (work / "shard_hp.txt").write_text(
        SHARD_HPARAMS + f"train_files={','.join(map(str, files))}\n")
    torch.manual_seed(3)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 14 * 14, 10))
    torch.onnx.export(model, torch.zeros(BATCH, 1, 28, 28), str(work / "shard_model.onnx"),
                      input_names=["images"], output_names=["logits"], opset_version=13,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
    for name, batch in [("shard_b", BATCH), ("shard_2b", 2 * BATCH)]:
        run([args.fastnnc, work / "shard_model.onnx", "-o", work / f"{name}.bin", "--hparams",
             work / "shard_hp.txt", f"--hparam=batch_size={batch}"])
    ref = train(args, "shard_2b.bin", fresh(work / "shard-single"), hparams="shard_hp.txt")
    (work / "shard-single.log").write_text(ref.stdout)


def setup(args):
    import torch
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    setup_eval(args)
    setup_record_shards(args)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(16 * 4 * 4, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 10))
    torch.onnx.export(model, torch.zeros(BATCH, 3, 16, 16), str(work / "model.onnx"),
                      input_names=["images"], output_names=["logits"], opset_version=13,
                      do_constant_folding=False, training=torch.onnx.TrainingMode.TRAINING)
    (work / "hp.txt").write_text(HPARAMS)
    for name, batch, extra in [("train_b", BATCH, []), ("train_2b", 2 * BATCH, []),
                               ("train_b_4k", BATCH, ["--hparam=allreduce_bucket_bytes=4096"]),
                               ("train_b_loop", BATCH, ["--hparam=iterations_per_loop=5"])]:
        run([args.fastnnc, work / "model.onnx", "-o", work / f"{name}.bin", "--hparams",
             work / "hp.txt", f"--hparam=batch_size={batch}", *extra])
    for precision, setting in HALF_PRECISIONS.items():
        hparams = f"hp_{precision}.txt"
        (work / hparams).write_text(HPARAMS.replace("use_fp16=False", setting))
        for name, batch, extra in [
                (f"train_b_{precision}", BATCH, []), (f"train_2b_{precision}", 2 * BATCH, []),
                (f"train_b_{precision}_overflow", BATCH,
                 ["--hparam=loss_scale=1e9", "--hparam=dynamic_loss_scale=True"])]:
            if extra and precision != "fp16":
                continue
            run([args.fastnnc, work / "model.onnx", "-o", work / f"{name}.bin", "--hparams",
                 work / hparams, f"--hparam=batch_size={batch}", *extra])
        half = train(args, f"train_2b_{precision}.bin", fresh(work / f"single-{precision}"),
                     hparams=hparams)
        (work / f"single-{precision}.log").write_text(half.stdout)
    ref = train(args, "train_2b.bin", fresh(work / "single"))
    (work / "single.log").write_text(ref.stdout)
    if len(losses(ref.stdout)) != STEPS:
        fail(f"the reference logged {len(losses(ref.stdout))} steps:\n{ref.stdout}")
    print(f"reference: one process of batch {2 * BATCH}, {STEPS} steps")


def compare(work, directory, log, label):
    ref_losses = losses((work / "single.log").read_text())
    got = losses(log)
    if sorted(got) != sorted(ref_losses):
        fail(f"{label}: logged steps {sorted(got)} instead of {sorted(ref_losses)}:\n{log}")
    worst_loss = max(abs(got[s] - ref_losses[s]) / abs(ref_losses[s]) for s in ref_losses)
    ref_step, ref = read_checkpoint(work / "single" / f"model.ckpt-{STEPS}")
    step, weights = read_checkpoint(Path(directory) / f"model.ckpt-{STEPS}")
    if step != ref_step or set(weights) != set(ref):
        fail(f"{label}: checkpoint step {step}, tensors {sorted(weights)}; the reference "
             f"has step {ref_step}, {sorted(ref)}")
    worst_weight = max(float(np.max(np.abs(weights[n] - ref[n])) /
                             max(float(np.max(np.abs(ref[n]))), 1e-12)) for n in ref)
    print(f"{label}: {len(got)} steps, largest relative loss difference {worst_loss:.2e}, "
          f"largest relative weight difference {worst_weight:.2e} (allowed {TOLERANCE:g})")
    if worst_loss > TOLERANCE or worst_weight > TOLERANCE:
        fail(f"{label}: differs from one process of batch {2 * BATCH}")


def equivalence(args):
    work = Path(args.work)
    for binary in ("train_b.bin", "train_b_4k.bin", "train_b_loop.bin"):
        directory = fresh(work / f"dist-{binary[:-4]}")
        ran = train(args, binary, directory, workers=2)
        compare(work, directory, ran.stdout, f"2 workers x batch {BATCH} ({binary})")
        # One log, the chief's; one writer of checkpoints and events.
        if sum(line.startswith(f"step {STEPS}: loss=") for line in lines(ran.stdout)) != 1:
            fail(f"expected the chief's log only:\n{ran.stdout}")
        events = list(directory.glob("events.out.tfevents.*"))
        if len(events) != 1:
            fail(f"expected one event file (the chief's), found {events}")


AGREEMENT = re.compile(r"^train\.bin: all 2 workers end step (\d+) with the chief's "
                       r"parameters, optimizer slots and loss scale$", re.M)
SKIPPED = re.compile(r"^train\.bin: step (\d+): the gradients overflowed \(inf or NaN\): "
                     r"update skipped, loss scale now (\S+)$", re.M)


def half_precision(args):
    work = Path(args.work)
    for precision in HALF_PRECISIONS:
        directory = fresh(work / f"dist-{precision}")
        ran = train(args, f"train_b_{precision}.bin", directory, workers=2,
                    hparams=f"hp_{precision}.txt")
        label = f"{precision}: 2 workers x batch {BATCH}"
        ref_losses = losses((work / f"single-{precision}.log").read_text())
        got = losses(ran.stdout)
        if sorted(got) != sorted(ref_losses):
            fail(f"{label}: logged steps {sorted(got)} instead of {sorted(ref_losses)}")
        worst_loss = max(abs(got[s] - ref_losses[s]) / abs(ref_losses[s]) for s in got)
        _, fp32 = read_checkpoint(work / "single" / f"model.ckpt-{STEPS}")
        _, ref = read_checkpoint(work / f"single-{precision}" / f"model.ckpt-{STEPS}")
        _, weights = read_checkpoint(directory / f"model.ckpt-{STEPS}")
        worst_factor = 0.0
        for name in fp32:
            scale = float(np.max(np.abs(ref[name])))
            own = float(np.max(np.abs(ref[name] - fp32[name])))
            diff = float(np.max(np.abs(weights[name] - ref[name])))
            worst_factor = max(worst_factor, diff / max(own, 1e-12))
            if diff > HALF_WEIGHT_FACTOR * own + 1e-5 * scale:
                fail(f"{label}: {name} differs by {diff:.2e} from one process of batch "
                     f"{2 * BATCH}, which differs by {own:.2e} from fp32")
        print(f"{label}: largest relative loss difference {worst_loss:.2e} (allowed "
              f"{HALF_LOSS_TOLERANCE:g}); weights differ from one process of batch {2 * BATCH} "
              f"by at most {worst_factor:.2f} times its own difference from fp32 (allowed "
              f"{HALF_WEIGHT_FACTOR})")
        if worst_loss > HALF_LOSS_TOLERANCE:
            fail(f"{label}: the losses differ from one process of batch {2 * BATCH}")
        if not AGREEMENT.search("\n".join(lines(ran.stdout))):
            fail(f"{precision}: no line saying the workers agree:\n{ran.stdout[-2000:]}")
    # A loss scale of 1e9 overflows float16 in the first steps: every
    # worker must skip them alike, deciding on the reduced gradients (a
    # worker that applied an update the others skipped, or kept another
    # loss scale, would end with other parameters: train.bin compares them
    # and fails).
    directory = fresh(work / "dist-fp16-overflow")
    ran = train(args, "train_b_fp16_overflow.bin", directory, workers=2, hparams="hp_fp16.txt")
    log = "\n".join(lines(ran.stdout))
    skipped = [(int(m.group(1)), float(m.group(2))) for m in SKIPPED.finditer(log)]
    steps = [step for step, _ in skipped]
    if not skipped or steps != list(range(1, len(steps) + 1)):
        fail(f"expected the first steps skipped on overflow, got {steps}:\n{log[-3000:]}")
    # The line prints 6 significant digits.
    if any(abs(scale - 1e9 / 2 ** step) > 1e-5 * scale for step, scale in skipped):
        fail(f"the loss scale did not halve at each skipped step: {skipped}")
    agreed = AGREEMENT.search(log)
    if not agreed or int(agreed.group(1)) != STEPS:
        fail(f"no line saying both workers end step {STEPS} alike:\n{log[-3000:]}")
    got = losses(ran.stdout)
    if sorted(got) != list(range(1, STEPS + 1)) or not all(np.isfinite(list(got.values()))):
        fail(f"the overflow run logged {sorted(got)} with losses {got}")
    print(f"fp16 from loss scale 1e9, 2 workers: steps {steps[0]}-{steps[-1]} skipped alike, "
          f"loss scale then {skipped[-1][1]:g}; {agreed.group(0)}")


def record_shards(args):
    work = Path(args.work)
    ref_log = (work / "shard-single.log").read_text()
    want = losses(ref_log)
    directory = fresh(work / "shard-record")
    ran = train(args, "shard_b.bin", directory, workers=2, hparams="shard_hp.txt")
    got = losses(ran.stdout)
    if sorted(got) != sorted(want) or len(want) != SHARD_STEPS:
        fail(f"logged steps {sorted(got)}, the reference {sorted(want)}:\n{ran.stdout}")
    worst_loss = max(abs(got[s] - want[s]) / abs(want[s]) for s in want)
    _, ref = read_checkpoint(work / "shard-single" / f"model.ckpt-{SHARD_STEPS}")
    _, weights = read_checkpoint(directory / f"model.ckpt-{SHARD_STEPS}")
    worst_weight = max(float(np.max(np.abs(weights[n] - ref[n])) /
                             max(float(np.max(np.abs(ref[n]))), 1e-12)) for n in ref)
    print(f"shard_by=record, files of {SKEWED_RECORDS[0]} and {SKEWED_RECORDS[1]} records: "
          f"{len(got)} steps, largest relative loss difference {worst_loss:.2e}, weight "
          f"difference {worst_weight:.2e} (allowed {TOLERANCE:g}) from one process of batch "
          f"{2 * BATCH}")
    if worst_loss > TOLERANCE or worst_weight > TOLERANCE:
        fail("2 workers sharing the records differ from one process of the job's batch")
    share = f"2 files, {sum(SKEWED_RECORDS) // 2} records for each of 2 workers"
    if share not in ran.stdout:
        fail(f"the chief's log does not say '{share}':\n{ran.stdout[:2000]}")
    # By file, worker 1 holds the small file only: every worker's epoch
    # shrinks to the smallest share, which record sharding avoids.
    by_file = train(args, "shard_b.bin", fresh(work / "shard-file"), workers=2,
                    hparams="shard_hp.txt", extra=["--shard_by=file"])
    share = f"2 files, {min(SKEWED_RECORDS)} records for each of 2 workers"
    if share not in by_file.stdout:
        fail(f"with shard_by=file the log does not say '{share}':\n{by_file.stdout[:2000]}")
    print(f"shard_by=file: {min(SKEWED_RECORDS)} records for each worker; shard_by=record: "
          f"{sum(SKEWED_RECORDS) // 2}")


# What runtime/collectives loads under a launcher, and the libraries it
# brings along: none of them may be a NEEDED entry of train.bin.
MPI_LIBRARY = "libmpi.so.40"
OPENMPI_LIBRARIES = re.compile(r"^lib(mpi|open-rte|open-pal)\.so")


def without_openmpi(cmd):
    """cmd in a mount namespace where OpenMPI's shared libraries, as the
    dynamic linker's cache lists them, are empty files."""
    cache = run(["ldconfig", "-p"]).stdout
    paths = sorted({line.split(" => ")[1].strip() for line in cache.splitlines()
                    if " => " in line and OPENMPI_LIBRARIES.match(line.strip())})
    if not any(Path(path).name == MPI_LIBRARY for path in paths):
        fail(f"ldconfig -p lists no {MPI_LIBRARY}: install Debian's libopenmpi3")
    hide = " && ".join(f"mount --bind /dev/null {path}" for path in paths)
    return ["unshare", "--mount", "sh", "-c", f'{hide} && exec "$@"', "sh", *map(str, cmd)]


def mpi_at_run_time(args):
    work = Path(args.work)
    binary = work / "train_b.bin"
    readelf = shutil.which("readelf") or shutil.which("llvm-readelf")
    if readelf is None:
        fail("neither readelf nor llvm-readelf is installed (Debian's binutils)")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]",
                        run([readelf, "-d", binary]).stdout)
    linked = [name for name in needed if OPENMPI_LIBRARIES.match(name)]
    if not needed or linked:
        fail(f"{binary} needs {needed}: expected libraries without OpenMPI's, found {linked}")
    cmd = [binary, "--hparams", work / "hp.txt", "--stop_at_step=3"]
    alone = run(without_openmpi([*cmd, f"--train_dir={fresh(work / 'no-mpi-alone')}"]),
                env=dict(os.environ, OMP_NUM_THREADS="1"))
    if sorted(losses(alone.stdout)) != [1, 2, 3]:
        fail(f"alone without OpenMPI: expected the losses of steps 1-3:\n{alone.stdout}")
    launched = run(without_openmpi([*cmd, f"--train_dir={fresh(work / 'no-mpi-launched')}"]),
                   check=False, env=dict(os.environ, OMP_NUM_THREADS="1",
                                         OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK="0"))
    message = launched.stderr.strip().splitlines()
    if launched.returncode == 0 or len(message) != 1 or MPI_LIBRARY not in message[0] \
            or "install" not in message[0]:
        fail(f"under a launcher without OpenMPI: exit {launched.returncode}, expected non-zero "
             f"and one line naming {MPI_LIBRARY} and what to install:\n{launched.stderr}")
    workers = train(args, "train_b.bin", fresh(work / "mpi-loaded"), workers=2,
                    extra=["--stop_at_step=3"])
    if not AGREEMENT.search("\n".join(lines(workers.stdout))):
        fail(f"mpirun -np 2: expected both workers to end alike:\n{workers.stdout}")
    print(f"train.bin needs {', '.join(needed)}; alone without OpenMPI it trains; "
          f"under a launcher without it: {message[0]}; mpirun -np 2 loads MPI")


def compare_bitwise(uninterrupted, resumed):
    """Fails unless the two checkpoints hold equal tensors; their count."""
    _, a = read_checkpoint(uninterrupted)
    _, b = read_checkpoint(resumed)
    differing = [n for n in a if not np.array_equal(a[n], b[n])]
    if differing or set(a) != set(b):
        fail(f"after resuming, tensors differ from the uninterrupted run: {differing}")
    return len(a)


def resume(args):
    work = Path(args.work)
    whole, parts = fresh(work / "resume-whole"), fresh(work / "resume-parts")
    train(args, "train_b.bin", whole, workers=2)
    half = STEPS // 2
    train(args, "train_b.bin", parts, [f"--stop_at_step={half}"], workers=2)
    restarted = train(args, "train_b.bin", parts, workers=2)
    if f"resuming {parts}/model.ckpt-{half} at step {half}" not in restarted.stdout:
        fail(f"the restart did not resume step {half}:\n{restarted.stdout}")
    count = compare_bitwise(whole / f"model.ckpt-{STEPS}", parts / f"model.ckpt-{STEPS}")
    print(f"2 workers stopped at step {half} and restarted: {count} tensors at step "
          f"{STEPS} bitwise equal to the uninterrupted run's")


def timeline(args):
    work = Path(args.work)
    directory = fresh(work / "timeline")
    train(args, "train_b_4k.bin", directory,
          ["--profile_every_n_iters=10", "--profile_at_task=1"], workers=2)
    paths = sorted(directory.glob("timeline-step-*.json"))
    if [p.name for p in paths] != [f"timeline-step-{s}.json" for s in (10, 20, 30)]:
        fail(f"expected worker 1's timelines of steps 10, 20, 30, found {paths}")
    spans = [e for e in json.loads(paths[-1].read_text())["traceEvents"] if e["ph"] == "X"]
    ops = [e["name"].split()[0] for e in spans]
    starts, waits = ops.count("allreduce"), ops.count("allreduce_wait")
    if starts < 3 or waits != starts:
        fail(f"{paths[-1]}: {starts} collectives started and {waits} awaited")
    print(f"worker 1 wrote {len(paths)} timelines; each holds {starts} collectives "
          f"(gradient buckets and the metrics), started and awaited")


def worker_pid(job, rank):
    """The pid of the worker of the given rank among mpirun's children
    (the one whose environment says so)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # pid (comm) state ppid ...: comm may hold spaces, not ')'.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != job.pid:
                continue
            children.append(stat.parent.name)
            environ = (stat.parent / "environ").read_bytes().split(b"\0")
            if f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ:
                return int(stat.parent.name)
        except (OSError, IndexError):
            continue
    job.kill()
    fail(f"no worker of rank {rank} among mpirun's children {children}")


def long_job(args, directory):
    """A 2-worker job that would run for hours, logging every step."""
    cmd = mpirun(args, 2, Path(args.work) / "train_b.bin", "--hparams",
                 Path(args.work) / "hp.txt", f"--train_dir={directory}",
                 "--stop_at_step=100000000", "--num_epochs=100000000")
    job = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    output = []
    for line in job.stdout:
        output.append(line)
        if "step 20: loss=" in line:
            break
    if job.poll() is not None:
        fail(f"the job ended before step 20:\n{''.join(output)[-2000:]}")
    return job, output


def finish(job, output, what):
    try:
        rest, _ = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        job.kill()
        fail(f"the job still ran 60 s after {what}")
    output.append(rest)
    return "".join(output)


def sigterm(args):
    work = Path(args.work)
    directory = fresh(work / "sigterm")
    job, output = long_job(args, directory)
    os.kill(worker_pid(job, 1), signal.SIGTERM)
    log = finish(job, output, "worker 1 was sent SIGTERM")
    m = re.search(r"^train\.bin: stopped by SIGTERM after step (\d+); checkpoint (\S+) "
                  r"written; resume with the same command$", "\n".join(lines(log)), re.M)
    if job.returncode != 143 or not m:
        fail(f"the job exited with {job.returncode}, not 143 with a stop line:\n{log[-2000:]}")
    step = int(m.group(1))
    saved = sorted(p.name for p in directory.glob("model.ckpt-*"))
    if m.group(2) != str(directory / f"model.ckpt-{step}") or saved != [f"model.ckpt-{step}"]:
        fail(f"the stop line names {m.group(2)}; the directory holds {saved}")
    # A worker that ran another step would have left the chief alone in its
    # allreduce: the clean exit of both says they agreed; the weights say
    # they agreed on the chief's step.
    print(f"SIGTERM to worker 1: both workers stopped after step {step}, exit 143, {saved[0]}")
    end = [f"--stop_at_step={step + 10}", "--num_epochs=100000000"]
    whole = fresh(work / "sigterm-whole")
    train(args, "train_b.bin", whole, end, workers=2)
    restarted = train(args, "train_b.bin", directory, end, workers=2)
    if f"resuming {directory}/model.ckpt-{step} at step {step}" not in restarted.stdout:
        fail(f"the restart did not resume step {step}:\n{restarted.stdout}")
    count = compare_bitwise(whole / f"model.ckpt-{step + 10}",
                            directory / f"model.ckpt-{step + 10}")
    print(f"restarted to step {step + 10}: {count} tensors bitwise equal to an uninterrupted "
          f"2-worker run's")


def kill(args):
    work = Path(args.work)
    job, output = long_job(args, fresh(work / "kill"))
    victim = worker_pid(job, 1)
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    log = finish(job, output, "worker 1 was killed")
    elapsed = time.monotonic() - killed
    if job.returncode == 0:
        fail(f"the job exited with 0 after a worker was killed:\n{log[-2000:]}")
    if not re.search(r"rank 1\b", log):
        fail(f"no message names rank 1:\n{log[-2000:]}")
    named = [line for line in log.splitlines() if re.search(r"rank 1\b", line)]
    print(f"worker 1 (pid {victim}) killed: the job exited with {job.returncode} after "
          f"{elapsed:.1f} s; {named[0].strip()}")


EVAL_LINE = re.compile(r"^eval: step=(\d+) samples=(\d+) top1=\S+ top5=\S+ loss=\S+$")


def eval_lines(log):
    """{step: line} of the log's evaluation results."""
    return {int(m.group(1)): m.group(0) for m in map(EVAL_LINE.match, lines(log)) if m}


def evaluate_alone(args, binary, hparams, checkpoint, extra=()):
    """One process's --eval of the checkpoint, alone in a directory."""
    directory = fresh(Path(args.work) / "eval-alone")
    directory.mkdir()
    shutil.copy(checkpoint, directory)
    ran = run([Path(args.work) / binary, "--hparams", hparams, f"--train_dir={directory}",
               "--eval", *extra], env=dict(os.environ, OMP_NUM_THREADS="1"))
    found = list(eval_lines(ran.stdout).values())
    if len(found) != 1:
        fail(f"one process's --eval of {checkpoint} printed {found}:\n{ran.stdout}")
    return found[0]


def expect_same(label, workers_line, alone_line, samples):
    if workers_line != alone_line or f" samples={samples} " not in workers_line:
        fail(f"{label}: 2 workers: '{workers_line}'; one process: '{alone_line}' "
             f"({samples} samples expected)")
    print(f"{label}: 2 workers and one process: {workers_line}")


def evaluation(args):
    work = Path(args.work)
    data = [f"--dataset_dir={work / 'data'}"]
    hparams = work / "eval_hp.txt"
    directory = fresh(work / "eval-workers")
    ran = run(mpirun(args, 2, work / "eval_b.bin", "--hparams", hparams,
                     f"--train_dir={directory}", *data))
    during = eval_lines(ran.stdout)
    if sorted(during) != [10, EVAL_STEPS]:
        fail(f"2 workers evaluated at steps {sorted(during)}, not 10 and {EVAL_STEPS}:\n"
             f"{ran.stdout[-3000:]}")
    for step, line in sorted(during.items()):
        expect_same(f"eval_every_n_iters, step {step} (3 files)", line,
                    evaluate_alone(args, "eval_b.bin", hparams,
                                   directory / f"model.ckpt-{step}", data),
                    EVAL_TEST_IMAGES)
    # Only the chief writes the evaluation's TensorBoard events.
    events = list((directory / "eval").glob("events.out.tfevents.*"))
    if len(events) != 1:
        fail(f"expected one evaluation event file (the chief's), found {events}")
    final = directory / f"model.ckpt-{EVAL_STEPS}"
    alone = evaluate_alone(args, "eval_b.bin", hparams, final, data)
    ran = run(mpirun(args, 2, work / "eval_b.bin", "--hparams", hparams,
                     f"--train_dir={directory}", "--eval", *data))
    found = list(eval_lines(ran.stdout).values())
    expect_same("--eval (3 files)", found[0] if len(found) == 1 else found, alone,
                EVAL_TEST_IMAGES)
    one_file = sorted((work / "data").glob("*test*"))[0]
    single = [f"--eval_files={one_file}"]
    alone = evaluate_alone(args, "eval_b.bin", hparams, final, single)
    ran = run(mpirun(args, 2, work / "eval_b.bin", "--hparams", hparams,
                     f"--train_dir={directory}", "--eval", *single))
    found = list(eval_lines(ran.stdout).values())
    samples = int(EVAL_LINE.match(alone).group(2))
    expect_same("--eval (1 file: worker 1 has none)", found[0] if len(found) == 1 else found,
                alone, samples)
    # The mock pool, in batches taken in turn.
    mock = fresh(work / "eval-mock")
    ran = train(args, "train_b.bin", mock, ["--eval_every_n_iters=15",
                                            "--save_checkpoints_steps=15"], workers=2)
    during = eval_lines(ran.stdout)
    if sorted(during) != [15, STEPS]:
        fail(f"2 workers evaluated the mock pool at steps {sorted(during)}:\n{ran.stdout}")
    for step, line in sorted(during.items()):
        expect_same(f"mock pool, step {step}", line,
                    evaluate_alone(args, "train_b.bin", work / "hp.txt",
                                   mock / f"model.ckpt-{step}"), 256)


def running(pid, within):
    """Whether the process still runs after `within` seconds (a zombie, killed
    and not yet reaped by init, does not)."""
    until = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        if state == "Z":
            return False
        if time.monotonic() > until:
            return True
        time.sleep(0.1)


def stuck_worker(args):
    work = Path(args.work)
    timeout = 5
    cmd = mpirun(args, 2, work / "train_b.bin", "--hparams", work / "hp.txt",
                 f"--train_dir={fresh(work / 'stuck')}", "--stop_at_step=100000000",
                 "--num_epochs=100000000", f"--collective_timeout_s={timeout}")
    job = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    output, stopped = [], None
    try:
        for line in job.stdout:
            output.append(line)
            if "step 20: loss=" in line:
                break
        if job.poll() is not None:
            fail(f"the job ended before step 20:\n{''.join(output)[-2000:]}")
        stopped = worker_pid(job, 1)
        os.kill(stopped, signal.SIGSTOP)
        since = time.monotonic()
        try:
            rest, _ = job.communicate(timeout=timeout + 10)
        except subprocess.TimeoutExpired:
            fail(f"the job still ran {timeout + 10} s after worker 1 was stopped "
                 f"(collective_timeout_s={timeout})")
        elapsed = time.monotonic() - since
        output.append(rest)
    finally:
        if job.poll() is None:
            job.kill()
        if stopped is not None:
            leftover = running(stopped, within=5)
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(stopped, sig)
                except ProcessLookupError:
                    pass
    log = "".join(output)
    reports = [line for line in lines(log) if "did not complete" in line]
    m = re.fullmatch(r"train_b\.bin: error: rank 0 of 2: collective (allreduce|broadcast) at step "
                     rf"(\d+) did not complete in {timeout} s; ranks not arriving: 1; ending "
                     r"the job", reports[0]) if len(reports) == 1 else None
    last = max(losses(log))
    if job.returncode == 0 or not m or not last <= int(m.group(2)) <= last + 1:
        fail(f"exit {job.returncode} after {elapsed:.1f} s, reports {reports}, last step "
             f"logged {last}:\n{log[-3000:]}")
    if leftover:
        fail(f"the stopped worker {stopped} outlived the job")
    print(f"worker 1 (pid {stopped}) stopped after step {last}: exit {job.returncode} after "
          f"{elapsed:.1f} s (collective_timeout_s={timeout}): {reports[0]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["setup", "equivalence", "resume", "timeline", "kill",
                                            "sigterm", "eval", "stuck-worker",
                                            "half-precision", "record-shards",
                                            "mpi-at-run-time"])
    parser.add_argument("--work", required=True)
    parser.add_argument("--fastnnc")
    parser.add_argument("--fastnn-data")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--mpirun-flags", default="--allow-run-as-root --oversubscribe")
    args = parser.parse_args()
    if shutil.which(args.mpirun) is None:
        print(f"FAILED: {args.mpirun} is missing: install Debian's openmpi-bin "
              "(scripts/install-deps.sh)")
        sys.exit(1)
    if args.command != "setup" and not (Path(args.work) / "single.log").exists():
        print("FAILED: no reference run: train.distributed.setup has not run or failed")
        sys.exit(1)
    {"setup": setup, "equivalence": equivalence, "resume": resume, "timeline": timeline,
     "kill": kill, "sigterm": sigterm, "eval": evaluation,
     "stuck-worker": stuck_worker, "half-precision": half_precision,
     "record-shards": record_shards, "mpi-at-run-time": mpi_at_run_time}[args.command](args)


if __name__ == "__main__":
    main()
