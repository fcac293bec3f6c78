package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rlpb "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// diffConfig loads unchanged in both services: nested keys, a default
// key and a specific value, a wildcard, shadow_mode, unlimited,
// replaces, detailed_metric, requests_per_unit 0.
const diffConfig = `
domain: diff
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: user
    value: vip
    rate_limit: {unit: minute, requests_per_unit: 8}
  - key: path
    value: /api/*
    rate_limit: {unit: hour, requests_per_unit: 4}
  - key: org
    descriptors:
      - key: team
        rate_limit: {unit: minute, requests_per_unit: 3}
        descriptors:
          - key: member
            value: alice
            rate_limit: {unit: day, requests_per_unit: 2}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 2}
  - key: free
    rate_limit: {unlimited: true}
  - key: old
    rate_limit: {unit: minute, requests_per_unit: 1, name: old_limit}
  - key: new
    rate_limit:
      unit: minute
      requests_per_unit: 6
      replaces:
        - name: old_limit
  - key: detailed
    detailed_metric: true
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: zero
    rate_limit: {unit: minute, requests_per_unit: 0}
  - key: week
    rate_limit: {unit: week, requests_per_unit: 3}
`

// d is a descriptor from key, value pairs.
func d(kv ...string) *rlpb.RateLimitDescriptor {
	out := &rlpb.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Entries = append(out.Entries, &rlpb.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func rq(domain string, hits uint32, ds ...*rlpb.RateLimitDescriptor) *pb.RateLimitRequest {
	return &pb.RateLimitRequest{Domain: domain, HitsAddend: hits, Descriptors: ds}
}

// sameAnswer compares two responses: equal in every field, except that
// the two clocks may read seconds apart by one where a second ticked
// between the two calls (duration_until_reset and the reset header).
func sameAnswer(a, b *pb.RateLimitResponse) string {
	a, b = proto.Clone(a).(*pb.RateLimitResponse), proto.Clone(b).(*pb.RateLimitResponse)
	if len(a.Statuses) == len(b.Statuses) {
		for i := range a.Statuses {
			x, y := a.Statuses[i].DurationUntilReset, b.Statuses[i].DurationUntilReset
			if x != nil && y != nil {
				if diff := x.AsDuration() - y.AsDuration(); diff < -time.Second || diff > time.Second {
					return fmt.Sprintf("status %d: duration_until_reset %v vs %v", i, x.AsDuration(), y.AsDuration())
				}
				a.Statuses[i].DurationUntilReset, b.Statuses[i].DurationUntilReset = nil, nil
			}
		}
	}
	for _, r := range []*pb.RateLimitResponse{a, b} {
		for _, h := range r.ResponseHeadersToAdd {
			if h.Key == "RateLimit-Reset" {
				h.Value = "(reset)"
			}
		}
	}
	if !proto.Equal(a, b) {
		return fmt.Sprintf("envoyproxy/ratelimit: %v\nrl-ratelimit:         %v", a, b)
	}
	return ""
}

// pair is envoyproxy/ratelimit and rl-ratelimit on one server with one
// configuration (their keys apart by CACHE_KEY_PREFIX).
type pair struct {
	envoy, rl *service
	srv       *server
	rt        *runtimeDir
}

func startPair(t *testing.T, o serverOpts, yaml string, rlEnv map[string]string) *pair {
	t.Helper()
	p := &pair{srv: startServer(t, o), rt: newRuntime(t, yaml)}
	p.envoy = startService(t, "envoyproxy/ratelimit", envoyBinary(t), baseEnv(p.srv.addr(), p.rt, "envoy_"))
	env := baseEnv(p.srv.addr(), p.rt, "rl_")
	for k, v := range rlEnv {
		env[k] = v
	}
	p.rl = startService(t, "rl-ratelimit", rlBinary, env)
	return p
}

// both sends req to each service and fails the test if the answers differ.
func (p *pair) both(t *testing.T, req *pb.RateLimitRequest) *pb.RateLimitResponse {
	t.Helper()
	a, b := p.envoy.ask(t, req), p.rl.ask(t, req)
	if diff := sameAnswer(a, b); diff != "" {
		t.Fatalf("request %v:\n%s", req, diff)
	}
	return b
}

// minuteStart waits, if need be, so that the sequence does not straddle a
// minute's edge (the sequences' minute limits would start afresh midway
// in one service and not the other).
func minuteStart(t *testing.T, need time.Duration) {
	if s := time.Now().Second(); time.Duration(60-s)*time.Second < need {
		t.Logf("waiting %d s for the next minute", 60-s)
		time.Sleep(time.Duration(60-s)*time.Second + 50*time.Millisecond)
	}
}

func wantCodes(t *testing.T, r *pb.RateLimitResponse, overall pb.RateLimitResponse_Code, remaining ...uint32) {
	t.Helper()
	if r.OverallCode != overall {
		t.Fatalf("overall %v, want %v: %v", r.OverallCode, overall, r)
	}
	for i, want := range remaining {
		if got := r.Statuses[i].LimitRemaining; got != want {
			t.Fatalf("status %d: remaining %d, want %d: %v", i, got, want, r)
		}
	}
}

func testFixedWindowIdentical(t *testing.T, o serverOpts) {
	p := startPair(t, o, diffConfig, nil)
	minuteStart(t, 15*time.Second)
	for i := 0; i < 7; i++ { // the default value's limit, then over it
		r := p.both(t, rq("diff", 0, d("user", "bob")))
		if i == 4 {
			wantCodes(t, r, pb.RateLimitResponse_OK, 0)
		}
	}
	for i := 0; i < 9; i++ { // a specific value's own limit
		p.both(t, rq("diff", 0, d("user", "vip")))
	}
	for i := 0; i < 5; i++ { // a wildcard: one counter per value it matches
		p.both(t, rq("diff", 0, d("path", "/api/x")))
		p.both(t, rq("diff", 0, d("path", "/api/y")))
		p.both(t, rq("diff", 0, d("path", "/other")))
	}
	for i := 0; i < 4; i++ { // nested keys, and a depth with no limit
		p.both(t, rq("diff", 0, d("org", "acme", "team", "red")))
		p.both(t, rq("diff", 0, d("org", "acme", "team", "red", "member", "alice")))
		p.both(t, rq("diff", 0, d("org", "acme")))
		p.both(t, rq("diff", 0, d("org", "acme", "team", "red", "member", "bob")))
	}
	for i := 0; i < 4; i++ { // shadow_mode: over the limit, answered OK
		r := p.both(t, rq("diff", 0, d("shadow", "s")))
		if i == 3 && r.Statuses[0].Code != pb.RateLimitResponse_OK {
			t.Fatalf("shadow_mode answered %v", r)
		}
	}
	for i := 0; i < 7; i++ { // replaces: the replaced limit does not apply
		p.both(t, rq("diff", 0, d("old", "x"), d("new", "x")))
	}
	for i := 0; i < 4; i++ {
		p.both(t, rq("diff", 0, d("detailed", "a")))
		p.both(t, rq("diff", 0, d("free", "a")))
		p.both(t, rq("diff", 0, d("zero", "a")))
		p.both(t, rq("diff", 0, d("nolimit", "a"), d()))
		p.both(t, rq("diff", 0, d("week", "a")))
	}
	for _, hits := range []uint32{2, 2, 1, 1, 1} { // hits_addend
		p.both(t, rq("diff", hits, d("user", "carol")))
	}
	for _, hits := range []uint64{3, 2, 1} { // a descriptor's own hits_addend
		dd := d("user", "dave")
		dd.HitsAddend = wrapperspb.UInt64(hits)
		p.both(t, rq("diff", 0, dd, d("user", "dave2")))
	}
	for i := 0; i < 7; i++ { // hits_addend 0 looks only
		hits := uint32(1)
		if i%3 == 2 {
			hits = 0
		}
		p.both(t, rq("diff", hits, d("user", "erin")))
	}
	for i := 0; i < 3; i++ { // Envoy's per-descriptor limit override
		dd := d("user", "hank")
		dd.Limit = &rlpb.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: typev3.RateLimitUnit_MINUTE}
		p.both(t, rq("diff", 0, dd))
	}
	for i := 0; i < 3; i++ { // many descriptors, all within their limits
		p.both(t, rq("diff", 0, d("user", "gina"), d("path", "/api/z"), d("org", "o2", "team", "t"),
			d("detailed", "g"), d("free", "g"), d("week", "g"), d("new", "g"), d("user", "vip2"), d("shadow", "g")))
	}
}

// TestFixedWindowIdentical: the same configuration and request sequence,
// the same answers as envoyproxy/ratelimit, field for field.
func TestFixedWindowIdentical(t *testing.T) {
	t.Run("module", func(t *testing.T) { testFixedWindowIdentical(t, serverOpts{module: true}) })
	t.Run("library", func(t *testing.T) { testFixedWindowIdentical(t, serverOpts{valkey: true, library: true}) })
}

// TestDifferencesAsDocumented: where docs/envoy.md says the answers
// differ, they differ exactly so. A denied request counts in
// envoyproxy/ratelimit for its admitted descriptors and for a hits_addend
// that overshoots; rl counts neither.
func TestDifferencesAsDocumented(t *testing.T) {
	p := startPair(t, serverOpts{module: true}, diffConfig, nil)
	minuteStart(t, 10*time.Second)
	for i := 0; i < 3; i++ { // denied by zero: user=ivy counted by envoyproxy/ratelimit only
		req := rq("diff", 0, d("user", "ivy"), d("zero", "z"))
		wantCodes(t, p.envoy.ask(t, req), pb.RateLimitResponse_OVER_LIMIT, uint32(4-i))
		wantCodes(t, p.rl.ask(t, req), pb.RateLimitResponse_OVER_LIMIT, 4)
	}
	e, r := p.envoy.ask(t, rq("diff", 0, d("user", "ivy"))), p.rl.ask(t, rq("diff", 0, d("user", "ivy")))
	wantCodes(t, e, pb.RateLimitResponse_OK, 1) // counted 3 denied + this one
	wantCodes(t, r, pb.RateLimitResponse_OK, 4) // counted this one only

	// Denied by the server (one RL.ALL): the same answer, then apart.
	for i := 0; i < 4; i++ {
		p.both(t, rq("diff", 0, d("user", "lee"), d("org", "o3", "team", "t")))
	}
	e, r = p.envoy.ask(t, rq("diff", 0, d("user", "lee"))), p.rl.ask(t, rq("diff", 0, d("user", "lee")))
	wantCodes(t, e, pb.RateLimitResponse_OK, 0)
	wantCodes(t, r, pb.RateLimitResponse_OK, 1)

	// A switch mid-window keeps the counts: rl-ratelimit with
	// envoyproxy/ratelimit's CACHE_KEY_PREFIX counts on its counters.
	for i := 0; i < 3; i++ {
		p.envoy.ask(t, rq("diff", 0, d("user", "sam")))
	}
	switched := startService(t, "rl-ratelimit (switched)", rlBinary, baseEnv(p.srv.addr(), p.rt, "envoy_"))
	wantCodes(t, switched.ask(t, rq("diff", 0, d("user", "sam"))), pb.RateLimitResponse_OK, 1)

	p.both(t, rq("diff", 4, d("user", "jack")))
	p.both(t, rq("diff", 3, d("user", "jack"))) // over: both deny
	e, r = p.envoy.ask(t, rq("diff", 1, d("user", "jack"))), p.rl.ask(t, rq("diff", 1, d("user", "jack")))
	wantCodes(t, e, pb.RateLimitResponse_OVER_LIMIT, 0) // its count went to 7
	wantCodes(t, r, pb.RateLimitResponse_OK, 0)         // 4 + 1
}

// TestBadRequests: an empty domain and an empty descriptor list are
// refused as envoyproxy/ratelimit refuses them (code and text); an
// unknown domain and an empty descriptor are answered as it answers
// them; a hits_addend above what rl's sliding log takes is a clear
// InvalidArgument. None writes anything.
func TestBadRequests(t *testing.T) {
	yaml := diffConfig + `
  - key: slide
    rate_limit: {unit: minute, requests_per_unit: 1000, algorithm: sliding}
`
	srv := startServer(t, serverOpts{module: true})
	rt := newRuntime(t, diffConfig)
	envoy := startService(t, "envoyproxy/ratelimit", envoyBinary(t), baseEnv(srv.addr(), rt, "envoy_"))
	rtRL := newRuntime(t, yaml)
	rl := startService(t, "rl-ratelimit", rlBinary, baseEnv(srv.addr(), rtRL, "rl_"))
	ctx := context.Background()
	for _, req := range []*pb.RateLimitRequest{rq("", 0, d("user", "a")), rq("diff", 0)} {
		_, errE := envoy.client.ShouldRateLimit(ctx, req)
		_, errR := rl.client.ShouldRateLimit(ctx, req)
		se, sr := status.Convert(errE), status.Convert(errR)
		if errE == nil || errR == nil || se.Code() != sr.Code() || se.Message() != sr.Message() {
			t.Fatalf("%v: envoyproxy/ratelimit %v, rl-ratelimit %v", req, errE, errR)
		}
	}
	for _, req := range []*pb.RateLimitRequest{rq("nodomain", 0, d("user", "a")), rq("diff", 0, d()), rq("diff", 0, d("", ""))} {
		if diff := sameAnswer(envoy.ask(t, req), rl.ask(t, req)); diff != "" {
			t.Fatalf("%v:\n%s", req, diff)
		}
	}
	_, err := rl.client.ShouldRateLimit(ctx, rq("diff", 150, d("slide", "a"), d("user", "nobody")))
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "hits_addend 150") {
		t.Fatalf("hits_addend 150 on a sliding limit: %v, want InvalidArgument naming hits_addend", err)
	}
	keys, _ := srv.client.Keys(ctx, "rl_*").Result()
	if len(keys) != 0 {
		t.Fatalf("bad requests wrote %v", keys)
	}
}
