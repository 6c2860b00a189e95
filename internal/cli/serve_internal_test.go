package cli

import (
	"testing"

	"github.com/pactum/pactum/config"
)

// TestSetListeners checks --listen and --grpc-listen against the
// configuration: an address the file gave only by default follows the
// flag, one it set stays.
func TestSetListeners(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, listen, grpcListen   string
		wantBase, wantGRPC, wantGRPCURL string
	}{
		{"no flags", "", "", "", "http://127.0.0.1:9000", "", ""},
		{"listen moves the default base URL", "", ":8080", "", "http://localhost:8080", "", ""},
		{"listen keeps a set base URL", "base_url: https://a.example.com\n", ":8080", "", "https://a.example.com", "", ""},
		{"grpc-listen turns gRPC on", "", "", "127.0.0.1:9101", "http://127.0.0.1:9000", "127.0.0.1:9101", "127.0.0.1:9101"},
		{"grpc-listen on all interfaces", "", "", ":9101", "http://127.0.0.1:9000", ":9101", "localhost:9101"},
		{"grpc-listen moves the default gRPC address", "grpc_listen: 127.0.0.1:9001\n", "", "127.0.0.1:9101", "http://127.0.0.1:9000", "127.0.0.1:9101", "127.0.0.1:9101"},
		{"grpc-listen keeps a set gRPC address", "grpc_listen: 127.0.0.1:9001\ngrpc_url: grpc.example.com:443\n", "", "127.0.0.1:9101", "http://127.0.0.1:9000", "127.0.0.1:9101", "grpc.example.com:443"},
	} {
		cfg, err := config.Parse([]byte(tc.src+"agents:\n  - {name: echo, type: echo}\n"), "x.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		setListeners(cfg, tc.listen, tc.grpcListen)
		if cfg.BaseURL != tc.wantBase || cfg.GRPCListen != tc.wantGRPC || cfg.GRPCURL != tc.wantGRPCURL {
			t.Errorf("%s: base_url %q, grpc_listen %q, grpc_url %q; want %q, %q, %q", tc.name, cfg.BaseURL, cfg.GRPCListen, cfg.GRPCURL, tc.wantBase, tc.wantGRPC, tc.wantGRPCURL)
		}
	}
}
