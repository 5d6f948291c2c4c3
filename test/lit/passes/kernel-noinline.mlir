// RUN: tinymlir-opt %s --tinymlir-kernel-noinline | FileCheck %s

// The kernel, called by the C interface and the engine's wrappers, stays out
// of line; other functions are untouched.
// CHECK: llvm.func @kernel() attributes {passthrough = ["noinline"]}
// CHECK: llvm.func @other() {
llvm.func @kernel() {
  llvm.return
}
llvm.func @other() {
  llvm.return
}
