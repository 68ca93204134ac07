# Orrery's two commands: `make demo` (clone to result) and `make test` (clone to a green suite).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# WERROR=ON|OFF sets -Werror; left unset, the build directory keeps what it was configured with
# (OFF on a fresh one), so `make demo` after a CI build does not rebuild everything.
WERROR ?=
DEMO_WORKLOAD ?= examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt

.PHONY: deps build demo test test-sanitize fuzz bench clean format update-references install package

deps:
	@scripts/install-deps.sh

build:
	@cmake -S . -B $(BUILD_DIR) $(if $(WERROR),-DORRERY_WERROR=$(WERROR)) --log-level=WARNING
	@cmake --build $(BUILD_DIR) -j$(JOBS)

# The demo builds the orrery binary only (not the tests and benchmarks).
demo: deps
	@cmake -S . -B $(BUILD_DIR) $(if $(WERROR),-DORRERY_WERROR=$(WERROR)) --log-level=WARNING
	@cmake --build $(BUILD_DIR) -j$(JOBS) --target orrery
	$(BUILD_DIR)/orrery simulate $(DEMO_WORKLOAD) --cluster dgx-a100

# `make install` (PREFIX=/usr/local by default; DESTDIR honoured) and `make package` (a Debian
# package in build/, from the same install rules: cmake/Packaging.cmake).
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX)

package: build
	@cd $(BUILD_DIR) && cpack -G DEB

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer (docs/reliability.md): a
# build in build-sanitize/ at -O1 with line tables only (-g1: stack traces keep file and line, and it
# compiles in half the time of RelWithDebInfo's -O2 -g), every test but the exhaustive ones (the
# Release job runs those); Graphviz's own leak is suppressed (tests/sanitizers/lsan.supp).
SANITIZE_DIR ?= build-sanitize
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# gcc 12's flow analysis, fed the sanitizers' instrumentation, reports libstdc++'s own std::regex
# state as maybe-uninitialized: a false positive outside Orrery's code, silenced here only.
SANITIZE_WARNINGS = -Wno-maybe-uninitialized
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DORRERY_BENCH=OFF \
	  $(if $(WERROR),-DORRERY_WERROR=$(WERROR)) -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS) $(SANITIZE_WARNINGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE_FLAGS)" --log-level=WARNING
	@cmake --build $(SANITIZE_DIR) -j$(JOBS)
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
	  ctest --output-on-failure -j$(JOBS) -E 'EdgeDeleted|CycleMode|KnownPlans|Mpi|ReportInBrowser'

# libFuzzer harnesses for every reader (fuzz/, docs/reliability.md): a clang build with ASan and
# UBSan in build-fuzz/, then each harness for FUZZ_SECONDS on its seeds (the bundled files) and the
# corpus it grew before (build-fuzz/corpus/NAME). A crash, sanitizer report, uncaught exception,
# malformed InputError or input slower than FUZZ_TIMEOUT seconds stops with the input saved as
# build-fuzz/findings/NAME-*; its log is build-fuzz/logs/NAME.log.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 20
FUZZ_TIMEOUT ?= 10
FUZZERS ?= simai_text neusight_table torchviz_dot dfmodel cluster_yaml device_yaml graph_config \
  nccl_tests_log model_yaml chakra_et
fuzz:
	@scripts/install-deps.sh clang libclang-rt-dev
	@cmake -S . -B $(FUZZ_DIR) -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DORRERY_FUZZ=ON -DORRERY_TESTS=OFF \
	  -DORRERY_BENCH=OFF -DORRERY_WERROR=ON --log-level=WARNING
	@cmake --build $(FUZZ_DIR) -j$(JOBS) --target fuzz -- --no-print-directory
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/findings $(FUZZ_DIR)/logs
	@status=0; for f in $(FUZZERS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$f; \
	  if LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
	    $(FUZZ_DIR)/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) \
	      -rss_limit_mb=2048 -print_final_stats=1 -dict=fuzz/dicts/$$f.dict \
	      -artifact_prefix=$(FUZZ_DIR)/findings/$$f- \
	      $(FUZZ_DIR)/corpus/$$f $(FUZZ_DIR)/fuzz/seeds/$$f > $(FUZZ_DIR)/logs/$$f.log 2>&1; then \
	    echo "fuzz $$f: $$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' \
	      $(FUZZ_DIR)/logs/$$f.log | grep -o '[0-9]*$$') runs in $(FUZZ_SECONDS) s, no finding"; \
	  else \
	    status=1; echo "fuzz $$f: FINDING (input saved as $(FUZZ_DIR)/findings/$$f-*)"; \
	    tail -n 40 $(FUZZ_DIR)/logs/$$f.log; \
	  fi; \
	done; exit $$status

bench: deps build
	$(BUILD_DIR)/bench/orrery_bench
	hyperfine --version >/dev/null 2>&1 && hyperfine -N --warmup 5 \
	  '$(BUILD_DIR)/orrery simulate $(DEMO_WORKLOAD)' \
	  '$(BUILD_DIR)/orrery simulate $(DEMO_WORKLOAD) --mode analytical --compat simai' || true

# Regenerates tests/reference/*.json (the pinned outputs ReferenceOutputs compares) from
# tests/reference/manifest.txt, and the command output quoted in README.md and docs/ (blocks
# marked <!-- orrery-output -->, compared by QuotedOutputs): on purpose only, and the diff is read
# like code.
update-references: build
	scripts/update-references.sh $(BUILD_DIR)/orrery

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf $(BUILD_DIR)
