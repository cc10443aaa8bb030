package dockerfile

import "testing"

func TestConvertBasics(t *testing.T) {
	t.Parallel()
	runConvertCases(t, basicCases)
}

var basicCases = []convertCase{{
	name:       "from only: SDK's user and workdir framing",
	dockerfile: "FROM debian:12\n",
	want: `
			final debian:12
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  1 USER ["user"]
			  1 WORKDIR ["/home/user"]
			`,
}, {
	name: "user and workdir set: no framing at the end",
	dockerfile: `
			FROM debian
			WORKDIR /srv
			WORKDIR app/
			USER app:app
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 WORKDIR ["/srv"]
			  3 WORKDIR ["/srv/app"]
			  4 USER ["app:app"]
			`,
}, {
	name: "run forms",
	dockerfile: `
			FROM debian
			RUN apt-get update && \
			    apt-get install -y curl
			RUN ["sh", "-c", "echo it's $HOME"]
			RUN ["/bin/true"]
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 RUN ["apt-get update &&     apt-get install -y curl"]
			  4 RUN ["sh -c 'echo it'\"'\"'s $HOME'"]
			  5 RUN ["/bin/true"]
			  6 USER ["root"]
			  7 WORKDIR ["/"]
			`,
}, {
	name: "run heredocs",
	dockerfile: `
			FROM debian
			RUN <<EOF
			echo one
			echo two
			EOF
			RUN <<-EOT
				#!/usr/bin/env python3
				print("hi")
			EOT
			RUN cat > /etc/motd <<EOF
			hello
			EOF
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 RUN ["echo one\necho two\n"]
			  6 RUN ["f=$(mktemp) && cat > \"$f\" <<'WARREN_HEREDOC'\n#!/usr/bin/env python3\nprint(\"hi\")\nWARREN_HEREDOC\nchmod +x \"$f\" && \"$f\"; rc=$?; rm -f \"$f\"; exit $rc"]
			  10 RUN ["cat > /etc/motd <<EOF\nhello\nEOF"]
			  13 USER ["root"]
			  14 WORKDIR ["/"]
			`,
}, {
	name: "env persists and expands; image variables are left as written",
	dockerfile: `
			FROM debian
			ENV A=1 B="two words"
			ENV C legacy form value
			ENV D=${A}-$B PATH=/opt/bin:$PATH
			WORKDIR /w/$A
			USER u$A
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 ENV ["A" "1" "B" "two words"]
			  3 ENV ["C" "legacy form value"]
			  4 ENV ["D" "1-two words" "PATH" "/opt/bin:$PATH"]
			  5 WORKDIR ["/w/1"]
			  6 USER ["u1"]
			`,
}, {
	name: "label, expose, volume, stopsignal, maintainer",
	dockerfile: `
			FROM debian
			ARG PORT=8080
			LABEL a=1 "b c"="d e"
			LABEL a=2 port=$PORT
			EXPOSE $PORT 9000/udp $PORT
			VOLUME /data
			STOPSIGNAL SIGTERM
			MAINTAINER someone
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  9 USER ["root"]
			  10 WORKDIR ["/"]
			label a=2
			label b c=d e
			label port=8080
			expose 8080 9000/udp
			`,
	warnings: []string{
		"Dockerfile:6: VOLUME is ignored",
		"Dockerfile:7: STOPSIGNAL is ignored",
		"Dockerfile:8: Maintainer instruction is deprecated",
	},
}, {
	name: "run flags that only change speed are ignored",
	dockerfile: `
			FROM --platform=linux/amd64 debian
			RUN --mount=type=cache,target=/var/cache/apt --network=host apt-get update
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 RUN ["apt-get update"]
			  3 USER ["root"]
			  4 WORKDIR ["/"]
			`,
	warnings: []string{
		"Dockerfile:1: FROM --platform is ignored",
		"Dockerfile:2: RUN --mount=type=cache is ignored",
		"Dockerfile:2: RUN --network is ignored",
	},
}}

func TestConvertArgs(t *testing.T) {
	t.Parallel()
	runConvertCases(t, argCases)
}

var argCases = []convertCase{{
	name: "global args in FROM, overridden by build args",
	dockerfile: `
			ARG IMAGE=debian
			ARG TAG=12
			FROM ${IMAGE}:${TAG}-slim
			USER root
			WORKDIR /
			`,
	args: map[string]string{"TAG": "13"},
	want: `
			final debian:13-slim
			  3 USER ["root"]
			  3 WORKDIR ["/"]
			  4 USER ["root"]
			  5 WORKDIR ["/"]
			`,
}, {
	name: "stage args reach later RUNs only, and expand words",
	dockerfile: `
			ARG V=global
			FROM debian
			RUN echo before
			ARG V
			ARG W=w-$V NOVAL
			RUN echo "$V $W"
			WORKDIR /opt/$W
			ENV W=from-env
			RUN echo shadowed
			USER root
			`,
	want: `
			final debian
			  2 USER ["root"]
			  2 WORKDIR ["/"]
			  3 RUN ["echo before"]
			  6 RUN ["echo \"$V $W\""] env:V=global env:W=w-global
			  7 WORKDIR ["/opt/w-global"]
			  8 ENV ["W" "from-env"]
			  9 RUN ["echo shadowed"] env:V=global
			  10 USER ["root"]
			`,
}, {
	name: "build args override defaults; unknown ones are reported",
	dockerfile: `
			FROM debian
			ARG V=default
			RUN make V=$V
			USER root
			WORKDIR /
			`,
	args: map[string]string{"V": "cli", "UNUSED": "x"},
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  3 RUN ["make V=$V"] env:V=cli
			  4 USER ["root"]
			  5 WORKDIR ["/"]
			`,
	warnings: []string{"build arg UNUSED was not consumed"},
}, {
	name: "an ARG in sight without a value expands to empty, unknown names stay",
	dockerfile: `
			ARG G
			ARG H=h
			FROM debian
			ARG NOVAL
			WORKDIR /a$NOVAL/b$H/c$G
			USER $HOME_USER
			`,
	want: `
			final debian
			  3 USER ["root"]
			  3 WORKDIR ["/"]
			  5 WORKDIR ["/a/b/c"]
			  6 USER ["$HOME_USER"]
			`,
	warnings: []string{"Dockerfile:6: $HOME_USER is not set in the Dockerfile"},
}, {
	name: "platform args are not guessed",
	dockerfile: `
			FROM debian
			ARG TARGETARCH
			RUN echo $TARGETARCH
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  3 RUN ["echo $TARGETARCH"]
			  4 USER ["root"]
			  5 WORKDIR ["/"]
			`,
	warnings: []string{"Dockerfile:2: ARG TARGETARCH is set automatically by Docker but not by warren"},
}, {
	name: "undefined arg in FROM",
	dockerfile: `
			FROM debian${SUFFIX}
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 USER ["root"]
			  3 WORKDIR ["/"]
			`,
	warnings: []string{"Dockerfile:1: ARG SUFFIX is not set before the first FROM"},
}}

func TestConvertStartAndReady(t *testing.T) {
	t.Parallel()
	frame := func(lines string) string {
		return "\n\t\t\tfinal debian\n\t\t\t  1 USER [\"root\"]\n\t\t\t  1 WORKDIR [\"/\"]\n\t\t\t  1 USER [\"user\"]\n\t\t\t  1 WORKDIR [\"/home/user\"]\n" + lines
	}
	cases := []struct{ name, body, want string }{
		{"cmd exec", `CMD ["python3", "-m", "http.server"]`, "start python3 -m http.server"},
		{"cmd exec quoted", `CMD ["sh", "-c", "echo $HOME; sleep 1"]`, `start sh -c 'echo $HOME; sleep 1'`},
		{"cmd shell", `CMD npm start -- --port $PORT`, "start npm start -- --port $PORT"},
		{"entrypoint exec with cmd exec", "ENTRYPOINT [\"node\"]\nCMD [\"server.js\"]", "start node server.js"},
		{"entrypoint exec with cmd shell", "ENTRYPOINT [\"tini\", \"--\"]\nCMD run $X", `start tini -- /bin/sh -c 'run $X'`},
		{"entrypoint shell ignores cmd", "ENTRYPOINT exec app --flag\nCMD [\"ignored\"]", "start exec app --flag"},
		{"cmd before entrypoint in one stage is kept", "CMD [\"a\"]\nENTRYPOINT [\"e\"]", "start e a"},
		{"entrypoint alone", `ENTRYPOINT ["/docker-entrypoint.sh"]`, "start /docker-entrypoint.sh"},
		{"last cmd wins", "CMD [\"one\"]\nCMD [\"two\"]", "start two"},
		{"healthcheck exec", `HEALTHCHECK --interval=5s CMD ["curl", "-f", "http://localhost/"]`, "ready curl -f http://localhost/"},
		{"healthcheck shell", `HEALTHCHECK CMD pg_isready || exit 1`, "ready pg_isready || exit 1"},
		{"healthcheck none", "HEALTHCHECK CMD true\nHEALTHCHECK NONE", ""},
	}
	var tcs []convertCase
	for _, c := range cases {
		want := ""
		if c.want != "" {
			want = "\t\t\t" + c.want + "\n"
		}
		tcs = append(tcs, convertCase{name: c.name, dockerfile: "FROM debian\n" + c.body + "\n", want: frame(want)})
	}
	runConvertCases(t, tcs)
}
