package apiserver

// nodeCases drive GET /nodes, GET /admission and GET /internal/layers/{key} for
// TestEveryRoute; the fixture registers node-live (heartbeat now) and
// node-gone (an hour ago), and its layer server echoes the key.
func nodeCases() []routeCase {
	return []routeCase{
		{route: "GET /nodes", name: "admin, alive", method: "GET", path: "/nodes", admin: true, status: 200, contains: `"advertiseURL":"http://10.0.0.7:3000","cpuCount":8`},
		{route: "GET /nodes", name: "admin, dead", method: "GET", path: "/nodes", admin: true, status: 200, contains: `"state":"dead"`},
		{route: "GET /nodes", name: "admin, alive state", method: "GET", path: "/nodes", admin: true, status: 200, contains: `"state":"alive"`},
		{route: "GET /nodes", name: "a team's key", method: "GET", path: "/nodes", status: 403, contains: "only the admin key"},
		{route: "GET /nodes", name: "no key", method: "GET", path: "/nodes", noKey: true, status: 401, contains: "API key"},
		{route: "DELETE /nodes/{name}", name: "a team's key", method: "DELETE", path: "/nodes/node-gone", status: 403, contains: "only the admin key"},
		{route: "DELETE /nodes/{name}", name: "no key", method: "DELETE", path: "/nodes/node-gone", noKey: true, status: 401, contains: "API key"},
		{route: "DELETE /nodes/{name}", name: "alive", method: "DELETE", path: "/nodes/node-live", admin: true, status: 409, contains: `node \"node-live\" is alive`},
		{route: "DELETE /nodes/{name}", name: "unknown", method: "DELETE", path: "/nodes/no-such-node", admin: true, status: 404, contains: "no-such-node"},
		{route: "DELETE /nodes/{name}", name: "dead", method: "DELETE", path: "/nodes/node-retired", admin: true, status: 204},
		{route: "GET /admission", name: "a team's key: its own waiting", method: "GET", path: "/admission", status: 200, contains: `"waiting":3,"waitingForTeam":2`},
		{route: "GET /admission", name: "no key", method: "GET", path: "/admission", noKey: true, status: 401, contains: "API key"},
		{route: "GET /internal/layers/{key}", name: "admin", method: "GET", path: "/internal/layers/0123456789abcdef0123", admin: true, status: 200, contains: "layer 0123456789abcdef0123"},
		{route: "GET /internal/layers/{key}", name: "a team's key", method: "GET", path: "/internal/layers/0123456789abcdef0123", status: 403, contains: "only the cluster's admin key"},
		{route: "GET /internal/layers/{key}", name: "no key", method: "GET", path: "/internal/layers/0123456789abcdef0123", noKey: true, status: 401, contains: "API key"},
	}
}
