# Multi-stage build of a static klusterlet-failover binary on a minimal, non-root base.
FROM golang:1.26 AS build
ARG VERSION=v0.0.0-dev
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -mod=vendor -trimpath \
      -ldflags "-s -w -X github.com/klusterlet-failover/klusterlet-failover/pkg/version.gitVersion=${VERSION}" \
      -o /out/klusterlet-failover ./cmd/klusterlet-failover

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/klusterlet-failover /klusterlet-failover
USER 65532:65532
# The klusterlet operator sets only args ("/registration agent ..."): they follow this entrypoint, and a first
# argument "/registration" selects OCM's registration command line (`klusterlet-failover registration agent`).
ENTRYPOINT ["/klusterlet-failover"]
CMD ["agent", "failover"]
