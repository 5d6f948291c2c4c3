// Only with TINYMLIR_STATIC_LLVM (a self-contained libtinymlir): the LLVM
// targets other than x86 and NVPTX are left out. Parts of MLIR call LLVM's
// InitializeAll* functions (the ROCDL target, the LLVM IR target utilities);
// these empty, hidden definitions of the other targets' initializers satisfy
// those calls, so that the linker never takes their code from LLVM's archives
// (about 60 MB). Those targets are then unknown to the TargetRegistry, which
// tinymlir never asks for them.
#define TINYMLIR_TARGET_PARTS(T)                                                                   \
  TINYMLIR_EMPTY(T##TargetInfo)                                                                    \
  TINYMLIR_EMPTY(T##Target)                                                                        \
  TINYMLIR_EMPTY(T##TargetMC)                                                                      \
  TINYMLIR_EMPTY(T##AsmPrinter)                                                                    \
  TINYMLIR_EMPTY(T##AsmParser)                                                                     \
  TINYMLIR_EMPTY(T##Disassembler)                                                                  \
  TINYMLIR_EMPTY(T##TargetMCA)
#define TINYMLIR_EMPTY(Name)                                                                       \
  __attribute__((visibility("hidden"))) void LLVMInitialize##Name() {}

extern "C" {
TINYMLIR_TARGET_PARTS(AArch64)
TINYMLIR_TARGET_PARTS(AMDGPU)
TINYMLIR_TARGET_PARTS(ARM)
TINYMLIR_TARGET_PARTS(AVR)
TINYMLIR_TARGET_PARTS(BPF)
TINYMLIR_TARGET_PARTS(Hexagon)
TINYMLIR_TARGET_PARTS(Lanai)
TINYMLIR_TARGET_PARTS(LoongArch)
TINYMLIR_TARGET_PARTS(Mips)
TINYMLIR_TARGET_PARTS(MSP430)
TINYMLIR_TARGET_PARTS(PowerPC)
TINYMLIR_TARGET_PARTS(RISCV)
TINYMLIR_TARGET_PARTS(Sparc)
TINYMLIR_TARGET_PARTS(SPIRV)
TINYMLIR_TARGET_PARTS(SystemZ)
TINYMLIR_TARGET_PARTS(VE)
TINYMLIR_TARGET_PARTS(WebAssembly)
TINYMLIR_TARGET_PARTS(XCore)
TINYMLIR_TARGET_PARTS(M68k)
TINYMLIR_TARGET_PARTS(Xtensa)
}
