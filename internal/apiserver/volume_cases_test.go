package apiserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// volumeRouteCases are TestEveryRoute's volume requests: a volume made,
// its content written, read, changed and removed with its token, then
// the volume deleted. TestVolumeRoutes has the full table.
func volumeRouteCases() []routeCase {
	const tok, content = "{voltok}", "/volumecontent/{vol}"
	saveVolume := func(vars map[string]string, body []byte) {
		saveField("vol", "volumeID")(vars, body)
		saveField("voltok", "token")(vars, body)
	}
	return []routeCase{
		{route: "POST /volumes", name: "create", method: "POST", path: "/volumes", body: `{"name":"routes-vol"}`, status: 201, contains: `"token"`, save: saveVolume},
		{route: "POST /volumes", name: "name taken", method: "POST", path: "/volumes", body: `{"name":"routes-vol"}`, status: 409, contains: "routes-vol"},
		{route: "GET /volumes", name: "list", method: "GET", path: "/volumes", status: 200, contains: "{vol}"},
		{route: "GET /volumes", name: "no key", method: "GET", path: "/volumes", noKey: true, status: 401, contains: "API key"},
		{route: "GET /volumes/{volumeID}", name: "get", method: "GET", path: "/volumes/{vol}", status: 200, contains: `"token":"{voltok}"`},
		{route: "GET /volumes/{volumeID}", name: "unknown", method: "GET", path: "/volumes/" + unknownID, status: 404, contains: unknownID},
		{route: "POST /volumecontent/{volumeID}/dir", name: "mkdir", method: "POST", path: content + "/dir?path=/d&mode=493", bearer: tok, status: 201, contains: `"type":"directory"`},
		{route: "POST /volumecontent/{volumeID}/dir", name: "exists", method: "POST", path: content + "/dir?path=/d", bearer: tok, status: 409, contains: "exists"},
		{route: "PUT /volumecontent/{volumeID}/file", name: "write", method: "PUT", path: content + "/file?path=/d/f&uid=1000", body: "some bytes", bearer: tok, status: 201, contains: `"size":10`},
		{route: "PUT /volumecontent/{volumeID}/file", name: "no parent", method: "PUT", path: content + "/file?path=/e/f", body: "x", bearer: tok, status: 404, contains: "/e"},
		{route: "GET /volumecontent/{volumeID}/file", name: "read", method: "GET", path: content + "/file?path=/d/f", bearer: tok, status: 200, contains: "some bytes"},
		{route: "GET /volumecontent/{volumeID}/file", name: "missing", method: "GET", path: content + "/file?path=/d/g", bearer: tok, status: 404, contains: "/d/g"},
		{route: "GET /volumecontent/{volumeID}/path", name: "stat", method: "GET", path: content + "/path?path=/d/f", bearer: tok, status: 200, contains: `"uid":1000`},
		{route: "GET /volumecontent/{volumeID}/path", name: "another volume's token", method: "GET", path: content + "/path?path=/d/f", bearer: "not-the-token", status: 403, contains: "token"},
		{route: "PATCH /volumecontent/{volumeID}/path", name: "chmod", method: "PATCH", path: content + "/path?path=/d/f", body: `{"mode":420}`, bearer: tok, status: 200, contains: `"mode":420`},
		{route: "PATCH /volumecontent/{volumeID}/path", name: "bad mode", method: "PATCH", path: content + "/path?path=/d/f", body: `{"mode":70000}`, bearer: tok, status: 400, contains: "permission bits"},
		{route: "GET /volumecontent/{volumeID}/dir", name: "list", method: "GET", path: content + "/dir?path=/&depth=2", bearer: tok, status: 200, contains: `"path":"/d/f"`},
		{route: "GET /volumecontent/{volumeID}/dir", name: "no token", method: "GET", path: content + "/dir?path=/", noKey: true, status: 401, contains: "volume token"},
		{route: "DELETE /volumecontent/{volumeID}/path", name: "remove", method: "DELETE", path: content + "/path?path=/d", bearer: tok, status: 204},
		{route: "DELETE /volumecontent/{volumeID}/path", name: "gone", method: "DELETE", path: content + "/path?path=/d", bearer: tok, status: 404, contains: "/d"},
		{route: "POST /v2/sandboxes", name: "volume at a relative path", method: "POST", path: "/v2/sandboxes", body: `{"templateID":"base","volumeMounts":[{"name":"routes-vol","path":"data"}]}`, status: 400, contains: "absolute"},
		{route: "DELETE /volumes/{volumeID}", name: "delete", method: "DELETE", path: "/volumes/{vol}", status: 204},
		{route: "DELETE /volumes/{volumeID}", name: "deleted already", method: "DELETE", path: "/volumes/{vol}", status: 404, contains: "{vol}"},
		{route: "GET /volumecontent/{volumeID}/dir", name: "deleted volume", method: "GET", path: content + "/dir?path=/", bearer: tok, status: 404, contains: "{vol}"},
	}
}

// doBearer sends a request with Authorization: Bearer token and no key.
func doBearer(t *testing.T, srv *httptest.Server, method, path, body, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
