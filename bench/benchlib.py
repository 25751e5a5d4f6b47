"""Helpers shared by the bench/*/bench.py scripts."""
import datetime
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

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


def cpu_matrix_flags():
    """The CPU's AVX-512 and AMX feature flags, which decide the kernels
    oneDNN, MKL and ONNX Runtime pick."""
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("flags"):
                return sorted(f for f in line.split(":", 1)[1].split()
                              if f.startswith(("avx512", "amx")))
    return []


def load_average():
    """The 1-, 5- and 15-minute load averages."""
    return os.getloadavg()


def machine_line(load_before, load_after):
    """The results' "Machine:" line: CPU, matrix flags, date, and the load
    averages (load_average()) before and after the measurements."""
    flags = cpu_matrix_flags()
    return ("- Machine: %s, %d cores (`%s`; %s; %s); %s. Load average "
            "(1/5/15 min) %.2f/%.2f/%.2f before, %.2f/%.2f/%.2f after the "
            "run: the machine is shared with other engineers' builds." % (
                platform.machine(), os.cpu_count(), cpu_name(),
                " ".join(flags) or "no AVX-512",
                "AMX" if any(f.startswith("amx") for f in flags)
                else "no AMX", datetime.datetime.now(
                    datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                *load_before, *load_after))


def fastnnc_line(fastnnc):
    """The results' line naming the compiler measured: the checkout's commit
    and when the binary was built (other engineers' uncommitted work in the
    same checkout may be in it)."""
    commit = subprocess.run(["git", "-C", ROOT, "log", "-1",
                             "--format=%h %s"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    built = datetime.datetime.fromtimestamp(
        os.path.getmtime(fastnnc), datetime.timezone.utc)
    return ("- fastnnc: `%s` built %s, checkout at %s (a checkout shared "
            "with work in progress)." % (
                os.path.relpath(fastnnc, ROOT),
                built.strftime("%Y-%m-%d %H:%M UTC"), commit[:70]))


def forward_macs(name):
    """Multiply-adds of one image's forward pass (convolutions, matmuls) of
    zoo model `name`, counted on the zoo's module with Debian's torch."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "tools", "zoo"))
    from fastnn_zoo.onnx_export import build_model

    model, config = build_model(name, seed=0)
    model.eval()
    macs = [0]

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            kernel = module.weight[0].numel()
            macs[0] += output.numel() * kernel
        elif isinstance(module, torch.nn.Linear):
            macs[0] += output.numel() * module.in_features

    for module in model.modules():
        module.register_forward_hook(count)
    size = config["image_size"]
    with torch.no_grad():
        model(torch.zeros(1, config["channels"], size, size))
    return macs[0]


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


# Forks and execs the command in argv[2:], writes the peak RSS (KiB) and the
# CPU seconds (user + system) that wait4 reports for it to the file argv[1]
# and exits with its status.
_RESOURCE_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%d %f" % (usage.ru_maxrss, usage.ru_utime + usage.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def last_error_line(text):
    """The last line of `text` that names an error, else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line]
    return (errors or lines or [""])[-1]


def run_measured(command, env=None):
    """Runs a command; returns its stdout and peak RSS in MiB. Raises
    RuntimeError naming its last error line if it fails."""
    out, usage = run_with_usage(command, env)
    return out, usage["rss_mib"]


def run_with_usage(command, env=None):
    """Runs a command; returns its stdout and a dict of its peak RSS
    (`rss_mib`), CPU seconds (`cpu_s`, user + system) and wall seconds
    (`wall_s`). Raises RuntimeError naming its last error line if it fails.

    Through a small launcher process: Linux keeps a process's peak RSS
    across fork and exec, so a child forked straight from this interpreter
    (which has imported torch) would report at least this interpreter's.
    """
    with tempfile.NamedTemporaryFile(mode="r") as usage:
        start = time.perf_counter()
        process = subprocess.run(
            [sys.executable, "-c", _RESOURCE_LAUNCHER, usage.name] + command,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
            text=True)
        wall = time.perf_counter() - start
        if process.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (
                os.path.basename(command[0]), process.returncode,
                last_error_line(process.stdout + process.stderr)))
        rss_kib, cpu = usage.read().split()
        return process.stdout, {"rss_mib": int(rss_kib) / 1024.0,
                                "cpu_s": float(cpu), "wall_s": wall}


def train_rates(binary, steps, log_every, env=None):
    """Runs train.bin for `steps` steps on the mock dataset, logging every
    `log_every`; returns the images/s of each log window and the peak RSS
    in MiB."""
    out, usage = run_with_usage(
        [binary, "--dataset_name=mock", "--stop_at_step=%d" % steps,
         "--log_loss_every_n_iters=%d" % log_every,
         "--hooks=StopAtStepHook,LoggingTensorHook"], env)
    rates = [float(r) for r in re.findall(r"step \d+: .*images/s=([0-9.]+)",
                                          out)]
    if len(rates) != steps // log_every:
        raise RuntimeError("unexpected train.bin output: " + out)
    return rates, usage["rss_mib"]


def measure_training(binary, batch, min_steps, min_seconds, env=None):
    """images/s of train.bin's timed steps after one warm-up step, and its
    peak RSS. A first run of 1 + `min_steps` steps gives the step time;
    models faster than `min_seconds` over those steps run again with enough
    steps for it, as one log window after the warm-up window."""
    rates, rss = train_rates(binary, 1 + min_steps, 1, env)
    timed = rates[1:]
    rate = len(timed) / sum(1.0 / r for r in timed)
    if min_steps * batch / rate >= min_seconds:
        return rate, rss
    steps = math.ceil(min_seconds * rate / batch)
    rates, rss = train_rates(binary, 2 * steps, steps, env)
    return rates[-1], rss


def time_inference(binary, repeat, threads):
    """ms per run of infer.bin over `repeat` timed runs (after its warm-up
    run) at `threads` threads, and its peak RSS in MiB."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out, usage = run_with_usage([binary, "--repeat", str(repeat),
                                 "--output-dir", os.path.dirname(binary)],
                                env)
    match = re.search(r"([0-9.]+) ms per run", out)
    if not match:
        raise RuntimeError("unexpected infer.bin output: " + out)
    return float(match.group(1)), usage["rss_mib"]


# The peers' virtual environments, made by scripts/install-peers.sh.
PEER_VENVS = {"torch": ".venv-torch2", "ort-training": ".venv-ort-training"}
PEERS_SCRIPT = os.path.join(ROOT, "bench", "peers.py")


def peer_python(venv):
    """The Python of peer venv `venv` (a PEER_VENVS key); exits with a
    one-line message naming the installer if it is missing."""
    python = os.path.join(ROOT, PEER_VENVS[venv], "bin", "python")
    if not os.access(python, os.X_OK):
        raise SystemExit("bench: %s is missing: run scripts/install-peers.sh"
                         " (pinned PyTorch 2, ONNX Runtime, ORT Training)"
                         % PEER_VENVS[venv])
    return python


def require_peers():
    """Checks every peer venv up front, before any compiling."""
    for venv in PEER_VENVS:
        peer_python(venv)


def peer_env(threads):
    """The environment of a peer process on `threads` threads. Inductor
    compiles in the process itself (no worker pool left behind, and none
    competing for the two cores)."""
    return dict(os.environ, OMP_NUM_THREADS=str(threads),
                MKL_NUM_THREADS=str(threads), TORCHINDUCTOR_COMPILE_THREADS="1")


def run_peer(venv, arguments, threads, env=None):
    """Runs `bench/peers.py ARGUMENTS` in peer venv `venv`; returns the
    value of its `key=value` result line and its peak RSS in MiB."""
    out, rss = run_measured([peer_python(venv), PEERS_SCRIPT] + arguments,
                            dict(peer_env(threads), **(env or {})))
    match = re.search(r"^\w[\w/]*=(.*)$", out.strip().splitlines()[-1])
    if not match:
        raise RuntimeError("unexpected peers.py output: " + out)
    value = match.group(1)
    try:
        return float(value), rss
    except ValueError:
        return value, rss


def peer_versions():
    """The versions and CPU libraries of every peer venv, one line each."""
    return ["`%s`: %s" % (PEER_VENVS[venv], run_peer(venv, ["versions"], 1)[0])
            for venv in PEER_VENVS]


def import_rss(venv, module):
    """Peak RSS (MiB) of a process that only imports `module` in `venv`:
    what a peer's measured peak includes before it computes anything."""
    return run_measured([peer_python(venv), "-c", "import " + module])[1]
