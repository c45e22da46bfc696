// Two imported modules both define op 'scale'; a use of it is ambiguous.
import ambiguous_imported_name_a;
import ambiguous_imported_name_b;

fn run(x: f32[8]) -> f32[8] {
  let y = scale(x);
  return y;
}
