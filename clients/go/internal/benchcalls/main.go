// Command benchcalls writes the script call go-redis/redis_rate v10 makes
// for one Allow, for benches/callgrind.sh's redis_rate row: <out>/redis_rate.lua
// (the script, as the module in the Go module cache sends it) and
// <out>/redis_rate.args (numkeys, key, arguments, one a line). No server
// is reached: a hook records the EVAL and fails it.
//
//	go run ./internal/benchcalls <out>
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	redis_rate "github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

type recorder struct{ eval []any }

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (r *recorder) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(_ context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "eval" {
			r.eval = cmd.Args()
			return errors.New("recorded")
		}
		// EVALSHA first: answered as a server without the script would.
		return redis.Error(proto("NOSCRIPT No matching script."))
	}
}

type proto string

func (p proto) Error() string { return string(p) }
func (p proto) RedisError()   {}

func main() {
	out := os.Args[1]
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	rec := &recorder{}
	rdb.AddHook(rec)
	// benches/callgrind.sh's GCRA rows: 100 per hour, max_burst 10.
	limit := redis_rate.Limit{Rate: 100, Burst: 11, Period: time.Hour}
	_, _ = redis_rate.NewLimiter(rdb).Allow(context.Background(), "__rand_int__", limit)
	if len(rec.eval) < 4 {
		fmt.Fprintln(os.Stderr, "benchcalls: redis_rate sent no EVAL")
		os.Exit(1)
	}
	var args []string
	for _, a := range rec.eval[2:] {
		args = append(args, fmt.Sprint(a))
	}
	must(os.WriteFile(filepath.Join(out, "redis_rate.lua"), []byte(fmt.Sprint(rec.eval[1])), 0o644))
	must(os.WriteFile(filepath.Join(out, "redis_rate.args"), []byte(strings.Join(args, "\n")+"\n"), 0o644))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcalls:", err)
		os.Exit(1)
	}
}
