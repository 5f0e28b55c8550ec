#!/usr/bin/env bash
# `npm run compose:certs [-- DIR]`: writes the development certificates the compose deployment mounts (default
# DIR: ./certs, what compose.yaml reads unless ACTOR_EDGE_CERTS names another directory), with the built CLI and
# the host's openssl (the image has no openssl): the proxy's HTTPS serving certificate (proxy-ingress.pem, for
# proxy-control, proxy and localhost), the egress listener's (proxy-egress.pem, for atenet-egress.ate-system.svc and
# localhost) and the actor identity CA (actor-ca.pem, actor-ca.key), which the proxy's egress listener trusts and
# the apiserver mints actor certificates with. The credential bundles and the actor identity CA's key are made
# readable by the image's user (uid 1000): owned by it when run as root, else readable by everyone (development
# certificates only). The CA key stays in DIR and is mounted into no container; each container gets only its own
# bundle and ca.pem (the proxy also proxy-egress.pem and actor-ca.pem; the apiserver actor-ca.pem and actor-ca.key).
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-${ACTOR_EDGE_CERTS:-certs}}
IMAGE_UID=1000

if [[ ! -f dist/cli/main.js ]]; then npx tsc -p .; fi
# With the proxy's HTTPS serving certificate (--tls-listen) valid for the names clients use in the deployment, and
# the egress listener's for the name atunnel dials (the proxy's alias on the workers network) and localhost.
node dist/cli/main.js certs --out "$DIR" --workers 4 --ingress-name proxy-control --ingress-name proxy --ingress-name localhost \
  --egress-name atenet-egress.ate-system.svc --egress-name localhost >/dev/null
chmod 0755 "$DIR"
if [[ $(id -u) -eq 0 ]]; then
  chown "$IMAGE_UID:$IMAGE_UID" "$DIR"/*.pem "$DIR/actor-ca.key"
  chmod 0600 "$DIR/actor-ca.key"
elif [[ $(id -u) -ne $IMAGE_UID ]]; then
  chmod 0644 "$DIR"/*.pem "$DIR/actor-ca.key"
else
  chmod 0600 "$DIR/actor-ca.key"
fi
chmod 0600 "$DIR/ca.key"
printf 'compose-certs: wrote %s (ca.pem, proxy.pem, proxy-ingress.pem, proxy-egress.pem, extproc.pem, control-plane.pem, worker-1.pem … worker-4.pem, actor-ca.pem, actor-ca.key)\n' "$DIR"
