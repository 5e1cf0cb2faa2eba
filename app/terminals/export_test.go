package terminals

// SetTitlesOff turns title watching off (or back on) for the terminals
// created next, so a benchmark can measure what it costs.
func SetTitlesOff(off bool) { titlesOff.Store(off) }

// ParkedPumps counts the pumps whose goroutine has ended until their quiet
// process writes again (Config.ParkAfter).
func (h *Host) ParkedPumps() int { return int(h.parks.Load() - h.wakes.Load()) }

// Parks counts every time a pump parked.
func (h *Host) Parks() int { return int(h.parks.Load()) }
