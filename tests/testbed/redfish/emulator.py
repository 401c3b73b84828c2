#!/usr/bin/env python3
"""Redfish BMC emulator for the plumb testbed. Usage: emulator.py CONFIG.json [--ready FILE]
The config lists BMCs (name, address, port, vendor, credentials, linked node); README.md
describes it. Normally started by the `bmc up` script, not by hand."""

import argparse
import asyncio
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rfemu.emulator import Emulator, raise_fd_limit  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("config")
    ap.add_argument("--ready", help="write {pid, control_port} here once every listener is up")
    args = ap.parse_args()
    with open(args.config) as f:
        config = json.load(f)
    raise_fd_limit()
    try:
        emu = Emulator(config)
    except (ValueError, KeyError, OSError) as e:
        sys.stderr.write("rfemu: bad config: %s\n" % e)
        return 2
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, loop.stop)
    task = loop.create_task(emu.run(args.ready))
    task.add_done_callback(lambda t: loop.stop() if t.exception() else None)
    loop.run_forever()
    if task.done() and task.exception():
        sys.stderr.write("rfemu: %s\n" % task.exception())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
