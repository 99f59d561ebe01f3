package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// markShort marks n short and starts its probe, unless one runs or the
// Acks is closed.
func (a *Acks) markShort(n *node) {
	if n.short.Swap(true) {
		return
	}
	a.log.Warn("Redis master is short of replicas: writes fail until they are back",
		"addr", n.addr(), "replicas_wanted", a.Replicas())
	a.startProbe(n)
}

func (a *Acks) startProbe(n *node) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped || n.probing.Swap(true) {
		return
	}
	a.done.Add(1)
	go a.probe(n)
}

// probe reads n's INFO replication until enough online replicas have
// acknowledged what the master had written when the probe began (so the
// write whose wait failed): a replica that is connected but frozen does
// not count; one that recovered, or a new one in sync, does. A master that
// restarted (another replication id, or an offset below the one noted)
// notes its offset again.
func (a *Acks) probe(n *node) {
	defer a.done.Done()
	var need int64 = -1
	var replid string
	t := time.NewTicker(a.cfg.ProbeInterval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), a.cfg.ProbeInterval+time.Second)
		info, err := n.cl.Info(ctx, "replication").Result()
		cancel()
		if err == nil {
			r := parseReplication(info)
			switch {
			case need < 0 || r.replid != replid || r.offset < need:
				need, replid = r.offset, r.replid
			case r.master && r.caughtUp(need) >= a.Replicas():
				// probing first: a markShort that sees short cleared may
				// start the next probe.
				n.probing.Store(false)
				n.short.Store(false)
				a.log.Info("Redis master has its replicas again: writes go on", "addr", n.addr(), "replicas", r.caughtUp(need))
				if n.short.Load() { // marked short again meanwhile: keep probing
					a.startProbe(n)
				}
				return
			}
		}
		select {
		case <-a.stop:
			n.probing.Store(false)
			return
		case <-t.C:
		}
	}
}

// autoLoop raises Auto's requirement to one replica once a master has one.
func (a *Acks) autoLoop() {
	defer a.done.Done()
	if a.want.Load() > 0 {
		a.log.Info("acknowledged writes wait for 1 replica (--ack-replicas auto: a master has one)")
		return
	}
	a.log.Info("acknowledged writes wait for no replica (--ack-replicas auto: no master has one yet)")
	t := time.NewTicker(a.cfg.AutoCheck)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, err := a.mostReplicas(ctx)
		cancel()
		if err == nil && n > 0 {
			a.want.Store(1)
			a.log.Info("a Redis master has a replica now: acknowledged writes wait for 1 replica (--ack-replicas auto)")
			return
		}
	}
}

// mostReplicas is the most replicas any master has connected. A server
// whose INFO replication is an error reply (miniredis has none) has none;
// one that refuses INFO to the ACL user (NOPERM) is an error.
func (a *Acks) mostReplicas(ctx context.Context) (int, error) {
	most := 0
	read := func(ctx context.Context, cl *redis.Client) error {
		info, err := cl.Info(ctx, "replication").Result()
		if err != nil {
			var rerr redis.Error
			if errors.As(err, &rerr) && !redis.HasErrorPrefix(err, "NOPERM") {
				return nil
			}
			return err
		}
		if r := parseReplication(info); r.master && r.connected > most {
			most = r.connected
		}
		return nil
	}
	switch c := a.client.(type) {
	case *redis.Client:
		return most, read(ctx, c)
	case *redis.ClusterClient:
		var mu sync.Mutex
		err := c.ForEachMaster(ctx, func(ctx context.Context, cl *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return read(ctx, cl)
		})
		return most, err
	}
	return 0, fmt.Errorf("durable: a %T cannot be read", a.client)
}

// replication is what INFO replication says of a server.
type replication struct {
	master    bool
	replid    string  // master_replid
	connected int     // connected_slaves
	offset    int64   // master_repl_offset
	online    []int64 // the offsets the online replicas acknowledged
}

// caughtUp is how many online replicas acknowledged offset.
func (r replication) caughtUp(offset int64) int {
	n := 0
	for _, o := range r.online {
		if o >= offset {
			n++
		}
	}
	return n
}

// parseReplication reads INFO replication's "role", "master_replid",
// "connected_slaves", "master_repl_offset" and
// "slaveN:ip=…,port=…,state=online,offset=…,lag=0" lines.
func parseReplication(info string) replication {
	var r replication
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case k == "role":
			r.master = v == "master"
		case k == "master_replid":
			r.replid = v
		case k == "connected_slaves":
			r.connected, _ = strconv.Atoi(v)
		case k == "master_repl_offset":
			r.offset, _ = strconv.ParseInt(v, 10, 64)
		case strings.HasPrefix(k, "slave") && strings.Contains(v, "state=online"):
			for _, f := range strings.Split(v, ",") {
				if fk, fv, _ := strings.Cut(f, "="); fk == "offset" {
					o, _ := strconv.ParseInt(fv, 10, 64)
					r.online = append(r.online, o)
				}
			}
		}
	}
	return r
}
