// Command rl-ratelimit-load is a gRPC load generator for Envoy's rate
// limit service: it sends ShouldRateLimit from -c workers for -d, each
// request with -n descriptors (key "user" with one of -keys values, or
// nested levels "l0".."l<n-1>" with -nested), and prints the requests per
// second, the share answered OVER_LIMIT and the errors. It talks to
// envoyproxy/ratelimit and rl-ratelimit alike (benches/envoy.sh runs both).
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	rlpb "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "the service's gRPC address")
	domain := flag.String("domain", "bench", "the request's domain")
	n := flag.Int("n", 1, "descriptors per request (keys d0, d1, ...)")
	keys := flag.Int("keys", 10000, "distinct values per descriptor")
	workers := flag.Int("c", 32, "concurrent workers")
	conns := flag.Int("conns", 4, "gRPC connections (workers share them round robin)")
	dur := flag.Duration("d", 5*time.Second, "how long to send")
	flag.Parse()

	var clients []pb.RateLimitServiceClient
	for i := 0; i < *conns; i++ {
		conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer conn.Close()
		clients = append(clients, pb.NewRateLimitServiceClient(conn))
	}
	// Each call has its own 5 s deadline; the run ends when -d has passed
	// (no call is cut short and counted as an error).
	end := time.Now().Add(*dur)
	var ok, over, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(c pb.RateLimitServiceClient) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for time.Now().Before(end) {
				req := &pb.RateLimitRequest{Domain: *domain}
				for i := 0; i < *n; i++ {
					req.Descriptors = append(req.Descriptors, &rlpb.RateLimitDescriptor{Entries: []*rlpb.RateLimitDescriptor_Entry{
						{Key: "d" + strconv.Itoa(i), Value: strconv.Itoa(r.IntN(*keys))}}})
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				resp, err := c.ShouldRateLimit(ctx, req)
				cancel()
				switch {
				case err != nil:
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				case resp.OverallCode == pb.RateLimitResponse_OVER_LIMIT:
					over.Add(1)
				default:
					ok.Add(1)
				}
			}
		}(clients[w%len(clients)])
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	total := ok.Load() + over.Load()
	fmt.Printf("requests_per_second=%.0f requests=%d over_limit=%d errors=%d seconds=%.1f\n",
		float64(total)/secs, total, over.Load(), failed.Load(), secs)
	if failed.Load() > 0 {
		fmt.Fprintf(os.Stderr, "first error: %v\n", firstErr.Load())
		os.Exit(1)
	}
}
