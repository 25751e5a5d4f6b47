"""Writes a small binary ONNX model for the importer's file-level tests."""
import sys

import onnx
from onnx import TensorProto, helper

weights = helper.make_tensor("w", TensorProto.FLOAT, [64, 64], [0.5] * 64 * 64)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
    "fc",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64])],
    [weights],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, sys.argv[1])
