package redis_rate_test

import (
	"context"
	"math"
	"math/rand"
	"strconv"
	"testing"
	"time"

	upstream "github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/redis_rate"
)

// A differential sequence: its limits and how the stopped clock moves
// between calls.
type sequence struct {
	limits []redis_rate.Limit
	step   func(rnd *rand.Rand) time.Duration
	// floats: an interval that is no binary fraction of a second (100 ms),
	// so redis_rate's float seconds are off by a fraction of a µs. Where
	// the exact answer sits on a whole unit (a tie: the key's lead over now
	// a multiple of the interval, as on every idle key) that fraction can
	// tip redis_rate's answer one unit lower; elsewhere the answers and
	// waits still agree, to the µs.
	floats bool
}

// binary: every interval (Period / Rate) a binary fraction of a second and
// a clock stepped in 1/64 s, so redis_rate's float arithmetic (seconds
// since 2017 plus the TIME's µs / 10^6) is exact: both limiters decide
// every tie the same way and every reply compares exactly.
var binary = sequence{
	limits: []redis_rate.Limit{
		redis_rate.PerSecond(8),  // 125 ms
		redis_rate.PerSecond(16), // 62.5 ms
		redis_rate.PerMinute(30), // 2 s
		redis_rate.PerMinute(15), // 4 s
		{Rate: 4, Burst: 10, Period: time.Second},
		{Rate: 1, Burst: 1, Period: 2 * time.Second},
		{Rate: 32, Burst: 3, Period: time.Second},
	},
	// Mostly none or under a second, sometimes past every key's reset.
	step: func(rnd *rand.Rand) time.Duration {
		switch p := rnd.Intn(100); {
		case p < 40:
			return 0
		case p < 97:
			return time.Duration(1+rnd.Intn(64)) * tick
		default:
			return time.Duration(64*(1+rnd.Intn(70))) * tick
		}
	},
}

// decimal: the limits users write most (PerSecond(10), PerMinute(100)),
// whose intervals are whole ms but no binary fractions; the clock moves in
// whole ms, so a non-tie is at least 1 ms from a whole unit, far beyond
// the floats' error.
var decimal = sequence{
	limits: []redis_rate.Limit{
		redis_rate.PerSecond(10),  // 100 ms
		redis_rate.PerMinute(100), // 600 ms
		{Rate: 10, Burst: 3, Period: time.Second},
		{Rate: 100, Burst: 25, Period: time.Minute},
		redis_rate.PerSecond(5), // 200 ms
	},
	step: func(rnd *rand.Rand) time.Duration {
		switch p := rnd.Intn(100); {
		case p < 40:
			return 0
		case p < 97:
			return time.Duration(1+rnd.Intn(300)) * time.Millisecond
		default:
			return time.Duration(1000*(1+rnd.Intn(70))) * time.Millisecond
		}
	},
	floats: true,
}

const tick = 15625 * time.Microsecond // 1/64 s

// jan2017 is redis_rate's epoch for the TATs it stores (float seconds).
const jan2017 = 1483228800

type counts struct {
	calls, admitted, denied, partial, resets, looks, lookDenied int
	// floatLower: ties where redis_rate answered one unit lower than the
	// exact answer (its Remaining, or Allowed, or a denial of the last unit).
	ties, floatLower int
}

// TestDifferentialAgainstRedisRate runs one long random sequence of
// Allow, AllowN, AllowAtMost (n from 0 to above the burst) and Reset,
// with clock steps, over several keys and limits, through the real
// redis_rate v10 and through this package on the same server, and
// compares every Result.
func TestDifferentialAgainstRedisRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func() *servertest.Server
		seq    sequence
		seed   int64
	}{
		{"valkey9-module", func() *servertest.Server { return valkeyModule }, binary, 42},
		{"valkey9-library", func() *servertest.Server { return valkeyLibrary }, binary, 4242},
		{"valkey9-module-decimal", func() *servertest.Server { return valkeyModule }, decimal, 7},
		{"valkey9-library-decimal", func() *servertest.Server { return valkeyLibrary }, decimal, 77},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server()
			c := differential(t, s, tc.seq, tc.seed, 3000)
			t.Logf("%+v", c)
			// The sequence must have exercised what it compares.
			if c.admitted < 500 || c.denied < 500 || c.partial < 20 || c.resets < 20 || c.looks < 50 || c.lookDenied < 10 {
				t.Errorf("sequence too one-sided: %+v", c)
			}
			// docs/clients.md: redis_rate's floats make it answer one unit
			// lower at some ties of decimal limits, never of binary ones.
			if tc.seq.floats && (c.ties < 100 || c.floatLower < 10) {
				t.Errorf("the decimal limits met too few ties where redis_rate's floats show: %+v", c)
			}
		})
	}
}

func differential(t *testing.T, s *servertest.Server, seq sequence, seed int64, calls int) counts {
	ctx := context.Background()
	if err := s.FreshAt(ctx, servertest.BaseTime); err != nil {
		t.Fatal(err)
	}
	theirs := upstream.NewLimiter(s.Client)
	ours := redis_rate.NewLimiter(s.Client)
	rnd := rand.New(rand.NewSource(seed))
	var c counts
	for i := 0; i < calls; i++ {
		if d := seq.step(rnd); d > 0 {
			if err := s.Advance(d); err != nil {
				t.Fatal(err)
			}
		}
		k := rnd.Intn(len(seq.limits))
		key := "user:" + strconv.Itoa(k)
		limit := seq.limits[k]
		up := upstream.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}
		interval := limit.Period / time.Duration(limit.Rate)
		// A tie: the key's lead over now a whole number of intervals.
		tie := seq.floats && lead(t, s, key)%interval == 0
		op := rnd.Intn(100)
		var n int
		var want *upstream.Result
		var got *redis_rate.Result
		var errT, errO error
		switch {
		case op < 35:
			n = 1
			want, errT = theirs.Allow(ctx, key, up)
			got, errO = ours.Allow(ctx, key, limit)
		case op < 65:
			n = rnd.Intn(limit.Burst + 3) // 0 and above the burst too
			want, errT = theirs.AllowN(ctx, key, up, n)
			got, errO = ours.AllowN(ctx, key, limit, n)
		case op < 97:
			n = 1 + rnd.Intn(limit.Burst+2)
			if rnd.Intn(5) == 0 {
				n = 0 // only looks
			}
			want, errT = theirs.AllowAtMost(ctx, key, up, n)
			got, errO = ours.AllowAtMost(ctx, key, limit, n)
		default:
			c.resets++
			if err := theirs.Reset(ctx, key); err != nil {
				t.Fatal(err)
			}
			if err := ours.Reset(ctx, key); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if errT != nil || errO != nil {
			t.Fatalf("call %d: errors: redis_rate %v, rl %v", i, errT, errO)
		}
		c.calls++
		atMost := op >= 65
		if atMost && n == 0 {
			c.looks++
			if got.RetryAfter != -1 {
				c.lookDenied++
			}
		}
		if want.Allowed > 0 {
			c.admitted++
		} else {
			c.denied++
		}
		if tie {
			c.ties++
		}
		where := func() string {
			return "call " + strconv.Itoa(i) + " op " + strconv.Itoa(op) + " " + key + " " + limit.String() + " n=" + strconv.Itoa(n)
		}
		if got.Limit != limit {
			t.Fatalf("%s: Limit %+v", where(), got.Limit)
		}
		if got.Allowed != want.Allowed || got.Remaining != want.Remaining || (got.RetryAfter == -1) != (want.RetryAfter == -1) {
			if !tie || !floatLower(got, want, n, atMost) {
				t.Fatalf("%s: rl %+v, redis_rate %+v", where(), *got, *want)
			}
			// The exact answer sat on a whole unit and redis_rate's float
			// fell just below it: its key is set to rl's and the sequence
			// goes on.
			c.floatLower++
			resync(t, s, key)
			continue
		}
		switch {
		case want.RetryAfter == -1:
		case !atMost && n > limit.Burst:
			// Never admitted: rl adds the excess intervals to its ms reset.
			if d := got.RetryAfter - want.RetryAfter; d < -slack(seq) || d >= time.Millisecond+slack(seq) {
				t.Fatalf("%s: RetryAfter rl %v, redis_rate %v", where(), got.RetryAfter, want.RetryAfter)
			}
		case !sameWait(got.RetryAfter, want.RetryAfter, seq):
			t.Fatalf("%s: RetryAfter rl %v, redis_rate %v (rl's is whole ms, rounded up)", where(), got.RetryAfter, want.RetryAfter)
		}
		gap := tatGap(t, s, key)
		if atMost && want.Allowed > 0 && want.Allowed < n && !near(gap, 0, seq.floats) {
			// AllowAtMost granting fewer than asked: redis_rate also spends
			// the fraction of a unit that has partly come back, rl grants
			// whole units and keeps it. rl's schedule is behind by less
			// than one interval; then redis_rate's is set to rl's, so the
			// calls that follow compare again.
			c.partial++
			if gap < 0 || gap >= interval {
				t.Fatalf("%s: after a partial grant redis_rate's TAT is %v past rl's (bound: 0 to %v)", where(), gap, interval)
			}
			if d := want.ResetAfter - got.ResetAfter; d <= -time.Millisecond || d >= interval {
				t.Fatalf("%s: ResetAfter rl %v, redis_rate %v", where(), got.ResetAfter, want.ResetAfter)
			}
			resync(t, s, key)
			continue
		}
		if !sameWait(got.ResetAfter, want.ResetAfter, seq) {
			t.Fatalf("%s: ResetAfter rl %v, redis_rate %v", where(), got.ResetAfter, want.ResetAfter)
		}
		if !near(gap, 0, seq.floats) {
			t.Fatalf("%s: the TATs differ by %v", where(), gap)
		}
		if seq.floats {
			// Float TATs drift by ulps from call to call: start each call
			// from the same schedule.
			resync(t, s, key)
		}
	}
	return c
}

// sameWait: rl's wait is redis_rate's rounded up to a whole ms; with
// decimal limits redis_rate's float wait is itself off by under a µs.
func sameWait(got, want time.Duration, seq sequence) bool {
	if seq.floats {
		return closeWait(got, want)
	}
	return got == ceilMs(want)
}

// slack is how far redis_rate's waits may be off the exact ones.
func slack(seq sequence) time.Duration {
	if seq.floats {
		return time.Microsecond
	}
	return 0
}

// floatLower: redis_rate's answer is one unit lower than rl's exact one,
// as a float a hair below a whole unit makes it: Remaining one lower, an
// AllowAtMost granting one fewer, or the last unit denied (by AllowN, or
// AllowAtMost's look with n 0) after a wait under a µs.
func floatLower(got *redis_rate.Result, want *upstream.Result, n int, atMost bool) bool {
	if want.Allowed == 0 && want.RetryAfter != -1 && want.RetryAfter < time.Microsecond {
		return got.RetryAfter == -1 && (got.Allowed == n && got.Remaining == 0) || // AllowN: the last units
			(n == 0 && got.Remaining == 1) || // a look: one unit left
			(atMost && got.Allowed == 1 && got.Remaining == 0)
	}
	if want.RetryAfter != -1 || got.RetryAfter != -1 || !closeWait(got.ResetAfter, want.ResetAfter) {
		return false
	}
	switch {
	case want.Allowed == got.Allowed:
		return want.Remaining == got.Remaining-1
	case atMost && want.Allowed == got.Allowed-1:
		return want.Remaining == got.Remaining
	}
	return false
}

// closeWait: rl's whole-ms wait is redis_rate's float one rounded up, that
// float being off by under a µs.
func closeWait(got, want time.Duration) bool {
	d := got - want
	return d > -time.Microsecond && d < time.Millisecond+time.Microsecond
}

func near(gap, want time.Duration, floats bool) bool {
	if floats {
		return gap-want >= -time.Microsecond && gap-want <= time.Microsecond
	}
	return gap == want
}

func ceilMs(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(float64(d)/float64(time.Millisecond))) * time.Millisecond
}

// lead is how far rl's TAT for key is ahead of now (0 when absent or
// behind): read before a call, it tells a tie.
func lead(t *testing.T, s *servertest.Server, key string) time.Duration {
	v, err := s.Client.Get(context.Background(), "rl:rate:"+key).Result()
	if err == redis.Nil {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	us, _ := strconv.ParseInt(v, 10, 64)
	return max(time.Duration(us-s.Now().UnixMicro())*time.Microsecond, 0)
}

// tatGap is redis_rate's TAT minus rl's for key, each read from its own
// key (redis_rate: float seconds since 2017; rl: µs since 1970), both
// taken as now when the key is absent or behind the clock.
func tatGap(t *testing.T, s *servertest.Server, key string) time.Duration {
	ctx := context.Background()
	now := s.Now().UnixMicro()
	theirs, ours := now, now
	if v, err := s.Client.Get(ctx, "rate:"+key).Result(); err == nil {
		f, perr := strconv.ParseFloat(v, 64)
		if perr != nil {
			t.Fatal(perr)
		}
		theirs = int64(math.Round(f*1e6)) + jan2017*1e6
	}
	if v, err := s.Client.Get(ctx, "rl:rate:"+key).Result(); err == nil {
		ours, _ = strconv.ParseInt(v, 10, 64)
	}
	return time.Duration(max(theirs, now)-max(ours, now)) * time.Microsecond
}

// resync writes rl's TAT into redis_rate's key, with rl's expiry (or
// deletes it when rl holds none).
func resync(t *testing.T, s *servertest.Server, key string) {
	ctx := context.Background()
	v, err := s.Client.Get(ctx, "rl:rate:"+key).Result()
	if err == redis.Nil {
		if err := s.Client.Del(ctx, "rate:"+key).Err(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	ttl, err := s.Client.PTTL(ctx, "rl:rate:"+key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 {
		// A TAT at now, expiring this ms: the key is idle.
		if err := s.Client.Del(ctx, "rate:"+key).Err(); err != nil {
			t.Fatal(err)
		}
		return
	}
	us, _ := strconv.ParseInt(v, 10, 64)
	secs := float64(us-jan2017*1e6) / 1e6
	if err := s.Client.Set(ctx, "rate:"+key, strconv.FormatFloat(secs, 'f', -1, 64), ttl).Err(); err != nil {
		t.Fatal(err)
	}
}

func step(t *testing.T, s *servertest.Server, d time.Duration) {
	if err := s.Advance(d); err != nil {
		t.Fatal(err)
	}
}
