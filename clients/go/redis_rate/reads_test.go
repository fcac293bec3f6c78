package redis_rate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	upstream "github.com/go-redis/redis_rate/v10"

	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/redis_rate"
)

// TestReadsAfterABreachMatchRedisRate: what an app reads once a key is
// exhausted (a denial's Remaining and waits, AllowN with n 0, AllowAtMost
// with n 0, which redis_rate denies with the wait for one unit) is
// redis_rate's answer, side by side on the same server with a stopped
// clock, on each edition. PerSecond(8): a 125 ms interval, exact in
// redis_rate's floats.
func TestReadsAfterABreachMatchRedisRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func() *servertest.Server
	}{
		{"valkey9-module", func() *servertest.Server { return valkeyModule }},
		{"valkey9-library", func() *servertest.Server { return valkeyLibrary }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server()
			ctx := context.Background()
			if err := s.FreshAt(ctx, servertest.BaseTime); err != nil {
				t.Fatal(err)
			}
			theirs, ours := upstream.NewLimiter(s.Client), redis_rate.NewLimiter(s.Client)
			limit := redis_rate.PerSecond(8)
			up := upstream.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}
			type call struct {
				name  string
				up    func() (*upstream.Result, error)
				rl    func() (*redis_rate.Result, error)
				want  redis_rate.Result // rl's answer, and redis_rate's with its waits rounded up to a ms
				after time.Duration     // the clock's step after the call
			}
			allow := call{"Allow",
				func() (*upstream.Result, error) { return theirs.Allow(ctx, "k", up) },
				func() (*redis_rate.Result, error) { return ours.Allow(ctx, "k", limit) },
				redis_rate.Result{}, 0}
			allowN0 := call{"AllowN 0",
				func() (*upstream.Result, error) { return theirs.AllowN(ctx, "k", up, 0) },
				func() (*redis_rate.Result, error) { return ours.AllowN(ctx, "k", limit, 0) },
				redis_rate.Result{}, 0}
			atMost0 := call{"AllowAtMost 0",
				func() (*upstream.Result, error) { return theirs.AllowAtMost(ctx, "k", up, 0) },
				func() (*redis_rate.Result, error) { return ours.AllowAtMost(ctx, "k", limit, 0) },
				redis_rate.Result{}, 0}
			with := func(c call, r redis_rate.Result, after time.Duration) call {
				r.Limit = limit
				c.want, c.after = r, after
				return c
			}
			var calls []call
			for i := 1; i <= 8; i++ {
				calls = append(calls, with(allow, redis_rate.Result{Allowed: 1, Remaining: 8 - i, RetryAfter: -1, ResetAfter: time.Duration(i) * 125 * time.Millisecond}, 0))
			}
			calls = append(calls,
				with(allow, redis_rate.Result{RetryAfter: 125 * time.Millisecond, ResetAfter: time.Second}, 0),
				with(allow, redis_rate.Result{RetryAfter: 125 * time.Millisecond, ResetAfter: time.Second}, 0),
				with(allowN0, redis_rate.Result{RetryAfter: -1, ResetAfter: time.Second}, 0),
				with(atMost0, redis_rate.Result{RetryAfter: 125 * time.Millisecond, ResetAfter: time.Second}, 50*time.Millisecond),
				with(atMost0, redis_rate.Result{RetryAfter: 75 * time.Millisecond, ResetAfter: 950 * time.Millisecond}, 0),
				with(allow, redis_rate.Result{RetryAfter: 75 * time.Millisecond, ResetAfter: 950 * time.Millisecond}, 200*time.Millisecond),
				with(atMost0, redis_rate.Result{Remaining: 2, RetryAfter: -1, ResetAfter: 750 * time.Millisecond}, 0),
				with(allowN0, redis_rate.Result{Remaining: 2, RetryAfter: -1, ResetAfter: 750 * time.Millisecond}, 0),
			)
			for i, c := range calls {
				want, err := c.up()
				if err != nil {
					t.Fatal(err)
				}
				got, err := c.rl()
				if err != nil {
					t.Fatal(err)
				}
				theirsRounded := redis_rate.Result{Limit: limit, Allowed: want.Allowed, Remaining: want.Remaining, RetryAfter: -1, ResetAfter: ceilMs(want.ResetAfter)}
				if want.RetryAfter != -1 {
					theirsRounded.RetryAfter = ceilMs(want.RetryAfter)
				}
				if theirsRounded != c.want || *got != c.want {
					t.Fatalf("call %d, %s: rl %+v, redis_rate %+v, want %+v", i, c.name, *got, *want, c.want)
				}
				if c.after > 0 {
					step(t, s, c.after)
				}
			}
		})
	}
}

// TestNegativeNIsAnError: AllowN and AllowAtMost refuse a negative n,
// naming it, and write nothing, where redis_rate gives units back (its
// schedule moves back by -n intervals): the documented difference.
func TestNegativeNIsAnError(t *testing.T) {
	s := valkeyModule
	ctx := context.Background()
	if err := s.FreshAt(ctx, servertest.BaseTime); err != nil {
		t.Fatal(err)
	}
	theirs, ours := upstream.NewLimiter(s.Client), redis_rate.NewLimiter(s.Client)
	limit := redis_rate.PerSecond(8)
	up := upstream.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}
	for i := 0; i < 3; i++ {
		if _, err := theirs.Allow(ctx, "k", up); err != nil {
			t.Fatal(err)
		}
		if _, err := ours.Allow(ctx, "k", limit); err != nil {
			t.Fatal(err)
		}
	}
	before, err := s.Client.Get(ctx, "rl:rate:k").Result()
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() (*redis_rate.Result, error){
		"AllowN":      func() (*redis_rate.Result, error) { return ours.AllowN(ctx, "k", limit, -2) },
		"AllowAtMost": func() (*redis_rate.Result, error) { return ours.AllowAtMost(ctx, "k", limit, -2) },
	} {
		res, err := call()
		if err == nil || !strings.Contains(err.Error(), name+" n must not be negative (got -2)") {
			t.Fatalf("%s(-2): %+v, %v; want an error naming n", name, res, err)
		}
	}
	if after, err := s.Client.Get(ctx, "rl:rate:k").Result(); err != nil || after != before {
		t.Fatalf("rl's key moved from %s to %s (%v)", before, after, err)
	}
	res, err := ours.AllowN(ctx, "k", limit, 0)
	if err != nil || res.Remaining != 5 {
		t.Fatalf("rl after the refused calls: %+v, %v; want 5 left", res, err)
	}
	// redis_rate takes the -2 as 2 units given back.
	back, err := theirs.AllowAtMost(ctx, "k", up, -2)
	if err != nil || back.Allowed != -2 {
		t.Fatalf("redis_rate AllowAtMost(-2): %+v, %v; want Allowed -2", back, err)
	}
	if r, err := theirs.AllowN(ctx, "k", up, 0); err != nil || r.Remaining != 7 {
		t.Fatalf("redis_rate after AllowAtMost(-2): %+v, %v; want 7 left", r, err)
	}
}
