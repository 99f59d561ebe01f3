// Command gencerts writes a test PKI into a directory, for the tests of
// clients in other languages: tagq-ca.pem (the CA), server.pem and
// server-key.pem (for 127.0.0.1, ::1 and localhost), client.pem and
// client-key.pem (a client certificate of the same CA).
//
//	go run github.com/tagq/tagq/internal/tagqdtest/gencerts DIR
package main

import (
	"fmt"
	"os"

	"github.com/tagq/tagq/internal/tagqdtest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gencerts DIR")
		os.Exit(2)
	}
	if _, err := tagqdtest.NewCerts(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gencerts:", err)
		os.Exit(1)
	}
}
