package limiterstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ulule/limiter/v3"
	ululeredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"rl.invalid/rl/limiterstore"
)

// TestReadsAfterABreachMatchUlule: ulule's own Redis store and the
// fixed-window store side by side on the same server, each call on both:
// Get, Increment and Peek answer the same Limit, Remaining and Reached
// before, at and past the limit (Peek's Reached true once a hit was
// refused), and the same Reset (X-RateLimit-Reset) to the second. The
// sliding store, past the limit, answers as documented: Reached false from
// Peek (it records no refused hit), where ulule's fixed window says true.
func TestReadsAfterABreachMatchUlule(t *testing.T) {
	for _, d := range deployments {
		if d.sliding {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			client := d.server().Client
			ctx := context.Background()
			if err := client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			theirs, err := ululeredis.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: "ulule"})
			if err != nil {
				t.Fatal(err)
			}
			ours, err := limiterstore.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: "rl:ulule"})
			if err != nil {
				t.Fatal(err)
			}
			sliding, err := limiterstore.NewSlidingStore(client, limiter.StoreOptions{Prefix: "rl:sliding"}, 0)
			if err != nil {
				t.Fatal(err)
			}
			rate := limiter.Rate{Limit: 3, Period: time.Minute}
			type call struct {
				name string
				do   func(limiter.Store) (limiter.Context, error)
			}
			get := call{"Get", func(s limiter.Store) (limiter.Context, error) { return s.Get(ctx, "k", rate) }}
			peek := call{"Peek", func(s limiter.Store) (limiter.Context, error) { return s.Peek(ctx, "k", rate) }}
			incr := func(n int64) call {
				return call{"Increment", func(s limiter.Store) (limiter.Context, error) { return s.Increment(ctx, "k", n, rate) }}
			}
			reset := call{"Reset", func(s limiter.Store) (limiter.Context, error) { return s.Reset(ctx, "k", rate) }}
			seq := []call{peek, get, get, peek, get, peek, get, peek, get, incr(2), peek, incr(0), reset, peek, incr(4), peek, get}
			for i, c := range seq {
				want, err := c.do(theirs)
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.do(ours)
				if err != nil {
					t.Fatal(err)
				}
				if got.Limit != want.Limit || got.Remaining != want.Remaining || got.Reached != want.Reached {
					t.Fatalf("call %d %s: rl %+v, ulule %+v", i, c.name, got, want)
				}
				if d := got.Reset - want.Reset; d < -1 || d > 1 {
					t.Fatalf("call %d %s: Reset rl %d, ulule %d", i, c.name, got.Reset, want.Reset)
				}
			}
			// The sliding store past the limit: Get refuses, Peek cannot tell
			// the refusal from a full window.
			for i := 0; i < 4; i++ {
				if _, err := sliding.Get(ctx, "k", rate); err != nil {
					t.Fatal(err)
				}
			}
			if c, err := sliding.Get(ctx, "k", rate); err != nil || !c.Reached || c.Remaining != 0 {
				t.Fatalf("sliding Get past the limit: %+v, %v", c, err)
			}
			if c, err := sliding.Peek(ctx, "k", rate); err != nil || c.Reached || c.Remaining != 0 {
				t.Fatalf("sliding Peek past the limit: %+v, %v; want Reached false, Remaining 0 (documented)", c, err)
			}
		})
	}
}
