"""train.bin on a full disk (ctest trainer.e2e.disk-*): the train_dir, or
the file exported, on a small tmpfs mounted in a private mount namespace
(`unshare -m` as root, else `unshare -rm`; a machine that allows neither
fails the test). It uses the train.bin and the reference run of
check_train_bin.py's setup fixture (WORK). Checkpoints, TensorBoard events
and timelines share train_dir, so the tmpfs is sized (or filled) for the
write that should fail:

  checkpoint-full  the tmpfs holds one checkpoint and not two: the second
                   save stops the run with exit 74 and one line naming the
                   file, no .tmp left, the index and the first checkpoint
                   intact; with the tmpfs grown, the same command resumes it
                   and ends bitwise as the reference run, and TensorBoard
                   shows the reference's loss series
  events-full      the tmpfs is full when the run starts: one warning for the
                   events and one for the timelines, training goes on; the
                   test frees the space once it has read both (train.bin's
                   stdout is a one-page pipe the test reads a byte at a time,
                   so train.bin cannot get far past them, nor to its first
                   checkpoint, before the space is back); both outputs say
                   they are written again, the run ends as the reference, and
                   TensorBoard reads every event after the failed ones
  export-full      --export-onnx onto a full tmpfs: exit 74, one line, the
                   previous export intact, no .tmp
  file-size-limit  ulimit -f below a checkpoint's size: the first save stops
                   the run with EFBIG (not SIGXFSZ), the events stay readable
"""
import argparse
import errno
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_train_bin as e2e  # noqa: E402
from check_train_bin import fail  # noqa: E402

EXIT_IO_ERROR = 74
PAGE = os.sysconf("SC_PAGESIZE")
ENOSPC = os.strerror(errno.ENOSPC)


def enter_mount_namespace(args):
    """Runs this script again, with --inside, in a private mount namespace,
    and exits with its code."""
    unshare = shutil.which("unshare")
    if not unshare:
        fail("no unshare (util-linux) to make a private mount namespace for the tmpfs")
    flags = "-m" if os.geteuid() == 0 else "-rm"
    probe = subprocess.run([unshare, flags, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        fail(f"`unshare {flags} true` failed ({probe.stderr.strip()}): this machine allows no "
             "private mount namespace, which the tmpfs of these tests needs")
    result = subprocess.run([unshare, flags, sys.executable, __file__, *sys.argv[1:], "--inside"])
    sys.exit(result.returncode)


def mount_tmpfs(directory, size):
    directory.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size // 1024}k", "tmpfs",
                             str(directory)], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"cannot mount a tmpfs on {directory}: {result.stderr.strip()}")


def resize_tmpfs(directory, size):
    # With the type and source given: in a user namespace (unshare -rm)
    # mount(8) cannot look them up.
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"remount,size={size // 1024}k",
                             "tmpfs", str(directory)], capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"cannot resize the tmpfs on {directory}: {result.stderr.strip()}")


def fill(directory):
    """Fills the file system of directory to the last page; the filler."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    chunk = b"\0" * (1 << 20)
    try:
        while chunk:
            try:
                os.write(fd, chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                chunk = chunk[:len(chunk) // 2]
    finally:
        os.close(fd)
    if os.statvfs(directory).f_bfree != 0:
        fail(f"{directory} still has {os.statvfs(directory).f_bfree} free blocks after filling")
    return filler


def checkpoint_bytes(work):
    return e2e.final_checkpoint(work / "ref").stat().st_size


def leftover_temps(directory):
    return sorted(str(p) for p in Path(directory).rglob("*.tmp"))


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.strip()]


def check_one_error_line(result, pattern, what):
    lines = error_lines(result.stderr)
    if result.returncode != EXIT_IO_ERROR or len(lines) != 1 or not re.fullmatch(pattern, lines[0]):
        fail(f"{what}: expected exit {EXIT_IO_ERROR} and one line matching\n  {pattern}\n"
             f"got exit {result.returncode} and stderr:\n{result.stderr}\nstdout tail:\n"
             f"{result.stdout[-2000:]}")
    print(f"{what}: exit {result.returncode}: {lines[0]}")


def checkpoint_full(args):
    work = Path(args.work)
    mount = work / "disk-faults" / "checkpoint-full"
    ckpt = checkpoint_bytes(work)
    # Room for one checkpoint and the small files, not for a second one.
    mount_tmpfs(mount, ckpt * 3 // 2)
    directory = mount / "run"
    failed = e2e.train(args, directory, check=False)
    d = re.escape(str(directory))
    check_one_error_line(
        failed,
        rf"train\.bin: error: {d}/model\.ckpt-40: cannot write: {ENOSPC} \(writing "
        rf"{d}/model\.ckpt-40\.tmp failed; it is removed\); training stopped after step 40; once "
        rf"the disk has room \(or its fault is fixed\), resume {d}/model\.ckpt-20 \(step 20\) "
        r"with the same command",
        "the second checkpoint on a disk with room for one")
    if f"saved checkpoint {directory}/model.ckpt-20 (step 20)" not in failed.stdout:
        fail(f"no checkpoint of step 20 was saved:\n{failed.stdout[-2000:]}")
    if leftover_temps(directory):
        fail(f"temporary files left: {leftover_temps(directory)}")
    if (directory / "model.ckpt-40").exists() or e2e.indexed_checkpoint(directory) != 20:
        fail(f"expected the index to name step 20 and no model.ckpt-40: "
             f"{sorted(os.listdir(directory))}, index {e2e.indexed_checkpoint(directory)}")
    if e2e.read_checkpoint(directory / "model.ckpt-20")[:2] != (20, 20):
        fail("model.ckpt-20 is not the checkpoint of step 20")
    print(f"index and {directory}/model.ckpt-20 intact, no .tmp")

    resize_tmpfs(mount, ckpt * 4)
    resumed = e2e.train(args, directory)
    if f"resuming {directory}/model.ckpt-20 at step 20" not in resumed.stdout:
        fail(f"the restart did not resume step 20:\n{resumed.stdout[:2000]}")
    e2e.compare_with_reference(work, directory, resumed.stdout)
    series = e2e.tensorboard_scalars(directory)["loss"]
    if series != e2e.tensorboard_scalars(work / "ref")["loss"]:
        fail(f"TensorBoard's loss series after the failed and the resumed run {series} "
             "differs from the reference's")
    print(f"TensorBoard reads both runs' events as the reference's {len(series)} loss points")


class OnePagePipe:
    """train.bin with its output on a pipe of one page, read a byte at a
    time: train.bin writes at most a page (and what its stdio buffer holds)
    beyond the line the test has read."""

    def __init__(self, cmd):
        read, write = os.pipe()
        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, PAGE)
        if fcntl.fcntl(write, fcntl.F_GETPIPE_SZ) != PAGE:
            fail("cannot make the one-page pipe the test synchronises on")
        self.proc = subprocess.Popen(cmd, stdout=write, stderr=subprocess.STDOUT)
        os.close(write)
        self.stream = os.fdopen(read, "rb", buffering=0)
        self.lines = []

    def readline(self, deadline):
        line = bytearray()
        while not line.endswith(b"\n"):
            if time.monotonic() > deadline:
                self.proc.kill()
                fail(f"train.bin took too long; its output:\n{''.join(self.lines)[-2000:]}")
            byte = self.stream.read(1)
            if not byte:
                return None
            line += byte
        self.lines.append(line.decode())
        return self.lines[-1]

    def wait_for(self, patterns, timeout=300):
        """Reads until a line matching each pattern has come."""
        deadline = time.monotonic() + timeout
        missing = list(patterns)
        while missing:
            line = self.readline(deadline)
            if line is None:
                fail(f"train.bin ended before lines matching {missing}:\n"
                     f"{''.join(self.lines)[-3000:]}")
            missing = [p for p in missing if not re.match(p, line)]

    def finish(self, timeout=300):
        deadline = time.monotonic() + timeout
        while self.readline(deadline) is not None:
            pass
        return self.proc.wait(), "".join(self.lines)


def events_full(args):
    work = Path(args.work)
    mount = work / "disk-faults" / "events-full"
    # Room for two checkpoints (the one kept and the next) once the filler
    # is gone, and for the events and timelines.
    mount_tmpfs(mount, checkpoint_bytes(work) * 2 + (16 << 20))
    directory = mount / "run"
    directory.mkdir()
    filler = fill(mount)
    # A line a step and a timeline every other step: more than a page of
    # output before the first checkpoint, at step 70.
    run = OnePagePipe(e2e.train_command(args, directory, [
        "--log_loss_every_n_iters=1", "--profile_every_n_iters=2", "--save_checkpoints_steps=70"]))
    d = re.escape(str(directory))
    events_warning = (rf"train\.bin: warning: {d}/events\.out\.tfevents\.[^:]+: cannot write a "
                      rf"TensorBoard event: {ENOSPC}; TensorBoard events are dropped until one can "
                      r"be written; training goes on$")
    timeline_warning = (rf"train\.bin: warning: {d}/timeline-step-2\.json: cannot write: {ENOSPC} "
                        rf"\(writing {d}/timeline-step-2\.json\.tmp failed; it is removed\); "
                        r"timelines are dropped until one can be written; training goes on$")
    run.wait_for([events_warning, timeline_warning])
    filler.unlink()
    code, log = run.finish()
    if code != 0:
        fail(f"train.bin exited with {code}:\n{log[-3000:]}")
    warnings = [line for line in log.splitlines() if "warning:" in line]
    if len(warnings) != 2:
        fail(f"expected one warning for the events and one for the timelines, got {warnings}")
    for what in ("TensorBoard events", "timelines"):
        again = re.findall(rf"^train\.bin: {what} are written again after (\d+) failed writes?$",
                           log, re.M)
        if len(again) != 1:
            fail(f"expected one line saying the {what} are written again:\n{log[-3000:]}")
        print(f"{what}: a warning, then written again after {again[0]} failed writes")

    final = e2e.final_checkpoint(directory)
    if final.read_bytes() != e2e.final_checkpoint(work / "ref").read_bytes():
        fail(f"{final} differs from the reference run's")
    if e2e.indexed_checkpoint(directory) != e2e.FINAL_STEP or \
            e2e.read_checkpoint(directory / "model.ckpt-70")[0] != 70:
        fail(f"checkpoints: {sorted(os.listdir(directory))}")
    ref_lines = e2e.step_lines((work / "ref.log").read_text())
    lines = e2e.step_lines(log)
    if sorted(lines) != list(range(1, e2e.FINAL_STEP + 1)) or \
            any(lines[step] != line for step, line in ref_lines.items()):
        fail("the step lines differ from the reference run's")
    if leftover_temps(directory):
        fail(f"temporary files left: {leftover_temps(directory)}")
    print(f"{final} bitwise equal to the reference's; model.ckpt-70 saved; no .tmp")

    # TensorBoard reads the file whole: the version, the run's START (held
    # back until a write worked) and every step from the first written on.
    files = sorted(directory.glob("events.out.tfevents.*"))
    if len(files) != 1:
        fail(f"expected one event file: {files}")
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    events = list(LegacyEventFileLoader(str(files[0])).Load())
    kinds = [e.WhichOneof("what") for e in events]
    if kinds[:2] != ["file_version", "session_log"] or events[1].step != 1 or \
            set(kinds[2:]) != {"summary"}:
        fail(f"{files[0]}: events {kinds[:5]}..., START at step {events[1].step}")
    steps = [e.step for e in events[2:]]
    if steps != list(range(steps[0], e2e.FINAL_STEP + 1)) or steps[0] < 2:
        fail(f"{files[0]}: steps {steps}")
    for e in events[2:]:
        loss = [v.simple_value for v in e.summary.value if v.tag == "loss"]
        if not loss or f"loss={loss[0]:.6f}" not in lines[e.step]:
            fail(f"step {e.step}: loss {loss} in TensorBoard, '{lines[e.step]}' in the log")
    print(f"TensorBoard reads steps {steps[0]}-{steps[-1]} of {files[0].name} as the log printed "
          f"them (steps 1-{steps[0] - 1} came while the disk was full)")

    timelines = sorted(int(p.name.split("-")[2].split(".")[0])
                       for p in directory.glob("timeline-step-*.json"))
    if 2 in timelines or not timelines or timelines[-1] != 92 or \
            timelines != list(range(timelines[0], 93, 2)):
        fail(f"timelines of steps {timelines}")
    for step in timelines:
        json.loads((directory / f"timeline-step-{step}.json").read_text())
    print(f"timelines of steps {timelines[0]}-{timelines[-1]} (every other step) are whole JSON")


def export_full(args):
    work = Path(args.work)
    mount = work / "disk-faults" / "export-full"
    mount_tmpfs(mount, 16 * PAGE)
    exported = mount / "model.onnx"
    exported.write_bytes(b"the previous export")
    fill(mount)
    result = e2e.train(args, work / "ref", ["--export-onnx", exported], check=False)
    x = re.escape(str(exported))
    check_one_error_line(
        result, rf"train\.bin: error: {x}: cannot write: {ENOSPC} \(writing {x}\.tmp failed; it "
                r"is removed\)", "--export-onnx onto a full disk")
    if exported.read_bytes() != b"the previous export" or leftover_temps(mount):
        fail(f"the previous export was touched or a .tmp is left: {sorted(os.listdir(mount))}")
    print(f"{exported}: the previous export intact, no .tmp")


def file_size_limit(args):
    import resource
    work = Path(args.work)
    directory = e2e.fresh(work / "disk-faults" / "file-size-limit")
    limit = 1 << 20

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    result = subprocess.run(e2e.train_command(args, directory, ["--stop_at_step=25"]),
                            capture_output=True, text=True, preexec_fn=limit_file_size)
    d = re.escape(str(directory))
    check_one_error_line(
        result,
        rf"train\.bin: error: {d}/model\.ckpt-20: cannot write: {os.strerror(errno.EFBIG)} "
        rf"\(writing {d}/model\.ckpt-20\.tmp failed; it is removed\); training stopped after "
        r"step 20; once the disk has room \(or its fault is fixed\), start again with the same "
        r"command",
        f"the first checkpoint under a {limit}-byte file-size limit")
    if leftover_temps(directory) or list(directory.glob("model.ckpt-*")):
        fail(f"left behind: {sorted(os.listdir(directory))}")
    loss = e2e.tensorboard_scalars(directory)["loss"]
    if [s for s, _ in loss] != [5, 10, 15, 20]:
        fail(f"TensorBoard reads the loss at steps {[s for s, _ in loss]}")
    print("no checkpoint, no .tmp; TensorBoard reads the loss of steps 5-20")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["checkpoint-full", "events-full", "export-full",
                                            "file-size-limit"])
    parser.add_argument("--work", required=True)
    parser.add_argument("--inside", action="store_true",
                        help="(internal) already in the private mount namespace")
    args = parser.parse_args()
    if not e2e.final_checkpoint(Path(args.work) / "ref").exists():
        fail("no reference run: trainer.e2e.setup has not run or failed")
    if args.command == "file-size-limit":
        file_size_limit(args)
        return
    if not args.inside:
        enter_mount_namespace(args)
    {"checkpoint-full": checkpoint_full, "events-full": events_full,
     "export-full": export_full}[args.command](args)


if __name__ == "__main__":
    main()
