package worker

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff is an exponential backoff with full jitter.
type backoff struct {
	base, max time.Duration
	attempt   int
}

func newBackoff() *backoff { return &backoff{base: 100 * time.Millisecond, max: 10 * time.Second} }

func (b *backoff) reset() { b.attempt = 0 }

// next returns the next delay: random in [d/2, d] with d = base·2^attempt,
// capped at max.
func (b *backoff) next() time.Duration {
	d := b.base << min(b.attempt, 20)
	if d <= 0 || d > b.max {
		d = b.max
	}
	b.attempt++
	half := d / 2
	return half + rand.N(half+1)
}

// wait sleeps the next delay; it returns false when ctx ends first.
func (b *backoff) wait(ctx context.Context) bool {
	t := time.NewTimer(b.next())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
