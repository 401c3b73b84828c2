#!/usr/bin/env python3
"""Kubernetes API server emulator for the plumb testbed (what kubectl needs for get, annotate,
cordon, uncordon and drain). Python 3 standard library only.

  emulator.py serve DIR        serve the API (HTTPS, DIR/certs) and the control port; writes
                               DIR/port, DIR/ctl-port, DIR/ready.json; DIR/token is the bearer token
  emulator.py ping DIR         exit 0 once the API answers /version with the token over verified TLS
  emulator.py ctl DIR CMD...   control commands (README.md; `ctl DIR help` lists them)

Modelled on the Kubernetes v1.20 API (core/v1, policy/v1beta1 and policy/v1, apps/v1); the
answers are what kubectl 1.20 and 1.32 need. Normally started by `kubeemu up`, not by hand."""

import copy
import datetime
import http.server
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid

SERVER_VERSION = {"major": "1", "minor": "20", "gitVersion": "v1.20.15",
                  "gitCommit": "8f1e5bf0b9729a899b8df86249b56e2c74aebc55",
                  "gitTreeState": "clean", "buildDate": "2022-01-19T17:23:01Z",
                  "goVersion": "go1.15.15", "compiler": "gc", "platform": "linux/amd64"}
KUBELET_VERSION = "v1.20.15"

# ---------------------------------------------------------------------------------------------
# Discovery documents


def _res(name, kind, namespaced, verbs, short=None, group=None, version=None, singular=""):
    r = {"name": name, "singularName": singular, "namespaced": namespaced, "kind": kind,
         "verbs": verbs}
    if short:
        r["shortNames"] = short
    if group is not None:
        r["group"] = group
        r["version"] = version
    return r


RW = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def core_resources():
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        _res("events", "Event", True, RW, ["ev"]),
        _res("namespaces", "Namespace", False, ["create", "delete", "get", "list", "patch",
                                                "update", "watch"], ["ns"]),
        _res("nodes", "Node", False, RW, ["no"]),
        _res("nodes/status", "Node", False, ["get", "patch", "update"]),
        _res("pods", "Pod", True, RW, ["po"]),
        # kubectl >= 1.22 takes the Eviction version from group/version here; 1.20 only checks
        # name and kind, and uses the policy group's preferred version.
        _res("pods/eviction", "Eviction", True, ["create"], group="policy", version="v1"),
        _res("pods/status", "Pod", True, ["get", "patch", "update"]),
    ]}


def group_resources(gv):
    if gv == "policy/v1" or gv == "policy/v1beta1":
        res = [_res("poddisruptionbudgets", "PodDisruptionBudget", True, RW, ["pdb"]),
               _res("poddisruptionbudgets/status", "PodDisruptionBudget", True,
                    ["get", "patch", "update"])]
    elif gv == "apps/v1":
        res = [_res("daemonsets", "DaemonSet", True, RW, ["ds"])]
    else:
        return None
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": res}


def api_groups():
    def g(name, versions):
        vs = [{"groupVersion": name + "/" + v, "version": v} for v in versions]
        return {"name": name, "versions": vs, "preferredVersion": vs[0]}
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [g("apps", ["v1"]), g("policy", ["v1", "v1beta1"])]}


def _pb_key(field, wire):
    return _pb_varint(field << 3 | wire)


def _pb_varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _pb(field, value):
    """A length-delimited protobuf field (string or embedded message)."""
    if isinstance(value, str):
        value = value.encode()
    return _pb_key(field, 2) + _pb_varint(len(value)) + value


def openapi_v2_protobuf():
    """The OpenAPI v2 document in gnostic's protobuf form (openapi_v2.Document), reduced to what
    kubectl 1.20's dry-run verifier reads: the PATCH operations of nodes and pods, with their
    x-kubernetes-group-version-kind and the dryRun query parameter. Field numbers from
    github.com/googleapis/gnostic openapiv2/OpenAPIv2.proto."""
    def patch_op(kind, op_id):
        dry = _pb(1, _pb(2, _pb(3, _pb(2, "query") + _pb(4, "dryRun"))))  # Parameter.non_body.query
        gvk = _pb(1, "x-kubernetes-group-version-kind") + \
            _pb(2, _pb(2, 'group: ""\nkind: %s\nversion: v1\n' % kind))  # NamedAny{name, Any.yaml}
        op = _pb(5, op_id) + _pb(8, dry) + _pb(13, gvk)
        return _pb(8, op)                                                      # PathItem.patch
    paths = _pb(2, _pb(1, "/api/v1/nodes/{name}") + _pb(2, patch_op("Node", "patchCoreV1Node")))
    paths += _pb(2, _pb(1, "/api/v1/namespaces/{namespace}/pods/{name}") +
                 _pb(2, patch_op("Pod", "patchCoreV1NamespacedPod")))
    info = _pb(1, "Kubernetes") + _pb(3, "v1.20.15")
    return _pb(1, "2.0") + _pb(2, info) + _pb(8, paths)


# ---------------------------------------------------------------------------------------------
# Helpers


def now_rfc3339(t=None):
    return datetime.datetime.fromtimestamp(t if t is not None else time.time(),
                                           datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def human_age(created):
    """kubectl's duration.HumanDuration, coarse: 42s, 5m10s, 3h, 2d."""
    try:
        t = datetime.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except (TypeError, ValueError):
        return "<unknown>"
    s = max(0, int(time.time() - t))
    if s < 120:
        return "%ds" % s
    m = s // 60
    if m < 10:
        return "%dm%ds" % (m, s % 60) if s % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = m // 60
    if h < 48:
        return "%dh" % h
    return "%dd" % (h // 24)


def status_obj(code, reason, message, details=None):
    st = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
          "message": message, "reason": reason, "code": code}
    if details:
        st["details"] = details
    return st


def not_found(kind_plural, name, group=""):
    d = {"name": name, "kind": kind_plural}
    if group:
        d["group"] = group
    what = kind_plural + ("." + group if group else "")
    return 404, status_obj(404, "NotFound", '%s "%s" not found' % (what, name), d)


QUALIFIED = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def bad_qualified_name(key):
    """validation.IsQualifiedName: [prefix/]name, name <= 63 chars, prefix a DNS subdomain."""
    parts = key.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not DNS1123_SUB.match(prefix):
            return "prefix part a lowercase RFC 1123 subdomain must consist of lower case " \
                   "alphanumeric characters, '-' or '.', and must start and end with an " \
                   "alphanumeric character"
    elif len(parts) == 1:
        name = parts[0]
    else:
        return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', " \
               "and must start and end with an alphanumeric character (e.g. 'MyName',  or " \
               "'my.name',  or '123-abc', regex used for validation is " \
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain " \
               "prefix and '/' (e.g. 'example.com/MyName')"
    if not name or len(name) > 63 or not QUALIFIED.match(name):
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must " \
               "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  " \
               "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?" \
               "[A-Za-z0-9]')"
    return None


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch; strategic-merge directives ($patch, $retainKeys,
    $setElementOrder/...) are dropped (kubectl sends none for the node fields modelled here)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


class PatchError(Exception):
    pass


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(doc, ops):
    """RFC 6902 (add, remove, replace, test, copy, move)."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")

    def parent(parts):
        cur = doc
        for p in parts[:-1]:
            if isinstance(cur, list):
                cur = cur[int(p)]
            elif isinstance(cur, dict) and p in cur:
                cur = cur[p]
            else:
                raise PatchError("doc is missing path: %s" % "/".join(parts))
        return cur

    def get(parts):
        cur = doc
        for p in parts:
            if isinstance(cur, list):
                cur = cur[int(p)]
            elif isinstance(cur, dict) and p in cur:
                cur = cur[p]
            else:
                raise PatchError("doc is missing path: /%s" % "/".join(parts))
        return cur

    def remove(parts):
        par = parent(parts)
        if isinstance(par, list):
            return par.pop(int(parts[-1]))
        if parts[-1] not in par:
            raise PatchError("doc is missing key: /%s" % "/".join(parts))
        return par.pop(parts[-1])

    def add(parts, value):
        nonlocal doc
        if not parts:
            doc = value
            return
        par = parent(parts)
        if isinstance(par, list):
            i = len(par) if parts[-1] == "-" else int(parts[-1])
            par.insert(i, value)
        else:
            par[parts[-1]] = value

    try:
        for op in ops:
            kind = op.get("op")
            parts = _ptr(op.get("path", ""))
            if kind == "add":
                add(parts, copy.deepcopy(op["value"]))
            elif kind == "remove":
                remove(parts)
            elif kind == "replace":
                remove(parts)
                add(parts, copy.deepcopy(op["value"]))
            elif kind == "test":
                if get(parts) != op.get("value"):
                    raise PatchError("testing value /%s failed" % "/".join(parts))
            elif kind in ("copy", "move"):
                src = _ptr(op["from"])
                v = remove(src) if kind == "move" else copy.deepcopy(get(src))
                add(parts, v)
            else:
                raise PatchError("unexpected operation %r" % kind)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as e:
        raise PatchError("invalid JSON patch: %s" % e)
    return doc


def parse_selector(text, fields=False):
    """A field or label selector as kubectl sends it: terms joined by ',', each k=v, k==v,
    k!=v (labels also k, !k, k in (a,b), k notin (a,b)). Returns [(key, op, values)]."""
    terms = []
    if not text:
        return terms
    for raw in re.split(r",(?![^()]*\))", text):
        t = raw.strip()
        if not t:
            continue
        m = re.match(r"^([^!=\s]+)\s*(==|=|!=)\s*(.*)$", t)
        if m:
            terms.append((m.group(1), "!=" if m.group(2) == "!=" else "=", [m.group(3)]))
            continue
        if fields:
            raise ValueError("invalid selector: '%s'; can't understand '%s'" % (text, t))
        m = re.match(r"^(\S+)\s+(in|notin)\s+\((.*)\)$", t)
        if m:
            terms.append((m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",")]))
        elif t.startswith("!"):
            terms.append((t[1:].strip(), "!exists", []))
        elif re.match(r"^[A-Za-z0-9./_-]+$", t):
            terms.append((t, "exists", []))
        else:
            raise ValueError("unable to parse requirement: %s" % t)
    return terms


def labels_match(terms, labels):
    labels = labels or {}
    for key, op, vals in terms:
        have = key in labels
        v = labels.get(key)
        if op == "=" and not (have and v == vals[0]):
            return False
        if op == "!=" and have and v == vals[0]:
            return False
        if op == "in" and not (have and v in vals):
            return False
        if op == "notin" and have and v in vals:
            return False
        if op == "exists" and not have:
            return False
        if op == "!exists" and have:
            return False
    return True


POD_FIELDS = {"metadata.name": lambda p: p["metadata"]["name"],
              "metadata.namespace": lambda p: p["metadata"]["namespace"],
              "spec.nodeName": lambda p: p["spec"].get("nodeName", ""),
              "spec.restartPolicy": lambda p: p["spec"].get("restartPolicy", ""),
              "spec.schedulerName": lambda p: p["spec"].get("schedulerName", ""),
              "spec.serviceAccountName": lambda p: p["spec"].get("serviceAccountName", ""),
              "status.phase": lambda p: p["status"].get("phase", ""),
              "status.podIP": lambda p: p["status"].get("podIP", ""),
              "status.nominatedNodeName": lambda p: p["status"].get("nominatedNodeName", "")}
NODE_FIELDS = {"metadata.name": lambda n: n["metadata"]["name"],
               "spec.unschedulable": lambda n: "true" if n["spec"].get("unschedulable") else
               "false"}
class EventFields(dict):
    """Any involvedObject.* / reason / source / type field selector is accepted for events."""
    def __contains__(self, key):
        return key.startswith("involvedObject.") or key in (
            "metadata.name", "metadata.namespace", "reason", "source", "type",
            "reportingComponent")


OTHER_FIELDS = {"metadata.name": lambda o: o["metadata"]["name"],
                "metadata.namespace": lambda o: o["metadata"].get("namespace", "")}


def fields_match(terms, obj, table):
    for key, op, vals in terms:
        v = table[key](obj)
        if (op == "=") != (v == vals[0]):
            return False
    return True


class RawBody:
    def __init__(self, data, ctype):
        self.data = data
        self.ctype = ctype


class ApiError(Exception):
    def __init__(self, code, body):
        super().__init__(body.get("message", ""))
        self.code = code
        self.body = body


def bad_request(msg):
    return ApiError(400, status_obj(400, "BadRequest", msg))


# ---------------------------------------------------------------------------------------------
# The cluster's state


class Cluster:
    def __init__(self):
        self.lock = threading.RLock()
        self.rv = 1000
        self.nodes = {}          # name -> Node
        self.pods = {}           # (ns, name) -> Pod
        self.pdbs = {}           # (ns, name) -> PodDisruptionBudget (spec only; status computed)
        self.daemonsets = {}     # (ns, name) -> DaemonSet
        self.namespaces = {}     # name -> Namespace
        self.delete_at = {}      # (ns, name) -> monotonic time the pod disappears
        self.pod_seq = 0         # pod IPs: 10.244.<seq/250>.<seq%250+1>
        for ns in ("default", "kube-system"):
            self.ensure_namespace(ns)

    def bump(self):
        self.rv += 1
        return str(self.rv)

    def meta(self, name, namespace=None):
        m = {"name": name, "uid": str(uuid.uuid4()), "resourceVersion": self.bump(),
             "creationTimestamp": now_rfc3339()}
        if namespace is not None:
            m["namespace"] = namespace
        return m

    def ensure_namespace(self, ns):
        if ns not in self.namespaces:
            m = self.meta(ns)
            m["labels"] = {"kubernetes.io/metadata.name": ns}
            self.namespaces[ns] = {"metadata": m, "spec": {"finalizers": ["kubernetes"]},
                                   "status": {"phase": "Active"}}

    # -- nodes ----------------------------------------------------------------------------
    def add_node(self, name, ready="True", labels=None, unschedulable=False, address=None):
        m = self.meta(name)
        m["labels"] = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                       "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                       "kubernetes.io/os": "linux"}
        m["labels"].update(labels or {})
        m["annotations"] = {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
        idx = len(self.nodes) + 1
        node = {"metadata": m,
                "spec": {"podCIDR": "10.244.%d.0/24" % idx, "podCIDRs": ["10.244.%d.0/24" % idx]},
                "status": {"addresses": [{"type": "InternalIP",
                                          "address": address or "192.0.2.%d" % (idx % 250 + 1)},
                                         {"type": "Hostname", "address": name}],
                           "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                           "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                           "conditions": [],
                           "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                           "nodeInfo": {"architecture": "amd64", "bootID": str(uuid.uuid4()),
                                        "containerRuntimeVersion": "containerd://1.6.20",
                                        "kernelVersion": "6.1.0-18-amd64",
                                        "kubeProxyVersion": KUBELET_VERSION,
                                        "kubeletVersion": KUBELET_VERSION,
                                        "machineID": uuid.uuid4().hex,
                                        "operatingSystem": "linux",
                                        "osImage": "Debian GNU/Linux 12 (bookworm)",
                                        "systemUUID": str(uuid.uuid4())}}}
        if unschedulable:
            node["spec"]["unschedulable"] = True
        self.nodes[name] = node
        self.set_ready(name, ready, bump=False)
        self.fix_taints(node)
        return node

    def set_ready(self, name, ready, bump=True):
        node = self.nodes[name]
        t = now_rfc3339()
        ready = {"true": "True", "false": "False", "unknown": "Unknown"}.get(str(ready).lower(),
                                                                             ready)
        if ready not in ("True", "False", "Unknown"):
            raise ValueError("ready must be true, false or unknown")
        reason, msg = {"True": ("KubeletReady", "kubelet is posting ready status"),
                       "False": ("KubeletNotReady", "container runtime is down"),
                       "Unknown": ("NodeStatusUnknown", "Kubelet stopped posting node status.")
                       }[ready]
        conds = []
        for typ, r, m in (("MemoryPressure", "KubeletHasSufficientMemory",
                           "kubelet has sufficient memory available"),
                          ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                          ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available")):
            conds.append({"type": typ, "status": "Unknown" if ready == "Unknown" else "False",
                          "reason": r, "message": m, "lastHeartbeatTime": t,
                          "lastTransitionTime": node["metadata"]["creationTimestamp"]})
        conds.append({"type": "Ready", "status": ready, "reason": reason, "message": msg,
                      "lastHeartbeatTime": t, "lastTransitionTime": t})
        node["status"]["conditions"] = conds
        taints = [x for x in node["spec"].get("taints", [])
                  if x["key"] not in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")]
        if ready != "True":
            key = "node.kubernetes.io/not-ready" if ready == "False" else "node.kubernetes.io/unreachable"
            taints.append({"key": key, "effect": "NoSchedule", "timeAdded": t})
        self.set_taints(node, taints)
        if bump:
            node["metadata"]["resourceVersion"] = self.bump()

    @staticmethod
    def set_taints(node, taints):
        if taints:
            node["spec"]["taints"] = taints
        else:
            node["spec"].pop("taints", None)

    def fix_taints(self, node):
        """The node lifecycle controller's unschedulable taint, applied at once."""
        key = "node.kubernetes.io/unschedulable"
        have = [x for x in node["spec"].get("taints", []) if x.get("key") == key]
        taints = [x for x in node["spec"].get("taints", []) if x.get("key") != key]
        if node["spec"].get("unschedulable"):
            taints.append(have[0] if have else {"key": key, "effect": "NoSchedule",
                                                "timeAdded": now_rfc3339()})
        self.set_taints(node, taints)

    # -- pods -----------------------------------------------------------------------------
    def add_pod(self, ns, name, node, labels=None, owner=None, grace=30, mirror=False,
                emptydir=False, phase="Running"):
        self.ensure_namespace(ns)
        m = self.meta(name, ns)
        m["labels"] = dict(labels or {})
        if mirror:
            m["annotations"] = {"kubernetes.io/config.hash": uuid.uuid4().hex,
                                "kubernetes.io/config.mirror": uuid.uuid4().hex,
                                "kubernetes.io/config.seen": now_rfc3339(),
                                "kubernetes.io/config.source": "file"}
            owner = owner or "Node/" + node
        if owner and owner.lower() != "none":
            okind, _, oname = owner.partition("/")
            api = {"ReplicaSet": "apps/v1", "DaemonSet": "apps/v1", "StatefulSet": "apps/v1",
                   "Deployment": "apps/v1", "Job": "batch/v1", "ReplicationController": "v1",
                   "Node": "v1"}.get(okind)
            if api is None or not oname:
                raise ValueError("owner must be KIND/NAME with KIND one of ReplicaSet, DaemonSet,"
                                 " StatefulSet, Job, ReplicationController, Node (or none)")
            if okind == "DaemonSet":
                self.ensure_daemonset(ns, oname, labels)
            m["ownerReferences"] = [{"apiVersion": api, "kind": okind, "name": oname,
                                     "uid": self.owner_uid(ns, okind, oname),
                                     "controller": True, "blockOwnerDeletion": True}]
        vols = [{"name": "default-token", "secret": {"secretName": "default-token",
                                                     "defaultMode": 420}}]
        if emptydir:
            vols.append({"name": "scratch", "emptyDir": {}})
        t = now_rfc3339()
        self.pod_seq += 1
        idx = self.pod_seq + 1
        host_ip = next((a["address"] for a in self.nodes[node]["status"]["addresses"]
                        if a["type"] == "InternalIP"), "") if node in self.nodes else ""
        pod = {"metadata": m,
               "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.2",
                                        "imagePullPolicy": "IfNotPresent",
                                        "resources": {},
                                        "terminationMessagePath": "/dev/termination-log",
                                        "terminationMessagePolicy": "File"}],
                        "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
                        "nodeName": node, "priority": 0, "restartPolicy": "Always",
                        "schedulerName": "default-scheduler", "securityContext": {},
                        "serviceAccount": "default", "serviceAccountName": "default",
                        "terminationGracePeriodSeconds": int(grace),
                        "tolerations": [{"effect": "NoExecute",
                                         "key": "node.kubernetes.io/not-ready",
                                         "operator": "Exists", "tolerationSeconds": 300}],
                        "volumes": vols},
               "status": {"phase": phase, "hostIP": host_ip,
                          "podIP": "10.244.%d.%d" % (idx // 250, idx % 250 + 1),
                          "qosClass": "BestEffort", "startTime": t}}
        self.set_phase(pod, phase)
        self.pods[(ns, name)] = pod
        return pod

    def owner_uid(self, ns, kind, name):
        # stable per owner, so pods of one ReplicaSet share their owner's uid
        return str(uuid.uuid5(uuid.NAMESPACE_URL, "owner:%s/%s/%s" % (ns, kind, name)))

    def ensure_daemonset(self, ns, name, labels):
        if (ns, name) in self.daemonsets:
            return
        m = self.meta(name, ns)
        m["uid"] = self.owner_uid(ns, "DaemonSet", name)
        m["generation"] = 1
        sel = dict(labels or {"app": name})
        self.daemonsets[(ns, name)] = {
            "metadata": m,
            "spec": {"selector": {"matchLabels": sel},
                     "template": {"metadata": {"labels": sel},
                                  "spec": {"containers": [{"name": "main",
                                                           "image": "registry.k8s.io/pause:3.2"}]}},
                     "updateStrategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxUnavailable": 1}}},
            "status": {"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
                       "numberMisscheduled": 0, "numberReady": 0}}

    @staticmethod
    def set_phase(pod, phase):
        if phase not in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            raise ValueError("phase must be Pending, Running, Succeeded, Failed or Unknown")
        t = pod["status"]["startTime"]
        pod["status"]["phase"] = phase
        ready = phase == "Running"
        pod["status"]["conditions"] = [
            {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": t},
            {"type": "Ready", "status": "True" if ready else "False", "lastProbeTime": None,
             "lastTransitionTime": t},
            {"type": "ContainersReady", "status": "True" if ready else "False",
             "lastProbeTime": None, "lastTransitionTime": t},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": t}]
        if phase == "Running":
            state = {"running": {"startedAt": t}}
        elif phase in ("Succeeded", "Failed"):
            state = {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1,
                                    "reason": "Completed" if phase == "Succeeded" else "Error",
                                    "startedAt": t, "finishedAt": now_rfc3339()}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        pod["status"]["containerStatuses"] = [
            {"name": "main", "image": "registry.k8s.io/pause:3.2", "imageID": "",
             "ready": ready, "restartCount": 0, "started": ready, "state": state,
             "lastState": {}}]

    def delete_pod(self, key, grace=None, dry_run=False):
        """Graceful deletion: deletionTimestamp now, gone after the grace period (0: at once).
        Returns the pod as the API answers it."""
        pod = self.pods[key]
        if grace is None:
            grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
        grace = max(0, int(grace))
        out = copy.deepcopy(pod)
        if pod["metadata"].get("deletionTimestamp"):
            # already terminating: a shorter grace period may still cut it short
            if not dry_run and grace < pod["metadata"].get("deletionGracePeriodSeconds", 0):
                pod["metadata"]["deletionGracePeriodSeconds"] = grace
                self.delete_at[key] = min(self.delete_at[key], time.monotonic() + grace)
            return out
        out["metadata"]["deletionTimestamp"] = now_rfc3339(time.time() + grace)
        out["metadata"]["deletionGracePeriodSeconds"] = grace
        if dry_run:
            return out
        if grace == 0:
            del self.pods[key]
            self.delete_at.pop(key, None)
            return out
        rv = self.bump()
        out["metadata"]["resourceVersion"] = rv
        pod["metadata"].update({"deletionTimestamp": out["metadata"]["deletionTimestamp"],
                                "deletionGracePeriodSeconds": grace, "resourceVersion": rv})
        self.delete_at[key] = time.monotonic() + grace
        return out

    def reap(self):
        with self.lock:
            t = time.monotonic()
            for key, when in list(self.delete_at.items()):
                if when <= t:
                    self.pods.pop(key, None)
                    del self.delete_at[key]

    # -- PodDisruptionBudgets -------------------------------------------------------------
    def add_pdb(self, ns, name, match_labels, min_available=None, max_unavailable=None):
        if (min_available is None) == (max_unavailable is None):
            raise ValueError("give exactly one of min-available and max-unavailable")
        self.ensure_namespace(ns)
        old = self.pdbs.get((ns, name))
        m = self.meta(name, ns)
        if old:
            m["uid"] = old["metadata"]["uid"]
            m["creationTimestamp"] = old["metadata"]["creationTimestamp"]
        m["generation"] = (old["metadata"]["generation"] + 1) if old else 1
        spec = {"selector": {"matchLabels": dict(match_labels)}}
        if min_available is not None:
            spec["minAvailable"] = int(min_available)
        else:
            spec["maxUnavailable"] = int(max_unavailable)
        self.pdbs[(ns, name)] = {"metadata": m, "spec": spec}

    def pdb_pods(self, pdb):
        ns = pdb["metadata"]["namespace"]
        sel = pdb["spec"]["selector"]["matchLabels"]
        return [p for (pns, _), p in self.pods.items()
                if pns == ns and sel and all(p["metadata"]["labels"].get(k) == v
                                             for k, v in sel.items())]

    def pdb_status(self, pdb):
        """What the disruption controller would publish. Expected pods: the matching pods that
        exist (a real controller asks the owner's scale); healthy: Running, Ready and not being
        deleted."""
        pods = self.pdb_pods(pdb)
        expected = len(pods)
        healthy = sum(1 for p in pods if p["status"].get("phase") == "Running"
                      and not p["metadata"].get("deletionTimestamp"))
        if "minAvailable" in pdb["spec"]:
            desired = pdb["spec"]["minAvailable"]
        else:
            desired = max(0, expected - pdb["spec"]["maxUnavailable"])
        allowed = max(0, healthy - desired)
        t = now_rfc3339()
        return {"observedGeneration": pdb["metadata"]["generation"],
                "disruptionsAllowed": allowed, "currentHealthy": healthy,
                "desiredHealthy": desired, "expectedPods": expected,
                "conditions": [{"type": "DisruptionAllowed",
                                "status": "True" if allowed > 0 else "False",
                                "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                                "message": "", "observedGeneration": pdb["metadata"]["generation"],
                                "lastTransitionTime": t}]}

    def pdb_view(self, pdb, version):
        """The PDB with its computed status (policy v1 and v1beta1 look alike here)."""
        del version
        o = copy.deepcopy(pdb)
        o["status"] = self.pdb_status(pdb)
        return o

    def evict(self, ns, name, body, dry_run):
        key = (ns, name)
        if key not in self.pods:
            raise ApiError(*not_found("pods", name))
        if not isinstance(body, dict) or body.get("kind") not in (None, "Eviction") or \
                body.get("apiVersion") not in (None, "policy/v1", "policy/v1beta1"):
            raise bad_request("the body of an eviction must be a policy/v1 or policy/v1beta1 "
                              "Eviction")
        md = body.get("metadata") or {}
        if md.get("name") and md["name"] != name:
            raise bad_request("name in URL does not match name in Eviction object")
        if md.get("namespace") and md["namespace"] != ns:
            raise bad_request("namespace in URL does not match namespace in Eviction object")
        opts = body.get("deleteOptions") or {}
        grace = opts.get("gracePeriodSeconds")
        if opts.get("dryRun"):        # kubectl >= 1.22 puts --dry-run=server here, not in the URL
            if opts["dryRun"] != ["All"]:
                raise bad_request('Invalid dryRun value: %s. Valid values are: "All"' %
                                  json.dumps(opts["dryRun"]))
            dry_run = True
        pod = self.pods[key]
        # Pods that cannot count against a budget (eviction.go canIgnorePDB, v1.21+ and what
        # kubectl sees from v1.20 for terminal pods): no budget check.
        ignore = pod["status"].get("phase") in ("Succeeded", "Failed", "Pending") or \
            bool(pod["metadata"].get("deletionTimestamp"))
        if not ignore:
            pdbs = [p for (pns, _), p in sorted(self.pdbs.items())
                    if pns == ns and p["spec"]["selector"]["matchLabels"] and
                    labels_match([(k, "=", [v]) for k, v in
                                  p["spec"]["selector"]["matchLabels"].items()],
                                 pod["metadata"]["labels"])]
            if len(pdbs) > 1:
                raise ApiError(500, status_obj(500, "InternalError",
                                               "This pod has more than one PodDisruptionBudget, "
                                               "which the eviction subresource does not support."))
            if pdbs:
                st = self.pdb_status(pdbs[0])
                if st["disruptionsAllowed"] == 0:
                    msg = "The disruption budget %s needs %d healthy pods and has %d currently" % (
                        pdbs[0]["metadata"]["name"], st["desiredHealthy"], st["currentHealthy"])
                    raise ApiError(429, status_obj(
                        429, "TooManyRequests",
                        "Cannot evict pod as it would violate the pod's disruption budget.",
                        {"causes": [{"reason": "DisruptionBudget", "message": msg}]}))
        self.delete_pod(key, grace, dry_run)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "code": 201}


# ---------------------------------------------------------------------------------------------
# Tables (the human output of `kubectl get`)

TABLE_COLS = {
    "nodes": [("Name", "string", "name", 0), ("Status", "string", "", 0),
              ("Roles", "string", "", 0), ("Age", "string", "", 0), ("Version", "string", "", 0),
              ("Internal-IP", "string", "", 1), ("External-IP", "string", "", 1),
              ("OS-Image", "string", "", 1), ("Kernel-Version", "string", "", 1),
              ("Container-Runtime", "string", "", 1)],
    "pods": [("Name", "string", "name", 0), ("Ready", "string", "", 0),
             ("Status", "string", "", 0), ("Restarts", "integer", "", 0),
             ("Age", "string", "", 0), ("IP", "string", "", 1), ("Node", "string", "", 1),
             ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1)],
    "poddisruptionbudgets": [("Name", "string", "name", 0), ("Min Available", "string", "", 0),
                             ("Max Unavailable", "string", "", 0),
                             ("Allowed Disruptions", "integer", "", 0), ("Age", "string", "", 0)],
    "namespaces": [("Name", "string", "name", 0), ("Status", "string", "", 0),
                   ("Age", "string", "", 0)],
    "daemonsets": [("Name", "string", "name", 0), ("Desired", "integer", "", 0),
                   ("Current", "integer", "", 0), ("Ready", "integer", "", 0),
                   ("Up-to-date", "integer", "", 0), ("Available", "integer", "", 0),
                   ("Node Selector", "string", "", 0), ("Age", "string", "", 0)],
}


def table_cells(resource, o):
    md = o["metadata"]
    age = human_age(md.get("creationTimestamp"))
    if resource == "nodes":
        ready = "Unknown"
        for c in o["status"].get("conditions", []):
            if c["type"] == "Ready":
                ready = "Ready" if c["status"] == "True" else "NotReady"
        if o["spec"].get("unschedulable"):
            ready += ",SchedulingDisabled"
        roles = sorted(k.split("/", 1)[1] for k in md.get("labels", {})
                       if k.startswith("node-role.kubernetes.io/"))
        addr = {a["type"]: a["address"] for a in o["status"].get("addresses", [])}
        ni = o["status"].get("nodeInfo", {})
        return [md["name"], ready, ",".join(roles) or "<none>", age, ni.get("kubeletVersion", ""),
                addr.get("InternalIP", "<none>"), addr.get("ExternalIP", "<none>"),
                ni.get("osImage", ""), ni.get("kernelVersion", ""),
                ni.get("containerRuntimeVersion", "")]
    if resource == "pods":
        cs = o["status"].get("containerStatuses", [])
        status = o["status"].get("phase", "")
        if md.get("deletionTimestamp"):
            status = "Terminating"
        elif status in ("Succeeded", "Failed"):
            status = "Completed" if status == "Succeeded" else "Error"
        return [md["name"], "%d/%d" % (sum(1 for c in cs if c.get("ready")),
                                       len(o["spec"]["containers"])), status,
                sum(c.get("restartCount", 0) for c in cs), age,
                o["status"].get("podIP", "<none>"), o["spec"].get("nodeName", "<none>"),
                "<none>", "<none>"]
    if resource == "poddisruptionbudgets":
        s = o["spec"]
        return [md["name"], str(s.get("minAvailable", "N/A")), str(s.get("maxUnavailable", "N/A")),
                o.get("status", {}).get("disruptionsAllowed", 0), age]
    if resource == "namespaces":
        return [md["name"], o["status"]["phase"], age]
    if resource == "daemonsets":
        return [md["name"], 0, 0, 0, 0, 0, "<none>", age]
    return [md["name"], age]


def to_table(resource, items, rv, version, include):
    cols = TABLE_COLS.get(resource, [("Name", "string", "name", 0), ("Age", "string", "", 0)])
    rows = []
    for o in items:
        row = {"cells": table_cells(resource, o)}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/" + version,
                             "metadata": o["metadata"]}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/" + version,
            "metadata": {"resourceVersion": rv},
            "columnDefinitions": [{"name": n, "type": t, "format": f, "description": n,
                                   "priority": p} for n, t, f, p in cols],
            "rows": rows}


def wants_table(accept):
    """Table version (v1 or v1beta1) if the Accept header asks for one first, else None."""
    for part in (accept or "").split(","):
        params = dict(kv.strip().split("=", 1) for kv in part.split(";")[1:] if "=" in kv)
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return params.get("v", "v1")
        if part.split(";")[0].strip() in ("application/json", "*/*") and "as" not in params:
            return None
    return None


# ---------------------------------------------------------------------------------------------
# The API server


class Emulator:
    def __init__(self, run_dir):
        self.dir = run_dir
        self.token = open(os.path.join(run_dir, "token")).read().strip()
        self.cluster = Cluster()
        self.audit = []
        self.audit_lock = threading.Lock()
        self.fault = None        # {"mode", "until", "match"}
        self.log = open(os.path.join(run_dir, "requests.log"), "a", buffering=1)
        self.stopping = threading.Event()

    def active_fault(self, method, path):
        f = self.fault
        if not f:
            return None
        if f["until"] is not None and time.monotonic() >= f["until"]:
            self.fault = None
            return None
        if f.get("match") and f["match"] not in method + " " + path:
            return None
        return f

    def record(self, method, path, code, ua, ctype):
        e = {"time": round(time.time(), 3), "method": method, "path": path, "status": code,
             "user_agent": ua or "", "content_type": ctype or ""}
        with self.audit_lock:
            self.audit.append(e)
            if len(self.audit) > 200000:
                del self.audit[:100000]
        self.log.write("%s %s %s %s %s\n" % (now_rfc3339(e["time"]), method, path, code,
                                             (ua or "-").split(" ")[0]))

    # -- dispatch -------------------------------------------------------------------------
    def handle(self, method, path, query, headers, body):
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/") if p]
        if query.get("watch") in ("true", "1"):
            raise ApiError(405, status_obj(405, "MethodNotAllowed",
                                           "watch is not supported by the plumb kube emulator"))
        dry = query.get("dryRun")
        if dry not in (None, "All"):
            raise bad_request('Invalid dryRun value: "%s". Valid values are: "All"' % dry)
        dry_run = dry == "All"
        get = method == "GET"
        if parts == ["version"] and get:
            return 200, SERVER_VERSION
        if parts == ["api"] and get:
            return 200, {"kind": "APIVersions", "versions": ["v1"],
                         "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                         "serverAddress": headers.get("Host", "")}]}
        if parts == ["api", "v1"] and get:
            return 200, core_resources()
        if parts == ["apis"] and get:
            return 200, api_groups()
        if len(parts) == 2 and parts[0] == "apis" and get:
            for g in api_groups()["groups"]:
                if g["name"] == parts[1]:
                    return 200, dict(g, kind="APIGroup", apiVersion="v1")
        if len(parts) == 3 and parts[0] == "apis" and get:
            r = group_resources(parts[1] + "/" + parts[2])
            if r:
                return 200, r
        if parts == ["openapi", "v2"] and get:
            if "protobuf" in headers.get("Accept", ""):
                return 200, RawBody(openapi_v2_protobuf(),
                                    "application/octet-stream")   # as kube-openapi serves it
            raise ApiError(406, status_obj(406, "NotAcceptable",
                                           "the emulator serves /openapi/v2 as protobuf only"))
        if parts[:2] == ["api", "v1"]:
            return self.core(method, parts[2:], query, headers, body, dry_run)
        if parts[:2] == ["apis", "policy"] and len(parts) > 2 and parts[2] in ("v1", "v1beta1"):
            return self.policy(method, parts[2], parts[3:], query, headers)
        if parts[:3] == ["apis", "apps", "v1"]:
            return self.apps(method, parts[3:], query, headers)
        return 404, status_obj(404, "NotFound", "the server could not find the requested resource",
                               {})

    def listing(self, resource, kind, items, query, headers, fields, api="v1"):
        try:
            lsel = parse_selector(query.get("labelSelector", ""))
            fsel = parse_selector(query.get("fieldSelector", ""), fields=True)
        except ValueError as e:
            raise bad_request(str(e))
        for key, _, _ in fsel:
            if key not in fields:
                raise bad_request("field label not supported: %s" % key)
        out = [copy.deepcopy(o) for o in items
               if labels_match(lsel, o["metadata"].get("labels")) and fields_match(fsel, o, fields)]
        out.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        rv = str(self.cluster.rv)
        tv = wants_table(headers.get("Accept"))
        if tv:
            return 200, to_table(resource, out, rv, tv, query.get("includeObject", "Metadata"))
        return 200, {"kind": kind + "List", "apiVersion": api, "metadata": {"resourceVersion": rv},
                     "items": out}

    def single(self, resource, kind, obj, headers, query, api="v1"):
        o = copy.deepcopy(obj)
        tv = wants_table(headers.get("Accept"))
        if tv:
            return 200, to_table(resource, [o], str(self.cluster.rv), tv,
                                 query.get("includeObject", "Metadata"))
        o = dict({"kind": kind, "apiVersion": api}, **o)
        return 200, o

    def core(self, method, p, query, headers, body, dry_run):
        c = self.cluster
        if p == ["nodes"] and method == "GET":
            return self.listing("nodes", "Node", c.nodes.values(), query, headers, NODE_FIELDS)
        if len(p) == 2 and p[0] == "nodes":
            node = c.nodes.get(p[1])
            if node is None:
                raise ApiError(*not_found("nodes", p[1]))
            if method == "GET":
                return self.single("nodes", "Node", node, headers, query)
            if method == "PATCH":
                return self.patch_node(p[1], headers.get("Content-Type", ""), body, dry_run)
            raise ApiError(405, status_obj(405, "MethodNotAllowed",
                                           "the emulator does not model %s on nodes" % method))
        if p == ["pods"] and method == "GET":
            return self.listing("pods", "Pod", c.pods.values(), query, headers, POD_FIELDS)
        if method == "GET" and (p == ["events"] or len(p) == 3 and p[0] == "namespaces" and
                                p[2] == "events"):
            # no events are ever recorded; `kubectl describe` asks for them
            return self.listing("events", "Event", [], query, headers,
                                EventFields())
        if p == ["namespaces"] and method == "GET":
            return self.listing("namespaces", "Namespace", c.namespaces.values(), query, headers,
                                OTHER_FIELDS)
        if len(p) == 2 and p[0] == "namespaces" and method == "GET":
            ns = c.namespaces.get(p[1])
            if ns is None:
                raise ApiError(*not_found("namespaces", p[1]))
            return self.single("namespaces", "Namespace", ns, headers, query)
        if len(p) >= 3 and p[0] == "namespaces" and p[2] == "pods":
            ns = p[1]
            if len(p) == 3 and method == "GET":
                return self.listing("pods", "Pod", [o for (n, _), o in c.pods.items() if n == ns],
                                    query, headers, POD_FIELDS)
            if len(p) >= 4:
                key = (ns, p[3])
                if len(p) == 5 and p[4] == "eviction" and method == "POST":
                    try:
                        ev = json.loads(body or b"{}")
                    except ValueError as e:
                        raise bad_request("the body is not JSON: %s" % e)
                    st = c.evict(ns, p[3], ev, dry_run)
                    return 201, st
                if len(p) == 4:
                    if key not in c.pods:
                        raise ApiError(*not_found("pods", p[3]))
                    if method == "GET":
                        return self.single("pods", "Pod", c.pods[key], headers, query)
                    if method == "DELETE":
                        grace = query.get("gracePeriodSeconds")
                        if body:
                            try:
                                opts = json.loads(body)
                            except ValueError as e:
                                raise bad_request("the body is not JSON: %s" % e)
                            if isinstance(opts, dict) and opts.get("dryRun") == ["All"]:
                                dry_run = True
                            if isinstance(opts, dict) and opts.get("gracePeriodSeconds") is not None:
                                grace = opts["gracePeriodSeconds"]
                        out = c.delete_pod(key, grace, dry_run)
                        return 200, dict({"kind": "Pod", "apiVersion": "v1"}, **out)
        return 404, status_obj(404, "NotFound", "the server could not find the requested resource",
                               {})

    def policy(self, method, version, p, query, headers):
        c = self.cluster
        api = "policy/" + version
        if method != "GET":
            raise ApiError(405, status_obj(405, "MethodNotAllowed",
                                           "PodDisruptionBudgets are set with `kubeemu ctl`"))
        views = {k: c.pdb_view(v, version) for k, v in c.pdbs.items()}
        if p == ["poddisruptionbudgets"]:
            return self.listing("poddisruptionbudgets", "PodDisruptionBudget", views.values(),
                                query, headers, OTHER_FIELDS, api)
        if len(p) >= 3 and p[0] == "namespaces" and p[2] == "poddisruptionbudgets":
            if len(p) == 3:
                return self.listing("poddisruptionbudgets", "PodDisruptionBudget",
                                    [v for (n, _), v in views.items() if n == p[1]], query, headers,
                                    OTHER_FIELDS, api)
            if len(p) == 4:
                if (p[1], p[3]) not in views:
                    raise ApiError(*not_found("poddisruptionbudgets", p[3], "policy"))
                return self.single("poddisruptionbudgets", "PodDisruptionBudget",
                                   views[(p[1], p[3])], headers, query, api)
        return 404, status_obj(404, "NotFound", "the server could not find the requested resource",
                               {})

    def apps(self, method, p, query, headers):
        c = self.cluster
        if method != "GET":
            raise ApiError(405, status_obj(405, "MethodNotAllowed",
                                           "the emulator serves DaemonSets read-only"))
        if p == ["daemonsets"]:
            return self.listing("daemonsets", "DaemonSet", c.daemonsets.values(), query, headers,
                                OTHER_FIELDS, "apps/v1")
        if len(p) >= 3 and p[0] == "namespaces" and p[2] == "daemonsets":
            if len(p) == 3:
                return self.listing("daemonsets", "DaemonSet",
                                    [v for (n, _), v in c.daemonsets.items() if n == p[1]],
                                    query, headers, OTHER_FIELDS, "apps/v1")
            if len(p) == 4:
                ds = c.daemonsets.get((p[1], p[3]))
                if ds is None:
                    raise ApiError(*not_found("daemonsets", p[3], "apps"))
                return self.single("daemonsets", "DaemonSet", ds, headers, query, "apps/v1")
        return 404, status_obj(404, "NotFound", "the server could not find the requested resource",
                               {})

    def patch_node(self, name, ctype, body, dry_run):
        c = self.cluster
        node = c.nodes[name]
        ctype = ctype.split(";")[0].strip()
        if ctype not in ("application/strategic-merge-patch+json", "application/merge-patch+json",
                         "application/json-patch+json"):
            raise ApiError(415, status_obj(415, "UnsupportedMediaType",
                                           "the body of the request was in an unknown format - "
                                           "accepted media types include: application/json-patch"
                                           "+json, application/merge-patch+json, application/"
                                           "strategic-merge-patch+json (server-side apply is not "
                                           "modelled)"))
        try:
            patch = json.loads(body or b"")
        except ValueError as e:
            raise bad_request("the patch is not JSON: %s" % e)
        cur = dict({"kind": "Node", "apiVersion": "v1"}, **copy.deepcopy(node))
        try:
            if ctype in ("application/strategic-merge-patch+json", "application/merge-patch+json"):
                if not isinstance(patch, dict):
                    raise PatchError("a merge patch must be a JSON object")
                new = merge_patch(cur, patch)
            else:
                new = json_patch(cur, patch)
        except PatchError as e:
            raise ApiError(422, status_obj(422, "Invalid", str(e)))
        md = new.get("metadata") if isinstance(new, dict) else None
        if not isinstance(md, dict) or md.get("name") != name:
            raise ApiError(400, status_obj(400, "BadRequest",
                                           "the name of the object (%s) does not match the name "
                                           "on the URL (%s)" % ((md or {}).get("name"), name)))
        want_rv = md.get("resourceVersion")
        if want_rv and want_rv != node["metadata"]["resourceVersion"]:
            raise ApiError(409, status_obj(
                409, "Conflict", 'Operation cannot be fulfilled on nodes "%s": the object has been '
                "modified; please apply your changes to the latest version and try again" % name,
                {"name": name, "kind": "nodes"}))
        causes = []
        for field in ("annotations", "labels"):
            m = md.get(field)
            if m is None:
                continue
            if not isinstance(m, dict):
                raise bad_request("metadata.%s must be a map of strings" % field)
            for k, v in m.items():
                err = bad_qualified_name(k)
                if err:
                    causes.append({"reason": "FieldValueInvalid",
                                   "message": 'Invalid value: "%s": %s' % (k, err),
                                   "field": "metadata.%s" % field})
                if not isinstance(v, str):
                    raise bad_request("metadata.%s.%s: a string is expected" % (field, k))
        spec = new.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("unschedulable", False), bool):
            raise bad_request("spec.unschedulable must be a boolean")
        for f in ("uid", "creationTimestamp"):
            if md.get(f) != node["metadata"].get(f):
                causes.append({"reason": "FieldValueInvalid",
                               "message": "Invalid value: %s: field is immutable" %
                               json.dumps(md.get(f)), "field": "metadata." + f})
        if causes:
            raise ApiError(422, status_obj(
                422, "Invalid", 'Node "%s" is invalid: %s' % (
                    name, ", ".join("%s: %s" % (x["field"], x["message"]) for x in causes)),
                {"name": name, "kind": "Node", "causes": causes}))
        if not spec.get("unschedulable"):
            spec.pop("unschedulable", None)
        new.pop("kind", None)
        new.pop("apiVersion", None)
        if not md.get("annotations"):
            md.pop("annotations", None)
        new["status"] = node["status"]     # status is a subresource: a patch cannot change it
        c.fix_taints(new)
        if new == node:                    # no-op patches keep their resourceVersion
            return 200, dict({"kind": "Node", "apiVersion": "v1"}, **copy.deepcopy(node))
        if dry_run:
            return 200, dict({"kind": "Node", "apiVersion": "v1"}, **new)
        md["resourceVersion"] = c.bump()
        c.nodes[name] = new
        return 200, dict({"kind": "Node", "apiVersion": "v1"}, **copy.deepcopy(new))


class ApiHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "plumb-kubeemu"
    sys_version = ""
    emu = None   # set on the subclass

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.settimeout(60)

    def handle(self):
        try:
            self.connection.do_handshake()
        except (ssl.SSLError, OSError):
            return          # kubectl refusing our certificate ends here
        try:
            super().handle()
        except (ssl.SSLError, ConnectionError, socket.timeout):
            pass

    def send_json(self, code, obj):
        ctype = "application/json"
        if isinstance(obj, RawBody):
            data, ctype = obj.data, obj.ctype
        else:
            data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def any_method(self):
        emu = self.emu
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query, keep_blank_values=True).items()}
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        ua = self.headers.get("User-Agent", "")
        ctype = self.headers.get("Content-Type", "")
        fault = emu.active_fault(self.command, url.path)
        if fault and fault["mode"] == "hang":
            emu.record(self.command, self.path, "hang", ua, ctype)
            while not emu.stopping.is_set() and emu.active_fault(self.command, url.path):
                time.sleep(0.1)
            self.close_connection = True
            return
        if fault and fault["mode"] == "close":
            emu.record(self.command, self.path, "close", ua, ctype)
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if fault and fault["mode"] == "503":
            emu.record(self.command, self.path, 503, ua, ctype)
            return self.send_json(503, status_obj(503, "ServiceUnavailable",
                                                  "the server is currently unable to handle the "
                                                  "request"))
        auth = self.headers.get("Authorization", "")
        if auth != "Bearer " + emu.token:
            emu.record(self.command, self.path, 401, ua, ctype)
            return self.send_json(401, status_obj(401, "Unauthorized", "Unauthorized"))
        try:
            with emu.cluster.lock:
                code, obj = emu.handle(self.command, url.path, query, self.headers, body)
        except ApiError as e:
            code, obj = e.code, e.body
        except Exception as e:  # noqa: BLE001 - a bug in the emulator is a 500, logged
            sys.stderr.write("kubeemu: %s %s: %r\n" % (self.command, self.path, e))
            code, obj = 500, status_obj(500, "InternalError", "emulator error: %r" % e)
        emu.record(self.command, self.path, code, ua, ctype)
        self.send_json(code, obj)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = any_method


class TLSServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


# ---------------------------------------------------------------------------------------------
# Control interface (plain HTTP on 127.0.0.1, JSON in and out)


class CtlHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    emu = None

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, obj):
        data = (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        try:
            req = json.loads(self.rfile.read(n) or b"{}")
            with self.emu.cluster.lock:
                out = self.control(req)
            self.reply(200, out)
        except (ValueError, KeyError, TypeError) as e:
            self.reply(400, {"error": "%s" % (e.args[0] if e.args else e)})

    def control(self, r):
        emu = self.emu
        c = emu.cluster
        cmd = r.get("cmd")

        def pod_key():
            ns, _, name = r["pod"].rpartition("/")
            if not ns or not name:
                raise ValueError("a pod is NAMESPACE/NAME")
            return ns, name

        if cmd == "node-add":
            if r["name"] in c.nodes:
                raise ValueError("node %s exists" % r["name"])
            return c.add_node(r["name"], r.get("ready", "True"), r.get("labels"),
                              r.get("unschedulable", False), r.get("address"))
        if cmd == "node-rm":
            if c.nodes.pop(r["name"], None) is None:
                raise ValueError("no node %s" % r["name"])
            return {"removed": r["name"]}
        if cmd == "node-ready":
            if r["name"] not in c.nodes:
                raise ValueError("no node %s" % r["name"])
            c.set_ready(r["name"], r["ready"])
            return c.nodes[r["name"]]
        if cmd == "node":
            if r["name"] not in c.nodes:
                raise ValueError("no node %s" % r["name"])
            return c.nodes[r["name"]]
        if cmd == "pod-add":
            ns, name = pod_key()
            if (ns, name) in c.pods:
                raise ValueError("pod %s/%s exists" % (ns, name))
            if r["node"] not in c.nodes:
                raise ValueError("no node %s" % r["node"])
            return c.add_pod(ns, name, r["node"], r.get("labels"), r.get("owner"),
                             r.get("grace", 30), r.get("mirror", False), r.get("emptydir", False),
                             r.get("phase", "Running"))
        if cmd == "pod-rm":
            key = pod_key()
            if c.pods.pop(key, None) is None:
                raise ValueError("no pod %s/%s" % key)
            c.delete_at.pop(key, None)
            return {"removed": "%s/%s" % key}
        if cmd == "pod-phase":
            key = pod_key()
            if key not in c.pods:
                raise ValueError("no pod %s/%s" % key)
            c.set_phase(c.pods[key], r["phase"])
            c.pods[key]["metadata"]["resourceVersion"] = c.bump()
            return c.pods[key]
        if cmd == "pod":
            key = pod_key()
            if key not in c.pods:
                raise ValueError("no pod %s/%s" % key)
            return c.pods[key]
        if cmd == "pdb-add":
            ns, _, name = r["pdb"].rpartition("/")
            if not ns or not r.get("selector"):
                raise ValueError("a PDB is NAMESPACE/NAME with a non-empty selector")
            c.add_pdb(ns, name, r["selector"], r.get("min_available"), r.get("max_unavailable"))
            return c.pdb_view(c.pdbs[(ns, name)], "v1")
        if cmd == "pdb-rm":
            ns, _, name = r["pdb"].rpartition("/")
            if c.pdbs.pop((ns, name), None) is None:
                raise ValueError("no PDB %s" % r["pdb"])
            return {"removed": r["pdb"]}
        if cmd == "fault":
            mode = r["mode"]
            if mode == "clear":
                emu.fault = None
                return {"fault": None}
            if mode not in ("503", "hang", "close"):
                raise ValueError("fault mode is 503, hang, close or clear")
            secs = r.get("seconds")
            emu.fault = {"mode": mode, "match": r.get("match"),
                         "until": None if secs is None else time.monotonic() + float(secs)}
            return {"fault": {"mode": mode, "match": r.get("match"), "seconds": secs}}
        if cmd == "audit":
            with emu.audit_lock:
                out = list(emu.audit)
                if r.get("clear"):
                    emu.audit.clear()
            return out
        if cmd == "state":
            return {"nodes": c.nodes, "pods": {"%s/%s" % k: v for k, v in c.pods.items()},
                    "pdbs": {"%s/%s" % k: c.pdb_view(v, "v1") for k, v in c.pdbs.items()},
                    "resourceVersion": str(c.rv)}
        raise ValueError("unknown control command %r" % cmd)


# ---------------------------------------------------------------------------------------------
# Entry points


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def serve(run_dir, port):
    emu = Emulator(run_dir)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(os.path.join(run_dir, "certs", "server.pem"),
                        os.path.join(run_dir, "certs", "server.key"))
    ctx.set_alpn_protocols(["http/1.1"])
    api_cls = type("Api", (ApiHandler,), {"emu": emu})
    ctl_cls = type("Ctl", (CtlHandler,), {"emu": emu})
    api = TLSServer(("127.0.0.1", port), api_cls)
    api.socket = ctx.wrap_socket(api.socket, server_side=True, do_handshake_on_connect=False)
    ctl = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ctl_cls)
    ctl.daemon_threads = True
    for s in (api, ctl):
        threading.Thread(target=s.serve_forever, daemon=True).start()

    def reaper():
        while not emu.stopping.wait(0.1):
            emu.cluster.reap()
    threading.Thread(target=reaper, daemon=True).start()
    write_atomic(os.path.join(run_dir, "port"), "%d\n" % api.server_address[1])
    write_atomic(os.path.join(run_dir, "ctl-port"), "%d\n" % ctl.server_address[1])
    write_atomic(os.path.join(run_dir, "ready.json"),
                 json.dumps({"pid": os.getpid(), "port": api.server_address[1],
                             "ctl_port": ctl.server_address[1]}) + "\n")
    import signal
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    emu.stopping.set()
    api.shutdown()
    ctl.shutdown()
    return 0


def ping(run_dir):
    try:
        port = int(open(os.path.join(run_dir, "port")).read())
        token = open(os.path.join(run_dir, "token")).read().strip()
        ctx = ssl.create_default_context(cafile=os.path.join(run_dir, "certs", "ca.pem"))
        req = urllib.request.Request("https://127.0.0.1:%d/version" % port,
                                     headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(req, timeout=5, context=ctx) as r:
            return 0 if json.load(r).get("major") == "1" else 1
    except (OSError, ValueError):
        return 1


CTL_HELP = """kubeemu ctl DIR COMMAND [ARGS]   (prints JSON; exit 1 with the error on stderr)
  node-add NAME [--not-ready|--unknown] [--unschedulable] [--label K=V]... [--address IP]
  node-rm NAME
  node-ready NAME true|false|unknown
  node NAME                       the stored Node (no list envelope)
  pod-add NS/NAME --node NODE [--label K=V]... [--owner KIND/NAME|none] [--grace S]
                  [--mirror] [--emptydir] [--phase PHASE]
          (default owner ReplicaSet/<NAME without its last -suffix>; --owner DaemonSet/X also
           creates DaemonSet X; --mirror: static pod with kubernetes.io/config.mirror, owner Node)
  pod-rm NS/NAME                  gone at once (no grace period)
  pod-phase NS/NAME PHASE         Pending|Running|Succeeded|Failed|Unknown
  pod NS/NAME                     the stored Pod
  pdb-add NS/NAME --selector K=V[,K=V] (--min-available N | --max-unavailable N)   (replaces)
  pdb-rm NS/NAME
  fault 503|hang|close [SECONDS] [--match TEXT]   every API request (or those whose
          "METHOD /path" contains TEXT) answers 503 / is held unanswered / is closed unanswered,
          for SECONDS (default: until `fault clear`)
  fault clear
  audit [--clear] [--json]        requests so far: "METHOD PATH?QUERY STATUS" per line
  state                           nodes, pods and PDBs (with computed status) as JSON"""


def ctl_args(argv):
    """Command line -> control request."""
    if not argv or argv[0] in ("help", "-h", "--help"):
        return None
    cmd, rest = argv[0], argv[1:]
    req = {"cmd": cmd}
    pos = []
    labels = {}
    i = 0

    def val():
        nonlocal i
        i += 1
        if i >= len(rest):
            raise ValueError("%s needs a value" % rest[i - 1])
        return rest[i]
    while i < len(rest):
        a = rest[i]
        if a == "--label":
            k, _, v = val().partition("=")
            labels[k] = v
        elif a == "--not-ready":
            req["ready"] = "False"
        elif a == "--unknown":
            req["ready"] = "Unknown"
        elif a in ("--unschedulable", "--mirror", "--emptydir", "--clear", "--json"):
            req[a[2:]] = True
        elif a in ("--address", "--node", "--owner", "--phase", "--match"):
            req[a[2:]] = val()
        elif a == "--grace":
            req["grace"] = int(val())
        elif a == "--selector":
            req["selector"] = dict(kv.split("=", 1) for kv in val().split(","))
        elif a == "--min-available":
            req["min_available"] = int(val())
        elif a == "--max-unavailable":
            req["max_unavailable"] = int(val())
        elif a.startswith("--"):
            raise ValueError("unknown option %s" % a)
        else:
            pos.append(a)
        i += 1
    if labels:
        req["labels"] = labels
    need = {"node-add": 1, "node-rm": 1, "node-ready": 2, "node": 1, "pod-add": 1, "pod-rm": 1,
            "pod-phase": 2, "pod": 1, "pdb-add": 1, "pdb-rm": 1, "audit": 0, "state": 0}
    if cmd == "fault":
        if not pos:
            raise ValueError("fault needs a mode")
        req["mode"] = pos[0]
        if len(pos) > 1:
            req["seconds"] = float(pos[1])
        return req
    if cmd not in need:
        raise ValueError("unknown command %s (try: kubeemu ctl DIR help)" % cmd)
    if len(pos) != need[cmd]:
        raise ValueError("%s takes %d argument(s)" % (cmd, need[cmd]))
    if cmd.startswith("node"):
        req["name"] = pos[0]
        if cmd == "node-ready":
            req["ready"] = pos[1]
    elif cmd.startswith("pod"):
        req["pod"] = pos[0]
        if cmd == "pod-phase":
            req["phase"] = pos[1]
        if cmd == "pod-add" and "owner" not in req and not req.get("mirror"):
            base = pos[0].rpartition("/")[2]
            req["owner"] = "ReplicaSet/" + (base.rpartition("-")[0] or base)
    elif cmd.startswith("pdb"):
        req["pdb"] = pos[0]
    return req


def ctl(run_dir, argv):
    try:
        req = ctl_args(argv)
    except ValueError as e:
        sys.stderr.write("kubeemu ctl: %s\n" % e)
        return 2
    if req is None:
        print(CTL_HELP)
        return 0
    port = int(open(os.path.join(run_dir, "ctl-port")).read())
    data = json.dumps(req).encode()
    r = urllib.request.Request("http://127.0.0.1:%d/" % port, data=data,
                               headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            out = json.load(resp)
    except urllib.error.HTTPError as e:
        sys.stderr.write("kubeemu ctl %s: %s\n" % (argv[0], json.load(e).get("error")))
        return 1
    if req["cmd"] == "audit" and not req.get("json"):
        for e in out:
            print("%s %s %s" % (e["method"], e["path"], e["status"]))
    else:
        print(json.dumps(out, indent=1, sort_keys=True))
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] not in ("serve", "ping", "ctl"):
        sys.stderr.write(__doc__)
        return 2
    run_dir = argv[2]
    if argv[1] == "serve":
        port = int(argv[3]) if len(argv) > 3 else 0
        return serve(run_dir, port)
    if argv[1] == "ping":
        return ping(run_dir)
    return ctl(run_dir, argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
