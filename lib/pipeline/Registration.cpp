// Dialect, interface, pass and translation registration: the one translation
// unit that includes MLIR's "register everything" headers (slow to compile).
#include "pipeline/Pipeline.h"

#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h>

// --- GPU target (lib/gpu): gpu.binary / gpu.launch_func and NVVM to LLVM IR ---
#include <mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h>
// --- end GPU target ---

#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace tinymlir::detail {

std::unique_ptr<mlir::MLIRContext> makeContext() {
  static std::once_flag once;
  static mlir::DialectRegistry *registry = nullptr;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    mlir::registerAllPasses();
    registry = new mlir::DialectRegistry();
    mlir::registerAllDialects(*registry);
    mlir::registerAllExtensions(*registry);
    mlir::registerBuiltinDialectTranslation(*registry);
    mlir::registerLLVMDialectTranslation(*registry);
    // --- GPU target (lib/gpu) ---
    mlir::registerGPUDialectTranslation(*registry);
    mlir::registerNVVMDialectTranslation(*registry);
    mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(*registry);
    // --- end GPU target ---
    mlir::registerOpenMPDialectTranslation(*registry);
  });
  auto context = std::make_unique<mlir::MLIRContext>(*registry,
                                                      mlir::MLIRContext::Threading::DISABLED);
  context->loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                       mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect,
                       mlir::bufferization::BufferizationDialect, mlir::memref::MemRefDialect,
                       mlir::math::MathDialect, mlir::scf::SCFDialect, mlir::LLVM::LLVMDialect>();
  return context;
}

} // namespace tinymlir::detail
