"""Zoo parity of infer.bin with ONNX Runtime and PyTorch (CPU-backend issue).

Exports a zoo model, compiles it with `fastnnc --mode=infer`, runs infer.bin
on a seeded random batch, and compares every output with
  - ONNX Runtime on the same ONNX file, with its training-mode nodes switched
    to inference (batch norm on running statistics, dropout off: the
    semantics infer.bin implements for training exports), and
  - the PyTorch definition of the model, same seeded weights, in eval mode.
The error measure is max|fastnn - reference| / max|reference| per output;
it must be at most 1e-4 (fp32).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import torch

TOLERANCE = 1e-4
onnxruntime.set_default_logger_severity(3)


def inference_copy(model):
    """The model with BatchNormalization and Dropout in inference mode."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    graph.initializer.append(
        onnx.numpy_helper.from_array(np.array(False), "fastnn_inference_mode"))
    for node in graph.node:
        if node.op_type == "BatchNormalization":
            for attribute in node.attribute:
                if attribute.name == "training_mode":
                    attribute.i = 0
            del node.output[1:]
        elif node.op_type == "Dropout" and len(node.input) > 2:
            node.input[2] = "fastnn_inference_mode"
    return model


def relative_error(actual, expected):
    return float(np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-30))


def import_warnings(fastnnc, onnx_file, batch_size):
    """fastnnc's warnings on importing onnx_file (--emit=summary: the
    import alone); exits with FAILED where the import fails."""
    ran = subprocess.run([fastnnc, str(onnx_file), f"--batch-size={batch_size}",
                          "--emit=summary", "-o", os.devnull],
                         capture_output=True, text=True)
    if ran.returncode != 0:
        sys.exit(f"FAILED: fastnnc: {ran.stderr.strip()}")
    return ran.stderr


def run_infer(fastnnc, onnx_file, tmp, images, names, batch_size):
    """Compiles onnx_file with --mode=infer, runs it on `images` and returns
    its outputs `names`."""
    exe = tmp / "infer.bin"
    subprocess.run([fastnnc, str(onnx_file), "--mode=infer",
                    f"--batch-size={batch_size}", "-o", str(exe)], check=True)
    np.save(tmp / "images.npy", images)
    timeline = tmp / "timeline.json"
    ran = subprocess.run([str(exe), "--input", f"images={tmp / 'images.npy'}",
                          "--output-dir", str(tmp), "--profile",
                          str(timeline)], check=True, capture_output=True,
                         text=True)
    check_profile(ran.stdout, timeline)
    return [np.load(tmp / f"{name}.npy") for name in names]


def check_profile(printed, timeline):
    """infer.bin --profile: the timeline holds one span per op the summary
    counts, and the convolutions are among them."""
    spans = [e for e in json.loads(timeline.read_text())["traceEvents"]
             if e.get("cat") == "kernel"]
    kinds = re.findall(r"^  (\S+)\s+(\d+) calls", printed, re.MULTILINE)
    counted = sum(int(calls) for _, calls in kinds)
    if not spans or counted != len(spans) or "conv2d" not in dict(kinds):
        sys.exit(f"FAILED: infer.bin --profile printed {kinds} for "
                 f"{len(spans)} timeline spans:\n{printed}")


def compare(model, name, ours, against):
    """Prints each peer's relative error; True if one exceeds TOLERANCE."""
    failed = False
    for peer, expected in against.items():
        error = relative_error(ours, expected)
        verdict = "ok" if error <= TOLERANCE else "FAIL"
        failed |= not error <= TOLERANCE
        print(f"{model} {name} vs {peer}: relative error {error:.2e} {verdict}")
    return failed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--zoo", required=True, help="tools/zoo directory")
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--batch-size", type=int, default=2)
    args = parser.parse_args()

    sys.path.insert(0, args.zoo)
    from fastnn_zoo.onnx_export import build_model, export_model, output_names

    with tempfile.TemporaryDirectory(prefix=f"parity-{args.model}-") as tmp:
        tmp = Path(tmp)
        onnx_file = tmp / "model.onnx"
        export_model(args.model, str(onnx_file))
        torch_model, config = build_model(args.model)
        torch_model.eval()
        shape = (args.batch_size, config["channels"], config["image_size"],
                 config["image_size"])
        images = np.random.RandomState(1).uniform(-1, 1, shape).astype(np.float32)
        names = output_names(args.model)
        ours = run_infer(args.fastnnc, onnx_file, tmp, images, names,
                         args.batch_size)

        session = onnxruntime.InferenceSession(
            inference_copy(onnx.load(str(onnx_file))).SerializeToString(),
            providers=["CPUExecutionProvider"])
        ort = session.run(names, {"images": images})

        with torch.no_grad():
            reference = torch_model(torch.from_numpy(images))
        if not isinstance(reference, (tuple, list)):
            reference = [reference]
        # Eval-mode inception models return no aux logits (None).
        reference = [None if r is None else r.numpy() for r in reference]

        failed = False
        for i, name in enumerate(names):
            against = {"onnxruntime": ort[i]}
            if i < len(reference) and reference[i] is not None:
                against["pytorch"] = reference[i]
            failed |= compare(args.model, name, ours[i], against)
        sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
