// Command tagq is the command-line client of tagq.
//
//	tagq queue create orders --redrive-to orders-dlq --max-receives 5
//	tagq tag create orders billing
//	echo '{"id": 1}' | tagq send orders
//	tagq receive orders --tag billing --max 10
//	tagq tail orders --tag billing --delete
//	tagq dead orders-dlq
//
// Every command has --help. --addr (TAGQ_ADDR) names the tagqd gRPC
// address; --output json prints what the API returns. For a tagqd serving
// TLS, --ca (TAGQ_CA) names the CA file to verify it with, and --cert and
// --key (TAGQ_CERT, TAGQ_KEY) a client certificate when it requires one;
// --tls uses the system's CA certificates. --api-key (TAGQ_API_KEY) is the
// key for a tagqd with --auth. `tagq context set NAME --addr ...` saves
// these settings under a name in a config file, and `tagq context use NAME`
// or --context NAME (TAGQ_CONTEXT) picks them; a flag beats its variable,
// which beats the context.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code: 0 on success, 1
// when the server refused or failed, 2 on a usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cli := newCLI(stdin, stdout, stderr)
	root := cli.commands()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		where := cli.addr
		if cli.contextUsed != "" {
			where += " (context " + cli.contextUsed + ")"
		}
		fmt.Fprintln(stderr, "tagq:", explain(err, where, cli.usesTLS()))
		if isUsage(err) {
			return 2
		}
		return 1
	}
	return 0
}
