// Package limiter decides a request's descriptors in the server with
// rl's commands: the rl cache, as envoyproxy/ratelimit's Redis cache is
// its backend. Descriptors that share a hash slot are decided by one
// RL.ALL (atomically: a denial records none of them); the calls of one
// request go out as one pipeline, one round trip per node.
package limiter

import (
	"strconv"
	"strings"

	rl "rl.invalid/rl"
	"rl.invalid/rl-ratelimit/config"
)

// clause is one descriptor's limiter call: the key and what follows the
// limiter's name in RL.ALL (the same words its own command takes after
// the key).
type clause struct {
	index   int    // the descriptor's position in the request
	key     string // the server key
	limiter string // FIXED, SLIDE, BUCKETS, THROTTLE
	args    []any  // without the cost
	cost    uint64
}

// withCost is the clause's parameters with its cost: COST for FIXED,
// SLIDE and BUCKETS, THROTTLE's positional quantity.
func (c clause) withCost(cost uint64) []any {
	out := append([]any{}, c.args...)
	if c.limiter == "THROTTLE" {
		return append(out, cost)
	}
	if cost != 1 {
		out = append(out, "COST", cost)
	}
	return out
}

// BaseKey is envoyproxy/ratelimit's key for a descriptor without its
// window: prefix, domain, then key_value_ per entry.
func BaseKey(prefix, domain string, entries [][2]string) string {
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(domain)
	b.WriteByte('_')
	for _, e := range entries {
		b.WriteString(e[0])
		b.WriteByte('_')
		b.WriteString(e[1])
		b.WriteByte('_')
	}
	return b.String()
}

// newClause builds the call for limit at nowSec. The fixed window keeps
// envoyproxy/ratelimit's key (its window's start in unix seconds at the
// end) so that a switch mid-window keeps the counts; the sliding
// algorithms' keys end in their name and unit instead (they carry no
// window), so that changing a limit's algorithm or unit never meets a key
// of another kind.
func newClause(index int, base string, limit *config.RateLimit, nowSec int64, cost uint64) clause {
	unit := config.UnitSeconds(limit.Limit.Unit)
	rpu := int64(limit.Limit.RequestsPerUnit)
	window := unit * 1000
	c := clause{index: index, cost: cost}
	switch limit.Algorithm {
	case config.Sliding:
		c.key = base + "slide" + strconv.FormatInt(unit, 10)
		c.limiter, c.args = "SLIDE", []any{rpu, window}
	case config.Buckets:
		// PRECISION always sent: the default (window / 60) spelt out, so
		// the state's layout never depends on how many BUCKETS clauses
		// share a call.
		c.key = base + "buckets" + strconv.FormatInt(unit, 10)
		c.limiter, c.args = "BUCKETS", []any{rpu, window, "PRECISION", (window + 59) / 60}
	case config.GCRA:
		c.key = base + "gcra" + strconv.FormatInt(unit, 10)
		c.limiter, c.args = "THROTTLE", []any{int64(limit.Burst) - 1, rpu, window}
	default:
		// The counter lives a whole unit from its first admission: past
		// the window's end, never before it (the key names the window).
		c.key = base + strconv.FormatInt(nowSec/unit*unit, 10)
		c.limiter, c.args = "FIXED", []any{rpu, window}
	}
	return c
}

// capacity is the most one request may ask of limit at once: its
// requests_per_unit, or a GCRA limit's burst.
func capacity(limit *config.RateLimit) uint64 {
	if limit.Algorithm == config.GCRA {
		return uint64(limit.Burst)
	}
	return uint64(limit.Limit.RequestsPerUnit)
}

// maxSlideCost is RL.SLIDE's largest COST (and the most the SLIDE clauses
// of one RL.ALL may add up to).
const maxSlideCost = 100

// RL.ALL's bounds: at most 8 keys; the BUCKETS clauses share 250 buckets,
// 60 each with the default precision.
const (
	maxAllKeys    = 8
	maxAllBuckets = 4
)

// group is the clauses one RL.ALL decides.
type group []clause

func (g group) fits(c clause) bool {
	if len(g) >= maxAllKeys {
		return false
	}
	slide, buckets := uint64(0), 0
	for _, o := range g {
		if o.key == c.key {
			return false // RL.ALL takes each key once
		}
		if o.limiter == "SLIDE" {
			slide += o.cost
		}
		if o.limiter == "BUCKETS" {
			buckets++
		}
	}
	if c.limiter == "SLIDE" && slide+c.cost > maxSlideCost {
		return false
	}
	return c.limiter != "BUCKETS" || buckets < maxAllBuckets
}

// line is one command of the pipeline and where its first key is.
type line struct {
	args   []any
	keyPos int8
}

// allLine is RL.ALL (or rl_all) over g.
func allLine(e rl.Edition, g group) line {
	var out []any
	keyPos := int8(2)
	if e == rl.Library {
		out, keyPos = []any{"FCALL", "rl_all", len(g)}, 3
	} else {
		out = []any{"RL.ALL", len(g)}
	}
	for _, c := range g {
		out = append(out, c.key)
	}
	for _, c := range g {
		out = append(append(out, c.limiter), c.withCost(c.cost)...)
	}
	return line{out, keyPos}
}

// oneLine is a clause's own command: RL.FIXED key ... (rl_fixed).
func oneLine(e rl.Edition, c clause) line {
	if e == rl.Library {
		return line{append([]any{"FCALL", "rl_" + strings.ToLower(c.limiter), 1, c.key}, c.withCost(c.cost)...), 3}
	}
	return line{append([]any{"RL." + c.limiter, c.key}, c.withCost(c.cost)...), 1}
}

// peekLine is RL.PEEK for cost: what the clause would answer, recording
// nothing (cost 1 for a request of hits_addend 0).
func peekLine(e rl.Edition, c clause, cost uint64) line {
	if e == rl.Library {
		return line{append([]any{"FCALL_RO", "rl_peek", 1, c.key, c.limiter}, c.withCost(cost)...), 3}
	}
	return line{append([]any{"RL.PEEK", c.limiter, c.key}, c.withCost(cost)...), 2}
}

// Slot is the Cluster hash slot of key (CRC16 of its hash tag, if any).
func Slot(key string) uint16 {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}
