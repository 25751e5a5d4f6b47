"""Writes a one-MatMul binary ONNX model whose initializer w is made hostile
in the way argv[2] names, for the importer's tests of untrusted models:

  outside-dotdot   external data at ../outside.bin (outside the model's dir)
  outside-absolute external data at an absolute path (argv[3])
  external-length  external data whose length exceeds its file
  external-dims    external data of dims [2^20, 2^20] (4 TiB) and no length
  huge-dims        dims [2^20, 2^20] (4 TiB) over 16 bytes of raw_data
  negative-dim     dims [-4, 4]
  overflow-dims    dims whose product overflows 64 bits
  constant-external w a Constant node whose value is external data
"""
import sys

import onnx
from onnx import TensorProto, helper

path, kind = sys.argv[1], sys.argv[2]
w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 4])


def external(location, length=None):
    w.data_location = TensorProto.EXTERNAL
    entries = [("location", location)]
    if length is not None:
        entries.append(("length", str(length)))
    for key, value in entries:
        entry = w.external_data.add()
        entry.key, entry.value = key, value


if kind == "outside-dotdot":
    external("../outside.bin")
elif kind == "outside-absolute":
    external(sys.argv[3])
elif kind == "external-length":
    external("weights.bin", length=1 << 40)
elif kind == "external-dims":
    w.dims[:] = [1 << 20, 1 << 20]
    external("weights.bin")
elif kind == "huge-dims":
    w.dims[:] = [1 << 20, 1 << 20]
    w.raw_data = bytes(16)
elif kind == "negative-dim":
    w.dims[:] = [-4, 4]
    w.raw_data = bytes(16)
elif kind == "overflow-dims":
    w.dims[:] = [1 << 62, 1 << 62, 4]
    w.raw_data = bytes(16)
elif kind != "constant-external":
    sys.exit("unknown kind " + kind)
nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")]
inits = [w]
if kind == "constant-external":
    external("weights.bin", length=64)
    nodes.insert(0, helper.make_node("Constant", [], ["w"], name="c", value=w))
    inits = []
graph = helper.make_graph(
    nodes, "fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, path)
