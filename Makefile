# Atom mission executive. `make test` and `make demo` set up everything they need themselves.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# Debian's CycloneDDS 0.10.2 seen through the prefix layout cyclonedds-python's build expects.
CDDS_HOME := $(CURDIR)/$(VENV)/cyclonedds-home
DEB_LIB := /usr/lib/$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
SYSTEM_PACKAGES := cyclonedds-dev cyclonedds-tools libsystemd-dev pkg-config gcc python3-dev systemd graphviz tmux
PYTEST_WORKERS ?= 3
# Every DDS participant we start here stays on loopback (see executive/resources).
export CYCLONEDDS_URI := file://$(CURDIR)/executive/resources/cyclonedds-loopback.xml

.PHONY: help system-deps venv aurora-env idl idl-check lint typecheck pytest test test-fast demo sim \
	clean bench-stream \
	bench faults fuzz soak

help:
	@echo "make test   - lint, type-check and run every test (sets up .venv first)"
	@echo "make test-fast - lint, type-check and the tests that start no DDS (the loop)"
	@echo "make demo   - run the simulated Atom and the executive on loopback DDS"
	@echo "make aurora-env - the Fourier Aurora's environments (.venv-aurora, .venv-aurora-vendor)"
	@echo "make idl    - regenerate the Python wire types from idl/ with idlc"
	@echo "make bench  - benchmarks: e-stop to hold, stream jitter, tick, load, memory"
	@echo "make faults - the fault matrix against the sim and the service, as a report"
	@echo "make fuzz   - the long fuzz run: 10,000+ mission files and requests"
	@echo "make soak   - 1,000 missions back to back with random faults and resets"

system-deps:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q "install ok installed" || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing system packages: $$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "error: missing Debian packages: $$missing"; \
	    echo "       install them with: sudo apt-get install $$missing"; exit 1; \
	  fi; \
	fi

# setup.py and the native core's C units too: the editable install compiles the extension once
$(VENV)/.installed: pyproject.toml setup.py $(wildcard executive/robots/native/*.[ch]) | system-deps
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	mkdir -p $(CDDS_HOME)/lib $(CDDS_HOME)/bin
	ln -sfn /usr/include $(CDDS_HOME)/include
	ln -sfn $(DEB_LIB)/libddsc.so $(CDDS_HOME)/lib/libddsc.so
	ln -sfn $(DEB_LIB)/libcycloneddsidl.so $(CDDS_HOME)/lib/libcycloneddsidl.so
	ln -sfn $(DEB_LIB)/cmake $(CDDS_HOME)/lib/cmake
	ln -sfn /usr/bin/idlc $(CDDS_HOME)/bin/idlc
	$(BIN)/pip install -q --upgrade pip==25.2
	CYCLONEDDS_HOME=$(CDDS_HOME) $(BIN)/pip install -q --no-binary cyclonedds -c constraints.txt -e '.[dev]'
	# the Fourier GR-3's URDF (tests/test_gr3_body.py, the Aurora): the file only, not its
	# loaders' dependencies (Pinocchio...); pyproject.toml says why it is no extra
	$(BIN)/pip install -q --no-deps -c constraints.txt fourier-robot-descriptions==0.2.7
	touch $@

venv: $(VENV)/.installed

# The Fourier Aurora's two environments of its own (docs/robots.md, Aurora). One process loads one
# cyclonedds: .venv keeps 0.10.2 (the Atom, the Adam, our topics); the Aurora's wire side
# (executive/robots/aurora/wire, its sim, the adapter's child process) runs in .venv-aurora on
# the cyclonedds 11.0.1 binary wheel. The repository is on its path through a .pth file (the
# wire and the sim import only the standard library, cyclonedds and numpy, the sim's body
# mujoco-core, PyYAML and the GR-3's URDF; the main package's other dependencies are not
# installed there). .venv-aurora-vendor holds the vendor's client
# (fourier-aurora-client, Fast DDS) for tests/aurora_vendor, and nothing of ours.
AURORA_VENV := .venv-aurora
AURORA_VENDOR_VENV := .venv-aurora-vendor

$(AURORA_VENV)/.installed: constraints-aurora.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	rm -rf $(AURORA_VENV)
	$(PYTHON) -m venv $(AURORA_VENV)
	$(AURORA_VENV)/bin/pip install -q --upgrade pip==25.2
	$(AURORA_VENV)/bin/pip install -q --only-binary cyclonedds -c constraints-aurora.txt \
	  cyclonedds==11.0.1 numpy msgpack mujoco-core PyYAML
	# the simulated Aurora's body: the GR-3's URDF file only (as .venv: no loaders' deps)
	$(AURORA_VENV)/bin/pip install -q --no-deps -c constraints-aurora.txt fourier-robot-descriptions
	echo "$(CURDIR)" > "$$($(AURORA_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/atom_executive_repo.pth"
	$(AURORA_VENV)/bin/python -c "import cyclonedds.__library__ as l, executive.robots, executive.robots.aurora.sim.body; assert l.library_path" >/dev/null
	touch $@

$(AURORA_VENDOR_VENV)/.installed: constraints-aurora-vendor.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11 is required)"; exit 1; }
	rm -rf $(AURORA_VENDOR_VENV)
	$(PYTHON) -m venv $(AURORA_VENDOR_VENV)
	$(AURORA_VENDOR_VENV)/bin/pip install -q --upgrade pip==25.2
	$(AURORA_VENDOR_VENV)/bin/pip install -q -c constraints-aurora-vendor.txt fourier-aurora-client==0.1.8
	$(AURORA_VENDOR_VENV)/bin/python -c "import fastdds, fourier_aurora_client" >/dev/null
	touch $@

aurora-env: $(AURORA_VENV)/.installed $(AURORA_VENDOR_VENV)/.installed

idl: venv
	$(BIN)/python -m executive.wire.generate

idl-check: venv
	$(BIN)/python -m executive.wire.generate --check

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: venv
	$(BIN)/mypy

# everything but the timing tests on every core (by file, so a module's stack is shared),
# then the timing tests alone: an e-stop latency measured beside three other test files is
# a measurement of the machine
pytest: venv aurora-env
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not serial"
	$(BIN)/pytest -m serial

test: lint typecheck idl-check pytest

# the loop's tier: lint, types and every test that starts no DDS participant or process
test-fast: lint typecheck
	$(BIN)/pytest -q -m "not dds"

sim: venv
	$(BIN)/atom-executive sim

demo: venv aurora-env
	$(BIN)/python -m executive.demos $(if $(PROFILE),--profile $(PROFILE))

clean:
	rm -rf $(VENV) $(AURORA_VENV) $(AURORA_VENDOR_VENV) .pytest_cache .mypy_cache .ruff_cache

bench-stream: venv
	$(BIN)/python -m bench.run --only codec,stream --no-plots --json bench/results/stream.json

# the plots need the `bench` extra (matplotlib); the figures do not
$(VENV)/.bench-installed: pyproject.toml | venv
	CYCLONEDDS_HOME=$(CDDS_HOME) $(BIN)/pip install -q --no-binary cyclonedds -c constraints.txt -e '.[dev,bench]'
	touch $@

bench: venv $(VENV)/.bench-installed
	$(BIN)/python -m bench.run

faults: venv
	$(BIN)/python -m bench.faults

fuzz: venv
	ATOM_FUZZ=long $(BIN)/pytest tests/fuzz -q

soak: venv
	$(BIN)/python -m bench.soak
