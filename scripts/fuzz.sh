#!/usr/bin/env bash
# Bounded libFuzzer runs of every harness, as many at once as there are cores
# (each run is one process on one core). Usage: fuzz.sh BUILD_DIR; the
# seconds per harness come from FUZZ_*_SECONDS (the Makefile's). A harness
# that finds a failure, or does not run, fails the script with its log's tail;
# its input is left as BUILD_DIR/NAME-crash-* (libFuzzer's artifact).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1

# name seconds max_len rss_mb "what it fuzzes" seed dirs...
harnesses=(
  "config ${FUZZ_SECONDS:-20} 4096 2048 the-configuration-parser tests/fuzz/seeds examples"
  "rules ${FUZZ_RULES_SECONDS:-15} 4096 2048 the-IDS-rule-parser tests/fuzz/seeds-rules"
  "classbench ${FUZZ_CB_SECONDS:-15} 4096 2048 the-ClassBench-filter-parser-and-the-cut-trees tests/fuzz/seeds-classbench"
  "packets ${FUZZ_PACKETS_SECONDS:-30} 8192 4096 packets-through-configurations tests/fuzz/seeds-packets"
  "reassembly ${FUZZ_REASSEMBLY_SECONDS:-15} 4096 2048 TCP-reassembly-against-its-model"
  "http ${FUZZ_HTTP_SECONDS:-15} 8192 2048 the-HTTP-parser-(libhtp-and-its-transactions) tests/fuzz/seeds-http"
  "dns ${FUZZ_DNS_SECONDS:-15} 4096 2048 the-DNS-parser-(datagrams-and-TCP-framing)"
  "tls ${FUZZ_TLS_SECONDS:-15} 8192 2048 the-TLS-parser-(records,-handshakes,-certificates)"
  "sip ${FUZZ_SIP_SECONDS:-10} 8192 2048 the-SIP-parser-(datagrams-and-TCP-framing) tests/fuzz/seeds-sip"
  "ssh ${FUZZ_SSH_SECONDS:-10} 8192 2048 the-SSH-parser-(identification-lines,-packets,-KEXINIT) tests/fuzz/seeds-ssh"
  "ftp ${FUZZ_FTP_SECONDS:-10} 8192 2048 the-FTP-parser-(command-and-reply-lines) tests/fuzz/seeds-ftp"
  "smtp ${FUZZ_SMTP_SECONDS:-10} 8192 2048 the-SMTP-parser-(commands,-DATA,-BDAT,-MIME-messages) tests/fuzz/seeds-smtp"
  "dataset ${FUZZ_DATASET_SECONDS:-10} 4096 2048 Suricata-dataset-files-and-options"
  "esp ${FUZZ_ESP_SECONDS:-10} 4096 2048 IPsec-(ip-xfrm-commands,-ESP-packets-through-every-suite) tests/fuzz/seeds-sad"
)

run_one() {
  local name=$1 seconds=$2 max_len=$3 rss=$4
  shift 5
  mkdir -p "$build/corpus-$name"
  "$build/fuzz_$name" -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb="$rss" \
    -print_final_stats=1 -artifact_prefix="$build/$name-" "$build/corpus-$name" "$@" >"$build/fuzz-$name.log" 2>&1
}

jobs=$(nproc)
declare -A pid_of
for h in "${harnesses[@]}"; do
  read -r -a f <<<"$h"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "${f[@]}" &
  pid_of[${f[0]}]=$!
done

failed=0
for h in "${harnesses[@]}"; do
  read -r -a f <<<"$h"
  name=${f[0]}
  echo "== fuzzing ${f[4]//-/ } for ${f[1]}s"
  if wait "${pid_of[$name]}"; then
    grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" "$build/fuzz-$name.log"
  else
    tail -n 60 "$build/fuzz-$name.log"
    echo "fuzzing $name found a failure (log: $build/fuzz-$name.log)"
    failed=1
  fi
done
exit $failed
