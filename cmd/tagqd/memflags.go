package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseMemoryFlags reads the memory watch's flags (see tags/redisstore/memwatch.go):
// a share of maxmemory, a byte limit for a Redis without maxmemory, and
// the interval between readings.
func (c *config) parseMemoryFlags(threshold, limit, interval string) error {
	t, err := strconv.ParseFloat(threshold, 64)
	if err != nil || t < 0 || t > 1 {
		return fmt.Errorf("--redis-memory-threshold: %q is not a share between 0 and 1 (0: no memory watch)", threshold)
	}
	c.memThreshold = t
	if c.memLimit, err = parseBytes(limit); err != nil {
		return fmt.Errorf("--redis-memory-limit: %w", err)
	}
	d, err := time.ParseDuration(interval)
	if err != nil || d < 100*time.Millisecond || d > time.Minute {
		return fmt.Errorf("--redis-memory-interval: %q is not a duration between 100ms and 1m", interval)
	}
	c.memInterval = d
	return nil
}

// memoryRatio is redisstore.Config.MemoryLimitRatio: negative turns the watch off.
func (c config) memoryRatio() float64 {
	if c.memThreshold == 0 {
		return -1
	}
	return c.memThreshold
}

// parseBytes reads a byte count, bare or with the suffix kb, mb or gb
// (powers of 1024, as in redis.conf).
func parseBytes(s string) (int64, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			v, mult = strings.TrimSpace(strings.TrimSuffix(v, suffix)), m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a byte count (e.g. 4294967296 or 4gb)", s)
	}
	return n * mult, nil
}
