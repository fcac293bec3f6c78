// Package metrics keeps rl-ratelimit's counters and serves them in
// Prometheus' text format, named as envoyproxy/ratelimit's stats come out
// of its Prometheus exporter (its default statsd mapping): per limit
// ratelimit_service_rate_limit_{total_hits,over_limit,near_limit,
// within_limit,shadow_mode} with labels domain, key1 and key2.
package metrics

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Per-limit counter names.
const (
	TotalHits   = "ratelimit_service_rate_limit_total_hits"
	OverLimit   = "ratelimit_service_rate_limit_over_limit"
	NearLimit   = "ratelimit_service_rate_limit_near_limit"
	WithinLimit = "ratelimit_service_rate_limit_within_limit"
	ShadowMode  = "ratelimit_service_rate_limit_shadow_mode"
)

// Registry holds counters by name and labels.
type Registry struct {
	mu       sync.Mutex
	values   map[string]uint64 // series (name{labels}) -> value
	names    map[string]string // series -> metric name
	extra    string            // EXTRA_TAGS, rendered
	disabled bool
}

// New returns a registry; extra labels (EXTRA_TAGS) go on every series.
// disabled (DISABLE_STATS) keeps nothing.
func New(extra map[string]string, disabled bool) *Registry {
	r := &Registry{values: map[string]uint64{}, names: map[string]string{}, disabled: disabled}
	var keys []string
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r.extra += fmt.Sprintf(",%s=%q", k, extra[k])
	}
	return r
}

// Add adds v to the counter name{labels} (labels: name, value, ...).
func (r *Registry) Add(name string, v uint64, labels ...string) {
	if r == nil || r.disabled {
		return
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i := 0; i+1 < len(labels); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", labels[i], labels[i+1])
	}
	if r.extra != "" {
		if len(labels) == 0 {
			b.WriteString(r.extra[1:])
		} else {
			b.WriteString(r.extra)
		}
	}
	b.WriteByte('}')
	series := b.String()
	r.mu.Lock()
	r.values[series] += v
	r.names[series] = name
	r.mu.Unlock()
}

// Limit adds v to a per-limit counter; fullKey is the limit's stats key
// (domain.key_value.key...), split as the default mapping splits it.
func (r *Registry) Limit(name, fullKey string, v uint64) {
	if r == nil || r.disabled || v == 0 {
		return
	}
	fullKey = strings.NewReplacer(":", "_", "|", "_").Replace(fullKey)
	parts := strings.SplitN(fullKey, ".", 4)
	labels := []string{"domain", parts[0]}
	if len(parts) > 1 {
		labels = append(labels, "key1", parts[1])
	}
	if len(parts) > 2 {
		labels = append(labels, "key2", parts[2])
	}
	r.Add(name, v, labels...)
}

// Value is a series' value (for tests and logs).
func (r *Registry) Value(series string) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.values[series]
}

// ServeHTTP writes every counter in the text exposition format.
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	r.mu.Lock()
	series := make([]string, 0, len(r.values))
	for s := range r.values {
		series = append(series, s)
	}
	sort.Strings(series)
	var b strings.Builder
	typed := map[string]bool{}
	for _, s := range series {
		name := r.names[s]
		if !typed[name] {
			fmt.Fprintf(&b, "# TYPE %s counter\n", name)
			typed[name] = true
		}
		fmt.Fprintf(&b, "%s %d\n", strings.TrimSuffix(s, "{}"), r.values[s])
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}
