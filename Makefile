# Two entry points, each self-bootstrapping from a fresh clone:
#   make run   - open the GUI on the bundled example network
#   make test  - run the whole test suite
# Both create .venv, install the OS package graphviz when `dot` is missing, and install
# mxexplorer with the cpu, test and onnx extras (onnxruntime without its numpy pin).  `make run` also installs the libraries Qt's
# xcb platform plugin needs when one is missing (found with ldd on the plugin).

PYTHON ?= $(shell for p in python3.11 python3.10 python3.9 python3; do \
             command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(not (3,9) <= sys.version_info[:2] <= (3,11))' 2>/dev/null && { echo $$p; break; }; done)
VENV    := .venv
VPY     := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
EXAMPLE := mxexplorer/resources/examples/resnet18_v1-symbol.json
# What PySide6's xcb plugin (libqxcb.so, libQt6XcbQpa) links against on Debian/Ubuntu,
# from ldd, plus libxcb-cursor0, which Qt 6.5+ loads at run time.  A plain X server
# often lacks libxcb-icccm4 and libxcb-keysyms1 (Qt's message names only xcb-cursor0).
QT_XCB_PACKAGES := libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 \
                   libxcb-randr0 libxcb-render-util0 libxcb-render0 libxcb-shape0 \
                   libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 \
                   libxkbcommon-x11-0 libxkbcommon0 libx11-xcb1 libegl1 libgl1 \
                   libfontconfig1 libdbus-1-3 libglib2.0-0

.PHONY: run test bootstrap graphviz qt-libs clean

run: bootstrap
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ] && [ -z "$$QT_QPA_PLATFORM" ]; then \
	  echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset); run it in a desktop session, or try: $(VENV)/bin/mxexplorer info $(EXAMPLE)"; \
	  exit 1; fi
	@$(MAKE) --no-print-directory qt-libs
	$(VENV)/bin/mxexplorer $(EXAMPLE) --shape data=1,3,224,224

# the suite on every core, at most four (each worker starts Qt and MXNet); tests that
# share a build stay together (--dist loadgroup)
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

test: bootstrap
	QT_QPA_PLATFORM=offscreen $(VPY) -m pytest -q -n $(JOBS) --dist loadgroup $(PYTEST_ARGS)

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

$(STAMP): pyproject.toml | $(VPY)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e '.[cpu,test,onnx]'
	$(VPY) -m pip install -q --no-deps onnxruntime==1.16.3
	@touch $(STAMP)

clean:
	rm -rf $(VENV) build *.egg-info
