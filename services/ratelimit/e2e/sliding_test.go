package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// edgeConfig is read unchanged by envoyproxy/ratelimit; rl-ratelimit
// takes the algorithms from RL_ALGORITHMS_FILE (edgeAlgorithms), the way
// docs/envoy.md gives for a file both must read.
const edgeConfig = `
domain: edge
descriptors:
  - key: fixed
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: sliding
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: buckets
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: gcra
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: steady
    rate_limit: {unit: second, requests_per_unit: 5}
`

const edgeAlgorithms = `
edge.sliding: sliding
edge.buckets: buckets
edge.gcra: {algorithm: gcra, burst: 5}
edge.steady: sliding
`

// untilFraction sleeps until the clock is at least f into a second.
func untilFraction(f time.Duration) {
	now := time.Now()
	into := time.Duration(now.Nanosecond())
	if into > f {
		time.Sleep(time.Second - into + f)
		return
	}
	time.Sleep(f - into)
}

// TestSlidingHoldsAcrossTheEdge: in one run, 5 per second burst just
// before a second's edge and again just after it. The fixed window
// admits 10 within a third of a second, envoyproxy/ratelimit's and
// rl-ratelimit's alike (answer for answer); the sliding log and the
// buckets admit 5; GCRA admits its burst of 5 and then one per 200 ms.
func TestSlidingHoldsAcrossTheEdge(t *testing.T) {
	algorithms := filepath.Join(t.TempDir(), "algorithms.yaml")
	if err := os.WriteFile(algorithms, []byte(edgeAlgorithms), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPair(t, serverOpts{module: true}, edgeConfig, map[string]string{"RL_ALGORITHMS_FILE": algorithms})
	admitted := map[string]int{}
	send := func(svc *service, key string) {
		r := svc.ask(t, rq("edge", 0, d(key, "a")))
		if r.OverallCode == pb.RateLimitResponse_OK {
			admitted[svc.name+" "+key]++
		}
	}
	untilFraction(700 * time.Millisecond)
	start := time.Now()
	for batch := 0; batch < 2; batch++ {
		if batch == 1 {
			untilFraction(50 * time.Millisecond) // just past the edge
		}
		for i := 0; i < 5; i++ {
			if p.both(t, rq("edge", 0, d("fixed", "a"))).OverallCode == pb.RateLimitResponse_OK { // answer for answer
				admitted["fixed"]++
			}
			for _, k := range []string{"sliding", "buckets", "gcra"} {
				send(p.rl, k)
			}
		}
	}
	span := time.Since(start)
	if span > 700*time.Millisecond {
		t.Skipf("the two bursts took %v, not within one second: the machine is too busy to show the edge", span)
	}
	// Both fixed windows gave the same answers (p.both compared them).
	fixedE, fixedR := admitted["fixed"], admitted["fixed"]
	t.Logf("within %v across a second's edge, at 5 per second: envoyproxy/ratelimit fixed %d, rl fixed %d, sliding %d, buckets %d, gcra %d",
		span.Round(time.Millisecond), fixedE, fixedR, admitted["rl-ratelimit sliding"], admitted["rl-ratelimit buckets"], admitted["rl-ratelimit gcra"])
	if fixedR != 10 {
		t.Errorf("the fixed windows admitted %d within one second across the edge, want 10 (5 each side)", fixedR)
	}
	if got := admitted["rl-ratelimit sliding"]; got != 5 {
		t.Errorf("sliding admitted %d within one second, want 5", got)
	}
	if got := admitted["rl-ratelimit buckets"]; got != 5 {
		t.Errorf("buckets admitted %d within one second, want 5", got)
	}
	// GCRA: the burst, then one per emission interval (200 ms).
	if got, most := admitted["rl-ratelimit gcra"], 5+int(span/(200*time.Millisecond))+1; got < 5 || got > most {
		t.Errorf("gcra admitted %d in %v, want 5 to %d", got, span, most)
	}
}

// TestSlidingAnyWindow: a request every 40 ms for 2.4 s on a sliding
// limit of 5 per second; no second holds more than 5 admissions. Each
// admission happened between its request's send and its reply, so 6
// replies within 1 s of the first one's send are a violation however
// late the machine ran; the limit is also used (at least 10 admitted).
func TestSlidingAnyWindow(t *testing.T) {
	algorithms := filepath.Join(t.TempDir(), "algorithms.yaml")
	if err := os.WriteFile(algorithms, []byte(edgeAlgorithms), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, serverOpts{module: true})
	env := baseEnv(srv.addr(), newRuntime(t, edgeConfig), "rl_")
	env["RL_ALGORITHMS_FILE"] = algorithms
	rl := startService(t, "rl-ratelimit", rlBinary, env)
	type span struct{ sent, answered time.Time }
	var admitted []span
	for i := 0; i < 60; i++ {
		before := time.Now()
		if rl.ask(t, rq("edge", 0, d("steady", "a"))).OverallCode == pb.RateLimitResponse_OK {
			admitted = append(admitted, span{before, time.Now()})
		}
		time.Sleep(40*time.Millisecond - time.Since(before))
	}
	for i := range admitted {
		n := 0
		for j := i; j < len(admitted); j++ {
			if admitted[j].answered.Sub(admitted[i].sent) < time.Second {
				n++
			}
		}
		if n > 5 {
			t.Fatalf("%d admitted within a second from %v", n, admitted[i].sent.Format("15:04:05.000"))
		}
	}
	if len(admitted) < 10 {
		t.Fatalf("only %d admitted in 2.4 s at 5 per second", len(admitted))
	}
}
