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
	"log/slog"
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
// module nor the function library. It says how to load either, from a
// release (rl-<version>.lua) or from a checkout of rl.
var ErrNotLoaded = errors.New("rl is not loaded: the server has neither the module (RL.* commands) " +
	"nor the function library (FCALL rl_*); load the module (loadmodule /path/to/librl.so in the server's config, " +
	"or MODULE LOAD), or the library: redis-cli -x FUNCTION LOAD REPLACE < rl-" + Version + ".lua " +
	"(the release's file; from a checkout of rl, functions/rl.lua or make load-functions), on every primary of a cluster")

// Processor is what rl needs of a go-redis client: *redis.Client,
// *redis.ClusterClient, *redis.Ring and redis.UniversalClient all have it.
type Processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Client sends rl's commands in the edition the server runs: found at the
// first call, and found again when the server answers that it is gone (a
// server restarted with the other edition under a running app).
type Client struct {
	rdb Processor

	mu      sync.Mutex
	edition Edition
	finding *finding // the call finding the edition, while it is unknown
	told    bool     // logged that rl is not loaded, since an edition was last found
}

// finding is one call's look for the edition, which the calls that need it
// meanwhile wait for: a burst of first calls sends one probe.
type finding struct {
	done chan struct{}
	err  error // why it found none
}

// New returns a Client over rdb. It asks nothing of the server until the
// first call (or Edition).
func New(rdb Processor) *Client {
	return &Client{rdb: rdb}
}

// NewWithEdition returns a Client that uses the given edition without
// asking the server (until the server answers that it is not there).
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
	c.edition, c.told = e, false
}

// forget drops e after the server answered that it is not there, unless
// another call has already found the edition again.
func (c *Client) forget(e Edition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.edition == e {
		c.edition = 0
	}
}

// current is the known edition. While it is unknown, the first call to
// ask finds it (lead is its finding, to end with done); the others wait
// for that call and take what it found, its ErrNotLoaded too. When it
// found nothing for a reason of its own (NOPERM on its key, a lost
// connection), they go on each with its own call, leading nothing.
func (c *Client) current(ctx context.Context) (e Edition, lead *finding, err error) {
	c.mu.Lock()
	if c.edition != 0 {
		defer c.mu.Unlock()
		return c.edition, nil, nil
	}
	f := c.finding
	if f == nil {
		lead = &finding{done: make(chan struct{})}
		c.finding = lead
		c.mu.Unlock()
		return 0, lead, nil
	}
	c.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return 0, nil, ctx.Err()
	}
	if e := c.known(); e != 0 {
		return e, nil, nil
	}
	if errors.Is(f.err, ErrNotLoaded) {
		return 0, nil, f.err
	}
	return 0, nil, nil
}

// done ends the leading call's finding.
func (c *Client) done(f *finding, e Edition, err error) {
	c.mu.Lock()
	if c.finding == f {
		c.finding = nil
	}
	if e == 0 {
		f.err = err
	}
	c.mu.Unlock()
	close(f.done)
}

// gone reports whether err is the server's answer that edition e is not
// there: the module's command unknown, or the library's function (or
// FCALL itself).
func gone(err error, e Edition) bool {
	var reply redis.Error
	if err == nil || !errors.As(err, &reply) {
		return false
	}
	text := strings.ToLower(err.Error())
	if e == Module {
		return strings.Contains(text, "unknown command")
	}
	return strings.Contains(text, "function not found") || strings.Contains(text, "unknown command")
}

// line is a command and where its key is (Cluster and Ring route by it
// without asking COMMAND INFO).
type line struct {
	args   []any
	keyPos int8
}

// call sends the command build(e) makes for the server's edition. When
// the server answers that this edition is gone, the edition is found
// again (once for all the calls that met that answer) and the command
// sent again in it.
func (c *Client) call(ctx context.Context, build func(Edition) line, probe bool) (*redis.Cmd, Edition, error) {
	e, lead, err := c.current(ctx)
	if err != nil {
		return nil, 0, err
	}
	if e != 0 {
		cmd, err := c.send(ctx, build(e))
		if !gone(err, e) {
			return cmd, e, err
		}
		c.forget(e)
		if e, lead, err = c.current(ctx); err != nil {
			return nil, 0, err
		}
		if e != 0 {
			cmd, err := c.send(ctx, build(e))
			return cmd, e, err
		}
	}
	cmd, e, err := c.find(ctx, build, probe)
	if lead != nil {
		c.done(lead, e, err)
	}
	return cmd, e, err
}

// find sends the module's command while the edition is unknown: any
// reply, or any error of the module's own (a bad argument, WRONGTYPE),
// shows the module is there; "unknown command" shows it is not, and then
// the library is asked for (FCALL_RO rl_version 0) and, if loaded, its
// line is sent to it (unless probe: the question was only which edition).
// Nothing else is sent: COMMAND, which the README's ACL recipe does not
// grant, never is. NOPERM and connection errors are returned as they are,
// the edition still unknown.
func (c *Client) find(ctx context.Context, build func(Edition) line, probe bool) (*redis.Cmd, Edition, error) {
	cmd, err := c.send(ctx, build(Module))
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
			return nil, 0, c.notLoaded()
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

// notLoaded is the error every call returns while the server has neither
// edition; the first (until an edition is found again) is also logged
// (slog's default logger), so the log says once, not per call, what to
// load and how.
func (c *Client) notLoaded() error {
	err := fmt.Errorf("rl: %w", ErrNotLoaded)
	c.mu.Lock()
	tell := !c.told
	c.told = true
	c.mu.Unlock()
	if tell {
		slog.Warn(err.Error())
	}
	return err
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
