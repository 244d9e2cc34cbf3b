#!/bin/sh
# Run once by compose.yaml's s3-setup service (the MinIO client image): the bucket, its lifecycle
# rule for uploads nobody promoted, and a webhook announcing each created object to the service.
# The secrets are read from files here, so none appears in compose.yaml.
set -eu
bucket=${SDC_BUCKET:?}
mc alias set local http://s3:9000 "$(cat /run/secrets/s3_access_key)" "$(cat /run/secrets/s3_secret_key)"
mc mb --ignore-existing "local/$bucket"
# Staging objects older than a week were never promoted (docs/deploy.md, "Lifecycle rule").
mc ilm rule ls "local/$bucket" 2>/dev/null | grep -q '\.staging/' \
  || mc ilm rule add --prefix .staging/ --expire-days 7 "local/$bucket"
# The webhook goes through the proxy to either instance; the token travels as a bearer header.
# queue_dir keeps events while the service is not up yet (it starts after this setup).
mc admin config set local notify_webhook:sdc \
  endpoint=http://proxy:8080/events/s3 auth_token="$(cat /run/secrets/events_token)" queue_dir=/var/lib/minio-events
mc admin service restart local
until mc ready local >/dev/null 2>&1; do sleep 1; done
mc event ls "local/$bucket" arn:minio:sqs::sdc:webhook | grep -q put \
  || mc event add "local/$bucket" arn:minio:sqs::sdc:webhook --event put
echo "s3-setup: bucket $bucket notifies http://proxy:8080/events/s3"
