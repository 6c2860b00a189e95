package config

import (
	"cmp"
	"net"
	"strings"
)

// Empty returns a configuration with every default applied and no agents,
// for programs that add their agents in code.
func Empty() *Config {
	c := &Config{}
	c.setDefaults(false)
	return c
}

// NewAgent returns an agent named name with every default applied (action,
// timeout, retry, media types and the default skill, whose description is
// the name: set Skills again after changing Description). It has no Type
// and no Settings.
func NewAgent(name string) Agent {
	a := Agent{Name: name, index: -1}
	a.setDefaults(false)
	return a
}

// DefaultBaseURL is the base URL used when none is configured: "http://" +
// listen, with "localhost" in place of an empty or unspecified host (":9000",
// "0.0.0.0:9000"), which clients cannot connect to.
func DefaultBaseURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return "http://" + net.JoinHostPort("localhost", port)
	}
	return "http://" + listen
}

// DefaultGRPCURL is the address written into the cards' gRPC interface
// when grpc_url is not set: grpc_listen, with "localhost" in place of an
// empty or unspecified host, as DefaultBaseURL does.
func DefaultGRPCURL(grpcListen string) string {
	return strings.TrimPrefix(DefaultBaseURL(grpcListen), "http://")
}

// setDefaults fills every unset field of c except DefaultAgent, which needs
// the agents. ttlSet says whether IdempotencyTTL was given (zero is a value:
// disabled).
func (c *Config) setDefaults(ttlSet bool) {
	c.Listen = cmp.Or(c.Listen, DefaultListen)
	c.BaseURL = cmp.Or(c.BaseURL, DefaultBaseURL(c.Listen))
	if c.GRPCListen != "" {
		c.GRPCURL = cmp.Or(c.GRPCURL, DefaultGRPCURL(c.GRPCListen))
	}
	c.Store = cmp.Or(c.Store, DefaultStore)
	c.Log.Level = cmp.Or(c.Log.Level, DefaultLogLevel)
	c.Auth = cmp.Or(c.Auth, AuthNone)
	c.Log.Format = cmp.Or(c.Log.Format, DefaultLogFormat)
	if c.Workers.All == 0 {
		c.Workers.Processes = cmp.Or(c.Workers.Processes, DefaultWorkers)
		c.Workers.Others = cmp.Or(c.Workers.Others, DefaultOtherWorkers)
	}
	c.Lease.Duration = cmp.Or(c.Lease.Duration, DefaultLease)
	if !ttlSet {
		c.IdempotencyTTL.Duration = DefaultIdempotencyTTL
	}
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.HTTP.ReadTimeout.Duration = cmp.Or(c.HTTP.ReadTimeout.Duration, DefaultReadTimeout)
	c.HTTP.WriteTimeout.Duration = cmp.Or(c.HTTP.WriteTimeout.Duration, DefaultWriteTimeout)
	c.HTTP.IdleTimeout.Duration = cmp.Or(c.HTTP.IdleTimeout.Duration, DefaultIdleTimeout)
	c.HTTP.MaxConnections = cmp.Or(c.HTTP.MaxConnections, DefaultMaxConnections)
	c.Push.MaxAttempts = cmp.Or(c.Push.MaxAttempts, DefaultPushAttempts)
	c.Push.Timeout.Duration = cmp.Or(c.Push.Timeout.Duration, DefaultPushTimeout)
	c.Policy.Version = cmp.Or(c.Policy.Version, DefaultPolicyVersion)
	c.MCP.WaitTimeout.Duration = cmp.Or(c.MCP.WaitTimeout.Duration, DefaultMCPWaitTimeout)
	c.Audit.Anchor.Interval.Duration = cmp.Or(c.Audit.Anchor.Interval.Duration, DefaultAnchorInterval)
	if c.Migrate == nil {
		migrate := true
		c.Migrate = &migrate
	}
}

// setDefaults fills every unset field of a. jitterSet says whether
// Retry.Jitter was given (zero is a value: no jitter).
func (a *Agent) setDefaults(jitterSet bool) {
	a.Action = cmp.Or(a.Action, a.Name)
	a.Timeout.Duration = cmp.Or(a.Timeout.Duration, DefaultAgentTimeout)
	r := &a.Retry
	r.MaxAttempts = cmp.Or(r.MaxAttempts, DefaultRetryAttempts)
	r.InitialBackoff.Duration = cmp.Or(r.InitialBackoff.Duration, DefaultInitialBackoff)
	r.MaxBackoff.Duration = cmp.Or(r.MaxBackoff.Duration, DefaultMaxBackoff)
	if !jitterSet {
		r.Jitter = DefaultJitter
	}
	if len(a.InputModes) == 0 {
		a.InputModes = []string{DefaultMode}
	}
	if len(a.OutputModes) == 0 {
		a.OutputModes = []string{DefaultMode}
	}
	if a.Skills == nil {
		a.Skills = []Skill{{ID: a.Name}}
	}
	for i := range a.Skills {
		s := &a.Skills[i]
		s.Name = cmp.Or(s.Name, s.ID)
		s.Description = cmp.Or(s.Description, a.Description, s.Name)
		if len(s.Tags) == 0 {
			s.Tags = []string{cmp.Or(a.Type, a.Name)}
		}
	}
}
