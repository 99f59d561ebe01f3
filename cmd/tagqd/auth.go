package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/access"
	"github.com/tagq/tagq/internal/durable"
)

// openAccess is the access store with --auth (nil without), with the
// bootstrap admin key of --admin-key-file or TAGQ_ADMIN_KEY set as the
// admin principal's.
func openAccess(ctx context.Context, c config, rdb redis.UniversalClient, acks *durable.Acks, log *slog.Logger) (*access.Access, error) {
	if !c.auth {
		return nil, nil
	}
	acc, err := access.New(access.Config{Client: rdb, Prefix: c.keyPrefix, Acks: acks})
	if err != nil {
		return nil, err
	}
	key, from, err := adminKey(c)
	if err != nil {
		return nil, err
	}
	if key == "" {
		log.Warn("authentication is on and no bootstrap admin key was given (--admin-key-file, TAGQ_ADMIN_KEY): only keys already issued work")
		return acc, nil
	}
	bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := acc.Bootstrap(bctx, key); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	log.Info("bootstrap admin key set", "principal", access.AdminPrincipal, "from", from)
	return acc, nil
}

// adminKey reads the bootstrap admin key: the file's content (trailing
// newline dropped), else TAGQ_ADMIN_KEY.
func adminKey(c config) (key, from string, err error) {
	if c.adminKeyFile != "" {
		b, err := os.ReadFile(c.adminKeyFile)
		if err != nil {
			return "", "", fmt.Errorf("--admin-key-file: %w", err)
		}
		return strings.TrimRight(string(b), "\r\n"), "--admin-key-file", nil
	}
	return os.Getenv("TAGQ_ADMIN_KEY"), "TAGQ_ADMIN_KEY", nil
}

// checkExposure refuses to serve a non-loopback address without --auth,
// unless --insecure says to.
func checkExposure(c config) error {
	if c.auth || c.insecure {
		return nil
	}
	for _, a := range []struct{ flag, addr string }{{"--grpc-addr", c.grpcAddr}, {"--http-addr", c.httpAddr}, {"--sqs-addr", c.sqsAddr}} {
		if a.addr != "" && !isLoopback(a.addr) {
			return fmt.Errorf("%s %s is not a loopback address and authentication is off: give --auth (with --admin-key-file or TAGQ_ADMIN_KEY), "+
				"or --insecure to let anyone who reaches it do anything", a.flag, a.addr)
		}
	}
	return nil
}

// isLoopback: the address binds loopback only (127.0.0.0/8, ::1 or
// localhost); an empty or unspecified host binds every interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

var errAdminKeyWithoutAuth = errors.New("--admin-key-file needs --auth")
