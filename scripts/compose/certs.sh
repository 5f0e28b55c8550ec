#!/usr/bin/env bash
# `npm run compose:certs [-- DIR]`: writes the development certificates the compose deployment mounts (default
# DIR: ./certs, what compose.yaml reads unless ACTOR_EDGE_CERTS names another directory), with the built CLI and
# the host's openssl (the image has no openssl), and the proxy's HTTPS serving certificate (proxy-ingress.pem, for
# proxy-control, proxy and localhost). The credential bundles are made readable by the image's user (uid 1000): owned by it when run as root, else readable by everyone (development certificates only). The CA key
# stays in DIR and is mounted into no container; each container gets only its own bundle and ca.pem.
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=${1:-${ACTOR_EDGE_CERTS:-certs}}
IMAGE_UID=1000

if [[ ! -f dist/cli/main.js ]]; then npx tsc -p .; fi
# With the proxy's HTTPS serving certificate (--tls-listen) valid for the names clients use in the deployment.
node dist/cli/main.js certs --out "$DIR" --workers 4 --ingress-name proxy-control --ingress-name proxy --ingress-name localhost >/dev/null
chmod 0755 "$DIR"
if [[ $(id -u) -eq 0 ]]; then
  chown "$IMAGE_UID:$IMAGE_UID" "$DIR"/*.pem
elif [[ $(id -u) -ne $IMAGE_UID ]]; then
  chmod 0644 "$DIR"/*.pem
fi
chmod 0600 "$DIR/ca.key"
printf 'compose-certs: wrote %s (ca.pem, proxy.pem, proxy-ingress.pem, extproc.pem, control-plane.pem, worker-1.pem … worker-4.pem)\n' "$DIR"
