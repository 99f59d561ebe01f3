package receipt

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tagq/tagq/tags/streamid"
)

func TestHandleCodec_RoundTripAndTamper(t *testing.T) {
	c := NewCodec(Key{ID: "a", Key: []byte("0123456789abcdef0123456789abcdef")})
	for _, h := range []Handle{
		{Queue: "orders", Tag: "billing", ID: "1763800000000-0", Gen: 1, FirstMs: 1763800000123},
		{Queue: "q", Tag: "t", ID: "1763800000000-7", Gen: 4095, FirstMs: 1763799999000}, // clock went back
		{Queue: "q", Tag: "t", ID: "5-18446744073709551615", Gen: 2, FirstMs: 5},
	} {
		got, err := c.Decode(c.Encode(h))
		require.NoError(t, err)
		require.Equal(t, h, got)
	}
	s := c.Encode(Handle{Queue: "q", Tag: "t", ID: "1-1", Gen: 1, FirstMs: 2})
	for i := range s {
		b := []byte(s)
		b[i] ^= 1
		_, err := c.Decode(string(b))
		require.Error(t, err, "a changed handle must not decode (byte %d)", i)
	}
	other := NewCodec(Key{ID: "a", Key: []byte("another key, another tagq cluster")})
	_, err := other.Decode(s)
	require.Error(t, err, "a handle signed with another key")
}

// The codec's pooled MACs are safe to share (run with -race).
func TestHandleCodec_Concurrent(t *testing.T) {
	c := NewCodec(Key{ID: "k", Key: []byte("k")})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				h := Handle{Queue: "q", Tag: "t", ID: streamid.Format(uint64(1000+i), uint64(g)), Gen: i + 1, FirstMs: int64(2000 + i)}
				got, err := c.Decode(c.Encode(h))
				if err != nil || got != h {
					t.Errorf("round trip %v: %v, %v", h, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
