// tinymlir's own MLIR passes: one record per compiler step written in C++.
// mlir-tblgen (-gen-pass-decls -name Tinymlir) makes each one's base class
// (argument, description, options, statistics, dependent dialects), its
// create...Pass() and create...Pass(...Options), and registerTinymlirPasses(),
// the one registration (passes/Registration.cpp). The pipelines that use them
// belong to the targets (lib/targets).
include "mlir/Pass/PassBase.td"

class ModulePass<string passArgument> : Pass<passArgument, "::mlir::ModuleOp">;

// --- lib/passes ---

def SimplifyMathPass : ModulePass<"tinymlir-simplify-math"> {
  let summary = "Strength-reduce math ops with constant operands (powf(x, 3) -> x * x * x)";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
}

def ExpandCopySignPass : ModulePass<"tinymlir-expand-copysign"> {
  let summary = "math.copysign as bit operations on the float's integer bits";
  let description = [{
    MLIR 22's convert-math-to-libm marks math.copysign illegal without a pattern
    for it. The complex lowering (convert-complex-to-standard: division, sqrt,
    tanh) and floor division emit it; this pass runs before math-to-libm:
    copysign(a, b) = bitcast((bits(a) & ~sign) | (bits(b) & sign)).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def SmallProductsPass : ModulePass<"tinymlir-small-products"> {
  let summary = "Lower memref matrix-vector and few-row mixed-precision products to streaming "
                "loops";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"maxRows", "max-rows", "int64_t", "kSmallProductMaxRows",
           "Most rows of a mixed-precision product lowered here">,
    Option<"streamRows", "stream-rows", "int64_t", "1",
           "Most rows of any product lowered here (transposed weights read in place)">,
    Option<"blasGemv", "blas-gemv", "bool", "false",
           "Leave float64 products of one row (x @ B) to BLAS's gemv: NumPy's, on NumPy's "
           "thread pool (numpy_blas)">,
    Option<"vectorBits", "vector-bits", "int64_t", "256",
           "Width of the register blocks' vectors, 256 or 512 (several rows: vector-bits / 32 "
           "lanes; float32 dot products: vector-bits): the CPU target gives 512 where the CPU "
           "has AVX-512">,
  ];
  let statistics = [
    Statistic<"lowered", "products", "products lowered to loops">,
    Statistic<"widenedProducts", "widened", "mixed-precision products with widened weights">,
  ];
}

def BlasRewritePass : ModulePass<"tinymlir-blas-rewrite"> {
  let summary = "Replace row-major memref linalg.matmul/batch_matmul with tinymlir_sgemm/dgemm "
                "calls";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect"];
  let statistics = [Statistic<"replaced", "products", "products replaced by BLAS calls">];
}

def LowerReductionsPass : ModulePass<"tinymlir-lower-reductions"> {
  let summary = "Lower memref linalg.reduce to scf loops carrying the accumulators in registers";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [Statistic<"lowered", "reductions", "reductions lowered to loops">];
}

def GuardExpUnderflowPass : ModulePass<"tinymlir-guard-exp-underflow"> {
  let summary = "Select 0 for f32/f64 math.exp of arguments below the underflow threshold";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::math::MathDialect"];
  let statistics = [Statistic<"guarded", "guarded", "exps guarded">];
}

def InterchangeScatteredCopiesPass : ModulePass<"tinymlir-interchange-scattered-copies"> {
  let summary = "Row-by-row copies into slots of non-unit innermost stride (index_put's loop) "
                "become a parallel loop over the row's elements, the rows in order inside";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [Statistic<"interchanged", "interchanged", "row loops interchanged">];
}

def SerializeSmallParallelLoopsPass
    : ModulePass<"tinymlir-serialize-small-parallel-loops"> {
  let summary = "Make small and nested scf.parallel loops sequential; one parallel dimension for "
                "the rest";
  let dependentDialects = ["::mlir::scf::SCFDialect"];
  let options = [
    Option<"minimumWork", "minimum-work", "int64_t", "kMinimumParallelWork",
           "Fewest iterations (nested loops counted) that get threads">,
  ];
  let statistics = [Statistic<"serialized", "serialized", "parallel loops made sequential">];
}

def KernelNoInlinePass : ModulePass<"tinymlir-kernel-noinline"> {
  let summary = "Mark the kernel's llvm.func, and its parts' (tinymlir.part), noinline "
                "(passthrough)";
}

def LoopAnnotationsPass : Pass<"tinymlir-loop-annotations"> {
  let summary = "Put the llvm.loop_annotation that convert-scf-to-cf leaves on a loop's "
                "back edge (a discardable attribute, which LLVM IR export ignores) into the "
                "branch's loop_annotation";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def OutlinePartsPass : ModulePass<"tinymlir-outline-parts"> {
  let summary = "Split a long straight-line kernel into functions of bounded size, called in "
                "order (lowering and LLVM grow faster than linearly in one function's size)";
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let options = [
    Option<"minOps", "min-ops", "int64_t", "2000",
           "Nested operations of the smallest kernel split">,
    Option<"partOps", "part-ops", "int64_t", "1000",
           "Nested operations of a part (it ends at the first top-level operation past it)">,
  ];
  let statistics = [Statistic<"outlined", "parts", "parts outlined">];
}

def MoveOutPartsPass : ModulePass<"tinymlir-move-out-parts"> {
  let summary = "Move the parts tinymlir-outline-parts made into nested modules of their own, "
                "each lowered and compiled on its own (the kernel's module declares them)";
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"perModule", "per-module", "int64_t", "2", "Consecutive parts in each module">,
  ];
  let statistics = [Statistic<"moved", "parts", "parts moved">];
}

// --- lib/passes/gpu (targets/gpu/GpuTarget.cpp describes the order) ---

def GpuMatmulKernelsPass : ModulePass<"tinymlir-gpu-matmul-kernels"> {
  let summary = "Replace memref linalg.matmul/batch_matmul with tiled shared-memory gpu.launch "
                "kernels";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
  let options = [
    Option<"tile", "tile", "std::string", "\"\"",
           "Outputs per thread TMxTN (1, 2 or 4 each); empty: chosen per product">,
  ];
  let statistics = [Statistic<"kernels", "products", "products replaced by GPU kernels">];
}

def GpuPrepareLoopsPass : ModulePass<"tinymlir-gpu-prepare-loops"> {
  let summary = "Shape host linalg ops into one outermost parallel loop each, for the GPU";
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GpuMapParallelLoopsPass
    : ModulePass<"tinymlir-gpu-map-parallel-loops"> {
  let summary = "Tile outermost scf.parallel loops and map them onto GPU blocks and threads";
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect"];
}

def GpuMoveDataToDevicePass
    : ModulePass<"tinymlir-gpu-move-data-to-device"> {
  let summary = "Put host function data in device memory through the tinymlir GPU runtime";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect"];
}

def GpuMergeKernelModulesPass
    : ModulePass<"tinymlir-gpu-merge-kernel-modules"> {
  let summary = "Move every outlined kernel into one gpu.module and retarget the launches";
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GpuCheckHostPass : ModulePass<"tinymlir-gpu-check-host"> {
  let summary = "Check that host functions only launch kernels on device data";
}

def GpuPackPtxBundlePass : ModulePass<"tinymlir-gpu-pack-ptx-bundle"> {
  let summary = "Pack the per-chip PTX objects of each gpu.binary into one bundle object";
  let options = [
    Option<"libdevice", "libdevice", "std::string", "\"\"",
           "The libdevice linked into the kernels (empty: none)">,
  ];
}

def GpuEmulateOnHostPass : ModulePass<"tinymlir-gpu-emulate-on-host"> {
  let summary = "Run the kernels of GPU launches on the host (OpenMP teams), for tests without a "
                "GPU";
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::omp::OpenMPDialect",
                           "::mlir::scf::SCFDialect"];
}

def ReuseDeadOperandsPass : ModulePass<"tinymlir-reuse-dead-operands"> {
  let summary = "Make an elementwise linalg.generic with a tensor.empty init write into an input "
                "that dies there (before bufferization: no new buffer, one stream of memory)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"reused", "inits", "inits replaced by a dead input">];
}

def FoldReshapedSlicesPass : ModulePass<"tinymlir-fold-reshaped-slices"> {
  let summary = "Fold a rank-reduced extract_slice given its unit axes back (expand_shape) into "
                "the slice itself, and the same for inserts (before bufferization: an update's "
                "read and write of one box are one value, computed in place)";
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def PrivateFillInitsPass : ModulePass<"tinymlir-private-fill-inits"> {
  let summary = "Give each destination use of a tensor linalg.fill a fill of its own (before "
                "eliminate-empty-tensors, which would make a shared fill write into one output "
                "while others still read it)";
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
  let statistics = [Statistic<"privatized", "fills", "fills cloned for a destination use">];
}

def StraightLineDeallocPass : ModulePass<"tinymlir-straight-line-dealloc"> {
  let summary = "Deallocate each buffer after the last use of it or its views in its block "
                "(modules whose arrays are updated in place: linear, where the ownership-based "
                "pipeline's simplification grows quadratically)";
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [Statistic<"placed", "deallocs", "deallocations placed">];
}

def WriteIntoDestinationPass : ModulePass<"tinymlir-write-into-destination"> {
  let summary = "Let a linalg op that fills a temporary copied into a box write into the box "
                "(bufferized straight-line modules: slice updates)";
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::linalg::LinalgDialect"];
  let statistics = [Statistic<"forwarded", "forwarded", "temporaries removed">,
                    Statistic<"snapshots", "snapshots", "snapshots of a written box removed">];
}

def FuseElementwisePass : ModulePass<"tinymlir-fuse-elementwise"> {
  let summary = "linalg-fuse-elementwise-ops with a bound on the fused operation's inputs";
  let description = [{
    The patterns and the cost rule of MLIR's linalg-fuse-elementwise-ops (a
    producer with one use fuses into its consumer; reshapes fold by
    expansion; constants fold), and one more rule: a fusion that would give an
    operation more than `max-inputs` inputs is not made. An unrolled loop of n
    scalar steps (`s += np.tanh(a[i, i])`) otherwise fuses into one generic of
    n inputs, each fusion copying the last: quadratic in n.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
  let options = [
    Option<"maxInputs", "max-inputs", "int64_t", "32",
           "Most inputs of an operation made by fusion">,
  ];
}
