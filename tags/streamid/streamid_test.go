package streamid

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFormatAfter(t *testing.T) {
	for _, c := range []struct {
		id      string
		ms, seq uint64
		ok      bool
	}{
		{"1763800000000-0", 1763800000000, 0, true},
		{"5-18446744073709551615", 5, 1<<64 - 1, true},
		{"0-0", 0, 0, true},
		{"12", 0, 0, false},
		{"a-1", 0, 1, false},
		{"1-", 1, 0, false},
		{"-1-2", 0, 0, false},
	} {
		ms, seq, ok := Parse(c.id)
		require.Equal(t, c.ok, ok, c.id)
		if ok {
			require.Equal(t, [2]uint64{c.ms, c.seq}, [2]uint64{ms, seq}, c.id)
			require.Equal(t, c.id, Format(ms, seq))
		}
	}
	require.True(t, After("2-0", "1-9"))
	require.True(t, After("1-10", "1-9"), "by number, not by string")
	require.False(t, After("1-9", "1-9"))
	require.False(t, After("1-9", "1-10"))
}
