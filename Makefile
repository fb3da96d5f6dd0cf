# Shoal: `make demo` and `make test` set up a fresh Debian 12 machine, build and run.
BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# CI's bounded fuzzing (a smoke run of every harness from its seeds: 103
# seconds of fuzzing in all, two at a time; they find more in runs of minutes, which
# the closing notes report)
FUZZ_SECONDS ?= 10
FUZZ_RULES_SECONDS ?= 8
FUZZ_CB_SECONDS ?= 8
FUZZ_PACKETS_SECONDS ?= 15
FUZZ_REASSEMBLY_SECONDS ?= 8
FUZZ_HTTP_SECONDS ?= 8
FUZZ_DNS_SECONDS ?= 8
FUZZ_TLS_SECONDS ?= 8
FUZZ_SIP_SECONDS ?= 5
FUZZ_SSH_SECONDS ?= 5
FUZZ_FTP_SECONDS ?= 5
FUZZ_ESP_SECONDS ?= 5
FUZZ_DATASET_SECONDS ?= 5
FUZZ_SMTP_SECONDS ?= 5
JOBS       ?= $(shell nproc)
export FUZZ_SECONDS FUZZ_RULES_SECONDS FUZZ_CB_SECONDS FUZZ_PACKETS_SECONDS FUZZ_REASSEMBLY_SECONDS \
  FUZZ_HTTP_SECONDS FUZZ_DNS_SECONDS FUZZ_TLS_SECONDS FUZZ_SIP_SECONDS FUZZ_SSH_SECONDS FUZZ_FTP_SECONDS FUZZ_ESP_SECONDS FUZZ_DATASET_SECONDS \
  FUZZ_SMTP_SECONDS
CMAKE_ARGS ?=

.PHONY: all deps build demo test unit asan-build asan tsan fuzz lint bench clean

all: build

deps:
	@scripts/install-deps.sh

# A unity build (eight sources a unit, the elements' 24: 9 minutes instead of
# 11 on CI's 2 cores, which `make test` spends near its 45-minute budget); a
# source a unit, where a missing include shows, is
# `CMAKE_ARGS=-DCMAKE_UNITY_BUILD=OFF` (and any developer's own cmake build).
build: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON $(CMAKE_ARGS) >$(BUILD).configure.log 2>&1 || (cat $(BUILD).configure.log; exit 1)
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

# One clang build for AddressSanitizer+UndefinedBehaviorSanitizer and for
# libFuzzer: its libraries carry the fuzzers' coverage hooks
# (-fsanitize=fuzzer-no-link, which the ASan runtime answers outside a
# fuzzer), its tests and tools run the suite under both sanitizers, and its
# harnesses fuzz. A GCC ASan build and a separate clang fuzzing build took 20
# of CI's minutes on 2 cores; this one takes 12, with clang's warnings as
# errors beside GCC's in the release build.
asan-build: deps
	@CC=clang CXX=clang++ cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_SANITIZE=ON -DSHOAL_FUZZ=ON \
	  -DSHOAL_CUDA=OFF -DCMAKE_UNITY_BUILD=ON >$(ASAN_BUILD).configure.log 2>&1 || (cat $(ASAN_BUILD).configure.log; exit 1)
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# (every test but the benchmarks' smoke runs, bench_*: their timing loops
# over the same paths the other tests take are the release build's, where
# their figures mean something; under the sanitizers they were 100 of the
# suite's 880 seconds)
asan: asan-build
	@echo "== ASan+UBSan build tests"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j $(JOBS) -E '^bench_'

# The unit tests (workers, host device backend, offload chains...) under
# ThreadSanitizer, one process a core (gtest shards). TSan watches threads:
# it leaves out the single-threaded differential tests of the libraries that
# start none (classification trees, the regex DFA, Aho-Corasick and its port
# groups, Hyperscan against PCRE2, the SAD, the LPM tables, Maglev, the flow
# table's model and key parser, the IPFilter DAG: grep src/shoal for
# std::thread), which ran half of its time and which the ASan+UBSan and
# release suites run.
TSAN_SINGLE_THREADED = ClsTrees.MatchTheLinearOracleOnGeneratedSets:RegexDfa.AgreesWithPcre2OnRandomExpressionsAndStrings:$\
  AhoCorasick.EnginesAgreeWithANaiveSearchOnRuleSets:AhoCorasick.FindsWhatANaiveSearchFinds:AhoCorasick.PortGroups*:$\
  PcreVerification.HyperscanAndTheDfaAnswerAsPcre2Would:Sad.InboundLookupAgreesWithTheSAsAdded:$\
  Sad.PolicyIndexAgreesWithTheScan:Lpm4.*:Lpm6.MatchesLinearScanOnRandomTables:$\
  Maglev.ABackendLeavingOrJoiningMovesLittleMoreThanItsShare:FlowTable.AgreesWithABruteForceModel:$\
  FlowKey.TheInlinedIpv4PathParsesAsTheGeneralOne:IPFilterExpr.DagMatchesLinearAndDirectEvaluationOnRuleLists
tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHOAL_TSAN=ON -DSHOAL_CUDA=OFF -DCMAKE_UNITY_BUILD=ON \
	  >$(TSAN_BUILD).configure.log 2>&1 || (cat $(TSAN_BUILD).configure.log; exit 1)
	@cmake --build $(TSAN_BUILD) -j $(JOBS) --target shoal_unit
	@echo "== ThreadSanitizer build: unit tests"
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 scripts/gtest-shards.sh $(TSAN_BUILD)/tests/shoal_unit --gtest_brief=1 \
	  --gtest_filter=-$(TSAN_SINGLE_THREADED)

# clang-format and clang-tidy (.clang-format, .clang-tidy) over the sources.
lint: build
	@scripts/lint.sh $(BUILD)

fuzz: asan-build
	@scripts/fuzz.sh $(ASAN_BUILD)

bench: build
	@$(BUILD)/shoal bench --out bench/results/latest-cpu.json

clean:
	rm -rf $(BUILD) $(BUILD)-lint $(ASAN_BUILD) $(TSAN_BUILD) *.configure.log
