package tags

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// S14: an attribute with no value (neither a string nor bytes) is refused
// per message, naming it; an empty string and empty bytes are values.
func TestS14_AttributeWithoutAValueIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		res, err := b.s.Send(b.ctx, "q", []OutMessage{
			{Body: []byte("x"), Attributes: map[string]Attribute{"ok": {String: "v"}, "novalue": MissingValue}},
			{Body: []byte("y"), Attributes: map[string]Attribute{"s": {String: ""}, "b": {Binary: true, Bytes: []byte{}}}},
		})
		require.NoError(t, err)
		requireInvalid(t, res[0].Err, ReasonInvalidAttribute, "attributes[novalue]")
		require.NoError(t, res[1].Err)
		got := b.receive("q", "", 10)
		require.Len(t, got, 1, "only the message whose attributes all have values was stored")
		require.Equal(t, map[string]Attribute{"s": {String: ""}, "b": {Binary: true, Bytes: []byte{}}}, got[0].Attributes)
	})
}
