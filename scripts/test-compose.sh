#!/usr/bin/env bash
# `npm run test:compose`: checks that no certificate or key enters the build context, builds the image (and the
# benchmark's), checks that the image holds only the components, writes development certificates into a temporary
# directory (mTLS on every hop, as compose.yaml runs by default), checks that `docker compose config` of the
# deployment (compose.yaml alone) runs every service hardened (read-only, cap_drop ALL, no-new-privileges, limits,
# health checks every >= 5 s), then for PROXY_ACTOR_CACHE=on and off (and PROXY_EGRESS_CACHE, the egress verdict
# cache, the same) brings the compose deployment up with scripts/compose/test-overlay.yaml (health checks every
# second), waits for every service to be healthy, checks from inside a worker container that only the apiserver's
# attach port and the egress listener are reachable (not the admin APIs, ext_proc, the control API, the ingress or
# the destinations outside the platform), checks from inside the proxy container that every worker, the control API
# and extproc speak TLS with the expected identities (ext_proc: mTLS both ways, a plaintext or certificate-less
# client refused, an impostor refused by the proxy's client), that every admin refuses a rebinding Host even for
# reads, sends requests through 127.0.0.1:8080 (a miss, a hit, a forced move), from inside the proxy container sends
# one request over HTTP/2 with TLS (proxy-control:8443, its certificate checked against the CA) and one gRPC call to
# the demo Echo service, runs a 3-second load from the bench service inside the network, checks the proxy's and
# extproc's /stats, then egress (an actor certificate minted by the apiserver's admin; through 127.0.0.1:9443 with
# it, a CONNECT the seeded policy allows reaches its destination on the outside network and carries a request and its
# answer, twice; one to a port outside the policy is refused with 403, and so is one without a certificate; the
# proxy's egress counters and verdict cache agree), and tears everything down (`down -v`), also when a step fails.
#
# Uses `docker compose` when available, else docker-compose (1.29+). Host ports: ACTOR_EDGE_HTTP_PORT (8080),
# ACTOR_EDGE_HTTPS_PORT (8443), ACTOR_EDGE_ADMIN_PORT (9901), ACTOR_EDGE_EXTPROC_ADMIN_PORT (9902),
# ACTOR_EDGE_STUB_ADMIN_PORT (9903), ACTOR_EDGE_EGRESS_PORT (9443). ACTOR_EDGE_OUTSIDE_PREFIX (198.18.0) places the
# outside network (its /24). ACTOR_EDGE_BASE_IMAGE (node:20-slim) is the build's base image.
# COMPOSE_TEST_MODES="on off" picks the flag values to test.
set -euo pipefail
cd "$(dirname "$0")/.."

if docker compose version >/dev/null 2>&1; then DC=(docker compose); else DC=(docker-compose); fi
PROJECT=${COMPOSE_TEST_PROJECT:-actor-edge-test}
FILES=(-f compose.yaml -f scripts/compose/test-overlay.yaml)
export ACTOR_EDGE_IMAGE=${ACTOR_EDGE_IMAGE:-actor-edge:local}
export ACTOR_EDGE_BENCH_IMAGE=${ACTOR_EDGE_BENCH_IMAGE:-actor-edge-bench:local}
export ACTOR_EDGE_BASE_IMAGE=${ACTOR_EDGE_BASE_IMAGE:-node:20-slim}
export ACTOR_EDGE_HTTP_PORT=${ACTOR_EDGE_HTTP_PORT:-8080}
export ACTOR_EDGE_HTTPS_PORT=${ACTOR_EDGE_HTTPS_PORT:-8443}
export ACTOR_EDGE_ADMIN_PORT=${ACTOR_EDGE_ADMIN_PORT:-9901}
export ACTOR_EDGE_EXTPROC_ADMIN_PORT=${ACTOR_EDGE_EXTPROC_ADMIN_PORT:-9902}
export ACTOR_EDGE_STUB_ADMIN_PORT=${ACTOR_EDGE_STUB_ADMIN_PORT:-9903}
export ACTOR_EDGE_EGRESS_PORT=${ACTOR_EDGE_EGRESS_PORT:-9443}
export ACTOR_EDGE_OUTSIDE_PREFIX=${ACTOR_EDGE_OUTSIDE_PREFIX:-198.18.0}
# The destinations compose.yaml has the apiserver simulate: the seeded policies allow the first, not the second.
ALLOWED_DESTINATION="$ACTOR_EDGE_OUTSIDE_PREFIX.10:8000"
DENIED_DESTINATION="$ACTOR_EDGE_OUTSIDE_PREFIX.10:8001"
export CHECK_INGRESS="http://127.0.0.1:$ACTOR_EDGE_HTTP_PORT"
export CHECK_PROXY_ADMIN="http://127.0.0.1:$ACTOR_EDGE_ADMIN_PORT"
export CHECK_EXTPROC_ADMIN="http://127.0.0.1:$ACTOR_EDGE_EXTPROC_ADMIN_PORT"
export CHECK_STUB_ADMIN="http://127.0.0.1:$ACTOR_EDGE_STUB_ADMIN_PORT"

dc() { "${DC[@]}" -p "$PROJECT" "${FILES[@]}" "$@"; }
say() { printf 'test-compose: %s\n' "$*"; }

teardown() {
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    say "FAILED (exit $rc); last logs:"
    dc logs --no-color --tail=40 2>&1 | tail -n 200 || true
  fi
  say "tearing down"
  dc --profile bench down -v --remove-orphans >/dev/null 2>&1 || dc down -v --remove-orphans || true
  if [[ -n "${CERTS_DIR:-}" ]]; then rm -rf "$CERTS_DIR"; fi
  remove_canaries
  exit "$rc"
}

# Files that must never enter the build context: a key where compose:certs writes, a certificate beside sources.
CANARIES=(certs/build-context-canary.key scripts/compose/build-context-canary.pem)
remove_canaries() { local f; for f in "${CANARIES[@]}"; do rm -f "$f"; done; rmdir certs 2>/dev/null || true; }
trap teardown EXIT
trap 'exit 130' INT TERM

# The checks run from dist/ (on the host, and mounted into the containers): compile it as the sources are now.
npx tsc -p .
# The certificates compose.yaml mounts (each container: ca.pem and its own bundle), fresh for this run.
CERTS_DIR=$(mktemp -d)
export ACTOR_EDGE_CERTS="$CERTS_DIR"
bash scripts/compose/certs.sh "$CERTS_DIR"

say "compose files validate ($("${DC[@]}" version --short 2>/dev/null || "${DC[@]}" version | head -n 1))"
dc config -q
if command -v docker-compose >/dev/null 2>&1; then docker-compose -p "$PROJECT" "${FILES[@]}" config -q; fi

# A run that was killed half-way may have left this project's containers behind: start from nothing.
dc --profile bench down -v --remove-orphans >/dev/null 2>&1 || true

for port in "$ACTOR_EDGE_HTTP_PORT" "$ACTOR_EDGE_HTTPS_PORT" "$ACTOR_EDGE_ADMIN_PORT" "$ACTOR_EDGE_EXTPROC_ADMIN_PORT" "$ACTOR_EDGE_STUB_ADMIN_PORT" "$ACTOR_EDGE_EGRESS_PORT"; do
  if node -e "const s=require('net').connect($port,'127.0.0.1');s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1))"; then
    say "port 127.0.0.1:$port is already in use (stop what listens there, or set ACTOR_EDGE_*_PORT)"; exit 1
  fi
done

build() {
  # The host network lets `npm ci` reach the registry even where containers have no outbound NAT.
  docker build --network host --build-arg BASE_IMAGE="$ACTOR_EDGE_BASE_IMAGE" "$@" . >/tmp/actor-edge-build.$$.log 2>&1 \
    || { tail -n 40 /tmp/actor-edge-build.$$.log; rm -f /tmp/actor-edge-build.$$.log; exit 1; }
  rm -f /tmp/actor-edge-build.$$.log
}

say "the build context holds no certificate or key (.dockerignore)"
mkdir -p certs
for f in "${CANARIES[@]}"; do printf 'canary\n' >"$f"; done
printf 'ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY . /context\n' | docker build --network host --build-arg BASE_IMAGE="$ACTOR_EDGE_BASE_IMAGE" -q -t actor-edge-context-check -f - . >/dev/null
remove_canaries
docker run --rm --network none --entrypoint node actor-edge-context-check -e "
  const fs = require('fs');
  const bad = fs.readdirSync('/context', { recursive: true }).filter((f) => /(^|\/)certs(\/|$)|\.(pem|key|crt|p12)$/.test(f));
  if (bad.length) { console.error('in the build context: ' + bad.join(', ')); process.exit(1); }"
docker image rm -f actor-edge-context-check >/dev/null

say "building $ACTOR_EDGE_IMAGE and $ACTOR_EDGE_BENCH_IMAGE (base $ACTOR_EDGE_BASE_IMAGE)"
build -t "$ACTOR_EDGE_IMAGE"
build --target bench -t "$ACTOR_EDGE_BENCH_IMAGE"

say "the runtime image holds the components only (no benchmark, load generator, tests or keys)"
docker run --rm --network none --entrypoint node "$ACTOR_EDGE_IMAGE" -e "
  const fs = require('fs');
  const files = fs.readdirSync('/app', { recursive: true });
  const ours = (f) => !f.startsWith('node_modules/');
  const bad = files.filter((f) => /^node_modules\/autocannon(\/|$)/.test(f) || (ours(f) && /^dist\/(bench|examples|scripts\/(stack|compose))(\/|$)|\.test\.js$|(^|\/)(testing|e2e)(\/|$)|\.(pem|key|crt)$/.test(f)));
  if (bad.length) { console.error('not for the runtime image: ' + bad.slice(0, 10).join(', ')); process.exit(1); }
  for (const need of ['dist/cli/main.js', 'dist/scripts/container-entry.js', 'dist/scripts/healthcheck.js', 'proto']) if (!fs.existsSync('/app/' + need)) { console.error('missing ' + need); process.exit(1); }"

# The deployment's own configuration (compose.yaml without the test overlay, whose health checks run every second).
say "docker compose config: every service hardened"
"${DC[@]}" -p "$PROJECT" -f compose.yaml config >/tmp/actor-edge-compose-config.$$.yaml
node dist/scripts/compose/check.js config /tmp/actor-edge-compose-config.$$.yaml || { rm -f /tmp/actor-edge-compose-config.$$.yaml; exit 1; }
rm -f /tmp/actor-edge-compose-config.$$.yaml

wait_healthy() {
  local deadline=$((SECONDS + 180)) ids status unhealthy
  while :; do
    ids=$(dc ps -q)
    unhealthy=""
    for id in $ids; do
      status=$(docker inspect --format '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.RestartCount}}' "$id")
      case "$status" in
        *" running healthy 0") ;;
        *" exited "* | *" dead "* | *" restarting "*) say "container not running: $status"; return 1 ;;
        *" running "*" "[1-9]*) say "container restarted: $status"; return 1 ;;
        *) unhealthy="$unhealthy ${status%% *}" ;;
      esac
    done
    if [[ -n "$ids" && -z "$unhealthy" ]]; then return 0; fi
    if ((SECONDS > deadline)); then say "not healthy within 180 s:$unhealthy"; return 1; fi
    sleep 1
  done
}

no_restarts() {
  local id status
  for id in $(dc ps -q); do
    status=$(docker inspect --format '{{.Name}} {{.State.Status}} {{.RestartCount}}' "$id")
    case "$status" in
      *" running 0") ;;
      *) say "a container stopped or restarted during the test: $status"; return 1 ;;
    esac
  done
}

# Every address (on every network) of a service's container.
addresses_of() {
  docker inspect --format '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$(dc ps -q "$1")"
}

# From worker-1 (where actor code runs): the control listeners must not connect, by service name or by any of the
# containers' addresses, nor the destinations outside the platform (only through the egress gateway); the
# apiserver's attach port and the egress listener (by the name the tunnel agent dials) must.
check_isolation() {
  local unreachable="proxy:9901,proxy:8080,proxy:8443,extproc:50051,extproc:9902,apiserver:50052,apiserver:9903" ip
  for ip in $(addresses_of proxy); do unreachable="$unreachable,$ip:9901,$ip:8080,$ip:8443"; done
  for ip in $(addresses_of extproc); do unreachable="$unreachable,$ip:50051,$ip:9902"; done
  for ip in $(addresses_of apiserver); do unreachable="$unreachable,$ip:50052,$ip:9903,$ip:8000,$ip:8001"; done
  dc exec -T -e CHECK_UNREACHABLE="$unreachable" -e CHECK_REACHABLE="apiserver-attach:50053,atenet-egress.ate-system.svc:9443" \
    -e PROXY_ACTOR_CACHE="$PROXY_ACTOR_CACHE" worker-1 node checks/scripts/compose/check.js isolation
}

# Egress from the host, as an actor's tunnel agent does it: the apiserver mints actor-000's certificate (the actor
# resumed first: only a running actor gets one), then CONNECTs through the egress listener (TLS; the proxy's
# certificate checked against the CA): twice to the destination the seeded policy allows (its answer comes back
# through the tunnel), once to a port outside the policy (403), once without a client certificate (403). The
# proxy's counters and verdict cache must agree (check.js egress).
check_egress() {
  local bundle="$CERTS_DIR/actor-000.pem" answer code i
  local via=(--max-time 10 --proxy "https://localhost:$ACTOR_EDGE_EGRESS_PORT" --proxy-cacert "$CERTS_DIR/ca.pem" -p)
  local as_actor=(--proxy-cert "$bundle" --proxy-key "$bundle")
  curl -fsS -X POST "$CHECK_STUB_ADMIN/actors/demo/actor-000/resume" >/dev/null
  curl -fsS -X POST "$CHECK_STUB_ADMIN/actors/demo/actor-000/certificate" \
    | node -e 'let s = ""; process.stdin.on("data", (c) => (s += c)).on("end", () => process.stdout.write(JSON.parse(s).bundle))' >"$bundle"
  curl -fsS -X POST "$CHECK_PROXY_ADMIN/stats/reset" >/dev/null
  for i in 1 2; do
    answer=$(curl -sS "${via[@]}" "${as_actor[@]}" "http://$ALLOWED_DESTINATION/")
    if [[ "$answer" != "destination destination-1 $ALLOWED_DESTINATION" ]]; then
      say "egress: CONNECT $ALLOWED_DESTINATION (allowed) answered: $answer"; return 1
    fi
  done
  say "egress: actor-000 → $ALLOWED_DESTINATION through the tunnel (twice): $answer"
  code=$(curl -sS -o /dev/null -w '%{http_connect}' "${via[@]}" "${as_actor[@]}" "http://$DENIED_DESTINATION/" 2>/dev/null || true)
  if [[ "$code" != 403 ]]; then say "egress: CONNECT $DENIED_DESTINATION (outside the policy) answered $code, not 403"; return 1; fi
  say "egress: actor-000 → $DENIED_DESTINATION refused: $code"
  code=$(curl -sS -o /dev/null -w '%{http_connect}' "${via[@]}" "http://$ALLOWED_DESTINATION/" 2>/dev/null || true)
  if [[ "$code" != 403 ]]; then say "egress: a CONNECT without a client certificate answered $code, not 403"; return 1; fi
  say "egress: no client certificate → $ALLOWED_DESTINATION refused: $code"
  node dist/scripts/compose/check.js egress
}

# From the proxy container (on both networks): the workers, the control API and extproc answer TLS only, with the
# identities compose.yaml configures; the proxy's ext_proc client refuses a server with another identity.
check_tls() {
  local workers="" i
  for i in 1 2 3 4; do workers="$workers,worker-$i:8443"; done
  dc exec -T -e CHECK_TLS_CA=/certs/ca.pem -e CHECK_TLS_WORKERS="${workers#,}" \
    -e CHECK_TLS_WORKER_PREFIX=spiffe://cluster.local/ns/actor-edge/worker/ -e CHECK_TLS_CONTROL=apiserver-control:50052 \
    -e PROXY_ACTOR_CACHE="$PROXY_ACTOR_CACHE" proxy node checks/scripts/compose/check.js tls
  dc exec -T -e CHECK_TLS_CA=/certs/ca.pem -e CHECK_EXTPROC=extproc:50051 -e CHECK_EXTPROC_ADMIN_INSIDE=http://extproc:9902 \
    -e CHECK_EXTPROC_SPIFFE_ID=spiffe://cluster.local/ns/actor-edge/sa/extproc -e CHECK_PROXY_BUNDLE=/certs/proxy.pem \
    -e CHECK_IMPOSTOR_BUNDLE=/certs/proxy-ingress.pem -e PROXY_ACTOR_CACHE="$PROXY_ACTOR_CACHE" proxy node checks/scripts/compose/check.js extproc
}

for mode in ${COMPOSE_TEST_MODES:-on off}; do
  export PROXY_ACTOR_CACHE=$mode PROXY_EGRESS_CACHE=$mode
  say "PROXY_ACTOR_CACHE=$mode: up"
  started=$SECONDS
  dc up -d --no-build
  wait_healthy
  say "PROXY_ACTOR_CACHE=$mode: all services healthy after $((SECONDS - started)) s"
  check_isolation
  check_tls
  node dist/scripts/compose/check.js admin
  node dist/scripts/compose/check.js requests
  dc exec -T -e CHECK_TLS_CA=/certs/ca.pem -e PROXY_ACTOR_CACHE="$PROXY_ACTOR_CACHE" proxy node checks/scripts/compose/check.js h2
  say "PROXY_ACTOR_CACHE=$mode: 3-second load from the bench service (inside the network)"
  dc --profile bench run --rm --no-deps bench --duration 3 --warmup 0 --connections 8
  node dist/scripts/compose/check.js stats
  check_egress
  no_restarts
  say "PROXY_ACTOR_CACHE=$mode: ok"
  dc --profile bench down -v --remove-orphans
done
say "passed"
