"""Reproducible random weights for scripts/gpu-check.sh.

The GPU machine gets at most 64 MiB of files, less than ResNet-50's
weights. So the weights do not travel: `describe` records, per ONNX
initializer, its shape and how its values are spread (a uniform tensor's
value, else mean, standard deviation and whether it is positive) beside the
graph with its initializers emptied, and `build` fills them again from
numpy's legacy RandomState, whose streams numpy keeps identical across
versions. Both machines run `build` from the same files and get the same
model.onnx, byte for byte: `build` prints its SHA-256 to compare.

    weights.py describe model.onnx -o model.spec.json --graph model.graph.onnx
    weights.py build model.spec.json model.graph.onnx --seed 1 -o model.onnx
"""
import argparse
import hashlib
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def describe(args):
    model = onnx.load(args.model)
    spec = []
    for tensor in model.graph.initializer:
        values = numpy_helper.to_array(tensor)
        entry = {"name": tensor.name, "dims": list(tensor.dims),
                 "dtype": int(tensor.data_type)}
        flat = values.astype(np.float64).ravel()
        if flat.size == 0 or np.all(flat == flat[0]):
            entry["constant"] = float(flat[0]) if flat.size else 0.0
        elif not np.issubdtype(values.dtype, np.floating):
            # Integer tensors (shapes, indices) are part of the graph.
            entry["values"] = values.ravel().tolist()
        else:
            entry["mean"] = float(flat.mean())
            entry["std"] = float(flat.std())
            entry["positive"] = bool(np.all(flat > 0))
        spec.append(entry)
        tensor.ClearField("raw_data")
        tensor.ClearField("float_data")
        tensor.ClearField("int64_data")
        tensor.ClearField("int32_data")
        tensor.ClearField("double_data")
    onnx.save(model, args.graph)
    with open(args.output, "w") as f:
        json.dump(spec, f)


def build(args):
    with open(args.spec) as f:
        spec = json.load(f)
    model = onnx.load(args.graph)
    rng = np.random.RandomState(args.seed)
    by_name = {tensor.name: tensor for tensor in model.graph.initializer}
    for entry in spec:
        tensor = by_name.get(entry["name"])
        if tensor is None:
            sys.exit(f"weights.py: error: {args.graph}: no initializer "
                     f"'{entry['name']}'; describe the model again")
        dtype = onnx.helper.tensor_dtype_to_np_dtype(entry["dtype"])
        shape = tuple(entry["dims"])
        if "constant" in entry:
            values = np.full(shape, entry["constant"], dtype=dtype)
        elif "values" in entry:
            values = np.array(entry["values"], dtype=dtype).reshape(shape)
        else:
            draw = rng.standard_normal(size=shape)
            values = entry["mean"] + entry["std"] * draw
            if entry["positive"]:
                values = np.abs(values) + 1e-3
            values = values.astype(dtype)
        tensor.CopyFrom(numpy_helper.from_array(values, entry["name"]))
    data = model.SerializeToString()
    with open(args.output, "wb") as f:
        f.write(data)
    print(hashlib.sha256(data).hexdigest())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    d = commands.add_parser("describe")
    d.add_argument("model")
    d.add_argument("-o", "--output", required=True)
    d.add_argument("--graph", required=True)
    b = commands.add_parser("build")
    b.add_argument("spec")
    b.add_argument("graph")
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    describe(args) if args.command == "describe" else build(args)


if __name__ == "__main__":
    main()
