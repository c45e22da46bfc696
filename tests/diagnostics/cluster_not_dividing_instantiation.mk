// With N = 12 and R = 4 the op has 3 tasks, which clusters of 2 do not divide.
@cluster(2)
op fill<N, R = 4>(x: f32[N]) -> y: f32[N]
  tasks t in N / R
{
  store y[t * R : +R] = load x[t * R : +R];
}

fn run(x: f32[12]) -> f32[12] {
  let y = fill(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: cluster_not_dividing_instantiation.mk:2:1: error: cluster size 2 does not divide the 3 tasks of 'fill' [E0607]
// CHECK:     2 | @cluster(2)
// CHECK:       | ^~~~~~~~~~~
// CHECK: cluster_not_dividing_instantiation.mk:10:11: note: in 'fill' with N = 12, R = 4, called from here
// CHECK:    10 |   let y = fill(x);
// CHECK:       |           ^~~~~~~
