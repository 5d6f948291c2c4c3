// RUN: tinymlir-opt %s --tinymlir-loop-annotations | FileCheck %s

// A loop's back edge, as convert-scf-to-cf and convert-cf-to-llvm leave it:
// the annotation a discardable attribute, which LLVM IR export ignores. The
// pass makes it the branch's own loop_annotation; other attributes stay.
#unroll = #llvm.loop_unroll<disable = true>
#vectorize = #llvm.loop_vectorize<disable = true>
#annotation = #llvm.loop_annotation<vectorize = #vectorize, unroll = #unroll>

// CHECK-LABEL: llvm.func @dot
// CHECK: llvm.cond_br %{{.*}}, ^bb2, ^bb3
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #loop_annotation}
// CHECK-NOT: llvm.loop_annotation
llvm.func @dot(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %more = llvm.icmp "slt" %i, %n : i64
  llvm.cond_br %more, ^bb2, ^bb3
^bb2:
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #annotation}
^bb3:
  llvm.return
}

// The exported LLVM IR carries it.
// RUN: tinymlir-opt %s --tinymlir-loop-annotations | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM
// LLVM: br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVM: ![[LOOP]] = distinct !{![[LOOP]], ![[A:[0-9]+]], ![[B:[0-9]+]]}
// LLVM-DAG: !{!"llvm.loop.vectorize.enable", i1 false}
// LLVM-DAG: !{!"llvm.loop.unroll.disable"}
