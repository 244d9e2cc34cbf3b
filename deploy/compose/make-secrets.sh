#!/bin/sh
# Creates the secret files compose.yaml mounts (random values), once: existing files are kept.
set -eu
cd "$(dirname "$0")"
umask 077
mkdir -p secrets
new() { [ -s "secrets/$1" ] || head -c "$2" /dev/urandom | od -An -tx1 | tr -d ' \n' >"secrets/$1"; }
new postgres_password 24
new s3_access_key 10
new s3_secret_key 24
new events_token 32
new signing_secret 32
# The containers' users (sdc: uid 10001, postgres, minio) read them through bind mounts.
chmod 0644 secrets/*
echo "secrets in $(pwd)/secrets: keep them out of version control"
