package rl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"

	"rl.invalid/rl"
	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/limiterstore"
	"rl.invalid/rl/redis_rate"
)

// What a server runs, for a restart on the same port.
var serverRuns = map[string]servertest.Options{
	"module":  {Flavor: servertest.Valkey9, Module: true},
	"library": {Flavor: servertest.Valkey9, Library: true},
	"neither": {Flavor: servertest.Valkey9},
}

// lockedBuffer is slog's output, written from the app's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns what was logged since the last take.
func (b *lockedBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// captureLog points slog's default logger at a buffer for the test.
func captureLog(t *testing.T) *lockedBuffer {
	b := &lockedBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(b, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return b
}

var howTo = regexp.MustCompile(`loadmodule .*redis-cli -x FUNCTION LOAD REPLACE < rl-` +
	regexp.QuoteMeta(rl.Version) + `\.lua .*functions/rl\.lua or make load-functions`)

// TestServerChangesUnderARunningApp: an app (net/http, with ulule's
// middleware on the store, a handler on the redis_rate drop-in, and typed
// calls) keeps running while its server is restarted on the same port
// with the other edition, or with neither and then one again. The first
// answer that the edition is gone makes each client find it again and
// send the call again; with neither, each call returns rl.ErrNotLoaded
// (to ulule's middleware's error handler, as any store error), and slog says
// once per client, not per call, what to load and how.
func TestServerChangesUnderARunningApp(t *testing.T) {
	ctx := context.Background()
	for _, sequence := range [][]string{
		{"module", "library", "module"},
		{"module", "neither", "library"},
		{"library", "neither", "module"},
	} {
		t.Run(strings.Join(sequence, "-"), func(t *testing.T) {
			logged := captureLog(t)
			srv, err := servertest.Start(serverRuns[sequence[0]])
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			// The app's own client: it reconnects to the address.
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
			defer rdb.Close()
			typed := rl.New(rdb)
			rate := redis_rate.NewLimiter(rdb)
			store, err := limiterstore.NewStore(rdb)
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			// ulule's default error handler panics (net/http closes the
			// connection); apps give one that answers, as here.
			answer500 := stdlib.WithErrorHandler(func(w http.ResponseWriter, _ *http.Request, err error) {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			})
			mux.Handle("/ulule", stdlib.NewMiddleware(limiter.New(store, limiter.Rate{Limit: 3, Period: time.Minute}), answer500).
				Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })))
			mux.HandleFunc("/rate", func(w http.ResponseWriter, r *http.Request) {
				res, err := rate.Allow(r.Context(), "app", redis_rate.PerMinute(3))
				switch {
				case err != nil:
					http.Error(w, err.Error(), http.StatusInternalServerError)
				case res.Allowed == 0:
					w.WriteHeader(http.StatusTooManyRequests)
				default:
					_, _ = w.Write([]byte("ok"))
				}
			})
			app := httptest.NewServer(mux)
			defer app.Close()
			statuses := func(path string, n int) []int {
				var out []int
				for i := 0; i < n; i++ {
					res, err := http.Get(app.URL + path)
					if err != nil {
						t.Fatal(err)
					}
					res.Body.Close()
					out = append(out, res.StatusCode)
				}
				return out
			}
			for step, edition := range sequence {
				if step > 0 {
					if err := srv.Restart(serverRuns[edition]); err != nil {
						t.Fatal(err)
					}
				}
				logged.take()
				if edition == "neither" {
					if got := statuses("/ulule", 3); !reflect.DeepEqual(got, []int{500, 500, 500}) {
						t.Fatalf("%s: ulule %v", edition, got)
					}
					if got := statuses("/rate", 3); !reflect.DeepEqual(got, []int{500, 500, 500}) {
						t.Fatalf("%s: redis_rate %v", edition, got)
					}
					_, err := typed.Slide(ctx, "rl:k", rl.SlideLimit{Limit: 3, Window: time.Minute})
					if !errors.Is(err, rl.ErrNotLoaded) || !howTo.MatchString(err.Error()) {
						t.Fatalf("%s: typed call %v", edition, err)
					}
					// Once per client (the store's, the drop-in's, the typed calls').
					lines := logged.take()
					if n := strings.Count(lines, "rl is not loaded"); n != 3 || !howTo.MatchString(lines) {
						t.Fatalf("%s: logged %d times:\n%s", edition, n, lines)
					}
					continue
				}
				// A fresh server: fresh limits, kept by rl in the edition it has now.
				for _, path := range []string{"/ulule", "/rate"} {
					if got := statuses(path, 4); !reflect.DeepEqual(got, []int{200, 200, 200, 429}) {
						t.Fatalf("%s: %s %v", edition, path, got)
					}
				}
				d, err := typed.Slide(ctx, "rl:k", rl.SlideLimit{Limit: 3, Window: time.Minute})
				if err != nil || !d.Allowed || d.Remaining != 2 {
					t.Fatalf("%s: typed call %+v, %v", edition, d, err)
				}
				want := map[string]rl.Edition{"module": rl.Module, "library": rl.Library}[edition]
				if e, err := typed.Edition(ctx); e != want || err != nil {
					t.Fatalf("%s: edition %v, %v", edition, e, err)
				}
				if lines := logged.take(); lines != "" {
					t.Fatalf("%s: logged %s", edition, lines)
				}
			}
		})
	}
}

// calls is how many times the server ran each command (INFO commandstats).
func calls(t *testing.T, srv *servertest.Server) map[string]int {
	t.Helper()
	info, err := srv.Client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^cmdstat_([^:]+):calls=(\d+)`).FindAllStringSubmatch(info, -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}

// burst makes n calls at once, each its own key.
func burst(t *testing.T, n int, call func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs <- call(i)
		}(i)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestBurstsShareOneProbe: twenty first calls at once on a library-only
// server send one FCALL_RO rl_version per client; twenty calls that meet
// the other edition after a restart find it once.
func TestBurstsShareOneProbe(t *testing.T) {
	ctx := context.Background()
	srv, err := servertest.Start(serverRuns["library"])
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 40})
	defer rdb.Close()
	typed := rl.New(rdb)
	rate := redis_rate.NewLimiter(rdb)
	slide := func(i int) error {
		_, err := typed.Slide(ctx, fmt.Sprintf("rl:u%d", i), rl.SlideLimit{Limit: 100, Window: time.Minute})
		return err
	}
	burst(t, 40, func(i int) error {
		if i%2 == 0 {
			return slide(i)
		}
		_, err := rate.Allow(ctx, strconv.Itoa(i), redis_rate.PerMinute(100))
		return err
	})
	if c := calls(t, srv); c["fcall_ro"] != 2 || c["fcall"] != 40 {
		t.Fatalf("first calls: %v; want FCALL_RO once per client, FCALL 40", c)
	}

	if err := srv.Restart(serverRuns["module"]); err != nil {
		t.Fatal(err)
	}
	burst(t, 20, slide)
	// The leading call's own RL.SLIDE found the module: no probe at all.
	if c := calls(t, srv); c["rl.slide"] != 20 || c["rl.peek"] != 0 || c["fcall_ro"] != 0 {
		t.Fatalf("library -> module: %v", c)
	}
	if err := srv.Restart(serverRuns["library"]); err != nil {
		t.Fatal(err)
	}
	burst(t, 20, slide)
	if c := calls(t, srv); c["fcall_ro"] != 1 || c["fcall"] != 20 {
		t.Fatalf("module -> library: %v", c)
	}
}
