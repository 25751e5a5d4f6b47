"""Runs the ONNX backend node tests of the operators fastnn supports.

The tests are those the pinned onnx generates (generate_node_tests.py, run
with .venv-onnx). The supported operators are the ones the importer has a
record for (the `{"<op type>", import...}` lines of frontends/onnx/ops/*.cpp,
the one list the importer itself consults). For every node test whose nodes
are all of supported operators of the default domain, compiles
model.onnx with `fastnnc --mode=infer`, runs the executable on each
test_data_set's inputs and compares its outputs with the expected ones using
the backend suite's tolerances (rtol 1e-3, atol 1e-7). Tests listed in
excluded.txt are not run and are listed with their reason; an exclusion
that names no such test is an error, so the list stays exact. Prints one
line per failure and exclusion, then passed / run / excluded; exits 1 if a
test that is not excluded fails.

fastnn compiles static shapes, so operands that decide shapes or are
attributes in disguise (Reshape's shape, Slice's starts/ends/axes/steps,
Squeeze/Unsqueeze/Reduce* axes, Pad's pads and value, Clip's bounds,
Dropout's ratio and mode) must be constants. The node tests feed them as
graph inputs; the importer's operator records say which they are, and
fastnnc's error names each one it needed as a constant (or, first, one
whose shape the model leaves open, which no static executable can take).
The driver makes those inputs initializers holding each data set's values,
which is what an exporter writes for a real model.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

OPS_DIR = Path(__file__).resolve().parents[2] / "frontends" / "onnx" / "ops"
OP_RECORD = re.compile(r'\{"([A-Za-z0-9]+)",\s*import')


def supported_operators(ops_dir):
    ops = set()
    for source in sorted(Path(ops_dir).glob("*.cpp")):
        ops |= set(OP_RECORD.findall(source.read_text()))
    if not ops:
        sys.exit(f"no operator records found in {ops_dir}/*.cpp")
    return ops


def is_supported(test_dir, ops):
    graph = onnx.load(str(test_dir / "model.onnx"), load_external_data=False).graph
    return all(node.domain in ("", "ai.onnx") and node.op_type in ops
               for node in graph.node)


# fastnnc's errors for a graph input it cannot take at run time: one read
# where the importer needs a constant, one whose shape is left open.
NEEDS_CONSTANT = re.compile(r"input \d+ \('([^']*)'\) must be known at compile time"
                            r"|graph input '([^']*)' has a dynamic dimension")


def read_tensor(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(tensor)


def is_integer(value_info):
    return value_info.type.tensor_type.elem_type in (
        onnx.TensorProto.INT64, onnx.TensorProto.INT32)


def is_bfloat16(value_info):
    return value_info.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16


def to_bfloat16_bits(array):
    """numpy has no bfloat16; infer.bin exchanges its bits as uint16 (and
    onnx's numpy_helper already returns bfloat16 tensors that way)."""
    if array.dtype == np.uint16:
        return array
    return (array.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def from_bfloat16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def bake_constant_inputs(model, inputs, data_set, constant):
    """Returns (model, runtime input names): the inputs named in `constant`
    become initializers with the data set's values."""
    if not constant:
        return model, inputs
    baked = onnx.ModelProto()
    baked.CopyFrom(model)
    kept = [i for i in baked.graph.input if i.name not in constant]
    del baked.graph.input[:]
    baked.graph.input.extend(kept)
    for i, name in enumerate(inputs):
        if name in constant:
            value = read_tensor(data_set / f"input_{i}.pb")
            baked.graph.initializer.append(numpy_helper.from_array(value, name))
    return baked, [name for name in inputs if name not in constant]


def load_exclusions(path):
    exclusions = {}
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            exclusions[name] = reason.strip()
    return exclusions


def compile_model(model_path, exe, fastnnc):
    compiled = subprocess.run(
        [fastnnc, str(model_path), "--mode=infer", "-o", str(exe)],
        capture_output=True, text=True)
    if compiled.returncode != 0:
        return "compile: " + compiled.stderr.strip().replace("\n", " | ")
    return None


def run_test(test_dir, fastnnc, work):
    """Returns None on success, else a one-line reason."""
    model = onnx.load(str(test_dir / "model.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    all_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    bf16_inputs = {i.name for i in model.graph.input if is_bfloat16(i)}
    outputs = [o.name for o in model.graph.output]
    bf16_outputs = {o.name for o in model.graph.output if is_bfloat16(o)}
    compiled_once = None
    constant = set()
    for data_set in sorted(test_dir.glob("test_data_set_*")):
        out_dir = work / (test_dir.name + "." + data_set.name)
        out_dir.mkdir(exist_ok=True)
        while True:
            baked, inputs = bake_constant_inputs(model, all_inputs, data_set, constant)
            if baked is model:
                exe = work / (test_dir.name + ".bin")
                if compiled_once is None:
                    compiled_once = compile_model(test_dir / "model.onnx", exe, fastnnc) or ""
                error = compiled_once or None
            else:
                exe = out_dir / "model.bin"
                onnx.save(baked, str(out_dir / "model.onnx"))
                error = compile_model(out_dir / "model.onnx", exe, fastnnc)
            needed = NEEDS_CONSTANT.search(error or "")
            name = needed and (needed.group(1) or needed.group(2))
            if name in inputs:
                constant.add(name)
                continue
            # A value computed from graph inputs (an expanded function's
            # shape arithmetic): its integer inputs are shapes, which an
            # exporter writes as initializers.
            integer = {i.name for i in model.graph.input if i.name in inputs
                       and is_integer(i)} - constant
            if not name or not integer:
                break
            constant |= integer
        if error:
            return error
        args = [str(exe), "--output-dir", str(out_dir)]
        for i, name in enumerate(all_inputs):
            if name not in inputs:
                continue
            npy = out_dir / f"input_{i}.npy"
            value = read_tensor(data_set / f"input_{i}.pb")
            np.save(npy, to_bfloat16_bits(value) if name in bf16_inputs else value)
            args += ["--input", f"{name}={npy}"]
        ran = subprocess.run(args, capture_output=True, text=True)
        if ran.returncode != 0:
            return "run: " + ran.stderr.strip().replace("\n", " | ")
        for i, name in enumerate(outputs):
            expected = read_tensor(data_set / f"output_{i}.pb")
            if name in bf16_outputs:
                expected = from_bfloat16_bits(to_bfloat16_bits(expected))
            safe = "".join(c if c.isalnum() or c in "_-." else "_" for c in name)
            actual = np.load(out_dir / f"{safe}.npy")
            if name in bf16_outputs:
                actual = from_bfloat16_bits(actual)
            if actual.shape != expected.shape:
                return f"output {name}: shape {actual.shape}, expected {expected.shape}"
            try:
                np.testing.assert_allclose(actual, expected, rtol=1e-3, atol=1e-7)
            except AssertionError as e:
                lines = [w.strip() for w in str(e).strip().splitlines()]
                summary = lines[:3] + [w for w in lines if w.startswith("Max ")]
                return f"output {name}: " + " ".join(summary)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tests", required=True, help="generated node tests")
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--excluded", default=str(Path(__file__).with_name("excluded.txt")))
    parser.add_argument("--ops-dir", default=str(OPS_DIR),
                        help="the importer's operator records")
    parser.add_argument("--filter", default="", help="only tests containing this")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    exclusions = load_exclusions(args.excluded)
    ops = supported_operators(args.ops_dir)
    generated = sorted(Path(args.tests).iterdir())
    if not generated:
        sys.exit(f"no node tests in {args.tests}")
    supported = [t for t in generated if is_supported(t, ops)]
    stale = sorted(set(exclusions) - {t.name for t in supported})
    if stale and not args.filter:
        sys.exit("excluded.txt names tests that are not node tests of supported "
                 "operators: " + ", ".join(stale))
    selected, excluded = [], []
    for test_dir in supported:
        if args.filter not in test_dir.name:
            continue
        if test_dir.name in exclusions:
            excluded.append((test_dir.name, exclusions[test_dir.name]))
        else:
            selected.append(test_dir)

    failures = []
    with tempfile.TemporaryDirectory(prefix="onnx-node-tests-") as work:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(lambda t: (t.name, run_test(t, args.fastnnc, Path(work))),
                               selected)
            for name, reason in results:
                if reason:
                    failures.append(name)
                    print(f"FAIL {name}: {reason}")
    for name, reason in excluded:
        print(f"EXCLUDED {name}: {reason}")
    passed = len(selected) - len(failures)
    print(f"onnx-node-tests (onnx {onnx.__version__}): {passed} passed / "
          f"{len(selected)} run, {len(failures)} failed, {len(excluded)} excluded; "
          f"{len(supported)} of the {len(generated)} node tests are of supported "
          f"operators")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
