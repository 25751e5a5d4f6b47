"""Writes a binary ONNX model of one HardSigmoid with the given alpha (the
text syntax cannot spell NaN or infinity)."""
import sys

import onnx
from onnx import TensorProto, helper

graph = helper.make_graph(
    [helper.make_node("HardSigmoid", ["x"], ["y"], name="gate",
                      alpha=float(sys.argv[1]))],
    "gate",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, sys.argv[2])
