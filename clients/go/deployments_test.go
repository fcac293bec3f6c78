package rl_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"

	"rl.invalid/rl"
	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/limiterstore"
	"rl.invalid/rl/redis_rate"
)

type universal struct {
	name   string
	client func() redis.UniversalClient
	module bool
	shards func() []*redis.Client // every node, to see the keys spread
}

func clusterOf(c func() *servertest.Cluster) func() []*redis.Client {
	return func() []*redis.Client {
		var out []*redis.Client
		for _, n := range c().Nodes {
			out = append(out, n.Client)
		}
		return out
	}
}

var universals = []universal{
	{"cluster-redis7-module", func() redis.UniversalClient { return clusterModule.Client }, true,
		clusterOf(func() *servertest.Cluster { return clusterModule })},
	{"cluster-valkey9-library", func() redis.UniversalClient { return clusterLibrary.Client }, false,
		clusterOf(func() *servertest.Cluster { return clusterLibrary })},
	{"ring-redis7-module", func() redis.UniversalClient {
		return redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": redis7Module.Addr(), "b": redis7Second.Addr()}})
	}, true, func() []*redis.Client { return []*redis.Client{redis7Module.Client, redis7Second.Client} }},
}

// TestClusterAndRing: the typed calls, the redis_rate drop-in and the
// ulule store through go-redis's ClusterClient (three primaries, each
// edition) and Ring: every key is routed to its node, each limit admits
// exactly its count, and the keys spread over every node.
func TestClusterAndRing(t *testing.T) {
	ctx := context.Background()
	for _, u := range universals {
		t.Run(u.name, func(t *testing.T) {
			for _, n := range u.shards() {
				if err := n.FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			client := u.client()
			c := rl.New(client)
			if e, err := c.Edition(ctx); err != nil || (e == rl.Module) != u.module {
				t.Fatalf("edition %v, %v", e, err)
			}
			limiter := redis_rate.NewLimiter(client)
			store, err := limiterstore.NewStore(client)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 24; k++ {
				key := fmt.Sprintf("user:%d", k)
				admitted := 0
				for i := 0; i < 3; i++ {
					d, err := c.Slide(ctx, "slide:"+key, rl.SlideLimit{Limit: 2, Window: time.Minute})
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed {
						admitted++
					}
				}
				if admitted != 2 {
					t.Fatalf("%s: RL.SLIDE admitted %d of 3, limit 2", key, admitted)
				}
				for i := 0; i < 4; i++ {
					res, err := limiter.Allow(ctx, key, redis_rate.PerMinute(3))
					if err != nil {
						t.Fatal(err)
					}
					if want := i < 3; (res.Allowed == 1) != want || (res.RetryAfter > 0) == want {
						t.Fatalf("%s: Allow %d: %+v", key, i, *res)
					}
				}
				if err := limiter.Reset(ctx, key); err != nil {
					t.Fatal(err)
				}
				if res, err := limiter.Allow(ctx, key, redis_rate.PerMinute(3)); err != nil || res.Allowed != 1 || res.Remaining != 2 {
					t.Fatalf("%s: after Reset: %+v, %v", key, res, err)
				}
				for i := 0; i < 3; i++ {
					lc, err := store.Get(ctx, key, storeRate)
					if err != nil || lc.Reached != (i == 2) {
						t.Fatalf("%s: store Get %d: %+v, %v", key, i, lc, err)
					}
				}
			}
			all, err := c.All(ctx,
				rl.Clause{Key: "{org:1}:user", Limiter: rl.SlideLimit{Limit: 10, Window: time.Second}},
				rl.Clause{Key: "{org:1}:org", Limiter: rl.BucketsLimit{Limit: 100, Window: time.Hour}})
			if err != nil || !all.Allowed || len(all.Clauses) != 2 {
				t.Fatalf("RL.ALL: %+v, %v", all, err)
			}
			for i, n := range u.shards() {
				if size, err := n.DBSize(ctx).Result(); err != nil || size == 0 {
					t.Fatalf("node %d holds %d keys (%v): the keys did not spread", i, size, err)
				}
			}
		})
	}
}

var storeRate = limiter.Rate{Limit: 2, Period: time.Minute}
