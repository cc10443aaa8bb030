package apiserver

// usageCases drive GET /usage for TestEveryRoute.
func usageCases() []routeCase {
	return []routeCase{
		{route: "GET /usage", name: "own team", method: "GET", path: "/usage?start=0&end=3600&step=600", status: 200, contains: `"timestampUnix":3000`},
		{route: "GET /usage", name: "defaults", method: "GET", path: "/usage", status: 200, contains: `"step":300`},
		{route: "GET /usage", name: "admin, one team", method: "GET", path: "/usage?team=acme&start=0&end=120", admin: true, status: 200, contains: `"team":"acme"`},
		{route: "GET /usage", name: "step not minutes", method: "GET", path: "/usage?step=90", status: 400, contains: "step must be whole minutes"},
		{route: "GET /usage", name: "start after end", method: "GET", path: "/usage?start=7200&end=60", status: 400, contains: "must be before end"},
		{route: "GET /usage", name: "too many points", method: "GET", path: "/usage?start=0&end=100000000&step=60", status: 400, contains: "at most 10000"},
		{route: "GET /usage", name: "step beyond any range", method: "GET", path: "/usage?step=999999999999960", status: 400, contains: "step must be whole minutes"},
		{route: "GET /usage", name: "end past 2106", method: "GET", path: "/usage?start=0&end=99999999999", status: 400, contains: "end must be a unix time"},
		{route: "GET /usage", name: "another team", method: "GET", path: "/usage?team=acme", status: 403, contains: "only the admin key"},
		{route: "GET /usage", name: "no key", method: "GET", path: "/usage", noKey: true, status: 401, contains: "API key"},
	}
}
