package wire

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// GRPCError returns err as the gRPC binding answers it (specification
// §10.6): the google.rpc code of err's row in errorTable (INTERNAL for an
// error of no A2A kind), err's message, and the details the other
// bindings carry: its structured details as google.protobuf.Struct, then
// a google.rpc.ErrorInfo with the A2A reason and domain. It is for the
// refusals pactum answers before a2a-go's gRPC handler runs
// (authentication, version, the agent addressed); that handler maps the
// errors of the operations with the same codes.
func GRPCError(err error) error {
	_, name := HTTPStatus(err)
	var code codes.Code
	if code.UnmarshalJSON([]byte(`"`+name+`"`)) != nil {
		code = codes.Internal
	}
	st := status.New(code, err.Error())
	var msgs []protoadapt.MessageV1
	for _, d := range details(err, "") {
		if d.TypeURL == errordetails.ErrorInfoType {
			info := &errdetails.ErrorInfo{}
			info.Reason, _ = d.Value["reason"].(string)
			info.Domain, _ = d.Value["domain"].(string)
			info.Metadata, _ = d.Value["metadata"].(map[string]string)
			msgs = append(msgs, info)
			continue
		}
		if s, serr := structpb.NewStruct(d.Value); serr == nil {
			msgs = append(msgs, s)
		}
	}
	if withDetails, derr := st.WithDetails(msgs...); derr == nil {
		st = withDetails
	}
	return st.Err()
}
