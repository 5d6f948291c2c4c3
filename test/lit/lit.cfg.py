# lit configuration: IR at each stage of tinymlir-emit, checked with FileCheck.
import os

import lit.formats

config.name = "tinymlir"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tinymlir_binary_dir, "test", "lit")
config.environment["PATH"] = os.pathsep.join(
    [config.tinymlir_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.environment["TINYMLIR_BLAS"] = "1"
