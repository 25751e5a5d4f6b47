"""End-to-end checks of weights outside the binary (ctest trainer.e2e.weights-*):
fastnnc --weights=external and train.bin's init_from_onnx.

`setup` (a ctest fixture) prepares WORK once: LeNet exported from the zoo
with seed 0, with seed 1 (the "pretrained" weights) and with 5 classes;
train.bins compiled from the seed-0 export embedded (embedded.bin) and
external (external.bin + external.bin.weights), one from the seed-1 export
(seed1.bin), and one of 5 classes with external weights. Every run trains
on mock data. The other commands check one behaviour each:

  bitwise        external.bin logs the losses and the evaluation embedded.bin
                 logs, to the last printed digit, and ends with a bitwise
                 equal checkpoint
  resume         external.bin stopped after a checkpoint resumes without its
                 weights file (the checkpoint has everything) and ends as
                 embedded.bin; --eval and --export-onnx need no weights file
  file-errors    a missing, truncated, garbage or other model's weights file:
                 one line naming the file and what to do, exit 1
  init-from-onnx external.bin and embedded.bin with init_from_onnx=<seed-1
                 export> (inline, and with external data beside it) log
                 seed1.bin's first loss; a checkpoint to resume wins over it;
                 infer.bin --init-from-onnx gives the seed-1 build's logits
  onnx-errors    init_from_onnx of another num_classes, a missing name, a
                 missing file, a garbage file; an extra initializer is a
                 warning line
"""
import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

HPARAMS = """\
dataset_name=mock
num_classes=10
batch_size=8
use_fp16=False
optimizer=adam
opt_epsilon=1e-8
learning_rate=0.001
stop_at_step=6
log_loss_every_n_iters=1
save_checkpoints_steps=3
eval_every_n_iters=6
seed=3
"""


def fail(message):
    sys.exit(f"FAILED: {message}")


def run(cmd, check=True):
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if check and result.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited with {result.returncode}:\n"
             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def train(work, binary, train_dir=None, extra=(), check=True):
    cmd = [work / binary if isinstance(binary, str) else binary, "--hparams", work / "hp.txt",
           *extra]
    if train_dir is not None:
        shutil.rmtree(train_dir, ignore_errors=True)
        cmd.append(f"--train_dir={train_dir}")
    return run(cmd, check)


def losses(log):
    """{step: the loss as logged} of a run's step lines."""
    found = {int(m.group(1)): m.group(2)
             for m in re.finditer(r"^step (\d+): loss=(\S+)", log, re.M)}
    if not found:
        fail(f"no step lines in:\n{log[-2000:]}")
    return found


def private_copy(work, name):
    """external.bin copied alone (without its weights) into WORK/name, for
    a check that takes its weights file away without touching the
    fixture's."""
    directory = work / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    shutil.copy2(work / "external.bin", directory / "external.bin")
    return directory / "external.bin"


def expect_error(result, *patterns):
    """A run that failed with exit 1 and one error line matching every
    pattern."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("train.bin: error:")]
    if result.returncode != 1 or len(errors) != 1:
        fail(f"expected exit 1 and one error line, got {result.returncode}:\n{result.stderr}")
    for pattern in patterns:
        if not re.search(pattern, errors[0]):
            fail(f"the error line lacks '{pattern}': {errors[0]}")
    print(f"ok: {errors[0]}")


def setup(args):
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "hp.txt").write_text(HPARAMS)
    for name, options in (("seed0", []), ("seed1", ["--seed", 1]),
                          ("classes5", ["--num-classes", 5])):
        run([args.torch_python, args.export, "--model", "lenet", "-o", work / f"{name}.onnx",
             *options])
    for binary, onnx, options in (("embedded.bin", "seed0", []),
                                  ("external.bin", "seed0", ["--weights=external"]),
                                  ("seed1.bin", "seed1", []),
                                  ("external5.bin", "classes5",
                                   ["--weights=external", "--hparam=num_classes=5"]),
                                  ("infer0.bin", "seed0",
                                   ["--mode=infer", "--batch-size=2", "--weights=external"]),
                                  ("infer1.bin", "seed1", ["--mode=infer", "--batch-size=2"])):
        hparams = [] if "--mode=infer" in options else ["--hparams", work / "hp.txt"]
        run([args.fastnnc, work / f"{onnx}.onnx", "-o", work / binary, *hparams, *options])
    embedded = (work / "embedded.bin").stat().st_size
    external = (work / "external.bin").stat().st_size
    weights = (work / "external.bin.weights").stat().st_size
    if external + 4 * 1024 * 1024 > embedded:
        fail(f"external.bin has {external} bytes, embedded.bin {embedded}: the weights "
             "are still embedded")
    print(f"embedded.bin {embedded} bytes; external.bin {external} + {weights} bytes of weights")


def bitwise(args):
    work = Path(args.work)
    embedded = train(work, "embedded.bin", work / "run-embedded")
    external = train(work, "external.bin", work / "run-external")
    if losses(embedded.stdout) != losses(external.stdout):
        fail(f"losses differ:\n{losses(embedded.stdout)}\n{losses(external.stdout)}")
    evaluations = [[line for line in log.splitlines() if line.startswith("eval:")]
                   for log in (embedded.stdout, external.stdout)]
    if not evaluations[0] or evaluations[0] != evaluations[1]:
        fail(f"the evaluations differ: {evaluations}")
    final = "model.ckpt-6"
    if (work / "run-embedded" / final).read_bytes() != (work / "run-external" / final).read_bytes():
        fail(f"the final checkpoints {final} differ")
    print(f"{len(losses(external.stdout))} losses and the evaluation equal; final checkpoints "
          "bitwise equal")


def resume(args):
    work = Path(args.work)
    reference = train(work, "embedded.bin", work / "run-reference")
    directory = work / "run-resume"
    train(work, "external.bin", directory, ["--stop_at_step=3"])
    alone = private_copy(work, "resume-alone")
    resumed = run([alone, "--hparams", work / "hp.txt", f"--train_dir={directory}"])
    if "resuming" not in resumed.stdout:
        fail(f"the run did not resume:\n{resumed.stdout}")
    if (directory / "model.ckpt-6").read_bytes() != \
            (work / "run-reference" / "model.ckpt-6").read_bytes():
        fail("the resumed run ends with another checkpoint than the embedded build's")
    ref_losses = losses(reference.stdout)
    for step, loss in losses(resumed.stdout).items():
        if ref_losses[step] != loss:
            fail(f"step {step}: loss {loss} vs the embedded build's {ref_losses[step]}")
    run([alone, "--hparams", work / "hp.txt", f"--train_dir={directory}", "--eval"])
    run([alone, "--hparams", work / "hp.txt", f"--train_dir={directory}",
         "--export-onnx", directory / "exported.onnx"])
    print("resumed without the weights file to the embedded build's final checkpoint; "
          "--eval and --export-onnx ran without it")


def file_errors(args):
    work = Path(args.work)
    alone = private_copy(work, "errors-alone")
    weights = alone.parent / "external.bin.weights"
    expect_error(train(work, alone, check=False),
                 r"external\.bin\.weights: no such weights file", "--weights=external",
                 "weights_file=FILE")
    weights.write_bytes((work / "external.bin.weights").read_bytes()[:100000])
    expect_error(train(work, alone, check=False),
                 r"external\.bin\.weights: truncated or damaged checkpoint", "weights_file")
    weights.write_bytes(b"not weights at all\n")
    expect_error(train(work, alone, check=False),
                 r"external\.bin\.weights: not a fastnn checkpoint")
    weights.unlink()
    expect_error(train(work, alone, extra=[f"--weights_file={work / 'external5.bin.weights'}"],
                       check=False),
                 r"external5\.bin\.weights: tensor 'fc4\.weight' is dtype 0 \[5, 1024\], "
                 r"the model's trainable dtype 0 \[10, 1024\] \(2 of", "another model's")
    found = train(work, alone, extra=[f"--weights_file={work / 'external.bin.weights'}",
                                      "--stop_at_step=1"])
    if losses(found.stdout)[1] != losses(train(work, "embedded.bin",
                                                 extra=["--stop_at_step=1"]).stdout)[1]:
        fail("weights_file= gave another first loss than the embedded build")
    print("weights_file= names a weights file elsewhere")


def init_from_onnx(args):
    work = Path(args.work)
    expected = losses(train(work, "seed1.bin", extra=["--stop_at_step=1"]).stdout)[1]
    own = losses(train(work, "embedded.bin", extra=["--stop_at_step=1"]).stdout)[1]
    if own == expected:
        fail(f"seed 0 and seed 1 give the same first loss {own}: the check cannot tell them apart")
    # The same weights with their data in a file beside the model.
    external_dir = work / "external-data"
    shutil.rmtree(external_dir, ignore_errors=True)
    external_dir.mkdir()
    run([args.torch_python, "-c",
         "import onnx, sys; m = onnx.load(sys.argv[1]); "
         "onnx.save_model(m, sys.argv[2], save_as_external_data=True, "
         "all_tensors_to_one_file=True, location='seed1.data', size_threshold=0)",
         work / "seed1.onnx", external_dir / "seed1.onnx"])
    for binary in ("external.bin", "embedded.bin"):
        for onnx in (work / "seed1.onnx", external_dir / "seed1.onnx"):
            result = train(work, binary, extra=[f"--init_from_onnx={onnx}", "--stop_at_step=1"])
            if "starting from the weights of" not in result.stdout:
                fail(f"no line about init_from_onnx:\n{result.stdout}")
            if losses(result.stdout)[1] != expected:
                fail(f"{binary} init_from_onnx={onnx}: first loss {losses(result.stdout)[1]}, "
                     f"seed1.bin's {expected}")
    # infer.bin --init-from-onnx computes what the build of that export does.
    for binary, extra in (("infer1.bin", []),
                          ("infer0.bin", ["--init-from-onnx", work / "seed1.onnx"])):
        run([work / binary, "--output-dir", work / f"out-{binary}", *extra])
    ours = (work / "out-infer0.bin" / "logits.npy").read_bytes()
    if ours != (work / "out-infer1.bin" / "logits.npy").read_bytes():
        fail("infer.bin --init-from-onnx=seed1.onnx gives other logits than infer.bin "
             "compiled from seed1.onnx")
    # A checkpoint to resume wins over init_from_onnx.
    directory = work / "run-precedence"
    train(work, "external.bin", directory, ["--stop_at_step=3"])
    resumed = run([work / "external.bin", "--hparams", work / "hp.txt", f"--train_dir={directory}",
                   f"--init_from_onnx={work / 'seed1.onnx'}"])
    if "resuming" not in resumed.stdout or "starting from the weights" in resumed.stdout:
        fail(f"init_from_onnx was taken over the checkpoint to resume:\n{resumed.stdout}")
    print(f"init_from_onnx=seed1.onnx (inline and external data) gives seed1.bin's first "
          f"loss {expected}; a checkpoint to resume wins")


def onnx_errors(args):
    work = Path(args.work)
    expect_error(train(work, "external.bin", extra=[f"--init_from_onnx={work / 'classes5.onnx'}"],
                       check=False),
                 r"--init_from_onnx: init_from_onnx=.*classes5\.onnx: tensor 'fc4\.weight' is "
                 r"dtype 0 \[5, 1024\], the model's trainable dtype 0 \[10, 1024\] \(2 of")
    expect_error(train(work, "external.bin", extra=[f"--init_from_onnx={work / 'missing.onnx'}"],
                       check=False),
                 r"--init_from_onnx: .*missing\.onnx: cannot read the ONNX model")
    expect_error(train(work, "external.bin", extra=[f"--init_from_onnx={work / 'hp.txt'}"],
                       check=False),
                 r"hp\.txt: not an ONNX model")
    # fc4.bias renamed: the model's is missing, the renamed one is unused.
    # An extra initializer beside the model's: a warning, and training runs.
    edit = ("import onnx, sys; from onnx import helper, TensorProto; "
            "m = onnx.load(sys.argv[1]); init = m.graph.initializer; "
            "renamed = onnx.ModelProto(); renamed.CopyFrom(m); "
            "[t.__setattr__('name', 'fc4.b') for t in renamed.graph.initializer if t.name == 'fc4.bias']; "
            "onnx.save(renamed, sys.argv[2]); "
            "init.append(helper.make_tensor('extra.weight', TensorProto.FLOAT, [2], [1.0, 2.0])); "
            "onnx.save(m, sys.argv[3])")
    run([args.torch_python, "-c", edit, work / "seed1.onnx", work / "renamed.onnx",
         work / "extra.onnx"])
    expect_error(train(work, "external.bin", extra=[f"--init_from_onnx={work / 'renamed.onnx'}"],
                       check=False),
                 r"init_from_onnx=.*renamed\.onnx: has no tensor 'fc4\.bias' \(trainable dtype 0 \[10\]\)")
    extra = train(work, "external.bin", extra=[f"--init_from_onnx={work / 'extra.onnx'}",
                                                "--stop_at_step=1"])
    warning = [line for line in extra.stdout.splitlines() if "warning" in line]
    if len(warning) != 1 or "1 of its initializers are not parameters of the model" not in warning[0] \
            or "'extra.weight'" not in warning[0]:
        fail(f"expected one warning line naming extra.weight:\n{extra.stdout}")
    print(f"ok: {warning[0]}")


def main():
    parser = argparse.ArgumentParser()
    commands = {"setup": setup, "bitwise": bitwise, "resume": resume,
                "file-errors": file_errors, "init-from-onnx": init_from_onnx,
                "onnx-errors": onnx_errors}
    parser.add_argument("command", choices=list(commands))
    parser.add_argument("--work", required=True)
    parser.add_argument("--fastnnc")
    parser.add_argument("--export")
    parser.add_argument("--torch-python", default=sys.executable)
    args = parser.parse_args()
    if args.command != "setup" and not (Path(args.work) / "external.bin.weights").exists():
        fail("no external.bin.weights: trainer.e2e.weights-setup has not run or failed")
    commands[args.command](args)


if __name__ == "__main__":
    main()
