package limiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	rl "rl.invalid/rl"
	"rl.invalid/rl-ratelimit/config"
)

// Item is one descriptor of a request, to decide.
type Item struct {
	Limit   *config.RateLimit // nil: no limit applies (not sent)
	Entries [][2]string       // the descriptor's key/value pairs
	Hits    uint64            // hits_addend
}

// Decision is rl's answer for one descriptor.
type Decision struct {
	Allowed    bool
	Remaining  int64
	RetryAfter time.Duration // > 0 when denied
	ResetAfter time.Duration
	Sent       bool // false when decided here, without the server
}

// BadRequest is a request rl refuses before sending anything (a gRPC
// InvalidArgument).
type BadRequest struct{ msg string }

func (e BadRequest) Error() string { return e.msg }

// Cache decides descriptors with rl's commands over a go-redis client.
type Cache struct {
	rdb     redis.UniversalClient
	cluster bool // group RL.ALL by hash slot
	prefix  string
	log     *slog.Logger

	mu      sync.Mutex
	edition rl.Edition
}

// New returns a Cache over rdb. cluster says whether the descriptors of one
// RL.ALL must share a hash slot.
func New(rdb redis.UniversalClient, cluster bool, prefix string, log *slog.Logger) *Cache {
	return &Cache{rdb: rdb, cluster: cluster, prefix: prefix, log: log}
}

// Edition is the edition last found (0 before the first request).
func (c *Cache) Edition() rl.Edition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.edition
}

// Detect finds the server's edition again (rl's Go client asks the module
// first, then the function library).
func (c *Cache) Detect(ctx context.Context) (rl.Edition, error) {
	e, err := rl.New(c.rdb).Edition(ctx)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	changed := c.edition != 0 && c.edition != e
	c.edition = e
	c.mu.Unlock()
	if changed {
		c.log.Warn("the server's rl edition changed", "edition", e.String())
	}
	return e, nil
}

// call is one command of a request's pipeline and what it decides.
type call struct {
	kind    int // callAll, callOne, callPeek
	clauses group
}

const (
	callAll  = iota // RL.ALL over a group
	callOne         // a clause's own command (shadow_mode)
	callPeek        // RL.PEEK for hits_addend 0: what is left
	callAsIf        // RL.PEEK with the request's cost: a clause of a request denied already
)

// Decide decides items at now, in one pipeline: the descriptors that must
// hold together in RL.ALLs (one per hash slot in Cluster, split further
// only past RL.ALL's bounds), shadow-mode limits each alone (they never
// deny the others), hits_addend 0 as RL.PEEK. Answers that need no server
// (requests_per_unit 0, a hits_addend above the limit) are made here and
// write nothing.
func (c *Cache) Decide(ctx context.Context, domain string, items []Item, now time.Time) ([]Decision, error) {
	out := make([]Decision, len(items))
	var calls []call
	bySlot := map[uint16][]int{} // slot -> indexes into calls of its RL.ALLs
	// A limit that can never admit the request denies it before anything
	// is sent: the others are then only peeked at, as RL.ALL answers the
	// admitting clauses of a denied call, and nothing is written.
	denied := false
	for i, it := range items {
		if it.Limit == nil {
			continue
		}
		if capa := capacity(it.Limit); it.Hits > capa || capa == 0 {
			// Never admissible (or requests_per_unit 0): answered here as
			// the fixed window would, and nothing is written.
			out[i] = Decision{Allowed: it.Hits == 0}
			denied = denied || (it.Hits > 0 && !it.Limit.ShadowMode)
			continue
		}
		if it.Limit.Algorithm == config.Sliding && it.Hits > maxSlideCost {
			return nil, BadRequest{fmt.Sprintf("descriptor %d: hits_addend %d is above %d, the most rl's sliding log takes in one request (limit %s)",
				i, it.Hits, maxSlideCost, it.Limit.FullKey)}
		}
		cl := newClause(i, BaseKey(c.prefix, domain, it.Entries), it.Limit, now.Unix(), it.Hits)
		switch {
		case it.Hits == 0:
			calls = append(calls, call{kind: callPeek, clauses: group{cl}})
		case it.Limit.ShadowMode:
			calls = append(calls, call{kind: callOne, clauses: group{cl}})
		default:
			var slot uint16
			if c.cluster {
				slot = Slot(cl.key)
			}
			placed := false
			for _, ci := range bySlot[slot] {
				if calls[ci].clauses.fits(cl) {
					calls[ci].clauses = append(calls[ci].clauses, cl)
					placed = true
					break
				}
			}
			if !placed {
				bySlot[slot] = append(bySlot[slot], len(calls))
				calls = append(calls, call{kind: callAll, clauses: group{cl}})
			}
		}
	}
	if denied {
		var asIf []call
		for _, cl := range calls {
			if cl.kind != callAll {
				asIf = append(asIf, cl)
				continue
			}
			for _, c := range cl.clauses {
				asIf = append(asIf, call{kind: callAsIf, clauses: group{c}})
			}
		}
		calls = asIf
	}
	if len(calls) == 0 {
		return out, nil
	}
	replies, err := c.run(ctx, calls)
	if err != nil {
		return nil, err
	}
	for k, cl := range calls {
		if err := fill(out, cl, replies[k]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// run sends calls as one pipeline in the server's edition. A call the
// server answers "unknown command" or "function not found" wrote nothing:
// the edition is found again and those calls are sent once more.
func (c *Cache) run(ctx context.Context, calls []call) ([]any, error) {
	e := c.Edition()
	if e == 0 {
		var err error
		if e, err = c.Detect(ctx); err != nil {
			return nil, err
		}
	}
	replies := make([]any, len(calls))
	todo := make([]int, len(calls))
	for i := range calls {
		todo[i] = i
	}
	for attempt := 0; ; attempt++ {
		cmds, err := c.send(ctx, e, calls, todo)
		if err != nil && cmds == nil {
			return nil, err
		}
		var again []int
		for j, i := range todo {
			if cerr := cmds[j].Err(); cerr != nil {
				if attempt == 0 && wrongEdition(cerr) {
					again = append(again, i)
					continue
				}
				return nil, cerr
			}
			replies[i] = cmds[j].Val()
		}
		if len(again) == 0 {
			return replies, nil
		}
		if e, err = c.Detect(ctx); err != nil {
			return nil, err
		}
		todo = again
	}
}

func (c *Cache) send(ctx context.Context, e rl.Edition, calls []call, todo []int) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(todo))
	pipe := c.rdb.Pipeline()
	for j, i := range todo {
		var l line
		switch calls[i].kind {
		case callAll:
			if len(calls[i].clauses) == 1 {
				// One clause: its own command decides the same, without
				// RL.ALL's parsing (about a quarter fewer server
				// instructions, benches/callgrind.sh's ratelimit_1 row).
				l = oneLine(e, calls[i].clauses[0])
			} else {
				l = allLine(e, calls[i].clauses)
			}
		case callOne:
			l = oneLine(e, calls[i].clauses[0])
		case callPeek:
			l = peekLine(e, calls[i].clauses[0], 1)
		default:
			l = peekLine(e, calls[i].clauses[0], calls[i].clauses[0].cost)
		}
		cmd := redis.NewCmd(ctx, l.args...)
		// Cluster routes by this position, without COMMAND INFO.
		cmd.SetFirstKeyPos(l.keyPos)
		cmds[j] = cmd
		_ = pipe.Process(ctx, cmd)
	}
	_, err := pipe.Exec(ctx)
	if err != nil {
		var reply redis.Error
		for _, cmd := range cmds {
			if cmd.Err() != nil && !errors.As(cmd.Err(), &reply) {
				return nil, cmd.Err() // a connection error: nothing to parse
			}
		}
	}
	return cmds, nil
}

// wrongEdition reports an error that shows the server runs the other
// edition (or none): an unknown command wrote nothing.
func wrongEdition(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	text := strings.ToLower(err.Error())
	return strings.Contains(text, "unknown command") || strings.Contains(text, "function not found")
}

// fill turns one call's reply into its descriptors' decisions.
func fill(out []Decision, cl call, reply any) error {
	if cl.kind != callAll || len(cl.clauses) == 1 {
		d, err := decision(reply)
		if err != nil {
			return err
		}
		if cl.kind == callAsIf {
			d.Allowed, d.RetryAfter = true, 0 // as if admitted; not recorded
		}
		if cl.kind == callPeek {
			// A request of 0 hits: answered with what is left, the peek's
			// own unit given back; never denied.
			if d.Allowed {
				d.Remaining++
			}
			d.Allowed, d.RetryAfter = true, 0
		}
		out[cl.clauses[0].index] = d
		return nil
	}
	a, ok := reply.([]any)
	if !ok || len(a) != 2+len(cl.clauses) {
		return fmt.Errorf("rl: RL.ALL replied %v for %d clauses", reply, len(cl.clauses))
	}
	for k, cc := range cl.clauses {
		d, err := decision(a[2+k])
		if err != nil {
			return err
		}
		out[cc.index] = d
	}
	return nil
}

func decision(v any) (Decision, error) {
	a, ok := v.([]any)
	if !ok || len(a) < 4 {
		return Decision{}, fmt.Errorf("rl: a limiter replied %v, not four integers", v)
	}
	n := make([]int64, 4)
	for i := range n {
		x, ok := a[i].(int64)
		if !ok {
			return Decision{}, fmt.Errorf("rl: a limiter replied %v, not four integers", v)
		}
		n[i] = x
	}
	return Decision{
		Allowed:    n[0] == 1,
		Remaining:  n[1],
		RetryAfter: time.Duration(n[2]) * time.Millisecond,
		ResetAfter: time.Duration(n[3]) * time.Millisecond,
		Sent:       true,
	}, nil
}
