package wire

import "github.com/a2aproject/a2a-go/v2/a2a"

// DecodeSendMessage decodes the params of SendMessage and
// SendStreamingMessage in their usual shape without encoding/json, and
// reports whether it did: {"message": {…}} whose message has only
// messageId, role, parts, contextId and taskId, each at most once, every
// string printable ASCII without escapes and every part {"text": …}. Any
// other input (metadata, a configuration, another part kind, an escape,
// invalid JSON) is declined, leaving p as it was, for json.Unmarshal to
// decode with its own errors. What it accepts decodes to what
// json.Unmarshal gives (FuzzDecodeSendMessage).
func DecodeSendMessage(params []byte, p *a2a.SendMessageRequest) bool {
	d := sendDecoder{b: params}
	var m a2a.Message
	seen := false
	ok := d.object(func(key string) bool {
		if key != "message" || seen {
			return false
		}
		seen = true
		return d.message(&m)
	})
	if !ok || !seen || d.skipSpace() != len(d.b) {
		return false
	}
	p.Message = &m
	return true
}

// sendDecoder reads the subset of JSON DecodeSendMessage accepts from b,
// at i.
type sendDecoder struct {
	b []byte
	i int
}

func (d *sendDecoder) skipSpace() int {
	d.i = skipSpace(d.b, d.i)
	return d.i
}

// next skips white space and consumes c.
func (d *sendDecoder) next(c byte) bool {
	if d.skipSpace() < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// peek skips white space and reports whether c is next.
func (d *sendDecoder) peek(c byte) bool {
	return d.skipSpace() < len(d.b) && d.b[d.i] == c
}

// plain reads a string of printable ASCII without escapes.
func (d *sendDecoder) plain() (string, bool) {
	if !d.next('"') {
		return "", false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			return s, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", false
		}
	}
	return "", false
}

// object reads an object, handing each member's name to member, which
// reads the value.
func (d *sendDecoder) object(member func(key string) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.plain()
		if !ok || !d.next(':') || !member(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

func (d *sendDecoder) message(m *a2a.Message) bool {
	var seen [5]bool
	once := func(i int) bool {
		if seen[i] {
			return false
		}
		seen[i] = true
		return true
	}
	return d.object(func(key string) bool {
		var ok bool
		switch key {
		case "messageId":
			if ok = once(0); ok {
				m.ID, ok = d.plain()
			}
		case "role":
			var role string
			if ok = once(1); ok {
				role, ok = d.plain()
			}
			// a2a.MessageRole's UnmarshalJSON: the unspecified role is "".
			if m.Role = a2a.MessageRole(role); role == "ROLE_UNSPECIFIED" {
				m.Role = a2a.MessageRoleUnspecified
			}
		case "contextId":
			if ok = once(2); ok {
				m.ContextID, ok = d.plain()
			}
		case "taskId":
			var id string
			if ok = once(3); ok {
				id, ok = d.plain()
			}
			m.TaskID = a2a.TaskID(id)
		case "parts":
			if ok = once(4); ok {
				m.Parts, ok = d.parts()
			}
		}
		return ok
	})
}

// parts reads an array of {"text": …} parts.
func (d *sendDecoder) parts() (a2a.ContentParts, bool) {
	if !d.next('[') {
		return nil, false
	}
	parts := a2a.ContentParts{}
	if d.next(']') {
		return parts, true
	}
	for {
		var text string
		seen := false
		ok := d.object(func(key string) bool {
			if key != "text" || seen {
				return false
			}
			seen = true
			var ok bool
			text, ok = d.plain()
			return ok
		})
		if !ok || !seen {
			return nil, false
		}
		parts = append(parts, a2a.NewTextPart(text))
		if d.next(']') {
			return parts, true
		}
		if !d.next(',') {
			return nil, false
		}
	}
}
