// RUN: tinymlir-opt %s --tinymlir-expand-copysign | FileCheck %s
// RUN: tinymlir-opt %s --tinymlir-expand-copysign --convert-math-to-libm | FileCheck %s --check-prefix=LIBM

// copysign(a, b): the magnitude bits of a, the sign bit of b.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: math.copysign
// CHECK-DAG: %[[SIGN:.*]] = arith.constant -9223372036854775808 : i64
// CHECK-DAG: %[[MAG:.*]] = arith.constant 9223372036854775807 : i64
// CHECK: %[[A:.*]] = arith.bitcast %arg0 : f64 to i64
// CHECK: %[[B:.*]] = arith.bitcast %arg1 : f64 to i64
// CHECK: %[[KEEP:.*]] = arith.andi %[[A]], %[[MAG]]
// CHECK: %[[S:.*]] = arith.andi %[[B]], %[[SIGN]]
// CHECK: %[[R:.*]] = arith.ori %[[KEEP]], %[[S]]
// CHECK: arith.bitcast %[[R]] : i64 to f64
func.func @scalar(%a: f64, %b: f64) -> f64 {
  %c = math.copysign %a, %b : f64
  return %c : f64
}

// Vectors and float32 alike; what is left is legal for convert-math-to-libm
// (which rejects math.copysign itself in MLIR 22).
// CHECK-LABEL: func.func @vector
// CHECK: arith.constant dense<-2147483648> : vector<4xi32>
// CHECK: arith.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// LIBM-LABEL: func.func @vector
// LIBM-NOT: math.copysign
func.func @vector(%a: vector<4xf32>, %b: vector<4xf32>) -> vector<4xf32> {
  %c = math.copysign %a, %b : vector<4xf32>
  return %c : vector<4xf32>
}
