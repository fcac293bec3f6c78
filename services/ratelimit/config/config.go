// Package config loads envoyproxy/ratelimit's YAML configuration files
// unchanged, with one addition: a rate_limit may name rl's algorithm
// (algorithm: fixed, sliding, buckets or gcra, and burst for gcra), in the
// file itself or, for files envoyproxy/ratelimit must still read, in a
// separate algorithms file keyed by each limit's full key.
package config

import (
	"fmt"
	"sort"
	"strings"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"gopkg.in/yaml.v2"
)

// Algorithm is how rl decides a limit.
type Algorithm int

const (
	// Fixed is envoyproxy/ratelimit's fixed window (the default): one
	// counter per descriptor and unit-aligned window.
	Fixed Algorithm = iota
	// Sliding is rl's exact sliding log (RL.SLIDE).
	Sliding
	// Buckets is rl's sliding window of counters (RL.BUCKETS).
	Buckets
	// GCRA is rl's generic cell rate algorithm with a burst (RL.THROTTLE).
	GCRA
)

var algorithmNames = map[string]Algorithm{"fixed": Fixed, "sliding": Sliding, "buckets": Buckets, "gcra": GCRA}

func (a Algorithm) String() string {
	for name, v := range algorithmNames {
		if v == a {
			return name
		}
	}
	return "unknown"
}

// rl's own bounds, checked at load so that a request never reaches the
// server with arguments it would refuse.
const (
	maxSlideLimit = 1_000_000
	maxGCRAPerMs  = 1000 // RL.THROTTLE: count <= period (ms) * 1000
	maxBurstSpanS = 31 * 365 * 24 * 3600
)

// RateLimit is one limit of the configuration, or a request's override.
type RateLimit struct {
	// FullKey is the limit's stats key: domain, then each key[_value]
	// joined by dots (envoyproxy/ratelimit's name for it).
	FullKey        string
	Limit          *pb.RateLimitResponse_RateLimit
	Unlimited      bool
	ShadowMode     bool
	Name           string
	Replaces       []string
	DetailedMetric bool
	Algorithm      Algorithm
	// Burst is how many requests GCRA admits at once (default
	// requests_per_unit).
	Burst uint32
}

// UnitSeconds is the unit's length, as envoyproxy/ratelimit counts it (a
// month is 30 days, a year 365).
func UnitSeconds(u pb.RateLimitResponse_RateLimit_Unit) int64 {
	switch u {
	case pb.RateLimitResponse_RateLimit_SECOND:
		return 1
	case pb.RateLimitResponse_RateLimit_MINUTE:
		return 60
	case pb.RateLimitResponse_RateLimit_HOUR:
		return 3600
	case pb.RateLimitResponse_RateLimit_DAY:
		return 86400
	case pb.RateLimitResponse_RateLimit_WEEK:
		return 7 * 86400
	case pb.RateLimitResponse_RateLimit_MONTH:
		return 30 * 86400
	case pb.RateLimitResponse_RateLimit_YEAR:
		return 365 * 86400
	}
	return 0
}

// File is one configuration file: its runtime key (config.<name>) and text.
type File struct {
	Name    string
	Content string
}

// Error is a configuration error, prefixed with the file's name.
type Error string

func (e Error) Error() string { return string(e) }

func fileError(file, format string, a ...any) Error {
	return Error(file + ": " + fmt.Sprintf(format, a...))
}

type yamlReplaces struct {
	Name string `yaml:"name"`
}

type yamlRateLimit struct {
	RequestsPerUnit uint32         `yaml:"requests_per_unit"`
	Unit            string         `yaml:"unit"`
	Unlimited       bool           `yaml:"unlimited"`
	Name            string         `yaml:"name"`
	Replaces        []yamlReplaces `yaml:"replaces"`
	Algorithm       string         `yaml:"algorithm"`
	Burst           uint32         `yaml:"burst"`
}

type yamlDescriptor struct {
	Key            string           `yaml:"key"`
	Value          string           `yaml:"value"`
	RateLimit      *yamlRateLimit   `yaml:"rate_limit"`
	Descriptors    []yamlDescriptor `yaml:"descriptors"`
	ShadowMode     bool             `yaml:"shadow_mode"`
	QuotaMode      bool             `yaml:"quota_mode"`
	DetailedMetric bool             `yaml:"detailed_metric"`
	ValueToMetric  bool             `yaml:"value_to_metric"`
	ShareThreshold bool             `yaml:"share_threshold"`
}

type yamlRoot struct {
	Domain      string           `yaml:"domain"`
	Descriptors []yamlDescriptor `yaml:"descriptors"`
}

// The keys envoyproxy/ratelimit accepts (at any level, as it checks
// them), and rl's two additions.
var validKeys = map[string]bool{
	"domain": true, "key": true, "value": true, "descriptors": true, "rate_limit": true,
	"unit": true, "requests_per_unit": true, "unlimited": true, "shadow_mode": true,
	"quota_mode": true, "name": true, "replaces": true, "detailed_metric": true,
	"value_to_metric": true, "share_threshold": true,
	"algorithm": true, "burst": true,
}

// Keys envoyproxy/ratelimit accepts that rl-ratelimit does not implement:
// refused when true, never ignored.
var unsupportedKeys = map[string]string{
	"quota_mode":      "quota mode is not implemented",
	"value_to_metric": "value_to_metric (descriptor values in metric names) is not implemented",
	"share_threshold": "share_threshold (one counter for all values of a wildcard) is not implemented",
}

func checkKeys(file string, node map[any]any) error {
	for k, v := range node {
		name, ok := k.(string)
		if !ok {
			return fileError(file, "config error, key is not of type string: %v", k)
		}
		if !validKeys[name] {
			return fileError(file, "config error, unknown key '%s'", name)
		}
		if why, ok := unsupportedKeys[name]; ok && v == true {
			return fileError(file, "config key '%s: true' is not supported by rl-ratelimit: %s", name, why)
		}
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				m, ok := e.(map[any]any)
				if !ok {
					return fileError(file, "config error, yaml file contains list of type other than map: %v", e)
				}
				if err := checkKeys(file, m); err != nil {
					return err
				}
			}
		case map[any]any:
			if err := checkKeys(file, v); err != nil {
				return err
			}
		case string, int, bool, nil:
		default:
			return fileError(file, "config error, '%s' has a value of an unexpected type", name)
		}
	}
	return nil
}

type node struct {
	children     map[string]*node
	limit        *RateLimit
	wildcardKeys []string // children whose key ends in '*', in file order
}

// Config is a loaded configuration: a tree of descriptors per domain.
type Config struct {
	domains map[string]*node
}

// Domains lists the loaded domains, sorted.
func (c *Config) Domains() []string {
	var out []string
	for d := range c.domains {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Empty reports whether no domain is loaded.
func (c *Config) Empty() bool { return c == nil || len(c.domains) == 0 }

// Choice is an algorithm named outside the config file.
type Choice struct {
	Algorithm Algorithm
	Burst     uint32
}

// Load parses files as envoyproxy/ratelimit does (merge: MERGE_DOMAIN_CONFIG),
// then applies algorithms (full key -> choice; every key must name a
// limit). The first error names its file.
func Load(files []File, merge bool, algorithms map[string]Choice) (*Config, error) {
	c := &Config{domains: map[string]*node{}}
	for _, f := range files {
		var generic map[any]any
		if err := yaml.Unmarshal([]byte(f.Content), &generic); err != nil {
			return nil, fileError(f.Name, "error loading config file: %s", err)
		}
		if err := checkKeys(f.Name, generic); err != nil {
			return nil, err
		}
		var root yamlRoot
		if err := yaml.Unmarshal([]byte(f.Content), &root); err != nil {
			return nil, fileError(f.Name, "error loading config file: %s", err)
		}
		if root.Domain == "" {
			return nil, fileError(f.Name, "config file cannot have empty domain")
		}
		d, present := c.domains[root.Domain]
		if present && !merge {
			return nil, fileError(f.Name, "duplicate domain '%s' in config file", root.Domain)
		}
		if !present {
			d = &node{children: map[string]*node{}}
			c.domains[root.Domain] = d
		}
		if err := d.load(f.Name, root.Domain+".", root.Descriptors); err != nil {
			return nil, err
		}
	}
	used := map[string]bool{}
	for _, d := range c.domains {
		if err := d.apply(algorithms, used); err != nil {
			return nil, err
		}
	}
	var unknown []string
	for k := range algorithms {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, Error(fmt.Sprintf("algorithms file: '%s' names no rate_limit in the configuration (keys are a limit's full key, e.g. domain.key_value.key)", unknown[0]))
	}
	return c, nil
}

func (n *node) load(file, parent string, descriptors []yamlDescriptor) error {
	for _, yd := range descriptors {
		if yd.Key == "" {
			return fileError(file, "descriptor has empty key")
		}
		final := yd.Key
		if yd.Value != "" {
			final += "_" + yd.Value
		}
		full := parent + final
		if _, dup := n.children[final]; dup {
			return fileError(file, "duplicate descriptor composite key '%s'", full)
		}
		child := &node{children: map[string]*node{}}
		if yd.RateLimit != nil {
			rl, err := newLimit(file, full, yd)
			if err != nil {
				return err
			}
			child.limit = rl
		}
		if strings.HasSuffix(final, "*") {
			n.wildcardKeys = append(n.wildcardKeys, final)
		}
		if err := child.load(file, full+".", yd.Descriptors); err != nil {
			return err
		}
		n.children[final] = child
	}
	return nil
}

func newLimit(file, full string, yd yamlDescriptor) (*RateLimit, error) {
	y := yd.RateLimit
	v, ok := pb.RateLimitResponse_RateLimit_Unit_value[strings.ToUpper(y.Unit)]
	validUnit := ok && v != int32(pb.RateLimitResponse_RateLimit_UNKNOWN)
	if y.Unlimited {
		if validUnit {
			return nil, fileError(file, "should not specify rate limit unit when unlimited")
		}
		if y.Algorithm != "" {
			return nil, fileError(file, "'%s': an unlimited rate_limit takes no algorithm", full)
		}
	} else if !validUnit {
		return nil, fileError(file, "invalid rate limit unit '%s'", y.Unit)
	}
	rl := &RateLimit{
		FullKey: full,
		Limit: &pb.RateLimitResponse_RateLimit{
			RequestsPerUnit: y.RequestsPerUnit,
			Unit:            pb.RateLimitResponse_RateLimit_Unit(v),
			Name:            y.Name,
		},
		Unlimited:      y.Unlimited,
		ShadowMode:     yd.ShadowMode,
		Name:           y.Name,
		DetailedMetric: yd.DetailedMetric,
	}
	for _, r := range y.Replaces {
		if r.Name == "" {
			return nil, fileError(file, "should not have an empty replaces entry")
		}
		if r.Name == y.Name {
			return nil, fileError(file, "replaces should not contain name of same descriptor")
		}
		rl.Replaces = append(rl.Replaces, r.Name)
	}
	if y.Algorithm != "" || y.Burst != 0 {
		a, ok := algorithmNames[strings.ToLower(y.Algorithm)]
		if !ok && y.Algorithm != "" {
			return nil, fileError(file, "'%s': unknown algorithm '%s' (expected fixed, sliding, buckets or gcra)", full, y.Algorithm)
		}
		if err := rl.choose(Choice{Algorithm: a, Burst: y.Burst}); err != nil {
			return nil, fileError(file, "%s", err)
		}
	}
	return rl, nil
}

// choose sets the limit's algorithm, checking it against rl's bounds.
func (rl *RateLimit) choose(c Choice) error {
	rpu := int64(rl.Limit.RequestsPerUnit)
	unit := UnitSeconds(rl.Limit.Unit)
	if rl.Unlimited {
		return fmt.Errorf("'%s': an unlimited rate_limit takes no algorithm", rl.FullKey)
	}
	if c.Burst != 0 && c.Algorithm != GCRA {
		return fmt.Errorf("'%s': burst is for algorithm: gcra only", rl.FullKey)
	}
	switch c.Algorithm {
	case Sliding:
		if rpu > maxSlideLimit {
			return fmt.Errorf("'%s': requests_per_unit %d is above %d, the most rl's sliding log holds; use algorithm: buckets", rl.FullKey, rpu, maxSlideLimit)
		}
	case GCRA:
		if rpu > unit*1000*maxGCRAPerMs {
			return fmt.Errorf("'%s': requests_per_unit %d is above one per microsecond, the finest gcra paces", rl.FullKey, rpu)
		}
		burst := int64(c.Burst)
		if burst == 0 {
			burst = rpu
		}
		if rpu > 0 && burst*unit/rpu > maxBurstSpanS {
			return fmt.Errorf("'%s': burst %d spans more than 31 years at %d per %s", rl.FullKey, burst, rpu, rl.Limit.Unit)
		}
	}
	rl.Algorithm, rl.Burst = c.Algorithm, c.Burst
	if c.Algorithm == GCRA && c.Burst == 0 {
		rl.Burst = rl.Limit.RequestsPerUnit
	}
	return nil
}

func (n *node) apply(algorithms map[string]Choice, used map[string]bool) error {
	if n.limit != nil {
		if c, ok := algorithms[n.limit.FullKey]; ok {
			used[n.limit.FullKey] = true
			if err := n.limit.choose(c); err != nil {
				return Error("algorithms file: " + err.Error())
			}
		}
	}
	for _, child := range n.children {
		if err := child.apply(algorithms, used); err != nil {
			return err
		}
	}
	return nil
}

// ParseAlgorithms reads an algorithms file: a YAML map from a limit's full
// key to an algorithm name, or to {algorithm: gcra, burst: N}.
func ParseAlgorithms(name, content string) (map[string]Choice, error) {
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(content), &raw); err != nil {
		return nil, fileError(name, "error loading algorithms file: %s", err)
	}
	out := map[string]Choice{}
	for key, v := range raw {
		var c Choice
		switch v := v.(type) {
		case string:
			a, ok := algorithmNames[strings.ToLower(v)]
			if !ok {
				return nil, fileError(name, "'%s': unknown algorithm '%s' (expected fixed, sliding, buckets or gcra)", key, v)
			}
			c.Algorithm = a
		case map[any]any:
			for k, val := range v {
				switch k {
				case "algorithm":
					s, _ := val.(string)
					a, ok := algorithmNames[strings.ToLower(s)]
					if !ok {
						return nil, fileError(name, "'%s': unknown algorithm '%v' (expected fixed, sliding, buckets or gcra)", key, val)
					}
					c.Algorithm = a
				case "burst":
					b, ok := val.(int)
					if !ok || b < 1 || b > 1<<32-1 {
						return nil, fileError(name, "'%s': burst must be an integer from 1 to 4294967295", key)
					}
					c.Burst = uint32(b)
				default:
					return nil, fileError(name, "'%s': unknown key '%v' (expected algorithm, burst)", key, k)
				}
			}
		default:
			return nil, fileError(name, "'%s': expected an algorithm name or {algorithm: gcra, burst: N}", key)
		}
		out[key] = c
	}
	return out, nil
}
