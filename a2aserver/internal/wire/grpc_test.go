package wire

import (
	"context"
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestGRPCError checks that every error of the table answers on gRPC
// with the code the table names for it and an ErrorInfo with its A2A
// reason, the domain and the error's own metadata.
func TestGRPCError(t *testing.T) {
	t.Parallel()
	for _, row := range errorTable {
		if row.err == context.Canceled || row.err == context.DeadlineExceeded {
			continue
		}
		err := a2a.NewError(row.err, "it went wrong").WithErrorInfoMeta(map[string]string{"taskId": "t1"})
		st, ok := status.FromError(GRPCError(err))
		if !ok {
			t.Fatalf("%v: GRPCError returned no status", row.err)
		}
		var want codes.Code
		if err := want.UnmarshalJSON([]byte(`"` + row.grpc + `"`)); err != nil {
			t.Fatalf("%v: the table's code %q is no google.rpc code: %v", row.err, row.grpc, err)
		}
		if st.Code() != want || st.Message() != "it went wrong" {
			t.Errorf("%v: status %v %q, want %v %q", row.err, st.Code(), st.Message(), want, "it went wrong")
		}
		info := errorInfo(st)
		if info == nil {
			t.Fatalf("%v: no ErrorInfo in %v", row.err, st.Details())
		}
		if info.Reason != a2a.ErrorReason(row.err) || info.Domain != a2a.ProtocolDomain || info.Metadata["taskId"] != "t1" {
			t.Errorf("%v: ErrorInfo %v, want reason %s, domain %s, metadata taskId t1", row.err, info, a2a.ErrorReason(row.err), a2a.ProtocolDomain)
		}
	}
}

// TestGRPCErrorOther checks an error of no A2A kind (INTERNAL) and the
// structured details of an a2a.Error (a google.protobuf.Struct).
func TestGRPCErrorOther(t *testing.T) {
	t.Parallel()
	st := status.Convert(GRPCError(errors.New("disk on fire")))
	if st.Code() != codes.Internal || errorInfo(st).GetReason() != "INTERNAL_ERROR" {
		t.Errorf("plain error: %v %v, want INTERNAL with reason INTERNAL_ERROR", st.Code(), st.Details())
	}
	st = status.Convert(GRPCError(a2a.NewError(a2a.ErrInvalidParams, "bad").WithDetails(map[string]any{"field": "tenant"})))
	var found bool
	for _, d := range st.Details() {
		if s, ok := d.(*structpb.Struct); ok && s.GetFields()["field"].GetStringValue() == "tenant" {
			found = true
		}
	}
	if !found {
		t.Errorf("details %v lack the Struct {field: tenant}", st.Details())
	}
}

func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}
