package rl

import (
	"fmt"
	"time"
)

// The replies, parsed once: arrays of integers (RESP2 and RESP3 alike),
// an RL.ACQUIRE's lease a bulk string or nil.

func ints(v any, min int, what string) ([]any, error) {
	a, ok := v.([]any)
	if !ok || len(a) < min {
		return nil, fmt.Errorf("rl: %s replied %v, not an array of %d", what, v, min)
	}
	for _, x := range a[:min] {
		if _, ok := x.(int64); !ok {
			return nil, fmt.Errorf("rl: %s replied %v, not integers", what, v)
		}
	}
	return a, nil
}

func msDur(x any) time.Duration { return time.Duration(x.(int64)) * time.Millisecond }

func decision(v any, lease, upto, oldest bool) (Decision, error) {
	n := 4
	if upto || oldest {
		n = 5
	}
	a, err := ints(v, n, "a limiter")
	if err != nil {
		return Decision{}, err
	}
	d := Decision{
		Allowed:    a[0].(int64) == 1,
		Remaining:  a[1].(int64),
		RetryAfter: msDur(a[2]),
		ResetAfter: msDur(a[3]),
	}
	switch {
	case upto:
		d.Granted = a[4].(int64)
	case oldest:
		d.Oldest = msDur(a[4])
	case lease && len(a) == 5:
		d.Lease = leaseID(a[4])
	}
	return d, nil
}

func leaseID(x any) string {
	switch id := x.(type) {
	case string:
		return id
	case []byte:
		return string(id)
	}
	return ""
}

func settlement(v any) (Settlement, error) {
	a, err := ints(v, 4, "RL.REFUND/RL.CHARGE")
	if err != nil {
		return Settlement{}, err
	}
	return Settlement{Units: a[0].(int64), Remaining: a[1].(int64), RetryAfter: msDur(a[2]), ResetAfter: msDur(a[3])}, nil
}

func leaseState(v any) (LeaseState, error) {
	a, err := ints(v, 4, "RL.RELEASE/RL.RENEW")
	if err != nil {
		return LeaseState{}, err
	}
	return LeaseState{Done: a[0].(int64) == 1, Held: a[1].(int64), RetryAfter: msDur(a[2]), ResetAfter: msDur(a[3])}, nil
}

func allDecision(v any, clauses int) (AllDecision, error) {
	a, err := ints(v, 2, "RL.ALL")
	if err != nil {
		return AllDecision{}, err
	}
	if len(a) != 2+clauses {
		return AllDecision{}, fmt.Errorf("rl: RL.ALL replied %d elements for %d clauses", len(a), clauses)
	}
	out := AllDecision{Allowed: a[0].(int64) == 1, RetryAfter: msDur(a[1]), Clauses: make([]Decision, clauses)}
	for i, c := range a[2:] {
		// An ACQUIRE clause has the lease as a fifth element.
		d, err := decision(c, true, false, false)
		if err != nil {
			return AllDecision{}, err
		}
		out.Clauses[i] = d
	}
	return out, nil
}
