package waiting

import (
	"context"
	"testing"
)

func TestWithFrom(t *testing.T) {
	type w struct{ name string }
	ctx := With(context.Background(), &w{"coroutine 1"})
	ctx, cancel := context.WithCancel(ctx) // derived contexts carry it on
	defer cancel()
	if got, ok := From(ctx).(*w); !ok || got.name != "coroutine 1" {
		t.Errorf("From = %v", From(ctx))
	}
	if From(context.Background()) != nil {
		t.Error("a plain context carries a waiter")
	}
}
