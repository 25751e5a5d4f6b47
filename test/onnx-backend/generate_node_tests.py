"""Generates the ONNX backend node tests with Debian's python3-onnx.

onnx 1.12's generators still use numpy aliases that numpy 1.24 removed;
restoring them is all the generators need.
"""
import sys

import numpy as np

for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if not hasattr(np, alias):
        setattr(np, alias, value)

from onnx.backend.test import cmd_tools  # noqa: E402  (needs the aliases first)

sys.argv = ["cmd_tools", "generate-data", "-o", sys.argv[1]]
cmd_tools.main()
