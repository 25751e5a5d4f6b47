# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "fastnn"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fastnn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "zoo", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.fastnn_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["fastnnc", "fastnnc-opt"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.substitutions.append(("%python", config.fastnn_python))

# --target=cuda compiles need ptxas; linking its executables, the CUDA
# runtime library. Neither needs a GPU.
if config.fastnn_cuda_toolkit:
    config.available_features.add("cuda-toolkit")
if config.fastnn_cuda_runtime:
    config.available_features.add("cuda-runtime")
