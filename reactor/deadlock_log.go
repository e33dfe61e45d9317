package reactor

import (
	"log/slog"
	"strconv"
	"strings"
)

// LogValue makes the report a structured log/slog value: "waiters", how
// many coroutines wait, then one group per waiter, by position ("0",
// "1", ...), holding "coroutine" (its Info), "where" (the line it waits
// at, when known), "events" (the Info of each event it waits on) and
// "kinds" (each event's kind, the first word of its Info).
func (e *DeadlockError) LogValue() slog.Value {
	if e == nil {
		return slog.GroupValue()
	}
	attrs := make([]slog.Attr, 0, 1+len(e.Waiters))
	attrs = append(attrs, slog.Int("waiters", len(e.Waiters)))
	for i, w := range e.Waiters {
		kinds := make([]string, len(w.Events))
		for j, info := range w.Events {
			kinds[j] = firstWord(info)
		}
		attrs = append(attrs, slog.Group(strconv.Itoa(i),
			slog.String("coroutine", w.Coroutine),
			slog.String("where", w.Where),
			slog.Any("events", w.Events),
			slog.Any("kinds", kinds),
		))
	}
	return slog.GroupValue(attrs...)
}

// firstWord is an Info line's kind: up to the first parenthesis or space.
func firstWord(info string) string {
	if i := strings.IndexAny(info, "( "); i >= 0 {
		return info[:i]
	}
	return info
}
