module rl.invalid/rl-ratelimit

go 1.26.0

require (
	github.com/envoyproxy/go-control-plane/envoy v1.32.4
	github.com/redis/go-redis/v9 v9.23.0
	google.golang.org/grpc v1.74.2
	google.golang.org/protobuf v1.36.10
	gopkg.in/yaml.v2 v2.4.0
	rl.invalid/rl v1.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/cncf/xds/go v0.0.0-20250501225837-2ac532fd4443 // indirect
	github.com/envoyproxy/protoc-gen-validate v1.2.1 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.40.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.25.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250528174236-200df99c418a // indirect
)

replace rl.invalid/rl => ../../clients/go
