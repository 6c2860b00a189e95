package a2aagent

import (
	"cmp"
	"slices"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/pactum/pactum/task"
)

// remoteMetaKey names the metadata entry that an input-required status
// message carries: the remote task and context it came from. Messages are
// stored with the task, so a runtime that starts afresh (after a restart,
// or on another node) still continues the right remote task when the
// caller answers.
const remoteMetaKey = "pactum.a2a.remote"

// maxSessions bounds the remembered remote ids. Entries of tasks that never
// finish here (dead-lettered, or canceled while they waited for input) are
// evicted, least recently used first.
const maxSessions = 4096

// remote is what the runtime knows of a local task on the remote side.
type remote struct {
	// TaskID is the remote task of the latest attempt, "" until the remote
	// agent named one.
	TaskID a2a.TaskID
	// ContextID is the remote context; only ids that came from the remote
	// agent are ever sent to it.
	ContextID string
	// Open is set while the remote task waits for input: the next message
	// continues it instead of starting a new one.
	Open bool
	// Auth is set when what the open task waits for is authentication,
	// which may also arrive out of band.
	Auth bool
}

// sessions maps local task ids to remote ids, and local context ids to
// remote context ids so that the tasks of one local conversation share one
// remote conversation.
type sessions struct {
	mu        sync.Mutex
	clock     uint64
	byTask    map[string]*taskEntry
	byContext map[string]*contextEntry
}

type taskEntry struct {
	remote
	used uint64
}

type contextEntry struct {
	id   string
	used uint64
}

func newSessions() *sessions {
	return &sessions{byTask: map[string]*taskEntry{}, byContext: map[string]*contextEntry{}}
}

// lookup returns what is known for req's task: the remembered entry, else
// what the stored history says, else just the remote context of req's local
// context.
func (s *sessions) lookup(req *task.Request) remote {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	if e, ok := s.byTask[req.TaskID]; ok {
		e.used = s.clock
		return e.remote
	}
	if r, ok := fromHistory(req); ok {
		return r
	}
	if c, ok := s.byContext[req.ContextID]; ok && req.ContextID != "" {
		c.used = s.clock
		return remote{ContextID: c.id}
	}
	return remote{}
}

// get returns the entry of a local task, if any.
func (s *sessions) get(taskID string) (remote, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byTask[taskID]
	if !ok {
		return remote{}, false
	}
	return e.remote, true
}

// put records r for req's task and its context.
func (s *sessions) put(req *task.Request, r remote) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	s.byTask[req.TaskID] = &taskEntry{remote: r, used: s.clock}
	if r.ContextID != "" && req.ContextID != "" {
		s.byContext[req.ContextID] = &contextEntry{id: r.ContextID, used: s.clock}
	}
	evict(s.byTask, func(e *taskEntry) uint64 { return e.used })
	evict(s.byContext, func(e *contextEntry) uint64 { return e.used })
}

// forget drops a local task's entry; its context's entry stays, so that a
// retry or a later task of the same conversation reaches the same remote
// context.
func (s *sessions) forget(taskID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byTask, taskID)
}

// remoteTaskIDs maps local task ids to the remote ones known, dropping the
// rest: a local id means nothing to the remote agent.
func (s *sessions) remoteTaskIDs(local []a2a.TaskID) []a2a.TaskID {
	if len(local) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []a2a.TaskID
	for _, id := range local {
		if e, ok := s.byTask[string(id)]; ok && e.TaskID != "" {
			out = append(out, e.TaskID)
		}
	}
	return out
}

// evict trims m to maxSessions when it has grown past it by an eighth,
// dropping the least recently used entries; trimming in batches keeps the
// cost of the scan rare.
func evict[E any](m map[string]E, used func(E) uint64) {
	if len(m) <= maxSessions+maxSessions/8 {
		return
	}
	type kv struct {
		k    string
		used uint64
	}
	all := make([]kv, 0, len(m))
	for k, e := range m {
		all = append(all, kv{k, used(e)})
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(a.used, b.used) })
	for _, x := range all[:len(all)-maxSessions] {
		delete(m, x.k)
	}
}

// fromHistory recovers the remote task that the latest agent message of the
// conversation asked a question for.
func fromHistory(req *task.Request) (remote, bool) {
	for i := len(req.History) - 1; i >= 0; i-- {
		m := req.History[i]
		if m.Role != task.RoleAgent {
			continue
		}
		// Only the latest agent message counts: if it carries no remote ids
		// the remote task it came from is not waiting.
		raw, ok := m.Metadata[remoteMetaKey].(map[string]any)
		if !ok {
			return remote{}, false
		}
		taskID, _ := raw["taskId"].(string)
		contextID, _ := raw["contextId"].(string)
		auth, _ := raw["auth"].(bool)
		if taskID == "" {
			return remote{}, false
		}
		return remote{TaskID: a2a.TaskID(taskID), ContextID: contextID, Open: true, Auth: auth}, true
	}
	return remote{}, false
}

// remoteMeta is the metadata value that fromHistory reads back.
func remoteMeta(r remote) map[string]any {
	m := map[string]any{"taskId": string(r.TaskID), "contextId": r.ContextID}
	if r.Auth {
		m["auth"] = true
	}
	return m
}
