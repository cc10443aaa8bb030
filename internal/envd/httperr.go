package envd

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"syscall"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// errorBody is envd's HTTP error shape; the SDKs read code and message.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(errorBody{Code: status, Message: msg})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Encoding")
	h.Del("Content-Disposition")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encoding response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// errBadBody marks failures to read or decode the request body: the
// client's fault, 400, never 500 or 507.
var errBadBody = errors.New("bad request body")

// statusOf classifies err into the HTTP status the SDKs expect.
func statusOf(err error) int {
	switch {
	case errors.Is(err, errBadBody), errors.Is(err, errdefs.ErrInvalidArgument),
		errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR):
		return http.StatusBadRequest
	case errors.Is(err, errdefs.ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, errdefs.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, errdefs.ErrPermissionDenied), errors.Is(err, os.ErrPermission):
		return http.StatusForbidden
	case errors.Is(err, errdefs.ErrNoSpace), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return http.StatusInsufficientStorage
	default:
		return http.StatusInternalServerError
	}
}

func writeErr(w http.ResponseWriter, err error) {
	writeError(w, statusOf(err), err.Error())
}
