"""Helpers shared by the bench/*/bench.py scripts."""
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# Debian's dataset-fashion-mnist, the README job's data.
FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
# The README job's configuration.
MAIN_JOB_CONFIG = os.path.join(ROOT, "configs", "fashion_mnist_lenet.txt")


def log(*args):
    """Progress on stderr; stdout carries the RESULTS.md section."""
    print(*args, file=sys.stderr, flush=True)


def cpu_name():
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def run(command, env=None):
    """Runs `command`, returning its stdout and stderr together; raises
    with that output if it fails."""
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (
            " ".join(command), result.returncode, result.stdout))
    return result.stdout


def main_job_value(key):
    """A key's value in the README job's configuration."""
    with open(MAIN_JOB_CONFIG) as f:
        for line in f:
            if line.startswith(key + "="):
                return line.split("=", 1)[1].strip()
    raise RuntimeError("%s has no %s" % (MAIN_JOB_CONFIG, key))


# Forks and execs the command in argv[2:], writes the peak RSS (KiB) that
# wait4 reports for it to the file argv[1] and exits with its status.
_PEAK_RSS_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(command, env=None):
    """Runs a command; returns its stdout and peak RSS in MiB.

    Through a small launcher process: Linux keeps a process's peak RSS
    across fork and exec, so a child forked straight from this interpreter
    (which has imported torch) would report at least this interpreter's.
    """
    with tempfile.NamedTemporaryFile(mode="r") as peak:
        process = subprocess.run(
            [sys.executable, "-c", _PEAK_RSS_LAUNCHER, peak.name] + command,
            stdout=subprocess.PIPE, env=env, text=True)
        if process.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (
                command[0], process.returncode, process.stdout))
        return process.stdout, int(peak.read()) / 1024.0
