# Two entry points, each self-bootstrapping from a fresh clone:
#   make run   - open the GUI on the bundled example network
#   make test  - run the whole test suite, in two lanes:
#                1. Python 3.9-3.11 with MXNet 1.9.1 (.venv): everything, MXNet the judge;
#                2. Python 3.13 (or 3.12) without MXNet (.venv-nomxnet): the product as
#                   most users install it (tests/nomxnet: engine, CLI, API, window; and
#                   tests/test_packaging.py: the wheel built, installed and run).
# Both create .venv, install the OS package graphviz when `dot` is missing, and install
# mxexplorer with the cpu, test and onnx extras (onnxruntime without its numpy pin).
# `make run` also installs the libraries Qt's xcb platform plugin needs when one is
# missing (found with ldd on the plugin).

PYTHON ?= $(shell for p in python3.11 python3.10 python3.9 python3; do \
             command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(not (3,9) <= sys.version_info[:2] <= (3,11))' 2>/dev/null && { echo $$p; break; }; done)
VENV    := .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
# lane 2's interpreter: a Python 3.13 or 3.12 that runs (pyenv's shims on PATH fail
# unless their version is selected, so its versions folder is searched too)
PY_NEW  ?= $(shell for p in python3.13 python3.12 \
             $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.13*/bin/python3.13 \
             $${PYENV_ROOT:-$$HOME/.pyenv}/versions/3.12*/bin/python3.12; do \
             $$p -c 'import sys; sys.exit(not sys.version_info[:2] >= (3, 12))' >/dev/null 2>&1 \
             && { echo $$p; break; }; done)
VENV_NEW := .venv-nomxnet
NPY      := $(VENV_NEW)/bin/python
NSTAMP   := $(VENV_NEW)/.installed
EXAMPLE := mxexplorer/resources/examples/resnet18_v1-symbol.json
# What PySide6's xcb plugin (libqxcb.so, libQt6XcbQpa) links against on Debian/Ubuntu,
# from ldd, plus libxcb-cursor0, which Qt 6.5+ loads at run time.  A plain X server
# often lacks libxcb-icccm4 and libxcb-keysyms1 (Qt's message names only xcb-cursor0).
QT_XCB_PACKAGES := libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 \
                   libxcb-randr0 libxcb-render-util0 libxcb-render0 libxcb-shape0 \
                   libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 \
                   libxkbcommon-x11-0 libxkbcommon0 libx11-xcb1 libegl1 libgl1 \
                   libfontconfig1 libdbus-1-3 libglib2.0-0

.PHONY: run test test-mxnet test-nomxnet bootstrap bootstrap-nomxnet graphviz qt-libs clean

run: bootstrap
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ] && [ -z "$$QT_QPA_PLATFORM" ]; then \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset); run it in a desktop session, or try: $(VENV)/bin/mxexplorer info $(EXAMPLE)"; \
	  exit 1; fi
	@$(MAKE) --no-print-directory qt-libs
	$(VENV)/bin/mxexplorer $(EXAMPLE) --shape data=1,3,224,224

# the suite on every core, at most four (each worker starts Qt and MXNet); tests that
# share a build stay together (--dist loadgroup)
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

test: test-mxnet test-nomxnet

# lane 1: without a Python 3.9-3.11 (MXNet's), say so (and fail in CI)
test-mxnet:
	@if [ -z "$(PYTHON)" ]; then \
	  echo "make test: lane 1 (MXNet 1.9.1, the judge) not run: it needs python3.11, 3.10 or 3.9"; \
	  if [ -n "$$CI" ]; then exit 1; fi; \
	else $(MAKE) --no-print-directory bootstrap && \
	  QT_QPA_PLATFORM=offscreen $(VPY) -m pytest -q -n $(JOBS) --dist loadgroup $(PYTEST_ARGS); fi

# lane 2: without a Python 3.12+, say so (and fail in CI, where one is expected)
test-nomxnet: graphviz
	@if [ -z "$(PY_NEW)" ]; then \
	  echo "make test: lane 2 (Python 3.12+ without MXNet) not run: no python3.13 or python3.12 found"; \
	  if [ -n "$$CI" ]; then exit 1; fi; \
	else $(MAKE) --no-print-directory bootstrap-nomxnet && \
	  QT_QPA_PLATFORM=offscreen MXEXPLORER_LANE=nomxnet $(NPY) -m pytest -q -n $(JOBS) \
	    -p no:cacheprovider tests/nomxnet tests/test_packaging.py $(PYTEST_ARGS_NOMXNET); fi

bootstrap: graphviz $(STAMP)

# apt-get install $(2) (what it is for: $(1)) as root or through passwordless sudo;
# otherwise print the one command to run
define apt_install
if [ "$$(id -u)" = 0 ]; then SUDO=""; \
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
else echo "$(1) missing; install with: sudo apt-get install -y $(2)"; exit 1; fi; \
echo "installing $(1): $(2)"; \
$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(2) >/dev/null || { \
  echo "could not install $(1); install with: sudo apt-get install -y $(2)"; exit 1; }
endef

graphviz:
	@command -v dot >/dev/null 2>&1 || { $(call apt_install,graphviz (dot),graphviz); }

qt-libs: $(STAMP)
	@plugin=$$($(VPY) -c 'import os, PySide6; print(os.path.join(os.path.dirname(PySide6.__file__), "Qt", "plugins", "platforms", "libqxcb.so"))'); \
	missing=$$(ldd "$$plugin" 2>/dev/null | awk '/not found/ {print $$1}' | sort -u | tr '\n' ' '); \
	case "$$missing" in *libxcb-cursor*) ;; *) \
	  { ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep -q 'libxcb-cursor\.so\.0' \
	    || missing="$$missing libxcb-cursor.so.0";; esac; \
	if [ -n "$$(echo $$missing)" ]; then \
	  echo "Qt's xcb platform needs: $$missing"; \
	  $(call apt_install,Qt's xcb libraries,$(QT_XCB_PACKAGES)); fi

$(VPY):
	@test -n "$(PYTHON)" || { echo "mxexplorer needs Python 3.9-3.11 (MXNet 1.9.1 needs numpy<1.24); install python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)

bootstrap-nomxnet: $(NSTAMP)

$(NPY):
	@test -n "$(PY_NEW)" || { echo "no Python 3.12+ found, and no Python 3.9-3.11 either: install python3.11 (with MXNet) or python3.12+"; exit 1; }
	$(PY_NEW) -m venv $(VENV_NEW)

$(NSTAMP): pyproject.toml | $(NPY)
	$(NPY) -m pip install -q --upgrade pip
	$(NPY) -m pip install -q -e '.[test,onnx]'
	@! $(NPY) -c 'import mxnet' 2>/dev/null || { echo "$(VENV_NEW) must not have MXNet"; exit 1; }
	@touch $(NSTAMP)

$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[cpu,test,onnx]'
	$(VPY) -m pip install -q --no-deps onnxruntime==1.16.3
	@touch $(STAMP)

clean:
	rm -rf $(VENV) $(VENV_NEW) build *.egg-info
