package sqs

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"strings"
)

// The checksums SQS answers and clients may verify (aws-sdk-go-v2 does
// MD5OfMessageBody and MD5OfBody by default, and fails the call on a
// mismatch).

// md5Hex is the hex MD5 of b (MD5OfMessageBody, MD5OfBody: of the body's
// UTF-8 bytes as sent and as delivered). It takes the bytes, not a string:
// the callers have them, and a string would be copied to be summed.
func md5Hex(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// md5OfAttributes is MD5OfMessageAttributes (and
// MD5OfMessageSystemAttributes): over the attributes in name order, each
// as its name, its data type (both with 4-byte big-endian length
// prefixes), a transport byte (1 for String and Number values, 2 for
// Binary) and its value with a length prefix. "" for no attributes.
func md5OfAttributes(attrs map[string]attrValue) string {
	if len(attrs) == 0 {
		return ""
	}
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	h := md5.New()
	var n [4]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, name := range names {
		a := attrs[name]
		put([]byte(name))
		put([]byte(a.DataType))
		if isBinaryType(a.DataType) {
			h.Write([]byte{2})
			put(a.BinaryValue)
		} else {
			h.Write([]byte{1})
			var s string
			if a.StringValue != nil {
				s = *a.StringValue
			}
			put([]byte(s))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// isBinaryType: Binary and Binary.<custom> carry BinaryValue.
func isBinaryType(dataType string) bool {
	return dataType == "Binary" || strings.HasPrefix(dataType, "Binary.")
}
