"""Writes the hand-made seeds of ONNXImportFuzzer: small models whose
initializers hold their weights inline (raw_data and float_data) or as
external data in the weights.bin the fuzzer writes beside each model (64
floats). The other seeds are ONNX node-test models, copied from the ones
test/onnx-backend generates (build/test/onnx-backend/generated/node).

    python make_onnx_seeds.py seeds/ONNXImportFuzzer
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def model(nodes, inputs, outputs, inits, name, check=True):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    if check:  # The checker looks for external data beside the script.
        onnx.checker.check_model(m)
    onnx.save(m, f"{out}/{name}.onnx")


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
scale = helper.make_tensor("scale", TensorProto.FLOAT, [2], [1.0, 2.0])
bias = helper.make_tensor("bias", TensorProto.FLOAT, [2], [0.0, 0.5])
mean = helper.make_tensor("mean", TensorProto.FLOAT, [2], [0.0, 0.0])
var = helper.make_tensor("var", TensorProto.FLOAT, [2], [1.0, 1.0])
fc = numpy_helper.from_array(np.ones((8, 3), np.float32), "fc")
shape = numpy_helper.from_array(np.array([1, 8], np.int64), "shape")
model([
    helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"],
                     ["b"]),
    helper.make_node("Relu", ["b"], ["r"]),
    helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2],
                     strides=[2, 2]),
    helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[1, 1]),
    helper.make_node("Reshape", ["a", "shape"], ["f"]),
    helper.make_node("Gemm", ["f", "fc"], ["logits"]),
], [x], [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 3])],
      [w, scale, bias, mean, var, fc, shape], "conv_bn_gemm")

ext = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 4])
ext.data_location = TensorProto.EXTERNAL
for key, value in [("location", "weights.bin"), ("offset", "64"),
                   ("length", "64")]:
    entry = ext.external_data.add()
    entry.key, entry.value = key, value
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
model([helper.make_node("MatMul", ["y", "w"], ["z"])], [y],
      [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 4])], [ext],
      "external_matmul", check=False)
