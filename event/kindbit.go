package event

// kindBit is a flag bit left to the event's kind, for one property of its
// own that it keeps in the flags word rather than in a field (a
// reactor.Timer fired since its last Start: a million armed timers cost no
// byte more). Flags does not show it.
const kindBit Flags = 1 << 29

// setKindBit sets or clears the flag bit b's kind keeps for itself
// (eventkind.SetKindBit).
func setKindBit(b *Base, on bool) {
	if b == nil {
		return
	}
	if on {
		b.setFlags(kindBit)
	} else {
		b.clearFlags(kindBit)
	}
}

// kindBitOf reports the flag bit b's kind keeps for itself
// (eventkind.KindBit).
func kindBitOf(b *Base) bool { return b != nil && b.has(kindBit) }
