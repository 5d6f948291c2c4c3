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

// powf(x, -0.5) (layer normalization's (var + eps) ** -0.5): no rsqrt call,
// which no C library defines, but 1 / sqrt(x + 0) (pow(-0, -0.5) is +inf),
// and 0 where x is -inf (pow's, where the quotient is nan).
// CHECK-LABEL: func.func @inverse_root
// CHECK-NOT: math.powf
// CHECK-NOT: math.rsqrt
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf64>
// CHECK: %[[X:.*]] = arith.addf %arg0, %[[ZERO]]
// CHECK: %[[ROOT:.*]] = math.sqrt %[[X]]
// CHECK: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : vector<4xf64>
// CHECK: %[[INVERSE:.*]] = arith.divf %[[ONE]], %[[ROOT]]
// CHECK: %[[MINUS_INF:.*]] = arith.constant dense<0xFFF0000000000000>
// CHECK: %[[IS:.*]] = arith.cmpf oeq, %[[X]], %[[MINUS_INF]]
// CHECK: arith.select %[[IS]], %{{.*}}, %[[INVERSE]]
func.func @inverse_root(%x: vector<4xf64>) -> vector<4xf64> {
  %e = arith.constant dense<-0.5> : vector<4xf64>
  %y = math.powf %x, %e : vector<4xf64>
  return %y : vector<4xf64>
}
