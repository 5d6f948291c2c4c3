// tinymlir-opt: mlir-opt with the dialects the JIT registers, every upstream
// pass and tinymlir's own (tinymlir-*), for running any step on textual IR:
//
//   tinymlir-opt input.mlir --tinymlir-blas-rewrite
//   tinymlir-opt module.mlir --pass-pipeline="$(tinymlir-emit matmul --print-pipeline)"
#include "passes/Passes.h"

#include <mlir/IR/DialectRegistry.h>
#include <mlir/Tools/mlir-opt/MlirOptMain.h>

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  tinymlir::registerAllForOpt(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tinymlir optimizer driver\n", registry));
}
