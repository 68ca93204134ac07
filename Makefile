# Orrery's two commands: `make demo` (clone to result) and `make test` (clone to a green suite).
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# WERROR=ON|OFF sets -Werror; left unset, the build directory keeps what it was configured with
# (OFF on a fresh one), so `make demo` after a CI build does not rebuild everything.
WERROR ?=
DEMO_WORKLOAD ?= examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt

.PHONY: deps build demo test test-sanitize bench clean format update-references

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

test: deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer (docs/reliability.md): a
# RelWithDebInfo build in build-sanitize/, every test but the exhaustive ones (the Release job runs
# those); Graphviz's own leak is suppressed (tests/sanitizers/lsan.supp).
SANITIZE_DIR ?= build-sanitize
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# gcc 12's flow analysis, fed the sanitizers' instrumentation, reports libstdc++'s own std::regex
# state as maybe-uninitialized: a false positive outside Orrery's code, silenced here only.
SANITIZE_WARNINGS = -Wno-maybe-uninitialized
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORRERY_BENCH=OFF \
	  $(if $(WERROR),-DORRERY_WERROR=$(WERROR)) -DCMAKE_CXX_FLAGS="$(SANITIZE_FLAGS) $(SANITIZE_WARNINGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE_FLAGS)" --log-level=WARNING
	@cmake --build $(SANITIZE_DIR) -j$(JOBS)
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp:print_suppressions=0 \
	  ctest --output-on-failure -j$(JOBS) -E 'EdgeDeleted|CycleMode'

bench: deps build
	$(BUILD_DIR)/bench/orrery_bench
	hyperfine --version >/dev/null 2>&1 && hyperfine -N --warmup 5 \
	  '$(BUILD_DIR)/orrery simulate $(DEMO_WORKLOAD)' \
	  '$(BUILD_DIR)/orrery simulate $(DEMO_WORKLOAD) --mode analytical --compat simai' || true

# Regenerates tests/reference/*.json (the pinned outputs ReferenceOutputs compares) from
# tests/reference/manifest.txt: on purpose only, and the diff is read like code.
update-references: build
	scripts/update-references.sh $(BUILD_DIR)/orrery

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf $(BUILD_DIR)
