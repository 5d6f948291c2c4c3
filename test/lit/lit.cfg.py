# lit configuration: IR at each stage of tinymlir-emit, and single passes run by
# tinymlir-opt on hand-written IR (passes/*.mlir), checked with FileCheck. GPT-2's
# stage tests (test/gpt2/lit, built with the models) load it too, on their own folder.
import os

import lit.formats

config.name = "tinymlir"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test", ".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tinymlir_binary_dir, "test", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.tinymlir_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
config.environment["TINYMLIR_BLAS"] = "1"
# tinymlir-emit's examples of GPT-2's kernels and blocks exist in builds with the models.
if config.tinymlir_models.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("models")
# Hermetic: lit passes few variables through, so tinymlir-emit would fall back
# to ~/.cache/tinymlir; it prints IR, so it runs without the disk cache.
config.environment["TINYMLIR_CACHE"] = "0"
for name in ("TINYMLIR_CACHE_DIR", "TINYMLIR_CPU", "TINYMLIR_GPU_EMULATE"):
    config.environment.pop(name, None)
