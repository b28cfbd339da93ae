#!/bin/sh
# One-shot (temporalio/admin-tools): creates TEMPORAL_NAMESPACE once the server answers. The retired
# auto-setup image did this by itself; temporalio/server does not. Idempotent.
set -eu
NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
RETENTION="${TEMPORAL_NAMESPACE_RETENTION:-30d}"
for attempt in $(seq 1 60); do
  temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1 && break
  echo "create-namespace: waiting for $TEMPORAL_ADDRESS ($attempt)"
  sleep 2
done
if temporal operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; then
  echo "create-namespace: $NAMESPACE exists"
else
  temporal operator namespace create --namespace "$NAMESPACE" --retention "$RETENTION" --address "$TEMPORAL_ADDRESS"
  echo "create-namespace: $NAMESPACE created (retention $RETENTION)"
fi
