// Package telemetry sets up OpenTelemetry tracing for a pactum process from
// the standard OTEL_* environment variables: an OTLP exporter over HTTP or
// gRPC behind a batching SDK tracer provider, installed as otel's global
// provider, which the core (task.Options.TracerProvider's default) and the
// runtimes' HTTP clients use. Tracing is off unless the environment asks
// for it; off, nothing is installed and the global provider stays a no-op
// (docs/observability.md, "Traces").
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Protocols of OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL this package speaks.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config is what the environment asked for.
type Config struct {
	// Enabled says whether spans are exported.
	Enabled bool
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC.
	Protocol string
}

// FromEnv reads the configuration from the environment, through lookup
// (os.LookupEnv in a process). Tracing is on when OTEL_TRACES_EXPORTER is
// "otlp", or when it is unset and an OTLP endpoint is
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); off
// when OTEL_SDK_DISABLED is "true", OTEL_TRACES_EXPORTER is "none", or
// nothing is set. Unlike the specification's default of "otlp", a process
// that was told nothing exports nothing: no spans sent to a localhost
// collector that is not there.
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	var c Config
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return c, nil
	}
	switch exp := strings.ToLower(get("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return c, nil
	case "":
		if get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return c, nil
		}
	case "otlp":
	default:
		return c, fmt.Errorf("OTEL_TRACES_EXPORTER: pactum exports traces with otlp (or none), not %q", exp)
	}
	c.Enabled = true
	c.Protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if c.Protocol == "" {
		c.Protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch c.Protocol {
	case "":
		c.Protocol = ProtocolHTTP
	case ProtocolHTTP, ProtocolGRPC:
	default:
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: pactum exports traces over %s or %s, not %q", ProtocolHTTP, ProtocolGRPC, c.Protocol)
	}
	return c, nil
}

// Setup configures tracing from the process's environment (FromEnv) and
// returns the function that flushes and stops it, to be called on the way
// out; with tracing off it installs nothing and shutdown does nothing.
// version is the service.version resource attribute; the service name is
// "pactum" unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names one.
func Setup(ctx context.Context, version string, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	cfg, err := FromEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	tp, err := NewProvider(ctx, cfg, version)
	if err != nil || tp == nil {
		return func(context.Context) error { return nil }, err
	}
	otel.SetTracerProvider(tp)
	if log != nil {
		log.Info("tracing: exporting spans over OTLP", "protocol", cfg.Protocol)
	}
	return func(ctx context.Context) error {
		if err := tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("tracing: flush spans: %w", err)
		}
		return nil
	}, nil
}

// NewProvider returns the SDK tracer provider cfg describes, exporting in
// batches to the OTLP endpoint of the environment's OTEL_EXPORTER_OTLP_*
// variables (endpoint, headers, timeout, certificates, compression, read
// by the exporters themselves), or nil when cfg is not enabled. The
// sampler and batch settings come from OTEL_TRACES_SAMPLER and OTEL_BSP_*.
func NewProvider(ctx context.Context, cfg Config, version string) (*sdktrace.TracerProvider, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch cfg.Protocol {
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx)
	case ProtocolHTTP, "":
		exp, err = otlptracehttp.New(ctx)
	default:
		err = fmt.Errorf("unknown protocol %q", cfg.Protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	// Later sources win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override the defaults.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "pactum"), attribute.String("service.version", version)),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
