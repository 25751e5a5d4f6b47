"""Writes a model as PyTorch's default exporter does for an eval-mode
module with a weight-standardised convolution and a batch norm without
bias: value_info metadata saying which initializers were PARAMETERs and
BUFFERs, onnxscript's val_<N> constant zeros for the absent bias (shared by
both batch norms), and a weight the exporter's optimizer computed from the
parameters (view_2, no metadata). ValueInfoProto's metadata_props (field 4)
is newer than Debian's onnx 1.12, so its bytes are appended by hand."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KIND = "pkg.torch.export.graph_signature.InputSpec.kind"


def with_kind(info, kind):
    entry = onnx.StringStringEntryProto(key=KIND, value=kind)
    payload = entry.SerializeToString()
    extra = bytes([4 << 3 | 2, len(payload)]) + payload
    return onnx.ValueInfoProto.FromString(info.SerializeToString() + extra)


def tensor(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)


initializers = [
    tensor("view_2", np.full((2, 1, 1, 1), 0.5)),
    tensor("bn.weight", [1.0, 2.0]),
    tensor("bn.running_mean", [0.0, 0.0]),
    tensor("bn.running_var", [1.0, 1.0]),
    tensor("pos_embed", np.zeros((1, 2, 1, 1))),
    tensor("val_7", [0.0, 0.0]),
]
kinds = {"bn.weight": "PARAMETER", "bn.running_mean": "BUFFER",
         "bn.running_var": "BUFFER", "pos_embed": "BUFFER"}
value_info = [
    with_kind(helper.make_tensor_value_info(
        t.name, TensorProto.FLOAT, list(t.dims)), kinds[t.name])
    for t in initializers if t.name in kinds]
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "view_2"], ["c"], name="conv"),
     helper.make_node("BatchNormalization",
                      ["c", "bn.weight", "val_7", "bn.running_mean",
                       "bn.running_var"], ["n"], name="bn"),
     helper.make_node("BatchNormalization",
                      ["n", "bn.weight", "val_7", "bn.running_mean",
                       "bn.running_var"], ["m"], name="bn2"),
     helper.make_node("Add", ["m", "pos_embed"], ["y"], name="add")],
    "exported", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                               [1, 1, 2, 2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 2, 2])],
    initializers, value_info=value_info)
model = helper.make_model(graph, ir_version=10, producer_name="pytorch",
                          opset_imports=[helper.make_opsetid("", 20)])
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
