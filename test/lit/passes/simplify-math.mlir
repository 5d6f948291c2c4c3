// RUN: tinymlir-opt %s --tinymlir-simplify-math | FileCheck %s

// The GELU's cube: powf(x, 3) becomes two multiplications.
// CHECK-LABEL: func.func @cube
// CHECK-NOT: math.powf
// CHECK: %[[SQ:.*]] = arith.mulf %arg0, %arg0
// CHECK: arith.mulf %arg0, %[[SQ]]
func.func @cube(%x: f32) -> f32 {
  %c3 = arith.constant 3.0 : f32
  %y = math.powf %x, %c3 : f32
  return %y : f32
}
