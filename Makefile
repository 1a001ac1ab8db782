# make demo: set-up, Release build, then kiln's main job on the embedded seed model.
# make test: set-up, build, the whole CTest suite.
# make test-sanitize: the suite under ASan+UBSan, the concurrency tests under TSan.
# make fuzz: the libFuzzer targets (fuzz/) under ASan+UBSan, FUZZ_TIME s each.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all setup build demo test test-sanitize test-tsan fuzz clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/kiln demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# ASan+UBSan on the whole suite (build-asan/), then TSan on the concurrency
# and bad-input tests (build-tsan/). CI runs the TSan part only (the whole
# suite under ASan would not fit its budget on 2 cores; `make fuzz` covers
# the loader and tensor files under ASan+UBSan there).
test-sanitize: setup
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)
	$(MAKE) test-tsan

# TSan on the concurrency, plan-cache and bad-input tests (build-tsan/; CI
# runs this part). OpenMP (libgomp) is not instrumented, so oneDNN and kiln's
# loops run one thread each; the tests' own std::threads are what TSan checks.
test-tsan: setup
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_TSAN=ON
	cmake --build build-tsan -j $(JOBS) --target kiln_tests
	TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=1" OMP_NUM_THREADS=1 \
	  KILN_CACHE_DIR=$(CURDIR)/build-tsan/test-plan-cache \
	  build-tsan/kiln_tests --gtest_filter='Concurrency*:ModelChecks*:Shapes*:BufferPool*:PlanCache*:Feeds*:Outputs*'

# libFuzzer targets built with clang in build-fuzz/ (-DKILN_FUZZ=ON), seeded
# by fuzz/make_corpus.sh, each run FUZZ_TIME seconds. Fails when a fuzzer
# finds a crash, sanitizer report, leak or timeout: its log is shown and the
# input is left in build-fuzz/artifacts/<target>/ (minimize it with
# `build-fuzz/<target> -minimize_crash=1 -runs=10000 FILE`, then add it to
# tests/regressions/fuzz/<target>/).
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME ?= 60
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
fuzz: setup
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target loader_fuzz tensor_file_fuzz
	bash fuzz/make_corpus.sh $(FUZZ_BUILD)/corpus
	@failed=""; \
	for t in loader tensor_file; do \
	  mkdir -p $(FUZZ_BUILD)/artifacts/$${t}_fuzz; \
	  echo "fuzz: $${t}_fuzz for $(FUZZ_TIME) s"; \
	  if OMP_NUM_THREADS=1 UBSAN_OPTIONS=print_stacktrace=1 $(FUZZ_BUILD)/$${t}_fuzz $(FUZZ_FLAGS) \
	       -max_total_time=$(FUZZ_TIME) -artifact_prefix=$(FUZZ_BUILD)/artifacts/$${t}_fuzz/ \
	       $(FUZZ_BUILD)/corpus/$$t > $(FUZZ_BUILD)/$${t}_fuzz.log 2>&1; then \
	    grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)' $(FUZZ_BUILD)/$${t}_fuzz.log; \
	    grep -E '#[0-9]+' $(FUZZ_BUILD)/$${t}_fuzz.log | tail -1; \
	  else \
	    tail -n 80 $(FUZZ_BUILD)/$${t}_fuzz.log; failed="$$failed $${t}_fuzz"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (inputs in $(FUZZ_BUILD)/artifacts/)"; exit 1; fi; \
	echo "fuzz: no crash"

clean:
	rm -rf $(BUILD)
