// Package push delivers A2A push notifications: it sends task events to the
// webhooks in the tasks' push configurations.
//
// A Pusher listens to every task on the Coordinator's broker and POSTs each
// event of a task that has push configurations, as an A2A StreamResponse
// (the same events A2A streams carry, converted by internal/a2amap), with
// retries, per-task ordering and a durable catch-up that sends a task's
// latest state to the configurations a stop, a crash or a dropped event
// left behind. Its HTTP client refuses destinations that are not public
// when it dials them, unless private push is allowed; ValidateURL applies
// the same rule to a URL, and transports call it when a push configuration
// is created.
//
// The configurations themselves are stored by the core (task.PushConfig);
// the A2A server (package a2aserver) creates them and tells the Pusher
// when they change. Behaviour and options are documented in docs/a2a.md
// ("Push notifications").
package push
