package rl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"

	"rl.invalid/rl"
	"rl.invalid/rl/internal/servertest"
	"rl.invalid/rl/limiterstore"
	"rl.invalid/rl/redis_rate"
)

// readmeRecipe is the README's `ACL SETUSER ...` line, as written.
func readmeRecipe(t *testing.T) []string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(servertest.Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`(ACL SETUSER [^`]+)`").FindSubmatch(text)
	if m == nil {
		t.Fatal("README.md has no `ACL SETUSER ...` recipe")
	}
	return strings.Fields(string(m[1]))
}

// TestACLRecipe: a user made by the README's ACL recipe, as written
// (+@ratelimit ~rl:*; module ACL categories: Valkey 9.1), runs the typed
// calls, the redis_rate drop-in and the ulule store (its Prefix under rl:)
// with no other grant: no call sends COMMAND, which the recipe refuses.
func TestACLRecipe(t *testing.T) {
	ctx := context.Background()
	admin := valkeyModule.Client
	if err := admin.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	recipe := readmeRecipe(t)
	args := make([]any, len(recipe))
	var password string
	for i, a := range recipe {
		args[i] = a
		if strings.HasPrefix(a, ">") {
			password = a[1:]
		}
	}
	user := recipe[2]
	if err := admin.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%v: %v", recipe, err)
	}
	defer admin.Do(ctx, "acl", "deluser", user)
	c := redis.NewClient(&redis.Options{Addr: valkeyModule.Addr(), Username: user, Password: password})
	defer c.Close()
	if err := c.Do(ctx, "command", "info", "rl.throttle").Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("the recipe's user may send COMMAND (%v): the test shows nothing", err)
	}

	typed := rl.New(c)
	limit := rl.SlideLimit{Limit: 1, Window: time.Minute}
	for i, want := range []bool{true, false} {
		d, err := typed.Slide(ctx, "rl:go:acl", limit)
		if err != nil || d.Allowed != want {
			t.Fatalf("typed call %d: %+v, %v", i, d, err)
		}
	}
	if e, err := typed.Edition(ctx); err != nil || e != rl.Module {
		t.Fatalf("edition %v, %v", e, err)
	}
	// A fresh client's Edition reads rl.ProbeKey, which the recipe grants.
	if e, err := rl.New(c).Edition(ctx); err != nil || e != rl.Module {
		t.Fatalf("a fresh client's edition %v, %v", e, err)
	}
	// A key outside rl: is the user's own error, and decides nothing.
	fresh := rl.New(c)
	if _, err := fresh.Slide(ctx, "other:go:acl", limit); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("a key outside rl: answered %v, not NOPERM", err)
	}
	if d, err := fresh.Slide(ctx, "rl:go:acl2", limit); err != nil || !d.Allowed {
		t.Fatalf("after a NOPERM: %+v, %v", d, err)
	}

	rate := redis_rate.NewLimiter(c)
	for i, want := range []int{1, 0} {
		res, err := rate.Allow(ctx, "acl", redis_rate.PerMinute(1))
		if err != nil || res.Allowed != want {
			t.Fatalf("redis_rate call %d: %+v, %v", i, res, err)
		}
	}

	store, err := limiterstore.NewStoreWithOptions(c, limiter.StoreOptions{Prefix: "rl:limiter"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, true} {
		got, err := store.Get(ctx, "acl", limiter.Rate{Period: time.Minute, Limit: 1})
		if err != nil || got.Reached != want {
			t.Fatalf("ulule store call %d: %+v, %v", i, got, err)
		}
	}
	keys, err := admin.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "rl:") {
			t.Fatalf("key %q outside rl: (%v)", k, keys)
		}
	}
	if len(keys) != 4 {
		t.Fatalf("keys %v: want the typed calls' two, redis_rate's and the store's", keys)
	}
}

// TestFirstCallFindsTheLibrary: with only the library loaded, a client's
// first call, asked nothing before, is refused by the server as an
// unknown command and sent again as FCALL; the edition is then known.
func TestFirstCallFindsTheLibrary(t *testing.T) {
	ctx := context.Background()
	if err := valkeyLibrary.Client.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c := rl.New(valkeyLibrary.Client)
	limit := rl.SlideLimit{Limit: 1, Window: time.Minute}
	for i, want := range []bool{true, false} {
		d, err := c.Slide(ctx, "first", limit)
		if err != nil || d.Allowed != want {
			t.Fatalf("call %d: %+v, %v", i, d, err)
		}
	}
	if e, err := c.Edition(ctx); err != nil || e != rl.Library {
		t.Fatalf("edition %v, %v", e, err)
	}
	// RL.ALL too, on a fresh client.
	all, err := rl.New(valkeyLibrary.Client).All(ctx, rl.Clause{Key: "first", Limiter: limit})
	if err != nil || all.Allowed {
		t.Fatalf("RL.ALL on a fresh client: %+v, %v", all, err)
	}
}

// operationsDoc is docs/operations.md, where the function edition's
// recipe and the cluster clients' grants are.
func operationsDoc(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(servertest.Root(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// libraryRecipe is docs/operations.md's `ACL SETUSER ... +fcall ...` line.
func libraryRecipe(t *testing.T) []string {
	t.Helper()
	m := regexp.MustCompile(`> (ACL SETUSER \S+ [^\n]*\+fcall [^\n]*)`).FindStringSubmatch(operationsDoc(t))
	if m == nil {
		t.Fatal("docs/operations.md has no `ACL SETUSER ... +fcall ...` line")
	}
	return strings.Fields(m[1])
}

// clusterGrants is what docs/operations.md grants a cluster client (its
// line "- `+cluster|slots ...`: <client> ...").
func clusterGrants(t *testing.T, client string) []string {
	t.Helper()
	var found [][]string
	for _, m := range regexp.MustCompile("(?m)^- `(\\+[^`]+)`: (.*)$").FindAllStringSubmatch(operationsDoc(t), -1) {
		if strings.Contains(m[2], client) {
			found = append(found, strings.Fields(m[1]))
		}
	}
	if len(found) != 1 {
		t.Fatalf("docs/operations.md has %d lines of cluster grants for %s, not one", len(found), client)
	}
	return found[0]
}

// setUser sends an ACL line as written, and after the test deletes its user.
func setUser(ctx context.Context, t *testing.T, admin *redis.Client, line ...string) {
	t.Helper()
	args := make([]any, len(line))
	for i, a := range line {
		args[i] = a
	}
	if err := admin.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%v: %v", line, err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "acl", "deluser", line[2]) })
}

// limitAsTheUser runs every adapter through c: the typed calls (RL.SLIDE,
// RL.ALL), the redis_rate drop-in with its Reset and the ulule store (its
// Prefix under rl:) with its Reset, both deleting keys.
func limitAsTheUser(ctx context.Context, t *testing.T, c redis.UniversalClient, subjects int) {
	t.Helper()
	typed := rl.New(c)
	rate := redis_rate.NewLimiter(c)
	store, err := limiterstore.NewStoreWithOptions(c, limiter.StoreOptions{Prefix: "rl:limiter"})
	if err != nil {
		t.Fatal(err)
	}
	limit := rl.SlideLimit{Limit: 1, Window: time.Minute}
	for s := 0; s < subjects; s++ {
		key := fmt.Sprintf("acl%d", s)
		for i, want := range []bool{true, false} {
			if d, err := typed.Slide(ctx, "rl:go:"+key, limit); err != nil || d.Allowed != want {
				t.Fatalf("%s: typed call %d: %+v, %v", key, i, d, err)
			}
		}
		for i, want := range []int{1, 0} {
			if res, err := rate.Allow(ctx, key, redis_rate.PerMinute(1)); err != nil || res.Allowed != want {
				t.Fatalf("%s: redis_rate call %d: %+v, %v", key, i, res, err)
			}
		}
		if err := rate.Reset(ctx, key); err != nil {
			t.Fatalf("%s: redis_rate Reset: %v", key, err)
		}
		for i, want := range []bool{false, true} {
			if got, err := store.Get(ctx, key, limiter.Rate{Period: time.Minute, Limit: 1}); err != nil || got.Reached != want {
				t.Fatalf("%s: ulule store call %d: %+v, %v", key, i, got, err)
			}
		}
		if _, err := store.Reset(ctx, key, limiter.Rate{Period: time.Minute, Limit: 1}); err != nil {
			t.Fatalf("%s: ulule store Reset: %v", key, err)
		}
	}
	all, err := typed.All(ctx,
		rl.Clause{Key: "rl:{acl}:user", Limiter: limit},
		rl.Clause{Key: "rl:{acl}:org", Limiter: rl.BucketsLimit{Limit: 100, Window: time.Hour}})
	if err != nil || !all.Allowed {
		t.Fatalf("RL.ALL: %+v, %v", all, err)
	}
	if e, err := typed.Edition(ctx); err != nil || e != rl.Library {
		t.Fatalf("edition %v, %v", e, err)
	}
}

// TestLibraryACLRecipe: a user made by docs/operations.md's recipe for
// the function edition, as written, on Redis 7.0 and Valkey 9.1 with only
// the library (loaded by the default user), runs every adapter: the
// library's commands run as the caller, and the recipe names them all,
// DEL included (the Resets).
func TestLibraryACLRecipe(t *testing.T) {
	ctx := context.Background()
	redis7, err := servertest.Start(servertest.Options{Flavor: servertest.Redis7, Library: true})
	if err != nil {
		t.Fatal(err)
	}
	defer redis7.Stop()
	recipe := libraryRecipe(t)
	user, password := recipe[2], ""
	for _, a := range recipe {
		if strings.HasPrefix(a, ">") {
			password = a[1:]
		}
	}
	for name, s := range map[string]*servertest.Server{"redis7": redis7, "valkey9": valkeyLibrary} {
		t.Run(name, func(t *testing.T) {
			if err := s.Client.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			setUser(ctx, t, s.Client, recipe...)
			c := redis.NewClient(&redis.Options{Addr: s.Addr(), Username: user, Password: password})
			defer c.Close()
			limitAsTheUser(ctx, t, c, 2)
			if _, err := rl.New(c).Slide(ctx, "other:go:acl", rl.SlideLimit{Limit: 1, Window: time.Minute}); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
				t.Fatalf("a key outside rl: answered %v, not NOPERM", err)
			}
			keys, err := s.Client.Keys(ctx, "*").Result()
			if err != nil || len(keys) == 0 {
				t.Fatalf("keys %v, %v", keys, err)
			}
			for _, k := range keys {
				if !strings.HasPrefix(k, "rl:") {
					t.Fatalf("key %q outside rl: (%v)", k, keys)
				}
			}
		})
	}
}

// TestLibraryACLRecipeInCluster: the same user plus go-redis's cluster
// grants from docs/operations.md, made on every node of the three-node
// Valkey 9.1 cluster with the library, runs every adapter through a
// ClusterClient, each key on its own node; the nodes refuse nothing but
// CLIENT SETINFO (go-redis goes on without it).
func TestLibraryACLRecipeInCluster(t *testing.T) {
	ctx := context.Background()
	recipe := libraryRecipe(t)
	grants := clusterGrants(t, "go-redis")
	user, password := recipe[2], ""
	for _, a := range recipe {
		if strings.HasPrefix(a, ">") {
			password = a[1:]
		}
	}
	var addrs []string
	for _, n := range clusterLibrary.Nodes {
		if err := n.Client.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		setUser(ctx, t, n.Client, recipe...)
		setUser(ctx, t, n.Client, append([]string{"ACL", "SETUSER", user}, grants...)...)
		if err := n.Client.Do(ctx, "acl", "log", "reset").Err(); err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, n.Addr())
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: user, Password: password})
	defer c.Close()
	limitAsTheUser(ctx, t, c, 12)
	for i, n := range clusterLibrary.Nodes {
		if size, err := n.Client.DBSize(ctx).Result(); err != nil || size == 0 {
			t.Fatalf("node %d holds %d keys (%v): the keys did not spread", i, size, err)
		}
		log, err := n.Client.ACLLog(ctx, 1000).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, entry := range log {
			if entry.Object != "client|setinfo" {
				t.Fatalf("node %d refused %s (%s)", i, entry.Object, entry.Reason)
			}
		}
	}
}
