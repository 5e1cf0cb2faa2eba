package terminals

// SetTitlesOff turns title watching off (or back on) for the terminals
// created next, so a benchmark can measure what it costs.
func SetTitlesOff(off bool) { titlesOff.Store(off) }
