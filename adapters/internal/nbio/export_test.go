package nbio

// RawCalls is whether this build makes raw calls at all.
const RawCalls = rawCalls
