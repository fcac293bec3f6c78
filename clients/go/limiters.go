package rl

import (
	"fmt"
	"time"
)

// Limiter is one of rl's limiters with its parameters: what RL.PEEK,
// RL.REFUND, RL.CHARGE, RL.BLOCK and RL.ALL take after the limiter's name.
type Limiter interface {
	// Name is the limiter's name in those commands: SLIDE, BUCKETS, ...
	Name() string
	// args are the parameters after the key; cost false leaves out the
	// request's units (RL.CHARGE names its own).
	args(cost bool) ([]any, error)
}

// SlideLimit is RL.SLIDE's exact sliding-window log: at most Limit units
// in any Window.
type SlideLimit struct {
	Limit  int64
	Window time.Duration
	Cost   int64 // units of this request; 0 means 1
}

// BucketsLimit is RL.BUCKETS's sliding window of counters. Precision 0
// lets the server choose (Window / 60).
type BucketsLimit struct {
	Limit     int64
	Window    time.Duration
	Precision time.Duration
	Cost      int64
}

// ThrottleLimit is RL.THROTTLE's GCRA: Count per Period, bursts of
// MaxBurst + 1.
type ThrottleLimit struct {
	MaxBurst int64
	Count    int64
	Period   time.Duration
	Quantity int64 // units of this request; 0 means 1, NoUnits sends 0
}

// NoUnits as a ThrottleLimit's Quantity sends quantity 0: RL.THROTTLE then
// only looks, and replies the current remaining and reset (RL.PEEK
// THROTTLE answers for a request of one unit instead).
const NoUnits int64 = -1

// FixedLimit is RL.FIXED's fixed window: one counter per Window.
type FixedLimit struct {
	Limit  int64
	Window time.Duration
	Cost   int64
}

// AcquireLimit is RL.ACQUIRE's concurrency limit: at most Limit leases of
// Lease each. ID, if set, names the lease.
type AcquireLimit struct {
	Limit int64
	Lease time.Duration
	ID    string
}

func (SlideLimit) Name() string    { return "SLIDE" }
func (BucketsLimit) Name() string  { return "BUCKETS" }
func (ThrottleLimit) Name() string { return "THROTTLE" }
func (FixedLimit) Name() string    { return "FIXED" }
func (AcquireLimit) Name() string  { return "ACQUIRE" }

// ms is a duration argument in whole milliseconds, as rl takes them.
func ms(name, arg string, d time.Duration) (int64, error) {
	if d <= 0 || d%time.Millisecond != 0 {
		return 0, fmt.Errorf("rl: %s %s must be a positive whole number of milliseconds, not %s", name, arg, d)
	}
	return d.Milliseconds(), nil
}

func withCost(args []any, cost bool, n int64) []any {
	if cost && n != 0 {
		args = append(args, "COST", n)
	}
	return args
}

func (l SlideLimit) args(cost bool) ([]any, error) {
	w, err := ms("SLIDE", "window", l.Window)
	if err != nil {
		return nil, err
	}
	return withCost([]any{l.Limit, w}, cost, l.Cost), nil
}

func (l BucketsLimit) args(cost bool) ([]any, error) {
	w, err := ms("BUCKETS", "window", l.Window)
	if err != nil {
		return nil, err
	}
	args := []any{l.Limit, w}
	if l.Precision != 0 {
		p, err := ms("BUCKETS", "PRECISION", l.Precision)
		if err != nil {
			return nil, err
		}
		args = append(args, "PRECISION", p)
	}
	return withCost(args, cost, l.Cost), nil
}

func (l ThrottleLimit) args(cost bool) ([]any, error) {
	p, err := ms("THROTTLE", "period", l.Period)
	if err != nil {
		return nil, err
	}
	args := []any{l.MaxBurst, l.Count, p}
	switch {
	case !cost || l.Quantity == 0:
	case l.Quantity == NoUnits:
		args = append(args, 0)
	default:
		args = append(args, l.Quantity)
	}
	return args, nil
}

func (l FixedLimit) args(cost bool) ([]any, error) {
	w, err := ms("FIXED", "window", l.Window)
	if err != nil {
		return nil, err
	}
	return withCost([]any{l.Limit, w}, cost, l.Cost), nil
}

func (l AcquireLimit) args(bool) ([]any, error) {
	d, err := ms("ACQUIRE", "lease_ms", l.Lease)
	if err != nil {
		return nil, err
	}
	args := []any{l.Limit, d}
	if l.ID != "" {
		args = append(args, "ID", l.ID)
	}
	return args, nil
}

// Option is an option of a limiter's own command.
type Option func(*options) error

type options struct{ tail []any }

// Block makes a denial block the key for d (BLOCK ms).
func Block(d time.Duration) Option {
	return func(o *options) error {
		v, err := ms("BLOCK", "ms", d)
		o.tail = append(o.tail, "BLOCK", v)
		return err
	}
}

// UpTo admits what fits of the request's units (UPTO); the Decision's
// Granted says how many.
func UpTo() Option {
	return func(o *options) error {
		o.tail = append(o.tail, "UPTO")
		return nil
	}
}

// Wait waits up to d for admission (WAIT timeout_ms; the module only).
func Wait(d time.Duration) Option {
	return func(o *options) error {
		v, err := ms("WAIT", "timeout_ms", d)
		o.tail = append(o.tail, "WAIT", v)
		return err
	}
}

// Oldest adds the ms until the oldest counted unit leaves (RL.PEEK
// SLIDE|BUCKETS ... OLDEST) as the Decision's Oldest.
func Oldest() Option {
	return func(o *options) error {
		o.tail = append(o.tail, "OLDEST")
		return nil
	}
}

func tail(opts []Option) ([]any, error) {
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	return o.tail, nil
}
