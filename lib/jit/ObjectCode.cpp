// Native code for a lowered module: MLIR's LLVM IR export, the packed entry
// point, then LLVM's optimizer and code generator on each partition of the
// module, on threads of their own.
//
// An unrolled Python loop is one kernel of thousands of small loops, split
// into parts (tinymlir-outline-parts): LLVM's time is then spread evenly
// over its functions (a 100x100 Cholesky: 4,950 dot loops in 50 parts, 9.6 s
// of LLVM on one thread). llvm::SplitModule deals the functions round robin
// by size into partitions; each goes through bitcode into a context of its
// own (LLVM's contexts are not shared across threads), is optimized and
// compiled there, and comes back as an object file. The JIT links the
// objects (Compile.cpp's loadObjects), and the disk cache keeps them.
#include "jit/ObjectCode.h"

#include "builder/MLIRGen.h"
#include "targets/Target.h"

#include <tinymlir/array.h>

#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Target/LLVMIR/Export.h>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/SplitModule.h>

#include <exception>
#include <thread>

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

std::string bitcodeOf(const llvm::Module &module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os);
  return bytes;
}

/// One partition, from bitcode: optimized and compiled in a context of its own.
std::string compilePartition(const std::string &bitcode, const CompileTarget &target, int level) {
  llvm::LLVMContext context;
  auto parsed =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "tinymlir-partition"), context);
  if (!parsed)
    throw Error("[compile] stage 'jit': " + llvm::toString(parsed.takeError()));
  llvm::Module &module = **parsed;
  auto machine = target.machine(level);
  if (auto error = target.optimizer(level, machine.get())(&module))
    throw Error("[compile] stage 'jit' (LLVM's optimizer): " + llvm::toString(std::move(error)));
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("[compile] stage 'jit': LLVM cannot emit an object file for this target");
  passes.run(module);
  return std::string(object.begin(), object.end());
}

} // namespace

std::string interfaceName() { return std::string("_mlir_ciface_") + kKernelName; }
std::string packedEntryName() { return "_mlir_" + interfaceName(); }

std::vector<std::string> compileObjects(mlir::ModuleOp module, const CompileTarget &target,
                                        int level, unsigned partitions) {
  size_t parts = 0;
  for (auto fn : module.getOps<mlir::LLVM::LLVMFuncOp>())
    parts += fn->hasAttr(kPartAttr) ? 1 : 0;
  partitions = parts >= 2 ? std::min<unsigned>(partitions, static_cast<unsigned>(parts)) : 1;

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir = mlir::translateModuleToLLVMIR(module, context);
  if (!ir)
    throw Error("[compile] stage 'jit': the module does not translate to LLVM IR");
  {
    auto machine = target.machine(level);
    ir->setDataLayout(machine->createDataLayout());
    ir->setTargetTriple(machine->getTargetTriple());
  }
  addPackedEntry(*ir);

  std::vector<std::string> bitcode;
  if (partitions <= 1) {
    bitcode.push_back(bitcodeOf(*ir));
  } else {
    // Locals made external, under names of their own: calls cross partitions.
    llvm::SplitModule(
        *ir, partitions,
        [&](std::unique_ptr<llvm::Module> part) { bitcode.push_back(bitcodeOf(*part)); },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
  }
  ir.reset();

  std::vector<std::string> objects(bitcode.size());
  std::vector<std::exception_ptr> errors(bitcode.size());
  auto work = [&](size_t i) {
    try {
      objects[i] = compilePartition(bitcode[i], target, level);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < bitcode.size(); ++i)
    threads.emplace_back(work, i);
  work(0); // this thread compiles the first
  for (std::thread &t : threads)
    t.join();
  for (const std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
  return objects;
}

} // namespace tinymlir::detail
