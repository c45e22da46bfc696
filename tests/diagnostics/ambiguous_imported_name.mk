// Two imported modules both define op 'scale'; a use of it is ambiguous.
import ambiguous_imported_name_a;
import ambiguous_imported_name_b;

fn run(x: f32[8]) -> f32[8] {
  let y = scale(x);
  return y;
}

// CHECK:EXIT: 1
// CHECK: ambiguous_imported_name.mk:6:11: error: 'scale' is ambiguous: both 'ambiguous_imported_name_a' and 'ambiguous_imported_name_b' define it [E0109]
// CHECK:     6 |   let y = scale(x);
// CHECK:       |           ^~~~~
// CHECK: modules/ambiguous_imported_name_a.mk:2:4: note: one definition is here
// CHECK:     2 | op scale<N>(x: f32[N]) -> y: f32[N]
// CHECK:       |    ^~~~~
// CHECK: modules/ambiguous_imported_name_b.mk:2:4: note: one definition is here
// CHECK:     2 | op scale<N>(x: f32[N]) -> y: f32[N]
// CHECK:       |    ^~~~~
