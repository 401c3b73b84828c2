#!/usr/bin/env bash
# make demo: the whole story on an example cluster. Grows with each feature.
set -euo pipefail
plumb=${1:-build/plumb}
"$plumb" --version
