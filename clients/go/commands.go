package rl

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Decision is a limiter's reply: RL.SLIDE, RL.BUCKETS, RL.THROTTLE,
// RL.FIXED, RL.PEEK, RL.ACQUIRE and each RL.ALL clause.
type Decision struct {
	Allowed    bool
	Remaining  int64
	RetryAfter time.Duration // 0 when admitted (unless shadow mode admitted it)
	ResetAfter time.Duration
	// Granted is the units an UPTO request was granted (0 when denied);
	// 0 without UpTo.
	Granted int64
	// Oldest is the wait RL.PEEK ... OLDEST adds; 0 without Oldest.
	Oldest time.Duration
	// Lease is the lease id an admitted RL.ACQUIRE (or ACQUIRE clause)
	// took; "" otherwise.
	Lease string
}

// Settlement is RL.REFUND's and RL.CHARGE's reply: the units given back
// or charged, then what a one-unit peek would answer after it.
type Settlement struct {
	Units      int64
	Remaining  int64
	RetryAfter time.Duration
	ResetAfter time.Duration
}

// LeaseState is RL.RELEASE's and RL.RENEW's reply.
type LeaseState struct {
	Done       bool  // the lease was held, and is now released or renewed
	Held       int64 // leases held after the call
	RetryAfter time.Duration
	ResetAfter time.Duration
}

// AllDecision is RL.ALL's reply: one Decision per clause, in order.
type AllDecision struct {
	Allowed    bool
	RetryAfter time.Duration
	Clauses    []Decision
}

// Clause is one RL.ALL clause: a limiter on its key.
type Clause struct {
	Key     string
	Limiter Limiter
}

// Slide sends RL.SLIDE.
func (c *Client) Slide(ctx context.Context, key string, l SlideLimit, opts ...Option) (Decision, error) {
	return c.decide(ctx, key, l, opts)
}

// Buckets sends RL.BUCKETS.
func (c *Client) Buckets(ctx context.Context, key string, l BucketsLimit, opts ...Option) (Decision, error) {
	return c.decide(ctx, key, l, opts)
}

// Throttle sends RL.THROTTLE.
func (c *Client) Throttle(ctx context.Context, key string, l ThrottleLimit, opts ...Option) (Decision, error) {
	return c.decide(ctx, key, l, opts)
}

// Fixed sends RL.FIXED.
func (c *Client) Fixed(ctx context.Context, key string, l FixedLimit, opts ...Option) (Decision, error) {
	return c.decide(ctx, key, l, opts)
}

// Acquire sends RL.ACQUIRE: the Decision's Lease is the id taken.
func (c *Client) Acquire(ctx context.Context, key string, l AcquireLimit, opts ...Option) (Decision, error) {
	return c.decide(ctx, key, l, opts)
}

func (c *Client) decide(ctx context.Context, key string, l Limiter, opts []Option) (Decision, error) {
	args, err := l.args(true)
	if err != nil {
		return Decision{}, err
	}
	more, err := tail(opts)
	if err != nil {
		return Decision{}, err
	}
	cmd, err := c.do(ctx, l.Name(), "", key, append(args, more...))
	if err != nil {
		return Decision{}, err
	}
	return decision(cmd.Val(), l.Name() == "ACQUIRE", hasToken(more, "UPTO"), false)
}

// Peek sends RL.PEEK: what l would answer, recording nothing. Oldest is
// its one option.
func (c *Client) Peek(ctx context.Context, key string, l Limiter, opts ...Option) (Decision, error) {
	args, err := l.args(true)
	if err != nil {
		return Decision{}, err
	}
	more, err := tail(opts)
	if err != nil {
		return Decision{}, err
	}
	cmd, err := c.do(ctx, "PEEK", l.Name(), key, append(args, more...))
	if err != nil {
		return Decision{}, err
	}
	return decision(cmd.Val(), false, false, hasToken(more, "OLDEST"))
}

// Refund sends RL.REFUND: gives back l's Cost (THROTTLE: Quantity) units.
func (c *Client) Refund(ctx context.Context, key string, l Limiter) (Settlement, error) {
	args, err := l.args(true)
	if err != nil {
		return Settlement{}, err
	}
	cmd, err := c.do(ctx, "REFUND", l.Name(), key, args)
	if err != nil {
		return Settlement{}, err
	}
	return settlement(cmd.Val())
}

// Charge sends RL.CHARGE: records cost units on l whether or not they fit
// (l's own Cost or Quantity is not sent).
func (c *Client) Charge(ctx context.Context, key string, l Limiter, cost int64) (Settlement, error) {
	args, err := l.args(false)
	if err != nil {
		return Settlement{}, err
	}
	cmd, err := c.do(ctx, "CHARGE", l.Name(), key, append(args, "COST", cost))
	if err != nil {
		return Settlement{}, err
	}
	return settlement(cmd.Val())
}

// Release sends RL.RELEASE.
func (c *Client) Release(ctx context.Context, key, lease string) (LeaseState, error) {
	cmd, err := c.do(ctx, "RELEASE", "", key, []any{lease})
	if err != nil {
		return LeaseState{}, err
	}
	return leaseState(cmd.Val())
}

// Renew sends RL.RENEW: the lease then lasts d from now.
func (c *Client) Renew(ctx context.Context, key, lease string, d time.Duration) (LeaseState, error) {
	v, err := ms("RENEW", "lease_ms", d)
	if err != nil {
		return LeaseState{}, err
	}
	cmd, err := c.do(ctx, "RENEW", "", key, []any{lease, v})
	if err != nil {
		return LeaseState{}, err
	}
	return leaseState(cmd.Val())
}

// Block sends RL.BLOCK: l's key (read as l reads it) is denied for d. It
// returns the block's end.
func (c *Client) Block(ctx context.Context, key string, l Limiter, d time.Duration) (time.Time, error) {
	v, err := ms("BLOCK", "ms", d)
	if err != nil {
		return time.Time{}, err
	}
	cmd, err := c.do(ctx, "BLOCK", l.Name(), key, []any{v})
	if err != nil {
		return time.Time{}, err
	}
	end, ok := cmd.Val().(int64)
	if !ok {
		return time.Time{}, fmt.Errorf("rl: RL.BLOCK replied %v, not an integer", cmd.Val())
	}
	return time.UnixMilli(end), nil
}

// Unblock sends RL.UNBLOCK: true if a block held.
func (c *Client) Unblock(ctx context.Context, key string, l Limiter) (bool, error) {
	cmd, err := c.do(ctx, "UNBLOCK", l.Name(), key, nil)
	if err != nil {
		return false, err
	}
	n, ok := cmd.Val().(int64)
	if !ok {
		return false, fmt.Errorf("rl: RL.UNBLOCK replied %v, not an integer", cmd.Val())
	}
	return n == 1, nil
}

// All sends RL.ALL: admits only if every clause admits, atomically. In
// Cluster the keys must share a slot ({hash tag}).
func (c *Client) All(ctx context.Context, clauses ...Clause) (AllDecision, error) {
	if len(clauses) == 0 {
		return AllDecision{}, fmt.Errorf("rl: RL.ALL needs at least one clause")
	}
	var parts []any
	for _, cl := range clauses {
		args, err := cl.Limiter.args(true)
		if err != nil {
			return AllDecision{}, err
		}
		parts = append(append(parts, cl.Limiter.Name()), args...)
	}
	cmd, _, err := c.call(ctx, func(e Edition) line {
		all, keyPos := []any{"RL.ALL", len(clauses)}, int8(2)
		if e == Library {
			all, keyPos = []any{"fcall", "rl_all", len(clauses)}, 3
		}
		for _, cl := range clauses {
			all = append(all, cl.Key)
		}
		return line{append(all, parts...), keyPos}
	}, false)
	if err != nil {
		return AllDecision{}, err
	}
	return allDecision(cmd.Val(), len(clauses))
}

func hasToken(args []any, token string) bool {
	for _, a := range args {
		if s, ok := a.(string); ok && strings.EqualFold(s, token) {
			return true
		}
	}
	return false
}
