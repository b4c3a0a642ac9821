# Top-level entry points: `make demo` and `make test` (see README.md); the parts build in their
# own folders (runtime/, bench/, crates/ through cargo) into build/.
BUILD := build
CARGO ?= cargo
PYTHON ?= python3

# `make install PREFIX=DIR` (docs/INSTALL.md): no root needed, and no scripts/install-deps.sh.
PREFIX ?= $(HOME)/.local
DOCDIR ?= $(PREFIX)/share/doc/pioscope

.PHONY: all deps runtime bench cli demo test lint test-runtime test-bench test-rust test-e2e test-fuzz clean install

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

# Builds with what is installed (a C compiler, an MPI or two, Rust, OTF2) and copies the tree
# pioscope finds its parts in: bin/ (pioscope, the benchmarks), lib/ (one MPI runtime per MPI
# library, libpioscope.so the link to the default, the POSIX runtime, the Fortran module's
# library), include/ (pioscope.h, pioscope.mod), share/pioscope/ and the documentation.
install: all
	install -d $(PREFIX)/bin $(PREFIX)/lib $(PREFIX)/include $(PREFIX)/share/pioscope $(DOCDIR)
	install -m 755 $(BUILD)/bin/* $(PREFIX)/bin/
	cp -P --remove-destination $(BUILD)/lib/libpioscope*.so $(PREFIX)/lib/
	$(if $(wildcard $(BUILD)/lib/*.a),install -m 644 $(wildcard $(BUILD)/lib/*.a) $(PREFIX)/lib/)
	install -m 644 $(BUILD)/include/* $(PREFIX)/include/
	install -m 755 $(BUILD)/share/pioscope/* $(PREFIX)/share/pioscope/
	install -m 644 README.md docs/*.md $(DOCDIR)/

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
	# The slowest tests are listed, so a run that outgrows the budget shows where.
	$(PYTHON) -m pytest tests -q --durations=20

# Every fuzz target for a bounded time from its seed corpus (docs/FUZZING.md).
FUZZ_SECONDS ?= 10
test-fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) target
