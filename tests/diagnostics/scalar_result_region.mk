// A scalar result is stored whole, without a region.
op total<N>(x: f32[N]) -> s: f32
  tasks t in 1
{
  store s[0] = sum(load x[0 : +N]);
}

// CHECK:EXIT: 1
// CHECK: scalar_result_region.mk:5:9: error: 's' is a scalar; store it whole: `store s = ...;` [E0532]
// CHECK:     5 |   store s[0] = sum(load x[0 : +N]);
// CHECK:       |         ^~~~
