// A string that does not end on its line is one bad token, reported where it starts.
weight norm: bf16[8] = "model.norm.weight;
weight gain: bf16[8] = "model.gain.weight";
