package event

// kindBit is a flag bit left to the event's kind, for one property of its
// own that it keeps in the flags word rather than in a field (a reusable
// reactor.Timer: a million armed timers cost no byte more). Flags does not
// show it.
const kindBit Flags = 1 << 29

// SetKindBit sets or clears the flag bit b's kind keeps for itself. For
// kind writers.
func SetKindBit(b *Base, on bool) {
	if b == nil {
		return
	}
	if on {
		b.setFlags(kindBit)
	} else {
		b.clearFlags(kindBit)
	}
}

// KindBit reports the flag bit b's kind keeps for itself. For kind writers.
func KindBit(b *Base) bool { return b != nil && b.has(kindBit) }
