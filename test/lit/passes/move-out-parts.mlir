// RUN: tinymlir-opt %s --tinymlir-move-out-parts="per-module=2" | FileCheck %s

// Three parts, two a module: the kernel's module keeps a declaration of each
// part, in place, and the calls. A part's module declares the global it reads
// (made public in the kernel's module, where its value stays) and copies the
// private function it calls; each part becomes public there.
// CHECK-LABEL: memref.global constant @cst : memref<2xf64> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK: func.func private @tinymlir_cexp_complex128(f64, f64) -> f64
// CHECK: func.func private @kernel_part0(memref<2xf64>)
// CHECK-NEXT: func.func private @kernel_part1(memref<2xf64>)
// CHECK-NEXT: func.func private @kernel_part2(memref<2xf64>)
// CHECK: func.func @kernel(%[[A:.*]]: memref<2xf64>)
// CHECK-NEXT: call @kernel_part0(%[[A]])
// CHECK-NEXT: call @kernel_part1(%[[A]])
// CHECK-NEXT: call @kernel_part2(%[[A]])
// CHECK: module @kernel_parts0 {
// CHECK-NEXT: memref.global constant @cst : memref<2xf64>{{$}}
// CHECK-NEXT: func.func private @tinymlir_cexp_complex128(f64, f64) -> f64
// CHECK-NEXT: func.func @kernel_part0(
// CHECK: memref.get_global @cst
// CHECK: call @tinymlir_cexp_complex128
// CHECK: func.func @kernel_part1(
// CHECK-NOT: memref.global
// CHECK: module @kernel_parts2 {
// CHECK-NEXT: func.func @kernel_part2(
// CHECK-NOT: tinymlir_cexp
// CHECK-NOT: module
memref.global "private" constant @cst : memref<2xf64> = dense<[1.0, 2.0]>
func.func private @tinymlir_cexp_complex128(f64, f64) -> f64
func.func private @kernel_part0(%a: memref<2xf64>) attributes {tinymlir.part} {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @cst : memref<2xf64>
  %x = memref.load %g[%c0] : memref<2xf64>
  %y = call @tinymlir_cexp_complex128(%x, %x) : (f64, f64) -> f64
  memref.store %y, %a[%c0] : memref<2xf64>
  return
}
func.func private @kernel_part1(%a: memref<2xf64>) attributes {tinymlir.part} {
  %c1 = arith.constant 1 : index
  %g = memref.get_global @cst : memref<2xf64>
  %x = memref.load %g[%c1] : memref<2xf64>
  memref.store %x, %a[%c1] : memref<2xf64>
  return
}
func.func private @kernel_part2(%a: memref<2xf64>) attributes {tinymlir.part} {
  %c1 = arith.constant 1 : index
  %x = memref.load %a[%c1] : memref<2xf64>
  %y = arith.mulf %x, %x : f64
  memref.store %y, %a[%c1] : memref<2xf64>
  return
}
func.func @kernel(%a: memref<2xf64>) {
  call @kernel_part0(%a) : (memref<2xf64>) -> ()
  call @kernel_part1(%a) : (memref<2xf64>) -> ()
  call @kernel_part2(%a) : (memref<2xf64>) -> ()
  return
}
