// A misspelled constant name gets a did-you-mean hint.
const hidden = 64;
const doubled = hiden * 2;

// CHECK:EXIT: 1
// CHECK: unknown_name_did_you_mean.mk:3:17: error: unknown name 'hiden'; did you mean 'hidden'? [E0108]
// CHECK:     3 | const doubled = hiden * 2;
// CHECK:       |                 ^~~~~
