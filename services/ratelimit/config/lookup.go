package config

import (
	"strings"

	rlpb "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// Lookup finds the limit for one of a request's descriptors, as
// envoyproxy/ratelimit matches it: entry by entry down the domain's tree,
// each entry by key_value, else by a wildcard value (key_prefix*), else by
// key alone; the limit applies only if the request's last entry reaches
// it. A descriptor's own limit (Envoy's override) wins over the file and
// is a fixed window. known is false for a domain not in the file.
func (c *Config) Lookup(domain string, d *rlpb.RateLimitDescriptor) (rl *RateLimit, known bool) {
	root := c.domains[domain]
	if root == nil {
		return nil, false
	}
	if o := d.GetLimit(); o != nil {
		return &RateLimit{
			FullKey: overrideKey(domain, d),
			Limit: &pb.RateLimitResponse_RateLimit{
				RequestsPerUnit: o.GetRequestsPerUnit(),
				Unit:            pb.RateLimitResponse_RateLimit_Unit(o.GetUnit()),
			},
		}, true
	}
	n := root
	entries := d.GetEntries()
	for i, e := range entries {
		final := e.GetKey() + "_" + e.GetValue()
		next := n.children[final]
		if next == nil {
			for _, w := range n.wildcardKeys {
				if strings.HasPrefix(final, strings.TrimSuffix(w, "*")) {
					next = n.children[w]
					break
				}
			}
		}
		if next == nil {
			next = n.children[e.GetKey()]
		}
		if next != nil && next.limit != nil && i == len(entries)-1 {
			rl = next.limit
		}
		if next == nil || len(next.children) == 0 {
			break
		}
		n = next
	}
	if rl != nil && rl.DetailedMetric {
		// detailed_metric: the stats key names the request's own values.
		copy := *rl
		var b strings.Builder
		b.WriteString(domain)
		for _, e := range entries {
			b.WriteString(".")
			b.WriteString(e.GetKey())
			b.WriteString("_")
			b.WriteString(e.GetValue())
		}
		copy.FullKey = b.String()
		rl = &copy
	}
	return rl, true
}

// overrideKey is an override's stats key: key[_value] per entry.
func overrideKey(domain string, d *rlpb.RateLimitDescriptor) string {
	parts := make([]string, 0, len(d.GetEntries()))
	for _, e := range d.GetEntries() {
		p := e.GetKey()
		if e.GetValue() != "" {
			p += "_" + e.GetValue()
		}
		parts = append(parts, p)
	}
	return domain + "." + strings.Join(parts, ".")
}
