# Shoal: `make demo` and `make test` set up a fresh Debian 12 machine, build and run.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_RULES_SECONDS ?= 20
FUZZ_CB_SECONDS ?= 15
FUZZ_PACKETS_SECONDS ?= 45
FUZZ_REASSEMBLY_SECONDS ?= 20
FUZZ_HTTP_SECONDS ?= 20
FUZZ_DNS_SECONDS ?= 15
FUZZ_TLS_SECONDS ?= 15
FUZZ_SIP_SECONDS ?= 10
FUZZ_SSH_SECONDS ?= 10
FUZZ_FTP_SECONDS ?= 10
FUZZ_ESP_SECONDS ?= 10
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps build demo test unit asan tsan fuzz lint bench clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >$(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

# Every test: the static checks, the ASan+UBSan build's suite, the unit
# tests under ThreadSanitizer, bounded fuzzing runs, and the release build's
# suite.
test: build lint asan tsan fuzz
	@echo "== release build tests"
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS); status=$$?; \
	  scripts/skipped.py $(ASAN_BUILD) "ASan+UBSan build"; scripts/skipped.py $(BUILD) "release build"; exit $$status

unit: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

asan: deps
	@cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_SANITIZE=ON -DSHOAL_CUDA=OFF \
	  >$(ASAN_BUILD).configure.log 2>&1 || (cat $(ASAN_BUILD).configure.log; exit 1)
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@echo "== ASan+UBSan build tests"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS)

# The unit tests (workers, host device backend, offload chains...) under
# ThreadSanitizer, in one process.
tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_TSAN=ON -DSHOAL_CUDA=OFF \
	  >$(TSAN_BUILD).configure.log 2>&1 || (cat $(TSAN_BUILD).configure.log; exit 1)
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target shoal_unit
	@echo "== ThreadSanitizer build: unit tests"
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_BUILD)/tests/shoal_unit --gtest_brief=1

# clang-format and clang-tidy (.clang-format, .clang-tidy) over the sources.
lint: build
	@scripts/lint.sh $(BUILD)

fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_FUZZ=ON \
	  -DSHOAL_CUDA=OFF -DSHOAL_TESTS=OFF -DSHOAL_WERROR=OFF >$(FUZZ_BUILD).configure.log 2>&1 \
	  || (cat $(FUZZ_BUILD).configure.log; exit 1)
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_config fuzz_rules fuzz_classbench fuzz_packets fuzz_reassembly fuzz_http fuzz_dns fuzz_tls fuzz_sip fuzz_ssh fuzz_ftp fuzz_esp
	@echo "== fuzzing the configuration parser for $(FUZZ_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus
	@$(FUZZ_BUILD)/fuzz_config -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ $(FUZZ_BUILD)/corpus tests/fuzz/seeds examples \
	  >$(FUZZ_BUILD)/fuzz.log 2>&1 || (tail -n 60 $(FUZZ_BUILD)/fuzz.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz.log
	@echo "== fuzzing the IDS rule parser for $(FUZZ_RULES_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-rules
	@$(FUZZ_BUILD)/fuzz_rules -max_total_time=$(FUZZ_RULES_SECONDS) -max_len=4096 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/rules- $(FUZZ_BUILD)/corpus-rules tests/fuzz/seeds-rules \
	  >$(FUZZ_BUILD)/fuzz-rules.log 2>&1 || (tail -n 60 $(FUZZ_BUILD)/fuzz-rules.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-rules.log
	@echo "== fuzzing the ClassBench filter parser and the cut trees for $(FUZZ_CB_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-classbench
	@$(FUZZ_BUILD)/fuzz_classbench -max_total_time=$(FUZZ_CB_SECONDS) -max_len=4096 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/classbench- $(FUZZ_BUILD)/corpus-classbench \
	  tests/fuzz/seeds-classbench >$(FUZZ_BUILD)/fuzz-classbench.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-classbench.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-classbench.log
	@echo "== fuzzing packets through configurations for $(FUZZ_PACKETS_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-packets
	@$(FUZZ_BUILD)/fuzz_packets -max_total_time=$(FUZZ_PACKETS_SECONDS) -max_len=8192 -timeout=20 -rss_limit_mb=4096 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/packets- $(FUZZ_BUILD)/corpus-packets \
	  tests/fuzz/seeds-packets >$(FUZZ_BUILD)/fuzz-packets.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-packets.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-packets.log
	@echo "== fuzzing TCP reassembly against its model for $(FUZZ_REASSEMBLY_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-reassembly
	@$(FUZZ_BUILD)/fuzz_reassembly -max_total_time=$(FUZZ_REASSEMBLY_SECONDS) -max_len=4096 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/reassembly- $(FUZZ_BUILD)/corpus-reassembly \
	  >$(FUZZ_BUILD)/fuzz-reassembly.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-reassembly.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-reassembly.log
	@echo "== fuzzing the HTTP parser (libhtp and its transactions) for $(FUZZ_HTTP_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-http
	@$(FUZZ_BUILD)/fuzz_http -max_total_time=$(FUZZ_HTTP_SECONDS) -max_len=8192 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/http- $(FUZZ_BUILD)/corpus-http tests/fuzz/seeds-http \
	  >$(FUZZ_BUILD)/fuzz-http.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-http.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-http.log
	@echo "== fuzzing the DNS parser (datagrams and TCP framing) for $(FUZZ_DNS_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-dns
	@$(FUZZ_BUILD)/fuzz_dns -max_total_time=$(FUZZ_DNS_SECONDS) -max_len=4096 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/dns- $(FUZZ_BUILD)/corpus-dns \
	  >$(FUZZ_BUILD)/fuzz-dns.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-dns.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-dns.log
	@echo "== fuzzing the TLS parser (records, handshakes, certificates) for $(FUZZ_TLS_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-tls
	@$(FUZZ_BUILD)/fuzz_tls -max_total_time=$(FUZZ_TLS_SECONDS) -max_len=8192 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/tls- $(FUZZ_BUILD)/corpus-tls \
	  >$(FUZZ_BUILD)/fuzz-tls.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-tls.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-tls.log
	@echo "== fuzzing the SIP parser (datagrams and TCP framing) for $(FUZZ_SIP_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-sip
	@$(FUZZ_BUILD)/fuzz_sip -max_total_time=$(FUZZ_SIP_SECONDS) -max_len=8192 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/sip- $(FUZZ_BUILD)/corpus-sip tests/fuzz/seeds-sip \
	  >$(FUZZ_BUILD)/fuzz-sip.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-sip.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-sip.log
	@echo "== fuzzing the SSH parser (identification lines, packets, KEXINIT) for $(FUZZ_SSH_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-ssh
	@$(FUZZ_BUILD)/fuzz_ssh -max_total_time=$(FUZZ_SSH_SECONDS) -max_len=8192 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ssh- $(FUZZ_BUILD)/corpus-ssh tests/fuzz/seeds-ssh \
	  >$(FUZZ_BUILD)/fuzz-ssh.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-ssh.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-ssh.log
	@echo "== fuzzing the FTP parser (command and reply lines) for $(FUZZ_FTP_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-ftp
	@$(FUZZ_BUILD)/fuzz_ftp -max_total_time=$(FUZZ_FTP_SECONDS) -max_len=8192 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/ftp- $(FUZZ_BUILD)/corpus-ftp tests/fuzz/seeds-ftp \
	  >$(FUZZ_BUILD)/fuzz-ftp.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-ftp.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-ftp.log
	@echo "== fuzzing IPsec (ip xfrm commands, ESP packets through every suite) for $(FUZZ_ESP_SECONDS)s"
	@mkdir -p $(FUZZ_BUILD)/corpus-esp
	@$(FUZZ_BUILD)/fuzz_esp -max_total_time=$(FUZZ_ESP_SECONDS) -max_len=4096 -rss_limit_mb=2048 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/esp- $(FUZZ_BUILD)/corpus-esp tests/fuzz/seeds-sad \
	  >$(FUZZ_BUILD)/fuzz-esp.log 2>&1 \
	  || (tail -n 60 $(FUZZ_BUILD)/fuzz-esp.log; echo "fuzzing found a failure"; exit 1)
	@grep -E "^(Done|stat::number_of_executed_units|stat::new_units_added)" $(FUZZ_BUILD)/fuzz-esp.log

bench: build
	@$(BUILD)/shoal bench --out bench/results/latest-cpu.json

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) *.configure.log
