package node

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/pactum/pactum/audit"
	"github.com/pactum/pactum/config"
	"github.com/pactum/pactum/internal/netguard"
	"github.com/pactum/pactum/task"
)

// anchorTimeout bounds one webhook delivery of the audit head.
const anchorTimeout = 10 * time.Second

// newAnchor returns the audit head publisher cfg.Audit.Anchor asks for, or
// nil when it names no sink. A relative file is relative to baseDir.
func newAnchor(cfg config.AuditAnchor, st task.Store, nodeName, baseDir string, log *slog.Logger) (*audit.Publisher, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	hr, ok := st.(audit.HeadReader)
	if !ok {
		return nil, errors.New("audit.anchor: this store keeps no audit head record")
	}
	file := cfg.File
	if file != "" && !filepath.IsAbs(file) {
		file = filepath.Join(baseDir, file)
	}
	opts := audit.PublisherOptions{
		Store: hr, Interval: cfg.Interval.Duration, Node: nodeName,
		File: file, Log: cfg.Log, Webhook: cfg.Webhook, Logger: log,
	}
	if cfg.Webhook != "" {
		opts.Client = anchorClient(cfg.AllowPrivate)
	}
	p, err := audit.NewPublisher(opts)
	if err != nil {
		return nil, fmt.Errorf("audit.anchor: %w", err)
	}
	return p, nil
}

// anchorClient is the webhook client: unless allowPrivate, it refuses
// every non-public address it would dial (redirect hops and DNS answers
// included), and it uses no proxy, so that the check sees the destination.
func anchorClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: anchorTimeout}
	if !allowPrivate {
		dialer.Control = netguard.Control
	}
	return &http.Client{
		Timeout:   anchorTimeout,
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, TLSHandshakeTimeout: anchorTimeout},
	}
}
