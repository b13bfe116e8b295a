#!/usr/bin/env bash
# Idempotent set-up for a fresh machine of this kind: Debian packages, node modules, Kafka broker jars.
# Every step checks first and does nothing when its result is already there, so both README commands
# can call it every time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log() { printf '[setup] %s\n' "$*" >&2; }

# 1. Debian packages: librdkafka's build libraries (linked dynamically, the build is offline),
#    Java 17 and Maven for the broker (the JDK: javac builds bench:compare's Java peers, and the
#    partitioner test runs a Java source file), ClickHouse, iproute2 for network-namespace fault tests,
#    chromium for the dashboard's browser test (playwright-core drives it; it never downloads one),
#    libjemalloc2, the allocator bin/hamstring preloads (bin/allocator.js); real DNS sources for
#    the sensor tests and the resolver demo: unbound (streams dnstap), dnsperf and dig (load and
#    queries), tshark (packet captures), rsyslog (the syslog receiver of the alert sink tests).
#    zookeeper: the coordinator of the replicated ClickHouse test cluster (18.16 predates
#    ClickHouse Keeper); src/dev/zookeeper.ts runs its jar as a plain java process.
packages=(zlib1g-dev libssl-dev libsasl2-dev libzstd-dev liblz4-dev libcurl4-openssl-dev
  openjdk-17-jdk-headless maven clickhouse-server clickhouse-client iproute2 procps chromium
  libjemalloc2 unbound dnsperf bind9-dnsutils tshark rsyslog zookeeper)
# openssl: the secured test cluster makes its CA and certificates with it (src/dev/kafka-tls.ts).
packages+=(openssl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Kafka broker jars from Maven Central, cached outside git. Resolved in the background while
#    step 3 compiles librdkafka: on a fresh machine each takes half a minute or more, mostly waiting
#    on the network here and on the CPU there.
# shellcheck source=/dev/null
. dev/kafka.env
cache=${HAMSTRING_CACHE_DIR:-$HOME/.cache/hamstring}
libs="$cache/kafka-$KAFKA_VERSION/libs"
resolve_kafka_jars() {
  rm -rf "$libs" && mkdir -p "$libs"
  mvn -B -q -f dev/kafka-broker-pom.xml \
    -Dkafka.version="$KAFKA_VERSION" -Dlog4j.version="$LOG4J_VERSION" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs"
  ls "$libs"/kafka_2.13-"$KAFKA_VERSION".jar >/dev/null
  touch "$libs/.complete"
}
jars_pid=
jars_log=$(mktemp)
trap 'rm -f "$jars_log"' EXIT
if [ ! -f "$libs/.complete" ]; then
  log "resolving Apache Kafka $KAFKA_VERSION broker jars into $libs (in the background)"
  resolve_kafka_jars >"$jars_log" 2>&1 &
  jars_pid=$!
fi

# 3. Node modules. CKJS_LINKING=dynamic makes @confluentinc/kafka-javascript build its bundled
#    librdkafka against the system libraries instead of downloading their sources. The client is
#    built from source with patches/kafka-javascript/*.patch applied (each says which crash it
#    fixes), so install scripts run only after patching; a changed patch reinstalls too.
#    The client's native build (its addon and librdkafka) is kept in the cache, keyed by the lock
#    file, the patches, Node's ABI and the machine: a fresh clone on a machine that built the same
#    client once restores it instead of compiling librdkafka again (about 80 s of the set-up).
stamp=node_modules/.hamstring-lock-sha
client=node_modules/@confluentinc/kafka-javascript
want=$(cat package-lock.json patches/kafka-javascript/*.patch | sha256sum | cut -d' ' -f1)
native="$cache/kafka-javascript-${want:0:16}-abi$(node -p process.versions.modules)-$(uname -m)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "npm ci"
  CKJS_LINKING=dynamic npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  for p in patches/kafka-javascript/*.patch; do
    log "patching the Kafka client: $(basename "$p")"
    patch --quiet --forward -p1 -d "$client" <"$p"
  done
  if [ -f "$native/.complete" ]; then
    log "the Kafka client's native build from $native"
    mkdir -p "$client/build/Release" "$client/build/deps"
    cp "$native/confluent-kafka-javascript.node" "$client/build/Release/"
    cp -P "$native"/deps/librdkafka*.so* "$client/build/deps/"
    # Every other package's install script, as npm ci would have run it.
    mapfile -t others < <(node -e '
      const { readdirSync, readFileSync } = require("node:fs");
      const dirs = readdirSync("node_modules").flatMap((d) => d.startsWith("@")
        ? readdirSync(`node_modules/${d}`).map((e) => `${d}/${e}`) : [d]);
      for (const d of dirs) {
        try {
          const s = JSON.parse(readFileSync(`node_modules/${d}/package.json`, "utf8")).scripts ?? {};
          if ((s.preinstall || s.install || s.postinstall) && d !== "@confluentinc/kafka-javascript") console.log(d);
        } catch {}
      }')
    [ ${#others[@]} -eq 0 ] || npm rebuild "${others[@]}" --loglevel=error
  else
    log "building the Kafka client and librdkafka (about 90 s)"
    CKJS_LINKING=dynamic npm rebuild --build-from-source=@confluentinc/kafka-javascript --loglevel=error
    tmp="$native.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp/deps"
    cp "$client/build/Release/confluent-kafka-javascript.node" "$tmp/"
    cp -P "$client"/build/deps/librdkafka*.so* "$tmp/deps/"
    touch "$tmp/.complete"
    rm -rf "$native" && mv "$tmp" "$native"
  fi
  echo "$want" >"$stamp"
fi

if [ -n "$jars_pid" ] && ! wait "$jars_pid"; then
  cat "$jars_log" >&2
  log "resolving the Kafka broker jars failed (above)"
  exit 1
fi
# 4. The production bundle that bin/hamstring runs (scripts/build.ts; 2 s, rewritten every time).
log "building dist/ (npm run build)"
node --import tsx scripts/build.ts

log "ready (Kafka $KAFKA_VERSION jars in $libs)"
