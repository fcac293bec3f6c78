package rl_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"rl.invalid/rl"
	"rl.invalid/rl/internal/servertest"
)

const s, ms = time.Second, time.Millisecond

type edition struct {
	name    string
	server  func() *servertest.Server
	module  bool
	stopped bool // replies compare exactly; on a running clock, waits may be less
}

var editions = []edition{
	{"valkey9-module", func() *servertest.Server { return valkeyModule }, true, true},
	{"valkey9-library", func() *servertest.Server { return valkeyLibrary }, false, true},
	{"redis7-module", func() *servertest.Server { return redis7Module }, true, false},
}

// A step is one typed call and its expected reply (or error text); the
// steps of the table run in order on one keyspace and clock.
type step struct {
	name string
	call func(ctx context.Context, c *rl.Client) (any, error)
	want any
	err  string // the error's text, when the call must fail
	// moduleOnly: the library answers err instead (WAIT is the module's).
	moduleOnly bool
}

var base = servertest.BaseTime

var steps = []step{
	{"slide admits", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Slide(ctx, "k1", rl.SlideLimit{Limit: 3, Window: 10 * s})
	}, rl.Decision{Allowed: true, Remaining: 2, ResetAfter: 10 * s}, "", false},
	{"slide cost 2 takes the rest", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Slide(ctx, "k1", rl.SlideLimit{Limit: 3, Window: 10 * s, Cost: 2})
	}, rl.Decision{Allowed: true, ResetAfter: 10 * s}, "", false},
	{"slide denies", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Slide(ctx, "k1", rl.SlideLimit{Limit: 3, Window: 10 * s})
	}, rl.Decision{RetryAfter: 10 * s, ResetAfter: 10 * s}, "", false},
	{"peek slide oldest", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Peek(ctx, "k1", rl.SlideLimit{Limit: 3, Window: 10 * s}, rl.Oldest())
	}, rl.Decision{RetryAfter: 10 * s, ResetAfter: 10 * s, Oldest: 10 * s}, "", false},
	{"refund slide 2", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Refund(ctx, "k1", rl.SlideLimit{Limit: 3, Window: 10 * s, Cost: 2})
	}, rl.Settlement{Units: 2, Remaining: 1, ResetAfter: 10 * s}, "", false},
	{"buckets cost 3", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Buckets(ctx, "k2", rl.BucketsLimit{Limit: 5, Window: 60 * s, Precision: s, Cost: 3})
	}, rl.Decision{Allowed: true, Remaining: 2, ResetAfter: 60*s + 999*ms}, "", false},
	{"buckets upto grants 2 of 3", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Buckets(ctx, "k2", rl.BucketsLimit{Limit: 5, Window: 60 * s, Precision: s, Cost: 3}, rl.UpTo())
	}, rl.Decision{Allowed: true, ResetAfter: 60*s + 999*ms, Granted: 2}, "", false},
	{"throttle admits", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Throttle(ctx, "k3", rl.ThrottleLimit{MaxBurst: 2, Count: 10, Period: s})
	}, rl.Decision{Allowed: true, Remaining: 2, ResetAfter: 100 * ms}, "", false},
	{"throttle quantity 2", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Throttle(ctx, "k3", rl.ThrottleLimit{MaxBurst: 2, Count: 10, Period: s, Quantity: 2})
	}, rl.Decision{Allowed: true, ResetAfter: 300 * ms}, "", false},
	{"throttle denies", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Throttle(ctx, "k3", rl.ThrottleLimit{MaxBurst: 2, Count: 10, Period: s})
	}, rl.Decision{RetryAfter: 100 * ms, ResetAfter: 300 * ms}, "", false},
	{"throttle quantity 0 looks", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Throttle(ctx, "k3", rl.ThrottleLimit{MaxBurst: 2, Count: 10, Period: s, Quantity: rl.NoUnits})
	}, rl.Decision{Allowed: true, ResetAfter: 300 * ms}, "", false},
	{"fixed admits", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Fixed(ctx, "k4", rl.FixedLimit{Limit: 3, Window: 60 * s})
	}, rl.Decision{Allowed: true, Remaining: 2, ResetAfter: 60 * s}, "", false},
	{"charge fixed past the limit", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Charge(ctx, "k4", rl.FixedLimit{Limit: 3, Window: 60 * s}, 5)
	}, rl.Settlement{Units: 5, RetryAfter: 60 * s, ResetAfter: 60 * s}, "", false},
	{"fixed denial blocks", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Fixed(ctx, "k4", rl.FixedLimit{Limit: 3, Window: 60 * s}, rl.Block(120*s))
	}, rl.Decision{RetryAfter: 120 * s, ResetAfter: 120 * s}, "", false},
	{"unblock", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Unblock(ctx, "k4", rl.FixedLimit{})
	}, true, "", false},
	{"unblock again", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Unblock(ctx, "k4", rl.FixedLimit{})
	}, false, "", false},
	{"block by hand", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Block(ctx, "k5", rl.SlideLimit{}, 5*s)
	}, base.Add(5 * s), "", false},
	{"blocked slide", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Slide(ctx, "k5", rl.SlideLimit{Limit: 3, Window: 10 * s})
	}, rl.Decision{RetryAfter: 5 * s, ResetAfter: 5 * s}, "", false},
	{"acquire", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Acquire(ctx, "k6", rl.AcquireLimit{Limit: 1, Lease: 60 * s, ID: "w1"})
	}, rl.Decision{Allowed: true, ResetAfter: 60 * s, Lease: "w1"}, "", false},
	{"acquire denied", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Acquire(ctx, "k6", rl.AcquireLimit{Limit: 1, Lease: 60 * s, ID: "w2"})
	}, rl.Decision{RetryAfter: 60 * s, ResetAfter: 60 * s}, "", false},
	{"renew", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Renew(ctx, "k6", "w1", 120*s)
	}, rl.LeaseState{Done: true, Held: 1, RetryAfter: 120 * s, ResetAfter: 120 * s}, "", false},
	{"release", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Release(ctx, "k6", "w1")
	}, rl.LeaseState{Done: true}, "", false},
	{"release again", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Release(ctx, "k6", "w1")
	}, rl.LeaseState{}, "", false},
	{"all admits", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.All(ctx,
			rl.Clause{Key: "{a}:s", Limiter: rl.SlideLimit{Limit: 10, Window: s}},
			rl.Clause{Key: "{a}:f", Limiter: rl.FixedLimit{Limit: 5, Window: 3600 * s}},
			rl.Clause{Key: "{a}:j", Limiter: rl.AcquireLimit{Limit: 2, Lease: 60 * s, ID: "job"}})
	}, rl.AllDecision{Allowed: true, Clauses: []rl.Decision{
		{Allowed: true, Remaining: 9, ResetAfter: s},
		{Allowed: true, Remaining: 4, ResetAfter: 3600 * s},
		{Allowed: true, Remaining: 1, ResetAfter: 60 * s, Lease: "job"},
	}}, "", false},
	{"all denied by one clause", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.All(ctx,
			rl.Clause{Key: "{a}:s", Limiter: rl.SlideLimit{Limit: 1, Window: s}},
			rl.Clause{Key: "{a}:f", Limiter: rl.FixedLimit{Limit: 5, Window: 3600 * s}})
	}, rl.AllDecision{RetryAfter: s, Clauses: []rl.Decision{
		{RetryAfter: s, ResetAfter: s},
		{Allowed: true, Remaining: 3, ResetAfter: 3600 * s},
	}}, "", false},
	{"wait on a free key admits at once", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Fixed(ctx, "k8", rl.FixedLimit{Limit: 1, Window: 60 * s}, rl.Wait(100*ms))
	}, rl.Decision{Allowed: true, ResetAfter: 60 * s}, "ERR unknown option 'WAIT'", true},
	{"the server's error, the same on both editions", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Slide(ctx, "k7", rl.SlideLimit{Limit: 0, Window: 10 * s})
	}, nil, "ERR limit must be an integer from 1 to 1000000", false},
	{"all's clause error", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.All(ctx, rl.Clause{Key: "k7", Limiter: rl.FixedLimit{Limit: 5, Window: s, Cost: 6}})
	}, nil, "ERR clause 1: COST must not exceed limit", false},
	{"a duration that is not whole ms", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Slide(ctx, "k7", rl.SlideLimit{Limit: 3, Window: 1500 * time.Microsecond})
	}, nil, "rl: SLIDE window must be a positive whole number of milliseconds, not 1.5ms", false},
	{"nothing written by the refused calls", func(ctx context.Context, c *rl.Client) (any, error) {
		return c.Peek(ctx, "k7", rl.FixedLimit{Limit: 5, Window: s})
	}, rl.Decision{Allowed: true, Remaining: 4, ResetAfter: s}, "", false},
}

// TestTypedCalls runs the table on each edition: every command, its
// options, its reply parsed into Go values, its errors.
func TestTypedCalls(t *testing.T) {
	for _, e := range editions {
		t.Run(e.name, func(t *testing.T) {
			srv := e.server()
			ctx := context.Background()
			if err := srv.Client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if e.stopped {
				if err := srv.SetClock(base); err != nil {
					t.Fatal(err)
				}
			}
			c := rl.New(srv.Client)
			ed, err := c.Edition(ctx)
			if err != nil || (ed == rl.Module) != e.module {
				t.Fatalf("edition %v, %v", ed, err)
			}
			for _, st := range steps {
				got, err := st.call(ctx, c)
				wantErr := st.err
				if st.moduleOnly && e.module {
					wantErr = ""
				}
				if wantErr != "" || (st.want == nil) {
					if err == nil || err.Error() != wantErr {
						t.Fatalf("%s: error %v, want %q (reply %+v)", st.name, err, wantErr, got)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				if !same(st.want, got, e.stopped) {
					t.Fatalf("%s: got %+v, want %+v", st.name, got, st.want)
				}
			}
		})
	}
}

// same compares exactly on a stopped clock; on a running one the waits
// may have run down by up to 2 s and a block's end lies near now + its
// length.
func same(want, got any, exact bool) bool {
	if w, ok := want.(time.Time); ok && exact {
		return w.Equal(got.(time.Time))
	}
	if exact {
		return reflect.DeepEqual(want, got)
	}
	switch w := want.(type) {
	case rl.Decision:
		g := got.(rl.Decision)
		ok := near(w.RetryAfter, g.RetryAfter) && near(w.ResetAfter, g.ResetAfter) && near(w.Oldest, g.Oldest)
		w.RetryAfter, w.ResetAfter, w.Oldest = g.RetryAfter, g.ResetAfter, g.Oldest
		return ok && w == g
	case rl.Settlement:
		g := got.(rl.Settlement)
		ok := near(w.RetryAfter, g.RetryAfter) && near(w.ResetAfter, g.ResetAfter)
		w.RetryAfter, w.ResetAfter = g.RetryAfter, g.ResetAfter
		return ok && w == g
	case rl.LeaseState:
		g := got.(rl.LeaseState)
		ok := near(w.RetryAfter, g.RetryAfter) && near(w.ResetAfter, g.ResetAfter)
		w.RetryAfter, w.ResetAfter = g.RetryAfter, g.ResetAfter
		return ok && w == g
	case rl.AllDecision:
		g := got.(rl.AllDecision)
		if len(w.Clauses) != len(g.Clauses) || w.Allowed != g.Allowed || !near(w.RetryAfter, g.RetryAfter) {
			return false
		}
		for i := range w.Clauses {
			if !same(w.Clauses[i], g.Clauses[i], false) {
				return false
			}
		}
		return true
	case time.Time:
		d := got.(time.Time).Sub(time.Now().Add(w.Sub(base)))
		return d > -2*s && d < 2*s
	}
	return reflect.DeepEqual(want, got)
}

func near(want, got time.Duration) bool {
	return got <= want && got > want-2*s && (want == 0) == (got == 0)
}

// TestNotLoaded: a server with neither edition fails the first call with
// an error that says how to load one.
func TestNotLoaded(t *testing.T) {
	srv, err := servertest.Start(servertest.Options{Flavor: servertest.Redis7})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	_, err = rl.New(srv.Client).Slide(context.Background(), "k", rl.SlideLimit{Limit: 1, Window: s})
	if err == nil || !strings.Contains(err.Error(), "loadmodule") || !strings.Contains(err.Error(), "FUNCTION LOAD") {
		t.Fatalf("error %v", err)
	}
}
