package tagqdtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DeletePrefix deletes the keys under prefix+":" from the Redis at
// redisURL (redis://[user:password@]host:port[/db]), for tests that run
// tagqds with --key-prefix on a shared Redis. It speaks RESP itself, so
// that a client's tests need no Redis client library (and a user of the
// client does not inherit one).
func DeletePrefix(redisURL, prefix string) error {
	u, err := url.Parse(redisURL)
	if err != nil {
		return err
	}
	if u.Scheme != "redis" {
		return fmt.Errorf("DeletePrefix: %s: only redis:// URLs", redisURL)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	r := resp{w: conn, r: bufio.NewReader(conn)}
	if pw, ok := u.User.Password(); ok {
		if _, err := r.do("AUTH", u.User.Username(), pw); err != nil {
			return err
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if _, err := r.do("SELECT", db); err != nil {
			return err
		}
	}
	cursor := "0"
	for {
		reply, err := r.do("SCAN", cursor, "MATCH", prefix+":*", "COUNT", "1000")
		if err != nil {
			return err
		}
		page, ok := reply.([]any)
		if !ok || len(page) != 2 {
			return fmt.Errorf("SCAN: unexpected reply %v", reply)
		}
		cursor, _ = page[0].(string)
		if keys, _ := page[1].([]any); len(keys) > 0 {
			args := []string{"DEL"}
			for _, k := range keys {
				args = append(args, k.(string))
			}
			if _, err := r.do(args...); err != nil {
				return err
			}
		}
		if cursor == "0" {
			return nil
		}
	}
}

// resp is one connection's RESP2 exchange, one command at a time.
type resp struct {
	w net.Conn
	r *bufio.Reader
}

func (c resp) do(args ...string) (any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.w.Write([]byte(b.String())); err != nil {
		return nil, err
	}
	return c.read()
}

// read returns a simple or bulk string as a string, an integer as an
// int64, an array as []any, a null as nil, and an error reply as an error.
func (c resp) read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("RESP: empty line")
	}
	body := line[1:]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, errors.New(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		items := make([]any, n)
		for i := range items {
			if items[i], err = c.read(); err != nil {
				return nil, err
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("RESP: unexpected %q", line)
}
