# Top-level entry points: `make demo` and `make test` (see README.md); the parts build in their
# own folders (runtime/, bench/, crates/ through cargo) into build/.
BUILD := build
CARGO ?= cargo
PYTHON ?= python3

.PHONY: all deps runtime bench cli demo test lint test-runtime test-bench test-rust test-e2e test-fuzz clean

all: runtime bench cli

deps:
	scripts/install-deps.sh

runtime:
	$(MAKE) -C runtime

bench:
	$(MAKE) -C bench

cli:
	$(CARGO) build --release --locked -p pioscope-cli
	install -D -m 755 target/release/pioscope $(BUILD)/bin/pioscope
	# The GlusterFS lab of `pioscope bench tas`, found from bin/ as ../share/pioscope/.
	install -D -m 755 scripts/gluster-lab.sh $(BUILD)/share/pioscope/gluster-lab.sh

demo: deps
	$(MAKE) all
	scripts/demo.sh

test: deps
	$(MAKE) all
	$(MAKE) lint test-runtime test-bench test-rust test-e2e test-fuzz

# Formatting and lints are gates, not advice (shared/STYLE.md).
lint:
	$(CARGO) fmt --all -- --check
	# fuzz/ is a workspace of its own: its lock must follow the crates' dependencies
	# (after changing them: cargo fetch --manifest-path fuzz/Cargo.toml).
	$(CARGO) fetch --locked --quiet --manifest-path fuzz/Cargo.toml
	$(CARGO) clippy --release --locked --workspace --all-targets -- -D warnings

test-runtime:
	$(MAKE) -C runtime test

test-bench:
	$(MAKE) -C bench check

test-rust:
	$(CARGO) test --release --locked --workspace

test-e2e:
	$(PYTHON) -m pytest tests -q

# Every fuzz target for a bounded time from its seed corpus (docs/FUZZING.md).
FUZZ_SECONDS ?= 10
test-fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) target
