package mcpserver

import "testing"

// TestSubmitRequestCitesNegotiation: submit_task's negotiation becomes
// the envelope metadata the pinned gate reads; without it the envelope
// has no metadata, as before.
func TestSubmitRequestCitesNegotiation(t *testing.T) {
	req, err := submitRequest("echo", "echo", MessageInput{Text: "hi", Negotiation: "neg-1"}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got := req.Envelope.Metadata[NegotiationKey]; got != "neg-1" {
		t.Errorf("metadata %v, want %s: neg-1", req.Envelope.Metadata, NegotiationKey)
	}
	req, err = submitRequest("echo", "echo", MessageInput{Text: "hi"}, "alice")
	if err != nil || req.Envelope.Metadata != nil {
		t.Errorf("without a negotiation: metadata %v, %v", req.Envelope.Metadata, err)
	}
}
