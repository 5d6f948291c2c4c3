// Native code for a lowered kernel: MLIR's LLVM IR export, the packed entry
// point, then LLVM's optimizer and code generator, one object per module.
//
// An unrolled Python loop is one kernel of thousands of small loops, split
// into parts (tinymlir-outline-parts) that the CPU target lowers in modules
// of their own (tinymlir-move-out-parts). Each module is exported into an
// LLVM context of its own (LLVM's contexts are not shared across threads),
// optimized and compiled there, on every core, and comes back as an object
// file: LLVM's time then grows linearly with the number of parts. The JIT links the
// objects (Compile.cpp's loadObjects), and the disk cache keeps them.
#include "jit/ObjectCode.h"

#include "builder/MLIRGen.h"
#include "passes/Pipeline.h"
#include "targets/Target.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Target/LLVMIR/Export.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace tinymlir::detail {
namespace {

/// void _mlir__mlir_ciface_kernel(void **args): each argument read through
/// its pointer, then the C interface called (MLIR's ExecutionEngine's
/// packing, for the one entry the runtime calls).
void addPackedEntry(llvm::Module &module) {
  llvm::Function *interface = module.getFunction(interfaceName());
  if (!interface)
    throw Error("[compile] stage 'jit': the module has no " + interfaceName());
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> b(context);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), b.getPtrTy(), /*isVarArg=*/false);
  auto *entry =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, packedEntryName(), module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", entry));
  llvm::Value *list = entry->getArg(0);
  std::vector<llvm::Value *> args;
  for (llvm::Argument &arg : interface->args()) {
    llvm::Value *slot = b.CreateGEP(b.getPtrTy(), list, b.getInt64(arg.getArgNo()));
    args.push_back(b.CreateLoad(arg.getType(), b.CreateLoad(b.getPtrTy(), slot)));
  }
  b.CreateCall(interface, args);
  b.CreateRetVoid();
}

/// One module's object: exported to LLVM IR in a context of its own, with the
/// packed entry where it holds the kernel, then optimized and compiled.
std::string compileModule(mlir::ModuleOp module, bool entry, const CompileTarget &target,
                          int level) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = mlir::translateModuleToLLVMIR(module, context);
  if (!ir)
    throw Error("[compile] stage 'jit': the module does not translate to LLVM IR");
  auto machine = target.machine(level);
  ir->setDataLayout(machine->createDataLayout());
  ir->setTargetTriple(machine->getTargetTriple());
  if (entry)
    addPackedEntry(*ir);
  if (auto error = target.optimizer(level, machine.get())(ir.get()))
    throw Error("[compile] stage 'jit' (LLVM's optimizer): " + llvm::toString(std::move(error)));
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("[compile] stage 'jit': LLVM cannot emit an object file for this target");
  passes.run(*ir);
  return std::string(object.begin(), object.end());
}

} // namespace

std::string interfaceName() { return std::string("_mlir_ciface_") + kKernelName; }
std::string packedEntryName() { return "_mlir_" + interfaceName(); }

std::vector<std::string> compileObjects(mlir::ModuleOp kernel,
                                        const std::vector<mlir::OwningOpRef<mlir::ModuleOp>> &parts,
                                        const CompileTarget &target, int level) {
  std::vector<std::string> objects(parts.size() + 1);
  forEachInParallel(kernel.getContext(), objects.size(), compileWorkers(), [&](size_t i) {
    objects[i] = i == 0 ? compileModule(kernel, true, target, level)
                        : compileModule(*parts[i - 1], false, target, level);
  });
  return objects;
}

} // namespace tinymlir::detail
