// Package redis_rate is go-redis/redis_rate v10's API over rl's GCRA
// (RL.THROTTLE, or rl_throttle of the function library): switching is
// changing the import path from github.com/go-redis/redis_rate/v10 to
// rl.invalid/rl/redis_rate. Each call is one command.
//
// The keys are "rl:rate:" + key, not redis_rate's "rate:" + key:
// redis_rate stores its schedule as float seconds, which RL.THROTTLE
// refuses, so the two never read each other's keys; and under "rl:" the
// README's ACL recipe (~rl:*) covers them.
package redis_rate //nolint:revive // the name redis_rate's users import

import (
	"context"
	"fmt"
	"time"

	"rl.invalid/rl"
)

const redisPrefix = "rl:rate:"

// Limit is redis_rate's: Rate events per Period, bursts of up to Burst.
type Limit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

func (l Limit) String() string {
	return fmt.Sprintf("%d req/%s (burst %d)", l.Rate, periodName(l.Period), l.Burst)
}

// IsZero reports whether l is the zero Limit.
func (l Limit) IsZero() bool { return l == Limit{} }

func periodName(d time.Duration) string {
	switch d {
	case time.Second:
		return "s"
	case time.Minute:
		return "m"
	case time.Hour:
		return "h"
	}
	return d.String()
}

// PerSecond is rate per second with bursts of rate.
func PerSecond(rate int) Limit { return Limit{Rate: rate, Period: time.Second, Burst: rate} }

// PerMinute is rate per minute with bursts of rate.
func PerMinute(rate int) Limit { return Limit{Rate: rate, Period: time.Minute, Burst: rate} }

// PerHour is rate per hour with bursts of rate.
func PerHour(rate int) Limit { return Limit{Rate: rate, Period: time.Hour, Burst: rate} }

// Result is redis_rate's: Allowed events of this call, Remaining that
// would be admitted now, RetryAfter -1 unless denied, ResetAfter until
// the key is idle.
type Result struct {
	Limit      Limit
	Allowed    int
	Remaining  int
	RetryAfter time.Duration
	ResetAfter time.Duration
}

// Limiter controls how frequently events are allowed to happen.
type Limiter struct {
	rl *rl.Client
}

// NewLimiter returns a Limiter over a go-redis v9 client
// (*redis.Client, *redis.ClusterClient, *redis.Ring, redis.UniversalClient).
// The server must have rl's module or function library; which one is
// found at the first call.
func NewLimiter(rdb rl.Processor) *Limiter {
	return &Limiter{rl: rl.New(rdb)}
}

// Allow is AllowN(ctx, key, limit, 1).
func (l Limiter) Allow(ctx context.Context, key string, limit Limit) (*Result, error) {
	return l.AllowN(ctx, key, limit, 1)
}

// AllowN reports whether n events may happen now, and records them if so.
func (l Limiter) AllowN(ctx context.Context, key string, limit Limit, n int) (*Result, error) {
	if n < 0 {
		return nil, fmt.Errorf("redis_rate: AllowN n must not be negative (got %d)", n)
	}
	t, err := throttle(limit)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > limit.Burst {
		// Never admitted (or nothing asked): RL.THROTTLE refuses a quantity
		// above the burst, so look with quantity 0 and answer as redis_rate.
		d, err := l.peek(ctx, key, t)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return &Result{Limit: limit, Remaining: remaining(limit, d), RetryAfter: -1, ResetAfter: d.ResetAfter}, nil
		}
		interval := time.Duration(t.interval()) * time.Microsecond
		return &Result{Limit: limit, RetryAfter: d.ResetAfter + time.Duration(n-limit.Burst)*interval, ResetAfter: d.ResetAfter}, nil
	}
	t.Quantity = int64(n)
	d, err := l.rl.Throttle(ctx, redisPrefix+key, t.ThrottleLimit)
	if err != nil {
		return nil, err
	}
	return result(limit, d, n), nil
}

// AllowAtMost admits what fits of n events now, at least one, and reports
// how many in Allowed. n 0 only looks, as in redis_rate: with no unit
// left it is denied and RetryAfter is the wait for one.
func (l Limiter) AllowAtMost(ctx context.Context, key string, limit Limit, n int) (*Result, error) {
	if n < 0 {
		return nil, fmt.Errorf("redis_rate: AllowAtMost n must not be negative (got %d)", n)
	}
	t, err := throttle(limit)
	if err != nil {
		return nil, err
	}
	if limit.Burst <= 0 {
		d, err := l.peek(ctx, key, t)
		if err != nil {
			return nil, err
		}
		interval := time.Duration(t.interval()) * time.Microsecond
		return &Result{Limit: limit, RetryAfter: d.ResetAfter + interval, ResetAfter: d.ResetAfter}, nil
	}
	if n == 0 {
		return l.look(ctx, key, limit, t)
	}
	t.Quantity = int64(n)
	d, err := l.rl.Throttle(ctx, redisPrefix+key, t.ThrottleLimit, rl.UpTo())
	if err != nil {
		return nil, err
	}
	return result(limit, d, int(d.Granted)), nil
}

// look is AllowAtMost with n 0. redis_rate answers it as a request that
// needs one whole unit and takes none: the units left with RetryAfter -1,
// or, with none left, a denial whose RetryAfter is the wait for one. The
// units left and the reset come from a quantity-0 RL.THROTTLE; the wait
// for one unit, which that reply cannot give to the µs, from RL.PEEK
// THROTTLE of one unit, sent only when none is left.
func (l Limiter) look(ctx context.Context, key string, limit Limit, t gcra) (*Result, error) {
	d, err := l.peek(ctx, key, t)
	if err != nil {
		return nil, err
	}
	if d.Remaining > 0 {
		return &Result{Limit: limit, Remaining: int(d.Remaining), RetryAfter: -1, ResetAfter: d.ResetAfter}, nil
	}
	t.Quantity = 1
	one, err := l.rl.Peek(ctx, redisPrefix+key, t.ThrottleLimit)
	if err != nil {
		return nil, err
	}
	if one.Allowed {
		// A unit came back between the two reads (a running clock).
		return &Result{Limit: limit, Remaining: int(one.Remaining) + 1, RetryAfter: -1, ResetAfter: d.ResetAfter}, nil
	}
	return &Result{Limit: limit, RetryAfter: one.RetryAfter, ResetAfter: one.ResetAfter}, nil
}

// Reset deletes key's state: its limit starts afresh.
func (l *Limiter) Reset(ctx context.Context, key string) error {
	return l.rl.Del(ctx, redisPrefix+key)
}

// peek sends RL.THROTTLE with quantity 0, which records nothing.
func (l Limiter) peek(ctx context.Context, key string, t gcra) (rl.Decision, error) {
	t.Quantity = rl.NoUnits
	return l.rl.Throttle(ctx, redisPrefix+key, t.ThrottleLimit)
}

func result(limit Limit, d rl.Decision, granted int) *Result {
	if !d.Allowed {
		return &Result{Limit: limit, RetryAfter: d.RetryAfter, ResetAfter: d.ResetAfter}
	}
	return &Result{Limit: limit, Allowed: granted, Remaining: int(d.Remaining), RetryAfter: -1, ResetAfter: d.ResetAfter}
}

func remaining(limit Limit, d rl.Decision) int {
	if limit.Burst <= 0 {
		return 0
	}
	return int(d.Remaining)
}

// gcra is a Limit as RL.THROTTLE's arguments: redis_rate admits while the
// schedule is at most Burst intervals ahead, RL.THROTTLE while it is at
// most max_burst + 1 ahead.
type gcra struct{ rl.ThrottleLimit }

func throttle(limit Limit) (gcra, error) {
	if limit.Rate <= 0 {
		return gcra{}, fmt.Errorf("redis_rate: Limit.Rate must be positive (got %d)", limit.Rate)
	}
	if limit.Period <= 0 || limit.Period%time.Millisecond != 0 {
		return gcra{}, fmt.Errorf("redis_rate: Limit.Period must be a positive whole number of milliseconds (got %s)", limit.Period)
	}
	burst := int64(limit.Burst) - 1
	if burst < 0 {
		burst = 0
	}
	return gcra{rl.ThrottleLimit{MaxBurst: burst, Count: int64(limit.Rate), Period: limit.Period}}, nil
}

// interval is RL.THROTTLE's emission interval in µs, rounded up as it
// rounds it.
func (t gcra) interval() int64 {
	us := t.Period.Microseconds()
	return (us + t.Count - 1) / t.Count
}
