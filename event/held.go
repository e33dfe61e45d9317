package event

// What a kind's Ops may say beyond eventkind.Ops, about the Starts and
// subscribers its event has, and which Base asks with the owner held.

// subscribedOps is the Ops of a kind told, with the owner held, when its
// open event gains a subscriber (true) or loses its last one (false),
// waits left out: a future is held by its owner's Close while it has
// someone to tell (see Future). A wait needs no hold: the owner's Close
// ends it (waiting.Registry, or the coroutine's context).
type subscribedOps interface{ subscribed(any bool) }

// subscriptionWatcher is eventkind.SubscriptionWatcher: the Ops of a kind
// told, with the owner held, each time its open event gains a subscriber,
// waits included.
type subscriptionWatcher interface{ Subscribed() }

// unsubscriptionWatcher is eventkind.UnsubscriptionWatcher: the Ops of a
// kind told, with the owner held, each time its open event loses a
// subscriber, waits included.
type unsubscriptionWatcher interface{ Unsubscribed() }

// subscribers reports whether b has a subscriber other than a wait.
func (b *Base) subscribers() bool {
	for _, cb := range b.cbs.all() {
		if !cb.wait {
			return true
		}
	}
	return false
}

// startHolder is eventkind.StartHolder: the Ops of a kind that holds
// Starts of its event on behalf of others (a poll, one for its started
// proxies). A Stop undoes one of the user's Starts and never those: when
// the event holds no more Starts than HeldStarts, it is a no-op, as for an
// event not started. The kind takes its own back by lowering HeldStarts
// first.
type startHolder interface{ HeldStarts() int }
