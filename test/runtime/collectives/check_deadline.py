"""The collectives' deadline (ctest collectives.deadline): a job of 3
DeadlineDriver workers, one of them late, must end within the deadline plus
a few seconds, non-zero, with exactly one line that names the late worker;
a worker late by less than the deadline ends nothing."""
import argparse
import re
import subprocess
import sys
import time

DEADLINE = 2
# The deadline, the question round (1 s), MPI_Abort and mpirun's teardown.
ALLOWED = DEADLINE + 10


def fail(message):
    sys.exit(f"FAILED: {message}")


def job(args, collective, late, sleep, step=-1):
    cmd = [args.mpirun, *args.mpirun_flags.split(), "-np", "3", args.driver,
           "--deadline", str(DEADLINE), "--late", str(late), "--sleep", str(sleep),
           "--step", str(step), "--collective", collective]
    start = time.monotonic()
    try:
        ran = subprocess.run(cmd, capture_output=True, text=True, timeout=ALLOWED + 60)
    except subprocess.TimeoutExpired:
        fail(f"{' '.join(cmd)} still ran after {ALLOWED + 60} s")
    return ran, time.monotonic() - start


def late_worker(args, collective, late, step, at):
    ran, elapsed = job(args, collective, late, 60, step)
    output = ran.stdout + ran.stderr
    expected = (rf"^DeadlineDriver: error: rank \d of 3: collective {collective} {at} did not "
                rf"complete in {DEADLINE} s; ranks not arriving: {late}; ending the job$")
    matching = re.findall(expected, output, re.M)
    reports = re.findall(r"did not complete", output)
    if ran.returncode == 0 or len(matching) != 1 or len(reports) != 1:
        fail(f"{collective}, rank {late} late: exit {ran.returncode}, {len(matching)} lines "
             f"matching\n  {expected}\nand {len(reports)} reports in all:\n{output[-3000:]}")
    if elapsed > ALLOWED:
        fail(f"{collective}, rank {late} late: the job ended after {elapsed:.1f} s, more than "
             f"{ALLOWED} s")
    print(f"{collective}, rank {late} late: exit {ran.returncode} after {elapsed:.1f} s "
          f"(deadline {DEADLINE} s): {matching[0]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--driver", required=True)
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--mpirun-flags", default="--allow-run-as-root --oversubscribe")
    args = parser.parse_args()
    # Rank 2 late: ranks 0 and 1 both miss the deadline, rank 0 reports.
    late_worker(args, "allreduce", 2, 37, "at step 37")
    # The root late (the root of a broadcast may finish it before the others
    # receive): rank 1, the first that arrived, reports.
    late_worker(args, "broadcast", 0, -1, "before the first step")
    late_worker(args, "barrier", 1, 5, "at step 5")
    ran, elapsed = job(args, "allreduce", 1, DEADLINE / 4)
    if ran.returncode != 0:
        fail(f"rank 1 late by {DEADLINE / 4} s of a {DEADLINE} s deadline ended the job: "
             f"exit {ran.returncode}\n{ran.stdout}{ran.stderr}")
    print(f"rank 1 late by {DEADLINE / 4} s: the job completed (exit 0, {elapsed:.1f} s)")


if __name__ == "__main__":
    main()
