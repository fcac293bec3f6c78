package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"rl.invalid/rl-ratelimit/settings"
)

type redisStatus = redis.StatusCmd

// newRedis is the go-redis client REDIS_TYPE and REDIS_URL describe, as
// envoyproxy/ratelimit reads them: SINGLE host:port (or a unix socket
// path, REDIS_SOCKET_TYPE=unix), CLUSTER host:port,host:port,...,
// SENTINEL master,sentinel:port,...; REDIS_AUTH "password" or
// "user:password". No retries (MaxRetries -1): a write retried after a
// lost reply could count twice; Envoy's own failure_mode_deny decides
// what an error means.
func newRedis(s settings.Settings) (redis.UniversalClient, error) {
	user, pass := "", s.RedisAuth
	if u, p, found := strings.Cut(s.RedisAuth, ":"); found {
		user, pass = u, p
	}
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
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: parts[0], SentinelAddrs: parts[1:], SentinelPassword: s.RedisSentinelAuth,
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

// redisTLS is REDIS_TLS's configuration: the system's roots or
// REDIS_TLS_CACERT, a client certificate if given, and
// REDIS_TLS_SKIP_HOSTNAME_VERIFICATION, which checks the chain but not the
// name.
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
		tc.RootCAs = x509.NewCertPool()
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
