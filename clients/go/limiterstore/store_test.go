package limiterstore_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	upstreamtests "github.com/ulule/limiter/v3/drivers/store/tests"

	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/limiterstore"
)

type deployment struct {
	name    string
	server  func() *servertest.Server
	sliding bool
}

var deployments = []deployment{
	{"redis7-module-fixed", func() *servertest.Server { return redis7Module }, false},
	{"valkey9-library-fixed", func() *servertest.Server { return valkeyLibrary }, false},
	{"redis7-module-sliding", func() *servertest.Server { return redis7Module }, true},
	{"valkey9-library-sliding", func() *servertest.Server { return valkeyLibrary }, true},
}

func newStore(t *testing.T, d deployment, client redis.UniversalClient) limiter.Store {
	t.Helper()
	if err := client.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	var store limiter.Store
	var err error
	if d.sliding {
		store, err = limiterstore.NewSlidingStore(client, limiter.StoreOptions{Prefix: "limiter-sliding"}, 0)
	} else {
		store, err = limiterstore.NewStore(client)
	}
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// TestMiddlewareOverHTTP drives ulule's own net/http middleware over HTTP:
// exactly the limit passes with X-RateLimit-* counting down, then 429s;
// each client address has its own limit.
func TestMiddlewareOverHTTP(t *testing.T) {
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			store := newStore(t, d, d.server().Client)
			rate := limiter.Rate{Limit: 5, Period: time.Minute}
			mw := stdlib.NewMiddleware(limiter.New(store, rate, limiter.WithTrustForwardHeader(true)))
			app := httptest.NewServer(mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte("hello"))
			})))
			defer app.Close()
			get := func(ip string) *http.Response {
				req, _ := http.NewRequest("GET", app.URL, nil)
				req.Header.Set("X-Forwarded-For", ip)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				return res
			}
			for i := 1; i <= 7; i++ {
				before := time.Now().Unix()
				res := get("10.0.0.1")
				wantCode, wantRemaining := http.StatusOK, 5-i
				if i > 5 {
					wantCode, wantRemaining = http.StatusTooManyRequests, 0
				}
				if res.StatusCode != wantCode {
					t.Fatalf("request %d: status %d, want %d", i, res.StatusCode, wantCode)
				}
				h := res.Header
				if h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Remaining") != strconv.Itoa(wantRemaining) {
					t.Fatalf("request %d: X-RateLimit-Limit %q, -Remaining %q, want 5, %d", i,
						h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), wantRemaining)
				}
				reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
				if err != nil || reset < before || reset > time.Now().Unix()+61 {
					t.Fatalf("request %d: X-RateLimit-Reset %q, not within the minute", i, h.Get("X-RateLimit-Reset"))
				}
			}
			if res := get("10.0.0.2"); res.StatusCode != http.StatusOK || res.Header.Get("X-RateLimit-Remaining") != "4" {
				t.Fatalf("another address: status %d, remaining %q", res.StatusCode, res.Header.Get("X-RateLimit-Remaining"))
			}
		})
	}
}

// TestWindowEnds: on a stopped clock, a full window admits again once the
// clock has moved a period on (the fixed window's end; every bucket of
// the sliding window has left).
func TestWindowEnds(t *testing.T) {
	for _, d := range deployments[1:2] {
		for _, sliding := range []bool{false, true} {
			d.sliding = sliding
			s := d.server()
			store := newStore(t, d, s.Client)
			ctx := context.Background()
			rate := limiter.Rate{Limit: 2, Period: 10 * time.Second}
			for i, want := range []bool{false, false, true} {
				c, err := store.Get(ctx, "k", rate)
				if err != nil || c.Reached != want {
					t.Fatalf("sliding %v, hit %d: %+v, %v", sliding, i, c, err)
				}
			}
			// A sliding window's last bucket leaves up to one bucket width later.
			if err := s.Advance(10*time.Second + time.Second); err != nil {
				t.Fatal(err)
			}
			if c, err := store.Get(ctx, "k", rate); err != nil || c.Reached || c.Remaining != 1 {
				t.Fatalf("sliding %v, after the window: %+v, %v", sliding, c, err)
			}
		}
	}
}

// TestIncrementAndPeek: counts of several units, Peek counting nothing,
// Reset.
func TestIncrementAndPeek(t *testing.T) {
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			store := newStore(t, d, d.server().Client)
			ctx := context.Background()
			rate := limiter.Rate{Limit: 10, Period: time.Hour}
			steps := []struct {
				op        string
				n         int64
				remaining int64
				reached   bool
			}{
				{"peek", 0, 10, false},
				{"incr", 4, 6, false},
				{"peek", 0, 6, false},
				{"incr", 6, 0, false},
				{"peek", 0, 0, false},
				{"incr", 11, 0, true},
				{"reset", 0, 10, false},
				{"peek", 0, 10, false},
			}
			for i, st := range steps {
				var c limiter.Context
				var err error
				switch st.op {
				case "peek":
					c, err = store.Peek(ctx, "k", rate)
				case "incr":
					c, err = store.Increment(ctx, "k", st.n, rate)
				case "reset":
					c, err = store.Reset(ctx, "k", rate)
				}
				if err != nil || c.Limit != 10 || c.Remaining != st.remaining || c.Reached != st.reached {
					t.Fatalf("step %d %s %d: %+v, %v; want remaining %d, reached %v", i, st.op, st.n, c, err, st.remaining, st.reached)
				}
			}
		})
	}
}

// TestUpstreamStoreTests runs ulule's own store tests (its
// drivers/store/tests package, from the module cache) on the fixed-window
// store, on both editions; the concurrent one (250,000 calls, asserting
// only that none fails) once, on the module. Not on the sliding store: the
// sequential one asserts Peek's Reached after hits past the limit, which
// a sliding window that records no denied hit cannot tell from a full one.
func TestUpstreamStoreTests(t *testing.T) {
	for _, d := range deployments {
		if d.sliding {
			continue
		}
		t.Run(d.name, func(t *testing.T) {
			s := d.server()
			// The concurrent test runs 500 goroutines: a pool to match.
			client := redis.NewClient(&redis.Options{Addr: s.Addr(), PoolSize: 32})
			defer client.Close()
			store := newStore(t, d, client)
			t.Run("TestStoreSequentialAccess", func(t *testing.T) {
				upstreamtests.TestStoreSequentialAccess(t, store)
			})
			if d.name == "redis7-module-fixed" {
				t.Run("TestStoreConcurrentAccess", func(t *testing.T) {
					upstreamtests.TestStoreConcurrentAccess(t, store)
				})
			}
		})
	}
}

// TestConcurrentHitsAdmitExactlyTheLimit: 800 hits from 16 goroutines on
// a limit of 500 are admitted exactly 500 times, on every store.
func TestConcurrentHitsAdmitExactlyTheLimit(t *testing.T) {
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: d.server().Addr(), PoolSize: 16})
			defer client.Close()
			store := newStore(t, d, client)
			rate := limiter.Rate{Limit: 500, Period: time.Hour}
			admitted := make(chan int, 16)
			for g := 0; g < 16; g++ {
				go func() {
					n := 0
					for i := 0; i < 50; i++ {
						c, err := store.Get(context.Background(), "shared", rate)
						if err != nil {
							t.Error(err)
						}
						if !c.Reached {
							n++
						}
					}
					admitted <- n
				}()
			}
			total := 0
			for g := 0; g < 16; g++ {
				total += <-admitted
			}
			if total != 500 {
				t.Fatalf("admitted %d of 800 hits, want 500", total)
			}
		})
	}
}
