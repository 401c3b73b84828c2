#!/usr/bin/env bash
# The Kubernetes API emulator (tests/testbed/kube) against the real kubectl on PATH (Debian 12's
# 1.20 in CI, newer elsewhere): get nodes (table and JSON), the bearer token and TLS verification
# enforced, annotate/label/cordon/uncordon change the node, server-side dry runs change nothing, drain
# evicts a ReplicaSet pod that disappears after its grace period while the DaemonSet and mirror
# pods stay, a PodDisruptionBudget gives kubectl's 429 retries and a drain timeout naming the pod,
# relaxing it lets the drain finish, evicting a gone pod is 404, injected faults reach kubectl.
# Runs in a private network namespace (unshare --net); the emulator binds 127.0.0.1 only.
# Needs kubectl (scripts/install-deps.sh installs Debian's kubernetes-client): without it the
# test fails, unless PLUMB_SKIP_KUBE=1 (then it is skipped, exit 77). Prints "N passed, N failed".
set -uo pipefail
src=${PLUMB_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v kubectl >/dev/null; then
  if [[ "${PLUMB_SKIP_KUBE:-}" == 1 ]]; then echo "skipped: no kubectl (PLUMB_SKIP_KUBE=1)"; exit 77; fi
  echo "FAIL - no kubectl on PATH: run scripts/install-deps.sh (Debian's kubernetes-client), or set PLUMB_SKIP_KUBE=1 to skip"
  echo "0 passed, 1 failed"
  exit 1
fi
if [[ -z "${KUBE_EMU_NETNS:-}" ]]; then
  exec unshare --net -- env KUBE_EMU_NETNS=1 bash "$0" "$@"
fi
ip link set lo up

KE=$src/tests/testbed/kube/kubeemu
WORK=$(mktemp -d "${TMPDIR:-/tmp}/plumb-kube.XXXXXX")
D=$WORK/emu
export HOME=$WORK/home KUBECONFIG=$WORK/emu/kubeconfig   # kubectl's discovery cache stays here
mkdir -p "$HOME"
cleanup() { "$KE" down "$D" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
pass=0 fail=0
ok() { echo "ok   - $*"; pass=$((pass + 1)); }
not_ok() { echo "FAIL - $*"; fail=$((fail + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }
has() { grep -qF -- "$1" "$2"; }
ctl() { "$KE" ctl "$D" "$@"; }
n=0
kc() { # kubectl ARGS...: sets rc, OUT, ERR
  n=$((n + 1)); OUT=$WORK/$n.out ERR=$WORK/$n.err
  kubectl "$@" >"$OUT" 2>"$ERR"; rc=$?
}
node_field() { ctl node "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$2"; }
pod_exists() { ctl pod "$1" >/dev/null 2>&1; }
pod_field() { ctl pod "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$2"; }
audit_json() { ctl audit --json; }
audit_count() { # PATTERN (regex on "METHOD PATH STATUS")
  ctl audit | grep -cE -- "$1"
}
raw() { # METHOD PATH [BODY] [TOKEN]: curl with the emulator's CA; prints the body, sets CODE
  local tok=${4-$(cat "$D/token")} hdr=$WORK/hdr
  printf 'Authorization: Bearer %s\nContent-Type: application/json\n' "$tok" >"$hdr"
  [[ -n "$tok" ]] || printf 'Content-Type: application/json\n' >"$hdr"
  CODE=$(curl -sS --cacert "$D/certs/ca.pem" -H @"$hdr" -X "$1" ${3:+--data "$3"} \
    -o "$WORK/raw.out" -w '%{http_code}' "https://127.0.0.1:$(cat "$D/port")$2")
  cat "$WORK/raw.out"
}
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

ver=$(kubectl version --client -o json 2>/dev/null | jq_ "d['clientVersion']['gitVersion']")
minor=$(kubectl version --client -o json 2>/dev/null | jq_ "d['clientVersion']['minor']" | tr -dc 0-9)
echo "# kubectl $ver ($(command -v kubectl)), in a private netns"

check "kubeemu up answers" "$KE" up "$D" 2>"$WORK/up.err"
check "the API and control listeners bind 127.0.0.1 only" \
  bash -c "ss -Hltnp | grep 'pid=$(cat "$D/pid"),' | awk '{print \$4}' | grep -qv '^127\.0\.0\.1:' && exit 1; ss -Hltnp | grep -q 'pid=$(cat "$D/pid"),'"
check "the kubeconfig carries the CA, not insecure-skip-tls-verify" \
  bash -c "grep -q certificate-authority-data '$KUBECONFIG' && ! grep -q insecure '$KUBECONFIG'"
ctl node-add n1 >/dev/null && ctl node-add n2 >/dev/null && ctl node-add n3 --not-ready >/dev/null

kc get nodes
check "kubectl get nodes: exit 0 (rc=$rc)" [ "$rc" = 0 ]
check "  the table header NAME STATUS ROLES AGE VERSION" grep -qE '^NAME +STATUS +ROLES +AGE +VERSION' "$OUT"
check "  n1 Ready, n3 NotReady" bash -c "grep -qE '^n1 +Ready ' '$OUT' && grep -qE '^n3 +NotReady ' '$OUT'"
kc get nodes -o json
check "kubectl get nodes -o json: three nodes, n3's Ready condition False" \
  test "$(jq_ "len(d['items']), [c['status'] for c in d['items'][2]['status']['conditions'] if c['type']=='Ready']" <"$OUT")" = "(3, ['False'])"

# Authentication and TLS.
"$KE" kubeconfig "$D" --token "wrong-$(cat "$D/token")" >"$WORK/kc-wrong-token"
kc --kubeconfig "$WORK/kc-wrong-token" get nodes
check "a wrong token is refused (rc=$rc)" [ "$rc" != 0 ]
check "  as Unauthorized" grep -qiE 'unauthorized|must be logged in' "$ERR"
raw GET /api/v1/nodes "" "" >/dev/null
check "no token: 401 (got $CODE)" [ "$CODE" = 401 ]
check "  a Status with reason Unauthorized" test "$(jq_ "d['kind'], d['reason'], d['code']" <"$WORK/raw.out")" = "('Status', 'Unauthorized', 401)"
before=$(audit_count .)
"$KE" kubeconfig "$D" --ca "$D/certs/wrong-ca.pem" >"$WORK/kc-wrong-ca"
kc --kubeconfig "$WORK/kc-wrong-ca" get nodes
check "a kubeconfig with another CA is refused by kubectl (rc=$rc)" [ "$rc" != 0 ]
check "  as an x509 error" grep -q x509 "$ERR"
check "  and no request got through (audit $before -> $(audit_count .))" test "$(audit_count .)" = "$before"

# annotate, cordon, uncordon.
rv0=$(node_field n1 "d['metadata']['resourceVersion']")
kc annotate node n1 --overwrite plumb.dev/drain-reason=kernel-6.1
check "kubectl annotate (rc=$rc)" [ "$rc" = 0 ]
check "  the annotation is set" test "$(node_field n1 "d['metadata']['annotations'].get('plumb.dev/drain-reason')")" = kernel-6.1
check "  resourceVersion bumped" test "$(node_field n1 "d['metadata']['resourceVersion']")" != "$rv0"
kc annotate node n1 plumb.dev/drain-reason-
check "kubectl annotate KEY- removes it (rc=$rc)" test "$rc$(node_field n1 "'plumb.dev/drain-reason' in d['metadata']['annotations']")" = 0False
# label: the stack tag's labels (KubernetesDrainer::StackCommand), set, replaced and removed
# together; a label that is not plumb's stays.
labels() { kubectl get node n2 -o json | jq_ "sorted((k, v) for k, v in d['metadata']['labels'].items() if k.startswith('plumb.dev/') or k == 'kubernetes.io/hostname')"; }
kc label node n2 --overwrite plumb.dev/stack=h100-2025q4 plumb.dev/commit=1a2b3c4d5e6f
check "kubectl label --overwrite sets both (rc=$rc), get -o json shows them" \
  test "$rc $(labels)" = "0 [('kubernetes.io/hostname', 'n2'), ('plumb.dev/commit', '1a2b3c4d5e6f'), ('plumb.dev/stack', 'h100-2025q4')]"
kc label node n2 --overwrite plumb.dev/stack=a100-2026q1 plumb.dev/commit-
check "kubectl label replaces one and removes the other in one call (rc=$rc)" \
  test "$rc $(labels)" = "0 [('kubernetes.io/hostname', 'n2'), ('plumb.dev/stack', 'a100-2026q1')]"
kc label node n2 plumb.dev/stack- plumb.dev/commit-
check "kubectl label KEY- removes them, a missing one is no error (rc=$rc); others kept" \
  test "$rc $(labels)" = "0 [('kubernetes.io/hostname', 'n2')]"

kc cordon n1 --dry-run=server
check "kubectl cordon --dry-run=server (rc=$rc) leaves n1 schedulable" \
  test "$rc$(node_field n1 "d['spec'].get('unschedulable', False)")" = 0False
kc cordon n1
check "kubectl cordon (rc=$rc): spec.unschedulable true" test "$rc$(node_field n1 "d['spec'].get('unschedulable')")" = 0True
kc get nodes n1
check "  get nodes shows Ready,SchedulingDisabled" grep -qE '^n1 +Ready,SchedulingDisabled ' "$OUT"
kc uncordon n1
check "kubectl uncordon (rc=$rc): schedulable again" test "$rc$(node_field n1 "d['spec'].get('unschedulable', False)")" = 0False

# Pods on n1: a ReplicaSet pod with emptyDir (grace 3 s), a DaemonSet pod, a mirror pod.
ctl pod-add default/web-5d9c-a --node n1 --label app=web --owner ReplicaSet/web-5d9c --grace 3 --emptydir >/dev/null
ctl pod-add kube-system/agent-x1 --node n1 --label app=agent --owner DaemonSet/agent >/dev/null
ctl pod-add kube-system/etcd-n1 --node n1 --mirror >/dev/null
ctl pod-add default/done-1 --node n1 --phase Succeeded >/dev/null
kc get pods -A -o json --field-selector=status.phase!=Succeeded,status.phase!=Failed
check "get pods -A with plumb's status.phase!= selectors: the three running pods" \
  test "$(jq_ "sorted(p['metadata']['name'] for p in d['items'])" <"$OUT")" = "['agent-x1', 'etcd-n1', 'web-5d9c-a']"
kc get pods -A --field-selector=spec.nodeName=n2
check "get pods --field-selector=spec.nodeName=n2: none (rc=$rc)" grep -q "No resources found" "$ERR"
ctl pod-rm default/done-1 >/dev/null

kc drain n1 --ignore-daemonsets --delete-emptydir-data --timeout=60s --dry-run=server
if ((minor >= 21)); then
  check "kubectl drain --dry-run=server (rc=$rc)" [ "$rc" = 0 ]
  check "  changed nothing: n1 schedulable, web pod not terminating" \
    test "$(node_field n1 "d['spec'].get('unschedulable', False)")$(pod_field default/web-5d9c-a "d['metadata'].get('deletionTimestamp')")" = FalseNone
  check "  its eviction was sent (dry run)" test "$(audit_count '^POST /api/v1/namespaces/default/pods/web-5d9c-a/eviction 201')" = 1
else
  echo "skip - kubectl drain --dry-run=server: kubectl $ver refuses every eviction ('/, Kind= doesn't support dry-run', fixed in 1.21 by kubernetes/kubernetes#100206)"
  check "  kubectl $ver's failed server dry run changed nothing either" \
    test "$(pod_field default/web-5d9c-a "d['metadata'].get('deletionTimestamp')")" = None
  kc uncordon n1
fi

ctl audit --clear >/dev/null
t0=$(date +%s.%N)
kc drain n1 --ignore-daemonsets --delete-emptydir-data --timeout=60s
t1=$(date +%s.%N)
check "kubectl drain n1 (rc=$rc)" [ "$rc" = 0 ]
present() { local p out=""; for p in "$@"; do pod_exists "$p" && out+=" $p"; done; echo "${out# }"; }
check "  the web pod is gone, the DaemonSet and mirror pods stay" \
  test "$(present default/web-5d9c-a kube-system/agent-x1 kube-system/etcd-n1)" = "kube-system/agent-x1 kube-system/etcd-n1"
check "  only the web pod was evicted" test "$(audit_count '/eviction ')" = "$(audit_count '^POST /api/v1/namespaces/default/pods/web-5d9c-a/eviction 201')"
check "  the web pod was Terminating for its grace period before it went (drain took $(python3 -c "print('%.1f' % ($t1 - $t0))") s)" \
  python3 -c '
import json,sys
a=json.load(sys.stdin); p="/api/v1/namespaces/default/pods/web-5d9c-a"
ev=[e["time"] for e in a if e["path"]==p+"/eviction" and e["status"]==201]
alive=[e["time"] for e in a if e["path"]==p and e["method"]=="GET" and e["status"]==200]
gone=[e["time"] for e in a if e["path"]==p and e["method"]=="GET" and e["status"]==404]
sys.exit(not (ev and alive and gone and alive[0] >= ev[0] and gone[0]-ev[0] >= 2.5))' < <(audit_json)
check "  n1 is cordoned" test "$(node_field n1 "d['spec'].get('unschedulable')")" = True
kc get nodes n1
check "  get nodes: Ready,SchedulingDisabled" grep -qE '^n1 +Ready,SchedulingDisabled ' "$OUT"

# A PodDisruptionBudget that forbids the eviction, then relaxed.
ctl pod-add default/db-7f8-a --node n2 --label app=db --grace 1 >/dev/null
ctl pod-add default/db-7f8-b --node n3 --label app=db --grace 1 >/dev/null
ctl pdb-add default/db --selector app=db --min-available 2 >/dev/null
kc get pdb -n default -o json
check "kubectl get pdb: disruptionsAllowed 0, 2 of 2 healthy" \
  test "$(jq_ "[(p['status']['disruptionsAllowed'], p['status']['currentHealthy'], p['status']['desiredHealthy']) for p in d['items']]" <"$OUT")" = "[(0, 2, 2)]"
body='{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"db-7f8-a","namespace":"default"}}'
raw POST /api/v1/namespaces/default/pods/db-7f8-a/eviction "$body" >/dev/null
check "a forbidden eviction is 429 (got $CODE)" [ "$CODE" = 429 ]
check "  TooManyRequests with the DisruptionBudget cause" \
  test "$(jq_ "d['reason'], d['message'], d['details']['causes']" <"$WORK/raw.out")" = "('TooManyRequests', \"Cannot evict pod as it would violate the pod's disruption budget.\", [{'reason': 'DisruptionBudget', 'message': 'The disruption budget db needs 2 healthy pods and has 2 currently'}])"
ctl audit --clear >/dev/null
kc drain n2 --ignore-daemonsets --delete-emptydir-data --timeout=12s
check "kubectl drain n2 under the budget fails (rc=$rc)" [ "$rc" != 0 ]
check "  kubectl retried: 'will retry after 5s'" has "(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget." "$ERR"
check "  the timeout names the pod" grep -qE 'evicting pods/"db-7f8-a" -n "default": global timeout reached: 12s' "$ERR"
check "  the pod is still running, not terminating" test "$(pod_field default/db-7f8-a "d['status']['phase'], d['metadata'].get('deletionTimestamp')")" = "('Running', None)"
check "  at least 2 evictions answered 429, about 5 s apart" python3 -c '
import json,sys
t=[e["time"] for e in json.load(sys.stdin) if e["path"].endswith("/db-7f8-a/eviction")]
sys.exit(not (len(t) >= 2 and all(4.5 <= b-a <= 8 for a,b in zip(t,t[1:]))))' < <(audit_json)
ctl pdb-add default/db --selector app=db --min-available 1 >/dev/null
kc drain n2 --ignore-daemonsets --delete-emptydir-data --timeout=60s
check "after the budget is relaxed the drain completes (rc=$rc)" [ "$rc" = 0 ]
check "  db-7f8-a is gone, db-7f8-b stays" test "$(present default/db-7f8-a default/db-7f8-b)" = default/db-7f8-b
raw POST /api/v1/namespaces/default/pods/db-7f8-a/eviction "$body" >/dev/null
check "evicting a gone pod: 404 (got $CODE)" [ "$CODE" = 404 ]
check "  NotFound naming the pod" test "$(jq_ "d['reason'], d['message']" <"$WORK/raw.out")" = "('NotFound', 'pods \"db-7f8-a\" not found')"
# maxUnavailable 1 over three pods on n4, evicted concurrently by one drain: one at a time.
ctl node-add n4 >/dev/null
for x in a b c; do ctl pod-add default/q-9b1-$x --node n4 --label app=q --grace 1 >/dev/null; done
ctl pdb-add default/q --selector app=q --max-unavailable 1 >/dev/null
ctl audit --clear >/dev/null
kc drain n4 --ignore-daemonsets --delete-emptydir-data --timeout=90s
check "drain n4 under maxUnavailable 1 completes (rc=$rc)" [ "$rc" = 0 ]
check "  all three evicted, one at a time (429s between, 201s at least the grace period apart)" python3 -c '
import json,sys
a=[e for e in json.load(sys.stdin) if e["path"].endswith("/eviction")]
ok=[e["time"] for e in a if e["status"]==201]; busy=[e for e in a if e["status"]==429]
sys.exit(not (len(ok)==3 and busy and all(b-a >= 0.9 for a,b in zip(ok,ok[1:]))))' < <(audit_json)
kc uncordon n1
check "kubectl uncordon n1 after the drain (rc=$rc)" test "$rc$(node_field n1 "d['spec'].get('unschedulable', False)")" = 0False

# Faults.
ctl fault 503 >/dev/null
kc get nodes -o json
check "fault 503: kubectl get nodes -o json fails (rc=$rc)" [ "$rc" != 0 ]
check "  with ServiceUnavailable" has "ServiceUnavailable" "$ERR"
check "  and the audit shows 503s" test "$(audit_count '^GET /api/v1/nodes.* 503$')" -ge 1
ctl fault clear >/dev/null
ctl pod-add default/api-6c7-a --node n2 --label app=api >/dev/null
ctl fault 503 --match /eviction >/dev/null
ctl audit --clear >/dev/null
kc drain n2 --ignore-daemonsets --delete-emptydir-data --timeout=30s
check "fault 503 on evictions only: the drain fails (rc=$rc)" [ "$rc" != 0 ]
check "  naming the pod" has 'evicting pods/"api-6c7-a" -n "default": the server is currently unable to handle the request' "$ERR"
check "  without retrying the 503 (one eviction sent: $(audit_count 'eviction 503$'))" test "$(audit_count 'eviction 503$')" = 1
check "  other requests still answered (the cordon)" test "$(audit_count '^(GET|PATCH) /api/v1/nodes/n2 200$')" -ge 1
ctl fault clear >/dev/null
kc get nodes
check "fault clear: kubectl works again (rc=$rc)" [ "$rc" = 0 ]
ctl fault hang 20 >/dev/null
kc get nodes --request-timeout=2s
check "fault hang: kubectl times out (rc=$rc)" [ "$rc" != 0 ]
ctl fault clear >/dev/null

pid=$(cat "$D/pid")
"$KE" down "$D"
check "kubeemu down stops the emulator" bash -c "! kill -0 $pid 2>/dev/null"
echo "$pass passed, $fail failed"
((fail == 0))
