# make demo: set-up, Release build, then kiln's main job on the embedded seed model.
# make test: set-up, build, the whole CTest suite.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all setup build demo test clean

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

clean:
	rm -rf $(BUILD)
