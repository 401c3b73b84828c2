# The two quick-start commands: `make demo` and `make test`. Both install what is missing.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build test unit demo clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@bash scripts/fetch-valijson.sh $(BUILD)/_deps/valijson
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	@bash scripts/fetch-valijson.sh $(BUILD)/_deps/valijson
	cmake --build $(BUILD) -j $(JOBS)

# Every test: doctest units, end-to-end tests of the built binary, testbed integration tests.
test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Units only (no testbed): quick inner loop.
unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit

demo: build
	@bash examples/demo.sh $(BUILD)/plumb

clean:
	rm -rf $(BUILD)
