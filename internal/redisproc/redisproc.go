// Package redisproc runs redis-server processes for tests that need real
// replication and real failures: a master and its replicas, a replication
// link that can be frozen, a SIGKILL. Tests only; nothing in tagqd uses
// it.
//
// A replica replicates through a Link, a TCP proxy in the test process.
// Freezing the link stops every byte from the master to the replica (and
// back) at once: what the master writes after the freeze never reaches the
// replica, whatever happens next. That makes a lost write deterministic,
// where pausing or stopping the replica would not (the kernel would still
// hand it what the master wrote, once it ran again).
package redisproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bin is the redis-server binary on PATH, or "" (the test should skip, or
// fail where it was asked for).
func Bin() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// Server is one redis-server process, on a loopback port of its own, with
// its files in a temporary directory. It is killed when the test ends.
type Server struct {
	Port   int
	Dir    string
	Client *redis.Client // for the test's own commands

	t      testing.TB
	bin    string
	args   []string
	cmd    *exec.Cmd
	exited chan error
	sync   string // WaitInSync's key ("": redisproc:sync)
}

// Start runs redis-server with args added to a test configuration (no
// RDB snapshots, no eviction, its log in Dir) and waits until it answers.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return startOn(t, FreePort(t), args...)
}

func startOn(t testing.TB, port int, args ...string) *Server {
	t.Helper()
	bin := Bin()
	if bin == "" {
		t.Fatal("no redis-server on PATH (apt-get install -y redis-server)")
	}
	s := &Server{Port: port, Dir: t.TempDir(), t: t, exited: make(chan error, 1)}
	s.Client = redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, DialTimeout: time.Second, Protocol: 2})
	all := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.Port), "--dir", s.Dir,
		"--logfile", "redis.log", "--save", "", "--maxmemory-policy", "noeviction",
		"--repl-diskless-sync-delay", "0"}, args...) // a replica syncs at once, not after 5 s
	s.bin, s.args = bin, all
	s.cmd = exec.Command(bin, all...)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	go func(cmd *exec.Cmd, exited chan error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	t.Cleanup(func() {
		s.Kill()
		_ = s.Client.Close()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			t.Logf("redis-server :%d log:\n%s", s.Port, tail(string(log), 3000))
		}
	})
	if err := s.waitUp(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// waitUp waits until the server answers PING (once its AOF, if any, is
// loaded).
func (s *Server) waitUp(within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.Client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("redis-server :%d exited at start: %v", s.Port, err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server :%d does not answer after %s: %v", s.Port, within, err)
		}
		time.Sleep(20 * time.Millisecond) // a process coming up
	}
}

// Kill ends the server with SIGKILL and waits for it to exit. Safe to call
// twice.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// StartReplica runs a redis-server that replicates master through a new
// Link and waits until it is in sync.
func StartReplica(t testing.TB, master *Server, args ...string) (*Server, *Link) {
	t.Helper()
	link := NewLink(t, master.Addr())
	host, port, _ := net.SplitHostPort(link.Addr())
	r := Start(t, append([]string{"--replicaof", host, port}, args...)...)
	if err := master.WaitInSync(context.Background(), 1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	return r, link
}

// WaitInSync waits until n replicas have everything the master has
// written: it writes a key of its own (in one of the master's slots, on a
// cluster) and WAITs for n replicas on the same connection. (Offsets read
// from INFO can look in sync before the master streams to a replica.)
func (s *Server) WaitInSync(ctx context.Context, n int, within time.Duration) error {
	conn := s.Client.Conn()
	defer conn.Close()
	if err := conn.Incr(ctx, s.syncKey()).Err(); err != nil {
		return fmt.Errorf("redis-server :%d: %w", s.Port, err)
	}
	got, err := conn.Wait(ctx, n, within).Result()
	if err != nil || got < int64(n) {
		info, _ := s.Client.Info(ctx, "replication").Result()
		return fmt.Errorf("redis-server :%d: %d of %d replicas in sync after %s (%v): %s", s.Port, got, n, within, err, info)
	}
	return nil
}

func (s *Server) syncKey() string {
	if s.sync == "" {
		return "redisproc:sync"
	}
	return s.sync
}

// Restart kills the server with SIGKILL and starts it again on the same
// port and directory with the same arguments (from its AOF, if it has
// one).
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	s.exited = make(chan error, 1)
	s.cmd = exec.Command(s.bin, s.args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	go func(cmd *exec.Cmd, exited chan error) { exited <- cmd.Wait() }(s.cmd, s.exited)
	if err := s.waitUp(20 * time.Second); err != nil {
		s.t.Fatal(err)
	}
}

// Promote makes a replica a master (REPLICAOF NO ONE), as a failover does.
func (s *Server) Promote(ctx context.Context) error {
	return s.Client.Do(ctx, "replicaof", "no", "one").Err()
}

// Replication is what INFO replication says of a master.
type Replication struct {
	Role      string
	Offset    int64 // master_repl_offset
	Connected int   // connected_slaves
	InSync    int   // online replicas whose offset is Offset
}

// ParseReplication reads INFO replication.
func ParseReplication(info string) Replication {
	var r Replication
	var offsets []int64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case k == "role":
			r.Role = v
		case k == "master_repl_offset":
			r.Offset, _ = strconv.ParseInt(v, 10, 64)
		case k == "connected_slaves":
			r.Connected, _ = strconv.Atoi(v)
		case strings.HasPrefix(k, "slave") && strings.Contains(v, "state=online"):
			for _, f := range strings.Split(v, ",") {
				if fk, fv, _ := strings.Cut(f, "="); fk == "offset" {
					o, _ := strconv.ParseInt(fv, 10, 64)
					offsets = append(offsets, o)
				}
			}
		}
	}
	for _, o := range offsets {
		if o >= r.Offset {
			r.InSync++
		}
	}
	return r
}

// Link is a TCP proxy to a Redis server that can be frozen.
type Link struct {
	t      testing.TB
	target string
	l      net.Listener
	frozen atomic.Int32 // 0 no, frozeAll, frozeReplication
	closed chan struct{}

	mu    sync.Mutex
	conns []*linkConn
	wg    sync.WaitGroup
}

const (
	frozeAll = 1 + iota
	frozeReplication
)

// linkConn is one connection through a link.
type linkConn struct {
	client, server net.Conn
	replication    atomic.Bool // the client sent REPLCONF or PSYNC: a replica's link
}

// NewLink listens on a loopback port and forwards each connection to
// target. It is closed when the test ends.
func NewLink(t testing.TB, target string) *Link {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &Link{t: t, target: target, l: l, closed: make(chan struct{})}
	k.wg.Add(1)
	go k.accept()
	t.Cleanup(k.Close)
	return k
}

// Addr is where the link listens.
func (k *Link) Addr() string { return k.l.Addr().String() }

// Port is the port the link listens on.
func (k *Link) Port() int { return k.l.Addr().(*net.TCPAddr).Port }

// Freeze stops the link: from now on no byte crosses it either way, and
// none read before but not yet written is written. The connections stay
// open (neither side sees the link fail) until Close.
func (k *Link) Freeze() { k.frozen.Store(frozeAll) }

// FreezeReplication freezes, as Freeze does, only the connections of
// replicas (those whose client sent REPLCONF or PSYNC); clients' commands
// go on.
func (k *Link) FreezeReplication() { k.frozen.Store(frozeReplication) }

// Close closes the link and every connection through it. Safe to call
// twice.
func (k *Link) Close() {
	select {
	case <-k.closed:
		return
	default:
	}
	close(k.closed)
	_ = k.l.Close()
	k.mu.Lock()
	for _, c := range k.conns {
		_ = c.client.Close()
		_ = c.server.Close()
	}
	k.mu.Unlock()
	k.wg.Wait()
}

func (k *Link) accept() {
	defer k.wg.Done()
	for {
		c, err := k.l.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", k.target, 5*time.Second)
		if err != nil {
			_ = c.Close()
			continue
		}
		lc := &linkConn{client: c, server: up}
		k.mu.Lock()
		k.conns = append(k.conns, lc)
		k.mu.Unlock()
		k.wg.Add(2)
		go k.pump(lc, up, c, true)  // client to server
		go k.pump(lc, c, up, false) // server to client
	}
}

// holds says whether the link holds what lc would carry now.
func (k *Link) holds(lc *linkConn) bool {
	switch k.frozen.Load() {
	case frozeAll:
		return true
	case frozeReplication:
		return lc.replication.Load()
	}
	return false
}

// pump copies from src to dst until either fails or the link holds the
// connection; then it keeps what it read and waits for Close. fromClient
// says src is the client's side, whose commands tell a replica's
// connection.
func (k *Link) pump(lc *linkConn, dst, src net.Conn, fromClient bool) {
	defer k.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if fromClient && !lc.replication.Load() {
				up := strings.ToUpper(string(buf[:n]))
				if strings.Contains(up, "REPLCONF") || strings.Contains(up, "PSYNC") {
					lc.replication.Store(true)
				}
			}
			if k.holds(lc) {
				<-k.closed
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}
			return
		}
	}
}

// Cluster is a Redis Cluster of masters, each with one replica. Each
// master announces the address of a Link (cluster-announce-port), so its
// clients and its replica reach it through the link, whose
// FreezeReplication cuts the replica off while clients go on.
type Cluster struct {
	Masters  []*Server
	Replicas []*Server
	Links    []*Link // Links[i] fronts Masters[i]
	IDs      []string
}

// StartCluster starts n masters and a replica of each, the slots split
// evenly among the masters, and waits until the cluster is ok and every
// replica in sync.
func StartCluster(t testing.TB, n int, args ...string) *Cluster {
	t.Helper()
	ctx := context.Background()
	c := &Cluster{}
	node := func(port int, extra ...string) *Server {
		all := append([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--cluster-announce-ip", "127.0.0.1"}, extra...)
		return startOn(t, port, append(all, args...)...)
	}
	for range n {
		port := clusterPort(t)
		link := NewLink(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		c.Masters = append(c.Masters, node(port, "--cluster-announce-port", strconv.Itoa(link.Port()),
			"--cluster-announce-bus-port", strconv.Itoa(port+10000)))
		c.Links = append(c.Links, link)
	}
	for range n {
		c.Replicas = append(c.Replicas, node(clusterPort(t)))
	}
	all := append(append([]*Server{}, c.Masters...), c.Replicas...)
	for _, s := range all[1:] {
		must(t, s.Client.Do(ctx, "cluster", "meet", "127.0.0.1", c.Masters[0].Port).Err())
	}
	per := 16384 / n
	for i, m := range c.Masters {
		lo, hi := i*per, (i+1)*per-1
		if i == n-1 {
			hi = 16383
		}
		must(t, m.Client.Do(ctx, "cluster", "addslotsrange", lo, hi).Err())
		id, err := m.Client.Do(ctx, "cluster", "myid").Text()
		must(t, err)
		c.IDs = append(c.IDs, id)
		// WaitInSync's key: one of this master's slots.
		for k := 0; m.sync == ""; k++ {
			key := fmt.Sprintf("redisproc:sync:%d", k)
			slot, err := m.Client.ClusterKeySlot(ctx, key).Result()
			must(t, err)
			if int(slot) >= lo && int(slot) <= hi {
				m.sync = key
			}
		}
	}
	waitFor(t, "every node to know every other", func() bool {
		for _, s := range all {
			if !strings.Contains(s.Client.ClusterInfo(ctx).Val(), fmt.Sprintf("cluster_known_nodes:%d", len(all))) {
				return false
			}
		}
		return true
	})
	for i, r := range c.Replicas {
		must(t, r.Client.Do(ctx, "cluster", "replicate", c.IDs[i]).Err())
	}
	waitFor(t, "the cluster to be ok", func() bool {
		for _, s := range all {
			if !strings.Contains(s.Client.ClusterInfo(ctx).Val(), "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	for _, m := range c.Masters {
		if err := m.WaitInSync(ctx, 1, 20*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// Seeds is the cluster's client addresses (the masters' links and the
// replicas), for a cluster client.
func (c *Cluster) Seeds() []string {
	var out []string
	for _, k := range c.Links {
		out = append(out, k.Addr())
	}
	for _, r := range c.Replicas {
		out = append(out, r.Addr())
	}
	return out
}

// MasterOf is the index of the master that holds key's slot.
func (c *Cluster) MasterOf(t testing.TB, key string) int {
	t.Helper()
	slot, err := c.Masters[0].Client.ClusterKeySlot(context.Background(), key).Result()
	must(t, err)
	return min(int(slot)/(16384/len(c.Masters)), len(c.Masters)-1)
}

// TakeOver kills master i and makes its replica the master of its slots
// (CLUSTER FAILOVER TAKEOVER: no vote, as an operator forces it), then
// waits until every live node agrees.
func (c *Cluster) TakeOver(t testing.TB, i int) {
	t.Helper()
	ctx := context.Background()
	c.Masters[i].Kill()
	must(t, c.Replicas[i].Client.Do(ctx, "cluster", "failover", "takeover").Err())
	rid, err := c.Replicas[i].Client.Do(ctx, "cluster", "myid").Text()
	must(t, err)
	waitFor(t, "the replica to be master of its slots on every node", func() bool {
		for j, s := range append(append([]*Server{}, c.Masters...), c.Replicas...) {
			if j == i {
				continue // the dead master
			}
			nodes, err := s.Client.ClusterNodes(ctx).Result()
			if err != nil || !strings.Contains(nodes, rid) {
				return false
			}
			for _, line := range strings.Split(nodes, "\n") {
				if strings.HasPrefix(line, rid+" ") && !strings.Contains(line, "master") {
					return false
				}
			}
			if !strings.Contains(s.Client.ClusterInfo(ctx).Val(), "cluster_state:ok") {
				return false
			}
		}
		return true
	})
}

// PlannedFailover makes master i's replica its master by a manual
// failover (CLUSTER FAILOVER: the master stops taking writes until the
// replica has them all, then they swap; nothing is lost). A manual
// failover that times out (an election that did not gather its votes in
// time, on a busy machine) is asked for again, up to three times.
func (c *Cluster) PlannedFailover(t testing.TB, i int) {
	t.Helper()
	ctx := context.Background()
	for range 3 {
		must(t, c.Replicas[i].Client.Do(ctx, "cluster", "failover").Err())
		deadline := time.Now().Add(10 * time.Second) // past the replica's own 5 s manual-failover timeout
		for time.Now().Before(deadline) {
			if strings.Contains(c.Replicas[i].Client.Info(ctx, "replication").Val(), "role:master") {
				return
			}
			time.Sleep(20 * time.Millisecond) // an election under way
		}
	}
	t.Fatalf("the replica of master %d did not take over in three manual failovers", i)
}

// clusterPort is a loopback port free together with the cluster bus port
// 10000 above it.
func clusterPort(t testing.TB) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if p+10000 > 65535 {
			p -= 20000
		}
		if p < 1024 {
			continue
		}
		a, errA := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		b, errB := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+10000)))
		if a != nil {
			_ = a.Close()
		}
		if b != nil {
			_ = b.Close()
		}
		if errA == nil && errB == nil {
			return p
		}
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond (a cluster converging) for up to 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // a cluster converging
	}
}

// FreePort is a loopback port nobody listens on just now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
