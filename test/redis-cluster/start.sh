#!/usr/bin/env bash
# Starts a Redis Cluster of three masters on 127.0.0.1:7101-7103 (no replicas, nothing on disk but
# the nodes' cluster config under /tmp/geneva-drive-redis-cluster) unless one already answers there,
# then waits until the cluster reports cluster_state:ok. For test/e2e/redis-cluster.spec.ts:
#   GENEVA_TEST_REDIS_CLUSTER=127.0.0.1:7101 npx jest test/e2e/redis-cluster.spec.ts
# Stop it with: for p in 7101 7102 7103; do redis-cli -p $p shutdown nosave; done
set -euo pipefail

PORTS=(7101 7102 7103)
RUN_DIR=/tmp/geneva-drive-redis-cluster

healthy() {
  redis-cli -p "${PORTS[0]}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'
}

if healthy; then
  echo "Redis Cluster already running on 127.0.0.1:${PORTS[0]}"
  exit 0
fi

rm -rf "${RUN_DIR}"
for port in "${PORTS[@]}"; do
  redis-cli -p "${port}" shutdown nosave >/dev/null 2>&1 || true
  mkdir -p "${RUN_DIR}/${port}"
  redis-server --port "${port}" --bind 127.0.0.1 --cluster-enabled yes \
    --cluster-config-file "nodes-${port}.conf" --dir "${RUN_DIR}/${port}" --save "" \
    --appendonly no --daemonize yes --logfile "${RUN_DIR}/${port}/redis.log"
done
for port in "${PORTS[@]}"; do
  for _ in $(seq 1 30); do redis-cli -p "${port}" ping >/dev/null 2>&1 && break; sleep 0.2; done
done
redis-cli --cluster create "${PORTS[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes >/dev/null
for _ in $(seq 1 50); do
  if healthy; then
    echo "Redis Cluster ready on 127.0.0.1:${PORTS[0]}-${PORTS[-1]}"
    exit 0
  fi
  sleep 0.2
done
echo "Redis Cluster did not become ready" >&2
exit 1
