# gauntlet in a container: `docker build -t gauntlet .`, then
#   docker run --rm -v "$PWD:/work" -w /work gauntlet redteam
# The binary is the `dist` build (no debug info, stripped) with every optional part
# (`--features full`: the PostgreSQL team store, MCP, OpenTelemetry); TLS is rustls with the
# system's root certificates.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist -p gauntlet --features full \
 && cp target/dist/gauntlet /usr/local/bin/gauntlet

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 gauntlet
COPY --from=build /usr/local/bin/gauntlet /usr/local/bin/gauntlet
USER gauntlet
WORKDIR /work
ENTRYPOINT ["gauntlet"]
CMD ["--help"]
