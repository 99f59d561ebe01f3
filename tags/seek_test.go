package tags

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCheckSeek(t *testing.T) {
	for _, c := range []struct {
		queue, tag string
		to         SeekTarget
		reason     string
		field      string
	}{
		{"q", "t", SeekTarget{Time: time.Unix(0, 0)}, "", ""},
		{"q", "t", SeekTarget{Time: time.Unix(-5, 0)}, "", ""},
		{"q", "t", SeekTarget{MessageID: "1700000000000-0"}, "", ""},
		{"q", "t", SeekTarget{MessageID: "5-18446744073709551615"}, "", ""},
		{"q", "t", SeekTarget{}, ReasonInvalidArgumentRange, "time"},
		{"q", "t", SeekTarget{Time: time.Unix(1, 0), MessageID: "1-0"}, ReasonInvalidArgumentRange, "message_id"},
		{"q", "t", SeekTarget{MessageID: "1-"}, ReasonInvalidArgumentRange, "message_id"},
		{"q", "t", SeekTarget{MessageID: "1-18446744073709551616"}, ReasonInvalidArgumentRange, "message_id"},
		{"q", "", SeekTarget{MessageID: "1-0"}, ReasonInvalidName, "name"},
		{"q{", "t", SeekTarget{MessageID: "1-0"}, ReasonInvalidName, "queue"},
	} {
		e := CheckSeek(c.queue, c.tag, c.to)
		if c.reason == "" {
			require.Nil(t, e, "%+v", c)
			continue
		}
		require.NotNil(t, e, "%+v", c)
		require.Equal(t, c.reason, e.Reason, "%+v", c)
		require.Equal(t, c.field, e.Field, "%+v", c)
	}
	e := MessageNotFound("q", "t", "1-0")
	require.Equal(t, KindNotFound, e.Kind)
	require.Equal(t, "message_id", e.Field)
	require.Equal(t, map[string]string{"queue": "q", "tag": "t", "message_id": "1-0"}, e.Metadata)
}
