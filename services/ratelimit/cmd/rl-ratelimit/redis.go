package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"rl.invalid/rl-ratelimit/settings"
)

type redisStatus = redis.StatusCmd

// newRedis is the go-redis client REDIS_TYPE and REDIS_URL describe, as
// envoyproxy/ratelimit reads them: SINGLE host:port (or a unix socket
// path, REDIS_SOCKET_TYPE=unix), CLUSTER host:port,host:port,...,
// SENTINEL master,sentinel:port,... (Cluster and Sentinel always on TCP,
// whatever REDIS_SOCKET_TYPE says, as there); REDIS_AUTH for the data
// nodes and REDIS_SENTINEL_AUTH for the sentinels, each "password" or
// "user:password"; REDIS_TLS for both. No retries (MaxRetries -1): a
// write retried after a lost reply could count twice; Envoy's own
// failure_mode_deny decides what an error means.
func newRedis(s settings.Settings) (redis.UniversalClient, error) {
	user, pass := splitAuth(s.RedisAuth)
	var tc *tls.Config
	if s.RedisTLS {
		var err error
		if tc, err = redisTLS(s); err != nil {
			return nil, err
		}
	}
	switch s.RedisType {
	case "CLUSTER":
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: strings.Split(s.RedisURL, ","), Username: user, Password: pass, TLSConfig: tc,
			MaxRetries: -1, PoolSize: s.RedisPoolSize, DialTimeout: s.RedisTimeout, ReadTimeout: s.RedisTimeout, WriteTimeout: s.RedisTimeout,
		}), nil
	case "SENTINEL":
		parts := strings.Split(s.RedisURL, ",")
		if len(parts) < 2 {
			return nil, fmt.Errorf("REDIS_URL=%q with REDIS_TYPE=SENTINEL: expected <master name>,<sentinel host:port>,...", s.RedisURL)
		}
		sentinelUser, sentinelPass := splitAuth(s.RedisSentinelAuth)
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: parts[0], SentinelAddrs: parts[1:], SentinelUsername: sentinelUser, SentinelPassword: sentinelPass,
			Username: user, Password: pass, TLSConfig: tc,
			MaxRetries: -1, PoolSize: s.RedisPoolSize, DialTimeout: s.RedisTimeout, ReadTimeout: s.RedisTimeout, WriteTimeout: s.RedisTimeout,
		}), nil
	}
	if strings.HasPrefix(s.RedisURL, "redis://") || strings.HasPrefix(s.RedisURL, "rediss://") {
		o, err := redis.ParseURL(s.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		if s.RedisAuth != "" {
			o.Username, o.Password = user, pass
		}
		if tc != nil {
			o.TLSConfig = tc
		}
		o.MaxRetries, o.PoolSize, o.DialTimeout, o.ReadTimeout, o.WriteTimeout = -1, s.RedisPoolSize, s.RedisTimeout, s.RedisTimeout, s.RedisTimeout
		return redis.NewClient(o), nil
	}
	return redis.NewClient(&redis.Options{
		Network: s.RedisSocketType, Addr: s.RedisURL, Username: user, Password: pass, TLSConfig: tc,
		MaxRetries: -1, PoolSize: s.RedisPoolSize, DialTimeout: s.RedisTimeout, ReadTimeout: s.RedisTimeout, WriteTimeout: s.RedisTimeout,
	}), nil
}

// splitAuth reads REDIS_AUTH and REDIS_SENTINEL_AUTH: "user:password", or
// a password alone.
func splitAuth(auth string) (user, pass string) {
	if u, p, found := strings.Cut(auth, ":"); found {
		return u, p
	}
	return "", auth
}

// redisTLS is REDIS_TLS's configuration: the system's roots, and
// REDIS_TLS_CACERT's beside them (as envoyproxy/ratelimit adds it); a
// client certificate if given; and REDIS_TLS_SKIP_HOSTNAME_VERIFICATION,
// which checks the chain but not the name.
func redisTLS(s settings.Settings) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.RedisTLSCert != "" || s.RedisTLSKey != "" {
		cert, err := tls.LoadX509KeyPair(s.RedisTLSCert, s.RedisTLSKey)
		if err != nil {
			return nil, fmt.Errorf("REDIS_TLS_CLIENT_CERT/REDIS_TLS_CLIENT_KEY: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if s.RedisTLSCACert != "" {
		pem, err := os.ReadFile(s.RedisTLSCACert)
		if err != nil {
			return nil, fmt.Errorf("REDIS_TLS_CACERT: %w", err)
		}
		if tc.RootCAs, err = x509.SystemCertPool(); err != nil {
			tc.RootCAs = x509.NewCertPool() // no system roots (a scratch image): the CA alone
		}
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("REDIS_TLS_CACERT: no PEM certificate in %s", s.RedisTLSCACert)
		}
	}
	if s.RedisTLSSkipVerif {
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true
		tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			certs := make([]*x509.Certificate, len(raw))
			for i, b := range raw {
				c, err := x509.ParseCertificate(b)
				if err != nil {
					return err
				}
				certs[i] = c
			}
			if len(certs) == 0 {
				return fmt.Errorf("the server sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, c := range certs[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := certs[0].Verify(opts)
			return err
		}
	}
	return tc, nil
}

// maskURL hides REDIS_URL's credentials in messages.
func maskURL(u string) string {
	parts := strings.Split(u, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 && strings.Contains(p, "://") {
			parts[i] = p[:strings.Index(p, "://")+3] + "*****" + p[at:]
		}
	}
	return strings.Join(parts, ",")
}

// redisHint names the setting behind a failure to reach the server at
// start, where the error alone names only what the TLS or Redis library
// saw (the CA, the name, a client certificate, a password).
func redisHint(s settings.Settings, err error) string {
	var unknownCA x509.UnknownAuthorityError
	var wrongName x509.HostnameError
	var timeout interface{ Timeout() bool } // context.DeadlineExceeded, a net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &unknownCA) && s.RedisTLSCACert != "":
		return fmt.Sprintf(" (the server's certificate is not signed by REDIS_TLS_CACERT=%s)", s.RedisTLSCACert)
	case errors.As(err, &unknownCA):
		return " (the server's certificate is not signed by a CA of the system's: set REDIS_TLS_CACERT to its CA's PEM file)"
	case errors.As(err, &wrongName):
		return " (the server's certificate does not name the host in REDIS_URL: connect by a name it holds, or set " +
			"REDIS_TLS_SKIP_HOSTNAME_VERIFICATION=true, which still checks its CA)"
	case strings.Contains(msg, "tls: certificate required"): // the server's alert, a value Go does not export
		return " (the server requires a client certificate: set REDIS_TLS_CLIENT_CERT and REDIS_TLS_CLIENT_KEY)"
	case errors.As(err, &timeout) && timeout.Timeout() && s.RedisTLS:
		// A server without TLS on that port reads the handshake as a
		// command line that never ends, and answers nothing.
		return fmt.Sprintf(" (no answer within REDIS_TIMEOUT=%v: is that port TLS? REDIS_TLS=true to a port without TLS looks so)", s.RedisTimeout)
	case errors.Is(err, io.EOF) && !s.RedisTLS:
		return " (the server closed the connection: if that port is TLS, set REDIS_TLS=true)"
	case s.RedisType == "SENTINEL" && strings.Contains(msg, "sentinels") &&
		(strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH")):
		return " (the sentinels refused REDIS_SENTINEL_AUTH; REDIS_AUTH is for the primary and replicas)"
	case strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH"):
		return " (the server refused REDIS_AUTH)"
	}
	return ""
}

// redisLog writes go-redis's messages to the service's log.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
