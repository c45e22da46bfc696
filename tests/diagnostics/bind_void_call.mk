op clear<N>(c: inout f32[N]) -> done: i32
  tasks t in 1
{
  store c[0 : +N] = load c[0 : +N] * 0.0;
  store done = 1;
}

state cache: f32[8];

fn reset() {
  clear(cache);
}

// 'reset' has no results to bind.
fn run() {
  let r = reset();
}

// CHECK:EXIT: 1
// CHECK: bind_void_call.mk:16:11: error: 'reset' has no results to bind [E0564]
// CHECK:    16 |   let r = reset();
// CHECK:       |           ^~~~~~~
