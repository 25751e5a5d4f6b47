"""Writes an opset-20 convolution whose weights are external data (what
torch.onnx.export writes for a model past its size threshold)."""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

path = Path(sys.argv[1])
# Only tensors held as raw_data become external data.
weights = numpy_helper.from_array(np.full((8, 3, 3, 3), 0.25, np.float32), "w")
bias = numpy_helper.from_array(np.full(8, 0.5, np.float32), "b")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
     helper.make_node("ReduceMean", ["c", "axes"], ["y"], name="mean",
                      keepdims=0)],
    "conv",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
    [weights, bias, numpy_helper.from_array(np.array([2, 3], np.int64), "axes")],
)
model = helper.make_model(graph, ir_version=9,
                          opset_imports=[helper.make_opsetid("", 20)])
onnx.save_model(model, str(path), save_as_external_data=True,
                all_tensors_to_one_file=True, location=path.stem + ".weights",
                size_threshold=0)
