"""Helpers shared by the bench/*/bench.py scripts."""
import os
import platform
import subprocess
import sys

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
