"""Vendor modes: which mockup a BMC serves and how it behaves where real BMCs differ
(redfish-notes.md §12/§14). Every key can be overridden per BMC with "options" in the config."""

COMMON = {
    "session_limit": 16,            # live sessions; one more login gets session_limit_status
    "session_limit_status": 503,
    "session_timeout": None,        # idle seconds; None = the mockup's SessionTimeout (or 1800)
    "session_location": "relative",  # relative | absolute | none (then only the body @odata.id)
    "session_create_status": 201,   # 201, or 204 like DMTF's Redfish-Mockup-Server
    "login_rejects_authorization": False,  # 415 when the login POST carries Authorization
    "task_location": "relative",    # relative | absolute (https://addr:port/...) monitor URI
    "if_match": "optional",         # optional | required (428 without If-Match on PATCH)
    "action_if_match": "ignore",    # ignore | reject (412 when an action POST carries If-Match)
    "weak_etags": False,
    "bios_patch_status": 204,       # 204 | 200 (body: ExtendedInfo) | "ilo" (200 + error object)
    "reset_status": 204,            # 204 | 200 (body: ExtendedInfo)
    "power_delay": 0.5,             # seconds spent in PoweringOff / PoweringOn
    "initial_power": "On",          # On | Off | mockup (the system's PowerState in the mockup)
    "task_mode": "monitor",         # monitor | monitor-deleted | body-only | no-task
    "task_duration": 2.0,           # seconds from New to Completed
    "task_linger": 3.0,             # monitor-deleted: seconds the finished monitor stays readable
    "fw_apply": "immediate",        # immediate | on-reset | bmc-immediate (BMC now, rest on reset)
    "inventory_lag": 0.0,           # seconds the inventory still shows the old version after an
                                    # update completed with UpdateSuccessful
    "page_size": 0,                 # page every collection at this many members (0 = no paging)
    "redirect_root": False,         # 301 /redfish/v1 -> /redfish/v1/
    "case_insensitive": False,      # path matching (iLO mode)
    "bmc_reboot_seconds": 2.0,      # Manager.Reset: listener down this long, sessions dropped
    "node_settle_seconds": 120.0,   # a linked node's power action may take this long to show in
                                    # the testbed (off; booting; a new boot_id after a reboot)
}

VENDORS = {
    # DMTF public-rackmount1: strict generic service. Task monitors disappear after completion
    # (iDRAC-like) and If-Match on an action is refused (iDRAC SimpleUpdate behaviour).
    "dmtf": dict(mockup="public-rackmount1", action_if_match="reject",
                 task_mode="monitor-deleted", fw_apply="immediate",
                 session_limit=16, session_limit_status=503),
    # HPE iLO 5 (XL675d A100): lower-case links with trailing '/', case-insensitive paths,
    # weak ETags, PATCH -> 200 + "error" object holding SystemResetRequired, SimpleUpdate ->
    # 200 and no task, FirmwareInventory paged, small session limit answered with 400.
    "ilo": dict(mockup="XL675d_A100", case_insensitive=True, redirect_root=True, weak_etags=True,
                bios_patch_status="ilo", reset_status=200, task_mode="no-task",
                fw_apply="bmc-immediate", page_size=10, session_limit=8,
                session_limit_status=400),
    # OpenBMC bmcweb: ActionInfo for ResetType, no $expand, multipart push, If-Match required
    # (AMI/MegaRAC-derived GPU BMCs), firmware applies on the next reset (HttpPushUriApplyTime).
    "openbmc": dict(mockup="OpenBMC-stock", if_match="required", bios_patch_status=200,
                    task_mode="monitor", fw_apply="on-reset", session_limit=64,
                    session_limit_status=503),
}


# The vendor-neutral mode serves any mockup as it is ("neutral:EX235n"): it adds only sessions,
# ETags, settings/pending and tasks where the mockup has them, and honours what the mockup
# advertises (ActionInfo, AllowableValues, SettingsObject, TaskService, HttpPushUriApplyTime).
# Paths match case-insensitively with an optional trailing '/', as real BMCs do (iLO's own links
# need it); power starts as the mockup lists it.
NEUTRAL = dict(case_insensitive=True, initial_power="mockup", task_mode="monitor",
               fw_apply="immediate", session_limit=16, session_limit_status=503)


def split_vendor(vendor):
    """"neutral:EX235n" -> ("neutral", "EX235n"); "ilo" -> ("ilo", None)."""
    name, _, mockup = vendor.partition(":")
    return name, (mockup or None)


def profile(vendor, overrides=None):
    name, mockup = split_vendor(vendor)
    p = dict(COMMON)
    if name == "neutral":
        if not mockup:
            raise ValueError("vendor neutral needs a mockup: neutral:<mockup directory name>")
        p.update(NEUTRAL, mockup=mockup)
    elif name in VENDORS and mockup is None:
        p.update(VENDORS[name])
    else:
        raise ValueError("unknown vendor %r (dmtf | ilo | openbmc | neutral:<mockup>)" % vendor)
    for k, v in (overrides or {}).items():
        if k not in p:
            raise ValueError("unknown BMC option %r" % k)
        p[k] = v
    return p
