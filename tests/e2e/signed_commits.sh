#!/usr/bin/env bash
# Signed commits, for real: ssh-keygen keys and a gpg key in a temporary GNUPGHOME sign real
# git commits, and plumb (libgit2 + ssh-keygen -Y verify + gpg) judges them by the policy of
# each commit's trusted base. Allowed key -> plan proceeds; unsigned, unknown key, altered
# commit -> refused with the reason, before any node is read or touched (the nodes are
# .example addresses that cannot be reached, plans read a recorded snapshot, and an apply
# refused here leaves no run in the journal).
set -uo pipefail
. "$PLUMB_SRC/tests/e2e/lib.sh"
make_tmp
for tool in ssh-keygen gpg gpgconf; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/install-deps.sh installs it)"; exit 77; }
done
T=$E2E_TMP
export GNUPGHOME=$T/gnupg
mkdir -m 700 "$GNUPGHOME"
trap 'gpgconf --kill gpg-agent >/dev/null 2>&1; rm -rf "$T"' EXIT

python3 "$PLUMB_SRC/bench/plan/gen.py" --template "$PLUMB_SRC/bench/plan/template-facts.json" \
  --nodes 4 --out "$T/g" >/dev/null
R=$T/g/repo F=$T/g/facts.json J=$T/journal.db
plan() { "$PLUMB" plan --repo "$R" --facts "$F" --no-scheduler --no-bmc "$@"; }

# Keys: alice (allowed, SSH), mallory (not allowed, SSH), carol (allowed, OpenPGP).
ssh-keygen -q -t ed25519 -N '' -C alice -f "$T/alice"
ssh-keygen -q -t ed25519 -N '' -C mallory -f "$T/mallory"
gpg --batch --passphrase '' --quick-gen-key 'Carol <carol@example.com>' ed25519 sign never 2>/dev/null
sign_ssh() { git -C "$R" -c gpg.format=ssh -c user.signingkey="$T/$1" commit -q -S "${@:2}"; }
sign_gpg() { git -C "$R" -c gpg.format=openpgp -c user.signingkey=carol@example.com commit -q -S "${@:1}"; }
bump() { sed -i "s/\"kernel\": \"[^\"]*\"/\"kernel\": \"$1\"/" "$R"/stacks/*.yaml; git -C "$R" add -A; }

# The commit that brings the policy is judged by the one before it (which has none).
{ echo "require_signed_commits: true"; echo "allowed_signers: allowed_signers"; echo "gpg_keyring: keys.gpg"; } >"$R/policy.yaml"
echo "alice@example.com $(cut -d' ' -f1,2 "$T/alice.pub")" >"$R/allowed_signers"
gpg --export carol@example.com >"$R/keys.gpg"
git -C "$R" add -A && git -C "$R" commit -q -m "policy: signed commits only"
expect_rc 2 "the commit that adds the policy is judged by its parent (no policy): planned" -- \
  plan --detailed-exitcode

bump 6.1.0-1-amd64 && sign_ssh alice -m "kernel 6.1 (alice)"
expect_rc 2 "signed by an allowed SSH key: planned" -- plan --detailed-exitcode --out "$T/plan.json"
expect_grep "signed by ssh alice@example.com \\(SHA256:" "$E2E_ERR" "  the plan names the signer and key"
GOOD=$(git -C "$R" rev-parse HEAD)

bump 6.1.0-2-amd64 && git -C "$R" commit -q -m "unsigned"
expect_rc 1 "an unsigned commit: refused" -- plan
expect_grep "is not signed, and policy.yaml at [0-9a-f]{12} \\(first parent\\) requires signed commits" "$E2E_ERR" "  says why, and whose policy"
expect_no_grep "Plan:" "$E2E_OUT" "  nothing was planned"
UNSIGNED=$(git -C "$R" rev-parse HEAD)
git -C "$R" reset -q --hard "$GOOD"

bump 6.1.0-3-amd64 && sign_ssh mallory -m "kernel (mallory)"
expect_rc 1 "signed by an SSH key the policy does not allow: refused" -- plan
expect_grep "allowed_signers does not list" "$E2E_ERR" "  says the key is not allowed"
git -C "$R" reset -q --hard "$GOOD"

# A commit that lets its own signer in is judged by the keys before it.
echo "mallory@example.com $(cut -d' ' -f1,2 "$T/mallory.pub")" >>"$R/allowed_signers"
git -C "$R" add -A && sign_ssh mallory -m "let mallory in (signed by mallory)"
expect_rc 1 "a commit adding its own signer's key: refused (the parent's keys judge)" -- plan
git -C "$R" reset -q --hard "$GOOD"

# Altered after signing: the signature header kept, the content changed.
ALTERED=$(git -C "$R" cat-file commit "$GOOD" | sed 's/kernel 6.1 (alice)/kernel 6.1 (alice) + backdoor/' |
  git -C "$R" hash-object -t commit -w --stdin)
expect_rc 1 "an altered commit: refused" -- plan --ref "$ALTERED"
expect_grep "does not match the commit" "$E2E_ERR" "  says the signature does not match"

bump 6.1.0-4-amd64 && sign_gpg -m "kernel (carol, OpenPGP)"
expect_rc 2 "signed by an allowed OpenPGP key: planned" -- plan --detailed-exitcode
expect_grep "signed by openpgp Carol <carol@example.com> \\([0-9A-F]{40}\\)" "$E2E_ERR" "  the plan names the OpenPGP signer"

expect_rc 1 "--trust-policy-from the commit itself: refused" -- plan --trust-policy-from HEAD
expect_grep "cannot vouch for itself" "$E2E_ERR" "  says why"

# apply judges the commit it applies, before any node or journal run is touched.
expect_rc 1 "apply of a reviewed plan at an unsigned commit: refused" -- "$PLUMB" apply "$T/plan.json" \
  --repo "$R" --ref "$UNSIGNED" --journal "$J" --auto-approve
expect_grep "trust.unsigned|is not signed" "$E2E_ERR" "  says the commit is not signed"
expect_rc 1 "apply --ref at an unsigned commit (plan now): refused before the nodes are read" -- \
  "$PLUMB" apply --repo "$R" --ref "$UNSIGNED" --journal "$J" --auto-approve
expect_grep "is not signed" "$E2E_ERR" "  says the commit is not signed"
expect_no_grep "host key|refused|timeout|gpu0" "$E2E_ERR" "  no node was contacted"
"$PLUMB" runs --journal "$J" >"$E2E_OUT" 2>&1
expect_grep "no runs in the journal" "$E2E_OUT" "  and the journal has no run"

# plumb validate catches a broken policy where it is written.
echo "require_signed_commit: true" >"$R/policy.yaml"
expect_rc 1 "validate: a misspelt policy key" -- "$PLUMB" validate --repo "$R" --working-tree
cat "$E2E_OUT" "$E2E_ERR" >"$T/validate.txt"
expect_grep "policy.yaml:1:1" "$T/validate.txt" "  located at the key, with the fix"
expect_grep "require_signed_commits" "$T/validate.txt" "  did you mean"
finish
