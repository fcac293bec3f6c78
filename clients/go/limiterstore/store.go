// Package limiterstore is a ulule/limiter v3 Store over rl: a drop-in for
// ulule's Redis store (github.com/ulule/limiter/v3/drivers/store/redis),
// with the same constructors, keys and answers, one command per call, on
// rl's module or its function library. NewSlidingStore gives a sliding
// window (RL.BUCKETS) instead of the fixed one.
package limiterstore

import (
	"context"
	"time"

	"github.com/ulule/limiter/v3"

	"rl.invalid/rl"
)

// Store is a limiter.Store over rl.
type Store struct {
	// Prefix starts every key: Prefix + ":" + key, as ulule's Redis store.
	Prefix    string
	rl        *rl.Client
	sliding   bool
	precision time.Duration
}

// NewStore is NewStoreWithOptions with limiter's default prefix.
func NewStore(client rl.Processor) (limiter.Store, error) {
	return NewStoreWithOptions(client, limiter.StoreOptions{Prefix: limiter.DefaultPrefix})
}

// NewStoreWithOptions returns the fixed-window store: Get and Increment
// count every hit in the window's counter (RL.CHARGE FIXED), admitted or
// not, as ulule's Redis store counts them, and the counters are the same
// keys (an integer with the window's end as its expiry), so a switch keeps
// the running windows. MaxRetry and CleanUpInterval do not apply. It asks
// the server nothing: its first call finds which edition of rl the server
// runs, and fails (rl.ErrNotLoaded) if neither.
func NewStoreWithOptions(client rl.Processor, options limiter.StoreOptions) (limiter.Store, error) {
	return newStore(client, options, false, 0)
}

// NewSlidingStore returns a sliding-window store (RL.BUCKETS): a rate of
// Limit per Period holds over every interval of Period, not per fixed
// window, and a denied hit counts nothing. precision is the buckets'
// width (0: Period / 60). Its keys are hashes: give it another prefix than
// a fixed-window store's.
func NewSlidingStore(client rl.Processor, options limiter.StoreOptions, precision time.Duration) (limiter.Store, error) {
	return newStore(client, options, true, precision)
}

func newStore(client rl.Processor, options limiter.StoreOptions, sliding bool, precision time.Duration) (limiter.Store, error) {
	s := &Store{Prefix: options.Prefix, rl: rl.New(client), sliding: sliding, precision: precision}
	if s.Prefix == "" {
		s.Prefix = limiter.DefaultPrefix
	}
	return s, nil
}

func (s *Store) key(key string) string { return s.Prefix + ":" + key }

// Get counts one hit.
func (s *Store) Get(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	return s.Increment(ctx, key, 1, rate)
}

// Increment counts count hits.
func (s *Store) Increment(ctx context.Context, key string, count int64, rate limiter.Rate) (limiter.Context, error) {
	if count <= 0 {
		return s.Peek(ctx, key, rate)
	}
	now := time.Now()
	if s.sliding {
		if count > rate.Limit {
			// Never fits: RL.BUCKETS refuses a COST above the limit.
			c, err := s.Peek(ctx, key, rate)
			c.Remaining, c.Reached = 0, true
			return c, err
		}
		d, err := s.rl.Buckets(ctx, s.key(key), rl.BucketsLimit{Limit: rate.Limit, Window: rate.Period, Precision: s.precision, Cost: count})
		if err != nil {
			return limiter.Context{}, err
		}
		return slidingContext(now, rate, d, 0), nil
	}
	// Asked with limit + 1, the one-unit peek in the reply is admitted
	// exactly while the counter is at most limit: not Reached.
	st, err := s.rl.Charge(ctx, s.key(key), rl.FixedLimit{Limit: rate.Limit + 1, Window: rate.Period}, count)
	if err != nil {
		return limiter.Context{}, err
	}
	return fixedContext(now, rate, st.RetryAfter == 0, st.Remaining, st.ResetAfter), nil
}

// Peek answers as Get without counting.
func (s *Store) Peek(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	now := time.Now()
	if s.sliding {
		d, err := s.rl.Peek(ctx, s.key(key), rl.BucketsLimit{Limit: rate.Limit, Window: rate.Period, Precision: s.precision})
		if err != nil {
			return limiter.Context{}, err
		}
		// The peek answers for one more unit: what is left now is one more.
		return slidingContext(now, rate, d, 1), nil
	}
	d, err := s.rl.Peek(ctx, s.key(key), rl.FixedLimit{Limit: rate.Limit + 1, Window: rate.Period})
	if err != nil {
		return limiter.Context{}, err
	}
	return fixedContext(now, rate, d.Allowed, d.Remaining, d.ResetAfter), nil
}

// Reset deletes the key's count.
func (s *Store) Reset(ctx context.Context, key string, rate limiter.Rate) (limiter.Context, error) {
	if err := s.rl.Del(ctx, s.key(key)); err != nil {
		return limiter.Context{}, err
	}
	return limiter.Context{Limit: rate.Limit, Remaining: rate.Limit, Reset: time.Now().Add(rate.Period).Unix()}, nil
}

func fixedContext(now time.Time, rate limiter.Rate, within bool, remaining int64, resetAfter time.Duration) limiter.Context {
	c := limiter.Context{Limit: rate.Limit, Reached: !within}
	if within {
		c.Remaining = remaining
	}
	c.Reset = reset(now, rate, resetAfter)
	return c
}

func slidingContext(now time.Time, rate limiter.Rate, d rl.Decision, peeked int64) limiter.Context {
	c := limiter.Context{Limit: rate.Limit}
	switch {
	case d.Allowed:
		c.Remaining = d.Remaining + peeked
		c.Reset = reset(now, rate, d.ResetAfter)
	case peeked == 1:
		// A peek denied: the window is full, and not over it.
		c.Reset = now.Add(d.RetryAfter).Unix()
	default:
		c.Reached = true
		c.Reset = now.Add(d.RetryAfter).Unix()
	}
	return c
}

// reset is when the window ends, in Unix seconds; a new window's when no
// key holds one, as ulule's stores answer.
func reset(now time.Time, rate limiter.Rate, after time.Duration) int64 {
	if after <= 0 {
		after = rate.Period
	}
	return now.Add(after).Unix()
}

var _ limiter.Store = (*Store)(nil)
