package compute

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"corral/handlers"
	"corral/models"
)

// Fault is an error answered with Nova's fault body:
// {"<name>": {"code": <status>, "message": "<text>"}}.
type Fault struct {
	Status  int
	Message string
}

func (f *Fault) Error() string { return f.Message }

// faultf builds a Fault.
func faultf(status int, msg string) *Fault { return &Fault{Status: status, Message: msg} }

// faultName is nova.api.openstack.wsgi.Fault._fault_names.
func faultName(status int) string {
	switch status {
	case 400:
		return "badRequest"
	case 401:
		return "unauthorized"
	case 403:
		return "forbidden"
	case 404:
		return "itemNotFound"
	case 405:
		return "badMethod"
	case 409:
		return "conflictingRequest"
	case 413, 429:
		return "overLimit"
	case 415:
		return "badMediaType"
	case 501:
		return "notImplemented"
	case 503:
		return "serviceUnavailable"
	}
	return "computeFault"
}

// FaultBody renders the JSON body of a fault.
func FaultBody(status int, msg string) []byte {
	var b bytes.Buffer
	name, _ := json.Marshal(faultName(status))
	m, _ := json.Marshal(msg)
	b.WriteString("{")
	b.Write(name)
	b.WriteString(`:{"code":`)
	b.WriteString(itoa(status))
	b.WriteString(`,"message":`)
	b.Write(m)
	b.WriteString("}}")
	return b.Bytes()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// asFault turns any error into a Fault. Internal errors get a generic
// message; their detail goes to the log, not to the client.
func asFault(err error) *Fault {
	var f *Fault
	if errors.As(err, &f) {
		return f
	}
	k := models.KindOf(err)
	if k == models.Internal {
		return faultf(http.StatusInternalServerError, "Unexpected API Error. Please report this to the cloud operator and attach the corral log if possible.")
	}
	var ce *models.Error
	msg := err.Error()
	if errors.As(err, &ce) && ce.Msg != "" {
		msg = ce.Msg
	}
	return faultf(handlers.StatusOf(err), msg)
}
