# Two entry points, each self-bootstrapping from a fresh clone:
#   make run   - open the GUI on the bundled example network
#   make test  - run the whole test suite
# Both create .venv, install the OS package graphviz when `dot` is missing, and install
# mxexplorer with the cpu and test extras.

PYTHON ?= $(shell for p in python3.11 python3.10 python3.9 python3; do \
             command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(not (3,9) <= sys.version_info[:2] <= (3,11))' 2>/dev/null && { echo $$p; break; }; done)
VENV    := .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
EXAMPLE := resources/examples/resnet18_v1-symbol.json

.PHONY: run test bootstrap graphviz clean

run: bootstrap
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ] && [ -z "$$QT_QPA_PLATFORM" ]; then \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset); run it in a desktop session, or try: $(VPY) -m mxexplorer info $(EXAMPLE)"; \
	  exit 1; fi
	$(VPY) -m mxexplorer $(EXAMPLE) --shape data=1,3,224,224

test: bootstrap
	QT_QPA_PLATFORM=offscreen $(VPY) -m pytest -q $(PYTEST_ARGS)

bootstrap: graphviz $(STAMP)

graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "graphviz (dot) is missing; install it with: sudo apt-get install -y graphviz"; exit 1; fi; \
	  echo "installing the OS package graphviz ..."; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq graphviz >/dev/null || { \
	    echo "could not install graphviz; install it with: sudo apt-get install -y graphviz"; exit 1; }; }

$(VPY):
	@test -n "$(PYTHON)" || { echo "mxexplorer needs Python 3.9-3.11 (MXNet 1.9.1 needs numpy<1.24); install python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[cpu,test]'
	@touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
