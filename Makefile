# make demo: set-up, Release build, then kiln's main job on the embedded seed model.
# make test: set-up, build, the whole CTest suite.
# make test-sanitize: the suite under ASan+UBSan, the concurrency tests under TSan.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all setup build demo test test-sanitize clean

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
# and bad-input tests (build-tsan/). Not in CI's `make test`: it takes longer
# than CI's budget allows on 2 cores.
test-sanitize: setup
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_TSAN=ON
	cmake --build build-tsan -j $(JOBS) --target kiln_tests
	TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=1" OMP_NUM_THREADS=1 \
	  build-tsan/kiln_tests --gtest_filter='Concurrency*:ModelChecks*:Shapes*:BufferPool*'

clean:
	rm -rf $(BUILD)
