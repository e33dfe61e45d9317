package event_test

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomInput returns a fuzz input of up to max bytes, its values small
// enough that the callbacks' ids and the operations mix well.
func randomInput(rng *rand.Rand, max int) []byte {
	b := make([]byte, rng.IntN(max+1))
	for i := range b {
		b[i] = byte(rng.IntN(64))
	}
	return b
}

// playRandom runs play on thousands of random inputs.
func playRandom(t *testing.T, seed uint64, play func(*testing.T, []byte)) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(seed, 0x7ec))
	for i := 0; i < n && !t.Failed(); i++ {
		data := randomInput(rng, 120)
		play(t, data)
		if t.Failed() {
			t.Logf("input %d: %v", i, data)
		}
	}
}

// go test runs FuzzVector on its seed corpus only: this runs the same
// checks on thousands of random inputs, so that every run of the tests
// plays the vector through many add/remove/notify sequences, inline (one
// subscriber) and spilled, and back.
func TestVectorAttackRandomInputs(t *testing.T) {
	playRandom(t, 1, runVectorFuzz)
}

// closeRun is fuzzRun with more that a callback may do: close the event
// inside the pass (the rest of the pass goes on, then every subscriber is
// let go of), unsubscribe everyone else (a spill emptied under the running
// pass), and subscribe everyone.
type closeRun struct {
	*fuzzRun
}

func (r closeRun) onCall(k int) {
	if len(r.data) == 0 || r.data[0]%12 < 8 {
		if len(r.data) > 0 {
			r.data[0] %= 12 // the same operation for fuzzRun's op%8
		}
		r.fuzzRun.onCall(k)
		return
	}
	r.calls++
	if err := r.model.call(k); err != nil {
		r.t.Error(err)
	}
	op, _ := r.next()
	arg, _ := r.next()
	j := int(arg) % fuzzK
	switch op % 12 {
	case 8: // close inside the pass
		if err := r.ev.Close(); err != nil {
			r.t.Errorf("Close from callback %d: %v", k, err)
		}
		r.closed = true
	case 9: // everyone else goes
		for x := range fuzzK {
			if x != k && r.model.find(x) >= 0 {
				r.del(x)
			}
		}
	case 10: // everyone comes (spill from inline, under the pass)
		for x := range fuzzK {
			r.add(x)
		}
	case 11: // itself goes, then one comes: 1 -> 0 -> 1 with one subscriber
		if r.model.find(k) >= 0 {
			r.del(k)
		}
		r.add(j)
	}
}

func runCloseAttack(t *testing.T, data []byte) {
	data = slices.Clone(data) // closeRun.onCall rewrites operations in place
	playVector(t, data, func(r *fuzzRun, k int) { closeRun{r}.onCall(k) })
}

// TestVectorAttackCloseInPass plays random inputs where callbacks also
// close the event during its pass, empty it but themselves, or fill it.
func TestVectorAttackCloseInPass(t *testing.T) {
	playRandom(t, 2, runCloseAttack)
}

func FuzzVectorCloseInPass(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 4, 0, 8, 0})                    // two subscribers, the first closes
	f.Add([]byte{0, 0, 4, 0, 10, 0, 0, 0, 11, 3, 8, 0})      // one fills, one swaps, one closes
	f.Add([]byte{0, 0, 0, 1, 0, 2, 4, 0, 9, 0, 11, 1, 8, 0}) // empty but one, then 1 -> 0 -> 1
	f.Fuzz(runCloseAttack)
}
