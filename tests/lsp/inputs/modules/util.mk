// A module found through -I.

/// Two, as a module constant.
const two = 2;

/// Adds one, elementwise.
op add_one<N>(x: f32[N]) -> y: f32[N]
    tasks t in 1 {
    store y[0 : +N] = load x[0 : +N] + 1.0;
}
