package config

import (
	"strings"
	"testing"

	rlpb "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
)

const sample = `
domain: api
descriptors:
  - key: user
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: user
    value: vip
    rate_limit: {unit: minute, requests_per_unit: 50, algorithm: sliding}
  - key: path
    value: /v1/*
    rate_limit: {unit: hour, requests_per_unit: 9, algorithm: gcra, burst: 3}
  - key: org
    descriptors:
      - key: team
        detailed_metric: true
        rate_limit: {unit: second, requests_per_unit: 2, algorithm: buckets}
`

func desc(kv ...string) *rlpb.RateLimitDescriptor {
	out := &rlpb.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Entries = append(out.Entries, &rlpb.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func TestLookup(t *testing.T) {
	c, err := Load([]File{{Name: "config.sample.yaml", Content: sample}}, false, map[string]Choice{"api.user": {Algorithm: Sliding}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc      *rlpb.RateLimitDescriptor
		fullKey   string // "" for no limit
		rpu       uint32
		algorithm Algorithm
	}{
		{desc("user", "bob"), "api.user", 5, Sliding}, // from the algorithms file
		{desc("user", "vip"), "api.user_vip", 50, Sliding},
		{desc("path", "/v1/users"), "api.path_/v1/*", 9, GCRA},
		{desc("path", "/v2/users"), "", 0, Fixed},
		{desc("org", "acme"), "", 0, Fixed},                                       // no limit at this depth
		{desc("org", "acme", "team", "red"), "api.org_acme.team_red", 2, Buckets}, // detailed_metric
		{desc("org", "acme", "team", "red", "x", "y"), "", 0, Fixed},              // deeper than the file
		{desc(), "", 0, Fixed},
	} {
		got, known := c.Lookup("api", tc.desc)
		if !known {
			t.Fatal("domain api unknown")
		}
		if tc.fullKey == "" {
			if got != nil {
				t.Errorf("%v: got %s, want no limit", tc.desc, got.FullKey)
			}
			continue
		}
		if got == nil || got.FullKey != tc.fullKey || got.Limit.RequestsPerUnit != tc.rpu || got.Algorithm != tc.algorithm {
			t.Errorf("%v: got %+v, want %s %d %v", tc.desc, got, tc.fullKey, tc.rpu, tc.algorithm)
		}
	}
	if got, _ := c.Lookup("api", desc("path", "/v1/x")); got.Burst != 3 {
		t.Errorf("gcra burst %d, want 3", got.Burst)
	}
	if _, known := c.Lookup("nope", desc("user", "a")); known {
		t.Error("an unknown domain reported known")
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"descriptors: []", "config file cannot have empty domain"},
		{"domain: a\ndescriptors:\n  - value: x", "descriptor has empty key"},
		{"domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 1}", "invalid rate limit unit 'fortnight'"},
		{"domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unlimited: true, unit: second}", "should not specify rate limit unit when unlimited"},
		{"domain: a\ndescriptors:\n  - key: k\n    colour: blue", "unknown key 'colour'"},
		{"domain: a\ndescriptors:\n  - key: k\n  - key: k", "duplicate descriptor composite key 'a.k'"},
		{"domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, algorithm: leaky}", "unknown algorithm 'leaky'"},
		{"domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 2000000, algorithm: sliding}", "above 1000000"},
		{"domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 2, burst: 4}", "burst is for algorithm: gcra only"},
		{"domain: a\ndescriptors:\n  - key: k\n    quota_mode: true\n    rate_limit: {unit: second, requests_per_unit: 2}", "'quota_mode: true' is not supported"},
		{"domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 1, name: n, replaces: [{name: n}]}", "replaces should not contain name of same descriptor"},
		{"domain: a\n  descriptors: [", "error loading config file"},
	} {
		_, err := Load([]File{{Name: "config.f.yaml", Content: tc.yaml}}, false, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "config.f.yaml: ") {
			t.Errorf("%q: got %v, want an error naming the file and %q", tc.yaml, err, tc.want)
		}
	}
	two := []File{{Name: "config.a", Content: "domain: d\ndescriptors: [{key: a}]"}, {Name: "config.b", Content: "domain: d\ndescriptors: [{key: b}]"}}
	if _, err := Load(two, false, nil); err == nil || !strings.Contains(err.Error(), "duplicate domain 'd'") {
		t.Errorf("a domain in two files: %v", err)
	}
	if _, err := Load(two, true, nil); err != nil {
		t.Errorf("MERGE_DOMAIN_CONFIG: %v", err)
	}
	if _, err := Load(two[:1], false, map[string]Choice{"d.zzz": {Algorithm: Sliding}}); err == nil || !strings.Contains(err.Error(), "'d.zzz' names no rate_limit") {
		t.Errorf("an algorithms key naming nothing: %v", err)
	}
}

func TestParseAlgorithms(t *testing.T) {
	got, err := ParseAlgorithms("a.yaml", "api.user: sliding\napi.path: {algorithm: gcra, burst: 7}\n")
	if err != nil || got["api.user"].Algorithm != Sliding || got["api.path"] != (Choice{GCRA, 7}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"k: leaky", "k: {algorithm: gcra, burst: 0}", "k: {speed: 3}", "k: [1]"} {
		if _, err := ParseAlgorithms("a.yaml", bad); err == nil || !strings.Contains(err.Error(), "'k'") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
