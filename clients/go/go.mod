module github.com/tagq/tagq/clients/go

go 1.25.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/tagq/tagq/gen/tagq v0.0.0-00010101000000-000000000000
	github.com/tagq/tagq/internal/tagqdtest v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/otel v1.44.0
	go.opentelemetry.io/otel/trace v1.44.0
	go.uber.org/goleak v1.3.0
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260706201446-f0a921348800
	google.golang.org/grpc v1.84.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/metric v1.44.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)

// The stubs and the test harness (which builds tagqd from this checkout)
// are modules of this repository, used from the working tree.
replace (
	github.com/tagq/tagq/gen/tagq => ../../gen/tagq
	github.com/tagq/tagq/internal/tagqdtest => ../../internal/tagqdtest
)
