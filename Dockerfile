# pactum in a small image: a static binary (pure Go, CGO off) on distroless,
# run as a non-root user, the SQLite store on the /data volume.
#
#   docker build -t pactum .
#   docker run --rm -p 127.0.0.1:9000:9000 -v pactum-data:/data pactum
#
# Inside the container pactum listens on 0.0.0.0:9000 so the published port
# reaches it; the binary's own default stays 127.0.0.1:9000. Arguments after
# the image name replace the command below, e.g. to serve a configuration
# mounted at /etc/pactum:
#
#   docker run --rm -p 127.0.0.1:9000:9000 -v pactum-data:/data \
#     -v "$PWD/pactum.yaml:/etc/pactum/pactum.yaml:ro" pactum \
#     serve --config /etc/pactum/pactum.yaml --listen 0.0.0.0:9000 --store sqlite:///data/pactum.db
#
# The runtime image has no shell: agents of type exec that run sh scripts
# need a base image with one (e.g. alpine) instead.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION is what `pactum version` prints (the image has no .git to read it
# from).
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/pactum/pactum/internal/version.Version=${VERSION}" \
      -o /out/pactum ./cmd/pactum \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/pactum /usr/local/bin/pactum
# The store's directory, owned by the image's non-root user (65532), so a
# new named volume mounted on it is writable.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME ["/data"]
WORKDIR /data
USER 65532:65532
EXPOSE 9000
ENTRYPOINT ["/usr/local/bin/pactum"]
CMD ["serve", "--listen", "0.0.0.0:9000", "--store", "sqlite:///data/pactum.db"]
