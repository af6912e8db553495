# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "FA"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "corpus", "Inputs", "check_corpus.py", "conformance"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fa_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%specs", os.path.join(config.fa_src_root, "kernels_spec")))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.fa_tools_dir, append_path=True)
llvm_config.use_default_substitutions()

tool_dirs = [config.fa_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["fa-opt", "fa-run", "fa-compile"], tool_dirs)

# The GPU lowering links CUDA's libdevice for math; tests that look at the
# math in PTX need it (fa's findCudaRoot looks in the same places).
for root in [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]:
    if root and os.path.exists(os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")):
        config.available_features.add("cuda-libdevice")
        break

# A C compiler for the export test (fa-compile -o DIR, then a C program
# against it), and whether a CUDA driver is loadable here (then that program
# runs on the GPU instead of reporting that there is none).
import ctypes
import shutil
cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
if cc:
    config.available_features.add("c-compiler")
    config.substitutions.append(("%cc", cc))
# ptxas (the CUDA toolkit's, or PATH's): tests of the machine code the
# kernels assemble to (spills), which need no GPU.
ptxas = shutil.which("ptxas") or next(
    (p for p in [os.path.join(r, "bin", "ptxas") for r in
                 [os.environ.get(v) for v in ("CUDA_ROOT", "CUDA_HOME",
                                              "CUDA_PATH")] +
                 ["/usr/local/cuda"] if r] if os.access(p, os.X_OK)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
try:
    ctypes.CDLL("libcuda.so.1")
    config.available_features.add("cuda-driver")
except OSError:
    pass
