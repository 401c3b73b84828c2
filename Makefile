# The two quick-start commands: `make demo` and `make test`. Both install what is missing.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLUMB_WERROR=ON
# Ninja: a target's files compile while the libraries it links are still being built (make
# waits for each library in turn, leaving a core idle on the 2-core machine).
GENERATOR ?= Ninja

.PHONY: all deps build test unit demo clean check-sanitize check-asan check-tsan check-includes package

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@bash scripts/fetch-valijson.sh $(BUILD)/_deps/valijson
	cmake -S . -B $(BUILD) -G "$(GENERATOR)" $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	@bash scripts/fetch-valijson.sh $(BUILD)/_deps/valijson
	cmake --build $(BUILD) -j $(JOBS)

# Every test: doctest units, end-to-end tests of the built binary, testbed integration tests.
# promtool (for the watch test's /metrics check) is unpacked here, never by a test. A passing
# test that could not check everything prints "PARTIAL SKIP: what and why"; those lines are
# shown after ctest's summary (ctest shows a passing test's output nowhere else).
test: build
	@bash scripts/fetch-promtool.sh $(BUILD)/_deps/promtool || echo "promtool not fetched: the watch test checks /metrics with its strict parser"
	@cd $(BUILD) && rc=0 && { ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS) || rc=$$?; } && \
	  { grep -h '^PARTIAL SKIP' Testing/Temporary/LastTest.log | sort -u | sed 's/^/ctest: /' || true; } && exit $$rc

# Units only (no testbed): quick inner loop.
unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit

# The demo needs the binary only: no unit tests, no fuzz targets.
demo: deps $(BUILD)/CMakeCache.txt
	@bash scripts/fetch-valijson.sh $(BUILD)/_deps/valijson
	cmake --build $(BUILD) -j $(JOBS) --target plumb
	@bash examples/demo.sh $(BUILD)/plumb

# The Debian package: plumb_<version>_<arch>.deb and its plumb-dbgsym .ddeb (the debug info), in
# $(BUILD). Builds only what the package holds (the binary, its man pages and completions).
package: deps $(BUILD)/CMakeCache.txt
	@bash scripts/fetch-valijson.sh $(BUILD)/_deps/valijson
	cmake --build $(BUILD) -j $(JOBS) --target plumb plumb_docs
	cd $(BUILD) && cpack --config CPackConfig.cmake

# The unit tests under AddressSanitizer+UBSan and under ThreadSanitizer, each in a build tree
# of its own (build-asan, build-tsan). CI runs it beside `make test` (.ci/run). Unity batches
# as in the main build (12 files; they were 8): the same files share a batch, so a name that
# collides in one fails the everyday build first. Optimisation is what makes these
# builds slow, not the checks: inventory's largest unity batch took 169 s of CPU under
# ASan+UBSan at -O2 -g, 26 s at -O0 -g1 (line tables: stack traces keep file:line); TSan wants
# some optimisation to run at speed, and -O1 -g1 compiles the same batch in 20 s.
SAN_FLAGS_address := -O0 -g1 -DNDEBUG
SAN_FLAGS_thread := -O1 -g1 -DNDEBUG
# Clang builds both sanitizer trees: at -O0 it compiles a batch in half GCC's CPU (plans/rollout's
# first batch, ASan+UBSan -O0 -g1: 18.6 s against 38.4 s of user time; the largest test batch
# under TSan at -O0: 29.3 s against 53.5 s). At -O1, where TSan's libraries are, the two are
# even (25.7 s against 23.6 s).
SAN_CXX_address := clang++
SAN_CXX_thread := clang++
# The test code: the ASan tree's own -O0; -O0 in the TSan tree too, whose libraries keep -O1 (the
# largest test batch: 68.0 s of user time at -O1 with GCC; what TSan watches runs in the libraries).
SAN_TEST_OPT_address :=
SAN_TEST_OPT_thread := -O0
SAN_ENV := TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="detect_leaks=1" \
  UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
# sanitize-build SANITIZER DIR: configure and build DIR's unit tests under SANITIZER, and run
# them in two processes at once (doctest's source-file filters split them in halves of about
# the same time): a run takes one core, and in CI this step ends the run, with both cores free.
# The tests compile with SAN_TEST_OPT_<sanitizer> after the build's flags (see tests/CMakeLists.txt).
define sanitize-build
	@bash scripts/fetch-valijson.sh $(2)/_deps/valijson
	@cmake -S . -B $(2) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=$(SAN_CXX_$(1)) \
	  -DCMAKE_CXX_FLAGS="$(SAN_FLAGS_$(1))" \
	  -DPLUMB_SANITIZE=$(1) -DPLUMB_TEST_OPTIMIZE="$(SAN_TEST_OPT_$(1))" -UPLUMB_UNITY_BATCH >/dev/null
	cmake --build $(2) -j $(JOBS) --target unit_tests
	@echo "== unit tests under the $(1) sanitizer: two shards at once (tests/plans/, the rest)"
	@$(SAN_ENV) $(2)/tests/unit_tests -sf='*/tests/plans/*' >$(2)/units-plans.log 2>&1 & plans=$$!; \
	  rest=0; $(SAN_ENV) $(2)/tests/unit_tests -sfe='*/tests/plans/*' >$(2)/units-rest.log 2>&1 || rest=$$?; \
	  both=0; wait $$plans || both=$$?; cat $(2)/units-plans.log $(2)/units-rest.log; \
	  test $$both -eq 0 && test $$rest -eq 0
endef
check-asan: deps
	$(call sanitize-build,address,$(BUILD)-asan)
check-tsan: deps
	$(call sanitize-build,thread,$(BUILD)-tsan)
check-sanitize: check-asan check-tsan

# Every library file compiled on its own (-DPLUMB_UNITY=OFF): a file that only built because its
# unity batch included what it uses fails here. The precompiled header stays (the std and
# third-party headers every build gets: nlohmann/json.hpp alone is 2 s of parsing a file).
# Syntax only (scripts/syntax-only-cxx: no code generation): this checks the includes, not the
# code GCC makes. Clang parses: it takes less CPU than GCC for the same files, and a file must
# then build with both compilers' warnings as errors. CI runs it with the sanitizer builds
# (.ci/run).
check-includes: deps
	@bash scripts/fetch-valijson.sh $(BUILD)-includes/_deps/valijson
	cmake -S . -B $(BUILD)-includes -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=None -DPLUMB_UNITY=OFF \
	  -DCMAKE_CXX_COMPILER=clang++ \
	  -DPLUMB_PCH=ON -DPLUMB_WERROR=ON -DCMAKE_CXX_COMPILER_LAUNCHER=$(CURDIR)/scripts/syntax-only-cxx >/dev/null
	cmake --build $(BUILD)-includes -j $(JOBS) --target plumb_libraries

clean:
	rm -rf $(BUILD)
