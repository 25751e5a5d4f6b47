"""Finite-difference checks of the gradient rules (training-compiler issue).

Runs the cases of one group of cases.py. Each case is a small ONNX model in
which the op under test reads trainable inputs and a fixed random projection
(a Constant node, so not a parameter) maps its output to the logits, so that
the softmax cross-entropy of the training step depends on every output
element. The model goes through the real compiler and runtime: fastnnc
--mode=train --emit=obj (plain SGD, no weight decay), linked with the step
runner of test/train (StepMain.cpp) and the CPU kernels.

Every input x of the op is fed as Add(slice of the images, p) with p a zero
initializer: the value of x travels in the images and p is the trainable
parameter whose gradient is dL/dx. One step with learning rate 1 leaves
p = 0 - 1 * g, which is g negated exactly. The check compares, for each input
and several random directions v (|v_i| <= 1), the directional derivative
<g, x+ - x-> with the central difference L(x+) - L(x-) of the same step's
loss, where x+ and x- are the float32 points x + h v and x - h v the step
actually ran (the rounding of the perturbation is no error). All loss
evaluations of a case run in one process with learning rate 0 (the
parameters stay at 0) and the same step number (dropout masks depend on it).

Tolerance. The directions of one input are judged at the scale s of its
largest directional derivative (a random direction whose derivative nearly
cancels carries the same absolute error as the others):
|(L(x+) - L(x-)) - <g, x+ - x->| <= RTOL s + ATOL. With h = 1e-2 the central
difference's truncation error is O(h^2) relative: at most 1e-3 of s over
all cases, 1e-4 typically. The loss is a float32 scalar: with h = 1e-4, where
truncation vanishes, differences of two evaluations are off by up to 5 ulps
of the loss (2.5e-6 at L = 18), so ATOL is 32 ulps of the loss at x. An input
with s below 100 ATOL fails as insensitive, so that ATOL stays below 1% of
what is checked. RTOL = 1e-2 is 10x the largest error seen, while a wrong
rule errs by O(1) (a flipped sign by 2).

Cases that expect an error (ops documented as not differentiated) must fail
to compile with a message that names the ONNX node and says why.
"""
import argparse
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import cases

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "train"))
from step_runner import compile_runner, run_steps  # noqa: E402

BATCH = 2
CLASSES = 4
STEP_H = 1e-2
DIRECTIONS = 4
RTOL = 1e-2
# ATOL, in units in the last place of the loss.
ATOL_ULPS = 32


def tensor(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def build_model(case, rng):
    """The case's graph with its inputs fed from the images and its output
    `y` projected to [BATCH, CLASSES] logits; returns the model and the
    images' width per sample."""
    total = sum(a.size for a in case.inputs.values())
    width = -(-total // BATCH)
    nodes = [helper.make_node("Reshape", ["images", "flat_shape"], ["flat"])]
    initializers = [tensor("flat_shape", np.array([-1], np.int64))]
    offset = 0
    for name, value in case.inputs.items():
        initializers += [
            tensor(f"{name}_start", np.array([offset], np.int64)),
            tensor(f"{name}_end", np.array([offset + value.size], np.int64)),
            tensor(f"{name}_shape", np.array(value.shape, np.int64)),
            tensor(f"{name}_param", np.zeros(value.shape, np.float32)),
        ]
        nodes += [
            helper.make_node("Slice", ["flat", f"{name}_start", f"{name}_end"],
                             [f"{name}_slice"]),
            helper.make_node("Reshape", [f"{name}_slice", f"{name}_shape"],
                             [f"{name}_value"]),
            helper.make_node("Add", [f"{name}_value", f"{name}_param"], [name]),
        ]
        offset += value.size
    nodes += case.nodes
    initializers += case.constants
    images = helper.make_tensor_value_info("images", TensorProto.FLOAT,
                                           [BATCH, width])

    def model(graph_nodes, outputs):
        graph = helper.make_graph(graph_nodes, case.name, [images], outputs,
                                  initializers)
        # The oldest IR version of the opset: fastnnc's checker may be older
        # than the onnx writing the model.
        opsets = [helper.make_opsetid("", case.opset)]
        return helper.make_model(
            graph, opset_imports=opsets,
            ir_version=helper.find_min_ir_version_for(opsets))

    shape = case.output_shape
    if shape is None:
        inferred = onnx.shape_inference.infer_shapes(
            model(nodes, [helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, None)]), strict_mode=True)
        shape = [d.dim_value for d in
                 inferred.graph.output[0].type.tensor_type.shape.dim]
    size = int(np.prod(shape))
    # Logits of order 1 whatever the output's size.
    projection = rng.normal(0, 2 / np.sqrt(size),
                            (size, BATCH * CLASSES)).astype(np.float32)
    initializers += [tensor("y_row", np.array([1, size], np.int64)),
                     tensor("logits_shape", np.array([BATCH, CLASSES], np.int64))]
    nodes += [
        helper.make_node("Constant", [], ["projection"],
                         value=tensor("projection", projection)),
        helper.make_node("Reshape", ["y", "y_row"], ["y_flat"]),
        helper.make_node("MatMul", ["y_flat", "projection"], ["logits_flat"]),
        helper.make_node("Reshape", ["logits_flat", "logits_shape"], ["logits"]),
    ]
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                           [BATCH, CLASSES])
    result = model(nodes, [logits])
    onnx.checker.check_model(result, full_check=True)
    return result, width


def images_for(case, values, width):
    """One batch of images carrying `values` (name -> array) for the inputs."""
    flat = np.zeros(BATCH * width, np.float32)
    offset = 0
    for name in case.inputs:
        flat[offset:offset + values[name].size] = values[name].ravel()
        offset += values[name].size
    return flat.reshape(BATCH, width)


def compile_case(model, tmp, args):
    """fastnnc and the link; returns (runner or None, fastnnc's stderr)."""
    onnx.save(model, tmp / "model.onnx")
    return compile_runner(args.fastnnc, args.linker, args.link_inputs,
                          tmp / "model.onnx", tmp, BATCH, CLASSES)


def losses_at(runner, tmp, batches, labels, learning_rate, trainables=None):
    """Runs the step on each batch (all as step 1); returns the losses or
    raises RuntimeError with the runner's message."""
    losses, _ = run_steps(runner, tmp, np.stack(batches),
                          np.stack([labels] * len(batches)), learning_rate,
                          step=1, trainables=trainables)
    return losses.astype(np.float64)


def check_error(case, stderr):
    """A case documented as not differentiated: the compile must fail with
    the expected reason, at the node under test."""
    ok = case.expect_error in stderr and f"node '{case.name}'" in stderr
    first = stderr.strip().splitlines()[0] if stderr.strip() else "(no error)"
    print(f"{case.name}: {'expected error' if ok else 'FAIL'}: {first}")
    if not ok:
        print(f"  wanted '{case.expect_error}' at node '{case.name}'")
    return ok


def check_gradients(case, runner, width, rng, tmp):
    labels = rng.randint(0, CLASSES, (BATCH,)).astype(np.int64)
    point = images_for(case, case.inputs, width)
    loss = losses_at(runner, tmp, [point], labels, 1.0, trainables=tmp)[0]
    atol = ATOL_ULPS * float(np.spacing(np.float32(abs(loss))))
    grads = {name: -np.load(tmp / f"{name}_param.npy").astype(np.float64)
             for name in case.inputs}

    batches, predicted, owners = [], [], []
    for name, value in case.inputs.items():
        for _ in range(DIRECTIONS):
            v = rng.uniform(-1, 1, value.shape)
            plus = (value + STEP_H * v).astype(np.float32)
            minus = (value - STEP_H * v).astype(np.float32)
            for moved in (plus, minus):
                batches.append(images_for(case, {**case.inputs, name: moved},
                                          width))
            step = plus.astype(np.float64) - minus.astype(np.float64)
            predicted.append(float((grads[name] * step).sum()))
            owners.append(name)
    losses = losses_at(runner, tmp, batches, labels, 0.0)
    differences = losses[0::2] - losses[1::2]

    # Each input's scale: its largest directional derivative. A direction
    # whose derivative nearly cancels is held to the same absolute error.
    scale = {}
    for name, pred in zip(owners, predicted):
        scale[name] = max(scale.get(name, 0.0), abs(pred))
    ok = True
    worst = dict.fromkeys(case.inputs, 0.0)
    for name, diff, pred in zip(owners, differences, predicted):
        error = abs(diff - pred)
        good = error <= RTOL * scale[name] + atol
        ok &= good
        worst[name] = max(worst[name], error / max(scale[name], 1e-30))
        if not good:
            print(f"{case.name}: {name}: finite difference {diff:.6e}, "
                  f"gradient {pred:.6e} FAIL")
    parts = []
    for name, relative in worst.items():
        if scale[name] < 100 * atol:
            ok = False
            parts.append(f"{name} insensitive ({scale[name]:.1e}) FAIL")
        else:
            parts.append(f"{name} {relative:.1e} of {scale[name]:.1e}")
    print(f"{case.name}: max relative error {', '.join(parts)}"
          + ("" if ok else " FAIL"))
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", required=True, choices=sorted(cases.GROUPS))
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--linker", required=True)
    parser.add_argument("--link-inputs", required=True, help="comma-separated")
    args = parser.parse_args()

    failed = []
    start = time.time()
    for builder in cases.GROUPS[args.group]:
        # One seed per case, so that adding a case changes no other.
        rng = np.random.RandomState(zlib.crc32(builder.__name__.encode()))
        case = builder(rng)
        # Errors name the ONNX node: the op under test is named after the case.
        for i, op in enumerate(case.nodes):
            op.name = case.name if i == len(case.nodes) - 1 else f"{case.name}.{i}"
        model, width = build_model(case, rng)
        with tempfile.TemporaryDirectory(prefix=f"gradcheck-{case.name}-") as tmp:
            tmp = Path(tmp)
            runner, stderr = compile_case(model, tmp, args)
            if case.expect_error:
                ok = runner is None and check_error(case, stderr)
                if runner is not None:
                    print(f"{case.name}: compiled, expected an error FAIL")
            elif runner is None:
                print(f"{case.name}: fastnnc failed FAIL\n{stderr}")
                ok = False
            else:
                try:
                    ok = check_gradients(case, runner, width, rng, tmp)
                except RuntimeError as error:
                    print(f"{case.name}: {error} FAIL")
                    ok = False
        if not ok:
            failed.append(case.name)
    print(f"{args.group}: {time.time() - start:.1f} s"
          + (f", failed: {' '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
