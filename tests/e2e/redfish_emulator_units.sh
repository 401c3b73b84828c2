#!/bin/bash
# redfish_emulator_units.sh: unit tests of the Redfish BMC emulator's pure parts (image naming
# convention, multipart parsing, BIOS registry validation, vendor profiles, path matching).
# Python standard library only; no network.
set -u
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src/tests/testbed/redfish" || exit 1
PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s unit -v
