"""Helpers shared by the bench/*/bench.py scripts."""
import platform
import sys


def log(*args):
    """Progress on stderr; stdout carries the RESULTS.md section."""
    print(*args, file=sys.stderr, flush=True)


def cpu_name():
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"
