"""Writes the ONNX backend node tests of the pinned onnx (scripts/
requirements-onnx.txt, installed in .venv-onnx) into OUTPUT/node.

The wheel ships the generators, not the data; this is what onnx's own
`backend-test-tools generate-data` does for the node cases: model.onnx and
test_data_set_*/{input,output}_*.pb per test.
"""
import shutil
import sys
import warnings
from pathlib import Path

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node


def serialize(value, value_info):
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    kind = value_info.type.WhichOneof("value")
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def main():
    out = Path(sys.argv[1]) / "node"
    if out.exists():
        shutil.rmtree(out)
    with warnings.catch_warnings():
        # The generators compute inf and nan on purpose.
        warnings.simplefilter("ignore", RuntimeWarning)
        cases = node.collect_testcases()
    for case in cases:
        test_dir = out / case.name
        test_dir.mkdir(parents=True)
        (test_dir / "model.onnx").write_bytes(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data_set = test_dir / f"test_data_set_{i}"
            data_set.mkdir()
            for j, value in enumerate(inputs):
                (data_set / f"input_{j}.pb").write_bytes(serialize(value, graph.input[j]))
            for j, value in enumerate(outputs):
                (data_set / f"output_{j}.pb").write_bytes(serialize(value, graph.output[j]))
    print(f"onnx {onnx.__version__}: {len(cases)} node tests in {out}")


if __name__ == "__main__":
    main()
