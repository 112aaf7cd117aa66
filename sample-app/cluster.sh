#!/usr/bin/env bash
# Starts three sample-app nodes on ports 8081-8083 against one MariaDB (profile mysql), to watch the
# cluster: the jobs run once per tick, a move on one node blocks a delete on another.
#   DB_URL=jdbc:mysql://127.0.0.1:3306/test DB_USER=root DB_PASSWORD= ./sample-app/cluster.sh
# Stop them with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")"
jar=target/sample-app.jar
[ -f "$jar" ] || (cd .. && mvn -B -q -DskipTests package)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT INT TERM
for port in 8081 8082 8083; do
  PORT=$port NODE_ID=node-$port java -jar "$jar" --spring.profiles.active=mysql > "target/node-$port.log" 2>&1 &
  pids+=($!)
  echo "node-$port: http://localhost:$port/  (log: sample-app/target/node-$port.log)"
done
wait
