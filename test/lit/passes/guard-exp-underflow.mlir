// RUN: tinymlir-opt %s --tinymlir-guard-exp-underflow | FileCheck %s

// exp(x) for x below the underflow threshold is selected as 0 (f32: -104,
// f64: -745.2), and exp gets a harmless argument there.
// CHECK-LABEL: func.func @exp32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[LIMIT:.*]] = arith.constant -1.040000e+02 : f32
// CHECK: %[[UNDER:.*]] = arith.cmpf olt, %arg0, %[[LIMIT]] : f32
// CHECK: %[[SAFE:.*]] = arith.select %[[UNDER]], %[[ZERO]], %arg0 : f32
// CHECK: %[[E:.*]] = math.exp %[[SAFE]] fastmath<afn> : f32
// CHECK: %[[R:.*]] = arith.select %[[UNDER]], %[[ZERO]], %[[E]] : f32
// CHECK: return %[[R]]
func.func @exp32(%x: f32) -> f32 {
  %y = math.exp %x fastmath<afn> : f32
  return %y : f32
}

// CHECK-LABEL: func.func @exp64
// CHECK: arith.constant -7.452000e+02 : f64
// CHECK: arith.cmpf olt
func.func @exp64(%x: f64) -> f64 {
  %y = math.exp %x : f64
  return %y : f64
}

// Other types are left alone.
// CHECK-LABEL: func.func @exp16
// CHECK-NEXT: math.exp %arg0 : f16
// CHECK-NEXT: return
func.func @exp16(%x: f16) -> f16 {
  %y = math.exp %x : f16
  return %y : f16
}
