package telemetry_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/pactum/pactum/internal/telemetry"
)

func TestFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    telemetry.Config
		wantErr bool
	}{
		{name: "nothing set: off", env: nil, want: telemetry.Config{}},
		{name: "endpoint turns it on", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: telemetry.Config{Enabled: true, Protocol: "http/protobuf"}},
		{name: "traces endpoint turns it on", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, want: telemetry.Config{Enabled: true, Protocol: "http/protobuf"}},
		{name: "otlp without endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: telemetry.Config{Enabled: true, Protocol: "http/protobuf"}},
		{name: "none wins over an endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: telemetry.Config{}},
		{name: "sdk disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, want: telemetry.Config{}},
		{name: "grpc", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: telemetry.Config{Enabled: true, Protocol: "grpc"}},
		{name: "traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, want: telemetry.Config{Enabled: true, Protocol: "http/protobuf"}},
		{name: "http/json refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: true},
		{name: "console refused", env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := telemetry.FromEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// grpcCollector is an OTLP/gRPC trace receiver.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.names = append(c.names, s.Name)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// export makes one span with a provider from the environment and shuts
// the provider down (which flushes it).
func export(t *testing.T, protocol string) {
	t.Helper()
	cfg, err := telemetry.FromEnv(func(k string) (string, bool) {
		if k == "OTEL_TRACES_EXPORTER" {
			return "otlp", true
		}
		if k == "OTEL_EXPORTER_OTLP_PROTOCOL" {
			return protocol, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := telemetry.NewProvider(context.Background(), cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "hello "+protocol)
	span.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestExportGRPC(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &grpcCollector{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, col)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	export(t, telemetry.ProtocolGRPC)
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.names) != 1 || col.names[0] != "hello grpc" {
		t.Errorf("collector got %q, want the one span", col.names)
	}
}

func TestExportHTTP(t *testing.T) {
	var mu sync.Mutex
	var names []string
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(col.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	export(t, telemetry.ProtocolHTTP)
	mu.Lock()
	defer mu.Unlock()
	if len(names) != 1 || names[0] != "hello http/protobuf" {
		t.Errorf("collector got %q, want the one span", names)
	}
}
