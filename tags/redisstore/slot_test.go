package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Redis Cluster runs a script only when all its KEYS hash to one slot, and
// miniredis (and a single-node Redis) cannot tell. slotHook fails a test on
// any EVAL/EVALSHA whose keys span slots, using Redis's CRC16 key slot.

func keySlot(key string) uint16 {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

type slotHook struct{ t testing.TB }

func (h slotHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h slotHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.check(cmd)
		return next(ctx, cmd)
	}
}

func (h slotHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.check(c)
		}
		return next(ctx, cmds)
	}
}

func (h slotHook) check(cmd redis.Cmder) {
	name := strings.ToLower(cmd.Name())
	if name != "eval" && name != "evalsha" {
		return
	}
	args := cmd.Args()
	n, _ := strconv.Atoi(fmt.Sprint(args[2]))
	var first string
	for i := 0; i < n; i++ {
		key := fmt.Sprint(args[3+i])
		if i == 0 {
			first = key
		} else if keySlot(key) != keySlot(first) {
			h.t.Errorf("script keys span cluster slots: %q (slot %d) and %q (slot %d)", first, keySlot(first), key, keySlot(key))
		}
	}
}

func TestKeySlotMatchesRedis(t *testing.T) {
	// Values from the Redis Cluster specification and CLUSTER KEYSLOT.
	require.EqualValues(t, 12739, keySlot("123456789")) // CRC16 0x31C3 % 16384
	require.Equal(t, keySlot("{user1000}.following"), keySlot("{user1000}.followers"))
	require.Equal(t, keySlot("foo"), keySlot("{foo}bar"))
	require.Equal(t, keySlot("tagq:{orders}:s"), keySlot("x:{orders}:t:billing:v"))
}
