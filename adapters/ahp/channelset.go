package ahp

import "slices"

// channelSet is a set of channel names kept the way a connection's sets
// are usually filled: a short list while it holds a few (a person watching
// a terminal or two), a map once it holds more. An idle connection keeps
// two of them, and a map of one name costs about 200 bytes where the list
// costs 16.
type channelSet struct {
	few  []string
	many map[string]struct{}
}

// fewChannels is the most the list holds before the set becomes a map.
const fewChannels = 8

func (s *channelSet) has(ch string) bool {
	if s.many != nil {
		_, ok := s.many[ch]
		return ok
	}
	return slices.Contains(s.few, ch)
}

func (s *channelSet) add(ch string) {
	switch {
	case s.has(ch):
	case s.many != nil:
		s.many[ch] = struct{}{}
	case len(s.few) < fewChannels:
		s.few = append(s.few, ch)
	default:
		s.many = make(map[string]struct{}, 2*fewChannels)
		for _, c := range s.few {
			s.many[c] = struct{}{}
		}
		s.many[ch] = struct{}{}
		s.few = nil
	}
}

func (s *channelSet) remove(ch string) {
	if s.many != nil {
		delete(s.many, ch)
		return
	}
	if i := slices.Index(s.few, ch); i >= 0 {
		s.few = slices.Delete(s.few, i, i+1)
	}
}

// names lists the set in no particular order.
func (s *channelSet) names() []string {
	if s.many == nil {
		return slices.Clone(s.few)
	}
	out := make([]string, 0, len(s.many))
	for ch := range s.many {
		out = append(out, ch)
	}
	return out
}
