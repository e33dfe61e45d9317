package event

import "strings"

// KindOf names ev's kind as its reports do: the first word of its Info
// ("Timer", "Poll", "Coroutine"), or "" for a nil event.
func KindOf(ev Event) string {
	if isNil(ev) {
		return ""
	}
	return kindOfInfo(ev.Info())
}

// kindOfInfo is the first word of an Info line: up to the first
// parenthesis or space.
func kindOfInfo(info string) string {
	if i := strings.IndexAny(info, "( "); i >= 0 {
		return info[:i]
	}
	return info
}
