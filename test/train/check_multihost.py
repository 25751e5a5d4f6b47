"""Data-parallel training across hosts (ctest train.multihost.*).

Uses the train.distributed setup fixture's model, hyperparameters and
train.bin of batch B (check_distributed.py), and three hosts made of
network namespaces (netns_hosts.py): `mpirun --hostfile` in the first host
starts one worker per host, which talk over TCP across the hosts' links.

  three-hosts  3 hosts x batch B log the loss of one process of batch 3B at
               every step and end with its weights, to 1e-5 relative; every
               worker ran on its own host, and the gradients crossed every
               host's link
"""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_distributed import (BATCH, STEPS, TOLERANCE, fail, fresh, lines, losses,  # noqa: E402
                               read_checkpoint, run)
from netns_hosts import NetnsError, NetnsHosts  # noqa: E402

HOSTS = 3


def compare(reference_dir, reference_log, directory, log, label):
    want, got = losses(reference_log), losses(log)
    if sorted(got) != sorted(want) or len(want) != STEPS:
        fail(f"{label}: logged steps {sorted(got)}, the reference {sorted(want)}:\n{log}")
    worst_loss = max(abs(got[s] - want[s]) / abs(want[s]) for s in want)
    _, ref = read_checkpoint(reference_dir / f"model.ckpt-{STEPS}")
    step, weights = read_checkpoint(directory / f"model.ckpt-{STEPS}")
    if step != STEPS or set(weights) != set(ref):
        fail(f"{label}: checkpoint of step {step} with {sorted(weights)}")
    worst_weight = max(float(np.max(np.abs(weights[n] - ref[n])) /
                             max(float(np.max(np.abs(ref[n]))), 1e-12)) for n in ref)
    print(f"{label}: {len(got)} steps, largest relative loss difference {worst_loss:.2e}, "
          f"largest relative weight difference {worst_weight:.2e} (allowed {TOLERANCE:g})")
    if worst_loss > TOLERANCE or worst_weight > TOLERANCE:
        fail(f"{label}: differs from one process of batch {HOSTS * BATCH}")


def three_hosts(args):
    work = Path(args.work)
    base = work / "multihost"
    base.mkdir(exist_ok=True)
    binary = base / f"train_{HOSTS}b.bin"
    run([args.fastnnc, work / "model.onnx", "-o", binary, "--hparams", work / "hp.txt",
         f"--hparam=batch_size={HOSTS * BATCH}"])
    reference_dir = fresh(base / "single")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    reference = run([binary, "--hparams", work / "hp.txt", f"--train_dir={reference_dir}"],
                    env=env)
    try:
        with NetnsHosts(HOSTS) as hosts:
            flags = args.mpirun_flags.split()
            names = run(hosts.mpirun(args.mpirun, flags, HOSTS, ["hostname"])).stdout.split()
            if sorted(names) != sorted(hosts.names):
                fail(f"mpirun placed its ranks on {names}, not one on each of {hosts.names}")
            before = hosts.link_bytes()
            directory = fresh(base / "hosts")
            ran = run(hosts.mpirun(args.mpirun, flags, HOSTS, [
                "-x", "OMP_NUM_THREADS=1", work / "train_b.bin", "--hparams", work / "hp.txt",
                f"--train_dir={directory}"]), env=env)
            after = hosts.link_bytes()
    except NetnsError as e:
        fail(f"cannot make the hosts: {e}")
    compare(reference_dir, reference.stdout, directory, ran.stdout,
            f"{HOSTS} hosts x batch {BATCH}")
    if sum(line.startswith(f"step {STEPS}: loss=") for line in lines(ran.stdout)) != 1:
        fail(f"expected the chief's log only:\n{ran.stdout}")
    # Every step allreduces every gradient (plain SGD: the checkpoint holds
    # the parameters only): each link carries at least their bytes per step
    # in each direction.
    _, weights = read_checkpoint(directory / f"model.ckpt-{STEPS}")
    parameter_bytes = sum(w.nbytes for w in weights.values())
    moved = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before)]
    for name, (received, sent) in zip(hosts.names, moved):
        if min(received, sent) < STEPS * parameter_bytes:
            fail(f"{name}'s link carried {received} bytes in and {sent} out, less than "
                 f"{STEPS} steps of {parameter_bytes} bytes of gradients")
    print(f"ranks on {', '.join(sorted(names))}; per link over {STEPS} steps: "
          + ", ".join(f"{r / 1e6:.1f}/{s / 1e6:.1f} MB in/out" for r, s in moved)
          + f" ({parameter_bytes} bytes of parameters)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["three-hosts"])
    parser.add_argument("--work", required=True)
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--mpirun-flags", default="--allow-run-as-root")
    args = parser.parse_args()
    if not (Path(args.work) / "train_b.bin").exists():
        fail("no train.bin: train.distributed.setup has not run or failed")
    {"three-hosts": three_hosts}[args.command](args)


if __name__ == "__main__":
    main()
