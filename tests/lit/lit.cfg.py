# -*- Python -*-
# lit configuration of the tfm tests: tfm-opt and tfm-compile from the build,
# FileCheck, not, count and split-file from LLVM 22 (never from PATH).

import os

import lit.formats
import lit.llvm

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config

config.name = "tfm"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tfm"]
config.excludes = [
    "Inputs",
    "CMakeLists.txt",
    "README.md",
    "lit.cfg.py",
    "lit.site.cfg.py",
]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tfm_obj_root, "tests", "lit")

# Tools spawned by `not` and friends resolve through PATH: put ours first.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.tfm_tools_dir, append_path=True)

llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["tfm-opt", "tfm-compile", "FileCheck", "not", "split-file", "count"],
    [config.tfm_tools_dir, config.llvm_tools_dir],
)
