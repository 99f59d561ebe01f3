package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBufferPool_SizesAndReuse(t *testing.T) {
	t.Parallel()
	var p bufferPool
	for _, n := range []int{0, 1, 512, 513, 1000, 4096, 4097, 1 << 20, 8 << 20, 8<<20 + 1} {
		b := p.Get(n)
		require.Len(t, *b, n)
		require.GreaterOrEqual(t, cap(*b), n)
		if n <= 8<<20 {
			require.Zero(t, cap(*b)&(cap(*b)-1), "class buffers have power-of-two capacity")
			require.LessOrEqual(t, cap(*b), max(2*n, 512), "at most twice the size asked")
		}
		p.Put(b)
	}
	// A buffer put back is handed out again for its class (sync.Pool may
	// drop it, so only check what comes back is usable).
	b := p.Get(3000)
	(*b)[0] = 7
	p.Put(b)
	c := p.Get(2049)
	require.Len(t, *c, 2049)
	require.Equal(t, 4096, cap(*c))
}
