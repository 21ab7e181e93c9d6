# -*- Python -*-
# lit configuration of the tfm tests: tfm-opt, tfm-compile and tfm-run from the
# build, FileCheck, not, count and split-file from LLVM 22 (never from PATH).

import os

import lit.formats
import lit.llvm

# The paths come from lit.site.cfg.py, which CMake writes into the build
# tree: run lit on build/tests/lit, not on this directory.
if not hasattr(config, "tfm_obj_root"):
    lit_config.fatal(
        "run lit on the build tree (build/tests/lit), whose lit.site.cfg.py "
        "names the tools"
    )
# LLVM 22's tools; never the FileCheck of an older LLVM that may be on PATH.
config.llvm_tools_dir = getattr(config, "llvm_tools_dir", None) or "/usr/lib/llvm-22/bin"

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config

config.name = "tfm"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tfm", ".test"]
# A runtime-only build has tfm-run but no compiler: only tfm-run's tests
# (the .test files) apply.
if not config.tfm_build_compiler:
    config.suffixes = [".test"]
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
    [
        "tfm-opt",
        "tfm-compile",
        "tfm-run",
        "tfm-runtime-fixtures",
        "FileCheck",
        "not",
        "split-file",
        "count",
        "llvm-nm",
        "llvm-objcopy",
        "llvm-readelf",
    ],
    [config.tfm_tools_dir, config.llvm_tools_dir],
)

# The hand-written artifacts of tests/unit/runtime that tfm-run is tested on.
config.substitutions.append(
    (
        "%{seed}",
        os.path.join(
            config.test_source_root, "..", "..", "examples", "seeds",
            "000_self_attention",
        ),
    )
)
config.substitutions.append(
    ("%{add-model}", os.path.join(config.tfm_lib_dir, "tfm_test_add_model.so"))
)
config.substitutions.append(
    ("%{bool-model}", os.path.join(config.tfm_lib_dir, "tfm_test_bool_model.so"))
)
config.substitutions.append(
    ("%{half-model}", os.path.join(config.tfm_lib_dir, "tfm_test_half_model.so"))
)
# A CUDA driver over host memory (tests/unit/runtime/FakeCudaDriver.c), for
# TFM_CUDA_LIBRARY: GPU artifacts run (kernels do not) without a GPU.
config.substitutions.append(
    ("%{fake-cuda}", os.path.join(config.tfm_lib_dir, "tfm_fake_cuda.so"))
)
# `not` accepts any failure; tools whose exit codes are a contract (tfm-run:
# 1 for a mismatch, 2 for other errors) are checked with this.
config.substitutions.append(
    (
        "%{expect-exit}",
        "sh " + os.path.join(config.test_source_root, "Inputs", "expect-exit.sh"),
    )
)

# --target cuda from PTX on links the CUDA toolkit's libdevice (tfm-compile's
# default --cuda-path): tests of those stages say `REQUIRES: cuda-toolkit`.
if os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
    config.available_features.add("cuda-toolkit")
