# hrm: the two commands a user needs are `make demo` and `make test`; both install what they need.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD ?= build
TEST_BUILD ?= build-test
DEMO_OUT ?= out/demo

.PHONY: all deps build test-build demo test bench clean format

all: build

deps:
	@scripts/install-deps

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHRM_TESTS=OFF >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Tests run under ASan + UBSan.
test-build: deps
	@cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Sanitize -DHRM_TESTS=ON >/dev/null
	@cmake --build $(TEST_BUILD) -j $(JOBS)

test: test-build
	@tests/run $(TEST_BUILD)

demo: build
	@scripts/demo $(BUILD)/hrm $(DEMO_OUT)

bench: build
	@bench/run $(BUILD)/hrm

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(TEST_BUILD) out
