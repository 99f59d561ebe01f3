package sqs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func str(s string) *string { return &s }

// Checksums of attributes published with SQS's documentation and other
// SQS implementations' tests (not computed by this package), so a wrong
// reading of the algorithm fails here.
func TestMD5OfAttributes_PublishedValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attrs map[string]attrValue
		want  string
	}{
		// SQS developer guide's example.
		{map[string]attrValue{"SellerName": {DataType: "String", StringValue: str("Example Store")}}, "cd28f3b68aeee4b2eac9c66f2f694b58"},
		// A Number attribute (localstack's test).
		{map[string]attrValue{"timestamp": {DataType: "Number", StringValue: str("1493147359900")}}, "235c5c510d26fb653d073faed50ae77c"},
		// Two attributes, out of name order (sqslite's test).
		{map[string]attrValue{
			"ordinal":  {DataType: "Number", StringValue: str("1")},
			"category": {DataType: "String", StringValue: str("test")},
		}, "d21ae90c49061e927f57df5f5d72be1f"},
	} {
		require.Equal(t, tc.want, md5OfAttributes(tc.attrs), "%v", tc.attrs)
	}
	require.Equal(t, "", md5OfAttributes(nil))
	require.Equal(t, "5d41402abc4b2a76b9719d911017c592", md5Hex([]byte("hello")))
}
