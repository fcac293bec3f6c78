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

// ProbeKey is the key Edition reads through rl, under rl: so that a user
// granted only rl's commands and keys (the README's ACL recipe,
// +@ratelimit ~rl:*) may read it. It is never written.
const ProbeKey = "rl:probe"

// Edition finds (once; a failure is not remembered) which edition the
// server runs: the module where it is loaded, else the library. It reads
// ProbeKey with RL.PEEK SLIDE, then asks FCALL_RO rl_version 0. Calls need
// not ask first: the first call finds the edition by its own command.
func (c *Client) Edition(ctx context.Context) (Edition, error) {
	if e := c.known(); e != 0 {
		return e, nil
	}
	peek := []any{"RL.PEEK", "SLIDE", ProbeKey, 1, 1000}
	_, e, err := c.call(ctx, func(Edition) line { return line{peek, 2} }, true)
	if e != 0 {
		// An error of rl's own (ProbeKey holding another kind of key)
		// still showed the module.
		return e, nil
	}
	return 0, err
}

func (c *Client) known() Edition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.edition
}

func (c *Client) found(e Edition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.edition = e
}

// line is a command and where its key is (Cluster and Ring route by it
// without asking COMMAND INFO).
type line struct {
	args   []any
	keyPos int8
}

// call sends the command build(e) makes for the server's edition. While
// the edition is unknown it sends the module's command: any reply, or any
// error of the module's own (a bad argument, WRONGTYPE), shows the module
// is there; "unknown command" shows it is not, and then the library is
// asked for (FCALL_RO rl_version 0) and, if loaded, its line is sent to it
// (unless probe: the question was only which edition). Nothing else is
// sent: COMMAND, which the README's ACL recipe does not grant, never is.
// NOPERM and connection errors are returned as they are, the edition still
// unknown.
func (c *Client) call(ctx context.Context, build func(Edition) line, probe bool) (*redis.Cmd, Edition, error) {
	e := c.known()
	if e == Library {
		cmd, err := c.send(ctx, build(Library))
		return cmd, e, err
	}
	cmd, err := c.send(ctx, build(Module))
	if e == Module {
		return cmd, e, err
	}
	if err != nil {
		var reply redis.Error
		if !errors.As(err, &reply) || strings.HasPrefix(err.Error(), "NOPERM") {
			return nil, 0, err
		}
		if strings.Contains(strings.ToLower(err.Error()), "unknown command") {
			return c.library(ctx, build, probe)
		}
	}
	c.found(Module)
	return cmd, Module, err
}

// library asks whether the function library is loaded (the module is
// not), and if so sends line to it.
func (c *Client) library(ctx context.Context, build func(Edition) line, probe bool) (*redis.Cmd, Edition, error) {
	version := redis.NewCmd(ctx, "fcall_ro", "rl_version", 0)
	if err := c.rdb.Process(ctx, version); err != nil {
		if text := strings.ToLower(err.Error()); strings.Contains(text, "function not found") ||
			strings.Contains(text, "unknown command") {
			return nil, 0, fmt.Errorf("rl: %w", ErrNotLoaded)
		}
		return nil, 0, fmt.Errorf("rl: FCALL_RO rl_version: %w", err)
	}
	c.found(Library)
	if probe {
		return nil, Library, nil
	}
	cmd, err := c.send(ctx, build(Library))
	return cmd, Library, err
}

// do sends one command. verb is the module command without "RL." (SLIDE,
// PEEK, ...); before, if set, is the limiter name RL.PEEK, RL.REFUND,
// RL.CHARGE, RL.BLOCK and RL.UNBLOCK take before the key.
func (c *Client) do(ctx context.Context, verb, before, key string, args []any) (*redis.Cmd, error) {
	cmd, _, err := c.call(ctx, func(e Edition) line {
		var all []any
		if e == Module {
			all = append(make([]any, 0, len(args)+3), "RL."+verb)
			if before != "" {
				all = append(all, before)
			}
			all = append(all, key)
			keyPos := int8(len(all) - 1)
			return line{append(all, args...), keyPos}
		}
		fcall := "fcall"
		if verb == "PEEK" {
			fcall = "fcall_ro"
		}
		all = append(make([]any, 0, len(args)+5), fcall, "rl_"+strings.ToLower(verb), 1, key)
		if before != "" {
			all = append(all, before)
		}
		return line{append(all, args...), 3}
	}, false)
	return cmd, err
}

func (c *Client) send(ctx context.Context, l line) (*redis.Cmd, error) {
	cmd := redis.NewCmd(ctx, l.args...)
	// Cluster and Ring route by this position without COMMAND INFO.
	cmd.SetFirstKeyPos(l.keyPos)
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
