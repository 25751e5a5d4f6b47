"""Exports one zoo model, imports it with fastnnc and re-verifies the IR.

Checks (issue: foundation acceptance): the export succeeds at the model's
default image size; `fastnnc --emit=mlir` imports it; `fastnnc-opt` re-parses
and verifies the printed IR; the IR declares exactly one fastnn.parameter per
floating-point ONNX initializer (none tied, none dropped); the function
returns every graph output (inception models keep their aux logits).
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, cmd))}\n{result.stderr.strip()}")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--export", required=True, help="tools/zoo/export.py")
    parser.add_argument("--python", required=True, help="python with torch")
    parser.add_argument("--fastnnc", required=True)
    parser.add_argument("--fastnnc-opt", required=True)
    parser.add_argument("--batch-size", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix=f"zoo-{args.model}-") as tmp:
        tmp = Path(tmp)
        onnx_file, summary_file = tmp / "model.onnx", tmp / "summary.json"
        mlir_file = tmp / "model.mlir"
        start = time.monotonic()
        run([args.python, args.export, "--model", args.model, "-o", onnx_file,
             "--summary-json", summary_file])
        exported = time.monotonic()
        run([args.fastnnc, onnx_file, "--emit=mlir",
             f"--batch-size={args.batch_size}", "-o", mlir_file])
        imported = time.monotonic()
        run([args.fastnnc_opt, mlir_file, "-o", tmp / "reparsed.mlir"])
        verified = time.monotonic()

        summary = json.loads(summary_file.read_text())
        parameters = []
        results = None
        with mlir_file.open() as ir:
            for line in ir:
                if line.lstrip().startswith("fastnn.parameter @"):
                    parameters.append(line.split()[1].lstrip("@").strip('"'))
                elif line.lstrip().startswith("func.func @forward"):
                    results = line.count("fastnn.name =") - len(summary["inputs"])
        expected = summary["float_initializers"]
        print(f"{args.model}: {len(parameters)} parameters "
              f"({expected} float initializers), {results} outputs; "
              f"export {exported - start:.1f}s, fastnnc {imported - exported:.1f}s, "
              f"fastnnc-opt {verified - imported:.1f}s")
        if len(parameters) != expected:
            sys.exit(f"FAILED: {len(parameters)} parameters for {expected} initializers")
        if len(set(parameters)) != len(parameters):
            sys.exit("FAILED: duplicate parameter names")
        if results != len(summary["outputs"]):
            sys.exit(f"FAILED: {results} function results for "
                     f"{len(summary['outputs'])} graph outputs")


if __name__ == "__main__":
    main()
