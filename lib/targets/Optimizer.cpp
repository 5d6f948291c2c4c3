// LLVM's optimization pipeline for generated code, with glibc's vector math
// library (libmvec) known to the loop vectorizer: loops that call exp, tanh
// or pow (softmax, GELU) run 4 or 8 lanes at a time instead of one libm call
// per element. libmvec's functions are accurate to a few ulp (NumPy's own
// SIMD loops are not libm-exact either); without libmvec, scalar calls stay.
#include "targets/Optimizer.h"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/SystemLibraries.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>

#include <string_view>

#include <array>

namespace tinymlir::detail {

bool loadVectorMath() {
  static const bool available = [] {
    std::string error;
    return !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &error);
  }();
  return available;
}

namespace {

/// libmvec entry points LLVM's LIBMVEC table lacks: tanh, and the AVX-512
/// ("e", 8 doubles / 16 floats) variants. Each variant takes its arguments in
/// registers of its ISA: "d" needs AVX2, "e" AVX-512 in the code that calls
/// it, else an AVX2 caller passes 8 doubles in two ymm registers to a callee
/// that reads one zmm (wrong numbers), or an AVX2 CPU meets an AVX-512
/// instruction. Only the variants the target machine has are added.
void addMissingVectorFunctions(llvm::TargetLibraryInfoImpl &tli, bool avx512) {
  struct Entry {
    const char *scalar, *vector;
    unsigned lanes;
    const char *abi;
  };
  static const std::array<Entry, 16> entries{{
      {"tanh", "_ZGVdN4v_tanh", 4, "_ZGV_LLVM_N4v"},
      {"tanh", "_ZGVeN8v_tanh", 8, "_ZGV_LLVM_N8v"},
      {"tanhf", "_ZGVdN8v_tanhf", 8, "_ZGV_LLVM_N8v"},
      {"tanhf", "_ZGVeN16v_tanhf", 16, "_ZGV_LLVM_N16v"},
      {"exp", "_ZGVeN8v_exp", 8, "_ZGV_LLVM_N8v"},
      {"expf", "_ZGVeN16v_expf", 16, "_ZGV_LLVM_N16v"},
      {"llvm.exp.f64", "_ZGVeN8v_exp", 8, "_ZGV_LLVM_N8v"},
      {"llvm.exp.f32", "_ZGVeN16v_expf", 16, "_ZGV_LLVM_N16v"},
      {"pow", "_ZGVeN8vv_pow", 8, "_ZGV_LLVM_N8vv"},
      {"powf", "_ZGVeN16vv_powf", 16, "_ZGV_LLVM_N16vv"},
      {"llvm.pow.f64", "_ZGVeN8vv_pow", 8, "_ZGV_LLVM_N8vv"},
      {"llvm.pow.f32", "_ZGVeN16vv_powf", 16, "_ZGV_LLVM_N16vv"},
      {"expm1", "_ZGVdN4v_expm1", 4, "_ZGV_LLVM_N4v"},
      {"expm1", "_ZGVeN8v_expm1", 8, "_ZGV_LLVM_N8v"},
      {"expm1f", "_ZGVdN8v_expm1f", 8, "_ZGV_LLVM_N8v"},
      {"expm1f", "_ZGVeN16v_expm1f", 16, "_ZGV_LLVM_N16v"},
  }};
  std::vector<llvm::VecDesc> descs;
  for (const Entry &e : entries)
    if (avx512 || std::string_view(e.vector).substr(0, 5) != "_ZGVe")
      descs.emplace_back(e.scalar, e.vector, llvm::ElementCount::getFixed(e.lanes), false, e.abi,
                         std::nullopt);
  tli.addVectorizableFunctions(descs);
}

} // namespace

std::function<llvm::Error(llvm::Module *)> makeOptimizer(int level, llvm::TargetMachine *machine,
                                                         bool vectorMath) {
  return [level, machine, vectorMath](llvm::Module *module) -> llvm::Error {
    if (level == 0)
      return llvm::Error::success();
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    // No loop unrolling: the generated loops that need it are unrolled by
    // their passes (the streamed products' k loops, register blocks), and
    // LLVM unrolling the rest doubled the compile time of GPT-2's blocks for
    // no run time (measured: first token from an empty disk cache 2.14 ->
    // 1.53 s, decode and prefill within noise). Interleaving stays.
    tuning.LoopUnrolling = false;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = level > 1;
    tuning.SLPVectorization = level > 1;
    llvm::PassBuilder builder(machine, tuning);

    llvm::Triple triple(module->getTargetTriple());
    llvm::TargetLibraryInfoImpl tli(triple);
    // LLVM's LIBMVEC table has SSE ("b") and AVX2 ("d") variants: vector
    // math only for targets with AVX2, the AVX-512 variants only with it.
    const llvm::MCSubtargetInfo *cpu = machine ? machine->getMCSubtargetInfo() : nullptr;
    const bool avx2 = cpu && cpu->checkFeatures("+avx2,+fma");
    const bool avx512 = cpu && cpu->checkFeatures("+avx512f");
    if (vectorMath && loadVectorMath() && triple.getArch() == llvm::Triple::x86_64 && avx2) {
      tli.addVectorizableFunctionsFromVecLib(llvm::VectorLibrary::LIBMVEC, triple);
      addMissingVectorFunctions(tli, avx512);
    }
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tli); });

    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel o = level == 1   ? llvm::OptimizationLevel::O1
                                : level == 2 ? llvm::OptimizationLevel::O2
                                             : llvm::OptimizationLevel::O3;
    builder.buildPerModuleDefaultPipeline(o).run(*module, mam);
    return llvm::Error::success();
  };
}

} // namespace tinymlir::detail
