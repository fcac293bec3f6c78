package redis_rate_test

import (
	"context"
	"math"
	"math/rand"
	"strconv"
	"testing"
	"time"

	upstream "github.com/go-redis/redis_rate/v10"

	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/redis_rate"
)

// Limits whose emission interval (Period / Rate) is a binary fraction of
// a second, and a clock stepped in 1/64 s: redis_rate's float arithmetic
// (seconds since 2017 plus the TIME's µs / 10^6) is then exact, so both
// limiters decide every tie the same way and the replies compare exactly.
var differentialLimits = []redis_rate.Limit{
	redis_rate.PerSecond(8),  // 125 ms
	redis_rate.PerSecond(16), // 62.5 ms
	redis_rate.PerMinute(30), // 2 s
	redis_rate.PerMinute(15), // 4 s
	{Rate: 4, Burst: 10, Period: time.Second},
	{Rate: 1, Burst: 1, Period: 2 * time.Second},
	{Rate: 32, Burst: 3, Period: time.Second},
}

const tick = 15625 * time.Microsecond // 1/64 s

// jan2017 is redis_rate's epoch for the TATs it stores (float seconds).
const jan2017 = 1483228800

type counts struct {
	calls, admitted, denied, partial, resynced, resets int
}

// TestDifferentialAgainstRedisRate runs one long random sequence of
// Allow, AllowN, AllowAtMost and Reset, with clock steps, over several
// keys and limits, through the real redis_rate v10 and through this
// package on the same server, and compares every Result.
func TestDifferentialAgainstRedisRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func() *servertest.Server
		seed   int64
	}{
		{"valkey9-module", func() *servertest.Server { return valkeyModule }, 42},
		{"valkey9-library", func() *servertest.Server { return valkeyLibrary }, 4242},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.server()
			c := differential(t, s, tc.seed, 3000)
			t.Logf("%+v", c)
			// The sequence must have exercised what it compares.
			if c.admitted < 500 || c.denied < 500 || c.partial < 20 || c.resets < 20 {
				t.Errorf("sequence too one-sided: %+v", c)
			}
		})
	}
}

func differential(t *testing.T, s *servertest.Server, seed int64, calls int) counts {
	ctx := context.Background()
	if err := s.Client.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.SetClock(servertest.BaseTime); err != nil {
		t.Fatal(err)
	}
	theirs := upstream.NewLimiter(s.Client)
	ours := redis_rate.NewLimiter(s.Client)
	rnd := rand.New(rand.NewSource(seed))
	var c counts
	for i := 0; i < calls; i++ {
		// Sleeps: mostly none or under a second, sometimes past every
		// key's reset.
		switch p := rnd.Intn(100); {
		case p < 40:
		case p < 97:
			step(t, s, time.Duration(1+rnd.Intn(64))*tick)
		default:
			step(t, s, time.Duration(64*(1+rnd.Intn(70)))*tick)
		}
		k := rnd.Intn(len(differentialLimits))
		key := "user:" + strconv.Itoa(k)
		limit := differentialLimits[k]
		up := upstream.Limit{Rate: limit.Rate, Burst: limit.Burst, Period: limit.Period}
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
		if want.Allowed > 0 {
			c.admitted++
		} else {
			c.denied++
		}
		where := func() string {
			return "call " + strconv.Itoa(i) + " " + key + " " + limit.String() + " n=" + strconv.Itoa(n)
		}
		if got.Allowed != want.Allowed || got.Remaining != want.Remaining || got.Limit != limit {
			t.Fatalf("%s (op %d): rl %+v, redis_rate %+v", where(), op, *got, *want)
		}
		interval := limit.Period / time.Duration(limit.Rate)
		fractional := op >= 65 && want.Allowed > 0 && want.Allowed < n && tatGap(t, s, key) != 0
		switch {
		case want.RetryAfter == -1 && got.RetryAfter != -1, want.RetryAfter != -1 && got.RetryAfter == -1:
			t.Fatalf("%s: RetryAfter rl %v, redis_rate %v", where(), got.RetryAfter, want.RetryAfter)
		case op >= 35 && op < 65 && n > limit.Burst:
			// Never admitted: rl adds the excess intervals to its ms reset.
			if d := got.RetryAfter - want.RetryAfter; d < 0 || d >= time.Millisecond {
				t.Fatalf("%s: RetryAfter rl %v, redis_rate %v", where(), got.RetryAfter, want.RetryAfter)
			}
		case want.RetryAfter != -1 && got.RetryAfter != ceilMs(want.RetryAfter):
			t.Fatalf("%s: RetryAfter rl %v, redis_rate %v (rl's is whole ms, rounded up)", where(), got.RetryAfter, want.RetryAfter)
		}
		if fractional {
			// AllowAtMost granting fewer than asked: redis_rate also spends
			// the fraction of a unit that has partly come back, rl grants
			// whole units and keeps it. rl's schedule is behind by less
			// than one interval; then redis_rate's is set to rl's, so the
			// calls that follow compare again.
			c.partial++
			gap := tatGap(t, s, key)
			if gap < 0 || gap >= interval {
				t.Fatalf("%s: after a partial grant redis_rate's TAT is %v past rl's (bound: 0 to %v)", where(), gap, interval)
			}
			if d := want.ResetAfter - got.ResetAfter; d <= -time.Millisecond || d >= interval {
				t.Fatalf("%s: ResetAfter rl %v, redis_rate %v", where(), got.ResetAfter, want.ResetAfter)
			}
			resync(t, s, key)
			c.resynced++
			continue
		}
		if got.ResetAfter != ceilMs(want.ResetAfter) {
			t.Fatalf("%s (op %d): ResetAfter rl %v, redis_rate %v", where(), op, got.ResetAfter, want.ResetAfter)
		}
		if gap := tatGap(t, s, key); gap != 0 {
			t.Fatalf("%s: the TATs differ by %v", where(), gap)
		}
	}
	return c
}

func step(t *testing.T, s *servertest.Server, d time.Duration) {
	if err := s.Advance(d); err != nil {
		t.Fatal(err)
	}
}

func ceilMs(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(float64(d)/float64(time.Millisecond))) * time.Millisecond
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

// resync writes rl's TAT into redis_rate's key (its TTL kept).
func resync(t *testing.T, s *servertest.Server, key string) {
	ctx := context.Background()
	v, err := s.Client.Get(ctx, "rl:rate:"+key).Result()
	if err != nil {
		t.Fatal(err)
	}
	us, _ := strconv.ParseInt(v, 10, 64)
	secs := float64(us-jan2017*1e6) / 1e6
	if err := s.Client.Do(ctx, "set", "rate:"+key, strconv.FormatFloat(secs, 'f', -1, 64), "keepttl").Err(); err != nil {
		t.Fatal(err)
	}
}
