package rl_test

import (
	"context"
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
