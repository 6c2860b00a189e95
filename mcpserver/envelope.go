package mcpserver

import (
	"github.com/pactum/pactum/task"
)

// NegotiationKey is the envelope metadata key under which a task cites an
// accepted contract negotiation (MessageInput.Negotiation): the key
// internal/node's gate reads (node.CiteKey), and A2A request metadata's.
const NegotiationKey = "pactum.negotiation"

// submitRequest builds the Coordinator request of a new task from a tool's
// input, by the rules of A2A's SendMessage (a2aserver: readEnvelope,
// envelopeMeta.envelope, Handler.start), so that the same request yields
// the same envelope, payload hash, execution record and audit entries
// through either transport:
//
//   - the input message is a user message with the text part first, then
//     the data part; its id is message_id or a fresh one;
//   - actor is the caller's field, else the authenticated actor, else
//     task.AnonymousActor (task.ResolveActor, as A2A);
//   - the idempotency key is the caller's, else the message id;
//   - the context id is the message's (the Coordinator makes a new one when
//     it is empty), and the task id, times and the correlation id default
//     are left to the Coordinator;
//   - the envelope carries no extra metadata (A2A copies request metadata
//     other than "pactum"; MCP has none), but for negotiation: the
//     accepted negotiation the task cites, under NegotiationKey, where A2A
//     request metadata puts it.
//
// It refuses input without text and data with task.CodeInvalidArgument.
func submitRequest(agentName, action string, in MessageInput, authActor string) (task.SubmitRequest, error) {
	msg, err := userMessage(in.MessageID, in.Text, in.Data, "the task needs an input")
	if err != nil {
		return task.SubmitRequest{}, err
	}
	msg.ContextID = in.ContextID
	env := task.Envelope{
		Actor:          in.Actor,
		Matter:         in.Matter,
		Resource:       in.Resource,
		Action:         action,
		PolicyRef:      in.PolicyRef,
		ApprovalRef:    in.ApprovalRef,
		IdempotencyKey: in.IdempotencyKey,
		CorrelationID:  in.CorrelationID,
		ContextID:      msg.ContextID,
		Input:          msg,
	}
	if in.Negotiation != "" {
		env.Metadata = map[string]any{NegotiationKey: in.Negotiation}
	}
	actor, err := task.ResolveActor(env.Actor, authActor)
	if err != nil {
		return task.SubmitRequest{}, err
	}
	env.Actor = actor
	if env.IdempotencyKey == "" {
		env.IdempotencyKey = msg.ID
	}
	return task.SubmitRequest{Envelope: env, Agent: agentName}, nil
}

// userMessage is a user message of a text part and/or a data part, with id
// messageID or a fresh one. Without either part it is an invalid_argument
// error that begins with what.
func userMessage(messageID, text string, data map[string]any, what string) (task.Message, error) {
	var parts []task.Part
	if text != "" {
		parts = append(parts, task.TextPart(text))
	}
	if data != nil {
		raw, err := task.EncodeData(data)
		if err != nil {
			return task.Message{}, task.Errorf(task.CodeInvalidArgument, "data cannot be encoded as JSON: %v", err)
		}
		parts = append(parts, task.DataPart(raw))
	}
	if len(parts) == 0 {
		return task.Message{}, task.Errorf(task.CodeInvalidArgument, "%s: give text, data or both", what)
	}
	if messageID == "" {
		messageID = task.NewID()
	}
	return task.Message{ID: messageID, Role: task.RoleUser, Parts: parts}, nil
}
