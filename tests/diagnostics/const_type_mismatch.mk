// A constant declared int but given a float value.
const eps: int = 1e-5;

// CHECK:EXIT: 1
// CHECK: const_type_mismatch.mk:2:18: error: constant 'eps' is declared int but its value is compile-time float [E0213]
// CHECK:     2 | const eps: int = 1e-5;
// CHECK:       |                  ^~~~
