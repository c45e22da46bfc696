// A constant declared int but given a float value.
const eps: int = 1e-5;
