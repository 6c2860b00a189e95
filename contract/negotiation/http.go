package negotiation

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/pactum/pactum/task"
)

// HTTP paths below an agent's endpoint (/agents/NAME).
const (
	// ValidatePath takes a POSTed contract and answers its Report.
	ValidatePath = "/contracts/validate"
	// NegotiationsPath takes a POSTed proposal (a propose Move) and
	// answers the View of the new negotiation; NegotiationsPath/ID is
	// read with GET and answered with a POSTed Move.
	NegotiationsPath = "/negotiations"
)

// ValidateHandler serves ValidatePath: POST a contract (JSON or YAML),
// get its Report (200, whatever it says).
func (s *Service) ValidateHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, task.Errorf(task.CodeInvalidArgument, "POST a contract (JSON or YAML) to validate it"), http.StatusMethodNotAllowed)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, task.Errorf(task.CodeInvalidArgument, "read the contract: %v", err), 0)
			return
		}
		writeJSON(w, http.StatusOK, s.Validate(b))
	})
}

// NegotiationsHandler serves NegotiationsPath; r.URL.Path is the rest of
// the path below it: "" (POST a proposal) or "/ID" (GET the negotiation,
// POST an answer).
func (s *Service) NegotiationsHandler(log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/")
		if strings.Contains(id, "/") {
			writeError(w, task.Errorf(task.CodeNotFound, "no such negotiation path %q", r.URL.Path), 0)
			return
		}
		if id != "" && r.Method == http.MethodGet {
			v, err := s.Get(r.Context(), id)
			s.answer(w, log, v, err, http.StatusOK)
			return
		}
		if r.Method != http.MethodPost {
			allow := http.MethodPost
			if id != "" {
				allow = "GET, POST"
			}
			w.Header().Set("Allow", allow)
			writeError(w, task.Errorf(task.CodeInvalidArgument, "POST a move (JSON)"), http.StatusMethodNotAllowed)
			return
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, task.Errorf(task.CodeInvalidArgument, "read the move: %v", err), 0)
			return
		}
		m, err := DecodeMove(b)
		if err != nil {
			writeError(w, task.Errorf(task.CodeInvalidArgument, "%v", err), 0)
			return
		}
		if id == "" {
			v, err := s.Propose(r.Context(), m)
			s.answer(w, log, v, err, http.StatusCreated)
			return
		}
		v, err := s.Answer(r.Context(), id, m)
		s.answer(w, log, v, err, http.StatusOK)
	})
}

// answer writes v, or err.
func (s *Service) answer(w http.ResponseWriter, log *slog.Logger, v *View, err error, status int) {
	if err != nil {
		if task.ErrorCode(err) == task.CodeInternal {
			ref := task.NewID()[:8]
			log.Error("negotiation", "agent", s.Provider.Agent, "ref", ref, "err", err)
			err = task.Errorf(task.CodeInternal, "internal error (ref %s)", ref)
		}
		writeError(w, err, 0)
		return
	}
	writeJSON(w, status, v)
}

// httpStatus maps the domain codes a negotiation answers with.
var httpStatus = map[task.Code]int{
	task.CodeInvalidArgument: http.StatusBadRequest,
	task.CodeNotFound:        http.StatusNotFound,
	task.CodeConflict:        http.StatusConflict,
	// A stored accepted contract that does not verify.
	task.CodeContractViolation: http.StatusConflict,
	task.CodeForbidden:         http.StatusForbidden,
	task.CodeUnsupported:       http.StatusNotImplemented,
	task.CodeUnavailable:       http.StatusServiceUnavailable,
}

// ErrorBody is the JSON of an error answer.
type ErrorBody struct {
	Error struct {
		Code    task.Code `json:"code"`
		Message string    `json:"message"`
	} `json:"error"`
}

// writeError writes err as an ErrorBody, with status (0: by its code).
func writeError(w http.ResponseWriter, err error, status int) {
	var e ErrorBody
	e.Error.Code, e.Error.Message = task.ErrorCode(err), err.Error()
	if status == 0 {
		status = http.StatusInternalServerError
		if st, ok := httpStatus[e.Error.Code]; ok {
			status = st
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			status = http.StatusRequestEntityTooLarge
		}
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
