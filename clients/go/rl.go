// Package rl calls rl's commands (the RL.* module commands, or the same
// functions of rl's function library through FCALL) from go-redis v9, one
// command per call, with typed replies.
//
// The subpackages put rl under the limiters Go services already use:
// rl.invalid/rl/redis_rate (go-redis/redis_rate v10's API) and
// rl.invalid/rl/limiterstore (a ulule/limiter v3 Store).
package rl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Version is rl's release version, the same as the module's and the
// function library's.
const Version = "1.0.0"

// Edition is how a server runs rl.
type Edition int

const (
	// Module is the module: RL.* commands.
	Module Edition = iota + 1
	// Library is the function library: FCALL rl_*.
	Library
)

func (e Edition) String() string {
	switch e {
	case Module:
		return "module"
	case Library:
		return "function library"
	}
	return "unknown"
}

// ErrNotLoaded is returned (wrapped) when the server has neither the
// module nor the function library.
var ErrNotLoaded = errors.New("rl is not loaded: load the module (loadmodule /path/to/librl.so) " +
	"or the function library (FUNCTION LOAD with functions/rl.lua, on every primary)")

// Processor is what rl needs of a go-redis client: *redis.Client,
// *redis.ClusterClient, *redis.Ring and redis.UniversalClient all have it.
type Processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Client sends rl's commands in the edition the server runs, found once.
type Client struct {
	rdb Processor

	mu      sync.Mutex
	edition Edition
}

// New returns a Client over rdb. It asks nothing of the server until the
// first call (or Edition).
func New(rdb Processor) *Client {
	return &Client{rdb: rdb}
}

// NewWithEdition returns a Client that uses the given edition without
// asking the server.
func NewWithEdition(rdb Processor, e Edition) *Client {
	return &Client{rdb: rdb, edition: e}
}

// Edition finds (once; a failure is not remembered) which edition the
// server runs: the module where it is loaded, else the library.
func (c *Client) Edition(ctx context.Context) (Edition, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.edition != 0 {
		return c.edition, nil
	}
	info := redis.NewSliceCmd(ctx, "command", "info", "rl.throttle")
	if err := c.rdb.Process(ctx, info); err != nil {
		return 0, fmt.Errorf("rl: COMMAND INFO rl.throttle: %w", err)
	}
	if v := info.Val(); len(v) == 1 && v[0] != nil {
		c.edition = Module
		return Module, nil
	}
	version := redis.NewCmd(ctx, "fcall_ro", "rl_version", 0)
	err := c.rdb.Process(ctx, version)
	if err == nil {
		c.edition = Library
		return Library, nil
	}
	if text := strings.ToLower(err.Error()); strings.Contains(text, "function not found") ||
		strings.Contains(text, "unknown command") {
		return 0, fmt.Errorf("rl: %w", ErrNotLoaded)
	}
	return 0, fmt.Errorf("rl: FCALL_RO rl_version: %w", err)
}

// do sends one command. verb is the module command without "RL." (SLIDE,
// PEEK, ...); before, if set, is the limiter name RL.PEEK, RL.REFUND,
// RL.CHARGE, RL.BLOCK and RL.UNBLOCK take before the key.
func (c *Client) do(ctx context.Context, verb, before, key string, args []any) (*redis.Cmd, error) {
	e, err := c.Edition(ctx)
	if err != nil {
		return nil, err
	}
	var all []any
	var keyPos int8
	if e == Module {
		all = append(make([]any, 0, len(args)+3), "RL."+verb)
		if before != "" {
			all = append(all, before)
		}
		all = append(all, key)
		keyPos = int8(len(all) - 1)
	} else {
		fcall := "fcall"
		if verb == "PEEK" {
			fcall = "fcall_ro"
		}
		all = append(make([]any, 0, len(args)+5), fcall, "rl_"+strings.ToLower(verb), 1, key)
		if before != "" {
			all = append(all, before)
		}
		keyPos = 3
	}
	return c.send(ctx, append(all, args...), keyPos)
}

func (c *Client) send(ctx context.Context, args []any, keyPos int8) (*redis.Cmd, error) {
	cmd := redis.NewCmd(ctx, args...)
	// Cluster and Ring route by this position without COMMAND INFO.
	cmd.SetFirstKeyPos(keyPos)
	if err := c.rdb.Process(ctx, cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}

// Del deletes key: a limit starts afresh (redis_rate's and ulule's Reset).
func (c *Client) Del(ctx context.Context, key string) error {
	cmd := redis.NewIntCmd(ctx, "del", key)
	cmd.SetFirstKeyPos(1)
	return c.rdb.Process(ctx, cmd)
}
