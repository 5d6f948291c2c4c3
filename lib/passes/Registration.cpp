// Dialect, interface, pass and translation registration (ours: every pass of
// Passes.td, registered by its generated registerTinymlirPasses): the one translation unit that
// includes MLIR's "register everything" headers (slow to compile).
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h>

// --- GPU target (lib/passes/gpu, lib/targets/gpu): gpu.binary / gpu.launch_func and NVVM to LLVM
// IR ---
#include <mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h>
// --- end GPU target ---

#include <llvm/Support/TargetSelect.h>

namespace tinymlir::detail {
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"
} // namespace tinymlir::detail

#include <mutex>
#include <unordered_map>
#include <vector>

namespace tinymlir {
namespace {

/// The dialects, interfaces and translations the JIT needs.
void registerDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // --- GPU target (lib/passes/gpu, lib/targets/gpu) ---
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  // --- end GPU target ---
  mlir::registerOpenMPDialectTranslation(registry);
}

} // namespace

void registerPasses() {
  static std::once_flag once;
  std::call_once(once, detail::registerTinymlirPasses);
}

void registerAllForOpt(mlir::DialectRegistry &registry) {
  static std::once_flag once;
  std::call_once(once, [] { mlir::registerAllPasses(); });
  registerPasses();
  registerDialects(registry);
}

namespace detail {

namespace {

/// Contexts are reused: making one (every registered dialect and extension
/// copied in, nine dialects loaded) takes about 2 ms, as long as loading a
/// kernel from the disk cache takes without it. A context goes back to the
/// pool when its compile is done (the module destroyed), and is dropped after
/// kMaxUses compiles, so that what it keeps (every type and attribute made in
/// it) stays bounded. Contexts are single-threaded; the pool's mutex orders
/// one compile's use before the next.
class ContextPool {
public:
  static ContextPool &get() {
    static ContextPool *pool = new ContextPool; // contexts may come back during exit
    return *pool;
  }

  PooledContext take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        mlir::MLIRContext *context = idle_.back();
        idle_.pop_back();
        return PooledContext(context, giveBack);
      }
    }
    return PooledContext(create().release(), giveBack);
  }

private:
  static constexpr int kMaxUses = 32;
  static constexpr size_t kMaxIdle = 16;

  static std::unique_ptr<mlir::MLIRContext> create() {
    static std::once_flag once;
    static mlir::DialectRegistry *registry = nullptr;
    std::call_once(once, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      mlir::DialectRegistry *all = new mlir::DialectRegistry();
      registerAllForOpt(*all);
      registry = all;
    });
    auto context =
        std::make_unique<mlir::MLIRContext>(*registry, mlir::MLIRContext::Threading::DISABLED);
    context->loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                         mlir::linalg::LinalgDialect, mlir::tensor::TensorDialect,
                         mlir::bufferization::BufferizationDialect, mlir::memref::MemRefDialect,
                         mlir::math::MathDialect, mlir::scf::SCFDialect, mlir::LLVM::LLVMDialect>();
    return context;
  }

  static void giveBack(mlir::MLIRContext *context) {
    ContextPool &pool = get();
    std::unique_lock<std::mutex> lock(pool.mutex_);
    if (++pool.uses_[context] < kMaxUses && pool.idle_.size() < kMaxIdle) {
      pool.idle_.push_back(context);
      return;
    }
    pool.uses_.erase(context);
    lock.unlock();
    delete context;
  }

  std::mutex mutex_;
  std::vector<mlir::MLIRContext *> idle_;
  std::unordered_map<const mlir::MLIRContext *, int> uses_;
};

} // namespace

PooledContext makeContext() { return ContextPool::get().take(); }

} // namespace detail
} // namespace tinymlir
