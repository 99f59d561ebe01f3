package server

import (
	"math/bits"
	"sync"

	"google.golang.org/grpc/mem"
)

// bufferPool is gRPC's buffer pool for tagqd: buffers in power-of-two
// classes from 512 B to 8 MiB, larger ones allocated. gRPC's default pool
// zeroes every buffer it hands out, up to its class's capacity (8 % of
// tagqd's CPU under streaming W1); gRPC fills a buffer it reads a message
// into, and marshals over the one it writes from, so the zeroing protects
// nothing here.
type bufferPool struct {
	classes [15]sync.Pool // class i holds buffers of cap 512 << i
}

const minBufferClass = 9 // 512 B

var _ mem.BufferPool = (*bufferPool)(nil)

func class(n int) int {
	if n <= 1<<minBufferClass {
		return 0
	}
	return bits.Len(uint(n-1)) - minBufferClass
}

func (p *bufferPool) Get(n int) *[]byte {
	c := class(n)
	if c >= len(p.classes) {
		b := make([]byte, n)
		return &b
	}
	if v, ok := p.classes[c].Get().(*[]byte); ok {
		*v = (*v)[:n]
		return v
	}
	b := make([]byte, n, 1<<(c+minBufferClass))
	return &b
}

func (p *bufferPool) Put(b *[]byte) {
	c := cap(*b)
	if c < 1<<minBufferClass || c&(c-1) != 0 {
		return // not one of ours
	}
	i := bits.Len(uint(c)) - 1 - minBufferClass
	if i < len(p.classes) {
		*b = (*b)[:0]
		p.classes[i].Put(b)
	}
}
