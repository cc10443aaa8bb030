package dockerfile

import (
	"fmt"
	"strings"
	"testing"
)

func TestConvertCopy(t *testing.T) {
	t.Parallel()
	runConvertCases(t, copyCases)
}

// copyTree is a context with tarballs in every format ADD may meet.
var copyTree = map[string]fsEntry{
	"a.txt":        {Content: "a"},
	"b.txt":        {Content: "b"},
	"app/main.py":  {Content: "print()"},
	"pkg.tar":      {Content: tarOf("f", "1")},
	"pkg.tar.gz":   {Content: gzipOf(tarOf("f", "1"))},
	"pkg.tgz":      {Content: gzipOf(tarOf("f", "1"))},
	"pkg.tar.bz2":  {Content: bzip2Tar},
	"notes.gz":     {Content: gzipOf("not a tar")},
	"data.xz":      {Content: "\xfd7zXZ\x00not a tarball by name"},
	"renamed.bin":  {Content: gzipOf(tarOf("f", "1"))},
	"dir/x.tar.gz": {Content: gzipOf(tarOf("f", "1"))},
}

var copyCases = []convertCase{{
	name: "copy: one step per source, root-owned by default, dest resolved against WORKDIR",
	tree: copyTree,
	dockerfile: `
			FROM debian
			WORKDIR /srv
			COPY a.txt b.txt ./
			COPY --chown=app:app --chmod=755 app dst
			COPY --chmod=0640 *.txt /etc/conf/
			COPY . .
			USER root
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 WORKDIR ["/srv"]
			  3 COPY ["a.txt" "/srv/" "root" ""] hash
			  3 COPY ["b.txt" "/srv/" "root" ""] hash
			  4 COPY ["app" "/srv/dst" "app:app" "0755"] hash
			  5 COPY ["*.txt" "/etc/conf/" "root" "0640"] hash
			  6 COPY ["." "/srv/" "root" ""] hash
			  7 USER ["root"]
			`,
}, {
	name: "add: local tarballs unpack, other files copy",
	tree: copyTree,
	dockerfile: `
			FROM debian
			ADD pkg.tar /a/
			ADD pkg.tar.gz /b/
			ADD pkg.tgz /c/
			ADD pkg.tar.bz2 /d/
			ADD renamed.bin /e/
			ADD notes.gz data.xz /f/
			ADD --unpack=false pkg.tar /g/
			ADD dir /h/
			ADD --chown=1000:1000 a.txt /i
			USER root
			WORKDIR /
			`,
	want: `
			final debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 COPY ["pkg.tar" "/a/" "root" ""] hash extract
			  3 COPY ["pkg.tar.gz" "/b/" "root" ""] hash extract
			  4 COPY ["pkg.tgz" "/c/" "root" ""] hash extract
			  5 COPY ["pkg.tar.bz2" "/d/" "root" ""] hash extract
			  6 COPY ["renamed.bin" "/e/" "root" ""] hash extract
			  7 COPY ["notes.gz" "/f/" "root" ""] hash
			  7 COPY ["data.xz" "/f/" "root" ""] hash
			  8 COPY ["pkg.tar" "/g/" "root" ""] hash
			  9 COPY ["dir" "/h/" "root" ""] hash
			  10 COPY ["a.txt" "/i" "1000:1000" ""] hash
			  11 USER ["root"]
			  12 WORKDIR ["/"]
			`,
}, {
	name: "copy --from a stage by name or index, and from an image",
	dockerfile: `
			FROM golang:1.22 AS build
			RUN go build -o /out/app .
			FROM alpine
			RUN echo second
			FROM debian
			COPY --from=build /out/app /usr/local/bin/
			COPY --from=1 --chown=app etc/alpine-release /etc/
			COPY --from=nginx:1.27 /etc/nginx/nginx.conf /etc/nginx/
			COPY --from=nginx:1.27 /etc/nginx/mime.types /etc/nginx/
			USER root
			WORKDIR /
			`,
	want: `
			stage build golang:1.22
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 RUN ["go build -o /out/app ."]
			stage 1 alpine
			  3 USER ["root"]
			  3 WORKDIR ["/"]
			  4 RUN ["echo second"]
			stage image-nginx-1.27 nginx:1.27
			final debian
			  5 USER ["root"]
			  5 WORKDIR ["/"]
			  6 COPY ["/out/app" "/usr/local/bin/" "root" ""] from=build
			  7 COPY ["/etc/alpine-release" "/etc/" "app" ""] from=1
			  8 COPY ["/etc/nginx/nginx.conf" "/etc/nginx/" "root" ""] from=image-nginx-1.27
			  9 COPY ["/etc/nginx/mime.types" "/etc/nginx/" "root" ""] from=image-nginx-1.27
			  10 USER ["root"]
			  11 WORKDIR ["/"]
			`,
}}

func TestConvertStages(t *testing.T) {
	t.Parallel()
	runConvertCases(t, stageCases)
}

// TestConvertTargetMissing: --target must name a stage of the file.
func TestConvertTargetMissing(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"nope", "0"} {
		_, _, err := Convert([]byte("FROM debian AS a\nFROM debian\n"), Options{Target: target})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("target stage %q is not in the Dockerfile", target)) {
			t.Errorf("target %q: %v", target, err)
		}
	}
}

var stageCases = []convertCase{{
	name:   "--target builds that stage as the final one and leaves the later ones out",
	target: "Builder",
	dockerfile: `
			FROM debian AS deps
			RUN echo deps
			FROM deps AS builder
			RUN echo build
			CMD ["make"]
			FROM debian
			RUN exit 1
			`,
	want: `
			stage deps debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 RUN ["echo deps"]
			final stage:deps
			  4 RUN ["echo build"]
			  3 USER ["user"]
			  3 WORKDIR ["/home/user"]
			start make
			`,
}, {
	name: "FROM a stage inherits its environment, user, workdir and start command",
	dockerfile: `
			FROM python:3 AS base
			ENV APP=/app
			WORKDIR $APP
			LABEL tier=base
			CMD ["python3"]
			FROM base AS final
			ARG X=1
			RUN echo $APP
			LABEL tier=final
			`,
	want: `
			stage base python:3
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			  2 ENV ["APP" "/app"]
			  3 WORKDIR ["/app"]
			final stage:base
			  8 RUN ["echo $APP"] env:X=1
			  6 USER ["user"]
			start python3
			label tier=final
			`,
}, {
	name: "ENTRYPOINT in a child stage drops the inherited CMD",
	dockerfile: `
			FROM debian AS base
			CMD ["bash"]
			FROM base
			ENTRYPOINT ["tini"]
			`,
	want: `
			stage base debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			final stage:base
			  3 USER ["user"]
			  3 WORKDIR ["/home/user"]
			start tini
			`,
}, {
	name: "stages the final one does not need are left out",
	dockerfile: `
			FROM debian AS unused
			RUN exit 1
			FROM debian AS deps
			RUN echo deps
			FROM deps AS builder
			RUN echo build
			FROM alpine AS other
			FROM debian
			COPY --from=builder /x /x
			USER root
			WORKDIR /
			`,
	want: `
			stage deps debian
			  3 USER ["root"]
			  3 WORKDIR ["/"]
			  4 RUN ["echo deps"]
			stage builder stage:deps
			  6 RUN ["echo build"]
			final debian
			  8 USER ["root"]
			  8 WORKDIR ["/"]
			  9 COPY ["/x" "/x" "root" ""] from=builder
			  10 USER ["root"]
			  11 WORKDIR ["/"]
			`,
}, {
	name: "stage names are case-insensitive",
	dockerfile: `
			FROM debian AS Builder
			FROM builder
			COPY --from=BUILDER /a /b
			`,
	want: `
			stage builder debian
			  1 USER ["root"]
			  1 WORKDIR ["/"]
			final stage:builder
			  3 COPY ["/a" "/b" "root" ""] from=builder
			  2 USER ["user"]
			  2 WORKDIR ["/home/user"]
			`,
	warnings: []string{"Dockerfile:1: Stage name 'Builder' should be lowercase"},
}}
