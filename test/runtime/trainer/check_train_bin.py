"""End-to-end checks of train.bin's checkpoints, resume, finetune, evaluation,
TensorBoard events and timelines (ctest trainer.e2e.*).

`setup` (a ctest fixture) prepares WORK once: a small slice of Debian's
Fashion-MNIST (1000 training, 250 test images: 250 is not a multiple of the
batch of 32) converted to TFRecords by fastnn-data, LeNet exported with 10
and with 5 classes, their train.bins, and a reference run `ref` that trains
uninterrupted (3 shuffled epochs, Adam with exponential decay, checkpoints,
evaluation and timelines on). The other commands check one behaviour each
against it:

  resume            a run killed with SIGKILL after a checkpoint and restarted
                    ends with a final checkpoint bytewise equal to ref's
  interrupted-write a run killed halfway through writing a checkpoint
                    leaves the previous one in place and resumes from it
  sigterm, sigint   a run stopped by the signal mid-training exits with
                    128+signal after a checkpoint at the step it stopped at
                    and a line saying so; the restart ends as ref
  second-signal     SIGINT, then SIGTERM while it stops: exit 143 at once,
                    the previous checkpoint intact; the restart ends as ref
  soak-kill, soak-term
                    trains with a checkpoint every 3 steps, SIGKILLs (some
                    kills inside a checkpoint write) or SIGTERMs it at random
                    moments --kills times, restarting it each time with the
                    same command, and ends as ref
  finetune          the 5-class model restores all of ref but the classifier
  eval              train.bin --eval against ONNX Runtime on ref's weights
  export            train.bin --export-onnx: onnx.checker, the checkpoint's
                    values, and infer.bin on the export scoring as --eval
  tensorboard       ref's event files through TensorBoard's EventAccumulator
  timeline          ref's timelines through json
  skip-corrupt      a copy of the data with two records whose data CRC is
                    damaged: the default stops at the first (file, offset),
                    skip_corrupt_records=1 at the second, =2 trains and counts
                    2 in the summary and in TensorBoard; a run killed after a
                    checkpoint resumes to the same weights
"""
import argparse
import gzip
import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

BATCH = 32
TRAIN_IMAGES, TEST_IMAGES = 1000, 250
FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")

HPARAMS = f"""\
dataset_name=mnist
num_classes=10
model_name=lenet
preprocessing_name=lenet
shuffle_buffer_size=256
num_preprocessing_threads=2
num_parallel_batches=2
prefetch_buffer_size=4
batch_size={BATCH}
use_fp16=False
optimizer=adam
opt_epsilon=1e-8
learning_rate=0.001
learning_rate_decay_type=exponential
learning_rate_decay_factor=0.5
weight_decay=0.00004
num_epochs=3
stop_at_step=1000000
log_loss_every_n_iters=5
save_checkpoints_steps=20
keep_checkpoint_max=2
eval_every_n_iters=31
profile_every_n_iters=40
seed=3
"""
# 1000 records / 32 = 31 steps an epoch, 3 epochs.
FINAL_STEP = 93


def fail(message):
    sys.exit(f"FAILED: {message}")


def read_checkpoint(path):
    """fastnn's checkpoint format (runtime/include/fastnn/trainer/
    Checkpoint.h): header, tensors, CRC. Returns (step, position, seed,
    {name: (role, dtype, shape, bytes)})."""
    data = Path(path).read_bytes()
    if data[:8] != b"FNNCKPT\0":
        fail(f"{path}: not a checkpoint")
    version, count, step, position, seed, payload = struct.unpack_from("<IIqqQQ", data, 8)
    if version != 1 or len(data) != 48 + payload + 4:
        fail(f"{path}: version {version}, {len(data)} bytes")
    offset, tensors = 48, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<I", data, offset)
        name = data[offset + 4:offset + 4 + length].decode()
        offset += 4 + length
        role, dtype, rank = struct.unpack_from("<iiI", data, offset)
        offset += 12
        shape = struct.unpack_from(f"<{rank}q", data, offset)
        offset += 8 * rank
        (size,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        tensors[name] = (role, dtype, shape, data[offset:offset + size])
        offset += size
    return step, position, seed, tensors


def run(args, cmd, check=True, **kwargs):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited with {result.returncode}:\n"
             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def train(args, train_dir, extra=(), env=None, check=True):
    work = Path(args.work)
    return run(args, [work / "train10.bin", "--hparams", work / "hp.txt",
                      f"--dataset_dir={work / 'data'}", f"--train_dir={train_dir}", *extra],
               check=check, env=env)


def train_command(args, train_dir, extra=()):
    work = Path(args.work)
    return [str(c) for c in (work / "train10.bin", "--hparams", work / "hp.txt",
                             f"--dataset_dir={work / 'data'}", f"--train_dir={train_dir}",
                             *extra)]


class Running:
    """train.bin in the background, its output collected by a thread so
    that the test can wait for a line with a timeout."""

    def __init__(self, cmd, env=None):
        # A signal ignored in the test's parent (a background job of a
        # script ignores SIGINT) would stay ignored in train.bin.
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
            preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL)
                                for s in (signal.SIGINT, signal.SIGTERM)])
        self.lines, self.changed = [], threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.lines.append(None)
            self.changed.notify_all()

    def wait_for(self, pattern, timeout=300):
        """The first line matching pattern; None when the run ended first."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self.changed:
            while True:
                for line in self.lines[seen:]:
                    if line is None:
                        return None
                    if re.search(pattern, line):
                        return line
                seen = len(self.lines)
                if not self.changed.wait(max(0.0, deadline - time.monotonic())) and \
                        time.monotonic() >= deadline:
                    self.proc.kill()
                    fail(f"no line '{pattern}' within {timeout} s:\n{self.output()[-2000:]}")

    def finish(self, timeout=300):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            fail(f"train.bin still ran {timeout} s later:\n{self.output()[-2000:]}")
        self.reader.join()
        return self.output()

    def output(self):
        with self.changed:
            return "".join(line for line in self.lines if line)


def fresh(directory):
    shutil.rmtree(directory, ignore_errors=True)
    return directory


def indexed_checkpoint(directory):
    """The step of the checkpoint the index names, None without one."""
    index = Path(directory) / "checkpoint"
    m = index.exists() and re.search(r'^model_checkpoint_path: "model\.ckpt-(\d+)"',
                                     index.read_text(), re.M)
    return int(m.group(1)) if m else None


def check_stop(directory, log, name):
    """The stop line of a run stopped by signal `name`: its step, whose
    checkpoint is written and indexed."""
    m = re.search(rf"^train\.bin: stopped by {name} after step (\d+); checkpoint (\S+) "
                  r"written; resume with the same command$", log, re.M)
    if not m:
        fail(f"no stop line for {name}:\n{log[-2000:]}")
    step = int(m.group(1))
    path = Path(directory) / f"model.ckpt-{step}"
    if m.group(2) != str(path) or read_checkpoint(path)[:2] != (step, step):
        fail(f"the stop line names {m.group(2)}; {path} is not a checkpoint of step {step}")
    if indexed_checkpoint(directory) != step:
        fail(f"the index names step {indexed_checkpoint(directory)}, not {step}")
    return step


def step_lines(log):
    return {int(m.group(1)): m.group(0).split(" images/s")[0]
            for m in re.finditer(r"^step (\d+): loss=.*$", log, re.M)}


def final_checkpoint(directory, final_step=FINAL_STEP):
    return Path(directory) / f"model.ckpt-{final_step}"


def write_idx_slice(source, prefix, count, out):
    images = gzip.open(source / f"{prefix}-images-idx3-ubyte.gz").read()
    labels = gzip.open(source / f"{prefix}-labels-idx1-ubyte.gz").read()
    rows, cols = struct.unpack_from(">II", images, 8)
    (out / f"{prefix}-images-idx3-ubyte").write_bytes(
        struct.pack(">IIII", 0x803, count, rows, cols) + images[16:16 + count * rows * cols])
    (out / f"{prefix}-labels-idx1-ubyte").write_bytes(
        struct.pack(">II", 0x801, count) + labels[8:8 + count])


def setup(args):
    work = Path(args.work)
    if not FASHION_MNIST.is_dir():
        print(f"FAILED: {FASHION_MNIST} is missing: install Debian's dataset-fashion-mnist "
              "(scripts/install-deps.sh)")
        sys.exit(1)
    shutil.rmtree(work, ignore_errors=True)
    (work / "idx").mkdir(parents=True)
    write_idx_slice(FASHION_MNIST, "train", TRAIN_IMAGES, work / "idx")
    write_idx_slice(FASHION_MNIST, "t10k", TEST_IMAGES, work / "idx")
    run(args, [args.fastnn_data, "convert", "--format=idx", f"--input={work / 'idx'}",
               f"--output={work / 'data'}", "--name=fmnist", "--shards=2", "--no-progress"])
    (work / "hp.txt").write_text(HPARAMS)
    for classes in (10, 5):
        run(args, [args.torch_python, args.export, "--model", "lenet", "-o",
                   work / f"lenet{classes}.onnx", "--num-classes", classes])
        run(args, [args.fastnnc, work / f"lenet{classes}.onnx", "-o", work / f"train{classes}.bin",
                   "--hparams", work / "hp.txt", f"--hparam=num_classes={classes}"])
    ref = train(args, work / "ref")
    (work / "ref.log").write_text(ref.stdout)
    if not final_checkpoint(work / "ref").exists():
        fail(f"the reference run wrote no {final_checkpoint(work / 'ref')}:\n{ref.stdout}")
    print(f"reference run: {len(step_lines(ref.stdout))} step lines, "
          f"{final_checkpoint(work / 'ref')}")


def compare_with_reference(work, directory, log, reference=None, final_step=FINAL_STEP):
    """directory's final checkpoint against the uninterrupted run in
    reference (ref unless given), and the step lines of log against its."""
    reference = reference or work / "ref"
    ref = read_checkpoint(final_checkpoint(reference, final_step))
    got = read_checkpoint(final_checkpoint(directory, final_step))
    if got[:3] != ref[:3]:
        fail(f"step/position/seed {got[:3]} != the reference's {ref[:3]}")
    differing = [n for n in ref[3] if ref[3][n] != got[3].get(n)]
    if differing or set(got[3]) != set(ref[3]):
        fail(f"after resuming, tensors differ from the uninterrupted run: {differing}")
    if final_checkpoint(directory, final_step).read_bytes() != \
            final_checkpoint(reference, final_step).read_bytes():
        fail("the final checkpoint files differ")
    # The steps after the restart log what the uninterrupted run logged.
    ref_lines = step_lines(reference.with_suffix(".log").read_text())
    lines = step_lines(log)
    for step, line in lines.items():
        if ref_lines.get(step) != line:
            fail(f"step {step}: '{line}' vs the reference's '{ref_lines.get(step)}'")
    print(f"{len(ref[3])} tensors of {final_checkpoint(directory, final_step)} bitwise equal to the "
          f"uninterrupted run's; {len(lines)} step lines after the restart equal too")


def resume(args):
    work = Path(args.work)
    directory = work / "resume"
    shutil.rmtree(directory, ignore_errors=True)
    proc = subprocess.Popen([work / "train10.bin", "--hparams", work / "hp.txt",
                             f"--dataset_dir={work / 'data'}", f"--train_dir={directory}"],
                            stdout=subprocess.PIPE, text=True)
    killed_after = None
    for line in proc.stdout:
        if line.startswith("train.bin: saved checkpoint"):
            proc.send_signal(signal.SIGKILL)
            killed_after = line.strip()
            break
    proc.stdout.close()
    if proc.wait() != -signal.SIGKILL or killed_after is None:
        fail(f"the run was not killed mid-training (exit {proc.returncode})")
    saved = sorted(int(p.name.split("-")[1]) for p in directory.glob("model.ckpt-*")
                   if p.name.split("-")[1].isdigit())
    if not saved or saved[-1] >= FINAL_STEP:
        fail(f"killed after '{killed_after}', the directory holds {saved}")
    print(f"killed with SIGKILL after '{killed_after}'; checkpoints {saved}")
    restarted = train(args, directory)
    m = re.search(r"resuming (\S+) at step (\d+) \(input position: (\d+) batches\)",
                  restarted.stdout)
    if not m or int(m.group(2)) != saved[-1] or int(m.group(3)) != saved[-1]:
        fail(f"the restart did not resume step {saved[-1]}:\n{restarted.stdout[:2000]}")
    compare_with_reference(work, directory, restarted.stdout)
    # TensorBoard drops the killed run's steps after its checkpoint (the
    # restart's SessionLog START), so the loss series is the uninterrupted one.
    series = tensorboard_scalars(directory)["loss"]
    ref_series = tensorboard_scalars(work / "ref")["loss"]
    if [(s, v) for s, v in series] != [(s, v) for s, v in ref_series]:
        fail(f"TensorBoard's loss series of the resumed run {series} differs from the "
             f"uninterrupted run's {ref_series}")
    print(f"TensorBoard shows the resumed run's {len(series)} loss points as the uninterrupted run's")


def interrupted_write(args):
    work = Path(args.work)
    directory = work / "interrupted"
    shutil.rmtree(directory, ignore_errors=True)
    env = dict(os.environ, FASTNN_TEST_KILL_IN_CHECKPOINT="40")
    killed = train(args, directory, env=env, check=False)
    if killed.returncode != -signal.SIGKILL:
        fail(f"the write hook did not kill the run (exit {killed.returncode})")
    temp, good = directory / "model.ckpt-40.tmp", directory / "model.ckpt-20"
    if not temp.exists() or (directory / "model.ckpt-40").exists():
        fail(f"expected a partial {temp} and no model.ckpt-40: {sorted(os.listdir(directory))}")
    index = (directory / "checkpoint").read_text()
    if 'model_checkpoint_path: "model.ckpt-20"' not in index:
        fail(f"the index no longer names the good checkpoint:\n{index}")
    if read_checkpoint(good)[0] != 20:
        fail(f"{good} was damaged")
    print(f"killed while writing step 40: {temp.stat().st_size} bytes of a partial file, "
          f"index and {good.name} intact")
    restarted = train(args, directory)
    for expected in (f"removed {temp}, left by an interrupted write",
                     f"resuming {good} at step 20"):
        if expected not in restarted.stdout:
            fail(f"the restart did not say '{expected}':\n{restarted.stdout[:2000]}")
    compare_with_reference(work, directory, restarted.stdout)


def resume_to_the_end(args, directory, step):
    """Restarts the run in directory, which resumes step, and checks it ends
    as ref."""
    restarted = train(args, directory)
    if f"resuming {directory}/model.ckpt-{step} at step {step}" not in restarted.stdout:
        fail(f"the restart did not resume step {step}:\n{restarted.stdout[:2000]}")
    compare_with_reference(Path(args.work), directory, restarted.stdout)


def stop_by_signal(args, signum):
    work, name = Path(args.work), signal.Signals(signum).name
    directory = fresh(work / name.lower())
    running = Running(train_command(args, directory))
    if running.wait_for(r"^step 10: loss=") is None:
        fail(f"the run ended before step 10:\n{running.output()[-2000:]}")
    running.proc.send_signal(signum)
    log = running.finish()
    if running.proc.returncode != 128 + signum:
        fail(f"exit {running.proc.returncode} after {name}, not {128 + signum}:\n{log[-2000:]}")
    step = check_stop(directory, log, name)
    if step >= FINAL_STEP:
        fail(f"{name} after step 10 stopped the run only at step {step}")
    print(f"{name} after step 10: stopped after step {step} with exit {128 + signum}, "
          f"model.ckpt-{step} written")
    resume_to_the_end(args, directory, step)


def second_signal(args):
    work = Path(args.work)
    directory = work / "second-signal"
    # The second signal must come while the first stop is in progress: after
    # train.bin says it is stopping, before the step in flight and the stop's
    # checkpoint are done. A machine slow to deliver it loses the race; try
    # again then.
    for attempt in range(1, 4):
        fresh(directory)
        running = Running(train_command(args, directory))
        if running.wait_for(r"^step 25: loss=") is None:
            fail(f"the run ended before step 25:\n{running.output()[-2000:]}")
        running.proc.send_signal(signal.SIGINT)
        if running.wait_for(r"^train\.bin: SIGINT: stopping") is None:
            fail(f"train.bin did not say it stops:\n{running.output()[-2000:]}")
        running.proc.send_signal(signal.SIGTERM)
        log = running.finish()
        if running.proc.returncode != 130 or "stopped by SIGINT" not in log:
            break
        print(f"attempt {attempt}: the stop was complete before the second signal came")
    if running.proc.returncode != 128 + signal.SIGTERM or "stopped by" in log:
        fail(f"exit {running.proc.returncode} after a second signal, not 143 at once:\n"
             f"{log[-2000:]}")
    step = indexed_checkpoint(directory)
    if step is None or step < 20 or read_checkpoint(directory / f"model.ckpt-{step}")[0] != step:
        fail(f"no intact checkpoint of step 20 or later: {sorted(os.listdir(directory))}")
    print(f"SIGINT after step 25, SIGTERM while stopping: exit 143 at once; "
          f"model.ckpt-{step} intact")
    resume_to_the_end(args, directory, step)


def soak(args, signum):
    """args.kills interruptions at random moments (seeded), a restart after
    each with the same command, then a run to the end; args.epochs other
    than ref's 3 train a reference of their own first."""
    work, name = Path(args.work), signal.Signals(signum).name
    # Its own directories per length: the Long soak may run beside the short.
    directory = fresh(work / f"soak-{name.lower()}-{args.kills}")
    flags, reference = ["--save_checkpoints_steps=3"], work / "ref"
    final_step = TRAIN_IMAGES * args.epochs // BATCH
    if args.epochs != 3:
        # Longer, to fit the interruptions; evaluations would only slow it.
        flags += [f"--num_epochs={args.epochs}", "--eval_every_n_iters=0",
                  "--profile_every_n_iters=0"]
        reference = fresh(work / f"soak-{name.lower()}-{args.kills}-ref")
        reference.with_suffix(".log").write_text(train(args, reference, flags).stdout)
    cmd = train_command(args, directory, flags)
    rng = random.Random(args.seed)
    counts = {"before the first step": 0, "mid-training": 0, "in a checkpoint write": 0,
              "stopped cleanly": 0, "after the end": 0}
    started = time.monotonic()
    for _ in range(args.kills):
        resumed = indexed_checkpoint(directory) or 0
        env = None
        # A third of the SIGKILLs land inside a checkpoint write, which a
        # random moment would hit rarely: the write hook kills halfway
        # through a save a few steps on.
        in_write = signum == signal.SIGKILL and rng.random() < 1 / 3
        if in_write:
            kill_step = min(final_step, (resumed // 3 + rng.randint(1, 4)) * 3)
            env = dict(os.environ, FASTNN_TEST_KILL_IN_CHECKPOINT=str(kill_step))
        delay = rng.uniform(0.1, 2.5)
        running = Running(cmd, env)
        if not in_write:
            try:
                running.proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                running.proc.send_signal(signum)
        log = running.finish()
        code = running.proc.returncode
        if code == 0 and final_checkpoint(directory, final_step).exists():
            counts["after the end"] += 1
        elif code == 128 + signum:
            check_stop(directory, log, name)
            counts["stopped cleanly"] += 1
        elif code == -signum:
            counts["in a checkpoint write" if in_write else
                   "mid-training" if re.search(r"^step \d+:", log, re.M) else
                   "before the first step"] += 1
        else:
            fail(f"exit {code} after {name}:\n{log[-2000:]}")
    final = train(args, directory, flags)
    print(f"{args.kills} x {name} (seed {args.seed}): " +
          ", ".join(f"{n} {what}" for what, n in counts.items()) +
          f"; {time.monotonic() - started:.1f} s")
    compare_with_reference(work, directory, final.stdout, reference, final_step)


def finetune(args):
    work = Path(args.work)
    directory = work / "finetune"
    shutil.rmtree(directory, ignore_errors=True)
    # The learning rate is 0, so the saved weights are exactly the restored
    # ones. Mock data: the Fashion-MNIST labels do not fit 5 classes.
    ran = run(args, [work / "train5.bin", "--hparams", work / "hp.txt",
                     "--num_classes=5", "--task_type=finetune", f"--model_dir={work / 'ref'}",
                     f"--train_dir={directory}", "--dataset_name=mock", "--stop_at_step=1",
                     "--learning_rate=0", "--learning_rate_decay_type=fixed",
                     "--eval_every_n_iters=0", "--profile_every_n_iters=0"])
    source = final_checkpoint(work / "ref")
    for expected in (f"finetuning from {source} (step {FINAL_STEP} of its run): restored 6 "
                     "parameters and statistics",
                     "finetune: skipped 'fc4.weight': checkpoint trainable dtype 0 [10, 1024] "
                     "vs model trainable dtype 0 [5, 1024]",
                     "finetune: skipped 'fc4.bias': checkpoint trainable dtype 0 [10] vs model "
                     "trainable dtype 0 [5]",
                     "optimizer slots start afresh and the step from 0"):
        if expected not in ran.stdout:
            fail(f"the finetune log lacks '{expected}':\n{ran.stdout}")
    _, _, _, ref = read_checkpoint(source)
    step, position, _, tuned = read_checkpoint(directory / "model.ckpt-1")
    if (step, position) != (1, 1):
        fail(f"the finetuned run did not restart at step 0: step {step}, position {position}")
    for name, (role, dtype, shape, data) in tuned.items():
        if role == 0 and not name.startswith("fc4."):
            if data != ref[name][3]:
                fail(f"{name} was not restored")
        elif role == 0 and shape[0] != 5:
            fail(f"{name} has shape {shape}")
    print(f"finetuned the 5-class model from {source}: every trainable but fc4.* restored")


def test_split(work):
    """The test split's images (lenet preprocessing) and labels, decoded by
    TensorFlow independently of train.bin's pipeline."""
    import numpy as np
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import tensorflow as tf
    images, labels = [], []
    # The records only: train.bin's record indexes (*.fnnidx) lie beside them.
    files = sorted(str(p) for p in (work / "data").glob("*-test-*.tfrecord"))
    for record in tf.data.TFRecordDataset(files):
        example = tf.io.parse_single_example(record, {
            "image/encoded": tf.io.FixedLenFeature([], tf.string),
            "image/class/label": tf.io.FixedLenFeature([], tf.int64)})
        pixels = tf.io.decode_png(example["image/encoded"], channels=1).numpy()
        # lenet preprocessing (TF-slim): (pixel - 128) / 128.
        images.append((pixels.astype(np.float32).transpose(2, 0, 1) - 128.0) / 128.0)
        labels.append(int(example["image/class/label"].numpy()))
    return np.stack(images), np.array(labels)


def metrics(logits, labels):
    """Samples, top-1, top-5 and mean softmax cross-entropy of logits."""
    import numpy as np
    shifted = logits - logits.max(axis=1, keepdims=True)
    loss = -(shifted[np.arange(len(labels)), labels] - np.log(np.exp(shifted).sum(axis=1)))
    rank = (logits > logits[np.arange(len(labels)), labels][:, None]).sum(axis=1)
    return len(labels), float((rank < 1).mean()), float((rank < 5).mean()), float(loss.mean())


def onnx_reference(work):
    """Top-1, top-5 and mean loss of ONNX Runtime on the test split, with
    the ONNX model's initializers replaced by the reference checkpoint."""
    import numpy as np
    import onnx
    import onnxruntime
    from onnx import numpy_helper
    _, _, _, tensors = read_checkpoint(final_checkpoint(work / "ref"))
    model = onnx.load(str(work / "lenet10.onnx"))
    for init in model.graph.initializer:
        role, dtype, shape, data = tensors[init.name]
        init.CopyFrom(numpy_helper.from_array(
            np.frombuffer(data, np.float32).reshape(shape), init.name))
    batch, labels = test_split(work)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])
    padded = np.concatenate([batch, np.zeros((BATCH - len(batch) % BATCH,) + batch.shape[1:],
                                             np.float32)])
    logits = np.concatenate([session.run(None, {session.get_inputs()[0].name: padded[i:i + BATCH]})[0]
                             for i in range(0, len(padded), BATCH)])[:len(batch)]
    return metrics(logits, labels)


def parse_eval(line):
    m = re.search(r"^eval: step=(\d+) samples=(\d+) top1=(\S+) top5=(\S+) loss=(\S+)$", line, re.M)
    if not m:
        fail(f"no eval line in:\n{line}")
    return int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5))


def evaluate(args):
    work = Path(args.work)
    # --eval adds events to its directory: a copy keeps the reference as
    # trained for the other checks.
    evaluated = work / "evaluated"
    shutil.rmtree(evaluated, ignore_errors=True)
    shutil.copytree(work / "ref", evaluated)
    ran = train(args, evaluated, ["--eval"])
    step, samples, top1, top5, loss = parse_eval(ran.stdout)
    if step != FINAL_STEP or samples != TEST_IMAGES:
        fail(f"evaluated step {step} over {samples} samples, expected {FINAL_STEP} and {TEST_IMAGES}")
    ref_samples, ref_top1, ref_top5, ref_loss = onnx_reference(work)
    print(f"train.bin --eval: samples={samples} top1={top1:.6f} top5={top5:.6f} loss={loss:.6f}")
    print(f"ONNX Runtime:     samples={ref_samples} top1={ref_top1:.6f} top5={ref_top5:.6f} "
          f"loss={ref_loss:.6f}")
    # A near-tie may rank one sample differently; the loss is a float sum.
    if (abs(top1 - ref_top1) * samples > 1.01 or abs(top5 - ref_top5) * samples > 1.01
            or abs(loss - ref_loss) > 1e-4 * max(1.0, ref_loss)):
        fail("train.bin --eval disagrees with ONNX Runtime")
    if top1 < 0.5:
        fail(f"top-1 {top1} after 3 epochs: the model did not learn")
    evals = tensorboard_scalars(evaluated / "eval")["top1_accuracy"]
    if evals[-1][0] != FINAL_STEP or round(evals[-1][1], 6) != top1:
        fail(f"--eval's TensorBoard event {evals[-1]} vs its line top1={top1}")
    # The evaluation during training of the same weights printed the same.
    during = [parse_eval(l) for l in (work / "ref.log").read_text().splitlines()
              if l.startswith("eval:")]
    if [d[0] for d in during] != [31, 62, 93] or during[-1] != (step, samples, top1, top5, loss):
        fail(f"evaluations during training {during} vs --eval {(step, samples, top1, top5, loss)}")

    # A damaged latest checkpoint: --eval says so and uses the older one.
    latest = final_checkpoint(evaluated)
    latest.write_bytes(latest.read_bytes()[:1000])
    ran = train(args, evaluated, ["--eval"])
    if (f"warning: {latest}: truncated or damaged checkpoint" not in ran.stdout
            or "using the older" not in ran.stdout or parse_eval(ran.stdout)[0] != 80):
        fail(f"--eval on a damaged latest checkpoint:\n{ran.stdout}")
    empty = work / "empty"
    empty.mkdir(exist_ok=True)
    ran = train(args, empty, ["--eval"], check=False)
    if ran.returncode != 1 or "holds no checkpoint for --eval" not in ran.stderr:
        fail(f"--eval without a checkpoint: exit {ran.returncode}, {ran.stderr}")


def export(args):
    """train.bin --export-onnx writes the compiled-from model with ref's
    final weights: valid under onnx.checker, initializers bitwise equal to
    the checkpoint, and infer.bin compiled from it scores the test split as
    train.bin --eval does."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    work = Path(args.work)
    exported = work / "exported.onnx"
    exported.unlink(missing_ok=True)
    ran = train(args, work / "ref", ["--export-onnx", exported])
    print(ran.stdout.strip())
    onnx.checker.check_model(str(exported), full_check=True)
    model = onnx.load(str(exported))
    original = onnx.load(str(work / "lenet10.onnx"))
    if [n.op_type for n in model.graph.node] != [n.op_type for n in original.graph.node]:
        fail("the exported graph's nodes differ from the model train.bin was compiled from")
    _, _, _, tensors = read_checkpoint(final_checkpoint(work / "ref"))
    for init in model.graph.initializer:
        if numpy_helper.to_array(init).tobytes() != tensors[init.name][3]:
            fail(f"exported initializer {init.name} differs from the checkpoint's")
    if {i.name for i in model.graph.initializer} != {
            n for n, t in tensors.items() if t[0] in (0, 1)}:
        fail("the exported initializers are not the checkpoint's weights and statistics")

    images, labels = test_split(work)
    infer = work / "exported-infer.bin"
    run(args, [args.fastnnc, exported, "--mode=infer", f"--batch-size={len(labels)}",
               "-o", infer])
    np.save(work / "test-images.npy", images)
    (work / "exported-out").mkdir(exist_ok=True)
    input_name = model.graph.input[0].name
    run(args, [infer, "--input", f"{input_name}={work / 'test-images.npy'}",
               "--output-dir", work / "exported-out"])
    logits = np.load(work / "exported-out" / f"{model.graph.output[0].name}.npy")
    samples, top1, top5, loss = metrics(logits, labels)
    evaluated = work / "export-eval"
    shutil.rmtree(evaluated, ignore_errors=True)
    shutil.copytree(work / "ref", evaluated)
    _, eval_samples, eval_top1, eval_top5, eval_loss = parse_eval(
        train(args, evaluated, ["--eval"]).stdout)
    print(f"infer.bin on the export: samples={samples} top1={top1:.6f} top5={top5:.6f} "
          f"loss={loss:.6f}")
    print(f"train.bin --eval:        samples={eval_samples} top1={eval_top1:.6f} "
          f"top5={eval_top5:.6f} loss={eval_loss:.6f}")
    if (samples, round(top1, 6), round(top5, 6)) != (eval_samples, eval_top1, eval_top5) \
            or abs(loss - eval_loss) > 1e-4 * max(1.0, loss):
        fail("infer.bin on the exported model disagrees with train.bin --eval")

    empty = work / "export-empty"
    empty.mkdir(exist_ok=True)
    ran = train(args, empty, ["--export-onnx", work / "none.onnx"], check=False)
    if ran.returncode != 1 or "holds no checkpoint for --export-onnx" not in ran.stderr:
        fail(f"--export-onnx without a checkpoint: exit {ran.returncode}, {ran.stderr}")


def tensorboard_scalars(directory):
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(directory))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def tensorboard(args):
    work = Path(args.work)
    scalars = tensorboard_scalars(work / "ref")
    tags = {"loss", "learning_rate", "images_per_second", "top1_accuracy", "top5_accuracy"}
    if set(scalars) != tags:
        fail(f"tags {sorted(scalars)}, expected {sorted(tags)}")
    log = (work / "ref.log").read_text()
    printed = {int(m.group(1)): tuple(float(m.group(i)) for i in range(2, 6))
               for m in re.finditer(r"^step (\d+): loss=(\S+) lr=(\S+) top1=(\S+) top5=(\S+) ",
                                    log, re.M)}
    # The log prints loss=%.6f lr=%.6g top1=%.4f top5=%.4f.
    tolerances = {"loss": (0, 5.1e-7), "learning_rate": (1e-5, 0),
                  "top1_accuracy": (0, 5.1e-5), "top5_accuracy": (0, 5.1e-5)}
    for index, tag in enumerate(["loss", "learning_rate", "top1_accuracy", "top5_accuracy"]):
        steps = [s for s, _ in scalars[tag]]
        if steps != sorted(printed):
            fail(f"{tag} at steps {steps}, the log printed steps {sorted(printed)}")
        rel, abs_ = tolerances[tag]
        for step, value in scalars[tag]:
            want = printed[step][index]
            if not math.isclose(value, want, rel_tol=rel, abs_tol=abs_):
                fail(f"{tag} at step {step}: {value} in TensorBoard, {want} in the log")
    evals = tensorboard_scalars(work / "ref" / "eval")
    during = [parse_eval(l) for l in log.splitlines() if l.startswith("eval:")]
    for tag, index in (("top1_accuracy", 2), ("top5_accuracy", 3), ("loss", 4)):
        # The log prints 5 decimals; TensorBoard holds the float32, which
        # may round the other way at a last-digit tie.
        got = [(s, round(v, 5)) for s, v in evals.get(tag, [])]
        want = [(d[0], round(d[index], 5)) for d in during]
        if [s for s, _ in got] != [s for s, _ in want] or any(
                not math.isclose(g, w, rel_tol=0, abs_tol=1.01e-5)
                for (_, g), (_, w) in zip(got, want)):
            fail(f"eval {tag}: {got} in TensorBoard, {want} in the log")
    print(f"TensorBoard reads {len(scalars['loss'])} steps of {sorted(tags)} as the log printed "
          f"them, and {len(during)} evaluations")


def timeline(args):
    work = Path(args.work)
    files = sorted((work / "ref").glob("timeline-step-*.json"))
    if [f.name for f in files] != ["timeline-step-40.json", "timeline-step-80.json"]:
        fail(f"timelines {[f.name for f in files]}")
    for path in files:
        events = json.loads(path.read_text())["traceEvents"]
        spans = [e for e in events if e["ph"] == "X"]
        kernels = [e for e in spans if e["cat"] == "kernel"]
        waits = [e for e in spans if e["cat"] == "input" and e["name"] == "data wait"]
        steps = [e for e in spans if e["cat"] == "step"]
        if len(steps) != 1 or len(waits) != 1 or len(kernels) < 10:
            fail(f"{path}: {len(steps)} step, {len(waits)} data-wait and {len(kernels)} kernel spans")
        names = {k["name"].split()[0] for k in kernels}
        for op in ("conv2d", "conv2d_backward", "apply_optimizer"):
            if op not in names:
                fail(f"{path}: no {op} span among {sorted(names)}")
        step = steps[0]
        for span in spans:
            if span["dur"] < 0 or span["ts"] < step["ts"] or \
                    span["ts"] + span["dur"] > step["ts"] + step["dur"] + 1e-3:
                fail(f"{path}: span {span} outside its step {step}")
        print(f"{path.name}: {len(kernels)} kernel spans ({len(names)} ops), "
              f"data wait {waits[0]['dur']:.1f} us of a {step['dur']:.1f} us step")


def damage_data_crc(path, indices):
    """Flips a bit of the data CRC of the records `indices` of an
    uncompressed TFRecord file; returns their byte offsets."""
    data = bytearray(Path(path).read_bytes())
    offsets, at = [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        offsets.append(at)
        at += 12 + length + 4
    for index in indices:
        end = offsets[index + 1] if index + 1 < len(offsets) else len(data)
        data[end - 1] ^= 0x10
    Path(path).write_bytes(bytes(data))
    return [offsets[i] for i in indices]


SKIP_STEPS = 40  # two checkpoints (save_checkpoints_steps=20), past both damaged records


def skip_corrupt(args):
    work = Path(args.work)
    data = work / "damaged-data"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(work / "data", data)
    shard = data / "fmnist-train-00000-of-00002.tfrecord"
    first, second = damage_data_crc(shard, [100, 300])

    def command(directory, *extra, restart=False):
        if not restart:
            fresh(directory)
        return [str(c) for c in (work / "train10.bin", "--hparams", work / "hp.txt",
                                 f"--dataset_dir={data}", f"--train_dir={directory}",
                                 f"--stop_at_step={SKIP_STEPS}", *extra)]

    def damaged(offset):
        return f"{shard}: byte offset {offset}: corrupt record: data CRC mismatch"

    # The default: the first damaged record stops the run, naming it.
    ran = run(args, command(work / "skip0"), check=False)
    want = (f"train.bin: error: {damaged(first)}; repair or remove the file, or set "
            "skip_corrupt_records=N to skip up to N damaged records")
    if ran.returncode != 1 or want not in ran.stderr.splitlines():
        fail(f"skip_corrupt_records=0: exit {ran.returncode}, not the line '{want}':\n"
             f"{ran.stderr[-2000:]}")
    print(f"default: exit 1 with '{want}'")

    # One allowed: the second stops the run, saying the limit is reached.
    ran = run(args, command(work / "skip1", "--skip_corrupt_records=1"), check=False)
    want = (f"train.bin: error: {damaged(second)}; that is damaged record 2 and at most 1 are "
            "skipped (skip_corrupt_records=1 from --skip_corrupt_records, counted by each "
            "worker): the limit is reached; repair or remove the file, or raise "
            "skip_corrupt_records")
    logged = ("train.bin: skipped damaged record 1 of the training input "
              f"(skip_corrupt_records=1): {damaged(first)}")
    if ran.returncode != 1 or want not in ran.stderr.splitlines() or \
            logged not in ran.stdout.splitlines():
        fail(f"skip_corrupt_records=1: exit {ran.returncode}, not the lines '{logged}' and "
             f"'{want}':\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}")
    print(f"skip_corrupt_records=1: '{logged}', then exit 1 with '{want}'")

    # Two allowed: trains, logs both, counts 2 in the summary and in TensorBoard.
    reference = work / "skip2"
    ran = run(args, command(reference, "--skip_corrupt_records=2"))
    (work / "skip2.log").write_text(ran.stdout)
    skipped = [line for line in ran.stdout.splitlines() if "skipped damaged record" in line]
    want = [f"train.bin: skipped damaged record {n} of the training input "
            f"(skip_corrupt_records=2): {damaged(offset)}"
            for n, offset in ((1, first), (2, second))]
    if skipped != want:
        fail(f"skip_corrupt_records=2 logged {skipped}, expected {want}")
    summary = [line for line in ran.stdout.splitlines() if line.startswith("train.bin: summary:")]
    if len(summary) != 1 or "; 2 damaged records skipped by this process " \
            "(skip_corrupt_records)" not in summary[0]:
        fail(f"the summary does not count 2 skipped records: {summary}")
    if not final_checkpoint(reference, SKIP_STEPS).exists():
        fail(f"no {final_checkpoint(reference, SKIP_STEPS)}:\n{ran.stdout[-2000:]}")
    scalars = tensorboard_scalars(reference)
    counts = scalars.get("data/corrupt_records_skipped", [])
    loss_steps = [step for step, _ in scalars["loss"]]
    values = [v for _, v in counts]
    if [step for step, _ in counts] != loss_steps or values != sorted(values) or \
            not values or values[-1] != 2:
        fail(f"TensorBoard's data/corrupt_records_skipped is {counts} (loss at {loss_steps})")
    print(f"skip_corrupt_records=2: both logged, the summary and TensorBoard ({counts[-1]}) "
          "count 2")

    # Killed after its first checkpoint and resumed: the same weights.
    directory = work / "skip2-resume"
    proc = subprocess.Popen(command(directory, "--skip_corrupt_records=2"),
                            stdout=subprocess.PIPE, text=True)
    killed_after = None
    for line in proc.stdout:
        if line.startswith("train.bin: saved checkpoint"):
            proc.send_signal(signal.SIGKILL)
            killed_after = line.strip()
            break
    proc.stdout.close()
    if proc.wait() != -signal.SIGKILL or killed_after is None:
        fail(f"the run was not killed mid-training (exit {proc.returncode})")
    restarted = run(args, command(directory, "--skip_corrupt_records=2", restart=True))
    if not re.search(r"resuming \S+ at step 20 \(input position: 20 batches\)",
                     restarted.stdout):
        fail(f"killed after '{killed_after}', the restart did not resume step 20:\n"
             f"{restarted.stdout[:2000]}")
    compare_with_reference(work, directory, restarted.stdout, reference, SKIP_STEPS)
    summary = [line for line in restarted.stdout.splitlines()
               if line.startswith("train.bin: summary:")]
    if len(summary) != 1 or "; 2 damaged records skipped by this process" not in summary[0]:
        fail(f"the resumed run's summary does not count the 2 records it read again: {summary}")
    print("the resumed run counts the 2 damaged records it reads again on its way to the "
          "resume position")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["setup", "resume", "interrupted-write", "sigterm",
                                            "sigint", "second-signal", "soak-kill", "soak-term",
                                            "finetune", "eval", "export", "tensorboard",
                                            "timeline", "skip-corrupt"])
    parser.add_argument("--work", required=True)
    parser.add_argument("--fastnnc")
    parser.add_argument("--fastnn-data")
    parser.add_argument("--export")
    parser.add_argument("--torch-python")
    parser.add_argument("--kills", type=int, default=5, help="interruptions of a soak")
    parser.add_argument("--seed", type=int, default=1, help="a soak's random moments")
    parser.add_argument("--epochs", type=int, default=3, help="the length of a soak's run")
    args = parser.parse_args()
    if args.command != "setup" and not final_checkpoint(Path(args.work) / "ref").exists():
        print("FAILED: no reference run: trainer.e2e.setup has not run or failed")
        sys.exit(1)
    {"setup": setup, "resume": resume, "interrupted-write": interrupted_write,
     "sigterm": lambda a: stop_by_signal(a, signal.SIGTERM),
     "sigint": lambda a: stop_by_signal(a, signal.SIGINT), "second-signal": second_signal,
     "soak-kill": lambda a: soak(a, signal.SIGKILL),
     "soak-term": lambda a: soak(a, signal.SIGTERM), "finetune": finetune, "eval": evaluate, "export": export, "tensorboard": tensorboard,
     "timeline": timeline, "skip-corrupt": skip_corrupt}[args.command](args)


if __name__ == "__main__":
    main()
